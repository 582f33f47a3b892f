"""Stage errors survive pickling, only I/O failures are retried, and stale work is pruned."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from golden_distill.flows.errors import StageError, find_stage_error, is_transient
from golden_distill.flows.workdir import prune


def test_stage_error_crosses_process_boundaries_and_is_found_in_a_chain():
    error = pickle.loads(pickle.dumps(StageError("redact", "shard a.jsonl: KeyError")))
    assert (error.stage, error.detail) == ("redact", "shard a.jsonl: KeyError")
    try:
        try:
            raise error
        except StageError as inner:
            raise RuntimeError("flow failed") from inner
    except RuntimeError as outer:
        assert find_stage_error(outer) is error
    assert find_stage_error(ValueError("x")) is None


def test_only_storage_and_network_failures_are_transient():
    wrapped = StageError("read", "shard x")
    wrapped.__cause__ = ConnectionResetError("peer reset")
    assert is_transient(wrapped)
    assert is_transient(TimeoutError())
    assert not is_transient(FileNotFoundError("gone"))  # retrying will not bring it back
    assert not is_transient(KeyError("bug"))
    assert not is_transient(None)


def test_prune_keeps_only_what_this_run_used(tmp_path: Path):
    shards, results = tmp_path / "shards", tmp_path / "results"
    for name in ("keep", "old"):
        (shards / name).mkdir(parents=True)
    results.mkdir()
    keep_key, old_key = "a" * 64, "b" * 64
    for name in (keep_key, old_key, "lock-file"):
        (results / name).write_text("x")
    removed = prune(shards, results, keep_dirs={"keep"}, keep_keys={keep_key})
    assert removed == 2
    assert sorted(p.name for p in shards.iterdir()) == ["keep"]
    assert sorted(p.name for p in results.iterdir()) == [keep_key, "lock-file"]


def test_a_library_message_is_withheld_and_logged_locally(tmp_path, monkeypatch):
    from golden_distill.flows.errors import ERROR_LOG_ENV, describe

    log = tmp_path / "work" / "errors.log"
    monkeypatch.setenv(ERROR_LOG_ENV, str(log))
    # what pyarrow/polars say when a value does not convert: the value itself
    exc = ValueError("Could not convert 'jane.doe@example.com' with type str to int64")
    text = describe(exc)
    assert "jane.doe" not in text and "ValueError" in text and str(log) in text
    assert "jane.doe@example.com" in log.read_text()  # kept for debugging, locally
    assert (log.stat().st_mode & 0o777) == 0o600


def test_our_own_and_os_messages_are_kept():
    from golden_distill.datasets.sources.base import SourceError
    from golden_distill.flows.errors import describe

    assert describe(SourceError("/data/x.jsonl: no such file")) == (
        "SourceError: /data/x.jsonl: no such file"
    )
    assert "/data/y" in describe(FileNotFoundError(2, "No such file or directory", "/data/y"))


def test_stage_errors_do_not_chain_the_library_error(tmp_path, monkeypatch):
    from golden_distill.flows.errors import ERROR_LOG_ENV, StageError
    from golden_distill.flows.timing import StageClock

    monkeypatch.setenv(ERROR_LOG_ENV, str(tmp_path / "errors.log"))

    def fails() -> None:
        raise KeyError("Jane Doe")  # a KeyError on a string is the string

    with pytest.raises(StageError) as err:
        StageClock(where="recordings-0001.jsonl").call("funnels", fails)
    assert "Jane Doe" not in str(err.value)
    assert err.value.__cause__ is None and err.value.__suppress_context__
