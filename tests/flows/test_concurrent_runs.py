"""Two `golden run` processes at once on one set: one writer at a time (the set's lock), and the
second grows from the head the first published, so no window is lost; a killed run's version is
adopted by the next run (it never says "the latest version stands" while latest is behind).

Real processes (`golden run --local`) on a small generated corpus split into nightly partitions.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml
from nights import split_into_nights
from paused import wait_paused
from s3_server import s3_endpoint  # noqa: F401 - the session's S3 server (a fixture)

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.aliases import read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout, parse_version
from golden_distill.datasets.store.publish import PAUSE_ENV
from golden_distill.datasets.store.versions import list_versions, read_manifest

pytestmark = pytest.mark.slow

GOLDEN = Path(sys.executable).with_name("golden")
KEY = "concurrency-test-key-0123456789abcdef"
NIGHT_1 = ("2026-11-28", "2026-11-29")
NIGHT_2 = ("2026-11-29", "2026-11-30")


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory):
    from golden_distill.synthetic import generate_corpus, load_truth

    out = tmp_path_factory.mktemp("corpus")
    generate_corpus(out, sessions=60, seed=3, shards=1)
    recordings = tmp_path_factory.mktemp("nights") / "recordings"
    night_of = split_into_nights(out, load_truth(out), recordings)
    return recordings, night_of


def _config(tmp_path: Path, wait: float = 120) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "funnels": {"quotas": {"enabled": False}},
                "dedup": {"enabled": False},  # every night's candidates are new cases
                "run": {"work_dir": str(tmp_path / "work"), "set_lock_wait_seconds": wait},
            }
        )
    )
    return path


def _run(tmp_path: Path, recordings: Path, window: tuple[str, str] | None, *extra: str,
         pause: str | None = None, store: str | None = None,
         env_extra: dict[str, str] | None = None,
         wait: float = 120) -> subprocess.Popen[str]:  # fmt: skip
    env = {**os.environ, "GOLDEN_PSEUDONYM_KEY": KEY, **(env_extra or {})}
    env.pop(PAUSE_ENV, None)
    if pause:
        env[PAUSE_ENV] = pause
    args = [str(GOLDEN), "run", "--local", "--config", str(_config(tmp_path, wait)),
            "--source", f"{recordings}/dt={{date}}/", "--format", "native",
            "--store", store or str(tmp_path / "store"), "--set", "nightly", *extra]  # fmt: skip
    if window:
        args += ["--since", window[0], "--until", window[1]]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)  # fmt: skip


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out + err


def _nights_in(store: Path | str, version: str, night_of: dict[str, str]) -> set[str]:
    from golden_distill.datasets.schema import make_case_id

    by_case = {make_case_id("native", rid): night for rid, night in night_of.items()}
    ids = open_set(str(store), f"nightly@{version}").read_table().column("case_id").to_pylist()
    return {by_case[i] for i in ids}


def test_two_windowed_runs_at_once_on_s3_both_windows_published(
    nights,
    tmp_path,
    s3_endpoint,  # noqa: F811
    monkeypatch,
):
    """The same race against a bucket (moto server): the lock and the head's compare-and-swap
    are conditional writes there (If-None-Match / If-Match)."""
    import s3fs

    recordings, night_of = nights
    creds = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": s3_endpoint,
    }
    for name, value in creds.items():
        monkeypatch.setenv(name, value)
    bucket = f"golden-cc-{uuid.uuid4().hex[:10]}"
    s3fs.S3FileSystem(skip_instance_cache=True).mkdir(bucket)
    store = f"s3://{bucket}/store"
    runs = [
        _run(tmp_path, recordings, window, store=store, env_extra=creds)
        for window in (NIGHT_1, NIGHT_2)
    ]
    for code, text in [_finish(p) for p in runs]:
        assert code == 0, text[-3000:]
    fs = StoreFS(store)
    versions = list_versions(fs, "nightly")
    assert len(versions) == 2
    latest = read_alias(fs, SetLayout("nightly"), "latest")
    assert latest == versions[-1]
    assert read_manifest(fs, "nightly", latest)["parent_version"] == versions[0]
    assert _nights_in(store, latest, night_of) == {NIGHT_1[0], NIGHT_2[0]}
    assert not fs.exists("nightly/_lock")


def test_two_windowed_runs_at_once_both_windows_published(nights, tmp_path):
    recordings, night_of = nights
    first = _run(tmp_path, recordings, NIGHT_1)
    second = _run(tmp_path, recordings, NIGHT_2)
    outcomes = [_finish(first), _finish(second)]
    for code, text in outcomes:
        assert code == 0, text[-3000:]
    store = StoreFS(str(tmp_path / "store"))
    versions = list_versions(store, "nightly")
    assert len(versions) == 2
    latest = read_alias(store, SetLayout("nightly"), "latest")
    assert latest == versions[-1]
    # the later version grew from the earlier one: both windows are in it
    assert read_manifest(store, "nightly", latest)["parent_version"] == versions[0]
    assert _nights_in(tmp_path / "store", latest, night_of) == {NIGHT_1[0], NIGHT_2[0]}
    assert not (tmp_path / "store" / "nightly" / "_lock").exists()  # released


def test_windowed_and_rebuild_runs_at_once_lose_no_window(nights, tmp_path):
    recordings, night_of = nights
    windowed = _run(tmp_path, recordings, NIGHT_1)
    rebuild = _run(tmp_path, recordings, ("2026-11-28", "2026-12-01"), "--rebuild")
    for code, text in (_finish(windowed), _finish(rebuild)):
        assert code == 0, text[-3000:]
    store = StoreFS(str(tmp_path / "store"))
    latest = read_alias(store, SetLayout("nightly"), "latest")
    assert NIGHT_1[0] in _nights_in(tmp_path / "store", latest, night_of)
    assert len(list_versions(store, "nightly")) == 2


@pytest.mark.parametrize("point", ["claimed", "staged", "visible"])
def test_run_killed_at_a_publish_step_is_repaired_by_the_next_run(nights, tmp_path, point):
    recordings, night_of = nights
    code, text = _finish(_run(tmp_path, recordings, NIGHT_1))
    assert code == 0, text[-3000:]
    store = StoreFS(str(tmp_path / "store"))
    first = read_alias(store, SetLayout("nightly"), "latest")

    killed = _run(tmp_path, recordings, NIGHT_2, pause=point)
    wait_paused(killed, point)
    killed.kill()
    killed.wait(30)
    assert read_alias(store, SetLayout("nightly"), "latest") == first
    assert (tmp_path / "store" / "nightly" / "_lock").exists()  # the dead run's lock stays

    code, text = _finish(_run(tmp_path, recordings, NIGHT_2))
    assert code == 0, text[-3000:]
    latest = read_alias(store, SetLayout("nightly"), "latest")
    assert latest != first and parse_version(latest) > parse_version(first)
    assert _nights_in(tmp_path / "store", latest, night_of) == {NIGHT_1[0], NIGHT_2[0]}
    versions = list_versions(store, "nightly")
    if point == "visible":  # the dead run's version was adopted; the rerun grew from it
        assert "adopted nightly@" in text
        assert len(versions) == 3 and versions[-1] == latest
        adopted = versions[1]
        assert read_manifest(store, "nightly", adopted)["parent_version"] == first
        assert read_manifest(store, "nightly", latest)["parent_version"] == adopted
    else:  # nothing of the dead run showed: the rerun published the window
        assert versions == [first, latest]
        assert read_manifest(store, "nightly", latest)["parent_version"] == first


def test_a_run_that_cannot_get_the_set_fails_naming_the_holder(nights, tmp_path):
    """Another writer holds the set and the run may not wait: it fails before reading anything,
    exit non-zero, naming the holder; nothing is published."""
    from golden_distill.datasets.store.set_lock import SetLock

    recordings, _ = nights
    store = StoreFS(str(tmp_path / "store"))
    with SetLock(store, "nightly", "erase").hold():
        code, text = _finish(_run(tmp_path, recordings, NIGHT_1, wait=0))
    assert code != 0
    assert "failed in stage 'lock'" in text and f"erase by pid {os.getpid()}" in text
    assert list_versions(store, "nightly") == []
