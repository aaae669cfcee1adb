"""Noise and privacy map: OpenDP's Laplace measurement on the integer grid, its noise scale
b = R (1 + kappa) / ||r||_1 (Theorem 2), and the receipt's per-level privacy losses (OpenDP's
map, fail closed)."""

from __future__ import annotations

import math
from fractions import Fraction

from hdp_core.errors import ReleaseError
from hdp_release.plan import Row


# ------------------------------------------------------------------------------ noise
def measurement(scale: float):
    """OpenDP's Laplace measurement on one float (absolute distance) at ``scale``."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp.m.make_laplace(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale
    )


def noise_scale(width: Fraction, s1: Fraction, kappa: float) -> float:
    """Laplace scale in data units, R (1 + kappa) / ||r||_1, rounded up."""
    return math.nextafter(float(width * (1 + Fraction(kappa)) / s1), math.inf)


def up(x: float) -> float:
    return math.nextafter(x, math.inf)


def receipt(rows: list[Row], meas, width: Fraction, s1: Fraction, delta: float):
    """Privacy check, failing closed: OpenDP's map at each row's sensitivity must not exceed
    the row's requested eps. Returns the receipt columns; raises ReleaseError naming the row."""
    loss, loss_max = [], []
    seen: dict[float, float] = {}  # one map call per distinct grant (saturated rows share tau*)
    for row in rows:
        out = []
        for r in (row.r_min, row.r_max):
            if r not in seen:
                d_in = up(up(float(Fraction(r) * width / s1)) + 2.0 * delta)
                seen[r] = float(meas.map(d_in))
            out.append(seen[r])
        if not (out[0] <= row.eps and out[1] <= row.eps_max):
            lvl = "public (inf)" if math.isinf(row.eps) else f"{row.eps:.6g}"
            raise ReleaseError(
                f"privacy check failed for the level eps = {lvl} ({row.users:,} users): "
                f"OpenDP's privacy map gives a loss of {out[0]:.6g} > {lvl}; nothing was "
                "released"
            )
        loss.append(out[0])
        loss_max.append(out[1])
    return loss, loss_max


def _requested(run: float, factor: float) -> float:
    """The requested level behind a run level (run = fl(eps x factor)): run / factor, the
    level itself when factor is 1."""
    return run if factor == 1.0 else run / factor


def frame(rows: list[Row], loss, loss_max, factor: float = 1.0):
    """The receipt: per row the requested levels (eps, eps_max), the levels the release ran
    at (run_eps = eps x factor, what OpenDP's check bounds), users, granted levels and
    OpenDP's privacy loss."""
    import pandas as pd

    return pd.DataFrame(
        {
            "eps": [_requested(r.eps, factor) for r in rows],
            "eps_max": [_requested(r.eps_max, factor) for r in rows],
            "run_eps": [r.eps for r in rows],
            "run_eps_max": [r.eps_max for r in rows],
            "users": [r.users for r in rows],
            "granted_eps": [r.r_min for r in rows],
            "granted_eps_max": [r.r_max for r in rows],
            "privacy_loss": loss,
            "privacy_loss_max": loss_max,
            "saturated": [r.saturated for r in rows],
        }
    )


def extra_width(lo: float, hi: float, delta: float) -> float:
    """Added to every half-width (data units): the rounding of the value handed to the noise
    (at most delta) and of adding lo afterwards (half an ulp of the largest |value|)."""
    return 2.0 * delta + math.ulp(max(abs(lo), abs(hi)))
