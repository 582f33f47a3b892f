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
