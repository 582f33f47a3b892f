"""``generate_corpus``: a deterministic synthetic corpus of native recordings with its truth.

The corpus is cut into independent shards (``shard_job.py``), generated in ``jobs`` worker
processes (``jobs`` > 1) or in this process (the default, ``jobs=1``); the files are the
same bytes either way. Each shard streams its records to its file and its truth part to disk, so
memory is bounded by the family pool and the compressor buffers, whatever ``sessions`` is.
Broken lines are spread over the shards; truncated streams end the last shards (or, without
compression, one extra ``.gz`` shard holding only the cut line).
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.synthetic import broken
from golden_distill.synthetic.shard_job import (
    OPT_OUT_TENANT,
    TENANTS,
    ZIPF_EXPONENT,
    ShardJob,
    run_shard,
)
from golden_distill.synthetic.truth import write_truth

GENERATOR_VERSION = "2"
#: From this many sessions `golden generate` uses one worker per core unless told otherwise.
PARALLEL_FROM_SESSIONS = 20_000


@dataclass(frozen=True)
class GenerateSummary:
    out_dir: Path
    sessions: int
    records: int
    files: list[str]
    bytes_written: int
    broken_counts: dict[str, int]
    funnel_counts: dict[str, int]
    family_count: int
    exact_group_members: int
    same_text_pairs: int
    seconds: float = field(compare=False)


def _clean(out_dir: Path) -> None:
    """Remove this generator's own earlier outputs so no stale shard survives a re-run."""
    for p in (*out_dir.glob("recordings-*.jsonl*"), *out_dir.glob("_truth*")):
        p.unlink()


def plan_jobs(out_dir: Path, *, sessions: int, seed: int, shards: int, compress: str | None,
              broken_per_kind: int, limit: int) -> list[ShardJob]:  # fmt: skip
    """One job per shard (plus the extra cut ``.gz`` shard of an uncompressed corpus)."""
    planted = [(kind, v) for kind in broken.MID_FILE_KINDS for v in range(broken_per_kind)]
    n_trunc = min(broken_per_kind, shards) if compress else 0
    jobs = [
        ShardJob(
            str(out_dir),
            seed,
            i,
            shards,
            sessions,
            compress,
            limit,
            tuple(p for n, p in enumerate(planted) if n % shards == i),
            truncate=i >= shards - n_trunc,
        )
        for i in range(shards)
    ]
    if compress is None and broken_per_kind:
        jobs.append(ShardJob(str(out_dir), seed, shards, shards, 0, "gz", limit, (), True))
    return jobs


def generate_corpus(out_dir: Path, *, sessions: int, seed: int, shards: int = 1,
                    compress: str | None = None, broken_per_kind: int = 3,
                    oversized_limit: int | None = None,
                    jobs: int = 1) -> GenerateSummary:  # fmt: skip
    """Write ``recordings-NNNN.jsonl[.gz|.zst]`` shards and the truth files into ``out_dir``.

    ``oversized_limit`` is the line size the planted oversized lines just exceed (default: the
    ingest default ``max_line_bytes``); ingest tests pass the truth's ``oversized_line_limit``.
    ``jobs`` > 1 generates shards in that many worker processes (spawned: a calling script
    needs the ``if __name__ == "__main__"`` guard); the default 1 runs in this process, which is
    safe anywhere (inside flows, workers, tests). The bytes are the same either way.
    """
    if sessions < 1 or shards < 1 or broken_per_kind < 0:
        raise ValueError("sessions and shards must be >= 1, broken_per_kind >= 0")
    if shards > sessions:
        raise ValueError("shards must not exceed sessions")
    if compress not in (None, "gz", "zst"):
        raise ValueError(f"compress must be gz, zst or none (got {compress!r})")
    limit = oversized_limit or IngestConfig().max_line_bytes
    if limit < broken.MIN_OVERSIZED_LIMIT:
        raise ValueError(f"oversized_limit must be >= {broken.MIN_OVERSIZED_LIMIT} bytes")
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clean(out_dir)
    planned = plan_jobs(out_dir, sessions=sessions, seed=seed, shards=shards, compress=compress,
                        broken_per_kind=broken_per_kind, limit=limit)  # fmt: skip
    workers = min(jobs or 1, len(planned))
    states: list[dict[str, Any]]
    if workers <= 1:
        states = [run_shard(job) for job in planned]
    else:
        ctx = multiprocessing.get_context("spawn")  # no fork of a possibly threaded parent
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            states = list(pool.map(run_shard, planned))
    files = [s["file"] for s in states]
    truth = write_truth(
        out_dir,
        states,
        {
            "generator_version": GENERATOR_VERSION,
            "seed": seed,
            "sessions": sessions,
            "shards": shards,
            "compress": compress,
            "files": files,
            "oversized_line_limit": limit,
            "opt_out_tenant": OPT_OUT_TENANT,
            "tenants": {
                t: {"language": lang, "zipf_rank": i + 1, "zipf_exponent": ZIPF_EXPONENT}
                for i, (t, lang) in enumerate(TENANTS)
            },
        },
    )
    return GenerateSummary(
        out_dir=out_dir,
        sessions=sessions,
        records=truth["valid_records"],
        files=files,
        bytes_written=sum(s["bytes"] for s in states),
        broken_counts=truth["broken_counts"],
        funnel_counts=truth["funnel_counts"],
        family_count=truth["family_count"],
        exact_group_members=truth["exact_group_members"],
        same_text_pairs=len(truth["same_text_pairs"]),
        seconds=time.perf_counter() - started,
    )
