"""Run every funnel over a batch of cases, then the quotas: the funnel stage of the pipeline.

The flow runs it in two phases: ``score_cases`` per shard (batch-wide figures permissive),
then over every shard's small rows ``figures_from`` and, when a funnel uses one, ``rescore``;
``filters.selection.choose`` then dedups and applies the quotas. Scoring goes batch by batch
(bounded memory: only case_id, tenant_id, intent, steps and outcome are read) into one small
*decisions* row per case.

value_score = sum over the case's select funnels of each funnel's contribution (weight x
strength; see each funnel's module docstring). Gates contribute nothing; a case in no select
funnel scores 0.
"""

from __future__ import annotations

import polars as pl

from golden_distill.filters.case_source import (
    INPUT_COLUMNS,
    Source,
    as_lazy,
    iter_case_batches,
)
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.funnel import BatchFigure, Funnel
from golden_distill.filters.inputs import build_inputs
from golden_distill.filters.registry import all_funnels, build_funnels

#: Values of ``decisions.status``: why a case is or is not in the selection.
SELECTED = "selected"
NO_FUNNEL = "no_funnel"


def declared_figures(config: FunnelsConfig) -> list[BatchFigure]:
    """The batch-wide figures the enabled funnels declare."""
    return [fig for funnel in build_funnels(config) for fig in funnel.figures]


def figures_from(scored: pl.DataFrame, config: FunnelsConfig) -> dict[str, float]:
    """Each declared figure computed over ``scored`` (``score_cases`` rows of the whole batch,
    e.g. every shard's decisions); figures the config does not use are left out."""
    out: dict[str, float] = {}
    for fig in declared_figures(config):
        value = fig.compute(scored.get_column(fig.column), config)
        if value is not None:
            out[fig.name] = value
    return out


def permissive_figures(config: FunnelsConfig) -> dict[str, float]:
    """Figures that let every case pass (for a shard scored before the batch is known), only
    for the figures the config uses: ``{}`` when none is needed."""
    probe = pl.Series([0], dtype=pl.Float64)
    return {
        fig.name: fig.permissive
        for fig in declared_figures(config)
        if fig.compute(probe, config) is not None
    }


def batch_figures(source: Source, config: FunnelsConfig) -> dict[str, float]:
    """Batch-wide figures over whole cases (a scoring pass, only when a figure is used)."""
    permissive = permissive_figures(config)
    if not permissive:
        return {}
    return figures_from(score_cases(source, config, figures=permissive), config)


def needs_rescore(decisions: pl.DataFrame) -> pl.Expr:
    """Rows a permissive shard pass may have scored wrongly: in some select funnel (candidates
    and gated cases). A case in no funnel under permissive figures is in none under any."""
    return pl.col("status") != NO_FUNNEL


def rescore(
    decisions: pl.DataFrame,
    cases: Source,
    config: FunnelsConfig,
    figures: dict[str, float],
) -> pl.DataFrame:
    """``decisions`` with the rows of ``cases`` (the rows ``needs_rescore`` marks, read back
    from the shards) scored again with the whole batch's ``figures``: the second half of the
    two-phase funnel pass when a funnel uses a batch-wide figure."""
    fresh = score_cases(cases, config, figures=figures)
    fresh = fresh.select([c for c in decisions.columns if c in fresh.columns])
    ids = fresh.get_column("case_id").implode()
    kept = decisions.filter(~pl.col("case_id").is_in(ids))
    return pl.concat([kept, fresh], how="diagonal_relaxed")


def _json_string(expr: pl.Expr) -> pl.Expr:
    escaped = expr.str.replace_all("\\", "\\\\", literal=True).str.replace_all(
        '"', '\\"', literal=True
    )
    return pl.concat_str([pl.lit('"'), escaped, pl.lit('"')])


def _decide_batch(
    batch: pl.DataFrame,
    funnels: list[Funnel],
    config: FunnelsConfig,
    figures: dict[str, float],
    details: bool,
) -> pl.DataFrame:
    if batch.height and batch["case_id"].is_duplicated().any():
        # The same run read twice (a source listed twice): every funnel joins on case_id, so
        # score each repetition as its own layer; dedup drops the copies later.
        layer = pl.int_range(pl.len()).over("case_id")
        layered = batch.with_columns(_layer=layer).partition_by("_layer", maintain_order=True)
        return pl.concat(
            [_decide_batch(p.drop("_layer"), funnels, config, figures, details) for p in layered]
        )
    inputs = build_inputs(batch, config, figures, funnels=all_funnels(config), details=details)
    keep = ["case_id", "tenant_id", "signature", "n_steps"]
    plan = inputs.cases.select([*keep, *(["tools", "systems"] if details else [])])
    for funnel in funnels:
        result = funnel.run(inputs).select(
            "case_id",
            pl.col("member").fill_null(False).alias(f"in_{funnel.name}"),
            pl.col("reason").alias(f"why_{funnel.name}"),
            pl.col("contribution").fill_null(0.0).alias(f"score_{funnel.name}"),
        )
        plan = plan.join(result, on="case_id", how="left", maintain_order="left")
    finished = _finish(plan.collect(), funnels)
    if details:
        return finished
    return finished.drop([c for c in finished.columns if c.startswith(("why_", "score_"))])


def _finish(decided: pl.DataFrame, funnels: list[Funnel]) -> pl.DataFrame:
    selects = [f.name for f in funnels if f.role == "select"]
    gates = [f.name for f in funnels if f.role == "gate"]
    frame = decided.with_columns([pl.col(f"in_{n}").fill_null(False) for n in selects + gates])
    any_select = (
        pl.any_horizontal([pl.col(f"in_{n}") for n in selects]) if selects else pl.lit(False)
    )
    all_gates = pl.all_horizontal([pl.col(f"in_{n}") for n in gates]) if gates else pl.lit(True)
    gate_refusal = pl.coalesce(
        [pl.when(~pl.col(f"in_{n}")).then(pl.format("gate:{}", f"why_{n}")) for n in gates]
        or [pl.lit(None, dtype=pl.String)]
    )
    members = [pl.when(pl.col(f"in_{n}")).then(pl.lit(n)) for n in selects + gates]
    reasons = [
        pl.when(pl.col(f"in_{n}")).then(
            pl.concat_str([pl.lit(f'"{n}": '), _json_string(pl.col(f"why_{n}").fill_null(""))])
        )
        for n in selects + gates
    ]
    score = pl.sum_horizontal([pl.col(f"score_{n}") for n in selects]) if selects else pl.lit(0.0)
    candidate = any_select & all_gates
    return frame.with_columns(
        candidate=candidate,
        status=pl.when(candidate)
        .then(pl.lit(SELECTED))
        .when(any_select)
        .then(gate_refusal)
        .otherwise(pl.lit(NO_FUNNEL)),
        funnels=pl.concat_list(members).list.drop_nulls()
        if members
        else pl.lit([], dtype=pl.List(pl.String)),
        funnel_reasons=pl.concat_str(
            [pl.lit("{"), pl.concat_str(reasons, separator=", ", ignore_nulls=True), pl.lit("}")]
        )
        if reasons
        else pl.lit("{}"),
        value_score=pl.when(any_select).then(score).otherwise(0.0).cast(pl.Float64),
    )


def score_cases(
    source: Source,
    config: FunnelsConfig,
    *,
    batch_rows: int = 10_000,
    figures: dict[str, float] | None = None,
    details: bool = False,
) -> pl.DataFrame:
    """Every funnel over every case, no quotas: one small row per case with case_id,
    tenant_id, signature (hash of the tool sequence), n_steps, in_<funnel> (bool), candidate,
    status (selected | no_funnel | gate:<reason>; ``filters.selection.choose`` turns the
    candidates dedup and the quotas leave out into dedup:<how> / quota:<reason>),
    funnels, funnel_reasons (JSON text {funnel: reason}), value_score.

    ``details`` adds tools and systems (lists), why_<funnel> (reason, or a gate's refusal code)
    and score_<funnel> (contribution): for previews and tests, not needed by the flow.
    ``figures``: batch-wide figures (``figures_from`` over *all* shards' rows) when scoring one
    shard of a larger batch, or ``permissive_figures`` for the shard pass of the flow; by
    default they are computed from ``source`` itself."""
    funnels = build_funnels(config)
    lf = as_lazy(source)
    if figures is None:
        figures = batch_figures(source, config)
    parts = [
        _decide_batch(b, funnels, config, figures, details)
        for b in iter_case_batches(source, config, batch_rows)
    ]
    if not parts:
        empty = lf.select(INPUT_COLUMNS).head(0).collect()
        parts = [_decide_batch(empty, funnels, config, figures, details)]
    return pl.concat(parts, how="vertical")
