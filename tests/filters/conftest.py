"""Builders for small canonical batches: Case objects -> CASE_SCHEMA rows -> a polars frame."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

from golden_distill.datasets.case import Case, Intent, Outcome, Step
from golden_distill.datasets.schema import CASE_SCHEMA


def _step(
    seq: int,
    name: str,
    status: str = "ok",
    *,
    write: bool = False,
    args: Any = None,
    kind: str = "tool",
    system: str | None = None,
    response: Any = None,
) -> Step:
    return Step(
        seq=seq, kind=kind, name=name, occurrence=1, status=status, is_mutating=write,
        arguments=None if args is None else json.dumps(args), system=system,
        response=None if response is None else json.dumps(response),
    )  # fmt: skip


def _case(
    case_id: str,
    steps: list[Step] | None = None,
    *,
    tenant: str = "t1",
    outcome: Outcome | None = None,
    confidence: float | None = None,
) -> Case:
    return Case(
        case_id=case_id, tenant_id=tenant, steps=list(steps or []),
        outcome=outcome or Outcome(), intent=Intent("intent", confidence),
    )  # fmt: skip


def _reads(start: int, count: int, name: str = "kb_search") -> list[Step]:
    return [_step(start + i, name) for i in range(count)]


def cases_frame(cases: list[Case]) -> pl.DataFrame:
    table = pa.Table.from_pylist([c.to_row() for c in cases], schema=CASE_SCHEMA)
    return pl.from_arrow(table)  # type: ignore[return-value]


@pytest.fixture
def build() -> SimpleNamespace:
    return SimpleNamespace(step=_step, case=_case, reads=_reads, frame=cases_frame, outcome=Outcome)
