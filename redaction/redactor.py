"""Per-case orchestration: scan, analyze, replace, verify, and a typed result.

One case is redacted as a unit because propagation and key consistency are per case: first every
text-bearing field is walked (key rules, key fields, key text patterns; free text collected),
then free text goes through the analyzer (``shard.py`` batches this step across a whole shard),
then every known value is replaced everywhere in the case, step hashes are recomputed from the
redacted arguments (replay looks calls up by them), and the result is verified. Anything that
goes wrong sends the case to quarantine with a reason code and entity types, never its text.

A ``Redactor`` holds only configuration and engines, never per-call state: one instance may be
reused across tables and shared by threads, and a case's output depends only on (its batch,
config, key). Per-call state (the findings cache, the batch's name dictionary, each case's known
values) lives in objects the call creates and drops.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from golden_distill.datasets.canonical_json import canonical_args_sha256, normalise_volatile_keys
from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.findings_cache import FindingsCache
from golden_distill.redaction.key_rules import (
    KeyRule,
    NonPersonalRule,
    Path,
    PiiRule,
    RuleMatcher,
)
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.name_dictionary import is_dictionary_name, names_in
from golden_distill.redaction.propagation import Propagator, ValueIndex, make_anonymizer
from golden_distill.redaction.pseudonym import key_pseudonym, value_token
from golden_distill.redaction.slots import case_slots
from golden_distill.redaction.verify import ScrubbedField, verify_scrubbed
from golden_distill.redaction.walker import (
    Slot,
    iter_keys,
    iter_leaves,
    nested_json,
    rewrite_json_strings,
    rewrite_json_text,
)

STAGE = "redaction"
OPTED_OUT = "tenant_opted_out"
REDACTION_ERROR = "redaction_error"
_INTEGER = re.compile(r"-?\d+")


@dataclass(slots=True)
class CaseRedaction:
    """The outcome for one case: a redacted row, or a quarantine reason (never both)."""

    case_id: str
    row: dict[str, Any] | None
    reason: str | None = None
    entity_types: tuple[str, ...] = ()
    detail: str = ""
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def published(self) -> bool:
        return self.row is not None


@dataclass(slots=True)
class CaseScan:
    """A case after the structural pass, waiting for free-text findings."""

    row: dict[str, Any]
    slots: list[tuple[Slot, Callable[[str], None]]]
    index: ValueIndex
    free_texts: list[str]
    numeric_slots: set[int]
    non_personal: set[str]
    absorbed: bool = False


def _no_path() -> Path:
    return ()


def _propagatable(value: Any) -> bool:
    """Structured values that are ordinary lowercase words ("mobile", "home") stay local."""
    text = str(value)
    return not (text.isascii() and text.isalpha() and text.islower())


class Redactor:
    """Redacts canonical case rows. Picklable (rebuilt from config and key in a new process)."""

    def __init__(
        self,
        config: RedactionConfig,
        key: PseudonymKey,
        volatile_keys: Iterable[str] | None = None,
        opt_out_tenants: Iterable[str] = (),
    ) -> None:
        self.config = config
        self.key = key
        self.volatile_keys = None if volatile_keys is None else sorted(volatile_keys)
        self._volatile = normalise_volatile_keys(self.volatile_keys)
        self.matcher = RuleMatcher(config)
        self.analyzer = TextAnalyzer(config)
        self.anonymizer = make_anonymizer()
        self.scan_threshold = min(config.score_threshold, config.verify_threshold)
        self.column_keys: dict[str, KeyRule] = {}
        self.text_patterns: list[tuple[re.Pattern[str], KeyRule]] = []
        for kf in config.key_fields:
            rule = self.matcher.key_rules[kf.key_type]
            for column in kf.columns:
                self.column_keys[column] = rule
            if kf.text_pattern:
                self.text_patterns.append(
                    (re.compile(rf"(?<![0-9])(?:{kf.text_pattern})(?![0-9A-Za-z])"), rule)
                )
        self.opt_out = frozenset(opt_out_tenants)

    @classmethod
    def from_config(
        cls,
        config: RedactionConfig,
        key: PseudonymKey,
        volatile_keys: Iterable[str] | None = None,
        opt_out_tenants: Iterable[str] = (),
    ) -> Redactor:
        """``volatile_keys``: ingest's list (for step hashes); ``opt_out_tenants``: the
        ``funnels.redacted.opt_out_tenants`` list (original tenant ids)."""
        return cls(config, key, volatile_keys, opt_out_tenants)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Redactor, (self.config, self.key, self.volatile_keys, sorted(self.opt_out)))

    @property
    def key_id(self) -> str:
        return self.key.key_id

    # -- analysis, cached per call --------------------------------------------------------
    def findings_cache(self) -> FindingsCache:
        """A new findings cache for one call (a table, a batch, a case): owned by the caller,
        never by the redactor, so calls cannot see or clear each other's entries."""
        return FindingsCache(self.analyzer, self.scan_threshold)

    # -- the three phases ----------------------------------------------------------------
    def scan(self, row: dict[str, Any]) -> CaseScan:
        """Structural pass: key rules, key fields, key text patterns; collect free text."""
        row, slots = case_slots(row)
        index = ValueIndex(
            self.key.secret, self.config.min_propagation_length, self.config.min_name_length
        )
        for column, rule in self.column_keys.items():
            value = row.get(column)
            if value:
                index.add_key(str(value), rule)
        free_texts: list[str] = []
        numeric_slots: set[int] = set()
        non_personal: set[str] = set()
        for i, (slot, _) in enumerate(slots):
            if not slot.is_json:
                free_texts.append(slot.text)
                continue
            for path, leaf in iter_leaves(slot.parsed):
                rule = self.matcher.match(path)
                if rule is None:
                    if isinstance(leaf, str):
                        free_texts.append(leaf)
                    continue
                if isinstance(rule, NonPersonalRule):
                    non_personal.add(str(leaf))
                    continue
                if not isinstance(leaf, str):
                    numeric_slots.add(i)
                if isinstance(rule, KeyRule):
                    index.add_key(str(leaf), rule)
                else:
                    index.add_pii(str(leaf), rule.entity_type, propagate=_propagatable(leaf))
        key_texts = [k for slot, _ in slots if slot.is_json for k in iter_keys(slot.parsed)]
        for text in (*free_texts, *key_texts):  # ids also hide in keys ("order:ORD-1": ...)
            for pattern, rule in self.text_patterns:
                for m in pattern.finditer(text):
                    index.add_key(m.group(0), rule)
        return CaseScan(row, slots, index, free_texts, numeric_slots, non_personal)

    def absorb_findings(self, scan: CaseScan, findings: FindingsCache) -> None:
        """Add the free-text findings of a scanned case to its known values."""
        if scan.absorbed:
            return
        for text, found in findings(scan.free_texts).items():
            for f in found:
                value = text[f.start : f.end]
                if f.score >= self.config.score_threshold and value not in scan.non_personal:
                    scan.index.add_pii(value, f.entity_type)
        scan.absorbed = True

    def add_dictionary_names(self, scan: CaseScan, names: frozenset[str]) -> None:
        """Names known elsewhere in the shard that this case's free text mentions."""
        for name in names_in(scan.free_texts, names):
            scan.index.add_pii(name, "PERSON")

    def finish(self, scan: CaseScan, findings: FindingsCache) -> CaseRedaction:
        """Add free-text findings, replace everywhere, recompute hashes, verify."""
        self.absorb_findings(scan, findings)
        index = scan.index
        prop = index.build(self.anonymizer)
        counts: Counter[str] = Counter()
        scrubbed: list[ScrubbedField] = []
        for i, (slot, put) in enumerate(scan.slots):
            if slot.is_json:
                new = self._rewrite_json(slot, prop, counts, i in scan.numeric_slots)
            else:
                new = prop.replace(slot.text, counts)
            if new != slot.text:
                put(new)
            scrubbed.append(ScrubbedField(new, slot.is_json))
        row = scan.row
        for column in self.column_keys:
            value = row.get(column)
            if value:
                row[column] = prop.substitute(str(value))
                counts[self.column_keys[column].label] += 1
        outcome = row.get("outcome")
        if outcome and outcome.get("final_state"):
            outcome["final_state"] = prop.replace(outcome["final_state"], counts)
        expected = row.get("expected")
        if expected and expected.get("final_state"):
            expected["final_state"] = prop.replace(expected["final_state"], counts)
        for step in row.get("steps") or []:
            if step.get("arguments") is not None:
                step["canonical_args_sha256"] = canonical_args_sha256(
                    step["arguments"], self._volatile
                )
        verdict = verify_scrubbed(
            scrubbed, prop, findings, self.config.verify_threshold, scan.non_personal
        )
        if not verdict.ok:
            return CaseRedaction(
                row.get("case_id") or "",
                None,
                verdict.reason,
                verdict.entity_types,
                counts=counts,
            )
        row["redaction"] = orjson.dumps(dict(sorted(counts.items()))).decode()
        return CaseRedaction(row.get("case_id") or "", row, counts=counts)

    def _rewrite_json(
        self, slot: Slot, prop: Propagator, counts: Counter[str], numeric: bool
    ) -> str:
        short = prop.local_values
        text = slot.text
        escaped = "\\u" in text  # values may hide behind \u escapes: decode to be sure
        # key paths are only needed for numbers under rules and for short values (replaced
        # where a rule owns them, not everywhere): otherwise the fast string-token path will do
        needs_paths = numeric or bool(short and (escaped or any(v in text for v in short)))
        if not needs_paths and not (escaped or prop.has_any(text)):
            return text
        matcher = self.matcher
        secret = self.key.secret

        def on_string(value: str, path_fn: Callable[[], Path]) -> str:
            if nested_json(value) is not None:  # JSON inside a string: edit it as JSON too
                if not needs_paths:
                    return rewrite_json_strings(value, lambda v: on_string(v, _no_path))
                return rewrite_json_text(value, on_string, on_number if numeric else None)
            if value in short and isinstance(matcher.match(path_fn()), KeyRule | PiiRule):
                label = prop.label_of(value)
                if label is not None:
                    counts[label] += 1
                    return prop.substitute(value)
            return prop.replace(value, counts)

        def on_number(token: str, path: Path) -> str | None:
            rule = matcher.match(path)
            if rule is None or isinstance(rule, NonPersonalRule):
                return None
            if isinstance(rule, PiiRule):
                counts[rule.entity_type] += 1
                new = value_token(token, rule.entity_type, secret)
                prop.emitted.add(new)
                return orjson.dumps(new).decode()
            if not _INTEGER.fullmatch(token):
                return None  # keys are integers; a float "key" is left for verification
            counts[rule.label] += 1
            new = key_pseudonym(token, rule.key_type, secret, rule.prefix)
            prop.emitted.add(new)
            return new

        if not needs_paths:  # edit string tokens only
            return rewrite_json_strings(text, lambda v: on_string(v, _no_path))
        return rewrite_json_text(text, on_string, on_number if numeric else None)

    # -- the whole thing ----------------------------------------------------------------
    def redact_many(
        self, rows: list[dict[str, Any]], findings: FindingsCache | None = None
    ) -> list[CaseRedaction]:
        """Redact a batch of rows: one batched analyzer call for all their free text.

        ``findings``: a cache shared by the batches of one table (``redact_table``); a new one
        when omitted. The name dictionary is built from ``rows`` only and dropped on return.
        """
        if findings is None:
            findings = self.findings_cache()
        out: list[CaseRedaction | None] = [None] * len(rows)
        scans: list[tuple[int, CaseScan]] = []
        for i, row in enumerate(rows):
            case_id = str(row.get("case_id") or "")
            if row.get("tenant_id") in self.opt_out:
                out[i] = CaseRedaction(case_id, None, OPTED_OUT)
                continue
            try:
                scans.append((i, self.scan(row)))
            except Exception as exc:
                out[i] = CaseRedaction(case_id, None, REDACTION_ERROR, detail=type(exc).__name__)
        # one batched analyzer call; if it fails, each case retries (and fails closed) below
        with contextlib.suppress(Exception):
            findings([t for _, scan in scans for t in scan.free_texts])
        if self.config.shard_name_dictionary:
            names: set[str] = set()
            for _, scan in scans:
                try:
                    self.absorb_findings(scan, findings)
                except Exception:
                    continue  # fails closed in finish()
                names.update(
                    spelling
                    for folded, spelling in scan.index.pii_spelling.items()
                    if scan.index.pii[folded] == "PERSON" and is_dictionary_name(spelling)
                )
            frozen = frozenset(names)
            for _, scan in scans:
                self.add_dictionary_names(scan, frozen)
        for i, scan in scans:
            try:
                out[i] = self.finish(scan, findings)
            except Exception as exc:
                case_id = str(rows[i].get("case_id") or "")
                out[i] = CaseRedaction(case_id, None, REDACTION_ERROR, detail=type(exc).__name__)
        return [r for r in out if r is not None]

    def redact(self, row: dict[str, Any]) -> CaseRedaction:
        """Redact one case row (fail closed: any error quarantines it)."""
        case_id = str(row.get("case_id") or "")
        if row.get("tenant_id") in self.opt_out:
            return CaseRedaction(case_id, None, OPTED_OUT)
        try:
            return self.finish(self.scan(row), self.findings_cache())
        except Exception as exc:  # fail closed, and never echo the message (it may hold text)
            return CaseRedaction(case_id, None, REDACTION_ERROR, detail=type(exc).__name__)
