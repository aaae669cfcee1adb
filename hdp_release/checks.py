"""The release's checks before anything computed from the values is used or released: the
public range and declared spread, the cells' kinds (counted in the engine), levels in the
supported range; every refusal a ReleaseError / BadCellError with row, column and reason, never
a cell's content. (On DuckDB's light path the ledger's check scan also sums the values' grid:
kept unused until the charge succeeds; see :func:`precheck`.)"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hdp_core.adpm import data_sd_constant
from hdp_core.errors import BadCellError, ReleaseError
from hdp_core.validate import (
    LEVEL_MAX,
    LEVEL_MIN,
    PUBLIC_WORDS,
    cell_reason,
)
from hdp_core.validate import reason_words as kind_words
from hdp_release.engines.base import NUMBER_REASONS, Histogram, not_finite_words, text_levels


# ------------------------------------------------------------------------------ checks
def check_range(lo: Any, hi: Any) -> tuple[float, float]:
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


def check_sd(data_sd: Any, lo: float, hi: float) -> float | None:
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
    try:
        data_sd_constant(sn)  # the one rule for a spread (2 / s^2 must be a finite number)
    except ValueError:
        raise ReleaseError(
            f"data_sd = {s:g} is too small for the range [{lo:g}, {hi:g}] (the tuned "
            "constant 2 / s^2 overflows); leave it out for the worst case"
        ) from None
    return sn


def precheck(
    src: Any,
    vcol: str,
    ecol: str,
    engine: str,
    key: bytes,
    factor: float = 1.0,
    bounds: tuple[float, float] | None = None,
) -> str:
    """The ledger's pass (before charging): the keyed level-profile identity (under the
    ledger's secret ``key``; no value enters it), and every refusal the release would make
    from the cells' kinds (empty table, bad level, bad value, level out of range, no usable
    user), with the same messages; with ``factor`` (the spend's level factor) < 1, also a
    smallest run level below the supported range (LEVEL_MIN), so a tiny spend is refused
    before anything is charged. Returns the identity.

    ``bounds`` (lo, hi), the release's range, on DuckDB: its light check (few levels) is the
    tiers pass itself, which also sums the values' grid per level; those sums stay on the
    source unused (every refusal here is decided from the counts alone) and are used only by
    the release after the charge succeeds (dropped with the source otherwise)."""
    try:
        args = (
            (vcol, ecol, key) if bounds is None or engine != "duckdb" else (vcol, ecol, key, bounds)
        )
        fp, n_rows, n_bad_eps, n_bad_value, n_range, n_pos, n_pub, low = src.precheck(*args)
    except ReleaseError:
        raise
    except Exception as exc:
        raise ReleaseError(
            f"the {engine} engine could not read the table ({type(exc).__name__}); nothing "
            "was charged or released"
        ) from None
    if n_rows == 0:
        raise ReleaseError("the table is empty: no users, nothing to release")
    if n_bad_eps:
        raise_bad_eps(src, ecol, n_bad_eps)
    if n_bad_value:
        raise_bad_value(src, vcol, n_bad_value)
    if n_range:
        row, v = src.first_bad("range")
        _raise_range(row, float(v) if v is not None else math.nan, ecol)
    if n_pub:
        check_public(src, ecol)
    if n_pos == 0:
        raise ReleaseError(
            f"no usable user: all {n_rows:,} rows have eps = 0 (data not to be used)"
        )
    if math.isfinite(low) and not low * factor >= LEVEL_MIN:
        raise_small_spend(low, factor)
    return str(fp)


def check_spend_factor(factor: float) -> None:
    """Refuse, before anything is read, a spend whose level factor would run even the
    largest supported level (LEVEL_MAX) below LEVEL_MIN (e.g. 1e-300: every level would
    round to nothing)."""
    if not factor * LEVEL_MAX >= LEVEL_MIN:
        raise_small_spend(LEVEL_MAX, factor)


def raise_small_spend(low: float, factor: float) -> None:
    """Refuse a spend that runs the smallest level ``low`` (as asked) below LEVEL_MIN: the
    release would fail after charging (issue 32). Names the least spend that works."""
    from hdp_core.spend import spend_factor

    least = float(f"{LEVEL_MIN / low:.3g}")
    while least < 1 and not low * spend_factor(least) >= LEVEL_MIN:  # one step up
        least = float(f"{least + 10.0 ** (math.floor(math.log10(least)) - 2):.3g}")
    raise ReleaseError(
        f"the spend is too small: the smallest level, {low:g}, would run at "
        f"{low * factor:.3g}, below the smallest supported level {LEVEL_MIN:g}; spend at "
        f"least {min(least, 1.0):.3g} of every user's level (nothing was charged)",
        reason="spend_too_small",
    )


def check_public(src: Any, ecol: str) -> None:
    """A table with public users (eps = +inf): refuse one whose cell is a number too large
    for a float ('1e400' reads as inf) rather than a word for public (once per source)."""
    if not getattr(src, "public_checked", False):
        src.check_public(ecol)
        src.public_checked = True


def _cell_of(src: Any, col: str, row: int, parsed: Any) -> Any:
    """What to classify a bad cell by (validate.cell_reason): its text when the engine parsed
    it to an infinity and the file writes a number too large for a float ('1e400': reason
    'too_large', not 'not_finite'), else the parsed cell (a negative level stays
    'negative')."""
    if not row or parsed is None or not math.isinf(float(parsed)):
        return parsed
    raw = src.raw_cell(col, row)
    return raw if raw is not None and cell_reason(raw) == "too_large" else parsed


def raise_bad_eps(src: Any, ecol: str, n_bad: int) -> None:
    row, v = src.first_bad("eps")
    cell = _cell_of(src, ecol, row, v)
    kind = cell_reason(cell)  # the words: 'NaN', 'empty', 'not a finite number' (-inf), ...
    reason = {"nan": "empty", "not_finite": "negative"}.get(kind, kind)  # level_counts' codes
    where = f"row {row}" if row else "a row"
    raise BadCellError(
        f"eps column {ecol!r}, {where}: {kind_words(kind)}; privacy levels must be "
        f"numbers >= 0 (inf = public) ({_such_rows(n_bad)})",
        row=row,
        column=ecol,
        reason=reason,
    )


def raise_bad_value(src: Any, vcol: str, n_bad: int) -> None:
    row, v = src.first_bad("value")
    cell = _cell_of(src, vcol, row, v)
    reason = cell_reason(cell)  # None: a missing cell ('empty')
    if reason not in ("empty", "too_large"):  # as the preview (check_values) says it
        reason = "empty" if reason == "nan" else "not_finite"
    raise BadCellError(
        _bad_value_message(vcol, row, n_bad, reason), row=row, column=vcol, reason=reason
    )


def check_level_range(
    h: Histogram, fin: np.ndarray, src: Any, ecol: str, factor: float = 1.0
) -> None:
    """Refuse levels outside [LEVEL_MIN, LEVEL_MAX] (0 and public aside) on every plan and
    engine, as profiles, menus and links do (hdp_core.validate, one rule); names the first
    such row. The histogram holds the run levels fl(eps x factor): the bounds are scaled the
    same way (rounding is monotone, so a level in range stays in the scaled range)."""
    use = fin & (h.n > 0)
    if not use.any():
        return
    low, high = float(h.emin[use].min()), float(h.emax[use].max())
    if low >= LEVEL_MIN * factor and high <= LEVEL_MAX * factor:
        if not low >= LEVEL_MIN:  # the levels are in range but the spend runs them below it
            raise_small_spend(low / factor, factor)
        return
    row, v = src.first_bad("range")
    x = float(v) / factor if v is not None else (low if low < LEVEL_MIN * factor else high)
    _raise_range(row, x, ecol)


def _raise_range(row: int, x: float, ecol: str) -> None:
    where = f"row {row}" if row else "a row"
    if x < LEVEL_MIN:
        reason = f"below the smallest supported level, {LEVEL_MIN:g}"
    else:
        reason = f"above the largest supported level, {LEVEL_MAX:g} (use 'public' for no privacy)"
    raise BadCellError(
        f"eps column {ecol!r}, {where}: a level {reason}",
        row=row,
        column=ecol,
        reason="out_of_range",
    )


def _such_rows(n: int) -> str:
    return f"{n:,} such row{'' if n == 1 else 's'}"


def _bad_value_message(value: str, row: int, n_bad: int, reason: str = "not_finite") -> str:
    where = f"row {row}" if row else "a row"
    what = kind_words(reason) if reason == "too_large" else "missing, NaN or infinite"
    return (
        f"value column {value!r}, {where}: {what}; every value must be a finite number "
        f"({_such_rows(n_bad)})"
    )


def _named_levels(col: Any, names: dict[str, float]) -> np.ndarray:
    """Per cell of a text eps column: its level when it is not a number but a tier's name or
    a public word, else NaN. Decided by the engines' own rule
    (hdp_release.engines.base.text_levels, hdp_core.validate.tier_key: NFKC, casefold,
    Unicode trim), once per distinct text that is not a number (no loop over rows)."""
    import pandas as pd

    codes, uniq = pd.factorize(col.astype("string"))  # a missing cell gets code -1
    texts = [str(u) for u in uniq]
    numbers = pd.to_numeric(pd.Series(texts, dtype="string").str.strip(), errors="coerce")
    words = [t for t, v in zip(texts, numbers.isna(), strict=True) if v]
    levels, _ = text_levels(words, names)
    per = np.array([levels.get(t, np.nan) for t in texts] + [np.nan], dtype=float)
    return per[codes]


def column_floats(
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
        named = _named_levels(col, names)
        x = np.where(np.isnan(named), x, named)
    # a number too large for a float ('1e400' reads as inf) is refused; an infinity written
    # as a word ('inf', '-inf') is read as one (public for eps; refused by the callers else)
    spelled = low.str.lstrip("+-").isin(["inf", "infinity"]) | low.isin(sorted(PUBLIC_WORDS))
    overflow = np.isinf(x) & ~spelled.fillna(False).to_numpy(dtype=bool)
    if role == "eps":
        overflow &= np.isnan(named)
    bad_txt = (
        (np.isnan(x) | overflow)
        & txt.notna().to_numpy(dtype=bool)
        & (txt != "").fillna(False).to_numpy(dtype=bool)
        & ~low.isin(["nan"]).fillna(False).to_numpy(dtype=bool)
    )
    if bad_txt.any():
        i = int(np.argmax(bad_txt))
        kind = cell_reason(txt.iloc[i])  # '1e400': too_large; '-inf': not_finite
        if kind in NUMBER_REASONS:  # written as a number, but not a finite float
            raise ReleaseError(
                f"{role} column {column!r}, row {i + 1}: {kind_words(kind)}; "
                f"{not_finite_words(role)}",
                row=i + 1,
                column=column,
                reason=kind,
            )
        menu = ""
        if role == "eps" and names:
            shown = ", ".join(repr(k) for k in list(names)[:10])
            menu = f" nor a tier of the menu ({shown}{', ...' if len(names) > 10 else ''})"
        raise ReleaseError(
            f"{role} column {column!r}, row {i + 1}: the cell is {kind_words(kind)}, not a "
            f"number{menu}",
            row=i + 1,
            column=column,
            reason=kind,
        )
    return x


def check_values(df: Any, value: str) -> None:
    """Check column ``value`` of a pandas DataFrame as :func:`release_mean` would (for a
    preview, before anything is released): raises ReleaseError naming the first row (1-based)
    whose cell is text that is not a number, or missing, NaN or infinite."""
    x = column_floats(df, value, "value", {}, "biuf")
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.argmax(bad))
        raise ReleaseError(
            _bad_value_message(value, i + 1, int(bad.sum())),
            row=i + 1,
            column=value,
            reason="empty" if np.isnan(x[i]) else "not_finite",
        )
