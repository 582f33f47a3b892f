"""The `expected` field is redacted like the recorded calls: an expected action's arguments get
the same pseudonyms as the call that made it, so a replay can still compare them."""

from __future__ import annotations

import json

import orjson
import pyarrow as pa
from golden_test_data import airline_runs_path

from golden_distill.datasets.canonical_json import canonical_json
from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

SECRET = b"expected-field-test-key-" + b"z" * 32


def _matches(row: dict) -> list[tuple[str, str]]:
    """(tool, canonical args) of expected actions that equal one of the recorded calls."""
    recorded = {
        (s["name"], canonical_json(orjson.loads(s["arguments"])).decode())
        for s in row["steps"]
        if s["arguments"]
    }
    expected = row["expected"] or {}
    return [
        (a["name"], a["arguments"])
        for a in expected.get("actions") or []
        if (a["name"], a["arguments"]) in recorded
    ]


def test_expected_arguments_get_the_recorded_calls_pseudonyms(tmp_path):
    runs = [r for r in json.loads(airline_runs_path().read_text()) if r["reward"] == 1.0][:12]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    rows = list(ChatAdapter(IngestConfig()).read(str(path), Quarantine(), ReadStats()))
    before = {r["case_id"]: _matches(r) for r in rows}
    assert sum(map(len, before.values())) >= 5  # successful runs made the expected writes
    table = pa.Table.from_pylist(rows, schema=CASE_SCHEMA)
    result = redact_table(table, Redactor.from_config(RedactionConfig(), PseudonymKey(SECRET)))
    assert result.cases_out == len(rows)
    for row in result.table.to_pylist():
        after = _matches(row)
        assert len(after) == len(before[row["case_id"]]), row["case_id"]
        for (_, original), (_, redacted) in zip(before[row["case_id"]], after, strict=True):
            user = orjson.loads(original).get("user_id")
            if user:  # a key: pseudonymised in the expected action as in the call
                assert user not in redacted
    text = orjson.dumps([r["expected"] for r in result.table.to_pylist()]).decode()
    for run in runs:
        assert run["info"]["task"]["user_id"] not in text
