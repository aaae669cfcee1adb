"""Benchmark: first load and slider-to-redraw of the app in Chromium, against a floor app.

The floor app is the least a Streamlit page can be: st.navigation with one page holding a
slider, four metrics and one plotly line chart. Each first load starts a fresh server (the
first session of a process, the case a new user meets), runs of the app and of the floor
alternate so a busy shared machine slows both alike, and the time is from ``page.goto`` to
"drawn" (tests/browser_support.py: script idle, charts drawn, no skeleton, stable 0.5 s; the
0.5 s of stability is not counted). Goal: median(app) / median(floor) <= 1.3.

Slider-to-redraw: on one server per app, the first slider of each page is moved one step with
the keyboard and the time to "drawn" after the resulting run is measured, against the floor
app's slider. Goal: every page except a fresh simulation within 1.5x the floor.

Run: .venv/bin/python benchmarks/bench_first_load.py [--runs 5] [--moves 5]
Not a test: nothing is asserted, the numbers are printed.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import browser_support as B  # noqa: E402

FLOOR_APP = """
import numpy as np
import plotly.graph_objects as go
import streamlit as st


def page():
    k = st.slider("Points", 10, 200, 100, key="k")
    x = np.linspace(0, 1, k)
    c = st.columns(4)
    for i, col in enumerate(c):
        col.metric(f"Metric {i + 1}", f"{x[: i + 2].sum():.3f}")
    st.plotly_chart(go.Figure(go.Scatter(x=x, y=np.sin(6 * x), mode="lines")))


st.navigation([st.Page(page, title="Floor")]).run()
"""

# (label, path to open, radio option to click first or None, charts the page draws)
APP_PAGES = [
    ("Profile (generator)", "/", "Generator", 1),
    ("Saturation", "/saturation", None, 1),
    ("Bounds", "/bounds", None, 1),
    ("Tier designer", "/tier_designer", None, 1),  # its chart is drawn on arrival (issue 31)
    ("Simulation (fresh run)", "/simulation", "Two-point", 1),
]


def first_load(browser, script: pathlib.Path) -> float:
    """Seconds from navigation to drawn, on a fresh server for ``script``."""
    srv = B.Server(script)
    try:
        base = srv.ready()
        ctx, page = B.new_page(browser)
        try:
            t0 = time.time()
            page.goto(base + "/")
            return B.wait_drawn(page) - t0
        finally:
            ctx.close()
    finally:
        srv.stop()


def slider_times(page, moves: int, charts: int = 1) -> list[float]:
    """Seconds from a keyboard step of the page's first slider to drawn, ``moves`` times.
    A step that starts no run within 15 s (the key press was lost) is pressed again and not
    counted."""
    out = []
    page.bring_to_front()  # key events reach only the window that has the focus
    slider = page.get_by_role("slider").first
    i = lost = 0
    while len(out) < moves:
        before = B.runs_ended(page)
        slider.focus()
        t0 = time.time()
        slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        i += 1
        try:
            drawn = B.wait_drawn(page, charts, runs_before=before, timeout_ms=15_000)
            out.append(drawn - t0)
        except AssertionError:
            lost += 1
            if lost > 3:
                raise
            print(f"    (a key press started no run on {page.url}; pressed again)")
    return out


def open_page(page, base: str, path: str, radio: str | None, charts: int = 1) -> None:
    page.goto(base + path)
    B.wait_drawn(page, charts)
    if radio:
        before = B.runs_ended(page)
        page.get_by_test_id("stRadio").first.get_by_text(radio, exact=True).click()
        B.wait_drawn(page, charts, runs_before=before)


def fmt(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.2f} s  [{', '.join(f'{x:.2f}' for x in xs)}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="fresh-server first loads per app")
    ap.add_argument("--moves", type=int, default=5, help="slider steps per page")
    args = ap.parse_args()
    floor_dir = pathlib.Path(tempfile.mkdtemp(prefix="hdp-floor-"))
    floor = floor_dir / "floor_app.py"
    floor.write_text(FLOOR_APP)
    with B.chromium() as browser:
        if args.runs:
            bench_first_loads(browser, floor, args.runs)
        if args.moves:
            bench_sliders(browser, floor, args.moves)


def bench_first_loads(browser, floor: pathlib.Path, runs: int) -> None:
    first_load(browser, floor)  # warm the OS file cache for both; not counted
    first_load(browser, B.APP)
    app_t, floor_t = [], []
    for _ in range(runs):
        app_t.append(first_load(browser, B.APP))
        floor_t.append(first_load(browser, floor))
    print("First load on a fresh server (navigation to drawn):")
    print(f"  app   {fmt(app_t)}")
    print(f"  floor {fmt(floor_t)}")
    ratio = statistics.median(app_t) / statistics.median(floor_t)
    print(f"  ratio app/floor = {ratio:.2f}  (goal <= 1.3)")


def bench_sliders(browser, floor: pathlib.Path, moves: int) -> None:
    print("Slider step to drawn:")
    fsrv, asrv = B.Server(floor), B.Server(B.APP)
    try:
        fbase, abase = fsrv.ready(), asrv.ready()
        ctx, page = B.new_page(browser)  # one window: keyboard focus is never elsewhere
        rows = []
        floor_moves = []
        for label, path, radio, charts in APP_PAGES:
            open_page(page, fbase, "/", None)
            floor_moves += slider_times(page, moves)
            open_page(page, abase, path, radio, charts)
            rows.append((label, slider_times(page, moves, charts)))
        fmed = statistics.median(floor_moves)
        print(f"  floor                   {fmt(floor_moves)}")
        for label, xs in rows:
            r = statistics.median(xs) / fmed
            print(f"  {label:<23} {fmt(xs)}  ratio {r:.2f}")
        print("  (goal: every page except a fresh simulation within 1.5x the floor)")
        ctx.close()
    finally:
        fsrv.stop()
        asrv.stop()


if __name__ == "__main__":
    main()
