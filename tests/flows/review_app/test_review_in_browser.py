"""A reviewer works through a version on the review page in a real headless Chromium: filters
the queue, confirms one case (c), rejects one with a reason (r), corrects one's expected
outcome (e), moving with j/k. The log holds exactly the lines `golden review import` would
write for the same decisions, and the next `golden run` on the same store honours all three."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from golden_distill.datasets.reader import open_set
from golden_distill.filters.review import check_row, log_lines, log_path
from golden_distill.flows.cli import app

pytestmark = pytest.mark.slow

CORRECTED = "REVIEWED_IN_THE_BROWSER"
REASON = "the agent refunded without checking the order <b>twice</b>"


def _run(config: Path, source: Path, store: Path) -> str:
    args = ["run", "--local", "--config", str(config), "--source", str(source), "--format",
            "native", "--store", str(store), "--set", "web"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    found = re.search(r"published version: (\S+)", result.output)
    assert found, result.output
    return found.group(1)


def _rows(store: Path, version: str) -> dict[str, dict]:
    table = open_set(str(store), f"web@{version}").read_table()
    return {r["case_id"]: r for r in table.to_pylist()}


def _decided(page, case_id: str) -> None:
    """Wait for the redirect that follows a recorded decision on ``case_id``."""
    page.wait_for_url(re.compile(rf"recorded={case_id}"))
    assert page.inner_text("#message").startswith("recorded: ")


def test_three_decisions_on_the_page_are_honoured_by_the_next_run(
    pseudonym_key, corpus, tmp_path, serve_page, browser_page
):
    generated, truth = corpus
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "funnels": {"redacted": {"opt_out_tenants": [truth.opt_out_tenant]}},
        "run": {"work_dir": str(tmp_path / "work")},
    }))  # fmt: skip
    store = tmp_path / "store"
    v1 = _run(config, generated, store)
    first = _rows(store, v1)
    funnels = Counter(f for r in first.values() for f in r["funnels"] if f != "redacted")
    funnel, count = funnels.most_common(1)[0]
    assert count >= 4

    # the page reads the published version only: the work folder (raw candidates, quarantine)
    # is moved out of reach while it serves
    work, aside = tmp_path / "work", tmp_path / "work-aside"
    work.rename(aside)
    page = browser_page
    with serve_page(store, f"web@{v1}") as url:
        page.goto(url)
        assert page.inner_text("#counts") == f"{len(first)} of {len(first)} cases"
        page.select_option("select[name=funnel]", funnel)
        page.click("#filters button")
        assert page.inner_text("#counts") == f"{count} of {len(first)} cases"

        page.keyboard.press("j")  # the first case of the filtered queue
        page.wait_for_url("**/case/**")
        confirmed = page.inner_text("#case-id")
        assert funnel in page.inner_text("#why")
        page.keyboard.press("c")
        _decided(page, confirmed)

        rejected = page.inner_text("#case-id")  # the redirect went on to the next case
        assert rejected != confirmed
        page.keyboard.press("r")
        assert page.evaluate("document.activeElement.id") == "reject-reason"
        page.keyboard.type(REASON)
        page.keyboard.press("Enter")
        _decided(page, rejected)

        corrected = page.inner_text("#case-id")
        page.keyboard.press("e")
        assert page.evaluate("document.activeElement.id") == "correct-state"
        page.keyboard.press("Control+A")
        page.keyboard.type(CORRECTED)
        page.keyboard.press("Enter")
        _decided(page, corrected)

        page.keyboard.press("k")  # back to the corrected case: the page shows the log's word
        page.wait_for_url(re.compile(r"/case/"))
        assert page.inner_text("#case-id") == corrected
        assert page.inner_text("#logged").startswith("correct by ana at ")
        page.keyboard.press("q")
        page.select_option("select[name=decision]", "decided")
        page.click("#filters button")
        decided = dict(
            zip(
                page.locator("#queue tr[data-case]").evaluate_all(
                    "rows => rows.map(r => r.dataset.case)"
                ),
                page.locator("#queue td.decision").all_inner_texts(),
                strict=True,
            )
        )
        assert decided == {confirmed: "confirm (ana)", rejected: "reject (ana)",
                           corrected: "correct (ana)"}  # fmt: skip

    assert not work.exists()
    aside.rename(work)

    # the log holds what `golden review import` writes for the same three sheet rows
    log = (store / log_path("web")).read_bytes().splitlines(keepends=True)
    assert len(log) == 3
    clusters = open_set(str(store), f"web@{v1}").clusters().to_pylist()
    hashes = {r["case_id"]: r["exact_hash"] for r in clusters}
    sheet = [
        {"case_id": confirmed, "decision": "confirm"},
        {"case_id": rejected, "decision": "reject", "reason": REASON},
        {"case_id": corrected, "decision": "correct", "corrected_final_state": CORRECTED},
    ]
    for line, row in zip(log, sheet, strict=True):
        entry = check_row({**row, "exact_hash": hashes[row["case_id"]], "reviewer": "ana"}, 2)
        at = re.search(rb'"at":"([^"]+)"', line)
        assert at and hashes[row["case_id"]]
        assert line == log_lines([entry], at.group(1).decode())

    v2 = _run(config, generated, store)
    assert v2 != v1
    second = _rows(store, v2)
    assert rejected in first and rejected not in second
    assert second[confirmed]["trust"] == "human"
    fixed = second[corrected]
    assert fixed["expected"]["final_state"] == CORRECTED
    assert fixed["expected"]["source"] == "review" and fixed["trust"] == "human"
    assert all(r["trust"] != "human" for k, r in second.items() if k not in (confirmed, corrected))
