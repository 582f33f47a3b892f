"""The new version's strength, measured while it is published, for its report and manifest.

Reads the publish parts (the redacted cases exactly as they go to the store: nothing
unredacted is ever replayed here), keeps at most ``publish.strength.max_cases`` of them (a
deterministic sample, ``sample_case_ids``), and replays them under the mutant catalogue with the
shipped gate (datasets/replay/strength.py). The figure is computed before the report is
rendered because the report is part of the immutable version. A failure here never fails the
run: the report says the strength could not be measured, and why (the exception type only).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from golden_distill.datasets.case import Case
from golden_distill.datasets.publish_config import StrengthConfig

_log = logging.getLogger(__name__)


def version_strength(
    parts: list[Path],
    case_ids: Collection[str],
    settings: StrengthConfig,
    volatile_keys: list[str] | None,
) -> dict[str, Any] | None:
    """``{"strength": summary}`` for the run stats (None: disabled). ``case_ids``: the
    version's cases (what the parts hold, each once). Never raises."""
    if not settings.enabled:
        return None
    started = time.perf_counter()
    try:
        from golden_distill.datasets.replay.config import SHIPPED_GATE, load_replay_config
        from golden_distill.datasets.replay.strength import measure_strength, sample_case_ids

        chosen = sample_case_ids(case_ids, settings.max_cases)
        report = measure_strength(
            _cases(parts, chosen),
            load_replay_config(SHIPPED_GATE),
            volatile_keys=volatile_keys,
            min_kill_share=settings.min_kill_share,
        )
        if chosen is not None:
            report.sampled_from = len(case_ids)
        summary = report.summary()
    except Exception as exc:  # best effort: the version is published either way
        _log.warning("strength not measured: %s", type(exc).__name__)
        summary = {"error": type(exc).__name__}
    summary["seconds"] = round(time.perf_counter() - started, 3)
    return {"strength": summary}


def _cases(parts: list[Path], chosen: set[str] | None) -> Iterator[Case]:
    """The cases of ``parts`` (only ``chosen`` ones when sampling), each case id once."""
    seen: set[str] = set()
    wanted = None if chosen is None else pa.array(sorted(chosen), pa.string())
    for part in parts:
        for batch in pq.ParquetFile(part).iter_batches(batch_size=256):
            if wanted is not None:
                batch = batch.filter(pc.is_in(batch.column("case_id"), value_set=wanted))
            for row in batch.to_pylist():
                if row["case_id"] not in seen:
                    seen.add(row["case_id"])
                    yield Case.from_row(row)
