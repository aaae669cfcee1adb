"""design_state.cb_menu_input (issue 29's outputs fragment): which fragment an edit of the
menu's inputs reruns, and the note above the menu going with the edit that changes the menu
(found by attack12: the page's fragment drew the note before the outputs cleared it, and the
next steps reran only the outputs, so the note stayed). Plain session state, no server."""

from __future__ import annotations

import types

import pytest

from hdp_app import design_state as S
from hdp_app.views import design as V
from hdp_core import menu as M


class _Rerun(Exception):
    pass


def _fake_st(monkeypatch, ss: dict) -> list:
    reruns: list = []

    def rerun(scope=None):
        reruns.append(scope)
        raise _Rerun

    monkeypatch.setattr(S, "st", types.SimpleNamespace(session_state=ss, rerun=rerun))
    return reruns


def _state(note: str | None) -> dict:
    menu = M.default_menu()
    return {S.MENU: menu, S.NOTE: note, **V.widget_values(menu)}


def test_an_edit_with_a_note_shown_clears_it_and_reruns_the_page_s_fragment(monkeypatch):
    ss = _state(V.LINK_OPENED_NOTE)
    reruns = _fake_st(monkeypatch, ss)
    ss["td_eps_0"] = float(ss["td_eps_0"]) * 2  # a new valid menu
    S.cb_menu_input()  # no st.rerun: the control's own fragment (the page's body) reruns
    assert reruns == []
    assert ss[S.NOTE] is None, "the body would draw the note above the edited menu"
    assert ss[S.MENU] != M.default_menu()
    ss["td_eps_0"] = float(ss["td_eps_0"]) * 2  # the next edit: the outputs only
    with pytest.raises(_Rerun):
        S.cb_menu_input()
    assert reruns == [S.OUTPUTS]


def test_an_invalid_edit_keeps_the_note_and_the_menu(monkeypatch):
    ss = _state(V.LINK_OPENED_NOTE)
    reruns = _fake_st(monkeypatch, ss)
    ss["td_hi"] = float(ss["td_lo"])  # an empty range: the inputs have a problem
    S.cb_menu_input()
    assert reruns == [] and ss[S.NOTE] == V.LINK_OPENED_NOTE
    assert ss[S.MENU] == M.default_menu()
