"""The small wiring steps of the shard tasks that hold logic of their own."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa

from golden_distill.datasets.schema import CASE_SCHEMA, GOLDEN_SCHEMA
from golden_distill.flows.tasks.redact_body import to_golden
from golden_distill.flows.tasks.shard import apply_window


def _cases(times: list[datetime | None]) -> pa.Table:
    rows = [{"case_id": f"c_{i}", "recorded_at": t} for i, t in enumerate(times)]
    return pa.Table.from_pylist(rows, schema=CASE_SCHEMA)


def test_time_window_is_half_open_and_drops_undated_runs_only_when_set():
    t = [datetime(2026, 11, 28, h, tzinfo=UTC) for h in (0, 12)] + [None]
    t.append(datetime(2026, 11, 29, tzinfo=UTC))
    table = _cases(t)
    assert apply_window(table, None, None).num_rows == 4
    kept = apply_window(table, "2026-11-28T00:00:00+00:00", "2026-11-29T00:00:00+00:00")
    assert kept.column("case_id").to_pylist() == ["c_0", "c_1"]
    assert apply_window(table, "2026-11-28T06:00:00+00:00", None).num_rows == 2


def test_to_golden_adds_null_pipeline_columns():
    golden = to_golden(_cases([None]))
    assert golden.schema == GOLDEN_SCHEMA
    assert golden.column("cluster_id").null_count == 1
