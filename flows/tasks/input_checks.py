"""What the select step checks over every shard before it chooses, and after: the input gave
cases, one case id means one record, and something was selected. Each failure is a
``StageError`` that stops the run before anything is redacted or published (no version, no
alias move); `golden run` prints it and exits 1. The decisions live in ``datasets/``
(``case_identity``, ``ingest_output.no_case_message``); this module reads the shards' small
files and raises.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import polars as pl

from golden_distill.datasets.case_identity import collision_error, conflicting_ids
from golden_distill.datasets.ingest_output import no_case_message
from golden_distill.flows.errors import StageError
from golden_distill.flows.tasks.jobs import ShardResult
from golden_distill.flows.work_folder import WorkFolder

NOTHING_PUBLISHED = "nothing was published"


def _total(results: list[ShardResult], key: str) -> int:
    return sum(int(r.stats.get(key, 0)) for r in results)


def check_input(results: list[ShardResult]) -> None:
    """Fail when no case came out of the input: every shard empty, or every record
    quarantined (a wrong ``--format``: the hint names the format the input looks like)."""
    if _total(results, "cases_read"):
        return
    quarantined: Counter[str] = Counter()
    for result in results:
        quarantined.update(result.stats.get("quarantined") or {})
    hints = [(str(u), str(h)) for r in results for u, h in r.stats.get("format_hints") or ()]
    message = no_case_message(
        _total(results, "records_read"), dict(quarantined), len(results), hints
    )
    raise StageError("select", f"no case read: {message}; {NOTHING_PUBLISHED}")


def check_case_ids(results: list[ShardResult], work: WorkFolder) -> None:
    """Fail when two different records carry one case id, naming both places
    (``datasets/case_identity.py``). Reads two small columns of every shard's identities,
    then the places of the first clashing id only."""
    paths = [r.identities_path for r in results if r.identities_path]
    digests = [work.read_frame(p, ["case_id", "content_digest"]) for p in paths]
    clashing = conflicting_ids(digests)
    del digests
    if not clashing.len():
        return
    first = clashing.head(1).implode()
    rows = pl.concat(
        [work.read_frame(p).filter(pl.col("case_id").is_in(first)) for p in paths],
        how="vertical_relaxed",
    )
    raise StageError("select", f"{collision_error(rows, clashing.len())}; {NOTHING_PUBLISHED}")


def check_selected(selection: Any, results: list[ShardResult], window: tuple[Any, Any]) -> None:
    """Fail when the version would hold no case: nothing selected and nothing carried."""
    if selection.selected_count:
        return
    since, until = (w or "-" for w in window)
    raise StageError(
        "select",
        f"nothing selected: {_total(results, 'cases_read'):,} case(s) read, "
        f"{_total(results, 'in_window'):,} in the window ({since} .. {until}), "
        f"{_total(results, 'candidates'):,} funnel candidate(s), 0 chosen; {NOTHING_PUBLISHED}",
    )
