"""Benchmark: the Release page's "Before releasing" preview, from the uploaded bytes to the
table the page shows, against the old code path and against a plain pandas read.

Generates CSV files of per-user levels (every user their own level: k distinct levels for k
rows) with 3,000, 6,000 and 1,000,000 rows (the last about 14 MB, under the 20 MB upload
limit) and prints for each, measured side by side in one run:

* ``new``: the page's path: hdp_core.tables.read_upload_csv (the one reader, with its header
  and limit checks), hdp_app.views.release.guess_columns, hdp_release.release.level_counts and
  check_values, preview_tiers, then views.release.preview_table (formats only the 200 rows
  shown, O(k log k) in distinct levels);
* ``old``: the same up to preview_tiers, then the old page's table: every level formatted and
  compared with every other level (telling_eps against all levels, O(k^2)); skipped (--)
  above --old-max levels, since it does not finish in reasonable time there;
* ``floor``: ``pandas.read_csv`` of the same bytes (what any upload costs).

With --apptest, also the page itself under Streamlit's AppTest (upload to the drawn table).

    python benchmarks/bench_release_preview.py [--old-max 6000] [--apptest]
"""

from __future__ import annotations

import argparse
import io
import math
import sys
import time

import numpy as np
import pandas as pd

from hdp_app.views import release as V
from hdp_app.views.formatting import short_eps, telling_eps
from hdp_core.tables import read_upload_csv
from hdp_release.checks import check_values
from hdp_release.preview import level_counts, preview_tiers


def make_csv(k: int, seed: int = 0) -> bytes:
    """k users, each with a distinct level in [0.01, 10] and a value in [0, 100]."""
    rng = np.random.default_rng(seed)
    eps = np.unique(np.round(np.exp(rng.uniform(np.log(0.01), np.log(10), 2 * k)), 7))
    eps = rng.permutation(eps)[:k]
    val = np.round(rng.uniform(0, 100, k), 2)
    buf = io.StringIO()
    pd.DataFrame({"value": val, "eps": eps}).to_csv(buf, index=False)
    return buf.getvalue().encode()


def new_path(data: bytes):
    df = read_upload_csv(data, text=False, min_columns=2).frame
    vi, ei = V.guess_columns(df)
    value, eps = str(df.columns[vi]), str(df.columns[ei])
    lv, ct = level_counts(df, eps)
    check_values(df, value)
    pv = preview_tiers(lv, ct, 0.0, 100.0)
    return V.preview_table(pv)


def old_path(data: bytes):
    """The page as it was (cb5d1a7): pandas' own reader, then every level formatted."""
    df = pd.read_csv(io.BytesIO(data))
    lv, ct = level_counts(df, "eps")
    check_values(df, "value")
    pv = preview_tiers(lv, ct, 0.0, 100.0)
    t = pv.tiers
    show = pd.DataFrame(
        {
            "requested eps": [short_eps(x) if x > 0 else "0 (not used)" for x in t["eps"]],
            "users": t["users"],
            "granted eps": [telling_eps(x, t["eps"]) if x > 0 else "—" for x in t["granted_eps"]],
            "share of the weight": [f"{100 * w:.3g}%" for w in t["weight_share"]],
        }
    )
    tau = pv.saturation_level
    _ = "none" if math.isinf(tau) else telling_eps(tau, t["eps"])
    return show.head(200)


def timed(fn, *args, repeat: int = 3) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def apptest_seconds(data: bytes) -> float:
    """Upload to the drawn "Before releasing" table on the real page (AppTest)."""
    sys.path.insert(0, "tests")
    from helpers import APP, open_page
    from streamlit.testing.v1 import AppTest

    at = open_page(AppTest.from_file(APP, default_timeout=600), "release")
    at.session_state["rel_lo"], at.session_state["rel_hi"] = 0.0, 100.0  # the range first
    t0 = time.perf_counter()
    at.get("file_uploader")[0].upload("users.csv", data, "text/csv").run()
    took = time.perf_counter() - t0
    assert not at.exception and at.dataframe, "the preview was not drawn"
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old-max", type=int, default=6000)
    ap.add_argument("--apptest", action="store_true")
    a = ap.parse_args()
    print(f"{'levels':>10} {'MB':>6} {'new s':>8} {'old s':>8} {'floor s':>8} {'new/floor':>9}")
    for k in (3_000, 6_000, 1_000_000):
        data = make_csv(k)
        new = timed(new_path, data, repeat=3 if k < 10**5 else 1)
        old = timed(old_path, data, repeat=1) if k <= a.old_max else math.nan
        floor = timed(lambda d: pd.read_csv(io.BytesIO(d)), data, repeat=3)
        old_s = "--" if math.isnan(old) else f"{old:.3f}"
        print(
            f"{k:>10,} {len(data) / 2**20:>6.1f} {new:>8.3f} {old_s:>8} {floor:>8.3f} "
            f"{new / floor:>9.1f}"
        )
        if a.apptest and k == 1_000_000:
            print(f"  page (AppTest), upload to the drawn table: {apptest_seconds(data):.2f} s")


if __name__ == "__main__":
    main()
