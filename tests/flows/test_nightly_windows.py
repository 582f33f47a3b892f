"""Scheduled nights over date partitions: each run reads its window only, a skipped night is
caught up, near-duplicate families spanning nights grow one cluster, old clusters age out.

Three generated nights (`dt=YYYY-MM-DD/` folders; the members of each planted near-duplicate
family are spread over the nights). Scheduled start times are simulated through
``prefect.runtime`` (the flow reads them from there, as in a deployment run).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from nights import split_into_nights

from golden_distill.datasets.schema import make_case_id

pytestmark = pytest.mark.slow


def scheduled_at(monkeypatch: pytest.MonkeyPatch, moment: str) -> None:
    """Make the next flow run look like a deployment run scheduled at ``moment``."""
    import prefect.runtime.flow_run as flow_run
    from prefect.types._datetime import DateTime

    monkeypatch.setenv("PREFECT__RUNTIME__DEPLOYMENT__ID", "nightly-test")
    monkeypatch.setitem(
        flow_run.FIELDS, "scheduled_start_time", lambda: DateTime.fromisoformat(moment)
    )


def clusters_by_family(store: Path, set_name: str, version: str, truth) -> dict[str, list[int]]:
    from golden_distill.datasets.reader import open_set

    table = open_set(str(store), f"{set_name}@{version}").read_table()
    # a family spans tenants; each tenant is its own dedup partition
    family = {
        make_case_id("native", rid): f"{r.family}/{r.tenant_id}" for rid, r in truth.records.items()
    }
    found: dict[str, list[int]] = {}
    for row in table.select(["case_id", "cluster_size"]).to_pylist():
        found.setdefault(family[row["case_id"]], []).append(row["cluster_size"])
    return found


def test_scheduled_nights_catch_up_and_grow_one_set(
    prefect_api, pseudonym_key, corpus, tmp_path, events, shard_events, write_config, monkeypatch
):
    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    generated, truth = corpus
    recordings = tmp_path / "recordings"
    split_into_nights(generated, truth, recordings)
    config = write_config(tmp_path / "config.yaml", truth.opt_out_tenant)
    store = tmp_path / "store"
    nightly = DistillParams(
        config_path=str(config),
        sources=[str(recordings / "dt={date}")],
        source_format="native",
        store_url=str(store),
        set_name="nightly",
    )

    # night of 11-28, run at 02:30 on 11-29: reads that partition only
    scheduled_at(monkeypatch, "2026-11-29T02:30:00+00:00")
    first = run_distill(nightly)
    read = {d["shard"] for d in shard_events(events)}
    assert read == {"dt=2026-11-28/recordings.jsonl"}
    lineage = open_set(str(store), f"nightly@{first}").manifest["lineage"]
    assert lineage["since"].startswith("2026-11-28T00:00") and lineage["until"].startswith(
        "2026-11-29T00:00"
    )
    first_reps = clusters_by_family(store, "nightly", first, truth)

    # the 11-30 02:30 run was missed; the 12-01 run catches up both nights, none twice
    events.clear()
    scheduled_at(monkeypatch, "2026-12-01T02:30:00+00:00")
    second = run_distill(nightly)
    read = sorted(d["shard"] for d in shard_events(events))
    assert read == ["dt=2026-11-29/recordings.jsonl", "dt=2026-11-30/recordings.jsonl"]
    grown = clusters_by_family(store, "nightly", second, truth)
    manifest = open_set(str(store), f"nightly@{second}").manifest
    assert manifest["lineage"]["parent_version"] == first
    assert manifest["stats"]["incremental"]["joined_existing_clusters"] > 0

    # the same three nights in one run from scratch: the reference clustering
    monkeypatch.delenv("PREFECT__RUNTIME__DEPLOYMENT__ID")
    rebuilt = run_distill(
        nightly.model_copy(
            update={
                "set_name": "rebuilt",
                "since": datetime(2026, 11, 28, tzinfo=UTC),
                "until": datetime(2026, 12, 1, tzinfo=UTC),
                "rebuild": True,
            }
        )
    )
    reference = clusters_by_family(store, "rebuilt", rebuilt, truth)
    # the same representatives per family as a rebuild, holding the summed size of their
    # members over the nights (almost always one per family and tenant; one whose members
    # ended differently is split by outcome, in both)
    assert sum(len(sizes) > 1 for sizes in grown.values()) <= 2, "families split across versions"
    assert set(grown) == set(reference)
    assert {f: sorted(s) for f, s in grown.items()} == {f: sorted(s) for f, s in reference.items()}
    # the representative chosen on the first night stays
    first_ids = set(open_set(str(store), f"nightly@{first}").read_table()["case_id"].to_pylist())
    second_ids = set(open_set(str(store), f"nightly@{second}").read_table()["case_id"].to_pylist())
    assert first_ids <= second_ids
    assert sum(s[0] for s in first_reps.values()) < sum(s[0] for s in grown.values())

    # clusters last seen more than 1.5 days before the window's end leave with that reason
    aged_config = write_config(tmp_path / "aged.yaml", truth.opt_out_tenant)
    text = aged_config.read_text() + "selection:\n  max_age_days: 1.5\n"
    aged_config.write_text(text)
    third = run_distill(
        nightly.model_copy(
            update={
                "config_path": str(aged_config),
                "sources": [str(recordings / "dt=2026-11-30")],
                "since": datetime(2026, 11, 30, tzinfo=UTC),
                "until": datetime(2026, 12, 1, tzinfo=UTC),
            }
        )
    )
    golden = open_set(str(store), f"nightly@{third}")
    clusters = golden.clusters().to_pylist()
    last_seen = {}
    for row in clusters:
        last_seen[row["cluster_id"]] = row["last_seen"]
    assert all(str(seen) >= "2026-11-29 12:00" for seen in last_seen.values())
    left = golden.manifest["stats"]["left_the_set"]["aged_out"]
    assert left > 0 and len(golden) == len(second_ids) - left
