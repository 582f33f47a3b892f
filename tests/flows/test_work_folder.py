"""The work folder behind a URL: what tasks write reaches it only when their step succeeds, the
local staging leaves nothing behind, pruning and the cache check work on it, and a local work
folder keeps its raw-data permissions. ``memory://`` stands in for object storage here (a
non-local fsspec filesystem); the S3 run itself is tests/flows/test_dask_s3_work_folder.py."""

from __future__ import annotations

import stat
import tempfile
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.flows.params import DistillParams
from golden_distill.flows.run_config import FlowConfig
from golden_distill.flows.runners import likely_cached
from golden_distill.flows.work_folder import WorkFolder, work_storage_options
from golden_distill.flows.workdir import prune


@pytest.fixture
def remote() -> WorkFolder:
    return WorkFolder(f"memory://work-{uuid.uuid4().hex[:8]}")


def _staging_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("golden-work-*")}


def test_a_remote_task_folder_is_uploaded_when_its_step_succeeds(remote: WorkFolder):
    before = _staging_dirs()
    target = remote.join("shards", "abc")
    with remote.staged(target) as stage:
        table = stage.path / "candidates.parquet"
        pq.write_table(pa.table({"case_id": ["c1", "c2"]}), table)
        (stage.path / "redacted-1").mkdir()
        (stage.path / "redacted-1" / "quarantine.jsonl").write_bytes(b"")
        location = stage.location(table)
        assert not remote.exists(location)  # nothing visible before the step ends
    assert location == f"{target}/candidates.parquet" and location.startswith("memory://")
    assert remote.read_frame(location)["case_id"].to_list() == ["c1", "c2"]
    assert remote.list_names(target) == ["candidates.parquet", "redacted-1"]
    assert remote.exists(f"{target}/redacted-1/quarantine.jsonl")
    assert _staging_dirs() == before  # the private staging folder is gone


def test_a_failed_remote_step_uploads_nothing_and_clears_leftovers(remote: WorkFolder):
    target = remote.join("shards", "abc")
    remote.write_bytes(f"{target}/stale.parquet", b"from an interrupted attempt")
    before = _staging_dirs()
    with pytest.raises(RuntimeError, match="boom"), remote.staged(target) as stage:
        (stage.path / "candidates.parquet").write_bytes(b"half")
        raise RuntimeError("boom")
    assert remote.list_names(target) == []
    assert _staging_dirs() == before


def test_a_local_work_folder_keeps_raw_data_private(tmp_path: Path):
    work = WorkFolder(tmp_path / "work")
    target = work.join("shards", "abc")
    with work.staged(target) as stage:
        assert stage.path == Path(target)  # local: written in place, as before
        file = stage.path / "candidates.parquet"
        file.write_bytes(b"raw")
        work.make_private(stage.path, [file], stop_at=stage.path.parent.parent)
        assert stage.location(file) == str(file)
    assert stat.S_IMODE(Path(target, "candidates.parquet").stat().st_mode) == 0o600
    for folder in (Path(target), Path(target).parent, Path(work.root)):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert work.local_state() == Path(work.root)


def test_pruning_and_the_cache_check_work_on_a_remote_folder(remote: WorkFolder):
    keep_key, old_key = "a" * 64, "b" * 64
    for name in ("keep", "old"):
        remote.write_bytes(remote.join("shards", name, "candidates.parquet"), b"x")
    results = remote.join("prefect-results")
    for name in (keep_key, old_key, "lock-file"):
        remote.write_bytes(f"{results}/{name}", b"x")
    assert likely_cached([keep_key, old_key], remote, results)
    assert not likely_cached([keep_key, "c" * 64], remote, results)
    assert not likely_cached([keep_key, None], remote, results)

    removed = prune(remote.join("shards"), results, {"keep"}, {keep_key}, remote)
    assert removed == 2
    assert remote.list_names(remote.join("shards")) == ["keep"]
    assert remote.list_names(results) == [keep_key, "lock-file"]


def test_a_remote_work_folder_keeps_the_flows_own_files_in_a_private_local_folder(
    remote: WorkFolder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GOLDEN_WORK_STATE", str(tmp_path / "state"))
    state = remote.local_state()
    assert state.parent == tmp_path / "state" and state.is_dir()
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert WorkFolder(remote.root).local_state() == state  # one folder per work URL


def test_work_dir_may_be_a_url_in_config_and_parameters(tmp_path: Path):
    run = FlowConfig(work_dir="s3://bucket/golden-work/")
    assert run.remote_work and run.work_location() == "s3://bucket/golden-work"
    assert run.results_location() == "s3://bucket/golden-work/prefect-results"
    with pytest.raises(ValueError, match="URL"):
        run.results_dir()
    local = FlowConfig(work_dir="relative/work")
    assert isinstance(local.work_dir, Path) and not local.remote_work

    resolved = DistillParams(
        sources=["x.jsonl"], work_dir="s3://bucket/w", store_url=str(tmp_path / "store")
    ).resolve()
    # each set has its own folder inside the configured one (flows/params.set_folders)
    assert resolved.config.run.work_dir == f"s3://bucket/w/sets/{resolved.set_name}"
    assert resolved.work.root == f"s3://bucket/w/sets/{resolved.set_name}"


def test_the_store_options_are_reused_only_for_the_same_protocol():
    options = {"client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}
    assert work_storage_options("s3://w/work", "s3://s/store", options) == options
    assert work_storage_options("gs://w/work", "s3://s/store", options) == {}
    assert work_storage_options("/local/work", "s3://s/store", options) == {}


def test_golden_work_prune_explains_how_a_remote_folder_expires():
    from typer.testing import CliRunner

    from golden_distill.flows.cli import app

    result = CliRunner().invoke(app, ["work", "prune", "--work-dir", "s3://bucket/work"])
    assert result.exit_code == 2
    assert "lifecycle" in result.output


@pytest.mark.slow
def test_a_run_on_a_url_work_folder_publishes_what_a_local_folder_run_does(
    pseudonym_key, corpus, tmp_path, events, shard_events, write_config, monkeypatch
):
    """The whole flow (lighter local mode: no Prefect) with a ``memory://`` work folder: every
    intermediate file goes through WorkFolder, the content equals a local-folder run's, and a
    rerun takes its results from the URL work folder."""
    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill

    monkeypatch.setenv("GOLDEN_WORK_STATE", str(tmp_path / "state"))
    source, truth = corpus
    common = {"sources": [str(source)], "source_format": "native", "store_url": str(tmp_path)}
    on_disk = write_config(tmp_path / "disk" / "config.yaml", truth.opt_out_tenant)
    url = f"memory://work-{uuid.uuid4().hex[:8]}"
    on_url = write_config(tmp_path / "url" / "config.yaml", truth.opt_out_tenant, work_dir=url)
    by_disk = run_distill(
        DistillParams(config_path=str(on_disk), set_name="disk", **common), local=True
    )
    params = DistillParams(config_path=str(on_url), set_name="url", **common)
    by_url = run_distill(params, local=True)
    disk_set = open_set(str(tmp_path), f"disk@{by_disk}")
    url_set = open_set(str(tmp_path), f"url@{by_url}")
    assert len(url_set) > 0
    assert url_set.manifest["content_sha256"] == disk_set.manifest["content_sha256"]

    work = WorkFolder(f"{url}/sets/url")  # the set's own folder inside the configured one
    listed = work.list_names(work.join("shards"))
    shard_dirs = [d for d in listed if not d.startswith("selection-")]
    assert len(listed) == len(shard_dirs) + 1  # the selection's frames (flows/tasks/frame_ref.py)
    assert shard_dirs and all(
        "result.pkl" in work.list_names(work.join("shards", d)) for d in shard_dirs
    )
    assert not (tmp_path / "url" / "work").exists()
    events.clear()
    assert run_distill(params, local=True) == by_url
    done = shard_events(events)
    assert done and all(d["cached"] for d in done)


@pytest.mark.parametrize("where", ["local", "remote"])
def test_read_cases_returns_the_asked_rows_as_polars_reads_them(
    tmp_path: Path, remote: WorkFolder, where: str
):
    import polars as pl

    rows = pa.table(
        {
            "case_id": pa.array([f"c{i}" for i in range(50)], pa.large_string()),
            "steps": pa.array([[{"name": f"t{i}", "seq": i}] for i in range(50)]),
            "score": pa.array([i / 3 for i in range(50)]),
        }
    )
    work = remote if where == "remote" else WorkFolder(tmp_path)
    location = work.join("shards", "s1", "candidates.parquet")
    with work.staged(work.parent(location)) as stage:
        pq.write_table(rows, stage.path / "candidates.parquet")
    wanted = ("c7", "c3", "c42", "absent")
    got = work.read_cases(location, wanted)
    ids = pl.Series(list(wanted), dtype=pl.String)
    polars = work.scan_frame(location).filter(pl.col("case_id").is_in(ids.implode())).collect()
    assert got.column("case_id").to_pylist() == ["c3", "c7", "c42"]  # file order
    assert got.to_pylist() == polars.to_arrow().to_pylist()


def test_read_cases_of_a_damaged_file_raises_instead_of_returning_fewer_rows(tmp_path: Path):
    work = WorkFolder(tmp_path)
    location = str(tmp_path / "candidates.parquet")
    pq.write_table(pa.table({"case_id": [f"c{i}" for i in range(20)]}), location)
    data = Path(location).read_bytes()
    Path(location).write_bytes(data[: len(data) // 2])  # cut short, as a crashed copy would be
    with pytest.raises(pa.ArrowInvalid):
        work.read_cases(location, ("c1", "c2"))
