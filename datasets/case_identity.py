"""One case id, one record: two different records met under one case id stop the run.

Every later step joins on ``case_id`` (funnels, dedup, quotas, redaction, publishing), so two
different runs that share an id would be merged silently: one of them lost, or parts of both
mixed. Adapters derive ids that are unique across partitions (``sources/identity.py``), but a
producer's own ids (``recordId``, trace ids) can still clash. Shards are read in parallel, so
the check runs where every shard's ids meet (the global selection step), over a small
*identity frame* per shard:

    case_id, content_digest (the row without its id and source location), uri, position

The same record read twice (a file copied into two partitions, a source listed twice) has one
digest: that is not an error (dedup drops the copy, status ``dedup:duplicate_id``). Two digests
under one id are: ``CaseIdCollision`` names the id and both places (file and line or row).

The digest is polars' row hash, stable within one polars version; shard results are cached
under a key that includes ``DIGEST_VERSION``, so every digest a run compares was made by the
same code. Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata

import polars as pl
import pyarrow as pa

from golden_distill.datasets.sources.uris import display_uri

#: What the digests depend on besides the rows: part of a shard's cache key.
DIGEST_VERSION = f"rowhash-1/polars-{metadata.version('polars')}"
_SEED = 20261204
#: Columns of an identity frame.
IDENTITY_COLUMNS = ("case_id", "content_digest", "uri", "position")


class CaseIdCollision(ValueError):
    """Two different records carry one case id; the message names both places."""


def identity_frame(table: pa.Table) -> pl.DataFrame:
    """The identity frame of a table of canonical cases (``IDENTITY_COLUMNS``, in row order)."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    content = frame.drop("case_id", "source")
    digest = (
        content.hash_rows(seed=_SEED)
        if content.width
        else pl.Series("content_digest", [0] * frame.height, pl.UInt64)
    )
    source = frame.get_column("source")
    return pl.DataFrame(
        {
            "case_id": frame.get_column("case_id"),
            "content_digest": digest,
            "uri": source.struct.field("uri"),
            "position": source.struct.field("position").cast(pl.Int64),
        }
    )


def conflicting_ids(digests: Sequence[pl.DataFrame]) -> pl.Series:
    """The case ids met with more than one content digest, over every frame of ``digests``
    (each with ``case_id`` and ``content_digest``), sorted."""
    frames = [d.select("case_id", "content_digest") for d in digests if d.height]
    if not frames:
        return pl.Series("case_id", [], pl.String)
    every = pl.concat(frames, how="vertical_relaxed")
    twice = every.filter(pl.col("case_id").is_duplicated())
    if not twice.height:
        return pl.Series("case_id", [], pl.String)
    clashing = twice.group_by("case_id").agg(pl.col("content_digest").n_unique().alias("n"))
    return clashing.filter(pl.col("n") > 1).get_column("case_id").sort()


def place(uri: str | None, position: int | None) -> str:
    """``file line/row N`` for a message (uris are display uris already)."""
    where = display_uri(uri) if uri else "<unknown source>"
    return where if position is None else f"{where} at line/row {position}"


def collision_error(rows: pl.DataFrame, n_ids: int) -> CaseIdCollision:
    """The error for ``n_ids`` clashing ids; ``rows`` holds identity rows of the first one or
    more of them (``case_id``, ``content_digest``, ``uri``, ``position``), in reading order."""
    first = rows.get_column("case_id")[0]
    of_first = rows.filter(pl.col("case_id") == first)
    one = of_first.row(0, named=True)
    other = of_first.filter(pl.col("content_digest") != one["content_digest"]).row(0, named=True)
    more = f" (and {n_ids - 1:,} more case id(s) like it)" if n_ids > 1 else ""
    return CaseIdCollision(
        f"case id {first} names two different records: {place(one['uri'], one['position'])} "
        f"and {place(other['uri'], other['position'])}{more}. Every record needs its own id "
        "(recordId, trace id); the same record read twice is fine, two different ones are not"
    )
