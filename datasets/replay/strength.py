"""A golden set's strength: the share of boundary-level mutants its cases kill.

A regression suite that passes every faulty agent proves nothing. So the set is replayed first
as recorded (the *baseline*: every boundary served from the recording, the re-issuing agent),
then once per mutant of the fixed catalogue (``mutants.py``) on every case it applies to. A
mutant is *killed* on a case when the gate (``configs/gate.yaml``, the same P0/P1 lines
``golden replay`` uses) fails that case's replay; it is *detected* when the replay reports any
difference at all (a mutant detected but not killed is seen by a person reading the report,
not by CI). A case whose baseline already fails the gate cannot tell a mutant from itself: it
is left out of every count and reported.

The kill share is killed / applicable over (case, mutant) pairs, for the whole set, per mutant,
per funnel, per split and per cluster (``clusters``: which clusters add kills). A set killing
less than ``min_kill_share`` (``publish.strength.min_kill_share``, default 0.8) is flagged;
the nightly run measures each new version (at most ``publish.strength.max_cases`` cases, a
deterministic sample: ``sample_case_ids``) and shows ``strength_section`` in its report.
Pure: cases in, figures out; the CLI (`golden sets strength`) and the report
(``strength_section``) only present them.
"""

from __future__ import annotations

import hashlib
import heapq
import html
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from golden_distill.datasets.case import Case
from golden_distill.datasets.publish_config import DEFAULT_MIN_KILL_SHARE
from golden_distill.datasets.replay.config import ReplayConfig
from golden_distill.datasets.replay.contract import ReplayInput
from golden_distill.datasets.replay.gate import FAIL, evaluate
from golden_distill.datasets.replay.mutants import (
    MUTANTS,
    faithful_agent,
    mutant_agent,
)
from golden_distill.datasets.replay.runner import baseline_calls, replay_cases
from golden_distill.datasets.replay.stubs import VirtualTools

#: The label of cases without a funnel, split or cluster.
NONE = "(none)"


@dataclass(slots=True)
class Tally:
    """(case, mutant) pairs: how many applied, how many the gate killed, how many any diff saw."""

    applicable: int = 0
    killed: int = 0
    detected: int = 0

    def add(self, killed: bool, detected: bool) -> None:
        self.applicable += 1
        self.killed += killed
        self.detected += detected

    @property
    def share(self) -> float | None:
        return self.killed / self.applicable if self.applicable else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "applicable": self.applicable,
            "killed": self.killed,
            "detected": self.detected,
            "kill_share": self.share,
        }


@dataclass(slots=True)
class StrengthReport:
    """The figures of one strength run (``to_dict`` is the JSON the CLI prints)."""

    cases: int
    baseline_passed: int  # cases whose faithful replay passes the gate
    baseline_clean: int  # ... with no diff at all
    baseline_failed: list[str]  # case ids left out (their baseline fails)
    min_kill_share: float
    total: Tally = field(default_factory=Tally)
    by_mutant: dict[str, Tally] = field(default_factory=dict)
    by_funnel: dict[str, Tally] = field(default_factory=dict)
    by_split: dict[str, Tally] = field(default_factory=dict)
    by_cluster: dict[str, Tally] = field(default_factory=dict)
    survivors: dict[str, list[str]] = field(default_factory=dict)  # mutant -> case ids
    #: the cases of the whole set when only a sample of them was measured (``sample_case_ids``)
    sampled_from: int | None = None

    @property
    def share(self) -> float | None:
        return self.total.share

    @property
    def flagged(self) -> bool:
        """Below the configured share (or nothing to measure: no mutant applied)."""
        return self.share is None or self.share < self.min_kill_share

    def to_dict(self, survivors_shown: int = 20) -> dict[str, Any]:
        def tallies(group: dict[str, Tally]) -> dict[str, Any]:
            return {k: v.to_dict() for k, v in sorted(group.items())}

        return {
            "cases": self.cases,
            "sampled_from": self.sampled_from,
            "baseline": {
                "passed": self.baseline_passed,
                "clean": self.baseline_clean,
                "failed": self.baseline_failed,
            },
            "min_kill_share": self.min_kill_share,
            "flagged": self.flagged,
            "total": self.total.to_dict(),
            "by_mutant": {k: v.to_dict() for k, v in self.by_mutant.items()},
            "by_funnel": tallies(self.by_funnel),
            "by_split": tallies(self.by_split),
            "by_cluster": tallies(self.by_cluster),
            "survivors": {k: v[:survivors_shown] for k, v in self.survivors.items() if v},
        }

    def summary(self) -> dict[str, Any]:
        """The figures a manifest keeps: no survivors, no per-cluster table (one row per
        cluster would grow with the set), at most 20 left-out case ids."""
        out = self.to_dict(survivors_shown=0)
        out.pop("by_cluster")
        out.pop("survivors")
        out["baseline"]["failed_count"] = len(self.baseline_failed)
        out["baseline"]["failed"] = self.baseline_failed[:20]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StrengthReport:
        """Back from ``to_dict`` or ``summary`` (what the report renders from the run stats)."""
        baseline = data.get("baseline") or {}

        def tallies(group: Any) -> dict[str, Tally]:
            return {
                str(k): Tally(int(v.get("applicable", 0)), int(v.get("killed", 0)),
                              int(v.get("detected", 0)))
                for k, v in (group or {}).items()
            }  # fmt: skip

        failed = list(baseline.get("failed") or [])
        report = cls(
            int(data.get("cases", 0)),
            int(baseline.get("passed", 0)),
            int(baseline.get("clean", 0)),
            failed,
            float(data.get("min_kill_share", DEFAULT_MIN_KILL_SHARE)),
            sampled_from=data.get("sampled_from"),
        )
        total = tallies({"t": data.get("total") or {}})["t"]
        report.total = total
        report.by_mutant = tallies(data.get("by_mutant"))
        report.by_funnel = tallies(data.get("by_funnel"))
        report.by_split = tallies(data.get("by_split"))
        report.by_cluster = tallies(data.get("by_cluster"))
        report.survivors = {k: list(v) for k, v in (data.get("survivors") or {}).items()}
        return report


def sample_case_ids(case_ids: Iterable[str], limit: int) -> set[str] | None:
    """The ``limit`` case ids with the smallest sha256: a sample that does not depend on the
    order the cases come in, and keeps a case that stays in the set in the next version's
    sample too. None: every case fits (no sampling)."""
    ids = case_ids if isinstance(case_ids, Collection) else list(case_ids)
    if len(ids) <= limit:
        return None
    return set(heapq.nsmallest(limit, ids, key=lambda i: hashlib.sha256(i.encode()).digest()))


def _killed(check: Any, config: ReplayConfig) -> bool:
    gate, _ = evaluate([check], config.gate)
    return gate.verdict == FAIL


def measure_strength(
    cases: Iterable[Case | Any],
    config: ReplayConfig | None = None,
    *,
    volatile_keys: Iterable[str] | None = None,
    mutants: Iterable[str] | None = None,
    min_kill_share: float = DEFAULT_MIN_KILL_SHARE,
    baseline_version: str = "strength",
) -> StrengthReport:
    """Replay ``cases`` as recorded, then under each mutant (``mutants``: names from
    ``MUTANTS``, default all), and count the kills (module doc)."""
    config = config or ReplayConfig()
    volatile = list(volatile_keys or [])
    chosen = list(MUTANTS) if mutants is None else list(mutants)
    unknown = [m for m in chosen if m not in MUTANTS]
    if unknown:
        raise ValueError(f"unknown mutant(s) {', '.join(unknown)}; known: {', '.join(MUTANTS)}")
    every = [getattr(c, "case", c) for c in cases]
    baseline = replay_cases(every, faithful_agent, config, baseline_version=baseline_version,
                            volatile_keys=volatile)  # fmt: skip
    report = StrengthReport(len(every), 0, 0, [], min_kill_share)
    kept: list[Case] = []
    for case, run in zip(every, baseline.runs, strict=True):
        if _killed(run.check, config):
            report.baseline_failed.append(case.case_id)
            continue
        report.baseline_passed += 1
        report.baseline_clean += not run.check.diffs
        kept.append(case)
    inputs = {c.case_id: _replay_input(c, config, volatile) for c in kept}
    for name in chosen:
        mutant = MUTANTS[name]()
        tally = report.by_mutant[name] = Tally()
        survivors = report.survivors[name] = []
        applies = [c for c in kept if mutant.plan(inputs[c.case_id]) is not None]
        if not applies:
            continue
        run = replay_cases(applies, mutant_agent(mutant), config,
                           baseline_version=baseline_version, volatile_keys=volatile)  # fmt: skip
        for case, case_run in zip(applies, run.runs, strict=True):
            killed = _killed(case_run.check, config)
            detected = bool(case_run.check.diffs)
            _count(report, case, killed, detected)
            tally.add(killed, detected)
            if not killed:
                survivors.append(case.case_id)
    return report


def _replay_input(case: Case, config: ReplayConfig, volatile: list[str]) -> ReplayInput:
    """What the mutant agent will be given for ``case`` (to decide whether it applies)."""
    tools = VirtualTools(case.steps, config.matching, volatile)
    return ReplayInput.from_case(case, baseline_calls(case, tools))


def _count(report: StrengthReport, case: Case, killed: bool, detected: bool) -> None:
    report.total.add(killed, detected)
    for funnel in case.funnels or [NONE]:
        report.by_funnel.setdefault(funnel, Tally()).add(killed, detected)
    report.by_split.setdefault(case.split or NONE, Tally()).add(killed, detected)
    report.by_cluster.setdefault(case.cluster_id or case.case_id, Tally()).add(killed, detected)


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.1%}"


def strength_lines(report: StrengthReport, clusters_shown: int = 10) -> list[str]:
    """The report as text lines (what `golden sets strength` prints)."""
    verdict = "FLAGGED" if report.flagged else "ok"
    lines = [
        f"strength {_pct(report.share)}: {report.total.killed:,} of {report.total.applicable:,} "
        f"mutants killed (min {report.min_kill_share:.0%}: {verdict})",
        f"baseline (every boundary from the recording): {report.baseline_passed:,} of "
        f"{report.cases:,} cases pass the gate, {report.baseline_clean:,} with no diff",
    ]
    if report.baseline_failed:
        shown = ", ".join(report.baseline_failed[:5])
        lines.append(f"  left out (baseline fails): {len(report.baseline_failed)}: {shown}")
    lines.append(f"{'mutant':<18} {'applies':>8} {'killed':>8} {'share':>7} {'detected':>9}")
    for name, tally in report.by_mutant.items():
        lines.append(_row(name, tally))
    for title, group in (("funnel", report.by_funnel), ("split", report.by_split)):
        lines.append(f"by {title}")
        lines.extend("  " + _row(k, v, 16) for k, v in sorted(group.items()))
    ranked = Counter({k: v.killed for k, v in report.by_cluster.items()}).most_common(
        clusters_shown
    )
    if ranked:
        lines.append("clusters adding the most kills")
        lines.extend("  " + _row(k, report.by_cluster[k], 16) for k, _ in ranked)
    return lines


def _row(label: str, tally: Tally, width: int = 18) -> str:
    return (
        f"{label:<{width}} {tally.applicable:>8,} {tally.killed:>8,} {_pct(tally.share):>7} "
        f"{tally.detected:>9,}"
    )


def strength_section(report: StrengthReport) -> str:
    """An HTML section for a report page: the share, the flag, the table per mutant, funnel
    and split (escaped; case ids only, never case text)."""
    flag = (
        f'<p class="flag">FLAGGED: kills less than {report.min_kill_share:.0%}</p>'
        if report.flagged
        else ""
    )

    def table(title: str, group: dict[str, Tally]) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(k)}</td><td>{v.applicable}</td><td>{v.killed}</td>"
            f"<td>{_pct(v.share)}</td><td>{v.detected}</td></tr>"
            for k, v in group.items()
        )
        return (
            f"<h3>{html.escape(title)}</h3><table><tr><th></th><th>applies</th><th>killed</th>"
            f"<th>share</th><th>detected</th></tr>{rows}</table>"
        )

    return (
        f'<section id="strength"><h2>Strength: {_pct(report.share)} of mutants killed</h2>'
        f"{flag}{_sampled(report)}<p>Baseline (every boundary from the recording): "
        f"{report.baseline_passed} of {report.cases} cases pass the gate; "
        f"{report.cases - report.baseline_passed} left out.</p>"
        + table("by mutant", report.by_mutant)
        + table("by funnel", dict(sorted(report.by_funnel.items())))
        + table("by split", dict(sorted(report.by_split.items())))
        + "</section>"
    )


def _sampled(report: StrengthReport) -> str:
    if report.sampled_from is None:
        return ""
    return (
        f'<p class="muted">Measured on a deterministic sample of {report.cases:,} of the set\'s '
        f"{report.sampled_from:,} cases (the smallest sha256 of the case ids).</p>"
    )
