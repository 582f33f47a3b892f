"""Publishing gathers the representatives' redacted rows into parts (flows/tasks/gather_body.py):
in one process, or from the front in this one and from the back in a helper process
(datasets/front_and_back.py). Both give the same rows, counts and ids, and a case id found in
two redaction files is published once, from the first file, whichever process read the later
copy."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

#: What the select step gives each representative (the rest comes from the redacted files).
FROM_SELECTION = ["cluster_id", "cluster_size", "split", "funnels", "funnel_reasons", "value_score"]


@pytest.fixture(scope="module")
def published_rows(tmp_path_factory, corpus) -> pl.DataFrame:
    """The cases of one real run (the generator's corpus), as published."""
    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    from .conftest import TEST_KEY, _write_config

    store = tmp_path_factory.mktemp("gather-store")
    source, truth = corpus
    config = _write_config(store / "config.yaml", truth.opt_out_tenant)
    params = DistillParams(
        config_path=str(config),
        set_name="base",
        sources=[str(source)],
        source_format="native",
        store_url=str(store),
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GOLDEN_PSEUDONYM_KEY", TEST_KEY)
        version = run_distill(params, local=True)
    return pl.from_arrow(open_set(str(store), f"base@{version}").read_table())


def _redaction_files(rows: pl.DataFrame, folder: Path, files: int) -> tuple[list[str], set[str]]:
    """``rows`` cut into ``files`` redaction outputs without the selection's columns, the last
    one also holding the first file's first three cases with another answer; those ids."""
    folder.mkdir()
    plain = rows.drop([*FROM_SELECTION, "trust"])
    size = -(-plain.height // files)
    chunks = [plain.slice(i * size, size) for i in range(files)]
    repeated = chunks[0].head(3)
    altered = repeated.with_columns(user_input=pl.lit("a later copy"))
    chunks[-1] = pl.concat([chunks[-1], altered])
    paths = []
    for n, chunk in enumerate(chunks):
        path = folder / f"redacted-{n}.parquet"
        chunk.write_parquet(path)
        paths.append(str(path))
    return paths, set(repeated.get_column("case_id").to_list())


@pytest.mark.parametrize("two", [False, True], ids=["one-process", "two-processes"])
def test_gathered_parts_hold_every_representative_once(published_rows, tmp_path, two, monkeypatch):
    from golden_distill.datasets import front_and_back
    from golden_distill.datasets.schema import GOLDEN_SCHEMA
    from golden_distill.flows.tasks.global_steps import write_publish_parts
    from golden_distill.flows.tasks.run_stats import published_stats

    submitted: list[int] = []

    class CountingPool(front_and_back.ProcessPoolExecutor):
        def submit(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted.append(1)
            return super().submit(*args, **kwargs)

    monkeypatch.setattr(front_and_back, "ProcessPoolExecutor", CountingPool)
    rows = published_rows
    assert rows.height > 20  # enough cases for every file to hold some
    paths, repeated = _redaction_files(rows, tmp_path / "redacted", files=6)
    reps = rows.select("case_id", *FROM_SELECTION)
    parts, stats, ids = write_publish_parts(paths, reps, tmp_path / "parts", two=two)

    assert (len(submitted) > 0) == two  # the helper really gathered some parts
    assert ids == set(rows.get_column("case_id").to_list())
    got = pl.concat([pl.read_parquet(p) for p in parts])
    assert got.columns == GOLDEN_SCHEMA.names
    assert got.height == rows.height  # each case once
    answers = got.filter(pl.col("case_id").is_in(sorted(repeated))).get_column("user_input")
    assert "a later copy" not in answers.to_list()  # the first file's copy
    expected = rows.sort("case_id")
    assert got.sort("case_id").equals(expected)  # trust too: derived again from the rows
    assert stats["published"] == rows.height
    assert stats["coverage"] == published_stats(expected)["coverage"]


def test_a_part_left_empty_by_repeated_ids_is_not_published(published_rows, tmp_path):
    """A file whose every case an earlier file held adds no part."""
    from golden_distill.flows.tasks.global_steps import write_publish_parts

    rows = published_rows.head(12).drop([*FROM_SELECTION, "trust"])
    folder = tmp_path / "redacted"
    folder.mkdir()
    paths = []
    for n in range(4):  # the same cases four times
        rows.write_parquet(folder / f"redacted-{n}.parquet")
        paths.append(str(folder / f"redacted-{n}.parquet"))
    reps = published_rows.head(12).select("case_id", *FROM_SELECTION)
    parts, stats, ids = write_publish_parts(paths, reps, tmp_path / "parts", two=True)
    assert len(parts) == 1 and stats["published"] == 12 and len(ids) == 12
    assert sorted(p.name for p in (tmp_path / "parts").glob("part-*")) == [parts[0].name]


def test_two_cores_only_for_a_large_set():
    from golden_distill.flows.tasks.global_steps import TWO_CORES_FROM_ROWS, gather_on_two_cores

    assert not gather_on_two_cores(TWO_CORES_FROM_ROWS - 1, 100)
    assert not gather_on_two_cores(TWO_CORES_FROM_ROWS, 2)
