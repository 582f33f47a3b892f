"""What the review page reads and writes: one published version (read once), its parent (for
"new" and "changed"), its clusters file, and the set's review log (read on every request, so
the page shows decisions made elsewhere too). Only published, redacted files of the store are
read: never a work folder or a raw input."""

from __future__ import annotations

from typing import Any

import polars as pl

from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.review import page_entry
from golden_distill.filters.review_case import case_view
from golden_distill.filters.review_queue import build_queue, latest_decisions
from golden_distill.flows.review_log import read_log, record_decisions


def parent_frame(golden: Any, open_version: Any) -> pl.DataFrame | None:
    """The parent version's cases (None for a first version, or when the parent is gone)."""
    # heavy: loaded when the command runs, not for `golden --help`
    from golden_distill.datasets.store.versions import VersionNotFound

    parent = golden.manifest.get("parent_version")
    if not parent:
        return None
    try:
        frame = pl.from_arrow(open_version(parent).read_table())
    except VersionNotFound:
        return None
    assert isinstance(frame, pl.DataFrame)
    return frame


class ReviewSource:
    """One version under review, its queue and its cases, and the log decisions go to."""

    def __init__(self, golden: Any, previous: pl.DataFrame | None, reviewer: str) -> None:
        self.golden = golden
        self.reviewer = reviewer
        self.ref = f"{golden.name}@{golden.version}"
        cases = pl.from_arrow(golden.read_table())
        assert isinstance(cases, pl.DataFrame)
        self.cases = cases
        self.previous = previous
        clusters = golden.clusters()
        self.clusters = pl.from_arrow(clusters) if clusters is not None else None
        dedup = (golden.manifest.get("config") or {}).get("dedup") or {}
        self.task_pattern = dedup.get("task_id_pattern", DedupConfig().task_id_pattern)
        self.published = set(cases.get_column("case_id").to_list())
        self._base = build_queue(cases, previous, {}, self.task_pattern)

    def decisions(self) -> dict[str, dict[str, Any]]:
        """The latest logged decision per case (the log is re-read: others may review too)."""
        return latest_decisions(read_log(self.golden.store, self.golden.name))

    def queue(self) -> pl.DataFrame:
        """Every published case with its review reasons and latest decision (``build_queue``)."""
        decisions = self.decisions()
        ids = self._base.get_column("case_id").to_list()
        return self._base.with_columns(
            pl.Series("decision", [decisions.get(i, {}).get("decision") for i in ids], pl.String),
            pl.Series("reviewer", [decisions.get(i, {}).get("reviewer") for i in ids], pl.String),
        )

    def exact_hash(self, case_id: str) -> str | None:
        """The case's content hash from the clusters file (what makes a rejection stick when
        the same run is recorded again under another id)."""
        if self.clusters is None or "exact_hash" not in self.clusters.columns:
            return None
        hit = self.clusters.filter(pl.col("case_id") == case_id).get_column("exact_hash")
        return hit[0] if len(hit) else None

    def case(self, case_id: str) -> dict[str, Any] | None:
        """The page's view of one published case (None when the version has no such case)."""
        rows = self.cases.filter(pl.col("case_id") == case_id).to_dicts()
        if not rows:
            return None
        row = rows[0]
        members: list[dict[str, Any]] = []
        if self.clusters is not None and row.get("cluster_id"):
            members = self.clusters.filter(pl.col("cluster_id") == row["cluster_id"]).to_dicts()
        queued = self._base.filter(pl.col("case_id") == case_id).row(0, named=True)
        return case_view(row, members, self.published, queued["why_review"], queued["task"])

    def decide(self, case_id: str, form: dict[str, str]) -> dict[str, Any]:
        """Check the page's decision on ``case_id`` and append it to the set's review log;
        ``ValueError`` (a clear message) when it is incomplete or the case is not here."""
        if case_id not in self.published:
            raise ValueError(f"{self.ref} has no case {case_id}")
        entry = page_entry(form, case_id, self.exact_hash(case_id), self.reviewer)
        record_decisions(self.golden.store, self.golden.name, [entry])
        return entry
