"""The key of a whole run, so an unchanged rerun can be answered without starting Prefect.

A published version's content is a function of its shards' contents, the config, the set, the
pseudonym key and the code (each shard's cache key already folds in content, the config sections
that shape it, the code digest and the time window). The flow records this run key in the
version's manifest stats; `golden run` recomputes it *before* booting Prefect's temporary API and,
when it equals the one recorded by the set's `latest` version, reports that version instead of
running anything: on a no-op rerun the API boot was most of the wall time.

Anything uncertain (a shard that cannot be fingerprinted, a key held in a Prefect Secret block,
any error while checking) means "run the flow": the flow then does its own, cache-based check and
reports errors with their stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from golden_distill.filters.review import log_digest
from golden_distill.flows.caching import version_inputs_sha256
from golden_distill.flows.params import ResolvedRun
from golden_distill.flows.tasks.earlier_versions import latest_made_from, version_location
from golden_distill.flows.tasks.global_steps import review_log

if TYPE_CHECKING:
    from golden_distill.flows.preflight import Prepared


def run_key(
    resolved: ResolvedRun, shard_keys: Sequence[str | None], key_id: str | None
) -> str | None:
    """sha256 over every shard cache key, the whole config, set, key id and code; None when a
    shard has no cache key (uncacheable input: the run must happen)."""
    if not shard_keys:
        return None
    # the window, and a new review decision, make another version
    window = f"{resolved.window}\x1f{resolved.params.rebuild}"
    extra = f"{window}\x1f{log_digest(review_log(resolved))}"
    return version_inputs_sha256(
        resolved.config, resolved.set_name, key_id, shard_keys, extra=extra
    )


def unchanged_latest(prepared: Prepared) -> tuple[str, str] | None:
    """(version, report path) of the set's `latest` version when it was made by exactly this run;
    None when the flow has to run (``--force``, anything changed, or anything uncertain)."""
    resolved = prepared.resolved
    if resolved.params.force or not prepared.run_key:
        return None
    try:
        found = latest_made_from(resolved, prepared.run_key, stat="run_key")
    except Exception:  # the flow will redo the work and report any error with its stage
        return None
    if found is None:
        return None
    version, _stats = found
    return version, version_location(resolved, version)
