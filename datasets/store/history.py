"""The signed history of a set: which versions a pinned reader may reach through an alias.

Why: a signature proves a manifest is what the publisher wrote, not that it is the *current*
one. Whoever can write the store can point ``refs/latest`` (a plain text file) back at an older,
correctly signed version, or at a signed version that never became the head (a fork). So each
manifest names its ``parent_version`` and a ``sequence`` (the parent's + 1, 1 for the first), and
both are covered by the signature. With a pinned key, resolving an alias checks them:

* the history is the set of versions present whose manifest is signed by a pinned key and
  carries a ``sequence`` (unsigned or wrongly signed versions are not part of it);
* ``latest`` must point at the newest signed version present: the highest sequence, and of
  two with one sequence (a fork: a forced rollback then a publish, or an abandoned staged
  version put back) the newer id, since ids are claimed in order and a later publish always
  claims a newer one. Pointing lower is a rollback and is refused, naming the newer version;
* any other alias (``stable``...) must point at a version on the chain that leads to ``latest``
  (followed through ``parent_version``; where gc or erasure deleted a parent, older versions
  below that gap are accepted, since nothing signed says otherwise);
* a version asked for by its exact id is taken as asked (its own signature is still checked),
  unless a signed manifest names it in ``erasure.withdrawn_versions``: a version an erasure
  withdrew, put back from a backup, is refused however it is asked for.

What it cannot see: an attacker who deletes the newer versions (and their objects) leaves a
history whose top is older; nothing in the store can prove something is missing. A consumer that
must detect that records the sequence it last saw (``GoldenSet.sequence``) and compares.
Stores without signatures, or read without a pinned key, are not checked (as before).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from golden_distill.datasets.store.aliases import LATEST
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.integrity import TamperError
from golden_distill.datasets.store.layout import SetLayout, SetRef, is_version, parse_version
from golden_distill.datasets.store.manifest import ManifestError, load_manifest
from golden_distill.datasets.store.signing import SIGNATURE_NAME, SignatureError, verify_signature
from golden_distill.datasets.store.versions import list_versions, read_manifest, resolve


class HistoryError(TamperError):
    """An alias points outside the signed history (a rollback or a fork); names both versions."""


@dataclass(frozen=True, slots=True)
class Entry:
    sequence: int
    parent: str | None
    #: versions this manifest says an erasure withdrew (``erasure.withdrawn_versions``)
    withdrawn: frozenset[str] = frozenset()


def erased_versions(store: StoreFS, set_name: str) -> list[str]:
    """Versions the set's erasure log says were removed: every publish records them in its
    (signed) manifest, so a withdrawn version put back from a backup is refused."""
    from golden_distill.datasets.store.erasure_log import read_log  # pyarrow-heavy: lazily

    found = {
        version
        for entry in read_log(store, SetLayout(set_name))
        for version in (entry.get("removed") or {})
        if is_version(version)
    }
    return sorted(found, key=parse_version)


def next_sequence(store: StoreFS, set_name: str, parent: str | None) -> int:
    """The ``sequence`` of a version growing from ``parent``: the parent's + 1 (a parent from
    before sequences counts as 0)."""
    if parent is None:
        return 1
    sequence = read_manifest(store, set_name, parent).get("sequence")
    return (sequence if isinstance(sequence, int) and sequence > 0 else 0) + 1


def signed_history(
    store: StoreFS, set_name: str, keys: Mapping[str, Ed25519PublicKey]
) -> dict[str, Entry]:
    """Versions present whose manifest is signed by one of ``keys`` and has a sequence."""
    layout = SetLayout(set_name)
    found: dict[str, Entry] = {}
    for version in list_versions(store, set_name):
        try:
            data = store.read_bytes(layout.manifest(version))
            signature = store.read_bytes(layout.version_file(version, SIGNATURE_NAME))
            verify_signature(data, signature, keys, f"{set_name}@{version}")
            manifest = load_manifest(data, f"{set_name}@{version}")
        except (FileNotFoundError, ManifestError):
            continue  # unsigned, wrongly signed or unreadable: not part of the signed history
        sequence, parent = manifest.get("sequence"), manifest.get("parent_version")
        if manifest.get("version") != version or manifest.get("set") != set_name:
            continue
        withdrawn = (manifest.get("erasure") or {}).get("withdrawn_versions") or []
        if isinstance(sequence, int) and sequence > 0:
            found[version] = Entry(
                sequence,
                parent if is_version(parent) else None,
                frozenset(v for v in withdrawn if is_version(v)),
            )
    return found


def _chain(history: dict[str, Entry], head: str) -> tuple[set[str], str | None]:
    """Versions reachable from ``head`` through parents (each one sequence lower), and the
    first parent that is missing (deleted by gc or erasure), if any."""
    chain = {head}
    current = head
    while True:
        parent = history[current].parent
        if parent is None:
            return chain, None
        entry = history.get(parent)
        if entry is None:
            return chain, parent
        if entry.sequence != history[current].sequence - 1 or parent in chain:
            return chain, None  # inconsistent statements: stop trusting the walk here
        chain.add(parent)
        current = parent


def check_alias_target(
    store: StoreFS,
    set_name: str,
    alias: str,
    version: str,
    keys: Mapping[str, Ed25519PublicKey],
) -> None:
    """Raise ``HistoryError`` when ``alias`` -> ``version`` is a rollback or off the chain."""
    history = signed_history(store, set_name, keys)
    if not history:
        return  # nothing signed with a sequence: load_version refuses what is unsigned
    _refuse_withdrawn(history, set_name, version)
    label = f"{set_name}@{alias}"
    entry = history.get(version)
    if entry is None:
        raise HistoryError(
            f"{label} points at {version}, which is not in the set's signed history (unsigned, "
            "signed by another key, or without a sequence); ask for an exact version id to "
            "open it anyway"
        )
    newest = max(history, key=lambda v: (history[v].sequence, parse_version(v)))
    top = history[newest].sequence
    if alias == LATEST:
        if entry.sequence < top:
            raise HistoryError(
                f"{label} points at {version} (sequence {entry.sequence}) but {newest} "
                f"(sequence {top}) is signed and newer: refusing a rollback of latest; ask for "
                "an exact version id to open an older one"
            )
        if version != newest:
            raise HistoryError(
                f"{label} points at {version}, a fork of the signed history: {newest} has the "
                f"same sequence {top} and a newer id (the version a later publish made); ask for "
                "an exact version id to open it anyway"
            )
        return
    chain, gap = _chain(history, newest)
    if version in chain:
        return
    below_gap = gap is not None and parse_version(version) <= parse_version(gap)
    if below_gap and entry.sequence < min(history[v].sequence for v in chain):
        return  # below a deleted parent: nothing signed says it is off the chain
    raise HistoryError(
        f"{label} points at {version}, which is not on the signed chain leading to {newest} "
        "(a fork, e.g. a staged or withdrawn version put back); ask for an exact version id to "
        "open it anyway"
    )


def _refuse_withdrawn(history: dict[str, Entry], set_name: str, version: str) -> None:
    for other, entry in history.items():
        if version in entry.withdrawn:
            raise HistoryError(
                f"{set_name}@{version}: withdrawn by an erasure (the signed manifest of "
                f"{set_name}@{other} says so); it was put back from a copy"
            )


def resolve_pinned(store: StoreFS, ref: SetRef, keys: Mapping[str, Ed25519PublicKey] | None) -> str:
    """``versions.resolve``, plus the history check when keys are pinned and ``ref`` names an
    alias (an exact version id is taken as asked)."""
    version = resolve(store, ref)
    if keys:
        check_in_history(store, ref, version, keys)
    return version


def check_in_history(
    store: StoreFS, ref: SetRef, version: str, keys: Mapping[str, Ed25519PublicKey]
) -> None:
    """``HistoryError`` unless ``version`` (what ``ref`` resolved to) is where the signed
    history allows: an alias per ``check_alias_target``; an exact id taken as asked unless a
    signed erasure withdrew it."""
    if not ref.is_version:
        check_alias_target(store, ref.set_name, ref.selector, version, keys)
    else:
        _refuse_withdrawn(signed_history(store, ref.set_name, keys), ref.set_name, version)


__all__ = [
    "Entry",
    "HistoryError",
    "SignatureError",
    "check_alias_target",
    "check_in_history",
    "erased_versions",
    "next_sequence",
    "resolve_pinned",
    "signed_history",
]
