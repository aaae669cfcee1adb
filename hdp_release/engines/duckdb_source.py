"""The DuckDB engine: a CSV, Parquet or JSON file, a glob of them, or a pandas DataFrame, read by
the embedded DuckDB; every aggregate one grouped SQL pass (see hdp_release.engines.base). The
fast plan's passes are in hdp_release.engines.duckdb_fast."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from hdp_core.errors import ReleaseError
from hdp_release.engines.base import (
    BINS_PER_E,
    MAX_TEXTS,
    MAX_TIERS,
    PUBLIC_BIN,
    Q_CAP,
    QE,
    SAMPLE_MAX,
    ZERO_BIN,
    Histogram,
    Q,
    bad_cell,
    check_column_names,
    check_path,
    fetch_rows,
    histogram_from_rows,
    lit,
    q2_sql,
    q2_triple,
    text_levels,
)
from hdp_release.engines.duckdb_fast import FastPlan
from hdp_release.engines.duckdb_sql import (
    NUMERIC_DUCK,
    PUBLIC_SQL,
    header_names,
    number_sql,
    quote_name,
    range_sql,
    shared_cursor,
    sql_path,
    sql_str,
    type_text,
)


def glob_chars(path: str) -> bool:
    """Whether ``path`` is a glob (DuckDB reads every file it matches)."""
    return any(ch in path for ch in "*?[")


class DuckSource(FastPlan):
    """A table read by DuckDB: the checks' and the general plan's queries here, the fast plan's
    passes in :class:`hdp_release.engines.duckdb_fast.FastPlan`."""

    def __init__(self, source: Any, all_varchar: bool = False):

        self.tier_names: dict[str, float] = {}
        self.level_factor = 1.0
        self.all_varchar = all_varchar
        self.cols: tuple[str, str] | None = None
        self.check_passes = 0  # the dataset ledger's check scans (precheck): 1 or 2
        # values_inside: (value column, its (min, max) from the statistics, rows)
        self.value_stats: tuple[str, tuple[float, float] | None, int | None] | None = None
        self.con = shared_cursor()  # its own connection: registrations stay local to it
        self.path: str | None = None
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            kind = check_path(path)
            fn = "read_parquet" if kind == "parquet" else "read_csv"
            opts = "" if kind == "parquet" else ", header = true"
            if all_varchar and kind == "csv":
                opts += ", all_varchar = true"
            self.rel = f"{fn}({sql_path(path)}{opts})"
            self.kind = kind
            self.path = path
            self.raw_names = header_names(self.con, path, kind)
        else:
            import pandas as pd

            if not isinstance(source, pd.DataFrame):
                raise ReleaseError(
                    "source must be a path to a CSV or Parquet file (or a glob), a pandas "
                    f"DataFrame, or a Spark DataFrame with engine='spark'; got "
                    f"{type(source).__name__}"
                )
            self.raw_names = [str(c) for c in source.columns]
            check_column_names(self.raw_names, None, list(dict.fromkeys(self.raw_names)))
            try:
                self.con.register("hdp_src", source)
            except Exception as exc:
                raise ReleaseError(f"could not read the DataFrame ({type(exc).__name__})") from None
            self.rel = "hdp_src"
            self.kind = "dataframe"
        try:
            desc = self.con.execute(f"DESCRIBE SELECT * FROM {self.rel}").fetchall()
        except Exception as exc:  # duckdb raises its own error family (its text may quote data)
            raise ReleaseError(
                f"could not read the table as {self.kind} ({type(exc).__name__})"
            ) from None
        self.read_names = [str(r[0]) for r in desc]
        self.types = {str(r[0]): str(r[1]).upper() for r in desc}

    # ---------------------------------------------------------------- every query goes here
    def _run(self, sql: str, how: str = "all") -> Any:
        """Run ``sql``: DuckDB's errors (a late bad cell, a file it cannot read) become a
        ReleaseError naming the row and column, never quoting DuckDB's text (which may hold
        a line of the file)."""
        import duckdb

        try:
            cur = self.con.execute(sql)
            if how == "all":
                return cur.fetchall()
            if how == "one":  # fetched to the end: no unfinished result stays on the connection
                rows = cur.fetchall()
                return rows[0] if rows else None
            return cur.fetchnumpy()
        except duckdb.Error as exc:
            raise self._failure(exc) from None

    def _failure(self, exc: Exception) -> ReleaseError:
        """A ReleaseError for a failed query: for a CSV read with typed columns, the file is
        read again as text to find the first bad cell (row, column, kind)."""
        if self.kind == "csv" and not self.all_varchar and self.cols and self.path:
            txt = None
            try:
                txt = DuckSource(self.path, all_varchar=True)
                txt.tier_names = self.tier_names
                for col, role in zip(self.cols, ("value", "eps"), strict=True):
                    txt._as_double(col, role, role == "eps")
            except ReleaseError as found:
                return found
            finally:
                if txt is not None:
                    txt.close()
        return ReleaseError(
            f"DuckDB could not read the table ({type(exc).__name__}); check that every "
            "file has the same columns and that each column holds one kind of value; "
            "nothing was released"
        )

    def _first_row(self, cond: str, col: str, rel: str | None = None) -> tuple[int, Any]:
        """(row, cell) of the first row of ``rel`` (default: the source) where ``cond`` holds
        of its cell ``v`` in column ``col``; (0, None) if none."""
        rows = self._run(
            f"SELECT rn, v FROM (SELECT row_number() OVER () AS rn, {quote_name(col)} AS v "
            f"FROM {rel or self.rel}) WHERE {cond} ORDER BY rn LIMIT 1"
        )
        return (int(rows[0][0]), rows[0][1]) if rows else (0, None)

    def _as_double(self, col: str, role: str, eps: bool) -> str:
        t = self.types[col]
        c = quote_name(col)
        if t.startswith("DECIMAL") or t in NUMERIC_DUCK:
            return f"CAST({c} AS DOUBLE)"
        if t in ("VARCHAR", "STRING", "TEXT"):
            num = number_sql(c)
            if not eps:  # text that is not a number ('1e400' is inf: a bad value, below)
                row, cell = self._first_row(
                    f"{number_sql('v')} IS NULL AND v IS NOT NULL AND trim(v) <> ''",
                    col,
                )
                if row:
                    raise bad_cell(role, col, row, cell, self.tier_names)
                return num
            # texts that are not numbers, and numbers too large for a float ('1e400' casts to
            # inf): only the words for public (and a tier's name) may mean a public user
            texts = [
                str(r[0])
                for r in self._run(
                    f"SELECT DISTINCT {c} FROM {self.rel} WHERE {c} IS NOT NULL AND ({num} IS "
                    f"NULL OR ({num} = CAST('inf' AS DOUBLE) AND lower(trim({c})) NOT IN "
                    f"{PUBLIC_SQL})) LIMIT {MAX_TEXTS + 1}"
                )
            ]
            levels, bad = text_levels(texts[:MAX_TEXTS], self.tier_names)
            if bad:
                inlist = ", ".join(sql_str(b) for b in bad)
                row, cell = self._first_row(f"v IN ({inlist})", col)
                raise bad_cell(role, col, row, cell, self.tier_names)
            if len(texts) > MAX_TEXTS:
                raise ReleaseError(
                    f"eps column {col!r} holds more than {MAX_TEXTS:,} different texts that "
                    "are not numbers; write the levels as numbers or tier names"
                )
            # sorted: the same SQL for the same table whatever order DISTINCT gave (the ledger
            # check's tiers scan is used by the release only if it read the same SQL)
            whens = "".join(f"WHEN {sql_str(k)} THEN {lit(x)} " for k, x in sorted(levels.items()))
            return f"CASE {c} {whens}ELSE {num} END" if whens else num
        raise ReleaseError(f"{role} column {col!r} has type {type_text(t)}, not numbers")

    def _scaled(self, e: str) -> str:
        """The level the release runs at: eps x level_factor (a spend below 1)."""
        return e if self.level_factor == 1.0 else f"(({e}) * {lit(self.level_factor)})"

    def value_sql(self, col: str) -> str:
        """SQL of column ``col`` read as the release's values (a double; bad text refused)."""
        return self._as_double(col, "value", False)

    def level_sql(self, col: str) -> str:
        """SQL of column ``col`` read as the levels the release runs at (eps x level_factor;
        tier names and public words decided, bad text refused)."""
        return self._scaled(self._as_double(col, "eps", True))

    def run_numpy(self, sql: str) -> dict:
        """Run ``sql`` and fetch its columns as numpy arrays (errors as :meth:`run_sql`)."""
        return self._run(sql, "numpy")

    def run_sql(self, sql: str, params: list | None = None) -> list:
        """Run ``sql`` (with ``params``) and fetch every row; DuckDB's errors become a
        ReleaseError that quotes nothing of the table."""
        if params is None:
            return self._run(sql)
        import duckdb

        try:
            return self.con.execute(sql, params).fetchall()
        except duckdb.Error as exc:
            raise self._failure(exc) from None

    def precheck(
        self, value: str, eps: str, key: bytes, bounds: tuple[float, float] | None = None
    ) -> tuple[str, int, int, int, int, int, int, float]:
        """Before a ledger charges (nothing computed from the values is used: only their
        kind): the keyed level-profile identity of the parsed levels under the ledger's
        secret ``key`` (no value enters it: from each level's row count,
        levels_identity_counts, when the first rows' few distinct levels are all there is;
        else levels_identity_sql's own pass), and the counts of
        rows, bad levels, bad values (missing or not finite: ``isfinite``, which no column
        statistics answer), levels outside the supported range, rows with eps > 0 (usable)
        and public rows (eps = +inf), at the requested levels, and the smallest finite
        positive level (inf if none). With ``bounds`` = (lo, hi), the release's range, the
        light scan is the tiers pass itself (:meth:`FastPlan.tiers_check`): its sums of the
        values' grid are kept on the source, unused, for the release after the charge."""
        from hdp_release.fingerprint import levels_identity_from_sums, levels_identity_sql

        self.cols = (value, eps)
        v = self._as_double(value, "value", False)
        e = self._as_double(eps, "eps", True)
        self.v_expr, self.e_expr = v, e
        # one light scan (issue 30): how many rows hold each of the first rows' few distinct
        # levels, and how many values are finite (isfinite: false for NaN, +-inf; NULL for
        # a missing value); the identity and the level counts then follow from the levels. A
        # row with another level (many levels), a missing level or a bad value costs the
        # general counts and the identity's own pass, as before. With the release's range
        # (bounds) the light scan is the tiers pass (the same counts: y is NULL exactly when
        # the value is not finite), whose sums wait on the source for the charge.
        first = self._run(  # the distinct levels, with their rows (only to steer the pass)
            f"SELECT e, count(*) FROM ({self._head(f'{e} AS e')}) "
            f"WHERE e IS NOT NULL AND NOT isnan(e) GROUP BY e LIMIT {MAX_TIERS + 1}"
        )
        if 0 < len(first) <= MAX_TIERS and bounds is not None:
            lv = sorted(float(r[0]) for r in first)
            share = max(int(r[1]) for r in first) / sum(int(r[1]) for r in first)
            cnt = self.tiers_check(lv, bounds, share)  # None: another level, or a bad value
            if cnt is not None:
                self.check_passes = 1
                return self._counts_from_levels(lv, cnt, key)
        elif 0 < len(first) <= MAX_TIERS:
            lv = sorted(float(r[0]) for r in first)
            each = ", ".join(f"count_if(e = {lit(x)})" for x in lv)
            got = self._run(
                f"SELECT count(*), count_if(isfinite(v)), {each} FROM (SELECT {v} AS v, "
                f"{e} AS e FROM {self.rel})",
                "one",
            )
            n_rows, cnt = int(got[0]), [int(x) for x in got[2:]]
            if sum(cnt) == n_rows and int(got[1]) == n_rows:
                self.check_passes = 1
                return self._counts_from_levels(lv, cnt, key)
        self.check_passes = 2
        row = self._run(levels_identity_sql(self.rel, e, key), "one")
        fp = levels_identity_from_sums(int(row[0]), int(row[1]), int(row[2]), key)
        c = self._run(
            f"""SELECT count(*), count_if(e IS NULL OR isnan(e) OR e < 0),
                count_if(v IS NULL OR NOT isfinite(v)), count_if({range_sql(1.0)}),
                count_if(e > 0), count_if(e = CAST('inf' AS DOUBLE)),
                min(CASE WHEN e > 0 AND isfinite(e) THEN e END)
                FROM (SELECT {v} AS v, {e} AS e FROM {self.rel})""",
            "one",
        )
        n = [int(x or 0) for x in c[:6]]
        low = math.inf if c[6] is None else float(c[6])
        return fp, n[0], n[1], n[2], n[3], n[4], n[5], low

    @staticmethod
    def _counts_from_levels(
        lv: list[float], cnt: list[int], key: bytes
    ) -> tuple[str, int, int, int, int, int, int, float]:
        """precheck's answer when every row holds one of the levels ``lv`` (``cnt`` rows
        each) and every value is finite: the same counts as its general query, as sums
        over the levels (the same comparisons as range_sql, in floats)."""
        from hdp_core.validate import LEVEL_MAX, LEVEL_MIN
        from hdp_release.fingerprint import levels_identity_counts

        def rows(ok: Any) -> int:
            return sum(c for x, c in zip(lv, cnt, strict=True) if ok(x))

        fin = [x for x, c in zip(lv, cnt, strict=True) if c and 0 < x < math.inf]
        return (
            levels_identity_counts(lv, cnt, key),
            sum(cnt),
            rows(lambda x: x < 0),
            0,
            rows(lambda x: 0 < x < math.inf and (x < LEVEL_MIN or x > LEVEL_MAX)),
            rows(lambda x: x > 0),
            rows(lambda x: x == math.inf),
            min(fin, default=math.inf),
        )

    def histogram(self, value: str, eps: str, lo: float, hi: float) -> Histogram:
        self.cols = (value, eps)
        v = self._as_double(value, "value", False)
        e = self._scaled(self._as_double(eps, "eps", True))
        self.v_expr, self.e_expr = v, e
        R = hi - lo
        y = (
            f"least(greatest(CAST(round((least(greatest(v, {lit(lo)}), {lit(hi)}) - "
            f"{lit(lo)}) / {lit(R)} * {Q}) AS BIGINT), 0), {Q})"
        )
        # greatest(e, 0): a bad level (negative, -inf) gets q = 0 instead of failing the cast;
        # its row is counted as a bad level (bin NULL) and refused
        qq = f"CAST(floor(least(greatest(e, 0), {lit(Q_CAP)}) * {float(QE)!r}) AS BIGINT)"
        b = (
            f"CASE WHEN e IS NULL OR isnan(e) OR e < 0 THEN NULL WHEN e = 0 THEN {ZERO_BIN} "
            f"WHEN isinf(e) THEN {PUBLIC_BIN} ELSE CAST(floor(ln(e) * {BINS_PER_E}) AS BIGINT) "
            "END"
        )
        self.bin_expr, self.y_expr, self.q_expr = b, y, qq
        self.key_expr = b
        sql = f"""
            WITH t AS (SELECT {v} AS v, {e} AS e FROM {self.rel}),
            u AS (SELECT {b} AS b, e, v, {y} AS y, {qq} AS q,
                  (v IS NULL OR isnan(v) OR isinf(v)) AS badv FROM t)
            SELECT b, count(*), sum(CASE WHEN isinf(e) THEN 0 ELSE e END),
                   sum(CASE WHEN isinf(e) THEN 0 ELSE e * e END), min(e), max(e),
                   {q2_sql()}, sum(y), sum(q), sum(CAST(q AS HUGEINT) * y), count_if(badv)
            FROM u GROUP BY b ORDER BY b NULLS FIRST"""
        rows = [(*r[:6], q2_triple(*r[6:9]), *r[9:]) for r in self._run(sql)]
        return histogram_from_rows(rows)

    # ------------------------------------------------ the plan's level sample (DuckDB)
    def _head(self, select: str) -> str:
        """SQL of ``select`` over the first SAMPLE_MAX rows. One Parquet file: by its row
        numbers, so DuckDB reads only the row groups that hold them (issue 29: at 10^7 rows
        the LIMIT took about a fifth of SUM(value)'s CPU time, this a twentieth); the same
        rows. Else (CSV, a glob, a DataFrame, a column named file_row_number) a
        LIMIT."""
        own = any(n.lower() == "file_row_number" for n in self.read_names)
        if self.kind == "parquet" and self.path and not own and not glob_chars(self.path):
            return (
                f"SELECT {select} FROM read_parquet({sql_path(self.path)}, file_row_number = "
                f"true) WHERE file_row_number < {SAMPLE_MAX}"
            )
        return f"SELECT {select} FROM {self.rel} LIMIT {SAMPLE_MAX}"

    def level_sample(self) -> np.ndarray:
        """The levels of the first SAMPLE_MAX rows (the levels the release runs at; empty
        exactly when the table is). Only steers the plan."""
        scaled = self.level_factor != 1.0
        e = self.e0_expr if scaled else self.e_expr
        x = self._run(self._head(f"{e} AS e"), "numpy")["e"]
        x = np.asarray(np.ma.filled(np.ma.asarray(x, dtype=float), np.nan), dtype=float)
        if scaled:  # the asked levels kept for the tiers pass; eps x factor as the SQL's
            self.sample0, x = np.unique(x[~np.isnan(x)]), x * self.level_factor
        return x

    def level_counts(self) -> list[tuple[float, int]]:
        """The distinct levels of the first SAMPLE_MAX rows with their rows, as the release
        runs them (a missing level as NaN), at most MAX_TIERS + 1 of them (more: many levels,
        :meth:`level_sample` then reads them all); empty exactly when the table is. One
        grouped query over the first rows instead of fetching them (the tiers plan's only
        use of the sample). At a spend below 1 the asked levels are kept (``sample0``) and
        asked levels with one run level are one entry. Only steers the plan."""
        scaled = self.level_factor != 1.0
        e = self.e0_expr if scaled else self.e_expr
        got = self._run(
            f"SELECT e, count(*) FROM ({self._head(f'{e} AS e')}) GROUP BY e LIMIT {MAX_TIERS + 1}"
        )
        rows = [(math.nan if x is None else float(x), int(n)) for x, n in got]
        if not scaled or len(rows) > MAX_TIERS:
            return rows
        asked = np.unique(np.array([x for x, _ in rows if not math.isnan(x)], dtype=float))
        self.sample0 = asked
        run: dict[float, int] = {}
        for x, n in rows:
            y = x * self.level_factor
            run[y] = run.get(y, 0) + n  # NaN keys stay apart (never equal): refused anyway
        return list(run.items())

    def row_count(self) -> int:
        """The number of rows (Parquet: from its metadata). Only steers the plan (the
        bracket pass); the tiers plan does not ask it."""
        return int((self._run(f"SELECT count(*) FROM {self.rel}", "one") or (0,))[0])

    def sample_levels(self) -> tuple[np.ndarray, int]:
        """The levels of the first SAMPLE_MAX rows and the number of rows (Parquet: from its
        metadata). Only steers the plan."""
        return self.level_sample(), self.row_count()

    def values_inside(self, lo: float, hi: float) -> bool:
        """Whether the value column's own statistics in a Parquet file (or glob) say every
        value lies in [lo, hi]: the smallest and largest value of every row group, read from
        the files' metadata (no scan). Only a hint that steers the tiers pass
        (:meth:`FastPlan._fast`): the pass itself checks every row's value, so a file whose
        statistics are missing, wrong or leave out NaN costs time, never correctness. False
        for other sources, text columns and files without such statistics."""
        span = self._value_stats()[0]
        return span is not None and lo <= span[0] and span[1] <= hi

    def stats_rows(self) -> int | None:
        """The number of rows the Parquet metadata gives (with :meth:`values_inside`'s
        query; None for other sources). Only a hint (the tiers pass counts its rows)."""
        return self._value_stats()[1]

    def _value_stats(self) -> tuple[tuple[float, float] | None, int | None]:
        """((smallest, largest) value from the statistics, or None; rows, or None), read once
        per value column."""
        if self.kind != "parquet" or self.path is None or self.cols is None:
            return None, None
        col = self.cols[0]
        t = self.types.get(col, "")
        if not (t in NUMERIC_DUCK or t.startswith("DECIMAL")):
            return None, None
        if self.value_stats is None or self.value_stats[0] != col:
            try:
                got = self._run(
                    "SELECT count(*), count(TRY_CAST(stats_min_value AS DOUBLE)), "
                    "count(TRY_CAST(stats_max_value AS DOUBLE)), "
                    "min(TRY_CAST(stats_min_value AS DOUBLE)), "
                    "max(TRY_CAST(stats_max_value AS DOUBLE)), sum(row_group_num_rows) FROM "
                    f"parquet_metadata({sql_path(self.path)}) WHERE path_in_schema = "
                    f"{sql_str(col)}",
                    "one",
                )
            except ReleaseError:  # a hint only: the CASE pass answers
                got = (0, 0, 0, None, None, None)
            n, n_min, n_max, vmin, vmax, rows = got
            ok = n > 0 and n_min == n_max == n and vmin is not None and vmax is not None
            span = (float(vmin), float(vmax)) if ok else None
            self.value_stats = (col, span, None if rows is None else int(rows))
        return self.value_stats[1], self.value_stats[2]

    def _text_relation(self, col: str) -> str | None:
        """A relation holding column ``col`` as the file writes it (text), or None: the
        source itself for a text column, the CSV read again as text for a typed one (DuckDB
        reads '1e400' as the float inf there), None for Parquet and DataFrame numbers."""
        t = self.types.get(col, "")
        if t in ("VARCHAR", "STRING", "TEXT"):
            return self.rel
        if self.kind == "csv" and self.path is not None:
            return f"read_csv({sql_path(self.path)}, header = true, all_varchar = true)"
        return None

    def raw_cell(self, col: str, row: int) -> str | None:
        """The text of column ``col`` at ``row`` (1-based) as the file writes it, only to say
        what kind of thing a bad cell is (hdp_core.validate.cell_reason; never shown); None
        when the source holds numbers, not text, or the row is unknown."""
        rel = self._text_relation(col)
        if rel is None or not row:
            return None
        try:
            got = self.con.execute(
                f"SELECT v FROM (SELECT row_number() OVER () AS rn, {quote_name(col)} AS v "
                f"FROM {rel}) WHERE rn = {int(row)}"
            ).fetchall()
        except Exception:  # only a message's wording depends on it
            return None
        return None if not got or got[0][0] is None else str(got[0][0])

    def check_public(self, col: str) -> None:
        """Refuse (BadCellError, reason 'too_large') a public level (+inf) that the file
        writes as a number too large for a float ('1e400'), not as a word for public: run
        when the table has public rows. A numeric Parquet or DataFrame column has no text: its
        inf is public."""
        t = self.types.get(col, "")
        if t in ("VARCHAR", "STRING", "TEXT"):
            return  # _as_double refused such texts already
        rel = self._text_relation(col)
        if rel is None:
            return
        num = "TRY_CAST(trim(v) AS DOUBLE)"
        cond = f"{num} = CAST('inf' AS DOUBLE) AND lower(trim(v)) NOT IN {PUBLIC_SQL}"
        # one streaming scan of the column's text; the row is numbered only if one is found
        if not self._run(
            f"SELECT 1 FROM (SELECT {quote_name(col)} AS v FROM {rel}) WHERE {cond} LIMIT 1"
        ):
            return
        row, cell = self._first_row(cond, col, rel)
        raise bad_cell("eps", col, row, cell, self.tier_names)

    def first_bad(self, what: str) -> tuple[int, Any]:
        """(row, cell) of the first row whose level is bad (``what`` = "eps"), outside the
        supported levels ("range") or whose value is bad ("value"); (0, None) if none."""
        cond = {
            "eps": "e IS NULL OR isnan(e) OR e < 0",
            "range": range_sql(self.level_factor),
            "value": "v IS NULL OR isnan(v) OR isinf(v)",
        }[what]
        row = self._run(
            f"SELECT rn, {'v' if what == 'value' else 'e'} FROM (SELECT row_number() OVER () "
            f"AS rn, {self.v_expr} AS v, {self.e_expr} AS e FROM {self.rel}) WHERE {cond} "
            "ORDER BY rn LIMIT 1"
        )
        return (int(row[0][0]), row[0][1]) if row else (0, None)

    def _in_range(self, emin: float, emax: float) -> str:
        return (
            f"(SELECT e, {self.y_expr} AS y, {self.q_expr} AS q FROM {self._scan()} "
            f"WHERE e >= {lit(emin)} AND e <= {lit(emax)})"
        )

    def fetch(self, emin: float, emax: float):
        """The distinct quantized levels of the users with levels in [emin, emax] (one bin's
        range): users, sum of y, min and max eps each."""
        sql = f"""SELECT q, count(*), sum(y), min(e), max(e) FROM {self._in_range(emin, emax)}
            GROUP BY q ORDER BY q"""
        return fetch_rows(self._run(sql))

    def refine(self, emin: float, emax: float, m: int) -> list:
        """The users with levels in [emin, emax] in m equal sub-bins of that range: per
        sub-bin (key, users, sum of y, sum of q, sum of q y, sum of q^2 (exact), min and max
        eps); empty sub-bins left out."""
        scale = lit(m / (emax - emin))
        key = f"least(CAST(floor((e - {lit(emin)}) * {scale}) AS INTEGER), {m - 1})"
        sql = f"""SELECT k, count(*), sum(y), sum(q), sum(CAST(q AS HUGEINT) * y),
                   {q2_sql()}, min(e), max(e)
            FROM (SELECT {key} AS k, e, y, q FROM {self._in_range(emin, emax)})
            GROUP BY k ORDER BY k"""
        return [(*r[:5], q2_triple(*r[5:8]), *r[8:]) for r in self._run(sql)]

    def close(self) -> None:
        """Close the connection; the ledger check's kept sums (if any) are dropped."""
        self.checked = None
        self.con.close()
