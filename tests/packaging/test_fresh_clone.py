"""A fresh `git clone`, alone in an empty folder, runs the tests that read real data.

The clone's parent folder holds nothing else, so a test reaching for a data folder beside the
checkout (the old `../shared/realdata`) fails here. The tests run from the clone with this
venv: they read the tau-bench runs vendored in the clone (tests/data, through the clone's
tests/support on pytest's pythonpath). The committed state is what is cloned: commit first.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
#: Tests that read the vendored tau-bench runs (chat adapter, funnels, dedup): a quick subset.
DATA_TESTS = (
    "tests/datasets/sources/test_chat.py",
    "tests/filters/test_tau_bench.py",
    "tests/filters/dedup/test_tau_bench.py",
)
#: How a test would reach outside its checkout for data.
OUTSIDE = re.compile(r"\.\./shared|shared/realdata")


def test_fresh_clone_passes_its_data_tests_alone(tmp_path: Path):
    alone = tmp_path / "alone"
    alone.mkdir()
    clone = alone / "golden-distill"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=120)
    assert [p.name for p in alone.iterdir()] == ["golden-distill"]  # nothing beside it

    vendored = sorted((clone / "tests" / "data" / "tau-bench").glob("*.json.gz"))
    assert len(vendored) >= 3 and all(p.read_bytes()[:2] == b"\x1f\x8b" for p in vendored)  # gzip
    reaching_out = [
        str(p.relative_to(clone))
        for p in (clone / "tests").rglob("*.py")
        if "packaging" not in p.parts and OUTSIDE.search(p.read_text(encoding="utf-8"))
    ]
    assert reaching_out == []

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *DATA_TESTS],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    passed = re.search(r"(\d+) passed", out.stdout)
    assert passed and int(passed.group(1)) >= 10, out.stdout[-2000:]
    assert "skipped" not in out.stdout.splitlines()[-1]
