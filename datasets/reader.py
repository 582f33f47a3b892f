"""Reading a published golden set, for replay jobs.

```python
from golden_distill.datasets.reader import open_set

golden = open_set("s3://bucket/golden", "nightly@stable")   # or "nightly@2026.11.29.1"
for case in golden.cases(funnel="recovery"):
    recorded = case.lookup("erp_get_order", 2)               # 2nd call of that tool
    recorded = case.lookup_args("erp_get_order", {"orderId": "ORD-9"})
    recorded.response, recorded.status, recorded.error
    case.order_checksum                                      # compare with the replay's calls
```

Opening checks the manifest first (``store/integrity.py``): its signature when a public key is
pinned (``public_key=`` or ``GOLDEN_PUBLIC_KEY``; it replaces the store's ``trusted_keys/``) or the
store holds ``trusted_keys/``, that an alias points into the signed history (``store/history.py``),
plain file names, no unlisted file, a cases entry, the content hash and the counts. Every file
is checked against the manifest's size and sha256 as it is read
(``verify=False`` skips the file hashes, for a fast random fetch of one case from a large remote
set), and a cases file must hold the rows its entry says; ``len()`` counts the files' rows.
Lookups use the same canonical JSON and volatile keys as ingest (taken from the config recorded
in the manifest), and the same index the publish-time replay check ran, so a lookup that
passed there works here.
The format is plain Parquet and JSON (docs/golden-set-format.md); this module is a convenience.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from golden_distill.datasets.case import Case, Step
from golden_distill.datasets.schema import GOLDEN_SCHEMA, conform_table
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.history import HistoryError, resolve_pinned
from golden_distill.datasets.store.integrity import TamperError, load_version
from golden_distill.datasets.store.layout import (
    CLUSTERS_NAME,
    DECISIONS_NAME,
    REPORT_NAME,
    SetLayout,
    parse_ref,
)
from golden_distill.datasets.store.manifest import volatile_keys_of
from golden_distill.datasets.store.order import OrderDiff, compare_order, observed_order
from golden_distill.datasets.store.recorded_calls import (
    RecordedCall,
    ReplayIndex,
    ReplayMiss,
    make_call,
)
from golden_distill.datasets.store.signing import (
    PublicKeys,
    SignatureError,
    pinned_keys,
    public_keys_from,
)
from golden_distill.datasets.store.verify import (
    ChecksumError,
    check_rows,
    describe_file,
    read_verified_bytes,
)
from golden_distill.datasets.store.versions import VersionNotFound

__all__ = [
    "ChecksumError",
    "GoldenSet",
    "HistoryError",
    "OrderDiff",
    "RecordedCall",
    "ReplayCase",
    "ReplayMiss",
    "SignatureError",
    "TamperError",
    "VersionNotFound",
    "open_set",
]


class ReplayCase:
    """One recorded run, with the lookups a replay harness needs."""

    def __init__(self, case: Case, volatile_keys: list[str] | None = None) -> None:
        self.case = case
        self.volatile_keys = volatile_keys
        self.steps: list[Step] = sorted(case.steps, key=lambda s: s.seq)
        self._index = ReplayIndex(
            make_call(
                {
                    "seq": s.seq,
                    "kind": s.kind,
                    "name": s.name,
                    "occurrence": s.occurrence,
                    "arguments": s.arguments,
                    "canonical_args_sha256": s.canonical_args_sha256,
                    "response": s.response,
                    "status": s.status,
                    "error": s.error,
                },
                volatile_keys,
            )
            for s in self.steps
        )

    @property
    def case_id(self) -> str:
        return self.case.case_id

    def lookup(self, tool: str, occurrence: int) -> RecordedCall:
        """The ``occurrence``-th (1-based) call of ``tool``: response, status, error."""
        return self._index.lookup(tool, occurrence)

    def lookup_args(self, tool: str, arguments: Any, nth: int = 1) -> RecordedCall:
        """The (``nth``) call of ``tool`` with these arguments (dict or JSON text)."""
        return self._index.lookup_args(tool, arguments, nth, self.volatile_keys)

    @property
    def order(self) -> list[tuple[str, str]]:
        """The recorded (tool, canonical-arguments hash) sequence, in step order."""
        return self._index.order

    @property
    def order_checksum(self) -> str:
        return self._index.order_checksum

    def compare_order(self, observed: Iterable[tuple[str, Any]]) -> OrderDiff:
        """Observed ``(tool, arguments)`` calls vs the recording: inserted, removed, reordered."""
        return compare_order(self.order, observed_order(observed, self.volatile_keys))

    def __repr__(self) -> str:
        return f"ReplayCase({self.case_id!r}, steps={len(self.steps)})"


class GoldenSet:
    """One published version: its manifest and its cases."""

    def __init__(
        self,
        store: StoreFS,
        set_name: str,
        version: str,
        *,
        verify: bool,
        public_keys: PublicKeys | None = None,
    ) -> None:
        self.store = store
        self.name = set_name
        self.version = version
        self.verify = verify
        self.layout = SetLayout(set_name)
        checked = load_version(store, set_name, version, public_keys=public_keys_from(public_keys))
        self.manifest: dict[str, Any] = checked.manifest
        self.signed_by = checked.signed_by  # the verified signer's key id, if checked
        #: the version's place in the set's signed history (None: published before sequences);
        #: a consumer can remember the highest it saw to notice newer versions deleted later
        self.sequence: int | None = self.manifest.get("sequence")
        self.volatile_keys = volatile_keys_of(self.manifest)
        self._parquet: dict[str, pq.ParquetFile] = {}
        self._bounds: dict[str, list[tuple[str, str]] | None] = {}
        self._rows: int | None = None

    def __repr__(self) -> str:
        return f"GoldenSet({self.name}@{self.version})"

    def __len__(self) -> int:
        """Rows in the case files (each file checked), not the manifest's claim."""
        if self._rows is None:
            self._rows = sum(self._open(e, keep=False).metadata.num_rows for e in self.case_files)
        return self._rows

    @property
    def case_files(self) -> list[dict[str, Any]]:
        return [f for f in self.manifest["files"] if f["role"] == "cases"]

    def _entry(self, name: str) -> dict[str, Any] | None:
        return next((f for f in self.manifest["files"] if f["name"] == name), None)

    def _rel(self, name: str) -> str:
        return self.layout.version_file(self.version, name)

    def _open(self, entry: dict[str, Any], *, keep: bool = True) -> pq.ParquetFile:
        """The file, checked against the manifest first when verifying. ``keep`` caches it for
        later random fetches (``get``); a full scan passes False so memory stays one file."""
        name = entry["name"]
        if name in self._parquet:
            return self._parquet[name]
        if self.verify:
            data = read_verified_bytes(self.store, self._rel(name), entry)
            parquet = pq.ParquetFile(pa.BufferReader(data))
        else:
            parquet = pq.ParquetFile(self.store.open_read(self._rel(name)))
        check_rows(parquet.metadata.num_rows, entry, describe_file(self.store, self._rel(name)))
        if keep:
            self._parquet[name] = parquet
        return parquet

    def read_table(self, funnel: str | None = None, split: str | None = None) -> pa.Table:
        """All cases (optionally of one funnel and/or one split: dev, regression, holdout) as
        one Arrow table, every file verified."""
        tables = [
            _in_split(
                conform_table(_in_funnel(self._open(e, keep=False).read(), funnel), GOLDEN_SCHEMA),
                split,
            )
            for e in self.case_files
        ]
        return pa.concat_tables(tables) if tables else GOLDEN_SCHEMA.empty_table()

    def cases(self, funnel: str | None = None, split: str | None = None) -> Iterator[ReplayCase]:
        """Cases in case_id order, optionally only those in ``funnel`` and/or ``split``."""
        for entry in self.case_files:
            parquet = self._open(entry, keep=False)
            for group in range(parquet.num_row_groups):
                # a 1.0 file has no `expected`: Case.from_row reads absent fields as null
                table = _in_split(_in_funnel(parquet.read_row_group(group), funnel), split)
                for row in table.to_pylist():
                    yield ReplayCase(Case.from_row(row), self.volatile_keys)

    def __iter__(self) -> Iterator[ReplayCase]:
        return self.cases()

    def get(self, case_id: str) -> ReplayCase:
        """One case by id, reading only the row group that can hold it (binary search on the
        row groups' case_id statistics: files and groups are sorted by case_id)."""
        for entry in self.case_files:
            low, high = entry.get("min_case_id"), entry.get("max_case_id")
            if low is None or not low <= case_id <= high:
                continue
            parquet = self._open(entry)
            for group in self._candidate_groups(entry["name"], parquet, case_id):
                ids = parquet.read_row_group(group, columns=["case_id"]).column(0)
                hits = pc.indices_nonzero(pc.equal(ids, case_id))
                if len(hits):
                    row = parquet.read_row_group(group).slice(hits[0].as_py(), 1)
                    return ReplayCase(Case.from_row(row.to_pylist()[0]), self.volatile_keys)
        raise KeyError(f"{self.name}@{self.version}: no case {case_id}")

    def _candidate_groups(self, name: str, parquet: pq.ParquetFile, case_id: str) -> list[int]:
        if name not in self._bounds:
            column = parquet.schema_arrow.get_field_index("case_id")
            bounds = []
            for group in range(parquet.num_row_groups):
                stats = parquet.metadata.row_group(group).column(column).statistics
                if stats is None or not stats.has_min_max:
                    bounds = None
                    break
                bounds.append((stats.min, stats.max))
            self._bounds[name] = bounds
        bounds = self._bounds[name]
        if bounds is None:  # no statistics: look everywhere
            return list(range(parquet.num_row_groups))
        index = bisect.bisect_left([high for _, high in bounds], case_id)
        return [index] if index < len(bounds) and bounds[index][0] <= case_id else []

    def clusters(self) -> pa.Table | None:
        entry = self._entry(CLUSTERS_NAME)
        if entry is None:
            return None
        return pq.read_table(pa.BufferReader(self._bytes(entry)))

    @property
    def has_decisions(self) -> bool:
        """Whether the version carries a decisions table (versions published before it did
        not)."""
        return self._entry(DECISIONS_NAME) is not None

    def decisions(self) -> pa.Table | None:
        """Why every case the run read is in this version or not (``decisions.parquet``,
        datasets/store/decisions.py; checked like every file); None when the version has none."""
        entry = self._entry(DECISIONS_NAME)
        if entry is None:
            return None
        parquet = pq.ParquetFile(pa.BufferReader(self._bytes(entry)))
        check_rows(
            parquet.metadata.num_rows, entry, describe_file(self.store, self._rel(entry["name"]))
        )
        return parquet.read()

    def report_html(self) -> bytes | None:
        entry = self._entry(REPORT_NAME)
        return None if entry is None else self._bytes(entry)

    def _bytes(self, entry: dict[str, Any]) -> bytes:
        if self.verify:
            return read_verified_bytes(self.store, self._rel(entry["name"]), entry)
        return self.store.read_bytes(self._rel(entry["name"]))


def _in_funnel(table: pa.Table, funnel: str | None) -> pa.Table:
    if funnel is None:
        return table
    funnels = table.column("funnels").combine_chunks()
    hits = pc.equal(pc.list_flatten(funnels), funnel)
    parents = pc.filter(pc.list_parent_indices(funnels), hits)
    return table.take(pc.unique(parents))


def _in_split(table: pa.Table, split: str | None) -> pa.Table:
    """Rows of one split; a version published before splits existed has none to match."""
    if split is None:
        return table
    if "split" not in table.column_names:
        return table.slice(0, 0)
    return table.filter(pc.equal(table.column("split"), split))


def open_set(
    store: str,
    ref: str,
    *,
    storage_options: dict[str, Any] | None = None,
    verify: bool = True,
    public_key: PublicKeys | None = None,
) -> GoldenSet:
    """Open ``name@version`` or ``name@alias`` (``name`` alone: ``name@latest``).

    ``public_key`` (a PEM file path, PEM bytes, a key, or several), else ``GOLDEN_PUBLIC_KEY``
    (PEM text or a path): the version must be signed by one of them, whatever the store's
    ``trusted_keys/`` hold, and an alias must point into the signed history (``HistoryError``
    on a rollback of ``latest`` or a fork; an exact version id is taken as asked). Neither
    given: the store's ``trusted_keys/`` are required when it has any.
    Raises ``TamperError``/``SignatureError`` (naming the version and the problem) on damage."""
    fs = StoreFS(store, storage_options)
    parsed = parse_ref(ref)
    keys = pinned_keys(public_key)
    version = resolve_pinned(fs, parsed, keys)
    return GoldenSet(fs, parsed.set_name, version, verify=verify, public_keys=keys)
