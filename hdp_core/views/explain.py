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

from .. import presets
from ..adpm import adpm
from ..presets import two_groups
from ..profile import EpsilonProfile
from ..specs import RANDOM_PRESETS, normalize_spec
from .formatting import count_noun, plain

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
    "The **95% half-width** h means the estimate of the mean is within ±h of the true mean 95% "
    "of the time. With worst-case data and few users it is the exact worst case over data at "
    "the two ends of the range (the normal approximation would understate it); with many users "
    "it is an approximation that treats the data's part of the error as normal (the privacy "
    "noise is exact). It is never shown above half the range: answering the middle of the "
    "range is never off by more than that."
)
"""What the 95% half-width is, and when it is exact (hdp_core.smalln, design.small_n_half_width)."""

SPREAD_HELP = (
    "Worst case is safe for the RMSE: it is then the largest any data in the range can have. "
    "The 95% error is the worst case over data at the two ends of the range (exact for few "
    "users, a normal approximation for many). If you know the typical standard deviation, "
    "the numbers get tighter."
)


def half_width_note(acc, unit: str = "", method: str = "ADPM") -> str:
    """One sentence on how ``acc.half_width`` (units.Accuracy) was found: exact worst case,
    normal approximation, or the mid-range guarantee R/2 shown instead of a larger own error."""
    u = f" {plain(unit)}" if unit else ""
    kind = getattr(acc, "half_width_kind", "normal")
    if getattr(acc, "outputs_zero", False):
        return (
            f"{method} answers the middle of the range here: it is never off by more than "
            f"±{acc.half_width:.3g}{u}."
        )
    if kind == "mid_range":
        return (
            f"{method}'s own 95% error would be ±{acc.half_width_own:.3g}{u}, more than "
            f"answering the middle of the range, which is never off by more than "
            f"±{acc.half_width:.3g}{u}: that guarantee is shown."
        )
    if kind == "exact":
        return (
            "The 95% error is exact: the worst case over data at the two ends of the "
            "range (with this few users the normal approximation would understate it)."
        )
    return (
        "The 95% error is an approximation: the data's part of the error is taken as "
        "normal (accurate with many users); the privacy noise is exact."
    )


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
