"""Phase 1 of dedup, per shard: a compact signature per case.

The nightly flow selects and redacts shard by shard, possibly on other machines; only these
signatures travel to the global clustering step (phase 2, ``cluster.cluster``), never whole
cases. A signature holds what dedup decides on and nothing else:

=================  ==========================================================================
case_id            the case
work_key           the run's *work*: ``<task>.<outcome>.<tenant>``, three short hashes of the
                   task (intent name, else ``task_id_pattern`` over the trace id or the source
                   record id, else the expected outcome), the outcome (final state, status,
                   reward, hand-off) and the tenant. Runs of different work are never merged,
                   not even as exact duplicates: every key below includes it
base_key           hash of what else makes two runs different work: the write calls
                   (name:status [+ argument shape], in order) [+ the systems touched] [+ the
                   set of read tools]
block_key          hash of the work key and the base key: near duplicates are searched within
path_key           hash of the whole normalised tool path (the trajectory below)
content_hash       sha256 of the normalised form: trajectory + argument shapes + request text
exact_hash         the content hash within the work key: cases sharing it are exact duplicates;
                   cases sharing only ``content_hash`` are *mixed pairs* (same run, different
                   work), listed for review (``borderline.mixed_pairs``), never merged
trajectory         the normalised tool path, ``name:status:W|R`` tokens joined by spaces
argument_shapes    ``name(shape)`` tokens joined by spaces (keys and value types, no values)
text               the request with ids, names, numbers, dates... replaced by placeholders
n_steps            steps in the tool path
distinct_tools     distinct tool names in the run (a representative tie-break)
value_score        from the funnels (a representative's first criterion); may be null
recorded_at        when the run was recorded (the last tie-break: earliest wins)
funnels            funnel names, to report how many cases dedup removed per funnel
outcome            a short outcome label for reports: ``reward 1``, ``hand-off``, ``ok``
=================  ==========================================================================

``text`` is a placeholder-normalised request: names and ids are gone but it is still user text,
so it is pipeline-internal and never goes into a report (the report shows trajectories only).
"""

from __future__ import annotations

import hashlib

import polars as pl

from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.normalise import PATH_KINDS, arguments_shape
from golden_distill.filters.dedup.placeholders import normalise_text_expr

SIGNATURE_SCHEMA: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "work_key": pl.String(),
    "base_key": pl.String(),
    "block_key": pl.String(),
    "path_key": pl.String(),
    "content_hash": pl.String(),
    "exact_hash": pl.String(),
    "trajectory": pl.String(),
    "argument_shapes": pl.String(),
    "text": pl.String(),
    "n_steps": pl.Int32(),
    "distinct_tools": pl.Int32(),
    "value_score": pl.Float64(),
    "recorded_at": pl.Datetime("ms", "UTC"),
    "funnels": pl.List(pl.String()),
    "outcome": pl.String(),
}


def _sha(parts: list[str | None], length: int) -> str:
    return hashlib.sha256("\x1e".join(p or "" for p in parts).encode()).hexdigest()[:length]


def _argument_shapes(arguments: pl.Series) -> pl.Series:
    """``arguments_shape`` of every step, parsing JSON only once per distinct skeleton.

    Parsing every step's arguments in Python dominated the signature phase. The skeleton
    (computed in polars, in Rust) keeps keys and structure and turns each string value into
    ``s`` and each number into ``n``; steps with one skeleton have one shape, so only one of
    them is parsed. Keys are fenced with \\x01/\\x02 first (raw control characters cannot occur
    in valid JSON text) so that values can be told from keys without look-ahead.
    """
    frame = pl.DataFrame({"arguments": arguments}).with_columns(
        pl.col("arguments")
        .str.replace_all(r'"((?:[^"\\]|\\.)*)"\s*:', "\x01${1}\x02:")
        .str.replace_all(r'"(?:[^"\\]|\\.)*"', "s")
        .str.replace_all(r"(\x01[^\x02]*\x02)|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?", "${1}n")
        .alias("skeleton")
    )
    distinct = frame.group_by("skeleton").agg(pl.col("arguments").first())
    shapes = distinct.with_columns(
        pl.Series(
            "shape",
            [arguments_shape(a) for a in distinct.get_column("arguments").to_list()],
            dtype=pl.String,
        )
    ).select("skeleton", "shape")
    joined = frame.join(shapes, on="skeleton", how="left", nulls_equal=True, maintain_order="left")
    return joined.get_column("shape")


def _path_columns(df: pl.DataFrame) -> pl.DataFrame:
    """Per row: trajectory, argument shapes, write sequence, read-tool set, counts."""
    steps = (
        df.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row"), "steps")
        .explode("steps")
        .filter(pl.col("steps").is_not_null())
        .unnest("steps")
        .filter(pl.col("kind").is_in(PATH_KINDS) | pl.col("kind").is_null())
        .select("_row", "name", "status", "is_mutating", "arguments", "system")
    )
    shapes = _argument_shapes(steps.get_column("arguments"))
    write = pl.col("is_mutating").fill_null(False)
    steps = steps.with_columns(
        pl.concat_str(
            pl.col("name"),
            pl.col("status").fill_null("ok"),
            pl.when(write).then(pl.lit("W")).otherwise(pl.lit("R")),
            separator=":",
        ).alias("token"),
        pl.concat_str(
            pl.col("name"), pl.lit("("), pl.Series(shapes, dtype=pl.String), pl.lit(")")
        ).alias("shape_token"),
    )
    per_row = steps.group_by("_row", maintain_order=True).agg(
        pl.col("token").str.join(" ").alias("trajectory"),
        pl.col("shape_token").str.join(" ").alias("argument_shapes"),
        pl.col("token").filter(write).str.join(" ").alias("writes"),
        pl.col("shape_token").filter(write).str.join(" ").alias("write_shapes"),
        pl.col("system").drop_nulls().unique().sort().str.join(",").alias("systems"),
        pl.col("name").filter(~write).unique().sort().str.join(",").alias("reads"),
        pl.len().cast(pl.Int32).alias("n_steps"),
        pl.col("name").n_unique().cast(pl.Int32).alias("distinct_tools"),
    )
    rows = pl.DataFrame({"_row": pl.int_range(df.height, dtype=pl.UInt32, eager=True)})
    return (
        rows.join(per_row, on="_row", how="left")
        .sort("_row")
        .with_columns(
            pl.col(
                "trajectory", "argument_shapes", "writes", "write_shapes", "systems", "reads"
            ).fill_null(""),
            pl.col("n_steps", "distinct_tools").fill_null(0),
        )
    )


def _optional(df: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Series:
    if name in df.columns:
        return df.get_column(name).cast(dtype)
    return pl.Series(name, [None] * df.height, dtype=dtype)


def _field(df: pl.DataFrame, column: str, name: str) -> pl.Expr:
    """``column.name`` when the frame has that struct field, else null."""
    dtype = df.schema.get(column)
    if isinstance(dtype, pl.Struct) and name in [f.name for f in dtype.fields]:
        return pl.col(column).struct.field(name)
    return pl.lit(None)


def task_id_expr(df: pl.DataFrame, cfg: DedupConfig) -> pl.Expr:
    """The source's task or scenario id of each row: ``task_id_pattern``'s first group in the
    trace id, else in the source record id (null when there is no pattern or no match). The
    flow keeps it as the candidates' ``task_id`` column, which redaction pseudonymises like a
    key (the same task, the same pseudonym) so a reviewer can group the published set by it."""
    if not cfg.task_id_pattern:
        return pl.lit(None, dtype=pl.String)
    found = []
    if "trace_id" in df.columns:
        found.append(pl.col("trace_id").cast(pl.String).str.extract(cfg.task_id_pattern, 1))
    record_id = _field(df, "source", "source_record_id").cast(pl.String)
    found.append(record_id.str.extract(cfg.task_id_pattern, 1))
    return pl.coalesce(*found)


def _work_columns(df: pl.DataFrame, cfg: DedupConfig) -> pl.DataFrame:
    """Per row: ``task_key``, ``outcome_key`` and ``tenant_key`` (runs that differ in any of
    them are different work, never merged) and a short ``outcome`` label for reports (no
    final-state text).

    The outcome is every recorded part of it: final state, status, reward (rounded to 4
    places) and hand-off, so a run that succeeded and one that failed never share a cluster
    whatever their transcript. An unrecorded reward counts as 1 (success): many sources
    record none, and a run without one is not a different outcome from a rewarded run.
    """
    reward = _field(df, "outcome", "reward").cast(pl.Float64)
    handoff = _field(df, "outcome", "handoff").cast(pl.Boolean).fill_null(False)
    state = _field(df, "outcome", "final_state").cast(pl.String)
    status = _field(df, "outcome", "status").cast(pl.String)
    intent = _field(df, "intent", "name").cast(pl.String)
    task = intent
    if cfg.task_id_pattern:
        task = pl.coalesce(intent, task_id_expr(df, cfg))
    if "expected" in df.columns:  # the expected outcome a task defines (#13): same task only
        expected = pl.col("expected")
        if isinstance(df.schema["expected"], pl.Struct):
            expected = expected.struct.json_encode()
        task = pl.coalesce(task, expected.cast(pl.String))
    tenant = pl.col("tenant_id").cast(pl.String) if "tenant_id" in df.columns else pl.lit(None)
    label = pl.concat_str(
        [
            pl.when(reward.is_not_null()).then(pl.format("reward {}", reward.round(2))),
            pl.when(handoff).then(pl.lit("hand-off")),
        ],
        separator=", ",
        ignore_nulls=True,
    )
    return df.select(
        outcome_key=pl.concat_str(
            pl.lit("state:"),
            state.fill_null("-"),
            pl.lit("/status:"),
            status.fill_null("-"),
            pl.lit("/reward:"),
            reward.fill_null(1.0).round(4).cast(pl.String),
            pl.lit("/handoff:"),
            handoff.cast(pl.String),
        ),
        task_key=task.cast(pl.String).fill_null(""),
        tenant_key=tenant.cast(pl.String).fill_null(""),
        outcome=pl.when(label == "").then(pl.lit("ok")).otherwise(label),
    )


def work_keys(work: pl.DataFrame) -> list[str]:
    """``<task>.<outcome>.<tenant>`` short hashes per row: equal only for the same work, and
    telling which part differs between two runs (``borderline.mixed_pairs``)."""
    return [
        ".".join(_sha([part], 8) for part in row)
        for row in work.select("task_key", "outcome_key", "tenant_key").iter_rows()
    ]


def signatures(df: pl.DataFrame, cfg: DedupConfig | None = None) -> pl.DataFrame:
    """Signatures (``SIGNATURE_SCHEMA``) of CASE/GOLDEN_SCHEMA rows, one per input row.

    Pure and per-row: the signature of a case does not depend on the other cases in ``df``, so
    shards can be processed anywhere and concatenated before ``cluster``.
    """
    cfg = cfg or DedupConfig()
    if df.height == 0:
        return pl.DataFrame(schema=SIGNATURE_SCHEMA)
    paths = _path_columns(df)
    text = df.select(normalise_text_expr("user_input", cfg.text_placeholders).alias("t"))
    traj = paths.get_column("trajectory").to_list()
    shapes = paths.get_column("argument_shapes").to_list()
    writes = paths.get_column("writes").to_list()
    reads = paths.get_column("reads").to_list()
    texts = text.get_column("t").to_list()
    work = _work_columns(df, cfg)
    works = work_keys(work)
    apart = set(cfg.separate_by)
    parts = {
        "write_actions": paths.get_column("write_shapes").to_list(),
        "systems": paths.get_column("systems").to_list(),
    }
    columns = [writes, reads if cfg.block_on_read_tools else [""] * df.height]
    columns += [values for name, values in parts.items() if name in apart]
    base_keys = [_sha(list(row), 16) for row in zip(*columns, strict=True)]
    block_keys = [_sha([w, b], 16) for w, b in zip(works, base_keys, strict=True)]
    path_keys = [_sha([t], 16) for t in traj]
    content = [_sha([t, s, x], 32) for t, s, x in zip(traj, shapes, texts, strict=True)]
    exact = [_sha([w, c], 32) for w, c in zip(works, content, strict=True)]
    out = pl.DataFrame(
        {
            "case_id": df.get_column("case_id").cast(pl.String),
            "work_key": works,
            "base_key": base_keys,
            "block_key": block_keys,
            "path_key": path_keys,
            "content_hash": content,
            "exact_hash": exact,
            "trajectory": traj,
            "argument_shapes": shapes,
            "text": texts,
            "n_steps": paths.get_column("n_steps"),
            "distinct_tools": paths.get_column("distinct_tools"),
            "value_score": _optional(df, "value_score", pl.Float64()),
            "recorded_at": _optional(df, "recorded_at", pl.Datetime("ms", "UTC")),
            "funnels": _optional(df, "funnels", pl.List(pl.String())),
            "outcome": work.get_column("outcome"),
        }
    )
    return out.cast(SIGNATURE_SCHEMA)  # type: ignore[arg-type]


def with_tenants(sigs: pl.DataFrame, tenants: pl.DataFrame) -> pl.DataFrame:
    """``sigs`` with the tenant part of their work key (and so their block key and exact hash)
    computed from ``tenants`` (case_id, tenant_id) instead.

    A grown set clusters this window's candidates (original tenant ids) with the previous
    version's cases, whose signatures come from their published rows (pseudonymised tenant
    ids): given the candidates' tenants as they will be published, both sides compare the
    same way. A case not in ``tenants`` keeps its signature."""
    mapped = sigs.join(tenants.select("case_id", "tenant_id"), on="case_id", how="left")
    new_work = [
        work if tenant is None else ".".join([*work.split(".")[:2], _sha([tenant], 8)])
        for work, tenant in mapped.select("work_key", "tenant_id").iter_rows()
    ]
    bases, contents = mapped.get_column("base_key"), mapped.get_column("content_hash")
    return mapped.drop("tenant_id").with_columns(
        pl.Series("work_key", new_work, dtype=pl.String),
        pl.Series(
            "block_key",
            [_sha([w, b], 16) for w, b in zip(new_work, bases, strict=True)],
            dtype=pl.String,
        ),
        pl.Series(
            "exact_hash",
            [_sha([w, c], 32) for w, c in zip(new_work, contents, strict=True)],
            dtype=pl.String,
        ),
    )


def coverage_keys(df: pl.DataFrame, cfg: DedupConfig | None = None) -> pl.DataFrame:
    """case_id, path_key, task_key (the task part of ``work_key``) and tools (the tool names of
    the path) of CASE/GOLDEN rows: what the coverage gap compares, without the argument shapes
    and request text a whole signature costs. ``path_key`` and ``task_key`` equal
    ``signatures``' (tests/filters/test_coverage.py)."""
    cfg = cfg or DedupConfig()
    if df.height == 0:
        return pl.DataFrame(
            schema={
                "case_id": pl.String,
                "path_key": pl.String,
                "task_key": pl.String,
                "tools": pl.List(pl.String),
            }
        )
    steps = (
        df.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_row"), "steps")
        .explode("steps")
        .filter(pl.col("steps").is_not_null())
        .unnest("steps")
        .filter(pl.col("kind").is_in(PATH_KINDS) | pl.col("kind").is_null())
    )
    write = pl.col("is_mutating").fill_null(False)
    token = pl.concat_str(
        pl.col("name"),
        pl.col("status").fill_null("ok"),
        pl.when(write).then(pl.lit("W")).otherwise(pl.lit("R")),
        separator=":",
    )
    per_row = steps.group_by("_row", maintain_order=True).agg(
        trajectory=token.str.join(" "), tools=pl.col("name").drop_nulls().unique().sort()
    )
    rows = pl.DataFrame({"_row": pl.int_range(df.height, dtype=pl.UInt32, eager=True)})
    paths = rows.join(per_row, on="_row", how="left").sort("_row")
    traj = paths.get_column("trajectory").fill_null("").to_list()
    work = _work_columns(df, cfg)
    return pl.DataFrame(
        {
            "case_id": df.get_column("case_id").cast(pl.String),
            "path_key": [_sha([t], 16) for t in traj],
            "task_key": [_sha([t], 8) for t in work.get_column("task_key").to_list()],
            "tools": paths.get_column("tools").fill_null([]),
        }
    )
