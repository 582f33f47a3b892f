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

One more difference: the ``regex`` module's ``timeout`` checks the clock as it matches, which
made matching 3-5x slower on short text (agent text: ~90 characters per leaf). Presidio's timeout
(``REGEX_TIMEOUT_SECONDS``, 60 s) guards against a pattern backtracking without end, which takes
an unbounded repetition of something that itself repeats or branches (``(a+)+``, ``(a|ab)*``).
A pattern without that shape (``bounded_backtracking``) matches text of up to
``UNTIMED_TEXT_CHARS`` characters without the timeout; longer text, and every other pattern
(Presidio's e-mail pattern), keep it. Same matches either way (a match that finishes is the
same match); ``tests/redaction/test_lean_patterns.py``.

Installed per instance (``install``), never on Presidio's class: other engines in the process
(the naive baseline of ``bench/redaction.py``) keep Presidio's code.
"""

from __future__ import annotations

import logging
import re._constants as sre_constants  # the stdlib parser: the shape of a pattern, not a match
import re._parser as sre_parser
from functools import lru_cache
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

#: Text up to this many characters is matched without the timeout by a pattern of bounded
#: backtracking (longer text keeps it: a pattern's work still grows with its text).
UNTIMED_TEXT_CHARS = 1_000
#: A repetition of at most this many is "bounded" (``{2,4}``): it multiplies the work by a
#: constant, it cannot make it grow exponentially with the text.
_BOUNDED_REPEAT = 100
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)


@lru_cache(maxsize=1024)
def bounded_backtracking(pattern: str) -> bool:
    """True when no unbounded repetition in ``pattern`` contains a repetition or an
    alternation: the shapes of catastrophic backtracking. Judged on the standard library's
    parse of the pattern; a pattern it cannot parse (``regex``-only syntax) is not trusted."""
    try:
        parsed = sre_parser.parse(pattern)
    except Exception:  # any failure to parse means: keep the timeout
        return False
    return not _nested_repetition(list(parsed), inside_unbounded=False)


def _nested_repetition(items: list[Any], inside_unbounded: bool) -> bool:
    for op, arg in items:
        if op in _REPEATS:
            _low, high, body = arg
            if inside_unbounded and high > 1:
                return True
            unbounded = high == sre_constants.MAXREPEAT or high > _BOUNDED_REPEAT
            if _nested_repetition(list(body), inside_unbounded or unbounded):
                return True
        elif op in (sre_constants.BRANCH, sre_constants.GROUPREF_EXISTS):  # a|b, (?(1)a|b)
            alternatives = arg[1] if op == sre_constants.BRANCH else [a for a in arg[1:] if a]
            if inside_unbounded or any(_nested_repetition(list(a), False) for a in alternatives):
                return True
        elif _nested_repetition(_children(op, arg), inside_unbounded):
            return True
    return False


def _children(op: Any, arg: Any) -> list[Any]:
    """The items inside a group or an assertion (none for a literal, a class, an anchor)."""
    if op == sre_constants.SUBPATTERN:
        return list(arg[-1])
    if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        return list(arg[1])
    if op == sre_constants.ATOMIC_GROUP:
        return list(arg)
    return []


def lean_analyze_patterns(
    self: PatternRecognizer, text: str, flags: int | None = None
) -> list[RecognizerResult]:
    """``PatternRecognizer.__analyze_patterns`` minus timing, logging and explanations."""
    flags = flags if flags else self.global_regex_flags
    entity = self.supported_entities[0]
    validate = self.validate_result
    invalidate = self.invalidate_result
    results: list[RecognizerResult] = []
    short = len(text) <= UNTIMED_TEXT_CHARS
    for pattern in self.patterns:
        if not pattern.compiled_regex or pattern.compiled_with_flags != flags:
            pattern.compiled_with_flags = flags
            pattern.compiled_regex = regex.compile(pattern.regex, flags=flags)
        untimed = short and bounded_backtracking(pattern.regex)
        timeout = None if untimed else REGEX_TIMEOUT_SECONDS
        try:
            for match in pattern.compiled_regex.finditer(text, timeout=timeout):
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
    flags = recognizer.global_regex_flags
    for pattern in recognizer.patterns:  # compiled now, with the analyzer, not on first use
        if not pattern.compiled_regex or pattern.compiled_with_flags != flags:
            pattern.compiled_with_flags = flags
            pattern.compiled_regex = regex.compile(pattern.regex, flags=flags)
    twin = getattr(recognizer, "_latin", None)
    if isinstance(twin, PatternRecognizer):
        install(twin)
    return True
