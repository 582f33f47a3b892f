"""What a task body checks in whichever process runs it: the flow's code, the run's pseudonym
key, a cached result's files.

Without Prefect on purpose: the redaction body also runs in lean helper processes
(``flows/lean_helpers.py``) that never import it.
"""

from __future__ import annotations

from typing import Any

from golden_distill.flows.caching import pipeline_version
from golden_distill.flows.config import PipelineConfig
from golden_distill.flows.errors import StageError
from golden_distill.flows.work_folder import WorkFolder
from golden_distill.redaction.keys import PseudonymKey, PseudonymKeyError, resolve_key


def check_same_code(expected: str, label: str) -> None:
    """A worker (Dask, process pool) running other code than the flow would file its results
    under the wrong cache key and mix two pipeline versions in one golden set."""
    here = pipeline_version()
    if expected and here != expected:
        raise StageError(
            "shard",
            f"shard {label}: this worker runs pipeline {here}, the flow {expected}; "
            "deploy the same code to every worker",
        )


def run_key(config: PipelineConfig, expected_key_id: str | None) -> PseudonymKey:
    """This worker's pseudonym key, refused unless it is the run's: a worker with another key
    would publish pseudonyms (or list digests) inconsistent with the rest. Ids only in the
    message (never key material)."""
    red = config.redaction
    key = resolve_key(secret_block=red.key_secret_block, local_key_file=red.local_key_file).key
    if expected_key_id is not None and key.key_id != expected_key_id:
        raise PseudonymKeyError(
            f"this worker's pseudonym key is {key.key_id}, the run's is {expected_key_id}"
        )
    return key


def outputs_present(result: Any, work: WorkFolder) -> bool:
    """A cached result is only usable while the files it names still exist."""
    names = ("candidates_path", "quarantine_path", "decisions_path", "signatures_path",
             "identities_path", "redacted_path")  # fmt: skip
    paths = [getattr(result, n) for n in names if getattr(result, n, None)]
    return all(work.exists(p) for p in paths)
