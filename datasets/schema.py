"""The canonical case: one agent run, as every adapter writes it and every later step reads it.

Field names are the contract (see docs/architecture.md). JSON-valued fields (model params, prompt
variables, messages, memory, env versions, baseline state, step arguments and responses) are stored
as JSON *text* so that the exact recorded bytes survive and any reader (DuckDB, polars, another
language) can parse them without knowing their shape.

Two Arrow schemas:

* ``CASE_SCHEMA``: what adapters produce (canonical shards);
* ``GOLDEN_SCHEMA``: ``CASE_SCHEMA`` plus the fields the pipeline adds (funnels, scores, clusters,
  redaction counts), which is what a published golden set holds.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa

#: Bump on any incompatible change to the field list or types; manifests record it.
# 1.1: `expected`, `split` and `trust`; 1.2: `task_id` (readers of older files read them as null)
SCHEMA_VERSION = "1.2"

TIMESTAMP = pa.timestamp("ms", tz="UTC")

#: Allowed values of ``steps.kind``.
STEP_KINDS = ("model", "tool", "route", "handoff")
#: Allowed values of ``steps.status``.
STEP_STATUSES = ("ok", "error", "timeout")

STEP_TYPE = pa.struct(
    [
        pa.field("seq", pa.int32(), nullable=False),
        pa.field("parent_seq", pa.int32()),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("occurrence", pa.int32(), nullable=False),
        pa.field("arguments", pa.string()),
        pa.field("canonical_args_sha256", pa.string()),
        pa.field("response", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("error", pa.string()),
        pa.field("is_mutating", pa.bool_()),
        pa.field("system", pa.string()),
        pa.field("latency_ms", pa.int64()),
        pa.field("tokens", pa.int64()),
        pa.field("started_at", TIMESTAMP),
    ]
)

AGENT_TYPE = pa.struct(
    [
        pa.field("agent_version", pa.string()),
        pa.field("model_name", pa.string()),
        pa.field("model_params", pa.string()),  # JSON text
        pa.field("system_prompt_version", pa.string()),
        pa.field("prompt_variables", pa.string()),  # JSON text
    ]
)

INTENT_TYPE = pa.struct([pa.field("name", pa.string()), pa.field("confidence", pa.float64())])

CHUNK_TYPE = pa.struct(
    [
        pa.field("text", pa.string()),
        pa.field("index_snapshot_id", pa.string()),
        pa.field("query", pa.string()),
    ]
)

CONTEXT_TYPE = pa.struct(
    [
        pa.field("messages", pa.string()),  # JSON text: list of chat messages
        pa.field("memory", pa.string()),  # JSON text
        pa.field("retrieved_chunks", pa.list_(CHUNK_TYPE)),
        pa.field("env_versions", pa.string()),  # JSON text
        pa.field("baseline_state", pa.string()),  # JSON text
    ]
)

OUTCOME_TYPE = pa.struct(
    [
        pa.field("answer_text", pa.string()),
        pa.field("final_state", pa.string()),
        pa.field("status", pa.string()),
        pa.field("handoff", pa.bool_()),
        pa.field("handoff_reason", pa.string()),
        pa.field("low_confidence", pa.bool_()),  # the agent flagged its own answer as unsure
        pa.field("reward", pa.float64()),
    ]
)

SOURCE_TYPE = pa.struct(
    [
        pa.field("format", pa.string()),  # native | chat | evidence | otel
        pa.field("uri", pa.string()),
        pa.field("position", pa.int64()),  # line (1-based) or row number in the source
        pa.field("source_record_id", pa.string()),
    ]
)

#: One expected action: a tool name and its key arguments as canonical JSON text.
EXPECTED_ACTION_TYPE = pa.struct(
    [
        pa.field("name", pa.string()),
        pa.field("arguments", pa.string()),  # canonical JSON text (sorted keys, compact)
    ]
)

#: Allowed values of ``expected.source``: where the expected outcome came from.
EXPECTED_SOURCES = ("native", "tau_bench_task", "evidence", "review")

#: What a replay should end with (nullable: many sources carry no expectation). Shared contract
#: with the curation side (trust derivation); see docs/golden-set-format.md.
EXPECTED_TYPE = pa.struct(
    [
        pa.field("final_state", pa.string()),
        pa.field("actions", pa.list_(EXPECTED_ACTION_TYPE)),
        pa.field("answer_facts", pa.list_(pa.string())),
        pa.field("source", pa.string()),  # one of EXPECTED_SOURCES
    ]
)

CASE_FIELDS: list[pa.Field] = [
    pa.field("case_id", pa.string(), nullable=False),
    pa.field("trace_id", pa.string()),
    pa.field("session_id", pa.string()),
    pa.field("turn_index", pa.int32()),
    pa.field("tenant_id", pa.string()),
    pa.field("user_id", pa.string()),
    pa.field("recorded_at", TIMESTAMP),
    pa.field("agent", AGENT_TYPE),
    pa.field("user_input", pa.string()),
    pa.field("intent", INTENT_TYPE),
    pa.field("context", CONTEXT_TYPE),
    pa.field("steps", pa.list_(STEP_TYPE)),
    pa.field("outcome", OUTCOME_TYPE),
    pa.field("source", SOURCE_TYPE),
    pa.field("expected", EXPECTED_TYPE),  # since schema 1.1
]

PIPELINE_FIELDS: list[pa.Field] = [
    pa.field("funnels", pa.list_(pa.string())),
    pa.field("funnel_reasons", pa.string()),  # JSON text: {funnel: reason}
    pa.field("value_score", pa.float64()),
    pa.field("cluster_id", pa.string()),
    pa.field("cluster_size", pa.int32()),
    pa.field("redaction", pa.string()),  # JSON text: {entity_type: count}, never values
    pa.field("split", pa.string()),  # one of SPLITS (by cluster, sticky)
    pa.field("trust", pa.string()),  # one of TRUST_TIERS (filters/trust.py)
    # the source's task or scenario id (dedup.task_id_pattern), pseudonymised like a key: the
    # same task gets the same value everywhere, so a reviewer can group by it
    pa.field("task_id", pa.string()),
]

#: The values of the published ``split`` column. Declared with the schema, not with the curation
#: config that assigns them, because consumers (the replay kit's ``--golden-split``) check them
#: and consumers sit below the pipeline.
SPLITS = ("dev", "regression", "holdout")
#: The values of the published ``trust`` column (how a case's expected outcome was confirmed).
TRUST_TIERS = ("unconfirmed", "oracle", "human")

#: Fields added after schema 1.0, by the version that added them: files written before may lack
#: them, and readers take a missing one as null.
ADDED_FIELDS: dict[str, str] = {
    "expected": "1.1", "split": "1.1", "trust": "1.1", "task_id": "1.2",
}  # fmt: skip

CASE_SCHEMA = pa.schema(CASE_FIELDS, metadata={"golden_distill.schema_version": SCHEMA_VERSION})
GOLDEN_SCHEMA = pa.schema(
    CASE_FIELDS + PIPELINE_FIELDS, metadata={"golden_distill.schema_version": SCHEMA_VERSION}
)


def make_case_id(source_format: str, identity: str) -> str:
    """A stable case id from the source's identity of a run (same input, same id).

    ``identity`` is whatever the source uses to name the run (a record id, a trace id, or
    ``"<uri>:<position>"`` when the source has none). The id is a hash so it carries no
    personal data even when the identity does.
    """
    digest = hashlib.sha256(f"{source_format}\x1f{identity}".encode()).hexdigest()
    return f"c_{digest[:24]}"


def conform_table(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with every column of ``schema`` (a column an older schema version lacked is
    added as all-null), in the schema's order; columns the schema does not know are kept last.

    Readers of published versions call this so files written before a field existed read as
    if it were null (e.g. ``expected`` in a 1.0 set).
    """
    missing = [f for f in schema if f.name not in table.column_names]
    if not missing:
        return table
    for f in missing:
        table = table.append_column(f, pa.nulls(table.num_rows, f.type))
    known = [f.name for f in schema]
    extra = [n for n in table.column_names if n not in known]
    return table.select(known + extra)
