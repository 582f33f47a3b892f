"""The truth file agrees with itself and with the files it describes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from golden_distill.datasets import quarantine
from golden_distill.synthetic import Truth
from golden_distill.synthetic.scenarios import SELECTION_FUNNELS

SESSIONS = 300  # as in conftest.py

PLANTED_KINDS = {
    quarantine.INVALID_JSON,
    quarantine.WRONG_TYPE,
    quarantine.MISSING_FIELD,
    quarantine.OVERSIZED_LINE,
    quarantine.TRUNCATED_STREAM,
}


def test_counts_are_self_consistent(gz_truth: Truth) -> None:
    s = gz_truth.summary
    assert s["valid_records"] == len(gz_truth.records) == sum(s["records_per_file"].values())
    recount = Counter(f for r in gz_truth.records.values() for f in r.funnels)
    assert s["funnel_counts"] == {f: recount[f] for f in sorted(recount)}
    assert sum(s["tenant_record_counts"].values()) == s["valid_records"]
    assert s["broken_counts"] == dict(
        sorted(Counter(b["reason"] for b in s["broken_lines"]).items())
    )
    assert s["family_count"] == len(gz_truth.families())
    assert len({r.session_id for r in gz_truth.records.values()}) == SESSIONS


def test_every_broken_kind_is_planted_and_named(gz_truth: Truth) -> None:
    assert set(gz_truth.quarantine_counts) == PLANTED_KINDS
    assert all(n >= 1 for n in gz_truth.quarantine_counts.values())
    lost = set(gz_truth.lost_record_ids)
    assert lost and not lost & set(gz_truth.records)
    assert gz_truth.oversized_line_limit == 32 * 1024


def test_each_valid_record_is_at_its_claimed_line(
    gz_corpus: Path, gz_truth: Truth, read_lines: Callable
) -> None:
    files = {f: read_lines(gz_corpus / f) for f in gz_truth.summary["files"]}
    broken_at = {(b["file"], b["line"]) for b in gz_truth.broken_lines}
    claimed = {(r.file, r.line) for r in gz_truth.records.values()}
    assert not claimed & broken_at
    total_complete = sum(len(v) for v in files.values())
    truncated = sum(1 for b in gz_truth.broken_lines if b["reason"] == "truncated_stream")
    # every complete line is either a valid record or a planted broken line
    assert total_complete == len(claimed) + len(broken_at) - truncated
    for rid, r in list(gz_truth.records.items())[:50]:
        assert f'"recordId":"{rid}"'.encode() in files[r.file][r.line - 1]


def test_tenant_volumes_are_skewed_and_opt_out_tenant_has_traffic(gz_truth: Truth) -> None:
    counts = gz_truth.summary["tenant_record_counts"]
    assert gz_truth.opt_out_tenant in counts and counts[gz_truth.opt_out_tenant] > 0
    ordered = sorted(counts.values(), reverse=True)
    assert ordered[0] >= 3 * ordered[-1]
    assert len(counts) >= 8


def test_selection_funnels_and_background_both_present(gz_truth: Truth) -> None:
    for funnel in SELECTION_FUNNELS:
        assert gz_truth.summary["funnel_counts"].get(funnel, 0) > 0
    background = [r for r in gz_truth.records.values() if not r.funnels]
    assert len(background) > len(gz_truth.records) // 3
    by_session = gz_truth.session_funnels()
    assert len(by_session) == SESSIONS
    for funnel in SELECTION_FUNNELS:
        sessions = {s for s, f in by_session.items() if funnel in f}
        assert sessions == {gz_truth.records[r].session_id for r in gz_truth.funnel_members(funnel)}
