"""The time window of a run: given by hand, or taken from the schedule and the store's watermark.

* ``since``/``until`` given (``golden run --since/--until``, a backfill with ``-p since=...``):
  exactly that window.
* A scheduled run without them: ``until`` is its scheduled start time (``prefect.runtime``)
  floored to the partition unit (the day, or the hour when a source template names ``{hour}``),
  and ``since`` is the *watermark*, the end of the window of the set's latest version (recorded
  in its manifest), so a missed night is caught up by the next run and nothing is read twice.
  Without a watermark (a new set) the window is one unit long.
* Neither: no window (every record of the sources), the historical behaviour of a manual run.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

from golden_distill.datasets.sources.partitions import partition_step
from golden_distill.datasets.store.aliases import LATEST, read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout
from golden_distill.datasets.store.versions import read_manifest


def floor_to(moment: datetime, step: timedelta) -> datetime:
    moment = moment.astimezone(UTC)
    if step >= timedelta(days=1):
        return moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return moment.replace(minute=0, second=0, microsecond=0)


def window_unit(sources: list[str]) -> timedelta:
    """The finest partition unit the sources name (an hour if any template has ``{hour}``)."""
    return min((partition_step(s) for s in sources), default=timedelta(days=1))


def resolve_window(
    since: datetime | None,
    until: datetime | None,
    *,
    scheduled_start: datetime | None,
    watermark: datetime | None,
    unit: timedelta,
) -> tuple[datetime | None, datetime | None]:
    """The window ``[since, until)`` a run reads (see the module docstring)."""
    if since is not None or until is not None or scheduled_start is None:
        return since, until
    end = floor_to(scheduled_start, unit)
    start = watermark if watermark is not None and watermark < end else end - unit
    if watermark is not None and watermark >= end:
        start = end  # already read up to here: an empty window, nothing is read twice
    return start, end


def scheduled_start_time() -> datetime | None:
    """The scheduled start of the current deployment run; None outside one (a manual run)."""
    with contextlib.suppress(Exception):
        # local: preflight (before Prefect starts) imports this module without Prefect
        from prefect.runtime import deployment, flow_run

        # attribute access, so PREFECT__RUNTIME__DEPLOYMENT__ID and
        # PREFECT__RUNTIME__FLOW_RUN__SCHEDULED_START_TIME can simulate a scheduled run
        if deployment.id:
            start = flow_run.scheduled_start_time
            if start is not None:
                return datetime.fromisoformat(str(start)).astimezone(UTC)
    return None


def store_watermark(
    store_url: str, set_name: str, storage_options: dict[str, Any] | None = None
) -> datetime | None:
    """The end of the window the set's latest version was built from (None: none recorded)."""
    try:
        store = StoreFS(store_url, storage_options)
        latest = read_alias(store, SetLayout(set_name), LATEST)
        if latest is None:
            return None
        lineage = read_manifest(store, set_name, latest).get("lineage") or {}
    except FileNotFoundError:
        return None
    until = lineage.get("until")
    return datetime.fromisoformat(until).astimezone(UTC) if until else None
