"""Presidio's pattern loop without its per-call bookkeeping, for the analyzer's own recognizers.

``PatternRecognizer.__analyze_patterns`` reads the clock twice per pattern, formats a debug line
and builds an ``AnalysisExplanation`` per match: on agent text that costs about three times the
regex matching itself (21 us per call of the introduced-name recognizer, 7 us of it matching).
With the ``no_op`` NLP engine nothing reads the explanations (``AnalyzerEngine`` drops them
unless a decision process is asked for, and ``NoContextEnhancer`` leaves results alone), so
this loop makes the same results without them: same compiled patterns and flags, same regex
timeout (a pattern that times out is skipped with Presidio's warning), empty matches skipped,
``validate_result`` / ``invalidate_result`` applied in Presidio's order, results below or at
``MIN_SCORE`` dropped, then Presidio's own ``remove_duplicates``.
``tests/redaction/test_hot_path_equivalence.py`` checks every recognizer it is installed on
gives Presidio's results.

Installed per instance (``install``), never on Presidio's class: other engines in the process
(the naive baseline of ``bench/redaction.py``) keep Presidio's code.
"""

from __future__ import annotations

import logging
from types import MethodType
from typing import Any

import regex
from presidio_analyzer import EntityRecognizer, PatternRecognizer, RecognizerResult
from presidio_analyzer.pattern_recognizer import REGEX_TIMEOUT_SECONDS

_logger = logging.getLogger("presidio-analyzer")
_NAME_KEY = RecognizerResult.RECOGNIZER_NAME_KEY
_ID_KEY = RecognizerResult.RECOGNIZER_IDENTIFIER_KEY
_MIN = EntityRecognizer.MIN_SCORE
_MAX = EntityRecognizer.MAX_SCORE


def lean_analyze_patterns(
    self: PatternRecognizer, text: str, flags: int | None = None
) -> list[RecognizerResult]:
    """``PatternRecognizer.__analyze_patterns`` minus timing, logging and explanations."""
    flags = flags if flags else self.global_regex_flags
    entity = self.supported_entities[0]
    validate = self.validate_result
    invalidate = self.invalidate_result
    results: list[RecognizerResult] = []
    for pattern in self.patterns:
        if not pattern.compiled_regex or pattern.compiled_with_flags != flags:
            pattern.compiled_with_flags = flags
            pattern.compiled_regex = regex.compile(pattern.regex, flags=flags)
        try:
            for match in pattern.compiled_regex.finditer(text, timeout=REGEX_TIMEOUT_SECONDS):
                start, end = match.span()
                current = text[start:end]
                if current == "":
                    continue
                score = pattern.score
                valid = validate(current)
                if valid is not None:
                    score = _MAX if valid else _MIN
                invalid = invalidate(current)
                if invalid is not None and invalid:
                    score = _MIN
                if score > _MIN:
                    results.append(
                        RecognizerResult(
                            entity_type=entity,
                            start=start,
                            end=end,
                            score=score,
                            analysis_explanation=None,
                            recognition_metadata={_NAME_KEY: self.name, _ID_KEY: self.id},
                        )
                    )
        except TimeoutError:
            _logger.warning(
                "Regex pattern '%s' timed out after %s seconds, skipping.",
                pattern.name,
                REGEX_TIMEOUT_SECONDS,
                exc_info=True,
            )
    # nothing to sort or drop: Presidio's answer for no results is an empty list
    return EntityRecognizer.remove_duplicates(results) if results else []


def install(recognizer: Any) -> bool:
    """Give ``recognizer`` (and the pattern recognizers it delegates to through a ``_latin``
    twin) the lean loop; ``False`` for recognizers that are not pattern recognizers."""
    if not isinstance(recognizer, PatternRecognizer):
        return False
    recognizer._PatternRecognizer__analyze_patterns = MethodType(lean_analyze_patterns, recognizer)
    twin = getattr(recognizer, "_latin", None)
    if isinstance(twin, PatternRecognizer):
        install(twin)
    return True
