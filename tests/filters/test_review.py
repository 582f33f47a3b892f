"""Review decisions: the log's latest decision per case, sheet rows checked, corrections of the
expected outcome applied when the schema has `expected` (issue 13's field)."""

from __future__ import annotations

import polars as pl
import pytest

from golden_distill.filters.review import ReviewDecisions, check_row, corrected_expected

EXPECTED = pl.Struct(
    {
        "final_state": pl.String,
        "actions": pl.List(pl.Struct({"name": pl.String, "arguments": pl.String})),
        "answer_facts": pl.List(pl.String),
        "source": pl.String,
    }
)


def test_latest_decision_wins_and_rejections_match_by_content_hash():
    decisions = ReviewDecisions.from_entries(
        [
            {"case_id": "a", "decision": "confirm", "at": "2026-12-01T08:00:00+00:00"},
            {"case_id": "a", "decision": "reject", "reason": "wrong", "exact_hash": "h1",
             "at": "2026-12-01T09:00:00+00:00"},
            {"case_id": "b", "decision": "correct", "expected_final_state": "DONE",
             "at": "2026-12-01T09:00:00+00:00"},
        ]
    )  # fmt: skip
    assert decisions.rejected_ids == {"a": "wrong"} and decisions.rejected_hashes == {"h1": "wrong"}
    assert decisions.confirmed == {"b"}
    assert decisions.corrections["b"]["final_state"] == "DONE"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"case_id": "a", "decision": "maybe", "reviewer": "r"}, "use one of"),
        ({"case_id": "a", "decision": "reject", "reviewer": "r"}, "needs a reason"),
        ({"case_id": "a", "decision": "correct", "reviewer": "r"}, "needs corrected_final_state"),
        ({"case_id": "a", "decision": "confirm"}, "reviewer is empty"),
        ({"case_id": "a", "decision": "correct", "reviewer": "r", "corrected_actions": "[x"},
         "not JSON"),
    ],
)  # fmt: skip
def test_bad_sheet_rows_name_the_line(row, message):
    with pytest.raises(ValueError, match=message):
        check_row(row, 7)
    assert check_row({"case_id": "a", "decision": ""}, 3) is None


def test_corrections_replace_the_derived_expected_outcome():
    frame = pl.DataFrame(
        {
            "case_id": ["a", "b"],
            "expected": [
                {"final_state": "OLD", "actions": [], "answer_facts": [], "source": "evidence"},
                {"final_state": "KEEP", "actions": [], "answer_facts": [], "source": "native"},
            ],
            "_expected_final_state": ["NEW", None],
            "_expected_actions": ['[{"name": "cancel", "arguments": "{}"}]', None],
        },
        schema_overrides={"expected": EXPECTED},
    )
    out = frame.with_columns(corrected_expected(frame)).get_column("expected").to_list()
    assert out[0]["final_state"] == "NEW" and out[0]["source"] == "review"
    assert out[0]["actions"] == [{"name": "cancel", "arguments": "{}"}]
    assert out[1] == {"final_state": "KEEP", "actions": [], "answer_facts": [], "source": "native"}
    assert corrected_expected(frame.drop("expected")) is None
