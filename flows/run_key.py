"""The key of a whole run, so an unchanged rerun can be answered without starting Prefect.

A published version's content is a function of its shards' contents, the config, the set, the
pseudonym key and the code (each shard's cache key already folds in content, the config sections
that shape it, the code digest and the time window). The flow records this run key in the
version's manifest stats; `golden run` recomputes it *before* booting Prefect's temporary API and,
when it equals the one recorded by the set's `latest` version, reports that version instead of
running anything: on a no-op rerun the API boot was most of the wall time.

Anything uncertain (a shard that cannot be fingerprinted, a key held in a Prefect Secret block,
any error while checking) means "run the flow": the flow then does its own, cache-based check and
reports errors with their stage.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from golden_distill.filters.review import log_digest
from golden_distill.flows.caching import pipeline_version
from golden_distill.flows.config import config_sha256
from golden_distill.flows.params import DistillParams, ResolvedRun
from golden_distill.flows.tasks.global_steps import review_log


def run_key(
    resolved: ResolvedRun, shard_keys: Sequence[str | None], key_id: str | None
) -> str | None:
    """sha256 over every shard cache key, the whole config, set, key id and code; None when a
    shard has no cache key (uncacheable input: the run must happen)."""
    if not shard_keys or any(k is None for k in shard_keys):
        return None
    digest = hashlib.sha256(config_sha256(resolved.config).encode())
    digest.update(f"{resolved.set_name}\x1f{key_id or '-'}\x1f{pipeline_version()}".encode())
    digest.update(log_digest(review_log(resolved)).encode())  # a new review decision counts
    for key in sorted(k for k in shard_keys if k):
        digest.update(key.encode())
    return digest.hexdigest()


def unchanged_latest(params: DistillParams) -> tuple[str, str] | None:
    """(version, report path) of the set's `latest` version when it was made by exactly this run;
    None when the flow has to run (``--force``, anything changed, or anything uncertain)."""
    if params.force:
        return None
    try:
        resolved = params.resolve()
        red = resolved.config.redaction
        if red.key_secret_block:  # resolving a Secret block needs the Prefect API
            return None
        from golden_distill.flows.distill import plan_shards
        from golden_distill.flows.source_files import discover_shards
        from golden_distill.flows.tasks.global_steps import latest_made_from, version_location
        from golden_distill.redaction.keys import resolve_key

        key_id = resolve_key(local_key_file=red.local_key_file).key.key_id
        shards = discover_shards(resolved.sources, memo=resolved.work_dir / "fingerprints.json")
        key = run_key(resolved, [job.cache_key for job in plan_shards(resolved, shards)], key_id)
        found = latest_made_from(resolved, key, stat="run_key") if key else None
    except Exception:  # the flow will redo the work and report any error with its stage
        return None
    if found is None:
        return None
    version, _stats = found
    return version, version_location(resolved, version)
