"""Labelled evaluation of the bare-name recognizer (``redaction/recognizers/bare_name.py``).

* **Recall** on a hand-written list of full names of varied origin and shape (first+last, middle
  initial, hyphenated, O'/Mc, romanised Chinese, Korean, Vietnamese, Yoruba...; written for this
  evaluation, not drawn from the recognizer's own lists), each placed mid-sentence after an
  ordinary capitalised word ("Yesterday NAME asked"), and on the PERSON values the generator
  planted (Faker en_US names: the lists the recognizer uses come from the same package, so this
  figure is optimistic and shown apart).
* **Precision**: every string leaf of the generator corpus and of the tau-bench runs (user and
  agent turns, tool arguments and results) is searched. A generator finding is a true positive
  when it is (part of) a value the generator planted; a tau-bench finding when it is the name of
  a user in the tau-bench users tables or otherwise a person's name by inspection (listed).
  Anything else (a street, a product) is a false positive.
* **Cost**: microseconds per string of the detector (it is also the pre-filter: every scanned
  string pays it), and ``redact_table`` on the generator corpus with and without the recognizer,
  interleaved in one process, CPU time (best of ``--repeat``), so machine load affects both alike.

    .venv/bin/python bench/bare_name_eval.py [--sessions 300] [--seed 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import contextlib

import pyarrow as pa
import pyarrow.parquet as pq

from golden_distill.datasets.ingest import ingest
from golden_distill.redaction.config import KNOWN_RECOGNIZERS, RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.recognizers.bare_name import find_bare_names
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table
from golden_distill.synthetic import generate_corpus, load_truth

KEY = PseudonymKey(b"eval-key-Tq7Ws2Ed9Rf4Tg8Yh1Uj6Ik3Ol5Pz0Xc")
TAU = Path(__file__).resolve().parent.parent / "tests" / "data" / "tau-bench"
TAU_RUNS = ("airline-gpt-4o", "retail-tool-calling", "retail-with-preconditions")

#: Full names for recall, written for this evaluation (varied origins and shapes).
NAMES = """Oswin Fairleigh|Mary Fairleigh|Grace Hill|Will Smith|Mark Thompson|Hope Castillo
|Chase Whitaker|Rose Okonkwo|Amber Lindqvist|Summer Nakamura|Jack O'Brien|Frank McAllister
|Bob Kowalski|Dawn Ashby|Ray Delacroix|Glen Harrowgate|Emma Brightwater|Noah Feldstein
|Ava Marchetti|Liam Quenby|Olivia Thornbury|Sophia Vandermeer|Isabella Rossetti|Ethan Blackwood
|Lucas Moreau|Mateo Fernandez|Camila Restrepo|Valentina Ibarra|Santiago Villalobos
|Priya Raghunathan|Arjun Venkataraman|Ananya Iyer|Rohan Deshpande|Wei Zhang|Mei Lin
|Jun Takahashi|Yuki Morimoto|Hiroshi Tanaka|Min-jun Park|Ji-woo Choi|Nguyen Van An
|Thi Lan Pham|Olusegun Adeyemi|Chiamaka Eze|Kwame Mensah|Amara Okafor|Fatima Al-Sayed
|Omar Haddad|Layla Mansour|Yusuf Demir|Elif Yilmaz|Dmitri Volkov|Anastasia Petrova
|Katarzyna Nowak|Piotr Zielinski|Jan Novotny|Lars Eriksson|Ingrid Halvorsen|Sven Lindgren
|Astrid Bergstrom|Pieter Van Dijk|Greta Hoffmann|Klaus Richter|Matthias Kessler|Chiara Bianchi
|Giovanni Esposito|Luca Ferraro|Beatriz Carvalho|Joao Pereira|Ines Duarte|Siobhan Gallagher
|Niamh O'Sullivan|Declan Murphy|Rhys Llewellyn|Carys Pritchard|Alistair Dunmore
|Harriet Ashcombe|Tobias Wren|Penelope Strand|Cornelius Abernathy|Oswin J. Fairleigh
|Mary Fairleigh-Moss|Tamsin Quarrie|Idris Holloway|Zephyrine Quill|Eleanor Vance|Marta Quenby
|Desmond Albrecht|Ruth Ogilvie|Walter Pennington"""
NAME_LIST = [n.strip() for n in NAMES.replace("\n", "").split("|")]


def leaves(obj: Any, out: list[str]) -> None:
    """Every string and object key, JSON inside strings included."""
    if isinstance(obj, str):
        out.append(obj)
        s = obj.strip()
        if s[:1] in "{[":
            with contextlib.suppress(ValueError):
                leaves(json.loads(s), out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.append(str(k))
            leaves(v, out)
    elif isinstance(obj, list):
        for v in obj:
            leaves(v, out)


def tau_strings() -> tuple[list[str], set[str]]:
    strings: list[str] = []
    for name in TAU_RUNS:
        leaves(json.loads(gzip.decompress((TAU / f"{name}.json.gz").read_bytes())), strings)
    users: set[str] = set()
    for env in ("airline", "retail"):
        table = json.loads(gzip.decompress((TAU / f"users-{env}.json.gz").read_bytes()))
        for rec in table.values():
            n = rec.get("name") or {}
            users.add(f"{n.get('first_name')} {n.get('last_name')}".lower())
    return strings, users


def _is_person(found: str, people: set[str]) -> bool:
    f = found.lower()
    return any(f in p or p in f for p in people)


def precision(strings: list[str], people: set[str]) -> tuple[Counter[str], Counter[str]]:
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    for text in set(strings):
        for start, end, _ in find_bare_names(text):
            found = text[start:end]
            (tp if _is_person(found, people) else fp)[found] += 1
    return tp, fp


def recall(names: list[str]) -> tuple[int, list[str]]:
    missed = []
    for name in names:
        text = f"Yesterday {name} asked for a refund"
        spans = {text[s:e] for s, e, _ in find_bare_names(text)}
        if name not in spans:
            missed.append(name)
    return len(names) - len(missed), missed


def cost(strings: list[str], table: pa.Table, repeat: int) -> dict[str, float]:
    distinct = list(set(strings))
    find_bare_names("Oswin Fairleigh")  # load the word lists first
    t = time.process_time()
    for text in distinct:
        find_bare_names(text)
    per_string = (time.process_time() - t) / len(distinct) * 1e6
    without = RedactionConfig(recognizers=[n for n in KNOWN_RECOGNIZERS if n != "bare_name"])
    red = {"with": Redactor.from_config(RedactionConfig(), KEY), "without": None}
    red["without"] = Redactor.from_config(without, KEY)
    times: dict[str, list[float]] = {"with": [], "without": []}
    redact_table(table.slice(0, 20), red["with"])  # warm both
    redact_table(table.slice(0, 20), red["without"])
    for _ in range(repeat):
        for label in ("without", "with"):
            t = time.process_time()
            redact_table(table, red[label])
            times[label].append(time.process_time() - t)
    return {
        "us_per_string": per_string,
        "strings": len(distinct),
        "with": min(times["with"]),
        "without": min(times["without"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw"
        generate_corpus(raw, sessions=args.sessions, seed=args.seed)
        truth = load_truth(raw)
        ingest([str(raw)], Path(tmp) / "canon")
        table = pa.concat_tables(
            pq.read_table(p) for p in sorted((Path(tmp) / "canon" / "cases").glob("*.parquet"))
        )
    planted = {v.lower() for rec in truth.records.values() for _, v, _ in rec.pii}
    gen_names = sorted(
        {v for rec in truth.records.values() for e, v, _ in rec.pii if e == "PERSON"}
    )
    gen_strings: list[str] = []
    for row in table.to_pylist():
        leaves(row, gen_strings)
    tau, tau_users = tau_strings()

    got, missed = recall(NAME_LIST)
    print(f"recall, hand-written names: {got}/{len(NAME_LIST)} = {got / len(NAME_LIST):.3f}")
    print(f"  missed: {', '.join(missed)}")
    g_hit = sum(bool(find_bare_names(n)) for n in gen_names if " " in n and n.isascii())
    g_all = sum(1 for n in gen_names if " " in n and n.isascii())
    print(f"recall, generator's Latin full names (optimistic, same lists): {g_hit}/{g_all}")
    for label, strings, people in (
        (f"generator corpus (--sessions {args.sessions})", gen_strings, planted),
        ("tau-bench runs (400)", tau, tau_users),
    ):
        tp, fp = precision(strings, people)
        n_tp, n_fp = sum(tp.values()), sum(fp.values())
        print(
            f"precision, {label}: {len(set(strings))} distinct strings, findings {n_tp + n_fp}"
            f" (distinct {len(tp) + len(fp)}), a known person/planted value {n_tp},"
            f" other {n_fp} (distinct {len(fp)}) -> {n_tp / max(n_tp + n_fp, 1):.3f}"
        )
        print("  other: " + ", ".join(f"{k} x{v}" for k, v in fp.most_common(25)))
    c = cost(gen_strings, table, args.repeat)
    print(f"detector: {c['us_per_string']:.1f} us per distinct string ({c['strings']} strings)")
    ratio = c["with"] / c["without"]
    print(
        f"redact_table on {table.num_rows} cases, CPU s, best of {args.repeat}: without bare_name "
        f"{c['without']:.2f} s, with {c['with']:.2f} s ({(ratio - 1) * 100:+.1f}%)"
    )
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus", file=sys.stdout)


if __name__ == "__main__":
    main()
