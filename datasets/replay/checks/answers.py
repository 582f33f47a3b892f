"""Layer 3, what the agent said: intent, answer, tokens; and the model/route boundaries' counts.

* intent: the agent's intent against the recorded one (case and spacing ignored);
* answer: the answer facts the recorded answer held must still be in the new answer (facts the
  recording missed are not a regression); without facts the answer must stay similar to the
  recorded one;
* tokens: the recorded tokens (all steps; only the model steps when the agent's tokens come from
  the model stub) against the agent's (``AgentResult.tokens``, else what the model stub served);
  unknown stays unknown (``None``: the gate shows ``n/a``);
* boundaries: a model or route boundary the agent used fewer times than recorded is a
  ``missing_call``; one it called past the recording an ``extra_call`` saying the fixture needs
  re-recording.
"""

from __future__ import annotations

from collections import Counter

from rapidfuzz import fuzz

from golden_distill.datasets.replay.checks.base import Check, CheckContext
from golden_distill.datasets.replay.diffs import Diff


class Intent(Check):
    name = "intent"
    on_fast_path = True

    def run(self, ctx: CheckContext) -> list[Diff]:
        result, recorded = ctx.result, ctx.case.intent.name
        if result is None or result.intent is None or not recorded or result.intent == recorded:
            return []
        if " ".join(result.intent.split()).casefold() == " ".join(recorded.split()).casefold():
            return []
        return [ctx.diff("intent_diff", "intent differs", recorded=recorded,
                         replayed=result.intent)]  # fmt: skip


class Answer(Check):
    name = "answer"
    on_fast_path = True

    def run(self, ctx: CheckContext) -> list[Diff]:
        result, case = ctx.result, ctx.case
        if result is None or result.answer == case.outcome.answer_text:
            return []
        threshold = self.config.assertions.answer_similarity
        answer = (result.answer or "").casefold()
        recorded_answer = (case.outcome.answer_text or "").casefold()
        facts = [
            f
            for f in (case.expected.answer_facts if case.expected else [])
            if fuzz.partial_ratio(f.casefold(), recorded_answer) >= threshold
        ]
        out = [
            ctx.diff(
                "answer_diff",
                "answer misses an expected fact",
                recorded=fact,
                replayed=result.answer,
            )
            for fact in facts
            if fuzz.partial_ratio(fact.casefold(), answer) < threshold
        ]
        recorded = case.outcome.answer_text
        if (
            not facts
            and self.config.assertions.compare_answer_text
            and recorded
            and result.answer is not None
            and fuzz.ratio(recorded.casefold(), answer) < threshold
        ):
            out.append(ctx.diff("answer_diff", "answer differs from the recorded one",
                                recorded=recorded, replayed=result.answer))  # fmt: skip
        return out


class Tokens(Check):
    name = "tokens"
    on_fast_path = True

    def run(self, ctx: CheckContext) -> list[Diff]:
        check, steps, result = ctx.check, ctx.case.steps, ctx.result
        served = ctx.tools.model_log
        if (result is None or result.tokens is None) and served:
            known = [s.tokens for s in steps if s.kind == "model" and s.tokens is not None]
            tokens = [c.tokens for c in served if c.tokens is not None]
            check.replayed_tokens = sum(tokens) if known else None
        else:
            known = [s.tokens for s in steps if s.tokens is not None]
            check.replayed_tokens = result.tokens if result is not None else None
        check.recorded_tokens = sum(known) if known else None
        return []


class Boundaries(Check):
    name = "boundaries"
    on_fast_path = True

    def run(self, ctx: CheckContext) -> list[Diff]:
        log = ctx.tools.boundary_log
        if not log:
            return []
        boundaries = ctx.tools.recorded_boundaries()
        if len(log) == len(boundaries) and all(
            c.recorded_seq is not None or c.error is None for c in log
        ):
            return []  # each recorded boundary served once (a served call takes one step)
        out = []
        recorded = Counter((s.kind, s.name) for s in boundaries)
        made = Counter((c.kind, c.name) for c in log if c.error != "fixture mismatch")
        used_kinds = {c.kind for c in log}
        for call in log:
            if call.error == "fixture mismatch":
                out.append(ctx.diff(
                    "extra_call", f"{call.kind} boundary {call.name}[{call.occurrence}]: the "
                    f"recording has {recorded[(call.kind, call.name)]} such call(s); the fixture "
                    "needs re-recording (or run it --live)", tool=call.name,
                    position=f"{call.kind} call {call.occurrence}"))  # fmt: skip
        for (kind, name), n in sorted(recorded.items()):
            live = any(c.live and c.kind == kind for c in log)
            if kind in used_kinds and not live and made[(kind, name)] < n:
                out.append(ctx.diff(
                    "missing_call", f"{kind} boundary {name}: called {made[(kind, name)]} of "
                    f"{n} recorded time(s); the fixture may need re-recording", tool=name,
                    recorded=str(n), replayed=str(made[(kind, name)])))  # fmt: skip
        return out
