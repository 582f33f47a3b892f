"""Evidence tables adapter (`--format evidence`): session, snapshot and tool-call tables.

The source is a database URL (``sqlite:///evidence.db``, ``postgresql://user@host/db``) or a
folder (local or fsspec URL) holding the tables as Parquet or CSV files (a path to
``session_trace.parquet`` itself means its folder). One trace is one case:
``case_id = make_case_id("evidence", trace_id)``
unless the row carries a ``case_id`` (tables exported by golden-distill do), calls become steps
in ``call_seq`` order, and the (first) snapshot fills the model parameters and context. A trace
without a snapshot is a case with an empty context; a call without a trace is quarantined.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import orjson

from golden_distill.datasets.quarantine import Quarantine, QuarantineEntry
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.case_rows import RecordProblem, StepFinisher
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.evidence_assemble import EvidenceAssembler
from golden_distill.datasets.sources.evidence_files import FileEvidenceReader, is_evidence_folder
from golden_distill.datasets.sources.evidence_schema import SESSION, RowProblem, TraceRows
from golden_distill.datasets.sources.evidence_sql import SqlEvidenceReader, redact_url, sql_dialect

STAGE = "ingest"


def evidence_folder(uri: str) -> str | None:
    """The folder an evidence URI names (itself, or the folder of a session_trace file)."""
    head, _, name = uri.rstrip("/").rpartition("/")
    remote = "://" in uri and not uri.startswith("file://")
    if remote and "." in name and name.split(".", 1)[0] != SESSION:
        return None  # a remote file (x.jsonl.zst): not worth a round trip to ask
    if is_evidence_folder(uri):
        return uri
    if name.split(".", 1)[0] == SESSION and head and is_evidence_folder(head):
        return head
    return None


def _raw(rows: Any) -> bytes:
    return orjson.dumps(rows, default=str, option=orjson.OPT_NON_STR_KEYS)


class EvidenceAdapter:
    format: ClassVar[str] = "evidence"

    def __init__(self, config: IngestConfig | None = None) -> None:
        self.config = config or IngestConfig()
        finisher = StepFinisher.from_config(self.config)
        self.assembler = EvidenceAssembler(
            finisher,
            keep_malformed=self.config.malformed_arguments == "keep_as_string",
            python_literals=self.config.malformed_arguments == "python_literal",
        )

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """A sqlite:// or postgresql:// URL, or a folder with a session_trace table file."""
        if sql_dialect(uri) is not None:
            return True
        return evidence_folder(uri) is not None

    def rows(self, uri: str) -> Iterator[TraceRows | RowProblem]:
        """The raw trace groups and problem rows of an evidence source (no conversion)."""
        if sql_dialect(uri) is not None:
            return iter(SqlEvidenceReader(uri, self.config.sql_chunk_traces))
        folder = evidence_folder(uri) or uri
        return iter(FileEvidenceReader(folder, self.config.evidence_bucket_rows))

    def read(
        self, uri: str, quarantine: Quarantine, stats: ReadStats, name: str = ""
    ) -> Iterator[dict[str, Any]]:
        shown = redact_url(uri)
        for item in self.rows(uri):
            if isinstance(item, RowProblem):
                record = item.table == SESSION  # a call or snapshot row is part of one
                if record:
                    stats.records_read += 1
                detail = item.detail
                quarantine.add(
                    QuarantineEntry(
                        STAGE, item.reason, shown, item.position, detail, None, _raw(item.row)
                    ),
                    record=record,
                )
                continue
            stats.records_read += 1
            try:
                row = self.assembler.assemble(
                    shown, item.position, item.session, item.snapshots, item.calls
                )
            except RecordProblem as problem:
                raw = {"session": item.session, "snapshots": item.snapshots, "calls": item.calls}
                quarantine.add(
                    QuarantineEntry(
                        STAGE, problem.reason, shown, item.position, problem.detail, None, _raw(raw)
                    )
                )
                continue
            if not item.snapshots:
                stats.extra["traces_without_snapshot"] = (
                    stats.extra.get("traces_without_snapshot", 0) + 1
                )
            stats.cases += 1
            yield row
