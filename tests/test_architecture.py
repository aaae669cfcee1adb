"""Where each line lives (README, Architecture): three packages and one direction
(pages -> hdp_app -> hdp_release -> hdp_core), no cycle, no private name of another module,
small modules, and the app uses Streamlit's public API only. Read from the source (ast), so
these run in milliseconds."""

from __future__ import annotations

import ast
import functools
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


@functools.cache
def _tree(path: pathlib.Path) -> ast.Module:
    """The parsed module (parsed once per run: the checks below walk the same files)."""
    return ast.parse(path.read_text())


@functools.cache
def _imports(path: pathlib.Path) -> list[str]:
    """Every module ``path`` imports, relative imports resolved against its package."""
    pkg = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out = []
    for n in ast.walk(_tree(path)):
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


PACKAGES = ("hdp_core", "hdp_release", "hdp_app", "pages")
"""One direction: pages -> hdp_app -> hdp_release -> hdp_core (app.py is a page)."""

FORBIDDEN = {
    "hdp_core": ("streamlit", "plotly", "duckdb", "opendp", "pyspark"),
    "hdp_release": ("streamlit", "plotly"),
}
"""Third-party packages a package never imports (at any indentation)."""

PANDAS_IN_CORE = ("hdp_core/tables.py", "hdp_core/design_io.py")
"""The only modules of hdp_core that read tables with pandas (imported inside the readers)."""

MAX_LINES = 600
MAX_PAGE_LINES = 450
MAX_CORE_LINES = 8_000


def _package(mod: str) -> str:
    return "pages" if mod == "app" else mod.split(".")[0]


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _project_files() -> list[pathlib.Path]:
    return [*_py("hdp_core"), *_py("hdp_release"), *_py("hdp_app"), *_py("pages"), ROOT / "app.py"]


def _project_modules() -> dict[str, pathlib.Path]:
    return {_module_name(f): f for f in _project_files()}


def _resolve(name: str, modules: dict[str, pathlib.Path]) -> str | None:
    """The project module an imported name belongs to (``pkg.mod.attr`` -> ``pkg.mod``)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def test_imports_point_down_only_at_every_indentation():
    """No import (top level, inside a function or a class) points up the direction
    pages -> hdp_app -> hdp_release -> hdp_core."""
    rank = {p: i for i, p in enumerate(PACKAGES)}
    bad = {}
    for f in _project_files():
        own = rank[_package(_module_name(f))]
        ups = [m for m in _imports(f) if m.split(".")[0] in rank and rank[m.split(".")[0]] > own]
        if ups:
            bad[f.relative_to(ROOT).as_posix()] = sorted(set(ups))
    assert not bad, bad


def test_packages_never_import_what_is_not_theirs():
    """hdp_core imports no Streamlit, plotly, DuckDB, OpenDP or Spark (pandas only in its
    readers); hdp_release no Streamlit or plotly; hdp_app's views and figures no Streamlit."""
    bad = {}
    for f in _project_files():
        rel = f.relative_to(ROOT).as_posix()
        pkg = _package(_module_name(f))
        banned = FORBIDDEN.get(pkg, ())
        if rel.startswith(("hdp_app/views/", "hdp_app/figures/")):
            banned = ("streamlit",)
        if pkg == "hdp_core" and rel not in PANDAS_IN_CORE:
            banned = (*banned, "pandas")
        hits = [m for m in _imports(f) if m.split(".")[0] in banned]
        if hits:
            bad[rel] = sorted(set(hits))
    assert not bad, bad


def _graph() -> dict[str, set[str]]:
    modules = _project_modules()
    graph: dict[str, set[str]] = {}
    for mod, f in modules.items():
        deps = {_resolve(m, modules) for m in _imports(f)}
        graph[mod] = {d for d in deps if d and d != mod and not mod.startswith(d + ".")}
    return graph


def test_no_import_cycle_among_project_modules():
    """The module graph (imports at every indentation; a package's __init__ counted as the
    modules it imports) has no cycle, so every module has a rank below its importers."""
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append([*path[path.index(d) :], d] if d in path else [m, d])
            elif d not in state:
                visit(d, [*path, d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, cycles


def test_no_private_name_of_another_module():
    """No module imports another module's private name (``from x import _y``) or reads one
    as an attribute of an imported project module (``x._y``)."""
    modules = _project_modules()
    bad = {}
    for f in _project_files():
        tree = _tree(f)
        aliases = {}
        hits = []
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
                if n.module.split(".")[0] in PACKAGES:
                    hits += [a.name for a in n.names if a.name.startswith("_")]
                    for a in n.names:
                        if f"{n.module}.{a.name}" in modules:
                            aliases[a.asname or a.name] = f"{n.module}.{a.name}"
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.name.split(".")[0] in PACKAGES:
                        aliases[a.asname or a.name.split(".")[0]] = a.name
        for n in ast.walk(tree):
            if (
                isinstance(n, ast.Attribute)
                and n.attr.startswith("_")
                and not n.attr.startswith("__")
                and isinstance(n.value, ast.Name)
                and n.value.id in aliases
            ):
                hits.append(f"{n.value.id}.{n.attr}")
        if hits:
            bad[f.relative_to(ROOT).as_posix()] = hits
    assert not bad, bad


def test_modules_are_small_and_the_core_is_small():
    """No module over 600 lines, no page over 450, hdp_core under 8,000 lines in all."""
    sizes = {
        f.relative_to(ROOT).as_posix(): len(f.read_text().splitlines()) for f in _project_files()
    }
    big = {
        f: n
        for f, n in sizes.items()
        if n > (MAX_PAGE_LINES if f.startswith("pages/") else MAX_LINES)
    }
    core = sum(n for f, n in sizes.items() if f.startswith("hdp_core/"))
    assert not big, big
    assert core < MAX_CORE_LINES, core


def test_importing_the_core_loads_no_engine_or_app_library():
    """``import hdp_core`` (and every module it loads) brings in none of DuckDB, OpenDP, Spark,
    plotly, Streamlit or pandas: the mathematics stands alone."""
    from helpers import fresh_python

    code = (
        "import sys, hdp_core, hdp_core.design, hdp_core.design_io, hdp_core.tables, "
        "hdp_core.experiments, hdp_core.spend\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'duckdb', 'opendp', 'pyspark', 'plotly', 'streamlit', 'pandas', "
        "'hdp_release', 'hdp_app'})\n"
        "print(','.join(bad))"
    )
    out = fresh_python(code)
    assert out.strip() == "", out


def test_the_views_and_figures_import_no_streamlit():
    bad = {
        f.relative_to(ROOT).as_posix(): [m for m in _imports(f) if m.startswith("streamlit")]
        for f in [*_py("hdp_app/views"), *_py("hdp_app/figures")]
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
    any_text = re.compile("|".join(map(re.escape, texts)))
    bad = {}
    for f in [*_py("hdp_app"), *_py("pages"), *_py("tests"), ROOT / "app.py"]:
        text = f.read_text()
        hits = [m for m in _imports(f) if m.startswith(mods)]
        if any_text.search(text):  # one scan; the names themselves only on a hit
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
            tree = _tree(f)
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
    different names (hdp_core.menu.MAX_MENU_TIERS, hdp_app.specs.MAX_SPEC_TIERS,
    hdp_core.tables.MAX_TIERS_FILE)."""
    from hdp_app import specs
    from hdp_core import menu, tables

    assert menu.MAX_MENU_TIERS == 10
    assert specs.MAX_SPEC_TIERS == 50
    assert tables.MAX_TIERS_FILE == 10_000
    assert not hasattr(specs, "MAX_TIERS")


def test_url_bound_numbers_take_their_bounds_from_limits():
    """A number widget bound to the URL takes min and max from the Limit its link value is
    checked against (hdp_app.widgets.limit_bounds), never from literals typed beside it; so
    do the spread inputs (hdp_app.views.limits.SPREAD)."""
    typed = []
    for f in _py("pages"):
        for n in ast.walk(_tree(f)):
            if not isinstance(n, ast.Call):
                continue
            kws = {k.arg for k in n.keywords}
            label = n.args[0].value if n.args and isinstance(n.args[0], ast.Constant) else ""
            spread = isinstance(label, str) and "standard deviation s" in label
            if ("bind" in kws or spread) and kws & {"min_value", "max_value"}:
                typed.append(f"{f.name}:{n.lineno}")
    assert not typed, typed
