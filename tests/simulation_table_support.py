"""What the tests of the Simulation page's results table share (issue 29): the HTML table read
back as text (html.parser), and the oracle, the cells computed here from hdp_core's
simulate_mse results with Python's format mini-language (not the view's printf formats, not
views.simulation.simulation_rows)."""

from __future__ import annotations

import math
from html.parser import HTMLParser

import hdp_core as hdp

DASH = "–"


class Tables(HTMLParser):
    """Every <table> of an HTML string: ``tables`` holds per table its rows, each a list of
    (tag, text, attributes) cells; ``dots`` the background colour of each body row's dot."""

    def __init__(self, body: str):
        super().__init__()
        self.tables: list[list[list[tuple[str, str, dict]]]] = []
        self.dots: list[list[str]] = []
        self._cell: list | None = None
        self.feed(body)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append([])
            self.dots.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = [tag, "", a]
        elif tag == "span" and "dot" in (a.get("class") or ""):
            self.dots[-1].append(a["style"].split("background:")[1])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append((self._cell[0], self._cell[1].strip(), self._cell[2]))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data


def body_rows(table: list[list[tuple[str, str, dict]]]) -> list[list[str]]:
    """The texts of a table's body rows (rows of <td> cells)."""
    return [[c[1] for c in row] for row in table if row and row[0][0] == "td"]


def column_names(table: list[list[tuple[str, str, dict]]]) -> list[str]:
    """The full names (the title of each header of the second header row) of a table's
    columns, after its method column."""
    return [c[2]["title"] for c in table[1]]


def merged(body: str) -> dict[str, dict[str, str]]:
    """The HTML's stacked tables as one: method label -> {full column name: cell text}."""
    out: dict[str, dict[str, str]] = {}
    for table in Tables(body).tables:
        names = column_names(table)
        for row in body_rows(table):
            out.setdefault(row[0], {}).update(zip(names, row[1:], strict=True))
    return out


def _e(x: float) -> str:
    return DASH if not math.isfinite(x) else format(x, ".3e")


def oracle(results: dict, data_range: tuple[float, float] | None = None) -> dict:
    """The cells the table must show for simulate_mse ``results`` (method -> SimResult): the
    label -> {column name: text}, computed here: MSEs with 4 significant digits in scientific
    form, ln MSE with 2 decimals, multiples of ADPM's MSE with 3 significant digits and "×",
    RMSEs in real units (sqrt(MSE) × (hi − lo)) with 4 significant digits."""
    adpm = results["ADPM"]
    out = {}
    for m, r in results.items():
        cells = {
            "Simulated MSE": _e(r.mse),
            "95% CI low": _e(r.ci_low),
            "95% CI high": _e(r.ci_high),
            "Exact MSE": _e(r.exact),
            "ln MSE (simulated)": format(math.log(r.mse), ".2f") if r.mse > 0 else DASH,
            "ln MSE (exact)": format(math.log(r.exact), ".2f") if r.exact > 0 else DASH,
            "× ADPM (simulated)": format(r.mse / adpm.mse, ".3g") + "×" if adpm.mse else DASH,
            "× ADPM (exact)": format(r.exact / adpm.exact, ".3g") + "×" if adpm.exact else DASH,
        }
        if data_range is not None:
            width = data_range[1] - data_range[0]
            cells["RMSE (real units)"] = format(math.sqrt(r.mse) * width, ".4g")
            cells["RMSE exact (real units)"] = format(math.sqrt(r.exact) * width, ".4g")
        out[hdp.METHOD_CLASSES[m].label if m in hdp.METHOD_CLASSES else m] = cells
    return out
