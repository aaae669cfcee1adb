"""The explanations every page shows, written once, with the numbers they quote.

Pages import their sentences from here so that no two pages explain the same fact differently.
Every number a sentence quotes is computed by the same functions as the charts (ADPM,
presets.two_groups) and tested against independent calculations (tests/test_views_explain.py).

The saturation trade-off (Theorem 2, Lemma 3 of the paper): ADPM's worst-case MSE is
f(r) = (||r||_2^2 + 8) / (4 ||r||_1^2) = sampling term + noise term, with
sampling term ||r||_2^2 / (4 ||r||_1^2) (the data's spread under unequal weights) and
noise term 2 / ||r||_1^2 (the Laplace noise, variance 2 b^2 with b = 1/||r||_1).
More weight on the capped users (a larger r for them) lowers the noise term and raises the
sampling term; at tau* the two changes balance (df/dr = 0 exactly when r = (||r||_2^2 + 8)/||r||_1
= tau*), so any more weight would cost more in sampling error than it saves in noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_app.specs import RANDOM_PRESETS, normalize_spec
from hdp_app.views.formatting import count_noun, plain
from hdp_core import presets
from hdp_core.adpm import adpm
from hdp_core.presets import two_groups
from hdp_core.profile import EpsilonProfile

__all__ = [
    "HALF_WIDTH_TEXT",
    "LEMMA_SATURATION",
    "SATURATION_WHY",
    "SPREAD_HELP",
    "SaturationTradeoff",
    "TwoGroupVerdict",
    "approx_percent",
    "half_width_note",
    "mse_terms",
    "saturation_caption",
    "saturation_tradeoff",
    "spec_label",
    "two_group_verdict",
]

LEMMA_SATURATION = "Lemma 3 of the paper (saturation)"
"""The saturation lemma by its printed number (the third lemma environment of the paper)."""

SATURATION_WHY = (
    "Giving the capped users more weight would lower the privacy (Laplace) noise but raise "
    "the sampling error by more, because the weights would become less equal; at τ* the "
    "two balance. So the capped users are granted τ*, more privacy than they asked for, at "
    "no cost in accuracy."
)
"""Why saturation happens, in one place for every page (see the module docstring)."""


def mse_terms(r: np.ndarray, counts: np.ndarray | None = None) -> tuple[float, float]:
    """(sampling term, noise term) of ADPM's worst-case MSE f(r) (Theorem 2) for scaled
    weights ``r`` (finite, >= 0), one entry per user or per tier with ``counts`` users each:
    sampling = ||r||_2^2 / (4 ||r||_1^2), noise = 2 / ||r||_1^2 (data in [-0.5, 0.5])."""
    r = np.asarray(r, dtype=np.float64)
    c = np.ones_like(r) if counts is None else np.asarray(counts, dtype=np.float64)
    if r.shape != c.shape or not np.all(np.isfinite(r)) or np.any(r < 0):
        raise ValueError("r must be finite, >= 0, and match counts in shape")
    s1 = float(np.dot(c, r))
    s2 = float(np.dot(c, r * r))
    if not s1 > 0:
        raise ValueError("r has no positive entry: ||r||_1 = 0")
    return s2 / (4.0 * s1 * s1), 2.0 / (s1 * s1)


@dataclass(frozen=True)
class SaturationTradeoff:
    """What raising the capped users' weight from tau* to ``raised`` would do (MSE terms on
    [-0.5, 0.5]; ``*_at``: at ADPM's r, ``*_raised``: with the capped users at ``raised``)."""

    n_capped: int
    tau: float
    raised: float
    noise_at: float
    noise_raised: float
    sampling_at: float
    sampling_raised: float

    def sentence(self) -> str:
        """The trade-off in words, quoting the numbers."""
        return (
            f"For example, raising the {count_noun(self.n_capped, 'capped user')} from "
            f"r = {self.tau:.3g} to {self.raised:.3g} would lower the noise term from "
            f"{self.noise_at:.3e} to {self.noise_raised:.3e} but raise the sampling term from "
            f"{self.sampling_at:.3e} to {self.sampling_raised:.3e}: the MSE goes up."
        )


def saturation_tradeoff(
    profile: EpsilonProfile, raised: float | None = None
) -> SaturationTradeoff | None:
    """The numbers behind SATURATION_WHY for ``profile`` (None when nobody is capped).

    ``raised``: the weight to try for the capped users (default: 1.4 tau* to two significant
    digits, at most the lowest level a capped user asked for)."""
    sol = adpm(profile)
    tau = float(sol.saturation_level)
    counts = np.asarray(profile.counts, dtype=np.float64)
    capped = np.asarray(sol.saturated, dtype=bool) & (counts > 0)
    if not math.isfinite(tau) or not capped.any():
        return None
    r = np.asarray(sol.r, dtype=np.float64).copy()
    if raised is None:
        raised = float(f"{1.4 * tau:.2g}")
        raised = min(raised, float(np.min(np.asarray(profile.levels)[capped])))
    used = counts > 0
    samp0, noise0 = mse_terms(r[used], counts[used])
    r[capped] = raised
    samp1, noise1 = mse_terms(r[used], counts[used])
    return SaturationTradeoff(
        int(counts[capped].sum()), tau, float(raised), noise0, noise1, samp0, samp1
    )


def saturation_caption(profile: EpsilonProfile) -> str:
    """The Profile page's caption under the chart: who is capped and why."""
    sol = adpm(profile)
    tau = float(sol.saturation_level)
    if not math.isfinite(tau) or not sol.n_saturated:
        return "No user is capped: weights proportional to each user's eps are optimal."
    n = int(sol.n_saturated)
    who = "The user who asked" if n == 1 else f"The {n:,} users who asked"
    verb = "is" if n == 1 else "are all"
    return f"{who} for eps ≥ {tau:.4g} (shaded) {verb} granted τ* = {tau:.4g}. {SATURATION_WHY}"


@dataclass(frozen=True)
class TwoGroupVerdict:
    """Two-group remark on the profile actually built (presets.two_groups: round(f n) strict
    users). ``threshold``: eps1 + 8/(n1 eps1) with n1 the built strict count (inf if n1 = 0);
    ``capped``: users ADPM caps; ``text``: one sentence (markdown)."""

    n_strict: int
    threshold: float
    capped: int
    text: str


def two_group_verdict(n: int, frac: float, eps1: float, eps2: float) -> TwoGroupVerdict:
    """Whether group 2 of presets.two_groups(n, frac, eps1, eps2) is capped, from the profile
    built (not from the unrounded n f), checked against ADPM on that profile."""
    prof = two_groups(n, frac, eps1, eps2)
    n1 = round(frac * n)
    n2 = int(n) - n1
    sol = adpm(prof)
    capped = int(sol.n_saturated)
    e2 = "public" if math.isinf(eps2) else f"{eps2:.4g}"
    if n1 == 0:
        return TwoGroupVerdict(
            0,
            math.inf,
            capped,
            (
                f"Group 1 is empty (round({frac:g} × {n:,}) = 0 users), so nobody is capped: "
                "every user is in group 2."
            ),
        )
    if n2 == 0:
        return TwoGroupVerdict(n1, math.inf, capped, "Group 2 is empty: every user is in group 1.")
    thr = eps1 + 8.0 / (n1 * eps1) if eps2 >= eps1 else math.inf
    if eps2 < eps1:
        text = "Group 2 is the stricter group here; the remark applies with the groups swapped."
    else:
        verdict = (
            f"so it **is capped** ({count_noun(capped, 'user')} granted τ* = "
            f"{float(sol.saturation_level):.4g})"
            if capped
            else "so it is **not** capped"
        )
        text = (
            f"With {count_noun(n1, 'user')} in group 1, group 2 saturates when its eps ≥ "
            f"eps1 + 8/(n1·eps1) = **{thr:.3g}**; it asks for {e2}, {verdict}."
        )
    return TwoGroupVerdict(n1, thr, capped, text)


def approx_percent(value: float, reference: float, digits: int = 3) -> str:
    """'+12.3%' for value vs reference; '≈ 0%' when the difference is below the precision
    the numbers are shown with (equal at ``digits`` significant digits, or within 1e-9
    relative), so rounding noise such as -4.44e-14% or +2.13e-05% never reads as a real
    difference, let alone as beating the optimum."""
    if not reference > 0 or not math.isfinite(value):
        return ""
    d = value / reference - 1.0
    if abs(d) < 1e-9 or f"{value:.{digits}g}" == f"{reference:.{digits}g}":
        return "≈ 0%"
    return f"{100 * d:+.3g}%"


HALF_WIDTH_TEXT = (
    "The **95% half-width** h means the estimate is within ±h of the population mean in at "
    "least 95% of releases, whatever the distribution of values in the range (with a standard "
    "deviation given: any distribution with at most that spread), at every number of users, "
    "as long as a user's privacy choice is unrelated to their value. It is proven "
    "(the least of five proven bounds: Hoeffding's, Bennett's, Chebyshev's, a fourth-moment "
    "bound and the range itself, each with the exact privacy noise and every rounding), not an "
    "approximation, so it is wider than the usual normal approximation, which can fall "
    "short of 95% with few users."
)
"""What the 95% half-width is (hdp_core.intervals.population_half_width, the figure of every
method on the Tier designer)."""

SPREAD_HELP = (
    "Worst case is safe: the RMSE is then the largest any data in the range can have, and the "
    "95% error is proven for any data in the range. If you know the typical standard "
    "deviation, the numbers get tighter (and hold for data with at most that spread)."
)


def half_width_note(
    acc, unit: str = "", method: str = "ADPM", width: float | None = None, spread: bool = False
) -> str:
    """One sentence on ``acc.half_width`` (units.Accuracy): the mid-range answer (R/2), the
    proven interval (kind "proven", hdp_core.intervals; ``spread``: a standard deviation was
    given; with ``width`` = R, a half-width above R/2 is compared with answering the middle of
    the range), or the normal approximation (kind "normal")."""
    u = f" {plain(unit)}" if unit else ""
    kind = getattr(acc, "half_width_kind", "normal")
    if getattr(acc, "outputs_zero", False):
        return (
            f"{method} answers the middle of the range here: it is never off by more than "
            f"±{acc.half_width:.3g}{u}."
        )
    if kind == "proven":
        data = (
            "for any data with at most the standard deviation you gave"
            if spread
            else "for any data in the range"
        )
        text = (
            f"The 95% error is proven: {method}'s estimate is within it of the population mean "
            f"in at least 95% of releases {data}, at every number of users (wider than the "
            "normal approximation, which can fall short with few users)."
        )
        if width is not None and acc.half_width > 0.5 * width:
            text += (
                " It is more than half the range: answering the middle of the range would "
                f"never be off by more than ±{0.5 * width:.3g}{u}."
            )
        return text
    return (
        "The 95% error is an approximation: the data's part of the error is taken as "
        "normal (accurate with many users); the privacy noise is exact."
    )


# ---- issue 21: which mean a release estimates (appended here to keep merges clean) ----------
TARGET_QUESTION = "Could people who chose stricter privacy have different values from the others?"
"""The plain question the Release page asks before a release (no answer preselected)."""

TARGET_POPULATION_TEXT = (
    "Population mean (ADPM): estimates the mean of the population the rows are drawn from; "
    "it assumes a person's privacy choice is unrelated to their value."
)
"""One sentence: what target "population" estimates and what it assumes."""

TARGET_TABLE_TEXT = (
    "This table's own mean (TableMean): estimates the mean of exactly these rows and assumes "
    "nothing about how privacy choices relate to values; its 95% interval counts the largest "
    "bias that holding back strict users can cause."
)
"""One sentence: what target "table" estimates and what it assumes."""

WHATIF_WHY = (
    "ADPM gives the more lenient users more than their share 1/n of the weight, so when "
    "strict users' values differ it leans towards the lenient users' values, and its 95% "
    "interval does not count that lean; TableMean never gives anyone more than their share, "
    "so its bias is limited to what the strict users it must hold back can cause, a bound "
    "its interval already includes."
)
"""Why ADPM drifts and TableMean stays honest when values differ by privacy level."""

__all__ += [
    "TARGET_POPULATION_TEXT",
    "TARGET_QUESTION",
    "TARGET_TABLE_TEXT",
    "WHATIF_WHY",
]

# ------------------------------------------------------------------------------ issue 23
# The teaching path's sentences (the walk-through's extras, the guided tour); the numbers come
# from hdp_app.views.tour, which uses the same functions as the charts.

WHY_EIGHT = (
    "**Why the constant is 8.** ADPM's answer is Σ wᵢxᵢ + Laplace noise, with weights "
    "wᵢ = rᵢ/‖r‖₁ and noise scale η = 1/‖r‖₁. Its worst-case MSE has two parts: the data's, at "
    "most the worst-case variance 1/4 times ‖w‖₂² = ‖r‖₂²/‖r‖₁², and the noise's, the Laplace "
    "variance 2η² = 2/‖r‖₁². Together f(r) = ‖r‖₂²/(4‖r‖₁²) + 2/‖r‖₁² = (‖r‖₂² + 8)/(4‖r‖₁²): "
    "the 8 is the Laplace variance's 2 divided by the data's worst-case variance 1/4 "
    "(Theorem 2). Tuned to a known spread s, it becomes 2/s²."
)
"""Why Algorithm 1's constant is 8 (Theorem 2 of the paper; hdp_app.views.tour.step_weights)."""


def why_eight_numbers(w) -> str:
    """The WHY_EIGHT identity checked on one step of the walk-through (``w``: a
    tour.StepWeights): the data term, the noise term and f with their values."""
    c = f"{w.constant:.4g}"
    var = "1/4" if w.constant == 8.0 else f"{2.0 / w.constant:.4g}"
    return (
        f"At step {w.step}: ‖r‖₁ = {w.l1:.4g}, ‖r‖₂² = {w.l2:.4g}; data term "
        f"{var}·‖r‖₂²/‖r‖₁² = {w.sampling:.4g}, noise term 2η² = 2/‖r‖₁² = {w.noise:.4g}; "
        f"their sum f = (‖r‖₂² + {c})/({'4' if w.constant == 8.0 else f'{w.constant / 2:.4g}'}"
        f"‖r‖₁²) = {w.f:.4g}."
    )


def step_weights_text(w, top: int = 5) -> str:
    """The weights and the noise scale after one step of the walk-through (``w``: a
    tour.StepWeights), quoting up to ``top`` weights (the strictest users first)."""
    k = w.step
    shown = ", ".join(f"w{_sub(i + 1)} = {x:.3g}" for i, x in enumerate(w.weights[:top]))
    more = f", … (weights of all {k} users sum to 1)" if k > top else " (they sum to 1)"
    return (
        f"If the estimate used these {count_noun(k, 'user')}: weights wᵢ = rᵢ/‖r‖₁ with "
        f"‖r‖₁ = {w.l1:.4g}: {shown}{more}; Laplace noise of scale η = 1/‖r‖₁ = "
        f"{w.noise_scale:.4g}."
    )


def _sub(i: int) -> str:
    return str(i).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def tau_beside_sidebar(
    shown: EpsilonProfile, current: EpsilonProfile, shown_name: str = "the teaching example"
) -> str:
    """One sentence giving the tau* of the profile the walk-through shows and, in the same
    sentence, how it relates to the sidebar's tau* (that of the ``current`` profile)."""
    t_shown = float(adpm(shown).saturation_level)
    t_cur = float(adpm(current).saturation_level)

    def fmt(t: float) -> str:
        return f"τ* = {t:.4g}" if math.isfinite(t) else "no τ* (nobody is capped)"

    if shown.key == current.key:
        return f"The walk-through uses your current profile: {fmt(t_shown)}, as in the sidebar."
    same = (math.isinf(t_shown) and math.isinf(t_cur)) or f"{t_shown:.4g}" == f"{t_cur:.4g}"
    relation = "the same value as" if same else "not"
    return (
        f"This walk-through uses {shown_name} ({count_noun(shown.n, 'user')}), whose "
        f"{fmt(t_shown)} is {relation} the sidebar's {fmt(t_cur)}, which is for your current "
        f"profile ({count_noun(current.n, 'user')})."
    )


def tour_saturates_text(fp, verdict) -> tuple[str, ...]:
    """Tour step 1: who saturates (``fp``: saturation.FreePrivacy, ``verdict``:
    TwoGroupVerdict of the same two groups)."""
    if fp.n_saturated:
        who = (
            f"{count_noun(fp.n_saturated, 'user')} ({100 * fp.saturated_share:.3g}% of all) "
            f"are capped at τ* = {fp.tau:.4g}."
        )
    else:
        who = "Nobody is capped: every user gets the eps they asked for."
    return (who, verdict.text, SATURATION_WHY)


def tour_free_text(nums: dict[str, float]) -> tuple[str, ...]:
    """Tour step 2: privacy for free (numbers from tour.tour_step)."""
    if not math.isfinite(nums["tau*"]) or not math.isfinite(nums["times more privacy"]):
        return ("Nobody is capped here: move the loose group's eps up to see saturation.",)
    return (
        f"The capped users asked for eps = {nums['asked (median of the capped)']:.4g} and are "
        f"granted τ* = {nums['tau*']:.4g}: {nums['times more privacy']:.3g} times smaller, "
        "so more privacy than they asked for.",
        f"It costs no accuracy: using their looser eps would not help. ADPM's worst-case MSE "
        f"is {nums['ADPM worst-case MSE']:.3e}; weights proportional to the eps asked for "
        f"(PropDPM) give "
        f"{nums['PropDPM worst-case MSE']:.3e}.",
    )


def tour_gap_text(nums: dict[str, float]) -> tuple[str, ...]:
    """Tour step 3: the gap between ADPM's worst case and the lower bound (Theorem 3)."""
    return (
        f"ADPM's worst-case MSE is {nums['ADPM worst case f ∧ 1/4']:.3e}; no estimator can "
        f"beat (H ∧ 1/4)/512 = {nums['lower bound (H ∧ 1/4)/512']:.3e} (Theorem 3).",
        f"Here f/H = {nums['f/H']:.3g}: the paper proves at most 443 (Theorem 4), its "
        "experiments suggest 4.",
    )


def tour_simulation_text(nums: dict[str, float]) -> tuple[str, ...]:
    """Tour step 4: exact MSEs on Beta(2, 3) data (the Simulation page's default)."""
    a, p, u = (nums[f"{m} exact MSE"] for m in ("ADPM", "PropDPM", "UNI"))
    return (
        f"On Beta(2, 3) data the exact MSE is {a:.3e} for ADPM, {p:.3e} for PropDPM "
        f"({approx_percent(p, a)} vs ADPM) and {u:.3e} for UNI ({approx_percent(u, a)}).",
        "The Simulation page draws thousands of such estimates and checks these numbers "
        "with 95% intervals.",
    )


def trace_step_beside_sidebar(
    trace, step: int, shown: EpsilonProfile, current: EpsilonProfile
) -> str:
    """The walk-through's sentence for ``step`` (views.saturation.trace_step_text on
    ``trace``, the trace of ``shown``) with, when it quotes a τ* that is not the sidebar's
    (``current``'s), the sidebar's value in the same sentence."""
    from hdp_app.views.saturation import trace_step_text

    text = trace_step_text(trace, step)
    if "τ*" not in text or shown.key == current.key:
        return text
    t_cur = float(adpm(current).saturation_level)
    t_shown = float(adpm(shown).saturation_level)
    if math.isfinite(t_cur) and f"{t_cur:.4g}" == f"{t_shown:.4g}":
        return text[:-1] + ", the same as the sidebar's τ* for your profile."
    cur = f"τ* = {t_cur:.4g}" if math.isfinite(t_cur) else "no τ* (nobody is capped)"
    return text[:-1] + f"; this is the example's τ*, not the sidebar's {cur} for your profile."


DESIGNER_SATURATION_TEXT = (
    "A **saturated** tier is capped: every tier looser than τ* gets τ*, so "
    "offering a looser tier adds no accuracy. ADPM (the paper's optimal estimator) "
    "never gives a user more weight than a τ* user gets. " + SATURATION_WHY
)
"""The Tier designer's explanation of a saturated tier (Lemma 3 of the paper)."""

WORST_CASE_DATA_TEXT = (
    "**Worst-case data** means data as spread out as the range allows: half the "
    "users at the bottom of the range and half at the top (standard deviation = half "
    "the range). The RMSE shown is then an upper bound for *any* data in the range. "
    + HALF_WIDTH_TEXT
)
"""What 'worst-case data' means for the errors the Tier designer shows."""


SIMULATION_EXPLAIN = (
    """
**MSE (mean squared error)** is the average of (estimate − true mean)² over the repetitions,
for data scaled to [−0.5, 0.5]. Its square root is a typical error: MSE = 1e-4 means answers are
typically off by about 0.01, i.e. 1% of the data range. Lower is better.

**ln MSE** is the natural logarithm of the MSE, the unit of the paper's Table 1: −9.3 means
MSE ≈ 9e-5. One unit lower is e ≈ 2.7 times smaller; a gap of 0.7 is a factor of 2.

**95% confidence interval**: the simulation is random, so its MSE is only an estimate; with 95%
confidence the true MSE lies in the interval. The **exact MSE** is the closed form (no
simulation): the simulated value should sit near it (more trials = narrower interval).

**Why ADPM wins.** It averages the users with weights proportional to min(eps, tau*) and adds
just enough Laplace noise. Users who ask for strong privacy count less, so less noise is needed
to protect them; users who ask for little privacy count more, but only up to the saturation
level τ*. """
    + SATURATION_WHY
    + """ The
paper proves this is the best affine estimator for the worst case (data spread as much as the
range allows) and within a constant factor of the best possible estimator of any kind. For a
particular gentler distribution another weighting can occasionally be slightly better.

**Why PropDPM and SM suffer with public users.** PropDPM weights users in proportion to eps, so
one public user (eps = ∞) takes all the weight: the answer becomes the public users' mean and
every private user's data is thrown away. SM keeps each user with probability
(e^eps − 1)/(e^t − 1), t the largest eps: with a public user t = ∞ and only the public users
are kept. With only a few public users both are as bad as a tiny sample.

**The others.** UNI gives everyone the strictest level (one very private user makes everyone
noisy). LDPE has each user add their own noise before sending (local privacy): much more noise.
**FME is "reconstructed"**: the paper only cites it (Fallah et al. 2024, Theorem 1); we cap
every level at 1/√n and then weight proportionally, which reproduces all the FME numbers the
paper reports. It saturates too, but at a fixed level that ignores the profile.
"""
)
"""The Simulation page's explanation of MSE, ln MSE, the 95% interval and why ADPM wins."""


SIMULATION_INTRO = """
Every method answers the same question, *what is the average of the users' values?*, while
giving each user the privacy they asked for (smaller eps = more privacy; ∞ = public data).
Here we **repeat the whole thing thousands of times** with fresh random data and fresh privacy
noise and measure how far each answer lands from the truth. The profile is the current one
(change it on the Profile page); the data come from the distribution you pick below.
"""
"""The Simulation page's introduction: what the simulation repeats and measures."""


def spec_label(spec: Any) -> str:
    """One line describing a (valid) spec for people, e.g. 'Log-uniform: 1,000 users ...'."""
    s = normalize_spec(spec)
    k = s["kind"]
    if k == "preset":
        extra = f" (seed {s['seed']})" if s["name"] in RANDOM_PRESETS and s["seed"] else ""
        return presets.PRESETS[s["name"]] + extra
    if k == "log_uniform":
        return (
            f"Log-uniform: {s['n']:,} users, eps from {s['lo']:.3g} to {s['hi']:.3g} "
            f"(seed {s['seed']})"
        )
    if k == "two_groups":
        n1 = round(s["frac"] * s["n"])
        e2 = "public" if math.isinf(s["eps2"]) else f"{s['eps2']:.3g}"
        return f"Two groups: {n1:,} users at {s['eps1']:.3g}, {s['n'] - n1:,} at {e2}"
    if k == "mixture":
        return (
            f"Mixture: {s['n']:,} users, eps from {s['lo']:.3g} to {s['hi']:.3g}, "
            f"{100 * s['public']:.3g}% public (seed {s['seed']})"
        )
    if k == "tiers":
        return (
            f"Tiers: {count_noun(len(s['levels']), 'tier')}, {count_noun(sum(s['counts']), 'user')}"
        )
    return f"List of {len(s['levels'])} users"


# ---- issue 23: the phase diagram's movable levels (a what-if) --------------------------------
PHASE_WHATIF = (
    "A what-if: moving these sliders redraws the point and the verdict but does not change "
    "your current profile (build one on the Profile page to keep it)."
)
"""What the phase diagram's level sliders do and do not change (one place for every help)."""


def phase_level_help(group: str) -> str:
    """The help of one of the phase diagram's level sliders (``group``: which group)."""
    return f"The {group} group's privacy level. Smaller eps = more privacy. " + PHASE_WHATIF


def phase_origin_text(state: Any, two_levels: bool) -> str:
    """Where the phase diagram's point comes from (``state``: a tour.PhaseState;
    ``two_levels``: the current profile has exactly two positive levels)."""
    e2 = "public" if math.isinf(state.eps2) else f"{state.eps2:.4g}"
    where = (
        f"{100 * state.frac:.3g}% of {state.n:,} users at eps1 = {state.eps1:.4g} and the rest "
        f"at eps2 = {e2}"
    )
    if state.from_profile:
        return f"The star is your current profile: {where}."
    start = ""
    if not two_levels:
        s2 = "public" if math.isinf(state.start_eps2) else f"{state.start_eps2:.4g}"
        start = (
            " Your profile does not have exactly two levels, so the sliders start at the "
            f"median levels of its stricter and looser halves ({state.start_eps1:.4g} and "
            f"{s2})."
        )
    return f"The star is a what-if, not your profile (which is unchanged): {where}.{start}"


__all__ += ["PHASE_WHATIF", "phase_level_help", "phase_origin_text"]


# ---- issue 23: the Tour page -------------------------------------------------------------------
TOUR_INTRO = (
    "The paper's story in five steps, on one example of its own: n users in two groups, a "
    "strict one and a loose one (not your profile, which stays as it is; the sidebar's τ* "
    "is your profile's). Move the controls: every number and chart follows, and a control "
    "moved in one step carries to the next. The link keeps the step and the controls."
)
"""The Tour page's introduction (hdp_app.views.tour.tour_step)."""

__all__ += ["TOUR_INTRO"]


# ---- issue 23: the sidebar's compact summary (room on a projector) -----------------------------
def sidebar_lines(s: Any) -> tuple[str, str]:
    """The two lines the sidebar always shows (markdown), from ``s`` (the sidebar's summary
    dict: n, distinct, min, max, tau, n_saturated): users, distinct levels and the range of
    eps; tau* and how many users it caps. Its details sit in a collapsed expander."""
    from hdp_app.views.formatting import compact_count, sidebar_eps

    n = int(s["n"])
    lo, hi = sidebar_eps(s["min"]), sidebar_eps(s["max"])
    span = f"eps {lo}" if lo == hi else f"eps {lo} to {hi}"
    first = f"**{compact_count(n)} users** · {count_noun(int(s['distinct']), 'level')} · {span}"
    tau = float(s["tau"])
    if math.isfinite(tau):
        second = f"**τ\\* = {tau:.4g}** · {compact_count(int(s['n_saturated']))} capped"
    else:
        second = "**No τ\\*** · nobody is capped"
    return first, second


__all__ += ["sidebar_lines"]
