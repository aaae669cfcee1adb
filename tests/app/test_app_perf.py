"""hdp_app.perf: the heap is frozen after a run that imported modules, and only then; a frozen
heap makes a full collection skip what was alive at the freeze (what app.py relies on for short
reruns), while garbage made later is still collected."""

from __future__ import annotations

import gc
import sys
import types

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


def test_the_first_page_imports_no_pandas():
    """A fresh process drawing the first page (the Profile page, as a new user meets it) never
    imports pandas, nor pyarrow with it: the largest import the floor app does not pay (1.2 to
    1.5 s on this 2-core machine at load 15; issue 29's first load). A subprocess: this test
    process has pandas already."""
    import pathlib
    import subprocess

    root = pathlib.Path(__file__).resolve().parents[2]
    code = (
        "import sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from helpers import whole_app\n"
        "at = whole_app(120)\n"
        "at.run()\n"
        "assert not at.exception, at.exception\n"
        "assert at.title[0].value == 'Privacy profile', at.title\n"
        "print(','.join(sorted({'pandas', 'pyarrow'} & set(sys.modules))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "", out.stdout
