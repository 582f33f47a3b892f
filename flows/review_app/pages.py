"""Server-rendered HTML of the review page: the queue and one case.

Every value that comes from a case, the log or the request goes through ``h`` (HTML escaping,
quotes included) or ``url`` (percent-encoding), so a transcript holding markup is shown as
text, never run. The only script is the inline keyboard handler, allowed by a per-response
nonce in the Content-Security-Policy (``app.py``); nothing is loaded from anywhere else.
"""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote, urlencode

import polars as pl

#: Rows of the queue shown per page.
PAGE_ROWS = 100
#: Characters of the request shown in the queue.
REQUEST_CHARS = 90

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 1.5em 3em;color:#1d1d1f}
header{padding:.6em 0;border-bottom:1px solid #ccc;margin-bottom:1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:3px 6px;
vertical-align:top;text-align:left}th{background:#f4f4f4}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:12.5px;max-height:24em;
overflow:auto}
.turn{border-left:3px solid #bbb;padding:2px 8px;margin:6px 0}.role{font-weight:600}
.decide form{display:inline-block;margin:0 1.5em .5em 0;vertical-align:top}
.msg{padding:.4em .8em;background:#eef6ee;border:1px solid #9c9}.err{background:#fbeaea;
border-color:#d99}.keys{color:#666;font-size:12px}kbd{border:1px solid #aaa;border-radius:3px;
padding:0 3px}nav a{margin-right:1em}tr.current{background:#fff7d6}
"""

KEYS_SCRIPT = """
(function () {
  function el(id) { return document.getElementById(id); }
  function go(id) { var a = el(id); if (a) { window.location.href = a.href; } }
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    var t = e.target;
    if (t && t.closest && t.closest('input, textarea, select')) {
      if (e.key === 'Escape') { t.blur(); }
      return;
    }
    var field = {r: 'reject-reason', e: 'correct-state'}[e.key];
    if (e.key === 'c' && el('confirm-form')) {
      e.preventDefault(); el('confirm-form').requestSubmit();
    }
    else if (field && el(field)) { e.preventDefault(); el(field).focus(); }
    else if (e.key === 'j') { e.preventDefault(); go('next'); }
    else if (e.key === 'k') { e.preventDefault(); go('prev'); }
    else if (e.key === 'q') { e.preventDefault(); go('queue'); }
  });
})();
"""


def h(value: Any) -> str:
    """``value`` as escaped HTML text (None: empty)."""
    return "" if value is None else escape(str(value), quote=True)


def url(path: str, token: str, params: dict[str, str] | None = None) -> str:
    """A link within the app: the token and the queue's filters ride along."""
    return h(f"{path}?{urlencode({'token': token, **(params or {})})}")


def case_path(case_id: str) -> str:
    return "/case/" + quote(case_id, safe="")


def _page(title: str, body: str, nonce: str) -> str:
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='referrer' content='no-referrer'>"
        f"<title>{h(title)}</title><style nonce='{h(nonce)}'>{STYLE}</style></head><body>"
        f"{body}<script nonce='{h(nonce)}'>{KEYS_SCRIPT}</script></body></html>"
    )


def _header(ref: str, reviewer: str, extra: str = "") -> str:
    return (
        f"<header><strong>Review {h(ref)}</strong> · reviewing as <b id='reviewer'>"
        f"{h(reviewer)}</b> {extra}<div class='keys'><kbd>c</kbd> confirm · <kbd>r</kbd> "
        "reject (type a reason, Enter) · <kbd>e</kbd> correct the expected outcome · "
        "<kbd>j</kbd>/<kbd>k</kbd> next/previous case · <kbd>q</kbd> queue · <kbd>Esc</kbd> "
        "leave a field</div></header>"
    )


def _select(name: str, values: list[str], chosen: str | None) -> str:
    options = "<option value=''>any</option>" + "".join(
        f"<option value='{h(v)}'{' selected' if v == chosen else ''}>{h(v)}</option>"
        for v in values
    )
    return f"<label>{h(name)} <select name='{h(name)}'>{options}</select></label> "


def queue_page(
    ref: str,
    reviewer: str,
    token: str,
    shown: pl.DataFrame,
    total: int,
    options: dict[str, list[str]],
    filters: dict[str, str],
    page: int,
    nonce: str,
) -> str:
    """The queue: filters, then up to ``PAGE_ROWS`` cases of ``shown`` from ``page``."""
    selects = "".join(
        _select(name, options[name], filters.get(name))
        for name in ("funnel", "split", "trust", "task", "why", "decision")
    )
    cluster = (
        f"<label>cluster <input name='cluster' size='14' value='{h(filters.get('cluster'))}'>"
        "</label> "
    )
    form = (
        f"<form id='filters' method='get' action='/'><input type='hidden' name='token' "
        f"value='{h(token)}'>{selects}{cluster}<button>Filter</button></form>"
    )
    rows = shown.slice(page * PAGE_ROWS, PAGE_ROWS)
    head = ("case", "why review", "funnels", "split", "trust", "task", "cluster", "reward",
            "final state", "request", "decision")  # fmt: skip
    lines = []
    for r in rows.iter_rows(named=True):
        request = r["request"] or ""
        if len(request) > REQUEST_CHARS:
            request = request[:REQUEST_CHARS] + "…"
        decided = f"{r['decision']} ({r['reviewer']})" if r["decision"] else ""
        cluster_cell = f"{r['cluster_id'] or ''} ({r['cluster_size']})" if r["cluster_id"] else ""
        lines.append(
            f"<tr data-case='{h(r['case_id'])}'><td><a href='"
            f"{url(case_path(r['case_id']), token, filters)}'>{h(r['case_id'])}</a></td>"
            f"<td>{h(r['why_review'] or '-')}</td><td>{h(', '.join(r['funnels'] or []))}</td>"
            f"<td>{h(r['split'])}</td><td>{h(r['trust'])}</td><td>{h(r['task'])}</td>"
            f"<td>{h(cluster_cell)}</td><td>{h(r['reward'])}</td><td>{h(r['final_state'])}</td>"
            f"<td>{h(request)}</td><td class='decision'>{h(decided)}</td></tr>"
        )
    first = rows.get_column("case_id")[0] if rows.height else None
    start = (
        f"<a id='next' href='{url(case_path(first), token, filters)}'>review from the first "
        "case shown (j)</a>"
        if first
        else ""
    )
    pages = []
    if page > 0:
        pages.append(f"<a href='{url('/', token, {**filters, 'page': str(page - 1)})}'>← "
                     "previous page</a>")  # fmt: skip
    if (page + 1) * PAGE_ROWS < shown.height:
        pages.append(f"<a href='{url('/', token, {**filters, 'page': str(page + 1)})}'>next "
                     "page →</a>")  # fmt: skip
    body = (
        _header(ref, reviewer, f"· <span id='counts'>{shown.height} of {total} cases</span>")
        + form
        + f"<p>{start}</p><table id='queue'><tr>"
        + "".join(f"<th>{h(c)}</th>" for c in head)
        + "</tr>"
        + "".join(lines)
        + f"</table><nav>{' '.join(pages)}</nav>"
    )
    return _page(f"review {ref}", body, nonce)


def _why(view: dict[str, Any]) -> str:
    why = view["why"]
    reasons = "".join(
        f"<li><b>{h(funnel)}</b>: {h(reason)}</li>" for funnel, reason in why["reasons"].items()
    )
    return (
        "<section id='why'><h2>Why it is in</h2><ul>"
        f"<li>funnels: {h(', '.join(why['funnels']) or '-')}</li>{reasons}"
        f"<li>value score: {h(why['value_score'])}</li><li>split: {h(why['split'])}</li>"
        f"<li>task: {h(why['task'] or '-')}</li>"
        f"<li>trust: <b>{h(why['trust'])}</b>: {h(why['trust_reason'])}</li>"
        f"<li>to review because: {h(why['why_review'] or 'nothing new')}</li></ul></section>"
    )


def _decide(view: dict[str, Any], token: str, filters: dict[str, str]) -> str:
    action = url(case_path(view["case_id"]) + "/decide", token, filters)
    expected = view["expected"] or {}
    state = expected.get("final_state") or view["outcome"].get("final_state")
    return (
        "<section class='decide' id='decide'><h2>Decide</h2>"
        f"<form id='confirm-form' method='post' action='{action}'>"
        "<input type='hidden' name='decision' value='confirm'>"
        "<button>Confirm (c)</button></form>"
        f"<form id='reject-form' method='post' action='{action}'>"
        "<input type='hidden' name='decision' value='reject'>"
        "<input id='reject-reason' name='reason' size='40' required "
        "placeholder='why reject (required)'> <button>Reject (r)</button></form>"
        f"<form id='correct-form' method='post' action='{action}'>"
        "<input type='hidden' name='decision' value='correct'>"
        "<label>expected final state <input id='correct-state' name='corrected_final_state' "
        f"size='30' value='{h(state)}'></label><br><textarea id='correct-actions' "
        "name='corrected_actions' rows='2' cols='40' placeholder='expected actions, JSON "
        "(optional)'></textarea><br><button>Correct (e)</button></form></section>"
    )


def _transcript(view: dict[str, Any]) -> str:
    turns = []
    for turn in view["transcript"]:
        calls = "".join(
            f"<div>→ <b>{h(c['name'])}</b><pre>{h(c['arguments'])}</pre></div>"
            for c in turn["tool_calls"]
        )
        turns.append(f"<div class='turn'><span class='role'>{h(turn['role'])}</span>"
                     f"<pre>{h(turn['text'])}</pre>{calls}</div>")  # fmt: skip
    return f"<section id='transcript'><h2>Transcript</h2>{''.join(turns)}</section>"


def _steps(view: dict[str, Any]) -> str:
    head = ("seq", "kind", "tool", "#", "status", "system", "writes", "arguments", "response")
    rows = "".join(
        f"<tr><td>{h(s['seq'])}</td><td>{h(s['kind'])}</td><td>{h(s['name'])}</td>"
        f"<td>{h(s['occurrence'])}</td><td>{h(s['status'])}</td><td>{h(s['system'])}</td>"
        f"<td>{'yes' if s['is_mutating'] else ''}</td><td><pre>{h(s['arguments'])}</pre></td>"
        f"<td><pre>{h(s['response'])}</pre>"
        + (f"<div>error: {h(s['error'])}</div>" if s["error"] else "")
        + "</td></tr>"
        for s in view["steps"]
    )
    return (
        "<section id='steps'><h2>Tool calls</h2><table><tr>"
        + "".join(f"<th>{h(c)}</th>" for c in head)
        + f"</tr>{rows}</table></section>"
    )


def _outcomes(view: dict[str, Any]) -> str:
    outcome = "".join(f"<li>{h(k)}: {h(v)}</li>" for k, v in view["outcome"].items())
    expected = view["expected"]
    if expected:
        actions = "".join(
            f"<li>{h(a.get('name'))}<pre>{h(a.get('arguments'))}</pre></li>"
            for a in expected.get("actions") or []
        )
        facts = "".join(f"<li>{h(f)}</li>" for f in expected.get("answer_facts") or [])
        shown = (
            f"<ul><li>final state: <b id='expected-state'>{h(expected.get('final_state'))}</b>"
            f"</li><li>source: {h(expected.get('source'))}</li>"
            + (f"<li>actions<ul>{actions}</ul></li>" if actions else "<li>actions: none</li>")
            + (f"<li>answer facts<ul>{facts}</ul></li>" if facts else "")
            + "</ul>"
        )
    else:
        shown = "<p id='expected-state'>none recorded: the recorded outcome is the reference</p>"
    return (
        f"<section id='outcome'><h2>Recorded outcome</h2><ul>{outcome}</ul></section>"
        f"<section id='expected'><h2>Expected outcome</h2>{shown}</section>"
    )


def _cluster(view: dict[str, Any], token: str, filters: dict[str, str]) -> str:
    cluster = view["cluster"]
    rows = []
    for m in cluster["members"]:
        name = h(m["case_id"])
        if m["in_version"] and m["case_id"] != view["case_id"]:
            name = f"<a href='{url(case_path(m['case_id']), token, filters)}'>{name}</a>"
        distance = m["distance_to_representative"]
        rows.append(
            f"<tr><td>{name}</td><td>{h(m['role'])}</td><td>{h(m['merged_by'])}</td>"
            f"<td>{h('' if distance is None else f'{distance:.3f}')}</td>"
            f"<td>{'published here' if m['in_version'] else 'not published'}</td></tr>"
        )
    if not rows:
        return (
            f"<section id='cluster'><h2>Cluster {h(cluster['cluster_id'])}</h2><p>the "
            "version's clusters file lists no member of it</p></section>"
        )
    queue = url("/", token, {"cluster": cluster["cluster_id"]})
    return (
        f"<section id='cluster'><h2>Cluster {h(cluster['cluster_id'])} ({h(cluster['size'])} "
        f"runs)</h2><p><a id='cluster-queue' href='{queue}'>its cases in the queue</a></p>"
        "<table><tr><th>case</th><th>role</th><th>merged by</th><th>distance</th>"
        f"<th>in this version</th></tr>{''.join(rows)}</table></section>"
    )


def case_page(
    ref: str,
    reviewer: str,
    token: str,
    view: dict[str, Any],
    filters: dict[str, str],
    around: tuple[str | None, str | None, int, int],
    logged: dict[str, Any] | None,
    message: str | None,
    error: str | None,
    nonce: str,
) -> str:
    """One case: navigation, the logged decision, decide forms, why, transcript, tool calls,
    outcomes and cluster. ``around``: (previous id, next id, position, queue length)."""
    prev_id, next_id, position, total = around
    nav = [f"<a id='queue' href='{url('/', token, filters)}'>queue (q)</a>"]
    if prev_id:
        nav.append(f"<a id='prev' href='{url(case_path(prev_id), token, filters)}'>← previous "
                   "(k)</a>")  # fmt: skip
    if next_id:
        nav.append(f"<a id='next' href='{url(case_path(next_id), token, filters)}'>next (j) "
                   "→</a>")  # fmt: skip
    where = f"case {position} of {total} in the queue" if position else "not in this queue"
    notes = ""
    if message:
        notes += f"<p class='msg' id='message'>{h(message)}</p>"
    if error:
        notes += f"<p class='msg err' id='error'>{h(error)}</p>"
    state = "no decision yet"
    if logged:
        state = f"{logged.get('decision')} by {logged.get('reviewer')} at {logged.get('at')}"
        if logged.get("reason"):
            state += f": {logged['reason']}"
    body = (
        _header(ref, reviewer)
        + f"<nav>{''.join(nav)} <span>{h(where)}</span></nav>{notes}"
        + f"<h1 id='case-id'>{h(view['case_id'])}</h1>"
        + f"<p>logged: <span id='logged'>{h(state)}</span></p>"
        + _decide(view, token, filters)
        + _why(view)
        + f"<section id='request'><h2>Request</h2><pre>{h(view['request'])}</pre></section>"
        + _transcript(view)
        + _steps(view)
        + _outcomes(view)
        + _cluster(view, token, filters)
    )
    return _page(f"{view['case_id']} · review {ref}", body, nonce)


def message_page(title: str, text: str, nonce: str) -> str:
    return _page(title, f"<h1>{h(title)}</h1><p>{h(text)}</p>", nonce)
