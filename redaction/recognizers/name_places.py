"""Names where a format, not a sentence, says a value is a person's: home folders
(``/home/first.last``, ``C:\\Users\\First.Last``), a SQL condition on a name column, the name
column of a CSV text, an ``@handle``, a GitHub / GitLab / LinkedIn / X profile URL.

A user folder, a handle and a profile slug identify a person even when they are not written as
a name, so the whole segment is the value (it then propagates like any name). Written here:
no maintained recognizer knows these places; generic account names (``root``, ``admin``,
``runner``...) and site paths (``github.com/features``) are not people.
"""

from __future__ import annotations

import csv
import re

from golden_distill.redaction.recognizers.base import AnyOf, Guarded, Keywords
from golden_distill.redaction.recognizers.name_lexicon import lexicon

_SEGMENT = r"[A-Za-z][A-Za-z0-9._\-]{1,40}"
_HOME = re.compile(
    r"(?:(?<![\w.])/home/|(?<![\w.])/Users/"
    r"|\b[A-Za-z]:[\\/]+(?i:Users|Documents and Settings)[\\/]+"
    rf"|\\\\[\w.\-]+\\(?i:home|users)\\)(?P<name>{_SEGMENT})"
)
#: Account names that belong to no one.
_SYSTEM_USERS = frozenset(
    {"root", "admin", "administrator", "user", "users", "ubuntu", "ec2-user", "runner", "public",
     "default", "default user", "all users", "guest", "shared", "www-data", "app", "node",
     "vagrant", "jenkins", "git", "postgres", "docker", "circleci", "travis", "build", "ci",
     "service", "svc", "test", "demo", "centos", "debian", "pi", "linuxbrew", "runneradmin"}
)  # fmt: skip
#: A SQL condition on a name column (after WHERE / AND / OR / SET / HAVING: a Python repr
#: "name='cancel_order'" is no query).
_SQL = re.compile(
    r"(?i)\b(?:where|and|or|set|having)\s+(?:\w+\.)?"
    r"(?:[a-z_]*name|customer|contact|owner|author|username|login|holder)\s*"
    r"(?:=|like|in\s*\()\s*N?'(?P<name>[^'\n]{2,80})'"
)
_HANDLE = re.compile(
    r"(?<![\w.@/+\-])@(?P<name>[A-Za-z][A-Za-z0-9_]{2,30}(?:\.[A-Za-z0-9_]{2,30})?)(?![\w@/(])"
)
#: Decorators, directives and mentions that are not people.
_NOT_HANDLES = frozenset(
    {"here", "everyone", "channel", "all", "param", "property", "staticmethod", "classmethod",
     "dataclass", "media", "import", "types", "override", "return", "returns", "see", "todo",
     "author", "since", "deprecated", "type", "throws", "raises", "link", "example", "mention",
     "support", "team", "admin", "bot", "keyframes", "font-face", "charset", "supports", "page",
     "pytest", "app", "router", "abstractmethod", "cached_property", "cache", "mock", "patch"}
)  # fmt: skip
_PROFILE = re.compile(
    r"(?i)(?:https?://)?(?:www\.)?(?:"
    r"(?:github|gitlab)\.com/(?P<gh>[A-Za-z0-9](?:[A-Za-z0-9\-]{0,38}))/?(?=$|[\s\"'?#)\]>,;])"
    r"|linkedin\.com/in/(?P<li>[\w\-%.]{2,100})"
    r"|(?:twitter|x|instagram|facebook)\.com/(?P<tw>[A-Za-z0-9_.]{2,50})/?(?=$|[\s\"'?#)\]>,;])"
    r")"
)
_SITE_PATHS = frozenset(
    {"about", "features", "pricing", "login", "join", "settings", "explore", "topics", "orgs",
     "marketplace", "sponsors", "enterprise", "pulls", "issues", "notifications", "search",
     "home", "help", "security", "apps", "share", "intent", "hashtag", "i", "watch",
     "events", "groups", "pages", "company", "jobs", "signup", "site"}
)  # fmt: skip
#: A header naming a person's name column ("full_name", "Customer Name", "Nachname").
_PERSON_HEADER = re.compile(
    r"(?i)^\s*\"?(?:(?:first|last|full|given|family|sur|customer|contact|passenger|owner|holder"
    r"|user|account|middle|patient|employee|guest)[ _\-]?name|surname|vorname|nachname"
    r"|příjmení|jméno|apellidos?|nom de famille|prénom)\"?\s*$"
)
#: A bare "name" column: a product table has one too, so its cells must read as names.
_BARE_HEADER = re.compile(r"(?i)^\s*\"?(?:name|nombre|nom)\"?\s*$")
_DELIMITERS = (",", ";", "\t", "|")


def _reads_as_name(value: str) -> bool:
    """A cell of a bare "name" column that is a person's name: a known given name first or a
    known surname last, and not all ordinary words ("Water Bottle" is a product)."""
    words = value.split()
    if not 2 <= len(words) <= 4:
        return False
    lex = lexicon()
    if all(lex.is_word(w) and not lex.is_given(w) for w in words):
        return False
    return lex.is_given(words[0]) or lex.is_surname(words[-1])


def _csv_names(text: str) -> list[tuple[int, int]]:
    """Cells under a name column of a CSV text (a header line naming the column)."""
    newline = text.find("\n")
    if newline < 0 or "name" not in text[:newline].lower():
        return []
    lines = text.split("\n")
    header = lines[0]
    delimiter = next((d for d in _DELIMITERS if d in header), None)
    if delimiter is None:
        return []
    cells = next(csv.reader([header], delimiter=delimiter))
    columns = {i for i, c in enumerate(cells) if _PERSON_HEADER.match(c)}
    bare = {i for i, c in enumerate(cells) if _BARE_HEADER.match(c)}
    if not columns and not bare:
        return []
    out: list[tuple[int, int]] = []
    offset = len(header) + 1
    for line in lines[1:]:
        row = next(csv.reader([line], delimiter=delimiter), [])
        cursor = 0
        for i, cell in enumerate(row):
            at = line.find(cell, cursor) if cell else -1
            if at >= 0:
                cursor = at + len(cell)
                value = cell.strip().strip('"')
                wanted = i in columns or (i in bare and _reads_as_name(value))
                if wanted and len(value) >= 2 and not value.replace(".", "").isdigit():
                    begin = offset + line.find(value, at)
                    out.append((begin, begin + len(value)))
        offset += len(line) + 1
    return out


#: The pre-filter: what every place above holds.
GATE = AnyOf(
    "/home/",
    "/Users/",
    Keywords(
        "\\users\\", ":/users/", "\\home\\", "github.com/", "gitlab.com/", "linkedin.com/in/",
        "twitter.com/", "x.com/", "instagram.com/", "facebook.com/",
    ),
    Guarded("@", re.compile(r"(?<![\w.@/+\-])@[A-Za-z]")),
    Guarded(
        "'",
        re.compile(
            r"(?i:name|customer|contact|owner|author|login|holder)\s*(?:=|(?i:like|in)\s*\()"
            r"\s*N?'"
        ),
    ),
    Guarded("\n", re.compile(r"^[^\n]*(?i:name|nombre|nom|jméno|příjmení|apellido)[^\n]*\n")),
)  # fmt: skip


def find_placed_names(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every name in a path, SQL condition, CSV column, handle or URL."""
    out: list[tuple[int, int]] = []
    if "/" in text or "\\" in text:
        for m in _HOME.finditer(text):
            if m.group("name").lower() not in _SYSTEM_USERS:
                out.append(m.span("name"))
        for m in _PROFILE.finditer(text):
            group = next(g for g in ("gh", "li", "tw") if m.group(g))
            if m.group(group).lower() not in _SITE_PATHS:
                out.append(m.span(group))
    if "'" in text:
        out.extend(m.span("name") for m in _SQL.finditer(text))
    if "@" in text:
        for m in _HANDLE.finditer(text):
            if m.group("name").lower() not in _NOT_HANDLES:
                out.append(m.span("name"))
    out.extend(_csv_names(text))
    return out
