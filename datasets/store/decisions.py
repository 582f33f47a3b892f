"""The decisions table of a version: why every case the run read is in it or not.

``decisions.parquet`` (role ``decisions`` in the manifest, so its sha256 is listed, sealed and
signed with the rest) holds one row per case id the run read, plus the cases an incremental
run carried from its parent or let go. It holds ids, funnel names, numbers and reason codes
only, never a value of a record, so it may sit in the store beside the redacted cases:

=============  ==============================================================================
case_id        as published (a hash of the source identity: the id `cases.parquet` uses)
status         ``published``, or why not: ``no_funnel``, ``gate:<reason>``, ``dedup:near`` /
               ``dedup:exact`` / ``dedup:duplicate_id``, ``quota:<cap>``,
               ``redaction:<reason>``, ``review:rejected``, ``erasure:dropped``, and for a
               case an incremental run carried from its parent and let go: ``left:aged_out``,
               ``left:quota:<cap>``, ``left:review:rejected``
funnels        the select funnels the case is a member of (names from the config)
value_score    the funnels' score (null when in none)
cluster_id     its dedup cluster (null: no candidate, or dedup off)
replaced_by    for a case not published: the member of its cluster published in its place
held_from      ``regression`` for a published case the confirmation gate holds in dev until a
               person confirms it (the split it belongs in: the next version moves it there
               once confirmed)
=============  ==============================================================================

Reading needs pyarrow only (the reader install): ``read_decisions(store, ref)``, or
``GoldenSet.decisions()``; ``decision_of(table, case_id)`` gives one case's row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from golden_distill.datasets.store.layout import DECISIONS_NAME

DECISIONS_SCHEMA = pa.schema(
    [
        pa.field("case_id", pa.string(), nullable=False),
        pa.field("status", pa.string(), nullable=False),
        pa.field("funnels", pa.list_(pa.string())),
        pa.field("value_score", pa.float64()),
        pa.field("cluster_id", pa.string()),
        pa.field("replaced_by", pa.string()),
        pa.field("held_from", pa.string()),
    ]
)
PUBLISHED = "published"
#: A case the decisions said was published, left out by publishing (its subject was erased).
ERASED = "erasure:dropped"
#: Row group size: one case's row is found by reading a small group (sorted by case id).
ROW_GROUP_ROWS = 8192


def conform(table: pa.Table) -> pa.Table:
    """``table`` with exactly the DECISIONS_SCHEMA columns (missing ones null), sorted by
    case id."""
    columns = []
    for field in DECISIONS_SCHEMA:
        if field.name in table.column_names:
            columns.append(table.column(field.name).cast(field.type))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    out = pa.Table.from_arrays(columns, schema=DECISIONS_SCHEMA)
    return out.sort_by([("case_id", "ascending")]) if out.num_rows else out


def write_decisions(
    decisions: pa.Table | Path, published_ids: pa.Array, out_dir: Path
) -> dict[str, Any]:
    """Write ``decisions.parquet`` into ``out_dir`` and return its manifest entry. A row the
    pipeline marked ``published`` whose case publishing left out (an erased subject) says so:
    the table agrees with the version's cases."""
    # heavy only when publishing: the entry helper lives with the case files
    from golden_distill.datasets.store.case_files import file_entry

    table = decisions if isinstance(decisions, pa.Table) else pq.read_table(decisions)
    table = conform(table)
    if table.num_rows:
        published = pc.equal(table.column("status"), PUBLISHED)
        missing = pc.and_(published, pc.invert(pc.is_in(table.column("case_id"), published_ids)))
        if pc.any(missing).as_py():
            status = pc.if_else(missing, pa.scalar(ERASED), table.column("status"))
            table = table.set_column(table.schema.get_field_index("status"), "status", status)
    path = out_dir / DECISIONS_NAME
    pq.write_table(table, path, compression="zstd", row_group_size=ROW_GROUP_ROWS)
    return file_entry(path, role="decisions", rows=table.num_rows)


def read_decisions(
    store: Any, ref: str, public_keys: Any = None, *, verify: bool = True
) -> pa.Table | None:
    """The decisions table of ``ref`` (``NAME@VERSION`` or ``NAME@ALIAS``; ``store``: a
    ``StoreFS`` or a store URL), checked against the manifest like every file of a version;
    None for a version published without one."""
    golden = _open(store, ref, public_keys, verify)
    return golden.decisions()


def _open(store: Any, ref: str, public_keys: Any, verify: bool) -> Any:
    # the reader imports the store modules: imported here, not at module level
    from golden_distill.datasets.reader import GoldenSet
    from golden_distill.datasets.store.fs import StoreFS
    from golden_distill.datasets.store.history import resolve_pinned
    from golden_distill.datasets.store.layout import parse_ref
    from golden_distill.datasets.store.signing import pinned_keys

    fs = StoreFS(store) if isinstance(store, str) else store
    parsed = parse_ref(ref)
    keys = pinned_keys(public_keys or None)
    version = resolve_pinned(fs, parsed, keys)
    return GoldenSet(fs, parsed.set_name, version, verify=verify, public_keys=keys)


def decision_of(table: pa.Table | None, case_id: str) -> dict[str, Any] | None:
    """The row of ``case_id`` in a decisions table, as a dict (None: not read by that run)."""
    if table is None or not table.num_rows:
        return None
    hits = table.filter(pc.equal(table.column("case_id"), case_id))
    return hits.slice(0, 1).to_pylist()[0] if hits.num_rows else None
