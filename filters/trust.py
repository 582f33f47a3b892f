"""Trust tiers: how far a published case's expected outcome can be believed.

* ``human``: a reviewer confirmed it (`golden review import`);
* ``oracle``: an oracle vouches for the expected outcome: the run was rewarded (reward >= 1),
  or it reached a recorded expected final state, or its expected outcome comes from the task
  definition (``expected.source`` ``tau_bench_task``) rather than from the run itself;
* ``unconfirmed``: selected by funnels only. A failed run (reward 0, or a final state other
  than the expected one) is never more than this unless an oracle or a person supplies its
  expected outcome, so nobody replays a failure as if its recorded outcome were the truth.
"""

from __future__ import annotations

import polars as pl

UNCONFIRMED, ORACLE, HUMAN = "unconfirmed", "oracle", "human"
RANK = {UNCONFIRMED: 0, ORACLE: 1, HUMAN: 2}
#: expected.source values that come from outside the run (an oracle or a person).
ORACLE_SOURCES = ("tau_bench_task",)


def _expected_field(frame: pl.DataFrame, name: str) -> pl.Expr:
    dtype = frame.schema.get("expected")
    if isinstance(dtype, pl.Struct) and name in [f.name for f in dtype.fields]:
        return pl.col("expected").struct.field(name)
    return pl.lit(None, dtype=pl.String)


def trust_expr(frame: pl.DataFrame, confirmed: pl.Expr | None = None) -> pl.Expr:
    """The trust tier of each row of ``frame`` (CASE/GOLDEN rows, ``expected`` optional);
    ``confirmed`` marks rows a reviewer confirmed."""
    outcome = pl.col("outcome").struct
    reward = outcome.field("reward")
    state = outcome.field("final_state")
    expected_state = _expected_field(frame, "final_state")
    source = _expected_field(frame, "source")
    rewarded = (reward >= 1).fill_null(False)
    has_expected = expected_state.is_not_null()
    reached = (has_expected & (state == expected_state)).fill_null(False)
    missed = (has_expected & (state != expected_state)).fill_null(has_expected)
    from_oracle = source.is_in(list(ORACLE_SOURCES)).fill_null(False)
    tier = pl.when(from_oracle | ((rewarded | reached) & ~missed)).then(pl.lit(ORACLE))
    if confirmed is not None:
        tier = (
            pl.when(confirmed.fill_null(False))
            .then(pl.lit(HUMAN))
            .otherwise(tier.otherwise(pl.lit(UNCONFIRMED)))
        )
        return tier
    return tier.otherwise(pl.lit(UNCONFIRMED))


def at_least(trust: pl.Expr, minimum: str) -> pl.Expr:
    """Rows whose trust is ``minimum`` or stronger."""
    ranks = trust.replace_strict(RANK, default=0, return_dtype=pl.Int8)
    return ranks >= RANK[minimum]


#: The split `golden sets promote --min-trust` checks (a version without splits: every case).
CHECKED_SPLIT = "regression"


def weaker_in_regression(frame: pl.DataFrame, minimum: str) -> pl.DataFrame:
    """The rows of the regression split trusted less than ``minimum`` (a version without
    splits or trust: every case counts as regression and unconfirmed). What `golden sets
    promote --min-trust` refuses and the report counts (``trust_by_split``)."""
    split = pl.col("split") if "split" in frame.columns else pl.lit(None, dtype=pl.String)
    trust = pl.col("trust") if "trust" in frame.columns else pl.lit(None, dtype=pl.String)
    return frame.filter(
        split.fill_null(CHECKED_SPLIT).eq(CHECKED_SPLIT)
        & ~at_least(trust.fill_null(UNCONFIRMED), minimum)
    )


def trust_by_split(frame: pl.DataFrame) -> dict[str, dict[str, int]]:
    """{split: {trust: cases}} of published rows (missing columns read as promote reads them:
    regression, unconfirmed); summed over a version's parts for the report."""
    split = pl.col("split") if "split" in frame.columns else pl.lit(None, dtype=pl.String)
    trust = pl.col("trust") if "trust" in frame.columns else pl.lit(None, dtype=pl.String)
    counts = (
        frame.select(split=split.fill_null(CHECKED_SPLIT), trust=trust.fill_null(UNCONFIRMED))
        .group_by("split", "trust")
        .len()
    )
    out: dict[str, dict[str, int]] = {}
    for s, t, n in counts.iter_rows():
        out.setdefault(str(s), {})[str(t)] = int(n)
    return out


def below_in_regression(counts: dict[str, dict[str, int]], minimum: str) -> int:
    """Cases of the regression split trusted less than ``minimum``, from ``trust_by_split``:
    the count `golden sets promote --min-trust minimum` refuses."""
    return sum(
        n for t, n in (counts.get(CHECKED_SPLIT) or {}).items() if RANK.get(t, 0) < RANK[minimum]
    )
