"""hdp_app.views.profile_controls: the Profile page's control values, tier rows, cards and
notes (issue 20: moved out of pages/profile.py and tested here without Streamlit).

Oracles: the profiles' own levels and counts, sums that must hold (counts add up to n, shares
to 100), the spec each control value came from (round trips through links.normalize_spec),
and ADPM's solution for the cards.
"""

from __future__ import annotations

import math

import pytest

import hdp_core as hdp
from hdp_app.views import links
from hdp_app.views import profile_controls as pc
from hdp_core.presets import PRESETS

INF = math.inf


def test_default_controls_and_grid():
    ui = pc.default_ui()
    assert ui["prof_mode"] in pc.MODES and ui["prof_preset"] in PRESETS
    assert ui["prof_dist"] in pc.DISTS
    g = pc.GRID
    assert g[0] == 0.001 and g[-1] == 1000.0 and list(g) == sorted(set(g))
    assert sum(1 <= x < 10 for x in g) == 10  # ten levels a decade


def test_level_options_add_exact_values_and_public_last():
    opts = pc.level_options(0.123, None, INF, 7.0)
    assert 0.123 in opts and 7.0 in opts and INF not in opts and opts == sorted(opts)
    pub = pc.level_options(public=True)
    assert pub[-1] == INF and pub[:-1] == list(pc.GRID)
    assert pc.fmt_level(INF) == "public" and pc.fmt_level(0.25) == "0.25"


def test_rows_from_a_tiered_profile_and_a_short_per_user_list():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 1.0, INF], [600, 300, 100], ["S", "B", "P"])
    rows = pc.rows_from_profile(prof)
    assert [r["name"] for r in rows] == ["S", "B", "P"]
    assert [r["eps"] for r in rows] == ["0.1", "1", "public"]
    assert sum(r["count"] for r in rows) == 1000
    assert sum(r["share"] for r in rows) == pytest.approx(100)
    per_user = hdp.EpsilonProfile.from_values([0.5, 0.5, 2.0, INF])
    rows = pc.rows_from_profile(per_user)
    assert [(r["eps"], r["count"]) for r in rows] == [("0.5", 2), ("2", 1), ("public", 1)]
    many = hdp.EpsilonProfile.from_values([0.1 * (i + 1) for i in range(11)])
    assert pc.rows_from_profile(many) is None  # 11 distinct levels: not an editor's worth


SPECS = [
    {"kind": "preset", "name": "paper_low", "seed": 3},
    {"kind": "log_uniform", "n": 50, "lo": 0.1, "hi": 4.0, "seed": 2},
    {"kind": "two_groups", "n": 80, "frac": 0.25, "eps1": 0.2, "eps2": INF},
    {"kind": "mixture", "n": 70, "lo": 0.05, "hi": 1.0, "public": 0.2, "seed": 1},
]


@pytest.mark.parametrize("spec", SPECS)
def test_controls_from_a_spec_describe_that_spec(spec):
    prof = links.profile_from_spec(spec)
    ui, rows = pc.ui_from_spec(spec, prof)
    assert rows is None
    full = pc.default_ui() | ui
    if spec["kind"] == "preset":
        assert (full["prof_mode"], full["prof_preset"], full["prof_preset_seed"]) == (
            "Preset",
            "paper_low",
            3,
        )
        return
    assert full["prof_mode"] == "Generator" and full["prof_dist"] == spec["kind"]
    prefix = {"log_uniform": "prof_lu_", "two_groups": "prof_tg_", "mixture": "prof_mx_"}
    p = prefix[spec["kind"]]
    assert full[p + "n"] == spec["n"]
    if "seed" in spec:
        assert full[p + "seed"] == spec["seed"]
    if "lo" in spec:
        assert full[p + "range"] == (spec["lo"], spec["hi"])


def test_controls_from_a_tiers_spec_load_its_rows_and_a_bad_spec_selects_upload():
    spec = {"kind": "tiers", "levels": [0.1, 2.0], "counts": [30, 70], "names": ["a", "b"]}
    ui, rows = pc.ui_from_spec(spec, links.profile_from_spec(spec))
    assert ui == {"prof_mode": "Tiers", "prof_tiers_units": "count", "prof_tiers_total": 100}
    assert [r["count"] for r in rows] == [30, 70]
    assert pc.ui_from_spec({"kind": "nonsense"}, links.profile_from_spec(spec)) == (
        {"prof_mode": "Upload"},
        None,
    )
    assert pc.ui_from_spec(None, links.profile_from_spec(spec))[0] == {"prof_mode": "Upload"}


def test_convert_rows_between_counts_and_shares():
    rows = [{"count": 600.0, "share": None}, {"count": 300.0}, {"count": float("nan")}]
    shares, total = pc.convert_rows(rows, "share", 5)
    assert [r["share"] for r in shares] == pytest.approx([200 / 3, 100 / 3, 0.0])
    assert total == 900 and rows[0]["share"] is None  # the input is not modified
    counts, total = pc.convert_rows([{"share": 50.0}, {"share": 50.0}, {"share": "x"}], "count", 3)
    assert total is None and sum(r["count"] for r in counts) == 3
    assert counts[2]["count"] == 0.0
    zeros, total = pc.convert_rows([{"count": 0.0}], "share", 1)
    assert zeros[0]["share"] is None and total is None


def test_users_error_and_small_helpers():
    assert pc.users_error(10.0, 100) is None and pc.users_error(100.0, 100) is None
    assert pc.users_error(101.0, 100) == "101 users is more than this generator makes (at most 100)"
    assert pc.users_error(2.5, 100) == "2.5 is not a whole number of users"
    assert pc.users_error(0.0, 100) == "0 is not a whole number of users"
    assert "1e+30 users" in pc.users_error(1e30, 100)
    assert pc.tier_pick_labels([{"name": "S"}, {"name": None}]) == ["1. S", "2. Tier 2"]
    assert pc.level_or_one("public") == INF and pc.level_or_one("0.5") == 0.5
    assert pc.level_or_one("what") == 1.0
    assert pc.num_or_none("3") == 3.0 and pc.num_or_none(float("nan")) is None
    assert pc.num_or_none(None) is None


def test_summary_cards_are_adpm_s_numbers():
    prof = hdp.EpsilonProfile.from_tiers([0.1, 1.0, INF], [600, 300, 100])
    sol = hdp.adpm(prof)
    cards = pc.summary_metrics(prof, sol, lambda n: f"<{n}>")
    assert cards[0].value == f"{sol.saturation_level:.4g}"
    assert cards[1].value == f"<{sol.n_saturated}>" and sol.n_saturated >= 100  # public capped
    assert f"{100 * sol.n_saturated / 1000:.3g}%" in cards[1].help
    assert cards[2].value == f"{sol.worst_case_mse:.2e}"
    unsat = hdp.EpsilonProfile.from_values([0.1] * 5)
    assert pc.summary_metrics(unsat, hdp.adpm(unsat), str)[0].value == "none"


def test_notes_show_user_text_as_plain_text():
    assert "[x](y)" not in pc.not_shareable_text("[x](y)")
    assert pc.upload_label("f.csv", 1) == "File f.csv: 1 user"
