"""The one table of hostile cells (non-finite, out of range, bad levels) that the release is
checked against once per engine and path (tests/release/test_release_nonfinite.py) and that
the Release page's representative cases reuse (tests/app/test_page_release_nonfinite.py),
with the frames, files and noise spy they need."""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

import hdp_release
import hdp_release.cli
import hdp_release.engines.base
import hdp_release.finish
from hdp_core.tables import read_upload_csv
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN

N = 12
BAD_ROW = 5  # 1-based data row of the hostile cell
LO, HI = 0.0, 10.0
GOOD_VALUES = [float(i % 9) + 0.5 for i in range(N)]  # inside [LO, HI]
GOOD_LEVELS = ["1", "0.5", "2"] * (N // 3)  # few levels: DuckDB's fast tiers plan

ABOVE_MAX = repr(math.nextafter(LEVEL_MAX, math.inf))  # '1000000.0000000001'
BELOW_MIN = repr(math.nextafter(LEVEL_MIN, 0.0))  # '9.999999999999999e-07'

# text cells refused in the value column, and the reason code each carries (the same in the
# preview and in every release path)
VALUE_REFUSED = {
    "1e400": "too_large",
    "-1e400": "too_large",
    "inf": "not_finite",
    "-inf": "not_finite",
    "nan": "empty",
    "NaN": "empty",
}
# value cells clamped into [LO, HI] by design: the cell -> the value it must count as
VALUE_CLAMPED = {
    repr(math.nextafter(HI, math.inf)): HI,
    repr(math.nextafter(LO, -math.inf)): LO,
    "10.000001": HI,
    "-0.000001": LO,
    "1e308": HI,
    "-1.7976931348623157e308": LO,
}
EPS_REFUSED = {
    "1e400": "too_large",  # never a public user: only the words inf / public are
    "-1e400": "too_large",
    "-inf": "negative",
    "nan": "empty",
    "NaN": "empty",
    ABOVE_MAX: "out_of_range",
    BELOW_MIN: "out_of_range",
}
EPS_PUBLIC = ("inf", "Infinity", "public")
# float64 cells: the number -> its reason
FLOAT_VALUE_REFUSED = {
    "np.inf": (np.inf, "not_finite"),
    "-np.inf": (-np.inf, "not_finite"),
    "np.nan": (np.nan, "empty"),
}
FLOAT_EPS_REFUSED = {"-np.inf": (-np.inf, "negative"), "np.nan": (np.nan, "empty")}


# ------------------------------------------------------------------------------ helpers
def text_frame(value_cell: str | None = None, eps_cell: str | None = None) -> pd.DataFrame:
    """The table as text (what a CSV holds), with the hostile cell at BAD_ROW."""
    v = [repr(x) for x in GOOD_VALUES]
    e = list(GOOD_LEVELS)
    if value_cell is not None:
        v[BAD_ROW - 1] = value_cell
    if eps_cell is not None:
        e[BAD_ROW - 1] = eps_cell
    return pd.DataFrame({"value": v, "eps": e}, dtype=object)


def float_frame(value: float | None = None, eps: float | None = None) -> pd.DataFrame:
    """The table as float64 columns, with the hostile number at BAD_ROW."""
    v = np.array(GOOD_VALUES, dtype=np.float64)
    e = np.array([float(x) for x in GOOD_LEVELS], dtype=np.float64)
    if value is not None:
        v[BAD_ROW - 1] = value
    if eps is not None:
        e[BAD_ROW - 1] = eps
    return pd.DataFrame({"value": v, "eps": e})


def csv_text(df: pd.DataFrame) -> str:
    return "value,eps\n" + "".join(
        f"{a},{b}\n" for a, b in zip(df["value"], df["eps"], strict=True)
    )


def source(kind: str, df: pd.DataFrame, tmp_path: Path):
    """The text table ``df`` as the release reads it on path ``kind``."""
    if kind == "pandas_text":
        return df
    if kind == "csv":
        p = tmp_path / "t.csv"
        p.write_text(csv_text(df), encoding="utf-8")
        return str(p)
    if kind == "csv_with_tier_names":  # a text eps column (tier names): DuckDB reads VARCHAR
        d = df.copy()
        d.loc[d.index[-1], "eps"] = "gold"
        p = tmp_path / "t.csv"
        p.write_text(csv_text(d), encoding="utf-8")
        return str(p)
    if kind == "parquet_text":
        p = tmp_path / "t.parquet"
        df.astype(str).to_parquet(p)
        return str(p)
    if kind == "upload_reader":  # the Release page's reader (pandas' own types)
        return read_upload_csv(csv_text(df).encode(), text=False, min_columns=2).frame
    raise AssertionError(kind)


TEXT_KINDS = ["pandas_text", "csv", "csv_with_tier_names", "parquet_text", "upload_reader"]
TIERS = {"gold": 2.0}


class NoiseSpy:
    """OpenDP's real measurement (its privacy map is used by the check) whose application
    to a value is recorded and returns the value unchanged (no noise: exact comparisons)."""

    applied: ClassVar[list[float]] = []

    def __init__(self, scale):
        self.real = REAL(scale)

    def map(self, d):
        return self.real.map(d)

    def __call__(self, x):
        assert math.isfinite(x), "a non-finite value reached the noise step"
        NoiseSpy.applied.append(x)
        return x


REAL = hdp_release.finish.measurement


def install_spy(monkeypatch) -> list[float]:
    """Replace the release's measurement by NoiseSpy; returns the list of values noised."""
    NoiseSpy.applied = []
    monkeypatch.setattr(hdp_release.finish, "measurement", NoiseSpy)
    return NoiseSpy.applied
