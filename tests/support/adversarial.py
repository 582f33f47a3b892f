"""The adversarial corpus of ``tests/redaction/adversarial_corpus.py``, loaded once by path
(tests are not a package) for every test that plants its probes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

CORPUS_PATH = Path(__file__).resolve().parents[1] / "redaction" / "adversarial_corpus.py"


def adversarial_corpus() -> ModuleType:
    loaded = sys.modules.get("adversarial_corpus")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("adversarial_corpus", CORPUS_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["adversarial_corpus"] = module
    spec.loader.exec_module(module)
    return module
