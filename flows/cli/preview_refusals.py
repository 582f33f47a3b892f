"""`golden preview --check-redaction`: the run's redaction refusals, predicted.

Preview leaves redaction out by default (Presidio is the slow step). With this option it redacts
the cases it selected, exactly as a run's redaction rounds do (``flows/redact_stage.py``): a
refused case leaves, its cluster chooses again (``filters.selection.choose`` with it excluded,
quotas included), the replacements are redacted in the next round, up to the run's number of
rounds. What it reports is what `golden run` will publish and count
(``filters/refusal_accounting.py``). Ids and counts only: the redacted rows are discarded, and
the refusals' quarantine file (ids, reasons, entity types) stays in preview's temporary folder.
The pseudonym key is the run's (``GOLDEN_PSEUDONYM_KEY`` or the configured secret block).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def predict_refusals(
    cases: Any, scored: Any, clusters: Any, cfg: Any, scratch: Path
) -> tuple[set[str], dict[str, Any]]:
    """(the case ids a run would publish, the refusal counts) for ``scored`` decisions and
    ``clusters`` of ``cases`` (ingested Parquet) under pipeline config ``cfg``."""
    # heavy (polars, Presidio): loaded when the option is used
    import polars as pl

    from golden_distill.filters.case_source import as_lazy
    from golden_distill.filters.refusal_accounting import refusal_accounting
    from golden_distill.filters.selection import choose
    from golden_distill.flows.redact_stage import MAX_REDACTION_ROUNDS
    from golden_distill.flows.tasks.redact_body import redact_candidates

    first = choose(scored, clusters, cfg.funnels, cfg.dedup).representatives
    current = first
    excluded: set[str] = set()
    checked: set[str] = set()
    for round_no in range(MAX_REDACTION_ROUNDS):
        ids = set(current.get_column("case_id").to_list()) - checked
        if not ids:
            break
        rows = (
            as_lazy(cases)
            .filter(pl.col("case_id").is_in(sorted(ids)))
            .unique("case_id", keep="first")
            .collect()
        )
        quarantine = scratch / f"refused-{round_no}.jsonl"
        _, refused, _, _ = redact_candidates(rows.to_arrow(), cfg, quarantine, None)
        checked |= ids
        if not refused:
            break
        excluded |= set(refused)
        current = choose(scored, clusters, cfg.funnels, cfg.dedup, excluded=excluded)
        current = current.representatives
    published = current.filter(pl.col("case_id").is_in(sorted(checked)))
    counts = refusal_accounting(first, published, excluded)
    return set(published.get_column("case_id").to_list()), counts
