"""The erasure log and the check every publish makes against it (see ``erasure.py``).

``<set>/_erasure/log.jsonl`` holds one JSON line per erasure: keyed hashes of the subjects, a
sha256 of each needle (the pseudonym or placeholder redaction made of the subject), the raw
digests of the erased values under the erasure key (``erasure_key.py``: what survives a
pseudonym-key rotation; checked by every run before redaction, ``erased_raw_case_ids``), and
what was removed. ``drop_erased`` leaves out of a new version every case holding a logged
needle, so a subject erased once never comes back into the set. No redaction import here:
publishing stays light.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout

#: Tokens a needle can be inside free text: placeholders, and runs of id characters; the second
#: pattern also keeps inner dots, '@' and '+' (a key pseudonym keeps an e-mail-shaped id's form).
_TOKEN = re.compile(r"<[A-Z][A-Z0-9_]*_[0-9a-f]{8}>|[A-Za-z0-9#][A-Za-z0-9#_\-]*")
_DOTTED = re.compile(r"[A-Za-z0-9#][A-Za-z0-9#_.@+\-]*[A-Za-z0-9_]")


def needle_digest(needle: str) -> str:
    return hashlib.sha256(f"golden-erasure-needle\x1f{needle}".encode()).hexdigest()


def all_strings(value: Any) -> Iterable[str]:
    """Every string in a value, and inside JSON text (arguments, responses) every JSON string."""
    if isinstance(value, str):
        yield value
        if value[:1] in ("{", "[") and len(value) > 1:
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                return
            yield from all_strings(parsed)
    elif isinstance(value, dict):
        for item in value.values():
            yield from all_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from all_strings(item)


def row_tokens(row: dict[str, Any]) -> set[str]:
    """Every string of a case (whole values and the id-like tokens inside them)."""
    tokens: set[str] = set()
    for text in all_strings(row):
        tokens.add(text)
        tokens.update(_TOKEN.findall(text))
        tokens.update(_DOTTED.findall(text))
    return tokens


def _rows(table: pa.Table) -> Iterable[dict[str, Any]]:
    """Rows a batch at a time, so a large version is never one Python list."""
    for batch in table.to_batches(max_chunksize=1024):
        yield from batch.to_pylist()


def matching_case_ids(table: pa.Table, needles: set[str]) -> list[str]:
    """Case ids of the rows holding any needle (plain needles: the erase command)."""
    return [r["case_id"] for r in _rows(table) if not needles.isdisjoint(row_tokens(r))]


def erased_case_ids(table: pa.Table, digests: set[str]) -> list[str]:
    """Case ids of the rows holding a needle known only by its digest (the erasure log)."""
    return _case_ids_with_digest(table, digests, needle_digest, row_tokens)


def _case_ids_with_digest(
    table: pa.Table,
    digests: set[str],
    digest: Callable[[str], str],
    tokens_of: Callable[[dict[str, Any]], set[str]],
) -> list[str]:
    """Case ids of the rows with a token whose ``digest`` is in ``digests`` (each distinct
    token digested once)."""
    cache: dict[str, bool] = {}
    hits = []
    for row in _rows(table):
        for token in tokens_of(row):
            found = cache.get(token)
            if found is None:
                found = cache[token] = digest(token) in digests
            if found:
                hits.append(row["case_id"])
                break
    return hits


#: Word n-grams of free text tested against raw digests (a name of up to four words).
MAX_WORDS = 4


def raw_tokens(row: dict[str, Any]) -> set[str]:
    """What a raw (unredacted) case could hold an erased value as: every string, its id-like
    tokens, and runs of up to ``MAX_WORDS`` words (names inside free text)."""
    tokens = row_tokens(row)
    for text in all_strings(row):
        words = text.split()
        for size in range(2, MAX_WORDS + 1):
            tokens.update(" ".join(words[i : i + size]) for i in range(len(words) - size + 1))
    return tokens


def erased_raw_case_ids(table: pa.Table, digests: set[str], digest: Any) -> list[str]:
    """Case ids of the raw rows holding a value whose raw digest (``digest(value)``, the
    erasure key's HMAC, ``erasure_key.py``) the log names."""
    return _case_ids_with_digest(table, digests, digest, raw_tokens)


def erased_raw_digests(store: StoreFS, layout: SetLayout) -> tuple[set[str], set[str]]:
    """The raw digests the log holds, and the ids of the erasure keys that made them."""
    digests: set[str] = set()
    key_ids: set[str] = set()
    for entry in read_log(store, layout):
        if entry.get("raw"):
            digests.update(entry["raw"])
            key_ids.add(str(entry.get("erasure_key_id")))
    return digests, key_ids


# -- the log file ---------------------------------------------------------------------------
def log_path(layout: SetLayout) -> str:
    return f"{layout.set_name}/_erasure/log.jsonl"


def read_log(store: StoreFS, layout: SetLayout) -> list[dict[str, Any]]:
    try:
        data = store.read_bytes(log_path(layout))
    except FileNotFoundError:
        return []
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def append_log(store: StoreFS, layout: SetLayout, entry: dict[str, Any]) -> None:
    line = orjson.dumps(entry, option=orjson.OPT_SORT_KEYS) + b"\n"
    store.update(log_path(layout), lambda old: (old or b"") + line)


def erased_needle_digests(store: StoreFS, layout: SetLayout) -> set[str]:
    return {d for entry in read_log(store, layout) for d in entry.get("needles", [])}


def drop_erased(
    store: StoreFS, layout: SetLayout, table: pa.Table
) -> tuple[pa.Table, dict[str, Any] | None]:
    """Publishing consults the log: cases holding an erased subject are left out (and counted).
    Returns the table and the manifest's ``erasure`` record (None when the set has no log)."""
    digests = erased_needle_digests(store, layout)
    if not digests:
        return table, None
    dropped = erased_case_ids(table, digests)
    if dropped:
        keep = pc.invert(pc.is_in(table.column("case_id"), value_set=pa.array(dropped)))
        table = table.filter(keep)
    return table, {"log_entries": len(read_log(store, layout)), "cases_dropped": len(dropped)}
