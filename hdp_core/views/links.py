"""Shareable links: a profile *spec* (how a profile is made) <-> a URL query string.

A spec is a small dict saying how to rebuild a profile, never the profile itself:

* ``{"kind": "preset", "name": "paper_high", "seed": 0}`` (a key of :data:`presets.PRESETS`);
* ``{"kind": "log_uniform", "n": 1000, "lo": 0.02, "hi": 7.4, "seed": 0}``;
* ``{"kind": "two_groups", "n": 1000, "frac": 0.9, "eps1": 0.1, "eps2": 1.0}``;
* ``{"kind": "mixture", "n": 1000, "lo": 0.05, "hi": 1.0, "public": 0.1, "seed": 0}``;
* ``{"kind": "tiers", "levels": [...], "counts": [...], "names": [...] or None}``;
* ``{"kind": "values", "levels": [...]}`` (a short per-user list, e.g. a small uploaded file).

In the URL the kind goes in ``profile`` and every field in its own ``p_<field>`` parameter
(the ``p_`` prefix keeps clear of the other pages' widget parameters); tiers are repeated
``p_tier=<eps>~<count>[~<name>]`` entries and per-user levels one ``p_eps=<e1>_<e2>_...``::

    ?profile=log_uniform&p_n=1000&p_lo=0.02&p_hi=7.4&p_seed=0
    ?profile=tiers&p_tier=0.1~600~Strict&p_tier=1~300~Balanced&p_tier=inf~100~Public

Decoding is strict: every number must match a plain decimal pattern and lie in a sane range,
unknown presets and fields are refused, and anything longer than :data:`MAX_QUERY_CHARS` is
refused before it is parsed. Errors are :class:`hdp_core.errors.LinkError` (an
``HdpError``, so a ``ValueError``) with a message a person can act on. Nothing here imports
streamlit.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlencode

import numpy as np

from .. import presets
from ..design import Menu, menu_to_dict
from ..errors import LinkError, MenuError, NotShareable
from ..profile import EpsilonProfile
from ..validate import NUM_RE, describe, fmt_number, parse_int, parse_level, parse_number
from .formatting import count_noun
from .menu_io import menu_from_json

__all__ = [
    "GEN_MAX_N",
    "KINDS",
    "MAX_QUERY_CHARS",
    "MAX_TIERS",
    "MAX_VALUES",
    "QUERY_KEYS",
    "RANDOM_PRESETS",
    "SEED_MAX",
    "TIER_MAX_USERS",
    "counts_from_shares",
    "decode",
    "decode_menu_link",
    "encode",
    "encode_menu_link",
    "from_query_string",
    "normalize_spec",
    "profile_from_spec",
    "spec_from_profile",
    "spec_label",
    "tiers_spec_from_rows",
    "to_query_string",
]

MAX_QUERY_CHARS = 2000
"""Longest encoded query string a link may carry (browsers, chats and mail keep 2000 safe)."""

GEN_MAX_N = 100_000
"""Most users the per-user generators (log-uniform, mixture) draw for a link or the app."""

TIER_MAX_USERS = 10**12
"""Most users in a tiered profile (two groups, tiers) read from a link or the editor."""

MAX_TIERS = 50
"""Most tiers in a tiers spec."""

MAX_VALUES = 500
"""Most per-user levels in a ``values`` spec (the length limit usually bites first)."""

SEED_MAX = 2**32 - 1
"""Largest random seed."""

KINDS = ("preset", "log_uniform", "two_groups", "mixture", "tiers", "values")
"""Spec kinds that have a link."""

RANDOM_PRESETS = frozenset({"paper_high", "paper_low", "strict_loose", "public_mix"})
"""Presets that are random draws (their seed matters); the others ignore the seed."""

_KIND_KEY = "profile"
_PREFIX = "p_"
_FIELDS: dict[str, tuple[str, ...]] = {
    "preset": ("name", "seed"),
    "log_uniform": ("n", "lo", "hi", "seed"),
    "two_groups": ("n", "frac", "eps1", "eps2"),
    "mixture": ("n", "lo", "hi", "public", "seed"),
    "tiers": ("tier",),
    "values": ("eps",),
}
_DEFAULTS = {"seed": 0}
QUERY_KEYS = frozenset({_KIND_KEY} | {_PREFIX + f for fields in _FIELDS.values() for f in fields})
"""Every URL parameter this module reads or writes; other pages must not bind these."""

_MAX_RAW = 4 * MAX_QUERY_CHARS  # refuse anything longer than this before looking at it
_NAME_RE = re.compile(r"[^\x00-\x1f\x7f]{1,40}")


# numbers ------------------------------------------------------------------------------------
def _num(text: Any, what: str, lo: float, hi: float) -> float:
    return parse_number(text, what, lo, hi, error=LinkError)


def _int(text: Any, what: str, lo: int, hi: int) -> int:
    return parse_int(text, what, lo, hi, error=LinkError)


def _level(x: Any, what: str = "eps") -> float:
    return parse_level(x, what, error=LinkError)


def _pos_level(x: Any, what: str) -> float:
    v = _level(x, what)
    if v == 0 or math.isinf(v):
        raise LinkError(f"{what} must be a positive finite level, got {fmt_number(v)}")
    return v


def _name(x: Any, what: str) -> str:
    s = str(x).strip()
    if not _NAME_RE.fullmatch(s):
        raise LinkError(f"{what} must be 1 to 40 printable characters")
    return s


# specs --------------------------------------------------------------------------------------
def normalize_spec(spec: Any) -> dict:
    """A validated copy of ``spec`` with canonical types (ints, floats, lists).

    Returns a new dict; raises LinkError for an unknown kind, a missing or extra field, or a
    value out of range. The ranges are those the app's controls allow.
    """
    if not isinstance(spec, Mapping):
        raise LinkError(f"a profile spec must be a dict, got {type(spec).__name__}")
    kind = spec.get("kind")
    if kind not in _FIELDS:
        raise LinkError(f"unknown profile kind {str(kind)[:30]!r}; one of {', '.join(KINDS)}")
    allowed = {
        "tiers": {"kind", "levels", "counts", "names"},
        "values": {"kind", "levels"},
    }.get(kind, {"kind", *_FIELDS[kind]})
    extra = sorted(set(spec) - allowed)
    if extra:
        raise LinkError(f"unexpected field(s) for {kind}: {', '.join(map(str, extra))[:60]}")

    def get(f):
        if f in spec:
            return spec[f]
        if f in _DEFAULTS:
            return _DEFAULTS[f]
        raise LinkError(f"{kind} needs the field {f!r}")

    if kind == "preset":
        name = get("name")
        if not isinstance(name, str) or name not in presets.PRESETS:
            raise LinkError(
                f"unknown preset {str(name)[:30]!r}; one of {', '.join(presets.PRESETS)}"
            )
        seed = _int(get("seed"), "seed", 0, SEED_MAX) if name in RANDOM_PRESETS else 0
        return {"kind": kind, "name": name, "seed": seed}
    if kind == "log_uniform":
        out = {
            "kind": kind,
            "n": _int(get("n"), "n", 1, GEN_MAX_N),
            "lo": _pos_level(get("lo"), "lowest eps"),
            "hi": _pos_level(get("hi"), "highest eps"),
            "seed": _int(get("seed"), "seed", 0, SEED_MAX),
        }
        if out["lo"] > out["hi"]:
            raise LinkError(f"lowest eps {out['lo']:g} is above highest eps {out['hi']:g}")
        return out
    if kind == "two_groups":
        return {
            "kind": kind,
            "n": _int(get("n"), "n", 1, TIER_MAX_USERS),
            "frac": _num(get("frac"), "share of group 1", 0.0, 1.0),
            "eps1": _pos_level(get("eps1"), "eps of group 1"),
            "eps2": _pos_or_public(get("eps2"), "eps of group 2"),
        }
    if kind == "mixture":
        out = {
            "kind": kind,
            "n": _int(get("n"), "n", 1, GEN_MAX_N),
            "lo": _pos_level(get("lo"), "lowest eps"),
            "hi": _pos_level(get("hi"), "highest eps"),
            "public": _num(get("public"), "public share", 0.0, 1.0),
            "seed": _int(get("seed"), "seed", 0, SEED_MAX),
        }
        if out["lo"] > out["hi"]:
            raise LinkError(f"lowest eps {out['lo']:g} is above highest eps {out['hi']:g}")
        return out
    if kind == "tiers":
        levels, counts = _seq(get("levels"), "levels"), _seq(get("counts"), "counts")
        if not 1 <= len(levels) <= MAX_TIERS:
            raise LinkError(f"a tier menu has 1 to {MAX_TIERS} tiers, got {len(levels)}")
        if len(counts) != len(levels):
            raise LinkError(f"{len(levels)} tier levels but {len(counts)} counts")
        lv = [_level(x, f"eps of tier {i + 1}") for i, x in enumerate(levels)]
        ct = [_int(c, f"count of tier {i + 1}", 0, TIER_MAX_USERS) for i, c in enumerate(counts)]
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
        "levels": [_level(x, f"eps of user {i + 1}") for i, x in enumerate(levels)],
    }


def _pos_or_public(x: Any, what: str) -> float:
    v = _level(x, what)
    if v == 0:
        raise LinkError(f"{what} must be positive (or public), got 0")
    return v


def _seq(x: Any, what: str) -> list:
    if isinstance(x, (str, bytes, Mapping)) or not hasattr(x, "__len__"):
        raise LinkError(f"{what} must be a list")
    if len(x) > max(MAX_TIERS, MAX_VALUES):
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


def spec_from_profile(profile: EpsilonProfile) -> dict:
    """A tiers or values spec that rebuilds ``profile`` exactly (same ``key``).

    Raises NotShareable when the profile carries data values, has more than MAX_TIERS tiers
    or MAX_VALUES users, or levels outside the link's range (then offer the CSV instead).
    """
    if profile.data is not None:
        raise NotShareable("this profile carries each user's data value, which a link cannot hold")
    if profile.is_tiered:
        if profile.k > MAX_TIERS:
            raise NotShareable(f"{profile.k} tiers are too many for a link (max {MAX_TIERS})")
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


# query strings -----------------------------------------------------------------------------
def encode(spec: Any) -> dict[str, str | list[str]]:
    """The query parameters of ``spec``: {'profile': kind, 'p_<field>': text, ...}.

    Repeated parameters (tiers) are lists. Raises LinkError for an invalid spec and
    NotShareable when the encoded query string would exceed MAX_QUERY_CHARS.
    """
    s = normalize_spec(spec)
    k = s["kind"]
    out: dict[str, str | list[str]] = {_KIND_KEY: k}
    if k == "tiers":
        tiers = []
        for j, (lv, ct) in enumerate(zip(s["levels"], s["counts"])):
            t = f"{fmt_number(lv)}~{ct}"
            if s["names"] is not None:
                t += f"~{s['names'][j]}"
            tiers.append(t)
        out[_PREFIX + "tier"] = tiers
    elif k == "values":
        out[_PREFIX + "eps"] = "_".join(fmt_number(x) for x in s["levels"])
    else:
        for f in _FIELDS[k]:
            v = s[f]
            out[_PREFIX + f] = v if isinstance(v, str) else fmt_number(v)
    length = len(urlencode(out, doseq=True))
    if length > MAX_QUERY_CHARS:
        raise NotShareable(
            f"this profile needs {length:,} characters in a link (limit {MAX_QUERY_CHARS:,})"
        )
    return out


def decode(params: Mapping[str, Any]) -> dict | None:
    """The spec in query parameters ``params`` (values are str or lists of str), or None when
    they hold no profile. Parameters other than QUERY_KEYS are ignored; raises LinkError
    for anything malformed (unknown kind or preset, bad or out-of-range number, extra or
    repeated field, over-long text)."""
    if not isinstance(params, Mapping):
        raise LinkError(
            f"the link's parameters must be a mapping of names to text, got {type(params).__name__}"
        )
    ours: dict[str, list[str]] = {}
    total = 0
    for key, val in params.items():
        if not isinstance(key, str):
            continue
        if key != _KIND_KEY and not key.startswith(_PREFIX):
            continue
        vals = list(val) if isinstance(val, (list, tuple)) else [val]
        for v in vals:
            if not isinstance(v, str):
                raise LinkError(f"parameter {key[:30]!r} is not text")
            total += len(key) + len(v) + 2
        if total > _MAX_RAW:
            raise LinkError(f"the link's profile is longer than {_MAX_RAW:,} characters")
        ours[key] = vals
    if not ours:
        return None
    if _KIND_KEY not in ours:
        raise LinkError(f"the link has {', '.join(sorted(ours))[:60]} but no 'profile='")
    kinds = ours.pop(_KIND_KEY)
    if len(kinds) != 1:
        raise LinkError("the link names more than one profile")
    kind = kinds[0].strip()
    if kind not in _FIELDS:
        raise LinkError(f"unknown profile kind {kind[:30]!r}; one of {', '.join(KINDS)}")
    fields = _FIELDS[kind]
    unknown = sorted(k for k in ours if k[len(_PREFIX) :] not in fields)
    if unknown:
        raise LinkError(f"parameter(s) {', '.join(unknown)[:60]} do not belong to a {kind} profile")
    if kind == "tiers":
        tiers = ours.get(_PREFIX + "tier", [])
        if not tiers:
            raise LinkError("a tiers link needs at least one p_tier=<eps>~<count>")
        if len(tiers) > MAX_TIERS:
            raise LinkError(f"{len(tiers)} tiers; a link holds at most {MAX_TIERS}")
        levels, counts, names = [], [], []
        for j, t in enumerate(tiers):
            parts = t.split("~", 2)
            if len(parts) < 2:
                raise LinkError(f"tier {j + 1} ({t[:30]!r}) is not <eps>~<count>[~<name>]")
            levels.append(_level(parts[0], f"eps of tier {j + 1}"))
            counts.append(_int(parts[1], f"count of tier {j + 1}", 0, TIER_MAX_USERS))
            names.append(parts[2] if len(parts) == 3 else None)
        if any(nm is None for nm in names) and not all(nm is None for nm in names):
            raise LinkError("either every tier has a name or none has")
        spec: dict[str, Any] = {
            "kind": kind,
            "levels": levels,
            "counts": counts,
            "names": None if names[0] is None else names,
        }
        return normalize_spec(spec)
    spec = {"kind": kind}
    for key, vals in ours.items():
        if len(vals) != 1:
            raise LinkError(f"parameter {key!r} is given {len(vals)} times")
        spec[key[len(_PREFIX) :]] = vals[0]
    if kind == "values":
        if "eps" not in spec:
            raise LinkError("a values link needs p_eps=<e1>_<e2>_...")
        parts = spec.pop("eps").split("_")
        if len(parts) > MAX_VALUES:
            raise LinkError(f"{len(parts)} levels; a link holds at most {MAX_VALUES}")
        spec["levels"] = parts
    return normalize_spec(spec)


def to_query_string(spec: Any) -> str:
    """``spec`` as a URL query string without the leading '?' (see :func:`encode`)."""
    return urlencode(encode(spec), doseq=True)


def from_query_string(query: str) -> dict | None:
    """The spec in a query string (leading '?' allowed), or None; see :func:`decode`."""
    if not isinstance(query, str):
        raise LinkError("the query string must be text")
    if len(query) > _MAX_RAW:
        raise LinkError(f"the link is longer than {_MAX_RAW:,} characters")
    try:
        params = parse_qs(
            query.lstrip("?"),
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=4 * MAX_TIERS,
        )
    except ValueError as e:
        raise LinkError(f"the link's query string cannot be read: {e}") from None
    return decode(params)


# tiers given as shares ----------------------------------------------------------------------
def counts_from_shares(shares: Any, n: int) -> np.ndarray:
    """Whole tier sizes summing to exactly ``n`` from shares (any non-negative weights).

    Largest-remainder rounding (Hamilton's method): each tier gets floor(n s_j / sum s) users
    and the users left over go one each to the largest remainders (ties to the earlier tier).
    Returns int64 counts; raises LinkError for NaN, negative or all-zero shares or bad n.
    """
    n = _int(n, "total number of users n", 1, TIER_MAX_USERS)
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
    # exact rational quotas (at most MAX_TIERS-ish entries): ties are real ties, broken in
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


def tiers_spec_from_rows(rows: Any, units: str = "count", total: int | None = None) -> dict:
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
        level = _level("" if eps_empty else eps, f"{label}: eps")
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
    if len(used) > MAX_TIERS:
        raise LinkError(f"{len(used)} tiers; at most {MAX_TIERS}")
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


# menus ----------------------------------------------------------------------------------------
MAX_MENU_LINK_CHARS = 4000
"""Longest ``menu`` link parameter accepted."""


def encode_menu_link(menu: Menu) -> str:
    """The menu as one URL-safe text (base64url of compact JSON, no padding) for ?menu=."""
    d = menu_to_dict(menu)
    d.pop("format")
    text = json.dumps(d, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_menu_link(token: Any) -> Menu:
    """The menu in a ?menu= value (see :func:`encode_menu_link`); MenuError if it is malformed."""
    if not isinstance(token, str):
        raise MenuError("the link's menu is not text")
    s = token.strip()
    if not s:
        raise MenuError("the link's menu is empty")
    if len(s) > MAX_MENU_LINK_CHARS:
        raise MenuError(
            f"the link's menu is {len(s):,} characters long; at most {MAX_MENU_LINK_CHARS:,}"
        )
    if any(ch not in _B64 for ch in s):
        raise MenuError(
            "the link's menu contains characters a menu link never has (was it cut or edited?)"
        )
    try:
        raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    except (binascii.Error, ValueError):
        raise MenuError("the link's menu cannot be decoded (was it cut short?)") from None
    try:
        return menu_from_json(raw)
    except MenuError as e:
        raise MenuError(f"the link's menu is invalid: {e}") from None


_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
