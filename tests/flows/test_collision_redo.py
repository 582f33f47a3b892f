"""After the redaction rounds, a task that ran with older key digests (an earlier round's, or a
cached result of another run) is redone only if it would now decide differently; its redo has
its own cache key and folder and loads the final digests."""

from __future__ import annotations

import numpy as np

from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.tasks.jobs import RedactJob, RedactResult
from golden_distill.flows.tasks.redact import collision_redo_jobs
from golden_distill.redaction.key_digests import PublishedDigests, RunKeys, digest_array


def _job(index: int) -> RedactJob:
    return RedactJob(
        index=index,
        label=f"shard-{index}",
        candidates_path=f"/w/shards/{index}/candidates.parquet",
        case_ids=(f"c_{index}",),
        config=PipelineConfig(),
        out_dir=f"/w/shards/{index}/redacted-old",
        cache_key=f"{index:064d}",
        run_keys_path="/w/run-keys/old.npz",
    )


def _result(index: int, plain: list[int], fingerprint: str) -> RedactResult:
    empty = digest_array([])
    published = PublishedDigests(digest_array(plain), empty, empty, empty, fingerprint)
    return RedactResult(
        index=index,
        label=f"shard-{index}",
        cache_key=f"{index:064d}",
        redacted_path=f"/w/shards/{index}/redacted-old/redacted.parquet",
        quarantine_path="",
        published_keys=published,
    )


def test_only_tasks_that_would_decide_differently_are_redone() -> None:
    final = RunKeys(originals=digest_array([10, 20, 30]), bases=digest_array([11, 21, 31]))
    results = [
        _result(0, [20], "older"),  # published a pseudonym that is an original now
        _result(1, [99], "older"),  # nothing it decided depends on the new keys
        _result(2, [20], final.fingerprint),  # ran with the final digests already
    ]
    redo = collision_redo_jobs([_job(i) for i in range(3)], results, final, "/w/run-keys/new.npz")
    assert [job.index for job in redo] == [0]
    (job,) = redo
    assert job.run_keys_path == "/w/run-keys/new.npz"
    assert job.cache_key not in (None, _job(0).cache_key)
    assert job.out_dir != _job(0).out_dir and job.out_dir.startswith("/w/shards/0/redacted-")
    assert np.array_equal(final.originals, digest_array([30, 20, 10]))
