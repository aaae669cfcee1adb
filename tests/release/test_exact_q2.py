"""The sums of squared grid levels are exact integers (hdp_release.engines.base.q2_sql and
q2_exact): DuckDB's three sums of BIGINT products, combined in Python, against Python's own
sum of q^2 (the oracle), at the largest grid levels (q up to Q_CAP QE = 2^62) where one
product q * q passes 2^124 and a sum of a few passes HUGEINT's 2^127."""

from __future__ import annotations

import duckdb
import numpy as np

from hdp_release.engines.base import Q_CAP, QE, q2_exact, q2_sql
from hdp_release.plan import tau_star


def test_duckdb_sums_q_squared_exactly_at_the_largest_levels():
    top = int(Q_CAP * QE)  # 2^62
    rng = np.random.default_rng(3)
    qs = [top, top - 1, (1 << 31) - 1, 1 << 31, 0, 1] + [
        int(x) for x in rng.integers(0, top, 200, dtype=np.int64)
    ]
    qs = qs * 20  # 4,120 rows: the exact sum is far beyond 2^127
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE t AS SELECT unnest($1::BIGINT[]) AS q", [qs])
        got = q2_exact(*con.execute(f"SELECT {q2_sql()} FROM t").fetchone())
    finally:
        con.close()
    assert got == sum(q * q for q in qs)
    assert got > 1 << 127


def test_tau_star_is_one_rounding_of_the_exact_ratio():
    from fractions import Fraction

    sq, sq2, c = 3 * QE + 5, 7 * QE * QE + 11, 8.0
    want = (Fraction(sq2, QE * QE) + Fraction(c)) / Fraction(sq, QE)
    got = tau_star(sq, sq2, c)
    assert got == float(want)  # Python's float(Fraction): the nearest float of the exact value
    assert got != (7 + 8.0) / 3  # not the ratio of the rounded sums
