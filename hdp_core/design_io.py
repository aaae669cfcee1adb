"""Tier menus as data, both directions: dict and JSON (the menu, optionally with its results),
and CSV (one row a tier).

Reading is strict: every field is checked and an unknown field, a wrong type or an impossible
value raises :class:`hdp_core.errors.MenuError` naming it. Text cells written to CSV are
escaped against spreadsheet formulas (see :func:`hdp_app.views.formatting.csv_safe`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from hdp_core.design import MenuReport
from hdp_core.errors import HdpError, MenuError
from hdp_core.menu import FORMAT, MAX_MENU_TIERS, VERSION, Menu, make_menu, menu_to_dict
from hdp_core.validate import csv_safe, csv_unescape, describe, is_real_number

__all__ = [
    "MAX_MENU_BYTES",
    "menu_from_csv",
    "menu_from_dict",
    "menu_from_json",
    "menu_from_upload",
    "menu_to_json",
    "report_to_csv",
    "report_to_dict",
]

MAX_MENU_BYTES = 64 * 1024
"""Largest JSON menu file accepted."""


# the menu as data ---------------------------------------------------------------------------
_TOP_KEYS = {"format", "version", "n_users", "data_range", "data_sd", "tiers", "results"}
_TIER_KEYS = {"name", "eps", "share_percent"}
_RANGE_KEYS = {"low", "high", "unit"}


def _num_json(x: float) -> float | str | None:
    if x is None:
        return None
    x = float(x)
    if math.isinf(x):
        return "inf"
    if math.isnan(x):
        return None
    return x


def report_to_dict(report: MenuReport) -> dict[str, Any]:
    """The results of :func:`evaluate_menu` as a JSON-ready dict (inf as "inf")."""
    errs = {}
    for m, e in report.errors.items():
        errs[m] = {
            "rmse": e.rmse,
            "half_width_95": e.half_width,
            "mse_on_unit_range": e.mse,
            "reports_middle_of_range": e.outputs_zero,
        }
    return {
        "tiers": [
            {
                "name": r["tier"],
                "users": r["users"],
                "eps_granted": _num_json(r["eps granted"]),
                "saturated": r["saturated"],
                "weight_of_one_user": r["weight of one user"],
                "share_of_estimate_percent": r["share of the estimate %"],
            }
            for r in report.rows()
        ],
        "tau_star": _num_json(report.tau_star),
        "loosest_level_worth_offering": _num_json(report.worth_offering),
        "users_capped": report.n_saturated,
        "errors": errs,
        "all_public_rmse": report.all_public.rmse,
        "data": "worst case (sd = half the range)"
        if report.menu.data_sd is None
        else f"standard deviation {report.menu.data_sd:g}",
        "unit": report.menu.unit,
    }


def menu_to_json(
    menu: Menu, report: MenuReport | None = None, extra: Mapping[str, Any] | None = None
) -> str:
    """The menu (and, if given, its results under "results", with the ``extra`` entries added
    to them, e.g. "targets") as indented JSON text."""
    d = menu_to_dict(menu)
    if report is not None:
        d["results"] = report_to_dict(report)
        d["results"].update(extra or {})
    return json.dumps(d, indent=2, ensure_ascii=False, allow_nan=False)


def report_to_csv(report: MenuReport) -> bytes:
    """One row per tier: name, eps (asked; 'inf' = public), count, share, granted, saturated,
    weights. The name/eps/count columns are what the Profile page reads as a tiered file."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "name",
            "eps",
            "count",
            "share_percent",
            "eps_granted",
            "saturated",
            "weight_of_one_user",
            "share_of_estimate_percent",
        ]
    )
    for r in report.rows():
        w.writerow(
            [
                csv_safe(r["tier"]),
                repr(float(r["eps asked"])),
                r["users"],
                repr(r["share %"]),
                repr(r["eps granted"]),
                r["saturated"],
                repr(r["weight of one user"]),
                repr(r["share of the estimate %"]),
            ]
        )
    return buf.getvalue().encode()


def _reject_constant(name: str) -> Any:
    raise MenuError(f'{name} is not allowed in a menu file; write "public" for a public tier')


def _parse_float(text: str) -> float:
    _too_long(text)
    v = float(text)
    if not math.isfinite(v):
        raise MenuError(f'the number {text[:30]} is too large; write "public" for a public tier')
    return v


_MAX_NUMBER_CHARS = 40
"""Longest number text a menu file may hold (longer ones cannot be a real count or level)."""


def _too_long(text: str) -> None:
    if len(text) > _MAX_NUMBER_CHARS:
        raise MenuError(
            f"a number in the file is {len(text):,} characters long, too long "
            f"(at most {_MAX_NUMBER_CHARS})"
        )


def _parse_int(text: str) -> int:
    _too_long(text)
    return int(text)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: a JSON object naming a field twice is refused (not the last kept)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise MenuError(f"the field {k[:30]!r} appears twice in one object; keep one")
        out[k] = v
    return out


def menu_from_dict(d: Any) -> Menu:
    """A :class:`Menu` from a parsed JSON object, strictly validated (MenuError otherwise).

    Required: "tiers" (1..MAX_MENU_TIERS objects with "name", "eps" (number or "public") and
    "share_percent" adding up to 100) and "n_users". Optional: "data_range" {"low", "high",
    "unit"} (default 0..1, no unit), "data_sd" (null = worst case), "format", "version",
    "results" (ignored). Any other field is an error.
    """
    if not isinstance(d, Mapping):
        raise MenuError(f"the menu must be a JSON object {{...}}, got {describe(d)}")
    extra = sorted(set(map(str, d)) - _TOP_KEYS)
    if extra:
        raise MenuError(f"unknown field {extra[0]!r}; allowed: {', '.join(sorted(_TOP_KEYS))}")
    if "format" in d and d["format"] != FORMAT:
        raise MenuError(f'"format" is {describe(d["format"])}; expected {FORMAT!r}')
    if "version" in d and (not is_real_number(d["version"]) or d["version"] != VERSION):
        raise MenuError(f'"version" is {describe(d["version"])}; this app reads version {VERSION}')
    if "results" in d and not isinstance(d["results"], Mapping):
        raise MenuError('"results" must be an object (it is ignored when reading)')
    if "tiers" not in d:
        raise MenuError('the menu has no "tiers" field')
    tiers = d["tiers"]
    if not isinstance(tiers, list):
        raise MenuError(f'"tiers" must be a list of tiers, got {describe(tiers)}')
    if not tiers:
        raise MenuError('"tiers" is empty: add at least one tier')
    if len(tiers) > MAX_MENU_TIERS:
        raise MenuError(f"the menu has {len(tiers)} tiers; at most {MAX_MENU_TIERS}")
    names, eps, shares = [], [], []
    for i, t in enumerate(tiers):
        where = f"tier {i + 1}"
        if not isinstance(t, Mapping):
            raise MenuError(
                f"{where} must be an object with name, eps and share_percent, got {describe(t)}"
            )
        bad = sorted(set(map(str, t)) - _TIER_KEYS)
        if bad:
            raise MenuError(
                f"{where}: unknown field {bad[0]!r}; a tier has name, eps and share_percent"
            )
        for f in ("name", "eps", "share_percent"):
            if f not in t:
                raise MenuError(f"{where} has no {f!r}")
        names.append(t["name"])
        eps.append(t["eps"])
        shares.append(t["share_percent"])
    if "n_users" not in d:
        raise MenuError('the menu has no "n_users" field (total number of users)')
    rng = d.get("data_range", {"low": 0.0, "high": 1.0, "unit": ""})
    if not isinstance(rng, Mapping):
        raise MenuError(
            f'"data_range" must be an object with low, high and unit, got {describe(rng)}'
        )
    bad = sorted(set(map(str, rng)) - _RANGE_KEYS)
    if bad:
        raise MenuError(f"data_range: unknown field {bad[0]!r}; it has low, high and unit")
    for f in ("low", "high"):
        if f not in rng:
            raise MenuError(f"data_range has no {f!r}")
    return make_menu(
        names,
        eps,
        shares,
        d["n_users"],
        rng["low"],
        rng["high"],
        rng.get("unit", ""),
        d.get("data_sd"),
    )


def menu_from_json(content: bytes | str) -> Menu:
    """A :class:`Menu` from JSON text or bytes (at most MAX_MENU_BYTES); MenuError otherwise."""
    if isinstance(content, str):
        raw = content.encode("utf-8", errors="surrogatepass")
    elif isinstance(content, (bytes, bytearray, memoryview)):
        raw = bytes(content)
    else:
        raise MenuError(f"expected JSON text, got {type(content).__name__}")
    if len(raw) > MAX_MENU_BYTES:
        raise MenuError(
            f"the file is {len(raw) / 1024:.0f} KB; a menu file is at most "
            f"{MAX_MENU_BYTES // 1024} KB"
        )
    if not raw.strip():
        raise MenuError("the file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise MenuError(
            f"the file is not UTF-8 text (undecodable byte at position {e.start})"
        ) from None
    try:
        d = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_parse_float,
            parse_int=_parse_int,
            object_pairs_hook=_no_duplicates,
        )
    except json.JSONDecodeError as e:
        raise MenuError(
            f"the file is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}"
        ) from None
    except RecursionError:
        raise MenuError("the file is nested too deeply to be a menu") from None
    return menu_from_dict(d)


_CSV_NAME = ("name", "tier")
_CSV_SHARE = ("share_percent", "share", "share %")


def menu_from_csv(content: bytes | str, base: Menu | None = None) -> Menu:
    """A :class:`Menu` from a CSV of tiers, one row a tier (the per-tier CSV this app exports,
    or one written by hand): columns ``name``, ``eps`` (a number or public/inf) and
    ``share_percent`` or ``count`` (users; the shares are then the counts' percentages).
    Read by :func:`hdp_core.tables.read_upload_csv` (at most MAX_MENU_BYTES and MAX_MENU_TIERS
    rows). The number of users is the counts' sum (else ``base``'s, else 1,000); the range,
    unit and declared spread are ``base``'s (else 0 to 1, none). MenuError otherwise, naming
    the row and column."""
    from hdp_core.tables import parse_numbers, read_upload_csv

    up = read_upload_csv(
        content, max_bytes=MAX_MENU_BYTES, max_rows=MAX_MENU_TIERS, error=MenuError
    )
    df = up.frame
    low = {str(c).strip().lower(): str(c) for c in df.columns}

    def col(names: tuple[str, ...]) -> str | None:
        return next((low[n] for n in names if n in low), None)

    name_c, eps_c, share_c, count_c = (
        col(_CSV_NAME),
        col(("eps", "epsilon")),
        col(_CSV_SHARE),
        col(("count", "users")),
    )
    if eps_c is None or (share_c is None and count_c is None):
        raise MenuError(
            "a menu CSV needs the columns eps and share_percent (or count), and optionally name",
            reason="missing_column",
        )

    def numbers(c: str, allow_inf: bool) -> list[float]:
        try:
            return [float(x) for x in parse_numbers(df[c], c, up.line_of, allow_inf)]
        except HdpError as e:
            raise MenuError(str(e), row=e.row, column=e.column, reason=e.reason) from None

    eps = numbers(eps_c, True)
    names = (
        [str(csv_unescape(str(v).strip())) for v in df[name_c]]
        if name_c is not None
        else [f"Tier {i + 1}" for i in range(len(df))]
    )
    n_users = base.n_users if base is not None else 1000
    if share_c is not None:
        shares = numbers(share_c, False)
    else:
        assert count_c is not None
        counts = numbers(count_c, False)
        total = sum(counts)
        if total <= 0:
            raise MenuError("the counts add up to 0: at least one tier needs users")
        shares = [100.0 * c / total for c in counts]
        n_users = int(total)
    return make_menu(
        names,
        eps,
        shares,
        n_users,
        base.low if base is not None else 0.0,
        base.high if base is not None else 1.0,
        base.unit if base is not None else "",
        base.data_sd if base is not None else None,
        normalise=share_c is None,
    )


def menu_from_upload(file_name: str, content: bytes | str, base: Menu | None = None) -> Menu:
    """A menu from an uploaded file: CSV (:func:`menu_from_csv`, with ``base``'s range) when
    the name ends in .csv, else JSON (:func:`menu_from_json`)."""
    if str(file_name).lower().endswith(".csv"):
        return menu_from_csv(content, base)
    return menu_from_json(content)
