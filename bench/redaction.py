"""Benchmark: the redaction step vs a naive Presidio baseline, on the same generated cases.

Baseline: Presidio's default recognizers (``AnalyzerEngine`` with the ``no_op`` NLP engine),
``analyze`` + ``anonymize`` called on every string of every case, no propagation, no cache.
This step: ``redact_table`` (key rules, pre-filters, per-shard cache, batching, propagation,
verification) in one process. Prints throughput of each (cases/s), the ratio, and the recall of
each on the generator's planted personal values (a value counts as caught in a case when it no
longer appears anywhere in that case's output).

    .venv/bin/python bench/redaction.py [--sessions 500] [--seed 3]
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.ingest import ingest
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table
from golden_distill.redaction.slots import case_slots
from golden_distill.redaction.walker import iter_leaves
from golden_distill.synthetic import generate_corpus, load_truth

DIGIT_ENTITIES = {"PHONE_NUMBER", "CREDIT_CARD", "BANK_CARD", "CN_MOBILE", "CN_RESIDENT_ID"}


def case_strings(row: dict[str, Any]) -> list[str]:
    """Every string redaction visits in a case (the baseline gets the same strings)."""
    _, slots = case_slots(row)
    out: list[str] = []
    for slot, _put in slots:
        if slot.is_json:
            out.extend(v for _, v in iter_leaves(slot.parsed) if isinstance(v, str))
        else:
            out.append(slot.text)
    return out


def baseline(rows: list[dict[str, Any]]) -> tuple[float, dict[str, str]]:
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NoOpNlpEngine
    from presidio_anonymizer import AnonymizerEngine

    nlp = NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "no_op"}])
    analyzer = AnalyzerEngine(nlp_engine=nlp)  # default registry: every predefined recognizer
    anonymizer = AnonymizerEngine()
    outputs: dict[str, str] = {}
    started = time.perf_counter()
    for row in rows:
        parts = []
        for text in case_strings(row):
            results = analyzer.analyze(text=text, language="en")
            parts.append(anonymizer.anonymize(text=text, analyzer_results=results).text)
        outputs[row["source"]["source_record_id"]] = "\x1f".join(parts)
    return time.perf_counter() - started, outputs


def ours(table: pa.Table) -> tuple[float, dict[str, str]]:
    redactor = Redactor.from_config(RedactionConfig(), PseudonymKey(b"bench-key-" + b"k" * 32))
    started = time.perf_counter()
    result = redact_table(table, redactor)
    seconds = time.perf_counter() - started
    outputs = {
        r["source"]["source_record_id"]: orjson.dumps(r, default=str).decode()
        for r in result.table.to_pylist()
    }
    return seconds, outputs


_WORKER: dict[str, Redactor] = {}


def _init_worker() -> None:
    _WORKER["r"] = Redactor.from_config(RedactionConfig(), PseudonymKey(b"bench-key-" + b"k" * 32))


def _redact_shard(table: pa.Table) -> int:
    return redact_table(table, _WORKER["r"]).cases_out


def ours_parallel(table: pa.Table, workers: int) -> float:
    """Wall time with ``workers`` warm processes, one shard each (the pipeline's layout)."""
    from concurrent.futures import ProcessPoolExecutor

    size = -(-table.num_rows // workers)
    shards = [table.slice(i * size, size) for i in range(workers)]
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker) as pool:
        list(pool.map(_redact_shard, [table.slice(0, 5)] * workers))  # warm every worker
        started = time.perf_counter()
        done = sum(pool.map(_redact_shard, shards))
        seconds = time.perf_counter() - started
    assert done == table.num_rows
    return seconds


def recall(truth: Any, outputs: dict[str, str]) -> tuple[float, int]:
    caught = total = 0
    for record_id, text in outputs.items():
        rec = truth.records.get(record_id)
        if rec is None:
            continue
        for entity, value, _where in rec.pii:
            forms = {value}
            if entity in DIGIT_ENTITIES:
                forms.add(re.sub(r"\D", "", value))
            total += 1
            caught += not any(f and f in text for f in forms)
    return (caught / total if total else 0.0), total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate_corpus(root / "raw", sessions=args.sessions, seed=args.seed)
        ingest([str(root / "raw")], root / "canon")
        truth = load_truth(root / "raw")
        table = pa.concat_tables(
            pq.read_table(p) for p in sorted((root / "canon" / "cases").glob("*.parquet"))
        )
    rows = table.to_pylist()
    n = len(rows)
    strings = sum(len(case_strings(r)) for r in rows)
    # the machine may be shared: measure ours before and after the (long) baseline and use the
    # mean, so a load change during the run does not favour either side
    first_s, ours_out = ours(table)
    base_s, base_out = baseline(rows)
    second_s, _ = ours(table)
    ours_s = (first_s + second_s) / 2
    workers = os.cpu_count() or 1
    par_s = ours_parallel(table, workers)
    ours_recall, planted = recall(truth, ours_out)
    base_recall, _ = recall(truth, base_out)
    print(f"cases: {n}  strings: {strings}  planted personal values: {planted}")
    print(
        f"baseline (default Presidio, per string): {n / base_s:8.1f} cases/s "
        f"({base_s:.2f} s)  recall {base_recall:.4f}"
    )
    print(
        f"this step (redact_table, 1 process):     {n / ours_s:8.1f} cases/s "
        f"({ours_s:.2f} s)  recall {ours_recall:.4f}"
    )
    print(
        f"this step, {workers} shards in {workers} processes: {n / par_s:8.1f} cases/s "
        f"({par_s:.2f} s wall)"
    )
    print(f"throughput ratio, 1 process:   {base_s / ours_s:.1f}x")
    print(f"throughput ratio, {workers} processes: {base_s / par_s:.1f}x   (target >= 10x)")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")


if __name__ == "__main__":
    main()
