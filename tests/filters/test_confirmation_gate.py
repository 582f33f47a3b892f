"""The confirmation gate works both ways (filters/splits.py): an unconfirmed case that belongs
in regression is held in dev, and the split it belongs in stays sticky, so once confirmed it
moves there."""

from __future__ import annotations

import polars as pl

from golden_distill.filters.curation_config import SplitsConfig
from golden_distill.filters.splits import (
    assign_splits,
    belongs_in,
    gate_unconfirmed,
    sticky_splits,
)


def test_held_then_confirmed_moves_to_regression() -> None:
    cfg = SplitsConfig()
    ids = [f"c_{i:02d}" for i in range(40)]
    frame = pl.DataFrame({"case_id": ids, "cluster_id": [f"cl_{i}" for i in range(40)]})
    natural = frame.with_columns(assign_splits(frame, cfg))
    belongs = [c for c, s in natural.select("case_id", "split").iter_rows() if s == "regression"]
    assert belongs  # some cases belong in regression
    # version 1: nobody confirmed anything
    v1 = gate_unconfirmed(natural.with_columns(_confirmed=pl.lit(False)), True)
    assert v1.filter(pl.col("case_id").is_in(belongs))["split"].unique().to_list() == ["dev"]
    held = {c: "regression" for c in belongs}
    published = dict(v1.select("case_id", "split").iter_rows())
    previous = sticky_splits(published, held)  # what the next version reads of version 1
    # version 2: one held case confirmed, as a new representative and as a carried case
    confirmed = belongs[0]
    marks = pl.col("case_id") == confirmed
    again = frame.with_columns(assign_splits(frame, cfg, previous)).with_columns(_confirmed=marks)
    v2 = gate_unconfirmed(again, True)
    carried = gate_unconfirmed(
        belongs_in(v1.select("case_id", "split"), previous).with_columns(_confirmed=marks), True
    )
    for out in (v2, carried):
        split = dict(out.select("case_id", "split").iter_rows())
        assert split[confirmed] == "regression"
        assert all(split[c] == "dev" for c in belongs[1:])  # still waiting for a person
    # without the held split the confirmed case would have stuck in dev
    stuck = frame.with_columns(assign_splits(frame, cfg, published)).with_columns(_confirmed=marks)
    assert (
        dict(gate_unconfirmed(stuck, True).select("case_id", "split").iter_rows())[confirmed]
        == "dev"
    )
