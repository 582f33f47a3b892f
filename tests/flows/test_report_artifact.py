"""The run summary artifact (flows/report/artifact.py): keys apart per store and set, the
headline figures and the changes in markdown."""

from __future__ import annotations

import re

from golden_distill.flows.report.artifact import artifact_key, summary_markdown

STATS = {
    "published": 1234,
    "records_read": 50000,
    "quarantined": {"bad_json": 3, "no_steps": 2},
    "candidates": 4000,
    "cut_by_quotas": {"tenant_max": 10},
    "removed_by_dedup": 2700,
    "redaction_refusals": {"refused": 4, "replaced": 4},
    "shards": 12,
    "shards_cached": 11,
    "since": "2026-11-29T00:00:00+00:00",
    "until": "2026-11-30T00:00:00+00:00",
    "change": {"parent": "2026.11.29.1", "added": 40, "removed": 7, "kept": 1194},
    "left_the_set": {"aged_out": 7},
    "pinned": "2026.11.01.1",
    "drift": [
        {"dimension": "tool", "value": "erp|refund", "before": 0.1, "after": 0.25, "shift": 0.15}
    ],
}


def test_keys_differ_per_store_and_per_set_and_are_valid_prefect_keys():
    keys = {
        artifact_key("/data/a/store", "nightly"),
        artifact_key("s3://bucket-b/store", "nightly"),
        artifact_key("/data/a/store", "weekly"),
        artifact_key("/data/a/store", "nightly", "counts"),
    }
    assert len(keys) == 4
    assert artifact_key("/data/a/store/", "nightly") == artifact_key("/data/a/store", "nightly")
    assert all(re.fullmatch(r"[a-z0-9-]+", k) for k in keys)
    assert artifact_key("/s", "Night_Set.v2").startswith("golden-night-set-v2-")


def test_summary_holds_the_headline_figures_and_the_changes():
    text = summary_markdown("nightly", "2026.11.30.1", "/data/store", "/data/r.html", STATS)
    assert "# `nightly@2026.11.30.1`" in text
    assert "| published cases | **1,234** |" in text
    assert "| records read | 50,000 |" in text
    assert "| quarantined (bad input) | 5 |" in text
    assert "| cut by quotas | 10 |" in text
    assert "| refused by redaction | 4 |" in text
    assert "| shards (from cache) | 12 (11) |" in text
    assert "**+40** added, **-7** removed, 1,194 kept" in text
    assert "aged_out 7" in text
    assert "| tool | erp\\|refund | 10.0% | 25.0% |" in text  # a pipe cannot break the table
    assert "2026-11-29T00:00:00+00:00 .. 2026-11-30T00:00:00+00:00" in text
    assert "`/data/r.html`" in text


def test_a_first_version_says_so():
    text = summary_markdown("nightly", "v1", "/s", "/r", {"published": 3})
    assert "The set's first version." in text and "Largest shifts" not in text
