"""Numbers and sentences for ADPM tuned to a known data spread on the pages (issue 14; no
streamlit, no plotly).

ADPM tuned to s (beyond the paper; :func:`hdp_core.adpm.adpm` with ``data_sd``) is Algorithm 1
with the constant 8 replaced by c = 2/s^2: the optimal unbiased affine estimator when one
user's value has standard deviation s on the [-0.5, 0.5] scale. s = 1/2 is the paper's ADPM.

* Simulation page: :func:`spread_curve` (exact MSE against the true spread for ADPM, tuned ADPM
  and PropDPM: what a wrong guess costs), :func:`dip_note` and :data:`TUNED_EXPLAIN`.
* Saturation page: :func:`tau_vs_spread` and :func:`saturation_spread_sentence`.
* Bounds page: :func:`tuned_sweep_mse` (the tuned method's exact MSE along a sweep).
* Tier designer: :func:`designer_spread_note` and :data:`SOLVER_HELP`.

MSEs are for data in [-0.5, 0.5]; spreads are standard deviations on that scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_app.views import limits
from hdp_app.views.formatting import plain
from hdp_core.adpm import WORST_CASE_SD, adpm, data_sd_constant, saturation_level
from hdp_core.estimators import get_method
from hdp_core.profile import EpsilonProfile, as_profile

__all__ = [
    "CURVE_METHODS",
    "SOLVER_HELP",
    "TUNED",
    "TUNED_EXPLAIN",
    "SpreadCurve",
    "designer_spread_note",
    "dip_note",
    "saturation_spread_sentence",
    "spread_curve",
    "spread_grid",
    "tau_vs_spread",
    "tuned_label",
    "tuned_sweep_mse",
]

TUNED = "ADPM-tuned"
"""The registry name of ADPM tuned to a known spread."""

CURVE_METHODS = ("ADPM", TUNED, "PropDPM")
"""Methods on the 'spread guessed wrong' chart."""

SPREAD_MIN = limits.SPREAD_MIN
"""Smallest spread the charts start from (sd on [-0.5, 0.5]); views.limits.SPREAD."""


def tuned_label(data_sd: float) -> str:
    """'ADPM tuned to s = 0.2': the tuned method's name on tables and charts."""
    return f"ADPM tuned to s = {data_sd:.3g}"


def spread_grid(
    points: int = 41, include: Sequence[float] = (), lo: float = SPREAD_MIN
) -> np.ndarray:
    """Spreads from ``lo`` to 1/2 (log-spaced, ``points`` values) plus those of ``include``
    within the range, sorted and unique."""
    if not 0 < lo < WORST_CASE_SD or points < 2:
        raise ValueError(f"need 0 < lo < 1/2 and at least 2 points, got lo = {lo}, {points}")
    g = np.geomspace(lo, WORST_CASE_SD, int(points))
    extra = [float(x) for x in include if lo <= float(x) <= WORST_CASE_SD]
    return np.unique(np.concatenate([g, extra]))


# simulation page --------------------------------------------------------------------------
@dataclass(frozen=True)
class SpreadCurve:
    """Exact MSE of each method in CURVE_METHODS (``mse[m]``) when the data's true standard
    deviation is ``true_sd`` (one value per point) and its mean is ``mean``; the tuned method
    is tuned to ``tuned_sd`` whatever the truth."""

    true_sd: np.ndarray
    tuned_sd: float
    mean: float
    mse: dict[str, np.ndarray]


def spread_curve(eps: Any, tuned_sd: float, true_sd: Any = None, mean: float = 0.0) -> SpreadCurve:
    """What guessing the spread wrong costs: for true spreads ``true_sd`` (default
    :func:`spread_grid` with ``tuned_sd``), the exact MSE V ||w||_2^2 + 2 eta^2 (V = sd^2) of
    ADPM, ADPM tuned to ``tuned_sd`` and PropDPM; mean^2 where a method answers 0 (the
    appendix's MSE of an affine estimator; data of mean ``mean`` on [-0.5, 0.5])."""
    s = data_sd_constant(tuned_sd)[0]
    prof = as_profile(eps)
    sd = spread_grid(include=[s]) if true_sd is None else np.asarray(true_sd, dtype=np.float64)
    if sd.ndim != 1 or sd.size == 0 or not np.all((sd >= 0) & (sd <= WORST_CASE_SD)):
        raise ValueError("true_sd must be standard deviations in [0, 1/2]")
    if not (math.isfinite(mean) and abs(mean) <= 0.5):
        raise ValueError(f"the mean must lie in [-0.5, 0.5], got {mean}")
    out = {}
    for m in CURVE_METHODS:
        est = get_method(m, prof, s)
        if est.outputs_zero:
            out[m] = np.full(sd.size, float(mean) ** 2)
        else:
            out[m] = sd**2 * est.sum_sq_weights() + 2.0 * float(est.noise_scale or 0.0) ** 2
    return SpreadCurve(sd, s, float(mean), out)


TUNED_EXPLAIN = """
**Why another weighting can dip below ADPM, and ADPM tuned to the spread.** ADPM's weights are
the best for the *worst* data, spread as far as the range allows (standard deviation 1/2 on
[−0.5, 0.5]). When the data's spread s is known and smaller, the same argument with the
constant 8 of Algorithm 1 replaced by 2/s² gives the best affine estimator for that spread:
**ADPM tuned to s** (beyond the paper). It trusts the loose users more (it saturates later),
and as s → 0 its weights tend to PropDPM's. Every user still gets at most the eps they asked
for, whatever the data. Guess s too small and real data that spread out cost more: the chart
of MSE against the true spread shows how much.
"""


def dip_note(exact: Mapping[str, float], tuned_sd: float | None = None) -> str | None:
    """A sentence when some method's exact MSE is below ADPM's (``exact``: method -> exact MSE;
    the tuned method under "ADPM-tuned"), None otherwise. With the tuned method it says
    whether tuning to ``tuned_sd`` beats them all."""
    ref = exact.get("ADPM")
    if ref is None:
        return None
    better = [m for m, v in exact.items() if m not in ("ADPM", TUNED) and v < ref * (1 - 1e-9)]
    if not better:
        return None
    who = ", ".join(better)
    text = (
        f"With this data, {who} {'has' if len(better) == 1 else 'have'} a lower exact MSE "
        "than ADPM. ADPM minimises the worst-case "
        "error over every data distribution on the range; for a particular, gentler "
        "distribution another weighting can do better."
    )
    t = exact.get(TUNED)
    if t is None or tuned_sd is None:
        return (
            text + " Switch on ADPM tuned to the data's spread to see the best weighting "
            "for this spread."
        )
    best_other = min(exact[m] for m in better)
    if t <= best_other * (1 + 1e-9):
        return text + (
            f" {tuned_label(tuned_sd)} (the best affine estimator for that spread) beats them "
            f"all: exact MSE {t:.3e}, against {best_other:.3e} for {who.split(', ')[0]}"
            f"{'' if len(better) == 1 else ' and the others'} and {ref:.3e} for ADPM."
        )
    return text + (
        f" {tuned_label(tuned_sd)} has exact MSE {t:.3e}: it is tuned to a spread other than "
        "this distribution's, so it need not be the best here."
    )


# saturation page ---------------------------------------------------------------------------
def tau_vs_spread(eps: Any, spreads: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """(spreads, tau*): the saturation level of ADPM tuned to each spread (default
    :func:`spread_grid`); inf where nothing saturates. tau* grows as the spread shrinks
    (Algorithm 1's constant 2/s^2 grows), and s = 1/2 is the paper's tau*."""
    s = spread_grid() if spreads is None else np.asarray(spreads, dtype=np.float64)
    prof = as_profile(eps)
    return s, np.array([saturation_level(prof, float(x)) for x in s])


def saturation_spread_sentence(eps: Any, spread: float) -> str:
    """One sentence comparing tau* in the worst case with tau* for a spread ``spread``."""
    s = data_sd_constant(spread)[0]
    prof = as_profile(eps)
    worst, tuned = saturation_level(prof), saturation_level(prof, s)

    def f(x: float) -> str:
        return "none (no one is capped)" if math.isinf(x) else f"{x:.4g}"

    return (
        "Saturation is a worst-case effect: the smaller the data's spread, the later it sets "
        f"in. Tuned to worst-case data (s = 0.5) tau* = {f(worst)}; tuned to s = {s:.3g} it is "
        f"tau* = {f(tuned)}."
    )


# bounds page --------------------------------------------------------------------------------
def tuned_sweep_mse(eps: Any, mode: str, x: Any, data_sd: float) -> np.ndarray:
    """Exact MSE of ADPM tuned to ``data_sd`` when the data's standard deviation is
    ``data_sd``, at each point of a Bounds-page sweep: ``mode`` 'scale' (every eps times x,
    as :func:`hdp_core.sweeps.scale_sweep`) or 'n' (x users, as
    :func:`hdp_core.sweeps.n_sweep`). min(s^2 ||w||^2 + 2 eta^2, 1/4): 1/4 bounds the MSE
    mu^2 of answering 0 (for data of that spread, at most the tuned MSE's cap)."""
    prof = as_profile(eps)
    pts = np.asarray(x, dtype=np.float64)
    if mode == "scale":
        lv, ct = prof.grouped()
        base = EpsilonProfile.from_tiers(lv, ct)
        profs = [base.scaled(float(c)) for c in pts]
    elif mode == "n":
        profs = [prof.with_n(int(n)) for n in pts]
    else:
        raise ValueError(f"mode must be 'scale' or 'n', got {mode!r}")
    return np.array([adpm(p, data_sd=data_sd).tuned_mse for p in profs])


# tier designer ------------------------------------------------------------------------------
SOLVER_HELP = (
    "Answers for the RMSE are exact: a search on the exact error formulas, which never rise "
    "as users are added or levels loosened (for worst-case data, and for ADPM tuned to a "
    "standard deviation you gave). The 95% half-width is not what ADPM minimises: its answers "
    "come from the same search, checked by a scan just below each answer; they meet the target "
    "and the next smaller value does not. With few users and worst-case data the half-width is "
    "computed exactly and can rise when a user is added, so a smaller answer further down may "
    "also meet the target there. Either way you get a clear answer when the target cannot be "
    "met."
)


def designer_spread_note(menu: Any) -> str | None:
    """For a menu (hdp_core.design.Menu) with a known data sd: which estimator the numbers are
    for (ADPM tuned to s = sd / (hi - lo)); None in the worst case."""
    if getattr(menu, "data_sd", None) is None:
        return None
    from hdp_core.design import tuned_sd

    s = tuned_sd(menu)
    assert s is not None
    unit = f" {plain(menu.unit)}" if menu.unit else ""
    c = data_sd_constant(s)[1]
    return (
        f"With a standard deviation of {menu.data_sd:.4g}{unit} (s = {s:.3g} of the range), "
        f"every number here is for ADPM tuned to it (Algorithm 1 with 8 replaced by 2/s² = "
        f"{c:.6g}), the most accurate unbiased affine estimator for data that spread out. "
        "Users still get at most the privacy their tier promises, whatever the data; if the "
        "data are more spread out than you said, the real error is larger than shown."
    )
