"""Global clustering: exact and near duplicates, blocks, gates, determinism, large blocks."""

from __future__ import annotations

import random

import polars as pl
import pytest

from golden_distill.filters.dedup.cluster import CLUSTER_SCHEMA, cluster
from golden_distill.filters.dedup.config import DedupConfig
from golden_distill.filters.dedup.signature import signatures

NAMES = ["Aaron Smith", "Maria Garcia", "Olivia Brown", "James Miller", "Emma Davis"]
#: Small free-text variations, so that family members are distinct runs, not exact copies.
EXTRAS = ["", " Thanks.", " Thank you!", " Urgent.", " Cheers", " ASAP please."]

#: Families of paraphrased requests; each family has its own tool path.
FAMILIES = {
    "refund": (
        [
            "Hi, I'm {name}. Please refund order {order}, it arrived damaged.",
            "Hi, I'm {name}, please refund my order {order}, it arrived damaged!",
            "Hi I'm {name} - please refund order {order} because it arrived damaged",
        ],
        [("r", "erp_get_order"), ("w", "fin_issue_refund")],
    ),
    "cancel": (
        [
            "Cancel order {order} right away, I no longer need it. Thanks, {name}",
            "Please cancel order {order} right away, I no longer need it. {name}",
            "Cancel my order {order} right away; I no longer need it. Regards {name}",
        ],
        [("r", "erp_get_order"), ("w", "erp_cancel_order")],
    ),
    "address": (
        [
            "My new address for order {order} is {amount} Main Street, update the shipment",
            "Update the shipment of order {order}: my new address is {amount} Main Street",
            "please update the shipment for order {order}, new address is {amount} Main Street",
        ],
        [("r", "erp_get_order"), ("r", "wms_get_shipment"), ("w", "erp_update_order")],
    ),
}


def _family_cases(dsl, family: str, count: int, rng: random.Random, prefix: str = ""):
    templates, path = FAMILIES[family]
    cases = []
    for i in range(count):
        order = f"ORD-{rng.randrange(10_000, 99_999)}"
        amount = rng.randrange(1, 9_999)
        text = templates[i % len(templates)].format(
            name=rng.choice(NAMES), order=order, amount=amount
        ) + rng.choice(EXTRAS)
        steps = [
            (dsl.write if kind == "w" else dsl.read)(name, {"orderId": order, "amount": amount})
            for kind, name in path
        ]
        cases.append(
            dsl.case(f"{prefix}{family}-{i:03d}", text, steps, value_score=rng.random(), minutes=i)
        )
    return cases


def _corpus(dsl, count: int = 12, seed: int = 7):
    rng = random.Random(seed)
    return [c for f in FAMILIES for c in _family_cases(dsl, f, count, rng)]


def _families_of(table: pl.DataFrame) -> dict[str, str]:
    return dict(zip(table.get_column("case_id"), table.get_column("cluster_id"), strict=True))


def test_planted_families_are_recovered(dsl):
    table = cluster(signatures(dsl.frame(_corpus(dsl)))).table
    clusters = _families_of(table)
    for family in FAMILIES:
        ids = {clusters[c] for c in clusters if c.startswith(family)}
        assert len(ids) == 1, family
    assert table.get_column("cluster_id").n_unique() == len(FAMILIES)
    assert table.schema == pl.Schema(CLUSTER_SCHEMA)


def test_cluster_table_roles_and_reasons(dsl):
    rng = random.Random(1)
    cases = _family_cases(dsl, "refund", 4, rng)
    exact = _family_cases(dsl, "refund", 1, random.Random(99), prefix="x")[0]
    exact.user_input = cases[0].user_input.replace("ORD-", "ORD-9")  # other id, same request
    table = cluster(signatures(dsl.frame([*cases, exact]))).table
    assert table.get_column("cluster_id").n_unique() == 1
    assert table.filter(pl.col("rank") == 0).item(0, "role") == "representative"
    assert table.filter(pl.col("rank") == 0).item(0, "merged_by") == "self"
    assert set(table.get_column("rank").to_list()) == set(range(5))
    assert (table.get_column("cluster_size") == 5).all()
    rep_hash = table.filter(pl.col("rank") == 0).item(0, "exact_hash")
    for row in table.filter(pl.col("rank") > 0).iter_rows(named=True):
        assert row["role"] == "member"
        if row["exact_hash"] == rep_hash:
            assert row["merged_by"] == "exact"
            assert row["distance_to_representative"] == 0.0
        else:
            assert row["merged_by"] == "near"
            assert 0.0 < row["distance_to_representative"] <= DedupConfig().distance_threshold


def test_runs_with_identical_text_but_different_writes_are_never_merged(dsl):
    text = "Please take care of order ORD-1 today"
    cases = [
        dsl.case("a", text, [dsl.write("erp_cancel_order", {"orderId": "ORD-1"})]),
        dsl.case("b", text, [dsl.write("erp_update_order", {"orderId": "ORD-1"})]),
        dsl.case("c", text, [dsl.write("erp_cancel_order", {"orderId": "ORD-1"}, "error")]),
    ]
    anything_goes = DedupConfig(
        distance_threshold=1.0, max_trajectory_distance=1.0, block_on_read_tools=False
    )
    table = cluster(signatures(dsl.frame(cases), anything_goes), anything_goes).table
    assert table.get_column("cluster_id").n_unique() == 3


def test_unrelated_requests_on_the_same_path_are_kept_apart(dsl):
    path = [dsl.read("erp_get_order", {"orderId": "A"}), dsl.write("erp_cancel_order", {})]
    cases = [
        dsl.case("a", "Cancel order ORD-1, I ordered the wrong size", path),
        dsl.case("b", "Our warehouse flooded overnight; stop every shipment to Berlin", path),
    ]
    strict = DedupConfig(distance_threshold=0.2)
    assert (
        cluster(signatures(dsl.frame(cases)), strict).table.get_column("cluster_id").n_unique() == 2
    )


def test_trajectory_gate(dsl):
    lookup = dsl.read("erp_get_order", {"orderId": "A"})
    cancel = dsl.write("erp_cancel_order", {"orderId": "A"})
    text = "Cancel order ORD-1 please, a long enough request to compare on"
    cases = [
        dsl.case("a", text, [lookup, cancel]),
        dsl.case("b", text, [lookup, lookup, cancel]),  # same reads and writes, one more lookup
    ]
    frame = dsl.frame(cases)
    strict = cluster(signatures(frame)).table
    assert strict.get_column("cluster_id").n_unique() == 2
    loose_cfg = DedupConfig(max_trajectory_distance=0.5, distance_threshold=0.5)
    loose = cluster(signatures(frame, loose_cfg), loose_cfg).table
    assert loose.get_column("cluster_id").n_unique() == 1
    assert loose.filter(pl.col("rank") == 1).item(0, "merged_by") == "near"


def test_exact_only_mode_merges_only_exact_duplicates(dsl):
    cfg = DedupConfig(near_duplicates=False)
    table = cluster(signatures(dsl.frame(_corpus(dsl, 6)), cfg), cfg).table
    assert set(table.get_column("merged_by").to_list()) <= {"self", "exact"}
    assert table.get_column("cluster_id").n_unique() == table.get_column("exact_hash").n_unique()


def test_same_clusters_and_representatives_for_any_input_order(dsl):
    frame = dsl.frame(_corpus(dsl))
    first = cluster(signatures(frame)).table
    for seed in (1, 2, 3):
        shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
        again = cluster(signatures(shuffled)).table
        assert again.equals(first)


def test_large_blocks_are_partitioned_and_stay_deterministic(dsl):
    rng = random.Random(3)
    cases = [c for f in ("refund", "cancel") for c in _family_cases(dsl, f, 40, rng)]
    # one block for all: no read tools in the key, and every family writes through one tool
    for c in cases:
        for s in c.steps:
            if s.is_mutating:
                s.name = "erp_write"
    cfg = DedupConfig(
        large_block_size=20, partition_size=10, block_on_read_tools=False, max_trajectory_distance=1
    )
    frame = dsl.frame(cases)
    result = cluster(signatures(frame, cfg), cfg)
    assert result.stats.partitioned_groups >= 1
    assert result.stats.partitions >= 2
    clusters = _families_of(result.table)
    for family in ("refund", "cancel"):
        ids = {clusters[c] for c in clusters if c.startswith(family)}
        others = {clusters[c] for c in clusters if not c.startswith(family)}
        assert not ids & others  # never merged across families
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=5)
    assert cluster(signatures(shuffled, cfg), cfg).table.equals(result.table)


def test_stats_count_what_happened(dsl):
    cases = _corpus(dsl, 6)
    twin = _family_cases(dsl, "cancel", 1, random.Random(5), prefix="t")[0]
    twin.user_input = cases[6].user_input
    for s in twin.steps:
        s.arguments = '{"orderId": "ORD-0", "amount": 1}'
    sig = signatures(dsl.frame([*cases, twin]))
    stats = cluster(pl.concat([sig, sig.head(2)])).stats
    assert stats.duplicate_case_ids == 2
    assert stats.cases == len(cases) + 1
    assert stats.clusters == len(FAMILIES)
    assert stats.merged_exact >= 1
    assert stats.merged_exact + stats.merged_near + stats.clusters == stats.cases
    assert stats.distinct_runs < stats.cases


def test_no_signatures_no_clusters():
    empty = pl.DataFrame(schema=signatures.__globals__["SIGNATURE_SCHEMA"])
    result = cluster(empty)
    assert result.table.height == 0
    assert result.stats.clusters == 0


def _chain(dsl):
    """A~B and B~C (distance 1/3) but A, C far apart (2/3), under word-unigram text features."""
    path = [dsl.write("erp_cancel_order", {"orderId": "A"})]
    texts = {
        "a": "alpha bravo charlie delta echo foxtrot",
        "b": "alpha bravo charlie delta golf hotel",
        "c": "alpha bravo golf hotel india juliet",
    }
    return dsl.frame([dsl.case(k, v, path) for k, v in texts.items()])


@pytest.mark.parametrize(("linkage", "clusters"), [("single", 1), ("average", 2), ("complete", 2)])
def test_linkage_decides_whether_chains_merge(dsl, linkage, clusters):
    cfg = DedupConfig(
        linkage=linkage,
        distance_threshold=0.35,
        text_word_ngrams=(1, 1),
        weights={"text": 1.0, "argument_shapes": 0.0},
    )
    table = cluster(signatures(_chain(dsl), cfg), cfg).table
    assert table.get_column("cluster_id").n_unique() == clusters
    if linkage == "complete":  # no member further than the threshold from its representative
        assert table.get_column("distance_to_representative").max() <= 0.35 + 1e-6
