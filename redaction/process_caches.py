"""Forget what redaction remembered in this process about the values it saw.

A process that redacts one task after another keeps a few caches keyed by the values it read:
the findings memo (``findings_memo.py``: texts), the pseudonyms of original keys and values
(``pseudonym.py``), and the inventory's path and tool names (``inventory.py``,
``case_scan.py``). They are bounded, but filling them interleaves long-lived entries with a
task's short-lived objects, so Python's allocator cannot give those pages back: a lean
redaction helper grew from ~0.42 to ~0.53 GB over 20-40 tasks and peaked at 0.66 GB, against a
flat 0.41 / 0.53 GB when these caches were emptied after each task, for ~2% more CPU
(docs/benchmarks.md, session 10). Emptying them also means no value outlives its task.

Only modules already loaded are touched: forgetting never imports Presidio into a process that
has not redacted.
"""

from __future__ import annotations

import sys

#: module -> names of its caches holding values seen in a task (``functools.lru_cache``)
VALUE_CACHES: dict[str, tuple[str, ...]] = {
    "golden_distill.redaction.pseudonym": ("key_pseudonym", "value_token"),
    "golden_distill.redaction.inventory": ("safe_key", "safe_tool", "_location_parts"),
    "golden_distill.redaction.case_scan": ("_leaf_path",),
}
#: caches kept across tasks: keyed by configuration (patterns, the secrets ruleset, the key's
#: round keys per key type and configured prefix) or shipped data (the name lexicon), never by
#: a value read; a few entries each
KEPT_CACHES = frozenset(
    {
        "_compiled",
        "_entropy_plugins",
        "_kind",
        "_round_key",
        "bounded_backtracking",
        "get_mapping_from_secret_type_to_class",
        "lexicon",
        "ruleset",
    }
)
MEMO_MODULE = "golden_distill.redaction.findings_memo"


def forget_values() -> None:
    """Empty the value-keyed caches and the findings memo of this process (between tasks)."""
    memo = sys.modules.get(MEMO_MODULE)
    if memo is not None:
        memo.clear()
    for module_name, names in VALUE_CACHES.items():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name in names:
            getattr(module, name).cache_clear()
