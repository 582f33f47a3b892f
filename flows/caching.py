"""Cache keys for shard tasks: what a shard's result depends on, and nothing else.

Prefect's default policy (``TASK_SOURCE`` + inputs) hashes only the task function's own source,
not the helpers in filters/ and redaction/ that do the work, so a change there would silently
reuse stale results. Our key is instead:

    shard content sha256 + hash of the config sections that shape shard output
    + pipeline version (package version + a digest of the package's source files)
    + the run's time window

The redaction task's key adds the chosen case ids and the pseudonym key id (a new key must
re-pseudonymise); see tasks/redact.py.

Settings that change only *how* a run executes (`run:`) or *where* it publishes (`publish:`)
are left out, so a Dask run reuses shard results of a local run.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import golden_distill.flows as flows_package
from golden_distill.flows.config import PipelineConfig

#: Config sections whose values change what a shard task produces.
SHARD_SECTIONS = ("ingest", "funnels", "redaction", "dedup")
_CODE_FOLDERS = ("flows", "filters", "redaction", "datasets")


def shard_config_sha256(config: PipelineConfig) -> str:
    dumped = config.model_dump_json(include=set(SHARD_SECTIONS))
    return hashlib.sha256(dumped.encode()).hexdigest()


@lru_cache(maxsize=1)
def pipeline_version() -> str:
    """`<package version>+<digest of the code>`: an edit to any pipeline module changes it."""
    try:
        version = metadata.version("golden-distill")
    except metadata.PackageNotFoundError:  # pragma: no cover - always installed in practice
        version = "0"
    root = Path(flows_package.__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for folder in _CODE_FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return f"{version}+{digest.hexdigest()[:12]}"


def shard_cache_key(
    *,
    fingerprint: str,
    config_sha256: str,
    version: str,
    window: tuple[str | None, str | None],
) -> str:
    parts = [fingerprint, config_sha256, version, window[0] or "-", window[1] or "-"]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def shard_task_cache_key(context: Any, parameters: dict[str, Any]) -> str | None:
    """Prefect ``cache_key_fn`` for the shard task: the key computed by the flow for this job.

    Returning None (an uncacheable shard, or caching turned off) makes Prefect run the task.
    """
    job = parameters["job"]
    return job.cache_key
