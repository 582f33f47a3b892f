"""Ingest configuration: how recordings are read into canonical cases (section `ingest:`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from golden_distill.datasets.canonical_json import DEFAULT_VOLATILE_KEYS
from golden_distill.datasets.config_model import StrictModel


class IngestConfig(StrictModel):
    volatile_keys: list[str] = Field(
        default_factory=lambda: sorted(DEFAULT_VOLATILE_KEYS),
        description="Argument keys (any depth, case-insensitive) removed before hashing canonical "
        "arguments: request ids, timestamps, nonces. Replay lookups ignore them.",
    )
    max_line_bytes: int = Field(
        8 * 1024 * 1024,
        gt=0,
        description="A JSONL line longer than this is quarantined as `oversized_line` unread.",
    )
    batch_rows: int = Field(
        2_000, gt=0, description="Cases buffered before a Parquet row group is written."
    )
    rows_per_shard: int = Field(
        100_000, gt=0, description="Cases per canonical shard file before rolling to the next."
    )
    # --- quarantine bounds (datasets/quarantine.py) --------------------------------------------
    max_consecutive_quarantined: int = Field(
        1_000,
        ge=0,
        description="Stop reading an input after this many records in a row were quarantined "
        "without one read: a wrong `--format` or a damaged input, not bad records. The input "
        "then fails (with a `did you mean --format ...?` hint when its first bytes look like "
        "another format); 0 never stops.",
    )
    quarantine_raw_bytes: int = Field(
        64 * 1024,
        ge=0,
        description="Keep at most this many bytes of a quarantined record's text; a longer one "
        "keeps this excerpt with its full length and sha256 (its location finds the rest).",
    )
    quarantine_max_entries: int = Field(
        10_000,
        ge=0,
        description="Write at most this many quarantine entries per input; further records "
        "are counted (per reason) and one summary line per input says how many were not "
        "written; 0: no cap.",
    )
    # --- chat / evidence / otel adapters ---------------------------------------------------
    tool_catalogues: list[str] = Field(
        default_factory=lambda: ["configs/tools/tau-bench.yaml"],
        description="Tool catalogue YAML files (paths relative to the working directory; "
        "`configs/...` also names the catalogues shipped with the package) saying which tools "
        "write (is_mutating) and which system they belong to. Sources that do not record this "
        "(chat, evidence, otel) take it from here; a tool in no catalogue gets is_mutating null "
        "and the system from its name prefix.",
    )
    handoff_tools: list[str] = Field(
        default_factory=lambda: [
            "transfer_to_human_agents",
            "handoff_to_human",
            "escalate_to_human",
        ],
        description="Tool names that hand the conversation to a human: their step gets "
        "kind=handoff and the case outcome.handoff=true.",
    )
    tool_error_patterns: list[str] = Field(
        default_factory=lambda: [r"^\s*Error:", r'^\s*\{\s*"error"\s*:'],
        description="Regular expressions (Python, searched in the reply text) that mark a chat "
        "tool reply as an error when the source has no explicit `error` flag.",
    )
    malformed_arguments: Literal["quarantine", "keep_as_string", "python_literal"] = Field(
        "quarantine",
        description="A tool call whose arguments are text that is not JSON (chat, otel, "
        "evidence): `quarantine` the run (reason malformed_arguments); `keep_as_string` (the "
        "text is stored as a JSON string, the run is read; counted as "
        "malformed_arguments_kept); or `python_literal` (text such as `{'thought': 'x'}` is read "
        "with ast.literal_eval, never eval, and stored as JSON; counted as "
        "python_literal_arguments; what is not a literal either is quarantined).",
    )
    sql_chunk_traces: int = Field(
        500,
        gt=0,
        le=10_000,
        description="Evidence tables: traces fetched per round trip (keyset page or server-side "
        "cursor batch); their calls and snapshots are fetched with them.",
    )
    evidence_bucket_rows: int = Field(
        500_000,
        gt=0,
        description="Evidence files (Parquet/CSV): tool-call rows held in memory at once; the "
        "files are split into hash buckets of trace_id so each bucket stays under this.",
    )
    otel_max_spans_in_memory: int = Field(
        500_000,
        gt=0,
        description="OTel: spans grouped by trace in memory per file; a file with more spills "
        "them to temporary hash-bucket files and groups bucket by bucket (bounded memory).",
    )
