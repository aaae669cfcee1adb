"""hdp_app.perf: the heap is frozen after a run that imported modules, and only then; a frozen
heap makes a full collection skip what was alive at the freeze (what app.py relies on for short
reruns), while garbage made later is still collected."""

from __future__ import annotations

import gc
import sys
import types
import weakref

import pytest

from hdp_app import perf


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_freezes_only_after_new_imports(unfrozen, monkeypatch):
    monkeypatch.setattr(perf, "_modules_at_freeze", 0)
    assert perf.freeze_after_imports() is True
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert perf.freeze_after_imports() is False  # nothing imported since
    monkeypatch.setitem(sys.modules, "hdp_perf_probe", types.ModuleType("hdp_perf_probe"))
    assert perf.freeze_after_imports() is True


def test_frozen_objects_are_skipped_and_new_garbage_collected(unfrozen, monkeypatch):
    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a

    monkeypatch.setattr(perf, "_modules_at_freeze", 0)
    perf.freeze_after_imports()
    tracked = len(gc.get_objects())  # the collector's generations, without the frozen heap
    assert tracked < gc.get_freeze_count()
    cycle()
    assert gc.collect() >= 2  # a cycle made after the freeze is still found


def test_freeze_collects_only_the_young_generations(unfrozen, monkeypatch):
    """The first run on a fresh server waits for the freeze: no full collection of the heap
    (issue 29), but a young cycle of garbage is collected, not frozen for ever."""
    calls: list[tuple] = []
    collect = gc.collect

    def spy(*args: int) -> int:
        calls.append(args)
        return collect(*args)

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b  # unreachable now, freed only by a collection that reaches its generation
    assert gone() is not None
    monkeypatch.setattr(perf.gc, "collect", spy)
    monkeypatch.setattr(perf, "_modules_at_freeze", 0)
    assert perf.freeze_after_imports() is True
    assert calls == [(1,)]
    assert gone() is None
