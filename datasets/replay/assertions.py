"""The assertions over one replayed case: every registered check (``checks.CHECKS``) in order,
each returning its ``Diff`` rows (layer 1 tool sequence, layer 2 parameter parity, layer 3
outcome). When the replay made exactly the recorded calls, in order, each an exact match, only
the checks that can still find something run (``Check.on_fast_path``)."""

from __future__ import annotations

from golden_distill.datasets.case import Case
from golden_distill.datasets.replay import checks as registry
from golden_distill.datasets.replay.checks import CheckContext
from golden_distill.datasets.replay.checks.base import CaseCheck, show_call
from golden_distill.datasets.replay.config import ReplayConfig
from golden_distill.datasets.replay.contract import AgentResult
from golden_distill.datasets.replay.normalise import Normaliser
from golden_distill.datasets.replay.stubs import VirtualTools

__all__ = ["CaseAsserter", "CaseCheck", "show_call"]


class CaseAsserter:
    """The checks of one config, built once per run."""

    def __init__(self, config: ReplayConfig) -> None:
        self.config = config
        query_keys = frozenset(k.lower() for k in config.assertions.query_keys)
        self.normaliser = Normaliser(
            config.matching, query_keys, config.assertions.query_similarity
        )
        self.checks = [cls(config, self.normaliser) for cls in registry.CHECKS]
        self.fast = [c for c in self.checks if c.on_fast_path]

    def check(
        self,
        case: Case,
        tools: VirtualTools,
        result: AgentResult | None,
        agent_error: str | None = None,
        agent_traceback: str | None = None,
    ) -> CaseCheck:
        ctx = CheckContext(case, tools, result, agent_error, self.config, self.normaliser,
                           agent_traceback)  # fmt: skip
        check = ctx.check
        if ctx.as_recorded:
            check.aligned = check.aligned_equal = len(ctx.log)
            checks = self.fast
        else:
            checks = self.checks
        for one in checks:
            check.diffs.extend(one.run(ctx))
        return check
