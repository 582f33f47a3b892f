"""Golden sets the replay tests share: one published from generator data, one from the vendored
tau-bench runs (ingested by the real adapters, published by the real store, read back through
the verifying reader)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from golden_test_data import all_runs_paths

from golden_distill.datasets.ingest import ingest
from golden_distill.datasets.reader import GoldenSet, open_set
from golden_distill.datasets.store.publish import publish_version
from golden_distill.synthetic import generate_corpus


def _publish(sources: list[str], work: Path, name: str) -> tuple[str, str]:
    summary = ingest(sources, work / "canonical")
    table = pa.concat_tables([pq.read_table(p) for p in summary.shards])
    store = str(work / "store")
    version = publish_version(store, name, cases=table).version
    return store, f"{name}@{version}"


@pytest.fixture(scope="session")
def generated_set(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    work = tmp_path_factory.mktemp("replay-generated")
    generate_corpus(work / "corpus", sessions=200, seed=13, shards=1, compress=None)
    return _publish([str(work / "corpus")], work, "generated")


@pytest.fixture(scope="session")
def tau_set(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    work = tmp_path_factory.mktemp("replay-tau")
    return _publish([str(p) for p in all_runs_paths()], work, "tau")


@pytest.fixture(scope="session")
def small_set(generated_set, tmp_path_factory) -> tuple[str, str, list[str], list[str]]:
    """Eight cases of the generated set, republished with funnels (``recovery``, ``other``) and
    splits to select by: (store, ref, case ids, the recovery funnel's case ids)."""
    golden = open_set(*generated_set)
    table = golden.read_table().slice(0, 8)
    funnels = [["recovery"] if i % 2 else ["other"] for i in range(8)]
    table = table.set_column(
        table.schema.get_field_index("funnels"), "funnels", pa.array(funnels, pa.list_(pa.string()))
    )
    splits = pa.array(["regression" if i < 3 else "dev" for i in range(8)])
    table = table.set_column(table.schema.get_field_index("split"), "split", splits)
    store = str(tmp_path_factory.mktemp("plugin") / "store")
    version = publish_version(store, "small", cases=table).version
    ids = table.column("case_id").to_pylist()
    recovery = [i for i, f in zip(ids, funnels, strict=True) if f == ["recovery"]]
    return store, f"small@{version}", sorted(ids), sorted(recovery)


@pytest.fixture(params=["generated", "tau"])
def golden(request: pytest.FixtureRequest) -> GoldenSet:
    store, ref = request.getfixturevalue(f"{request.param}_set")
    return open_set(store, ref)


from pg_schema import pg_url  # noqa: E402

__all__ = ["generated_set", "golden", "pg_url", "small_set", "tau_set"]
