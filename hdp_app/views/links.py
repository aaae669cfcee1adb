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

Specs themselves (their fields, limits and validation) live in :mod:`hdp_app.specs`, and the
sentence describing one in :func:`hdp_app.views.explain.spec_label`; their names are
re-exported here while the pages move to importing them from there.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlencode

from hdp_app.specs import (
    GEN_MAX_N,
    KINDS,
    MAX_SPEC_TIERS,
    MAX_VALUES,
    RANDOM_PRESETS,
    SEED_MAX,
    SPEC_FIELDS,
    TIER_MAX_USERS,
    counts_from_shares,
    link_int,
    link_level,
    normalize_spec,
    profile_from_spec,
    spec_from_profile,
    tiers_spec_from_rows,
)
from hdp_app.views.explain import spec_label
from hdp_core.design_io import menu_from_json
from hdp_core.errors import LinkError, MenuError, NotShareable
from hdp_core.menu import Menu, menu_to_dict
from hdp_core.validate import fmt_number

__all__ = [
    "GEN_MAX_N",
    "KINDS",
    "MAX_QUERY_CHARS",
    "MAX_SPEC_TIERS",
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
_KIND_KEY = "profile"
_PREFIX = "p_"
_FIELDS = SPEC_FIELDS
QUERY_KEYS = frozenset({_KIND_KEY} | {_PREFIX + f for fields in _FIELDS.values() for f in fields})
"""Every URL parameter this module reads or writes; other pages must not bind these."""

_MAX_RAW = 4 * MAX_QUERY_CHARS  # refuse anything longer than this before looking at it


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
        if len(tiers) > MAX_SPEC_TIERS:
            raise LinkError(f"{len(tiers)} tiers; a link holds at most {MAX_SPEC_TIERS}")
        levels, counts, names = [], [], []
        for j, t in enumerate(tiers):
            parts = t.split("~", 2)
            if len(parts) < 2:
                raise LinkError(f"tier {j + 1} ({t[:30]!r}) is not <eps>~<count>[~<name>]")
            levels.append(link_level(parts[0], f"eps of tier {j + 1}"))
            counts.append(link_int(parts[1], f"count of tier {j + 1}", 0, TIER_MAX_USERS))
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
            max_num_fields=4 * MAX_SPEC_TIERS,
        )
    except ValueError as e:
        raise LinkError(f"the link's query string cannot be read: {e}") from None
    return decode(params)


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
