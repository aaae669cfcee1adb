"""Benchmark: first load and slider-to-redraw of the app in Chromium, against a floor app.

The floor app is the least a Streamlit page can be: st.navigation with one page holding a
slider, four metrics and one plotly line chart. Each first load starts a fresh server (the
first session of a process, the case a new user meets), runs of the app and of the floor
alternate so a busy shared machine slows both alike, and the time is from ``page.goto`` to
"drawn" (tests/browser_support.py: script idle, charts drawn, no skeleton, stable 0.5 s; the
0.5 s of stability is not counted). Goal: median(app) / median(floor) <= 1.3.

Slider-to-redraw: on one server per app, the first slider of each page is moved one step with
the keyboard and the time to "drawn" after the resulting run is measured, against the floor
app's slider, page by page in ``--rounds`` rounds (floor, page, floor, page...: a busy machine
slows both alike). Goal: every page within 1.5x the floor. The Simulation page's slider only
moves up, so every step is a fresh run (not a cached one): since issue 29 a step shows the
quick result of the run's first trials (views.simulation.quick_trials: 2,096 of the default
20,000), said so, with a button for the whole run; after each round's steps that button is
pressed and the time to the whole run drawn is printed too ("whole run on request"). For an
app that draws an early result (a run of 30 million simulated values or more,
views.simulation.EARLY_MIN_CELLS: not the default profile's), the time to its first drawn
result is printed as well: an early draw of the run's first trials, labelled "Early result"
on the page (pages/simulation.py), once its MSE chart and every other chart are drawn. Goal:
the fresh step within 2x the floor.

Since session 11 a step of the Simulation page leaves its closed sections (the spread of the
estimates, the sweep, the script: folded at first) empty: it redraws the results only.
``--pages simulation,tier`` steps only the pages whose label holds one of those words; the load
average is printed at the start and the end. Since session 12 the CPU seconds per step of each
app's server and of the browser (Chromium and Playwright's driver) are printed too, read around
each page's steps: steadier than wall time on a busy machine.

Run: .venv/bin/python benchmarks/bench_first_load.py [--runs 5] [--moves 5] [--rounds 1]
[--pages WORDS] [--compare <export of main>/app.py]
Not a test: nothing is asserted, the numbers are printed.
"""

from __future__ import annotations

import argparse
import os
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
FRESH = "Simulation (fresh run)"
"""The page whose slider moves one way only (every step a new run) and whose first result is
timed too."""
SEED_BASE = 101
"""The Simulation page's seed in round r is SEED_BASE + r (never the page's default)."""
WHOLE_BUTTON = "Run all "
"""How the Simulation page's button for the whole run after a quick result starts
(views.simulation.whole_run_label)."""
EARLY_MARK = "Early result"
"""Text of the Simulation page's note over an early draw (hdp_app.views.simulation)."""
EARLY_CHART = "st-key-sim_mse_chart_early"
"""The class Streamlit gives the early draw's MSE chart (key sim_mse_chart + "_early",
hdp_app.simulation_results): the first result counts once it is drawn."""

_EARLY_JS = """
async ({mark, chart, endedBefore, timeoutMs}) => {
  const S = window.__hdp;
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    const app = document.querySelector("[data-testid=stApp]");
    const charts = [...document.querySelectorAll("[data-testid=stPlotlyChart]")];
    const early = [...document.querySelectorAll("[data-testid=stAlert]")]
      .some(a => a.innerText.includes(mark));
    if (early && document.querySelector("." + chart + " .main-svg")
        && !document.querySelector("[data-testid=stSkeleton]")
        && charts.every(c => c.querySelector(".main-svg"))) {
      return performance.timeOrigin + performance.now();
    }
    if (S.runsEnded > endedBefore && !early) {
      return null;  // the step's run ended without an early draw (a run of over a second
    }               // is always seen running)
    await new Promise(r => setTimeout(r, 10));
  }
  return null;
}
"""


TICK = os.sysconf("SC_CLK_TCK")


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds of the process: user + system, its threads included)."""
    out = {}
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        f = stat[stat.rindex(")") + 2 :].split()
        out[int(d.name)] = (int(f[1]), (int(f[11]) + int(f[12])) / TICK)
    return out


def cpu_split(server_pid: int) -> tuple[float, float]:
    """CPU seconds so far of the Streamlit server (``server_pid`` and its children) and of
    the browser (every other process descended from this one: Playwright's driver and
    Chromium's processes)."""
    table = _proc_table()
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        kids.setdefault(ppid, []).append(pid)

    def tree(root: int) -> set[int]:
        seen, todo = set(), [root]
        while todo:
            p = todo.pop()
            if p not in seen:
                seen.add(p)
                todo += kids.get(p, [])
        return seen

    server = tree(server_pid)
    mine = tree(os.getpid()) - server - {os.getpid()}
    return sum(table[p][1] for p in server), sum(table[p][1] for p in mine)


def step_cpu(servers: list, pid: int) -> tuple[float, float]:
    """CPU seconds so far of the server ``pid`` and of the browser (cpu_split's, less every
    server in ``servers``: the others idle meanwhile, but are not the browser)."""
    own, rest = cpu_split(pid)
    others = sum(cpu_split(s.proc.pid)[0] for s in servers if s.proc.pid != pid)
    return own, rest - others


CPU: dict[pathlib.Path, list[tuple[float, float]]] = {}
"""Per script, the (server, browser) CPU seconds of each counted first load."""


def first_load(browser, script: pathlib.Path) -> float:
    """Seconds from navigation to drawn, on a fresh server for ``script``; the CPU seconds
    the server and the browser spent meanwhile go to ``CPU[script]``."""
    srv = B.Server(script)
    try:
        base = srv.ready()
        ctx, page = B.new_page(browser)
        try:
            c0 = cpu_split(srv.proc.pid)
            t0 = time.time()
            page.goto(base + "/")
            took = B.wait_drawn(page) - t0
            c1 = cpu_split(srv.proc.pid)
            CPU.setdefault(script, []).append((c1[0] - c0[0], c1[1] - c0[1]))
            return took
        finally:
            ctx.close()
    finally:
        srv.stop()


def slider_times(
    page,
    moves: int,
    charts: int = 1,
    one_way: bool = False,
    early: list | None = None,
    shown: list | None = None,
) -> list[float]:
    """Seconds from a keyboard step of the page's first slider to drawn, ``moves`` times
    (right and left in turn, or right only with ``one_way``). With ``early`` a list, the
    seconds to the first drawn early result of each step are appended to it (None: the step
    drew none). With ``shown`` a list, the seconds until what a reader sees stopped changing
    are appended to it (browser_support.wait_drawn_shown: changes inside a canvas, the
    dataframe grids' accessibility tables, left out). A step that starts no run within 15 s
    (the key press was lost) is pressed again and not counted."""
    out = []
    page.bring_to_front()  # key events reach only the window that has the focus
    slider = page.get_by_role("slider").first
    i = lost = 0
    while len(out) < moves:
        before = B.runs_ended(page)
        ended = page.evaluate("window.__hdp.runsEnded")
        slider.focus()
        t0 = time.time()
        slider.press("ArrowRight" if one_way or i % 2 == 0 else "ArrowLeft")
        i += 1
        try:
            first = None
            if early is not None:
                arg = {"mark": EARLY_MARK, "chart": EARLY_CHART, "endedBefore": ended}
                arg["timeoutMs"] = 15_000
                first = page.evaluate(_EARLY_JS, arg)
            drawn, seen = B.wait_drawn_shown(page, charts, runs_before=before, timeout_ms=15_000)
            out.append(drawn - t0)
            if shown is not None:
                shown.append(seen - t0)
            if early is not None:
                early.append(None if first is None else first / 1000.0 - t0)
        except AssertionError:
            lost += 1
            if lost > 3:
                raise
            print(f"    (a key press started no run on {page.url}; pressed again)")
    return out


def whole_on_request(page, charts: int) -> float | None:
    """Seconds from a press of the Simulation page's "Run all ... trials" button to drawn, or
    None when the page shows no such button (an app without quick results)."""
    button = page.get_by_role("button").filter(has_text=WHOLE_BUTTON)
    if not button.count():
        return None
    before = B.runs_ended(page)
    t0 = time.time()
    button.first.click()
    return B.wait_drawn(page, charts, runs_before=before, timeout_ms=30_000) - t0


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
    ap.add_argument("--moves", type=int, default=5, help="slider steps per page and round")
    ap.add_argument("--rounds", type=int, default=1, help="rounds of floor/page steps")
    ap.add_argument(
        "--compare", type=pathlib.Path, help="a second app.py stepped in the same rounds"
    )
    ap.add_argument(
        "--pages",
        default="",
        help="step only the pages whose label contains one of these comma-separated words",
    )
    args = ap.parse_args()
    floor_dir = pathlib.Path(tempfile.mkdtemp(prefix="hdp-floor-"))
    floor = floor_dir / "floor_app.py"
    floor.write_text(FLOOR_APP)
    with B.chromium() as browser:
        if args.runs:
            bench_first_loads(browser, floor, args.runs, args.compare)
        print(f"(load average at the start: {os.getloadavg()[0]:.2f})")
        if args.moves:
            words = [w.strip().lower() for w in args.pages.split(",") if w.strip()]
            pages = [p for p in APP_PAGES if not words or any(w in p[0].lower() for w in words)]
            bench_sliders(browser, floor, args.moves, args.rounds, args.compare, pages)
        one, five, _ = os.getloadavg()
        print(f"(load average at the end: {one:.2f} over 1 min, {five:.2f} over 5 min)")


def bench_first_loads(
    browser, floor: pathlib.Path, runs: int, compare: pathlib.Path | None = None
) -> None:
    """First loads of this app and the floor in turns (and of ``compare`` in the same turns)."""
    apps = [("app  ", B.APP)] + ([("main ", compare)] if compare else [])
    first_load(browser, floor)  # warm the OS file cache for each; not counted
    for _, script in apps:
        first_load(browser, script)
    CPU.clear()
    times: dict[str, list[float]] = {tag: [] for tag, _ in apps}
    floor_t = []
    for _ in range(runs):
        for tag, script in apps:
            times[tag].append(first_load(browser, script))
        floor_t.append(first_load(browser, floor))
    print("First load on a fresh server (navigation to drawn):")
    for tag, xs in times.items():
        print(f"  {tag} {fmt(xs)}")
    print(f"  floor {fmt(floor_t)}")
    for tag, xs in times.items():
        ratio = statistics.median(xs) / statistics.median(floor_t)
        print(f"  ratio {tag.strip()}/floor = {ratio:.2f}  (goal <= 1.3)")
    print("CPU seconds during those loads (medians; steadier than wall time on a busy machine):")
    fs, fb = (statistics.median(c[i] for c in CPU[floor]) for i in (0, 1))
    print(f"  floor server {fs:.2f} s, browser {fb:.2f} s, both {fs + fb:.2f} s")
    for tag, script in apps:
        s_, b_ = (statistics.median(c[i] for c in CPU[script]) for i in (0, 1))
        print(
            f"  {tag} server {s_:.2f} s ({s_ / fs:.2f}x), browser {b_:.2f} s ({b_ / fb:.2f}x),"
            f" both {s_ + b_:.2f} s ({(s_ + b_) / (fs + fb):.2f}x)"
        )


def bench_sliders(
    browser,
    floor: pathlib.Path,
    moves: int,
    rounds: int = 1,
    compare: pathlib.Path | None = None,
    pages: list | None = None,
) -> None:
    """Slider steps of every page against the floor's, in rounds; with ``compare`` a second
    app (e.g. an export of main: ``git archive``) is stepped in the same rounds, right after
    this one, page by page (in turns: this app first in even rounds, second in odd ones);
    ``pages``: the rows of APP_PAGES to step (default all)."""
    print("Slider step to drawn:")
    apps = [("", B.APP)] + ([("main ", compare)] if compare else [])
    fsrv = B.Server(floor)
    servers = [B.Server(script) for _, script in apps]
    try:
        fbase = fsrv.ready()
        bases = [srv.ready() for srv in servers]
        ctx, page = B.new_page(browser)  # one window: keyboard focus is never elsewhere
        rows: dict[str, list[float]] = {}
        early: dict[str, list] = {}
        floor_moves: list[float] = []
        seen: dict[str, list[float]] = {"floor": []}
        cpu: dict[str, list[float]] = {}  # label -> [server s, browser s, steps]
        every = [fsrv, *servers]

        def steps(label: str, srv, *args, **kw) -> list[float]:
            c0 = step_cpu(every, srv.proc.pid)
            xs = slider_times(*args, **kw)
            c1 = step_cpu(every, srv.proc.pid)
            acc = cpu.setdefault(label, [0.0, 0.0, 0])
            acc[0], acc[1], acc[2] = (
                acc[0] + c1[0] - c0[0],
                acc[1] + c1[1] - c0[1],
                acc[2] + len(xs),
            )
            return xs

        for r in range(rounds):
            for label, path, radio, charts in pages or APP_PAGES:
                fresh = label == FRESH
                if fresh:  # a seed of its own per round: no step is a cached run
                    path = f"{path}?sim_seed={SEED_BASE + r}"
                open_page(page, fbase, "/", None)
                floor_moves += steps("floor", fsrv, page, moves, shown=seen["floor"])
                order = list(zip(apps, bases))
                for ((tag, _), base), srv in (
                    zip(order, servers) if r % 2 == 0 else zip(order[::-1], servers[::-1])
                ):
                    open_page(page, base, path, radio, charts)
                    firsts = early.setdefault(tag, []) if fresh else None
                    shown = seen.setdefault(tag + label, [])
                    xs = steps(tag + label, srv, page, moves, charts, fresh, firsts, shown)
                    rows.setdefault(tag + label, []).extend(xs)
                    if fresh:
                        t = whole_on_request(page, charts)
                        if t is not None:
                            rows.setdefault(tag + "Simulation whole run", []).append(t)
        fmed = statistics.median(floor_moves)
        print(f"  floor                        {fmt(floor_moves)}")
        for label, xs in rows.items():
            r = statistics.median(xs) / fmed
            print(f"  {label:<28} {fmt(xs)}  ratio {r:.2f}")
        for tag, firsts in early.items():
            got = [x for x in firsts if x is not None]
            if got:
                r = statistics.median(got) / fmed
                print(f"  {tag + 'Simulation first result':<28} {fmt(got)}  ratio {r:.2f}")
            if len(got) < len(firsts):
                print(f"  ({tag}{len(firsts) - len(got)} of {len(firsts)} steps: no early draw)")
        print("  (goals: every page within 1.5x the floor; the Simulation page's fresh step 2x)")
        print("Slider step to what a reader sees (changes inside a canvas left out: the dataframe")
        print("grids' accessibility tables, never drawn, which they update after their canvas):")
        smed = statistics.median(seen["floor"])
        for label, xs in seen.items():
            r = statistics.median(xs) / smed
            print(f"  {label:<28} {fmt(xs)}  ratio {r:.2f}")
        print("CPU seconds per step (server; browser = Chromium and Playwright's driver; both):")
        fs, fb, fn = cpu["floor"]
        for label, (sv, bw, n) in cpu.items():
            a, b = sv / n, bw / n
            r = (a + b) / ((fs + fb) / fn)
            print(f"  {label:<28} {a:.3f} s; {b:.3f} s; {a + b:.3f} s  ratio {r:.2f}")
        ctx.close()
    finally:
        fsrv.stop()
        for srv in servers:
            srv.stop()


if __name__ == "__main__":
    main()
