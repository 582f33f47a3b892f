"""A recording file's name inside its source: what position-based case ids are made of.

Chat transcripts carry no run id, so their case id is derived from where a run sits: the file's
*source name* and the run's position in it. The base name alone is not enough: nightly
partitions repeat it (``dt=2026-11-01/runs.jsonl``, ``dt=2026-11-02/runs.jsonl``), and two runs
at the same position of two partitions would share one id. The source name is the file's path
relative to its *source root*:

* a folder source: the folder (``recordings/`` -> ``dt=2026-11-01/runs.jsonl``);
* a glob or a date template: the folder before the first segment with a wildcard or a
  placeholder (``recordings/dt={date}/`` and ``recordings/*/runs.jsonl`` -> ``recordings``);
* a file source: its folder (the name is the base name);

and the root is then raised above any Hive-style partition folders it sits in (``key=value``),
so ``recordings/dt=2026-11-01/runs.jsonl`` is named ``dt=2026-11-01/runs.jsonl`` whether the
source was the file, its partition folder, the template or the whole tree. A file directly in
its source root keeps the name it always had (its base name), so ids only change where files
in different folders could share one. Pure string work, no I/O.
"""

from __future__ import annotations

import os
import re

from golden_distill.datasets.sources.partitions import is_templated

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_HIVE = re.compile(r"^[^=/]+=[^/]*$")
_WILDCARDS = ("*", "?", "[")


def _comparable(location: str) -> str:
    """``location`` as a plain ``/``-separated path: absolute for a local path, without its
    scheme and leading slashes for a URL (fsspec spells ``memory://x`` as ``memory:///x``)."""
    match = _SCHEME.match(location)
    if match is None:
        return os.path.abspath(location).replace(os.sep, "/")
    return location[match.end() :].lstrip("/")


def source_root(source: str) -> str:
    """The literal folder (or file) a source names before any wildcard or date placeholder."""
    parts = source.rstrip("/").split("/")
    for at, part in enumerate(parts):
        if is_templated(part) or any(ch in part for ch in _WILDCARDS):
            return "/".join(parts[:at])
    return "/".join(parts)


def source_name(source: str, uri: str) -> str:
    """The name of file ``uri`` inside ``source`` (see the module doc): stable across reruns
    for the same source, distinct for distinct files of one source tree."""
    root = _comparable(source_root(source)).rstrip("/")
    path = _comparable(uri).rstrip("/")
    if root and path.startswith(root + "/"):
        relative = path[len(root) + 1 :]
    else:  # the source is the file itself (or names it some other way): its folder is the root
        root, _, relative = path.rpartition("/")
    folders = root.split("/") if root else []
    partitions: list[str] = []
    while folders and _HIVE.match(folders[-1]):
        partitions.insert(0, folders.pop())
    return "/".join([*partitions, relative])
