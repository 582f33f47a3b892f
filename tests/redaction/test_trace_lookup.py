"""`golden sets lookup --trace`: a production trace id found in a set that went through the real
redaction (its trace ids are keyed pseudonyms), with the key; without the key it is a usage
error, with another key or an unknown id nothing is found."""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow as pa
from typer.testing import CliRunner

from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.tau2 import Tau2Adapter
from golden_distill.datasets.store.manifest import ManifestFields
from golden_distill.datasets.store.publish import publish_version
from golden_distill.flows.cli import app
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

FIXTURE = Path(__file__).parents[1] / "data" / "tau2" / "airline-simulations.json"
SECRET = "trace-lookup-test-key-0f3a9c71d2e84b56a7c0e1f2d3b4a596"
OTHER = "another-lookup-test-key-8e7d6c5b4a39281706f5e4d3c2b1a0f9"
runner = CliRunner()


def _published(tmp_path: Path) -> tuple[str, str, list[str]]:
    rows = list(Tau2Adapter().read(str(FIXTURE), Quarantine(), ReadStats()))
    table = pa.Table.from_pylist(rows, schema=CASE_SCHEMA)
    key = PseudonymKey(SECRET.encode())
    redacted = redact_table(table, Redactor.from_config(RedactionConfig(), key))
    assert redacted.cases_out == len(rows)
    store = str(tmp_path / "store")
    fields = ManifestFields(key_id=key.key_id)
    version = publish_version(store, "tau2", cases=redacted.table, manifest_fields=fields).version
    return store, f"tau2@{version}", [r["trace_id"] for r in rows]


def test_a_raw_trace_id_finds_its_case(tmp_path, monkeypatch) -> None:
    store, ref, raw_ids = _published(tmp_path)
    sims = orjson.loads(FIXTURE.read_bytes())["simulations"]
    assert raw_ids == [s["id"] for s in sims]
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", SECRET)
    result = runner.invoke(app, ["sets", "lookup", ref, "--store", store, "--trace", raw_ids[1]])
    assert result.exit_code == 0, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"{ref}: trace ") and " -> case c_" in line
    assert raw_ids[1] not in result.output  # the pseudonym is shown, never the raw id
    rows = open_set(store, ref).read_table().to_pylist()
    by_case = {r["case_id"]: r["trace_id"] for r in rows}
    case_id = line.rsplit(" ", 1)[1]
    assert by_case[case_id] == line.split("trace ")[1].split(" ->")[0]
    assert sorted(by_case.values()).count(by_case[case_id]) == 1
    assert by_case[case_id] not in raw_ids  # it was pseudonymised
    # an id the set does not hold, another key: nothing found (exit 1), with a warning
    missing = runner.invoke(app, ["sets", "lookup", ref, "--store", store, "--trace", "nope"])
    assert missing.exit_code == 1 and "no case carries trace" in missing.output
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", OTHER)
    other = runner.invoke(app, ["sets", "lookup", ref, "--store", store, "--trace", raw_ids[1]])
    assert other.exit_code == 1 and "its pseudonyms differ" in other.output


def test_without_a_key_it_is_a_usage_error(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("GOLDEN_PSEUDONYM_KEY", raising=False)
    result = runner.invoke(app, ["sets", "lookup", "x@1", "--store", str(tmp_path), "--trace", "t"])
    assert result.exit_code == 2 and "no pseudonym key" in result.output
