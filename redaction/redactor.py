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
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from golden_distill.datasets.canonical_json import canonical_args_sha256, normalise_volatile_keys
from golden_distill.datasets.tenant_opt_out import OPTED_OUT, TenantOptOut
from golden_distill.redaction.analyzer import TextAnalyzer
from golden_distill.redaction.case_inventory import case_inventory, verifier_fields
from golden_distill.redaction.case_scan import CaseScan, widen_known_names
from golden_distill.redaction.collisions import CollisionGuard
from golden_distill.redaction.config import FLOOR_RECOGNIZERS, RedactionConfig
from golden_distill.redaction.findings_cache import FindingsCache
from golden_distill.redaction.inventory import FieldKey
from golden_distill.redaction.json_rewrite import JsonSlotRewriter
from golden_distill.redaction.key_rules import (
    KeyRule,
)
from golden_distill.redaction.key_scan import KeyScanner
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.name_dictionary import NameFinder, is_dictionary_name
from golden_distill.redaction.propagation import make_anonymizer
from golden_distill.redaction.provenance import provenance_uri
from golden_distill.redaction.recognizers import SPECS
from golden_distill.redaction.recognizers.presidio_predefined import SPEC as PREDEFINED
from golden_distill.redaction.verify import ScrubbedField, verify_scrubbed

STAGE = "redaction"
UNKNOWN_IDENTIFIER = "unknown_identifier"
REDACTION_ERROR = "redaction_error"


@dataclass(slots=True)
class CaseRedaction:
    """The outcome for one case: a redacted row, or a quarantine reason (never both)."""

    case_id: str
    row: dict[str, Any] | None
    reason: str | None = None
    entity_types: tuple[str, ...] = ()
    detail: str = ""
    counts: Counter[str] = field(default_factory=Counter)
    #: field inventory of the case: (tool, path, handling or found:/verifier: entity) -> n
    fields: Counter[FieldKey] = field(default_factory=Counter)

    @property
    def published(self) -> bool:
        return self.row is not None


def keys_of(prepared: list[CaseScan | CaseRedaction]) -> list[tuple[str, KeyRule]]:
    """Every original key of prepared cases (for a ``CollisionGuard``)."""
    return [kv for p in prepared if isinstance(p, CaseScan) for kv in p.index.keys.items()]


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
        self.scanner = KeyScanner(config, key.secret)
        self.matcher = self.scanner.matcher
        self.column_keys = self.scanner.column_keys
        self.analyzer = TextAnalyzer(config)
        # the verifier's floor: recognizers the config dropped, plus Presidio's predefined
        missing = [SPECS[n] for n in FLOOR_RECOGNIZERS if n not in config.active_recognizers]
        self.verify_extra = TextAnalyzer(config, [*missing, PREDEFINED])
        self.anonymizer = make_anonymizer()
        self.scan_threshold = min(config.score_threshold, config.verify_threshold)
        self.opt_out = TenantOptOut.of(opt_out_tenants)

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
        return (Redactor, (self.config, self.key, self.volatile_keys, sorted(self.opt_out.tenants)))

    @property
    def key_id(self) -> str:
        return self.key.key_id

    # -- analysis, cached per call --------------------------------------------------------
    def findings_cache(self) -> FindingsCache:
        """A new findings cache for one call (a table, a batch, a case): owned by the caller,
        never by the redactor, so calls cannot see or clear each other's entries."""
        return FindingsCache(self.analyzer, self.scan_threshold, self.verify_extra)

    # -- the three phases ----------------------------------------------------------------
    def scan(self, row: dict[str, Any]) -> CaseScan:
        """Structural pass over every leaf (``case_scan.scan_case``)."""
        return self.scanner.scan(row)

    def absorb_findings(self, scan: CaseScan, findings: FindingsCache) -> None:
        """Add the free-text findings of a scanned case to its known values."""
        if scan.absorbed:
            return
        for text, found in findings(scan.free_texts).items():
            for f in found:
                value = text[f.start : f.end]
                if f.score >= self.config.score_threshold and value not in scan.non_personal:
                    scan.index.add_pii(value, f.entity_type)
        if self.config.unknown_identifiers == "pseudonymise":
            for value in scan.unknown_ids:
                if value.casefold() not in scan.index.pii and value not in scan.non_personal:
                    scan.index.add_key(value, self.scanner.id_rule)
        scan.absorbed = True

    def add_dictionary_names(self, scan: CaseScan, find: NameFinder) -> None:
        """Names known elsewhere in the shard that this case's free text mentions."""
        for name in find(scan.free_texts):
            scan.index.add_pii(name, "PERSON")

    def finish(
        self, scan: CaseScan, findings: FindingsCache, guard: CollisionGuard | None = None
    ) -> CaseRedaction:
        """Add free-text findings, replace everywhere, recompute hashes, verify."""
        self.absorb_findings(scan, findings)
        widen_known_names(scan)
        index = scan.index
        case_id = scan.row.get("case_id") or ""
        if self.config.unknown_identifiers == "quarantine" and any(
            v.casefold() not in index.pii and v not in scan.non_personal for v in scan.unknown_ids
        ):
            return CaseRedaction(case_id, None, UNKNOWN_IDENTIFIER)
        if guard is None:
            guard = CollisionGuard(self.key.secret, index.keys.items())
        prop = index.build(self.anonymizer, guard)
        counts: Counter[str] = Counter()
        scrubbed: list[ScrubbedField] = []
        for i, (slot, put) in enumerate(scan.slots):
            if slot.is_json:
                new = JsonSlotRewriter(
                    self.matcher, self.key.secret, prop, counts, i in scan.numeric_slots
                ).rewrite(slot)
            else:
                new = prop.replace(slot.text, counts)
            if new != slot.text:
                put(new)
            scrubbed.append(
                ScrubbedField(new, slot.is_json, slot.parsed if new == slot.text else None)
            )
        row = scan.row
        for column in self.column_keys:
            value = row.get(column)
            if value:
                row[column] = prop.substitute(str(value))
                counts[self.column_keys[column].label] += 1
        owned: list[str] = []
        source = row.get("source")
        if isinstance(source, dict) and isinstance(source.get("uri"), str) and source["uri"]:
            source = row["source"] = dict(source)
            source["uri"] = provenance_uri(source["uri"], prop, self.key.secret)
            owned.append(source["uri"])
        for step in row.get("steps") or []:
            if step.get("arguments") is not None:
                step["canonical_args_sha256"] = canonical_args_sha256(
                    step["arguments"], self._volatile
                )
        verdict = verify_scrubbed(
            scrubbed,
            prop,
            findings.verify,
            self.config.verify_threshold,
            scan.non_personal,
            [v.text for v in scan.verbatim],
            owned,
        )
        fields = case_inventory(scan, findings, self.config.score_threshold)
        if not verdict.ok:
            fields.update(
                verifier_fields(scan, scrubbed, prop, findings, self.config.verify_threshold)
            )
            return CaseRedaction(
                row.get("case_id") or "",
                None,
                verdict.reason,
                verdict.entity_types,
                counts=counts,
                fields=fields,
            )
        row["redaction"] = orjson.dumps(dict(sorted(counts.items()))).decode()
        return CaseRedaction(row.get("case_id") or "", row, counts=counts, fields=fields)

    # -- the whole thing ----------------------------------------------------------------
    def prepare(
        self, rows: list[dict[str, Any]], findings: FindingsCache
    ) -> list[CaseScan | CaseRedaction]:
        """Per row: its scan with free-text findings absorbed (one batched analyzer call), or
        the refusal already known (tenant opted out, scan error)."""
        out: list[CaseScan | CaseRedaction] = []
        for row in rows:
            case_id = str(row.get("case_id") or "")
            if self.opt_out.excludes(row.get("tenant_id")):
                out.append(CaseRedaction(case_id, None, OPTED_OUT))
                continue
            try:
                out.append(self.scan(row))
            except Exception as exc:
                out.append(CaseRedaction(case_id, None, REDACTION_ERROR, detail=type(exc).__name__))
        scans = [p for p in out if isinstance(p, CaseScan)]
        # one batched analyzer call; if it fails, each case retries (and fails closed) later
        with contextlib.suppress(Exception):
            findings([t for scan in scans for t in scan.free_texts])
        for scan in scans:
            with contextlib.suppress(Exception):  # fails closed in finish()
                self.absorb_findings(scan, findings)
        return out

    def table_keys(
        self, rows: list[dict[str, Any]], findings: FindingsCache
    ) -> list[tuple[str, KeyRule]]:
        """Every original key of ``rows`` (for a table-wide ``CollisionGuard``) when their
        scans are not kept; fills ``findings`` on the way."""
        return keys_of(self.prepare(rows, findings))

    def redact_many(
        self,
        rows: list[dict[str, Any]],
        findings: FindingsCache | None = None,
        guard: CollisionGuard | None = None,
        prepared: list[CaseScan | CaseRedaction] | None = None,
    ) -> list[CaseRedaction]:
        """Redact a batch of rows: one batched analyzer call for all their free text.

        ``findings``: a cache shared by the batches of one table (``redact_table``); a new one
        when omitted. ``guard``: the table's ``CollisionGuard`` (else one for this batch).
        ``prepared``: ``prepare(rows)`` when the caller already made it. The name dictionary is
        built from ``rows`` only and dropped on return.
        """
        if findings is None:
            findings = self.findings_cache()
        if prepared is None:
            prepared = self.prepare(rows, findings)
        scans = [(i, p) for i, p in enumerate(prepared) if isinstance(p, CaseScan)]
        out: list[CaseRedaction | None] = [
            p if isinstance(p, CaseRedaction) else None for p in prepared
        ]
        if guard is None:
            guard = CollisionGuard(self.key.secret, keys_of(prepared))
        if self.config.shard_name_dictionary:
            names: set[str] = set()
            for _, scan in scans:
                if not scan.absorbed:
                    continue
                names.update(
                    spelling
                    for folded, spelling in scan.index.pii_spelling.items()
                    if scan.index.pii[folded] == "PERSON"
                    and folded not in scan.index.not_shared
                    and is_dictionary_name(spelling)
                )
            find = NameFinder(frozenset(names))
            for _, scan in scans:
                self.add_dictionary_names(scan, find)
        for i, scan in scans:
            try:
                out[i] = self.finish(scan, findings, guard)
            except Exception as exc:
                case_id = str(rows[i].get("case_id") or "")
                out[i] = CaseRedaction(case_id, None, REDACTION_ERROR, detail=type(exc).__name__)
        return [r for r in out if r is not None]

    def redact(self, row: dict[str, Any]) -> CaseRedaction:
        """Redact one case row (fail closed: any error quarantines it)."""
        case_id = str(row.get("case_id") or "")
        if self.opt_out.excludes(row.get("tenant_id")):
            return CaseRedaction(case_id, None, OPTED_OUT)
        try:
            return self.finish(self.scan(row), self.findings_cache())
        except Exception as exc:  # fail closed, and never echo the message (it may hold text)
            return CaseRedaction(case_id, None, REDACTION_ERROR, detail=type(exc).__name__)
