"""A run keyed otherwise than the set's latest version is refused (exit 2, a clear message)
unless --new-key starts a new lineage."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow

KEY_A = "lineage-test-key-a-0123456789abcdef0123456789abcdef"
KEY_B = "lineage-test-key-b-0123456789abcdef0123456789abcdef"


def test_other_key_refused_unless_new_lineage(corpus, tmp_path, monkeypatch) -> None:
    from golden_distill.datasets.reader import open_set

    source, _ = corpus
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"run": {"work_dir": str(tmp_path / "work")}}))
    store = tmp_path / "store"
    run = ["run", "--local", "--config", str(config), "--source", str(source), "--format",
           "native", "--store", str(store), "--set", "keyed"]  # fmt: skip
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY_A)
    first = CliRunner().invoke(app, run)
    assert first.exit_code == 0, first.output
    key_a = open_set(str(store), "keyed").manifest["key_id"]
    monkeypatch.setenv("GOLDEN_PSEUDONYM_KEY", KEY_B)
    refused = CliRunner().invoke(app, [*run, "--force"])
    assert refused.exit_code == 2, refused.output
    assert "is not the key of keyed@" in refused.output and "--new-key" in refused.output
    assert key_a in refused.output and "Traceback" not in refused.output
    assert len(list((store / "keyed" / "versions").iterdir())) == 1  # nothing published
    started = CliRunner().invoke(app, [*run, "--new-key"])
    assert started.exit_code == 0, started.output
    manifest = open_set(str(store), "keyed").manifest
    assert manifest["key_id"] != key_a and manifest["lineage"]["new_key"] is True
    assert manifest["lineage"]["parent_version"] is None  # built from the sources alone
    again = CliRunner().invoke(app, [*run, "--force"])  # the new key is now the set's
    assert again.exit_code == 0, again.output
    assert open_set(str(store), "keyed").manifest["key_id"] == manifest["key_id"]
