"""Planted funnel membership matches the agreed default semantics, checked independently here.

The generator derives membership from the scenario it built (by construction). This test
re-derives it from the written recording with a plain reading of the agreed defaults (see the
preamble of docs/generator.md), so a planting bug cannot hide behind the generator's own labels.
"""

from __future__ import annotations

from typing import Any

from golden_distill.synthetic import Truth

PREFIX = {
    "erp_": "ERP",
    "mes_": "MES",
    "crm_": "CRM",
    "fin_": "FINANCE",
    "kb_": "KB",
    "hr_": "HR",
    "wms_": "WMS",
}
HANDOFF_TOOLS = {"transfer_to_human_agents", "handoff_to_human", "escalate_to_human"}
ALTERNATIVES = {"erp_get_order": {"erp_search_orders"}}


def _system(call: dict[str, Any]) -> str | None:
    if call.get("system"):
        return call["system"]
    return next((s for p, s in PREFIX.items() if call["toolName"].startswith(p)), None)


def _amounts(args: Any) -> list[float]:
    out = []
    if not isinstance(args, dict):
        return out
    for key in ("amount", "total", "totalAmount"):
        if isinstance(args.get(key), int | float):
            out.append(args[key])
    pay = args.get("payment")
    if isinstance(pay, dict) and isinstance(pay.get("amount"), int | float):
        out.append(pay["amount"])
    for item in args.get("items") or []:
        if isinstance(item, dict) and isinstance(item.get("amount"), int | float):
            out.append(item["amount"])
    return out


def high_value(rec: dict[str, Any]) -> bool:
    calls = rec["toolCalls"]
    writes = [c for c in calls if c.get("isMutating")]
    if not any(c.get("status", "ok") == "ok" for c in writes):
        return False
    systems = {_system(c) for c in writes}
    big = any(a >= 10000 for c in writes for a in _amounts(c.get("arguments")))
    return len(systems) >= 2 or big or len(calls) >= 20


def recovery(rec: dict[str, Any]) -> bool:
    bad_end = (
        rec.get("finalStatus") in ("failed", "abandoned", "error")
        or rec.get("reward") == 0
        or str(rec.get("expectedFinalState", "")).endswith("_FAILED")
    )
    if bad_end:
        return False
    calls = rec["toolCalls"]
    for i, c in enumerate(calls):
        if c.get("kind", "tool") != "tool" or c.get("status") not in ("error", "timeout"):
            continue
        ok_names = {c["toolName"], *ALTERNATIVES.get(c["toolName"], ())}
        for later in calls[i + 1 : i + 4]:
            if later.get("status", "ok") == "ok" and later["toolName"] in ok_names:
                return True
    return False


def handoff(rec: dict[str, Any]) -> bool:
    if any(c.get("kind") == "handoff" or c["toolName"] in HANDOFF_TOOLS for c in rec["toolCalls"]):
        return True
    conf = (rec.get("intent") or {}).get("confidence")
    return bool(
        (rec.get("handoff") or {}).get("requested")
        or rec.get("lowConfidence")
        or (conf is not None and conf < 0.5)
    )


def test_truth_matches_reference_reading(gz_truth: Truth, gz_records: dict) -> None:
    mismatches = []
    for rid, rec in gz_records.items():
        got = {
            name
            for name, fn in (
                ("high_value_mutating", high_value),
                ("recovery", recovery),
                ("human_handoff", handoff),
            )
            if fn(rec)
        }
        if got != set(gz_truth.records[rid].funnels):
            mismatches.append((rid, gz_truth.records[rid].scenario, sorted(got)))
    assert not mismatches, mismatches[:5]


def test_boundary_negatives_are_planted(corpus_factory, read_lines) -> None:  # type: ignore[no-untyped-def]
    from golden_distill.synthetic import load_truth

    out = corpus_factory("boundaries", sessions=900, seed=23)
    truth = load_truth(out)
    labels = {r.scenario for r in truth.records.values()}
    parts = {p for label in labels for p in label.split(",")}
    for wanted in (
        "hv=neg_edge_amount",
        "hv=neg_19_steps",
        "hv=neg_single_system_many_writes",
        "hv=pos_amount_edge",
        "rec=neg_late_retry",
        "rec=neg_ended_failed",
        "rec=pos_same_at_3",
        "rec=pos_alternative",
        "ho=neg_conf_edge",
        "ho=pos_intent_low",
        "ho=neg_lookalike",
    ):
        assert wanted in parts, wanted
    lines = {f: read_lines(out / f) for f in truth.summary["files"]}
    import orjson

    amounts, confidences = set(), set()
    for r in truth.records.values():
        rec = orjson.loads(lines[r.file][r.line - 1])
        for c in rec["toolCalls"]:
            if c["isMutating"]:
                amounts.update(_amounts(c["arguments"]))
        confidences.add((rec.get("intent") or {}).get("confidence"))
        assert high_value(rec) == ("high_value_mutating" in r.funnels), r.scenario
    assert 9999.99 in amounts and 10000 in amounts
    assert 0.5 in confidences and 0.49 in confidences and None in confidences


def test_background_runs_stay_clear_of_every_funnel(gz_truth: Truth, gz_records: dict) -> None:
    for rid, r in gz_truth.records.items():
        if r.scenario != "hv=none,rec=none,ho=none":
            continue
        rec = gz_records[rid]
        writes = [c for c in rec["toolCalls"] if c["isMutating"]]
        assert len({_system(c) for c in writes}) <= 1
        assert all(a < 10000 for c in writes for a in _amounts(c["arguments"]))
        assert len(rec["toolCalls"]) < 20
        assert all(c["status"] == "ok" for c in rec["toolCalls"])
        assert not r.funnels
