"""hdp_app.plotly_guard (issue 29: pandas off the first page): plotly never reads a module that
another thread is still importing, so app.py no longer imports pandas in every session."""

from __future__ import annotations

import importlib.machinery
import json
import pathlib
import sys
import types

import plotly
import plotly.io as pio
import pytest
from helpers import ROOT, fresh_python

from hdp_app import plotly_guard as G
from hdp_app.figures.design import menu_figure
from hdp_core import design as D
from hdp_core import menu as M


def _half_made(name: str) -> types.ModuleType:
    """A module as sys.modules holds it while another thread runs its body: its spec marked
    as initializing, none of its names defined yet."""
    mod = types.ModuleType(name)
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None)
    mod.__spec__._initializing = True  # type: ignore[attr-defined]
    return mod


def test_a_module_still_being_imported_counts_as_absent(monkeypatch):
    half = _half_made("hdp_guard_probe")
    monkeypatch.setitem(sys.modules, "hdp_guard_probe", half)
    assert G.imported_module("hdp_guard_probe", should_load=False) is None
    half.__spec__._initializing = False  # type: ignore[union-attr]
    assert G.imported_module("hdp_guard_probe", should_load=False) is half
    monkeypatch.delitem(sys.modules, "hdp_guard_probe")
    assert G.imported_module("hdp_guard_probe", should_load=False) is None
    assert G.imported_module("json") is json  # should_load=True: plotly's own import


def _figure_json() -> str:
    """The Tier designer's figure built (validated) and encoded as st.plotly_chart does."""
    fig = menu_figure(D.evaluate_menu(M.default_menu()))
    return pio.to_json(fig, validate=False)


def test_a_figure_is_built_while_pandas_is_half_imported(monkeypatch):
    """The failure seen when two first loads of a fresh server ran at once, made certain: with
    plotly's own lookup the half-made pandas breaks the figure; with the guard it is built."""
    G.install()
    whole = json.loads(_figure_json())
    monkeypatch.setitem(sys.modules, "pandas", _half_made("pandas"))
    assert json.loads(_figure_json()) == whole
    for name in G.MODULES:  # plotly's own lookup, as before the guard
        monkeypatch.setattr(sys.modules[name], "get_module", G.PLOTLY_GET_MODULE)
    with pytest.raises(AttributeError):
        _figure_json()


def test_every_plotly_lookup_without_import_is_guarded():
    """Every plotly module that looks a module up without importing it is in MODULES (read from
    plotly's installed sources, so an upgrade that adds one fails here), and install() rebinds
    each one's lookup."""
    base = pathlib.Path(plotly.__file__).parents[1]
    found = set()
    for pkg in ("plotly", "_plotly_utils"):
        for path in (base / pkg).rglob("*.py"):
            rel = path.relative_to(base).with_suffix("")
            if "tests" in rel.parts or "should_load=False" not in path.read_text("utf-8"):
                continue
            found.add(".".join(rel.parts))
    assert found == set(G.MODULES)
    G.install()
    for name in G.MODULES:
        assert sys.modules[name].get_module is G.imported_module


def test_the_first_page_draws_without_pandas():
    """A fresh process drawing the first page (the Profile page with a preset) never imports
    pandas (nor pyarrow with it): 0.3-0.5 s of a fresh server's first run (issue 29). A fresh
    interpreter is the only place to see that (about 2 s)."""
    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=60).run()\n"
        "assert not at.exception, at.exception\n"
        "assert at.get('plotly_chart'), 'no chart drawn'\n"
        "print(sorted(m for m in ('pandas', 'pyarrow') if m in sys.modules))\n"
    )
    assert fresh_python(code).strip().splitlines()[-1] == "[]"
