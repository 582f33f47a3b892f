"""A publisher killed between files leaves nothing visible; concurrent publishers both succeed.

The publisher runs in a real child process (``publisher_proc.py``) stopped at a chosen point by
the documented ``GOLDEN_PUBLISH_PAUSE_AFTER`` hook, then killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.aliases import read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.gc import apply_gc, plan_gc
from golden_distill.datasets.store.layout import SetLayout, parse_version
from golden_distill.datasets.store.publish import PAUSE_ENV, publish_version
from golden_distill.datasets.store.verify import verify_version
from golden_distill.datasets.store.versions import list_versions

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


def _wait_paused(proc: subprocess.Popen[str], point: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if not ready:
            continue
        line = proc.stderr.readline()
        if not line:
            pytest.fail(f"publisher exited before pausing at {point}: {''.join(seen)[-2000:]}")
        seen.append(line)
        if line.strip() == f"GOLDEN_PUBLISH_PAUSED {point}":
            return
    proc.kill()
    pytest.fail(f"publisher did not reach {point} within {timeout}s")


def test_killed_publisher_leaves_no_version_and_latest_unchanged(target, casegen):
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    first = publish_version(target.url, SET, cases=casegen.make_table(20), **target.kwargs())
    for number, point in enumerate(KILL_POINTS[target.kind]):
        proc = _spawn(target, start=100 + 50 * number, n=40, pause=point)
        _wait_paused(proc, point)
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


def test_two_publishers_at_once_get_distinct_versions_that_verify(target):
    store = StoreFS(target.url, target.storage_options)
    procs = [_spawn(target, start=0, n=40), _spawn(target, start=1000, n=35)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    versions = [r["version"] for r in results]
    assert len(set(versions)) == 2 and all(r["deduplicated_of"] is None for r in results)
    assert list_versions(store, SET) == sorted(versions, key=parse_version)
    for version in versions:
        assert verify_version(store, SET, version).ok
    newest = max(versions, key=parse_version)
    assert read_alias(store, SetLayout(SET), "latest") == newest
