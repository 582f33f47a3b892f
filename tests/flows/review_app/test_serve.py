"""`golden review serve` over a small published set: only the token opens it, only local host
names are answered, and a transcript holding markup is shown as text in a real browser, never
run; the case page shows why the case is in and its cluster's members."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import polars as pl
import pytest

from golden_distill.datasets.case import Context, Expected
from golden_distill.datasets.store.publish import publish_version
from golden_distill.filters.review import log_path

from .conftest import GOLDEN

pytestmark = pytest.mark.slow  # a real server process and a real browser

FACTORY = Path(__file__).parents[2] / "datasets" / "store" / "factory.py"
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">\'"'


def _factory():
    spec = importlib.util.spec_from_file_location("golden_review_page_factory", FACTORY)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, list[str]]:
    """A set of four cases: the first one's request and transcript hold markup; cases 0 and 1
    share a cluster with a third run that was not published."""
    factory = _factory()
    cases = [factory.build_case(i) for i in range(4)]
    hostile = cases[0]
    hostile.user_input = HOSTILE
    hostile.context = Context(messages=json.dumps([
        {"role": "user", "content": HOSTILE},
        {"role": "assistant", "content": f"answer {HOSTILE}"},
    ]))  # fmt: skip
    hostile.expected = Expected(final_state="DONE", source="native")
    hostile.trust = "oracle"
    for case in cases:
        case.cluster_id, case.cluster_size = ("k-0", 3) if case in cases[:2] else (case.case_id, 1)
    clusters = pl.DataFrame(
        {
            "cluster_id": ["k-0", "k-0", "k-0", cases[2].case_id, cases[3].case_id],
            "case_id": [cases[0].case_id, cases[1].case_id, "c_not_published",
                        cases[2].case_id, cases[3].case_id],
            "exact_hash": ["h0", "h1", "h1", "h2", "h3"],
            "role": ["representative", "representative", "member", "representative",
                     "representative"],
            "merged_by": [None, None, "exact", None, None],
            "distance_to_representative": [0.0, 0.0, 0.0, 0.0, 0.0],
            "rank": [0, 1, 2, 0, 0],
            "cluster_size": [3, 3, 3, 1, 1],
        },
        schema_overrides={"rank": pl.Int32, "cluster_size": pl.Int32},
    )  # fmt: skip
    root = tmp_path / "store"
    publish_version(str(root), "pg", cases=factory.cases_table(cases), clusters=clusters.to_arrow())
    return root, [c.case_id for c in cases]


def _get(url: str, host: str | None = None) -> int:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_only_the_token_opens_the_page_and_only_on_127_0_0_1(store, serve_page):
    root, ids = store
    with serve_page(root, "pg@latest") as url:
        parts = urlsplit(url)
        assert parts.hostname == "127.0.0.1"
        base = f"{parts.scheme}://{parts.netloc}"
        assert _get(url) == 200
        assert _get(f"{base}/") == 403
        assert _get(f"{base}/?token=wrong") == 403
        assert _get(f"{base}/case/x/decide?token=") == 403
        assert _get(url, host="evil.example") == 400  # a rebound name is not answered
        assert _get(url.replace("/?", "/case/no-such-case?")) == 404

        # a rejection without a reason is refused with the sheet's message; nothing is logged
        decide = url.replace("/?", f"/case/{ids[0]}/decide?")
        refused = urllib.request.Request(decide, data=b"decision=reject&reason=+", method="POST")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(refused, timeout=10)
        assert caught.value.code == 400
        assert "a rejection needs a reason" in caught.value.read().decode()
        assert not (root / log_path("pg")).exists()


def test_a_taken_port_is_a_clean_error(store):
    root, _ = store
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        result = subprocess.run(
            [str(GOLDEN), "review", "serve", "pg@latest", "--store", str(root), "--port",
             str(port), "--reviewer", "ana"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    finally:
        taken.close()
    assert result.returncode == 2, result.stderr
    assert f"error: cannot serve on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_markup_in_a_transcript_is_shown_as_text_and_never_runs(store, serve_page, browser_page):
    root, ids = store
    page = browser_page
    with serve_page(root, "pg@latest") as url:
        page.goto(url)
        assert page.locator("#queue tr[data-case]").count() == 4
        page.keyboard.press("j")  # the queue's first case (case id order)
        page.wait_for_url("**/case/**")
        assert page.inner_text("#case-id") == min(ids)
        page.keyboard.press("q")
        page.wait_for_selector("#queue")
        page.click(f"#queue a:has-text('{ids[0]}')")  # the case whose transcript holds markup
        assert page.inner_text("#case-id") == ids[0]
        assert page.inner_text("#request pre") == HOSTILE
        assert HOSTILE in page.inner_text("#transcript")
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#transcript script, #transcript img, #request img").count() == 0
        why = page.inner_text("#why")
        assert "trust: oracle" in why and "reached its recorded expected final state" in why
        members = page.locator("#cluster tr").all_inner_texts()
        assert any(ids[1] in m and "published here" in m for m in members)
        assert any("c_not_published" in m and "not published" in m for m in members)
        page.click(f"#cluster a:has-text('{ids[1]}')")
        assert page.inner_text("#case-id") == ids[1]
        page.click("#cluster-queue")  # the queue filtered to this cluster: its two published
        assert page.inner_text("#counts") == "2 of 4 cases"
        assert page.input_value("input[name=cluster]") == "k-0"
