"""The paper's experiments (Section 6): Table 1 and the optimality-constant scatter.

* :func:`table1` recomputes Table 1 (n = 1000 users, log eps ~ U[-4, 2] "high" and U[-3, -2]
  "low" variance of eps, Beta(2, 3) data shifted to [-0.5, 0.5], natural log of the MSE), exact
  and by Monte Carlo, next to the paper's printed values.
* :func:`optimality_scatter` draws random unsaturated sequences as in the subsection "On Lemma
  Lemma 5" and returns ln H(eps) and ln f(eps) for each, to check the paper's
  suggestion that the constant 443 of Theorem 4 can be 4.

Command line::

    python -m hdp_core.experiments table1 [--trials N] [--seed S]
        [--format text|csv|json|markdown]
    python -m hdp_core.experiments scatter [--sequences N] [--seed S] [--format text|csv|json]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hdp_core.distributions import Beta
from hdp_core.errors import HdpError, ProfileError
from hdp_core.estimators import METHODS, exact_mse, get_method
from hdp_core.presets import paper_profile
from hdp_core.simulate import simulate_mse
from hdp_core.validate import describe

__all__ = [
    "MAX_TABLE1_TRIALS",
    "PAPER_N",
    "PAPER_TABLE1",
    "largest_gap",
    "main",
    "optimality_scatter",
    "random_unsaturated_sequences",
    "table1",
]

PAPER_TABLE1: dict[str, tuple[float, float]] = {
    "ADPM": (-9.3, -8.1),
    "PropDPM": (-9.0, -8.1),
    "LDPE": (-7.2, -1.3),
    "SM": (-6.5, -7.9),
    "FME": (-6.2, -6.2),
    "UNI": (-5.1, -7.1),
}
"""The paper's Table 1: method -> (ln MSE with high Var(eps), ln MSE with low Var(eps))."""

PAPER_N = 1000
"""Number of users in the paper's Table 1 experiment."""
PAPER_DIST = Beta(2.0, 3.0)
"""The data distribution of Table 1: Beta(2, 3) shifted to [-0.5, 0.5]."""
KINDS = ("high", "low")
MAX_TABLE1_CELLS = 50_000_000
"""Most simulated data values one Table 1 run draws (the live simulation's cap)."""
MAX_TABLE1_TRIALS = MAX_TABLE1_CELLS // (2 * 1000)
"""Most trials of :func:`table1`: 25,000 (2 profiles of 1,000 users; the paper used 20,000)."""

EPS1_RANGE = (1e-3, 10.0)
"""Range of the first (strictest) level of a random sequence: log-uniform (privacy units)."""
MAX_SEQUENCES = 1_000_000
MAX_LENGTH = 100_000


def _ln(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def table1(trials: int = 20_000, seed: int = 0, profile_seed: int = 0) -> list[dict[str, Any]]:
    """The paper's Table 1, recomputed: one row per method in ``METHODS`` order.

    Each row holds ``method``; ``paper_high``, ``paper_low`` (the printed values); ``exact_high``,
    ``exact_low`` (ln of the closed-form MSE); ``sim_high``, ``sim_low`` (ln of the Monte Carlo
    MSE over ``trials`` trials with ``seed``); and the 95% confidence interval of the simulated
    MSE in ln units, ``sim_high_lo``, ``sim_high_hi``, ``sim_low_lo``, ``sim_low_hi``
    (``-inf`` if the lower end is 0). All values are natural logs of MSEs for data in
    [-0.5, 0.5]. Profiles: ``paper_profile(kind, 1000, profile_seed)``; data Beta(2, 3).
    """
    if (
        isinstance(trials, bool)
        or not isinstance(trials, (int, np.integer))
        or not (2 <= trials <= MAX_TABLE1_TRIALS)
    ):
        raise HdpError(
            f"Table 1 trials = {describe(trials)}: give a whole number from 2 to "
            f"{MAX_TABLE1_TRIALS:,} (2 profiles x {PAPER_N:,} users x trials stays within "
            f"{MAX_TABLE1_CELLS:,} simulated values, as in the live simulation)"
        )
    rows: dict[str, dict[str, Any]] = {m: {"method": m} for m in METHODS}
    for j, kind in enumerate(KINDS):
        prof = paper_profile(kind, PAPER_N, profile_seed)
        sims = simulate_mse(METHODS, prof, PAPER_DIST, trials=trials, seed=seed)
        for m in METHODS:
            r = sims[m]
            row = rows[m]
            row[f"paper_{kind}"] = PAPER_TABLE1[m][j]
            row[f"exact_{kind}"] = _ln(exact_mse(get_method(m, prof), prof, PAPER_DIST))
            row[f"sim_{kind}"] = _ln(r.mse)
            row[f"sim_{kind}_lo"] = _ln(r.ci_low)
            row[f"sim_{kind}_hi"] = _ln(r.ci_high)
    order = (
        ["method"]
        + [f"{what}_{kind}" for what in ("paper", "exact", "sim") for kind in KINDS]
        + [f"sim_{kind}_{end}" for kind in KINDS for end in ("lo", "hi")]
    )
    return [{k: rows[m][k] for k in order} for m in METHODS]


def random_unsaturated_sequences(
    sequences: int = 500,
    seed: int = 0,
    max_n: int = 200,
    eps1_range: tuple[float, float] = EPS1_RANGE,
) -> tuple[np.ndarray, np.ndarray]:
    """Random unsaturated privacy sequences, as in the paper's subsection on Lemma unsat-regime.

    n ~ uniform on {1, ..., max_n}; eps_1 log-uniform on ``eps1_range``; then
    eps_{i+1} ~ U[eps_i, tau_i) with tau_i = (||eps_1^i||_2^2 + 8)/||eps_1^i||_1
    = 4 ||eps_1^i||_1 f(eps_1^i) (the paper's sampling interval), so no index saturates
    (Definition 2) and ADPM's r equals eps.
    Returns (eps of shape (sequences, max_n), ascending, NaN after position n; n per sequence).
    Vectorised over sequences (one numpy step per position).
    """
    sequences, max_n = _check_counts(sequences, max_n)
    lo, hi = eps1_range
    if not (0 < lo <= hi < math.inf):
        raise ValueError(f"eps1_range must satisfy 0 < low <= high < inf, got {eps1_range!r}")
    rng = np.random.default_rng(seed)
    n = rng.integers(1, max_n + 1, sequences)
    e = np.exp(rng.uniform(math.log(lo), math.log(hi), sequences))
    u = rng.random((sequences, max_n))
    eps = np.empty((sequences, max_n))
    s1 = np.zeros(sequences)
    slack = np.full(sequences, 8.0)  # 8 - G_i, G_i = eps_i ||eps_1^i||_1 - ||eps_1^i||_2^2 < 8
    for i in range(max_n):
        eps[:, i] = e
        s1 += e
        # tau_i - eps_i = slack_i / ||eps_1^i||_1 (no cancellation, unlike (S2 + 8)/S1 - eps_i);
        # eps_{i+1} = eps_i + u (tau_i - eps_i) leaves slack_{i+1} = (1 - u) slack_i > 0.
        e = e + u[:, i] * (slack / s1)
        slack = slack * (1.0 - u[:, i])
    eps[np.arange(max_n)[None, :] >= n[:, None]] = np.nan
    return eps, n


def optimality_scatter(
    sequences: int = 500,
    seed: int = 0,
    max_n: int = 200,
    eps1_range: tuple[float, float] = EPS1_RANGE,
) -> dict[str, np.ndarray]:
    """ln H(eps) and ln f(eps) for random unsaturated sequences (the paper's Figure 2).

    For each sequence (see :func:`random_unsaturated_sequences`): f = (||eps||_2^2 + 8) /
    (4 ||eps||_1^2), ADPM's uncapped worst case (Theorem 2; r = eps since nothing saturates),
    and H = max_{i=0..n} 1/(||eps_1^i||_1^2 + n - i) (Theorem 3). Lemma unsat-regime proves
    f <= 443 H; the paper suggests 4 suffices.

    Returns numpy arrays ``n``, ``eps1``, ``ln_H``, ``ln_f``, ``ratio`` (= f/H), one entry per
    sequence, and the scalars ``max_ratio`` (largest f/H), ``argmax`` (its sequence),
    ``n_above_4`` and ``n_above_443`` (how many sequences exceed those constants).
    """
    eps, n = random_unsaturated_sequences(sequences, seed, max_n, eps1_range)
    z = np.nan_to_num(eps, nan=0.0)
    s1 = np.cumsum(z, axis=1)
    s2 = np.cumsum(z * z, axis=1)
    idx = np.arange(1, eps.shape[1] + 1)
    d = s1 * s1 + (n[:, None] - idx[None, :])  # ||eps_1^i||_1^2 + n - i for i = 1..max_n
    d = np.where(idx[None, :] <= n[:, None], d, np.inf)
    h = np.maximum(1.0 / n, 1.0 / d.min(axis=1))  # i = 0 term is 1/n
    last = n - 1
    rows = np.arange(n.size)
    f = (s2[rows, last] + 8.0) / (4.0 * s1[rows, last] ** 2)
    ratio = f / h
    k = int(np.argmax(ratio))
    return {
        "n": n,
        "eps1": eps[:, 0].copy(),
        "ln_H": np.log(h),
        "ln_f": np.log(f),
        "ratio": ratio,
        "max_ratio": np.float64(ratio[k]),
        "argmax": np.int64(k),
        "n_above_4": np.int64(np.count_nonzero(ratio > 4.0)),
        "n_above_443": np.int64(np.count_nonzero(ratio > 443.0)),
    }


def _check_counts(sequences: int, max_n: int) -> tuple[int, int]:
    for name, v, top in (("sequences", sequences, MAX_SEQUENCES), ("max_n", max_n, MAX_LENGTH)):
        if isinstance(v, bool) or int(v) != v or not 1 <= v <= top:
            raise ValueError(f"{name} must be a whole number from 1 to {top:,}, got {v!r}")
    if int(sequences) * int(max_n) > 50_000_000:
        raise ValueError(
            f"sequences x max_n = {int(sequences) * int(max_n):,} is too large (max 5e7)"
        )
    return int(sequences), int(max_n)


# --------------------------------------------------------------------------- command line
def _fmt(x: float) -> str:
    return f"{x:7.2f}" if math.isfinite(x) else f"{x!s:>7}"


def _jsonable(x: Any) -> Any:
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


def _md_ln(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}".replace("-", "−") if math.isfinite(x) else str(x)


def largest_gap(rows: list[dict[str, Any]], estimates: Sequence[str] = ("exact", "sim")) -> float:
    """Table 1's largest gap to the paper: max |ours - paper| in ln MSE over both profiles
    (high and low Var(eps)) and the given ``estimates`` of :func:`table1` rows ("exact",
    "sim"); entries that are not finite are left out (the paper prints one decimal, so gaps
    of about 0.1 are expected). The README's line and the Simulation page's metric use it."""
    return max(
        float(abs(r[f"{w}_{kind}"] - r[f"paper_{kind}"]))
        for r in rows
        for kind in KINDS
        for w in estimates
        if math.isfinite(r[f"{w}_{kind}"])
    )


def table1_markdown(rows: list[dict[str, Any]], trials: int, seed: int) -> str:
    """Table 1 as the README prints it: a markdown table of ln MSE, exact / simulated
    (paper in brackets), with the largest gap to the paper (the README's block is this
    output at the default seed; tests/test_readme_table1.py compares them)."""
    worst = largest_gap(rows, ("exact", "sim"))
    out = [
        f"Table 1 at seed {seed} (ln MSE, exact / simulated with {trials:,} trials, paper in "
        f"brackets; largest gap {worst:.2f}):",
        "",
        "| method | high Var(eps) | low Var(eps) |",
        "|---|---|---|",
    ]
    for r in rows:
        cells = [
            f"{_md_ln(r[f'exact_{k}'])} / {_md_ln(r[f'sim_{k}'])} ({_md_ln(r[f'paper_{k}'], 1)})"
            for k in KINDS
        ]
        out.append(f"| {r['method']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def format_table1(rows: list[dict[str, Any]], fmt: str, trials: int, seed: int) -> str:
    """Table 1 rows as an aligned text table, a markdown table (the README's), CSV or JSON
    (non-finite numbers: null)."""
    if fmt == "markdown":
        return table1_markdown(rows, trials, seed)
    if fmt == "json":
        return json.dumps([{k: _jsonable(v) for k, v in r.items()} for r in rows], indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
        return buf.getvalue().rstrip("\n")
    out = [
        f"Table 1: natural log of the MSE, n = {PAPER_N} users, Beta(2, 3) data on [-0.5, 0.5], "
        f"{trials:,} trials, seed {seed}",
        "",
        (
            f"{'':8}  {'high Var(eps): log eps ~ U[-4, 2]':^43}  "
            f"{'low Var(eps): log eps ~ U[-3, -2]':^43}"
        ).rstrip(),
        f"{'method':8}  "
        + "  ".join([f"{'paper':>7} {'exact':>7} {'simulated':>7} {'[95% CI]':>17}"] * 2),
    ]
    for r in rows:
        cells = []
        for kind in KINDS:
            ci = f"[{_fmt(r[f'sim_{kind}_lo']).strip()}, {_fmt(r[f'sim_{kind}_hi']).strip()}]"
            cells.append(
                f"{_fmt(r[f'paper_{kind}'])} {_fmt(r[f'exact_{kind}'])} "
                f"{_fmt(r[f'sim_{kind}']):>9} {ci:>17}"
            )
        out.append(f"{r['method']:8}  " + "  ".join(cells))
    worst = largest_gap(rows, ("exact", "sim"))
    out += ["", f"largest |ours - paper| over both columns: {worst:.2f} (ln units)"]
    return "\n".join(out)


def format_scatter(res: dict[str, np.ndarray], fmt: str, seed: int, max_n: int) -> str:
    """Scatter summary (text) or its points (CSV; JSON with the summary)."""
    cols = ("n", "eps1", "ln_H", "ln_f", "ratio")
    count = int(res["n"].size)
    k = int(res["argmax"])
    summary = {
        "count": count,
        "max_ratio": float(res["max_ratio"]),
        "argmax_n": int(res["n"][k]),
        "n_above_4": int(res["n_above_4"]),
        "n_above_443": int(res["n_above_443"]),
        "seed": seed,
        "max_n": max_n,
    }
    if fmt == "json":
        pts = [{c: _jsonable(res[c][i]) for c in cols} for i in range(count)]
        return json.dumps({"summary": summary, "points": pts}, indent=1)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for i in range(count):
            w.writerow([int(res["n"][i])] + [f"{float(res[c][i]):.10g}" for c in cols[1:]])
        return buf.getvalue().rstrip("\n")
    return "\n".join(
        [
            f"Random unsaturated sequences: {count:,} (n uniform on 1..{max_n}, "
            f"eps_1 log-uniform on [{EPS1_RANGE[0]:g}, {EPS1_RANGE[1]:g}], seed {seed})",
            f"largest f/H: {summary['max_ratio']:.4f} (sequence {k}, n = {summary['argmax_n']})",
            f"sequences with f/H > 4: {summary['n_above_4']} of {count:,}",
            f"sequences with f/H > 443 (would contradict Theorem 4): {summary['n_above_443']}",
            f"ln H range [{res['ln_H'].min():.2f}, {res['ln_H'].max():.2f}], "
            f"ln f range [{res['ln_f'].min():.2f}, {res['ln_f'].max():.2f}]",
        ]
    )


def _int_arg(lo: int, hi: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be between {lo:,} and {hi:,}, got {v:,}")
        return v

    return parse


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``python -m hdp_core.experiments``."""
    p = argparse.ArgumentParser(
        prog="python -m hdp_core.experiments",
        description=(
            "Reproduce the experiments of 'Mean Estimation Under Heterogeneous Privacy "
            "Demands': Table 1 (ln MSE of six methods) and the optimality-constant scatter."
        ),
        epilog=(
            "examples:\n"
            "  python -m hdp_core.experiments table1\n"
            "  python -m hdp_core.experiments table1 --trials 2000 --format csv\n"
            "  python -m hdp_core.experiments scatter --sequences 5000 --format json\n"
            "Run a command with --help for its options."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="{table1,scatter}")
    t = sub.add_parser(
        "table1",
        help="ln MSE of every method for the high- and low-variance profiles vs the paper",
        description=(
            "Natural log of the MSE of ADPM, PropDPM, LDPE, SM, FME and UNI for n = 1000 users "
            "with log eps ~ U[-4, 2] (high variance) and U[-3, -2] (low variance), Beta(2, 3) "
            "data, exact (closed form) and simulated, next to the paper's Table 1."
        ),
    )
    t.add_argument(
        "--trials",
        type=_int_arg(2, 10_000_000),
        default=20_000,
        help="Monte Carlo trials per profile (default 20000, as in the paper)",
    )
    t.add_argument(
        "--seed", type=_int_arg(0, 2**63 - 1), default=0, help="seed of the simulation (default 0)"
    )
    t.add_argument(
        "--profile-seed",
        type=_int_arg(0, 2**63 - 1),
        default=0,
        help="seed that draws the two privacy profiles (default 0)",
    )
    t.add_argument(
        "--format",
        choices=("text", "csv", "json", "markdown"),
        default="text",
        help="output format (default text: an aligned table; markdown: the README's)",
    )
    s = sub.add_parser(
        "scatter",
        help="ln H vs ln f for random unsaturated sequences (is the constant 443 really 4?)",
        description=(
            "Draw random unsaturated privacy sequences as in the paper's last experiments "
            "subsection and report the largest ratio f/H of ADPM's worst case f to the lower "
            "bound quantity H (Theorem 4 proves f/H <= 443; the paper suggests 4)."
        ),
    )
    s.add_argument(
        "--sequences",
        type=_int_arg(1, MAX_SEQUENCES),
        default=500,
        help="number of random sequences (default 500)",
    )
    s.add_argument("--seed", type=_int_arg(0, 2**63 - 1), default=0, help="random seed (default 0)")
    s.add_argument(
        "--max-n",
        type=_int_arg(1, MAX_LENGTH),
        default=200,
        help="largest sequence length; n is uniform on 1..max-n (default 200)",
    )
    s.add_argument(
        "--format",
        choices=("text", "csv", "json"),
        default="text",
        help="text: summary only; csv: one row per sequence; json: summary + points",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m hdp_core.experiments``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "table1":
            rows = table1(args.trials, args.seed, args.profile_seed)
            print(format_table1(rows, args.format, args.trials, args.seed))
        else:
            res = optimality_scatter(args.sequences, args.seed, args.max_n)
            print(format_scatter(res, args.format, args.seed, args.max_n))
    except (ProfileError, ValueError) as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
