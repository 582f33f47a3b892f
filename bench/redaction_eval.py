"""Labelled evaluation of redaction: precision and recall per entity type on planted values.

Labels come from construction, not from a detector: the generator's truth file names every
personal value it planted (entity type and value, per record), and the adversarial corpus
(``tests/redaction/adversarial_corpus.py``) one value per probe, by category.

* **Recall** per planted entity type (and per adversarial category): a planted value counts as
  caught when it (or its digits-only form, for 7+ digits) appears nowhere in the published case,
  or when the case was refused (nothing of it published).
* **Precision** per detected entity type: every value the step decided to replace as personal
  (key-name rules, evidence keys, recognizers on normalised text, propagation variants) is a true
  positive when it overlaps a planted value of the same record (case-insensitive substring either
  way: "Mei" of "Mei Brown", the digits of a phone), else a false positive. Primary keys are
  pseudonymised by rule, not detected: they are counted apart.

    .venv/bin/python bench/redaction_eval.py [--sessions 300] [--seed 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import tempfile
from collections import Counter
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
from golden_distill.synthetic import generate_corpus, load_truth

KEY = PseudonymKey(b"eval-key-Tq7Ws2Ed9Rf4Tg8Yh1Uj6Ik3Ol5Pz0Xc")


def _table(canon: Path) -> pa.Table:
    return pa.concat_tables(pq.read_table(p) for p in sorted((canon / "cases").glob("*.parquet")))


def _forms(value: str) -> list[str]:
    digits = re.sub(r"\D", "", value)
    return [value, digits] if len(digits) >= 7 and digits != value else [value]


def _overlaps(found: str, planted: list[str]) -> bool:
    f = found.casefold().strip()
    fd = re.sub(r"\D", "", f)
    for p in planted:
        q = p.casefold()
        if f and (f in q or q in f):
            return True
        qd = re.sub(r"\D", "", q)
        if len(fd) >= 7 and len(qd) >= 7 and (fd in qd or qd in fd):
            return True
    return False


def evaluate_generator(root: Path, sessions: int, seed: int) -> dict[str, Any]:
    generate_corpus(root / "raw", sessions=sessions, seed=seed)
    ingest([str(root / "raw")], root / "canon")
    truth = load_truth(root / "raw")
    table = _table(root / "canon")
    redactor = Redactor.from_config(RedactionConfig(), KEY)
    result = redact_table(table, redactor)
    published = {
        r["source"]["source_record_id"]: orjson.dumps(r, default=str).decode()
        for r in result.table.to_pylist()
    }
    recall_hit: Counter[str] = Counter()
    recall_all: Counter[str] = Counter()
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    findings = redactor.findings_cache()
    for row in table.to_pylist():
        rid = row["source"]["source_record_id"]
        rec = truth.records.get(rid)
        if rec is None or row.get("tenant_id") == truth.opt_out_tenant:
            continue
        text = published.get(rid, "")
        planted = [value for _, value, _ in rec.pii]
        for entity, value, _ in rec.pii:
            recall_all[entity] += 1
            recall_hit[entity] += not any(f in text for f in _forms(value))
        scan = redactor.scan(row)
        redactor.absorb_findings(scan, findings)
        for folded, entity in scan.index.pii.items():
            spelling = scan.index.pii_spelling[folded]
            if _overlaps(spelling, planted):
                tp[entity] += 1
            else:
                fp[entity] += 1
    return {"recall_hit": recall_hit, "recall_all": recall_all, "tp": tp, "fp": fp}


def evaluate_adversarial(root: Path) -> dict[str, Any]:
    path = Path(__file__).resolve().parent.parent / "tests/redaction/adversarial_corpus.py"
    spec = importlib.util.spec_from_file_location("adversarial_corpus", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["adversarial_corpus"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    by_record = module.write_corpus(root / "adv" / "probes.jsonl")
    ingest([str(root / "adv")], root / "adv-canon")
    table = _table(root / "adv-canon")
    result = redact_table(table, Redactor.from_config(RedactionConfig(), KEY))
    published = {r["source"]["source_record_id"]: r for r in result.table.to_pylist()}
    hit: Counter[str] = Counter()
    total: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    for rid, probe in by_record.items():
        total[probe.category] += 1
        if rid not in published:
            refused[probe.category] += 1
            hit[probe.category] += 1
            continue
        # both escaped and raw forms: CJK markers must be searched as written
        text = orjson.dumps(published[rid], default=str).decode()
        text += json.dumps(published[rid], default=str, ensure_ascii=False)
        hit[probe.category] += not any(f in text for f in probe.forms())
    return {"hit": hit, "total": total, "refused": refused}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gen = evaluate_generator(Path(tmp), args.sessions, args.seed)
        adv = evaluate_adversarial(Path(tmp))
    print(f"generator corpus (--sessions {args.sessions} --seed {args.seed})")
    print("| planted entity type | planted | caught | recall |")
    print("|---|---:|---:|---:|")
    for entity in sorted(gen["recall_all"]):
        n, h = gen["recall_all"][entity], gen["recall_hit"][entity]
        print(f"| {entity} | {n} | {h} | {h / n:.4f} |")
    print("\n| detected entity type | replaced | true positive | false positive | precision |")
    print("|---|---:|---:|---:|---:|")
    for entity in sorted(set(gen["tp"]) | set(gen["fp"])):
        t, f = gen["tp"][entity], gen["fp"][entity]
        print(f"| {entity} | {t + f} | {t} | {f} | {t / (t + f):.4f} |")
    print("\nadversarial corpus (one planted value per probe; a refused case counts as caught)")
    print("| category | probes | caught | of which refused | recall |")
    print("|---|---:|---:|---:|---:|")
    for category in sorted(adv["total"]):
        n, h, r = adv["total"][category], adv["hit"][category], adv["refused"][category]
        print(f"| {category} | {n} | {h} | {r} | {h / n:.4f} |")
    n, h = sum(adv["total"].values()), sum(adv["hit"].values())
    print(f"| all | {n} | {h} | {sum(adv['refused'].values())} | {h / n:.4f} |")


if __name__ == "__main__":
    main()
