"""The review queue: why each published case deserves a look (a first version's cases are all
new), the latest decision per case, the filters a reviewer narrows it with, and the task read
the way dedup reads it."""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa

from golden_distill.datasets.case import Case, Intent, Outcome, Source
from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.filters.review_queue import (
    QueueFilter,
    build_queue,
    facets,
    latest_decisions,
    neighbours,
    select,
    why_review,
)

PATTERN = "^task=([^/]+)/"


def _case(i: int, **extra) -> Case:
    fields = {
        "case_id": f"c_{i:02d}",
        "trace_id": f"task={i % 3}/trial={i}",
        "user_input": f"please refund order {i}",
        "outcome": Outcome(final_state="DONE", reward=1.0),
        "source": Source(format="chat", source_record_id=f"r-{i}"),
        "funnels": ["recovery" if i % 2 else "human_handoff", "redacted"],
        "funnel_reasons": json.dumps({"recovery": "retried"}),
        "value_score": float(i),
        "cluster_id": f"k{i // 2}",
        "cluster_size": 2,
        "split": ("dev", "regression", "holdout")[i % 3],
        "trust": "unconfirmed" if i == 4 else "oracle",
    }
    fields.update(extra)
    return Case(**fields)


def _frame(cases: list[Case]) -> pl.DataFrame:
    table = pa.Table.from_pylist([c.to_row(pipeline_fields=True) for c in cases], GOLDEN_SCHEMA)
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def test_a_first_version_lists_every_case_as_new_a_later_one_what_is_new_or_changed():
    first = _frame([_case(i) for i in range(6)])
    assert why_review(first, None).to_list() == [
        "new", "new", "new", "new", "new+unconfirmed", "new",
    ]  # fmt: skip
    later = _frame(
        [_case(i) for i in range(5)]  # case 5 left; 6 is new; 2 changed its outcome
        + [_case(6)]
    ).with_columns(
        pl.when(pl.col("case_id") == "c_02")
        .then(pl.col("outcome").struct.with_fields(pl.lit("REFUNDED").alias("final_state")))
        .otherwise(pl.col("outcome"))
        .alias("outcome")
    )
    why = dict(zip(later["case_id"], why_review(later, first), strict=True))
    assert why == {"c_00": "", "c_01": "", "c_02": "changed", "c_03": "",
                   "c_04": "unconfirmed", "c_06": "new"}  # fmt: skip


def test_latest_decision_per_case_follows_the_log_order_on_ties():
    entries = [
        {"case_id": "a", "decision": "confirm", "at": "2026-12-01T09:00:00+00:00"},
        {"case_id": "a", "decision": "reject", "at": "2026-12-01T08:00:00+00:00"},
        {"case_id": "b", "decision": "confirm", "at": "2026-12-01T09:00:00+00:00"},
        {"case_id": "b", "decision": "correct", "at": "2026-12-01T09:00:00+00:00"},
    ]
    latest = latest_decisions(entries)
    assert latest["a"]["decision"] == "confirm" and latest["b"]["decision"] == "correct"


def test_filters_narrow_the_queue_and_round_trip_through_query_parameters():
    cases = [_case(i) for i in range(6)] + [_case(6, intent=Intent(name="cancel"))]
    queue = build_queue(
        _frame(cases), None, {"c_01": {"decision": "reject", "reviewer": "ana"}}, PATTERN
    )
    assert queue["task"].to_list() == ["0", "1", "2", "0", "1", "2", "cancel"]
    assert queue.filter(pl.col("case_id") == "c_01")["reviewer"].to_list() == ["ana"]

    def ids(**wanted) -> list[str]:
        return select(queue, QueueFilter(**wanted))["case_id"].to_list()

    assert ids() == queue["case_id"].to_list()
    assert ids(funnel="recovery") == ["c_01", "c_03", "c_05"]
    assert ids(split="holdout") == ["c_02", "c_05"]
    assert ids(trust="unconfirmed") == ["c_04"]
    assert ids(cluster="k1") == ["c_02", "c_03"]
    assert ids(task="0") == ["c_00", "c_03"]
    assert ids(task="cancel") == ["c_06"]
    assert ids(decision="decided") == ["c_01"]
    assert ids(decision="reject") == ["c_01"]
    assert "c_01" not in ids(decision="undecided")
    assert ids(why="unconfirmed") == ["c_04"]
    assert ids(funnel="recovery", split="dev") == ["c_03"]
    assert ids(funnel="no-such-funnel") == []

    wanted = QueueFilter.from_params({"funnel": "recovery", "split": "", "token": "x"})
    assert wanted == QueueFilter(funnel="recovery")
    assert QueueFilter.from_params(wanted.params()) == wanted
    options = facets(queue)
    assert options["funnel"] == ["human_handoff", "recovery", "redacted"]
    assert options["task"] == ["0", "1", "2", "cancel"]
    assert options["split"] == ["dev", "holdout", "regression"]


def test_neighbours_give_previous_next_and_position():
    queue = build_queue(_frame([_case(i) for i in range(3)]), None, {}, PATTERN)
    assert neighbours(queue, "c_00") == (None, "c_01", 1)
    assert neighbours(queue, "c_01") == ("c_00", "c_02", 2)
    assert neighbours(queue, "c_02") == ("c_01", None, 3)
    assert neighbours(queue, "elsewhere") == (None, "c_00", 0)


def test_the_published_task_id_names_the_task_before_intent_or_trace():
    cases = [_case(0, task_id="task_7f3a", intent=Intent(name="cancel")), _case(1)]
    queue = build_queue(_frame(cases), None, {}, PATTERN)
    assert queue["task"].to_list() == ["task_7f3a", "1"]
