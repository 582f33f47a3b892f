"""redaction/process_caches.py: after a redaction, the caches keyed by values it saw hold
entries; ``forget_values`` empties every one of them, and a redaction after forgetting
publishes exactly what it published with them warm. Forgetting loads no module."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import orjson
import pyarrow as pa

from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.redaction import process_caches
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

from .conftest import TEST_SECRET, case, step


def _rows() -> list[dict[str, Any]]:
    return [
        case(
            case_id=f"c-{i}",
            user_input=f"hi, this is marta quenby, call me at +1 415 555 01{i:02d}",
            steps=[step(0, "get_order", f'{{"order_id": "ORD-{4000 + i}"}}', '{"status": "ok"}')],
        )
        for i in range(20)
    ]


def _cache_sizes() -> dict[str, int]:
    """Entries of every ``lru_cache`` a loaded redaction module holds, but those declared as
    keyed by configuration: a new cache of values must be forgotten or declared."""
    sizes = {}
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("golden_distill.redaction."):
            continue
        for name, value in vars(module).items():
            info = getattr(value, "cache_info", None)
            if callable(info) and name not in process_caches.KEPT_CACHES:
                sizes[f"{module_name}.{name}"] = info().currsize
    return sizes


def _published(table: pa.Table) -> list[bytes]:
    return [orjson.dumps(r, default=str, option=orjson.OPT_SORT_KEYS) for r in table.to_pylist()]


def test_forgetting_empties_every_value_cache_and_changes_no_output() -> None:
    table = pa.Table.from_pylist(_rows(), schema=CASE_SCHEMA)
    redactor = Redactor.from_config(RedactionConfig(), PseudonymKey(TEST_SECRET))
    warm = redact_table(table, redactor)
    filled = _cache_sizes()
    assert filled["golden_distill.redaction.pseudonym.value_token"] > 0  # names, phones
    assert filled["golden_distill.redaction.inventory.safe_tool"] > 0

    process_caches.forget_values()

    assert {k: v for k, v in _cache_sizes().items() if v} == {}
    cold = redact_table(table, Redactor.from_config(RedactionConfig(), PseudonymKey(TEST_SECRET)))
    assert _published(cold.table) == _published(warm.table)
    assert cold.entity_counts == warm.entity_counts and cold.inventory == warm.inventory


def test_forgetting_imports_nothing() -> None:
    code = (
        "import sys; from golden_distill.redaction.process_caches import forget_values; "
        "forget_values(); "
        "print(sorted(m for m in sys.modules "
        "if m.startswith(('presidio', 'golden_distill.redaction.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['golden_distill.redaction.process_caches']"
