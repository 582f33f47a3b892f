"""A quarantine stays bounded and still accounts for every record: excerpts of long records,
a cap on entries per input with a summary line, and a stop after a run of rejected records."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pytest

from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.quarantine import (
    INVALID_JSON,
    MISSING_FIELD,
    Quarantine,
    QuarantineEntry,
    QuarantineStreak,
    read_quarantine,
)
from golden_distill.datasets.sources.config import IngestConfig


def _entry(reason: str = INVALID_JSON, raw: bytes = b"x", uri: str = "a.jsonl", at: int = 1):
    return QuarantineEntry("ingest", reason, uri, at, "detail", None, raw)


def test_a_long_record_keeps_an_excerpt_its_length_and_digest(tmp_path: Path) -> None:
    raw = ("é" * 3000).encode()  # 6000 bytes, a cut may fall inside a character
    with Quarantine(tmp_path / "q.jsonl", raw_bytes=1001) as quarantine:
        quarantine.add(_entry(raw=raw))
        quarantine.add(_entry(raw=b"short", at=2))
    long, short = read_quarantine(tmp_path / "q.jsonl")
    assert long["raw_truncated"] and long["raw_bytes"] == 6000
    assert long["raw_sha256"] == hashlib.sha256(raw).hexdigest()
    assert long["raw"] == "é" * 500 and len(long["raw"].encode()) <= 1001
    assert short["raw"] == "short" and "raw_truncated" not in short


def test_entries_past_the_cap_are_counted_and_summarised(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    with Quarantine(path, max_entries=3) as quarantine:
        for at in range(10):
            quarantine.add(_entry(INVALID_JSON if at % 2 else MISSING_FIELD, at=at))
        quarantine.add(_entry(uri="b.jsonl"))  # another input has its own cap
    assert quarantine.total == 11 and quarantine.counts[INVALID_JSON] == 6
    entries = read_quarantine(path)
    assert [e["uri"] for e in entries] == ["a.jsonl"] * 3 + ["b.jsonl"]
    everything = read_quarantine(path, summaries=True)
    (summary,) = [e for e in everything if e.get("summary")]
    assert summary["uri"] == "a.jsonl" and summary["written"] == 3
    assert summary["not_written"] == 7
    assert summary["not_written_by_reason"] == {INVALID_JSON: 4, MISSING_FIELD: 3}
    # every record is accounted for: written entries + the summary's count = the counts
    assert len(entries) + summary["not_written"] == quarantine.total


def test_a_run_of_rejected_records_stops_and_an_accepted_one_resets_it() -> None:
    quarantine = Quarantine(max_consecutive=3)
    quarantine.add(_entry())
    quarantine.add(_entry())
    quarantine.accepted()
    quarantine.add(_entry())
    quarantine.add(_entry())
    with pytest.raises(QuarantineStreak, match="3 records in a row") as info:
        quarantine.add(_entry(MISSING_FIELD))
    assert info.value.count == 3 and quarantine.total == 5  # the stopping record is counted


def test_interleaved_bad_lines_do_not_stop_a_file(tmp_path: Path) -> None:
    """Bad lines between good ones are quarantined one by one; the file is read to its end."""
    good = (
        b'{"recordId": "r-%d", "sessionId": "s", "recordedAt": "2026-11-01T00:00:00Z", '
        b'"initialUserInput": "q", "toolCalls": []}\n'
    )
    lines = b"".join(good % n + b"{broken\n" * 4 for n in range(50))
    (tmp_path / "in.jsonl").write_bytes(lines)
    config = IngestConfig(max_consecutive_quarantined=5, batch_rows=16)
    summary = ingest([str(tmp_path / "in.jsonl")], tmp_path / "out", fmt="native", config=config)
    assert not summary.failed
    assert summary.cases_written == 50 and summary.quarantined_total == 200
    assert summary.records_read == 250


def test_a_wrong_format_stops_early_with_a_hint(tmp_path: Path) -> None:
    chat = b'{"messages": [{"role": "user", "content": "hi"}]}\n' * 40
    (tmp_path / "chat.jsonl").write_bytes(chat)
    config = IngestConfig(max_consecutive_quarantined=10)
    summary = ingest([str(tmp_path / "chat.jsonl")], tmp_path / "out", fmt="native", config=config)
    (failed,) = summary.failed
    assert "10 records in a row" in (failed.error or "")
    assert "did you mean --format chat?" in (failed.error or "")
    assert summary.records_read == 10 and summary.quarantined_total == 10
    assert len(read_quarantine(tmp_path / "out" / "quarantine.jsonl")) == 10


def test_a_small_wholly_quarantined_input_is_named_with_its_hint(tmp_path: Path) -> None:
    (tmp_path / "chat.jsonl").write_bytes(b'{"messages": [{"role": "user", "content": "x"}]}\n')
    summary = ingest([str(tmp_path / "chat.jsonl")], tmp_path / "out", fmt="native")
    assert not summary.failed and summary.cases_written == 0
    assert summary.sources[0].hint == "did you mean --format chat?"
    message = summary.nothing_read()
    assert message is not None and "every one of the 1 records" in message
    assert "did you mean --format chat?" in message


def test_worker_processes_stop_a_wrong_format_and_bound_the_quarantine_too(
    tmp_path: Path,
) -> None:
    chat = b'{"messages": [{"role": "user", "content": "hi"}]}\n' * 40
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(chat)
    config = IngestConfig(max_consecutive_quarantined=10, quarantine_max_entries=4)
    sources = [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    summary = ingest(sources, tmp_path / "out", fmt="native", config=config, jobs=2)
    assert len(summary.failed) == 2
    assert all("did you mean --format chat?" in (s.error or "") for s in summary.failed)
    assert summary.quarantined_total == 20
    entries = read_quarantine(tmp_path / "out" / "quarantine.jsonl", summaries=True)
    written = [e for e in entries if not e.get("summary")]
    summaries = [e for e in entries if e.get("summary")]
    assert len(written) == 8 and sum(s["not_written"] for s in summaries) == 12


def _airline_cases() -> list[dict]:
    from golden_test_data import airline_runs_path

    from golden_distill.datasets.sources.base import ReadStats
    from golden_distill.datasets.sources.chat import ChatAdapter

    cases = ChatAdapter().read(str(airline_runs_path()), Quarantine(), ReadStats())
    return [case for case in cases if case["steps"]][:20]


def test_bad_spans_between_good_ones_do_not_stop_an_otel_file(tmp_path: Path) -> None:
    """Spans are all read before any trace becomes a case: a good span ends a run too."""
    import orjson

    from golden_distill.datasets.sources.otel_writer import export_request

    lines = []
    for case in _airline_cases():
        doc = export_request([case])
        spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        spans[:0] = [{"name": "broken", "spanId": "00"}] * 3  # no trace id
        lines.append(orjson.dumps(doc) + b"\n")
    (tmp_path / "spans.jsonl").write_bytes(b"".join(lines))
    config = IngestConfig(max_consecutive_quarantined=5)
    summary = ingest([str(tmp_path / "spans.jsonl")], tmp_path / "out", fmt="otel", config=config)
    assert not summary.failed
    assert summary.cases_written == 20 and summary.quarantined_total == 60


def test_orphan_evidence_rows_are_not_records_and_never_stop_a_source(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from golden_distill.datasets.sources.evidence_writer import export_evidence

    folder = tmp_path / "evidence"
    export_evidence(_airline_cases()[:3], str(folder))
    calls = pq.read_table(folder / "tool_call_trace.parquet")
    orphans = calls.slice(0, 1).to_pylist() * 30
    for at, row in enumerate(orphans):
        row["trace_id"] = f"no-such-trace-{at}"
        row["call_id"] = f"orphan-{at}"
    pq.write_table(pa.concat_tables([calls, pa.Table.from_pylist(orphans, calls.schema)]),
                   folder / "tool_call_trace.parquet")  # fmt: skip
    config = IngestConfig(max_consecutive_quarantined=5)
    summary = ingest([str(folder)], tmp_path / "out", config=config)
    assert not summary.failed
    assert summary.cases_written == 3 and summary.quarantined_total == 30
