"""Names known in one case of a shard, looked for in the free text of every case of the shard.

Without NER, a name typed in an earlier turn of a session ("All set, Erica Bridges.") is only
found when something in *that* case says it is a name. Multi-turn sessions and repeat customers
share shards, so a name a key rule found in one case (``fullName``, ``accountHolder``) is very
likely the unmarked name in another. Lookup is by n-grams (capitalised word pairs and triples,
runs of two or three Han characters) against a set, so the cost is linear in the text, not in
the number of names. The dictionary is rebuilt per batch: the same shard gives the same output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_EN_NAME_RUN = re.compile(r"[A-Z][a-z]+(?:[-'][A-Za-z]+)?(?: [A-Z][a-z]+(?:[-'][A-Za-z]+)?)+")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]{2,}")
_HAN_NAME = re.compile(r"[\u4e00-\u9fff]{2,3}")


def is_dictionary_name(value: str) -> bool:
    """Names specific enough to look for across cases: full Latin names, 2-3 Han characters."""
    if _HAN_NAME.fullmatch(value):
        return True
    return bool(_EN_NAME_RUN.fullmatch(value)) and len(value.split()) <= 3


def _candidates(text: str) -> Iterator[str]:
    for m in _EN_NAME_RUN.finditer(text):
        words = m.group(0).split(" ")
        for n in (2, 3):
            for i in range(len(words) - n + 1):
                yield " ".join(words[i : i + n])
    for m in _HAN_RUN.finditer(text):
        run = m.group(0)
        for n in (2, 3):
            for i in range(len(run) - n + 1):
                yield run[i : i + n]


class NameFinder:
    """The dictionary names that occur in a case's texts, for the cases of one batch, with a
    memo per distinct text (the same tool responses and prompts recur across a batch's
    cases)."""

    def __init__(self, names: set[str] | frozenset[str]) -> None:
        self.names = names
        self._hits: dict[str, frozenset[str]] = {}

    def __call__(self, texts: Iterable[str]) -> set[str]:
        if not self.names:
            return set()
        out: set[str] = set()
        for text in texts:
            hits = self._hits.get(text)
            if hits is None:
                hits = frozenset(c for c in _candidates(text) if c in self.names)
                self._hits[text] = hits
            out |= hits
        return out
