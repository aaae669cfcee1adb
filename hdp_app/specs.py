"""Profile specs: how a profile is made (a small dict), validated, and the limits on each field.

A spec says how to rebuild a profile, never the profile itself:

* ``{"kind": "preset", "name": "paper_high", "seed": 0}`` (a key of :data:`presets.PRESETS`);
* ``{"kind": "log_uniform", "n": 1000, "lo": 0.02, "hi": 7.4, "seed": 0}``;
* ``{"kind": "two_groups", "n": 1000, "frac": 0.9, "eps1": 0.1, "eps2": 1.0}``;
* ``{"kind": "mixture", "n": 1000, "lo": 0.05, "hi": 1.0, "public": 0.1, "seed": 0}``;
* ``{"kind": "tiers", "levels": [...], "counts": [...], "names": [...] or None}``;
* ``{"kind": "values", "levels": [...]}`` (a short per-user list, e.g. a small uploaded file).

:func:`normalize_spec` is the one validator (links, the Profile page's generators and tiers
editor all go through it); the limits below bound every field. hdp_app.views.links turns a
spec into a URL query string and back. Errors are :class:`hdp_core.errors.LinkError` (an
``HdpError``, so a ``ValueError``) with a message a person can act on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from hdp_core import presets
from hdp_core.errors import LinkError, NotShareable
from hdp_core.profile import EpsilonProfile
from hdp_core.validate import NUM_RE, describe, fmt_number, parse_int, parse_level, parse_number

__all__ = [
    "GEN_MAX_N",
    "KINDS",
    "MAX_SPEC_TIERS",
    "MAX_VALUES",
    "RANDOM_PRESETS",
    "SEED_MAX",
    "SPEC_DEFAULTS",
    "SPEC_FIELDS",
    "TIER_MAX_USERS",
    "counts_from_shares",
    "normalize_spec",
    "profile_from_spec",
    "spec_from_profile",
    "tiers_spec_from_rows",
]

GEN_MAX_N = 100_000
"""Most users the per-user generators (log-uniform, mixture) draw for a link or the app."""

TIER_MAX_USERS = 10**12
"""Most users in a tiered profile (two groups, tiers) read from a link or the editor."""

MAX_SPEC_TIERS = 50
"""Most tiers in a tiers spec (a link or the Profile page's tiers editor)."""

MAX_VALUES = 500
"""Most per-user levels in a ``values`` spec (the length limit usually bites first)."""

SEED_MAX = 2**32 - 1
"""Largest random seed."""

KINDS = ("preset", "log_uniform", "two_groups", "mixture", "tiers", "values")
"""Spec kinds that have a link."""

RANDOM_PRESETS = frozenset({"paper_high", "paper_low", "strict_loose", "public_mix"})
"""Presets that are random draws (their seed matters); the others ignore the seed."""

SPEC_FIELDS: dict[str, tuple[str, ...]] = {
    "preset": ("name", "seed"),
    "log_uniform": ("n", "lo", "hi", "seed"),
    "two_groups": ("n", "frac", "eps1", "eps2"),
    "mixture": ("n", "lo", "hi", "public", "seed"),
    "tiers": ("tier",),
    "values": ("eps",),
}
"""The fields of each kind as a link names them (tiers and values travel as one list each)."""

SPEC_DEFAULTS = {"seed": 0}
"""Values of fields a spec may leave out."""

_NAME_RE = re.compile(r"[^\x00-\x1f\x7f]{1,40}")


# numbers ------------------------------------------------------------------------------------
def link_number(text: Any, what: str, lo: float, hi: float) -> float:
    return parse_number(text, what, lo, hi, error=LinkError)


def link_int(text: Any, what: str, lo: int, hi: int) -> int:
    return parse_int(text, what, lo, hi, error=LinkError)


def link_level(x: Any, what: str = "eps") -> float:
    return parse_level(x, what, error=LinkError)


def _pos_level(x: Any, what: str) -> float:
    v = link_level(x, what)
    if v == 0 or math.isinf(v):
        raise LinkError(f"{what} must be a positive finite level, got {fmt_number(v)}")
    return v


def _name(x: Any, what: str) -> str:
    s = str(x).strip()
    if not _NAME_RE.fullmatch(s):
        raise LinkError(f"{what} must be 1 to 40 printable characters")
    return s


# specs --------------------------------------------------------------------------------------
def normalize_spec(spec: Any) -> dict[str, Any]:
    """A validated copy of ``spec`` with canonical types (ints, floats, lists).

    Returns a new dict; raises LinkError for an unknown kind, a missing or extra field, or a
    value out of range. The ranges are those the app's controls allow.
    """
    if not isinstance(spec, Mapping):
        raise LinkError(f"a profile spec must be a dict, got {type(spec).__name__}")
    kind = spec.get("kind")
    if kind not in SPEC_FIELDS:
        raise LinkError(f"unknown profile kind {str(kind)[:30]!r}; one of {', '.join(KINDS)}")
    allowed = {
        "tiers": {"kind", "levels", "counts", "names"},
        "values": {"kind", "levels"},
    }.get(kind, {"kind", *SPEC_FIELDS[kind]})
    extra = sorted(set(spec) - allowed)
    if extra:
        raise LinkError(f"unexpected field(s) for {kind}: {', '.join(map(str, extra))[:60]}")

    def get(f: str) -> Any:
        if f in spec:
            return spec[f]
        if f in SPEC_DEFAULTS:
            return SPEC_DEFAULTS[f]
        raise LinkError(f"{kind} needs the field {f!r}")

    if kind == "preset":
        name = get("name")
        if not isinstance(name, str) or name not in presets.PRESETS:
            raise LinkError(
                f"unknown preset {str(name)[:30]!r}; one of {', '.join(presets.PRESETS)}"
            )
        seed = link_int(get("seed"), "seed", 0, SEED_MAX) if name in RANDOM_PRESETS else 0
        return {"kind": kind, "name": name, "seed": seed}
    if kind == "log_uniform":
        out = {
            "kind": kind,
            "n": link_int(get("n"), "n", 1, GEN_MAX_N),
            "lo": _pos_level(get("lo"), "lowest eps"),
            "hi": _pos_level(get("hi"), "highest eps"),
            "seed": link_int(get("seed"), "seed", 0, SEED_MAX),
        }
        if out["lo"] > out["hi"]:
            raise LinkError(f"lowest eps {out['lo']:g} is above highest eps {out['hi']:g}")
        return out
    if kind == "two_groups":
        return {
            "kind": kind,
            "n": link_int(get("n"), "n", 1, TIER_MAX_USERS),
            "frac": link_number(get("frac"), "share of group 1", 0.0, 1.0),
            "eps1": _pos_level(get("eps1"), "eps of group 1"),
            "eps2": _pos_or_public(get("eps2"), "eps of group 2"),
        }
    if kind == "mixture":
        out = {
            "kind": kind,
            "n": link_int(get("n"), "n", 1, GEN_MAX_N),
            "lo": _pos_level(get("lo"), "lowest eps"),
            "hi": _pos_level(get("hi"), "highest eps"),
            "public": link_number(get("public"), "public share", 0.0, 1.0),
            "seed": link_int(get("seed"), "seed", 0, SEED_MAX),
        }
        if out["lo"] > out["hi"]:
            raise LinkError(f"lowest eps {out['lo']:g} is above highest eps {out['hi']:g}")
        return out
    if kind == "tiers":
        levels, counts = _seq(get("levels"), "levels"), _seq(get("counts"), "counts")
        if not 1 <= len(levels) <= MAX_SPEC_TIERS:
            raise LinkError(f"a tier menu has 1 to {MAX_SPEC_TIERS} tiers, got {len(levels)}")
        if len(counts) != len(levels):
            raise LinkError(f"{len(levels)} tier levels but {len(counts)} counts")
        lv = [link_level(x, f"eps of tier {i + 1}") for i, x in enumerate(levels)]
        ct = [
            link_int(c, f"count of tier {i + 1}", 0, TIER_MAX_USERS) for i, c in enumerate(counts)
        ]
        if sum(ct) == 0:
            raise LinkError("every tier has 0 users: the profile needs at least one user")
        if sum(ct) > TIER_MAX_USERS:
            raise LinkError(f"{sum(ct):,} users in total; at most {TIER_MAX_USERS:,}")
        names = spec.get("names")
        if names is not None:
            names = _seq(names, "names")
            if len(names) != len(lv):
                raise LinkError(f"{len(lv)} tiers but {len(names)} names")
            names = [_name(s, f"name of tier {i + 1}") for i, s in enumerate(names)]
        return {"kind": kind, "levels": lv, "counts": ct, "names": names}
    # values
    levels = _seq(get("levels"), "levels")
    if not 1 <= len(levels) <= MAX_VALUES:
        raise LinkError(f"a per-user list in a link has 1 to {MAX_VALUES} levels")
    return {
        "kind": kind,
        "levels": [link_level(x, f"eps of user {i + 1}") for i, x in enumerate(levels)],
    }


def _pos_or_public(x: Any, what: str) -> float:
    v = link_level(x, what)
    if v == 0:
        raise LinkError(f"{what} must be positive (or public), got 0")
    return v


def _seq(x: Any, what: str) -> list[Any]:
    if isinstance(x, (str, bytes, Mapping)) or not hasattr(x, "__len__"):
        raise LinkError(f"{what} must be a list")
    if len(x) > max(MAX_SPEC_TIERS, MAX_VALUES):
        raise LinkError(f"{what} has {len(x)} entries; too many for a link")
    return list(x)


def profile_from_spec(spec: Any) -> EpsilonProfile:
    """The profile a spec describes (validated first); raises LinkError / ProfileError."""
    s = normalize_spec(spec)
    k = s["kind"]
    if k == "preset":
        return presets.preset(s["name"], s["seed"])
    if k == "log_uniform":
        return presets.log_uniform(s["n"], s["lo"], s["hi"], s["seed"])
    if k == "two_groups":
        return presets.two_groups(s["n"], s["frac"], s["eps1"], s["eps2"])
    if k == "mixture":
        return presets.mixture(s["n"], s["lo"], s["hi"], s["public"], s["seed"])
    if k == "tiers":
        return EpsilonProfile.from_tiers(s["levels"], s["counts"], s["names"])
    return EpsilonProfile.from_values(s["levels"])


def spec_from_profile(profile: EpsilonProfile) -> dict[str, Any]:
    """A tiers or values spec that rebuilds ``profile`` exactly (same ``key``).

    Raises NotShareable when the profile carries data values, has more than MAX_SPEC_TIERS tiers
    or MAX_VALUES users, or levels outside the link's range (then offer the CSV instead).
    """
    if profile.data is not None:
        raise NotShareable("this profile carries each user's data value, which a link cannot hold")
    if profile.is_tiered:
        if profile.k > MAX_SPEC_TIERS:
            raise NotShareable(f"{profile.k} tiers are too many for a link (max {MAX_SPEC_TIERS})")
        spec = {
            "kind": "tiers",
            "levels": [float(x) for x in profile.levels],
            "counts": [int(c) for c in profile.counts],
            "names": list(profile.names) if profile.names else None,
        }
    else:
        if profile.k > MAX_VALUES:
            raise NotShareable(
                f"{profile.k:,} per-user levels are too many for a link (max {MAX_VALUES})"
            )
        spec = {"kind": "values", "levels": [float(x) for x in profile.levels]}
    try:
        return normalize_spec(spec)
    except NotShareable:
        raise
    except LinkError as e:
        raise NotShareable(f"this profile cannot go in a link: {e}") from None


# tiers given as shares ----------------------------------------------------------------------
def counts_from_shares(shares: Any, n: int) -> np.ndarray:
    """Whole tier sizes summing to exactly ``n`` from shares (any non-negative weights).

    Largest-remainder rounding (Hamilton's method): each tier gets floor(n s_j / sum s) users
    and the users left over go one each to the largest remainders (ties to the earlier tier).
    Returns int64 counts; raises LinkError for NaN, negative or all-zero shares or bad n.
    """
    n = link_int(n, "total number of users n", 1, TIER_MAX_USERS)
    s = np.asarray(shares, dtype=np.float64).ravel()
    if s.size == 0:
        raise LinkError("give at least one share")
    if not np.isfinite(s).all():
        i = int(np.argmax(~np.isfinite(s)))
        raise LinkError(f"share of tier {i + 1} is empty or not a finite number")
    if (s < 0).any():
        i = int(np.argmax(s < 0))
        raise LinkError(f"share of tier {i + 1} is negative ({s[i]:g})")
    if float(s.sum()) <= 0:
        raise LinkError("all shares are 0: at least one tier needs users")
    # exact rational quotas (at most MAX_SPEC_TIERS-ish entries): ties are real ties, broken in
    # favour of the earlier tier, whatever the floating-point rounding would say
    fr = [Fraction(float(x)) for x in s]
    total = sum(fr)
    quotas = [f * n / total for f in fr]
    base = [math.floor(q) for q in quotas]
    left = n - sum(base)
    order = sorted(range(len(fr)), key=lambda i: (base[i] - quotas[i], i))
    for i in order[:left]:
        base[i] += 1
    return np.array(base, dtype=np.int64)


def _cell_number(x: Any) -> float | None:
    """A table cell as a float, or None when it is empty (None, NaN, blank text)."""
    if x is None or isinstance(x, bool):
        return None
    if isinstance(x, str):
        s = x.strip()
        if not s:
            return None
        if not NUM_RE.fullmatch(s):
            return math.nan
        return float(s)
    try:
        v = float(x)
    except OverflowError:  # an int beyond float range
        return math.inf
    except (TypeError, ValueError):
        return math.nan
    return None if math.isnan(v) else v


def tiers_spec_from_rows(
    rows: Any, units: str = "count", total: int | None = None
) -> dict[str, Any]:
    """A tiers spec from editor rows (dicts with name, eps, and count or share in %).

    ``units`` is 'count' (whole users per tier) or 'share' (shares of ``total`` users, turned
    into whole counts by :func:`counts_from_shares`). Rows with every cell empty are skipped
    (a row just added). Names are kept when any row has one ('Tier j' fills the gaps).
    Returns a normalised spec; raises LinkError naming the row (1-based) and the problem.
    """
    if units not in ("count", "share"):
        raise LinkError(f"units must be 'count' or 'share', got {units!r}")
    col = "count" if units == "count" else "share"
    if rows is None or isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise LinkError(f"the tiers must be a list of rows, got {describe(rows)}")
    used: list[tuple[str, float, float]] = []
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping):
            raise LinkError(
                f"row {i + 1} must have the cells name, eps and {col}, got {describe(r)}"
            )
        name = r.get("name")
        name = (
            ""
            if name is None or (isinstance(name, float) and math.isnan(name))
            else str(name).strip()
        )
        eps = r.get("eps")
        eps_empty = (
            eps is None
            or (isinstance(eps, float) and math.isnan(eps))
            or (isinstance(eps, str) and not eps.strip())
        )
        size = _cell_number(r.get(col))
        if not name and eps_empty and size is None:
            continue
        label = f"row {i + 1}" + (f" ({name[:20]})" if name else "")
        level = link_level("" if eps_empty else eps, f"{label}: eps")
        if size is None:
            what = "number of users" if units == "count" else "share (%)"
            raise LinkError(f"{label}: give a {what}")
        if math.isnan(size) or math.isinf(size):
            raise LinkError(f"{label}: the {col} is not a number")
        if size < 0:
            raise LinkError(f"{label}: the {col} {fmt_number(size)} is negative")
        if units == "count" and not float(size).is_integer():
            raise LinkError(f"{label}: the count {fmt_number(size)} is not a whole number")
        used.append((name, level, size))
    if not used:
        raise LinkError("the table is empty: add at least one tier")
    if len(used) > MAX_SPEC_TIERS:
        raise LinkError(f"{len(used)} tiers; at most {MAX_SPEC_TIERS}")
    sizes = [u[2] for u in used]
    if units == "count":
        counts = [int(c) for c in sizes]
    else:
        if total is None:
            raise LinkError("give the total number of users n for shares")
        counts = [int(c) for c in counts_from_shares(sizes, total)]
    names = None
    if any(u[0] for u in used):
        names = [u[0] or f"Tier {j + 1}" for j, u in enumerate(used)]
    return normalize_spec(
        {"kind": "tiers", "levels": [u[1] for u in used], "counts": counts, "names": names}
    )
