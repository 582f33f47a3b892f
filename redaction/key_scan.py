"""The structural pass with its rule tables, and the key pass the flow runs before redaction.

``KeyScanner`` owns what ``case_scan.scan_case`` needs (the rule matcher, key columns, key text
patterns) so the redactor and the flow's key pass scan a case identically. The key pass needs
no Presidio: it lists every original key a case's redaction could pseudonymise (a superset:
every identifier-shaped value under an unclassified key counts, even one the analyzer will later
call personal), and turns them into keyed digests (``key_digests.KeyDigests``) so the run-wide
collision check is known before the first case is redacted.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from golden_distill.redaction.case_scan import CaseScan, scan_case
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.key_digests import (
    DIGEST_BYTES,
    KeyDigests,
    digest_array,
    key_digest,
    key_digest_wide,
)
from golden_distill.redaction.key_rules import KeyRule, RuleMatcher
from golden_distill.redaction.key_walk import WalkMemo, case_keys
from golden_distill.redaction.known_bases import Entry
from golden_distill.redaction.pseudonym import key_pseudonym

#: Key type of identifier-shaped values no rule classifies (one namespace, so one value reads
#: the same wherever it appears).
UNKNOWN_ID_TYPE = "id"


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector paused. The walk allocates many small containers, so the
    collector ran again and again over a shard's rows (hundreds of thousands of live dicts and
    lists, none garbage): a quarter of the key pass's CPU. What the walk drops has no cycles
    (reference counting frees it), so pausing frees nothing later than it would be."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class KeyScanner:
    """Scans cases structurally (``scan_case``) and lists their original keys."""

    def __init__(self, config: RedactionConfig, secret: bytes) -> None:
        self.config = config
        self.secret = secret
        self.matcher = RuleMatcher(config)
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
        self.id_rule = KeyRule(UNKNOWN_ID_TYPE, None)

    def scan(self, row: dict[str, Any], inventory: bool = True) -> CaseScan:
        """Structural pass over every leaf (``case_scan.scan_case``)."""
        return scan_case(
            row,
            config=self.config,
            secret=self.secret,
            matcher=self.matcher,
            column_keys=self.column_keys,
            text_patterns=self.text_patterns,
            inventory=inventory,
        )

    def keys(self, row: dict[str, Any], memo: WalkMemo | None = None) -> set[tuple[str, KeyRule]]:
        """Every (original, rule) the case's redaction could pseudonymise: the keys and
        unknown identifiers ``scan`` finds, by a walk that builds nothing else
        (``key_walk.case_keys``; ``memo`` replays texts seen in earlier cases of the shard)."""
        keys, unknown = case_keys(
            row,
            matcher=self.matcher,
            column_keys=self.column_keys,
            text_patterns=self.text_patterns,
            memo=memo,
        )
        found = set(keys.items())
        if self.config.unknown_identifiers == "pseudonymise":
            found.update((value, self.id_rule) for value in unknown)
        return found

    def digests(
        self, rows: Iterable[dict[str, Any]], known: list[Entry] | None = None
    ) -> KeyDigests:
        """Digests of every original key of ``rows`` (one shard's cases: their repeated texts
        are walked once) and of its base pseudonym. ``known``: gets each base pseudonym with
        the original's wide digest, for the redaction of the same rows (``known_bases.py``)."""
        pairs: set[tuple[str, KeyRule]] = set()
        memo = WalkMemo()
        originals = []
        bases = []
        with no_cyclic_gc():
            for row in rows:
                pairs |= self.keys(row, memo)
            for value, rule in pairs:
                kt = rule.key_type
                wide = key_digest_wide(self.secret, kt, value)
                originals.append(int.from_bytes(wide[:DIGEST_BYTES], "big"))
                base = key_pseudonym(value, kt, self.secret, rule.prefix)
                base_digest = key_digest(self.secret, kt, base)
                bases.append(base_digest)
                if known is not None:
                    known.append((kt, rule.prefix, wide, base, base_digest))
        return KeyDigests(originals=digest_array(originals), bases=digest_array(bases))
