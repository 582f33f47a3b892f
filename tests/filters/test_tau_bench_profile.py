"""The tau-bench profile (configs/tau-bench.yaml) on the 400 vendored runs: every run is read
(Python-literal `think` arguments parsed safely), single-system writes qualify, failed runs'
writes do not, and payment-method amounts count."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from golden_test_data import all_runs_paths

from golden_distill.datasets.quarantine import quarantine_hint
from golden_distill.datasets.sources.case_rows import set_arguments
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.runner import score_cases
from golden_distill.flows.config import load_pipeline_config

PROFILE = Path(__file__).resolve().parents[2] / "configs" / "tau-bench.yaml"


def test_python_literal_arguments_are_parsed_never_evaluated(tmp_path):
    step: dict = {}
    assert set_arguments(step, "{'thought': 'x', 'n': [1, None]}", keep_malformed=False,
                         python_literals=True) == "literal"  # fmt: skip
    assert step["arguments"] == '{"thought":"x","n":[1,null]}'
    marker = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    for text in (code, "{1, 2}", "{'a': b'bytes'}"):
        assert set_arguments({}, text, keep_malformed=False, python_literals=True) == "malformed"
    assert not marker.exists()
    # without the setting, a Python literal is still quarantined (the default stays strict)
    assert set_arguments({}, "{'thought': 'x'}", keep_malformed=False) == "malformed"


def test_quarantine_summary_names_the_setting():
    hint = quarantine_hint("malformed_arguments") or ""
    assert "ingest.malformed_arguments: python_literal" in hint and "keep_as_string" in hint
    assert quarantine_hint("invalid_json") is None


@pytest.fixture(scope="module")
def profile_cases(tmp_path_factory):
    from golden_distill.datasets.ingest import ingest

    config = load_pipeline_config(PROFILE)
    out = tmp_path_factory.mktemp("tau-profile")
    summary = ingest([str(p) for p in all_runs_paths()], out, fmt="chat", config=config.ingest)
    return config, summary, pl.read_parquet(out / "cases")


def test_profile_reads_every_run(profile_cases):
    _, summary, cases = profile_cases
    assert dict(summary.quarantined) == {}
    assert cases.height == 400


def test_profile_selects_rewarded_single_system_writes(profile_cases):
    config, _, cases = profile_cases
    scored = score_cases(cases, config.funnels).join(
        cases.select("case_id", reward=pl.col("outcome").struct.field("reward")), on="case_id"
    )
    hv = scored.filter(pl.col("in_high_value_mutating"))
    assert hv.height > 100  # most rewarded runs write; the default profile found 6
    assert hv.get_column("reward").min() == 1.0  # no failed run's writes
    default = score_cases(cases, FunnelsConfig()).filter(pl.col("in_high_value_mutating"))
    assert default.height < hv.height / 5
    reasons = hv.get_column("funnel_reasons").to_list()
    assert all("reward 1.0 > 0" in r for r in reasons)


def test_payment_method_amounts_count(build):
    s = build.step
    args = {"payment_methods": [{"payment_id": "gift_card_1", "amount": 250},
                                {"payment_id": "credit_card_2", "amount": 12500}]}  # fmt: skip
    frame = build.frame([build.case("booking", [s(0, "book_reservation", write=True, args=args)])])
    scored = score_cases(frame, FunnelsConfig(), details=True)
    assert scored.get_column("why_high_value_mutating").to_list() == [
        "1 write call; amount 12,500.00 >= 10,000"
    ]
