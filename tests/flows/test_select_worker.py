"""With the process runner the global select+dedup runs in a one-worker pool of its own
(flows/engine.py): a failure there still fails the run with its stage and a message, as it
does in the flow's own process."""

from __future__ import annotations

import pytest

from golden_distill.flows.tasks.jobs import ShardResult


def test_a_failing_select_in_its_worker_fails_with_its_stage(
    prefect_api, tmp_path, write_config, monkeypatch
) -> None:
    from prefect import flow

    from golden_distill.flows.engine import PrefectEngine
    from golden_distill.flows.errors import StageError
    from golden_distill.flows.params import DistillParams
    from golden_distill.flows.runners import ShardRunners

    pools = []
    one_worker = ShardRunners.one_worker

    def counted(self):  # type: ignore[no-untyped-def]
        pools.append(1)
        return one_worker(self)

    monkeypatch.setattr(ShardRunners, "one_worker", counted)

    config = write_config(tmp_path / "config.yaml", "tenant-x", task_runner="process")
    resolved = DistillParams(config_path=str(config), sources=[str(tmp_path)]).resolve()
    gone = tmp_path / "work" / "shards" / "gone"
    lost = ShardResult(
        index=0,
        label="shard-0",
        cache_key=None,
        candidates_path=str(gone / "candidates.parquet"),
        signatures_path=str(gone / "signatures.parquet"),
        decisions_path=str(gone / "decisions.parquet"),
        quarantine_path=str(gone / "quarantine.jsonl"),
    )

    @flow(name="select-worker-failure")
    def select_only() -> object:
        with PrefectEngine(resolved) as engine:
            return engine.select([lost], None)

    with pytest.raises(StageError) as failed:
        select_only()
    assert pools == [1]  # it ran in the select worker, not in the flow's process
    assert failed.value.stage in ("select", "dedup")
    assert failed.value.detail  # says what went wrong, never a bare traceback
