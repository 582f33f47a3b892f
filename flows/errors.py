"""A failure that names the pipeline stage it happened in, so `golden run` can say where it broke.

Messages name stages, files, ids and reason codes only, never record text. Our own exceptions
follow that rule; a library's may not (polars and pyarrow quote the value they could not convert,
a KeyError on a string *is* the string), so ``describe`` keeps the message only of exceptions
defined in this package, OS errors (paths) and config/parameter validation errors, and withholds
any other message: its full traceback goes to a local error log (the work folder's
``errors.log``, mode 0600, the same access class as the recordings) and the message says where.
Stage boundaries raise ``StageError(...) from None`` so no chained cause reaches Prefect's logs.
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

#: Where withheld errors are written in full; set per run by the flow (`set_error_log`).
ERROR_LOG_ENV = "GOLDEN_ERROR_LOG"

#: The stages of one run, in order; `golden run` prints the failing one.
STAGES = (
    "validate",  # parameters, config file, pseudonym key
    "lock",  # the set's lock: another writer holds the set (flows/set_guard.py)
    "repair",  # settling a publish a killed writer left (datasets/store/head.py)
    "discover",  # sources -> shard files
    "shard",  # a shard task as a whole (read, funnels, dedup, write name the step inside it)
    "read",  # inside a shard task: reading, windowing, quarantining its records
    "funnels",  # inside a shard task: funnel scores
    "write",  # inside a shard or redact task: writing its Parquet files
    "select",  # global quotas
    "dedup",  # global clustering
    "redact",  # redaction of the chosen cases
    "publish",
    "report",
)


class StageError(RuntimeError):
    """A run failed in ``stage``; ``detail`` says what and where, without record content."""

    def __init__(self, stage: str, detail: str) -> None:
        self.stage = stage
        self.detail = detail
        super().__init__(f"stage {stage!r} failed: {detail}")

    def __reduce__(self) -> tuple[type[StageError], tuple[str, str]]:
        # Crosses process boundaries (process pool, Dask workers) intact.
        return (StageError, (self.stage, self.detail))


def set_error_log(path: Path) -> None:
    """Send withheld error details of this run (and the worker processes it starts) to ``path``."""
    os.environ[ERROR_LOG_ENV] = str(path)


def _message_is_ours(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return (
        module.startswith("golden_distill.")
        or isinstance(exc, OSError)
        or (module.startswith("pydantic") and type(exc).__name__ == "ValidationError")
    )


def _log_withheld(exc: BaseException) -> str | None:
    target = os.environ.get(ERROR_LOG_ENV)
    if not target:
        return None
    try:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(
                f"--- {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} pid {os.getpid()}\n"
            )
            fh.write("".join(traceback.format_exception(exc)))
    except OSError:
        return None
    return target


def describe(exc: BaseException) -> str:
    """A one-line description of an exception for a stage error, safe to log (see above)."""
    name = type(exc).__name__
    if _message_is_ours(exc):
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{name}: {text}" if text else name
    log = _log_withheld(exc)
    where = f"; full error in {log}" if log else ""
    return f"{name} (message withheld: it may quote record data{where})"


def find_stage_error(exc: BaseException | None) -> StageError | None:
    """The StageError in ``exc``'s cause/context chain, if any."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, StageError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


#: Failures worth retrying: storage and network hiccups. A logic error fails the same way again.
TRANSIENT = (OSError, ConnectionError, TimeoutError)


def is_transient(exc: BaseException | None) -> bool:
    """True when ``exc`` or anything in its cause chain is a storage/network error."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, TRANSIENT) and not isinstance(exc, FileNotFoundError | PermissionError):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def retry_if_transient(task: object, task_run: object, state: object) -> bool:
    """Prefect ``retry_condition_fn``: retry storage/network failures only."""
    data = getattr(state, "data", None)
    exc = data if isinstance(data, BaseException) else None
    if exc is None:
        try:
            exc = state.result(raise_on_failure=False)  # type: ignore[attr-defined]
        except Exception as raised:  # pragma: no cover - depends on Prefect internals
            exc = raised
    return is_transient(exc if isinstance(exc, BaseException) else None)
