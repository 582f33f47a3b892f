"""The set lock: one holder at a time, on a folder and on S3 (conditional writes); a holder
killed with SIGKILL is taken over safely; a live holder, or another host's fresh heartbeat,
never is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import orjson
import pytest

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.set_lock import SetLock, SetLocked, lock_path, read_owner

SET = "nightly"

HOLDER = """
import json, sys, time
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.set_lock import SetLock
spec = json.loads(sys.argv[1])
lock = SetLock(StoreFS(spec["url"], spec["options"]), spec["set"], "run")
lock.acquire(0)
print("HELD", flush=True)
time.sleep(600)
"""


def _holder(target) -> subprocess.Popen[str]:
    spec = json.dumps({"url": target.url, "options": target.storage_options, "set": SET})
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, spec], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "HELD", proc.stderr
    return proc


def test_a_live_holder_keeps_the_lock_and_a_killed_one_is_taken_over(target):
    store = StoreFS(target.url, target.storage_options)
    proc = _holder(target)
    try:
        with pytest.raises(SetLocked, match=f"run by pid {proc.pid}"):
            SetLock(store, SET, "erase").acquire(wait_seconds=1)
    finally:
        proc.kill()
        proc.wait(30)
    lock = SetLock(store, SET, "erase")
    lock.acquire(0)  # the holder is dead (same host): taken over at once
    assert lock.took_over is not None and lock.took_over["pid"] == proc.pid
    assert read_owner(store, SetLayout(SET))["token"] == lock.token
    lock.release()
    assert read_owner(store, SetLayout(SET)) is None


def test_another_hosts_lock_is_stale_only_after_its_heartbeat_stops(target):
    store = StoreFS(target.url, target.storage_options)
    rel = lock_path(SetLayout(SET))
    owner = {"token": "x", "purpose": "run", "host": "elsewhere", "pid": 1,
             "acquired_at": time.time(), "heartbeat_at": time.time()}  # fmt: skip
    store.write_atomic(rel, orjson.dumps(owner))
    with pytest.raises(SetLocked, match="on elsewhere"):
        SetLock(store, SET, "run", stale_after=60).acquire(0)
    store.write_atomic(rel, orjson.dumps({**owner, "heartbeat_at": time.time() - 120}))
    lock = SetLock(store, SET, "run", stale_after=60)
    lock.acquire(0)
    assert lock.took_over["host"] == "elsewhere"
    lock.release()


def test_two_processes_racing_for_a_stale_lock_one_wins(target):
    """Takeover is a compare-and-swap on the stale bytes: of several takers, exactly one."""
    dead = _holder(target)
    dead.kill()
    dead.wait(30)
    script = """
import json, sys, time
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.set_lock import SetLock
spec = json.loads(sys.argv[1])
lock = SetLock(StoreFS(spec["url"], spec["options"]), spec["set"], "run")
print("WON" if lock.try_acquire() is None else "LOST", flush=True)
time.sleep(8)  # alive: a winner that exits would leave a stale lock the next taker may take
"""
    spec = json.dumps({"url": target.url, "options": target.storage_options, "set": SET})
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", script, spec], stdout=subprocess.PIPE,
                              text=True, env=env) for _ in range(3)]  # fmt: skip
    outcomes = [p.stdout.readline().strip() for p in procs]  # type: ignore[union-attr]
    for p in procs:
        p.kill()
        p.wait(30)
    assert sorted(outcomes) == ["LOST", "LOST", "WON"], outcomes
    store = StoreFS(target.url, target.storage_options)
    assert read_owner(store, SetLayout(SET))["pid"] in {p.pid for p in procs}
