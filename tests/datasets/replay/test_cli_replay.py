"""`golden replay` and `golden export` end to end: outputs, report, exit codes 0/1/2."""

from __future__ import annotations

import json

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from golden_distill.flows.cli import app

runner = CliRunner()


def _replay(store: str, ref: str, agent: str, out, *extra: str):
    return runner.invoke(
        app, ["replay", ref, "--store", store, "--agent", agent, "--out", str(out), *extra]
    )


def test_reissuing_agent_passes_and_writes_the_three_files(generated_set, tmp_path) -> None:
    store, ref = generated_set
    db = tmp_path / "r.db"
    result = _replay(store, ref, "golden_distill.datasets.replay.agents:reissue", tmp_path / "o",
                     "--results", f"sqlite:///{db}", "--new-version", "v2")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "gate PASS" in result.output
    summary = json.loads((tmp_path / "o" / "run_summary.json").read_text())
    assert summary["diffs"] == 0 and summary["gate"] == "pass" and summary["new_version"] == "v2"
    assert pq.read_table(tmp_path / "o" / "regression_diff_result.parquet").num_rows == 0
    assert "None: every case replayed as recorded" in (tmp_path / "o" / "report.html").read_text()
    assert db.exists()


def test_a_regression_fails_the_gate_with_exit_1_and_a_readable_report(
    generated_set, tmp_path
) -> None:
    store, ref = generated_set
    result = _replay(store, ref, "replay_agents:swap_writes_or_reissue", tmp_path / "o")
    assert result.exit_code == 2  # no such callable: a usage error
    result = _replay(store, ref, "replay_agents:change_amount", tmp_path / "o", "--jobs", "2")
    assert result.exit_code == 1, result.output
    assert "gate FAIL" in result.output and "P0 write_diffs" in result.output
    rows = pq.read_table(tmp_path / "o" / "regression_diff_result.parquet").to_pylist()
    # the changed amount, and the state the changed write leaves
    assert rows and {r["diff_type"] for r in rows} == {"tool_param_diff", "final_state_diff"}
    html = (tmp_path / "o" / "report.html").read_text()
    assert html.count("<h3 id=") == len({r["case_id"] for r in rows})
    first = orjson.loads(rows[0]["diff_detail"])
    assert first["recorded"].split("(")[0] in html  # recorded vs replayed call side by side
    assert "<script" not in html and "http" not in html.split("</style>", 1)[1]


def test_usage_and_data_errors_exit_2(generated_set, tmp_path) -> None:
    store, ref = generated_set
    agent = "golden_distill.datasets.replay.agents:reissue"
    assert _replay(store, "generated@2001.01.01.1", agent, tmp_path / "o").exit_code == 2
    assert _replay(store, ref, "no_such_module_xyz:run", tmp_path / "o").exit_code == 2
    bad_gate = tmp_path / "gate.yaml"
    bad_gate.write_text("gate:\n  p0:\n    max_stub_escape: 0\n")
    result = _replay(store, ref, agent, tmp_path / "o", "--gate", str(bad_gate))
    assert result.exit_code == 2
    assert "did you mean max_stub_escapes" in result.output
    result = _replay(store, ref, agent, tmp_path / "o", "--results", "mysql://u:pw@h/db")
    assert result.exit_code == 2 and "pw" not in result.output


def test_export_both_formats(generated_set, tmp_path) -> None:
    store, ref = generated_set
    for fmt in ("chronicle", "chat-jsonl"):
        result = runner.invoke(
            app, ["export", ref, "--store", store, "--format", fmt, "--out", str(tmp_path / fmt)]
        )
        assert result.exit_code == 0, result.output
        assert len(list((tmp_path / fmt).glob("*.jsonl"))) > 50
    bad = ["export", ref, "--store", store, "--format", "yaml", "--out", str(tmp_path / "x")]
    assert runner.invoke(app, bad).exit_code == 2


def test_split_replays_only_that_splits_cases_and_an_unknown_split_exits_2(
    generated_set, tmp_path
) -> None:
    from golden_distill.datasets.reader import open_set
    from golden_distill.datasets.store.publish import publish_version

    table = open_set(*generated_set).read_table().slice(0, 9)
    splits = [("dev", "regression", "holdout")[i % 3] for i in range(9)]
    table = table.set_column(table.schema.get_field_index("split"), "split", pa.array(splits))
    store = str(tmp_path / "store")
    ref = f"splits@{publish_version(store, 'splits', cases=table).version}"
    ids = table.column("case_id").to_pylist()
    regression = {i for i, s in zip(ids, splits, strict=True) if s == "regression"}
    result = _replay(
        store, ref, "replay_agents:change_amount", tmp_path / "o", "--split", "regression"
    )
    assert result.exit_code == 1, result.output
    summary = json.loads((tmp_path / "o" / "run_summary.json").read_text())
    assert summary["cases"] == len(regression) == 3
    rows = pq.read_table(tmp_path / "o" / "regression_diff_result.parquet").to_pylist()
    assert {r["case_id"] for r in rows} <= regression and rows
    result = _replay(store, ref, "replay_agents:other_state", tmp_path / "o", "--split", "test")
    assert result.exit_code == 2
    assert "--split 'test': one of dev, regression, holdout" in result.output
