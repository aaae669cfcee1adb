"""The Bounds page's numbers (no plotting, no streamlit).

* :func:`sweep_points` and :func:`regime_guides`: the x values of a sweep around a profile and
  the two asymptotic regimes of the worst-case MSE along it.
* :func:`affine_error_real` and :func:`method_errors_real`: RMSE and a 95% error half-width in
  the data's own units, built on :mod:`hdp_core.units`.

MSEs are for data in [-0.5, 0.5] unless a data range [lo, hi] is given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hdp_app.views.cards import Metric
from hdp_app.views.fields import NumberField
from hdp_app.views.formatting import sci
from hdp_app.views.limits import SPREAD, SPREAD_START, Limit
from hdp_core.adpm import adpm
from hdp_core.bounds import lower_bound_from_H, lower_bound_H
from hdp_core.estimators import METHODS, get_method
from hdp_core.intervals import population_half_width
from hdp_core.profile import MAX_TOTAL_USERS, as_profile
from hdp_core.units import Accuracy, affine_error, range_width
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN

__all__ = [
    "SWEEP_EXPONENTS",
    "SWEEP_STEP",
    "UNITS_COLUMNS",
    "affine_error_real",
    "method_errors_real",
    "regime_guides",
    "sweep_index",
    "sweep_points",
    "units_table",
]


# ------------------------------------------------------------------------------ sweeps
SWEEP_STEP = 0.2
"""Step of the Bounds page's sweeps in log10 units: 31 points over six decades (a factor 1.58
between points). Each point evaluates six methods exactly; for 10^5 distinct levels that is
about 0.1 s a point, so a finer grid would make the first visit of the page much slower."""
SWEEP_EXPONENTS = np.round(np.arange(-15, 16) * SWEEP_STEP, 10)
"""log10 of the sweep factors: -3.0, -2.8, ..., 3.0 (0 is the current profile)."""


def sweep_points(eps: Any, mode: str, exponents: Any = SWEEP_EXPONENTS) -> np.ndarray:
    """x values of a sweep around a profile: scale factors c = 10**e ('scale'), or numbers of
    users round(n * 10**e) clipped to [1, MAX_TOTAL_USERS] ('n'); e = 0 is the profile itself."""
    e = np.asarray(exponents, dtype=np.float64)
    if mode == "scale":
        # only factors that keep every level in the supported range [LEVEL_MIN, LEVEL_MAX]
        lv = as_profile(eps).levels
        fin = lv[np.isfinite(lv) & (lv > 0)]
        c = 10.0**e
        if fin.size:
            c = c[(c * fin.min() >= LEVEL_MIN) & (c * fin.max() <= LEVEL_MAX) | (e == 0)]
        return c
    if mode == "n":
        n = as_profile(eps).n
        return np.clip(np.rint(n * 10.0**e), 1, MAX_TOTAL_USERS).astype(np.int64)
    raise ValueError(f"mode must be 'scale' or 'n', got {mode!r}")


def sweep_index(x: Any, exponent: float, mode: str) -> int:
    """The point of a sweep (x values from :func:`sweep_points`) that the slider at
    ``exponent`` (log10 of the factor) marks. 'scale': the factor nearest 10**exponent on a log
    scale (sweep_points drops the factors that would push a level out of range, so positions
    in SWEEP_EXPONENTS need not be positions in x); 'n': the same position as ``exponent``
    in SWEEP_EXPONENTS (every point is kept), within the sweep."""
    xs = np.asarray(x, dtype=np.float64)
    if xs.size == 0:
        raise ValueError("the sweep has no points")
    if mode == "scale":
        return int(np.argmin(np.abs(np.log10(xs) - float(exponent))))
    if mode == "n":
        k = round((float(exponent) - float(SWEEP_EXPONENTS[0])) / SWEEP_STEP)
        return int(min(max(k, 0), xs.size - 1))
    raise ValueError(f"mode must be 'scale' or 'n', got {mode!r}")


def regime_guides(eps: Any, x: Any, mode: str) -> dict[str, np.ndarray]:
    """Reference lines for a sweep (MSE units, data in [-0.5, 0.5]).

    ``mode`` 'scale' (x = factor c multiplying every eps) or 'n' (x = number of users, same
    shares of each level). 'loose': 1/(4m) with m the users whose data is used, the error of
    the non-private mean (reached when privacy is loose); 'strict': 2/S1^2 with S1 the sum of
    the finite levels, the Laplace-noise term of f that dominates when privacy is strict
    (for n users at eps these are the two terms of f = 1/(4n) + 2/(n eps)^2). 'strict' is NaN
    when there are public users (the error then stays near 1/(4 n_public) instead).
    """
    prof = as_profile(eps)
    x = np.asarray(x, dtype=np.float64)
    lv, ct = prof.grouped()
    cf = ct.astype(np.float64)
    n = float(cf.sum())
    usable = float(cf[lv > 0].sum())
    fin = np.isfinite(lv) & (lv > 0)
    s1 = float(np.dot(cf[fin], lv[fin]))
    public = bool(np.isinf(lv).any())
    if mode == "scale":
        m = np.full(x.shape, usable)
        s = x * s1
    elif mode == "n":
        m = x * usable / n
        s = x * s1 / n
    else:
        raise ValueError(f"mode must be 'scale' or 'n', got {mode!r}")
    with np.errstate(divide="ignore"):
        loose = np.where(m > 0, 0.25 / np.maximum(m, 1e-300), np.nan)
        strict = np.where((s > 0) & (not public), 2.0 / np.maximum(s, 1e-300) ** 2, np.nan)
    return {"loose": loose, "strict": strict}


# ------------------------------------------------------------------------------ real units
def affine_error_real(
    weights: Any,
    noise_scale: float,
    lo: float,
    hi: float,
    counts: Any = None,
    variance: float = 0.25,
    level: float = 0.95,
    outputs_zero: bool = False,
) -> Accuracy:
    """RMSE and ``level`` error half-width, in data units, of sum_i w_i x_i + Laplace(b).

    ``weights[j]`` is the weight of one user of entry j (``counts[j]`` users, default 1) and
    ``noise_scale`` is b, both for data mapped to [-0.5, 0.5]; ``variance`` is the data
    variance V there (1/4, the worst case, by default). The error is N(0, V ||w||_2^2) (the
    data part, normal by the central limit theorem) plus Laplace(b): MSE V ||w||_2^2 + 2 b^2
    (the appendix's Laplace-mechanism lemma; for ADPM with V = 1/4 this is f(r), Theorem 2),
    and the half-width is the exact normal-Laplace quantile (units.error_half_width). Both
    scale by R = hi - lo. When the estimator outputs the constant 0 (mid-range, e.g. ADPM when
    f(r) > 1/4) the error is the distance from the mean to mid-range: at most R/2, which is
    reported for both numbers (the worst case).
    """
    w = np.asarray(weights, dtype=np.float64)
    c = np.ones(w.size) if counts is None else np.asarray(counts, dtype=np.float64)
    return affine_error(float(np.dot(c, w * w)), noise_scale, lo, hi, variance, level, outputs_zero)


def method_errors_real(
    eps: Any, lo: float, hi: float, level: float = 0.95, methods: Any = METHODS
) -> dict[str, Accuracy]:
    """Worst-case error of each method in data units for data in [lo, hi].

    Affine methods (ADPM, PropDPM, UNI, FME) get :func:`affine_error_real` with V = 1/4, and
    (issue 31: one meaning for "95% error") their ``half_width`` is the PROVEN one,
    hdp_core.intervals.population_half_width times R (kind "proven", the Tier designer's and
    the Release page's figure, weights summing to 1), the normal approximation kept as
    ``half_width_own``; LDPE and SM get their worst-case RMSE (sqrt(worst_case_mse) R) and a
    NaN half-width (their error is not one normal plus one Laplace).
    """
    prof = as_profile(eps)
    width = range_width(lo, hi)
    out: dict[str, Accuracy] = {}
    for m in methods:
        est = get_method(m, prof)
        if est.affine and est.weights is not None and est.noise_scale is not None:
            acc = affine_error_real(
                est.weights,
                est.noise_scale,
                lo,
                hi,
                prof.counts,
                0.25,
                level,
                bool(getattr(est, "outputs_zero", False)),
            )
            w = np.asarray(est.weights, dtype=np.float64)
            if not acc.outputs_zero and abs(float(np.dot(prof.counts, w)) - 1.0) <= 1e-9:
                proven = population_half_width(w, prof.counts, est.noise_scale, level=level)
                acc = replace(
                    acc,
                    half_width=proven * width,
                    half_width_kind="proven",
                    half_width_own=acc.half_width,
                )
            out[m] = acc
        else:
            mse = est.worst_case_mse
            out[m] = Accuracy(mse, math.sqrt(mse) * width, math.nan, math.nan, math.nan, level)
    return out


# the page's numbers as shown, cards and sentences (issue 20: moved out of pages/bounds.py) -
def bound_text(x: float) -> str:
    """An MSE or a ratio on the Bounds page: '∞', 3 significant digits between 1e-3 and 1e4
    (and 0), else scientific with 3 digits."""
    if math.isinf(x):
        return "∞"
    return f"{x:.3g}" if 1e-3 <= abs(x) < 1e4 or x == 0 else f"{x:.2e}"


def units_text(x: float, unit: str = "") -> str:
    """A number in the data's units: whole numbers with separators from 100 up to 10^12,
    scientific notation beyond (a 300-digit number would not fit a metric), followed by
    ``unit`` when one is given; '—' if not finite."""
    if not math.isfinite(x):
        return "—"
    if abs(x) >= 1e12:
        text = sci(x, 4)
    else:
        text = f"{round(x):,}" if abs(x) >= 100 else f"{x:.4g}"
    return f"{text} {unit}" if unit else text


def headline_metrics(b: dict[str, float]) -> list[Metric]:
    """The four cards: ADPM's worst-case MSE f ∧ 1/4 (Theorem 2), the lower bound
    (H ∧ 1/4)/512 (Theorem 3), their ratio, and f / H (Theorem 4: at most 443). ``b`` holds
    'upper', 'lower', 'f' and 'H'."""
    ratio = b["upper"] / b["lower"] if b["lower"] > 0 else math.inf
    fh = b["f"] / b["H"] if 0 < b["H"] < math.inf else math.inf
    return [
        Metric(
            "ADPM worst-case MSE f ∧ 1/4",
            bound_text(b["upper"]),
            "Upper bound (Theorem 2): ADPM's MSE for the worst data in [-0.5, 0.5]. The best "
            "possible method can do no worse than this.",
        ),
        Metric(
            "Lower bound (H ∧ 1/4)/512",
            bound_text(b["lower"]),
            "Theorem 3: no method that grants every user their eps can have a smaller "
            "worst-case MSE than this.",
        ),
        Metric(
            "Gap: upper / lower",
            bound_text(ratio),
            "How far apart the two bounds are. Theorem 4 guarantees at most 443 × 512 = "
            "226,816; most of it is the loose constant 1/512 of the lower bound.",
        ),
        Metric(
            "f / H",
            bound_text(fh) if math.isfinite(b["f"]) else "—",
            "ADPM's uncapped worst case over H(eps). Theorem 4 proves f/H ≤ 443; the paper's "
            "experiments suggest it is at most 4.",
        ),
    ]


def marker_place(x: float, mode: str) -> str:
    """Where the sweep's marker is: 'c = 2' (every eps scaled by c) or 'n = 1,000 users'."""
    return f"c = {x:.3g} (every eps × {x:.3g})" if mode == "scale" else f"n = {int(x):,} users"


def marker_metrics(where: str, upper: float, lower: float, tau: float) -> list[Metric]:
    """The cards at the sweep's marker: where, ADPM's worst case, the lower bound, tau*."""
    return [
        Metric("At the marker", where.split(" (")[0], "The slider's position on the sweep."),
        Metric("ADPM worst case", bound_text(upper)),
        Metric("Lower bound", bound_text(lower)),
        Metric(
            "tau* there",
            bound_text(tau) if math.isfinite(tau) else "none",
            "The saturation level at this point (users asking for more are capped).",
        ),
    ]


def units_metrics(rmse: str, half_width: str, noise_scale: str) -> list[Metric]:
    """The cards of 'Error in your data's units' for ADPM, values already in the data's units
    (units_text): worst-case RMSE, 95% half-width and the Laplace noise scale."""
    return [
        Metric(
            "ADPM worst-case RMSE",
            rmse,
            "Root-mean-squared error of one ADPM release, in your units, for the worst data "
            "distribution on the range (half the values at each end).",
        ),
        Metric(
            "ADPM 95% error: ±",
            half_width,
            "Proven: in at least 95% of releases one release is within this distance of the "
            "population mean, for any data in the range and any number of users (the same "
            "figure as the Tier designer and the Release page).",
        ),
        Metric(
            "of which Laplace noise scale",
            noise_scale,
            "The scale of ADPM's Laplace noise in your units (its sd is √2 times this).",
        ),
    ]


UNITS_COLUMNS = (
    "method",
    "worst-case RMSE",
    "95% error ±",
    "about ± (normal approximation)",
    "data part sd",
    "Laplace noise scale",
)
"""The columns of the Bounds page's table of errors in the data's units."""


def _normal(a: Accuracy) -> float:
    """The normal approximation's half-width of ``a`` (its own name on the page)."""
    return a.half_width_own if a.half_width_kind == "proven" else a.half_width


def units_table(errs: Mapping[str, Accuracy], unit: str = "") -> dict[str, list[str]]:
    """The table of errors in the data's units, one row per method of ``errs``
    (:func:`method_errors_real`) in its order, every number as shown (:func:`units_text`):
    worst-case RMSE, the proven 95% error half-width, the normal approximation's (named as
    such), the sd of the data part and the Laplace noise scale ('—' where a method has none).
    Columns UNITS_COLUMNS; at most one row per method of the registry, so the page shows it
    whole (a static table); every number followed by ``unit`` when one is given."""
    rows = list(errs.items())
    return {
        UNITS_COLUMNS[0]: [m for m, _ in rows],
        UNITS_COLUMNS[1]: [units_text(a.rmse, unit) for _, a in rows],
        UNITS_COLUMNS[2]: [units_text(a.half_width, unit) for _, a in rows],
        UNITS_COLUMNS[3]: [units_text(_normal(a), unit) for _, a in rows],
        UNITS_COLUMNS[4]: [units_text(a.data_sd, unit) for _, a in rows],
        UNITS_COLUMNS[5]: [units_text(a.noise_scale, unit) for _, a in rows],
    }


def marker_sentence(f: float, upper: float, mse_at: dict[str, float]) -> str:
    """The best baseline at the marker (smallest MSE in ``mse_at``) against ADPM's worst case
    ``upper``; when f >= 1/4 ADPM answers the middle of the range, and that is the yardstick."""
    best = min(mse_at, key=lambda m: mse_at[m])
    best_mse = float(mse_at[best])
    if f >= 0.25:
        return (
            "At the marker privacy is so strict that ADPM answers the middle of the range "
            "(worst case 1/4, no data used). "
            + (
                f"The best baseline, {best}, has {bound_text(best_mse)}: worse than not using "
                "the data at all."
                if best_mse > 0.25
                else f"The best baseline, {best}, has {bound_text(best_mse)}."
            )
        )
    return (
        f"At the marker the best baseline is {best} with {bound_text(best_mse)}, "
        f"{best_mse / upper:.3g}× ADPM's worst case."
    )


# the page model (issue 27: moved out of pages/bounds.py) ------------------------------------
BASELINES = tuple(m for m in METHODS if m != "ADPM")
"""The five baselines drawn beside ADPM, in the registry's order."""


@dataclass(frozen=True)
class Summary:
    """The Bounds page's numbers for one profile: ADPM's worst-case MSE f ∧ 1/4 (``upper``,
    Theorem 2), its uncapped objective ``f``, H(eps) (``H``), the lower bound (H ∧ 1/4)/512
    (``lower``, Theorem 3) and each baseline's worst-case MSE (``worst``); data in
    [-0.5, 0.5]."""

    upper: float
    f: float
    H: float
    lower: float
    worst: dict[str, float]

    @property
    def capped_H(self) -> float:
        """H ∧ 1/4: the glance chart's lower-bound bar before the 1/512."""
        return min(self.H, 0.25)

    @property
    def scatter_point(self) -> tuple[float, float] | None:
        """(ln f, ln H) of the profile for the optimality scatter, or None when either is not
        positive (f also finite)."""
        if self.f > 0 and math.isfinite(self.f) and self.H > 0:
            return math.log(self.f), math.log(self.H)
        return None

    @property
    def fh_text(self) -> str:
        """f / H as shown beside the scatter ('—' when the profile has no point there)."""
        return bound_text(self.f / self.H) if self.scatter_point else "—"

    def as_dict(self) -> dict[str, float]:
        """'upper', 'lower', 'f' and 'H' (what :func:`headline_metrics` reads)."""
        return {"upper": self.upper, "lower": self.lower, "f": self.f, "H": self.H}


def summary(eps: Any) -> Summary:
    """The Bounds page's :class:`Summary` of a profile (Theorems 2 to 4), from hdp_core."""
    prof = as_profile(eps)
    sol = adpm(prof)
    h = float(lower_bound_H(prof))
    return Summary(
        upper=float(sol.worst_case_mse),
        f=float(sol.objective),
        H=h,
        lower=float(lower_bound_from_H(h)),
        worst={m: float(get_method(m, prof).worst_case_mse) for m in BASELINES},
    )


def data_range_of(eps: Any) -> tuple[float, float] | None:
    """(lowest, highest) uploaded value of a profile with data, or None when it has no data
    or all its values are equal (no range to offer)."""
    data = as_profile(eps).data
    if data is None or not data.size:
        return None
    lo, hi = float(data.min()), float(data.max())
    return (lo, hi) if hi > lo else None


MODES = {"Scale every eps": "scale", "Number of users": "n"}
"""The sweep's modes: the radio's label (also bnd_mode's value in a link) and the kind."""

SLIDERS = {
    "scale": (
        "Scale factor c (log10)",
        "Every eps is multiplied by c = 10^x. Left: stricter privacy (smaller eps); right: "
        "looser. 10^0 is the current profile.",
        "scale factor c on every eps (log scale; 1 = current profile)",
    ),
    "n": (
        "Number of users (log10 of the factor on n)",
        "n is multiplied by 10^x, keeping each level's share of users. 10^0 is the current "
        "profile.",
        "number of users n (log scale)",
    ),
}
"""Per sweep mode: the slider's label, its help and the chart's x-axis title."""

SWEEP_LIMIT = (float(SWEEP_EXPONENTS[0]), float(SWEEP_EXPONENTS[-1]))
"""The sweep slider's range in log10 units (the ends of SWEEP_EXPONENTS)."""

INTRO = (
    "Is ADPM's error the best any method could achieve? The paper brackets the best possible "
    "worst-case error between ADPM's own worst case (an upper bound) and a lower bound that "
    "holds for every method granting each user their eps (smaller eps = more privacy)."
)
ALL_EXCLUDED = (
    "Every user has eps = 0: no data may be used, so every method outputs a constant and the "
    "worst-case MSE is 1/4. Change the profile on the Profile page."
)
HEADLINE_TEXT = (
    "The best possible worst-case error lies between the two bounds. Their constants are "
    "loose: the 1/512 comes from the lower-bound argument (Le Cam's method) and the paper did "
    "not try to sharpen it. What the paper proves is **f/H ≤ 443** for every profile "
    "(Theorem 4), so ADPM is within a constant factor of the best possible method, whatever "
    "the privacy levels and n; its experiments suggest the 443 can be **4**."
)
GLANCE_CAPTION = (
    "Worst-case MSE for data in [-0.5, 0.5] (log scale; shorter is better). No method can go "
    "below the lower bound; ADPM is the best affine method."
)
SWEEP_CAPTION = (
    "Left of the bend privacy is strict and noise dominates: the error falls like "
    "1/(n eps)². Right of it privacy is loose and the error levels off near 1/(4n), the "
    "error without privacy. The shaded band is where the best possible error lies. "
)
SCATTER_CAPTION = (
    "The paper's experiment: random sequences in which no user saturates (each eps drawn "
    "between the previous one and the cap tau). Every point above the dashed line (c = 443) "
    "is Theorem 4; the points also stay above the dotted line, which is why the paper "
    "suggests the constant can be 4. The star is the current profile (Theorem 4 holds with "
    "or without saturation)."
)
UNITS_CAPTION = (
    "LDPE and SM are not one weighted mean plus one Laplace noise, so only their RMSE is "
    "shown. The 95% errors are proven for any data in the range (the Tier designer's and the "
    "Release page's figure); the normal approximation, narrower and not proven with few "
    "users, is shown under its own name."
)
HELP = {
    "mode": "Scale: multiply every user's eps by the same factor (smaller = more privacy for "
    "everyone). Users: change n, keeping the share of users at each level.",
    "baselines": "Draw the five baselines' worst-case MSE on the same axes.",
    "guides": "Dotted guides: ≈ 1/(4n) when privacy is loose and ≈ 2/(n·mean eps)² when it "
    "is strict.",
    "tuned": "Beyond the paper: with the data's standard deviation s known, ADPM tuned to it "
    "(Algorithm 1 with 8 replaced by 2/s²) has a smaller exact MSE than the worst-case "
    "curves.",
    "data_range": "Set the range from the values in the uploaded file. Strictly, the range "
    "should be fixed before seeing the data.",
    "max_ratio": "Over 500 random unsaturated sequences (n from 1 to 200).",
}
"""The Bounds page's help texts, by control."""


def tuned_caption(tuned_sd: float, tuned_at: float, upper_at: float) -> str:
    """The caption under the sweep with ADPM tuned to a known spread s (its exact MSE at the
    marker against ADPM's worst case there)."""
    return (
        f"Sky blue: ADPM tuned to s = {tuned_sd:.3g}, its exact MSE when the data's standard "
        f"deviation is s ({tuned_at:.3e} at the marker, against ADPM's worst case "
        f"{upper_at:.3e}). It is not a bound: data more spread out than s cost it more."
    )


def data_range_label(lo: float, hi: float) -> str:
    """The label of the button that takes the data range from the uploaded values."""
    return f"Use the uploaded data's range ({lo:.4g} to {hi:.4g})"


def scatter_above_text(n_above: int, total: int) -> str:
    """'12 of 500': the scatter's sequences with f/H > 4."""
    return f"{n_above} of {total}"


LO = NumberField(
    "Data range: lowest possible value",
    "bnd_lo",
    default=0.0,
    limit=Limit(),
    step=1000.0,
    help="The smallest value a user's data can take (e.g. 0 for a salary). The range must be "
    "known in advance: it sets the privacy noise.",
)
HI = NumberField(
    "highest possible value",
    "bnd_hi",
    default=100_000.0,
    limit=Limit(),
    step=1000.0,
    help="The largest value a user's data can take.",
)
SPREAD_FIELD = NumberField(
    "Standard deviation s (on [−0.5, 0.5])",
    "bnd_spread",
    default=SPREAD_START,
    limit=SPREAD,
    step=0.01,
    format="%.3f",
)
"""The Bounds page's number inputs (the data range's ends and the assumed spread)."""


@dataclass(frozen=True)
class UnitsStart:
    """Where 'Error in your data's units' starts: the range ``lo`` to ``hi`` and the ``unit``
    of the Tier designer's menu (``source`` says which), so one menu's '95% error' reads the
    same on every page."""

    lo: float
    hi: float
    unit: str
    source: str


def units_start(menu: Any) -> UnitsStart:
    """The range and unit the section starts from: those of ``menu`` (the Tier designer's
    current hdp_core.menu.Menu, or None before the Tier designer was opened, when its default
    menu's: 0 to 500 USD)."""
    from hdp_core.menu import Menu, default_menu

    own = isinstance(menu, Menu)
    m = menu if own else default_menu()
    where = "your Tier designer menu" if own else "the Tier designer's default menu"
    return UnitsStart(float(m.low), float(m.high), str(m.unit), where)


def units_fields(start: UnitsStart) -> tuple[NumberField, NumberField]:
    """The range's two inputs (LO, HI) starting at ``start``'s range."""
    return replace(LO, default=start.lo), replace(HI, default=start.hi)


def units_source_caption(start: UnitsStart, lo: float, hi: float) -> str:
    """Where the range and unit come from, and what to do to change them."""
    unit = f" {start.unit}" if start.unit else ""
    if (lo, hi) == (start.lo, start.hi):
        return (
            f"Range {lo:,.4g} to {hi:,.4g}{unit}, from {start.source} (change it there, or "
            "type another range here)."
        )
    return f"Range typed here; the unit{unit and ' (' + start.unit + ')'} is from {start.source}."
