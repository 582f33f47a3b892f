"""Erasure (the right to be forgotten): remove a person's cases from every retained version.

A golden set never holds a subject's raw values, only what redaction made of them with the
current pseudonym key: a format-keeping key pseudonym for key fields (``user_id=X``), a
``<ENTITY_hex8>`` placeholder for personal values (``email=Y``). So erasure derives those
*needles* with the same code and key (``redaction/erasure_needles.py``, which the caller runs
and hands in: the store sits below redaction and never imports it), finds every case of every
published version that holds one (key columns, step arguments and responses, messages, text:
any string anywhere in the row), then:

1. appends an entry to the set's erasure log (``<set>/_erasure/log.jsonl``) holding only keyed
   hashes: an HMAC of each subject (``field=value``) and a sha256 of each needle, plus what was
   removed (version ids and case ids). Written first, so a publish from then on drops the
   subject's cases (``drop_erased``): later runs never bring the subject back;
2. publishes a new version: the latest version without the affected cases (its clusters minus
   their rows; no report, whose figures would be the old version's);
3. moves every alias that pointed at an affected version to it (``latest`` by the publish);
4. deletes every affected older version (made invisible in one step, then removed). Versions
   are immutable: they are deleted, never rewritten in place.

The needles are tied to the pseudonym key that derived them (``key_id`` in each entry); what
survives a rotation of that key is the entry's *raw digests*: each erased value as an HMAC under
the separate erasure key (``erasure_key.py``, ``GOLDEN_ERASURE_KEY``), which every run checks
against the raw cases it is about to redact (flows/erased_check.py). An erasure without the
erasure key configured is logged with needles only and says so.

Erasure is a writer of the set like a run: the caller holds the set's lock (``set_lock.py``),
so no publish in flight can bring the subject back after the log entry; ``clean_leftovers``
removes what killed publishes left in ``_staging/`` and ``_trash/`` (they may hold the subject).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from golden_distill.datasets.reader import GoldenSet
from golden_distill.datasets.store.aliases import LATEST, list_aliases, move_alias
from golden_distill.datasets.store.erasure_key import ErasureKey
from golden_distill.datasets.store.erasure_log import (
    append_log,
    matching_case_ids,
    needle_digest,
)
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.publish import withdraw_version
from golden_distill.datasets.store.versions import list_versions, read_manifest

_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,63}")


class ErasureError(ValueError):
    """An erasure request that cannot be carried out (the message never holds the value)."""


@dataclass(frozen=True, slots=True)
class Subject:
    """``field=value`` naming a person (``user_id=...``, ``email=...``, ``PERSON=...``)."""

    field: str
    value: str = field(repr=False)

    @classmethod
    def parse(cls, text: str) -> Subject:
        name, sep, value = text.partition("=")
        if not sep or not _FIELD.fullmatch(name) or not value.strip():
            raise ErasureError(
                "a subject is FIELD=VALUE, e.g. user_id=... or email=... (FIELD: a key field or "
                "personal field of the redaction config, or an entity type such as PERSON)"
            )
        return cls(name, value.strip())


def subject_digest(subject: Subject, secret: bytes) -> str:
    """Keyed hash of a subject: whoever holds the key can check "was X erased?", nobody else."""
    message = f"erasure\x1f{subject.field.lower()}\x1f{subject.value}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


# -- plan and apply -----------------------------------------------------------------------------
@dataclass(slots=True)
class ErasurePlan:
    set_name: str
    affected: dict[str, list[str]] = field(default_factory=dict)  # version -> case ids
    latest: str | None = None
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> version it points at now
    subject_digests: list[str] = field(default_factory=list)
    needle_digests: list[str] = field(default_factory=list)
    raw_digests: list[str] = field(default_factory=list)  # under the erasure key, if any
    erasure_key_id: str | None = None
    new_version: str | None = None
    deleted: list[str] = field(default_factory=list)
    moved: dict[str, tuple[str, str]] = field(default_factory=dict)  # alias -> (old, new)
    leftovers: list[str] = field(default_factory=list)  # staging/trash folders removed
    applied: bool = False

    @property
    def aliases_to_move(self) -> dict[str, str]:
        return {a: v for a, v in self.aliases.items() if v in self.affected and a != LATEST}

    @property
    def versions_to_delete(self) -> list[str]:
        return [v for v in self.affected if v != self.new_version]


def _version_table(store: StoreFS, layout: SetLayout, version: str) -> pa.Table:
    """Every case of a version, read leniently: erasure must reach damaged versions too."""
    manifest = read_manifest(store, layout.set_name, version)
    tables = [
        pq.read_table(pa.BufferReader(store.read_bytes(layout.version_file(version, f["name"]))))
        for f in manifest["files"]
        if f.get("role") == "cases"
    ]
    return pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})


def plan_erasure(
    store: StoreFS,
    set_name: str,
    subjects: list[Subject],
    secret: bytes,
    needles: set[str],
    erasure_key: ErasureKey | None = None,
) -> tuple[ErasurePlan, set[str]]:
    """Which versions hold the subjects' ``needles`` (what redaction made of them with the
    pseudonym key ``secret``: ``redaction.erasure_needles.subject_needles``); returns the plan
    and the needles (kept in memory only)."""
    if not subjects:
        raise ErasureError("no subject given (--subject FIELD=VALUE)")
    layout = SetLayout(set_name)
    plan = ErasurePlan(set_name)
    plan.subject_digests = sorted(subject_digest(s, secret) for s in subjects)
    plan.needle_digests = sorted(needle_digest(n) for n in needles)
    if erasure_key is not None:
        plan.raw_digests = sorted({erasure_key.digest(s.value) for s in subjects})
        plan.erasure_key_id = erasure_key.key_id
    versions = list_versions(store, set_name)
    plan.aliases = list_aliases(store, layout)
    plan.latest = plan.aliases.get(LATEST) or (versions[-1] if versions else None)
    for version in versions:
        table = _version_table(store, layout, version)
        if table.num_rows and "case_id" in table.column_names:
            hits = matching_case_ids(table, needles)
            if hits:
                plan.affected[version] = sorted(hits)
    return plan, needles


def apply_erasure(
    store: StoreFS, plan: ErasurePlan, *, key_id: str | None, publish: Any
) -> ErasurePlan:
    """Carry the plan out (see the module docstring). ``publish(table, clusters, fields,
    decisions)`` publishes a new version of the set and returns its id (``publish_version``
    bound to the store), so signing and the atomic publish are the normal ones."""
    layout = SetLayout(plan.set_name)
    append_log(
        store,
        layout,
        {
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "event": "erase",
            "key_id": key_id,
            "subjects": plan.subject_digests,
            "needles": plan.needle_digests,
            **(
                {"raw": plan.raw_digests, "erasure_key_id": plan.erasure_key_id}
                if plan.raw_digests
                else {}
            ),
            "removed": plan.affected,
        },
    )
    if not plan.affected:
        plan.applied = True
        return plan
    target = plan.latest
    if plan.latest in plan.affected:
        target = _republish_without(store, layout, plan, publish)
        plan.new_version = target
    for alias, version in plan.aliases_to_move.items():
        if target is not None:
            move_alias(store, layout, alias, target)
            plan.moved[alias] = (version, target)

    for version in plan.versions_to_delete:
        withdraw_version(store, layout, version)
        store.remove(layout.claim(version))
        plan.deleted.append(version)
    plan.leftovers = clean_leftovers(store, layout)
    append_log(
        store,
        layout,
        {
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "event": "erase-done",
            "subjects": plan.subject_digests,
            "new_version": plan.new_version,
            "deleted_versions": plan.deleted,
            "moved_aliases": {a: list(m) for a, m in plan.moved.items()},
        },
    )
    plan.applied = True
    return plan


def clean_leftovers(store: StoreFS, layout: SetLayout) -> list[str]:
    """Remove every staging and trash folder of the set: under the set's lock no publish is in
    flight, so each is a killed publish's (or an interrupted delete's) copy of cases."""
    removed = []
    for folder in (layout.staging_dir, layout.trash_dir):
        for name in store.list_names(folder):
            store.remove_tree(f"{folder}/{name}")
            removed.append(f"{folder}/{name}")
    return removed


def signed_versions(store: StoreFS, set_name: str) -> list[str]:
    """Retained versions carrying a signature: an erasure must not replace them with unsigned
    ones (a downgrade every pinned reader would refuse, or worse, a store that stops being
    signed)."""
    from golden_distill.datasets.store.signing import SIGNATURE_NAME

    layout = SetLayout(set_name)
    return [
        v
        for v in list_versions(store, set_name)
        if store.exists(layout.version_file(v, SIGNATURE_NAME))
    ]


#: Manifest fields carried from the version an erasure republishes (the rest is re-derived).
CARRIED_FIELDS = ("config", "code_version", "key_id", "detector_versions", "lineage", "stats",
                  "dedup", "redaction")  # fmt: skip


def _republish_without(store: StoreFS, layout: SetLayout, plan: ErasurePlan, publish: Any) -> str:

    assert plan.latest is not None
    source = GoldenSet(store, layout.set_name, plan.latest, verify=True)
    removed = pa.array(plan.affected[plan.latest], pa.string())
    table = source.read_table()
    table = table.filter(pc.invert(pc.is_in(table.column("case_id"), value_set=removed)))
    clusters = source.clusters()
    if clusters is not None and "case_id" in clusters.column_names:
        clusters = clusters.filter(
            pc.invert(pc.is_in(clusters.column("case_id"), value_set=removed))
        )
    fields = {k: source.manifest.get(k) for k in CARRIED_FIELDS if source.manifest.get(k)}
    fields["notes"] = f"erasure: {len(plan.affected[plan.latest])} case(s) of {plan.latest} removed"
    return publish(table, clusters, fields, _decisions_without(source.decisions(), removed))


def _decisions_without(decisions: pa.Table | None, removed: pa.Array) -> pa.Table | None:
    """The version's decisions table without the erased cases: their rows go (case ids stay only
    in the erasure log), and a case published in place of one no longer names it."""
    if decisions is None:
        return None
    kept = decisions.filter(pc.invert(pc.is_in(decisions.column("case_id"), value_set=removed)))
    if "replaced_by" not in kept.column_names:
        return kept
    by = kept.column("replaced_by")
    cleared = pc.if_else(pc.is_in(by, value_set=removed), pa.scalar(None, by.type), by)
    return kept.set_column(kept.column_names.index("replaced_by"), "replaced_by", cleared)
