"""Cache keys for shard tasks: what a shard's result depends on, and nothing else.

Prefect's default policy (``TASK_SOURCE`` + inputs) hashes only the task function's own source,
not the helpers in filters/ and redaction/ that do the work, so a change there would silently
reuse stale results. Our key is instead:

    shard content sha256 + hash of the config sections that shape shard output
    + pipeline version (package version + a digest of the source files that shape output)
    + the run's time window

The redaction task's key adds the chosen case ids and the pseudonym key id (a new key must
re-pseudonymise); see tasks/redact.py.

Settings that change only *how* a run executes (`run:`) or *where* it publishes (`publish:`)
are left out, so a Dask run reuses shard results of a local run.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

from golden_distill.flows.config import PipelineConfig, config_sha256

#: Config sections whose values change what a shard task produces.
SHARD_SECTIONS = ("ingest", "funnels", "redaction", "dedup")
#: Installed code folders whose modules can shape a published version (cases, clusters, report,
#: manifest). The sample-data generator (`golden_distill.synthetic`) is a tool, not the product,
#: and is not among them: editing a generator phrase must not invalidate every nightly cache.
OUTPUT_CODE_FOLDERS = ("datasets", "filters", "redaction", "flows")
#: Modules inside those folders that only talk to a person (command line, help text, progress
#: bars, the demo driver, the docs generator, the review page and what it shows): they never
#: change what is published (a review decision does, through the log's digest in the run key).
NOT_OUTPUT_CODE = (
    "flows/cli/", "flows/demo.py", "flows/progress.py", "flows/config_reference.py",
    "flows/review_app/", "flows/review_log.py", "filters/review_case.py",
    "filters/review_queue.py",
)  # fmt: skip


def shard_config_sha256(config: PipelineConfig) -> str:
    """The shard-shaping settings. Quotas (``funnels.quotas``) are global, never a shard's:
    changing one keeps the shard cache and lets a grown set apply the new caps to its carried
    cases instead of rebuilding (``filters/grown_quotas.py``)."""
    dumped = config.model_dump_json(
        include=set(SHARD_SECTIONS), exclude={"funnels": {"quotas": True}}
    )
    return hashlib.sha256(dumped.encode()).hexdigest()


def output_code_files(folders: dict[str, Path]) -> list[tuple[str, Path]]:
    """``(folder/relative/path.py, file)`` for every module that shapes output, sorted.

    ``folders`` maps each code folder name to where it is installed (the repository folder for an
    editable install, ``site-packages/golden_distill/<folder>`` for a wheel; the relative names
    are the same in both, so both give the same digest).
    """
    found = []
    for name, root in folders.items():
        for path in root.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            relative = str(PurePosixPath(name, *path.relative_to(root).parts))
            if not relative.startswith(NOT_OUTPUT_CODE):
                found.append((relative, path))
    return sorted(found)


def code_digest(files: Iterable[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for relative, path in files:
        digest.update(relative.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def installed_code_folders() -> dict[str, Path]:
    """Where each output-shaping code folder is installed, found through the import system."""
    folders = {}
    for name in OUTPUT_CODE_FOLDERS:
        spec = importlib.util.find_spec(f"golden_distill.{name}")
        locations = list(spec.submodule_search_locations or []) if spec else []
        if not locations:  # pragma: no cover - the package is always importable here
            raise RuntimeError(f"golden_distill.{name} is not installed")
        folders[name] = Path(locations[0])
    return folders


@lru_cache(maxsize=1)
def pipeline_version() -> str:
    """`<package version>+<digest of the code>`: an edit to a module that shapes output changes it.

    Only the modules that can change a published version count (``OUTPUT_CODE_FOLDERS`` minus
    ``NOT_OUTPUT_CODE``), so editing the generator or a command's help text keeps the caches.
    """
    try:
        version = metadata.version("golden-distill")
    except metadata.PackageNotFoundError:  # pragma: no cover - always installed in practice
        version = "0"
    return f"{version}+{code_digest(output_code_files(installed_code_folders()))}"


def shard_cache_key(
    *,
    fingerprint: str,
    config_sha256: str,
    version: str,
    window: tuple[str | None, str | None],
) -> str:
    parts = [fingerprint, config_sha256, version, window[0] or "-", window[1] or "-"]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def version_inputs_sha256(
    config: PipelineConfig,
    set_name: str,
    key_id: str | None,
    keys: Sequence[str | None],
    head: str = "",
    extra: str | None = None,
) -> str | None:
    """What a published version is made of, as one sha256: ``head`` (e.g. the selection's key),
    the whole config, the set, the pseudonym key id, the code, ``extra`` (e.g. the run's window),
    and ``keys`` (shard or redaction cache keys, in any order). None when a key is None (an
    uncacheable input: no reuse).

    Behind both the run key (flows/run_key.py, checked before Prefect starts) and the flow's
    ``inputs_sha256`` (flows/tasks/publish.py, checked before publishing).
    """
    if any(key is None for key in keys):
        return None
    digest = hashlib.sha256(head.encode())
    digest.update(config_sha256(config).encode())
    digest.update(f"{set_name}\x1f{key_id or '-'}\x1f{pipeline_version()}".encode())
    if extra is not None:
        digest.update(extra.encode())
    for key in sorted(k for k in keys if k):
        digest.update(key.encode())
    return digest.hexdigest()


def job_cache_key(context: Any, parameters: dict[str, Any]) -> str | None:
    """Prefect ``cache_key_fn`` of the per-shard tasks (shard, key pass, redaction): the key the
    flow computed for the task's ``job``.

    Returning None (an uncacheable shard, or caching turned off) makes Prefect run the task.
    """
    job = parameters["job"]
    return job.cache_key
