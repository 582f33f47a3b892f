"""Aliases (refs): movable names such as ``latest``, ``stable``, ``candidate`` for versions.

A ref is a small text object ``<set>/refs/<alias>`` holding the version id and a newline, so any
reader can follow it with a plain file read. Moving one is a single atomic replace done as a
compare-and-swap (see ``fs.StoreFS.update``): ``latest`` only ever moves forward, even when two
publishers finish in the opposite order of their version ids.
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


def remove_alias(store: StoreFS, layout: SetLayout, alias: str) -> None:
    store.remove(layout.ref(alias))
