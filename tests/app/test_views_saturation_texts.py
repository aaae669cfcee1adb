"""hdp_app.views.saturation_page: the Saturation page's sentences and case analyses (issue 27:
moved out of pages/saturation.py), tested without Streamlit.

Oracles: the paper's two-group remark (the looser group saturates iff
eps2 >= eps1 + 8/(n f eps1)), so with 900 users at 0.1 and 100 at 100 (threshold 0.189)
users 901 to 1,000 are capped; a profile of one level caps nobody; an all-public profile is
the plain mean.
"""

from __future__ import annotations

import math

from hdp_app.views import saturation as sat
from hdp_app.views import saturation_page as P
from hdp_app.views import tour as teach
from hdp_core.adpm import adpm_trace
from hdp_core.profile import EpsilonProfile

TWO = EpsilonProfile.from_tiers([0.1, 100.0], [900, 100])


def _texts(prof: EpsilonProfile) -> tuple[str, str]:
    return P.curve_text(sat.r_curve(prof), sat.free_privacy(prof)), P.curve_notes(
        sat.r_curve(prof), sat.free_privacy(prof)
    )


def test_curve_text_names_the_saturation_index_of_the_two_group_remark():
    text, notes = _texts(TWO)
    assert "Users 1 to 900 " in text and "from user 901 on" in text
    assert "tau\\* = " in text
    assert notes == "Each tier is drawn as a flat segment over its users."


def test_curve_text_when_nobody_is_capped_or_everyone_is_public():
    text, notes = _texts(EpsilonProfile.from_values([1.0] * 10))
    assert text.startswith("Nobody is capped") and notes == ""
    text, notes = _texts(EpsilonProfile.from_values([math.inf] * 5 + [0.0]))
    assert text.startswith("Every usable user is public")
    assert "Public users (eps = ∞)" in notes and "1 users with eps = 0 are not drawn" in notes


def test_capped_text_and_table_caption():
    fp = sat.free_privacy(TWO)
    assert P.capped_text(fp).startswith("**100 users** (10%) are capped")
    assert P.capped_text(sat.free_privacy([1.0, 1.0])) == ""
    assert P.table_caption("tier").startswith("One row per tier.")
    assert P.table_caption("bin").startswith("Levels grouped into bins")


def test_phase_controls_start_on_the_grid_with_f_rounded():
    base = teach.phase_state(EpsilonProfile.from_tiers([0.1, 2.0], [333, 667]))
    grid = teach.log_grid(base.slider_min, base.slider_max, 0.05, (0.1, 2.0))
    n, f, e1, e2 = P.phase_controls(base, grid)
    assert (n, f, e1, e2) == (1000, 0.33, 0.1, 2.0)
    pub = teach.phase_state(EpsilonProfile.from_tiers([0.1, math.inf], [10, 990]))
    assert P.phase_controls(pub, grid)[1:] == (0.01, 0.1, math.inf)  # f = 10/1000, public kept


def test_trace_columns_show_public_levels_and_weights_beside_the_grant():
    trace = adpm_trace(EpsilonProfile.from_values([0.5, 1.0, math.inf]))
    cols = P.trace_columns(trace, 3, with_weights=True)
    assert list(cols)[:5] == ["step k", "εₖ asked", "rₖ granted", "weight wₖ now", "saturated"]
    assert cols["εₖ asked"][0] == sat.level_text(math.inf)  # latest step first: the public user
    assert math.isclose(float(sum(cols["weight wₖ now"])), 1.0)
    assert "weight wₖ now" not in P.trace_columns(trace, 2, with_weights=False)


def test_short_texts():
    assert P.excluded_text(0) == "" and P.excluded_text(3).startswith("3 users with eps = 0")
    assert P.trace_excluded(0) == "" and "1 user with eps = 0" in P.trace_excluded(1)
    assert "at most 50 users" in P.trace_too_large(1234) and "1,234" in P.trace_too_large(1234)
    assert "capped" in P.jump_help(4) and P.jump_help(None).startswith("Nobody")
