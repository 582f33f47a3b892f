"""The store primitives atomicity rests on, on a folder and on S3: only-if-absent create and
compare-and-swap update, hammered from several threads at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from golden_distill.datasets.store.aliases import move_alias, read_alias
from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.layout import SetLayout


def test_create_exclusive_has_exactly_one_winner(target):
    def attempt(i: int) -> bool:
        return StoreFS(target.url, target.storage_options).create_exclusive(
            "set/_claims/2026.11.29.1", f"writer {i}".encode()
        )

    with ThreadPoolExecutor(8) as pool:
        wins = list(pool.map(attempt, range(8)))
    assert wins.count(True) == 1
    store = StoreFS(target.url, target.storage_options)
    assert store.read_bytes("set/_claims/2026.11.29.1") == f"writer {wins.index(True)}".encode()


def test_update_is_a_compare_and_swap(target):
    """Concurrent increments of one counter: no update is lost."""

    def bump(_: int) -> None:
        store = StoreFS(target.url, target.storage_options)
        for _ in range(4):
            store.update("set/counter", lambda old: str(int(old or b"0") + 1).encode())

    with ThreadPoolExecutor(5) as pool:
        list(pool.map(bump, range(5)))
    assert StoreFS(target.url, target.storage_options).read_bytes("set/counter") == b"20"


def test_latest_ends_on_the_newest_version_whatever_the_finishing_order(target):
    versions = [f"2026.11.29.{n}" for n in range(1, 11)]
    layout = SetLayout("set")

    def move(version: str) -> None:
        store = StoreFS(target.url, target.storage_options)
        move_alias(store, layout, "latest", version, only_forward=True)

    with ThreadPoolExecutor(5) as pool:
        list(pool.map(move, reversed(versions)))
    store = StoreFS(target.url, target.storage_options)
    assert read_alias(store, layout, "latest") == "2026.11.29.10"


def test_write_atomic_replaces_and_listing_sees_children(target):
    store = StoreFS(target.url, target.storage_options)
    store.write_atomic("set/refs/x", b"one")
    store.write_atomic("set/refs/x", b"two")
    store.write_atomic("set/refs/y", b"three")
    assert store.read_bytes("set/refs/x") == b"two"
    assert store.list_names("set/refs") == ["x", "y"]
    assert store.list_names("set/absent") == []
    store.remove("set/refs/x")
    assert store.list_names("set/refs") == ["y"] and not store.exists("set/refs/x")
