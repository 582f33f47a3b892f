"""Past one machine: a Dask run whose work folder is an ``s3://`` URL on a real S3-compatible
server (moto) publishes the same content as a local run, and its workers, each in a folder of
its own, share nothing with the flow but that server (sources, work folder and store).

The workers are separate processes (``processes=True``); each one's current directory and
temporary folder are its own, and credentials and endpoint come from the environment only
(``AWS_*``), as on a second machine.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import pytest
from s3_server import s3_endpoint  # noqa: F401 - the session's S3 server (a fixture)

from golden_distill.flows.tasks.redact_body import RESULT_FILE

pytestmark = [pytest.mark.slow, pytest.mark.s3]


def _own_folder(base: str) -> str:
    """Run in each worker: its own folder as current directory and temporary folder."""
    folder = tempfile.mkdtemp(prefix="worker-", dir=base)
    os.chdir(folder)
    os.environ["TMPDIR"] = folder
    tempfile.tempdir = folder
    return folder


def _files(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, int]:
    """Every file under ``root`` (outside ``skip``) with its size."""
    found = {}
    for path in root.rglob("*"):
        if path.is_file() and not any(path.is_relative_to(s) for s in skip):
            found[str(path.relative_to(root))] = path.stat().st_size
    return found


def _s3_environment(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    """Credentials and endpoint from the environment only: no storage_options anywhere."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(name, value)


def test_a_work_folder_in_a_missing_bucket_fails_before_any_task(
    s3_endpoint,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    from golden_distill.flows.errors import StageError
    from golden_distill.flows.params import DistillParams
    from golden_distill.flows.preflight import validate

    _s3_environment(monkeypatch, s3_endpoint)
    missing = f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/work"
    params = DistillParams(sources=["x.jsonl"], store_url=str(tmp_path / "s"), work_dir=missing)
    with pytest.raises(StageError, match="work folder s3://no-such-bucket") as caught:
        validate(params)
    assert caught.value.stage == "validate"


def test_dask_run_on_an_s3_work_folder_matches_a_local_run(
    prefect_api,
    pseudonym_key,
    corpus,
    tmp_path,
    events,
    shard_events,
    write_config,
    s3_endpoint,  # noqa: F811
    monkeypatch,
):
    import s3fs
    from distributed import Client, LocalCluster

    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams
    from golden_distill.flows.work_folder import STATE_ENV

    source, truth = corpus
    _s3_environment(monkeypatch, s3_endpoint)
    bucket = f"golden-work-{uuid.uuid4().hex[:10]}"
    s3 = s3fs.S3FileSystem(skip_instance_cache=True)
    s3.mkdir(bucket)
    work_url, store_url = f"s3://{bucket}/work", f"s3://{bucket}/store"
    recordings = f"s3://{bucket}/recordings"
    for file in sorted(source.iterdir()):
        if file.name.startswith("recordings-"):
            s3.put_file(str(file), f"{recordings}/{file.name}")

    local_store = tmp_path / "local" / "store"
    local_cfg = write_config(tmp_path / "local" / "config.yaml", truth.opt_out_tenant)
    # both runs read the same recordings from the bucket (so their `source.uri` are equal)
    common = {"sources": [f"{recordings}/"], "source_format": "native", "set_name": "scale"}
    local_version = run_distill(
        DistillParams(config_path=str(local_cfg), store_url=str(local_store), **common)
    )
    local = open_set(str(local_store), f"scale@{local_version}")
    n_shards = len(shard_events(events))
    assert n_shards >= 3

    dask_cfg = write_config(tmp_path / "dask" / "config.yaml", truth.opt_out_tenant)
    workers_base, flow_state = tmp_path / "workers", tmp_path / "flow-state"
    workers_base.mkdir()
    before = _files(tmp_path, skip=(workers_base, flow_state))

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        folders = client.run(_own_folder, str(workers_base))
        # the flow's machine-local state (fingerprint memo, publish parts) is set only here,
        # after the workers started: they never see it
        monkeypatch.setenv(STATE_ENV, str(flow_state))
        events.clear()
        from distributed import get_task_stream

        params = DistillParams(
            config_path=str(dask_cfg),
            store_url=store_url,
            dask_address=cluster.scheduler_address,
            work_dir=work_url,
            **common,
        )
        with get_task_stream(client) as stream:
            dask_version = run_distill(params)
        cwd = client.run(os.getcwd)
        ran_on = {entry["worker"] for entry in stream.data}
        shards = shard_events(events)
        redactions = shard_events(events, "redact_done")
        # a rerun finds every shard's cached result in the bucket: nothing is recomputed
        events.clear()
        assert run_distill(params) == dask_version
        rerun = shard_events(events)
        assert rerun and all(d["cached"] for d in rerun)

    # the shard and redaction tasks ran on the workers, each in its own folder
    assert len(folders) == 2 and cwd == folders
    assert ran_on and ran_on <= set(folders)
    assert len(shards) == n_shards and not any(d["cached"] for d in shards)
    assert redactions, "no redaction task ran"

    # the work folder is on S3: every shard's files and Prefect's cached results
    set_work = f"{work_url}/sets/scale"  # the set's own folder inside the configured one
    listed = s3.ls(f"{set_work}/shards", detail=False)
    shard_dirs = [d for d in listed if not Path(d).name.startswith("selection-")]
    assert len(shard_dirs) == n_shards
    # the selection's large frames (flows/tasks/frame_ref.py) went to the bucket too
    (selection_dir,) = [d for d in listed if Path(d).name.startswith("selection-")]
    spilled = {Path(p).name for p in s3.ls(selection_dir, detail=False)}
    assert spilled == {
        "decisions.parquet",
        "clusters.parquet",
        "quota_rows.parquet",
    }
    redacted = []
    for folder in shard_dirs:
        names = {Path(p).name for p in s3.ls(folder, detail=False)}
        assert {"candidates.parquet", "decisions.parquet", "signatures.parquet"} <= names
        assert "quarantine.jsonl" in names
        for name in (n for n in names if n.startswith("redacted-")):
            redacted.append({Path(p).name for p in s3.ls(f"{folder}/{name}", detail=False)})
    assert len(redacted) == len(redactions)
    # (with the shard's result, which a redaction group reuses: flows/tasks/redact.py)
    assert all(r == {"redacted.parquet", "quarantine.jsonl", RESULT_FILE} for r in redacted)
    assert len(s3.ls(f"{set_work}/prefect-results", detail=False)) >= n_shards

    # nothing was written to a local folder: not next to the flow's config, nothing left in
    # the workers' own folders; the flow keeps only its fingerprint memo
    assert _files(tmp_path, skip=(workers_base, flow_state)) == before
    left = [p for p in workers_base.rglob("*") if p.suffix in (".parquet", ".jsonl", ".pkl")]
    assert not left, f"a worker left intermediate files on its disk: {left}"
    assert {Path(p).name for p in _files(flow_state)} <= {"fingerprints.json"}

    # the same published content as the local run
    remote = open_set(store_url, f"scale@{dask_version}")
    a, b = local.read_table().sort_by("case_id"), remote.read_table().sort_by("case_id")
    assert a.num_rows > 0
    assert a.column("case_id").to_pylist() == b.column("case_id").to_pylist()
    differing = [c for c in a.column_names if not a.column(c).equals(b.column(c))]
    assert not differing, f"columns differ between the local and the S3/Dask run: {differing}"
    counts = ("published", "records_read", "quarantined", "funnels", "removed_by_dedup")
    local_stats, remote_stats = local.manifest["stats"], remote.manifest["stats"]
    assert {k: local_stats.get(k) for k in counts} == {k: remote_stats.get(k) for k in counts}
