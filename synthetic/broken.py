"""Broken lines the generator plants on purpose, one kind per quarantine reason code.

Each is made from an otherwise valid recording so it looks like what real recorders emit when
they go wrong: a line cut mid-write or with a stray comma (``invalid_json``), a required field of
the wrong JSON type (``wrong_type``), a required field missing (``missing_field``), a line just
over the reader's size limit (``oversized_line``). Truncated compressed streams are cut by the
shard writer. Every variant breaks exactly one rule so a reader has exactly one reason to give.
"""

from __future__ import annotations

import random
from typing import Any

import orjson

from golden_distill.datasets.quarantine import (
    INVALID_JSON,
    MISSING_FIELD,
    OVERSIZED_LINE,
    TRUNCATED_STREAM,
    WRONG_TYPE,
)

#: The reasons planted mid-file (truncated_stream is planted at a file's end).
MID_FILE_KINDS: tuple[str, ...] = (INVALID_JSON, WRONG_TYPE, MISSING_FIELD, OVERSIZED_LINE)
ALL_KINDS: tuple[str, ...] = (*MID_FILE_KINDS, TRUNCATED_STREAM)
REQUIRED_FIELDS: tuple[str, ...] = (
    "recordId",
    "sessionId",
    "recordedAt",
    "initialUserInput",
    "toolCalls",
)
#: Oversized lines are padded to exactly ``limit + 1`` bytes (newline not counted); valid
#: recordings are far below this floor, so only planted lines can exceed the limit.
MIN_OVERSIZED_LIMIT = 16 * 1024


def invalid_json(record: dict[str, Any], variant: int, rng: random.Random) -> bytes:
    text = orjson.dumps(record).decode()
    if variant % 2 == 0:  # cut mid-write (on a character boundary: still valid UTF-8)
        cut = rng.randint(len(text) // 3, 2 * len(text) // 3)
        return text[:cut].rstrip("\\").encode()
    return (text[:-1] + ",}").encode()  # trailing comma


def wrong_type(record: dict[str, Any], variant: int) -> bytes:
    rec = dict(record)
    which = variant % 3
    if which == 0:
        rec["toolCalls"] = "none"
    elif which == 1:
        rec["initialUserInput"] = {"text": rec["initialUserInput"]}
    else:
        rec["sessionId"] = [rec["sessionId"]]
    return orjson.dumps(rec)


def missing_field(record: dict[str, Any], variant: int) -> bytes:
    rec = dict(record)
    del rec[REQUIRED_FIELDS[variant % len(REQUIRED_FIELDS)]]
    return orjson.dumps(rec)


def oversized(record: dict[str, Any], limit: int) -> bytes:
    """A valid recording padded (inside ``context.memory``) to exactly ``limit + 1`` bytes."""
    rec = dict(record)
    ctx = dict(rec["context"])
    memory = dict(ctx["memory"])
    memory["attachment"] = ""
    ctx["memory"] = memory
    rec["context"] = ctx
    base = len(orjson.dumps(rec))
    pad = limit + 1 - base
    if pad < 0:
        raise ValueError(f"oversized limit {limit} is below a normal recording's size")
    memory["attachment"] = "A" * pad
    line = orjson.dumps(rec)
    if len(line) != limit + 1:  # pragma: no cover - construction invariant
        raise AssertionError("oversized line has the wrong length")
    return line
