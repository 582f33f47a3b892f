"""agent-chronicle adapter (`--format chronicle`): Chronicle envelope JSONL -> one case per run.

agent-chronicle 1.x records every boundary crossing of an agent as an ``Envelope``
(``agentplane_primitives``; one JSON object per line, as Chronicle's sinks and ``golden export
--format chronicle`` write them). A *span* is one agent run in one service, so a case is the
envelopes of one ``(trace_id, span_id)``: ``case_id = make_case_id("chronicle",
"<trace_id>/<span_id>")``. Envelopes are grouped across the whole file (a run's envelopes may
be interleaved with other runs'), so a file's envelopes are held in memory while it is read
(Chronicle files are per process or per session: small). Within a run steps follow
``chronicle.sequence`` when every envelope has it, else their start time, then file order.

``kind: tool`` envelopes are tool steps (hand-offs by the hand-off list, writes by the tool
catalogue, unless ``golden.*`` metadata says: ``chronicle_envelope``), ``kind: llm`` envelopes
model steps (tokens from ``usage``; the first user message of the first one is the user input,
the text of the last one the answer). A line that is not a closed envelope is quarantined with
its line number and reason (``invalid_json``, ``not_an_object``, ``missing_field``,
``wrong_type``); its run-mates are not affected. ``records_read`` counts runs plus rejected
lines; ``extra["envelopes"]`` counts envelopes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import orjson

from golden_distill.datasets.quarantine import (
    INVALID_JSON,
    NOT_AN_OBJECT,
    Quarantine,
    QuarantineEntry,
)
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.case_rows import RecordProblem, StepFinisher, new_case_row
from golden_distill.datasets.sources.chronicle_envelope import Envelope, parse_envelope
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.lines import LineProblem, compression_of, iter_lines
from golden_distill.datasets.sources.uris import open_binary

STAGE = "ingest"
_MARKERS = (b'"envelope_id"', b'"envelope_status"', b'"span_id"')


class ChronicleAdapter:
    format: ClassVar[str] = "chronicle"

    def __init__(self, config: IngestConfig | None = None) -> None:
        self.config = config or IngestConfig()
        self.finisher = StepFinisher.from_config(self.config)

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """JSON-object lines carrying ``envelope_id``, ``span_id`` and ``envelope_status``."""
        lines = [ln for ln in head.lstrip().split(b"\n")[:10] if ln.strip()]
        return bool(lines) and all(m in lines[0] for m in _MARKERS) and lines[0][:1] == b"{"

    def read(
        self, uri: str, quarantine: Quarantine, stats: ReadStats, name: str = ""
    ) -> Iterator[dict[str, Any]]:
        runs: dict[tuple[str, str], list[tuple[int, Envelope]]] = {}
        envelopes = 0
        with open_binary(uri) as raw:
            for item in iter_lines(raw, compression_of(uri), self.config.max_line_bytes):
                if isinstance(item, LineProblem):
                    stats.records_read += 1
                    entry = QuarantineEntry(
                        STAGE, item.reason, uri, item.line_no, item.detail, None, item.raw
                    )
                    quarantine.add(entry)
                    continue
                line_no, line = item
                stats.bytes_read += len(line) + 1
                if not line.strip():
                    continue
                envelopes += 1
                try:
                    envelope = parse_envelope(_loads(line))
                except RecordProblem as problem:
                    stats.records_read += 1
                    entry = QuarantineEntry(
                        STAGE, problem.reason, uri, line_no, problem.detail, None, line
                    )
                    quarantine.add(entry)
                    continue
                quarantine.accepted()
                runs.setdefault((envelope.trace_id, envelope.span_id), []).append(
                    (line_no, envelope)
                )
        stats.extra["envelopes"] = stats.extra.get("envelopes", 0) + envelopes
        for (trace_id, span_id), members in runs.items():
            stats.records_read += 1
            stats.cases += 1
            yield self._case(uri, trace_id, span_id, members)

    def _case(
        self, uri: str, trace_id: str, span_id: str, members: list[tuple[int, Envelope]]
    ) -> dict[str, Any]:
        if all(e.sequence is not None for _, e in members):
            members.sort(key=lambda m: (m[1].sequence, m[0]))
        else:
            members.sort(key=lambda m: (m[1].started_at, m[0]))
        first_line = members[0][0]
        case_id = make_case_id("chronicle", f"{trace_id}/{span_id}")
        row = new_case_row(case_id, "chronicle", uri, first_line, f"{trace_id}/{span_id}")
        # envelopes do not carry the trace's labels (session_id lives on the Trace record):
        # the trace, one request, stands for the session
        row["trace_id"], row["session_id"] = trace_id, trace_id
        row["recorded_at"] = min(e.started_at for _, e in members)
        recorded = frozenset.intersection(*(e.recorded for _, e in members))
        steps = []
        for seq, (_, envelope) in enumerate(members):
            envelope.step["seq"] = seq
            steps.append(envelope.step)
            if envelope.model is not None and row["agent"]["model_name"] is None:
                row["agent"]["model_name"] = envelope.model
            if envelope.user_text is not None and row["user_input"] is None:
                row["user_input"] = envelope.user_text
            if envelope.answer is not None:
                row["outcome"]["answer_text"] = envelope.answer
        row["steps"] = steps
        self.finisher.finish(row, recorded=recorded)
        return row


def _loads(line: bytes) -> Any:
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise RecordProblem(INVALID_JSON, "not valid JSON") from None
    if not isinstance(value, dict):
        raise RecordProblem(NOT_AN_OBJECT, "a JSON value that is not an object")
    return value
