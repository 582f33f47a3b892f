"""Hand-built cases for the dedup tests: a tiny DSL so each test states only what differs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import orjson
import polars as pl
import pyarrow as pa
import pytest

from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.schema import GOLDEN_SCHEMA

BASE_TIME = datetime(2026, 11, 28, 2, 0, tzinfo=UTC)

#: (name, arguments, is_mutating, status)
StepSpec = tuple[str, dict[str, Any], bool, str]


def read(name: str, args: dict[str, Any], status: str = "ok") -> StepSpec:
    return (name, args, False, status)


def write(name: str, args: dict[str, Any], status: str = "ok") -> StepSpec:
    return (name, args, True, status)


def build_case(
    case_id: str,
    text: str,
    steps: Sequence[StepSpec],
    *,
    value_score: float | None = 1.0,
    minutes: int = 0,
    funnels: list[str] | None = None,
) -> Case:
    counts: dict[str, int] = {}
    built = []
    for seq, (name, args, mutating, status) in enumerate(steps):
        counts[name] = counts.get(name, 0) + 1
        built.append(
            Step(
                seq=seq,
                kind="tool",
                name=name,
                occurrence=counts[name],
                status=status,
                arguments=orjson.dumps(args).decode(),
                response="{}",
                is_mutating=mutating,
            )
        )
    return Case(
        case_id=case_id,
        recorded_at=BASE_TIME + timedelta(minutes=minutes),
        user_input=text,
        steps=built,
        funnels=funnels if funnels is not None else ["high_value_mutating"],
        value_score=value_score,
    )


def to_frame(cases: Sequence[Case]) -> pl.DataFrame:
    rows = [c.to_row(pipeline_fields=True) for c in cases]
    return pl.from_arrow(pa.Table.from_pylist(rows, schema=GOLDEN_SCHEMA))  # type: ignore[return-value]


@pytest.fixture
def dsl() -> SimpleNamespace:
    """``dsl.case(...)``, ``dsl.read(...)``, ``dsl.write(...)``, ``dsl.frame([cases])``."""
    return SimpleNamespace(case=build_case, read=read, write=write, frame=to_frame)
