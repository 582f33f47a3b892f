"""A failure that names the pipeline stage it happened in, so `golden run` can say where it broke.

Messages name stages, files, ids and reason codes only, never record text (the wrapped exception's
type is kept; its message is kept too because every module in this project follows that rule).
"""

from __future__ import annotations

#: The stages of one run, in order; `golden run` prints the failing one.
STAGES = (
    "validate",  # parameters, config file, pseudonym key
    "discover",  # sources -> shard files
    "shard",  # a shard task as a whole (read, funnels, dedup, write name the step inside it)
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


def describe(exc: BaseException) -> str:
    """A one-line description of an exception for a stage error."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
