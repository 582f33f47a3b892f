"""``report.html`` of a replay: one self-contained page (inline CSS, no scripts, no fetches).

The gate's verdict and lines first (``n/a`` where a figure is unknown), what changed since the
previous replay of the same set, the totals of differences by type and by tool, then the cases
with differences sorted by severity score (high 3, medium 2, low 1 per diff), each with its
input, intent and funnels and each difference as a row: what differs, where (1-based positions),
the tolerances applied, how often it reproduced over repeated replays, and the recorded and the
replayed side next to each other. Everything shown comes from the (redacted) golden set and the
agent's own calls; every value is HTML-escaped. A usage error gets a page of its own
(``render_usage_error``): the message and the traceback.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any

from golden_distill.datasets.replay.diffs import case_score
from golden_distill.datasets.replay.runner import CaseRun, ReplayRun

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;text-align:left}
pre{white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px}
.high{background:#fdd}.medium{background:#ffe9c6}.low{background:#eef}
.pass{color:#070}.warn{color:#a60}.fail{color:#b00}
"""
_INPUT_CHARS = 300


def _pre(text: str | None) -> str:
    return "<pre>" + escape(text if text is not None else "—") + "</pre>"


def _head(title: str) -> list[str]:
    return ["<!doctype html><html><head><meta charset='utf-8'>",
            f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"]  # fmt: skip


def render_usage_error(ref: str, message: str, traceback_text: str | None) -> str:
    """The page of a replay stopped by a usage error (exit 2): no verdict, the reason."""
    parts = _head(f"Replay of {ref}: usage error")
    parts.append(f"<h1>Replay of {escape(ref)}: usage error (exit 2)</h1>")
    parts.append(f"<p class='fail'><b>{escape(message)}</b></p>")
    parts.append("<p>No verdict: the agent under test breaks the replay contract "
                 "(docs/consuming.md, \"The agent contract\").</p>")  # fmt: skip
    if traceback_text:
        parts.append(f"<h2>Traceback</h2>{_pre(traceback_text)}")
    parts.append("</body></html>")
    return "\n".join(parts)


def render_report(run: ReplayRun) -> str:
    verdict = run.gate.verdict
    recorded = ", ".join(run.recorded_versions) or "unknown"
    parts = _head(f"Replay {run.run_id}")
    parts += [
        f"<h1>Replay of {escape(run.baseline_version)}</h1>",
        f"<p>Run <code>{escape(run.run_id)}</code>: agent version "
        f"<b>{escape(run.new_version or 'unnamed')}</b> against the recorded "
        f"<b>{escape(recorded)}</b>, {len(run.runs)} cases{_repeats(run)}, "
        f"gate: <b class='{verdict}'>{verdict.upper()}</b></p>",
        "<h2>Gate</h2><table><tr><th>level</th><th>line</th><th>value</th><th>limit</th>"
        "<th>result</th></tr>",
    ]
    for line in run.gate.lines:
        result = ("fail" if line.fails else "warn") if line.crossed else "pass"
        if line.value is None:
            result = "n/a"
        parts.append(
            f"<tr><td>{line.level}</td><td>{escape(line.name)}</td><td>{line.shown}</td>"
            f"<td>{line.limit:.4g}</td><td class='{result}'>{result}</td></tr>"
        )
    parts.append("</table>")
    parts += _changes(run.changes)
    parts += _totals(run)
    with_diffs = sorted(
        (r for r in run.runs if r.check.diffs),
        key=lambda r: (-case_score(r.check.diffs), r.case.case_id),
    )
    parts.append(f"<h2>Cases with differences ({len(with_diffs)})</h2>")
    if not with_diffs:
        if verdict == "pass":
            parts.append("<p>None: every case replayed as recorded.</p>")
        else:
            parts.append("<p>No case has a difference of its own; the gate's run-wide lines "
                         "above say what it warns or fails on.</p>")  # fmt: skip
    for case_run in with_diffs:
        parts += _case(case_run)
    parts.append("</body></html>")
    return "\n".join(parts)


def _repeats(run: ReplayRun) -> str:
    repeats = max((r.check.repeats or 1 for r in run.runs), default=1)
    if repeats < 2:
        return ""
    flaky = sum(1 for r in run.runs if r.check.flaky)
    return f", each replayed {repeats} times ({flaky} flaky)"


def _changes(changes: Any) -> list[str]:
    if changes is None:
        return []
    prev = changes.previous
    parts = [f"<h2>Since the previous replay</h2><p>Previous: <code>{escape(prev.run_id)}</code>"
             f" of {escape(prev.baseline_version)}, agent {escape(prev.new_version or 'unnamed')},"
             f" gate {escape(prev.gate.upper())}.</p><ul>"]  # fmt: skip
    parts.append(f"<li>{len(changes.new_cases)} case(s) with differences that had none: "
                 f"{escape(', '.join(changes.new_cases[:20]) or '—')}</li>")  # fmt: skip
    parts.append(f"<li>{len(changes.fixed_cases)} case(s) fixed: "
                 f"{escape(', '.join(changes.fixed_cases[:20]) or '—')}</li>")  # fmt: skip
    delta = ", ".join(f"{t} {d:+d}" for t, d in changes.type_delta.items()) or "none"
    parts.append(f"<li>rows by type, change: {escape(delta)}</li></ul>")
    return parts


def _totals(run: ReplayRun) -> list[str]:
    diffs = [d for r in run.runs for d in r.check.diffs]
    if not diffs:
        return []
    by_type = Counter(d.diff_type for d in diffs)
    by_tool = Counter((d.tool or "(whole case)", d.diff_type) for d in diffs)
    parts = ["<h2>Differences by type</h2><table><tr><th>type</th><th>rows</th>"
             "<th>cases</th></tr>"]  # fmt: skip
    for kind, n in by_type.most_common():
        cases = len({d.case_id for d in diffs if d.diff_type == kind})
        parts.append(f"<tr><td>{escape(kind)}</td><td>{n}</td><td>{cases}</td></tr>")
    parts.append("</table><h2>Differences by tool</h2><table><tr><th>tool</th><th>type</th>"
                 "<th>rows</th></tr>")  # fmt: skip
    for (tool, kind), n in by_tool.most_common(50):
        parts.append(f"<tr><td>{escape(tool)}</td><td>{escape(kind)}</td><td>{n}</td></tr>")
    parts.append("</table>")
    tolerated = sum((Counter(r.check.tolerated) for r in run.runs), Counter())
    if tolerated:
        shown = ", ".join(f"{k} {n}" for k, n in tolerated.most_common())
        parts.append(f"<p>Calls equal under a tolerance: {escape(shown)}.</p>")
    return parts


def _case(case_run: CaseRun) -> list[str]:
    case, check = case_run.case, case_run.check
    case_id = escape(case.case_id)
    text = case.user_input or ""
    text = text if len(text) <= _INPUT_CHARS else text[:_INPUT_CHARS] + "..."
    repro = ""
    if check.repeats and check.repeats > 1:
        flaky = " <b class='warn'>flaky</b>" if check.flaky else ""
        repro = f", as recorded in {check.reproduced}/{check.repeats} replays{flaky}"
    parts = [
        f"<h3 id='{case_id}'>{case_id} <small>score {case_score(check.diffs)}{repro}</small></h3>",
        f"<p>input: <q>{escape(text) or '—'}</q>; intent: "
        f"<b>{escape(case.intent.name or '—')}</b>; funnels: "
        f"{escape(', '.join(case.funnels or []) or '—')}; trace: "
        f"<code>{escape(case.trace_id or '—')}</code>; recorded with agent "
        f"{escape(case.agent.agent_version or 'unknown')}</p>",
        "<table><tr><th>severity</th><th>type</th><th>what</th><th>where</th><th>tolerances"
        "</th><th>seen</th><th>recorded</th><th>replayed</th></tr>",
    ]
    for diff in check.diffs:
        seen = f"{diff.seen}/{diff.repeats}" if diff.repeats else "—"
        parts.append(
            f"<tr class='{diff.severity}'><td>{diff.severity}</td>"
            f"<td>{escape(diff.diff_type)}</td><td>{escape(diff.detail)}</td>"
            f"<td>{escape(diff.position or diff.tool or '—')}</td>"
            f"<td>{escape(', '.join(diff.tolerances) or '—')}</td><td>{seen}</td>"
            f"<td>{_pre(diff.recorded)}</td><td>{_pre(diff.replayed)}</td></tr>"
        )
    parts.append("</table>")
    return parts
