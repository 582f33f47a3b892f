"""decisions.parquet in a version: listed in the manifest with its sha256 like every file, so
verify, the reader and the signature cover it; read with ``read_decisions(store, ref)``."""

from __future__ import annotations

import hashlib

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from golden_distill.datasets.reader import open_set
from golden_distill.datasets.store.decisions import ERASED, read_decisions
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.integrity import seal_manifest
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.manifest import dump_manifest
from golden_distill.datasets.store.publish import publish_version
from golden_distill.datasets.store.signing import pinned_keys, public_key_pem
from golden_distill.datasets.store.verify import ChecksumError, verify_version

SET = "dec"


def _decisions(case_ids: list[str]) -> pa.Table:
    rows = [
        {"case_id": c, "status": "published", "funnels": ["recovery"], "value_score": 1.0,
         "cluster_id": f"cl_{i}", "replaced_by": None}
        for i, c in enumerate(case_ids)
    ]  # fmt: skip
    rows.append({"case_id": "c_out", "status": "dedup:near", "funnels": ["recovery"],
                 "value_score": 0.5, "cluster_id": "cl_0", "replaced_by": case_ids[0]})  # fmt: skip
    rows.append({"case_id": "c_gone", "status": "published", "funnels": [],
                 "value_score": None, "cluster_id": None, "replaced_by": None})  # fmt: skip
    return pa.Table.from_pylist(rows)


def _publish(tmp_path, casegen, signer=None):
    cases = casegen.make_table(6)
    ids = cases.column("case_id").to_pylist()
    result = publish_version(
        str(tmp_path), SET, cases=cases, decisions=_decisions(ids),
        report_html=lambda version: f"<p>version {version}</p>", signing_key=signer,
    )  # fmt: skip
    return result, ids


def test_listed_checked_and_read(tmp_path, casegen) -> None:
    result, ids = _publish(tmp_path, casegen)
    entry = next(f for f in result.manifest["files"] if f["name"] == "decisions.parquet")
    assert entry["role"] == "decisions" and entry["rows"] == 8 and len(entry["sha256"]) == 64
    assert verify_version(StoreFS(str(tmp_path)), SET, result.version).ok
    table = read_decisions(str(tmp_path), f"{SET}@latest")
    by_id = {r["case_id"]: r for r in table.to_pylist()}
    assert by_id["c_out"]["replaced_by"] == ids[0]
    # a case the decisions said was published but publishing left out says so
    assert by_id["c_gone"]["status"] == ERASED
    # the report was rendered once the id was claimed: it names its version
    report = open_set(str(tmp_path), SET).report_html() or b""
    assert f"version {result.version}".encode() in report


@pytest.mark.parametrize("signed", [False, True])
def test_an_edited_decisions_file_is_refused(tmp_path, casegen, signed) -> None:
    signer = Ed25519PrivateKey.generate() if signed else None
    result, _ = _publish(tmp_path, casegen, signer)
    store = StoreFS(str(tmp_path))
    rel = SetLayout(SET).version_file(result.version, "decisions.parquet")
    table = pq.read_table(pa.BufferReader(store.read_bytes(rel)))
    status = table.column("status").to_pylist()
    status[0] = "no_funnel"  # rewrite history: a published case "never selected"
    edited = table.set_column(1, "status", pa.array(status))
    sink = pa.BufferOutputStream()
    pq.write_table(edited, sink)
    store.write_atomic(rel, sink.getvalue().to_pybytes())
    report = verify_version(store, SET, result.version)
    assert not report.ok and any("decisions.parquet" in p for p in report.problems)
    with pytest.raises(ChecksumError):
        read_decisions(store, f"{SET}@{result.version}")
    if signed:  # the manifest fixed to match (sha256, size, seal): the signature breaks
        manifest_rel = SetLayout(SET).manifest(result.version)
        manifest = orjson.loads(store.read_bytes(manifest_rel))
        entry = next(f for f in manifest["files"] if f["role"] == "decisions")
        data = store.read_bytes(rel)
        entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
        store.write_atomic(manifest_rel, dump_manifest(seal_manifest(manifest)))
        keys = pinned_keys([public_key_pem(signer.public_key()).decode()])
        refused = verify_version(store, SET, result.version, public_keys=keys)
        assert not refused.ok and any("signature" in p for p in refused.problems)
        unpinned = verify_version(store, SET, result.version)  # the edit itself now passes
        assert unpinned.ok
