"""Real agent runs (tau-bench): users' personal data never survives; ids stay consistent."""

from __future__ import annotations

import json
import re

import orjson
import pyarrow as pa
import pytest
from golden_test_data import airline_runs_path, all_runs_paths, tau_bench_users

from golden_distill.datasets.quarantine import Quarantine
from golden_distill.datasets.schema import CASE_SCHEMA
from golden_distill.datasets.sources.base import ReadStats
from golden_distill.datasets.sources.chat import ChatAdapter
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.pseudonym import key_pseudonym
from golden_distill.redaction.redactor import Redactor
from golden_distill.redaction.shard import redact_table

RUNS = {"airline": airline_runs_path(), "retail": all_runs_paths()[1]}
SECRET = b"tau-bench-test-key-Qm4vZ8xR2pL7wK9nT3yB6cH1sD5fG0jA"
N_RUNS = 60


@pytest.fixture(scope="module", params=sorted(RUNS))
def env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    name = request.param
    runs = json.loads(RUNS[name].read_text())[:N_RUNS]
    path = tmp_path_factory.mktemp(name) / "runs.json"
    path.write_text(json.dumps(runs))
    rows = list(ChatAdapter(IngestConfig()).read(str(path), Quarantine(), ReadStats()))
    table = pa.Table.from_pylist(rows, schema=CASE_SCHEMA)
    result = redact_table(table, Redactor.from_config(RedactionConfig(), PseudonymKey(SECRET)))
    users = tau_bench_users(name)
    return {
        "name": name,
        "before": table.to_pylist(),
        "result": result,
        "users": [
            users[r["info"]["task"]["user_id"]] | {"id": r["info"]["task"]["user_id"]} for r in runs
        ],
    }


def test_every_run_is_published(env: dict) -> None:
    assert env["result"].cases_out == len(env["before"]) == N_RUNS
    assert not env["result"].quarantined


def test_users_personal_data_never_survives(env: dict) -> None:
    text = orjson.dumps(env["result"].table.to_pylist(), default=str).decode()
    checked = 0
    for user in env["users"]:
        full = f"{user['name']['first_name']} {user['name']['last_name']}"
        values = [
            full,
            user["email"],
            user["address"]["address1"],
            user["id"],
            *user["payment_methods"],
        ]
        for value in values:
            assert value not in text, f"{env['name']}: a {type(value).__name__} survived"
            checked += 1
    assert checked >= N_RUNS * 4


def _ids(text: str, env_name: str) -> set[str]:
    if env_name == "retail":
        return set(re.findall(r"#W\d{7}", text))
    return set(re.findall(r'"reservation_id\\?"\s*:\s*\\?"([A-Z0-9]{6})', text))


def test_ids_are_remapped_consistently_across_args_replies_and_text(env: dict) -> None:
    key_type = "order" if env["name"] == "retail" else "reservation"
    prefix = "#W|ORD-|SO-|PO-" if key_type == "order" else None
    checked = 0
    for before, after in zip(env["before"], env["result"].table.to_pylist(), strict=True):
        ids = _ids(orjson.dumps(before, default=str).decode(), env["name"])
        for original in ids:
            pseudo = key_pseudonym(original, key_type, SECRET, prefix)
            for s_in, s_out in zip(before["steps"], after["steps"], strict=True):
                for field in ("arguments", "response"):
                    if s_in[field] and original in s_in[field]:
                        assert pseudo in s_out[field]
                        checked += 1
            if original in before["context"]["messages"]:
                assert pseudo in after["context"]["messages"]
                checked += 1
            if before["outcome"]["answer_text"] and original in before["outcome"]["answer_text"]:
                assert pseudo in after["outcome"]["answer_text"]
    assert checked > 50


def test_tool_names_statuses_and_amounts_unchanged(env: dict) -> None:
    amount = re.compile(r'"(?:amount|price|total)"\s*:\s*(-?\d+(?:\.\d+)?)')
    for before, after in zip(env["before"], env["result"].table.to_pylist(), strict=True):
        assert [(s["name"], s["status"]) for s in before["steps"]] == [
            (s["name"], s["status"]) for s in after["steps"]
        ]
        for s_in, s_out in zip(before["steps"], after["steps"], strict=True):
            for field in ("arguments", "response"):
                if s_in[field]:
                    assert amount.findall(s_in[field]) == amount.findall(s_out[field])


def test_each_users_own_first_and_last_name_is_gone_from_their_run(env: dict) -> None:
    rows = env["result"].table.to_pylist()
    for user, row in zip(env["users"], rows, strict=True):
        text = orjson.dumps(row, default=str).decode()
        for part in (user["name"]["first_name"], user["name"]["last_name"]):
            assert not re.search(rf"(?<![A-Za-z]){re.escape(part)}(?![A-Za-z])", text), (
                f"{env['name']}: a name part of the run's user survived"
            )


_TIMES = re.compile(r'\\?"scheduled_(?:departure|arrival)_time_est\\?"\s*:\s*\\?"([^"\\]*)')
_COUNTRY = re.compile(r'\\?"country\\?"\s*:\s*\\?"([^"\\]*)')
_QUANTITY = re.compile(r"\b\d+(?:\.\d+)?-?(?:inch|ml|GB|mm|W)\b")


def _tool_reply_names(messages: str | None) -> list[str]:
    return [m.get("name") for m in json.loads(messages or "[]") if m.get("role") == "tool"]


def test_reference_data_is_never_rewritten(env: dict) -> None:
    """Precision: flight times, countries, option values with units and the tool names in the
    message history are not personal; rewriting them replays a different conversation."""
    seen = {"times": 0, "countries": 0, "quantities": 0, "tool replies": 0}
    for before, after in zip(env["before"], env["result"].table.to_pylist(), strict=True):
        text_in = orjson.dumps(before, default=str).decode()
        text_out = orjson.dumps(after, default=str).decode()
        times = _TIMES.findall(text_in)
        assert _TIMES.findall(text_out) == times
        assert all(re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\+\d)?", t) for t in times)
        assert _COUNTRY.findall(text_out) == _COUNTRY.findall(text_in)
        assert _QUANTITY.findall(text_out) == _QUANTITY.findall(text_in)
        names = _tool_reply_names(before["context"]["messages"])
        assert _tool_reply_names(after["context"]["messages"]) == names
        for name, found in (
            ("times", times),
            ("countries", _COUNTRY.findall(text_in)),
            ("quantities", _QUANTITY.findall(text_in)),
            ("tool replies", names),
        ):
            seen[name] += len(found)
    # each kind of reference data occurs in the sample, so the checks above can fail
    wanted = {"airline": ("times", "tool replies"), "retail": ("countries", "quantities")}
    assert all(seen[kind] > 0 for kind in wanted[env["name"]]), seen


def test_catalogue_replies_are_not_phones_or_names(env: dict) -> None:
    """``list_all_product_types`` maps product names to product ids ("Headphones":
    "6992792935"): a ten-digit id is a valid US number and "Headphones" holds "phone", yet
    neither is personal. The names stay, no id becomes a phone or a name, and every product
    name keeps its count in the whole published run."""
    replies = 0
    for before, after in zip(env["before"], env["result"].table.to_pylist(), strict=True):
        for s_in, s_out in zip(before["steps"], after["steps"], strict=True):
            if s_in["name"] != "list_all_product_types" or not s_in["response"]:
                continue
            replies += 1
            catalogue_in = json.loads(s_in["response"])
            catalogue_out = json.loads(s_out["response"])
            assert list(catalogue_out) == list(catalogue_in)
            assert all(re.fullmatch(r"\d{10}", str(v)) for v in catalogue_out.values())
            text_in = orjson.dumps(before, default=str).decode()
            text_out = orjson.dumps(after, default=str).decode()
            for product in catalogue_in:
                assert text_out.count(product) == text_in.count(product), product
    assert replies >= 3 if env["name"] == "retail" else replies == 0  # a retail tool
