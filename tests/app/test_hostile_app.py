"""Issue 12, app side: hostile and extreme input through links, uploads and widgets.

Each test drives the app the way a visitor would (AppTest: a link's query string, an upload,
typing into a widget) and checks what the page shows: user-supplied text is plain text
(markdown and plotly), exported CSVs are safe in a spreadsheet and read back unchanged,
URL-bound widgets never raise, and refusals name the real reason.
"""

from __future__ import annotations

import io
import json
import re

import pandas as pd
import pytest
from helpers import APP, ok, open_page, open_sections, show, whole_app

import hdp_core as hdp
from hdp_app.views import links
from hdp_core import menu as M

IMG = "![x](http://host/x.png)"
UNIT = "![](//host/u)"
ANCHOR = "<a href=x>L</a>"
DIRECTIVES = ":material/home: $x$ :red[hi]"


def _strip_escapes(s: str) -> str:
    """``s`` without its backslash-escaped characters (what markdown shows literally)."""
    return re.sub(r"\\.", "", s, flags=re.S)


def _markdown_strings(at) -> list[str]:
    """Every string the page hands to Streamlit's markdown renderer: markdown, captions,
    alerts, metric labels/values/deltas and widget labels/help, main area and sidebar."""
    out: list[str] = []
    for kind in ("markdown", "caption", "info", "error", "warning", "success"):
        out += [e.value for e in at.get(kind)]
        out += [e.value for e in at.sidebar.get(kind)]
    for m in list(at.metric) + list(at.sidebar.metric):
        out += [m.label, m.value, str(m.delta or "")]
    for kind in (
        "slider",
        "select_slider",
        "number_input",
        "text_input",
        "selectbox",
        "radio",
        "button",
        "toggle",
    ):
        for w in at.get(kind):
            out += [getattr(w, "label", "") or "", getattr(w, "help", "") or ""]
    return out


def _unsafe(s: str) -> list[str]:
    """Markdown or HTML constructs left unescaped in ``s`` (images, links, tags, icons,
    directives, LaTeX)."""
    t = _strip_escapes(s)
    pats = [r"!\[", r"\]\(", r"<\s*(a|img)\b", r":material/home", r":red\[", r"\$x\$"]
    return [p for p in pats if re.search(p, t, re.I)]


def _figure_json(at) -> list[str]:
    return [c.spec for c in at.get("plotly_chart")]


def _hostile_menu_link() -> str:
    m = M.make_menu(
        [IMG, ANCHOR, DIRECTIVES], [0.1, 1.0, float("inf")], [50, 30, 20], 1000, 0, 100, UNIT, None
    )
    return links.encode_menu_link(m)


# ---- item 3: markdown / HTML injection ----------------------------------------------------
def test_menu_link_names_render_as_plain_text_everywhere(app):
    """A ?menu= link with an image, an anchor and Streamlit directives as tier names and an
    image as unit: no markdown string holds live image/link/icon syntax, no figure holds a
    raw '<a', and after 'Use this menu' the sidebar and the Profile page stay plain too."""
    app.query_params["menu"] = _hostile_menu_link()
    at = open_sections(open_page(app, "tier_designer"))
    ok(at)
    strings = _markdown_strings(at)
    assert any("host" in s for s in strings), "the names are shown somewhere"
    bad = {s: _unsafe(s) for s in strings if _unsafe(s)}
    assert not bad, bad
    specs = _figure_json(at)
    assert specs and any("host" in s for s in specs)
    for spec in specs:
        assert "<a" not in spec and "<img" not in spec.lower(), spec[:300]
    next(b for b in at.button if b.key == "td_use").click().run()
    ok(at)
    side = [e.value for e in at.sidebar.caption]
    assert any("host" in s for s in side), side
    assert not {s: _unsafe(s) for s in side if _unsafe(s)}
    at.switch_page("pages/profile.py").run()
    ok(at)
    bad = {s: _unsafe(s) for s in _markdown_strings(at) if _unsafe(s)}
    assert not bad, bad
    for spec in _figure_json(at):
        assert "<a" not in spec, spec[:300]
    at.switch_page("pages/saturation.py").run()
    ok(at)
    for spec in _figure_json(at):
        assert "<a" not in spec, spec[:300]


def test_uploaded_csv_cell_in_error_is_plain_text(app):
    """A CSV whose bad cell is an image link: the error quotes it escaped."""
    at = open_page(app, "profile")
    at.radio(key="prof_mode").set_value("Upload").run()
    bad = f"eps\n0.5\n{IMG}\n".encode()
    at.get("file_uploader")[0].upload("![f](http://host/f.png).csv", bad, "text/csv").run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert errors and any("host" in e for e in errors), errors
    assert not {s: _unsafe(s) for s in errors if _unsafe(s)}


def test_figure_text_escaper():
    from hdp_app.figures.style import fig_text

    s = fig_text("<a href=x>L</a> & %{x} \ud800")
    assert "<" not in s and ">" not in s and "%{" not in s
    assert s.startswith("&lt;a href=x&gt;L&lt;/a&gt; &amp; &#37;&#123;x&#125;")
    s.encode("utf-8")  # no lone surrogate left


def test_plain_escapes_every_construct():
    from hdp_app.views.formatting import plain

    for text in (
        IMG,
        UNIT,
        ANCHOR,
        DIRECTIVES,
        "# h",
        "- item",
        "1. item",
        "a | b",
        "**b** _i_ ~~s~~",
        "`code`",
        "[l]: http://x",
        "&lt;",
        "\\*",
    ):
        s = plain(text)
        assert _strip_escapes(s).strip(" ") == "".join(
            ch for ch in text if ch.isalnum() or ch == " " or ord(ch) > 127
        ).strip(" ")
    assert plain("a\nb\r\nc") == "a b  c"


# ---- item 4: CSV formula injection ----------------------------------------------------------
FORMULAS = ['=HYPERLINK("http://host/x","y")', "+1", "-x", "@SUM(A1)", "\tx", "'=q"]


def _first_cells(csv_bytes: bytes, col: str) -> list[str]:
    df = pd.read_csv(io.BytesIO(csv_bytes), dtype=str, keep_default_na=False)
    return list(df[col])


def _formula_cells(cells: list[str]) -> list[str]:
    return [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]


def test_csv_safe_round_trip_and_numbers_untouched():
    from hdp_app.views.formatting import csv_safe, csv_unescape, frame_to_csv

    for s in [*FORMULAS, "\rz", "''+1", "'plain", "'", "", "plain", "1-2"]:
        e = csv_safe(s)
        assert not _formula_cells([e]) and csv_unescape(e) == s
    df = pd.DataFrame({"name": ["-x", "ok"], "value": [-3, 2.5]})
    out = frame_to_csv(df).decode().splitlines()
    assert out == ["name,value", "'-x,-3.0", "ok,2.5"]


# The profile CSV, the Saturation table's CSV and the Tier designer's CSV and JSON with
# formula names (a ?profile= tiers link, a ?menu= link) are downloaded in Chromium and read
# back in tests/test_browser_downloads.py.


def test_simulation_results_csv_escapes_text_cells(app):
    """The Simulation page offers its results as hdp_simulation.csv, built by
    views.simulation.download_frame from the current profile's label and the result rows
    (the same columns as the table it shows); a label starting a formula is escaped there
    and every number column reads back as numbers."""
    from hdp_app.views import simulation as simview
    from hdp_app.views.formatting import frame_to_csv

    prof = hdp.preset("two_groups")
    app.query_params.update(FEW)
    at = show(app, prof, "simulation")
    at.session_state["profile_label"] = "=1+1"
    at.run()
    ok(at)
    button = [b for b in at.get("download_button") if b.key == "sim_csv"]
    assert len(button) == 1 and button[0].label == "Download results (CSV)", button
    shown = next(d.value for d in at.dataframe if "Simulated MSE" in d.value.columns)
    # the data the page passes, built as the page builds it (a short simulation)
    dist = hdp.Beta(2, 5)
    res = hdp.simulate_mse(hdp.METHODS, prof, dist, trials=200, seed=1)
    rows = simview.simulation_rows(res, list(hdp.METHODS), data_range=None)
    label = at.session_state["profile_label"]
    data = frame_to_csv(simview.download_frame(rows, False, label, dist.label(), 200, 1, prof.n))
    assert _first_cells(data, "Profile")[0] == "'=1+1"
    df = pd.read_csv(io.BytesIO(data))
    assert list(df.columns[1 : 1 + len(shown.columns)]) == list(shown.columns)
    assert list(df["Method"]) == list(shown["Method"])
    assert all(
        pd.api.types.is_numeric_dtype(df[c])
        for c in df.columns
        if c not in ("Profile", "Method", "Distribution", "method")
    ), df.dtypes


# ---- item 5: URL-bound widgets ----------------------------------------------------------
HUGE = "9" * 10_000
FEW = {"sim_trials": "500"}  # the fewest trials the page allows, where trials are not the subject
BAD_LINKS = [
    ("simulation", {"sim_trials": "1e400"}, ["sim_trials"]),
    ("simulation", {"sim_seed": "1e400", **FEW}, ["sim_seed"]),
    ("simulation", {"sim_seed": HUGE, **FEW}, ["sim_seed"]),
    ("simulation", {"sim_trials": HUGE}, ["sim_trials"]),
    ("simulation", {"sim_sw_n1": "1e400", **FEW}, ["sim_sw_n1"]),
    (
        "simulation",
        {"sim_real": "true", "sim_lo": "-1.7e308", "sim_hi": "1.7e308", **FEW},
        ["sim_lo", "sim_hi"],
    ),
    ("simulation", {"sim_a": "nan", "sim_b": "-inf", **FEW}, ["sim_a", "sim_b"]),
    ("bounds", {"bnd_lo": "-1.7e308", "bnd_hi": "1e400"}, ["bnd_lo", "bnd_hi"]),
    ("bounds", {"bnd_scale": "1e400"}, ["bnd_scale"]),
    ("saturation", {"sat_trace_step": "1e400"}, ["sat_trace_step"]),
]


def _open_link(app, page: str, params: dict):
    for k, v in params.items():
        app.query_params[k] = v
    return open_page(app, page)


@pytest.mark.parametrize(
    ("page", "params", "dropped"), BAD_LINKS, ids=[f"{p}-{'-'.join(d)}" for p, _, d in BAD_LINKS]
)
def test_bad_url_values_are_dropped_with_a_note(app, page, params, dropped):
    at = _open_link(app, page, params)
    ok(at)
    notes = " ".join(w.value for w in at.warning)
    for key in dropped:
        assert plain_key(key) in notes, notes
        assert key not in at.query_params or at.query_params[key] != params[key]
    if FEW.items() <= params.items():  # the good value is kept beside the bad ones
        assert at.number_input(key="sim_trials").value == int(FEW["sim_trials"])


def plain_key(key: str) -> str:
    from hdp_app.views.formatting import plain

    return plain(key)


def test_dropped_url_value_leaves_the_widget_at_its_default(app):
    at = _open_link(app, "simulation", {"sim_trials": "1e400", "sim_seed": "7"})
    ok(at)
    assert at.number_input(key="sim_trials").value == 20_000
    assert at.number_input(key="sim_seed").value == 7  # a good value is kept


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("simulation", {"sim_real": "true", "sim_lo": "0", "sim_hi": "1e-320"}),
        ("simulation", {"sim_real": "true", "sim_lo": "1e15", "sim_hi": "1e15"}),
        ("bounds", {"bnd_lo": "0", "bnd_hi": "1e-320"}),
    ],
)
def test_degenerate_data_range_from_a_link_is_a_message(app, page, params):
    at = _open_link(app, page, params)
    assert not at.exception, at.exception
    assert any("data range" in e.value for e in at.error), [e.value for e in at.error]


def test_url_limits_match_the_widgets(app):
    """The limits checked on the link are the widgets' own bounds (every bounded number
    input on the Simulation page, the sweep's included)."""
    import importlib

    limits = importlib.import_module("pages.simulation").URL_LIMITS  # (runs bare: no-op)
    app.query_params.update(FEW)
    at = open_page(app, "simulation")
    checked = set()
    for w in at.get("number_input"):
        if w.key in limits:
            lim = limits[w.key]
            assert (w.min, w.max) == (lim.lo, lim.hi), w.key
            checked.add(w.key)
    assert checked == {k for k in limits if k not in ("sim_p", "sim_lo", "sim_hi")}


# ---- item 6: Tier designer ----------------------------------------------------------------
def _menu_token(name: str = "Strict", low: float = 0.0, high: float = 100.0) -> str:
    import base64

    d = {
        "n_users": 1000,
        "data_range": {"low": low, "high": high, "unit": "u"},
        "tiers": [
            {"name": name, "eps": 0.1, "share_percent": 60},
            {"name": "Open", "eps": "public", "share_percent": 40},
        ],
    }
    raw = json.dumps(d).encode()  # ensure_ascii: a lone surrogate is written as \\ud800
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _all_text(at) -> str:
    return " ".join(_markdown_strings(at)) + " ".join(
        w.value for w in at.get("text_input") if isinstance(w.value, str)
    )


def test_lone_surrogate_in_a_menu_link_is_refused_and_not_kept(app):
    app.query_params["menu"] = _menu_token("A\ud800B")
    at = open_sections(open_page(app, "tier_designer"))
    ok_no_exception(at)
    notes = " ".join(w.value for w in at.warning)
    assert "surrogate" in notes, notes
    menu = at.session_state["td_menu"]
    assert all("\ud800" not in t.name for t in menu.tiers)
    assert all("\ud800" not in w.value for w in at.get("text_input"))
    at.switch_page("pages/profile.py").run()
    at.switch_page("pages/tier_designer.py").run()
    ok_no_exception(at)


def test_lone_surrogate_in_an_imported_json_is_refused(app):
    at = open_sections(open_page(app, "tier_designer"))
    bad = json.dumps(
        {"n_users": 10, "tiers": [{"name": "X\udfff", "eps": 1, "share_percent": 100}]}
    ).encode()
    at.get("file_uploader")[0].upload("m.json", bad, "application/json").run()
    ok_no_exception(at)
    assert any("surrogate" in e.value for e in at.error), [e.value for e in at.error]
    assert all("\udfff" not in t.name for t in at.session_state["td_menu"].tiers)


@pytest.mark.parametrize(("lo", "hi"), [(-1e307, 1e307), (0.0, 1e307), (-1e16, 0.0)])
def test_huge_data_range_is_refused_with_the_limit(app, lo, hi):
    at = open_sections(open_page(app, "tier_designer"))
    before = json.loads(next(c.value for c in at.code if c.language == "json"))
    at.number_input(key="td_lo").set_value(lo)
    at.number_input(key="td_hi").set_value(hi).run()
    ok_no_exception(at)
    errs = " ".join(e.value for e in at.error)
    assert "1e\\+15" in errs, errs
    assert "inf" not in " ".join(m.value for m in at.metric)
    # what the JSON download serves is the JSON the page previews (checked in the browser:
    # tests/test_browser_downloads.py): the last valid menu, finite
    assert "td_dl_json" in [b.key for b in at.get("download_button")]
    exported = json.loads(next(c.value for c in at.code if c.language == "json"))
    assert exported["data_range"] == before["data_range"]
    assert abs(exported["data_range"]["high"]) <= 1e15
    # a link with such a range falls back to the default menu with a note
    app2 = type(app).from_file(APP, default_timeout=60)
    app2.query_params["menu"] = _menu_token(low=lo, high=hi)
    at2 = open_sections(open_page(app2, "tier_designer"))
    ok_no_exception(at2)
    assert any("1e\\+15" in w.value for w in at2.warning)


def ok_no_exception(at) -> None:
    assert not at.exception, at.exception


# ---- item 7: many tiers ---------------------------------------------------------------------
def show_current(at, prof, page: str):
    """Like conftest.show, but as if the profile had been set elsewhere (its version bumped),
    so that the Profile page follows it instead of re-applying its own controls."""
    at.run()
    at.session_state["profile"] = prof
    at.session_state["profile_spec"] = None
    at.session_state["profile_label"] = "test profile"
    at.session_state["profile_version"] = at.session_state["profile_version"] + 1
    at.switch_page(f"pages/{page}.py").run()
    return at


def _many_tiers(k: int = 20_000):
    import numpy as np

    levels = np.geomspace(0.01, 10.0, k)
    return hdp.EpsilonProfile.from_tiers(levels, np.full(k, 3), [f"t{j}" for j in range(k)])


@pytest.mark.parametrize("page", ["profile", "saturation", "bounds", "simulation"])
def test_many_tiers_charts_aggregate(app, page):
    """20,000 tiers: every chart on the page has at most 200 traces and 200 bars per trace
    (the profile chart groups tiers into level bins), and the page renders in bounded time."""
    import time

    t0 = time.perf_counter()
    prof = _many_tiers()
    at = show_current(app, prof, page)
    elapsed = time.perf_counter() - t0
    ok(at)
    assert at.session_state["profile"].k == prof.k  # (the page did not replace it)
    charts = [json.loads(c.spec) for c in at.get("plotly_chart")]
    assert charts
    for fig in charts:
        assert len(fig["data"]) <= 200, len(fig["data"])
        for tr in fig["data"]:
            if tr.get("type") == "bar":
                assert len(tr.get("x") or []) <= 200
    assert elapsed < 60, elapsed


@pytest.mark.slow
def test_profile_figure_groups_many_tiers():
    from hdp_app.figures.profile import MAX_TIER_BARS, profile_figure

    prof = _many_tiers(MAX_TIER_BARS + 1)
    fig = profile_figure(prof)
    bars = [t for t in fig.data if t.type == "bar" and t.x is not None and t.x[0] is not None]
    assert len(bars) == 1 and "201 tiers grouped" in bars[0].name
    assert sum(bars[0].y) == prof.n  # every user is in a bin
    few = profile_figure(_many_tiers(MAX_TIER_BARS))
    assert len([t for t in few.data if t.type == "bar"]) == MAX_TIER_BARS + 1  # + legend entry


# ---- item 8: no silent changes --------------------------------------------------------------
@pytest.mark.parametrize(
    ("dist", "key", "limit"),
    [
        ("log_uniform", "prof_lu_n", links.GEN_MAX_N),
        ("mixture", "prof_mx_n", links.GEN_MAX_N),
        ("two_groups", "prof_tg_n", links.TIER_MAX_USERS),
    ],
)
def test_generator_refuses_too_many_users_naming_the_limit(app, dist, key, limit):
    """Typing 1e15 users: the input is a real-number input (the browser reads "1e15" as 1e15,
    not as 1 as an integer input does), and the page says no, naming the limit; the profile
    is not replaced."""
    at = open_page(app, "profile")
    at.radio(key="prof_mode").set_value("Generator").run()
    at.radio(key="prof_dist").set_value(dist).run()
    ok(at)
    before = at.session_state["profile"].key
    w = at.number_input(key=key)
    assert isinstance(w.value, float) and w.data_type == w.FLOAT
    w.set_value(1e16 if limit >= 1e15 else 1e15).run()
    assert not at.exception, at.exception
    errs = [shown_(e.value) for e in at.error]
    assert any(f"at most {limit:,}" in e for e in errs), errs
    assert at.session_state["profile"].key == before
    at.number_input(key=key).set_value(2.5).run()
    assert any("not a whole number" in shown_(e.value) for e in at.error)
    assert at.session_state["profile"].key == before
    at.number_input(key=key).set_value(321.0).run()
    ok(at)
    assert at.session_state["profile"].n == 321


def shown_(text: str) -> str:
    from helpers import shown

    return shown(text)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"eps,count\n0.1,10000000000000\n1,5\n", "10,000,000,000,000 is outside"),
    ],
)
def test_unlinkable_upload_says_the_real_reason(app, body, reason):
    at = open_page(app, "profile")
    at.radio(key="prof_mode").set_value("Upload").run()
    at.get("file_uploader")[0].upload("f.csv", body, "text/csv").run()
    ok(at)
    infos = [shown_(i.value) for i in at.info]
    assert any("can't be put in a link" in i and reason in i for i in infos), infos
    assert not any("not made from a preset" in i for i in infos)


def test_upload_below_the_supported_range_is_refused_naming_it(app):
    """A level below the supported range is refused by the library itself (not merely kept out
    of the link): the message names the row and the range, never the cell (issue 19); the
    profile is kept."""
    at = open_page(app, "profile")
    at.radio(key="prof_mode").set_value("Upload").run()
    before = at.session_state["profile"].key
    at.get("file_uploader")[0].upload("f.csv", b"eps\n1e-9\n1\n", "text/csv").run()
    assert not at.exception
    errs = [shown_(e.value) for e in at.error]
    assert any(
        "row 1" in e and "1e-09" not in e and "below the smallest supported" in e and "1e-06" in e
        for e in errs
    ), errs
    assert at.session_state["profile"].key == before


# ---- low: limits users see --------------------------------------------------------------------
def test_uploaders_state_their_limit_next_to_them(app):
    """A file over the limit is refused by the browser (a red mark, its message on hover), so
    the uploader's own label says the limit; it matches the server's maxUploadSize."""
    import tomllib

    from helpers import ROOT

    from hdp_core.design_io import MAX_MENU_BYTES
    from hdp_core.profile import MAX_UPLOAD_BYTES

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["server"]["maxUploadSize"] * 2**20 == MAX_UPLOAD_BYTES
    at = open_page(app, "profile")
    at.radio(key="prof_mode").set_value("Upload").run()
    up = at.get("file_uploader")[0]
    assert f"at most {MAX_UPLOAD_BYTES // 2**20} MB" in up.label
    assert up.max_upload_size_mb == MAX_UPLOAD_BYTES // 2**20
    at.switch_page("pages/tier_designer.py").run()
    up = open_sections(at, "save").get("file_uploader")[0]
    assert f"at most {MAX_MENU_BYTES // 1024} KB" in up.label


def test_bounds_page_huge_errors_in_scientific_notation(app):
    """Errors in real units of 10^12 and more are shown as 1.000e+15, not 19 digits that a
    metric cuts off (this profile is so strict that ADPM reports the middle of the range: its
    RMSE is half the range and there is no noise)."""
    prof = hdp.EpsilonProfile.from_values([1e-6, 2e-6])
    at = show(app, prof, "bounds")
    at.number_input(key="bnd_lo").set_value(-1e15)
    at.number_input(key="bnd_hi").set_value(1e15).run()
    ok(at)
    vals = [
        m.value
        for m in at.metric
        if m.label.startswith(("ADPM worst-case RMSE", "ADPM 95%", "of which"))
    ]
    # R/2 = 10^15: the constant mid-range (in the Tier designer's default menu's unit)
    assert vals == ["1.000e+15 USD", "1.000e+15 USD", "0 USD"]
    table = at.table[-1].value  # one row per method: a static table (issue 23)
    rmse = [str(c).removesuffix(" USD") for c in table["worst-case RMSE"]]
    assert all(len(c) <= 12 for c in rmse), rmse


# ---- sessions at once ---------------------------------------------------------------------------
def _csv_of(levels, values=None) -> bytes:
    rows = ["eps" + (",value" if values is not None else "")]
    for i, e in enumerate(levels):
        rows.append(repr(float(e)) + (f",{float(values[i])!r}" if values is not None else ""))
    return ("\n".join(rows) + "\n").encode()


def _start(kind: str, arg):
    """One visitor's first steps: open the app and make a profile (upload, link or preset).
    Returns (AppTest, the profile it should show)."""
    at = whole_app(default_timeout=120)
    if kind == "link":
        for k, v in links.encode(arg).items():
            at.query_params[k] = v
    at.run()
    if kind == "upload":
        at.radio(key="prof_mode").set_value("Upload").run()
        at.get("file_uploader")[0].upload("mine.csv", arg, "text/csv").run()
        return at, hdp.profile_from_csv(arg)
    if kind == "link":
        return at, links.profile_from_spec(arg)
    at.selectbox(key="prof_preset").set_value("paper_high").run()
    at.number_input(key="prof_preset_seed").set_value(arg).run()
    return at, hdp.preset("paper_high", seed=arg)


def _shown(at) -> tuple[str, str, str]:
    """What the Profile page and the sidebar show: users, tau*, worst case."""
    at.switch_page("pages/profile.py").run()  # a fresh run: cached results are reused
    assert not at.exception, at.exception
    return (
        next(m.help for m in at.sidebar.metric if m.label == "Users n"),
        next(m.value for m in at.metric if m.label == "tau*"),
        next(m.value for m in at.metric if m.label == "Worst-case MSE"),
    )


def _session(kind: str, arg) -> dict:
    at, expected = _start(kind, arg)
    return {"shown": _shown(at), "expected": expected}


def _expected_shown(prof) -> tuple[str, str, str]:
    import math

    sol = hdp.adpm(prof)
    tau = "none" if math.isinf(sol.saturation_level) else f"{sol.saturation_level:.4g}"
    return f"{prof.n:,} users in the profile.", tau, f"{sol.worst_case_mse:.2e}"


@pytest.mark.slow
def test_interleaved_sessions_never_see_each_others_results():
    """Six visitors in one server process (one shared st.cache_data), their runs interleaved:
    uploads of different sizes, tier links, preset draws; after all of them have run, each is
    shown the numbers of its own profile. (AppTest swaps a global mock Runtime on every run,
    so it cannot run sessions in threads faithfully; tests/test_browser_hostile.py runs
    sessions at the same time against a real server.)"""
    import numpy as np
    import streamlit as st

    st.cache_data.clear()
    rng = np.random.default_rng(7)
    jobs = [
        ("upload", _csv_of(np.round(rng.uniform(0.05, 5, 300), 6))),
        ("upload", _csv_of(np.round(rng.uniform(0.01, 1, 40), 6))),
        (
            "link",
            {
                "kind": "tiers",
                "levels": [0.1, 1.0, float("inf")],
                "counts": [700, 250, 50],
                "names": ["A", "B", "C"],
            },
        ),
        (
            "link",
            {"kind": "tiers", "levels": [0.2, 2.0], "counts": [10**9, 10**6], "names": ["X", "Y"]},
        ),
        ("preset", 3),
        ("preset", 11),
    ]
    started = [_start(*j) for j in jobs]
    for _ in range(2):
        for (kind, _), (at, expected) in zip(jobs, started):
            assert _shown(at) == _expected_shown(expected), kind


@pytest.mark.slow
def test_two_sessions_with_colliding_profile_bytes():
    """Issue 12 item 1 through the app: a file whose eps column is the first half of the
    default profile's levels and whose value column is the second half used to share the
    default profile's cache key; a visitor who opens the default profile after that upload
    must still see 1,000 users and the default numbers."""
    import streamlit as st

    st.cache_data.clear()
    default = hdp.preset("paper_high", seed=0)
    lv = default.levels
    up = _session("upload", _csv_of(lv[:500], lv[500:]))
    assert up["shown"] == _expected_shown(up["expected"])
    later = _session("preset", 0)
    assert later["shown"] == _expected_shown(default)
