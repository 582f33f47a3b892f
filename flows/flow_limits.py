"""How long a `distill` run may take and how often Prefect runs it again after a failure.

A night that hangs must end in a ``TimedOut`` state (so the alert fires, configs/alerts.yaml)
instead of holding the set's lock forever; a night that failed on a passing fault (an S3 endpoint
away for a few seconds) should be run again by Prefect rather than wait for a person. Shard,
selection and redaction results are cached, so a retry redoes only what had not finished.

These are flow options, fixed when the flow is defined, so they come from the environment of the
process that imports the flow: the worker's (``job_variables.env`` in prefect.yaml) or the shell
of `golden run`. Defaults: a 6-hour timeout and no retry (a run by hand fails at once; the
`nightly` deployment sets two retries).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

TIMEOUT_ENV = "GOLDEN_FLOW_TIMEOUT_SECONDS"
RETRIES_ENV = "GOLDEN_FLOW_RETRIES"
RETRY_DELAY_ENV = "GOLDEN_FLOW_RETRY_DELAY_SECONDS"

#: Six hours: several times a million-session night on two cores, well before the next night.
DEFAULT_TIMEOUT_SECONDS = 6 * 3600.0


class FlowLimitsError(ValueError):
    """An environment variable of the flow's limits is not a number of the right kind."""


@dataclass(frozen=True)
class FlowLimits:
    timeout_seconds: float | None  # None: no timeout (`GOLDEN_FLOW_TIMEOUT_SECONDS=0`)
    retries: int
    retry_delay_seconds: int  # whole seconds: Prefect's run policy holds an int


def _number(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise FlowLimitsError(f"{name}={raw!r}: not a number") from None
    if value < 0:
        raise FlowLimitsError(f"{name}={raw!r}: must be >= 0")
    return value


def flow_limits(environ: Mapping[str, str] | None = None) -> FlowLimits:
    """The limits the environment asks for (defaults for what it leaves unset)."""
    env = os.environ if environ is None else environ
    timeout = _number(env, TIMEOUT_ENV, DEFAULT_TIMEOUT_SECONDS)
    retries = _number(env, RETRIES_ENV, 0.0)
    delay = _number(env, RETRY_DELAY_ENV, 60.0)
    for name, value in ((RETRIES_ENV, retries), (RETRY_DELAY_ENV, delay)):
        if not value.is_integer():
            raise FlowLimitsError(f"{name}={env[name]!r}: must be a whole number")
    return FlowLimits(
        timeout_seconds=timeout or None, retries=int(retries), retry_delay_seconds=int(delay)
    )
