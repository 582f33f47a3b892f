"""Layer 2, parameter parity: each aligned (recorded, replayed) call pair compared under the
stage-2 tolerances (ids and amounts equal, query-like text similar); a call served another
response than its recorded counterpart's is a ``tool_output_diff``. Each row names the paths
that differ and the tolerances it applied."""

from __future__ import annotations

import orjson

from golden_distill.datasets.canonical_json import canonical_json
from golden_distill.datasets.replay.checks.base import Check, CheckContext, show_call
from golden_distill.datasets.replay.diffs import Diff
from golden_distill.datasets.replay.stubs import EXACT, LIVE, parse_json


class ParameterParity(Check):
    name = "parameter_parity"

    def run(self, ctx: CheckContext) -> list[Diff]:
        pairs, _, _ = ctx.alignment
        tools, check = ctx.tools, ctx.check
        out = []
        for step, call in pairs:
            check.aligned += 1
            where = f"recorded call {ctx.position[step.seq]}, replayed call {call.index + 1}"
            if call.recorded_seq == step.seq and call.match == EXACT:
                check.aligned_equal += 1  # equal canonical arguments: nothing to compare
                continue
            left = orjson.loads(canonical_json(parse_json(step.arguments), tools.volatile))
            called = orjson.loads(call.canonical)
            found = self.normaliser.compare(
                step.name, left, called, tools.recorded_defaults, similar_queries=True
            )
            tolerances = tuple(sorted(found.tolerances | set(call.tolerances)))
            if found.differing:
                out.append(ctx.diff(
                    "tool_param_diff", f"{step.name}: {', '.join(found.differing)} differ",
                    write=call.is_write, tool=step.name, position=where, tolerances=tolerances,
                    recorded=show_call(step.name, parse_json(step.arguments)),
                    replayed=show_call(call.name, call.arguments),
                    extra={"step_seq": step.seq, "call_index": call.index}))  # fmt: skip
                continue
            check.aligned_equal += 1
            for name in tolerances:
                check.tolerated[name] = check.tolerated.get(name, 0) + 1
            if (
                call.match != LIVE
                and call.recorded_seq != step.seq
                and call.response != step.response
            ):
                out.append(ctx.diff(
                    "tool_output_diff", f"{step.name}: served a {call.match} response",
                    tool=step.name, position=where, tolerances=tolerances,
                    recorded=step.response, replayed=call.response))  # fmt: skip
        return out
