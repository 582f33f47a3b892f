"""Replay on a set that went through the real redaction (Presidio, keyed pseudonyms): the
recorded calls, their hashes and the expected actions stay consistent, so the re-issuing agent
still passes with zero diffs and a changed amount is still caught."""

from __future__ import annotations

import json

import pyarrow as pa
import replay_agents as agents
from golden_test_data import airline_runs_path

from golden_distill.datasets.canonical_json import canonical_json
from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay import replay_cases
from golden_distill.datasets.replay.agents import reissue
from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.store.publish import publish_version
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

SECRET = b"replay-redacted-set-key-" + b"k" * 32


def test_replay_after_redaction(tmp_path) -> None:
    runs = json.loads(airline_runs_path().read_text())[:30]
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    rows = list(ChatAdapter(IngestConfig()).read(str(path), Quarantine(), ReadStats()))
    table = pa.Table.from_pylist(rows, schema=CASE_SCHEMA)
    redacted = redact_table(table, Redactor.from_config(RedactionConfig(), PseudonymKey(SECRET)))
    assert redacted.cases_out == len(rows)
    store = str(tmp_path / "store")
    version = publish_version(store, "redacted", cases=redacted.table).version
    golden = open_set(store, f"redacted@{version}")
    cases = [c.case for c in golden.cases()]
    run = replay_cases(cases, reissue, baseline_version=version, volatile_keys=golden.volatile_keys)
    assert [d for r in run.runs for d in r.check.diffs] == [] and run.exit_code == 0
    made = 0  # expected writes of successful runs are still the (pseudonymised) recorded calls
    for case in cases:
        if case.outcome.reward == 1.0:
            calls = {(s.name, canonical_json(json.loads(s.arguments)).decode()) for s in case.steps}
            made += sum((a.name, a.arguments) in calls for a in case.expected.actions)
    assert made >= 5
    text = json.dumps([c.user_input for c in cases]) + json.dumps(
        [[a.arguments for a in c.expected.actions] for c in cases]
    )
    for run_ in runs:
        assert run_["info"]["task"]["user_id"] not in text
    changed = [
        c
        for c in cases
        if any(s.is_mutating and agents.amount_path(json.loads(s.arguments)) for s in c.steps)
    ]
    assert changed
    bad = replay_cases(changed, agents.change_amount, baseline_version=version)
    assert {d.diff_type for r in bad.runs for d in r.check.diffs} == {"tool_param_diff"}
    assert bad.exit_code == 1
