"""Places that pin a person down: UK postcodes, Japanese postal codes with the address after
them, GPS coordinates written as text.

Presidio's UK postcode recognizer scores 0.1 without context (below any useful threshold), and
none covers Japanese addresses or coordinates, so these rows are written here: a UK postcode in
its full published format (outward code, space, inward code), ``〒`` with seven digits and the
address that follows, and latitude/longitude with four or more decimals (a pair) or after
``lat``/``lon``.
"""

from __future__ import annotations

import re

from golden_distill.redaction.recognizers.base import AnyOf, CuedPattern, RecognizerSpec
from golden_distill.redaction.recognizers.pattern_table import PatternTable

#: degrees, minutes and optional seconds with a hemisphere: 40°41'21.4"N
_DMS = r"(?<![0-9])\d{1,3} ?° ?\d{1,2} ?['′’] ?(?:\d{1,2}(?:\.\d+)? ?(?:[\"″”]|'') ?)?[NSEWnsew]\b"

ROWS = [
    CuedPattern("uk_postcode",
                r"(?<![A-Za-z0-9])(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]?) \d[ABD-HJLNP-UW-Z]{2}"
                r"(?![A-Za-z0-9])", 0.6, "ADDRESS"),
    CuedPattern("jp_postal_address", r"〒\s?\d{3}-?\d{4}[^\s、。,，]*(?:\s?[^\s、。,，]+)?",
                0.7, "ADDRESS"),
    CuedPattern("coordinate_pair",
                r"(?<![0-9.])-?\d{1,2}\.\d{4,}\s*,\s*-?\d{1,3}\.\d{4,}(?![0-9])", 0.6, "LOCATION"),
    CuedPattern("coordinate_degrees",
                r"(?<![0-9.])-?\d{1,2}\.\d{3,} ?° ?[NSns]?,?\s*-?\d{1,3}\.\d{3,} ?° ?[EWew]?",
                0.6, "LOCATION"),
    CuedPattern("coordinate_dms", rf"{_DMS}(?:[,;]?\s*{_DMS})?", 0.6, "LOCATION"),
    CuedPattern("coordinate_after_cue",
                r"(?<=(?i:\blat(?:itude)?|\blon(?:gitude)?|\blng)\b\s*[:=]?\s*)-?\d{1,3}\.\d{3,}",
                0.6, "LOCATION"),
]  # fmt: skip

SPEC = RecognizerSpec(
    name="places_in_text",
    entities=("ADDRESS", "LOCATION"),
    prefilter=AnyOf(
        re.compile(r"〒\s?\d"), re.compile(r"[A-Z]\d[A-Z\d]? \d[A-Z]{2}|\d\.\d{3}"), "°"
    ),
    build=lambda cfg: PatternTable("PlacesInTextRecognizer", ROWS),
)
