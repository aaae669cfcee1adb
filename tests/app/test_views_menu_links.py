"""Tier menus in links (hdp_app.views.links): malformed and invalid links refused with a
MenuError naming what is wrong."""

from __future__ import annotations

import pytest

import hdp_core as hdp
from hdp_app.views import links


@pytest.mark.parametrize(
    "token,msg",
    [
        ("", "empty"),
        ("abc$%", "characters"),
        ("A" * 5000, "at most"),
        ("a", "cannot be decoded"),
        ("bm90IGpzb24", "not valid JSON"),  # "not json"
        (None, "not text"),
    ],
)
def test_malformed_links(token, msg):
    with pytest.raises(hdp.MenuError, match=msg):
        links.decode_menu_link(token)


def test_link_with_invalid_menu():
    import base64

    bad = base64.urlsafe_b64encode(b'{"n_users": 10, "tiers": []}').decode().rstrip("=")
    with pytest.raises(hdp.MenuError, match=r"link.s menu is invalid.*empty"):
        links.decode_menu_link(bad)
