"""What a published golden set is made of: the numbers behind docs/tuning-funnels.md.

Reads one version's cases (Parquet) and prints the composition an engineer checks first: how
many cases, how many are successful runs (reward 1), failed runs (reward 0), how many write,
recover or hand off, per funnel, per environment (system of the writes) and per trust tier.

    python bench/tau_bench_composition.py STORE_FOLDER/SET/versions/VERSION/cases.parquet
"""

from __future__ import annotations

import json
import sys

import polars as pl


def composition(cases: pl.DataFrame) -> dict[str, object]:
    """Counts of one version's cases (ids and counts only)."""
    reward = pl.col("outcome").struct.field("reward")
    steps = cases.select("case_id", "steps").explode("steps").unnest("steps")
    writes = steps.filter(pl.col("is_mutating").fill_null(False) & (pl.col("status") == "ok"))
    writers = set(writes.get_column("case_id").to_list())
    systems = writes.group_by("case_id").agg(
        pl.col("system").drop_nulls().unique().sort().str.join("+")
    )
    funnels = cases.select(pl.col("funnels").explode()).to_series().value_counts()
    out: dict[str, object] = {
        "cases": cases.height,
        "reward_1": int(cases.select((reward >= 1).sum()).item() or 0),
        "reward_0": int(cases.select((reward <= 0).sum()).item() or 0),
        "with_writes": len(writers),
        "per_funnel": {r["funnels"]: r["count"] for r in funnels.iter_rows(named=True)},
        "write_systems": dict(
            systems.get_column("system").value_counts().sort("system").iter_rows()
        ),
    }
    for column in ("trust", "split"):
        if column in cases.columns:
            counts = cases.get_column(column).value_counts().sort(column)
            out[f"per_{column}"] = dict(counts.iter_rows())
    return out


def main() -> None:
    cases = pl.read_parquet(sys.argv[1])
    print(json.dumps(composition(cases), indent=2, default=str))


if __name__ == "__main__":
    main()
