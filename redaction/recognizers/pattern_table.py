"""A Presidio ``PatternRecognizer`` over a table of patterns, each with its own entity type and
check: the declarative shape shared by the cue-based recognizers (``cued_numbers.py``,
``checked_ids.py``, ``credentials_in_text.py``, ``places_in_text.py``)."""

from __future__ import annotations

import regex
from presidio_analyzer import Pattern, PatternRecognizer, RecognizerResult

from golden_distill.redaction.recognizers.base import CASE_SENSITIVE, CuedPattern


class PatternTable(PatternRecognizer):
    """Runs every row's regex (case matters unless a row says ``(?i:...)``); a hit takes its
    row's entity type and must pass its row's check."""

    def __init__(self, name: str, rows: list[CuedPattern]) -> None:
        self.rows = rows
        self._compiled = [regex.compile(row.regex, CASE_SENSITIVE) for row in rows]
        super().__init__(
            supported_entity=rows[0].entity,
            name=name,
            patterns=[Pattern(row.name, row.regex, row.score) for row in rows],
            global_regex_flags=CASE_SENSITIVE,
        )
        self.supported_entities = list(dict.fromkeys(row.entity for row in rows))

    def analyze(self, text, entities, nlp_artifacts=None, regex_flags=None):  # type: ignore[no-untyped-def]
        kept: list[RecognizerResult] = []
        for result in super().analyze(text, entities, nlp_artifacts, regex_flags):
            row = self._row_of(text, result)
            if row is None or row.entity not in entities:
                continue
            if row.check is not None and not row.check(text[result.start : result.end]):
                continue
            result.entity_type = row.entity
            kept.append(result)
        return kept

    def _row_of(self, text: str, result: RecognizerResult) -> CuedPattern | None:
        """The row whose pattern matches exactly ``result``'s span (the analyzer's lean loop,
        ``lean_patterns.py``, keeps no explanation naming the pattern)."""
        for row, compiled in zip(self.rows, self._compiled, strict=True):
            found = compiled.match(text, result.start)
            if found is not None and found.end() == result.end:
                return row
        return None
