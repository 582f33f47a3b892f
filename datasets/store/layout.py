"""Where everything of a golden set lives in a store, and the names that are valid there.

```
<store>/<set>/versions/<version>/cases.parquet | cases-NNNN.parquet ...
<store>/<set>/versions/<version>/clusters.parquet     (when the pipeline gave clusters)
<store>/<set>/versions/<version>/report.html          (when the pipeline gave a report)
<store>/<set>/versions/<version>/decisions.parquet    why each case read is in or out (pipeline)
<store>/<set>/versions/<version>/manifest.json        written last: the version exists from here
<store>/<set>/refs/<alias>                            text: the version id, e.g. 2026.11.29.1
<store>/<set>/_claims/<version>                       create-if-absent: who allocated the id
<store>/<set>/_staging/<token>/                       local stores: built here, then renamed
<store>/<set>/_staging/<token>.manifest/              its manifest (+ signature), moved in last
```

Underscore folders are bookkeeping; a reader needs only ``versions/`` and ``refs/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

MANIFEST_NAME = "manifest.json"
REPORT_NAME = "report.html"
CLUSTERS_NAME = "clusters.parquet"
DECISIONS_NAME = "decisions.parquet"

# Names become folder and object names, so every check is a *full* match over ASCII only:
# ``re.match`` with ``$`` would accept a trailing newline, ``\d`` would accept other scripts'
# digits, and Unicode look-alikes of '/' and '.' (U+2215, U+FF0E...) are outside these classes.
VERSION_RE = re.compile(r"([0-9]{4})\.([0-9]{2})\.([0-9]{2})\.([1-9][0-9]*)")
ALIAS_RE = re.compile(r"[a-z][a-z0-9_-]{0,63}")
SET_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
#: A file named in a manifest: a plain name inside the version folder (no separators, no '..').
FILE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
#: Names a set cannot take: store-level folders (public keys of signers).
RESERVED_SET_NAMES = frozenset({"trusted_keys"})


class LayoutError(ValueError):
    """A set name, version id, alias or reference that is not valid."""


def cases_file_name(index: int, count: int) -> str:
    """``cases.parquet`` for a one-file set, ``cases-NNNN.parquet`` when it is split."""
    return "cases.parquet" if count == 1 else f"cases-{index:04d}.parquet"


def parse_version(version: str) -> tuple[int, int, int, int]:
    """``"2026.11.29.3"`` -> ``(2026, 11, 29, 3)``: the sort key of version ids."""
    match = VERSION_RE.fullmatch(version) if isinstance(version, str) else None
    if not match:
        raise LayoutError(f"not a version id (expected YYYY.MM.DD.N): {version!r}")
    y, m, d, n = (int(g) for g in match.groups())
    return y, m, d, n


def is_version(text: str) -> bool:
    return isinstance(text, str) and VERSION_RE.fullmatch(text) is not None


def format_version(day: date, n: int) -> str:
    return f"{day.year:04d}.{day.month:02d}.{day.day:02d}.{n}"


def check_set_name(name: str) -> str:
    if not isinstance(name, str) or not SET_NAME_RE.fullmatch(name) or ".." in name:
        raise LayoutError(
            f"not a valid set name: {name!r} (ASCII letters, digits, '_', '.', '-'; starting "
            "with a letter or digit; at most 128; no '..', control characters or line breaks)"
        )
    if name in RESERVED_SET_NAMES:
        raise LayoutError(f"not a valid set name: {name!r} is reserved by the store")
    return name


def check_alias(alias: str) -> str:
    if not isinstance(alias, str) or not ALIAS_RE.fullmatch(alias):
        raise LayoutError(
            f"not a valid alias: {alias!r} (ASCII lower-case letters, digits, '_', '-'; "
            "starting with a letter; at most 64; no control characters or line breaks)"
        )
    return alias


def check_file_name(name: object, where: str = "manifest") -> str:
    """A file name from a manifest: a plain name inside the version folder, never a path."""
    if not isinstance(name, str) or not FILE_NAME_RE.fullmatch(name) or ".." in name:
        raise LayoutError(
            f"{where}: file name {name!r} is not a plain name inside the version folder "
            "(no '/', '\\', '..', absolute paths or control characters)"
        )
    return name


@dataclass(frozen=True, slots=True)
class SetRef:
    """A parsed ``name@version`` or ``name@alias`` (``name`` alone means ``name@latest``)."""

    set_name: str
    selector: str

    @property
    def is_version(self) -> bool:
        return is_version(self.selector)

    def __str__(self) -> str:
        return f"{self.set_name}@{self.selector}"


def parse_ref(text: str) -> SetRef:
    name, _, selector = text.partition("@")
    selector = selector or "latest"
    check_set_name(name)
    if not is_version(selector):
        check_alias(selector)
    return SetRef(name, selector)


@dataclass(frozen=True, slots=True)
class SetLayout:
    """Paths (store-relative, '/'-separated) of one set's folders and files."""

    set_name: str

    def __post_init__(self) -> None:
        check_set_name(self.set_name)

    @property
    def versions_dir(self) -> str:
        return f"{self.set_name}/versions"

    @property
    def refs_dir(self) -> str:
        return f"{self.set_name}/refs"

    @property
    def claims_dir(self) -> str:
        return f"{self.set_name}/_claims"

    @property
    def staging_dir(self) -> str:
        return f"{self.set_name}/_staging"

    @property
    def trash_dir(self) -> str:
        return f"{self.set_name}/_trash"

    def version_dir(self, version: str) -> str:
        parse_version(version)
        return f"{self.versions_dir}/{version}"

    def version_file(self, version: str, name: str) -> str:
        check_file_name(name, f"{self.set_name}@{version}")
        return f"{self.version_dir(version)}/{name}"

    def manifest(self, version: str) -> str:
        return self.version_file(version, MANIFEST_NAME)

    def ref(self, alias: str) -> str:
        return f"{self.refs_dir}/{check_alias(alias)}"

    def claim(self, version: str) -> str:
        parse_version(version)
        return f"{self.claims_dir}/{version}"
