"""The redaction floor: weakening configs are refused (validate and run), unless explicitly
allowed; the verifier keeps its own floor of detectors whatever the scrubber was told."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.flows.cli import app
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.verify import RESIDUAL_PII

WEAKENING = [
    ({"recognizers": []}, "redaction.recognizers is empty"),
    ({"recognizers": ["introduced_name", "phone"]}, "redaction.recognizers drops email"),
    ({"key_fields": []}, "redaction.key_fields is empty"),
    ({"sensitive_keys": {}}, "redaction.sensitive_keys is empty"),
    ({"score_threshold": 0.9}, "redaction.score_threshold"),
    ({"verify_threshold": 1.0}, "redaction.verify_threshold"),
    ({"unknown_identifiers": "keep"}, "redaction.unknown_identifiers is keep"),
]


def _config(tmp_path: Path, redaction: dict) -> Path:
    path = tmp_path / "weak.yaml"
    path.write_text(yaml.safe_dump({"redaction": redaction}))
    return path


@pytest.mark.parametrize(("redaction", "named"), WEAKENING)
def test_weakening_config_is_refused_by_validate(
    tmp_path: Path, redaction: dict, named: str
) -> None:
    result = CliRunner().invoke(app, ["config", "validate", str(_config(tmp_path, redaction))])
    assert result.exit_code == 2
    assert named in result.output and "unsafe_allow_weakened" in result.output


@pytest.mark.parametrize(("redaction", "named"), WEAKENING[:3])
def test_weakening_is_allowed_only_when_said_so(
    tmp_path: Path, redaction: dict, named: str
) -> None:
    path = _config(tmp_path, {**redaction, "unsafe_allow_weakened": True})
    result = CliRunner().invoke(app, ["config", "validate", str(path)])
    assert result.exit_code == 0, result.output


def test_weakening_config_is_refused_at_run_start(tmp_path: Path) -> None:
    path = _config(tmp_path, {"recognizers": []})
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "r.jsonl").write_text("{}\n")
    result = CliRunner().invoke(
        app,
        ["run", "--config", str(path), "--source", str(tmp_path / "src")],
        env={"GOLDEN_PSEUDONYM_KEY": "floor-test-key-Gh7Jk2Lm9Nb4Vc8Xz1Qw6Er3Ty5Ui0Op"},
    )
    assert result.exit_code == 2  # a config error exits 2 in every command
    assert "redaction.recognizers is empty" in result.output


def test_verifier_keeps_its_floor_when_the_scrubber_was_weakened(make_case) -> None:
    weak = RedactionConfig(recognizers=["introduced_name"], unsafe_allow_weakened=True)
    redactor = Redactor(weak, PseudonymKey(b"floor-test-key-Gh7Jk2Lm9Nb4Vc8Xz1Qw6Er3Ty5Ui0Op"))
    result = redactor.redact(make_case(user_input="write to floor.probe@example.com please"))
    assert result.row is None and result.reason == RESIDUAL_PII
    assert "EMAIL_ADDRESS" in result.entity_types


def test_report_header_shows_a_weakened_configuration() -> None:
    from golden_distill.flows.report.render import render_report

    assert "UNSAFE: weakened configuration" in render_report({"redaction_weakened": True})
    assert "UNSAFE" not in render_report({"redaction_weakened": False})
