"""Layer 1, tool sequence: stub escapes, every recorded call made (``missing_call``), no call
without a recorded counterpart (``extra_call``), writes in recorded order, the call ratio.
Positions are 1-based: "recorded call 4" is the fourth recorded tool call, "replayed call 2"
the agent's second."""

from __future__ import annotations

from typing import Any

from golden_distill.datasets.replay.checks.base import Check, CheckContext, show_call
from golden_distill.datasets.replay.diffs import Diff
from golden_distill.datasets.replay.stubs import ESCAPE, EXHAUSTED, parse_json


class StubEscapes(Check):
    name = "stub_escapes"

    def run(self, ctx: CheckContext) -> list[Diff]:
        out = []
        for call in ctx.log:
            if call.match == ESCAPE:
                ctx.check.stub_escapes += 1
                out.append(ctx.diff(
                    "stub_escape", f"{call.name}: no recording of this tool",
                    replayed=show_call(call.name, call.arguments), tool=call.name,
                    position=f"replayed call {call.index + 1}"))  # fmt: skip
        return out


class Coverage(Check):
    name = "coverage"

    def run(self, ctx: CheckContext) -> list[Diff]:
        _, missing, extra = ctx.alignment
        out = []
        for step in missing:
            where = f"recorded call {ctx.position[step.seq]}"
            out.append(ctx.diff(
                "missing_call", f"{step.name} ({where}) was never called",
                write=ctx.tools.is_write(step.name), tool=step.name, position=where,
                recorded=show_call(step.name, parse_json(step.arguments)),
                extra={"step_seq": step.seq}))  # fmt: skip
        for call in extra:
            where = f"replayed call {call.index + 1}"
            served = ("; served its tool's last recording again (re-record the fixture if the "
                      "call is expected)" if call.match == EXHAUSTED else "")  # fmt: skip
            out.append(ctx.diff(
                "extra_call", f"{call.name} ({where}) has no recorded counterpart{served}",
                write=call.is_write, tool=call.name, position=where,
                replayed=show_call(call.name, call.arguments),
                extra={"call_index": call.index}))  # fmt: skip
        return out


class WriteOrder(Check):
    """The replayed writes (as the recorded calls they align with) must be a subsequence of the
    recorded writes; identical calls are interchangeable, and a write never made is a
    ``missing_call``, not an order change. The row lists both orders with each write's
    arguments and its position in the other order."""

    name = "write_order"

    def run(self, ctx: CheckContext) -> list[Diff]:
        pairs, _, _ = ctx.alignment
        tools = ctx.tools
        replayed = sorted(((s, c) for s, c in pairs if c.is_write), key=lambda p: p[1].index)
        recorded = [s for s in ctx.baseline if tools.is_write(s.name)]
        if _is_subsequence([_sig(s) for s, _ in replayed], [_sig(s) for s in recorded]):
            return []
        rank = {s.seq: i for i, s in enumerate(recorded, 1)}
        moved = [
            f"{s.name} (recorded write {rank[s.seq]}) made as write {j}"
            for j, (s, _) in enumerate(replayed, 1)
            if rank.get(s.seq) != j
        ]
        return [ctx.diff(
            "tool_seq_diff", "writes out of recorded order: " + "; ".join(moved), write=True,
            tool=next((s.name for j, (s, _) in enumerate(replayed, 1) if rank.get(s.seq) != j),
                      None),
            position=", ".join(f"write {j} <- recorded write {rank.get(s.seq)}"
                               for j, (s, _) in enumerate(replayed, 1)),
            recorded="\n".join(f"{i}. {show_call(s.name, parse_json(s.arguments))}"
                               for i, s in enumerate(recorded, 1)),
            replayed="\n".join(f"{j}. {show_call(c.name, c.arguments)}"
                               for j, (_, c) in enumerate(replayed, 1)))]  # fmt: skip


class CallRatio(Check):
    name = "call_ratio"

    def run(self, ctx: CheckContext) -> list[Diff]:
        bounds = self.config.assertions
        recorded, replayed = len(ctx.baseline), len(ctx.log)
        if not recorded:
            return []
        ratio = replayed / recorded
        if bounds.min_step_ratio <= ratio <= bounds.max_step_ratio:
            return []
        return [ctx.diff(
            "tool_seq_diff", f"{replayed} tool calls for {recorded} recorded: ratio "
            f"{ratio:.2f} outside [{bounds.min_step_ratio}, {bounds.max_step_ratio}]",
            recorded=str(recorded), replayed=str(replayed))]  # fmt: skip


def _sig(step: Any) -> tuple[str, str | None]:
    return step.name, step.canonical_args_sha256 or step.arguments


def _is_subsequence(part: list[Any], whole: list[Any]) -> bool:
    items = iter(whole)
    return all(any(x == y for y in items) for x in part)
