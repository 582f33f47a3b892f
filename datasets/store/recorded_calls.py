"""Looking recorded responses up the way a replay job does, and checking that it always works.

A replay harness re-runs an agent and, instead of calling a live system, asks the recording
"what did ``erp_get_order`` answer the 2nd time it was called?" (``lookup``) or "what did it
answer when called with these arguments?" (``lookup_args``, by the canonical-arguments hash that
ingest computed, with the same volatile keys). ``ReplayIndex`` answers both for one case; the
reader hands it to replay jobs, and ``check_table`` runs it over every step of every case before a
version is published (and again by ``golden sets verify``): redaction rewrites arguments, and a
stale hash or a duplicated (tool, occurrence) would make a replay silently miss. A case that
fails blocks the publish.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from golden_distill.datasets.canonical_json import canonical_args_sha256
from golden_distill.datasets.store.order import order_checksum

if TYPE_CHECKING:  # polars is a pipeline dependency: the reader install has none
    import polars as pl


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One recorded step as a replay sees it: how to find it, and what it returned."""

    seq: int
    kind: str
    name: str
    occurrence: int
    arguments: str | None
    args_sha256: str  # stored canonical hash (computed from the arguments when none was stored)
    response: str | None
    status: str
    error: str | None

    @property
    def outcome(self) -> tuple[str | None, str, str | None]:
        """(response, status, error): what a replay serves."""
        return self.response, self.status, self.error


class ReplayMiss(KeyError):
    """No recorded call matches the lookup (names the tool and key, never argument values)."""


class ReplayIndex:
    """The lookups of one case. Built once per case; lookups are dictionary hits."""

    def __init__(self, calls: Iterable[RecordedCall]) -> None:
        self.calls: list[RecordedCall] = sorted(calls, key=lambda c: c.seq)
        self._by_occurrence: dict[tuple[str, int], RecordedCall] = {}
        self._by_args: dict[tuple[str, str], list[RecordedCall]] = {}
        for call in self.calls:
            self._by_occurrence.setdefault((call.name, call.occurrence), call)
            self._by_args.setdefault((call.name, call.args_sha256), []).append(call)

    def lookup(self, tool: str, occurrence: int) -> RecordedCall:
        """The ``occurrence``-th (1-based) recorded call of ``tool``."""
        try:
            return self._by_occurrence[(tool, int(occurrence))]
        except KeyError:
            raise ReplayMiss(f"no recorded call {tool!r} occurrence {occurrence}") from None

    def lookup_args_hash(self, tool: str, args_sha256: str, nth: int = 1) -> RecordedCall:
        calls = self._by_args.get((tool, args_sha256), [])
        if not 1 <= nth <= len(calls):
            raise ReplayMiss(
                f"no recorded call {tool!r} with arguments hash {args_sha256[:12]}... (#{nth})"
            )
        return calls[nth - 1]

    def lookup_args(
        self,
        tool: str,
        arguments: Any,
        nth: int = 1,
        volatile_keys: Iterable[str] | None = None,
    ) -> RecordedCall:
        """The ``nth`` recorded call of ``tool`` whose canonical arguments equal ``arguments``.

        ``arguments`` is a parsed value or JSON text; it is canonicalised exactly as ingest did
        (keys sorted, volatile keys removed), so key order and request ids do not matter.
        """
        digest = canonical_args_sha256(arguments, volatile_keys)
        return self.lookup_args_hash(tool, digest, nth)

    @property
    def order(self) -> list[tuple[str, str]]:
        """The ordered (tool, canonical arguments hash) sequence of the run."""
        return [(c.name, c.args_sha256) for c in self.calls]

    @property
    def order_checksum(self) -> str:
        return order_checksum(self.order)


def make_call(step: dict[str, Any], volatile_keys: Iterable[str] | None) -> RecordedCall:
    """A ``RecordedCall`` from a GOLDEN_SCHEMA step dict."""
    stored = step.get("canonical_args_sha256")
    return RecordedCall(
        seq=int(step["seq"]),
        kind=step.get("kind") or "tool",
        name=step["name"],
        occurrence=int(step["occurrence"]),
        arguments=step.get("arguments"),
        args_sha256=stored or canonical_args_sha256(step.get("arguments"), volatile_keys),
        response=step.get("response"),
        status=step.get("status") or "ok",
        error=step.get("error"),
    )


@dataclass(frozen=True, slots=True)
class ReplayFailure:
    """One step a replay could not look up as recorded. Ids and reason codes only."""

    case_id: str
    seq: int
    tool: str
    reason: str  # occurrence_miss | occurrence_mismatch | args_hash_stale | args_miss | ...


@dataclass(slots=True)
class ReplayCheckResult:
    cases_checked: int = 0
    steps_checked: int = 0
    failures: list[ReplayFailure] = field(default_factory=list)
    #: cases not checked again: their steps are exactly those of a case a published version
    #: passed the check with (``steps_digests``; a grown set's carried cases)
    cases_prechecked: int = 0

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failed_case_ids(self) -> list[str]:
        return sorted({f.case_id for f in self.failures})

    def failures_per_reason(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for failure in self.failures:
            counts[failure.reason] = counts.get(failure.reason, 0) + 1
        return dict(sorted(counts.items()))

    def summary(self) -> dict[str, Any]:
        return {
            "cases_checked": self.cases_checked,
            "steps_checked": self.steps_checked,
            "failed_cases": len(self.failed_case_ids),
            "cases_prechecked": self.cases_prechecked,
            "failures_per_reason": self.failures_per_reason(),
        }

    def describe(self, limit: int = 10) -> str:
        shown = ", ".join(
            f"{f.case_id} step {f.seq} ({f.tool}): {f.reason}" for f in self.failures[:limit]
        )
        more = len(self.failures) - limit
        return shown + (f" and {more} more" if more > 0 else "")


def check_case(
    case_id: str, calls: Sequence[RecordedCall], volatile_keys: Iterable[str] | None
) -> list[ReplayFailure]:
    """Every step of one case must be found both ways and return exactly what is stored."""
    index = ReplayIndex(calls)
    failures: list[ReplayFailure] = []
    seen_args: dict[tuple[str, str], int] = {}
    for call in index.calls:
        reasons = []
        try:
            if index.lookup(call.name, call.occurrence).outcome != call.outcome:
                reasons.append("occurrence_mismatch")
        except ReplayMiss:
            reasons.append("occurrence_miss")
        recomputed = canonical_args_sha256(call.arguments, volatile_keys)
        if recomputed != call.args_sha256:
            reasons.append("args_hash_stale")  # arguments rewritten (redaction?), hash not
        key = (call.name, recomputed)
        seen_args[key] = nth = seen_args.get(key, 0) + 1
        try:  # what lookup_args(name, arguments, nth) does, without hashing twice
            if index.lookup_args_hash(call.name, recomputed, nth).outcome != call.outcome:
                reasons.append("args_mismatch")
        except ReplayMiss:
            reasons.append("args_miss")
        failures.extend(ReplayFailure(case_id, call.seq, call.name, r) for r in reasons)
    return failures


_STEP_FIELDS = (
    "seq",
    "kind",
    "name",
    "occurrence",
    "arguments",
    "canonical_args_sha256",
    "response",
    "status",
    "error",
)


def iter_case_calls(
    table: pa.Table, volatile_keys: Iterable[str] | None
) -> Iterable[tuple[str, list[RecordedCall]]]:
    """(case_id, calls) for every row, read column-wise (fast: no per-case dicts)."""
    vk = list(volatile_keys) if volatile_keys is not None else None
    for batch in table.select(["case_id", "steps"]).to_batches(max_chunksize=4096):
        case_ids = batch.column(0).to_pylist()
        steps = batch.column(1)
        offsets = steps.offsets.to_pylist()  # absolute positions into the unsliced values
        base = offsets[0] if offsets else 0
        offsets = [o - base for o in offsets]
        values = steps.values.slice(base, offsets[-1] if offsets else 0)  # this slice's steps
        valid = steps.is_valid().to_pylist()
        seq, kind, name, occ, args, stored, resp, status, error = (
            values.field(f).to_pylist() for f in _STEP_FIELDS
        )
        for row, case_id in enumerate(case_ids):
            calls = []
            if valid[row]:
                for i in range(offsets[row], offsets[row + 1]):
                    calls.append(
                        RecordedCall(
                            seq=seq[i],
                            kind=kind[i] or "tool",
                            name=name[i],
                            occurrence=occ[i],
                            arguments=args[i],
                            args_sha256=stored[i] or canonical_args_sha256(args[i], vk),
                            response=resp[i],
                            status=status[i] or "ok",
                            error=error[i],
                        )
                    )
            yield case_id, calls


def check_table(table: pa.Table, volatile_keys: Iterable[str] | None) -> ReplayCheckResult:
    """The replay completeness check over a whole GOLDEN_SCHEMA table."""
    result = ReplayCheckResult()
    vk = list(volatile_keys) if volatile_keys is not None else None
    for case_id, calls in iter_case_calls(table, vk):
        result.cases_checked += 1
        result.steps_checked += len(calls)
        result.failures.extend(check_case(case_id, calls, vk))
    return result


#: Columns of ``steps_digests``: a case id and a 128-bit digest of its steps (two seeded hashes).
DIGEST_COLUMNS = ("case_id", "steps_a", "steps_b")


def steps_digests(table: pa.Table | pl.DataFrame) -> pl.DataFrame:
    """Per case, a digest of everything the replay check reads (the whole ``steps`` list: every
    field of every step, nulls included). Two cases with equal digests pass or fail the check
    alike, so a case carried unchanged from a version that passed it need not be checked
    again."""
    import polars as pl  # pipeline-only (publishing), never on the reader's path

    if isinstance(table, pa.Table):
        frame = pl.from_arrow(table.select(["case_id", "steps"]))
        assert isinstance(frame, pl.DataFrame)
    else:
        frame = table.select("case_id", "steps")
    steps = pl.col("steps")
    return frame.select("case_id", steps_a=steps.hash(0x5EED), steps_b=steps.hash(0xC0FFEE))


def check_table_except(
    table: pa.Table, volatile_keys: Iterable[str] | None, prechecked: pl.DataFrame | None
) -> ReplayCheckResult:
    """``check_table`` over the cases of ``table`` whose steps digest is not in ``prechecked``
    (``steps_digests`` rows of cases already checked); the others are counted as prechecked."""
    if prechecked is None or prechecked.height == 0 or table.num_rows == 0:
        return check_table(table, volatile_keys)
    import polars as pl  # only with ``prechecked``, which only the pipeline passes

    same = (
        steps_digests(table)
        .with_row_index("_row")
        .join(prechecked.select(DIGEST_COLUMNS), on=list(DIGEST_COLUMNS), how="semi")
        .get_column("_row")
    )
    if same.len() == 0:
        return check_table(table, volatile_keys)
    mask = pl.repeat(True, table.num_rows, eager=True).scatter(same, False).to_arrow()
    result = check_table(table.filter(mask), volatile_keys)
    result.cases_prechecked = same.len()
    return result
