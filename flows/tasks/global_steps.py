"""The global steps' library calls: quotas (filters), clustering (filters.dedup), gathering the
chosen rows from shard files and publishing (datasets.store). Files in, small frames between,
one table out to publish. What is read of earlier versions: flows/tasks/earlier_versions.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from golden_distill.datasets.front_and_back import front_and_back, helper_would_help
from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.datasets.sources.uris import display_uri
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.publish import publish_version
from golden_distill.datasets.store.signing import signing_key_from_env
from golden_distill.filters.case_source import read_cases
from golden_distill.filters.curation_config import SplitsConfig
from golden_distill.filters.dedup.borderline import mixed_pairs
from golden_distill.filters.dedup.cluster import cluster
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.report import largest_clusters
from golden_distill.filters.dedup.representatives import choose_representatives
from golden_distill.filters.review import ReviewDecisions, corrected_expected, log_path, parse_log
from golden_distill.filters.runner import (
    figures_from,
    needs_rescore,
    permissive_figures,
    rescore,
)
from golden_distill.filters.selection import Chosen
from golden_distill.filters.selection import choose as choose_cases
from golden_distill.filters.selection_stats import selection_stats
from golden_distill.filters.splits import assign_splits
from golden_distill.filters.trust import trust_expr
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.tasks.dedup_step import dedup_stats
from golden_distill.flows.tasks.gather_body import (
    GatherJob,
    forget_representatives,
    gather_part,
    save_representatives,
    to_golden_arrow,
    without_ids,
)
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.tasks.run_stats import merge_published_stats, published_stats
from golden_distill.flows.work_folder import WorkFolder


def work_of(locations: list[str], work: WorkFolder | None) -> WorkFolder:
    """``work``, or the folder holding ``locations`` (client options from the environment
    only): for callers that do not pass the run's work folder."""
    if work is not None:
        return work
    return WorkFolder(WorkFolder.parent(locations[0]) if locations else ".")


def load_decisions(results: list[ShardResult], work: WorkFolder | None = None) -> pl.DataFrame:
    """Every shard's per-case decisions (small columns only), as one frame."""
    work = work_of([r.decisions_path for r in results], work)
    frames = [work.read_frame(r.decisions_path) for r in results]
    return pl.concat(frames, how="diagonal_relaxed")


def compact_decisions(decisions: pl.DataFrame) -> pl.DataFrame:
    """``decisions`` with ``funnel_reasons`` (JSON text, the largest column) categorical: most
    records share one of a few texts ("tenant not opted out"), so a night's decisions cost
    ~40% less memory in the select step. It is text again where cases are published
    (``Selection.published_columns``)."""
    if "funnel_reasons" not in decisions.columns:
        return decisions
    return decisions.with_columns(pl.col("funnel_reasons").cast(pl.Categorical))


def batch_wide(
    decisions: pl.DataFrame,
    results: list[ShardResult],
    config: PipelineConfig,
    work: WorkFolder | None = None,
) -> pl.DataFrame:
    """When a funnel compares cases with a batch-wide figure (a percentile of the whole batch),
    compute it once over every shard's decisions and re-score the rows the shards kept for it
    (scored permissively per shard); otherwise the decisions as they are."""

    if not permissive_figures(config.funnels):
        return decisions
    figures = figures_from(decisions, config.funnels)
    ids = decisions.filter(needs_rescore(decisions)).get_column("case_id")
    work = work_of([r.candidates_path for r in results], work)
    with work.local_copies([r.candidates_path for r in results]) as files:
        rows = read_cases(files, config.funnels)
    rows = rows.filter(pl.col("case_id").is_in(ids.implode()))
    return rescore(decisions, rows, config.funnels, figures)


def load_signatures(
    results: list[ShardResult], kept: pl.Series, work: WorkFolder | None = None
) -> pl.DataFrame:
    work = work_of([r.signatures_path for r in results], work)
    frames = [work.read_frame(r.signatures_path) for r in results]
    return pl.concat(frames, how="vertical_relaxed").filter(pl.col("case_id").is_in(kept.implode()))


def review_log(resolved: ResolvedRun) -> bytes | None:
    """The set's review log (filters/review.py), None when nobody reviewed it yet."""

    store = StoreFS(resolved.store_url, resolved.config.publish.storage_options or None)
    try:
        return store.read_bytes(log_path(resolved.set_name))
    except FileNotFoundError:
        return None


def review_decisions(resolved: ResolvedRun) -> ReviewDecisions:
    return ReviewDecisions.from_entries(parse_log(review_log(resolved)))


def selection_counts(
    chosen: Chosen, config: PipelineConfig, counts: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The funnel, dedup and quota counts of a selection, for the report and the manifest
    (``counts``: the ``selection_stats`` of every row, when ``chosen`` decided only some)."""

    if counts is None:
        counts = selection_stats(chosen.decisions, config.funnels)
    dropped = counts.get("dropped", {})
    return {
        "funnels": counts.get("members", {}),
        "funnel_overlaps": {k.replace("&", "+"): v for k, v in counts.get("overlaps", {}).items()},
        "cut_by_quotas": {
            k.removeprefix("quota:"): v for k, v in dropped.items() if k.startswith("quota:")
        },
        "not_selected": {
            k: v
            for k, v in dropped.items()
            if not k.startswith(("quota:", "dedup:", "redaction:", "review:"))
        },
        "review_rejected": {
            k.removeprefix("review:"): v for k, v in dropped.items() if k.startswith("review:")
        },
        "quota_cuts_per_funnel": counts.get("quota_cuts_per_funnel", {}),
        "removed_by_dedup": sum(v for k, v in dropped.items() if k.startswith("dedup:")),
        "after_quotas": chosen.representatives.height,
        "shares": chosen.shares,
    }


def deduplicate(
    signatures: pl.DataFrame, config: PipelineConfig
) -> tuple[pl.DataFrame | None, dict[str, Any]]:
    """The cluster table of the kept cases (None when dedup is off) and its counts."""

    cfg = config.dedup
    if not cfg.enabled or signatures.height == 0:
        return None, {"removed_by_dedup": 0, "cluster_sizes": {}}
    clustering = cluster(signatures, cfg)
    largest = largest_clusters(clustering.table, signatures, cfg.report_largest)
    stats = dedup_stats(clustering, largest, cfg, mixed_pairs(signatures))
    return clustering.table, stats


def representatives(
    clusters: pl.DataFrame | None, kept: pl.Series, excluded: set[str], config: PipelineConfig
) -> pl.DataFrame:
    """The cases to publish (case_id, cluster_id, cluster_size) of an incremental run: the best
    members of each new cluster that are not ``excluded``; every kept case without dedup."""

    if clusters is None:
        frame = pl.DataFrame({"case_id": kept}).filter(~pl.col("case_id").is_in(list(excluded)))
        return frame.with_columns(
            pl.lit(None, dtype=pl.String).alias("cluster_id"),
            pl.lit(None, dtype=pl.Int32).alias("cluster_size"),
        )
    chosen = choose_representatives(
        clusters, excluded_case_ids=excluded, keep_per_cluster=config.dedup.keep_per_cluster
    )
    return chosen.select("case_id", "cluster_id", "cluster_size")


def funnel_counts(
    decisions: pl.DataFrame, config: PipelineConfig
) -> tuple[pl.Series, dict[str, Any]]:
    """Incremental runs: every new candidate (the quotas run later, over the grown set:
    ``filters/grown_quotas.py``), and the funnel stage's counts."""

    quotas = config.funnels.quotas.model_copy(update={"enabled": False})
    funnels = config.funnels.model_copy(update={"quotas": quotas})
    chosen = choose_cases(decisions, None, funnels, DedupConfig(enabled=False))
    stats = selection_counts(chosen, config)
    return chosen.representatives.get_column("case_id"), stats


def write_publish_parts(
    redacted_paths: list[str],
    reps: pl.DataFrame,
    out_dir: Path,
    carried: Iterable[pl.DataFrame] = (),
    splits: SplitsConfig | None = None,
    marks: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
    work: WorkFolder | None = None,
    two: bool | None = None,
    gate: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
) -> tuple[list[Path], dict[str, Any], set[str]]:
    """Write the representatives' redacted rows, with their cluster, as Parquet parts (one per
    redaction task, so memory holds one shard at a time), after the rows ``carried`` over from
    the previous version (already redacted, batch by batch), and count what they hold.

    The parts go to ``publish_version`` as files, which it streams (bucketed by case id).
    A case id already written (the same record in two input files) is not written again.
    ``redacted_paths`` are read through ``work`` (default: local files). ``two``: gather on two
    cores (``gather_body``); None = when the set is large (``gather_on_two_cores``).
    ``gate``: the confirmation gate over a carried batch (its split from the split it belongs
    in and this run's confirmations: ``filters/splits.gate_unconfirmed``).
    """
    work = work_of(redacted_paths, work)
    out_dir.mkdir(parents=True, exist_ok=True)
    reps = reps.unique("case_id", keep="first", maintain_order=True)
    written: set[str] = set()
    parts: list[Path] = []
    counted: list[dict[str, Any]] = []
    for frame in carried:
        frame = _carried_with_curation(frame, splits, marks, gate)
        written.update(frame.get_column("case_id").to_list())
        counted.append(published_stats(frame))
        part = out_dir / f"carried-{len(parts):05d}.parquet"
        pq.write_table(to_golden_arrow(frame), part)
        parts.append(part)
    if two is None:
        two = gather_on_two_cores(reps.height, len(redacted_paths))
    job = GatherJob(save_representatives(reps, out_dir), str(out_dir), work)
    del reps
    items = list(enumerate(redacted_paths))
    gathered = (
        front_and_back(items, gather_part, job)
        if two
        else ((index, gather_part(item, job)) for index, item in enumerate(items))
    )
    try:
        for _, got in gathered:  # in file order, whichever process wrote the part
            repeated = set() if got is None else written.intersection(got.case_ids)
            if got is not None and repeated:  # published from an earlier file
                got = without_ids(got, repeated)
            if got is None:
                continue
            written.update(got.case_ids)
            counted.append(got.stats)
            parts.append(got.path)
    finally:
        forget_representatives()
    return parts, merge_published_stats(counted), written


#: Representatives from which publishing gathers on two cores (below, starting the helper
#: costs more than it saves); the redaction workers are gone by then.
TWO_CORES_FROM_ROWS = 40_000


def gather_on_two_cores(rows: int, files: int) -> bool:
    return rows >= TWO_CORES_FROM_ROWS and files >= 4 and helper_would_help()


def _carried_with_curation(
    frame: pl.DataFrame,
    splits: SplitsConfig | None,
    marks: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
    gate: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """A carried (previously published) batch in GOLDEN_SCHEMA: a version published before
    splits and trust existed gets them now (its split by cluster, like a new case's), and the
    review decisions made since (``marks``: confirmations, corrected expectations) apply to it
    as to a new case."""
    for name in ("split", "trust"):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(name))
    trust = pl.coalesce(pl.col("trust"), trust_expr(frame))
    if marks is not None:
        frame = marks(frame)
        corrected = corrected_expected(frame)
        if corrected is not None:
            frame = frame.with_columns(corrected)
        trust = pl.when(pl.col("_confirmed")).then(pl.lit("human")).otherwise(trust)
    frame = frame.with_columns(trust=trust)
    if splits is not None and frame.get_column("split").null_count():
        assigned = assign_splits(frame.select("case_id", "cluster_id"), splits)
        frame = frame.with_columns(split=pl.coalesce(pl.col("split"), assigned))
    if gate is not None:  # a confirmed case moves to the split it belongs in, both ways
        frame = gate(frame)
    return frame.select(GOLDEN_SCHEMA.names)


def publish(
    resolved: ResolvedRun,
    parts: list[Path],
    selection: Any,
    stats: dict[str, Any],
    render: Callable[[dict[str, Any]], str],
    key_id: str | None,
    scratch: Path,
    decisions: Path | None = None,
) -> tuple[str, str, str | None]:
    """Publish the version; its id, the report's location, and the version it duplicates
    (same content hash: nothing new was published), if any. ``scratch``: a local folder for
    the cluster table on its way to the store; ``decisions``: the decisions table's file. The
    report is rendered once the version id is claimed, so it names its version."""

    config = resolved.config
    clusters = selection.published_clusters(scratch)
    result = publish_version(
        resolved.store_url,
        resolved.set_name,
        cases=parts,
        clusters=clusters,
        decisions=decisions,
        report_html=lambda version: render({**stats, "version": version}),
        manifest_fields={
            "config": config.model_dump(mode="json"),
            "code_version": stats.get("pipeline_version"),
            "key_id": key_id,
            "detector_versions": _detector_versions(config),
            "lineage": {
                "sources": [display_uri(s) for s in resolved.sources],
                "since": stats.get("since"),
                "until": stats.get("until"),  # the watermark of the next scheduled run
                "parent_version": selection.parent_version,
                # a run with another pseudonym key than the set's starts a new lineage
                **({"new_key": True} if resolved.params.new_key else {}),
                "records_read": stats.get("records_read", 0),
                "quarantined": stats.get("quarantined", {}),
            },
            # the case table is in the report and the cases themselves, not the manifest
            "stats": {
                k: v
                for k, v in stats.items()
                if k not in ("change", "case_table", "field_inventory")
            },
            "redaction": {
                "entities": stats.get("redaction", {}),
                "fields": stats.get("field_inventory", {}),
                "unsafe_allow_weakened": config.redaction.unsafe_allow_weakened,
            },
            "dedup": stats.get("dedup", {}),
        },
        # a run with a window always publishes: its version records the new watermark
        force=resolved.params.force or resolved.until is not None,
        storage_options=config.publish.storage_options or None,
        config=config.publish,
        signing_key=signing_key_from_env(secret_block=config.publish.signing_key_secret_block),
        prechecked=selection.prechecked(),
        **_head_check(resolved),
    )
    return result.version, report_location(resolved, result.url), result.deduplicated_of


def _head_check(resolved: ResolvedRun) -> dict[str, Any]:
    """``expected_parent`` for the publish: the head the run's lock was taken on (compare-and-
    swap, datasets/store/publish.py); nothing when the run did not record one."""
    if resolved.expected_head is None:
        return {}
    return {"expected_parent": resolved.expected_head[0]}


def report_location(resolved: ResolvedRun, version_url: str) -> str:
    if "://" in version_url and not version_url.startswith("file://"):
        return f"{version_url.rstrip('/')}/report.html"
    local = version_url.removeprefix("file://")
    return str(Path(local) / "report.html")


def _detector_versions(config: PipelineConfig) -> dict[str, Any]:
    """Imported here, at publish time: it loads Presidio (and spaCy), about 150 MB the flow's
    process would otherwise hold through the shard and redact phases, next to the workers."""
    from golden_distill.redaction.versions import detector_versions

    return detector_versions(config.redaction)
