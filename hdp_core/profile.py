"""Validated privacy profiles: one level per user, or tiers of users sharing a level.

A privacy level ``eps`` is a number in [0, +inf]:

* ``eps > 0`` is the usual differential-privacy parameter; smaller means more privacy;
* ``eps = +inf`` marks a public data point (no privacy asked for);
* ``eps = 0`` marks a user who allows no use of their data (weight 0, reported as excluded).

Anything else (NaN, negative numbers, strings, booleans, empty input, bad counts) raises
:class:`ProfileError`, a ``ValueError`` whose message names the offending entry.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

import numpy as np

from hdp_core.errors import ProfileError
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN, as_float, csv_safe, fmt_number, parse_level

__all__ = [
    "MAX_EXPAND",
    "MAX_ROWS",
    "MAX_TOTAL_USERS",
    "MAX_UPLOAD_BYTES",
    "EpsilonProfile",
    "ProfileError",
    "as_profile",
    "parse_eps_text",
    "weighted_quantile",
]

MAX_ROWS = 1_000_000
"""Largest number of data rows accepted from a table or CSV file."""

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
"""Largest CSV accepted by :func:`hdp_core.tables.profile_from_csv` (as in
.streamlit/config.toml)."""

MAX_TOTAL_USERS = 10**15
"""Largest total number of users (sum of tier counts); integers stay exact in float64."""

MAX_EXPAND = 20_000_000
"""Largest profile :meth:`EpsilonProfile.expand` will turn into one level per user."""


def parse_eps_text(text: str, where: str = "value") -> float:
    """One privacy level typed by a person or read from a file (hdp_core.validate.parse_level:
    0, a number in [LEVEL_MIN, LEVEL_MAX], or a word for public such as 'inf' or 'public').
    Returns it as a float; raises :class:`ProfileError` naming ``where`` otherwise."""
    return parse_level(str(text), where, error=ProfileError)


def _check_container(values: Any, what: str) -> Any:
    """Refuse text, mappings and unordered sets (their order, or their keys, are not levels)."""
    if isinstance(values, (str, bytes)):
        raise ProfileError(f"expected a list of numbers, got the text {str(values)[:40]!r}")
    if isinstance(values, Mapping):
        raise ProfileError(
            f"expected a list of {what}s, got a mapping (a dict); pass its values in order"
        )
    if isinstance(values, Set):
        raise ProfileError(f"expected a list of {what}s, got a set, which has no order")
    return values


def _float_entries(values: Any, what: str) -> np.ndarray:
    """float64 copy of a sequence of real numbers; names the first entry that is not one.
    Integers beyond float range become ±inf (then refused by the caller), never OverflowError."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        return np.array(values, dtype=np.float64).ravel()
    if isinstance(values, numbers.Real) and not isinstance(values, (bool, np.bool_)):
        values = [values]
    if not isinstance(values, (Sequence, np.ndarray)) and isinstance(values, Iterable):
        values = list(values)
    try:
        seq = np.asarray(values, dtype=object).ravel()
    except (ValueError, TypeError):  # ragged nesting
        raise ProfileError(f"expected a flat list of {what}s") from None
    for i, v in enumerate(seq):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise ProfileError(f"{what} {i} (0-based) is {str(v)[:40]!r}, which is not a number")
    try:
        return seq.astype(np.float64)
    except OverflowError:  # a Python int beyond float range (never read as inf = public)
        for i, v in enumerate(seq):
            if isinstance(v, numbers.Integral) and math.isinf(as_float(v)):
                digits = len(str(abs(int(v)))) if abs(int(v)) < 10**4000 else "over 4000"
                hint = (
                    f"; levels must be 0, between {LEVEL_MIN:g} and {LEVEL_MAX:g}, or inf"
                    if what.endswith("level")
                    else ""
                )
                raise ProfileError(
                    f"{what} {i} (0-based) is a {digits}-digit number, too large{hint}"
                ) from None
        raise


def _levels_array(values: Any, what: str = "level") -> np.ndarray:
    """Validated float64 copy of ``values``: each 0, +inf or in [LEVEL_MIN, LEVEL_MAX] (the
    one supported range, hdp_core.validate); raises ProfileError naming the first bad entry."""
    values = _check_container(values, what)
    if isinstance(values, numbers.Real) and not isinstance(values, (bool, np.bool_)):
        values = [values]
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        arr = np.array(values, dtype=np.float64).ravel()
    else:
        arr = _float_entries(values, what)
    if arr.size == 0:
        raise ProfileError("the profile is empty: give at least one privacy level")
    # Fast path: two reductions, no temporaries. min propagates NaN (then every comparison
    # below is False) and any negative; only a 0 or a public level (inf) among the levels
    # hides the smallest positive or the largest finite level, checked then without a copy.
    low, high = arr.min(), arr.max()
    if low >= LEVEL_MIN and high <= LEVEL_MAX:
        return arr
    if low >= 0 and (low >= LEVEL_MIN or low == 0) and (high <= LEVEL_MAX or high == math.inf):
        small = arr.min(where=arr > 0, initial=math.inf) if low == 0 else low
        large = arr.max(where=arr < math.inf, initial=0.0) if high == math.inf else high
        if small >= LEVEL_MIN and large <= LEVEL_MAX:
            return arr
    # Something is wrong: name the first bad entry (NaN first, then negatives, then range).
    bad = np.isnan(arr)
    if bad.any():
        i = int(np.argmax(bad))
        raise ProfileError(f"{what} {i} (0-based) is NaN; give a number ≥ 0 or inf for public")
    neg = arr < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise ProfileError(
            f"{what} {i} (0-based) is {fmt_number(arr[i])}: privacy levels must be ≥ 0 "
            "(0 = data not used, inf = public)"
        )
    i = int(np.argmax(out_of_range(arr)))
    raise ProfileError(f"{what} {i} (0-based) is {range_message(arr[i])}")


def out_of_range(arr: np.ndarray) -> np.ndarray:
    """Boolean mask of the levels that are neither 0, +inf nor in [LEVEL_MIN, LEVEL_MAX]."""
    with np.errstate(invalid="ignore"):
        bad = ~((arr == 0) | (arr == math.inf) | ((arr >= LEVEL_MIN) & (arr <= LEVEL_MAX)))
        return cast(np.ndarray, bad)


def range_message(v: float) -> str:
    """'<v>, outside the supported range ...' for a level ``v`` that is out of range."""
    side = "below the smallest" if v < LEVEL_MIN else "above the largest"
    shown = "a number too large for a float" if math.isinf(v) else fmt_number(float(v))
    return (
        f"{shown}, {side} supported privacy level: levels must be 0 (data not used), between "
        f"{LEVEL_MIN:g} and {LEVEL_MAX:g}, or inf (public)"
    )


def _count_text(c: Any) -> str:
    """A count as exact text (integers in full up to 30 digits, floats with every digit)."""
    if isinstance(c, (int, np.integer)) and not isinstance(c, bool):
        s = str(int(c))
        return f"{int(c):,}" if len(s) <= 30 else f"a {len(s)}-digit number"
    return fmt_number(float(c))


def _counts_array(counts: Any, k: int) -> np.ndarray:
    """Validated int64 tier counts of length ``k``."""
    if isinstance(counts, (str, bytes)):
        raise ProfileError("counts must be a list of whole numbers")
    counts = _check_container(counts, "count")
    if isinstance(counts, numbers.Real):
        counts = [counts]
    if isinstance(counts, np.ndarray) and counts.dtype.kind in "iuf":
        arr = counts.astype(np.float64).ravel()
        if arr.size != k:
            raise ProfileError(f"got {k} tier levels but {arr.size} counts (one per tier)")
        ok = np.isfinite(arr) & (arr >= 0) & (arr == np.floor(arr)) & (arr <= MAX_TOTAL_USERS)
        if ok.all():
            return counts.astype(np.int64).ravel()
    if not isinstance(counts, (Sequence, np.ndarray)) and isinstance(counts, Iterable):
        counts = list(counts)
    try:
        seq = np.asarray(counts, dtype=object).ravel()
    except (ValueError, TypeError):
        raise ProfileError("counts must be a flat list of whole numbers") from None
    if seq.size != k:
        raise ProfileError(f"got {k} tier levels but {seq.size} counts; give one count per tier")
    out = np.empty(k, dtype=np.int64)
    for i, c in enumerate(seq):
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Real):
            raise ProfileError(f"count of tier {i} is {str(c)[:40]!r}, which is not a number")
        if isinstance(c, (int, np.integer)):
            if c < 0:
                raise ProfileError(f"count of tier {i} is {_count_text(c)}: counts must be ≥ 0")
            if c > MAX_TOTAL_USERS:
                raise ProfileError(
                    f"count of tier {i} is {_count_text(c)}: at most {MAX_TOTAL_USERS:,} users"
                )
            out[i] = int(c)
            continue
        c = float(c)
        if math.isnan(c):
            raise ProfileError(f"count of tier {i} is NaN")
        if c < 0:
            raise ProfileError(f"count of tier {i} is {fmt_number(c)}: counts must be ≥ 0")
        if math.isinf(c) or c != math.floor(c):
            raise ProfileError(
                f"count of tier {i} is {fmt_number(c)}: counts must be whole numbers"
            )
        if c > MAX_TOTAL_USERS:
            raise ProfileError(
                f"count of tier {i} is {fmt_number(c)}: at most {MAX_TOTAL_USERS:,} users"
            )
        out[i] = int(c)
    return out


@dataclass(frozen=True, eq=False)
class EpsilonProfile:
    """Privacy levels of n users: per user (``counts`` all 1) or as tiers with counts.

    ``levels[j]`` is a level in [0, inf]; ``counts[j]`` how many users ask for it. For a
    per-user profile ``is_tiered`` is False and ``counts`` are ones; ``data`` may hold each
    user's value (any real units) when it came from a file.
    """

    levels: np.ndarray
    counts: np.ndarray
    is_tiered: bool
    names: tuple[str, ...] | None = None
    data: np.ndarray | None = None
    _key: str = field(default="", repr=False)

    # construction -------------------------------------------------------------------------
    @classmethod
    def from_values(cls, values: Any, data: Any = None) -> EpsilonProfile:
        """Profile with one privacy level per user (``values``, array-like, inf allowed)."""
        if isinstance(values, EpsilonProfile):
            return values
        levels = _levels_array(values, "level")
        d = None
        if data is not None:
            d = _float_entries(_check_container(data, "data value"), "data value")
            if d.size != levels.size:
                raise ProfileError(f"got {levels.size} levels but {d.size} data values")
            if not np.isfinite(d).all():
                i = int(np.argmax(~np.isfinite(d)))
                raise ProfileError(f"data value {i} (0-based) is {d[i]}; values must be finite")
        # every count is 1: a read-only zero-stride view, not n stored ones
        return cls._make(levels, np.broadcast_to(np.int64(1), levels.shape), False, None, d)

    @classmethod
    def from_tiers(
        cls, levels: Any, counts: Any, names: Sequence[str] | None = None
    ) -> EpsilonProfile:
        """Profile of k tiers: ``counts[j]`` users at ``levels[j]`` (counts never expanded)."""
        lv = _levels_array(levels, "tier level")
        ct = _counts_array(counts, lv.size)
        total = int(ct.sum(dtype=object))
        if total == 0:
            raise ProfileError("every tier has count 0: the profile needs at least one user")
        if total > MAX_TOTAL_USERS:
            raise ProfileError(f"{total:,} users in total; at most {MAX_TOTAL_USERS:,}")
        nm = None
        if names is not None:
            if isinstance(names, (str, bytes, Mapping, Set)) or not isinstance(names, Iterable):
                raise ProfileError("names must be a list with one name per tier")
            nm = tuple(str(s) for s in names)
            if len(nm) != lv.size:
                raise ProfileError(f"got {lv.size} tiers but {len(nm)} names")
        return cls._make(lv, ct, True, nm, None)

    @classmethod
    def _make(cls, levels: Any, counts: Any, tiered: bool, names: Any, data: Any) -> EpsilonProfile:
        levels = np.ascontiguousarray(levels, dtype=np.float64)
        if tiered:
            counts = np.ascontiguousarray(counts, dtype=np.int64)
        levels.setflags(write=False)
        counts.setflags(write=False)
        if data is not None:
            data = np.ascontiguousarray(data, dtype=np.float64)
            data.setflags(write=False)
        return cls(levels, counts, tiered, names, data)

    # basic facts ----------------------------------------------------------------------------
    @property
    def key(self) -> str:
        """Hex digest identifying this profile (for caches); computed on first use."""
        return self._key or self._digest

    @cached_property
    def _digest(self) -> str:
        # Every field is framed (a tag, its dtype, its length in bytes), so two different
        # profiles never feed the hash the same byte string (issue 12: unframed bytes let a
        # per-user profile with data collide with one of twice as many levels).
        h = hashlib.blake2b(digest_size=16, person=b"hdp-profile-v2")

        def field(tag: bytes, dtype: str, payload: bytes | memoryview) -> None:
            h.update(tag + dtype.encode().ljust(8, b" ") + len(payload).to_bytes(8, "little"))
            h.update(payload)

        field(b"K", "bool", b"T" if self.is_tiered else b"V")
        field(b"L", self.levels.dtype.str, _raw(self.levels))
        if self.is_tiered:  # per-user counts are all 1 (implied by the kind and the length)
            field(b"C", self.counts.dtype.str, _raw(self.counts))
        if self.names is None:
            field(b"N", "none", b"")
        else:
            field(b"N", "count", len(self.names).to_bytes(8, "little"))
            for name in self.names:  # each name framed by its length; lone surrogates kept
                field(b"S", "utf-8", name.encode("utf-8", "surrogatepass"))
        if self.data is None:
            field(b"D", "none", b"")
        else:
            field(b"D", self.data.dtype.str, _raw(self.data))
        return h.hexdigest()

    @property
    def n(self) -> int:
        """Number of users (sum of counts)."""
        return int(self.counts.sum()) if self.is_tiered else self.levels.size

    @property
    def k(self) -> int:
        """Number of entries: users for a per-user profile, tiers for a tiered one."""
        return int(self.levels.size)

    @property
    def n_public(self) -> int:
        """Number of users with eps = +inf."""
        return int(self.counts[np.isinf(self.levels)].sum())

    @property
    def n_excluded(self) -> int:
        """Number of users with eps = 0 (their data is not used)."""
        return int(self.counts[self.levels == 0].sum())

    @property
    def n_distinct(self) -> int:
        """Number of distinct privacy levels among users (tiers with count 0 ignored)."""
        return int(self.grouped()[0].size)

    def quantile(self, q: float) -> float:
        """Privacy level at quantile ``q`` of the users (lower value at ties); inf allowed."""
        return weighted_quantile(*self.grouped(), q)

    def grouped(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct levels in ascending order and how many users hold each (counts > 0).

        Computed once per profile (read-only arrays)."""
        return self._grouped

    @cached_property
    def _grouped(self) -> tuple[np.ndarray, np.ndarray]:
        if self.is_tiered:
            keep = self.counts > 0
            lv, inv = np.unique(self.levels[keep], return_inverse=True)
            ct = np.rint(np.bincount(inv, weights=self.counts[keep], minlength=lv.size))
        else:
            lv, ct = np.unique(self.levels, return_counts=True)
        ct = ct.astype(np.int64)
        lv.setflags(write=False)
        ct.setflags(write=False)
        return lv, ct

    def summary(self) -> dict[str, float]:
        """n, distinct levels, min/median/max eps, public share and excluded count."""
        n = self.n
        return {
            "n": n,
            "distinct": self.n_distinct,
            "min": self.quantile(0.0),
            "median": self.quantile(0.5),
            "max": self.quantile(1.0),
            "public_share": self.n_public / n,
            "n_public": self.n_public,
            "n_excluded": self.n_excluded,
        }

    def check_expandable(self) -> None:
        """Raise ProfileError if the profile has more than MAX_EXPAND users."""
        if self.n > MAX_EXPAND:
            raise ProfileError(
                f"this profile has {self.n:.3g} users; working with one value per user is "
                f"limited to {MAX_EXPAND:.0e} users (tiers need no expansion)"
            )

    def expand(self) -> np.ndarray:
        """One level per user (tiers repeated in order); refuses more than MAX_EXPAND users."""
        if not self.is_tiered:
            return np.array(self.levels)
        self.check_expandable()
        return np.repeat(self.levels, self.counts)

    def scaled(self, factor: float) -> EpsilonProfile:
        """The same profile with every level multiplied by ``factor`` (> 0)."""
        if not (factor > 0 and math.isfinite(factor)):
            raise ProfileError(f"scale factor must be a positive number, got {factor}")
        lv = self.levels * factor
        if self.is_tiered:
            return EpsilonProfile.from_tiers(lv, self.counts, self.names)
        return EpsilonProfile.from_values(lv)

    def with_n(self, n: int) -> EpsilonProfile:
        """A tiered profile with ``n`` users keeping this profile's shares of each level."""
        lv, ct = self.grouped()
        n = int(n)
        if n < 1:
            raise ProfileError(f"n must be at least 1, got {n}")
        shares = ct / ct.sum()
        new = np.floor(shares * n).astype(np.int64)
        # largest-remainder rounding keeps the total exactly n
        short = n - int(new.sum())
        if short > 0:
            order = np.argsort(-(shares * n - new), kind="stable")[:short]
            new[order] += 1
        return EpsilonProfile.from_tiers(lv, new)

    # tables and files -------------------------------------------------------------------------
    def to_csv(self) -> bytes:
        """The profile as UTF-8 CSV bytes that :func:`hdp_core.tables.profile_from_csv` reads
        back: columns name (if named), eps, count for tiers; eps (and value) per user; floats
        to 17 significant digits, inf as 'inf'. Names that a spreadsheet would read as a
        formula get a leading apostrophe (validate.csv_safe; profile_from_csv removes it)."""
        cols: dict[str, list[Any]] = {}
        if self.is_tiered:
            if self.names:
                cols["name"] = [csv_safe(v) for v in self.names]
            cols["eps"] = [f"{x:.17g}" for x in self.levels]
            cols["count"] = [str(int(c)) for c in self.counts]
        else:
            cols["eps"] = [f"{x:.17g}" for x in self.levels]
            if self.data is not None:
                cols["value"] = [f"{x:.17g}" for x in self.data]
        # a name holding a carriage return is quoted only when it is a line terminator too
        eol = "\r\n" if any("\r" in v for v in cols.get("name", ())) else "\n"
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator=eol)
        out.writerow(list(cols))
        out.writerows(zip(*cols.values(), strict=True))
        return buf.getvalue().encode()

    def __repr__(self) -> str:
        kind = "tiers" if self.is_tiered else "values"
        return f"EpsilonProfile({kind}, n={self.n}, k={self.k})"


def _raw(a: np.ndarray) -> memoryview:
    """The bytes of ``a`` in C order, without a copy when it is already contiguous."""
    return np.ascontiguousarray(a).data.cast("B")


def weighted_quantile(levels: np.ndarray, counts: np.ndarray, q: float) -> float:
    """The level at quantile ``q`` of users holding ascending ``levels`` with ``counts`` (the
    lower value at ties: the user at position floor(q (n - 1)))."""
    cum = np.cumsum(counts)
    pos = min(math.floor(q * (cum[-1] - 1)), int(cum[-1]) - 1)
    return float(levels[int(np.searchsorted(cum, pos, side="right"))])


def as_profile(eps: Any) -> EpsilonProfile:
    """``eps`` as an EpsilonProfile (array-likes become per-user profiles)."""
    if isinstance(eps, EpsilonProfile):
        return eps
    return EpsilonProfile.from_values(eps)
