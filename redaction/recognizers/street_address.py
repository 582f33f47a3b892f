"""Postal addresses in free text: US "number street[, city, ST zip]" and Chinese province/city
addresses. Structured address fields are caught by key rules; this is for addresses typed into
messages ("change the delivery address to 7188 Rosales View, Farrellside, NC 88054")."""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer

from golden_distill.redaction.recognizers.base import CASE_SENSITIVE, RecognizerSpec

_WORD = r"[A-Z][a-z]+"
_UNIT = r"(?: (?:Apt\.|Suite|Unit|#) ?\d{1,5})?"
_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Roads|Drive|Dr|Lane|Ln|Boulevard|Blvd|Way|Ways|Court|Ct|"
    r"Place|Pl|Square|Sq|Terrace|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Trail|View|Views|Hills?|"
    r"Park|Points?|Locks?|Crossing|Ports?|Springs?|Ridge|Heights|Gardens?|Meadows?|Village|"
    r"Manor|Mills?|Estates?|Falls|Ferry|Forge|Grove|Harbor|Haven|Island|Junction|Knolls?|"
    r"Lakes?|Landing|Loop|Mall|Mission|Orchard|Pass|Path|Pike|Plains?|Plaza|Prairie|Radial|"
    r"Ranch|Rapids?|Rest|Route|Row|Run|Shoals?|Shores?|Skyway|Spur|Station|Stream|Summit|"
    r"Throughway|Trace|Track|Trafficway|Tunnel|Turnpike|Underpass|Union|Valleys?|Viaduct|"
    r"Vista|Walk|Wall|Wells?|Broadway|Bypass|Camp|Canyon|Cape|Causeway|Center|Cliffs?|Club|"
    r"Common|Corners?|Course|Courts|Cove|Creek|Crescent|Crest|Dale|Dam|Divide|Drives|Expressway|"
    r"Extension|Fields?|Flats?|Fork|Forest|Fort|Freeway|Glens?|Green|Hollow|Inlet|Isle|Key|"
    r"Lodge|Motorway|Mount|Mountain|Neck|Oval|Overpass|Parks|Pine|Pines|Port|Stravenue|Squares|"
    r"Streets|Ville|Bridge|Brook|Burg|Bluff|Bottom|Branch|Bend|Beach|Arcade|Alley)"
)
#: Lower-case addresses ("1842 maple grove road") only with the commonest suffixes.
_LOWER_SUFFIX = r"(?:street|avenue|road|lane|boulevard|terrace|parkway|highway)"
_NOT_A_STREET = r"(?!(?:hours?|minutes?|mins?|days?|weeks?|miles?|km|blocks?|more|times?)\b)"
_LOWER_STREET = rf"\d{{1,6}} {_NOT_A_STREET}[a-z]{{3,}}(?: [a-z]{{3,}}){{0,2}} {_LOWER_SUFFIX}\b"

#: For the pre-filter: a text holds a match of ``\d{1,6} X`` exactly when it holds one of
#: ``\d X`` (the house number's last digit), and the one digit is cheaper to search for.
_LOWER_STREET_ANY = _LOWER_STREET.replace(r"\d{1,6} ", r"\d ", 1)
assert _LOWER_STREET_ANY != _LOWER_STREET

_CN_PROVINCE = (
    r"(?:北京|天津|上海|重庆|河北|山西|辽宁|吉林|黑龙江|江苏|浙江|安徽|福建|江西|山东|河南|湖北|"
    r"湖南|广东|海南|四川|贵州|云南|陕西|甘肃|青海|台湾|内蒙古|广西|西藏|宁夏|新疆|香港|澳门)"
    r"(?:省|市|自治区|壮族自治区|回族自治区|维吾尔自治区|特别行政区)?"
)


class StreetAddressRecognizer(PatternRecognizer):
    PATTERNS = [
        Pattern(
            "us_full_address",
            rf"(?<![0-9])\d{{1,6}} {_WORD}(?: {_WORD}){{0,3}}{_UNIT}, {_WORD}(?: {_WORD}){{0,2}}, "
            rf"[A-Z]{{2}} \d{{5}}(?:-\d{{4}})?(?![0-9])",
            0.85,
        ),
        Pattern(
            "us_street",
            rf"(?<![0-9])\d{{1,6}} {_WORD}(?: {_WORD}){{0,2}} {_SUFFIX}\b{_UNIT}",
            0.6,
        ),
        Pattern("us_street_lower_case", rf"(?<![0-9]){_LOWER_STREET}{_UNIT}", 0.5),
        Pattern(
            "cn_address",
            rf"{_CN_PROVINCE}[\u4e00-\u9fff]{{1,20}}?(?:市|县|区)"
            r"[\u4e00-\u9fffA-Za-z0-9]{1,30}(?:路|街|道|巷|弄|村|号|座|室|楼)"
            r"(?:[\u4e00-\u9fffA-Za-z0-9]{0,10}(?:号|座|室|楼|单元))?(?:[ ]?\d{6})?",
            0.7,
        ),
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="ADDRESS",
            name="StreetAddressRecognizer",
            patterns=self.PATTERNS,
            global_regex_flags=CASE_SENSITIVE,
        )


SPEC = RecognizerSpec(
    name="street_address",
    entities=("ADDRESS",),
    prefilter=re.compile(
        rf"\d [A-Z][a-z]|{_LOWER_STREET_ANY}|[省市区县][\u4e00-\u9fff]{{0,20}}[路街道巷]"
    ),
    build=lambda cfg: StreetAddressRecognizer(),
)
