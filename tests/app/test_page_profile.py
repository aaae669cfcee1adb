"""AppTest of the Profile page: presets, generator, tiers editor, uploads, links, page switch.

Oracles: the profile the core builds directly (hdp.preset, hdp_core.presets generators,
EpsilonProfile.from_tiers / from_csv) compared by key; the query string decoded by
hdp_app.views.links; the error text naming the row.
"""

from __future__ import annotations

import math

import pytest
from helpers import shown

import hdp_core as hdp
from hdp_app.views import links
from hdp_core import presets
from hdp_core.tables import example_csv


def _key(at) -> str:
    return at.session_state["profile"].key


def _url_spec(at):
    return links.decode(at.query_params)


def _ok(at):
    assert not at.exception, at.exception
    assert at.get("plotly_chart"), "the profile chart is missing"


def _errors(at) -> list[str]:
    return [shown(e.value) for e in at.error]


def _editor_key(at) -> str:
    return f"prof_tiers_editor_{at.session_state['prof_tiers']['gen']}"


@pytest.fixture
def started(app):
    app.run()
    _ok(app)
    return app


def test_default_profile_chart_metrics_and_link(started):
    at = started
    assert _key(at) == hdp.preset("paper_high").key
    assert _url_spec(at) == {"kind": "preset", "name": "paper_high", "seed": 0}
    tau = hdp.adpm(hdp.preset("paper_high")).saturation_level
    assert f"{tau:.4g}" in [m.value for m in at.metric if m.label == "tau*"]
    assert any("profile=preset" in c.value for c in at.code)  # the shareable link
    assert at.get("download_button")
    assert not at.warning


@pytest.mark.parametrize("name", list(hdp.PRESETS))
def test_every_preset(started, name):
    at = started
    at.selectbox(key="prof_preset").set_value(name).run()
    _ok(at)
    assert _key(at) == hdp.preset(name).key
    assert links.profile_from_spec(_url_spec(at)).key == hdp.preset(name).key
    assert at.session_state["profile_label"].startswith(hdp.PRESETS[name][:20])


def test_seed_and_new_draw(started):
    at = started
    at.button(key="prof_preset_draw").click().run()
    _ok(at)
    assert _key(at) == hdp.preset("paper_high", 1).key
    at.number_input(key="prof_preset_seed").set_value(42).run()
    assert _key(at) == hdp.preset("paper_high", 42).key
    assert _url_spec(at)["seed"] == 42


def test_generator_log_uniform(started):
    at = started
    at.radio(key="prof_mode").set_value("Generator").run()
    _ok(at)
    at.number_input(key="prof_lu_n").set_value(300).run()
    at.select_slider(key="prof_lu_range").set_value((0.01, 10.0)).run()
    at.number_input(key="prof_lu_seed").set_value(5).run()
    _ok(at)
    assert _key(at) == presets.log_uniform(300, 0.01, 10.0, 5).key
    assert at.query_params["p_n"] == "300" and at.query_params["p_lo"] == "0.01"


def test_generator_two_groups_shows_the_saturation_threshold(started):
    at = started
    at.radio(key="prof_mode").set_value("Generator").run()
    at.radio(key="prof_dist").set_value("two_groups").run()
    at.number_input(key="prof_tg_n").set_value(10**9).run()
    at.slider(key="prof_tg_frac").set_value(0.5).run()
    at.select_slider(key="prof_tg_eps2").set_value(math.inf).run()
    _ok(at)
    prof = at.session_state["profile"]
    assert prof.is_tiered and list(prof.counts) == [500_000_000, 500_000_000]
    assert math.isinf(prof.levels[1])
    thr = hdp.two_group_threshold(10**9, 0.5, 0.1)
    assert any(f"{thr:.3g}" in c.value and "is capped" in c.value for c in at.caption)
    assert at.query_params["p_eps2"] == "inf"


def test_generator_mixture_public_share(started):
    at = started
    at.radio(key="prof_mode").set_value("Generator").run()
    at.radio(key="prof_dist").set_value("mixture").run()
    at.number_input(key="prof_mx_n").set_value(200).run()
    at.slider(key="prof_mx_public").set_value(0.25).run()
    _ok(at)
    prof = at.session_state["profile"]
    assert prof.n == 200 and prof.n_public == 50
    assert _key(at) == presets.mixture(200, 0.05, 1.0, 0.25, 0).key


def test_a_new_tier_row_starts_usable(started):
    """The tiers editor's columns have defaults, so a row added in the browser starts as a
    tier (name, eps 1, 100 users or 10%) instead of empty "None" cells; and such a row is
    accepted as it is."""
    import json

    at = started
    at.radio(key="prof_mode").set_value("Tiers").run()
    editor = next(d for d in at.dataframe if d.editing_mode)
    cols = json.loads(editor.columns)
    assert {c: cols[c].get("default") for c in ("name", "eps", "count", "share")} == {
        "name": "New tier",
        "eps": "1",
        "count": 100,
        "share": 10.0,
    }
    at.session_state[_editor_key(at)] = {
        "edited_rows": {},
        "added_rows": [{c: cols[c]["default"] for c in ("name", "eps", "count")}],
        "deleted_rows": [],
    }
    at.run()
    _ok(at)
    assert not _errors(at)
    assert _key(at) == (
        hdp.EpsilonProfile.from_tiers(
            [0.1, 1, math.inf, 1],
            [600, 300, 100, 100],
            ["Strict", "Balanced", "Public", "New tier"],
        ).key
    )


def test_tiers_editor_edits_apply_and_bad_cells_keep_the_profile(started):
    at = started
    at.radio(key="prof_mode").set_value("Tiers").run()
    _ok(at)
    # paper_high has 1000 levels: the editor starts from the default three tiers
    assert (
        _key(at)
        == hdp.EpsilonProfile.from_tiers(
            [0.1, 1, math.inf], [600, 300, 100], ["Strict", "Balanced", "Public"]
        ).key
    )
    at.session_state[_editor_key(at)] = {
        "edited_rows": {0: {"eps": "0.2"}},
        "added_rows": [{"name": "Opt-out", "eps": "0", "count": 7}],
        "deleted_rows": [2],
    }
    at.run()
    _ok(at)
    want = hdp.EpsilonProfile.from_tiers(
        [0.2, 1, 0], [600, 300, 7], ["Strict", "Balanced", "Opt-out"]
    )
    assert _key(at) == want.key
    assert at.query_params["p_tier"] == ["0.2~600~Strict", "1~300~Balanced", "0~7~Opt-out"]
    assert any("not used" in c.value for c in at.caption)  # the 7 users at eps = 0

    at.session_state[_editor_key(at)] = {
        "edited_rows": {1: {"eps": "-3"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception
    assert any("row 2 (Balanced)" in e and "negative" in e for e in _errors(at))
    assert _key(at) == want.key  # unchanged


def test_tier_log_slider_sets_a_tiers_eps(started):
    """The log-scale slider under the table moves one tier's eps (far right = public) and the
    table and the profile follow."""
    at = started
    at.radio(key="prof_mode").set_value("Tiers").run()
    at.selectbox(key="prof_tier_pick").set_value(1).run()  # tier 2, "Balanced", eps 1
    slider_key = f"prof_tier_eps_{at.session_state['prof_tiers']['gen']}_1"
    assert at.select_slider(key=slider_key).value == 1.0
    at.select_slider(key=slider_key).set_value(0.2).run()
    _ok(at)
    assert (
        _key(at)
        == hdp.EpsilonProfile.from_tiers(
            [0.1, 0.2, math.inf], [600, 300, 100], ["Strict", "Balanced", "Public"]
        ).key
    )
    assert at.session_state["prof_tiers"]["rows"][1]["eps"] == "0.2"
    slider_key = f"prof_tier_eps_{at.session_state['prof_tiers']['gen']}_1"
    at.select_slider(key=slider_key).set_value(math.inf).run()
    _ok(at)
    assert list(at.session_state["profile"].levels) == [0.1, math.inf, math.inf]


def test_tiers_as_shares_of_n(started):
    at = started
    at.radio(key="prof_mode").set_value("Tiers").run()
    at.radio(key="prof_tiers_units").set_value("share").run()
    _ok(at)
    assert at.number_input(key="prof_tiers_total").value == 1000
    at.number_input(key="prof_tiers_total").set_value(2001).run()
    _ok(at)
    prof = at.session_state["profile"]
    # 60/30/10 % of 2001 = 1200.6 / 600.3 / 200.1: the one left-over user goes to the .6
    assert list(prof.counts) == [1201, 600, 200]


def test_tiers_start_from_a_tiered_profile(started):
    at = started
    at.selectbox(key="prof_preset").set_value("product_menu").run()
    at.radio(key="prof_mode").set_value("Tiers").run()
    _ok(at)
    assert _key(at) == hdp.preset("product_menu").key  # same tiers, now editable
    assert _url_spec(at)["kind"] == "tiers"


def _upload(at, name: str, data: bytes):
    at.radio(key="prof_mode").set_value("Upload").run()
    at.get("file_uploader")[0].upload(name, data, "text/csv").run()
    return at


@pytest.mark.parametrize("kind", ["tiers", "values"])
def test_good_upload(started, kind):
    at = _upload(started, f"{kind}.csv", example_csv(kind))
    _ok(at)
    assert not _errors(at)
    assert _key(at) == hdp.profile_from_csv(example_csv(kind)).key
    if kind == "tiers":  # three tiers fit in a link
        assert _url_spec(at)["counts"] == [600, 300, 100]
    else:  # per-user data values cannot go in a link: the page says so, the CSV is offered
        assert _url_spec(at) is None
        assert any("can't be put in a link" in i.value for i in at.info)


BAD_FILES = [
    ("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    ("data.csv", bytes(range(256)) * 4, "binary"),
    ("empty.csv", b"", "empty"),
    ("blank.csv", b"\n\n  \n", "empty"),
    ("cols.csv", b"privacy,weight\n0.1,1\n", "no column named 'eps'"),
    ("words.csv", b"eps\n0.1\n0.2\nlots\n", "row 3 (line 4"),
    ("neg.csv", b"eps,count\n0.1,5\n-0.5,3\n", "row 2 (line 3"),
    ("nan.csv", b"eps\n0.1\nNaN\n", "row 2 (line 3"),
    ("count.csv", b"eps,count\n0.1,5\n0.2,abc\n", "row 2 (line 3"),
    # not UTF-8: read as Windows-1252 since issue 12; the bad cell is named by its row and
    # kind, never quoted (issue 19)
    ("latin1.csv", "eps\n0.1\n0.2é\n".encode("latin-1"), "the cell is text"),
    ("rows.csv", b"eps\n" + b"0.1\n" * (hdp.MAX_ROWS + 1), "more than 1,000,000 rows"),
    ("big.csv", b"eps\n" + b"0" * (hdp.MAX_UPLOAD_BYTES), "limit is 20 MB"),
]


@pytest.mark.parametrize(("name", "data", "needle"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_upload_names_the_problem_and_keeps_the_profile(started, name, data, needle):
    at = started
    before, url_before = _key(at), dict(at.query_params)
    _upload(at, name, data)
    assert not at.exception, at.exception
    errs = _errors(at)
    assert len(errs) == 1 and needle in errs[0], errs
    assert "previous profile is kept" in errs[0]
    assert _key(at) == before
    assert dict(at.query_params) == url_before


def test_back_to_upload_restores_the_last_good_file(started):
    at = _upload(started, "tiers.csv", example_csv("tiers"))
    want = _key(at)
    at.radio(key="prof_mode").set_value("Preset").run()
    assert _key(at) == hdp.preset("paper_high").key
    at.radio(key="prof_mode").set_value("Upload").run()
    _ok(at)
    assert _key(at) == want
    assert any("uploaded earlier" in s.value for s in at.success)


def test_a_good_file_after_a_bad_one(started):
    at = _upload(started, "bad.csv", b"eps\nx\n")
    assert _errors(at)
    at.get("file_uploader")[0].upload("good.csv", b"eps\n0.5\n2\n", "text/csv").run()
    _ok(at)
    assert not _errors(at)
    assert _key(at) == hdp.EpsilonProfile.from_values([0.5, 2]).key
    assert _url_spec(at) == {"kind": "values", "levels": [0.5, 2.0]}


# links ---------------------------------------------------------------------------------------
GOOD_LINKS = [
    (
        {"profile": "preset", "p_name": "paper_low", "p_seed": "2"},
        "Preset",
        hdp.preset("paper_low", 2),
    ),
    (
        {"profile": "log_uniform", "p_n": "250", "p_lo": "0.0183", "p_hi": "7.39", "p_seed": "1"},
        "Generator",
        presets.log_uniform(250, 0.0183, 7.39, 1),
    ),
    (
        {"profile": "tiers", "p_tier": ["0.1~10~A", "inf~5~B"]},
        "Tiers",
        hdp.EpsilonProfile.from_tiers([0.1, math.inf], [10, 5], ["A", "B"]),
    ),
    (
        {"profile": "values", "p_eps": "0.3_0.1_inf"},
        "Upload",
        hdp.EpsilonProfile.from_values([0.3, 0.1, math.inf]),
    ),
]


@pytest.mark.parametrize(
    ("params", "mode", "want"), GOOD_LINKS, ids=[g[0]["profile"] for g in GOOD_LINKS]
)
def test_link_opens_its_profile_and_sets_the_controls(app, params, mode, want):
    for k, v in params.items():
        app.query_params[k] = v
    app.run()
    _ok(app)
    assert _key(app) == want.key
    assert app.radio(key="prof_mode").value == mode
    assert not app.warning
    assert links.profile_from_spec(_url_spec(app)).key == want.key
    if mode == "Generator":  # the controls show the link's exact values
        assert app.number_input(key="prof_lu_n").value == 250
        assert app.select_slider(key="prof_lu_range").value == (0.0183, 7.39)
        app.number_input(key="prof_lu_seed").set_value(2).run()  # and edit from there
        assert _key(app) == presets.log_uniform(250, 0.0183, 7.39, 2).key


MALFORMED = [
    {"profile": "preset", "p_name": "nope"},
    {"profile": "log_uniform", "p_n": "1e99", "p_lo": "0.1", "p_hi": "1"},
    {"profile": "log_uniform", "p_n": "100", "p_lo": "abc", "p_hi": "1"},
    {"profile": "tiers", "p_tier": ["0.1~-5"]},
    {"profile": "<script>alert(1)</script>"},
    {"profile": "preset", "p_name": "x" * 20_000},
    {"p_n": "5"},
    {"profile": "preset", "p_name": ["paper_low", "paper_high"]},
]


@pytest.mark.parametrize("params", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_link_falls_back_with_a_note(app, params):
    for k, v in params.items():
        app.query_params[k] = v
    app.run()
    _ok(app)
    assert _key(app) == hdp.preset("paper_high").key
    notes = [w.value for w in app.warning]
    assert len(notes) == 1 and "could not be used" in notes[0]
    assert len(notes[0]) < 600
    assert _url_spec(app) == {"kind": "preset", "name": "paper_high", "seed": 0}  # cleaned
    # the note stays until the profile changes
    app.run()
    assert app.warning
    app.selectbox(key="prof_preset").set_value("paper_low").run()
    assert not app.warning


def test_unrelated_parameters_are_left_alone(app):
    app.query_params["sim_trials"] = "500"
    app.run()
    _ok(app)
    assert not app.warning
    assert app.query_params["sim_trials"] == "500"
    assert app.query_params["profile"] == "preset"


# state across pages ------------------------------------------------------------------------
def test_profile_survives_a_page_switch(started):
    at = started
    at.radio(key="prof_mode").set_value("Generator").run()
    at.number_input(key="prof_lu_n").set_value(321).run()
    want = presets.log_uniform(321, 0.02, 8.0, 0).key
    assert _key(at) == want
    at.switch_page("pages/saturation.py").run()
    assert not at.exception, at.exception
    assert _key(at) == want
    assert at.query_params["p_n"] == "321"  # the link follows on every page
    at.switch_page("pages/profile.py").run()
    _ok(at)
    assert _key(at) == want
    assert at.radio(key="prof_mode").value == "Generator"
    assert at.number_input(key="prof_lu_n").value == 321  # controls restored


def test_tiers_edits_survive_a_page_switch(started):
    at = started
    at.radio(key="prof_mode").set_value("Tiers").run()
    at.session_state[_editor_key(at)] = {
        "edited_rows": {2: {"count": 900}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    want = _key(at)
    assert at.session_state["profile"].n_public == 900
    at.switch_page("pages/bounds.py").run()
    at.switch_page("pages/profile.py").run()
    _ok(at)
    assert _key(at) == want
    table = at.data_editor[0].value
    assert list(table["count"]) == [600, 300, 900]  # the editor shows the edited tiers


def test_profile_changed_elsewhere_moves_the_controls(started):
    """Another page (e.g. the tier designer) calls set_profile: the controls follow it."""
    at = started
    at.switch_page("pages/bounds.py").run()
    prof = hdp.EpsilonProfile.from_tiers([0.3, 3.0], [70, 30], ["Low", "High"])
    at.session_state["profile"] = prof
    at.session_state["profile_spec"] = links.spec_from_profile(prof)
    at.session_state["profile_label"] = "from elsewhere"
    at.session_state["profile_version"] = at.session_state["profile_version"] + 1
    at.switch_page("pages/profile.py").run()
    _ok(at)
    assert _key(at) == prof.key
    assert at.radio(key="prof_mode").value == "Tiers"
    assert list(at.data_editor[0].value["eps"]) == ["0.3", "3"]


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0"),
        (99_999, "99,999"),
        (100_000, "100k"),
        (1_000_000, "1M"),
        (1_234_567, "1.23M"),
        (10**9, "1B"),
        (2 * 10**12, "2T"),
    ],
)
def test_compact_counts_fit_the_sidebar(n, text):
    from hdp_app.common import compact_count

    assert compact_count(n) == text
