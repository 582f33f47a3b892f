"""Serving the review page: bound to 127.0.0.1 only, on a port of the caller's choice (0: any
free one), with a fresh random token that every URL must carry."""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable

import uvicorn

from golden_distill.flows.review_app.app import build_app
from golden_distill.flows.review_app.source import ReviewSource

#: The only address the page listens on: reviewers open it on their own machine.
HOST = "127.0.0.1"


def serve(source: ReviewSource, port: int, announce: Callable[[str], None]) -> None:
    """Serve ``source`` until interrupted; ``announce`` gets the URL (with its token) once the
    port is bound, so a caller can open it."""
    token = secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)  # connections made once the URL is out wait here until the server runs
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        build_app(source, token), log_level="warning", access_log=False, lifespan="off"
    )
    announce(f"http://{HOST}:{bound}/?token={token}")
    uvicorn.Server(config).run(sockets=[sock])
