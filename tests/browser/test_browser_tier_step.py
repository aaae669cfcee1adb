"""Issue 29: a step of the Tier designer's menu inputs reruns only the page's outputs fragment
(design_state.OUTPUTS: the checks, section 2) while sections 3 to 6 are closed, so the browser
gets the outputs and not the 20 controls above them again; with a section open the step
reruns the page's fragment, and the open section follows the menu."""

from __future__ import annotations

from browser_support import runs_ended, wait_drawn

from hdp_app.views import design as V


def _table(page) -> str:
    return page.get_by_test_id("stTable").first.inner_text()


def _step(page) -> int:
    """Move the first eps slider one step right; returns the messages the server sent."""
    msgs = page.evaluate("window.__hdp.msgs")
    before = runs_ended(page)
    slider = page.get_by_role("slider").first
    slider.focus()
    slider.press("ArrowRight")
    wait_drawn(page, runs_before=before)
    return page.evaluate("window.__hdp.msgs") - msgs


def _releases_text(page) -> str:
    box = page.get_by_test_id("stExpander").filter(has_text=V.SECTIONS["releases"])
    return box.inner_text()


def test_a_menu_step_redraws_the_outputs_and_an_open_section_follows(server, page):
    page.goto(server + "/tier_designer")
    wait_drawn(page)
    url, table = page.url, _table(page)
    closed = _step(page)
    assert _table(page) != table, "section 2's table did not follow the step"
    assert page.url != url, "the link did not follow the step"
    assert not page.get_by_test_id("stException").count()

    before = runs_ended(page)
    page.get_by_text(V.SECTIONS["releases"]).click()
    wait_drawn(page, runs_before=before)
    shown, table = _releases_text(page), _table(page)
    opened = _step(page)
    assert _table(page) != table
    assert _releases_text(page) != shown, "the open section 5 did not follow the step"
    assert not page.get_by_test_id("stException").count()
    # the page's fragment sends its 20 controls and their rows too: over twice the outputs'
    assert 2 * closed < opened, (closed, opened)


def test_the_error_measure_with_section_4_open_redraws_section_4(server, page):
    """Section 2's error measure is in the outputs fragment; section 4 (open) draws in that
    measure, so changing it then reruns the page's fragment (design_state.cb_view)."""
    page.goto(server + "/tier_designer?td_open_whatif=true")
    wait_drawn(page, min_charts=2)
    box = page.get_by_test_id("stExpander").filter(has_text=V.SECTIONS["whatif"])
    shown = box.inner_text()
    assert "RMSE" not in shown
    before = runs_ended(page)
    radio = page.get_by_test_id("stRadio").filter(has_text="Show errors as")
    radio.get_by_text(V.METRIC_LABELS["rmse"], exact=True).click()
    wait_drawn(page, min_charts=2, runs_before=before)
    assert "RMSE" in box.inner_text(), box.inner_text()[:400]
    assert not page.get_by_test_id("stException").count()


def test_the_link_s_note_goes_with_an_edit_of_the_menu(server, page):
    """A menu opened from a link shows a note above it ("Opened the menu from the link."),
    which an edit of the menu clears (design_state.keep_menu). With sections 3 to 6 closed,
    the edits after the first rerun only the outputs fragment: the note must not stay on the
    page above a menu it no longer describes (found by attack12)."""
    from hdp_app.views import links
    from hdp_core import menu as M

    page.goto(server + "/tier_designer?menu=" + links.encode_menu_link(M.default_menu()))
    wait_drawn(page)
    note = page.get_by_text(V.LINK_OPENED_NOTE)
    assert note.count() == 1
    _step(page)  # a body rerun (a note was shown): the note goes at once
    assert page.get_by_text(V.LINK_OPENED_NOTE).count() == 0, "a stale note after an edit"
    _step(page)  # an outputs-only rerun
    assert page.get_by_text(V.LINK_OPENED_NOTE).count() == 0, "a stale note after two edits"
    assert not page.get_by_test_id("stException").count()
