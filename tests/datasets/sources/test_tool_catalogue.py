"""Tool catalogues: the shipped tau-bench catalogue and the loader's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden_distill.datasets.config_model import ConfigError
from golden_distill.datasets.sources.tool_catalogue import (
    SystemsByName,
    ToolInfo,
    load_tool_catalogue,
    system_from_prefix,
)
from golden_distill.filters.config import FunnelsConfig
from golden_distill.filters.high_value_mutating import system_for_name

# From the tau-bench README (tests/data/tau-bench; the write tools of each environment).
AIRLINE_WRITES = {
    "book_reservation",
    "cancel_reservation",
    "update_reservation_flights",
    "update_reservation_baggages",
    "update_reservation_passengers",
    "send_certificate",
}
RETAIL_WRITES = {
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "return_delivered_order_items",
    "modify_pending_order_items",
    "modify_pending_order_address",
    "modify_pending_order_payment",
    "modify_user_address",
}


def test_shipped_catalogue_lists_the_tau_bench_writes() -> None:
    catalogue = load_tool_catalogue(["configs/tools/tau-bench.yaml"])
    writes = {name for name, info in catalogue.tools.items() if info.is_mutating}
    assert writes == AIRLINE_WRITES | RETAIL_WRITES
    assert {catalogue.lookup(n).system for n in AIRLINE_WRITES} == {"AIRLINE_RES"}
    assert {catalogue.lookup(n).system for n in RETAIL_WRITES} == {"RETAIL_OMS"}
    assert catalogue.lookup("get_user_details") == ToolInfo(False, None)
    assert catalogue.lookup("transfer_to_human_agents").is_mutating is False


def test_shipped_catalogue_is_found_from_any_working_directory(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no configs/ here: the installed package data answers
    catalogue = load_tool_catalogue(["configs/tools/tau-bench.yaml"])
    assert {catalogue.lookup(n).system for n in AIRLINE_WRITES} == {"AIRLINE_RES"}


def test_unknown_tools_are_unknown_with_prefix_system() -> None:
    catalogue = load_tool_catalogue([])
    assert catalogue.lookup("erp_create_invoice") == ToolInfo(None, "ERP")
    assert catalogue.lookup("lookup_weather") == ToolInfo(None, None)
    assert system_from_prefix("WMS_move_pallet") == "WMS"


def test_conflicting_entries_and_typos_are_errors(tmp_path: Path) -> None:
    first = tmp_path / "a.yaml"
    first.write_text("systems: {ERP: {writes: [post_invoice]}}\n")
    second = tmp_path / "b.yaml"
    second.write_text("shared: {reads: [post_invoice]}\n")
    with pytest.raises(ConfigError, match="post_invoice"):
        load_tool_catalogue([first, second])
    typo = tmp_path / "typo.yaml"
    typo.write_text("systems: {ERP: {wirtes: [post_invoice]}}\n")
    with pytest.raises(ConfigError, match=r"systems\.ERP\.wirtes: unknown key"):
        load_tool_catalogue([typo])
    with pytest.raises(ConfigError, match="cannot read"):
        load_tool_catalogue([tmp_path / "missing.yaml"])


def test_one_prefix_rule_for_adapter_catalogue_and_funnels() -> None:
    names = ["erp_get_order", "WMS_move_pallet", "Crm_find", "erp", "erpx_thing", "lookup"]
    catalogue, by_name, funnels = load_tool_catalogue([]), SystemsByName(), FunnelsConfig()
    answers = [
        (catalogue.lookup(n).system, by_name[n], system_for_name(n, funnels.high_value_mutating))
        for n in names
    ]
    assert [a[0] for a in answers] == ["ERP", "WMS", "CRM", None, None, None]
    assert all(len(set(a)) == 1 for a in answers)
