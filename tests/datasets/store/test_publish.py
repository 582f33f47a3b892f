"""Publishing to a local folder and to a real S3-compatible server: layout, read-back, manifest,
deduplication, the replay check gate and version ids."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import duckdb
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.publish_config import PublishConfig
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.aliases import read_alias
from golden_distill.datasets.store.case_files import CasesError
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout, parse_version
from golden_distill.datasets.store.publish import ReplayCheckFailed, publish_version
from golden_distill.datasets.store.verify import verify_version
from golden_distill.datasets.store.versions import allocate_version, list_versions

SET = "nightly"
FIELDS = {
    "config": {"ingest": {"volatile_keys": ["requestId"]}, "publish": {"set_name": SET}},
    "key_id": "key-2026-11",
    "detector_versions": {"presidio": "2.2.360", "recognizers": ["EmailRecognizer"]},
    "lineage": {"uris": ["file:///in/recordings.jsonl"], "records_read": 60},
    "stats": {"dedup": {"clusters": 30}},
}


def _publish(target, table, **extra):
    return publish_version(target.url, SET, cases=table, **target.kwargs(), **extra)


def test_publish_then_read_back_is_identical(target, casegen):
    table = casegen.make_table(60)
    clusters = pa.table({"cluster_id": ["k-0", "k-1"], "size": [2, 3]})
    report = "<html><body>funnel report</body></html>"
    result = _publish(target, table, clusters=clusters, report_html=report, manifest_fields=FIELDS)
    assert result.published and result.replay_check.ok
    assert result.replay_check.steps_checked == sum(len(r["steps"]) for r in table.to_pylist())

    golden = open_set(target.url, f"{SET}@{result.version}", **target.kwargs())
    expected = table.sort_by("case_id")
    assert golden.read_table().equals(expected)
    assert [c.case_id for c in golden.cases()] == expected.column("case_id").to_pylist()
    assert golden.report_html() == report.encode()
    assert golden.clusters().equals(clusters)

    # every stored file is byte-identical to what its manifest entry describes
    store = StoreFS(target.url, target.storage_options)
    layout = SetLayout(SET)
    for entry in result.manifest["files"]:
        data = store.read_bytes(layout.version_file(result.version, entry["name"]))
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert len(data) == entry["size"]
    assert read_alias(store, layout, "latest") == result.version


def test_duckdb_reads_cases_parquet_directly(target, casegen, tmp_path):
    table = casegen.make_table(40)
    result = _publish(target, table)
    store = StoreFS(target.url, target.storage_options)
    rel = SetLayout(SET).version_file(result.version, "cases.parquet")
    if store.is_local:
        path = store.local_path(rel)
    else:  # DuckDB's S3 support is an extension download; read the object's bytes instead
        path = tmp_path / "cases.parquet"
        path.write_bytes(store.read_bytes(rel))
    con = duckdb.connect()
    rows = con.execute(
        "SELECT case_id, len(steps) AS n, steps[1].name AS first_tool "
        f"FROM read_parquet('{path}') ORDER BY case_id"
    ).fetchall()
    expected = sorted(table.to_pylist(), key=lambda r: r["case_id"])
    assert [r[0] for r in rows] == [e["case_id"] for e in expected]
    assert [r[1] for r in rows] == [len(e["steps"]) for e in expected]
    assert [r[2] for r in rows] == [e["steps"][0]["name"] for e in expected]
    funnel = con.execute(
        f"SELECT count(*) FROM read_parquet('{path}') WHERE list_contains(funnels, 'recovery')"
    ).fetchone()[0]
    assert funnel == result.manifest["counts"]["per_funnel"]["recovery"]


def test_manifest_records_files_counts_and_lineage_without_personal_data(target, casegen):
    table = casegen.make_table(30)
    result = _publish(target, table, manifest_fields=FIELDS)
    manifest = result.manifest
    assert manifest["set"] == SET and manifest["version"] == result.version
    assert manifest["parent_version"] is None
    assert manifest["counts"]["cases"] == 30
    funnels = [f for row in table.column("funnels").to_pylist() for f in row]
    assert manifest["counts"]["per_funnel"] == {f: funnels.count(f) for f in sorted(set(funnels))}
    assert manifest["config"] == FIELDS["config"]
    assert (
        manifest["config_sha256"]
        == hashlib.sha256(orjson.dumps(FIELDS["config"], option=orjson.OPT_SORT_KEYS)).hexdigest()
    )
    assert manifest["key_id"] == "key-2026-11"
    assert manifest["lineage"] == FIELDS["lineage"]
    assert manifest["detector_versions"] == FIELDS["detector_versions"]
    assert manifest["code_version"]
    assert datetime.fromisoformat(manifest["created_at"]).tzinfo is not None
    text = json.dumps(manifest)
    assert "request number" not in text and "ORD-" not in text  # no record content
    second = _publish(target, casegen.make_table(31), manifest_fields=FIELDS)
    assert second.manifest["parent_version"] == result.version


def test_same_content_is_reported_not_duplicated_unless_forced(target, casegen):
    table = casegen.make_table(25)
    clusters = pa.table({"cluster_id": ["k-2", "k-1", "k-3"], "members": [[1], [2, 3], [4]]})
    first = _publish(target, table, clusters=clusters)
    again = _publish(  # the same cases and clusters, in another order
        target, table.take(list(reversed(range(table.num_rows)))), clusters=clusters[::-1]
    )
    assert again.deduplicated_of == first.version and again.version == first.version
    store = StoreFS(target.url, target.storage_options)
    assert list_versions(store, SET) == [first.version]
    forced = _publish(target, table, clusters=clusters, force=True)
    assert forced.published and forced.version != first.version
    assert list_versions(store, SET) == [first.version, forced.version]


def test_replay_check_failure_blocks_publish(target, casegen):
    good = _publish(target, casegen.make_table(10))
    cases = [casegen.build_case(i) for i in range(10, 20)]
    broken = cases[3]
    # redaction rewrote the arguments but the hash still belongs to the old ones
    broken.steps[1].arguments = json.dumps({"orderId": "PSEUDO-1"})
    dup = cases[7]
    dup.steps[2].occurrence = dup.steps[0].occurrence  # two calls claim the same occurrence
    dup.steps[2].name = dup.steps[0].name
    dup.steps[2].canonical_args_sha256 = canonical_args_sha256(dup.steps[2].arguments)
    with pytest.raises(ReplayCheckFailed) as err:
        _publish(target, casegen.cases_table(cases))
    failed = err.value.result.failed_case_ids
    assert failed == sorted([broken.case_id, dup.case_id])
    reasons = err.value.result.failures_per_reason()
    assert reasons.get("args_hash_stale") and reasons.get("occurrence_mismatch")
    assert "PSEUDO" not in str(err.value)
    store = StoreFS(target.url, target.storage_options)
    assert list_versions(store, SET) == [good.version]
    assert read_alias(store, SetLayout(SET), "latest") == good.version


def test_bad_cases_are_refused_with_a_clear_error(target, casegen):
    table = casegen.make_table(5)
    with pytest.raises(CasesError, match="duplicate case_id"):
        _publish(target, pa.concat_tables([table, table.slice(0, 1)]))
    with pytest.raises(CasesError, match="missing case columns: steps"):
        _publish(target, table.drop_columns(["steps"]))
    assert list_versions(StoreFS(target.url, target.storage_options), SET) == []


def test_large_sets_are_split_and_each_case_is_fetched(target, casegen):
    table = casegen.make_table(45)
    config = PublishConfig(max_rows_per_file=20, row_group_rows=4)
    result = _publish(target, table, config=config)
    names = [f["name"] for f in result.manifest["files"] if f["role"] == "cases"]
    assert names == ["cases-0000.parquet", "cases-0001.parquet", "cases-0002.parquet"]
    golden = open_set(target.url, SET, **target.kwargs())
    store = StoreFS(target.url, target.storage_options)
    first = store.read_bytes(SetLayout(SET).version_file(result.version, names[0]))
    meta = pq.ParquetFile(pa.BufferReader(first)).metadata
    assert meta.num_rows == 20 and meta.num_row_groups == 5
    rows = {r["case_id"]: r for r in table.to_pylist()}
    for case_id in list(rows)[::7]:
        assert golden.get(case_id).case.to_row(pipeline_fields=True) == rows[case_id]
    with pytest.raises(KeyError):
        golden.get("c_does_not_exist")
    unverified = open_set(target.url, SET, verify=False, **target.kwargs())  # ranged reads
    for case_id in list(rows)[::9]:
        assert unverified.get(case_id).case.to_row(pipeline_fields=True) == rows[case_id]


def test_version_ids_are_dated_increasing_and_never_reused(target):
    store = StoreFS(target.url, target.storage_options)
    day = datetime(2026, 11, 29, 23, 59, tzinfo=UTC)
    ids = [allocate_version(store, SET, now=day) for _ in range(3)]
    assert ids == ["2026.11.29.1", "2026.11.29.2", "2026.11.29.3"]
    # a clock that went backwards never produces an older id
    assert allocate_version(store, SET, now=datetime(2026, 11, 1, tzinfo=UTC)) == "2026.11.29.4"
    assert allocate_version(store, SET, now=datetime(2026, 12, 1, tzinfo=UTC)) == "2026.12.01.1"
    assert [parse_version(v) for v in ids] == sorted(parse_version(v) for v in ids)


def test_concurrent_allocation_hands_out_distinct_ids(target):
    from concurrent.futures import ThreadPoolExecutor

    store_args = (target.url, target.storage_options)
    with ThreadPoolExecutor(6) as pool:
        ids = list(pool.map(lambda _: allocate_version(StoreFS(*store_args), SET), range(10)))
    assert len(set(ids)) == 10


def test_verify_passes_on_a_fresh_version(target, casegen):
    result = _publish(target, casegen.make_table(12), report_html=b"<html/>")
    report = verify_version(StoreFS(target.url, target.storage_options), SET, result.version)
    assert report.ok and report.files_checked == 2
    assert report.replay_check is not None and report.replay_check.cases_checked == 12


def test_publish_from_parquet_shards_of_canonical_cases(target, casegen, tmp_path):
    """Cases may come as Parquet files (CASE_SCHEMA: pipeline columns absent -> null)."""
    from golden_distill.datasets.schema import CASE_SCHEMA

    table = casegen.make_table(30).select(CASE_SCHEMA.names)
    paths = []
    for index, start in enumerate((0, 13)):
        path = tmp_path / f"part-{index:05d}.parquet"
        pq.write_table(table.slice(start, 13 if start == 0 else 17), path)
        paths.append(path)
    result = _publish(target, paths)
    golden = open_set(target.url, f"{SET}@{result.version}", **target.kwargs())
    read = golden.read_table()
    assert read.select(CASE_SCHEMA.names).equals(table.sort_by("case_id").cast(CASE_SCHEMA))
    assert read.column("funnels").null_count == 30
    assert result.manifest["counts"]["per_funnel"] == {}


def test_prechecked_cases_are_not_checked_again_but_changed_steps_are(target, casegen):
    """A grown set's carried cases passed the replay check in their version: with their steps
    digest (``prechecked``) publish checks only the other cases; a case whose steps differ
    from its digest is checked, and a stale one still blocks the publish."""
    from golden_distill.datasets.store.recorded_calls import steps_digests

    table = casegen.make_table(12)
    carried = steps_digests(table.slice(0, 10))  # as the previous version published them
    done = _publish(target, table, prechecked=carried)
    assert done.replay_check.cases_prechecked == 10 and done.replay_check.cases_checked == 2
    assert done.manifest["replay_check"]["cases_prechecked"] == 10
    cases = [casegen.build_case(i) for i in range(12)]
    cases[4].steps[1].arguments = json.dumps({"orderId": "PSEUDO-2"})  # hash now stale
    with pytest.raises(ReplayCheckFailed) as err:
        _publish(target, casegen.cases_table(cases), prechecked=carried, force=True)
    assert err.value.result.failed_case_ids == [cases[4].case_id]
