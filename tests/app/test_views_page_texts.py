"""The texts moved out of the Simulation and Profile pages (issue 20): help beside every
control, the Table 1 cards and captions, the current-profile line. Milliseconds each."""

from __future__ import annotations

import math
import pathlib
import re

import hdp_core as hdp
from hdp_app.views import group_sweep as gs
from hdp_app.views import paper_table as pt
from hdp_app.views import profile_controls as pc
from hdp_app.views import simulation as sv
from hdp_app.views import simulation_controls as sc

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _rows():
    return [
        {"method": "ADPM", "paper_high": -9.3, "sim_high": -9.25, "exact_high": -9.26,
         "paper_low": -7.0, "sim_low": -7.3, "exact_low": -7.31},
        {"method": "UNI", "paper_high": -5.0, "sim_high": -math.inf, "exact_high": -5.1,
         "paper_low": -4.0, "sim_low": -4.1, "exact_low": -7.31},
    ]  # fmt: skip


def test_every_help_key_a_page_uses_exists_and_every_help_is_used():
    for page, name, helps in (
        ("pages/simulation.py", "SIM_HELP", sc.SIM_HELP),
        ("pages/profile.py", "PROFILE_HELP", pc.PROFILE_HELP),
    ):
        text = (ROOT / page).read_text()
        if name == "SIM_HELP":  # the page's results, drawn twice per long run, live there
            text += (ROOT / "hdp_app/simulation_results.py").read_text()
        used = set(re.findall(rf'{name}\["([^"]+)"\]', text))
        views = "".join(  # the views' fields and cards take their help from these dicts too
            (ROOT / "hdp_app/views" / f).read_text()
            for f in (
                ("simulation_controls.py", "group_sweep.py", "paper_table.py")
                if name == "SIM_HELP"
                else ("profile_controls.py",)
            )
        )
        used |= set(re.findall(rf'{name}\["([^"]+)"\]', views))
        assert used and used <= set(helps), used - set(helps)
        assert set(helps) <= used, set(helps) - used  # no help text left unused
        assert all(len(h) > 20 and h.strip() == h for h in helps.values())


def test_paper_cards_are_the_one_gap_and_the_lowest_exact_mse():
    rows = _rows()
    gap, best = pt.paper_metrics(rows)
    assert gap.value == "0.30 ln units"  # |-7.3 - (-7.0)|; the -inf simulated value is left out
    assert best.value == "ADPM / ADPM = UNI"  # equal exact MSE are joined with '='
    assert gap.help and best.help


def test_captions_and_profile_texts():
    assert pt.paper_caption(20_000, 3).startswith("Natural log of the MSE")
    assert "20,000 trials, seed 3" in pt.paper_caption(20_000, 3)
    assert gs.sweep_caption(hdp.Beta(2, 3)).endswith(f"data {hdp.Beta(2, 3).label()}.")
    current, label, note = pt.paper_profile_texts("high")
    assert "high-variance" in current and label.startswith("Make") and note.startswith("Loaded")
    line = sv.current_profile_caption("*bold* [x](y)", 1234, 5)
    assert "1,234 users" in line and "5 public" in line
    assert "*bold*" not in line  # user text is shown as plain text, never as markdown
