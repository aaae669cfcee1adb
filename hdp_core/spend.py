"""Spend arithmetic: the exact fraction of every user's level one release spends, and the levels
it runs at. Shared by the release, the ledger (hdp_release) and the "k releases" planning of
hdp_core.intervals; exact (fractions.Fraction), so ten spends of 0.1 add to exactly 1."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

from hdp_core.errors import ReleaseError

__all__ = ["as_spend", "spend_factor", "spend_levels"]


def as_spend(spend: Any) -> Fraction:
    """The exact fraction of every user's level a release spends, in (0, 1]: a float is read
    as the decimal it prints as (0.1 is 1/10), text as a decimal or 'p/q'. Raises
    ReleaseError for anything else."""
    try:
        if isinstance(spend, bool):
            raise TypeError
        if isinstance(spend, float):
            if not math.isfinite(spend):
                raise ValueError
            s = Fraction(repr(float(spend)))
        elif isinstance(spend, str):
            if "_" in spend:  # Fraction reads '1_0' as 10; the app's number reader does not
                raise ValueError
            s = Fraction(spend.strip())
        elif isinstance(spend, (int, np.integer)):
            s = Fraction(int(spend))
        elif isinstance(spend, (Fraction, Decimal)):
            s = Fraction(spend)
        elif isinstance(spend, np.floating):
            return as_spend(float(spend))
        else:
            raise TypeError
    except (TypeError, ValueError, ZeroDivisionError):
        raise ReleaseError(
            f"the spend must be a number in (0, 1] (a fraction of every user's level), got "
            f"{str(spend)[:40]!r}"
        ) from None
    if not 0 < s <= 1:
        raise ReleaseError(
            f"the spend must be in (0, 1] (a fraction of every user's level), got {float(s):g}"
        )
    return s


def spend_factor(spend: Any) -> float:
    """A float f with fl(eps x f) <= spend x eps exactly for every level eps >= 1e-300 (and f
    = spend when spend is a power of two, e.g. 1: then eps x f is exact). The release runs
    at levels eps x f; OpenDP's map then checks each loss <= eps x f <= spend x eps."""
    s = as_spend(spend)
    f = float(s)
    if Fraction(f) == s and s.numerator == 1 and s.denominator & (s.denominator - 1) == 0:
        return f  # a power of two: products are exact
    if Fraction(f) > s:
        f = math.nextafter(f, 0.0)
    # one step further down: f <= s (1 - 2^-53), so the rounded product stays below s x eps
    return math.nextafter(f, 0.0)


def spend_levels(levels: Any, spend: Any) -> np.ndarray:
    """The levels a release at ``spend`` runs at: eps x spend_factor(spend) (0 stays 0,
    public inf stays inf), each at most spend x eps exactly. Vectorised."""
    return np.asarray(levels, dtype=float) * spend_factor(spend)
