"""A Presidio ``PatternRecognizer`` over a table of patterns, each with its own entity type,
check and cue words: the declarative shape shared by the cue-based recognizers
(``cued_numbers.py``, ``checked_ids.py``, ``credentials_in_text.py``, ``places_in_text.py``)."""

from __future__ import annotations

import logging

import ahocorasick
import regex
from presidio_analyzer import EntityRecognizer, Pattern, PatternRecognizer, RecognizerResult
from presidio_analyzer.pattern_recognizer import REGEX_TIMEOUT_SECONDS

from golden_distill.redaction.lean_patterns import UNTIMED_TEXT_CHARS, bounded_backtracking
from golden_distill.redaction.recognizers.base import CASE_SENSITIVE, CuedPattern, fold_case

_logger = logging.getLogger("presidio-analyzer")


def cue_words(rows: list[CuedPattern]) -> tuple[str, ...]:
    """Every row's cue words, once each: a pre-filter that lets in every text a cued row may
    match (rows without cues need their own pre-filter part)."""
    return tuple(dict.fromkeys(w for row in rows for w in row.cues))


class PatternTable(PatternRecognizer):
    """Runs every row whose cue words are in the text (case matters in the regex unless a row
    says ``(?i:...)``); a hit takes its row's entity type and must pass its row's check. A
    row's regex may name the part it finds ``(?P<value>...)``; otherwise the whole match."""

    def __init__(self, name: str, rows: list[CuedPattern]) -> None:
        self.rows = rows
        self._compiled = [regex.compile(row.regex, CASE_SENSITIVE) for row in rows]
        #: one Aho-Corasick pass over the folded text says which cued rows may match: cue word
        #: -> bit mask of its rows; rows without cues always run
        self._always = sum(1 << i for i, row in enumerate(rows) if not row.cues)
        masks: dict[str, int] = {}
        for i, row in enumerate(rows):
            for word in row.cues:
                masks[word.lower()] = masks.get(word.lower(), 0) | 1 << i
        self._cues: ahocorasick.Automaton | None = None
        if masks:
            self._cues = ahocorasick.Automaton()
            for word, mask in masks.items():
                self._cues.add_word(word, mask)
            self._cues.make_automaton()
        self._untimed = [bounded_backtracking(row.regex) for row in rows]
        super().__init__(
            supported_entity=rows[0].entity,
            name=name,
            patterns=[Pattern(row.name, row.regex, row.score) for row in rows],
            global_regex_flags=CASE_SENSITIVE,
        )
        self.supported_entities = list(dict.fromkeys(row.entity for row in rows))

    def analyze(self, text, entities, nlp_artifacts=None, regex_flags=None):  # type: ignore[no-untyped-def]
        kept: list[RecognizerResult] = []
        live = self._always
        if self._cues is not None:
            for _, mask in self._cues.iter(fold_case(text)):
                live |= mask
        if not live:
            return []
        short = len(text) <= UNTIMED_TEXT_CHARS
        meta = {
            RecognizerResult.RECOGNIZER_NAME_KEY: self.name,
            RecognizerResult.RECOGNIZER_IDENTIFIER_KEY: self.id,
        }
        for i, (row, compiled, untimed) in enumerate(
            zip(self.rows, self._compiled, self._untimed, strict=True)
        ):
            if not live >> i & 1 or row.entity not in entities:
                continue
            timeout = None if short and untimed else REGEX_TIMEOUT_SECONDS
            try:
                matches = list(compiled.finditer(text, timeout=timeout))
            except TimeoutError:  # as Presidio's own loop: logged, the row skipped
                _logger.warning("pattern %s timed out on a text, skipped", row.name)
                continue
            for m in matches:
                start, end = m.span("value") if "value" in compiled.groupindex else m.span()
                if end <= start:
                    continue
                if row.check is not None and not row.check(text[start:end]):
                    continue
                kept.append(RecognizerResult(row.entity, start, end, row.score, None, dict(meta)))
        return EntityRecognizer.remove_duplicates(kept) if kept else []
