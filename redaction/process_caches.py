"""Forget what redaction remembered in this process about the values it saw.

A process that redacts one task after another keeps a few caches keyed by the values it read:
the pseudonyms of original keys and values (``pseudonym.py``) and the inventory's path and
tool names (``inventory.py``, ``case_scan.py``). They are bounded, but filling them
interleaves long-lived entries with a task's short-lived objects, so Python's allocator cannot
give those pages back. Over 40 shards of a 2M-session run, one process redacting shard after
shard sat at 0.42 GB between shards at first and 0.51-0.53 GB after 20 shards, peaking at
0.66 GB; with these caches (and the findings memo of the time) emptied after each shard it
stayed at 0.39-0.42 GB between shards and peaked at 0.56 GB, for ~2% more CPU. Emptying them
also means no value outlives its task. There is no process-wide memo of findings per text for
the same reason: emptied after each shard, it would serve nothing that a call's own
``FindingsCache`` does not.

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
#: round keys per key type and configured prefix, the permutation of a key type's value shape
#: such as ``AAA-9999``: classes and punctuation, never characters) or shipped data (the name
#: lexicon, the phone metadata warmed once), never by a value read; a few entries each
KEPT_CACHES = frozenset(
    {
        "_compiled",
        "_entropy_plugins",
        "_kind",
        "_round_key",
        "_warm_metadata",
        "_shape",
        "bounded_backtracking",
        "get_mapping_from_secret_type_to_class",
        "lexicon",
        "ruleset",
    }
)


def forget_values() -> None:
    """Empty the value-keyed caches of this process (between tasks)."""
    for module_name, names in VALUE_CACHES.items():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        for name in names:
            getattr(module, name).cache_clear()
