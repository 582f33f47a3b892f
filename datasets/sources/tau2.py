"""tau2-bench adapter (`--format tau2`): the results JSON ``tau2 run`` writes for a text run.

``data/simulations/<run>.json`` (or ``<run>/results.json``) is one object, tau2's ``Results``
saved with ``model_dump_json(indent=2)``: ``timestamp``, ``info`` (the agent's implementation,
model and arguments, the environment's policy), ``tasks`` (each with ``evaluation_criteria``:
the expected ``actions``, ``communicate_info``) and ``simulations`` (each a ``SimulationRun``:
``id``, ``task_id``, ``trial``, ``messages``, ``reward_info``, ``termination_reason``). One case
per simulation (``tau2_simulation``): ``case_id = make_case_id("tau2", <simulation id>)``,
``source.position`` its 1-based place in ``simulations``, its task's expectations as
``expected`` and its reward as the outcome's.

The file is scanned once for its top-level members (``source_io.top_level_values``); ``info``
and ``tasks`` are parsed whole (small), ``simulations`` streamed element by element from a
memory map, so a large run is paged in by the OS, and one broken simulation is quarantined on
its own: ``invalid_json``, ``not_an_object``, ``truncated_stream`` (the file ends inside it),
``missing_field`` (no ``id``, no ``messages``: a voice run's ticks are not read, no task with
its ``task_id``), ``wrong_type``, ``orphan_tool_reply`` (a tool message answering no call), each
with the simulation's position and the field. tau2's directory layout (voice runs:
``results.json`` plus ``simulations/<id>.json``) is not read: those runs carry ticks, not
messages.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any, ClassVar

import orjson

from golden_distill.datasets.quarantine import (
    INVALID_JSON,
    MISSING_FIELD,
    NOT_AN_OBJECT,
    WRONG_TYPE,
    Quarantine,
    QuarantineEntry,
)
from golden_distill.datasets.schema import make_case_id
from golden_distill.datasets.sources.base import ReadStats, SourceError
from golden_distill.datasets.sources.case_rows import (
    UNRECOGNISED_LAYOUT,
    RecordProblem,
    StepFinisher,
    new_case_row,
)
from golden_distill.datasets.sources.config import IngestConfig
from golden_distill.datasets.sources.source_io import (
    first_char,
    iter_json_array,
    mapped_bytes,
    top_level_values,
)
from golden_distill.datasets.sources.tau2_simulation import SimulationConverter, run_facts
from golden_distill.datasets.sources.uris import display_uri

STAGE = "ingest"
#: ``info`` members of tau2's ``Results`` near the start of every results file.
_MARKERS = (b'"agent_info"', b'"user_info"', b'"num_trials"')


class Tau2Adapter:
    format: ClassVar[str] = "tau2"

    def __init__(self, config: IngestConfig | None = None) -> None:
        self.config = config or IngestConfig()
        self.finisher = StepFinisher.from_config(self.config)
        self.converter = SimulationConverter(self.finisher)

    @classmethod
    def sniff(cls, uri: str, head: bytes) -> bool:
        """A JSON object whose start holds tau2's run ``info`` (agent, user, trials)."""
        return first_char(head) == b"{" and all(m in head for m in _MARKERS)

    def read(
        self, uri: str, quarantine: Quarantine, stats: ReadStats, name: str = ""
    ) -> Iterator[dict[str, Any]]:
        with mapped_bytes(uri) as data:
            stats.bytes_read += len(data)
            try:
                members = top_level_values(data)
            except ValueError:
                raise SourceError(
                    f"{display_uri(uri)}: not a tau2 results file (expected a JSON object)"
                ) from None
            if "simulations" not in members:
                if "tasks" in members:
                    return  # tau2's directory layout: the simulations are in their own files
                in_source = name or posixpath.basename(uri)
                raise SourceError(f"{in_source}: no `simulations` in this tau2 results file")
            run = run_facts(_parse(data, members.get("info")))
            tasks = self._tasks(data, members.get("tasks"))
            start = members["simulations"][0]
            if data[start : start + 1] != b"[":
                detail = "simulations is not a list"
                quarantine.add(QuarantineEntry(STAGE, UNRECOGNISED_LAYOUT, uri, None, detail))
                stats.records_read += 1
                return
            for item in iter_json_array(data, start):
                stats.records_read += 1
                if item.problem is not None:
                    detail = f"simulations[{item.index}]"
                    self._reject(quarantine, uri, item.index, item.problem, detail, item.raw)
                    continue
                row = self._convert(uri, item.index, item.raw, tasks, run, quarantine)
                if row is not None:
                    quarantine.accepted()
                    stats.cases += 1
                    yield row

    def _tasks(self, data: Any, span: tuple[int, int] | None) -> dict[str, Any]:
        """Tasks by id (a task that does not parse leaves its simulations without a task)."""
        tasks: dict[str, Any] = {}
        if span is None or data[span[0] : span[0] + 1] != b"[":
            return tasks
        for item in iter_json_array(data, span[0]):
            if item.problem is not None:
                continue
            try:
                task = orjson.loads(item.raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(task, dict) and task.get("id") is not None:
                tasks[str(task["id"])] = task
        return tasks

    def _convert(
        self,
        uri: str,
        position: int,
        raw: bytes,
        tasks: dict[str, Any],
        run: dict[str, Any],
        quarantine: Quarantine,
    ) -> dict[str, Any] | None:
        where = f"simulations[{position}]"
        try:
            simulation = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self._reject(quarantine, uri, position, INVALID_JSON, f"{where}: not valid JSON", raw)
            return None
        case_id = None
        try:
            if not isinstance(simulation, dict):
                raise RecordProblem(NOT_AN_OBJECT, "not a JSON object")
            sim_id = simulation.get("id")
            if sim_id is None or sim_id == "":
                raise RecordProblem(MISSING_FIELD, "id")
            if not isinstance(sim_id, str | int) or isinstance(sim_id, bool):
                raise RecordProblem(WRONG_TYPE, "id")
            case_id = make_case_id("tau2", str(sim_id))
            task_id = simulation.get("task_id")
            task = tasks.get(str(task_id)) if task_id is not None else None
            if task is None:
                raise RecordProblem(MISSING_FIELD, "task_id (no such task in `tasks`)")
            # the simulation id is the trace id (a key: pseudonymised on publish), not repeated
            record_id = f"task={task_id}/trial={simulation.get('trial')}"
            row = new_case_row(case_id, "tau2", uri, position, record_id)
            return self.converter.fill(row, simulation, task, run)
        except RecordProblem as problem:
            detail = f"{where}.{problem.detail}"
            self._reject(quarantine, uri, position, problem.reason, detail, raw, case_id)
            return None

    @staticmethod
    def _reject(
        quarantine: Quarantine,
        uri: str,
        position: int,
        reason: str,
        detail: str,
        raw: bytes | None,
        case_id: str | None = None,
    ) -> None:
        quarantine.add(QuarantineEntry(STAGE, reason, uri, position, detail, case_id, raw))


def _parse(data: Any, span: tuple[int, int] | None) -> Any:
    if span is None:
        return None
    try:
        return orjson.loads(data[span[0] : span[1]])
    except orjson.JSONDecodeError:
        return None
