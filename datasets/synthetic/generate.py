"""``generate_corpus``: a deterministic synthetic corpus of native recordings with its truth.

One pass, one seeded random stream, records streamed to shard files: memory stays bounded by the
family pool and the compressor buffers, whatever ``sessions`` is. Sessions go to shards round
robin (a session's turns stay together). Broken lines are scheduled up front at random session
positions; truncated streams end the last shards (or, without compression, one extra ``.gz``
shard holding only the cut line).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from golden_distill.datasets.quarantine import TRUNCATED_STREAM
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.synthetic import broken
from golden_distill.datasets.synthetic.families import FamilyPlanner, Member
from golden_distill.datasets.synthetic.pii import PiiPools
from golden_distill.datasets.synthetic.records import (
    BASE_EPOCH_MS,
    BuiltRecord,
    SessionContext,
    build_record,
    locate,
)
from golden_distill.datasets.synthetic.scenarios import Scenario, StepSpec
from golden_distill.datasets.synthetic.truth import TruthWriter
from golden_distill.datasets.synthetic.writer import ShardStream, shard_name

GENERATOR_VERSION = "1"
#: (tenant id, language). Volumes are Zipf over this order; the opt-out tenant is mid-sized.
TENANTS: tuple[tuple[str, str], ...] = (
    ("t-acme", "en"), ("t-northwind", "en"), ("t-huaxin", "zh"), ("t-globex", "en"),
    ("t-dongfang", "zh"), ("t-initech", "en"), ("t-umbrella", "en"), ("t-changjiang", "zh"),
    ("t-stark", "en"), ("t-wayne", "en"), ("t-jinling", "zh"), ("t-hooli", "en"),
)  # fmt: skip
OPT_OUT_TENANT = "t-globex"
ZIPF_EXPONENT = 1.1
PAIR_RATE = 0.004
USERS_PER_TENANT = 5_000
_WEEK_MS = 7 * 24 * 3600 * 1000
_PAIR_A = Scenario("none", "none", "none", (StepSpec("erp_get_order"),
                   StepSpec("erp_update_order")), "success", "normal", False)  # fmt: skip
_PAIR_B = Scenario("none", "none", "none", (StepSpec("erp_get_order"),
                   StepSpec("erp_cancel_order")), "success", "normal", False)  # fmt: skip


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


class _Run:
    def __init__(self, out_dir: Path, seed: int, shards: int, compress: str | None,
                 limit: int) -> None:  # fmt: skip
        self.rng = random.Random(seed)
        self.tag = f"{seed & 0xFFFFFFFF:08x}"
        self.pools = PiiPools(seed)
        self.planner = FamilyPlanner(self.rng)
        self.limit = limit
        self.streams = [
            ShardStream(out_dir / shard_name(i, compress), compress) for i in range(shards)
        ]
        self.truth = TruthWriter(out_dir)
        self.records = 0
        self.families_emitted = 0
        self.weights = [1 / (r + 1) ** ZIPF_EXPONENT for r in range(len(TENANTS))]

    # -- valid records ------------------------------------------------------------------------
    def emit(self, member: Member, ctx: SessionContext, turn: int, stream: ShardStream,
             value_seed: int, text_override: str | None = None) -> BuiltRecord:  # fmt: skip
        self.records += 1
        rid = f"rec-{self.tag}-{self.records:09d}"
        built = build_record(member, value_seed, ctx, record_id=rid,
                             trace_id=f"trc-{self.tag}-{self.records:09d}", turn_index=turn,
                             pools=self.pools)  # fmt: skip
        if text_override is not None:
            built.record["initialUserInput"] = text_override
            built.record["context"]["messages"][-1]["content"] = text_override
            built.user_text = text_override
        line = orjson.dumps(built.record)
        if len(line) > self.limit:
            raise ValueError(f"record {rid} is larger than the oversized-line limit {self.limit}")
        ln = stream.write_line(line)
        pii, keys = locate(built, line)
        fam = member.family
        if fam.emitted == 0:
            self.families_emitted += 1
        fam.emitted += 1
        self.truth.record(record_id=rid, session_id=ctx.session_id, tenant_id=ctx.tenant_id,
                          file=stream.path.name, line=ln, family=fam.family_id,
                          exact_group=member.exact_group, scenario=fam.scenario.label,
                          funnels=fam.scenario.funnels, pii=pii, keys=keys)  # fmt: skip
        ctx.history += [{"role": "user", "content": built.user_text},
                        {"role": "assistant", "content": built.answer}]  # fmt: skip
        ctx.history_values += [
            (p[0], p[1]) for p in pii if {"initialUserInput", "finalOutputText"} & set(p[2])
        ]
        return built

    def session_context(self, index: int, tenant: str) -> SessionContext:
        user = f"u-{tenant[2:6]}-{self.rng.randrange(USERS_PER_TENANT):05d}"
        start = BASE_EPOCH_MS - _WEEK_MS + self.rng.randrange(_WEEK_MS)
        return SessionContext(tenant, f"ses-{self.tag}-{index:08d}", user, start)

    # -- planted junk -------------------------------------------------------------------------
    def junk_record(self, rid: str) -> dict:
        """A well-formed background recording to corrupt (never a valid record of the truth)."""
        lang = self.rng.choice(("en", "zh"))
        fam = self.planner.new_family(lang, ("none", "none", "none"), size=1)
        member = FamilyPlanner.take_all(fam)[0]
        ctx = SessionContext("t-acme", f"ses-{rid}", "u-junk-00000", BASE_EPOCH_MS)
        return build_record(member, self.rng.getrandbits(64), ctx, record_id=rid, trace_id=rid,
                            turn_index=0, pools=self.pools).record  # fmt: skip

    def plant(self, kind: str, variant: int, stream: ShardStream) -> None:
        rid = f"rec-{self.tag}-bad-{len(self.truth.broken) + 1:04d}"
        rec = self.junk_record(rid)
        if kind == broken.INVALID_JSON:
            line = broken.invalid_json(rec, variant, self.rng)
        elif kind == broken.WRONG_TYPE:
            line = broken.wrong_type(rec, variant)
        elif kind == broken.MISSING_FIELD:
            line = broken.missing_field(rec, variant)
        else:
            line = broken.oversized(rec, self.limit)
        ln = stream.write_line(line)
        self.truth.broken_line(file=stream.path.name, line=ln, reason=kind, record_id=rid)

    def truncate(self, stream: ShardStream) -> None:
        rid = f"rec-{self.tag}-lost-{len(self.truth.lost) + 1:04d}"
        line = orjson.dumps(self.junk_record(rid))
        ln = stream.close_truncated(line)
        self.truth.lost.append(rid)
        self.truth.broken_line(file=stream.path.name, line=ln, reason=TRUNCATED_STREAM,
                               record_id=rid)  # fmt: skip


def generate_corpus(out_dir: Path, *, sessions: int, seed: int, shards: int = 1,
                    compress: str | None = None, broken_per_kind: int = 3,
                    oversized_limit: int | None = None) -> GenerateSummary:  # fmt: skip
    """Write ``recordings-NNNN.jsonl[.gz|.zst]`` shards and the truth files into ``out_dir``.

    ``oversized_limit`` is the line size the planted oversized lines just exceed (default: the
    ingest default ``max_line_bytes``); ingest tests pass the truth's ``oversized_line_limit``.
    """
    if sessions < 1 or shards < 1 or broken_per_kind < 0:
        raise ValueError("sessions and shards must be >= 1, broken_per_kind >= 0")
    if compress not in (None, "gz", "zst"):
        raise ValueError(f"compress must be gz, zst or none (got {compress!r})")
    limit = oversized_limit or IngestConfig().max_line_bytes
    if limit < broken.MIN_OVERSIZED_LIMIT:
        raise ValueError(f"oversized_limit must be >= {broken.MIN_OVERSIZED_LIMIT} bytes")
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _clean(out_dir)
    run = _Run(out_dir, seed, shards, compress, limit)
    rng = run.rng
    schedule: dict[int, list[tuple[str, int]]] = {}
    for kind in broken.MID_FILE_KINDS:
        for variant in range(broken_per_kind):
            schedule.setdefault(rng.randrange(sessions), []).append((kind, variant))
    first_pair = min(3, sessions - 2)
    pending_b: tuple[Member, int, str, str] | None = None
    for s in range(sessions):
        stream = run.streams[s % shards]
        for kind, variant in schedule.get(s, ()):
            run.plant(kind, variant, stream)
        if pending_b is not None:
            member_b, value_seed, text, tenant = pending_b
            pending_b = None
            run.emit(member_b, run.session_context(s, tenant), 0, stream, value_seed, text)
            continue
        tenant, lang = rng.choices(TENANTS, weights=run.weights)[0]
        ctx = run.session_context(s, tenant)
        if s < sessions - 1 and (s == first_pair or rng.random() < PAIR_RATE):
            fam_a = run.planner.new_family(lang, size=1, ambiguous=True, scenario=_PAIR_A)
            fam_b = run.planner.new_family(lang, size=1, scenario=_PAIR_B, request=fam_a.request)
            fam_b.pending = list(fam_a.pending)
            value_seed = rng.getrandbits(64)
            built = run.emit(FamilyPlanner.take_all(fam_a)[0], ctx, 0, stream, value_seed)
            member_b = FamilyPlanner.take_all(fam_b)[0]
            pending_b = (member_b, value_seed, built.user_text, tenant)
            run.truth.pairs.append(
                [built.record["recordId"], f"rec-{run.tag}-{run.records + 1:09d}"]
            )
            continue
        turns = rng.choices((1, 2, 3), weights=(0.6, 0.28, 0.12))[0]
        for turn in range(turns):
            run.emit(run.planner.next_member(lang), ctx, turn, stream, rng.getrandbits(64))
    n_trunc = min(broken_per_kind, shards) if compress and broken_per_kind else 0
    for i, stream in enumerate(run.streams):
        if i >= shards - n_trunc:
            run.truncate(stream)
        else:
            stream.close()
    files = [st.path.name for st in run.streams]
    if compress is None and broken_per_kind:
        extra = ShardStream(out_dir / shard_name(shards, "gz"), "gz")
        run.truncate(extra)
        files.append(extra.path.name)
    truth = run.truth.close(
        {
            "generator_version": GENERATOR_VERSION,
            "seed": seed,
            "sessions": sessions,
            "shards": shards,
            "compress": compress,
            "files": files,
            "oversized_line_limit": limit,
            "opt_out_tenant": OPT_OUT_TENANT,
            "tenants": {t: {"language": lang, "zipf_rank": i + 1}
                        for i, (t, lang) in enumerate(TENANTS)},  # fmt: skip
            "family_count": run.families_emitted,
        }
    )
    size = sum((out_dir / f).stat().st_size for f in files)
    return GenerateSummary(
        out_dir=out_dir,
        sessions=sessions,
        records=truth["valid_records"],
        files=files,
        bytes_written=size,
        broken_counts=truth["broken_counts"],
        funnel_counts=truth["funnel_counts"],
        family_count=run.families_emitted,
        exact_group_members=truth["exact_group_members"],
        same_text_pairs=len(truth["same_text_pairs"]),
        seconds=time.perf_counter() - started,
    )
