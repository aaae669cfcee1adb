"""The command line of the private release: ``python -m hdp_release PATH --value COL
--eps COL --range LO HI [--engine spark] [--data-sd S] [--menu MENU.json] [--target
population|table] [--ledger PATH | --no-ledger] [--id COL] [--spend F] [--dataset NAME]
[--format json]`` (also
installed as ``hdp-release``), and ``python -m hdp_release --list-ledger PATH [--dataset
NAME] [--format json]`` to list a ledger's releases (hdp_release.ledger.store's listing).

The ledger is ``--ledger PATH``, else ``$HDP_LEDGER`` when it is set; ``--no-ledger`` (or
neither) releases NOT TRACKED: every release spends each user's level again (a warning on
stderr says so). ``--id COL`` charges each person (hdp_release.ledger.people); without it the
ledger keeps a budget per dataset, and a subset, an edit or another column of the same people
is new data to it (the output says so: a line of the text, "tracking" in the JSON).

Exit status: 0 released; 2 refused, nothing released (every failure is one line on stderr
starting with ``error:``, argparse's own usage errors too; no traceback, and no cell of the
table in the message); 3 (:data:`NOT_RECORDED`) released and charged to the ledger, but the
ledger could not record the result in its history (e.g. it was busy): the result is printed
on stdout as usual and one line on stderr starting with ``warning:`` says so. The release
was paid for, so it is never thrown away; the distinct status lets a script notice that the
ledger's history lacks it.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from typing import Any, NoReturn

__all__ = ["EXIT_REFUSED", "EXIT_RELEASED", "NOT_RECORDED", "main"]

EXIT_RELEASED = 0
EXIT_REFUSED = 2
NOT_RECORDED = 3
"""Exit status of a release that was made and charged but whose result the ledger could not
record in its history (the result is on stdout; a warning line on stderr)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit status 2) and negative numbers in exponent form
    (``--range -1e3 5``) read as numbers, not as options."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")

    def error(self, message: str) -> NoReturn:
        print(f"error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="python -m hdp_release",
        description="Release a private mean under per-user privacy "
        "levels (ADPM, OpenDP Laplace noise).",
        epilog=f"Exit status: {EXIT_RELEASED} released; {EXIT_REFUSED} refused (nothing "
        f"released); {NOT_RECORDED} released and charged, but the ledger could not record "
        "the result in its history (the result is still printed; a warning on stderr).",
    )
    ap.add_argument("path", nargs="?", default=None, help="CSV or Parquet file (or a quoted glob)")
    ap.add_argument("--value", default=None, help="column of the values (required)")
    ap.add_argument("--eps", default=None, help="column of the privacy levels (required)")
    ap.add_argument(
        "--range",
        nargs="+",
        default=None,
        metavar="LO HI",
        help="public data range, two numbers (or one 'LO,HI': --range=-10,10); values outside "
        "are clamped (required unless --menu gives it); it must be finite",
    )
    ap.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb")
    ap.add_argument(
        "--data-sd",
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
    ap.add_argument(
        "--target",
        choices=["population", "table"],
        default="population",
        help="which mean: 'population' (ADPM; assumes a user's level does not depend on their "
        "value) or 'table' (the table's own mean; no assumption)",
    )
    ap.add_argument(
        "--ledger",
        default=None,
        metavar="PATH",
        help="privacy ledger (a DuckDB file; created if missing): each user's level is their "
        "total budget on the dataset; without it nothing is tracked",
    )
    ap.add_argument(
        "--spend",
        default="1",
        metavar="F",
        help="fraction of every user's level this release spends, in (0, 1] (e.g. 0.25 or 1/4)",
    )
    ap.add_argument(
        "--dataset", default=None, metavar="NAME", help="the dataset's name in the ledger"
    )
    ap.add_argument(
        "--id",
        default=None,
        metavar="COL",
        help="column naming each row's person: the ledger charges each person what they "
        "lose, across every column, subset and file (ids stored only as keyed hashes)",
    )
    ap.add_argument(
        "--no-ledger",
        action="store_true",
        help="release without any ledger even when $HDP_LEDGER is set: NOT TRACKED",
    )
    ap.add_argument(
        "--list-ledger",
        default=None,
        metavar="PATH",
        help="list the releases in this ledger (with --dataset: that dataset's and what "
        "remains) and exit",
    )
    ap.add_argument(
        "--by",
        default=None,
        metavar="COL[,COL]",
        help="a private mean per segment of these columns (one value per person, used once)",
    )
    ap.add_argument(
        "--keys", default=None, metavar="FILE", help="with --by: a CSV of the segments wanted"
    )
    ap.add_argument("--format", choices=["text", "json"], default="text")
    return ap


def number_arg(text: str, where: str) -> float:
    """A number given on the command line, read by the app's rule
    (hdp_core.validate.parse_number: plain decimal text, so '1_0' and '0x10' are refused);
    an infinity is refused with why. Raises ReleaseError."""
    from hdp_core.errors import ReleaseError
    from hdp_core.validate import parse_number

    if text.strip().lower().lstrip("+-") in ("inf", "infinity"):
        raise ReleaseError(
            f"{where} must be finite: a release clamps every value to a public, finite range "
            "(the noise is scaled to its width), so an unbounded range cannot be released"
        )
    return parse_number(text, where, -math.inf, math.inf, error=ReleaseError)


def range_arg(tokens: list[str]) -> tuple[float, float]:
    """``--range LO HI`` or ``--range=LO,HI`` as two finite numbers (:func:`number_arg`)."""
    from hdp_core.errors import ReleaseError

    parts = tokens[0].split(",") if len(tokens) == 1 else list(tokens)
    if len(parts) != 2:
        raise ReleaseError("--range needs two numbers: --range LO HI or --range=LO,HI")
    return number_arg(parts[0], "--range LO"), number_arg(parts[1], "--range HI")


def _with_tier_names(d: dict[str, Any], menu: Any) -> dict[str, Any]:
    """The JSON receipt with each row's tier names (as the Release page shows them)."""
    from hdp_release.preview import tier_names_of

    rows = d["tiers"]
    levels = [float(r["eps"]) for r in rows]
    for r, name in zip(rows, tier_names_of(levels, menu), strict=True):
        r["tier"] = name
    return d


def main(argv: list[str] | None = None) -> int:
    """Run the release; returns the exit status (0 released, 2 refused, 3 released but not
    recorded in the ledger's history)."""
    from hdp_core.errors import HdpError, MenuError, ReleaseError
    from hdp_release.release import release_mean
    from hdp_release.result import not_recorded_note

    ap = _parser()
    a = ap.parse_args(argv)
    if a.list_ledger is not None:
        from hdp_release.ledger.cli import main as list_ledger

        args = [a.list_ledger, "--format", a.format]
        if a.dataset is not None:
            args += ["--dataset", a.dataset]
        return list_ledger(args)
    missing = [f for f, v in (("PATH", a.path), ("--value", a.value), ("--eps", a.eps)) if not v]
    if missing:
        ap.error(f"the following arguments are required: {', '.join(missing)}")
    try:
        menu = None
        lo_hi = None if a.range is None else range_arg(a.range)
        sd = None if a.data_sd is None else number_arg(a.data_sd, "--data-sd")
        if a.menu is not None:
            from hdp_core.design_io import MAX_MENU_BYTES, menu_from_json

            try:
                with open(a.menu, "rb") as f:
                    menu = menu_from_json(f.read(MAX_MENU_BYTES + 1))
            except (OSError, MenuError) as exc:
                raise ReleaseError(f"the menu file {a.menu!r} cannot be used: {exc}") from None
            lo_hi = lo_hi or (menu.low, menu.high)
            sd = sd if sd is not None else menu.data_sd
        if lo_hi is None:
            raise ReleaseError("the public range is missing: give --range LO HI (or --menu)")
        if a.no_ledger and a.ledger is not None:
            raise ReleaseError("--no-ledger and --ledger contradict each other; give one")
        ledger: Any = False if a.no_ledger else a.ledger  # None: $HDP_LEDGER when it is set
        if a.by is not None or a.keys is not None:  # a mean per segment, the same settings
            from hdp_release.grouped_cli import main_grouped

            return main_grouped(a, menu, lo_hi, sd, ledger)
        rel = release_mean(
            a.path,
            value=a.value,
            eps=a.eps,
            lo=lo_hi[0],
            hi=lo_hi[1],
            engine=a.engine,
            data_sd=sd,
            tiers=menu,
            target=a.target,
            ledger=ledger,
            spend=a.spend,
            dataset=a.dataset,
            id=a.id,
        )
        if a.format == "json":
            d = rel.to_dict()
            out = json.dumps(_with_tier_names(d, menu) if menu is not None else d, indent=2)
        elif menu is not None:  # the receipt names each row's tiers, as the JSON does
            from hdp_release.preview import tier_names_of

            out = rel.text(tier_names_of(rel.tiers["eps"].to_numpy(dtype=float), menu))
        else:
            out = rel.text()
    except HdpError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_REFUSED
    except Exception as exc:  # never a traceback (its text could quote data)
        print(
            f"error: the release failed ({type(exc).__name__}); nothing was released",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    print(out)
    from hdp_release.result import tracking_note

    if rel.ledger_path is None:  # loudly, where a script's reader sees it
        print(f"warning: {tracking_note(rel)}", file=sys.stderr)
    if rel.recorded is False:  # paid for: printed above, never lost; said on stderr
        print(f"warning: {not_recorded_note(rel)}", file=sys.stderr)
        return NOT_RECORDED
    return EXIT_RELEASED
