"""AppTest of the Tier designer page: every control, import/export, links, and the button
that makes the menu the current profile.

The page's numbers come from hdp_core.design (tested in test_design.py); here we check that
each control changes the menu the way it says, that the numbers shown are the core's numbers
for that menu, and that bad input shows an error without an exception or losing the menu.
"""

from __future__ import annotations

import json
import math

import pytest
from helpers import open_page, open_sections, shown

from hdp_app.views import links
from hdp_core import design as D
from hdp_core import design_io as menu_io
from hdp_core import menu as M
from hdp_core import solvers as S

MENU = "td_menu"


@pytest.fixture
def page(app):
    at = open_sections(open_page(app, "tier_designer"))
    assert not at.exception, at.exception
    return at


def menu_of(at) -> M.Menu:
    return at.session_state[MENU]


def metric(at, label_start: str) -> str:
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def ok(at):
    assert not at.exception, at.exception
    return at


def fmt(x, unit="USD"):
    return f"{x:.3g} {unit}".strip()


def test_default_page(page):
    at = page
    m = menu_of(at)
    assert m == M.default_menu()
    rep = D.evaluate_menu(m)
    assert metric(at, "Error of the mean") == f"± {fmt(rep.errors['ADPM'].half_width)}"
    assert metric(at, "RMSE of the mean") == fmt(rep.errors["ADPM"].rmse)
    assert metric(at, "Loosest tier worth offering") == f"{rep.tau_star:.4g}"
    assert metric(at, "Users capped") == f"{rep.n_saturated:,}"
    assert metric(at, "Everyone at the strictest tier") == fmt(rep.errors["UNI"].half_width)
    assert metric(at, "Weights proportional") == fmt(rep.errors["PropDPM"].half_width)
    # issue 21 item 3: section 5's population figure (k = 1) is section 2's number, proven by
    # hdp_core.intervals (recomputed here), and no caption excuses a difference
    from hdp_core import intervals as I
    from hdp_core.rounding import release_half_width

    proven = release_half_width(
        I.expected_error_95(m.to_profile(), "population"), 1.0, m.low, m.high
    )
    assert rep.errors["ADPM"].half_width == pytest.approx(proven, rel=1e-12)
    assert metric(at, "Population mean (ADPM)") == f"± {proven:.4g} USD"
    assert not any("section 2" in c.value for c in at.caption)
    assert any(
        "Saturated: Balanced, Open" in shown(i.value) and "adds no accuracy" in i.value
        for i in at.info
    )
    assert len(at.get("plotly_chart")) == 2  # the menu figure (two panels) and the what-if
    # the URL holds the menu
    assert links.decode_menu_link(at.query_params["menu"]) == m
    # every control has plain-language help
    for kind in (
        "text_input",
        "select_slider",
        "number_input",
        "button",
        "radio",
        "selectbox",
        "slider",
        "download_button",
        "file_uploader",
    ):
        for w in at.get(kind):
            assert w.help, (kind, w.key)
    # the comparison switches between the 95% half-width and the RMSE
    at.radio(key="td_view").set_value("rmse").run()
    ok(at)
    assert metric(at, "Everyone at the strictest tier") == fmt(rep.errors["UNI"].rmse)
    assert metric(at, "ADPM (this page") == fmt(rep.errors["ADPM"].rmse)


def test_tier_controls(page):
    at = page
    at.text_input(key="td_name_1").set_value("Medium").run()
    at.select_slider(key="td_eps_1").set_value(0.15).run()
    at.select_slider(key="td_eps_2").set_value(5.0).run()
    at.number_input(key="td_share_0").set_value(50.0).run()
    at.number_input(key="td_share_1").set_value(40.0).run()
    ok(at)
    m = menu_of(at)
    assert m.names == ("Strict", "Medium", "Open")
    assert list(m.levels) == [0.1, 0.15, 5.0]
    assert [t.share_percent for t in m.tiers] == [50.0, 40.0, 10.0]
    rep = D.evaluate_menu(m)
    assert metric(at, "RMSE of the mean") == fmt(rep.errors["ADPM"].rmse)
    # public is the last option of the eps slider
    at.select_slider(key="td_eps_2").set_value(math.inf).run()
    assert math.isinf(menu_of(ok(at)).levels[2])


def test_shares_not_summing_are_scaled_with_a_note(page):
    at = page
    at.number_input(key="td_share_0").set_value(30.0).run()  # 30 + 30 + 10 = 70
    ok(at)
    assert any("add up to 70%" in w.value for w in at.warning)
    assert [t.share_percent for t in menu_of(at).tiers] == pytest.approx(
        [300 / 7, 300 / 7, 100 / 7]
    )


def test_bad_input_keeps_the_menu(page):
    at = page
    before = menu_of(at)
    at.text_input(key="td_name_1").set_value("strict").run()  # duplicate name
    ok(at)
    assert any("both called" in e.value for e in at.error)
    assert menu_of(at) == before
    at.text_input(key="td_name_1").set_value("Balanced").run()
    at.number_input(key="td_hi").set_value(-5.0).run()  # high below low
    ok(at)
    assert any("low < high" in shown(e.value) for e in at.error)
    assert menu_of(at) == before
    assert len(at.get("plotly_chart")) == 2  # results of the last valid menu stay


def test_users_range_unit_and_spread(page):
    at = page
    at.number_input(key="td_n").set_value(20_000).run()
    at.number_input(key="td_lo").set_value(10.0).run()
    at.number_input(key="td_hi").set_value(110.0).run()
    at.text_input(key="td_unit").set_value("min").run()
    ok(at)
    m = menu_of(at)
    assert (m.n_users, m.low, m.high, m.unit) == (20_000, 10.0, 110.0, "min")
    rep = D.evaluate_menu(m)
    assert metric(at, "RMSE of the mean") == fmt(rep.errors["ADPM"].rmse, "min")
    at.radio(key="td_spread").set_value("sd").run()
    at.number_input(key="td_sd").set_value(10.0).run()
    ok(at)
    assert menu_of(at).data_sd == 10.0
    calm = D.evaluate_menu(menu_of(at))
    assert calm.errors["ADPM"].rmse < rep.errors["ADPM"].rmse
    assert metric(at, "RMSE of the mean") == fmt(calm.errors["ADPM"].rmse, "min")
    at.number_input(key="td_sd").set_value(60.0).run()  # more than half the range
    ok(at)
    assert any("exceeds half the range" in e.value for e in at.error)
    assert menu_of(at).data_sd == 10.0


def test_add_remove_and_template(page):
    at = page
    at.button(key="td_add").click().run()
    ok(at)
    assert menu_of(at).k == 4 and menu_of(at).names[-1] == "Tier 4"
    assert at.text_input(key="td_name_3").value == "Tier 4"
    at.button(key="td_remove_0").click().run()
    ok(at)
    m = menu_of(at)
    assert m.names == ("Balanced", "Open", "Tier 4")
    assert [t.share_percent for t in m.tiers] == pytest.approx([75.0, 25.0, 0.0])
    assert at.text_input(key="td_name_0").value == "Balanced"
    at.selectbox(key="td_template").set_value("product_menu").run()
    at.button(key="td_load_template").click().run()
    ok(at)
    m = menu_of(at)
    assert m.names == ("Strict", "Balanced", "Relaxed", "Public")
    assert m.n_users == 1_000_000
    assert len(at.get("select_slider")) == 4


def test_accuracy_first_min_users_and_apply(page):
    at = page
    at.radio(key="td_metric").set_value("rmse").run()
    at.number_input(key="td_target").set_value(0.5).run()
    at.radio(key="td_question").set_value("users").run()
    ok(at)
    ans = S.min_users(M.default_menu(), 0.5, "rmse")
    assert metric(at, "Minimum number of users") == f"{ans.value:,}"
    # 1,000,000 users already meet an RMSE of 0.5 USD: good news, a success box
    assert D.menu_error(M.default_menu(), "rmse") <= 0.5
    assert any("needs at least" in s.value for s in at.success)
    at.button(key="td_apply").click().run()
    ok(at)
    assert menu_of(at).n_users == ans.value
    assert at.number_input(key="td_n").value == ans.value


def boxes(at, text: str) -> set[str]:
    """The kinds of message box (success, info, warning, error) that show ``text``."""
    kinds = {"success": at.success, "info": at.info, "warning": at.warning, "error": at.error}
    return {k for k, els in kinds.items() if any(text in shown(e.value) for e in els)}


def test_answer_boxes_match_their_verdicts(page):
    """Issue 23: a success box only for good news. Each verdict is decided here from the
    menu's own error (hdp_core.design.menu_error) against the target, not from the answer."""
    at = page
    m = M.default_menu()
    at.radio(key="td_question").set_value("users").run()
    at.radio(key="td_metric").set_value("half_width").run()
    target = at.number_input(key="td_target").value
    assert D.menu_error(m, "half_width") > target  # the default target needs more users
    ok(at)
    assert boxes(at, f"half-width of {target:.4g}") == {"warning"}  # on main: a success box
    # beside it, the table's own mean: its 95% error is within the target already (good news)
    assert S.solve(m, "users", target, S.TABLE_METRIC).now_error <= target
    assert boxes(at, "half-width of the table's own mean") == {"success"}
    # a target the menu meets as it is: good news
    at.radio(key="td_metric").set_value("rmse").run()
    at.number_input(key="td_target").set_value(5.0).run()
    ok(at)
    assert D.menu_error(m, "rmse") <= 5.0
    assert boxes(at, "already meets the target") == {"success"}
    # nobody needs to move: good news
    at.radio(key="td_question").set_value("move").run()
    at.selectbox(key="td_move_from").set_value(0).run()
    at.selectbox(key="td_move_to").set_value(2).run()
    ok(at)
    assert boxes(at, "nobody needs to move") == {"success"}
    # users must move: the menu needs a change, a warning (a target between the menu's error
    # and the error with every Strict user moved to Open)
    ct = m.counts
    moved = m.with_counts([0, int(ct[1]), int(ct[0] + ct[2])])
    target = (D.menu_error(m, "rmse") + D.menu_error(moved, "rmse")) / 2
    assert D.menu_error(moved, "rmse") < target < D.menu_error(m, "rmse")
    at.number_input(key="td_target").set_value(target).run()
    ok(at)
    assert metric(at, "Users who must move") != "0"
    assert {k for k, els in (("success", at.success), ("warning", at.warning)) if els} == {
        "warning"
    }
    # a target of half the range or more: met without data, neither good nor bad news
    at.number_input(key="td_target").set_value(300.0).run()
    ok(at)
    assert 300.0 >= (m.high - m.low) / 2
    assert boxes(at, "Choose a smaller target") == {"info"}  # on main: a warning
    # a target no menu can meet: an error
    at.radio(key="td_question").set_value("level").run()
    at.number_input(key="td_target").set_value(0.01).run()
    ok(at)
    assert boxes(at, "Even with") == {"error"}


def test_no_saturated_tier_is_information_not_success(page):
    """'No tier is saturated' is a fact about the menu, not good news (issue 23)."""
    at = page
    for i in range(3):
        at.select_slider(key=f"td_eps_{i}").set_value(0.1).run()
    ok(at)
    rep = D.evaluate_menu(menu_of(at))
    assert list(menu_of(at).levels) == [0.1] * 3 and not rep.saturated.any()
    assert boxes(at, "No tier is saturated") == {"info"}  # on main: a success box
    assert boxes(at, "Saturated:") == set()


def test_accuracy_first_strictest_level(page):
    at = page
    at.number_input(key="td_n").set_value(20_000).run()
    at.radio(key="td_metric").set_value("half_width").run()
    at.number_input(key="td_target").set_value(5.0).run()
    at.radio(key="td_question").set_value("level").run()
    at.selectbox(key="td_solve_tier").set_value(0).run()
    ok(at)
    ans = S.strictest_level(menu_of(at), 0, 5.0, "half_width")
    assert ans.status == "ok"
    assert metric(at, "Strictest eps for Strict") == f"{ans.value:.4g}"
    at.button(key="td_apply").click().run()
    ok(at)
    assert menu_of(at).levels[0] == pytest.approx(ans.value)
    # impossible: below what even public data gives
    at.number_input(key="td_target").set_value(0.01).run()
    ok(at)
    assert any("Even with" in e.value for e in at.error)


def test_accuracy_first_move_users(page):
    at = page
    at.number_input(key="td_n").set_value(2_000).run()
    at.radio(key="td_metric").set_value("rmse").run()
    at.radio(key="td_question").set_value("move").run()
    at.selectbox(key="td_move_from").set_value(0).run()
    at.selectbox(key="td_move_to").set_value(2).run()
    m = menu_of(at)
    target = 0.9 * D.menu_error(m, "rmse")
    at.number_input(key="td_target").set_value(target).run()
    ok(at)
    ans = S.share_to_move(m, 0, 2, target, "rmse")
    assert ans.status == "ok"
    assert metric(at, "Users who must move") == f"{ans.value:,}"
    at.button(key="td_apply").click().run()
    ok(at)
    assert list(menu_of(at).counts) == [
        m.counts[0] - ans.value,
        m.counts[1],
        m.counts[2] + ans.value,
    ]
    # a stricter destination is refused with a message, not an exception
    at.selectbox(key="td_move_to").set_value(0).run()
    ok(at)
    assert any("looser" in e.value for e in at.error)


def test_what_if_slider(page):
    at = page
    at.number_input(key="td_n").set_value(5_000).run()
    at.selectbox(key="td_wi_a").set_value(0).run()
    at.selectbox(key="td_wi_b").set_value(2).run()
    at.slider(key="td_wi_share").set_value(30.0).run()
    ok(at)
    moved = D.evaluate_menu(D.move_share(menu_of(at), 0, 2, 30.0))
    assert metric(at, "95% error half-width at this point") == fmt(moved.errors["ADPM"].half_width)
    assert metric(at, "tau* at this point") == f"{moved.worth_offering:.4g}"
    assert metric(at, "Strict / Open") == "30.0% / 40.0%"
    assert len(at.get("plotly_chart")) == 2
    # the menu itself does not change
    assert menu_of(at).tiers[0].share_percent == 60.0


def test_export_import_round_trip(page):
    """The JSON download (the text the page previews: tests/test_browser_downloads.py checks
    that a downloaded file is its preview) holds the menu and its results and imports back;
    the CSV download is menu_io.report_to_csv of the menu's report, one row per tier."""
    at = page
    at.selectbox(key="td_template").set_value("product_menu").run()
    at.button(key="td_load_template").click().run()
    at.number_input(key="td_n").set_value(123_457).run()
    ok(at)
    exported = menu_of(at)
    buttons = {b.key: b for b in at.get("download_button")}
    assert buttons["td_dl_json"].label.endswith("(JSON)")
    assert buttons["td_dl_csv"].label.endswith("(CSV)")
    text = next(c.value for c in at.code if c.language == "json")  # the preview
    assert json.loads(text)["results"]["tau_star"] == pytest.approx(
        D.evaluate_menu(exported).tau_star
    )
    csv = menu_io.report_to_csv(D.evaluate_menu(exported)).decode().splitlines()
    assert csv[0].startswith("name,eps,count") and len(csv) == 5
    assert csv[4].startswith("Public,inf,")
    for key in ("td_dl_json", "td_dl_csv"):  # clicking a download does not disturb the page
        at.get("download_button")[
            [b.key for b in at.get("download_button")].index(key)
        ].click().run()
        ok(at)
    assert menu_of(at) == exported
    # change the menu, then import the exported file back
    at.selectbox(key="td_template").set_value("two").run()
    at.button(key="td_load_template").click().run()
    assert menu_of(at) != exported
    at.get("file_uploader")[0].upload("tier_menu.json", text.encode(), "application/json").run()
    ok(at)
    assert menu_of(at) == exported
    assert at.number_input(key="td_n").value == 123_457
    assert at.text_input(key="td_name_3").value == "Public"
    assert any("Imported" in s.value for s in at.success)


BAD_FILES = [
    (b'{"tiers": [', "not valid JSON"),
    (b'{"n_users": 10, "tiers": [{"name": "A", "eps": -1, "share_percent": 100}]}', "negative"),
    (b'{"n_users": 10, "tiers": [{"name": "A", "eps": 1, "share_percent": 60}]}', "add up to 60"),
    (
        b'{"n_users": "ten", "tiers": [{"name": "A", "eps": 1, "share_percent": 100}]}',
        "not a whole number",
    ),
    (
        b'{"n_users": 10, "tiers": ['
        + b",".join(
            b'{"name": "t%d", "eps": 1, "share_percent": 9.0909090909}' % i for i in range(11)
        )
        + b"]}",
        "at most 10",
    ),
    (b" " * (menu_io.MAX_MENU_BYTES + 1), "KB"),
]


def test_malformed_import_keeps_the_menu(page):
    """Each bad file: an error naming the problem, no exception, the menu and its widgets
    unchanged (the files are uploaded one after the other into the same session)."""
    at = page
    at.number_input(key="td_n").set_value(12_345).run()
    before = menu_of(at)
    for i, (content, msg) in enumerate(BAD_FILES):
        up = at.get("file_uploader")[0]
        up.set_value((f"bad{i}.json", content, "application/json")).run()
        ok(at)
        errs = [shown(e.value) for e in at.error]
        assert any(f"Could not import bad{i}.json" in e and msg in e for e in errs), errs
        assert menu_of(at) == before
        assert at.text_input(key="td_name_0").value == "Strict"
        assert at.number_input(key="td_n").value == 12_345


def test_good_link_opens_the_menu(app):
    m = M.template_menu("product_menu", 7_777, 0, 60, "min")
    app.query_params["menu"] = links.encode_menu_link(m)
    at = ok(open_page(app, "tier_designer"))
    assert menu_of(at) == m
    assert at.number_input(key="td_n").value == 7_777
    assert at.text_input(key="td_name_2").value == "Relaxed"
    assert any("Opened the menu from the link" in i.value for i in at.info)


@pytest.mark.parametrize("token", ["not-a-menu!", "e30"])  # bad characters; "{}"
def test_malformed_link_falls_back_with_a_note(app, token):
    app.query_params["menu"] = token
    at = ok(open_page(app, "tier_designer"))
    assert menu_of(at) == M.default_menu()
    assert any("could not be used" in w.value and "default menu" in w.value for w in at.warning)
    # and the URL now describes the menu on screen
    assert links.decode_menu_link(at.query_params["menu"]) == M.default_menu()


def test_use_as_current_profile(page):
    at = page
    at.number_input(key="td_n").set_value(4_321).run()
    at.button(key="td_use").click().run()
    ok(at)
    m = menu_of(at)
    prof = at.session_state["profile"]
    assert prof.is_tiered and prof.n == 4_321
    assert list(prof.counts) == list(m.counts)
    assert prof.names == m.names
    assert at.session_state["profile_spec"]["kind"] == "tiers"
    assert "Tier menu" in at.session_state["profile_label"]
    assert any("now the current profile" in s.value for s in at.success)
    # another page now sees it
    at.switch_page("pages/saturation.py").run()
    ok(at)
    assert at.session_state["profile"].key == prof.key


def test_menu_survives_a_page_switch(page):
    at = page
    at.number_input(key="td_n").set_value(31_415).run()
    at.switch_page("pages/bounds.py").run()
    at.switch_page("pages/tier_designer.py").run()
    ok(at)
    assert menu_of(at).n_users == 31_415
    assert at.number_input(key="td_n").value == 31_415


def test_tau_star_close_to_a_tier_reads_apart_from_it(app):
    """With 5,000,000 users tau* = 0.1 + 8 / (n 0.1 ...) is 0.10003: shown as 0.10003, not as
    0.1 (which would read as the Strict tier's own level)."""
    m = M.default_menu().with_n_users(5_000_000)
    rep = D.evaluate_menu(m)
    assert f"{rep.tau_star:.4g}" == "0.1" and rep.tau_star != 0.1  # the case under test
    want = f"{rep.tau_star:.5g}"
    assert want == "0.10003"
    app.query_params["menu"] = links.encode_menu_link(m)
    at = ok(open_page(app, "tier_designer"))
    assert metric(at, "Loosest tier worth offering") == want
    assert any(f"tau* = {want} gets tau*" in shown(i.value) for i in at.info)


def test_a_menu_csv_is_imported_through_the_one_reader(page):
    """Issue 19: the per-tier CSV this page exports is imported back (through
    hdp_core.tables.read_upload_csv, its limits and header checks); the range stays."""
    from hdp_core import design_io as menu_io

    at = page
    exported = menu_of(at)
    data = menu_io.report_to_csv(D.evaluate_menu(exported))
    at.selectbox(key="td_template").set_value("two").run()
    at.button(key="td_load_template").click().run()
    assert menu_of(at).tiers != exported.tiers
    at.get("file_uploader")[0].upload("tier_menu.csv", data, "text/csv").run()
    ok(at)
    assert menu_of(at).tiers == exported.tiers
    assert any("Imported" in s.value for s in at.success)
    # a CSV whose first row is data: refused with the reader's message, the menu kept
    before = menu_of(at)
    at.get("file_uploader")[0].upload("bad.csv", b"0.1,40\n1,60\n", "text/csv").run()
    ok(at)
    assert any("the first row must name the columns" in e.value for e in at.error)
    assert menu_of(at) == before


# ---- issue 23: sections 3 to 6 drawn only when open ---------------------------------------
def _labels(at) -> list[str]:
    return [e.label for e in at.expander]


def test_sections_3_to_6_start_closed_and_draw_nothing(app):
    """A first visit draws sections 1 and 2, with section 2's chart drawn on arrival (issue
    31: every page shows its picture at once): the four later sections are closed expanders
    (titled as before), and none of their controls, charts or downloads exists. The link
    still carries the menu and the goal."""
    from hdp_app.design_state import OPEN
    from hdp_app.views import design as V

    at = ok(open_page(app, "tier_designer"))
    for title in V.SECTIONS.values():
        assert f"**{title}**" in _labels(at)
    assert all(not at.session_state[k] for k in OPEN.values() if k in at.session_state)
    assert [c.key for c in at.get("plotly_chart")] == ["td_fig_menu"]  # section 2's, only
    kinds = ("number_input", "radio", "slider", "selectbox")
    keys = {w.key for kind in kinds for w in at.get(kind)}
    assert not keys & {"td_target", "td_metric", "td_question", "td_wi_share", "td_releases"}
    assert not at.get("download_button") and not at.get("file_uploader")
    # the default target: half ADPM's 95% half-width, to two digits
    half = D.evaluate_menu(menu_of(at)).errors["ADPM"].half_width / 2
    metric_name, value = at.query_params["goal"].split("~")
    assert metric_name == "half_width"
    assert float(value) == pytest.approx(half, rel=0.05) and len(value.strip("0.")) <= 3
    # the tier table is a static table with the tier names as written
    assert len(at.table) == 1 and not at.dataframe
    assert list(at.table[0].value["tier"]) == list(menu_of(at).names)


def test_a_closed_section_keeps_its_values(app):
    """Closing a section and opening it again keeps what was set in it (Streamlit forgets the
    values of widgets a run did not draw), and the link and the export follow them while the
    section is closed."""
    at = ok(open_sections(open_page(app, "tier_designer"), "target", "releases", "whatif"))
    at.radio(key="td_metric").set_value("rmse").run()
    at.number_input(key="td_target").set_value(12.5).run()
    at.number_input(key="td_releases").set_value(6).run()
    share = at.slider(key="td_wi_share")
    share.set_value(round(share.value / 2, 1)).run()
    moved = at.slider(key="td_wi_share").value
    for name in ("target", "releases", "whatif"):
        at.session_state[f"td_open_{name}"] = False
    ok(at.run())
    assert at.query_params["goal"] == "rmse~12.5"
    at.radio(key="td_view").set_value("rmse").run()  # another run with the sections shut
    ok(open_sections(at, "save"))
    export = json.loads(next(c.value for c in at.code if c.language == "json"))
    assert export["results"]["targets"]["releases"] == 6
    ok(open_sections(at, "target", "releases", "whatif"))
    assert at.radio(key="td_metric").value == "rmse"
    assert at.number_input(key="td_target").value == 12.5
    assert at.number_input(key="td_releases").value == 6
    assert at.slider(key="td_wi_share").value == moved


@pytest.mark.parametrize("name", ["target", "whatif", "releases", "save"])
def test_a_link_opens_its_section(app, name):
    from hdp_app.design_state import OPEN

    app.query_params[OPEN[name]] = "true"
    at = ok(open_page(app, "tier_designer"))
    assert at.session_state[OPEN[name]] is True
    drawn = {
        "target": lambda: at.number_input(key="td_target"),
        "whatif": lambda: at.slider(key="td_wi_share"),
        "releases": lambda: at.number_input(key="td_releases"),
        "save": lambda: at.get("download_button")[0],
    }
    assert drawn[name]() is not None
    others = [k for n, k in OPEN.items() if n != name]
    assert not any(at.session_state[k] for k in others if k in at.session_state)


@pytest.mark.parametrize("bad", ["garbage", "1e400", ""])
def test_a_bad_section_value_in_the_link_leaves_it_closed(app, bad):
    app.query_params["td_open_whatif"] = bad
    at = ok(open_page(app, "tier_designer"))
    assert [c.key for c in at.get("plotly_chart")] == ["td_fig_menu"]  # no what-if chart
    assert not at.get("slider")


def test_tier_names_in_the_table_are_plain_text(app):
    """st.table renders Markdown in its cells: a tier name is escaped and shown as typed."""
    from hdp_app.views.formatting import plain

    at = ok(open_page(app, "tier_designer"))
    at.text_input(key="td_name_0").set_value("**bold** [x](http://e.vil)").run()
    ok(at)
    assert at.table[0].value["tier"][0] == plain("**bold** [x](http://e.vil)")


def test_section_values_survive_a_visit_to_another_page(app):
    """Found by a tester: the target error went back to its default after a visit to the
    Bounds page (Streamlit drops the state of widgets a page does not draw)."""
    at = ok(open_sections(open_page(app, "tier_designer"), "target", "releases"))
    at.radio(key="td_view").set_value("rmse").run()
    at.radio(key="td_metric").set_value("rmse").run()
    at.number_input(key="td_target").set_value(0.8).run()
    at.number_input(key="td_releases").set_value(10).run()
    at.switch_page("pages/bounds.py").run()
    ok(at)
    at.switch_page("pages/tier_designer.py").run()
    ok(at)
    assert at.radio(key="td_view").value == "rmse"
    assert at.radio(key="td_metric").value == "rmse"
    assert at.number_input(key="td_target").value == 0.8
    assert at.number_input(key="td_releases").value == 10
    assert at.query_params["goal"] == "rmse~0.8"


def test_the_target_follows_the_range(app):
    """Issue 31: a target set for one data range keeps its fraction of the range when the
    range changes (a template's 0.34 on 0-1 does not become a demand of 0.34 USD on 0-500):
    10 USD on 0-500 is 20 USD on 0-1000, and the link follows."""
    at = ok(open_sections(open_page(app, "tier_designer"), "target"))
    at.radio(key="td_metric").set_value("half_width").run()
    at.number_input(key="td_target").set_value(10.0).run()
    assert (at.number_input(key="td_lo").value, at.number_input(key="td_hi").value) == (0, 500)
    at.number_input(key="td_hi").set_value(1000.0).run()
    ok(at)
    assert at.number_input(key="td_target").value == 20.0
    assert at.query_params["goal"] == "half_width~20"
    at.number_input(key="td_lo").set_value(500.0).run()  # width 500 again
    assert at.number_input(key="td_target").value == 10.0


def test_accuracy_first_shows_both_targets_side_by_side(app):
    """Issue 31: section 3 shows the table's own mean's 95% error with the menu as it is
    (hdp_core.intervals.release_error_95, target 'table', one release), with its verdict
    against a 95%-error target, and an answer for each target with its own "Apply"; an RMSE
    target gets no verdict and no table answer (another measure)."""
    from hdp_core.intervals import release_error_95

    at = ok(open_sections(open_page(app, "tier_designer"), "target"))
    at.radio(key="td_metric").set_value("half_width").run()
    menu = menu_of(at)
    prof = menu.to_profile()
    table = release_error_95(prof.levels, prof.counts, menu.low, menu.high, "table")
    for target, verdict in ((table * 1.01, "within the target"), (table / 2, "above the target")):
        at.number_input(key="td_target").set_value(float(f"{target:.4g}")).run()
        ok(at)
        card = next(m for m in at.main.metric if m.label == "95% error now")
        assert card.value == f"± {table:.3g} {menu.unit}"
        assert verdict in str(card.delta)
    labels = [m.value for m in at.markdown]
    assert "**Population mean (ADPM)**" in labels and "**Table's own mean (TableMean)**" in labels
    # each target its own answer (population: "half_width"; table: solvers.TABLE_METRIC)
    at.radio(key="td_question").set_value("users")
    ok(at.number_input(key="td_target").set_value(0.5).run())
    pop, tab = (
        S.solve(menu, "users", 0.5, "half_width"),
        S.solve(menu, "users", 0.5, S.TABLE_METRIC),
    )
    assert tab.value < menu.n_users < pop.value
    shown_users = {x.value for x in at.main.metric if x.label == "Minimum number of users"}
    assert shown_users == {f"{pop.value:,}", f"{tab.value:,}"}
    assert boxes(at, "of the table's own mean of 0.5 USD") == {"success"}
    ok(at.button(key="td_apply_table").click().run())  # the table's "Apply": its answer
    assert menu_of(at).n_users == tab.value
    # an RMSE target: no verdict, no table answer (a note says why), no table "Apply"
    at.radio(key="td_metric").set_value("rmse").run()
    card = next(m for m in at.main.metric if m.label == "95% error now")
    assert not card.delta
    assert any("population mean only" in c.value for c in at.caption)
    assert [b for b in at.button if b.key == "td_apply_table"] == []
