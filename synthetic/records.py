"""Assembling one native recording (camelCase, as production recorders emit it) from a member.

Two random streams per record: the *wording* stream (seeded by the member's ``struct_seed``)
decides everything an exact duplicate shares (wording, optional fields, latencies, which context
pieces appear); the *value* stream decides names, ids, amounts and dates. After building, the
record is scanned for every value it was given, so the truth lists each personal value and key
exactly where it landed.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from golden_distill.synthetic.catalogue import TOOLS
from golden_distill.synthetic.families import Member
from golden_distill.synthetic.pii import PiiPools, pick
from golden_distill.synthetic.scenarios import amount_for, confidence_for
from golden_distill.synthetic.slots import (
    KEY_SLOTS,
    PII_SLOTS,
    compile_template,
    draw_slots,
)
from golden_distill.synthetic.text import answer_text, fill_text, reword

_ERRORS = (
    (
        "upstream {system} timed out after 30000 ms while loading customer {email}",
        "503 Service Unavailable: {system} rejected API key {api_key}",
        "validation failed: contact {person} ({phone}) is locked",
    ),
    (
        "{system}接口超时（30000毫秒），客户{email}",
        "503：{system}拒绝了密钥{api_key}",
        "校验失败：联系人{person}（{phone}）已锁定",
    ),
)
_MEMORY_NOTES = (
    ("prefers contact via {phone}", "asked about the {topic} last week"),
    ("偏好电话联系{phone}", "上周问过{topic}"),
)
_CHUNKS = (
    (
        "Escalation contact for {topic}: {person2}, {email2}.",
        "Policy: changes to {topic} orders need a supervisor sign-off above the limit.",
    ),
    ("{topic}的升级联系人：{person2}，{email2}。", "规定：{topic}订单变更超过限额需主管审批。"),
)
_AGENTS = ("2.3.1", "2.3.2", "2.4.0")
_MODELS = ("provider/model-2026-10", "provider/model-mini-2026-09")
_END_STATUS = {
    "success": "success",
    "handed_off": "handed_off",
    "failed": "failed",
    "abandoned": "abandoned",
    "reward_zero": "success",
    "state_failed": "success",
}
_COMPILED = {n: (compile_template(t.args), compile_template(t.response)) for n, t in TOOLS.items()}
BASE_EPOCH_MS = 1_795_824_000_000  # 2026-11-28T00:00:00Z: records span the week before it


@dataclass(slots=True)
class SessionContext:
    tenant_id: str
    session_id: str
    user_id: str
    start_ms: int
    history: list[dict[str, str]] = field(default_factory=list)  # earlier turns' messages
    history_values: list[tuple[str, str]] = field(default_factory=list)  # (type, value)


@dataclass(slots=True)
class BuiltRecord:
    record: dict[str, Any]
    pii: list[tuple[str, str]]  # candidate personal values (type, value) given to this record
    keys: list[tuple[str, str]]  # (key type, value)
    user_text: str
    answer: str


def iso_ms(ms: int) -> str:
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _text_values(slots: dict[str, Any], request_topic: tuple[str, str], amount: Any) -> dict:
    values = {k: v for k, v in slots.items() if isinstance(v, str)}
    values["qty"] = str(slots["qty"])
    values["amount"] = f"{amount:,.2f}" if isinstance(amount, int | float) else ""
    values["topic"], values["topic2"] = request_topic
    return values


def build_record(
    member: Member,
    value_seed: int,
    ctx: SessionContext,
    *,
    record_id: str,
    trace_id: str,
    turn_index: int,
    pools: PiiPools,
) -> BuiltRecord:
    """One recording of ``member``: wording from its struct seed, values from ``value_seed``."""
    fam = member.family
    sc = fam.scenario
    lang = fam.lang
    li = 1 if lang == "zh" else 0
    srng = random.Random(member.struct_seed)
    vrng = random.Random(value_seed)
    slots = draw_slots(vrng, pools, lang)
    slots["topic"] = fam.request.topic
    # Part of the wording, shared by exact duplicates: the company and the currency.
    slots["company"] = pools.company(srng, lang)
    slots["currency"] = "CNY" if lang == "zh" else srng.choice(("USD", "EUR"))
    slots["amount_read"] = (
        slots["amount_read_high"] if sc.amount_read_high else slots["amount_small"]
    )
    step_amounts = [
        amount_for(s.amount, vrng) if TOOLS[s.tool].mutating else None for s in sc.steps
    ]
    main_amount = next(
        (
            a
            for a, s in zip(step_amounts, sc.steps, strict=True)
            if a is not None and TOOLS[s.tool].amount_path
        ),
        slots["amount_small"],
    )
    values = _text_values(slots, (fam.request.topic, fam.request.topic2), main_amount)
    user_text = fill_text(reword(fam.request, srng), values)

    emit_system = srng.random() < 0.5
    t = ctx.start_ms + turn_index * 60_000 + vrng.randint(0, 30_000)
    calls: list[dict[str, Any]] = []
    for i, spec in enumerate(sc.steps):
        tool = TOOLS[spec.tool]
        slots["amount"] = step_amounts[i] if step_amounts[i] is not None else slots["amount_small"]
        make_args, make_response = _COMPILED[spec.tool]
        args = make_args(slots)
        if i == 0 and fam.secrets_in_args:
            if fam.secrets_in_args == "auth":
                args["auth"] = {"apiKey": slots["api_key"]}
            else:
                args["headers"] = {"Authorization": "Bearer " + slots["token"]}
        latency = 30_000 if spec.status == "timeout" else 40 + int(srng.random() * 860)
        call: dict[str, Any] = {
            "stepIndex": i,
            "parentStep": None,
            "kind": spec.kind,
            "toolName": spec.tool,
            "arguments": args,
            "response": make_response(slots) if spec.status == "ok" else None,
            "status": spec.status,
            "error": None,
            "isMutating": tool.mutating,
        }
        if spec.status != "ok":
            msg = fill_text(srng.choice(_ERRORS[li]), {**values, "system": tool.system or "api"})
            call["error"] = {"code": "E_UPSTREAM", "message": msg} if srng.random() < 0.4 else msg
        if emit_system and tool.system is not None:
            call["system"] = tool.system
        call["latencyMs"] = latency
        call["tokens"] = 80 + int(srng.random() * 1_120)
        call["timestampMs"] = t
        t += latency + 5
        calls.append(call)

    answer = answer_text(lang, sc.end, {**values, "ref": slots["order_id"]}, srng.randrange(2))
    messages = [{"role": "system", "content": "You are the back-office assistant."}]
    messages += ctx.history
    messages.append({"role": "user", "content": user_text})
    memory: dict[str, Any] = {"customer": {"fullName": slots["person"], "phone": slots["phone"]}}
    if srng.random() < 0.6:
        memory["notes"] = [fill_text(n, values) for n in _MEMORY_NOTES[li]]
    if srng.random() < 0.5:
        memory["recentOrders"] = [slots["order_id"]]
    chunks = []
    for tpl in _CHUNKS[li][: srng.randint(0, 2)]:
        chunks.append(
            {"text": fill_text(tpl, values), "indexSnapshotId": "kb@41", "query": fam.request.topic}
        )
    conf = confidence_for(sc.conf_mode, srng)
    intent: dict[str, Any] = {"name": sc.main_tool.split("_", 1)[1]}
    if conf is not None:
        intent["confidence"] = conf
    handoff = {"requested": False, "reason": None}
    if sc.ho == "pos_flag" or (sc.ho == "pos_tool" and srng.random() < 0.5):
        handoff = {"requested": True, "reason": "needs_human_approval"}
    elif sc.ho == "neg_declined":
        handoff = {"requested": False, "reason": "customer declined transfer"}
    state = sc.main_tool.upper()
    state += {"success": "_DONE", "handed_off": "_HANDED_OFF", "reward_zero": "_DONE"}.get(
        sc.end, "_FAILED"
    )
    rec: dict[str, Any] = {
        "recordId": record_id,
        "tenantId": ctx.tenant_id,
        "sessionId": ctx.session_id,
        "turnIndex": turn_index,
        "traceId": trace_id,
        "userId": ctx.user_id,
        "recordedAt": iso_ms(ctx.start_ms + turn_index * 60_000),
        "agentVersion": pick(srng, _AGENTS),
        "modelIdentifier": pick(srng, _MODELS),
        "modelParams": {"temperature": 0},
        "systemPromptVersion": "sha256:" + f"{srng.getrandbits(64):016x}",
        "promptVariables": {"tenant": ctx.tenant_id},
        "initialUserInput": user_text,
        "intent": intent,
        "context": {
            "messages": messages,
            "memory": memory,
            "retrievedChunks": chunks,
            "envVersions": {"erp_api": "v7", "crm_api": "v3"},
            "baselineState": {f"order:{slots['order_id']}": "PENDING"},
        },
        "toolCalls": calls,
        "handoff": handoff,
        "finalOutputText": answer,
        "finalStatus": _END_STATUS[sc.end],
        "expectedFinalState": state,
        "lowConfidence": sc.ho == "pos_low_conf",
    }
    if sc.end == "reward_zero":
        rec["reward"] = 0.0
    elif srng.random() < 0.6:
        rec["reward"] = 0.0 if sc.end in ("failed", "abandoned") else 1.0
    pii_values = [(etype, slots[name]) for name, etype in PII_SLOTS.items() if slots.get(name)]
    pii_values.append((slots["phone_type"], slots["phone"]))
    pii_values += ctx.history_values
    keys = [(ktype, slots[name]) for name, ktype in KEY_SLOTS.items()]
    keys += [
        ("user", ctx.user_id),
        ("tenant", ctx.tenant_id),
        ("session", ctx.session_id),
        ("trace", trace_id),
    ]
    return BuiltRecord(rec, pii_values, keys, user_text, answer)


def _areas(rec: dict[str, Any]) -> tuple[list[str], list[int], bytes]:
    """Area names, their start offsets and all areas joined (NUL-separated) for one search."""
    dumps = orjson.dumps
    ctx = rec["context"]
    names = ["initialUserInput", "finalOutputText", "context.messages", "context.memory",
             "context.retrievedChunks"]  # fmt: skip
    blobs = [
        rec["initialUserInput"].encode(),
        rec["finalOutputText"].encode(),
        dumps(ctx["messages"]),
        dumps(ctx["memory"]),
        dumps(ctx["retrievedChunks"]),
    ]
    for i, call in enumerate(rec["toolCalls"]):
        names.append(f"toolCalls[{i}].arguments")
        blobs.append(dumps(call["arguments"]))
        if call["response"] is not None:
            names.append(f"toolCalls[{i}].response")
            blobs.append(dumps(call["response"]))
        if call["error"] is not None:
            names.append(f"toolCalls[{i}].error")
            blobs.append(dumps(call["error"]))
    starts, pos = [], 0
    for blob in blobs:
        starts.append(pos)
        pos += len(blob) + 1
    return names, starts, b"\0".join(blobs)


def locate(built: BuiltRecord, line: bytes) -> tuple[list[list[Any]], list[list[str]]]:
    """Which planted values the written line holds, and in which areas (for the truth)."""
    areas: tuple[list[str], list[int], bytes] | None = None
    pii_out: list[list[Any]] = []
    seen: set[tuple[str, str]] = set()
    for etype, value in built.pii:
        if (etype, value) in seen:
            continue
        seen.add((etype, value))
        needle = value.encode()
        if needle not in line:
            continue
        if areas is None:
            areas = _areas(built.record)
        names, starts, joined = areas
        where = []
        pos = joined.find(needle)
        while pos != -1:
            idx = bisect_right(starts, pos) - 1
            where.append(names[idx])
            nxt = starts[idx + 1] if idx + 1 < len(starts) else len(joined)
            pos = joined.find(needle, nxt)
        if where:
            pii_out.append([etype, value, where])
    keys_out = []
    kseen: set[str] = set()
    for ktype, value in built.keys:
        if value not in kseen and value.encode() in line:
            kseen.add(value)
            keys_out.append([ktype, value])
    return pii_out, keys_out
