"""Dedup on generator output, checked against the planted truth (families, same-text pairs)."""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import defaultdict
from pathlib import Path

import orjson
import polars as pl
import pytest
from dedup_helpers import deduplicate

from golden_distill.datasets.ingest import ingest
from golden_distill.filters.dedup import DedupConfig, cluster, signatures
from golden_distill.synthetic import Truth, generate_corpus, load_truth


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[pl.DataFrame, Truth]:
    root: Path = tmp_path_factory.mktemp("dedup-corpus")
    generate_corpus(root / "raw", sessions=300, seed=11)
    sources = sorted(str(p) for p in (root / "raw").glob("recordings-*"))
    ingest(sources, root / "cases", fmt="native")
    frame = pl.read_parquet(root / "cases" / "cases")
    # funnels would set these; a stable pseudo-random score per case is enough here
    scores = [int(hashlib.sha256(c.encode()).hexdigest()[:8], 16) / 2**32 for c in frame["case_id"]]
    frame = frame.with_columns(
        pl.Series("value_score", scores, dtype=pl.Float64),
        pl.lit(["high_value_mutating"], dtype=pl.List(pl.String)).alias("funnels"),
    )
    return frame, load_truth(root / "raw")


def _record_ids(frame: pl.DataFrame) -> dict[str, str]:
    rid = frame.get_column("source").struct.field("source_record_id")
    return dict(zip(frame.get_column("case_id"), rid, strict=True))


def _pairs(groups) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for members in groups:
        out.update(itertools.combinations(sorted(members), 2))
    return out


def test_planted_families_are_recovered(corpus):
    frame, truth = corpus
    table = cluster(signatures(frame)).table
    rid = _record_ids(frame)
    predicted: dict[str, set[str]] = defaultdict(set)
    for case_id, cluster_id in zip(table["case_id"], table["cluster_id"], strict=True):
        predicted[cluster_id].add(rid[case_id])
    assert sorted(rid.values()) == sorted(truth.records)  # every valid record took part
    # families span tenants; a tenant is its own partition, so the truth is per tenant
    tenant = dict(zip(rid.values(), frame.get_column("tenant_id"), strict=True))
    by_tenant = [
        [r for r in members if tenant[r] == t]
        for members in truth.families().values()
        for t in {tenant[r] for r in members}
    ]
    got, want = _pairs(predicted.values()), _pairs(by_tenant)
    assert all(tenant[a] == tenant[b] for a, b in got)  # never across tenants
    assert want, "the corpus should plant near-duplicate families"
    precision = len(got & want) / len(got)
    recall = len(got & want) / len(want)
    assert precision >= 0.95, precision
    assert recall >= 0.95, recall


def test_same_text_different_writes_are_never_merged(corpus):
    frame, truth = corpus
    pairs = truth.same_text_pairs
    assert pairs
    case_of = {r: c for c, r in _record_ids(frame).items()}
    loose = DedupConfig(distance_threshold=1.0)  # text alone could merge anything here
    table = cluster(signatures(frame, loose), loose).table
    cluster_of = dict(zip(table["case_id"], table["cluster_id"], strict=True))
    for a, b in pairs:
        assert cluster_of[case_of[a]] != cluster_of[case_of[b]]


def _with_other_ids_and_amounts(row: dict) -> dict:
    """The same run for another order and other amounts (text and arguments alike)."""

    def swap(text: str | None) -> str | None:
        if text is None:
            return None
        text = re.sub(r"ORD-\d+", "ORD-424242", text)
        return re.sub(r"\d+\.\d\d", "77.10", text)

    out = dict(row)
    out["case_id"] = row["case_id"] + "-twin"
    out["user_input"] = swap(row["user_input"])
    out["steps"] = [{**s, "arguments": swap(s["arguments"])} for s in row["steps"] or []]
    return out


def test_runs_differing_only_in_ids_and_amounts_are_exact_duplicates(corpus):
    frame, _ = corpus
    text = pl.col("user_input")
    has_both = frame.filter(text.str.contains(r"ORD-\d+") & text.str.contains(r"\d\.\d\d")).head(5)
    assert has_both.height > 0
    twins = pl.DataFrame(
        [_with_other_ids_and_amounts(r) for r in has_both.to_dicts()], schema=frame.schema
    )
    for original, twin in zip(has_both.to_dicts(), twins.to_dicts(), strict=True):
        assert original["user_input"] != twin["user_input"]
        assert [orjson.loads(s["arguments"] or "null") for s in original["steps"]] != [
            orjson.loads(s["arguments"] or "null") for s in twin["steps"]
        ] or not original["steps"]
    table = cluster(signatures(pl.concat([has_both, twins]))).table
    for case_id in has_both["case_id"]:
        pair = table.filter(pl.col("case_id").is_in([case_id, case_id + "-twin"]))
        assert pair["cluster_id"].n_unique() == 1
        assert pair["exact_hash"].n_unique() == 1
        assert set(pair["merged_by"]) == {"self", "exact"}


def test_same_clusters_and_representatives_regardless_of_input_order(corpus):
    frame, _ = corpus
    first = deduplicate(frame)
    for seed in (3, 4):
        again = deduplicate(frame.sample(fraction=1.0, shuffle=True, seed=seed))
        assert again.clusters.equals(first.clusters)
        assert again.kept.equals(first.kept)
        assert again.representatives.equals(first.representatives)


def test_every_case_is_kept_or_has_a_kept_representative(corpus):
    frame, _ = corpus
    result = deduplicate(frame)
    kept = set(result.kept["case_id"])
    assert result.clusters.height == frame.height
    reps = result.clusters.filter(pl.col("rank") == 0)
    assert set(reps["case_id"]) == kept
    assert result.report.removed_exact + result.report.removed_near == frame.height - len(kept)
    assert result.representatives.height == len(kept)
    assert result.representatives["cluster_size"].sum() == frame.height


@pytest.mark.parametrize("batch_rows", [2, 7])
def test_features_built_batch_by_batch_give_the_same_clusters(corpus, monkeypatch, batch_rows):
    """Groups never link across each other: building the features a few groups at a time
    (bounded memory, filters/dedup/cluster.py) must give exactly the all-at-once clusters."""
    import importlib

    cluster_module = importlib.import_module("golden_distill.filters.dedup.cluster")
    frame, _ = corpus
    cfg = DedupConfig(large_block_size=3)  # also split large groups into k-means partitions
    sigs = signatures(frame, cfg)
    whole = cluster(sigs, cfg)
    batches: list[int] = []
    original = cluster_module._link_batch
    monkeypatch.setattr(cluster_module, "FEATURE_BATCH_ROWS", batch_rows)
    monkeypatch.setattr(
        cluster_module,
        "_link_batch",
        lambda table, multi, *rest: batches.append(len(multi)) or original(table, multi, *rest),
    )
    batched = cluster(sigs, cfg)
    assert len(batches) > 5  # really built in many batches
    assert batched.table.equals(whole.table)
    assert batched.stats.clusters == whole.stats.clusters
    assert batched.stats.partitions == whole.stats.partitions > 0
