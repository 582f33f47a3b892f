"""Small, deterministic golden sets for the store and reader tests (built from ``Case`` objects).

Loaded by path (``load_factory``) from conftest and test modules, and imported directly by the
publisher subprocess script, because pytest's importlib mode puts no test folder on sys.path.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.case import Case, Outcome, Source, Step
from golden_distill.datasets.schema import GOLDEN_SCHEMA, make_case_id

TOOLS = ("erp_get_order", "erp_update_order", "crm_get_customer", "fin_refund", "kb_search")
FUNNELS = ("high_value_mutating", "recovery", "human_handoff", "redacted")


def build_case(i: int, *, tools: tuple[str, ...] = TOOLS, steps: int | None = None) -> Case:
    """A deterministic case with a few tool steps (repeated tools, so occurrences > 1 exist)."""
    start = datetime(2026, 11, 28, tzinfo=UTC) + timedelta(minutes=i)
    count = steps if steps is not None else 2 + i % 5
    calls, seen = [], {}
    for seq in range(count):
        name = tools[(i + seq) % len(tools)] if seq % 3 else tools[i % len(tools)]
        seen[name] = seen.get(name, 0) + 1
        args = {"orderId": f"ORD-{i}-{seq % 2}", "requestId": f"req-{i}-{seq}"}
        status = "error" if (i + seq) % 7 == 0 else "ok"
        calls.append(
            Step(
                seq=seq,
                kind="tool",
                name=name,
                occurrence=seen[name],
                arguments=json.dumps(args),
                canonical_args_sha256=canonical_args_sha256(args),
                response=json.dumps({"status": "PENDING", "amount": 10.5 * i, "n": seq}),
                status=status,
                error="upstream timeout" if status == "error" else None,
                is_mutating=name.endswith(("update_order", "refund")),
                system=name.split("_", 1)[0].upper(),
                latency_ms=10 + seq,
                started_at=start + timedelta(seconds=seq),
            )
        )
    return Case(
        case_id=make_case_id("native", f"r-{i}"),
        trace_id=f"t-{i}",
        session_id=f"s-{i // 3}",
        turn_index=i % 3,
        tenant_id=f"tenant-{i % 4}",
        user_id=f"user-{i % 9}",
        recorded_at=start,
        user_input=f"request number {i}",
        steps=calls,
        outcome=Outcome(status="success", final_state="DONE", reward=1.0),
        source=Source(format="native", uri="mem://test.jsonl", position=i + 1),
        funnels=[FUNNELS[i % 4], *(["redacted"] if i % 4 != 3 else [])],
        funnel_reasons=json.dumps({FUNNELS[i % 4]: "test"}),
        value_score=float(i % 10),
        cluster_id=f"k-{i // 2}",
        cluster_size=2,
        redaction=json.dumps({"PERSON": i % 3}),
    )


def cases_table(cases: list[Case]) -> pa.Table:
    return pa.Table.from_pylist([c.to_row(pipeline_fields=True) for c in cases], GOLDEN_SCHEMA)


def make_table(n: int, start: int = 0) -> pa.Table:
    return cases_table([build_case(i) for i in range(start, start + n)])
