"""A set's strength: the faithful replay passes, the write and escape mutants are killed by the
gate, the counts per funnel and split add up from the mutants that apply to each case, a case
whose own baseline fails is left out, and `golden sets strength` flags a set below its share."""

from __future__ import annotations

import orjson
from typer.testing import CliRunner

from golden_distill.datasets.case import Expected
from golden_distill.datasets.reader import open_set
from golden_distill.datasets.replay.config import ReplayConfig
from golden_distill.datasets.replay.contract import ReplayInput
from golden_distill.datasets.replay.mutants import MUTANTS
from golden_distill.datasets.replay.runner import baseline_calls
from golden_distill.datasets.replay.strength import (
    StrengthReport,
    measure_strength,
    sample_case_ids,
    strength_lines,
    strength_section,
)
from golden_distill.datasets.replay.stubs import VirtualTools
from golden_distill.flows.cli import app

runner = CliRunner()
#: Faults the P0 lines of any gate catch: a write changed, added, lost or moved; an escape.
P0_MUTANTS = (
    "drop_write", "duplicate_write", "swap_writes", "reorder_writes", "change_amount",
    "change_status", "unrecorded_tool",
)  # fmt: skip


def _cases(store_ref):
    golden = open_set(*store_ref)
    return [c.case for c in golden.cases()], golden.volatile_keys


def test_write_faults_are_killed_and_every_mutant_is_seen(generated_set) -> None:
    cases, volatile = _cases(generated_set)
    report = measure_strength(cases, volatile_keys=volatile)
    assert report.cases == len(cases) == report.baseline_passed == report.baseline_clean
    for name in P0_MUTANTS:
        tally = report.by_mutant[name]
        assert tally.applicable > 0 and tally.killed == tally.applicable, name
    for name, tally in report.by_mutant.items():
        assert tally.detected == tally.applicable, name  # every mutant leaves a diff row
    assert report.total.applicable == sum(t.applicable for t in report.by_mutant.values())
    assert report.total.killed == sum(t.killed for t in report.by_mutant.values())
    text = "\n".join(strength_lines(report))
    assert f"{report.total.killed:,} of {report.total.applicable:,} mutants killed" in text


def test_counts_per_funnel_and_split_follow_the_cases(tau_set) -> None:
    cases, volatile = _cases(tau_set)
    cases = cases[:60]
    for i, case in enumerate(cases):
        failed = any(s.status != "ok" for s in case.steps)
        case.funnels = ["recovery", "high_value_mutating"] if failed else ["high_value_mutating"]
        case.split = ("dev", "regression", "holdout")[i % 3]
    report = measure_strength(cases, volatile_keys=volatile)
    config = ReplayConfig()
    applies: dict[str, int] = {}
    for case in cases:
        given = ReplayInput.from_case(
            case, baseline_calls(case, VirtualTools(case.steps, config.matching, volatile))
        )
        n = sum(MUTANTS[m]().plan(given) is not None for m in MUTANTS)
        for key in [*case.funnels, case.split]:
            applies[key] = applies.get(key, 0) + n
    assert {k: v.applicable for k, v in report.by_funnel.items()} == {
        k: applies[k] for k in ("recovery", "high_value_mutating")
    }
    assert {k: v.applicable for k, v in report.by_split.items()} == {
        k: applies[k] for k in ("dev", "regression", "holdout")
    }
    section = strength_section(report)
    assert 'id="strength"' in section and "recovery" in section and "holdout" in section


def test_a_case_failing_its_own_baseline_is_left_out(generated_set) -> None:
    cases, volatile = _cases(generated_set)
    cases = [c for c in cases if c.outcome.final_state][:20]
    # no state to judge (no baseline state, no write), and an expected final state the
    # recording did not end with: the faithful replay's label is judged, and fails
    broken = cases[0]
    broken.context.baseline_state = None
    broken.steps = [s for s in broken.steps if s.is_mutating is False]
    broken.expected = Expected(final_state="SOMETHING_ELSE", source="review")
    report = measure_strength(cases, volatile_keys=volatile)
    assert report.baseline_failed == [broken.case_id]
    assert report.baseline_passed == len(cases) - 1
    counted = report.total.applicable
    alone = measure_strength([c for c in cases if c is not broken], volatile_keys=volatile)
    assert alone.total.applicable == counted and alone.total.killed == report.total.killed


def test_cli_flags_a_set_below_its_share(generated_set) -> None:
    store, ref = generated_set
    cases, volatile = _cases(generated_set)
    share = measure_strength(cases, volatile_keys=volatile).share
    base = ["sets", "strength", ref, "--store", store]
    above = runner.invoke(app, [*base, "--min-kill-share", f"{share - 0.01:.4f}", "--json"])
    assert above.exit_code == 0, above.output
    body = orjson.loads(above.output)
    assert body["flagged"] is False and abs(body["total"]["kill_share"] - share) < 1e-9
    below = runner.invoke(app, [*base, "--min-kill-share", f"{share + 0.01:.4f}"])
    assert below.exit_code == 1 and "FLAGGED" in below.output
    one = runner.invoke(app, [*base, "--mutant", "drop_write", "--min-kill-share", "1"])
    assert one.exit_code == 0 and "drop_write" in one.output and "skip_read" not in one.output
    typo = runner.invoke(app, [*base, "--mutant", "drop_writes"])
    assert typo.exit_code == 2 and "did you mean 'drop_write'" in typo.output
    funnel = runner.invoke(app, [*base, "--funnel", "recovry"])
    assert funnel.exit_code == 2 and "--funnel 'recovry'" in funnel.output


def test_the_sample_does_not_depend_on_order_and_fits_are_not_sampled() -> None:
    ids = [f"case-{i:03d}" for i in range(50)]
    chosen = sample_case_ids(ids, 10)
    assert chosen is not None and len(chosen) == 10
    assert sample_case_ids(list(reversed(ids)), 10) == chosen
    # a case kept in a grown set's sample was in the smaller set's sample too
    assert sample_case_ids([*ids, *(f"new-{i}" for i in range(50))], 10) <= chosen | {
        f"new-{i}" for i in range(50)
    }
    assert sample_case_ids(ids, 50) is None


def test_the_run_stats_render_the_same_section(generated_set) -> None:
    cases, volatile = _cases(generated_set)
    report = measure_strength(cases[:30], volatile_keys=volatile, min_kill_share=0.99)
    report.sampled_from = 200
    summary = orjson.loads(orjson.dumps(report.summary()))  # what the manifest keeps
    assert "survivors" not in summary and "by_cluster" not in summary
    back = StrengthReport.from_dict(summary)
    assert back.flagged is report.flagged is True
    assert strength_section(back) == strength_section(report)
    assert "FLAGGED" in strength_section(back) and "30 of the set's 200" in strength_section(back)


def test_cli_takes_the_share_from_the_config(generated_set, tmp_path) -> None:
    store, ref = generated_set
    cases, volatile = _cases(generated_set)
    share = measure_strength(cases, volatile_keys=volatile).share
    base = ["sets", "strength", ref, "--store", store, "--config"]
    for min_share, code in ((share + 0.01, 1), (share - 0.01, 0)):
        config = tmp_path / f"{code}.yaml"
        config.write_text(f"publish:\n  strength:\n    min_kill_share: {min_share:.4f}\n")
        result = runner.invoke(app, [*base, str(config), "--json"])
        assert result.exit_code == code, result.output
        assert orjson.loads(result.output)["min_kill_share"] == round(min_share, 4)
