"""Keep the garbage collection after every script run short (issue 11: slider-to-redraw).

Streamlit runs a full ``gc.collect(2)`` after every script run, fragment runs included
(``runner.postScriptGC``), and holds the GIL meanwhile, so the browser hears that the run has
ended only after it. A full collection walks every object the process holds, and almost all
of them belong to the imported modules (streamlit, numpy, plotly, pandas, hdp_core): measured
on this 2-core machine, 75-110 ms per rerun of this app against ~50 ms for a one-chart
Streamlit app, on every slider step. ``gc.freeze()`` moves the objects alive at that moment
into the permanent generation, which later collections skip.

Freezing happens after a run that imported new modules (first visit of a page in this
process), right after a collection of the young generations, so almost only objects alive then
are frozen: the modules, and the state of the sessions open at that moment, which is never
freed. That bounded, one-off cost (a handful of freezes per process) buys a short collection on
every later run.

Not a full collection before freezing (issue 29: the first page on a fresh server): it walked
the whole heap, 80 ms of the first run (AppTest, load ~2), while the first user waited, and the
young generations' collection (about 1 ms) leaves it little to find (20 unreachable objects in
that run, then frozen with the rest: a few kB once per freeze). Streamlit's own full
collection right after the run then skips the frozen heap too.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any

import streamlit as st

from hdp_app.common import guarded

_modules_at_freeze = 0  # len(sys.modules) at the last freeze (0: never frozen)


def freeze_after_imports() -> bool:
    """Collect the young generations and freeze the heap if modules were imported since the
    last freeze; returns whether it froze. Called by app.py at the end of every full run."""
    global _modules_at_freeze
    n = len(sys.modules)
    if n == _modules_at_freeze:
        return False
    _modules_at_freeze = n
    gc.collect(1)  # generations 0 and 1 only: see the module docstring
    gc.freeze()
    return True


@st.fragment
def live(section: Callable[..., None], *args: Any) -> None:
    """Draw a page section that has its own controls as a fragment (issue 11): moving one of
    its controls reruns only the section, not the page, the sidebar and the URL sync, so the
    browser gets a few messages instead of the whole page. Only for sections whose controls
    change nothing outside them (not the profile, nothing another section reads). Errors are
    shown in the section, as ``hdp_app.common.guarded`` does."""
    guarded(section, *args)
