"""A new user's machine (issue 30): an empty HOME and no HDP_LEDGER. The Release page's first
release works: the server's default ledger folder (~/.local/share/hdp-explorer) is created on
first use, private to the user, and holds the release."""

from __future__ import annotations

import os
import stat

from helpers import open_page
from test_page_release import _answer, _csv, _release, _set_range

from hdp_release.ledger.store import DEFAULT_PATH, PrivacyLedger


def test_a_first_release_on_a_fresh_home(app, tmp_path, monkeypatch):
    home = tmp_path / "new-user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("HDP_LEDGER", raising=False)
    at = open_page(app, "release")
    assert not at.exception
    at.get("file_uploader")[0].upload("users.csv", _csv(), "text/csv").run()
    _set_range(at, 0.0, 100.0)
    _release(_answer(at, "No"))
    assert not at.exception
    assert [e for e in at.success if "Released" in e.value]
    path = home / DEFAULT_PATH[2:]
    assert path.is_file()
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    (entry,) = PrivacyLedger(path).history()
    assert entry.status == "released"
