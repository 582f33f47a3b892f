"""Street lines outside the US: one row per language, its street words as the row's cue.

The US recognizer (``street_address.py``) wants "number Name Suffix"; most of the world puts the
street word first ("12 rue de la Paix", "Calle Mayor 12", "Via Roma 12", "ul. Długa 5",
"ул. Ленина, д. 12") or glues it to the name ("Hauptstraße 12", "Kalverstraat 92"), and Korean
road-name addresses end in 로/길 and the building number ("테헤란로 152"). A row needs its street
word and a house number next to the name, so a street named without a number stays; a postcode
and town right after the number are taken with it.
"""

from __future__ import annotations

import regex

from golden_distill.redaction.recognizers.base import CuedPattern, Keywords, RecognizerSpec
from golden_distill.redaction.recognizers.pattern_table import PatternTable

_UP = r"[A-ZÀ-ÖØ-ÞĄĆĘŁŃŚŹŻ]"  # a capital, Latin scripts of the rows below
_LOW = r"[a-zß-öø-ÿąćęłńóśźż'’\-]"
_NAME = rf"{_UP}{_LOW}+"
_NAMES = rf"{_NAME}(?: {_NAME}){{0,3}}"
_NO = r"\d{1,4}(?:[a-zA-Z]\b| ?(?:bis|ter)\b)?(?:/\d{1,4})?"
#: an optional postcode and town after the number ("…, 10115 Berlin", "… 1012 AB Amsterdam")
_TOWN = rf"(?:,? \d{{4,5}}(?: [A-Z]{{2}})? {_NAME}(?:[ \-]{_NAME})?)?"
_B = r"(?<![\w])"

#: (language, regex, cue words)
_ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("de", rf"{_B}{_UP}{_LOW}*(?:straße|strasse|str\.|weg|gasse|allee|platz|damm|ufer)"
     rf" {_NO}{_TOWN}|{_B}{_NAMES} (?:Straße|Strasse|Str\.|Weg|Gasse|Allee|Platz) {_NO}{_TOWN}",
     ("straße", "strasse", "str.", "weg", "gasse", "allee", "platz", "damm", "ufer")),
    ("fr", rf"{_B}{_NO},? (?i:rue|avenue|av\.|boulevard|bd|place|allée|impasse|chemin|quai"
     rf"|cours|route|square) (?:(?i:de la|de l'|de l’|du|des|de|d'|d’) ?)?{_NAMES}{_TOWN}",
     ("rue", "avenue", "av.", "boulevard", "bd ", "place", "allée", "impasse", "chemin", "quai",
      "cours", "route", "square")),
    ("es_pt_it", rf"{_B}(?:Calle|C/|Avenida|Avda\.|Av\.|Paseo|Plaza|Camino|Carrera|Ronda|Rua"
     rf"|Travessa|Via|Viale|Piazza|Corso|Vicolo|Largo|Piazzale) ?"
     rf"(?:(?:de la|de los|de las|del|de|dos|das|do|da|dei|degli|delle|della|di|d'|d’) ?)?"
     rf"{_NAMES},? (?:(?:n[º°o]\.?|n\.|nº) ?)?{_NO}{_TOWN}",
     ("calle", "c/", "avenida", "avda", "av.", "paseo", "plaza", "camino", "carrera", "ronda",
      "rua ", "travessa", "via ", "viale", "piazza", "corso", "vicolo", "largo", "piazzale")),
    ("nl", rf"{_B}{_UP}{_LOW}*(?:straat|laan|weg|plein|gracht|kade|dijk|singel|steeg|markt)"
     rf" {_NO}{_TOWN}",
     ("straat", "laan", "weg", "plein", "gracht", "kade", "dijk", "singel", "steeg", "markt")),
    ("pl", rf"{_B}(?:ul\.|ulica|al\.|aleja|pl\.|plac|os\.|osiedle) ?{_NAMES} {_NO}"
     rf"(?: m\. ?\d{{1,4}})?(?:,? \d{{2}}-\d{{3}} {_NAME})?",
     ("ul.", "ulica", "al.", "aleja", "pl.", "plac", "os.", "osiedle")),
    ("ru", r"(?<![\w])(?:ул\.|улица|пр\.|просп\.|проспект|пер\.|переулок|наб\.|набережная|ш\."
     r"|шоссе|бульвар|б-р|пл\.|площадь) ?[А-ЯЁ0-9][\w\-]*(?: [А-ЯЁа-яё][\w\-]*){0,3},? ?"
     r"(?:(?:д\.|дом) ?)?\d{1,4}[а-я]?(?:,? ?(?:кв\.|квартира|корп\.|к\.|стр\.) ?\d{1,4})*",
     ("ул.", "улица", "пр.", "просп", "проспект", "пер.", "переулок", "наб.", "набережная",
      "ш.", "шоссе", "бульвар", "б-р", "пл.", "площадь")),
    ("kr", r"(?<![가-힣])[가-힣0-9]{1,10}(?<!으)(?:대로|로|길) ?\d{1,4}(?:-\d{1,4})?(?!\d)"
     r"(?:(?:번길) ?\d{1,4})?", ("로", "길")),
)  # fmt: skip

ROWS = [
    CuedPattern(f"street_{lang}", pattern, 0.6, "ADDRESS", None, cues)
    for lang, pattern, cues in _ROWS
]
for _row in ROWS:  # the rows are regex-module patterns: fail at import, not on a text
    regex.compile(_row.regex)

SPEC = RecognizerSpec(
    name="streets_abroad",
    entities=("ADDRESS",),
    prefilter=Keywords(*(w for _, _, cues in _ROWS for w in cues)),
    build=lambda cfg: PatternTable("StreetsAbroadRecognizer", ROWS),
)
