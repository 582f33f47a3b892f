"""The deployment's entrypoint on a Dask cluster the flow did not start: a scheduler and a
worker of their own, in a folder outside the repository, as on a scheduler machine. The flow is
loaded from prefect.yaml's entrypoint as a worker loads it; its tasks are then unpickled on the
cluster, which imports the installed package. (A file entrypoint, `flows/distill.py:distill`,
is loaded as a script module named `distill`, and the cluster fails the shard tasks with
`ModuleNotFoundError: No module named 'distill'`.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

RUN = """
import sys
from prefect.flows import load_flow_from_entrypoint

def main():
    flow = load_flow_from_entrypoint(sys.argv[1])
    print("VERSION", flow(config=sys.argv[2], sources=[sys.argv[3]], source_format="native",
                          store_url=sys.argv[4], set_name="remote"))

if __name__ == "__main__":
    main()
"""


def _entrypoint() -> str:
    spec = yaml.safe_load((REPO / "prefect.yaml").read_text())
    (nightly,) = [d for d in spec["deployments"] if d["name"] == "nightly"]
    path, name = nightly["entrypoint"].split(":")
    # a file entrypoint is relative to the deployment's working directory (the repository)
    return f"{REPO / path}:{name}" if path.endswith(".py") else nightly["entrypoint"]


def _wait_for(path: Path, process: subprocess.Popen, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "the Dask scheduler exited"
        if path.exists() and path.stat().st_size:
            return json.loads(path.read_text())
        time.sleep(0.3)
    raise TimeoutError("the Dask scheduler did not start")


def test_the_entrypoint_runs_on_a_separate_dask_cluster(
    tmp_path, corpus, pseudonym_key, write_config
):
    source, truth = corpus
    remote = tmp_path / "scheduler-host"  # the cluster's own folder, not the repository
    remote.mkdir()
    env = {**os.environ, "GOLDEN_PSEUDONYM_KEY": pseudonym_key}
    env.pop("PYTHONPATH", None)
    scheduler_file = remote / "scheduler.json"
    dask = [sys.executable, "-m"]
    scheduler = subprocess.Popen(
        [*dask, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
         "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(scheduler_file)],
        cwd=remote, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    worker = None
    try:
        address = _wait_for(scheduler_file, scheduler)["address"]
        worker = subprocess.Popen(
            [*dask, "distributed.cli.dask_worker", address, "--nworkers", "1", "--nthreads", "1",
             "--no-dashboard"],
            cwd=remote, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        config = write_config(tmp_path / "config.yaml", truth.opt_out_tenant, dask_address=address)
        script = tmp_path / "run_flow.py"
        script.write_text(RUN)
        store = tmp_path / "store"
        done = subprocess.run(
            [sys.executable, str(script), _entrypoint(), str(config), str(source), str(store)],
            cwd=tmp_path, env={**env, "PREFECT_HOME": str(tmp_path / "prefect-home")},
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        version = done.stdout.split("VERSION", 1)[1].split()[0]
        assert (store / "remote" / "versions" / version / "manifest.json").is_file()
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
