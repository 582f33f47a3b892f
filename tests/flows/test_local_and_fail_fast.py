"""The lighter `--local` mode publishes what the Prefect flow publishes; bad input fails fast.

`golden run` checks config, key, sources, store and set name before Prefect starts
(flows/preflight.py): each bad one fails with its message alone, quickly, and without any
Prefect output (no temporary server, no `EventsWorker` lines).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

GOLDEN = [sys.executable, "-m", "golden_distill.flows.cli", "run"]


@pytest.fixture(scope="module")
def fail_fast_seconds() -> float:
    """A generous bound that holds on a loaded, shared machine: twice the time this machine
    needs right now just to start Python and import the checks, plus 2 s (on an idle 2-core
    machine a bad input fails in about 1.3 s; Prefect's temporary API alone takes 5-30 s)."""
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", "import golden_distill.flows.cli, golden_distill.flows.preflight"],
        check=True,
        timeout=120,
    )
    return 2 * (time.monotonic() - started) + 2.0


def test_local_mode_publishes_the_same_content(
    prefect_api, pseudonym_key, corpus, tmp_path, events, shard_events, write_config
):
    from golden_distill.datasets.reader import open_set
    from golden_distill.flows.distill import run_distill
    from golden_distill.flows.params import DistillParams

    source, truth = corpus
    common = {"sources": [str(source)], "source_format": "native", "store_url": str(tmp_path)}
    flow_cfg = write_config(tmp_path / "flow" / "config.yaml", truth.opt_out_tenant)
    local_cfg = write_config(tmp_path / "local" / "config.yaml", truth.opt_out_tenant)
    by_flow = run_distill(DistillParams(config_path=str(flow_cfg), set_name="flow", **common))
    local = DistillParams(config_path=str(local_cfg), set_name="local", **common)
    by_local = run_distill(local, local=True)
    flow_set = open_set(str(tmp_path), f"flow@{by_flow}")
    local_set = open_set(str(tmp_path), f"local@{by_local}")
    assert local_set.manifest["content_sha256"] == flow_set.manifest["content_sha256"]
    assert len(local_set) > 0
    # a local rerun reuses every shard from its content-addressed folder
    events.clear()
    assert run_distill(local, local=True) == by_local
    done = shard_events(events)
    assert done and all(d["cached"] for d in done)


def _golden_run(tmp_path: Path, *args: str, key: str | None = "k" * 40) -> tuple[float, str, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.pop("GOLDEN_PSEUDONYM_KEY", None)
    if key is not None:
        env["GOLDEN_PSEUDONYM_KEY"] = key
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    started = time.monotonic()
    done = subprocess.run(
        [*GOLDEN, "--store", str(tmp_path / "store"), "--work-dir", str(tmp_path / "w"), *args],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return time.monotonic() - started, done.stdout + done.stderr, done.returncode


@pytest.mark.parametrize(
    "case", ["missing source", "bad config", "no key", "bad set name", "store is a file"]
)
def test_bad_input_fails_fast_with_its_message_only(case, tmp_path, corpus, fail_fast_seconds):
    source, _ = corpus
    args: list[str] = ["--source", str(source)]
    key: str | None = "k" * 40
    expected = ""
    if case == "missing source":
        args = ["--source", str(tmp_path / "nowhere")]
        expected = "stage 'discover'"
    elif case == "bad config":
        bad = tmp_path / "bad.yaml"
        bad.write_text("funnels:\n  recovery:\n    recover_whitin_steps: 3\n")
        args += ["--config", str(bad)]
        expected = "recover_whitin_steps"
    elif case == "no key":
        key = None
        expected = "no pseudonym key"
    elif case == "bad set name":
        args += ["--set", "../escape"]
        expected = "set name"
    elif case == "store is a file":
        (tmp_path / "store").write_text("x")
        expected = "not a folder"
    seconds, output, code = _golden_run(tmp_path, *args, key=key)
    assert code in (1, 2) and expected in output, output
    assert seconds < fail_fast_seconds, f"{case}: {seconds:.1f} s (bound {fail_fast_seconds:.1f})"
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output  # the message alone
    for noise in ("EventsWorker", "prefect", "Traceback", "temporary server"):
        assert noise not in output
    assert not (tmp_path / "prefect-home").exists()  # Prefect never started


def test_scheduled_window_and_watermark_rules():
    from datetime import UTC, datetime, timedelta

    from golden_distill.flows.window import resolve_window

    day = timedelta(days=1)
    start = datetime(2026, 12, 1, 2, 30, tzinfo=UTC)
    midnight = datetime(2026, 12, 1, tzinfo=UTC)
    # a new set: the night before the scheduled start
    assert resolve_window(None, None, scheduled_start=start, watermark=None, unit=day) == (
        midnight - day,
        midnight,
    )
    # a missed night: from the watermark
    wm = midnight - 2 * day
    assert resolve_window(None, None, scheduled_start=start, watermark=wm, unit=day) == (
        wm,
        midnight,
    )
    # already read: an empty window; explicit values always win; by hand without: no window
    assert resolve_window(None, None, scheduled_start=start, watermark=midnight, unit=day) == (
        midnight,
        midnight,
    )
    explicit = (wm, wm + day)
    assert resolve_window(*explicit, scheduled_start=start, watermark=None, unit=day) == explicit
    assert resolve_window(None, None, scheduled_start=None, watermark=wm, unit=day) == (None, None)
