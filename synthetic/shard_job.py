"""Generating one recording shard: its sessions, its planted lines, its part of the truth.

Shards are independent (each has its own random stream derived from the corpus seed and the
shard number, its own family pool and its own truth part), so they can run in parallel processes
and the bytes never depend on how many processes ran. Sessions are numbered corpus-wide round
robin (shard ``i`` holds sessions ``i, i+K, i+2K...``); a session's turns stay together.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from golden_distill.datasets.quarantine import TRUNCATED_STREAM
from golden_distill.synthetic import broken
from golden_distill.synthetic.families import FamilyPlanner, Member
from golden_distill.synthetic.pii import pools_for
from golden_distill.synthetic.records import (
    BASE_EPOCH_MS,
    BuiltRecord,
    SessionContext,
    build_record,
    locate,
)
from golden_distill.synthetic.scenarios import Scenario, StepSpec
from golden_distill.synthetic.truth import TruthWriter
from golden_distill.synthetic.writer import ShardStream, shard_name

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
_WEIGHTS = [1 / (r + 1) ** ZIPF_EXPONENT for r in range(len(TENANTS))]
_PAIR_A = Scenario(
    "none", "none", "none", (StepSpec("erp_get_order"), StepSpec("erp_update_order")),
    "success", "normal", False,
)  # fmt: skip
_PAIR_B = Scenario(
    "none", "none", "none", (StepSpec("erp_get_order"), StepSpec("erp_cancel_order")),
    "success", "normal", False,
)  # fmt: skip


@dataclass(frozen=True)
class ShardJob:
    """Everything one shard needs (picklable: it crosses to a worker process)."""

    out_dir: str
    seed: int
    shard: int
    shards: int  # the corpus' shard count: session numbering is round robin over it
    sessions: int  # the corpus' session count
    compress: str | None
    limit: int
    broken: tuple[tuple[str, int], ...]  # (kind, variant) planted mid-file in this shard
    truncate: bool


class _Shard:
    def __init__(self, job: ShardJob) -> None:
        self.job = job
        self.rng = random.Random(job.seed * 1_000_003 + job.shard)
        self.tag = f"{job.seed & 0xFFFFFFFF:08x}-{job.shard:03d}"
        self.pools = pools_for(job.seed)
        self.planner = FamilyPlanner(self.rng, prefix=f"{job.shard:03d}-")
        path = Path(job.out_dir) / shard_name(job.shard, job.compress)
        self.stream = ShardStream(path, job.compress)
        self.truth = TruthWriter(Path(job.out_dir) / f"_truth.part-{job.shard:04d}.jsonl")
        self.records = 0

    def emit(self, member: Member, ctx: SessionContext, turn: int, value_seed: int,
             text_override: str | None = None) -> BuiltRecord:  # fmt: skip
        self.records += 1
        rid = f"rec-{self.tag}-{self.records:08d}"
        built = build_record(member, value_seed, ctx, record_id=rid,
                             trace_id=f"trc-{self.tag}-{self.records:08d}", turn_index=turn,
                             pools=self.pools)  # fmt: skip
        if text_override is not None:
            built.record["initialUserInput"] = text_override
            built.record["context"]["messages"][-1]["content"] = text_override
            built.user_text = text_override
        line = orjson.dumps(built.record)
        if len(line) > self.job.limit:
            raise ValueError(f"record {rid} is larger than the oversized-line limit")
        ln = self.stream.write_line(line)
        pii, keys = locate(built, line)
        fam = member.family
        if fam.emitted == 0:
            self.truth.families += 1
        fam.emitted += 1
        self.truth.record(record_id=rid, session_id=ctx.session_id, tenant_id=ctx.tenant_id,
                          file=self.stream.path.name, line=ln, family=fam.family_id,
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
        return SessionContext(tenant, f"ses-{self.tag[:8]}-{index:08d}", user, start)

    # -- planted junk -------------------------------------------------------------------------
    def junk_record(self, rid: str) -> dict[str, Any]:
        """A well-formed background recording to corrupt (never a valid record of the truth)."""
        lang = self.rng.choice(("en", "zh"))
        fam = self.planner.new_family(lang, ("none", "none", "none"), size=1)
        member = FamilyPlanner.take_all(fam)[0]
        ctx = SessionContext("t-acme", f"ses-{rid}", "u-junk-00000", BASE_EPOCH_MS)
        return build_record(member, self.rng.getrandbits(64), ctx, record_id=rid, trace_id=rid,
                            turn_index=0, pools=self.pools).record  # fmt: skip

    def plant(self, kind: str, variant: int) -> None:
        rid = f"rec-{self.tag}-bad-{len(self.truth.broken) + 1:04d}"
        rec = self.junk_record(rid)
        if kind == broken.INVALID_JSON:
            line = broken.invalid_json(rec, variant, self.rng)
        elif kind == broken.WRONG_TYPE:
            line = broken.wrong_type(rec, variant)
        elif kind == broken.MISSING_FIELD:
            line = broken.missing_field(rec, variant)
        else:
            line = broken.oversized(rec, self.job.limit)
        ln = self.stream.write_line(line)
        self.truth.broken_line(file=self.stream.path.name, line=ln, reason=kind, record_id=rid)

    def close(self) -> None:
        if not self.job.truncate:
            self.stream.close()
            return
        rid = f"rec-{self.tag}-lost-0001"
        ln = self.stream.close_truncated(orjson.dumps(self.junk_record(rid)))
        self.truth.lost.append(rid)
        self.truth.broken_line(file=self.stream.path.name, line=ln, reason=TRUNCATED_STREAM,
                               record_id=rid)  # fmt: skip


def run_shard(job: ShardJob) -> dict[str, Any]:
    """Write one shard and its truth part; returns the part's counters (see ``TruthWriter``)."""
    sh = _Shard(job)
    rng = sh.rng
    indices = range(job.shard, job.sessions, job.shards)
    schedule: dict[int, list[tuple[str, int]]] = {}
    for kind, variant in job.broken:
        pos = rng.randrange(len(indices)) if len(indices) else 0
        schedule.setdefault(pos, []).append((kind, variant))
    first_pair = min(3, len(indices) - 2) if job.shard == 0 else -1
    pending_b: tuple[Member, int, str, str] | None = None
    for local, index in enumerate(indices):
        for kind, variant in schedule.get(local, ()):
            sh.plant(kind, variant)
        if pending_b is not None:
            member_b, value_seed, text, tenant = pending_b
            pending_b = None
            sh.emit(member_b, sh.session_context(index, tenant), 0, value_seed, text)
            continue
        tenant, lang = rng.choices(TENANTS, weights=_WEIGHTS)[0]
        ctx = sh.session_context(index, tenant)
        if local < len(indices) - 1 and (local == first_pair or rng.random() < PAIR_RATE):
            fam_a = sh.planner.new_family(lang, size=1, ambiguous=True, scenario=_PAIR_A)
            fam_b = sh.planner.new_family(lang, size=1, scenario=_PAIR_B, request=fam_a.request)
            fam_b.pending = list(fam_a.pending)
            value_seed = rng.getrandbits(64)
            built = sh.emit(FamilyPlanner.take_all(fam_a)[0], ctx, 0, value_seed)
            pending_b = (FamilyPlanner.take_all(fam_b)[0], value_seed, built.user_text, tenant)
            sh.truth.pairs.append([built.record["recordId"], f"rec-{sh.tag}-{sh.records + 1:08d}"])
            continue
        turns = rng.choices((1, 2, 3), weights=(0.6, 0.28, 0.12))[0]
        for turn in range(turns):
            sh.emit(sh.planner.next_member(lang), ctx, turn, rng.getrandbits(64))
    if not len(indices):
        for kind, variant in schedule.get(0, ()):
            sh.plant(kind, variant)
    sh.close()
    state = sh.truth.close()
    state["file"] = sh.stream.path.name
    state["bytes"] = sh.stream.path.stat().st_size
    return state
