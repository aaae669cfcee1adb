"""AppTest of the Simulation page's tuned-ADPM switch (issue 14): the switch adds a row for
ADPM tuned to the distribution's own spread (or a spread the user enters), whose exact MSE
agrees with hdp_core's exact_mse; the dip note shows it beating PropDPM and ADPM on a profile
where PropDPM dips below ADPM with Beta(2, 3) data; the 'spread guessed wrong' chart appears.
"""

from __future__ import annotations

import math

import pytest
from helpers import whole_frame

import hdp_core as hdp
from hdp_app.common import PROFILE, PROFILE_LABEL, PROFILE_SPEC
from hdp_app.figures.style import METHOD_COLORS
from hdp_app.views.simulation import MIN_TRIALS
from hdp_core.distributions import Beta

PAGE = "pages/simulation.py"
DIP = hdp.EpsilonProfile.from_tiers([0.1, 1.0], [1000, 1000])  # PropDPM < ADPM on Beta(2,3)


def open_sim(at, profile, **params):
    """The page on ``profile`` with the fewest trials it allows (these tests are about the
    tuned row, not the trials)."""
    at.query_params["sim_trials"] = str(MIN_TRIALS)
    for k, v in params.items():
        at.query_params[k] = str(v)
    at.run()
    at.session_state[PROFILE] = profile
    at.session_state[PROFILE_SPEC] = None
    at.session_state[PROFILE_LABEL] = "test profile"
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.number_input(key="sim_trials").value == MIN_TRIALS
    return at


def results(at):
    """The results table, with its parts (hdp_app.widgets.wide_dataframe)."""
    for i, df in enumerate(at.dataframe):
        if "Simulated MSE" in df.value.columns:
            return whole_frame(at, i)
    raise AssertionError("no results table")


def charts(at):
    return [c for c in at.get("plotly_chart")]


def test_switch_adds_the_tuned_row_with_hdp_core_numbers(app):
    at = open_sim(app, DIP)
    before = results(at)
    assert len(before) == 6
    at.toggle(key="sim_tuned").set_value(True).run()
    assert not at.exception, at.exception
    after = results(at)
    assert len(after) == 7
    d = Beta(2.0, 3.0)
    row = after.iloc[-1]
    expect = hdp.exact_mse("ADPM-tuned", DIP, d, data_sd=math.sqrt(d.variance))
    assert row["Exact MSE"] == pytest.approx(expect, rel=1e-12)
    # the six methods keep their simulated numbers (fixed noise streams)
    assert list(after["Simulated MSE"][:6]) == list(before["Simulated MSE"])
    # the dip note names the tuned method and says it beats them all
    caps = " ".join(c.value for c in at.caption)
    assert "With this data, PropDPM" in caps and "lower exact MSE than ADPM" in caps
    assert "ADPM tuned to s = 0.2" in caps and "beats them all" in caps
    # the tuned method beats both, exactly (closed forms, independent of the page)
    assert expect < hdp.exact_mse("PropDPM", DIP, d) < hdp.exact_mse("ADPM", DIP, d)
    # the spread chart is there, with the tuned method in its own colour
    spread = [c for c in charts(at) if "guessed wrong" in c.spec]
    assert spread and METHOD_COLORS["ADPM-tuned"] in spread[0].spec


def test_spread_the_user_enters(app):
    at = open_sim(app, DIP, sim_tuned="true")
    at.checkbox(key="sim_tuned_own").uncheck().run()
    at.number_input(key="sim_tuned_sd").set_value(0.05).run()
    assert not at.exception, at.exception
    row = results(at).iloc[-1]
    expect = hdp.exact_mse("ADPM-tuned", DIP, Beta(2.0, 3.0), data_sd=0.05)
    assert row["Exact MSE"] == pytest.approx(expect, rel=1e-12)
    assert any("the spread you gave" in c.value for c in at.caption)


def test_explanation_shows_the_tuned_method(app):
    at = open_sim(app, DIP)
    text = " ".join(m.value for m in at.markdown)
    assert "ADPM tuned to s" in text and "2/s²" in text
