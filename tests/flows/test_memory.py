"""flows/memory.py: a finished task gives its memory back, a cache hit does not pay for it."""

from __future__ import annotations

import pytest
from prefect.states import Completed, Failed

from golden_distill.flows import memory


@pytest.fixture
def releases(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(memory, "release_memory", lambda: calls.append(1))
    return calls


def test_a_task_that_ran_gives_its_memory_back(releases: list[int]) -> None:
    memory.release_after_task(None, None, Completed())
    memory.release_after_task(None, None, Failed())
    assert len(releases) == 2


def test_a_cache_hit_skips_the_collection(releases: list[int]) -> None:
    memory.release_after_task(None, None, Completed(name=memory.CACHED_STATE))
    assert releases == []


def test_the_cached_state_name_is_the_one_prefect_gives(
    prefect_api: str, tmp_path, releases: list[int]
) -> None:
    """A real task answered from its cache on the second call reaches the hook as 'Cached'."""
    from prefect import flow, task
    from prefect.cache_policies import INPUTS

    seen: list[str] = []

    def hook(task_, task_run, state) -> None:  # type: ignore[no-untyped-def]
        seen.append(state.name)
        memory.release_after_task(task_, task_run, state)

    @task(cache_policy=INPUTS, on_completion=[hook], persist_result=True)
    def double(x: int, salt: str) -> int:  # salt: a cache key of this test alone
        return 2 * x

    @flow
    def twice() -> tuple[int, int]:
        return double(21, str(tmp_path)), double(21, str(tmp_path))

    assert twice() == (42, 42)
    assert seen == ["Completed", memory.CACHED_STATE]
    assert len(releases) == 1


@pytest.fixture
def collections(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    calls: list[bool] = []
    monkeypatch.setattr(memory, "release_memory", lambda collect=True: calls.append(collect))
    return calls


def test_a_helped_task_returns_pages_without_a_collection(collections: list[bool]) -> None:
    """Its body ran in a lean helper, which released its own memory: no full collection in
    the flow's process, only free pages returned; nothing at all for a cache hit."""
    memory.trim_after_helped_task(None, None, Completed())
    memory.trim_after_helped_task(None, None, Failed())
    memory.trim_after_helped_task(None, None, Completed(name=memory.CACHED_STATE))
    assert collections == [False, False]


def test_release_without_collect_skips_the_garbage_collector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collected: list[int] = []
    monkeypatch.setattr(memory.gc, "collect", lambda: collected.append(1) or 0)
    memory.release_memory(collect=False)
    assert collected == []
    memory.release_memory()
    assert collected == [1]
