"""configs/gate.yaml: validated like every config; its values are the documented defaults."""

from __future__ import annotations

import pytest

from golden_distill.datasets.config_model import ConfigError
from golden_distill.datasets.replay.config import SHIPPED_GATE, ReplayConfig, load_replay_config


def test_shipped_gate_is_the_defaults_and_has_a_commented_header() -> None:
    assert load_replay_config(SHIPPED_GATE) == ReplayConfig()
    assert SHIPPED_GATE.read_text().startswith("# golden-distill replay gate")
    gate = ReplayConfig().gate
    assert (gate.p0.max_stub_escapes, gate.p1.min_parameter_parity) == (0, 0.985)
    assert (gate.p2.max_step_drift, gate.p2.max_token_growth) == (0.15, 0.20)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("gate:\n  p1:\n    min_parameter_parit: 0.9\n", "did you mean min_parameter_parity"),
        ("gate:\n  p1:\n    min_parameter_parity: 1.5\n", "less than or equal to 1"),
        ("severity:\n  intent_diff: high\n", "severity.intent_diff"),
        ("bogus: 1\n", "bogus: unknown key"),
    ],
)
def test_bad_gate_files_name_the_problem(tmp_path, text: str, problem: str) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem):
        load_replay_config(path)


def test_the_replay_side_imports_neither_prefect_nor_presidio() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import golden_distill.datasets.reader, golden_distill.datasets.replay\n"
        "import golden_distill.datasets.replay.results, golden_distill.datasets.replay.report\n"
        "import golden_distill.datasets.replay.export\n"
        "import golden_distill.datasets.replay.pytest_plugin\n"
        "heavy = ('prefect', 'presidio_analyzer', 'presidio_anonymizer', 'spacy')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
