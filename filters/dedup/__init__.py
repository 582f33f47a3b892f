"""Deduplication: exact duplicates by normalised content, near duplicates by clustering.

Two-phase API (the flow runs phase 1 per shard and phase 2 once, globally):

* ``signatures(df, cfg) -> pl.DataFrame``: a compact per-case signature (SIGNATURE_SCHEMA);
* ``cluster(signatures, cfg) -> Clustering``: the cluster table (CLUSTER_SCHEMA) and stats;
* ``choose_representatives(table, excluded_case_ids, k)``: the kept cases, re-runnable when a
  representative is quarantined later (the next member of its cluster takes its place).

(Tests chain the three for one frame with ``tests/support/dedup_helpers.deduplicate``.)
"""

import sys
from importlib import import_module
from types import ModuleType
from typing import Any

# Exports resolve on first use (PEP 562): importing the package for its config model (the
# pipeline config, `golden run`'s checks before Prefect starts) must not pull in scikit-learn
# and scipy, which cost most of a second.
_EXPORTS = {
    "CLUSTER_SCHEMA": "cluster",
    "Clustering": "cluster",
    "ClusterStats": "cluster",
    "cluster": "cluster",
    "DedupConfig": "config",
    "KEPT_SCHEMA": "representatives",
    "choose_representatives": "representatives",
    "SIGNATURE_SCHEMA": "signature",
    "signatures": "signature",
}


class _LazyExports(ModuleType):
    """Resolves an export on first use; importing a submodule named like a function it exports
    (``cluster``, ``deduplicate``) does not replace the exported function."""

    def __getattr__(self, name: str) -> Any:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(f"{__name__}.{module}"), name)
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and _EXPORTS.get(name) == name:
            return  # the import system binding a submodule: the export keeps the name
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _LazyExports


__all__ = [
    "CLUSTER_SCHEMA",
    "KEPT_SCHEMA",
    "SIGNATURE_SCHEMA",
    "ClusterStats",
    "Clustering",
    "DedupConfig",
    "choose_representatives",
    "cluster",
    "signatures",
]
