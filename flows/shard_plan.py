"""Planning the per-shard jobs: one job per input shard, with its cache key and folder.

Used by the flow (flows/distill.py) and by the run key (flows/run_key.py), which checks an
unchanged rerun before the flow starts; it lives here, below both, so neither imports the other.
"""

from __future__ import annotations

import time

from golden_distill.flows.caching import pipeline_version, shard_cache_key, shard_config_sha256
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.source_files import Shard
from golden_distill.flows.tasks.jobs import ShardJob


def plan_shards(resolved: ResolvedRun, shards: list[Shard]) -> list[ShardJob]:
    """One job per shard, with its cache key and content-addressed output folder."""
    params, config = resolved.params, resolved.config
    window = (
        params.since.isoformat() if params.since else None,
        params.until.isoformat() if params.until else None,
    )
    config_sha = shard_config_sha256(config)
    version = pipeline_version()
    jobs = []
    for index, shard in enumerate(shards):
        key = None
        if shard.fingerprint and config.run.cache_shards:
            key = shard_cache_key(
                fingerprint=shard.fingerprint,
                config_sha256=config_sha,
                version=version,
                window=window,
            )
        # A cacheable shard's folder is named by its key (content-addressed, reused by reruns);
        # an uncacheable one gets a fresh folder per run.
        folder = key[:32] if key else f"nocache-{time.time_ns()}-{index}"
        jobs.append(
            ShardJob(
                index=index,
                shard=shard,
                config=config,
                out_dir=str(resolved.work_dir / "shards" / folder),
                cache_key=key,
                pipeline_version=version,
                source_format=params.source_format,
                since=window[0],
                until=window[1],
            )
        )
    return jobs
