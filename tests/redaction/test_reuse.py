"""A Redactor carries no state from one call to the next: a case's output depends only on (its
batch, config, key), whether the Redactor is fresh, was used on other tables before, or is
shared by threads redacting other tables at the same time (as flow workers do)."""

from __future__ import annotations

import threading
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from golden_distill.datasets.ingest import ingest
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import REDACTION_ERROR, Redactor
from golden_distill.redaction.shard import ShardRedactionResult, redact_table
from golden_distill.synthetic import generate_corpus, load_truth

from .conftest import TEST_SECRET, case, step


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("reuse")
    generate_corpus(root / "raw", sessions=150, seed=23, shards=2)
    ingest([str(root / "raw")], root / "canon")
    table = pa.concat_tables(
        pq.read_table(p) for p in sorted((root / "canon" / "cases").glob("*.parquet"))
    )
    half = table.num_rows // 2
    return {
        "A": table.slice(0, half),
        "B": table.slice(half),
        "opt_out": load_truth(root / "raw").opt_out_tenant,
    }


def _redactor(tables: dict[str, Any], **config: Any) -> Redactor:
    return Redactor.from_config(
        RedactionConfig(**config), PseudonymKey(TEST_SECRET), opt_out_tenants=[tables["opt_out"]]
    )


def _published(result: ShardRedactionResult) -> dict[str, bytes]:
    return {
        row["case_id"]: orjson.dumps(row, default=str, option=orjson.OPT_SORT_KEYS)
        for row in result.table.to_pylist()
    }


def _errors(result: ShardRedactionResult) -> list[str]:
    return [q.detail for q in result.quarantined if q.reason == REDACTION_ERROR]


def test_reused_redactor_gives_the_fresh_output(tables: dict[str, Any]) -> None:
    fresh = redact_table(tables["B"], _redactor(tables))
    reused = _redactor(tables)
    before = redact_table(tables["A"], reused)
    again = redact_table(tables["B"], reused)
    assert fresh.table.num_rows > 50 and before.table.num_rows > 50
    assert not _errors(fresh) and not _errors(before) and not _errors(again)
    assert _published(again) == _published(fresh)
    assert again.reasons == fresh.reasons


def test_redactor_shared_by_threads_gives_the_fresh_output(tables: dict[str, Any]) -> None:
    expected = {name: _published(redact_table(tables[name], _redactor(tables))) for name in "AB"}
    shared = _redactor(tables)
    jobs = ["A", "B", "A", "B"]
    start = threading.Barrier(len(jobs))
    results: dict[int, ShardRedactionResult] = {}

    def run(i: int, name: str) -> None:
        start.wait()
        results[i] = redact_table(tables[name], shared)

    threads = [threading.Thread(target=run, args=(i, name)) for i, name in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(len(jobs)))
    for i, name in enumerate(jobs):
        assert not _errors(results[i]), f"job {i}: {_errors(results[i])}"
        assert _published(results[i]) == expected[name], f"job {i} differs from a fresh run"


def test_output_does_not_depend_on_the_batch_split_without_the_name_dictionary(
    tables: dict[str, Any],
) -> None:
    redactor = _redactor(tables, shard_name_dictionary=False)
    whole = _published(redact_table(tables["B"], redactor))
    one_by_one = _published(redact_table(tables["B"], redactor, batch_cases=1))
    assert len(whole) > 50
    assert one_by_one == whole


NAME = "Erica Bridges"


def _named_account() -> dict[str, Any]:
    account = step(0, "crm_get_customer", {"customerId": "C-1"}, {"fullName": NAME})
    return case(case_id="c_account", steps=[account])


def _mention() -> dict[str, Any]:
    outcome = dict(case()["outcome"], answer_text=f"Order shipped, {NAME}. Anything else?")
    return case(case_id="c_mention", session_id="s-2", outcome=outcome)


def test_name_dictionary_is_scoped_to_the_batch_passed_in(config: RedactionConfig) -> None:
    redactor = Redactor.from_config(config, PseudonymKey(TEST_SECRET))
    alone_fresh = Redactor.from_config(config, PseudonymKey(TEST_SECRET)).redact_many([_mention()])
    together = redactor.redact_many([_named_account(), _mention()])
    alone_after = redactor.redact_many([_mention()])
    assert together[1].row is not None
    # documented: a name found in one case of a batch is scrubbed from the others
    assert NAME not in together[1].row["outcome"]["answer_text"]
    # and it is not remembered for later calls: the mention alone redacts as with a fresh one
    assert alone_after[0].row == alone_fresh[0].row
    assert alone_after[0].reason == alone_fresh[0].reason
