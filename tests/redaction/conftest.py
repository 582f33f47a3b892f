"""Shared fixtures for redaction tests: a key, the default config, a redactor, case builders."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from golden_distill.redaction.config import RedactionConfig
from golden_distill.redaction.keys import PseudonymKey
from golden_distill.redaction.redactor import Redactor

TEST_SECRET = b"test-pseudonym-key-0123456789abcdef-not-for-production"


@pytest.fixture(scope="session")
def key() -> PseudonymKey:
    return PseudonymKey(TEST_SECRET, "test")


@pytest.fixture(scope="session")
def config() -> RedactionConfig:
    return RedactionConfig()


@pytest.fixture(scope="session")
def redactor(config: RedactionConfig, key: PseudonymKey) -> Redactor:
    return Redactor.from_config(config, key, opt_out_tenants=["t-optout"])


@pytest.fixture(scope="session")
def secret() -> bytes:
    return TEST_SECRET


@pytest.fixture(scope="session")
def make_step():
    return step


@pytest.fixture(scope="session")
def make_case():
    return case


def step(seq: int, name: str, arguments: Any, response: Any, **extra: Any) -> dict[str, Any]:
    """A canonical step row; JSON values are given as text exactly as written (or dumped)."""

    def text(v: Any) -> str | None:
        return v if isinstance(v, str) or v is None else orjson.dumps(v).decode()

    row = {
        "seq": seq,
        "parent_seq": None,
        "kind": "tool",
        "name": name,
        "occurrence": 1,
        "arguments": text(arguments),
        "canonical_args_sha256": "stale",
        "response": text(response),
        "status": "ok",
        "error": None,
        "is_mutating": False,
        "system": None,
        "latency_ms": 10,
        "tokens": None,
        "started_at": None,
    }
    row.update(extra)
    return row


def case(**fields: Any) -> dict[str, Any]:
    """A canonical case row with sensible empty defaults."""
    row: dict[str, Any] = {
        "case_id": "c_test",
        "trace_id": "tr-1",
        "session_id": "s-1",
        "turn_index": 0,
        "tenant_id": "t-acme",
        "user_id": "u-1001",
        "recorded_at": None,
        "agent": {
            "agent_version": "1",
            "model_name": "m",
            "model_params": "{}",
            "system_prompt_version": None,
            "prompt_variables": None,
        },
        "user_input": "",
        "intent": {"name": "x", "confidence": 0.9},
        "context": {
            "messages": "[]",
            "memory": "{}",
            "retrieved_chunks": [],
            "env_versions": "{}",
            "baseline_state": "{}",
        },
        "steps": [],
        "outcome": {
            "answer_text": "",
            "final_state": "DONE",
            "status": "success",
            "handoff": False,
            "handoff_reason": None,
            "low_confidence": False,
            "reward": None,
        },
        "source": {"format": "native", "uri": "mem://x", "position": 1, "source_record_id": "r"},
    }
    row.update(fields)
    return row
