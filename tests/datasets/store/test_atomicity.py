"""A publisher killed between files leaves nothing visible, one killed after the version showed is
repaired by the next writer; of concurrent publishers from one head only one commits at a time.

The publisher runs in a real child process (``publisher_proc.py``) stopped at a chosen point by
the documented ``GOLDEN_PUBLISH_PAUSE_AFTER`` hook, then killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paused import wait_paused

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.aliases import move_alias, read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.gc import apply_gc, plan_gc
from golden_distill.datasets.store.head import repair_head
from golden_distill.datasets.store.layout import SetLayout, parse_version
from golden_distill.datasets.store.publish import PAUSE_ENV, publish_version
from golden_distill.datasets.store.verify import verify_version
from golden_distill.datasets.store.versions import list_versions, read_manifest

SET = "nightly"
PROC = Path(__file__).with_name("publisher_proc.py")
#: Where to kill: after the case files, between data files, and just before visibility.
KILL_POINTS = {
    "local": ["cases", "claimed", "staged"],
    "s3": ["upload:cases-0000.parquet", "upload:report.html", "uploaded"],
}

pytestmark = pytest.mark.slow


def _spawn(target, start: int, n: int, pause: str | None = None) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.pop(PAUSE_ENV, None)
    if pause:
        env[PAUSE_ENV] = pause
    spec = {
        "url": target.url,
        "set": SET,
        "options": target.storage_options,
        "start": start,
        "n": n,
        "max_rows": 15,  # several case files, so "between files" exists
    }
    return subprocess.Popen(
        [sys.executable, str(PROC), json.dumps(spec)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_killed_publisher_leaves_no_version_and_latest_unchanged(target, casegen):
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    first = publish_version(target.url, SET, cases=casegen.make_table(20), **target.kwargs())
    for number, point in enumerate(KILL_POINTS[target.kind]):
        proc = _spawn(target, start=100 + 50 * number, n=40, pause=point)
        wait_paused(proc, point, timeout=90)
        proc.kill()
        proc.wait(30)
        assert list_versions(store, SET) == [first.version], point
        assert read_alias(store, layout, "latest") == first.version, point
        assert open_set(target.url, SET, **target.kwargs()).version == first.version

    # the next publish succeeds, gets a newer id, moves latest and verifies
    after = publish_version(target.url, SET, cases=casegen.make_table(30, 500), **target.kwargs())
    assert parse_version(after.version) > parse_version(first.version)
    assert list_versions(store, SET) == [first.version, after.version]
    assert read_alias(store, layout, "latest") == after.version
    assert verify_version(store, SET, after.version).ok

    # the dead publishers' leftovers are invisible, and gc removes them once past the grace time
    plan = plan_gc(store, SET, keep_last=10, keep_days=30, orphan_grace_hours=0)
    assert plan.orphans  # staging folders (local) or manifest-less version folders (S3)
    apply_gc(store, plan)
    assert list_versions(store, SET) == [first.version, after.version]
    assert plan_gc(store, SET, keep_last=10, keep_days=30, orphan_grace_hours=0).orphans == []
    assert verify_version(store, SET, first.version).ok


def test_two_publishers_from_one_head_never_both_commit(target):
    """Publishing is a compare-and-swap on the head: of two publishers that grew from the same
    head, the loser fails clearly (which head moved) and shows nothing; a rerun commits."""
    store = StoreFS(target.url, target.storage_options)
    specs = [(0, 40), (1000, 35)]
    procs = [_spawn(target, start=start, n=n) for start, n in specs]
    won, lost = [], []
    for spec, proc in zip(specs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            won.append(json.loads(out.strip().splitlines()[-1])["version"])
        else:
            assert "HeadMoved" in err and "latest moved from" in err, err[-2000:]
            lost.append(spec)
    assert won  # one at least commits
    assert list_versions(store, SET) == sorted(won, key=parse_version)  # the loser shows nothing
    for version in won:
        assert verify_version(store, SET, version).ok
    for start, n in lost:  # a rerun of the loser grows from the new head
        rerun = _spawn(target, start=start, n=n)
        out, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, err[-2000:]
        won.append(json.loads(out.strip().splitlines()[-1])["version"])
    newest = max(won, key=parse_version)
    assert read_alias(store, SetLayout(SET), "latest") == newest
    oldest = min(won, key=parse_version)
    parents = {v: read_manifest(store, SET, v)["parent_version"] for v in won}
    assert parents[newest] == oldest, (parents, len(lost))


def test_killed_after_visible_is_adopted_by_the_next_writer(target, casegen):
    """Killed between the version's rename (or manifest upload) and the alias move: the version
    is visible but latest is behind; ``repair_head`` adopts it (a verified successor)."""
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    first = publish_version(target.url, SET, cases=casegen.make_table(20), **target.kwargs())
    proc = _spawn(target, start=300, n=30, pause="visible")
    wait_paused(proc, "visible", timeout=90)
    proc.kill()
    proc.wait(30)
    orphan = max(list_versions(store, SET), key=parse_version)
    assert orphan != first.version
    assert read_alias(store, layout, "latest") == first.version  # the crash left latest behind
    repair = repair_head(store, SET)
    assert repair.adopted == [orphan], repair
    assert read_alias(store, layout, "latest") == orphan
    assert store.list_names(f"{SET}/_pending") == []
    assert repair_head(store, SET).changed is False  # settled once


def test_orphan_that_is_not_a_successor_is_discarded(target, casegen):
    """A pending version whose parent is no longer the head is made invisible, latest stays."""
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    publish_version(target.url, SET, cases=casegen.make_table(20), **target.kwargs())
    proc = _spawn(target, start=300, n=30, pause="visible")
    wait_paused(proc, "visible", timeout=90)
    proc.kill()
    proc.wait(30)
    orphan = max(list_versions(store, SET), key=parse_version)
    # another writer moved the head meanwhile (what a stolen lock or an erase would do)
    other = publish_version(target.url, SET, cases=casegen.make_table(25, 900), **target.kwargs())
    assert read_alias(store, layout, "latest") == other.version
    repair = repair_head(store, SET)
    assert orphan in repair.discarded and repair.adopted == []
    assert orphan not in list_versions(store, SET)
    assert read_alias(store, layout, "latest") == other.version


def test_a_rollback_is_not_undone_by_repair(target, casegen):
    """Only pending publishes are repaired: a version newer than latest that latest was moved
    back from on purpose stays where it is."""
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    first = publish_version(target.url, SET, cases=casegen.make_table(20), **target.kwargs())
    second = publish_version(target.url, SET, cases=casegen.make_table(20, 50), **target.kwargs())
    move_alias(store, layout, "latest", first.version)
    assert not repair_head(store, SET).changed
    assert read_alias(store, layout, "latest") == first.version
    assert second.version in list_versions(store, SET)


def test_a_pending_version_that_does_not_verify_is_discarded(target, casegen):
    """A pending successor of the head whose files were damaged is not adopted."""
    from golden_distill.datasets.store.head import mark_pending

    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    first = publish_version(target.url, SET, cases=casegen.make_table(20), **target.kwargs())
    second = publish_version(target.url, SET, cases=casegen.make_table(20, 50), **target.kwargs())
    # as if the publisher of `second` died before moving latest, and a byte rotted since
    move_alias(store, layout, "latest", first.version)
    mark_pending(store, layout, second.version, first.version)
    rel = layout.version_file(second.version, "cases.parquet")
    data = bytearray(store.read_bytes(rel))
    data[len(data) // 2] ^= 0x01
    store.write_atomic(rel, bytes(data))
    repair = repair_head(store, SET)
    assert repair.adopted == [] and "does not verify" in repair.discarded[second.version]
    assert list_versions(store, SET) == [first.version]
    assert read_alias(store, layout, "latest") == first.version
