"""``report.html`` of a replay: one self-contained page (inline CSS, no scripts, no fetches).

The gate's verdict and lines first, then the cases with differences sorted by severity score
(high 3, medium 2, low 1 per diff), each difference as a row with the recorded and the replayed
side next to each other. Everything shown comes from the (redacted) golden set and the agent's
own calls; every value is HTML-escaped.
"""

from __future__ import annotations

from html import escape

from golden_distill.datasets.replay.diffs import case_score
from golden_distill.datasets.replay.runner import ReplayRun

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;text-align:left}
pre{white-space:pre-wrap;word-break:break-all;margin:0;font-size:12px}
.high{background:#fdd}.medium{background:#ffe9c6}.low{background:#eef}
.pass{color:#070}.warn{color:#a60}.fail{color:#b00}
"""


def _pre(text: str | None) -> str:
    return "<pre>" + escape(text if text is not None else "—") + "</pre>"


def render_report(run: ReplayRun) -> str:
    verdict = run.gate.verdict
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>Replay {escape(run.run_id)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Replay of {escape(run.baseline_version)}</h1>",
        f"<p>Run <code>{escape(run.run_id)}</code>, agent version "
        f"<b>{escape(run.new_version or 'unnamed')}</b>, {len(run.runs)} cases, "
        f"gate: <b class='{verdict}'>{verdict.upper()}</b></p>",
        "<h2>Gate</h2><table><tr><th>level</th><th>line</th><th>value</th><th>limit</th>"
        "<th>result</th></tr>",
    ]
    for line in run.gate.lines:
        result = ("fail" if line.fails else "warn") if line.crossed else "pass"
        parts.append(
            f"<tr><td>{line.level}</td><td>{escape(line.name)}</td><td>{line.value:.4g}</td>"
            f"<td>{line.limit:.4g}</td><td class='{result}'>{result}</td></tr>"
        )
    parts.append("</table>")
    with_diffs = sorted(
        (r for r in run.runs if r.check.diffs),
        key=lambda r: (-case_score(r.check.diffs), r.case.case_id),
    )
    parts.append(f"<h2>Cases with differences ({len(with_diffs)})</h2>")
    if not with_diffs:
        parts.append("<p>None: every case replayed as recorded.</p>")
    for case_run in with_diffs:
        case_id = escape(case_run.case.case_id)
        parts.append(
            f"<h3 id='{case_id}'>{case_id} <small>score {case_score(case_run.check.diffs)}"
            "</small></h3><table><tr><th>severity</th><th>type</th><th>what</th>"
            "<th>recorded</th><th>replayed</th></tr>"
        )
        for diff in case_run.check.diffs:
            parts.append(
                f"<tr class='{diff.severity}'><td>{diff.severity}</td>"
                f"<td>{escape(diff.diff_type)}</td><td>{escape(diff.detail)}</td>"
                f"<td>{_pre(diff.recorded)}</td><td>{_pre(diff.replayed)}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)
