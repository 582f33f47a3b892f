"""The install layout: one import root, and the `datasets/` folder never shadows HF `datasets`.

PEP 420 makes any directory on sys.path a namespace-package *portion*, so from the repository root
a bare `datasets/` folder is always a candidate. What we guarantee, and test here: the folder holds
no `__init__.py` (so it is never a regular package), a regular `datasets` package anywhere on the
path (as Hugging Face `datasets` is) always wins over it, and the code is reachable only as
`golden_distill.datasets`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _find_spec_from_repo_root(extra_path: Path | None = None) -> str:
    code = (
        "import importlib.util, sys\n"
        + (f"sys.path.append({str(extra_path)!r})\n" if extra_path else "")
        + "s = importlib.util.find_spec('datasets')\n"
        "print('NONE' if s is None else f'{s.origin}|{list(s.submodule_search_locations or [])}')"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_datasets_folder_is_not_a_regular_package():
    assert not (REPO / "datasets" / "__init__.py").exists()
    spec = _find_spec_from_repo_root()
    # at most a namespace portion: never a module file of ours
    assert spec == "NONE" or spec.split("|")[0] in ("None", "namespace")


def test_a_real_datasets_package_wins_over_the_repo_folder(tmp_path):
    fake = tmp_path / "site" / "datasets"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("HF = True\n")
    spec = _find_spec_from_repo_root(tmp_path / "site")
    origin = spec.split("|")[0]
    assert origin == str(fake / "__init__.py")
    assert str(REPO) not in origin


def test_code_imports_under_one_root():
    import golden_distill.datasets.schema as schema

    assert Path(schema.__file__).resolve().parent == REPO / "datasets"
