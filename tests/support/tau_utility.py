"""Utility of redaction on the vendored tau-bench runs: non-personal values it rewrites.

Labels come from the tau-bench database structure, not from hand-picking: every value of the
user's own record (``users-<env>.json``: names, address lines, zip, e-mail, payment ids, dates of
birth) is personal, except the coarse ``country``/``state``/``source`` fields; values under
catalogue keys of tool replies and arguments (product names, option values, countries, airports,
flight numbers, cabins, statuses, scheduled times) and tool names in the message history are not.
An over-redaction is a (case, non-personal value) whose occurrences drop after redaction; an
invalid time/date is a clock time or calendar date in the output that cannot exist.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from golden_test_data import airline_runs_path, retail_runs_paths, tau_bench_users

from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

CATALOGUE_KEYS = {
    "country", "origin", "destination", "flight_number", "cabin", "status", "category",
    "scheduled_departure_time_est", "scheduled_arrival_time_est", "product_name",
}  # fmt: skip
#: keys whose value is a catalogue value only beside a product/item id (else a user's name)
PRODUCT_NAME_KEYS = {"name"}
COARSE_USER_KEYS = {"country", "state", "source"}
_TIME = re.compile(r"(?<![\d:])(\d{2}):(\d{2}):(\d{2})(?![\d:])")
_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def _walk(value: Any, out: list[str], parent: dict | None = None, key: str = "") -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "options" and isinstance(v, dict):
                out.extend(str(o) for o in v.values() if isinstance(o, str))
            _walk(v, out, value, k)
    elif isinstance(value, list):
        for v in value:
            _walk(v, out, parent, key)
    elif isinstance(value, str):
        beside_product = bool(parent and {"product_id", "item_id"} & parent.keys())
        if key in CATALOGUE_KEYS or (key in PRODUCT_NAME_KEYS and beside_product):
            out.append(value)
        elif value[:1] in "[{":
            with contextlib.suppress(ValueError):
                _walk(json.loads(value), out)


def _personal(user: dict, user_id: str) -> set[str]:
    out = {user_id}

    def walk(v: Any, key: str = "") -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if key == "payment_methods":
                    out.add(k)
                walk(x, k)
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        elif isinstance(v, str) and key not in COARSE_USER_KEYS:
            out.add(v)

    walk(user)
    return out


def non_personal_values(row: dict[str, Any], personal: set[str]) -> set[str]:
    """Catalogue values of a case (steps' arguments and replies, message tool names)."""
    found: list[str] = []
    for step in row.get("steps") or []:
        for text in (step.get("arguments"), step.get("response")):
            if text:
                _walk(text, found)
    try:
        messages = json.loads(row["context"]["messages"] or "[]")
    except ValueError:
        messages = []
    found += [m["name"] for m in messages if isinstance(m, dict) and isinstance(m.get("name"), str)]
    return {v for v in found if len(v) >= 2 and v not in personal}


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _count(value: str, strings: list[str]) -> int:
    return sum(s.count(value) for s in strings)


def invalid_times(strings: list[str]) -> int:
    bad = 0
    for s in strings:
        bad += sum(1 for h, m, x in _TIME.findall(s) if int(h) > 23 or int(m) > 59 or int(x) > 59)
        bad += sum(
            1 for _, mo, d in _DATE.findall(s) if not (1 <= int(mo) <= 12 and 1 <= int(d) <= 31)
        )
    return bad


@dataclass
class Utility:
    cases: int = 0
    published: int = 0
    labelled: int = 0
    rewritten: list[tuple[str, str]] = field(default_factory=list)
    invalid_times: int = 0

    @property
    def per_100(self) -> float:
        return 100 * len(self.rewritten) / self.published if self.published else 0.0


def sample_runs(per_env: int) -> list[tuple[str, list[dict]]]:
    """The first ``per_env`` runs of the airline file and of the first retail file."""
    return [
        ("airline", json.loads(airline_runs_path().read_text())[:per_env]),
        ("retail", json.loads(retail_runs_paths()[0].read_text())[:per_env]),
    ]


def measure(redactor: Redactor, per_env: int = 15, tmp: Any = None) -> Utility:
    """Redact a sample of vendored runs per environment (one table each) and count damage."""
    import tempfile
    from pathlib import Path

    u = Utility()
    folder = Path(tmp or tempfile.mkdtemp(prefix="tau-utility-"))
    for env, runs in sample_runs(per_env):
        path = folder / f"{env}.json"
        path.write_text(json.dumps(runs))
        rows = list(ChatAdapter(IngestConfig()).read(str(path), Quarantine(), ReadStats()))
        users = tau_bench_users(env)
        table = pa.Table.from_pylist(rows, schema=CASE_SCHEMA)
        result = redact_table(table, redactor)
        after = {r["case_id"]: r for r in result.table.to_pylist()}
        for row, run in zip(rows, runs, strict=True):
            u.cases += 1
            out = after.get(row["case_id"])
            if out is None:
                continue
            u.published += 1
            uid = run["info"]["task"]["user_id"]
            labels = non_personal_values(row, _personal(users.get(uid, {}), uid))
            u.labelled += len(labels)
            before_s, after_s = _strings(row), _strings(out)
            for v in sorted(labels):
                if _count(v, after_s) < _count(v, before_s):
                    u.rewritten.append((row["case_id"], v))
            u.invalid_times += invalid_times(after_s)
    return u
