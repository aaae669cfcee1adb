"""A real private release of a mean under per-user privacy levels (ADPM, Algorithm 1).

``release_mean(source, value=..., eps=..., lo=..., hi=...)`` reads one row per user (a value
and the privacy level eps that user asked for), clamps the values to the public range
[lo, hi] (by design: the range must be fixed before seeing the data; out-of-range values are
not an error) and releases

    lo + R * sum_i w_i y_i / Q + Laplace(b),   R = hi - lo,

with ADPM's weights w_i = r_i / ||r||_1, r_i = min(eps_i, tau*) (the saturation lemma), and
b = R (1 + kappa) / ||r||_1 (Theorem 2's noise, inflated by a tiny documented kappa, below).
User i's privacy loss is w_i R / b <= r_i <= eps_i (the appendix's Laplace-mechanism lemma).
When ADPM's worst case passes 1/4 of the squared range the answer is the mid-range, which uses
no data (as the paper's ADPM outputs 0 on [-1/2, 1/2]).

How it is computed (the plan; see hdp_core.release_engines for the queries):

* **Fast plan (DuckDB).** The levels of the first 50,000 rows (and the row count, from Parquet
  metadata) steer the plan; they never enter the answer. Few distinct levels (<= 32): one scan
  grouped by which of those levels a row has (a small-integer key, a perfect hash table)
  gives per level the users and the exact integer sum of the clamped values; a row with any
  other level, a bad level or a missing/NaN/infinite value (a NULL grid value, counted in the
  same scan) sends the release to the general plan below. Many levels: a bracket [a, b) for
  tau* is estimated from the sample (G scaled by rows / sample, slack 5% + 5/sqrt(sample
  levels below tau*)); one scan groups the rows into the levels below a (one class, exact
  sums of q and q y), 256 equal sub-bins of [a, b) (the same sums, min and max level), the
  finite levels from b (one class, users and sum of y only: saturated), public and zero
  levels. The exact walk below then runs on these groups; if tau* is not inside the bracket
  (the walk stops inside, or passes, a class) the general plan runs instead, so the sample
  only costs time, never correctness. When tau* falls inside a sub-bin of several levels, it
  is isolated as in the general plan (below). Memory: a few hundred groups. Every data sum is
  the same exact integer as in the general plan, so both plans give the same release.
* General plan (Spark, and DuckDB's fallback): one grouped aggregate in the engine (never
  a Python loop over rows) groups users by their level's bin (bins of relative width
  e^(1/64), about 1.6%) and returns per bin the users, eps sums and exact integer sums of
  the clamped values on a grid of 2^30 steps.
  Its memory is the number of non-empty bins, which does not grow with the rows.
* **Few levels** (every bin holds one distinct level): the bins are the tiers; tau* and the
  weights come from ``hdp.adpm`` on ``EpsilonProfile.from_tiers(levels, counts)``. One pass.
* **Per-user continuous levels**: tau* is found by walking the bins with the exact G function
  of the saturation lemma (G(t) = sum_{eps < t} eps (t - eps) crosses 8 at tau*): a bin whose
  smallest level already has G >= 8 starts the saturated users; the one bin in which G crosses
  8 is isolated: if it holds at most FETCH_USERS (65,536) users, one more query restricted to
  its level range fetches its distinct levels; otherwise one such query splits it into 256
  equal sub-bins with the same sums, and the walk goes on (each split narrows the range
  256-fold, so a few passes suffice; at most MAX_PASSES). Users below it are summed per bin,
  users above it only counted. Levels are taken on a grid of 2^-42 (rounded down, capped at
  2^20 nats) so that sum_i r_i y_i is an exact integer sum; granted privacy only shrinks.
  Memory: the bins plus at most 65,536 fetched levels, whatever the number of rows.

Rounding. Every data-dependent sum is an exact integer sum; the weighted mean is formed in
exact rational arithmetic (fractions.Fraction) from the engine's integers and the weights'
floats, and rounded to a float once. So the value handed to the noise differs from the exact
function of the data by at most delta = 2^-52 max(|lo|, |hi|) for *every* data set, and its
sensitivity to user i is at most w_i R + 2 delta. That bound is added to every level's
sensitivity in the privacy check; the noise is inflated by kappa = 2 c / r_min + 2^-40 with
c = 2 delta ||r||_1 / R so that the check passes with the ADPM weights (kappa is reported).

Noise and privacy check (fail closed). The noise is OpenDP's Laplace measurement (make_laplace
over a float atom domain with absolute distance; its floating-point-safe sampler). For every
row of the receipt OpenDP's privacy map of that measurement at the sensitivity of one user of
that row (w R + 2 delta) must not exceed the row's requested eps; otherwise a ReleaseError names
the level and nothing is released. A receipt row is one level (few levels) or, for per-user
levels, an interval of levels: 1/8 decade of unsaturated levels, all saturated finite levels,
public users. loss(eps) - eps is nonincreasing in eps (loss is a / (1 + kappa) times
min(eps, tau*) plus a constant, slope below 1), so the check at a row's smallest level covers
every level in it.

What is released: the noisy estimate, and public things (the range, the levels and their user
counts, tau*, the noise law, a 95% interval from the noise law and the worst-case or declared
spread). Nothing else is computed from the data; in particular not how many values were
clamped. eps = 0 users are excluded; eps = inf users are public (used as saturated users).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .adpm import adpm
from .profile import EpsilonProfile
from .release_engines import (
    FETCH_USERS,
    MAX_TIERS,
    PUBLIC_BIN,
    Q_CAP,
    QE,
    SUB_BINS,
    ZERO_BIN,
    Histogram,
    Q,
    ReleaseError,
    not_a_number,
    open_source,
)
from .units import affine_error
from .validate import PUBLIC_WORDS, parse_level

__all__ = [
    "Release",
    "ReleaseError",
    "TierPreview",
    "check_values",
    "level_counts",
    "preview_tiers",
    "release_mean",
    "tier_levels",
    "tier_names_of",
]

_U = 2.0**-52
_SAT = 1.0 - 1e-12  # as hdp_core.adpm: a level exactly at the threshold counts as saturated
LEVEL = 0.95


@dataclass(frozen=True)
class Release:
    """One private release of a mean and its privacy receipt.

    ``estimate`` and ``ci95`` are in the data's units; ``noise_scale`` is the Laplace scale in
    the data's units; ``saturation_level`` is tau* (math.inf if nothing saturates); ``tiers``
    is the receipt (a pandas DataFrame, one row per level or level bin: requested eps, users,
    granted eps, OpenDP's privacy loss); ``n_users`` counts the users whose data is used.
    """

    estimate: float
    ci95: tuple[float, float]
    noise_scale: float
    saturation_level: float
    n_users: int
    tiers: Any
    engine: str
    lo: float
    hi: float
    data_sd: float | None
    half_width95: float
    n_excluded: int
    n_public: int
    outputs_midrange: bool
    plan: str
    rounding_bound: float
    noise_inflation: float
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (inf as the string 'inf')."""

        def num(x):
            if isinstance(x, (float, np.floating)) and not math.isfinite(x):
                return "inf" if x > 0 else "-inf"
            if isinstance(x, np.integer):
                return int(x)
            if isinstance(x, np.floating):
                return float(x)
            return x

        rows = [{k: num(v) for k, v in r.items()} for r in self.tiers.to_dict("records")]
        return {
            "estimate": self.estimate,
            "ci95": list(self.ci95),
            "half_width95": self.half_width95,
            "noise_scale": self.noise_scale,
            "saturation_level": num(self.saturation_level),
            "n_users": self.n_users,
            "n_excluded": self.n_excluded,
            "n_public": self.n_public,
            "engine": self.engine,
            "range": [self.lo, self.hi],
            "data_sd": self.data_sd,
            "outputs_midrange": self.outputs_midrange,
            "plan": self.plan,
            "rounding_bound": self.rounding_bound,
            "noise_inflation": self.noise_inflation,
            "tiers": rows,
            "notes": list(self.notes),
        }

    def text(self) -> str:
        """A plain-text report: the estimate, its 95% interval and the receipt."""
        import pandas as pd

        tau = "none" if math.isinf(self.saturation_level) else f"{self.saturation_level:.6g}"
        lines = [
            f"private mean: {self.estimate:.6g}   95% interval: [{self.ci95[0]:.6g}, "
            f"{self.ci95[1]:.6g}] (±{self.half_width95:.4g})",
            f"users used: {self.n_users:,} (public {self.n_public:,}; excluded eps=0: "
            f"{self.n_excluded:,})   range: [{self.lo:g}, {self.hi:g}]   engine: {self.engine}",
            f"Laplace noise scale: {self.noise_scale:.6g} (data units)   tau*: {tau}   "
            f"plan: {self.plan}",
        ]
        lines += list(self.notes)
        lines.append("privacy receipt (loss = OpenDP's privacy map at one user's sensitivity):")
        with pd.option_context("display.width", 200, "display.max_rows", 60):
            lines.append(self.tiers.to_string(index=False))
        return "\n".join(lines)


# ------------------------------------------------------------------------------ checks
def _check_range(lo: Any, hi: Any) -> tuple[float, float]:
    try:
        lo_f, hi_f = float(lo), float(hi)
    except (TypeError, ValueError):
        raise ReleaseError(f"the range needs two numbers lo < hi, got {lo!r}, {hi!r}") from None
    if not (math.isfinite(lo_f) and math.isfinite(hi_f)):
        raise ReleaseError(f"the range [{lo_f:g}, {hi_f:g}] must be finite")
    if not lo_f < hi_f:
        raise ReleaseError(f"the range needs lo < hi, got lo = {lo_f:g}, hi = {hi_f:g}")
    if not math.isfinite(hi_f - lo_f):
        raise ReleaseError("the range is too wide for floating point")
    return lo_f, hi_f


def _check_sd(data_sd: Any, lo: float, hi: float) -> float | None:
    """data_sd in data units -> spread on [-1/2, 1/2] (None: worst case, the paper's ADPM)."""
    if data_sd is None:
        return None
    try:
        s = float(data_sd)
    except (TypeError, ValueError):
        raise ReleaseError(
            f"data_sd must be a number (a standard deviation), got {data_sd!r}"
        ) from None
    if not (math.isfinite(s) and s > 0):
        raise ReleaseError(f"data_sd must be a positive number, got {s:g}")
    sn = s / (hi - lo)
    if sn > 0.5:
        raise ReleaseError(
            f"data_sd = {s:g} exceeds half the range ({(hi - lo) / 2:g}), "
            "the largest spread data in the range can have"
        )
    return sn


def _const(sd_norm: float | None) -> float:
    """The constant of Algorithm 1: 8 (the paper), or 2 / s^2 for a declared spread s."""
    return 8.0 if sd_norm is None else 2.0 / (sd_norm * sd_norm)


def _tiers_solution(levels: np.ndarray, counts: np.ndarray, sd_norm: float | None):
    """r per tier and tau* from hdp_core's ADPM on the tiers profile (the tuned variant
    ``hdp.adpm(prof, data_sd=s)`` when a spread is declared)."""
    sol = adpm(EpsilonProfile.from_tiers(levels, counts), data_sd=sd_norm)
    return np.asarray(sol.r, dtype=float), float(sol.saturation_level)


def _walk(lo_l, hi_l, s1, s2, c: float):
    """First saturated entry of ascending entries (level range [lo_l, hi_l], sums s1, s2 of
    their levels): returns (j, kind, P1, P2) with kind 'at' (entry j's smallest level has
    G >= c: it and everything after saturate), 'inside' (G crosses c inside entry j: fetch
    its levels), or 'none'; P1, P2 the sums over entries before j. G(t) = sum_{eps<t} eps
    (t - eps) is built from nonnegative increments (as in hdp_core.adpm)."""
    g = p1 = p2 = 0.0
    prev = None
    for j in range(len(lo_l)):
        if prev is not None:
            g += (lo_l[j] - prev) * p1
        if g >= c * _SAT:
            return j, "at", p1, p2
        if hi_l[j] > lo_l[j]:
            gh = g + (hi_l[j] - lo_l[j]) * p1 + max(hi_l[j] * s1[j] - s2[j], 0.0)
            if gh >= c * _SAT:
                return j, "inside", p1, p2
            g, prev = gh, hi_l[j]
        else:
            prev = lo_l[j]
        p1 += s1[j]
        p2 += s2[j]
    return len(lo_l), "none", p1, p2


# ------------------------------------------------------------------------------ plans
@dataclass
class _Row:
    eps: float  # smallest requested level in the row
    eps_max: float
    users: int
    r_min: float  # granted level of the row's smallest level
    r_max: float
    w_num: Fraction  # contribution to sum_i r_i y_i
    s1: Fraction  # contribution to ||r||_1
    s2: float  # contribution to ||r||_2^2
    saturated: bool


def _plan_tiers(h: Histogram, fin: np.ndarray, pub: np.ndarray, sd_norm):
    levels = np.concatenate([h.emin[fin], np.full(int(pub.sum()), math.inf)])
    counts = np.concatenate([h.n[fin], h.n[pub]])
    sy = [h.sy[i] for i in np.flatnonzero(fin)] + [h.sy[i] for i in np.flatnonzero(pub)]
    r, tau = _tiers_solution(levels, counts, sd_norm)
    rows = []
    for j in range(levels.size):
        rj = float(r[j])
        fr = Fraction(rj)
        rows.append(
            _Row(
                float(levels[j]),
                float(levels[j]),
                int(counts[j]),
                rj,
                rj,
                fr * sy[j],
                fr * int(counts[j]),
                rj * rj * float(counts[j]),
                bool(levels[j] >= tau),
            )
        )
    return rows, tau


MAX_PASSES = 64
"""At most this many passes over the table isolate tau* (each refinement narrows a bin's level
range 256-fold; a handful suffice for any table of doubles)."""


def _qlevel(e: float) -> float:
    return math.floor(min(e, Q_CAP) * QE) / QE


def _entry(
    emin: Any,
    emax: Any,
    users: Any,
    sq: int,
    sqy: int,
    q2: Any,
    sy: int,
    key: int | None = None,
    q: int | None = None,
) -> list[Any]:
    """One entry of the walk: users with levels in [emin, emax] and their exact sums (``q``:
    the group's one quantized level, when it is a single fetched level; ``key``: its bin)."""
    qmin, qmax = (q / QE, q / QE) if q is not None else (_qlevel(emin), _qlevel(emax))
    return [float(emin), float(emax), int(users), qmin, qmax, sq, sqy, float(q2), sy, key]


def _plan_bins(h: Histogram, src, fin: np.ndarray, pub: np.ndarray, c: float):
    # entries: (eps_min, eps_max, users, qmin, qmax, sq (int), sqy (int), q2, sy, bin or None)
    ent = [
        _entry(h.emin[i], h.emax[i], h.n[i], h.sq[i], h.sqy[i], h.q2[i], h.sy[i], int(h.bin[i]))
        for i in np.flatnonzero(fin)
    ]
    passes = 1
    while True:
        j, kind, p1, p2 = _walk(
            [e[3] for e in ent],
            [e[4] for e in ent],
            [e[5] / QE for e in ent],
            [e[7] for e in ent],
            c,
        )
        if h.coarse and (
            (kind == "inside" and ent[j][9] in h.coarse)
            or (kind == "none" and any(e[9] in h.coarse and e[9] != 0 for e in ent))
        ):
            raise _BracketMissed  # tau* is not inside the fast plan's bracket
        if kind != "inside":
            break
        passes += 1
        if passes > MAX_PASSES:
            raise ReleaseError(
                f"tau* could not be isolated in {MAX_PASSES} passes over the table (levels "
                "too close together); round the eps column"
            )
        if ent[j][2] > FETCH_USERS:  # too many users to fetch level by level: refine the bin
            ent[j : j + 1] = [
                _entry(r[6], r[7], r[1], int(r[3]), int(r[4]), r[5], int(r[2] or 0))
                for r in src.refine(ent[j][0], ent[j][1], SUB_BINS)
            ]
            continue
        q, n, sy, emn, emx = src.fetch(ent[j][0], ent[j][1])
        ent[j : j + 1] = [
            _entry(
                emn[k],
                emx[k],
                n[k],
                int(q[k]) * int(n[k]),
                int(q[k]) * sy[k],
                (int(q[k]) / QE) * (int(q[k]) / QE) * float(n[k]),
                sy[k],
                q=int(q[k]),
            )
            for k in range(q.size)
        ]
    has_public = bool(pub.any())
    tau = (p2 + c) / p1 if (kind == "at" or has_public) else math.inf
    ftau = Fraction(tau) if math.isfinite(tau) else None
    rows = []
    for k, e in enumerate(ent):
        if k < j:
            rows.append(
                _Row(
                    e[0],
                    e[1],
                    e[2],
                    e[3],
                    e[4],
                    Fraction(e[6], QE),
                    Fraction(e[5], QE),
                    e[7],
                    False,
                )
            )
        else:  # saturated entries exist only when tau* is finite
            assert ftau is not None
            rows.append(
                _Row(e[0], e[1], e[2], tau, tau, ftau * e[8], ftau * e[2], tau * tau * e[2], True)
            )
    for i in np.flatnonzero(pub):
        assert ftau is not None  # public users make tau* finite
        rows.append(
            _Row(
                math.inf,
                math.inf,
                int(h.n[i]),
                tau,
                tau,
                ftau * h.sy[i],
                ftau * int(h.n[i]),
                tau * tau * float(h.n[i]),
                True,
            )
        )
    return _merge_rows(rows), tau, passes


RECEIPT_ROWS_PER_DECADE = 8


def _merge_rows(rows: list[_Row]) -> list[_Row]:
    """The per-user-levels receipt: the unsaturated bins merged into rows of 1/8 decade of
    requested eps, the saturated finite levels into one row (all granted tau*), public users
    into one row. The privacy check at a merged row's smallest level still covers every level
    in it: loss(eps) - eps is nonincreasing in eps over the whole range (module docstring),
    so the smallest level of any interval is its tightest. Fewer rows: a receipt a person can
    read, and one OpenDP map call per row instead of per bin."""

    def group(r: _Row) -> tuple[int, float]:
        if math.isinf(r.eps):
            return (2, 0.0)
        if r.saturated:
            return (1, 0.0)
        return (0, math.floor(math.log10(r.eps) * RECEIPT_ROWS_PER_DECADE))

    out: list[_Row] = []
    last = None
    for r in rows:
        g = group(r)
        if out and g == last:
            m = out[-1]
            out[-1] = _Row(
                min(m.eps, r.eps),
                max(m.eps_max, r.eps_max),
                m.users + r.users,
                min(m.r_min, r.r_min),
                max(m.r_max, r.r_max),
                m.w_num + r.w_num,
                m.s1 + r.s1,
                m.s2 + r.s2,
                m.saturated,
            )
        else:
            out.append(r)
        last = g
    return out


# ------------------------------------------------------------------------------ noise
def _measurement(scale: float):
    """OpenDP's Laplace measurement on one float (absolute distance) at ``scale``."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale
    )


def _noise_scale(width: Fraction, s1: Fraction, kappa: float) -> float:
    """Laplace scale in data units, R (1 + kappa) / ||r||_1, rounded up."""
    return math.nextafter(float(width * (1 + Fraction(kappa)) / s1), math.inf)


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def _receipt(rows: list[_Row], meas, width: Fraction, s1: Fraction, delta: float):
    """Privacy check, failing closed: OpenDP's map at each row's sensitivity must not exceed
    the row's requested eps. Returns the receipt columns; raises ReleaseError naming the row."""
    loss, loss_max = [], []
    for row in rows:
        out = []
        for r in (row.r_min, row.r_max):
            d_in = _up(_up(float(Fraction(r) * width / s1)) + 2.0 * delta)
            out.append(float(meas.map(d_in)))
        if not out[0] <= row.eps:
            lvl = "public (inf)" if math.isinf(row.eps) else f"{row.eps:.6g}"
            raise ReleaseError(
                f"privacy check failed for the level eps = {lvl} ({row.users:,} users): "
                f"OpenDP's privacy map gives a loss of {out[0]:.6g} > {lvl}; nothing was "
                "released"
            )
        loss.append(out[0])
        loss_max.append(out[1])
    return loss, loss_max


def _frame(rows: list[_Row], loss, loss_max):
    import pandas as pd

    return pd.DataFrame(
        {
            "eps": [r.eps for r in rows],
            "eps_max": [r.eps_max for r in rows],
            "users": [r.users for r in rows],
            "granted_eps": [r.r_min for r in rows],
            "granted_eps_max": [r.r_max for r in rows],
            "privacy_loss": loss,
            "privacy_loss_max": loss_max,
            "saturated": [r.saturated for r in rows],
        }
    )


# ------------------------------------------------------------------------------ main entry
def release_mean(
    source: Any,
    *,
    value: str,
    eps: str,
    lo: float,
    hi: float,
    engine: str = "duckdb",
    data_sd: float | None = None,
    tiers: Any = None,
) -> Release:
    """Release the mean of ``value`` (clamped to [lo, hi]) under each row's privacy level.

    ``source``: a CSV or Parquet path (or a glob of many), a pandas DataFrame, or (with
    ``engine="spark"``) a Spark DataFrame; one row is one user. ``eps`` names the privacy-level
    column (numbers >= 0; 'inf'/'public' for public rows; 0 = not used). ``data_sd``: a
    declared, public standard deviation of the data in its units (never estimated from the
    data), tuning ADPM (Algorithm 1 with 8 replaced by 2/s^2 on [-1/2, 1/2]); None is the
    paper's worst case. ``tiers``: a Tier designer menu (hdp_core.design.Menu) or a mapping
    of tier names to levels; an eps cell holding a tier's name (case and spaces ignored) then
    takes that tier's level. Returns a :class:`Release`; raises :class:`ReleaseError` (a
    ValueError) naming the column, row or level for any bad input, and then releases nothing.
    """
    lo_f, hi_f = _check_range(lo, hi)
    sd_norm = _check_sd(data_sd, lo_f, hi_f)
    c = _const(sd_norm)
    src, vcol, ecol = open_source(source, value, eps, engine, tier_levels(tiers))
    if vcol == ecol:
        src.close()
        raise ReleaseError(
            f"the value column and the eps column are the same column ({vcol!r}); the "
            "privacy levels must be a column of their own"
        )
    try:
        h, passes, plan = _fast_histogram(src, vcol, ecol, lo_f, hi_f, c, engine)
        if h is None:
            h = src.histogram(vcol, ecol, lo_f, hi_f)
            passes += 1
        if h.n_rows == 0:
            raise ReleaseError("the table is empty: no users, nothing to release")
        if h.n_bad_eps:
            row, v = src.first_bad("eps")
            where = f"row {row}" if row else "a row"
            raise ReleaseError(
                f"eps column {eps!r}, {where}: {_show(v)}; privacy levels must be "
                f"numbers >= 0 (inf = public) ({_such_rows(h.n_bad_eps)})"
            )
        if h.n_bad_value:
            row, _ = src.first_bad("value")
            raise ReleaseError(_bad_value_message(value, row, h.n_bad_value))
        zero = h.bin == ZERO_BIN
        pub = h.bin == PUBLIC_BIN
        fin = ~zero & ~pub
        n_excluded = int(h.n[zero].sum())
        n_public = int(h.n[pub].sum())
        n_used = int(h.n[fin].sum()) + n_public
        if n_used == 0:
            raise ReleaseError(
                f"no usable user: all {n_excluded:,} rows have eps = 0 (data not to be used)"
            )
        if n_public == n_used:
            rel = _all_public(h, pub, lo_f, hi_f, engine, n_excluded)
            return rel
        if bool((h.emin[fin] == h.emax[fin]).all()):
            rows, tau = _plan_tiers(h, fin, pub, sd_norm)
            kind = "tiers"
        else:
            try:
                rows, tau, more = _plan_bins(h, src, fin, pub, c)
            except _BracketMissed:  # the sample misled the bracket: the general plan
                h = src.histogram(vcol, ecol, lo_f, hi_f)
                fin = (h.bin != ZERO_BIN) & (h.bin != PUBLIC_BIN)
                pub = h.bin == PUBLIC_BIN
                rows, tau, more = _plan_bins(h, src, fin, pub, c)
                passes += 1
                plan += ", bracket missed"
            passes += more - 1
            kind = "level bins"
    finally:
        src.close()
    detail = f"{passes} aggregate pass{'es' if passes > 1 else ''}" + (f"; {plan}" if plan else "")
    return _finish(
        rows,
        tau,
        lo_f,
        hi_f,
        sd_norm,
        data_sd,
        engine,
        n_used,
        n_excluded,
        n_public,
        f"{kind} ({detail})",
    )


class _BracketMissed(Exception):
    """The fast plan's bracket does not contain tau* (the general plan is used)."""


def _bracket(sample: np.ndarray, n_rows: int, c: float) -> tuple[float, float] | None:
    """A bracket [a, b) for tau* from a sample of the levels: G estimated by the sample
    (scaled by n_rows / sample size) reaches c (1 - s) at a and c (1 + s) at b, with a slack
    s = 0.05 + 5 / sqrt(sample levels below tau), at most 0.5. Only steers the plan: the
    bracket pass verifies it with the exact G (else the general plan runs)."""
    x = sample[np.isfinite(sample) & (sample > 0)]
    if x.size == 0 or n_rows <= 0:
        return None
    s = np.sort(x)
    f = n_rows / sample.size
    p1, p2 = np.cumsum(s), np.cumsum(s * s)
    nxt = np.append(s[1:], np.inf)

    def t_at(target: float) -> tuple[float, int]:
        t = (p2 + target / f) / p1
        k = int(np.argmax(t <= nxt))
        return float(t[k]), k + 1

    _, k0 = t_at(c)
    slack = min(0.5, 0.05 + 5.0 / math.sqrt(k0))
    a, b = t_at(c * (1 - slack))[0], t_at(c * (1 + slack))[0]
    return (a, b) if 0 < a < b < Q_CAP else None


def _fast_histogram(src, vcol: str, ecol: str, lo: float, hi: float, c: float, engine: str):
    """DuckDB's fast plan (see the module docstring): (Histogram or None, full passes made,
    note). None means the general plan must run (bad input, or the sample missed levels)."""
    if engine != "duckdb":
        return None, 0, ""
    src._prepare(vcol, ecol, lo, hi)
    sample, n_rows = src.sample_levels()
    if n_rows == 0 or bool((np.isnan(sample) | (sample < 0)).any()):
        return None, 0, ""
    distinct, counts = np.unique(sample, return_counts=True)
    if distinct.size <= MAX_TIERS:
        distinct = distinct[np.argsort(-counts, kind="stable")]  # common levels tested first
        h = src.fast_tiers(distinct)
        return h, 1, ("" if h is not None else "fast tiers pass missed levels")
    br = _bracket(sample, n_rows, c)
    if br is None:
        return None, 0, ""
    fin = sample[np.isfinite(sample)]
    above_first = bool((fin >= br[1]).sum() > (fin < br[0]).sum())
    h = src.fast_bracket(br[0], br[1], SUB_BINS, above_first)
    return h, 1, ("" if h is not None else "fast bracket pass found bad input")


def _such_rows(n: int) -> str:
    return f"{n:,} such row{'' if n == 1 else 's'}"


def _bad_value_message(value: str, row: int, n_bad: int) -> str:
    where = f"row {row}" if row else "a row"
    return (
        f"value column {value!r}, {where}: missing, NaN or infinite; every value must be a "
        f"finite number ({_such_rows(n_bad)})"
    )


def _column_floats(
    df: Any, column: str, role: str, names: dict[str, float], numeric_kinds: str
) -> np.ndarray:
    """The cells of a pandas column as floats, read as the engines read them (NaN for an empty
    cell): a column of ``numeric_kinds`` as it is; text trimmed, as a number or, for the eps
    column, a public word (inf) or one of ``names``' tier names. Raises ReleaseError naming the
    row (1-based) of a text cell that is none of these."""
    import pandas as pd

    if column not in df.columns:
        raise ReleaseError(f"the table has no {role} column {column!r}")
    col = df[column]
    if col.dtype.kind in numeric_kinds:
        return col.to_numpy(dtype=float, na_value=np.nan)
    txt = col.astype("string").str.strip()
    low = txt.str.lower()
    x = pd.to_numeric(txt, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if role == "eps":
        x = np.where(low.isin(sorted(PUBLIC_WORDS)).fillna(False).to_numpy(dtype=bool), np.inf, x)
        named = low.map(names).astype("Float64")
        x = np.where(
            named.notna().to_numpy(dtype=bool), named.to_numpy(dtype=float, na_value=np.nan), x
        )
    bad_txt = (
        np.isnan(x)
        & txt.notna().to_numpy(dtype=bool)
        & (txt != "").fillna(False).to_numpy(dtype=bool)
        & ~low.isin(["nan"]).fillna(False).to_numpy(dtype=bool)
    )
    if bad_txt.any():
        i = int(np.argmax(bad_txt))
        raise ReleaseError(not_a_number(role, column, f", row {i + 1}", col.iloc[i], names))
    return x


def check_values(df: Any, value: str) -> None:
    """Check column ``value`` of a pandas DataFrame as :func:`release_mean` would (for a
    preview, before anything is released): raises ReleaseError naming the first row (1-based)
    whose cell is text that is not a number, or missing, NaN or infinite."""
    x = _column_floats(df, value, "value", {}, "biuf")
    bad = ~np.isfinite(x)
    if bad.any():
        raise ReleaseError(_bad_value_message(value, int(np.argmax(bad)) + 1, int(bad.sum())))


def _show(v: Any) -> str:
    if v is None:
        return "empty"
    try:
        x = float(v)
    except (TypeError, ValueError):
        return repr(v)
    return "NaN" if math.isnan(x) else f"{x:g}"


def _finish(rows, tau, lo, hi, sd_norm, data_sd, engine, n_used, n_excluded, n_public, plan):
    width = Fraction(hi) - Fraction(lo)
    wf = float(width)
    delta = _U * max(abs(lo), abs(hi))
    notes = []
    s1 = sum((r.s1 for r in rows), Fraction(0))
    s2 = float(sum(r.s2 for r in rows))
    fs1 = float(s1)
    var = 0.25 if sd_norm is None else sd_norm * sd_norm
    objective = (var * s2 + 2.0) / (fs1 * fs1)
    if objective > 0.25:  # ADPM answers the mid-range: no data used, nothing to check
        mid = lo + 0.5 * (hi - lo)
        notes.append(
            "ADPM's worst case passes 1/4 of the squared range: the answer is the "
            "mid-range, which uses no data."
        )
        zeros = [0.0] * len(rows)
        return Release(
            mid,
            (lo, hi),
            0.0,
            tau,
            n_used,
            _frame(rows, zeros, zeros),
            engine,
            lo,
            hi,
            data_sd,
            0.5 * (hi - lo),
            n_excluded,
            n_public,
            True,
            plan,
            0.0,
            0.0,
            tuple(notes),
        )
    r_min = min(r.r_min for r in rows if r.users > 0)
    c_r = 2.0 * delta * fs1 / wf
    kappa = 2.0 * c_r / r_min + 2.0**-40
    scale = _noise_scale(width, s1, kappa)
    meas = _measurement(scale)
    loss, loss_max = _receipt(rows, meas, width, s1, delta)  # raises: nothing released
    w_num = sum((r.w_num for r in rows), Fraction(0))
    exact = Fraction(lo) + width * w_num / (s1 * Q)
    estimate = float(meas(float(exact)))
    err = affine_error(s2 / (fs1 * fs1), scale / wf, lo, hi, variance=var, level=LEVEL)
    h = err.half_width
    return Release(
        estimate,
        (estimate - h, estimate + h),
        scale,
        tau,
        n_used,
        _frame(rows, loss, loss_max),
        engine,
        lo,
        hi,
        data_sd,
        h,
        n_excluded,
        n_public,
        False,
        plan,
        delta,
        kappa,
        tuple(notes),
    )


def _all_public(h: Histogram, pub, lo, hi, engine, n_excluded) -> Release:
    """Every usable user is public (eps = inf): the plain mean of the clamped values, no
    noise (nobody asked for privacy)."""
    import pandas as pd

    n = int(h.n[pub].sum())
    sy = sum(h.sy[i] for i in np.flatnonzero(pub))
    width = Fraction(hi) - Fraction(lo)
    est = float(Fraction(lo) + width * Fraction(sy, n * Q))
    df = pd.DataFrame(
        {
            "eps": [math.inf],
            "eps_max": [math.inf],
            "users": [n],
            "granted_eps": [math.inf],
            "granted_eps_max": [math.inf],
            "privacy_loss": [math.inf],
            "privacy_loss_max": [math.inf],
            "saturated": [False],
        }
    )
    return Release(
        est,
        (est, est),
        0.0,
        math.inf,
        n,
        df,
        engine,
        lo,
        hi,
        None,
        0.0,
        n_excluded,
        n,
        False,
        "public only (1 aggregate pass)",
        0.0,
        0.0,
        ("Every usable user is public (eps = inf): the plain mean, no noise.",),
    )


# ------------------------------------------------------------------------------ preview
@dataclass(frozen=True)
class TierPreview:
    """What each level gets before releasing (public: from the levels and counts only)."""

    tiers: Any  # DataFrame: eps, users, granted_eps, weight_share
    saturation_level: float
    noise_scale: float  # data units
    half_width95: float  # data units
    outputs_midrange: bool


def preview_tiers(
    levels: Any, counts: Any, lo: float, hi: float, data_sd: float | None = None
) -> TierPreview:
    """ADPM's tiers and expected ±95% for levels and user counts on [lo, hi] (the same numbers
    as the Tier designer: hdp.adpm and hdp_core.units.affine_error). eps = 0 tiers get 0."""
    import pandas as pd

    lo_f, hi_f = _check_range(lo, hi)
    sd_norm = _check_sd(data_sd, lo_f, hi_f)
    lv = np.asarray(levels, dtype=float)
    ct = np.asarray(counts, dtype=np.int64)
    use = lv > 0
    if not (use & (ct > 0)).any():
        raise ReleaseError("no usable user: every level is 0 (data not to be used)")
    r, tau = _tiers_solution(lv[use], ct[use], sd_norm)
    rr = np.zeros(lv.size)
    rr[use] = r
    var = 0.25 if sd_norm is None else sd_norm * sd_norm
    if np.isinf(rr[use]).all():
        s1, ssq, b = float(ct[use].sum()), 1.0 / float(ct[use].sum()), 0.0
        share = np.where(use, ct / s1, 0.0)
        mid = False
    else:
        s1 = float(np.dot(rr, ct))
        ssq = float(np.dot(rr * rr, ct)) / (s1 * s1)
        b = 1.0 / s1
        share = rr * ct / s1
        mid = (var * ssq * s1 * s1 + 2.0) / (s1 * s1) > 0.25
    err = affine_error(ssq, b, lo_f, hi_f, variance=var, outputs_zero=mid)
    df = pd.DataFrame({"eps": lv, "users": ct, "granted_eps": rr, "weight_share": share})
    return TierPreview(df, tau, err.noise_scale, err.half_width, mid)


def _tier_pairs(tiers: Any) -> list[tuple[Any, Any]]:
    """(name, level) of each tier of a Tier designer menu or a mapping of names to levels."""
    if hasattr(tiers, "names") and hasattr(tiers, "levels"):
        return list(zip(tiers.names, (float(x) for x in tiers.levels), strict=True))
    if isinstance(tiers, Mapping):
        return list(tiers.items())
    raise ReleaseError(
        f"tiers must be a Tier designer menu or a mapping of names to levels, got "
        f"{type(tiers).__name__}"
    )


def tier_levels(tiers: Any) -> dict[str, float]:
    """Tier names (lower case, trimmed) -> privacy levels, from a Tier designer menu
    (hdp_core.design.Menu) or a mapping of names to levels (None: no names). Raises
    ReleaseError for a bad level or for two names that differ only in case or spaces."""
    if tiers is None:
        return {}
    out: dict[str, float] = {}
    for name, level in _tier_pairs(tiers):
        if not isinstance(name, str) or not name.strip():
            raise ReleaseError(f"a tier name must be non-empty text, got {name!r}")
        key = name.strip().lower()
        if key in out:
            raise ReleaseError(f"two tiers are both named {name.strip()!r} (ignoring case)")
        out[key] = parse_level(level, f"the level of tier {name.strip()!r}", error=ReleaseError)
    return out


def tier_names_of(levels: Any, tiers: Any) -> list[str]:
    """For each level, the names of the menu's tiers at that level (joined by ' / '; '' for a
    level not on the menu). ``tiers`` as in :func:`release_mean`."""
    if tiers is None:
        return ["" for _ in np.asarray(levels).ravel()]
    by_key = tier_levels(tiers)  # validated; keys lower case
    pairs = [(name.strip(), by_key[name.strip().lower()]) for name, _ in _tier_pairs(tiers)]
    return [
        " / ".join(n for n, level in pairs if level == x)
        for x in np.asarray(levels, dtype=float).ravel()
    ]


def level_counts(df: Any, eps: str, tiers: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct privacy levels of column ``eps`` of a pandas DataFrame and their user counts
    (public, like the levels themselves; for a preview). ``tiers`` as in :func:`release_mean`
    (tier names in the column take their tier's level). Raises ReleaseError naming the row
    (1-based) of the first bad level."""
    x = _column_floats(df, eps, "eps", tier_levels(tiers), "iufc")
    bad = np.isnan(x) | (x < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ReleaseError(
            f"eps column {eps!r}, row {i + 1}: {_show(x[i])}; privacy levels "
            "must be numbers >= 0 (inf = public)"
        )
    if x.size == 0:
        raise ReleaseError("the table is empty: no users, nothing to release")
    lv, ct = np.unique(x, return_counts=True)
    return lv, ct


# ------------------------------------------------------------------------------ CLI
def main(argv: list[str] | None = None) -> int:
    """``python -m hdp_core.release PATH --value COL --eps COL --range LO HI [--menu M.json]``."""
    ap = argparse.ArgumentParser(
        prog="python -m hdp_core.release",
        description="Release a private mean under per-user privacy "
        "levels (ADPM, OpenDP Laplace noise).",
    )
    ap.add_argument("path", help="CSV or Parquet file (or a quoted glob)")
    ap.add_argument("--value", required=True, help="column of the values")
    ap.add_argument("--eps", required=True, help="column of the privacy levels")
    ap.add_argument(
        "--range",
        nargs=2,
        type=float,
        default=None,
        metavar=("LO", "HI"),
        help="public data range; values outside are clamped (required unless --menu gives it)",
    )
    ap.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb")
    ap.add_argument(
        "--data-sd",
        type=float,
        default=None,
        help="declared (public) standard deviation of the data, in its units",
    )
    ap.add_argument(
        "--menu",
        default=None,
        metavar="MENU.json",
        help="a Tier designer menu (its JSON download): eps cells holding a tier's name take "
        "its level; its range and declared spread are used unless --range / --data-sd are given",
    )
    ap.add_argument("--format", choices=["text", "json"], default="text")
    a = ap.parse_args(argv)
    try:
        menu = None
        lo_hi, sd = a.range, a.data_sd
        if a.menu is not None:
            from .design_io import MAX_MENU_BYTES, menu_from_json
            from .errors import MenuError

            try:
                with open(a.menu, "rb") as f:
                    menu = menu_from_json(f.read(MAX_MENU_BYTES + 1))
            except (OSError, MenuError) as exc:
                raise ReleaseError(f"the menu file {a.menu!r} cannot be used: {exc}") from None
            lo_hi = lo_hi or (menu.low, menu.high)
            sd = sd if sd is not None else menu.data_sd
        if lo_hi is None:
            raise ReleaseError("the public range is missing: give --range LO HI (or --menu)")
        rel = release_mean(
            a.path,
            value=a.value,
            eps=a.eps,
            lo=lo_hi[0],
            hi=lo_hi[1],
            engine=a.engine,
            data_sd=sd,
            tiers=menu,
        )
    except ReleaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(rel.to_dict(), indent=2) if a.format == "json" else rel.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
