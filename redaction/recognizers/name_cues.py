"""Names after an introduction or address cue in the major languages, in their own scripts.

Without an NER model a name is found by what precedes it. The cue decides the script the name
is written in: after "私は" / "と申します" a run of kanji and katakana, after "मेरा नाम" a run
of Devanagari words, after "اسمي" Arabic words, after "Меня зовут" capitalised Cyrillic words,
after "Tôi tên là" / "Vážený pane" / "Sehr geehrte Frau" / "me llamo" capitalised Latin words
with any diacritics ("Nguyễn Văn An", "Dvořák", "José Ángel"). Each pattern captures the name
only (group ``name``); the cue stays. Written here because no maintained library without a
model offers multilingual name cues (Presidio's are NER-based).

A cue in another language may be followed by a single word (a surname alone after a title is
the usual form there); English cues stay in ``introduced_name.py`` (two words at least).
"""

from __future__ import annotations

import regex

from golden_distill.redaction.recognizers.base import Keywords
from golden_distill.redaction.recognizers.name_lexicon import lexicon

#: A capitalised word of any Latin or Cyrillic alphabet, diacritics and hyphens included.
_CAP = r"\p{Lu}[\p{Ll}\p{M}]+(?:[-'’]\p{Lu}?[\p{Ll}\p{M}]+)?"
_CAP_NAME = rf"{_CAP}(?:[ \t]{_CAP}){{0,3}}"
_KANJI_KANA = r"[\p{Han}\p{Katakana}々ー]"
_JA_NAME = rf"{_KANJI_KANA}{{1,6}}(?:[ 　]{_KANJI_KANA}{{1,6}})?"
#: a kanji surname and a given name in hiragana (佐藤さくら), only right before a self-introduction
_JA_KANA_GIVEN = r"\p{Han}{1,4}[ 　]?\p{Hiragana}{2,5}"
_DEVANAGARI = r"[\p{Devanagari}\p{M}]+"
_ARABIC_WORD = r"[\p{Arabic}\p{M}]{2,}"
_HANGUL = r"\p{Hangul}{2,4}"
_THAI = r"[\p{Thai}]{2,20}"

_EN_CUES = r"dear|hi|hello|my name is|i am|i'm|mr\.?|mrs\.?|ms\.?|dr\.?"
_EN_CUE = regex.compile(rf"(?i:{_EN_CUES})")
#: Latin-script cues (lower-cased matching), then the name in capitalised words.
_LATIN_CUES = (
    # German
    r"sehr geehrte[rn]? (?:frau|herr)(?: dr\.)?|liebe[rn]? (?:frau|herr)?|ich heiße|ich heisse"
    r"|mein name ist|herr|frau"
    # Czech, Slovak, Polish
    r"|vážen[ýá] (?:pane|paní)|milý|milá|jmenuji se|volám sa|nazywam się|pan|pani"
    # Spanish, Portuguese, Italian, French, Dutch
    r"|me llamo|mi nombre es|estimad[oa](?: (?:señor|señora|sr\.|sra\.))?|señor|señora|don|doña"
    r"|meu nome é|me chamo|eu sou|prezad[oa](?: (?:senhor|senhora))?|senhor|senhora"
    r"|mi chiamo|il mio nome è|gentile (?:signor|signora)|signor|signora"
    r"|je m'appelle|je m’appelle|mon nom est|cher|chère|monsieur|madame"
    r"|mijn naam is|ik heet|geachte (?:heer|mevrouw)"
    # Vietnamese, Turkish, Indonesian
    r"|tôi tên là|tên tôi là|tôi là|anh|chị|benim adım|adım|nama saya|saya"
    # English cues: here only for names with letters beyond ASCII ("Dear Tomáš Dvořák")
    rf"|{_EN_CUES}"
)
_PATTERNS = [
    regex.compile(rf"(?<![\p{{L}}])(?P<cue>(?i:{_LATIN_CUES}))[,:]?[ \t]+(?P<name>{_CAP_NAME})"),
    # Russian, Ukrainian, Bulgarian, Serbian
    regex.compile(
        r"(?i:меня зовут|моё имя|мое имя|мене звати|казвам се|зовем се|уважаем(?:ый|ая)"
        r"|дорог(?:ой|ая)|господин|госпожа)[,:]?[ \t]+(?P<name>\p{Lu}[\p{Ll}\p{M}]+"
        r"(?:[ \t]\p{Lu}[\p{Ll}\p{M}]+){0,2})"
    ),
    # Japanese: 私は山田太郎と申します, 山田と申します, 名前は山田です
    regex.compile(
        rf"(?:私は|わたしは|僕は|名前は)?(?P<name>{_JA_NAME}|{_JA_KANA_GIVEN})(?=と申します|と言います)"
    ),
    regex.compile(rf"(?:私は|わたしは|名前は)(?P<name>{_JA_NAME})(?=です|でございます)"),
    regex.compile(rf"(?P<name>{_JA_NAME})(?=様|さん)(?<=\p{{Han}}{{2,}}(?:様|さん)?)"),
    # Hindi, Marathi, Nepali: मेरा नाम राहुल शर्मा है
    regex.compile(
        rf"(?:मेरा नाम|मेरा नाम है|मैं|माझे नाव|मेरो नाम|श्री|श्रीमती)[ \t]+"
        rf"(?P<name>{_DEVANAGARI}(?:[ \t]{_DEVANAGARI})?)(?=[ \t]+(?:है|हूँ|हूं|आहे|हो)|[,।.!?]|$)"
    ),
    # Arabic, Persian, Urdu: اسمي محمد العلي
    regex.compile(
        rf"(?:اسمي|إسمي|السيد|السيدة|الأستاذ|نام من|میرا نام)[ \t]+"
        rf"(?P<name>{_ARABIC_WORD}(?:[ \t](?!و){_ARABIC_WORD})?)"
    ),
    # Korean: 저는 김민준입니다, 제 이름은 김민준입니다
    regex.compile(
        rf"(?:저는|제 이름은|나는)[ \t]*(?P<name>{_HANGUL})(?=입니다|이에요|예요|이라고|라고)"
    ),
    regex.compile(rf"(?P<name>{_HANGUL})(?=[ \t]?씨(?!\p{{Hangul}}))"),
    # Thai: ผมชื่อสมชาย, ฉันชื่อ สมหญิง, คุณสมชาย
    regex.compile(rf"(?:ผมชื่อ|ฉันชื่อ|ดิฉันชื่อ|ชื่อ)[ \t]*(?P<name>{_THAI})"),
    # Chinese: the cues introduced_name.py does not have
    regex.compile(
        r"(?:我的名字叫|我姓名是|敝姓|本人姓名)(?P<name>\p{Han}{2,4})(?=[，。,.!！?？\s]|$)"
    ),
]

#: What a pre-filter looks for (lower-case): the cue words above.
CUE_KEYWORDS = (
    "sehr geehrte", "liebe", "ich hei", "mein name", "herr ", "frau ", "vážen", "milý", "milá",
    "jmenuji", "volám", "nazywam", "pan ", "pani ", "me llamo", "mi nombre", "estimad", "señor",
    "señora", "don ", "doña", "meu nome", "me chamo", "eu sou", "prezad", "senhor", "mi chiamo",
    "il mio nome", "gentile", "signor", "je m'appelle", "je m’appelle", "mon nom", "cher ",
    "chère", "monsieur", "madame", "mijn naam", "ik heet", "geachte", "tôi", "tên", "anh ",
    "chị", "adım", "nama saya", "saya ", "dear", "hi ", "hi,", "hello", "my name", "i am", "i'm",
    "меня зовут", "моё имя", "мое имя", "мене звати", "казвам", "зовем",
    "уважаем", "дорог", "господин", "госпожа", "申します", "言います", "私は", "わたしは",
    "名前は", "様", "さん", "मेरा नाम", "मैं", "माझे नाव", "मेरो नाम", "श्री", "اسمي", "إسمي",
    "السيد", "الأستاذ", "نام من", "میرا نام", "저는", "제 이름", "나는", "씨",
    "ชื่อ", "我的名字", "我姓名", "敝姓", "本人姓名",
)  # fmt: skip

_NOT_NAMES = frozenset(
    {"Kunde", "Kundin", "Kunden", "Cliente", "Client", "Customer", "Team", "Support", "Sir",
     "Madam", "Madame", "Monsieur", "Herr", "Frau", "Señor", "Señora", "Service", "Kundenservice",
     "Zákazník", "Zákaznice", "Клиент", "Поддержка", "Hotel", "Pane", "Paní", "Doña", "Don",
     # roles written with an honorific (様, さん, 씨) like a name
     "担当者", "会員", "利用者", "管理者", "顧客", "店長", "社長", "部長", "課長", "係長", "患者",
     "お客", "客", "皆", "各位", "고객", "회원", "담당자"}
)  # fmt: skip


def _ordinary(words: list[str], english_cue: bool) -> bool:
    """Words that are no name after a Latin cue: English words only ("Hello World", "Estimado
    Customer"), or, after an English cue, a name in ASCII letters (``introduced_name``'s)."""
    if english_cue and all(w.isascii() for w in words):
        return True
    if not all(w.isascii() for w in words):
        return False
    lex = lexicon()
    return all(lex.is_word(w) and not lex.is_given(w) and not lex.is_surname(w) for w in words)


#: Cues of other Latin-script languages: in ASCII text only these can lead to a name here.
_FOREIGN_LATIN = Keywords(
    *(k for k in CUE_KEYWORDS if k.isascii() and k.strip() not in _EN_CUES.split("|"))
)


def find_cued_names(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every name right after a cue in any of the languages above."""
    out: list[tuple[int, int]] = []
    if text.isascii():  # other scripts' patterns cannot match; English cues need diacritics
        patterns = _PATTERNS[:1] if _FOREIGN_LATIN.search(text) else []
    else:
        patterns = _PATTERNS
    for pattern in patterns:
        for m in pattern.finditer(text):
            start, end = m.span("name")
            words = m.group("name").split()
            while words and words[0] in _NOT_NAMES:  # "Sehr geehrte Frau Kundin": no name
                start += len(words.pop(0)) + 1
            if not words or end <= start:
                continue
            cue = m.groupdict().get("cue")
            if cue is not None and _ordinary(words, _EN_CUE.fullmatch(cue) is not None):
                continue
            out.append((start, end))
    return out
