"""Near-duplicate families partition the corpus; exact groups and same-text pairs are honest."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from golden_distill.synthetic import Truth

NUMBER = re.compile(r"\d[\d,.]*")


def _trajectory(rec: dict[str, Any]) -> tuple:
    return tuple(
        (c["toolName"], c["status"], c["kind"], tuple(sorted(c["arguments"])))
        for c in rec["toolCalls"]
    )


def _masked(rec: dict[str, Any], values: list[str]) -> str:
    text = rec["initialUserInput"]
    for v in sorted(values, key=len, reverse=True):
        text = text.replace(v, "<V>")
    return NUMBER.sub("<N>", text)


def test_families_partition_all_valid_records(gz_truth: Truth) -> None:
    families = gz_truth.families()
    members = [rid for ids in families.values() for rid in ids]
    assert sorted(members) == sorted(gz_truth.records)
    sizes = sorted((len(v) for v in families.values()), reverse=True)
    assert sizes.count(1) > len(sizes) // 3  # many singletons
    assert sizes[0] >= 5  # and a long tail


def test_members_share_trajectory_and_funnels(gz_truth: Truth, gz_records: dict) -> None:
    for fid, ids in gz_truth.families().items():
        assert len({_trajectory(gz_records[i]) for i in ids}) == 1, fid
        assert len({gz_truth.records[i].funnels for i in ids}) == 1, fid


def test_families_sharing_a_trajectory_read_differently(gz_truth: Truth, gz_records: dict) -> None:
    by_traj: dict[tuple, dict[str, str]] = defaultdict(dict)
    for fid, ids in gz_truth.families().items():
        rec = gz_records[ids[0]]
        by_traj[_trajectory(rec)][fid] = rec["initialUserInput"]
    pairs = 0
    for fams in by_traj.values():
        texts = list(fams.values())
        for i in range(len(texts)):
            for j in range(i + 1, len(texts)):
                pairs += 1
                a, b = set(texts[i].split()), set(texts[j].split())
                if len(a) > 3 and len(b) > 3:  # word overlap (English; Chinese differs anyway)
                    assert len(a & b) / len(a | b) < 0.6
                assert texts[i] != texts[j]
    assert pairs > 0


def test_exact_groups_differ_only_in_values(gz_truth: Truth, gz_records: dict) -> None:
    groups = gz_truth.exact_groups()
    assert groups
    for ids in groups.values():
        assert len({gz_truth.records[i].family for i in ids}) == 1
        masked = set()
        for i in ids:
            r = gz_truth.records[i]
            values = [v for _, v, _ in r.pii] + [v for _, v in r.keys]
            masked.add(_masked(gz_records[i], values))
        assert len(masked) == 1, masked
        lat = {tuple(c["latencyMs"] for c in gz_records[i]["toolCalls"]) for i in ids}
        assert len(lat) == 1
        assert len({gz_records[i]["initialUserInput"] for i in ids}) == len(ids)


def test_same_text_pairs_have_different_writes(gz_truth: Truth, gz_records: dict) -> None:
    assert gz_truth.same_text_pairs
    for a, b in gz_truth.same_text_pairs:
        ra, rb = gz_records[a], gz_records[b]
        assert ra["initialUserInput"] == rb["initialUserInput"]
        wa = [c["toolName"] for c in ra["toolCalls"] if c["isMutating"]]
        wb = [c["toolName"] for c in rb["toolCalls"] if c["isMutating"]]
        assert wa and wb and wa != wb
        assert gz_truth.records[a].family != gz_truth.records[b].family
