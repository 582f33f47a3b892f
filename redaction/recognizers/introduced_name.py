"""Names introduced in free text: "I'm Mei Brown", "my name is ...", "我叫张伟", "我是某公司的张伟",
and, through ``name_cues.py`` and ``name_places.py``, names after cues in other languages and
scripts ("私は山田と申します", "मेरा नाम ... है", "Vážený pane Dvořák") and names in paths,
SQL, CSV columns, handles and profile URLs.

Without an NER model (none may be downloaded) a name that appears only in a user's message would
pass untouched. These cues are precise enough to propagate: English needs a capitalised full
name (two or three words) right after an introduction cue, Chinese two or three Han characters
after 我叫 / 我是 (ending at punctuation) or after 我是<organisation>的. The value found is then
scrubbed everywhere in the case, like any other personal value.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer, RecognizerResult

from golden_distill.redaction.recognizers import name_cues, name_places
from golden_distill.redaction.recognizers.base import (
    CASE_SENSITIVE,
    AnyOf,
    Keywords,
    RecognizerSpec,
)

#: Scores: a name after a cue of its own language is as sure as an English one; a segment of a
#: path, handle or URL a little less (it may be an alias, still the person's).
CUED_SCORE = 0.6
PLACED_SCORE = 0.5

_EN_CUE = (
    r"(?i:\bI'm|\bI am|\bmy name is|\bname's|\bthis is|\bthe user,?|\bthe customer,?"
    r"|\bpassenger|\bcustomer|\bdear|\bMr\.?|\bMrs\.?|\bMs\.?|\bDr\.?"
    r"|\bcontact(?: for [\w -]{1,40}:)?|\bholder:?|\bsigned,?|\bregards,?|\ball set,"
    r"|\bthis for|\bthank you,|\bthanks,|\bhi,?|\bhello,?|\bwelcome,?|\bsorry,)"
)
_EN_NAME = r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?(?: [A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?){1,2}"
_HAN_NAME = r"[\u4e00-\u9fff]{2,4}"  # compound surnames (欧阳, 司马, 诸葛, 上官) make four
#: After the strongest cues a name may be written in any case ("hi, this is marta quenby").
_STRONG_CUE = r"(?i:\bmy name is|\bname's|\bthis is|\bthe customer|\bgoodbye|\bbye)"
_STOP = (
    r"(?i:the|a|an|not|going|looking|trying|calling|about|regarding|urgent|my|your|our|for"
    r"|to|in|on|at|with|just|really|very|so|also|still|here|there|what|how|why|when|is|was|be"
    r"|and|but|or|it|this|that|called|asking|wrong|correct|fine|great|good|ok|okay|done|of"
    r"|record|records|account|order|orders|file|details|profile|info|data|request|case|ticket"
    r"|number|name|please|who|from|by|again|now|today|here|back|calling|writing|waiting)"
)
_ANY_CASE_WORD = rf"(?!{_STOP}\b)(?i:[a-z][a-z'\-]{{2,}})"
_ANY_CASE_NAME = rf"{_ANY_CASE_WORD}(?: {_ANY_CASE_WORD}){{1,2}}\b"
_HAN_END = r"(?=[，。,.!！?？\s]|$)"
_HAN = re.compile(r"[\u4e00-\u9fff]")
_ANY_CASE = re.compile(rf"{_STRONG_CUE},?[ \t]{{1,3}}({_ANY_CASE_NAME})")


class IntroducedNameRecognizer(PatternRecognizer):
    #: run only the English pattern on text without a Han character (same findings)
    LATIN_SHORTCUT = True
    PATTERNS = [
        Pattern("en_introduced_name", rf"(?<={_EN_CUE}[ \t]{{1,3}}){_EN_NAME}\b", 0.6),
        Pattern("zh_called", rf"(?<=我叫|我的名字是|本人){_HAN_NAME}{_HAN_END}", 0.6),
        Pattern("zh_i_am", rf"(?<=我是){_HAN_NAME}{_HAN_END}", 0.5),
        Pattern("zh_i_am_of", rf"(?<=我是[^，。,\s]{{1,30}}的){_HAN_NAME}{_HAN_END}", 0.6),
        Pattern(
            "zh_role",
            # the look-ahead first: a Han character is cheap to test, the look-behind is not
            # (same matches: every match starts with one; 17x faster on agent text)
            rf"(?=[\u4e00-\u9fff])(?<=(?:客户|员工|顾客|联系人|收件人|持卡人)[：: ]?)"
            rf"{_HAN_NAME}(?=的|{_HAN_END})",
            0.5,
        ),
        Pattern("zh_greeting", rf"(?<![\u4e00-\u9fff]){_HAN_NAME}(?=您好)", 0.5),
    ]

    def __init__(self) -> None:
        super().__init__(
            supported_entity="PERSON",
            name="IntroducedNameRecognizer",
            patterns=self.PATTERNS,
            global_regex_flags=CASE_SENSITIVE,
        )
        #: the English pattern alone, for text without a Han character: every other pattern
        #: matches Han characters only, so it finds nothing there (same results, one regex
        #: instead of six; most agent text is such text)
        self._latin: PatternRecognizer | None = None
        if self.LATIN_SHORTCUT:
            self._latin = PatternRecognizer(
                supported_entity="PERSON",
                name="IntroducedNameRecognizer",
                patterns=[p for p in self.PATTERNS if p.name == "en_introduced_name"],
                global_regex_flags=CASE_SENSITIVE,
            )
            # its results must carry this recognizer's identity: the analyzer engine keeps
            # only results whose recognizer id is one of its registry's
            self._latin._id = self.id

    def analyze(self, text, entities, nlp_artifacts=None, regex_flags=None):  # type: ignore[no-untyped-def]
        """The patterns above, plus any-case names after the strongest cues: one stdlib regex
        with a group (a variable-width look-behind in every position cost more than all the
        other patterns together)."""
        if self._latin is not None and (text.isascii() or not _HAN.search(text)):
            results = self._latin.analyze(text, entities, nlp_artifacts, regex_flags)
        else:
            results = super().analyze(text, entities, nlp_artifacts, regex_flags)
        for m in _ANY_CASE.finditer(text):
            results.append(RecognizerResult("PERSON", m.start(1), m.end(1), 0.5, None))
        for start, end in name_cues.find_cued_names(text):
            results.append(RecognizerResult("PERSON", start, end, CUED_SCORE, None))
        if name_places.GATE.search(text):
            for start, end in name_places.find_placed_names(text):
                results.append(RecognizerResult("PERSON", start, end, PLACED_SCORE, None))
        return results


_KEYWORDS = (
    "i'm",
    "i am",
    "name is",
    "name's",
    "this is",
    "the user",
    "customer",
    "passenger",
    "dear",
    "contact ",  # a cue is followed by a space or tab (contact, hi, mr...)
    "contact\t",
    "holder",
    "signed",
    "regards",
    "all set",
    "this for",
    "thank you,",
    "thanks,",
    "hi ",
    "hi\t",
    "hi,",
    "hello",
    "welcome",
    "sorry,",
    "bye",
    "mr ",  # mr, mrs, ms, dr: only before a space, tab or dot ("address" is no cue)
    "mr\t",
    "mr.",
    "mrs",
    "ms ",
    "ms\t",
    "ms.",
    "dr ",
    "dr\t",
    "dr.",
    "我叫",
    "我是",
    "我的名字",
    "本人",
    "客户",
    "员工",
    "顾客",
    "联系人",
    "收件人",
    "持卡人",
    "您好",
)

SPEC = RecognizerSpec(
    name="introduced_name",
    entities=("PERSON",),
    prefilter=AnyOf(
        Keywords(*_KEYWORDS, *name_cues.CUE_KEYWORDS),
        *name_places.GATE.parts,
    ),
    build=lambda cfg: IntroducedNameRecognizer(),
)
