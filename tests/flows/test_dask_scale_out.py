"""The same flow on a Dask LocalCluster of 2 workers publishes the same content as a local run,
and the workers use the flow's Prefect API instead of each booting a private server."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def _ephemeral_server_running() -> bool:
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer._instances.get(None)
    return bool(server is not None and server.running)


def test_dask_run_matches_local_run(
    prefect_api, pseudonym_key, corpus, tmp_path, events, shard_events, write_config
):
    from distributed import Client, LocalCluster

    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    source, truth = corpus
    store = tmp_path / "store"
    local_cfg = write_config(tmp_path / "local" / "config.yaml", truth.opt_out_tenant)
    dask_cfg = write_config(tmp_path / "dask" / "config.yaml", truth.opt_out_tenant)
    common = {
        "sources": [str(source)],
        "source_format": "native",
        "store_url": str(store),
        "set_name": "scale",
    }

    local_version = run_distill(DistillParams(config_path=str(local_cfg), **common))
    local = open_set(str(store), f"scale@{local_version}").read_table()

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        events.clear()
        # a separate work dir: nothing cached, every shard really runs on the cluster
        dask_version = run_distill(
            DistillParams(
                config_path=str(dask_cfg),
                dask_address=cluster.scheduler_address,
                force=True,
                **common,
            )
        )
        ran_on = client.run(_ephemeral_server_running)
    assert len(ran_on) == 2
    assert not any(ran_on.values()), "a Dask worker booted its own Prefect API server"
    assert [d["cached"] for d in shard_events(events)] == [False] * len(shard_events(events))
    assert dask_version != local_version  # force: a new version, to compare its content
    remote = open_set(str(store), f"scale@{dask_version}").read_table().sort_by("case_id")
    local = local.sort_by("case_id")
    assert remote.column("case_id").to_pylist() == local.column("case_id").to_pylist()
    differing = [c for c in local.column_names if not local.column(c).equals(remote.column(c))]
    assert not differing, f"columns differ between the local and the Dask run: {differing}"
