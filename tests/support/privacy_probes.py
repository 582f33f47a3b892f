"""The labelled evaluator (``bench/privacy_eval.py``) for tests: loaded once as a module, and a
tally of a list of probe tuples through it, so every probe file judges leaks and look-alikes the
way the corpus bench does."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

_BENCH = Path(__file__).resolve().parents[2] / "bench" / "privacy_eval.py"
if "privacy_eval" in sys.modules:
    privacy_eval = sys.modules["privacy_eval"]
else:
    _spec = importlib.util.spec_from_file_location("privacy_eval", _BENCH)
    assert _spec and _spec.loader
    privacy_eval = importlib.util.module_from_spec(_spec)
    sys.modules["privacy_eval"] = privacy_eval
    _spec.loader.exec_module(privacy_eval)


def probe_tally(probes: list[tuple], prefix: str, redactor: Any, make_case: Any, make_step: Any):
    """Evaluate ``(category, place, text, values, negatives)`` probes in one batch."""
    items = [
        {"id": f"{prefix}{i:03d}", "category": c, "entity": c.upper(), "place": p, "text": t,
         "values": v, "negatives": n}
        for i, (c, p, t, v, n) in enumerate(probes)
    ]  # fmt: skip
    return privacy_eval.evaluate(items, redactor, make_case, make_step)
