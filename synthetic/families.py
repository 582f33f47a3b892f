"""The family planner: traffic is built FROM near-duplicate families, in bounded memory.

A family is one trajectory (scenario: tool sequence, statuses, argument shapes, outcome) plus one
base request with its own topic words; its members are rewordings with their own values. Sizes
are skewed (many singletons, a long tail of large families). Some families hold an *exact
duplicate group*: members that share one wording variant (``struct_seed``) and so differ only in
ids, names, amounts and dates.

Members of a family are spread over the corpus: the planner keeps a small pool of open families
per language and each turn draws a member from a random open family; a family leaves the pool
when its last member has been drawn. Memory is O(pool), whatever the corpus size. Families still
open when the corpus ends are simply smaller than planned (the truth counts what was written).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from golden_distill.synthetic.scenarios import (
    Scenario,
    build_scenario,
    choose_components,
)
from golden_distill.synthetic.text import BaseRequest, plan_request

OPEN_FAMILIES_PER_LANGUAGE = 48


def planned_size(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.55:
        return 1
    if r < 0.80:
        return rng.randint(2, 3)
    if r < 0.95:
        return rng.randint(4, 10)
    return rng.randint(11, 60)


@dataclass(slots=True)
class Family:
    family_id: str
    lang: str
    scenario: Scenario
    request: BaseRequest
    secrets_in_args: str | None  # None | "auth" (API key) | "headers" (Bearer token)
    #: wording seeds still to emit, in emission order (repeats = an exact-duplicate group)
    pending: list[int] = field(default_factory=list)
    #: wording seed -> exact-duplicate group id, for seeds planned more than once
    exact_groups: dict[int, str] = field(default_factory=dict)
    emitted: int = 0


@dataclass(frozen=True, slots=True)
class Member:
    family: Family
    struct_seed: int
    exact_group: str | None


class FamilyPlanner:
    def __init__(self, rng: random.Random, open_per_language: int = OPEN_FAMILIES_PER_LANGUAGE,
                 prefix: str = "") -> None:  # fmt: skip
        self._rng = rng
        self._prefix = prefix
        self._open: dict[str, list[Family]] = {"en": [], "zh": []}
        self._open_target = open_per_language
        self.families_created = 0

    def new_family(
        self,
        lang: str,
        components: tuple[str, str, str] | None = None,
        size: int | None = None,
        *,
        ambiguous: bool = False,
        scenario: Scenario | None = None,
        request: BaseRequest | None = None,
    ) -> Family:
        rng = self._rng
        self.families_created += 1
        fam_rng = random.Random(rng.getrandbits(64))
        if scenario is None:
            hv, rec, ho = components or choose_components(fam_rng)
            scenario = build_scenario(fam_rng, hv, rec, ho)
        secrets = fam_rng.random() < 0.15
        planned = plan_request(
            fam_rng, lang, scenario.main_tool, secrets=secrets, ambiguous=ambiguous
        )
        request = request or planned
        family = Family(
            family_id=f"fam-{self._prefix}{self.families_created:08d}",
            lang=lang,
            scenario=scenario,
            request=request,
            secrets_in_args=fam_rng.choice(("auth", "headers")) if fam_rng.random() < 0.2 else None,
        )
        n = size if size is not None else planned_size(fam_rng)
        seeds = [fam_rng.getrandbits(63) for _ in range(n)]
        if n >= 3 and fam_rng.random() < 0.4:
            k = fam_rng.randint(2, min(3, n - 1))
            for i in range(1, k):
                seeds[i] = seeds[0]
            family.exact_groups[seeds[0]] = f"exg-{family.family_id[4:]}"
            fam_rng.shuffle(seeds)
        family.pending = seeds
        return family

    def next_member(self, lang: str) -> Member:
        pool = self._open[lang]
        while len(pool) < self._open_target:
            pool.append(self.new_family(lang))
        idx = self._rng.randrange(len(pool))
        family = pool[idx]
        seed = family.pending.pop()
        if not family.pending:
            pool[idx] = pool[-1]
            pool.pop()
        return Member(family, seed, family.exact_groups.get(seed))

    @staticmethod
    def take_all(family: Family) -> list[Member]:
        """Every member of a family created outside the pool (same-text pairs)."""
        out = [Member(family, s, family.exact_groups.get(s)) for s in reversed(family.pending)]
        family.pending.clear()
        return out
