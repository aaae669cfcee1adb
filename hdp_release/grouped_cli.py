"""The command line of a release per segment: ``python -m hdp_release PATH --value C --eps C
--range LO HI --by COL[,COL] [--keys FILE] ...`` (the other options as for one mean, ``--id
COL`` included: each person charged once, in their own segment; see hdp_release.cli).
``--keys FILE``: a CSV whose header names the ``--by`` columns (exactly) and whose rows are
the segments wanted, in that order; read as text (matched as text, see hdp_release.grouped).
Output: GroupedRelease.text() or, with ``--format json``, its to_dict()."""

from __future__ import annotations

import csv
import io
from typing import Any

from hdp_core.errors import ReleaseError

MAX_KEYS_BYTES = 5 * 1024 * 1024

EXIT_RELEASED, EXIT_REFUSED, NOT_RECORDED = 0, 2, 3
"""hdp_release.cli's exit statuses (cli imports this module: no import back; a test checks
that they agree)."""


def by_columns(text: str) -> list[str]:
    """``--by a,b`` -> ['a', 'b'] (names as written; an empty name is refused)."""
    cols = next(csv.reader([text]))
    if not cols or any(not c for c in cols):
        raise ReleaseError("--by needs one or more column names separated by commas")
    return cols


def read_keys(path: str, by: list[str]) -> list[tuple[str, ...]]:
    """The segments of a keys CSV (header: the --by columns, exactly; at most 5 MB). Raises
    ReleaseError naming the row of a short row, never quoting a cell."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_KEYS_BYTES + 1)
    except OSError as exc:
        raise ReleaseError(f"the keys file cannot be read ({type(exc).__name__})") from None
    if len(raw) > MAX_KEYS_BYTES:
        raise ReleaseError("the keys file is larger than 5 MB")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ReleaseError("the keys file is not UTF-8 text") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise ReleaseError("the keys file is empty: its first row must name the --by columns")
    head = rows[0]
    missing = [b for b in by if b not in head]
    if missing:
        raise ReleaseError(
            f"the keys file has no column {missing[0]!r} (its header must name --by)"
        )
    idx = [head.index(b) for b in by]
    out = []
    for i, r in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in r):
            continue
        if len(r) < len(head):
            raise ReleaseError(
                f"the keys file, row {i}: {len(r)} cells, the header names {len(head)}",
                row=i,
            )
        out.append(tuple(r[j] for j in idx))
    return out


def main_grouped(
    a: Any, menu: Any, lo_hi: tuple[float, float], sd: float | None, ledger: Any
) -> int:
    """``python -m hdp_release ... --by COL[,COL] [--keys FILE]``, with the menu, range,
    spread and ledger hdp_release.cli.main read from the same arguments: exit status as its
    (0 released, 2 refused, 3 released but not recorded)."""
    import json
    import sys

    from hdp_core.errors import HdpError
    from hdp_release.grouped import release_means
    from hdp_release.result import not_recorded_note

    try:
        if a.by is None:
            raise ReleaseError("--keys needs --by (the segment columns)")
        by = by_columns(a.by)
        keys = read_keys(a.keys, by) if a.keys is not None else None
        g = release_means(
            a.path,
            value=a.value,
            eps=a.eps,
            by=by,
            lo=lo_hi[0],
            hi=lo_hi[1],
            target=a.target,
            keys=keys,
            id=a.id,
            ledger=ledger,
            spend=a.spend,
            dataset=a.dataset,
            tiers=menu,
            engine=a.engine,
            data_sd=sd,
        )
        out = json.dumps(g.to_dict(), indent=2) if a.format == "json" else g.text()
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
    if g.recorded is False:
        print(f"warning: {not_recorded_note(g)}", file=sys.stderr)  # type: ignore[arg-type]
        return NOT_RECORDED
    return EXIT_RELEASED
