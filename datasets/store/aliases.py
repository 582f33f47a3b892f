"""Aliases (refs): movable names such as ``latest``, ``stable``, ``candidate`` for versions.

A ref is a small text object ``<set>/refs/<alias>`` holding the version id and a newline, so any
reader can follow it with a plain file read. Moving one is a single atomic replace done as a
compare-and-swap (see ``fs.StoreFS.update``): ``latest`` only ever moves forward, even when two
publishers finish in the opposite order of their version ids, and ``promote_alias`` refuses to
move any alias backwards unless forced.
"""

from __future__ import annotations

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import (
    ALIAS_RE,
    SetLayout,
    check_alias,
    is_version,
    parse_version,
)

LATEST = "latest"


def _decode(data: bytes | None) -> str | None:
    if data is None:
        return None
    text = data.decode("utf-8", "replace").strip()
    return text if is_version(text) else None


def read_alias(store: StoreFS, layout: SetLayout, alias: str) -> str | None:
    try:
        return _decode(store.read_bytes(layout.ref(alias)))
    except FileNotFoundError:
        return None


def list_aliases(store: StoreFS, layout: SetLayout) -> dict[str, str]:
    """alias -> version for every ref of the set."""
    found = {}
    for name in store.list_names(layout.refs_dir):
        if ALIAS_RE.fullmatch(name):
            version = read_alias(store, layout, name)
            if version is not None:
                found[name] = version
    return found


#: ``move_alias(expect=ANY)``: move whatever the alias points at now.
ANY = object()


def move_alias(
    store: StoreFS,
    layout: SetLayout,
    alias: str,
    version: str,
    *,
    only_forward: bool = False,
    expect: object = ANY,
) -> tuple[str | None, str | None]:
    """Point ``alias`` at ``version`` atomically; returns (previous, current) versions.

    With ``only_forward`` the alias is left alone when it already points at a newer version;
    with ``expect`` (a version id or None: absent) it is left alone unless it points there now
    (the compare-and-swap a publish makes on the set's head).
    """
    check_alias(alias)
    parse_version(version)

    def change(old: bytes | None) -> bytes | None:
        current = _decode(old)
        if expect is not ANY and current != expect:
            return None
        if only_forward and current and parse_version(current) >= parse_version(version):
            return None
        return f"{version}\n".encode()

    old, new = store.update(layout.ref(alias), change)
    return _decode(old), _decode(new)


class AliasBackwards(ValueError):
    """Moving an alias to an older version than it points at, without ``force``."""


def promote_alias(
    store: StoreFS, layout: SetLayout, alias: str, version: str, *, force: bool = False
) -> tuple[str | None, str | None]:
    """Point ``alias`` at ``version`` as a deliberate act (``golden sets promote``): refused
    when that moves it to an older version id (a rollback) unless ``force``; the move is a
    compare-and-swap on what was read, so a publish landing meanwhile is not overwritten.
    The caller holds the set's lock (``set_lock.py``)."""
    current = read_alias(store, layout, alias)
    if current is not None and parse_version(version) < parse_version(current) and not force:
        raise AliasBackwards(
            f"{layout.set_name}@{alias} points at {current}, newer than {version}: refusing to "
            "move it backwards (pass --force to roll back on purpose; readers that pin a public "
            "key refuse a latest that is not the newest signed version)"
        )
    old, new = move_alias(store, layout, alias, version, expect=current)
    if new != version:
        raise AliasBackwards(
            f"{layout.set_name}@{alias} moved from {current} to {new} meanwhile; nothing changed"
        )
    return old, new


def remove_alias(store: StoreFS, layout: SetLayout, alias: str) -> None:
    store.remove(layout.ref(alias))
