"""The previous version of the set, as an incremental run needs it: small columns only.

Reads the `latest` version file by file (batches, never the whole set at once): per case its
id, cluster, size and record time, and its dedup signature (computed from the published,
redacted row: pure and per row, see filters.dedup.signature), plus the published cluster table.
Publishing later streams the carried rows again from the same files (``carried_rows``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa

from golden_distill.datasets.reader import GoldenSet, VersionNotFound, open_set
from golden_distill.datasets.schema import GOLDEN_SCHEMA
from golden_distill.datasets.store.recorded_calls import steps_digests
from golden_distill.filters.dedup.signature import signatures
from golden_distill.filters.inputs import tool_sequence_signature
from golden_distill.flows.caching import shard_config_sha256
from golden_distill.flows.params import ResolvedRun

#: Rows read from the parent at a time (memory: one batch of whole cases).
BATCH_ROWS = 4096


@dataclass
class Parent:
    version: str
    cases: pl.DataFrame  # PARENT_COLUMNS + signature (the quotas' tool-sequence hash)
    signatures: pl.DataFrame | None  # SIGNATURE_SCHEMA of its cases (None: dedup off)
    clusters: pl.DataFrame | None  # its published cluster table
    #: steps digests of its cases (datasets/store/recorded_calls.py): it passed the replay
    #: check, so a case carried with the same steps need not be checked again at publish
    step_digests: pl.DataFrame | None = None


def open_version(
    resolved: ResolvedRun, ref: str = "latest", *, verify: bool = True
) -> GoldenSet | None:
    """Version or alias ``ref`` of the run's set (verified unless ``verify`` is false), or None
    when the set (or the alias) does not exist yet."""
    try:
        return open_set(
            resolved.store_url,
            f"{resolved.set_name}@{ref}",
            storage_options=resolved.config.publish.storage_options or None,
            verify=verify,
        )
    except (VersionNotFound, FileNotFoundError):
        return None


def open_parent(resolved: ResolvedRun) -> GoldenSet | None:
    """The set's latest version, or None for a new set."""
    return open_version(resolved)


def incremental_parent(resolved: ResolvedRun) -> GoldenSet | None:
    """The version this run grows, or None when it builds from its sources alone: no window
    (a manual run over everything), ``--rebuild``, `selection.incremental: false`, no previous
    version, or a previous version made with other ingest/funnel/redaction/dedup settings."""
    config = resolved.config
    if resolved.params.rebuild or resolved.params.new_key:  # a new key: a new lineage
        return None
    if not config.selection.incremental or resolved.until is None:
        return None
    parent = open_parent(resolved)
    if parent is None:
        return None
    stats = parent.manifest.get("stats") or {}
    if stats.get("shard_config_sha256") != shard_config_sha256(config):
        return None
    return parent


#: What the selection keeps of each previous case: its cluster, and what the quotas read.
PARENT_COLUMNS = [
    "case_id", "cluster_id", "cluster_size", "recorded_at", "tenant_id", "value_score", "funnels"
]  # fmt: skip


#: What ``load_parent`` reads of each previous case: PARENT_COLUMNS, and what its dedup signature
#: and steps digest read (filters/dedup/signature.py); never its context, source or agent.
LOADED_COLUMNS = (
    *PARENT_COLUMNS, "steps", "user_input", "outcome", "intent", "trace_id", "expected"
)  # fmt: skip


def _batches(parent: GoldenSet, columns: Iterable[str] | None = None) -> Iterator[pa.RecordBatch]:
    """The version's cases batch by batch; ``columns``: only those (the ones a file has)."""
    for entry in parent.case_files:
        file = parent._open(entry, keep=False)
        wanted = None
        if columns is not None:
            wanted = [c for c in columns if c in file.schema_arrow.names]
        yield from file.iter_batches(BATCH_ROWS, columns=wanted)


def _small(frame: pl.DataFrame) -> pl.DataFrame:
    in_order = pl.col("steps").list.eval(pl.element().sort_by(pl.element().struct.field("seq")))
    return frame.select(PARENT_COLUMNS, signature=tool_sequence_signature(in_order))


def load_parent(parent: GoldenSet, resolved: ResolvedRun) -> Parent:
    frames: list[pl.DataFrame] = []
    sigs: list[pl.DataFrame] = []
    digests: list[pl.DataFrame] = []
    dedup = resolved.config.dedup
    for batch in _batches(parent, LOADED_COLUMNS):
        frame = pl.from_arrow(batch)
        assert isinstance(frame, pl.DataFrame)
        frames.append(_small(frame))
        digests.append(steps_digests(frame))
        if dedup.enabled:
            sigs.append(signatures(frame, dedup))
    clusters = parent.clusters()
    cluster_frame = pl.from_arrow(clusters) if clusters is not None else None
    assert cluster_frame is None or isinstance(cluster_frame, pl.DataFrame)
    return Parent(
        version=parent.version,
        cases=pl.concat(frames) if frames else _small(pl.from_arrow(GOLDEN_SCHEMA.empty_table())),  # type: ignore[arg-type]
        signatures=pl.concat(sigs) if sigs else None,
        clusters=cluster_frame,
        step_digests=pl.concat(digests) if digests else None,
    )


def carried_rows(resolved: ResolvedRun, version: str, carried: pl.DataFrame) -> Iterator[Any]:
    """The carried cases' published rows, batch by batch, with their grown cluster sizes."""
    parent = open_version(resolved, version)
    if parent is None:
        return
    sizes = carried.select(
        "case_id", pl.col("cluster_id").alias("_cl"), pl.col("cluster_size").alias("_size")
    )
    ids = sizes.get_column("case_id").implode()
    for batch in _batches(parent):
        frame = pl.from_arrow(batch)
        assert isinstance(frame, pl.DataFrame)
        frame = frame.filter(pl.col("case_id").is_in(ids))
        if frame.height:
            yield (
                frame.join(sizes, on="case_id", how="left")
                .with_columns(
                    pl.col("_cl").alias("cluster_id"),
                    pl.col("_size").cast(pl.Int32).alias("cluster_size"),
                )
                .drop("_cl", "_size")
            )
