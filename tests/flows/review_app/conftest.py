"""The review page under test: `golden review serve` as a real process, and a real headless
Chromium (Debian's `chromium`, installed by tests/services/chromium.sh) driven by Playwright.
A missing browser fails the test: the page is tested in a browser or not at all."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

GOLDEN = Path(sys.executable).with_name("golden")
#: Flags that keep the browser headless, local and quiet (no sandbox: tests may run as root).
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def chromium_path() -> str:
    """GOLDEN_TEST_CHROMIUM, else Debian's /usr/bin/chromium; fails the test when absent."""
    path = os.environ.get("GOLDEN_TEST_CHROMIUM") or "/usr/bin/chromium"
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"no Chromium at {path}: install Debian's `chromium` (tests/services/chromium.sh "
            "does it for `make test`) or set GOLDEN_TEST_CHROMIUM"
        )
    return path


@pytest.fixture
def browser_page() -> Iterator[object]:
    """A fresh page of a headless Chromium (Playwright's sync API)."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(15_000)
            yield page
        finally:
            browser.close()


@contextmanager
def serving(store: Path, ref: str, reviewer: str = "ana") -> Iterator[str]:
    """`golden review serve REF` in its own process on a free port; yields the printed URL
    (with its token) and stops the process (by its pid) afterwards."""
    args = [str(GOLDEN), "review", "serve", ref, "--store", str(store), "--port", "0",
            "--reviewer", reviewer]  # fmt: skip
    process = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    found: list[str] = []
    seen: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if line.startswith("open http://"):
                found.append(line.split(" ", 1)[1].strip())
                ready.set()
        ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        ready.wait(60)
        assert found, f"golden review serve printed no URL: {''.join(seen)}"
        yield found[0]
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture
def serve_page() -> Callable[..., object]:
    """``serve_page(store, ref)``: a context manager yielding the review page's URL."""
    return serving
