"""Date-templated sources: one source string that names a partition per day or hour.

``s3://bucket/recordings/dt={date}/`` or ``logs/{date}/{hour}/*.jsonl.gz`` stand for every
partition of a time window: ``{date}`` is ``YYYY-MM-DD``, ``{hour}`` ``HH`` (``{year}``,
``{month}``, ``{day}`` are there for layouts that split the date). A source with ``{hour}``
has one partition per hour, otherwise one per day. The window ``[since, until)`` picks the
partitions whose period overlaps it, so a nightly run over ``[2026-11-28, 2026-11-29)`` reads
exactly ``dt=2026-11-28`` and a catch-up over two nights reads both.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_PLACEHOLDER = re.compile(r"\{(date|hour|year|month|day)\}")


class TemplateError(ValueError):
    """A templated source cannot be expanded (no window, or an unknown placeholder)."""


def is_templated(source: str) -> bool:
    """True when ``source`` holds a ``{date}``/``{hour}``-style placeholder."""
    return _PLACEHOLDER.search(source) is not None


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def partition_step(source: str) -> timedelta:
    """One hour when the template names the hour, else one day."""
    return timedelta(hours=1) if "{hour}" in source else timedelta(days=1)


def expand_template(source: str, since: datetime | None, until: datetime | None) -> list[str]:
    """The concrete sources of every partition overlapping ``[since, until)``, oldest first.

    A source without placeholders is returned as is."""
    if not is_templated(source):
        return [source]
    if since is None or until is None:
        raise TemplateError(
            f"{source}: a date-templated source needs a window "
            "(--since and --until, or a scheduled run)"
        )
    step = partition_step(source)
    start, end = _utc(since), _utc(until)
    if step == timedelta(days=1):
        moment = start.replace(hour=0, minute=0, second=0, microsecond=0)
    else:
        moment = start.replace(minute=0, second=0, microsecond=0)
    found: list[str] = []
    while moment < end:
        found.append(
            _PLACEHOLDER.sub(
                lambda m, at=moment: {
                    "date": at.strftime("%Y-%m-%d"),
                    "hour": at.strftime("%H"),
                    "year": at.strftime("%Y"),
                    "month": at.strftime("%m"),
                    "day": at.strftime("%d"),
                }[m.group(1)],
                source,
            )
        )
        moment += step
    return list(dict.fromkeys(found))
