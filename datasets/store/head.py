"""The head of a set (``latest``) as a compare-and-swap target, and the repair of a crashed publish.

A publisher writes ``<set>/_pending/<version>`` (only-if-absent: the version it claimed and the
head it grows from) before the version becomes visible, and removes it once ``latest`` points at
the version. So a pending record with a visible version is exactly a publish that died between
the rename (or the manifest upload) and the alias move; without the record, a version newer than
``latest`` is a deliberate rollback and is left alone.

``repair_head`` (run under the set lock, before a run reads the head, and by ``golden erase``)
settles each pending record, oldest first:

* the version is visible, names the current head as its parent and verifies (checksums, counts,
  signature): it is **adopted**, ``latest`` moves to it (it is what the dead run published);
* it is visible but is not a successor of the head, or does not verify: it is **discarded**
  (made invisible in one step, like a failed publish);
* it never became visible: only the record is removed (staging leftovers are gc's).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from golden_distill.datasets.store.aliases import LATEST, move_alias, read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout, is_version, parse_version
from golden_distill.datasets.store.verify import verify_version
from golden_distill.datasets.store.versions import read_manifest


class HeadMoved(RuntimeError):
    """The set's head is no longer the version this publish grew from: nothing was published."""

    def __init__(self, set_name: str, expected: str | None, found: str | None) -> None:
        self.expected, self.found = expected, found
        super().__init__(
            f"set {set_name!r}: latest moved from {expected or '(none)'} to {found or '(none)'} "
            "while this run was building on it; nothing was published and the watermark did "
            "not move; run again to grow from the new head"
        )


def pending_dir(layout: SetLayout) -> str:
    return f"{layout.set_name}/_pending"


def pending_path(layout: SetLayout, version: str) -> str:
    parse_version(version)
    return f"{pending_dir(layout)}/{version}"


def mark_pending(store: StoreFS, layout: SetLayout, version: str, parent: str | None) -> None:
    record = orjson.dumps({"version": version, "parent": parent})
    store.write_atomic(pending_path(layout, version), record)


def clear_pending(store: StoreFS, layout: SetLayout, version: str) -> None:
    store.remove(pending_path(layout, version))


@dataclass(slots=True)
class Repair:
    set_name: str
    head_before: str | None = None
    adopted: list[str] = field(default_factory=list)
    discarded: dict[str, str] = field(default_factory=dict)  # version -> why
    cleared: list[str] = field(default_factory=list)  # records of publishes that never showed

    @property
    def changed(self) -> bool:
        return bool(self.adopted or self.discarded)

    def describe(self) -> list[str]:
        lines = [
            f"adopted {self.set_name}@{v}: a run died after making it visible and before moving "
            "latest; latest now points at it"
            for v in self.adopted
        ]
        lines += [f"discarded {self.set_name}@{v}: {why}" for v, why in self.discarded.items()]
        return lines


def _default_check(store: StoreFS, set_name: str, version: str) -> list[str]:
    return verify_version(store, set_name, version, replay=False).problems


def repair_head(
    store: StoreFS,
    set_name: str,
    *,
    check: Callable[[StoreFS, str, str], list[str]] = _default_check,
    withdraw: Callable[[StoreFS, SetLayout, str], None] | None = None,
) -> Repair:
    """Settle every pending publish of the set (module docstring). Call it holding the lock."""
    if withdraw is None:
        from golden_distill.datasets.store.publish import withdraw_version as withdraw
    layout = SetLayout(set_name)
    head = read_alias(store, layout, LATEST)
    report = Repair(set_name, head_before=head)
    names = [n for n in store.list_names(pending_dir(layout)) if is_version(n)]
    for version in sorted(names, key=parse_version):
        if not store.exists(layout.manifest(version)):
            clear_pending(store, layout, version)
            report.cleared.append(version)
            continue
        why = _why_not_adopted(store, layout, version, head, check)
        if why is None:
            move_alias(store, layout, LATEST, version, only_forward=True)
            head = read_alias(store, layout, LATEST)
            if head == version:
                report.adopted.append(version)
                clear_pending(store, layout, version)
                continue
            why = f"latest moved to {head} meanwhile"
        withdraw(store, layout, version)
        with contextlib.suppress(Exception):
            store.remove(layout.claim(version))
        clear_pending(store, layout, version)
        report.discarded[version] = why
    return report


def _why_not_adopted(
    store: StoreFS,
    layout: SetLayout,
    version: str,
    head: str | None,
    check: Callable[[StoreFS, str, str], list[str]],
) -> str | None:
    try:
        manifest: dict[str, Any] = read_manifest(store, layout.set_name, version)
    except Exception as exc:
        return f"its manifest does not read ({exc})"
    parent = manifest.get("parent_version")
    if parent != head:
        return f"it grew from {parent or '(none)'}, not from the head {head or '(none)'}"
    if head is not None and parse_version(version) <= parse_version(head):
        return f"it is not newer than the head {head}"
    problems = check(store, layout.set_name, version)
    if problems:
        return "it does not verify: " + "; ".join(problems[:3])
    return None
