"""The Saturation page's numbers and sentences (no plotting, no streamlit).

* :func:`r_curve`: requested eps and granted r = min(eps, tau*) for users sorted by eps
  (per tier for tiered profiles, downsampled for large per-user ones, the saturation point kept
  exactly), the paper's Figure 1.
* :func:`free_privacy` and :func:`free_privacy_table`: how many users saturate, what they asked
  for and what they get (Lemma 3 and Section III-C), per tier, level or bin.
* :func:`phase_boundary` and :func:`two_level_point`: the two-group phase diagram (Remark on
  two groups: saturation iff eps2 >= eps1 + 8/(n f eps1)).
* :func:`trace_step_text` and :func:`teaching_example`: a commentary on Algorithm 1, step by step.

Privacy levels are in units of eps (nats of privacy loss); MSEs are for data in [-0.5, 0.5].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdp_app.views.cards import Metric
from hdp_app.views.formatting import short_eps, subscript
from hdp_core.adpm import ADPMSolution, AlgorithmTrace, adpm
from hdp_core.bounds import two_group_threshold
from hdp_core.profile import EpsilonProfile, weighted_quantile
from hdp_core.validate import format_eps

__all__ = [
    "DOWNSAMPLE_ABOVE",
    "TRACE_INTRO",
    "FreePrivacy",
    "FreePrivacyTable",
    "RCurve",
    "TwoLevelPoint",
    "free_privacy",
    "free_privacy_table",
    "phase_boundary",
    "r_curve",
    "teaching_example",
    "trace_step_text",
    "trace_table",
    "two_level_point",
]

_BINNED_COLUMNS = (
    "group",
    "requested eps from",
    "requested eps to",
    "users",
    "granted eps from",
    "granted eps to",
    "weight of one user from",
    "weight of one user to",
    "share of total weight",
    "saturated",
)
"""Columns of the free-privacy table when users are grouped in bins of levels."""

DOWNSAMPLE_ABOVE = 20_000
"""Per-entry curves with more entries than this are downsampled for drawing."""


def _solution(eps: Any) -> ADPMSolution:
    return eps if isinstance(eps, ADPMSolution) else adpm(eps)


def _usable_order(prof: EpsilonProfile) -> np.ndarray:
    """Indices of entries with users and eps > 0, sorted by eps ascending (stable)."""
    lv, ct = prof.levels, prof.counts
    idx = np.flatnonzero((ct > 0) & (lv > 0))
    return idx[np.argsort(lv[idx], kind="stable")]


# ------------------------------------------------------------------------------ r-vs-eps curve
@dataclass(frozen=True)
class RCurve:
    """Users sorted by requested eps with what ADPM grants them (one entry per drawn point).

    ``rank_start``/``rank_end``: 1-based ranks (among users with eps > 0) of the first and last
    user an entry stands for (equal for a single user; a tier spans its users);
    ``requested``: eps asked for (inf = public); ``granted``: r = min(eps, tau*) (inf only
    when every usable user is public); ``weight``: weight of one such user in the estimate;
    ``saturated``: capped at tau*. ``k_unsaturated`` users (ranks 1..k) get exactly what they
    asked for; ranks k+1..n_usable are capped at ``tau`` (the saturation index of Lemma
    Lemma 3 is k). ``per_tier``: entries are tiers; ``downsampled``: some users are not drawn.
    """

    rank_start: np.ndarray
    rank_end: np.ndarray
    requested: np.ndarray
    granted: np.ndarray
    weight: np.ndarray
    saturated: np.ndarray
    names: tuple[str, ...] | None
    n_usable: int
    n_excluded: int
    k_unsaturated: int
    tau: float
    per_tier: bool
    downsampled: bool


def _downsample_index(levels: np.ndarray, k_first_sat: int, points: int) -> np.ndarray:
    """Indices into ascending ``levels`` to draw: an even grid in rank, an even grid in
    log(eps) (so both flat and steep parts keep their shape), the ends, and the last
    unsaturated and first saturated entries (so the saturation point is exact)."""
    m = levels.size
    half = max(points // 2, 2)
    keep = [np.linspace(0, m - 1, half).round().astype(np.int64)]
    fin = levels[np.isfinite(levels)]
    if fin.size:
        lo, hi = math.log(float(fin[0])), math.log(float(fin[-1]))
        if hi > lo:
            grid = np.exp(np.linspace(lo, hi, half))
            keep.append(np.clip(np.searchsorted(levels, grid, side="left"), 0, m - 1))
    special = [0, m - 1, k_first_sat - 1, k_first_sat, int(np.searchsorted(levels, np.inf))]
    keep.append(np.array([i for i in special if 0 <= i < m], dtype=np.int64))
    return np.unique(np.concatenate(keep))


def r_curve(eps: Any, max_points: int = 4000, downsample_above: int = DOWNSAMPLE_ABOVE) -> RCurve:
    """The r-versus-eps curve of ADPM (paper, Figure 1) for a profile or solution.

    Users with eps = 0 are left out (their data is not used; counted in ``n_excluded``).
    Per-user profiles with more than ``downsample_above`` users keep about ``max_points``
    users (see :func:`_downsample_index`); tiers are one entry each. O(n log n).
    """
    sol = _solution(eps)
    prof = sol.profile
    order = _usable_order(prof)
    counts = prof.counts[order]
    requested = prof.levels[order]
    granted = sol.r[order]
    weight = sol.weights[order]
    saturated = sol.saturated[order]
    names = None
    if prof.names:
        names = tuple(prof.names[i] for i in order)
    rank_end = np.cumsum(counts)
    rank_start = rank_end - counts + 1
    n_usable = int(rank_end[-1]) if rank_end.size else 0
    first_sat = int(np.argmax(saturated)) if saturated.any() else requested.size
    k_unsat = int(rank_end[first_sat - 1]) if first_sat > 0 else 0
    downsampled = False
    if requested.size > downsample_above:
        keep = _downsample_index(requested, first_sat, max_points)
        rank_start, rank_end = rank_start[keep], rank_end[keep]
        requested, granted, weight = requested[keep], granted[keep], weight[keep]
        saturated = saturated[keep]
        if names is not None:
            names = tuple(names[i] for i in keep)
        downsampled = True
    return RCurve(
        rank_start=rank_start,
        rank_end=rank_end,
        requested=requested,
        granted=granted,
        weight=weight,
        saturated=saturated,
        names=names,
        n_usable=n_usable,
        n_excluded=prof.n_excluded,
        k_unsaturated=k_unsat,
        tau=float(sol.saturation_level),
        per_tier=prof.is_tiered,
        downsampled=downsampled,
    )


# ------------------------------------------------------------------------------ free privacy
@dataclass(frozen=True)
class FreePrivacy:
    """Who saturates and what they gain (Section III-C: privacy 'for free').

    Counts are numbers of users. ``requested_min``/``requested_median``: the smallest and the
    median level asked for by saturated users (inf = public); ``gain``: requested_median / tau,
    how many times smaller (stricter) the granted level is for the median saturated user;
    ``weight_share``: share of the estimate's total weight held by saturated users (in [0, 1]).
    """

    n: int
    n_usable: int
    n_saturated: int
    n_public: int
    n_excluded: int
    tau: float
    requested_min: float
    requested_median: float
    gain: float
    weight_share: float
    worst_case_mse: float
    outputs_zero: bool

    @property
    def saturated_share(self) -> float:
        """Fraction of all users who are capped at tau*."""
        return self.n_saturated / self.n if self.n else 0.0


def free_privacy(eps: Any) -> FreePrivacy:
    """Summary of saturation for a profile or an ADPM solution (see :class:`FreePrivacy`)."""
    sol = _solution(eps)
    prof = sol.profile
    lv, ct = prof.levels, prof.counts
    sat = sol.saturated
    n_sat = int(ct[sat].sum())
    tau = float(sol.saturation_level)
    if n_sat:
        s_lv = lv[sat]
        o = np.argsort(s_lv, kind="stable")
        s_lv, s_ct = s_lv[o], ct[sat][o]
        req_min = float(s_lv[0])
        req_med = weighted_quantile(s_lv, s_ct, 0.5)
        gain = req_med / tau
        share = float(np.dot(ct[sat].astype(np.float64), sol.weights[sat]))
    else:
        req_min = req_med = gain = math.nan
        share = 0.0
    return FreePrivacy(
        n=prof.n,
        n_usable=prof.n - prof.n_excluded,
        n_saturated=n_sat,
        n_public=prof.n_public,
        n_excluded=prof.n_excluded,
        tau=tau,
        requested_min=req_min,
        requested_median=req_med,
        gain=gain,
        weight_share=min(share, 1.0),
        worst_case_mse=sol.worst_case_mse,
        outputs_zero=sol.outputs_zero,
    )


@dataclass(frozen=True)
class FreePrivacyTable:
    """Rows of the 'free privacy' table, as ordered numpy columns.

    ``grouping`` is 'tier' (one row per tier), 'level' (one row per distinct level) or 'bin'
    (log-spaced bins of levels, split at tau* so a bin is all saturated or all not; public and
    excluded users get their own rows). In 'bin' tables the requested, granted and weight
    columns come as '... from' / '... to' pairs (smallest and largest in the bin).
    """

    columns: dict[str, np.ndarray]
    grouping: str

    @property
    def n_rows(self) -> int:
        return len(next(iter(self.columns.values())))


def _table_from_rows(labels, users, req, gra, wt, share, sat) -> dict[str, np.ndarray]:
    return {
        "group": np.array(labels, dtype=object),
        "requested eps": np.asarray(req, dtype=np.float64),
        "users": np.asarray(users, dtype=np.int64),
        "granted eps": np.asarray(gra, dtype=np.float64),
        "weight of one user": np.asarray(wt, dtype=np.float64),
        "share of total weight": np.asarray(share, dtype=np.float64),
        "saturated": np.asarray(sat, dtype=bool),
    }


def free_privacy_table(eps: Any, max_rows: int = 40) -> FreePrivacyTable:
    """Per-tier (or per-level, or binned) table: requested eps, users, granted eps, the weight
    of one user and the share of the total weight (weights of all users sum to 1).

    Tiered profiles give one row per non-empty tier, per-user profiles one row per distinct
    level, both sorted by level; with more than ``max_rows`` rows the finite positive levels
    are grouped into about ``max_rows - 2`` log-spaced bins instead (vectorised, O(n log n)).
    """
    sol = _solution(eps)
    prof = sol.profile
    lv, ct = prof.levels, prof.counts
    cf = ct.astype(np.float64)
    nonempty = np.flatnonzero(ct > 0)
    order = nonempty[np.argsort(lv[nonempty], kind="stable")]
    if prof.is_tiered and order.size <= max_rows:
        names = prof.names or tuple(f"Tier {j + 1}" for j in range(prof.k))
        cols = _table_from_rows(
            [names[j] for j in order],
            ct[order],
            lv[order],
            sol.r[order],
            sol.weights[order],
            cf[order] * sol.weights[order],
            sol.saturated[order],
        )
        return FreePrivacyTable(cols, "tier")
    # distinct levels (a tiered profile may repeat a level across tiers)
    u, first, inv = np.unique(lv[order], return_index=True, return_inverse=True)
    rep = order[first]  # one entry holding each distinct level
    users = np.bincount(inv, weights=cf[order], minlength=u.size)
    if u.size <= max_rows:
        cols = _table_from_rows(
            [format_eps(x) for x in u],
            np.rint(users),
            u,
            sol.r[rep],
            sol.weights[rep],
            users * sol.weights[rep],
            sol.saturated[rep],
        )
        return FreePrivacyTable(cols, "level")
    return FreePrivacyTable(_binned_table(sol, u, users, rep, max_rows), "bin")


def _binned_table(sol: ADPMSolution, u, users, rep, max_rows: int) -> dict[str, np.ndarray]:
    r, w, sat_flags = sol.r[rep], sol.weights[rep], sol.saturated[rep]
    fin = np.isfinite(u) & (u > 0)
    fu, fusers, fr, fw, fsat = u[fin], users[fin], r[fin], w[fin], sat_flags[fin]
    rows: dict[str, list] = {k: [] for k in _BINNED_COLUMNS}

    def add(label, lo, hi, n, g_lo, g_hi, w_lo, w_hi, share, sat):
        for key, val in zip(rows, (label, lo, hi, n, g_lo, g_hi, w_lo, w_hi, share, sat)):
            rows[key].append(val)

    if (u == 0).any():
        add("eps = 0 (not used)", 0.0, 0.0, users[u == 0][0], 0.0, 0.0, 0.0, 0.0, 0.0, False)
    if fu.size:
        lo, hi = math.log(float(fu[0])), math.log(float(fu[-1]))
        bins = max(max_rows - 2, 1)
        edges = np.exp(np.linspace(lo, hi, bins + 1))[1:-1]
        tau = sol.saturation_level
        if math.isfinite(tau):
            edges = np.append(edges, tau)
        starts = np.unique(np.concatenate(([0], np.searchsorted(fu, edges, side="left"))))
        starts = starts[starts < fu.size]
        ends = np.append(starts[1:], fu.size) - 1
        n_bin = np.add.reduceat(fusers, starts)
        share = np.add.reduceat(fusers * fw, starts)
        sat_bin = fsat[starts]
        for a, b, n, s, st_ in zip(starts, ends, n_bin, share, sat_bin):
            label = f"{fu[a]:.3g} to {fu[b]:.3g}" if b > a else format_eps(float(fu[a]))
            add(label, fu[a], fu[b], n, fr[a], fr[b], fw[a], fw[b], s, bool(st_))
    if np.isinf(u).any():
        j = int(np.flatnonzero(np.isinf(u))[0])
        add(
            "public (∞)",
            math.inf,
            math.inf,
            users[j],
            r[j],
            r[j],
            w[j],
            w[j],
            users[j] * w[j],
            bool(sat_flags[j]),
        )
    out = {
        k: np.asarray(v, dtype=np.float64)
        for k, v in rows.items()
        if k not in ("group", "users", "saturated")
    }
    out["group"] = np.array(rows["group"], dtype=object)
    out["users"] = np.rint(np.asarray(rows["users"], dtype=np.float64)).astype(np.int64)
    out["saturated"] = np.asarray(rows["saturated"], dtype=bool)
    order = _BINNED_COLUMNS
    return {k: out[k] for k in order}


# ------------------------------------------------------------------------------ two groups
def phase_boundary(
    n: float, frac: float, eps1: Any = None, lo: float = 1e-3, hi: float = 1e2, points: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """The two-group saturation boundary eps2 = eps1 + 8/(n f eps1) (Remark, two groups).

    ``eps1`` values (or ``points`` log-spaced values in [lo, hi]) and the boundary eps2 at
    each; above it (eps2 >= boundary) the looser group saturates.
    """
    if not (n > 0 and 0 < frac <= 1 and math.isfinite(n)):
        raise ValueError(f"need n > 0 and a group share in (0, 1], got n={n}, f={frac}")
    if eps1 is None:
        if not (0 < lo < hi < math.inf) or points < 2:
            raise ValueError("need 0 < lo < hi < inf and at least 2 points")
        e1 = np.exp(np.linspace(math.log(lo), math.log(hi), int(points)))
    else:
        e1 = np.asarray(eps1, dtype=np.float64)
        if not (e1 > 0).all():
            raise ValueError("eps1 must be positive")
    return e1, two_group_threshold(n, frac, e1)


@dataclass(frozen=True)
class TwoLevelPoint:
    """A profile with exactly two distinct positive levels eps1 < eps2 (eps2 may be inf):
    n users, a fraction ``frac`` of them at eps1; ``threshold`` = eps1 + 8/(n frac eps1);
    ``saturated``: the eps2 group is capped (from ADPM, not from the formula)."""

    n: int
    frac: float
    eps1: float
    eps2: float
    threshold: float
    saturated: bool


def two_level_point(eps: Any) -> TwoLevelPoint | None:
    """The profile as a point of the two-group phase diagram, or None unless it has exactly
    two distinct levels, both > 0 (users with eps = 0 make it a three-level profile)."""
    sol = _solution(eps)
    prof = sol.profile
    lv, ct = prof.grouped()
    if lv.size != 2 or lv[0] <= 0:
        return None
    n = int(ct.sum())
    frac = float(ct[0]) / n
    e1, e2 = float(lv[0]), float(lv[1])
    first2 = np.flatnonzero((prof.levels == e2) & (prof.counts > 0))[0]
    return TwoLevelPoint(
        n=n,
        frac=frac,
        eps1=e1,
        eps2=e2,
        threshold=float(two_group_threshold(n, frac, e1)),
        saturated=bool(sol.saturated[first2]),
    )


# ------------------------------------------------------------------------------ Algorithm 1
def _e(x: float) -> str:
    return short_eps(x, public="public (∞)")


TRACE_INTRO = (
    "Sort users by the eps they asked for. User 1 gets ε₁. Each next user k is compared with "
    "the cap τₖ₋₁ = (‖r‖₂² + 8)/‖r‖₁ of the users before: below it they get what they asked "
    "for, at or above it they get the cap, and from then on the cap stops moving (Lemma 3 of "
    "the paper, the saturation lemma)."
)
"""The Algorithm 1 walk-through's introduction, in the notation of :func:`trace_step_text`."""


def trace_step_text(trace: AlgorithmTrace, step: int) -> str:
    """One sentence explaining step ``step`` (1-based) of Algorithm 1 on ``trace``: the
    comparison of ε_k with the previous cap τ_(k-1) and what user k is granted (Unicode
    subscripts and ‖r‖ norms throughout; the lemma by its printed number, Lemma 3)."""
    m = int(trace.eps.size)
    if not 1 <= step <= m:
        raise ValueError(f"step must be between 1 and {m}, got {step}")
    k = step
    e, r = float(trace.eps[k - 1]), float(trace.r[k - 1])
    tau_k = float(trace.tau[k - 1])
    if math.isinf(r):
        return (
            f"Step {k}: every usable user is public, so there is nothing to protect: "
            "ADPM is the plain sample mean (equal weights, no noise)."
        )
    if k == 1:
        return (
            f"Step 1: the strictest user asks for ε₁ = {_e(e)} and gets it (r₁ = ε₁); "
            f"the cap for the next user is τ₁ = (‖r‖₂² + 8)/‖r‖₁ = {tau_k:.4g}."
        )
    prev = float(trace.tau[k - 2])
    sk, sp = subscript(k), subscript(k - 1)
    if not trace.saturated[k - 1]:
        return (
            f"Step {k}: ε{sk} = {_e(e)} < τ{sp} = {prev:.4g}, so user {k} gets what "
            f"they asked for (r{sk} = {r:.4g}); the cap moves to τ{sk} = {tau_k:.4g}."
        )
    if not trace.saturated[k - 2]:
        return (
            f"Step {k}: ε{sk} = {_e(e)} ≥ τ{sp} = {prev:.4g}: saturation! User {k} "
            f"is granted r{sk} = {r:.4g}, and the cap stops moving, so every later user "
            f"gets τ* = {r:.4g} too (Lemma 3 of the paper, the saturation lemma)."
        )
    return (
        f"Step {k}: ε{sk} = {_e(e)} ≥ τ{sp} = {prev:.4g}: saturated, user {k} gets "
        f"τ* = {r:.4g} (more privacy than asked, at no cost in accuracy)."
    )


def trace_table(trace: AlgorithmTrace, step: int) -> dict[str, np.ndarray]:
    """The walk-through's table after ``step`` steps: one row per processed user, latest
    first (so the table follows the stepper), columns in the trace text's notation with
    "saturated" early enough to stay visible on a narrow screen."""
    m = int(trace.eps.size)
    if not 1 <= step <= m:
        raise ValueError(f"step must be between 1 and {m}, got {step}")
    d = trace.as_dict()
    cols = {
        "step k": d["step k"],
        "εₖ asked": d["eps_k (asked)"],
        "rₖ granted": d["r_k (granted)"],
        "saturated": d["saturated"],
        "cap τₖ": d["tau_k = (||r||_2^2+8)/||r||_1"],
        "‖r‖₁": d["||r||_1"],
        "‖r‖₂²": d["||r||_2^2"],
        "f(r₁..rₖ)": d["f(r_1..k)"],
    }
    return {k: np.asarray(v)[:step][::-1] for k, v in cols.items()}


def teaching_example() -> EpsilonProfile:
    """A 50-user example in the spirit of the paper's figure of r against eps: 47 levels, 0.2 to 8
    (geometric, rounded to 2 decimals) and 3 public users; users 25..50 (26 users, public ones
    included) saturate at tau* = 1.3246."""
    lv = np.round(np.exp(np.linspace(math.log(0.2), math.log(8.0), 47)), 2)
    return EpsilonProfile.from_values(np.concatenate([lv, [math.inf] * 3]))


# the page's cards and sentences (issue 20: moved out of pages/saturation.py) ----------------
def level_text(x: float) -> str:
    """A level as the Saturation page shows it: 4 significant digits, 'public (∞)' for inf."""
    return short_eps(x, public="public (∞)")


def free_privacy_metrics(fp: FreePrivacy) -> list[Metric]:
    """The four cards: tau* ('none' when nobody is capped), users capped and their share,
    the median level they asked for (and the smallest), and what they get (tau*) with the
    median capped user's gain; '—' for the last two when nobody is capped."""
    if math.isfinite(fp.tau):
        tau = Metric(
            "Saturation level tau*",
            f"{fp.tau:.4g}",
            "Every user who asked for eps ≥ tau* is granted exactly tau*: more privacy than "
            "they asked for (smaller eps = more privacy), at no cost in accuracy.",
        )
    else:
        tau = Metric(
            "Saturation level tau*",
            "none",
            "Nobody is capped: the levels are close enough that weights proportional to eps "
            "are optimal, so every user gets exactly what they asked for.",
        )
    capped = Metric(
        "Users capped at tau*",
        f"{fp.n_saturated:,}",
        "Saturated users: they asked for a looser level than tau* and get tau*.",
        f"{100 * fp.saturated_share:.3g}% of users",
        "off",
    )
    if not fp.n_saturated:
        return [
            tau,
            capped,
            Metric("They asked for (median)", "—", "No user is capped."),
            Metric("They get", "—", "No user is capped."),
        ]
    gain = "∞ (public → tau*)" if math.isinf(fp.gain) else f"{fp.gain:.3g}×"
    return [
        tau,
        capped,
        Metric(
            "They asked for (median)",
            level_text(fp.requested_median),
            "The median privacy level the capped users asked for "
            "('public' = they asked for no privacy at all).",
            f"smallest {level_text(fp.requested_min)}",
            "off",
        ),
        Metric(
            "They get",
            f"{fp.tau:.4g}",
            "What the median capped user gets: tau*, this many times smaller "
            "(stricter) than what they asked for, for free.",
            f"{gain} stricter",
            "off",
        ),
    ]


def phase_seed(point: Any, n_users: int) -> tuple[int, float, float]:
    """(n, f, eps1) the phase diagram's controls start from: the current two-group profile's
    point (f rounded to 0.01 within [0.01, 1], eps1 within [1e-6, 1e6]), else (n, 0.5, 0.1)."""
    if point is None:
        return int(max(n_users, 1)), 0.5, 0.1
    return (
        int(point.n),
        float(min(max(round(point.frac, 2), 0.01), 1.0)),
        float(min(max(point.eps1, 1e-6), 1e6)),
    )


def phase_point_text(point: Any) -> str:
    """Where the current two-group profile sits against its own boundary (markdown)."""
    pub = math.isinf(point.eps2)
    return (
        f"The current profile has two groups: {100 * point.frac:.3g}% of {point.n:,} users "
        f"at eps1 = {point.eps1:.4g} and the rest at eps2 = {level_text(point.eps2)}; its own "
        f"boundary is {point.threshold:.4g}, so it is **"
        + ("saturated" if point.saturated else "unsaturated")
        + "**"
        + (" (public users always saturate)." if pub else ".")
    )


def clamp_step(step: int, top: int) -> int:
    """A walk-through step kept within 1..top."""
    return int(min(max(int(step), 1), top))
