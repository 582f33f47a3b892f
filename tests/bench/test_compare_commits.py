"""`bench/compare_commits.py` without the pipeline: the verdict against the issue's thresholds,
and a revision turned into a worktree whose code a child process really imports.

The pieces run for real (git in a temporary repository, a child Python importing through the
links); timing the pipeline itself is the benchmark's job, not a test's.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
_spec = importlib.util.spec_from_file_location("compare_commits", BENCH / "compare_commits.py")
assert _spec and _spec.loader
cc = importlib.util.module_from_spec(_spec)
sys.modules["compare_commits"] = cc
# the script imports its siblings (end_to_end, host_probe); bench/ leaves the path afterwards
# so its script names (redaction.py, dedup.py, ...) never shadow anything in later tests
sys.path.insert(0, str(BENCH))
try:
    _spec.loader.exec_module(cc)
finally:
    sys.path.remove(str(BENCH))


def run(first_wall: float, rerun_wall: float, rss: int = 10**9, cpu: float = 0.0):
    return cc.Measurement(cc.Phase(first_wall, cpu, rss), cc.Phase(rerun_wall, cpu, rss // 2))


def by_name(checks):
    return {check.name.split(",")[0]: check for check in checks}


def test_same_speed_passes_and_rss_is_not_judged_below_2m():
    checks = by_name(cc.verdict(run(100, 5), run(100, 5), sessions=100_000))
    assert checks["first-run wall"].passed is True
    assert checks["first-run wall"].value == pytest.approx(1.0)
    assert checks["candidate cached rerun / its first run"].passed is True
    assert checks["candidate peak RSS"].passed is None
    assert checks["candidate peak RSS"].verdict == "n/a"


def test_wall_ratio_limit_is_1_1_inclusive():
    at_limit = by_name(cc.verdict(run(100, 5), run(110, 5), sessions=1000))
    over = by_name(cc.verdict(run(100, 5), run(111, 5), sessions=1000))
    faster = by_name(cc.verdict(run(100, 5), run(50, 2), sessions=1000))
    assert at_limit["first-run wall"].passed is True
    assert over["first-run wall"].passed is False
    assert over["first-run wall"].verdict == "FAIL"
    assert faster["first-run wall"].value == pytest.approx(0.5)


def test_rerun_share_is_the_candidates_own():
    # a slow baseline rerun does not matter; the candidate's rerun over its own first run does
    ok = by_name(cc.verdict(run(100, 50), run(100, 10), sessions=1000))
    slow = by_name(cc.verdict(run(100, 5), run(100, 10.5), sessions=1000))
    assert ok["candidate cached rerun / its first run"].passed is True
    assert slow["candidate cached rerun / its first run"].passed is False
    assert slow["candidate cached rerun / its first run"].value == pytest.approx(0.105)


def test_rss_is_judged_from_2m_sessions_against_2e9_bytes():
    # 1.9 GiB is 2.04e9 bytes: over "2 GB" read as 10^9
    big = int(1.9 * 2**30)
    at_2m = by_name(cc.verdict(run(100, 5), run(100, 5, rss=big), sessions=2_000_000))
    small = by_name(cc.verdict(run(100, 5), run(100, 5, rss=1_900_000_000), sessions=2_000_000))
    below_2m = by_name(cc.verdict(run(100, 5), run(100, 5, rss=big), sessions=1_000_000))
    assert at_2m["candidate peak RSS"].passed is False
    assert small["candidate peak RSS"].passed is True
    assert below_2m["candidate peak RSS"].passed is None


def test_median_takes_each_figure_over_the_runs():
    runs = [run(100, 9, cpu=50), run(300, 1, cpu=70), run(200, 5, cpu=60)]
    median = cc.median_of(runs)
    assert (median.first.wall, median.rerun.wall, median.first.cpu) == (200, 5, 60)
    assert median.rerun_share == pytest.approx(0.025)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository laid out like this one (pyproject maps `flows` to `golden_distill.flows`)
    with two commits whose `flows/__init__.py` says which commit it is."""
    repo = tmp_path / "repo"
    (repo / "flows").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(
        '[tool.setuptools]\npackage-dir = { "golden_distill.flows" = "flows" }\n'
    )
    (repo / "flows" / "cli.py").write_text("")
    (repo / "flows" / "distill.py").write_text("")
    git(repo, "init", "-q")
    for which in ("first", "second"):
        (repo / "flows" / "__init__.py").write_text(f"WHICH = {which!r}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", which)
    return repo


def test_revision_becomes_a_detached_worktree_reused_at_the_same_commit(repo, tmp_path):
    out = tmp_path / "out"
    first = cc.checkout(repo, "HEAD~1", out)
    assert "WHICH = 'first'" in (first / "flows" / "__init__.py").read_text()
    assert first.parent.name == git(repo, "rev-parse", "HEAD~1")[:12]
    (first / "marker").write_text("kept")
    assert cc.checkout(repo, git(repo, "rev-parse", "HEAD~1"), out) == first
    assert (first / "marker").exists(), "an existing worktree at that commit is reused"
    second = cc.checkout(repo, "HEAD", out)
    assert second != first and "'second'" in (second / "flows" / "__init__.py").read_text()


def test_a_deleted_worktree_folder_is_made_again(repo, tmp_path):
    out = tmp_path / "out"
    first = cc.checkout(repo, "HEAD~1", out)
    subprocess.run(["rm", "-rf", str(first)], check=True)
    assert cc.checkout(repo, "HEAD~1", out) == first
    assert (first / "flows" / "__init__.py").exists()


def test_unknown_revision_is_a_clear_error(repo):
    with pytest.raises(SystemExit, match="names no commit"):
        cc.resolve(repo, "no-such-branch")


def test_baseline_child_imports_the_worktree_not_the_editable_install(repo, tmp_path):
    side = cc.side_of(repo, "HEAD~1", "baseline", tmp_path / "out")
    found = cc.imported_from({**side.env, "PATH": "/usr/bin:/bin"})
    assert found == (side.root / "flows" / "__init__.py").resolve()
    cc.check_imports(side)  # passes: its own code


def test_a_side_importing_other_code_is_refused(repo, tmp_path):
    # no links on PYTHONPATH: the child imports this venv's editable install, not the worktree
    src = cc.checkout(repo, "HEAD~1", tmp_path / "out")
    with pytest.raises(SystemExit, match=r"imports golden_distill\.flows from"):
        cc.check_imports(cc.Side("baseline", "HEAD~1", src, {}))


def test_a_folder_in_the_way_that_is_no_worktree_is_replaced(repo, tmp_path):
    out = tmp_path / "out"
    dest = out / git(repo, "rev-parse", "HEAD~1")[:12] / "src"
    dest.mkdir(parents=True)
    (dest / "stray").write_text("not a checkout")
    assert cc.checkout(repo, "HEAD~1", out) == dest
    assert "'first'" in (dest / "flows" / "__init__.py").read_text()
    assert not (dest / "stray").exists()


def test_exit_code_is_1_only_for_a_strict_fail():
    slow = cc.verdict(run(100, 5), run(120, 5), sessions=1000)
    fine = cc.verdict(run(100, 5), run(100, 5), sessions=1000)  # RSS n/a is no failure
    assert cc.exit_code(slow, strict=False) == 0
    assert cc.exit_code(slow, strict=True) == 1
    assert cc.exit_code(fine, strict=True) == 0


def test_warm_up_compiles_the_worktree_before_any_timed_run(repo, tmp_path):
    side = cc.side_of(repo, "HEAD~1", "baseline", tmp_path / "out")
    cache = side.root / "flows" / "__pycache__"
    assert not cache.exists(), "a fresh worktree has no bytecode"
    cc.warm_up(side)
    assert {p.name.split(".")[0] for p in cache.glob("*.pyc")} >= {"__init__", "cli", "distill"}
