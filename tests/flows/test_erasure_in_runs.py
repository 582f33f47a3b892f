"""Erasure against real runs: an erase while a run is publishing waits for it and then removes
the subject (never in the final `latest`); an erased subject stays out after the pseudonym key
is rotated (the log's raw digests under the erasure key); a run that cannot check them stops.

Real processes (`golden run --local`, `golden erase`) on a small generated corpus.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
import yaml
from paused import wait_paused

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.aliases import read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.publish import PAUSE_ENV, RESUME_ENV

pytestmark = pytest.mark.slow

GOLDEN = Path(sys.executable).with_name("golden")
KEY_1 = "erasure-run-test-key-one-0123456789abcdef"
KEY_2 = "erasure-run-test-key-two-fedcba9876543210"
ERASURE_KEY = "erasure-key-for-tests-0123456789abcdef0123"


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from golden_distill.synthetic import generate_corpus

    out = tmp_path_factory.mktemp("corpus")
    generate_corpus(out, sessions=60, seed=5, shards=1)
    return out


def _env(key: str = KEY_1, erasure: bool = True, **extra: str) -> dict[str, str]:
    env = {**os.environ, "GOLDEN_PSEUDONYM_KEY": key}
    env.pop(PAUSE_ENV, None)
    env.pop("GOLDEN_ERASURE_KEY", None)
    if erasure:
        env["GOLDEN_ERASURE_KEY"] = ERASURE_KEY
    return {**env, **extra}


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "funnels": {"quotas": {"enabled": False}},
                "run": {"work_dir": str(tmp_path / "work"), "set_lock_wait_seconds": 120},
            }
        )
    )
    return path


def _run(tmp_path: Path, recordings: Path, env: dict[str, str], *extra: str):
    args = [str(GOLDEN), "run", "--local", "--config", str(_config(tmp_path)),
            "--source", str(recordings), "--format", "native",
            "--store", str(tmp_path / "store"), "--set", "nightly", *extra]  # fmt: skip
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)  # fmt: skip


def _erase(tmp_path: Path, env: dict[str, str], user: str, *extra: str):
    args = [str(GOLDEN), "erase", "--config", str(_config(tmp_path)),
            "--store", str(tmp_path / "store"), "--set", "nightly",
            "--subject", f"user_id={user}", *extra]  # fmt: skip
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)  # fmt: skip


def _done(proc: subprocess.Popen[str]) -> str:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, (out + err)[-3000:]
    return out + err


def _users(recordings: Path) -> dict[str, str]:
    """record id -> raw user id, from the recordings themselves."""
    users = {}
    for path in recordings.glob("recordings-*.jsonl"):
        for line in path.read_bytes().splitlines():
            try:
                record = orjson.loads(line)
                users[record["recordId"]] = record["userId"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue
    return users


def _latest_users(tmp_path: Path, users: dict[str, str]) -> list[str]:
    store = StoreFS(str(tmp_path / "store"))
    latest = read_alias(store, SetLayout("nightly"), "latest")
    table = open_set(str(tmp_path / "store"), f"nightly@{latest}").read_table()
    return [users.get(s["source_record_id"]) for s in table.column("source").to_pylist()]


def _a_published_user(tmp_path: Path, users: dict[str, str]) -> str:
    published = _latest_users(tmp_path, users)
    user = max(set(published) - {None}, key=published.count)
    assert user is not None
    return user


def test_an_erased_subject_stays_out_after_the_pseudonym_key_rotates(recordings, tmp_path):
    users = _users(recordings)
    _done(_run(tmp_path, recordings, _env()))
    user = _a_published_user(tmp_path, users)
    _done(_erase(tmp_path, _env(), user))
    assert user not in _latest_users(tmp_path, users)

    # a run that cannot check the raw digests stops (fails closed), publishing nothing
    # (a rotated key starts a new lineage: --new-key, else the run is refused before this)
    blind = _run(tmp_path, recordings, _env(KEY_2, erasure=False), "--new-key", "--force")
    out, err = blind.communicate(timeout=300)
    assert blind.returncode != 0 and "GOLDEN_ERASURE_KEY" in out + err

    # the pseudonym key rotates: the logged needles no longer match, the raw digests do
    text = _done(_run(tmp_path, recordings, _env(KEY_2), "--new-key", "--force"))
    assert "hold an erased subject" in text
    assert user not in _latest_users(tmp_path, users)


def test_erase_while_a_run_publishes_waits_and_the_subject_never_comes_back(recordings, tmp_path):
    users = _users(recordings)
    _done(_run(tmp_path, recordings, _env()))
    user = _a_published_user(tmp_path, users)

    # a second run (forced: a new version with the subject) pauses inside its publish
    resume = tmp_path / "resume"
    env = _env(**{PAUSE_ENV: "staged", RESUME_ENV: str(resume)})
    publisher = _run(tmp_path, recordings, env, "--force")
    wait_paused(publisher, "staged")

    eraser = _erase(tmp_path, _env(), user)  # waits for the set's lock
    time.sleep(3)
    assert eraser.poll() is None, "erase did not wait for the publish in flight"
    resume.touch()
    _done(publisher)
    text = _done(eraser)
    assert "published nightly@" in text
    assert user not in _latest_users(tmp_path, users)

    # and a later run does not bring the subject back
    _done(_run(tmp_path, recordings, _env(), "--force"))
    assert user not in _latest_users(tmp_path, users)


def test_erase_with_no_wait_while_a_run_holds_the_set_fails_clearly(recordings, tmp_path):
    _done(_run(tmp_path, recordings, _env()))
    users = _users(recordings)
    user = _a_published_user(tmp_path, users)
    resume = tmp_path / "resume"
    env = _env(**{PAUSE_ENV: "verified", RESUME_ENV: str(resume)})
    publisher = _run(tmp_path, recordings, env, "--force")
    wait_paused(publisher, "verified")
    eraser = _erase(tmp_path, _env(), user, "--wait", "0")
    _out, err = eraser.communicate(timeout=120)
    assert eraser.returncode == 2
    assert "is locked (run by pid" in err and "NOT erased" in err
    assert not (tmp_path / "store" / "nightly" / "_erasure").exists()  # nothing logged
    resume.touch()
    _done(publisher)
