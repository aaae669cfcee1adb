"""Plotly never reads a half-imported module (issue 29: pandas kept off the first page).

plotly's validators and JSON encoder look their optional modules up with
``_plotly_utils.optional_imports.get_module(name, should_load=False)``, which is
``sys.modules.get(name)``. A module enters ``sys.modules`` before its body runs, so while one
session's thread imports pandas (the Release or Tier designer page, a tiers editor), a figure
built in another session's thread read a half-made ``pandas`` and failed (seen when the
Profile page stopped importing pandas and two first loads of a fresh server ran at once).

:func:`install` rebinds that lookup, in every plotly module that holds it, to
:func:`imported_module`: a module still being imported counts as absent, which is the same
rule narwhals (plotly's other route to pandas) already applies (``narwhals.dependencies.
_get_imported_module``, CPython's own test in ``importlib._bootstrap._find_and_load``). No value
handed to plotly can be an object of a module that is not whole yet, so treating it as absent
changes nothing else; with ``should_load=True`` the lookup is plotly's own (a real import,
which waits for the module's lock).

With it, app.py no longer imports pandas in every session: the first page (a preset profile)
draws without pandas, and the pages that need it import it themselves.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

from _plotly_utils import optional_imports

MODULES = (
    "_plotly_utils.basevalidators",
    "_plotly_utils.utils",
    "plotly.basedatatypes",
    "plotly.io._json",
)
"""The plotly modules that bind ``get_module`` at import (``from ... import get_module``) and
call it with ``should_load=False`` (plotly 7.1, pinned in requirements.lock; a test reads plotly's
sources for any other)."""

PLOTLY_GET_MODULE = optional_imports.get_module
"""plotly's own lookup (what :func:`install` replaces; kept for plotly's real imports)."""


def imported_module(name: str, should_load: bool = True) -> ModuleType | None:
    """plotly's ``get_module``, except that with ``should_load=False`` a module whose import
    has not finished (it is in ``sys.modules``, its ``__spec__._initializing`` set) is
    returned as None (absent), never half-made."""
    if should_load:
        return PLOTLY_GET_MODULE(name, should_load=True)
    module = sys.modules.get(name)
    spec: Any = getattr(module, "__spec__", None)
    if module is not None and getattr(spec, "_initializing", False):
        return None
    return module


def install() -> None:
    """Import :data:`MODULES` and rebind their ``get_module`` to :func:`imported_module`
    (idempotent; app.py calls it before any page builds a figure)."""
    optional_imports.get_module = imported_module
    for name in MODULES:
        mod = importlib.import_module(name)
        if getattr(mod, "get_module", None) is not imported_module:
            mod.get_module = imported_module  # type: ignore[attr-defined]
