"""The review page's routes: the queue, one case, and a decision on it.

Every request must carry the run's token (``?token=``, compared in constant time) or gets 403;
only ``127.0.0.1``/``localhost`` hosts are answered (a page elsewhere cannot rebind a name to
this server). Responses forbid framing, referrers and any script or style but the page's own
(a fresh nonce per response). A decision is a POST that redirects to the next case (post,
redirect, get), so reloading never records it twice.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from golden_distill.filters.review_queue import QueueFilter, facets, neighbours, select
from golden_distill.flows.review_app import pages
from golden_distill.flows.review_app.source import ReviewSource

#: Largest decision form accepted (a corrected actions list is small JSON).
MAX_FORM_BYTES = 256 * 1024


class TokenGate:
    """ASGI middleware: 403 for any HTTP request without the right ``token`` parameter."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get(
                "token", ""
            )
            if not secrets.compare_digest(given.encode(), self.token.encode()):
                response = Response("forbidden: open the URL `golden review serve` printed\n",
                                    status_code=403, media_type="text/plain")  # fmt: skip
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _html(text: str, nonce: str, status: int = 200) -> HTMLResponse:
    policy = (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )
    return HTMLResponse(
        text,
        status_code=status,
        headers={
            "Content-Security-Policy": policy,
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
        },
    )


def _filters(request: Request) -> QueueFilter:
    return QueueFilter.from_params(dict(request.query_params))


def build_app(source: ReviewSource, token: str) -> Starlette:
    """The review app over ``source``; every request needs ``token``."""

    def queue(request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        wanted = _filters(request)
        everything = source.queue()
        shown = select(everything, wanted)
        try:
            page = max(0, int(request.query_params.get("page") or 0))
        except ValueError:
            page = 0
        html = pages.queue_page(
            source.ref, source.reviewer, token, shown, everything.height, facets(everything),
            wanted.params(), page, nonce,
        )  # fmt: skip
        return _html(html, nonce)

    def case(request: Request, error: str | None = None, status: int = 200) -> Response:
        nonce = secrets.token_urlsafe(16)
        case_id = request.path_params["case_id"]
        view = source.case(case_id)
        if view is None:
            text = f"{source.ref} has no case {case_id}"
            return _html(pages.message_page("no such case", text, nonce), nonce, 404)
        wanted = _filters(request)
        shown = select(source.queue(), wanted)
        before, after, position = neighbours(shown, case_id)
        logged = source.decisions().get(case_id)
        done = request.query_params.get("recorded")
        message = None
        if done:
            previous = source.decisions().get(done) or {}
            message = f"recorded: {previous.get('decision')} {done}; the next run applies it"
        html = pages.case_page(
            source.ref, source.reviewer, token, view, wanted.params(),
            (before, after, position, shown.height), logged, message, error, nonce,
        )  # fmt: skip
        return _html(html, nonce, status)

    async def decide(request: Request) -> Response:
        case_id = request.path_params["case_id"]
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return Response("form too large\n", status_code=413, media_type="text/plain")
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        # reading the queue and appending to the log block: off the event loop
        return await run_in_threadpool(record, request, case_id, form)

    def record(request: Request, case_id: str, form: dict[str, str]) -> Response:
        wanted = _filters(request)
        # the next case is chosen before the decision: it may take this one out of the queue
        _, after, _ = neighbours(select(source.queue(), wanted), case_id)
        try:
            source.decide(case_id, form)
        except ValueError as exc:
            return case(request, error=str(exc), status=400)
        params: dict[str, Any] = {"token": token, **wanted.params(), "recorded": case_id}
        target = pages.case_path(after or case_id)
        return RedirectResponse(f"{target}?{urlencode(params)}", status_code=303)

    routes = [
        Route("/", queue, methods=["GET"]),
        Route("/case/{case_id}", case, methods=["GET"]),
        Route("/case/{case_id}/decide", decide, methods=["POST"]),
    ]
    middleware = [
        Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"]),
        Middleware(TokenGate, token=token),
    ]
    return Starlette(routes=routes, middleware=middleware)
