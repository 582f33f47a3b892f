"""User requests in English and Chinese: templates, topic vocabulary and rewording.

A family's *base request* is a few clauses (an ask that matches its main tool, context clauses
carrying personal values, and two distinctive topic phrases). Its members are *rewordings*:
synonym swaps, fillers, clause order, and of course their own names, ids, amounts and dates.
Two families that share a trajectory still read differently because their topic phrases come
from a large adjective x noun vocabulary and their ask/context templates are drawn separately.
Placeholders (``{person}``...) are filled per member from its slots.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from golden_distill.synthetic.phrasebook import (
    ADJECTIVES,
    AMBIGUOUS_ASK,
    ASKS,
    CONTEXT,
    FILLERS_AFTER,
    FILLERS_BEFORE,
    ID_CONTEXT,
    NOUNS,
    SECRET_CONTEXT,
    SYNONYMS,
)
from golden_distill.synthetic.pii import pick


def _lang_index(lang: str) -> int:
    return 1 if lang == "zh" else 0


@dataclass(frozen=True, slots=True)
class BaseRequest:
    """A family's request before rewording: clause templates and its fixed topic phrases."""

    lang: str
    clauses: tuple[str, ...]  # clauses[0] is the ask
    topic: str
    topic2: str


def plan_request(
    rng: random.Random, lang: str, main_tool: str, *, secrets: bool, ambiguous: bool = False
) -> BaseRequest:
    li = _lang_index(lang)
    asks = (AMBIGUOUS_ASK[li],) if ambiguous else ASKS.get(main_tool, ASKS["kb_search"])[li]
    ask = rng.choice(asks)
    ctx = list(rng.sample(CONTEXT[li], 2))
    if secrets:
        ctx.append(rng.choice(SECRET_CONTEXT[li]))
    if lang == "zh" and rng.random() < 0.3:
        ctx.append(rng.choice(ID_CONTEXT))
    adj, noun = ADJECTIVES[li], NOUNS[li]
    sep = "" if lang == "zh" else " "
    topic = rng.choice(adj) + sep + rng.choice(noun)
    topic2 = rng.choice(adj) + sep + rng.choice(noun)
    return BaseRequest(lang, (ask, *ctx), topic, topic2)


def reword(base: BaseRequest, rng: random.Random) -> str:
    """One member's wording of the base request (placeholders left for ``fill_text``)."""
    li = _lang_index(base.lang)
    clauses = list(base.clauses)
    if rng.random() < 0.5:
        rest = clauses[1:]
        rng.shuffle(rest)
        clauses = [clauses[0], *rest] if rng.random() < 0.5 else [*rest, clauses[0]]
    syn = SYNONYMS[li]
    out = []
    for clause in clauses:
        for word, alts in syn.items():
            if word in clause and rng.random() < 0.4:
                clause = clause.replace(word, pick(rng, alts), 1)
        out.append(clause)
    sep = "，" if li else ", "
    text = sep.join(out)
    if rng.random() < 0.5:
        text = pick(rng, FILLERS_BEFORE[li]) + ("" if li else " ") + text
    text += "。" if li else "."
    if rng.random() < 0.4:
        text += ("" if li else " ") + pick(rng, FILLERS_AFTER[li])
    return text


def fill_text(template: str, values: dict[str, str]) -> str:
    """``str.format`` that leaves unknown placeholders visible rather than failing."""
    try:
        return template.format_map(values)
    except (KeyError, IndexError, ValueError):
        return template


ANSWERS = (
    (
        "Done: I have handled this for {person}. Reference {ref}.",
        "All set, {person}. Your request ({ref}) is complete.",
        "I could not finish this for {person}; reference {ref}.",
        "I've passed this to a colleague who will contact {person} shortly.",
    ),
    (
        "已为{person}处理完成，参考号{ref}。",
        "{person}您好，请求{ref}已完成。",
        "抱歉，{person}的请求{ref}未能完成。",
        "已转给同事，稍后会联系{person}。",
    ),
)


def answer_text(lang: str, end: str, values: dict[str, str], variant: int) -> str:
    """The agent's final answer; ``variant`` (0/1) picks the wording of a successful run."""
    li = _lang_index(lang)
    idx = {"handed_off": 3, "failed": 2, "abandoned": 2}.get(end, variant % 2)
    return fill_text(ANSWERS[li][idx], values)
