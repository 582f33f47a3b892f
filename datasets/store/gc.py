"""Retention: remove old versions, never one an alias points to; a dry run unless applied.

A version is kept when it is among the newest ``keep_last``, younger than ``keep_days``, the
target of any alias, the head (the newest version: whatever ``keep_last`` says, even when the
``latest`` ref is missing or broken) or a publish the next writer has to settle (``_pending``,
``head.py``). Negative numbers are refused, not read as "keep nothing". Leftovers of dead
publishers (staging folders, claims, manifest-less version folders) are removed once older than
``orphan_grace_hours``, so a publish in progress is never touched. Deleting makes the version
invisible first (local: the folder is renamed into ``_trash/`` in one step; object store: the
manifest goes first), then removes the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from golden_distill.datasets.store.aliases import list_aliases
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.head import pending_dir
from golden_distill.datasets.store.layout import SetLayout, is_version, parse_version
from golden_distill.datasets.store.publish import withdraw_version
from golden_distill.datasets.store.versions import list_versions, read_manifest


@dataclass(slots=True)
class GcPlan:
    set_name: str
    keep: dict[str, str] = field(default_factory=dict)  # version -> why it is kept
    delete: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)  # store-relative paths
    applied: bool = False


def _created(store: StoreFS, set_name: str, version: str) -> datetime | None:
    try:
        return datetime.fromisoformat(read_manifest(store, set_name, version)["created_at"])
    except Exception:
        return None


def plan_gc(
    store: StoreFS,
    set_name: str,
    *,
    keep_last: int,
    keep_days: float,
    orphan_grace_hours: float = 24.0,
    now: datetime | None = None,
) -> GcPlan:
    check_retention(keep_last=keep_last, keep_days=keep_days, orphan_grace_hours=orphan_grace_hours)
    layout = SetLayout(set_name)
    now = now or datetime.now(UTC)
    plan = GcPlan(set_name)
    versions = list_versions(store, set_name)
    aliased: dict[str, list[str]] = {}
    for alias, version in list_aliases(store, layout).items():
        aliased.setdefault(version, []).append(alias)
    newest = set(versions[-keep_last:]) if keep_last > 0 else set()
    pending = set(store.list_names(pending_dir(layout)))
    for version in versions:
        created = _created(store, set_name, version)
        if version in aliased:
            plan.keep[version] = "alias " + ", ".join(sorted(aliased[version]))
        elif version == versions[-1]:
            plan.keep[version] = "the head (newest version)"
        elif version in pending:
            plan.keep[version] = "a pending publish (settled by the next run)"
        elif version in newest:
            plan.keep[version] = f"among the newest {keep_last}"
        elif created is None or now - created < timedelta(days=keep_days):
            plan.keep[version] = f"younger than {keep_days:g} days"
        else:
            plan.delete.append(version)
    grace = timedelta(hours=orphan_grace_hours)

    def old(rel: str) -> bool:
        stamp = store.modified(rel)
        return stamp is None or now - stamp > grace

    published = set(versions)
    for name in store.list_names(layout.versions_dir):
        rel = f"{layout.versions_dir}/{name}"
        if is_version(name) and name not in published and _orphan_old(store, rel, old):
            plan.orphans.append(rel)
    for folder in (layout.staging_dir, layout.trash_dir):
        for name in store.list_names(folder):
            rel = f"{folder}/{name}"
            if folder == layout.trash_dir or _orphan_old(store, rel, old):
                plan.orphans.append(rel)
    return plan


def check_retention(*, keep_last: int, keep_days: float, orphan_grace_hours: float) -> None:
    """Refuse negative numbers: ``versions[-(-2):]`` would silently mean "keep all but two"."""
    for name, value in (
        ("keep_last", keep_last),
        ("keep_days", keep_days),
        ("orphan_grace_hours", orphan_grace_hours),
    ):
        if value < 0:
            raise ValueError(f"gc: {name} must be 0 or more, got {value!r}")


def _orphan_old(store: StoreFS, rel: str, old: Callable[[str], bool]) -> bool:
    """A folder is old when every file in it is (object stores have no folder times)."""
    names = store.list_names(rel)
    if not names:
        return old(rel)
    return all(old(f"{rel}/{n}") for n in names)


def apply_gc(store: StoreFS, plan: GcPlan) -> GcPlan:
    layout = SetLayout(plan.set_name)
    aliased = set(list_aliases(store, layout).values())  # re-read: an alias may have moved
    versions = list_versions(store, plan.set_name)
    head = versions[-1] if versions else None
    for version in sorted(plan.delete, key=parse_version):
        if version in aliased:
            plan.keep[version] = "alias (moved since the plan)"
            continue
        if version == head:
            plan.keep[version] = "the head (newest version)"
            continue
        withdraw_version(store, layout, version)
        store.remove(layout.claim(version))
    for rel in plan.orphans:
        store.remove_tree(rel)
    plan.delete = [v for v in plan.delete if v not in plan.keep]
    plan.applied = True
    return plan
