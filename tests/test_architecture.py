"""Where each line lives (README, Architecture): the layers import one way only, and the app
uses Streamlit's public API only. Read from the source (ast), so these run in milliseconds."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _imports(path: pathlib.Path) -> list[str]:
    """Every module ``path`` imports, relative imports resolved against its package."""
    pkg = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out = []
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.Import):
            out += [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            base = list(pkg[: len(pkg) - n.level + 1]) if n.level else []
            mod = ".".join([*base, *([n.module] if n.module else [])])
            out.append(mod)
            out += [f"{mod}.{a.name}" for a in n.names]
    return out


def _py(folder: str) -> list[pathlib.Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_the_library_never_imports_its_views_or_streamlit():
    """hdp_core's mathematics and release never import hdp_core.views, hdp_core.figures,
    streamlit or plotly (the release CLI reads menus through hdp_core.design_io)."""
    bad = {}
    for f in _py("hdp_core"):
        rel = f.relative_to(ROOT).as_posix()
        if rel.startswith(("hdp_core/views/", "hdp_core/figures/")):
            continue
        hits = [
            m
            for m in _imports(f)
            if m.startswith(("hdp_core.views", "hdp_core.figures", "streamlit", "plotly"))
        ]
        if hits:
            bad[rel] = hits
    assert not bad, bad


def test_views_never_import_streamlit():
    bad = {
        f.name: [m for m in _imports(f) if m.startswith("streamlit")] for f in _py("hdp_core/views")
    }
    assert not any(bad.values()), bad


def _private_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(module prefixes, texts) of Streamlit internals, from tests/streamlit_private_names.txt
    (kept out of this file so that the list does not flag itself)."""
    mods, texts = [], []
    for line in (ROOT / "tests" / "streamlit_private_names.txt").read_text().splitlines():
        kind, _, name = line.partition(" ")
        if kind == "module":
            mods.append(name)
        elif kind == "text":
            texts.append(name)
    return tuple(mods), tuple(texts)


def test_no_streamlit_internals_anywhere():
    """The app and its tests use Streamlit's public API: no runtime or protobuf modules, no
    private classes or attributes (the list: tests/streamlit_private_names.txt)."""
    mods, texts = _private_names()
    assert mods and texts  # the list was read
    bad = {}
    for f in [*_py("hdp_app"), *_py("pages"), *_py("tests"), ROOT / "app.py"]:
        text = f.read_text()
        hits = [m for m in _imports(f) if m.startswith(mods)]
        hits += [w for w in texts if w in text]
        if hits:
            bad[f.relative_to(ROOT).as_posix()] = hits
    assert not bad, bad


def _streamlit_names(tree: ast.AST) -> set[str]:
    """The names a module binds to Streamlit's modules, classes and functions by importing."""
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names if a.name == "streamlit"}
            names |= {a.asname for a in n.names if a.name.startswith("streamlit.") and a.asname}
        elif isinstance(n, ast.ImportFrom) and (n.module or "").startswith("streamlit"):
            names |= {a.asname or a.name for a in n.names}
    return names


def test_no_streamlit_class_or_function_is_patched():
    """No test or app module replaces anything of Streamlit's (setattr, monkeypatch.setattr,
    mock.patch, patch.object on a Streamlit name or a "streamlit..." path)."""
    bad = {}
    for folder in ("hdp_app", "pages", "tests"):
        for f in _py(folder):
            if f.name == "test_architecture.py":
                continue
            tree = ast.parse(f.read_text())
            st_names = _streamlit_names(tree)
            for n in ast.walk(tree):
                if not (isinstance(n, ast.Call) and n.args):
                    continue
                func = n.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if fname not in ("setattr", "patch", "object", "delattr"):
                    continue
                target = n.args[0]
                while isinstance(target, ast.Attribute):
                    target = target.value
                if (
                    isinstance(target, ast.Constant)
                    and isinstance(target.value, str)
                    and target.value.startswith("streamlit")
                ) or (isinstance(target, ast.Name) and target.id in st_names):
                    bad.setdefault(f.relative_to(ROOT).as_posix(), []).append(n.lineno)
    assert not bad, bad


def test_one_name_per_maximum_of_tiers():
    """The most tiers a menu, a link's spec and a file may hold are different numbers with
    different names (hdp_core.design.MAX_MENU_TIERS, hdp_core.specs.MAX_SPEC_TIERS,
    hdp_core.tables.MAX_TIERS_FILE)."""
    from hdp_core import design, specs, tables

    assert design.MAX_MENU_TIERS == 10
    assert specs.MAX_SPEC_TIERS == 50
    assert tables.MAX_TIERS_FILE == 10_000
    assert not hasattr(specs, "MAX_TIERS")


def test_url_bound_numbers_take_their_bounds_from_limits():
    """A number widget bound to the URL takes min and max from the Limit its link value is
    checked against (hdp_app.widgets.limit_bounds), never from literals typed beside it; so
    do the spread inputs (hdp_core.views.limits.SPREAD)."""
    typed = []
    for f in _py("pages"):
        for n in ast.walk(ast.parse(f.read_text())):
            if not isinstance(n, ast.Call):
                continue
            kws = {k.arg for k in n.keywords}
            label = n.args[0].value if n.args and isinstance(n.args[0], ast.Constant) else ""
            spread = isinstance(label, str) and "standard deviation s" in label
            if ("bind" in kws or spread) and kws & {"min_value", "max_value"}:
                typed.append(f"{f.name}:{n.lineno}")
    assert not typed, typed
