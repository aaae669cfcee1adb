"""The ledger's command line: ``python -m hdp_release.ledger [PATH] [--dataset NAME |
--identity ID] [--format text|json]`` lists a ledger's releases and what remains; ``--people``
lists the per-person ledger by level (counts only, never ids or hashes)."""

from __future__ import annotations

import argparse
import json
import sys

from hdp_core.errors import ReleaseError
from hdp_release.ledger.store import (
    DEFAULT_PATH,
    ENV_VAR,
    PrivacyLedger,
    name_identity,
    pct,
    shown_identity,
)

PAGE = 50
"""Releases listed by default (the newest); ``--all`` lists every one."""


def main(argv: list[str] | None = None) -> int:
    """``python -m hdp_release.ledger [PATH] [--dataset NAME | --identity ID] [--format json]``:
    list a ledger's newest releases (oldest first; ``--all``: every one) and, for a dataset,
    what remains. Opens the ledger read-only: a missing file is an error, never created.
    Keyed identities are shown by their first digits only."""
    ap = argparse.ArgumentParser(
        prog="python -m hdp_release.ledger", description="List a privacy ledger's releases."
    )
    ap.add_argument("path", nargs="?", default=None, help=f"the ledger (default: ${ENV_VAR}, "
                    f"else {DEFAULT_PATH})")  # fmt: skip
    ap.add_argument("--dataset", default=None, help="only releases charged to this name")
    ap.add_argument("--identity", default=None, help="only releases charged to this identity")
    ap.add_argument(
        "--people",
        action="store_true",
        help="the per-person ledger: persons, spent and remaining by level (counts only)",
    )
    ap.add_argument("--format", choices=["text", "json"], default="text")
    ap.add_argument("--all", action="store_true", help=f"every release, not the newest {PAGE}")
    a = ap.parse_args(argv)
    if a.people:
        return _people(a.path, a.format)
    try:
        led = PrivacyLedger(a.path, read_only=True)
        ident = name_identity(a.dataset) if a.dataset is not None else a.identity
        rows, total, left = led.overview(ident, limit=None if a.all else PAGE)
    except ReleaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.format == "json":
        out = {
            "ledger": led.path,
            "remaining": None if left is None else str(left),
            "release_count": total,
            "releases": [
                {
                    "release_id": h.release_id,
                    "charged_at": h.charged_at.isoformat() + "Z",
                    "identities": [shown_identity(i) for i in h.identities],
                    "spend": str(h.spend),
                    "status": h.status,
                    "engine": h.engine,
                    "target": h.target,
                    "estimate": h.estimate,
                    "ci95": None if h.ci95 is None else list(h.ci95),
                    "receipt": h.receipt,
                }
                for h in rows
            ],
        }
        print(json.dumps(out, indent=2))
        return 0
    shown = "" if len(rows) == total else f" (the newest {len(rows)} shown; --all for every one)"
    print(f"ledger: {led.path}   releases: {total}{shown}")
    for h in rows:
        est = "" if h.estimate is None else f"   estimate {h.estimate:.6g}"
        print(
            f"#{h.release_id}  {h.charged_at:%Y-%m-%d %H:%M:%S} UTC  spend {pct(h.spend)}  "
            f"{h.status}{est}  charged to: {', '.join(shown_identity(i) for i in h.identities)}"
        )
    if left is not None:
        print(f"remaining for {shown_identity(ident)}: {pct(left)} of every user's level")
    return 0


def _people(path: str | None, fmt: str) -> int:
    """``--people``: hdp_release.ledger.people.person_summary (never an id or a hash)."""
    from hdp_release.ledger.people import person_summary

    try:
        led = PrivacyLedger(path)
        df = person_summary(led)
    except ReleaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if fmt == "json":
        rows = [
            {k: (str(v) if isinstance(v, float) and v == float("inf") else v) for k, v in r.items()}
            for r in df.to_dict("records")
        ]
        print(json.dumps({"ledger": led.path, "persons": int(df.persons.sum()), "levels": rows}))
        return 0
    print(f"ledger: {led.path}   persons: {int(df.persons.sum()):,}")
    if len(df):
        print(df.to_string(index=False))
    return 0
