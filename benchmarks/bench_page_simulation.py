"""How responsive is the Simulation page? Rerun times next to a bare simulate_mse call.

Run: ``.venv/bin/python benchmarks/bench_page_simulation.py [--trials 20000] [--repeats 3]``

Measured side by side in one run, on the default profile (the paper's high-variance one,
n = 1000 per-user levels), Beta(2, 3) data and the default 20,000 trials:

* bare: hdp.simulate_mse of all six methods with the estimates (what the page computes);
* page, uncached: AppTest rerun after changing the seed to a value not seen before (the
  simulation runs);
* page, cached: AppTest rerun after changing the seed back to a value already simulated;
* page, sweep / histogram control: reruns where the simulation is not needed at all.

AppTest reruns the whole script on every change (it does not model fragment-only reruns), so
its times are an upper bound for the browser, where only the fragment reruns. Medians of
``--repeats`` runs; the ratio page/bare shows the page's own overhead.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

import hdp_core as hdp  # noqa: E402


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    prof = hdp.paper_profile("high")
    dist = hdp.Beta(2.0, 3.0)
    seeds = iter(range(100, 10_000))

    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["sim_trials"] = str(args.trials)
    at.run()
    t = time.perf_counter()
    at.switch_page("pages/simulation.py").run()
    first = time.perf_counter() - t
    assert not at.exception, at.exception

    def timed(fn) -> float:
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    def rerun_seed(seed: int) -> None:
        at.number_input(key="sim_seed").set_value(seed).run()
        assert not at.exception, at.exception

    # interleaved, so that a busy machine slows every kind of run alike
    bare, uncached, cached, overhead = [], [], [], []
    for _ in range(args.repeats):
        s_new, s_old = next(seeds), next(seeds)
        b = timed(
            lambda s=s_new: hdp.simulate_mse(
                hdp.METHODS, prof, dist, trials=args.trials, seed=s, return_estimates=True
            )
        )
        rerun_seed(s_old)  # fill the cache for s_old
        u = timed(lambda s=s_new: rerun_seed(s))  # s_new is not cached in the app
        c = timed(lambda s=s_old: rerun_seed(s))
        bare.append(b)
        uncached.append(u)
        cached.append(c)
        overhead.append(u - b)

    n1 = iter(range(500, 900))

    def sweep_change() -> None:
        at.number_input(key="sim_sw_n1").set_value(next(n1)).run()
        assert not at.exception, at.exception

    sweep = _median_time(sweep_change, args.repeats)
    hist_sets = iter([["ADPM"], ["ADPM", "UNI"], ["SM"], ["FME", "LDPE"], ["PropDPM"]] * 4)

    def hist_change() -> None:
        at.multiselect(key="sim_hist").set_value(next(hist_sets)).run()
        assert not at.exception, at.exception

    hist = _median_time(hist_change, args.repeats)

    med = statistics.median
    cells = args.trials * prof.n
    print(
        f"Simulation page, n = {prof.n:,} per-user levels, {args.trials:,} trials "
        f"({cells:.1e} simulated values), six methods, median of {args.repeats}"
    )
    print(f"  bare simulate_mse (six methods, with estimates)  {med(bare):7.3f} s")
    print(f"  page: first open (simulate + sweep + draw)       {first:7.3f} s")
    print(
        f"  page rerun, seed changed (uncached)              {med(uncached):7.3f} s"
        f"   = {med(uncached) / med(bare):5.2f} x bare"
    )
    print(
        f"  page rerun, seed changed back (cached)           {med(cached):7.3f} s"
        f"   = {med(cached) / med(bare):5.2f} x bare"
    )
    print(f"  page rerun, sweep control changed (cached sim)   {sweep:7.3f} s")
    print(f"  page rerun, histogram methods changed            {hist:7.3f} s")
    print(f"  uncached rerun minus bare call (paired)          {med(overhead):7.3f} s")
    try:
        import os

        print(
            f"  (load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)"
        )
    except OSError:
        pass


if __name__ == "__main__":
    main()
