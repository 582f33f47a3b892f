"""The run's pseudonym key id reaches every redaction job, so a worker holding another key refuses
to redact (its pseudonyms would not match the rest of the set) instead of publishing them."""

from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.redact_stage import (
    chosen_by_shard,
    known_bases_paths,
    make_keys_jobs,
    redact_jobs,
)
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.tasks.keys import collect_keys
from golden_distill.flows.tasks.redact import redact_shard
from golden_distill.redaction.key_digests import RunKeys
from golden_distill.redaction.keys import ENV_VAR, PseudonymKey
from golden_distill.redaction.known_bases import KnownBases

RUN_SECRET = b"the-runs-pseudonym-key-0123456789abcdef"
WORKER_SECRET = b"a-workers-other-pseudonym-key-0123456789"


def _chosen(tmp_path: Path, key_id: str) -> tuple[SimpleNamespace, list]:
    candidates = tmp_path / "candidates.parquet"
    rows = [{"case_id": f"c_{i}", "tenant_id": "t-acme", "user_input": "hi"} for i in range(3)]
    pq.write_table(pa.Table.from_pylist(rows, schema=CASE_SCHEMA), candidates)
    shard = ShardResult(
        index=0,
        label="shard-0",
        cache_key="k" * 64,
        candidates_path=str(candidates),
        signatures_path="",
        decisions_path="",
        quarantine_path="",
    )
    prepared = SimpleNamespace(resolved=SimpleNamespace(config=PipelineConfig()), key_id=key_id)
    ids = pl.Series(["c_0", "c_2"], dtype=pl.String)
    return prepared, chosen_by_shard(prepared, [shard], ids, set())


def _jobs(tmp_path: Path, key_id: str) -> list:
    prepared, chosen = _chosen(tmp_path, key_id)
    return redact_jobs(prepared, chosen, 0, "")


def test_redact_jobs_carry_the_runs_key_id(tmp_path: Path):
    run_key_id = PseudonymKey(RUN_SECRET, "env").key_id
    (job,) = _jobs(tmp_path, run_key_id)
    assert job.case_ids == ("c_0", "c_2")
    assert job.key_id == run_key_id


def test_a_worker_with_another_key_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run_key_id = PseudonymKey(RUN_SECRET, "env").key_id
    (job,) = _jobs(tmp_path, run_key_id)
    monkeypatch.setenv(ENV_VAR, WORKER_SECRET.decode())
    with pytest.raises(RuntimeError, match="pseudonym key"):
        redact_shard.fn(job)
    assert not (Path(job.out_dir) / "redacted.parquet").exists()

    monkeypatch.setenv(ENV_VAR, RUN_SECRET.decode())  # the run's own key: redaction proceeds
    result = redact_shard.fn(job)
    assert Path(result.redacted_path).exists()


def test_the_key_pass_refuses_another_key_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run_key_id = PseudonymKey(RUN_SECRET, "env").key_id
    prepared, chosen = _chosen(tmp_path, run_key_id)
    (job,) = make_keys_jobs(prepared, chosen, 0)
    assert [p.case_ids for p in job.parts] == [("c_0", "c_2")] and job.key_id == run_key_id
    monkeypatch.setenv(ENV_VAR, WORKER_SECRET.decode())
    with pytest.raises(RuntimeError, match="pseudonym key"):
        collect_keys.fn(job)
    monkeypatch.setenv(ENV_VAR, RUN_SECRET.decode())
    result = collect_keys.fn(job)
    assert result.cases == 2 and result.digests.keys >= 1  # the tenant key of both cases


def test_the_key_pass_leaves_its_base_pseudonyms_for_the_redaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key pass writes the shard's base pseudonyms where the flow says (private, no raw
    key); the redaction job reads them and publishes what it publishes without them."""
    monkeypatch.setenv(ENV_VAR, RUN_SECRET.decode())
    run_key_id = PseudonymKey(RUN_SECRET, "env").key_id
    prepared, chosen = _chosen(tmp_path, run_key_id)
    (bases_path,) = known_bases_paths(prepared, chosen, 0)
    assert Path(bases_path).parent == tmp_path and Path(bases_path).name.startswith("key-bases-")
    (keys_job,) = make_keys_jobs(prepared, chosen, 0, [bases_path])
    result = collect_keys.fn(keys_job)
    run_keys = tmp_path / "run-keys.npz"
    run_keys.write_bytes(RunKeys.merge([result.digests]).to_bytes())
    assert stat.S_IMODE(Path(bases_path).stat().st_mode) == 0o600
    known = KnownBases.from_bytes(Path(bases_path).read_bytes())
    assert len(known) == result.digests.keys >= 1 and b"t-acme" not in Path(bases_path).read_bytes()

    (with_bases,) = redact_jobs(prepared, chosen, 0, str(run_keys), [bases_path])
    (without,) = redact_jobs(prepared, chosen, 0, str(run_keys))
    assert with_bases.known_bases_path == bases_path and without.known_bases_path is None
    without = replace(without, out_dir=str(tmp_path / "plain"), cache_key=None)
    a, b = redact_shard.fn(with_bases), redact_shard.fn(without)
    assert pq.read_table(a.redacted_path).equals(pq.read_table(b.redacted_path))
    assert pq.read_table(a.redacted_path).column("tenant_id").to_pylist()[0] != "t-acme"
    Path(bases_path).unlink()  # gone (pruned, a cached key pass): computed again, the same
    c = redact_shard.fn(replace(with_bases, out_dir=str(tmp_path / "again"), cache_key=None))
    assert pq.read_table(c.redacted_path).equals(pq.read_table(a.redacted_path))
    Path(bases_path).write_bytes(b"\x00not an arrow stream")  # damaged: ignored, the same
    d = redact_shard.fn(replace(with_bases, out_dir=str(tmp_path / "damaged"), cache_key=None))
    assert pq.read_table(d.redacted_path).equals(pq.read_table(a.redacted_path))
