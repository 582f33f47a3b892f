"""Evaluate redaction on the labelled corpus in ``tests/data/privacy_eval`` (see its README).

Each item becomes one canonical case with its text in the declared place; the cases of a half go
through ``Redactor.redact_many`` together, the batch path ``redact_table`` uses for a shard (so
the shard-wide name dictionary and propagation act as in a run). Per entity type it counts:

* recall: a planted value is caught when no normalised form of it (as written, lower case,
  digits only, alphanumerics only; for names each part) is found in any *decoded view* of the
  published case (percent-decoded twice, quoted-printable, HTML tags dropped, reversed, ``(at)``
  spellings, hex and base64 runs decoded as UTF-8 and UTF-16LE, spelled digits, combining marks
  and keycaps dropped, O/l read as 0/1). The views are the evaluator's own, independent of the
  detectors, so an encoded value left in place counts as a leak.
* refusals: a case not published leaks nothing but is counted apart (refusing all is no pass).
* precision: negatives (non-personal look-alikes) that no longer appear verbatim.

    .venv/bin/python bench/privacy_eval.py [--half tuning|heldout|both|fresh]
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import html
import json
import quopri
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "privacy_eval"
_DIGIT_WORDS = "zero one two three four five six seven eight nine".split()  # noqa: SIM905
WORDS = {w: str(i) for i, w in enumerate(_DIGIT_WORDS)}
_TAGS = re.compile(r"<[^>]{0,80}>")
_AT = re.compile(r"\s*(?:\(at\)|\[at\]|@)\s*", re.I)
_DOT = re.compile(r"\s*\[dot\]\s*", re.I)
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}){6,}\b")
_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


def load(half: str) -> list[dict[str, Any]]:
    with (DATA / f"{half}.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _is_json(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict | list)
    except ValueError:
        return False


def build_case(item: dict[str, Any], make_case: Any, make_step: Any) -> dict[str, Any]:
    """A canonical case with ``item["text"]`` in ``item["place"]`` (JSON kept as JSON)."""
    text, place = item["text"], item["place"]
    as_json = text if _is_json(text) else json.dumps({"note": text}, ensure_ascii=False)
    row = make_case(case_id=item["id"], user_input="hello")
    if place == "user_input":
        row["user_input"] = text
    elif place == "step_arguments":
        row["steps"] = [make_step(0, "lookup", as_json, '{"status": "ok"}')]
    elif place == "step_response":
        row["steps"] = [make_step(0, "lookup", '{"query": "q1"}', as_json)]
    elif place == "messages":
        msgs = [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
        row["context"] = {**row["context"], "messages": json.dumps(msgs, ensure_ascii=False)}
    elif place == "answer_text":
        row["outcome"] = {**row["outcome"], "answer_text": text}
    elif place == "handoff_reason":
        row["outcome"] = {**row["outcome"], "handoff": True, "handoff_reason": text}
    elif place == "final_state":
        row["outcome"] = {**row["outcome"], "final_state": text}
    else:
        raise ValueError(f"unknown place {place!r} in item {item['id']}")
    return row


def leaves(value: Any) -> list[str]:
    """Every string (and number, as text) in a row, JSON inside strings opened at any depth."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
        elif isinstance(v, str):
            out.append(v)
            if v[:1] in "[{" and len(v) > 1:
                with contextlib.suppress(ValueError):
                    stack.append(json.loads(v))
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out.append(repr(v))
            if isinstance(v, float) and v.is_integer():
                out.append(str(int(v)))
    return out


def _decoded(text: str) -> list[str]:
    extra: list[str] = []
    for m in _HEX.finditer(text):
        extra.append(binascii.unhexlify(m.group()).decode("utf-8", "replace"))
    for m in _B64.finditer(text):
        raw = m.group()
        try:
            data = base64.b64decode(raw + "=" * (-len(raw) % 4))
        except (binascii.Error, ValueError):
            continue
        extra.append(data.decode("utf-8", "replace"))
        extra.append(data.decode("utf-16-le", "replace"))
    return extra


def views(text: str) -> list[str]:
    """The decoded views of one published string in which a planted value is looked for."""
    out = [text]
    t = unquote(unquote(text))
    t = html.unescape(t)
    with contextlib.suppress(ValueError):
        t = quopri.decodestring(t.encode("utf-8")).decode("utf-8", "replace")
    t = _TAGS.sub("", t)
    t = "".join(
        c for c in t if not unicodedata.combining(c) and c not in "\ufe0f\u20e3\u202e\u202c"
    )
    t = _DOT.sub(".", _AT.sub("@", t))
    out += [t, t[::-1]]
    out += _decoded(text)
    words = re.sub(
        r"\b(" + "|".join(WORDS) + r")\b", lambda m: WORDS[m.group().lower()], t, flags=re.I
    )
    out.append(re.sub(r"(?<=\d)\s(?=\d)", "", words))
    out.append(
        re.sub(
            r"(?<=[\d\sOl])[Ol]|[Ol](?=[\d\sOl]*\d)", lambda m: "0" if m.group() == "O" else "1", t
        )
    )
    return out


def _alnum(s: str) -> str:
    return re.sub(r"[\W_]+", "", s).lower()


def _digits(s: str) -> str:
    return re.sub(r"\D+", "", s)


def leaked(value: str, entity: str, hay_views: list[str]) -> bool:
    """True when any normalised form of ``value`` is in a view of the published case."""
    low = [v.lower() for v in hay_views]
    forms = {value.lower()}
    if entity == "PERSON":
        forms |= {p.lower() for p in re.split(r"[\s.\-_,]+", value) if len(p) >= 2}
    if any(f in v for f in forms for v in low):
        return True
    d = _digits(value)
    if len(d) >= 7 and any(d in _digits(v) for v in hay_views):
        return True
    a = _alnum(value)
    return len(a) >= 6 and any(a in _alnum(v) for v in hay_views)


@dataclass
class Tally:
    planted: Counter[str] = field(default_factory=Counter)
    caught: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    negatives: Counter[str] = field(default_factory=Counter)
    negatives_rewritten: Counter[str] = field(default_factory=Counter)
    leaks: list[tuple[str, str, str]] = field(default_factory=list)
    rewritten: list[tuple[str, str]] = field(default_factory=list)
    cases: int = 0
    cases_refused: int = 0

    def recall(self, entity: str | None = None) -> float:
        keys = [entity] if entity else list(self.planted)
        p = sum(self.planted[k] for k in keys)
        return sum(self.caught[k] for k in keys) / p if p else 1.0

    def precision(self, entity: str | None = None) -> float:
        """Share of negatives left verbatim (per entity: negatives of that entity's items)."""
        keys = [entity] if entity else list(self.negatives)
        n = sum(self.negatives[k] for k in keys)
        return 1 - sum(self.negatives_rewritten[k] for k in keys) / n if n else 1.0

    @property
    def refusal_rate(self) -> float:
        return self.cases_refused / self.cases if self.cases else 0.0


def evaluate(items: list[dict[str, Any]], redactor: Any, make_case: Any, make_step: Any) -> Tally:
    """Redact every item's case (one batch) and tally recall, refusals and precision."""
    rows = [build_case(it, make_case, make_step) for it in items]
    results = {r.case_id: r for r in redactor.redact_many(rows)}
    t = Tally()
    for it in items:
        ent = it["entity"]
        res = results.get(it["id"])
        t.cases += 1
        for _ in it["values"]:
            t.planted[ent] += 1
        for _ in it["negatives"]:
            t.negatives[ent] += 1
        if res is None or not res.published:
            t.cases_refused += 1
            t.refused[ent] += len(it["values"])
            t.caught[ent] += len(it["values"])  # nothing published: no leak
            continue
        strings = leaves(res.row)
        hay = [v for s in strings for v in views(s)]
        for value in it["values"]:
            if leaked(value, ent, hay):
                t.leaks.append((it["id"], it["category"], value))
            else:
                t.caught[ent] += 1
        for neg in it["negatives"]:
            if not any(neg in s for s in strings):
                t.negatives_rewritten[ent] += 1
                t.rewritten.append((it["id"], neg))
    return t


def default_redactor() -> Any:
    from golden_distill.redaction.config import RedactionConfig
    from golden_distill.redaction.keys import PseudonymKey
    from golden_distill.redaction.redactor import Redactor

    key = PseudonymKey(b"privacy-eval-key-0123456789abcdef-not-for-production", "eval")
    return Redactor.from_config(RedactionConfig(), key)


def case_builders() -> tuple[Any, Any]:
    import importlib.util
    import sys

    path = DATA.parent.parent / "redaction" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_privacy_eval_builders", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.case, module.step


def report(name: str, t: Tally) -> list[str]:
    lines = [
        f"[{name}] cases {t.cases}  values {sum(t.planted.values())}  recall {t.recall():.3f}  "
        f"precision {t.precision():.3f}  refusal rate {t.refusal_rate:.3f}"
    ]
    for ent in sorted(t.planted | t.negatives):
        lines.append(
            f"  {ent:<24} n={t.planted[ent]:<4} recall {t.recall(ent):.3f}  "
            f"refused {t.refused[ent]:<3} precision {t.precision(ent):.3f}"
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--half",
        choices=("tuning", "heldout", "both", "fresh"),
        default="tuning",
        help="fresh: the second held-out batch (README); never tune against it",
    )
    ap.add_argument("--leaks", action="store_true", help="list leaked items (tuning half only)")
    args = ap.parse_args()
    redactor = default_redactor()
    make_case, make_step = case_builders()
    halves = ["tuning", "heldout"] if args.half == "both" else [args.half]
    for half in halves:
        t = evaluate(load(half), redactor, make_case, make_step)
        print("\n".join(report(half, t)))
        if args.leaks and half == "tuning":
            for leak in t.leaks:
                print("  leak", *leak)
            for rw in t.rewritten:
                print("  rewritten", *rw)


if __name__ == "__main__":
    main()
