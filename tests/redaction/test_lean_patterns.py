"""Which pattern matches run without the ``regex`` module's timeout (redaction/lean_patterns.py):
short text, patterns whose shape cannot backtrack without end. Everything else keeps
Presidio's timeout. (That the lean loop finds what Presidio's does is
test_hot_path_equivalence.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from presidio_analyzer import Pattern, PatternRecognizer
from presidio_analyzer.pattern_recognizer import REGEX_TIMEOUT_SECONDS

from golden_distill.redaction import lean_patterns
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.lean_patterns import UNTIMED_TEXT_CHARS, bounded_backtracking
from golden_distill.redaction.recognizers import SPECS


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a+)+$",  # the classic: an unbounded repetition of a repetition
        r"(?:a|ab)*c",  # an unbounded repetition of an alternation
        r"(?:\w+\s?)+@",
        r"(?:x{2,3}){1,}y",
        r"(?=(?:\d+,)*\d+;)",  # inside an assertion too
        r"(a)?(?:(?(1)b|c))+",  # a conditional branches like an alternation
        r"(a)?(?(1)(?:b+)+|c)",  # and its branches are looked into
        r"\p{L}+",  # regex-only syntax: the standard parser cannot judge it, keep the timeout
    ],
)
def test_shapes_that_can_backtrack_without_end_keep_the_timeout(pattern: str) -> None:
    assert not bounded_backtracking(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?<![0-9])\d{3}[-.]\d{3}[-.]\d{4}(?![0-9])",
        r"\+\d{1,3}(?:[-. ]\d{2,4}){2,4}",  # bounded repetition of a repetition
        r"(?<=(?i:\bI'm|\bmy name is)[ \t]{1,3})[A-Z][a-z]+(?: [A-Z][a-z]+){1,2}\b",
        r"(?:x|ext\.?|extension)?[ ]?\d{1,6}",
    ],
)
def test_shapes_of_bounded_backtracking_run_untimed(pattern: str) -> None:
    assert bounded_backtracking(pattern)


def test_presidios_email_pattern_keeps_the_timeout() -> None:
    """The one shipped pattern with a repetition of a repetition: judged so, not trusted."""
    verdicts = {}
    for spec in SPECS.values():
        built = spec.build(RedactionConfig())
        for recognizer in built if isinstance(built, list) else [built]:
            if isinstance(recognizer, PatternRecognizer):
                for pattern in recognizer.patterns:
                    verdicts[f"{recognizer.name}/{pattern.name}"] = bounded_backtracking(
                        pattern.regex
                    )
    assert verdicts["EmailRecognizer/Email (Medium)"] is False
    # the project's own hot patterns (most of the matching time) run untimed on short text
    assert verdicts["IntroducedNameRecognizer/en_introduced_name"] is True
    assert verdicts["PhoneShapeRecognizer/nanp_separated"] is True


class _Spy:
    """A compiled pattern that records the timeout each call asks for."""

    def __init__(self, compiled: Any, seen: list[tuple[str, float | None]], name: str):
        self.compiled, self.seen, self.name = compiled, seen, name

    def finditer(self, text: str, timeout: float | None = None) -> Any:
        self.seen.append((self.name, timeout))
        return self.compiled.finditer(text, timeout=timeout)


def test_the_loop_drops_the_timeout_only_for_short_text_and_bounded_patterns() -> None:
    recognizer = PatternRecognizer(
        supported_entity="THING",
        patterns=[Pattern("bounded", r"\d{3}-\d{4}", 0.6), Pattern("nested", r"(?:\w+\s?)+#", 0.6)],
    )
    assert lean_patterns.install(recognizer)
    recognizer.analyze("call 555-1234", ["THING"])  # compiles the patterns
    seen: list[tuple[str, float | None]] = []
    for pattern in recognizer.patterns:
        pattern.compiled_regex = _Spy(pattern.compiled_regex, seen, pattern.name)

    short = recognizer.analyze("call 555-1234 #", ["THING"])
    assert seen == [("bounded", None), ("nested", REGEX_TIMEOUT_SECONDS)]
    assert {(r.start, r.end) for r in short} >= {(5, 13)}

    seen.clear()
    long_text = "x " * UNTIMED_TEXT_CHARS + "555-1234"
    found = recognizer.analyze(long_text, ["THING"])
    assert seen == [("bounded", REGEX_TIMEOUT_SECONDS), ("nested", REGEX_TIMEOUT_SECONDS)]
    assert (len(long_text) - 8, len(long_text)) in {(r.start, r.end) for r in found}
