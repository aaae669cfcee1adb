"""Every "Reproduce in Python" snippet the pages show: plain hdp_core calls that give the page's
numbers (each one is run by a test).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from hdp_app.views import links
from hdp_core.distributions import Beta, Distribution, TwoPoint, Uniform
from hdp_core.estimators import METHODS
from hdp_core.profile import EpsilonProfile

__all__ = [
    "INLINE_MAX_ENTRIES",
    "bounds_code",
    "distribution_code",
    "profile_code",
    "release_code",
    "reproduce_code",
    "saturation_code",
]

INLINE_MAX_ENTRIES = 50
"""Profiles with at most this many entries are written out in full in reproducible code."""


def distribution_code(dist: Distribution) -> str:
    """Python expression (using ``hdp``) that rebuilds ``dist``."""
    if isinstance(dist, Beta):
        return f"hdp.Beta({dist.a!r}, {dist.b!r})"
    if isinstance(dist, Uniform):
        return "hdp.Uniform()"
    if isinstance(dist, TwoPoint):
        return f"hdp.TwoPoint({dist.p!r})"
    raise ValueError(f"no code for distribution {dist!r}")


def _num(x: float) -> str:
    x = float(x)
    if math.isinf(x):
        return "math.inf"
    return repr(x)


def _spec_call(spec: Mapping[str, Any]) -> str | None:
    """The generator call behind a shareable spec (hdp_app.views.links), or None."""
    try:
        s = links.normalize_spec(spec)
    except ValueError:
        return None
    k = s["kind"]
    if k == "preset":
        return f"hdp.preset({s['name']!r}, seed={s['seed']})"
    if k == "log_uniform":
        return (
            f"hdp.presets.log_uniform({s['n']}, {_num(s['lo'])}, {_num(s['hi'])}, seed={s['seed']})"
        )
    if k == "two_groups":
        return (
            f"hdp.presets.two_groups({s['n']}, {_num(s['frac'])}, {_num(s['eps1'])}, "
            f"{_num(s['eps2'])})"
        )
    if k == "mixture":
        return (
            f"hdp.presets.mixture({s['n']}, {_num(s['lo'])}, {_num(s['hi'])}, "
            f"{_num(s['public'])}, seed={s['seed']})"
        )
    return None


def _spec_profile(spec: Mapping[str, Any]) -> EpsilonProfile | None:
    try:
        return links.profile_from_spec(spec)
    except ValueError:
        return None


def profile_code(profile: EpsilonProfile, spec: Mapping[str, Any] | None = None) -> str:
    """Python code setting ``prof`` (using ``hdp``) that rebuilds ``profile`` exactly.

    A preset or generator spec (hdp_app.views.links: preset, log_uniform, two_groups, mixture) is
    rebuilt by its call when that gives the same profile (same key); a small profile is
    written out in full; anything else is read back from ``profile.csv`` (the page offers it
    for download; ``EpsilonProfile.to_csv`` writes it).
    """
    if isinstance(spec, Mapping):
        call = _spec_call(spec)
        if call is not None:
            built = _spec_profile(spec)
            if built is not None and built.key == profile.key:
                return f"prof = {call}"
    if profile.k <= INLINE_MAX_ENTRIES and profile.data is None:
        lv = ", ".join(_num(v) for v in profile.levels)
        if profile.is_tiered:
            ct = ", ".join(str(int(c)) for c in profile.counts)
            names = f", names={list(profile.names)!r}" if profile.names else ""
            return f"prof = hdp.EpsilonProfile.from_tiers([{lv}], [{ct}]{names})"
        return f"prof = hdp.EpsilonProfile.from_values([{lv}])"
    # The file is closed after reading (the snippet once left it open: a ResourceWarning).
    return 'with open("profile.csv", "rb") as f:\n    prof = hdp.profile_from_csv(f.read())'


def reproduce_code(
    profile: EpsilonProfile,
    spec: Mapping[str, Any] | None,
    dist: Distribution,
    methods: Sequence[str],
    trials: int,
    seed: int,
    sweep: Mapping[str, Any] | None = None,
) -> str:
    """A self-contained Python script with the hdp_core calls behind the page's numbers.

    ``sweep`` (optional) holds n_fixed, eps_fixed, n_var, lo, hi, points, public for the
    group-sweep chart. Running the script prints the same table the page shows.
    """
    meth = ", ".join(repr(m) for m in METHODS if m in methods)
    lines = [
        "import math",
        "",
        "import hdp_core as hdp",
        "import hdp_core.presets",
        "",
        profile_code(profile, spec),
        f"dist = {distribution_code(dist)}",
        "# all six methods are simulated together (common random numbers: every method sees the",
        "# same data in each trial), as on the page; the selected ones are printed",
        f"res = hdp.simulate_mse(hdp.METHODS, prof, dist, trials={int(trials)}, seed={int(seed)},",
        "                       return_estimates=True)",
        f"for name in [{meth}]:",
        "    r = res[name]",
        '    print(f"{name:8s} MSE {r.mse:.4e} (95% CI {r.ci_low:.4e} to {r.ci_high:.4e}) "',
        '          f"exact {r.exact:.4e} ln MSE {r.log_mse:.2f} "',
        "          f\"ratio to ADPM {r.mse / res['ADPM'].mse:.3g}\")",
    ]
    if sweep is not None:
        lines += [
            "",
            "# the group sweep (exact MSE, no simulation)",
            "from hdp_app.views.simulation import saturation_point, sweep_eps_values",
            "from hdp_core.sweeps import group_sweep",
            "",
            f"sat = saturation_point({int(sweep['n_fixed'])}, {_num(sweep['eps_fixed'])})",
            f"values = sweep_eps_values({_num(sweep['lo'])}, {_num(sweep['hi'])}, "
            f"{int(sweep['points'])}, public={bool(sweep['public'])}, include=[sat])",
            f"sw = group_sweep({int(sweep['n_fixed'])}, {_num(sweep['eps_fixed'])}, "
            f"{int(sweep['n_var'])}, values, hdp.METHODS, dist)",
            "print('saturation point', sat)",
            f"for name in [{meth}]:",
            "    print(name, 'MSE at the last point', sw.mse[name][-1])",
        ]
    return "\n".join(lines) + "\n"


def saturation_code(profile: EpsilonProfile, spec: Mapping[str, Any] | None = None) -> str:
    """The Saturation page's calls, for ``profile`` (rebuilt as in :func:`profile_code`)."""
    return f"""import math

import hdp_core as hdp
import hdp_core.presets
from hdp_app.views import saturation as sat

{profile_code(profile, spec)}
sol = hdp.adpm(prof)
print(sol.saturation_level)   # tau*: every user asking for eps >= tau* gets tau*
sol.granted_eps, sol.weights  # r_i = min(eps_i, tau*) and w = r / sum(r)
print(sat.free_privacy(sol))  # who is capped, what they asked for, their weight share
sat.free_privacy_table(sol).columns   # the per-tier table
sat.r_curve(sol)              # the r-versus-eps curve (downsampled for > 20 000 users)
print(hdp.two_group_threshold(n=1000, frac=0.9, eps1=0.1))   # eps1 + 8/(n f eps1)
trace = hdp.adpm_trace(sat.teaching_example())       # Algorithm 1, one row per step
print(sat.trace_step_text(trace, 10))
"""


def bounds_code(
    profile: EpsilonProfile,
    spec: Mapping[str, Any] | None,
    mode: str,
    lo: float = 0.0,
    hi: float = 100_000.0,
) -> str:
    """The Bounds page's calls, for ``profile`` and the sweep ``mode`` ('scale' or 'n')."""
    if mode not in ("scale", "n"):
        raise ValueError(f"mode must be 'scale' or 'n', got {mode!r}")
    fn = "scale_sweep" if mode == "scale" else "n_sweep"
    return f"""import math

import hdp_core as hdp
import hdp_core.presets
from hdp_core import sweeps
from hdp_core.experiments import optimality_scatter
from hdp_app.views import bounds

{profile_code(profile, spec)}
print(hdp.upper_bound(prof))        # ADPM's worst case f ∧ 1/4 (Theorem 2)
print(hdp.lower_bound(prof))        # (H ∧ 1/4)/512 (Theorem 3)
print(hdp.optimality_ratio(prof))   # f/H <= 443 (Theorem 4)
sw = sweeps.{fn}(prof, bounds.sweep_points(prof, "{mode}"))
sw.x, sw.upper, sw.lower, sw.ratio, sw.mse["PropDPM"]
sc = optimality_scatter(sequences=500, seed=0, max_n=200)   # sc["ln_f"], sc["ln_H"]
print(bounds.method_errors_real(prof, lo={_num(lo)}, hi={_num(hi)})["ADPM"])  # RMSE, 95% ±
"""


def menu_lines(menu: Any) -> list[str]:
    """The lines that rebuild the Tier designer menu ``menu`` as ``menu`` with ``make_menu``
    (none without a menu): the snippets' ``tiers=menu`` reads tier names as the page did."""
    if menu is None:
        return []
    eps = ", ".join(
        "'public'" if math.isinf(float(t.eps)) else repr(float(t.eps)) for t in menu.tiers
    )
    shares = ", ".join(repr(float(t.share_percent)) for t in menu.tiers)
    sd = None if menu.data_sd is None else float(menu.data_sd)
    return [
        "from hdp_core.design import make_menu",
        "",
        f"menu = make_menu({list(menu.names)!r}, [{eps}], [{shares}], {int(menu.n_users)},",
        f"                 {float(menu.low)!r}, {float(menu.high)!r}, {menu.unit!r}, {sd!r})",
    ]


def scope_line(scope: str | None) -> list[str]:
    """The snippet's ``dataset_scope`` argument when the page passed one (a signed-in user's
    scope of dataset names: 16 hex digits of a keyed hash, never the user's id), else none:
    the library's default, the server's names, is what the page used."""
    if scope is None:
        return []
    return [f"    dataset_scope={str(scope)!r},  # your sign-in's dataset names (a keyed hash)"]


def release_code(
    settings: Mapping[str, Any],
    file: str,
    menu: Any = None,
    rel: Any = None,
    scope: str | None = None,
) -> str:
    """The Release page's call, for its settings (columns, range, declared spread) and the
    uploaded file's name (read from the current folder), with the Tier designer menu rebuilt
    by ``make_menu`` when one is used; with the release ``rel`` also what it did: target,
    spend (exact: the page's whole percents print exactly), the person id column, the
    ledger (the server's ledger file: running the snippet on the same machine charges the
    same ledger), the dataset name and, for a signed-in user, the ``scope`` of their dataset
    names (:func:`scope_line`). Running it prints the release and its receipt (the noise
    differs from run to run; everything else is the page's)."""
    lines = ["import hdp_release", "", *menu_lines(menu)]
    tiers = "" if menu is None else ", tiers=menu"
    sd = settings.get("data_sd")
    lines += [
        "rel = hdp_release.release_mean(",
        f"    {str(file)!r},",
        f"    value={str(settings['value'])!r},",
        f"    eps={str(settings['eps'])!r},",
        f"    lo={float(settings['lo'])!r},",
        f"    hi={float(settings['hi'])!r},",
        f"    data_sd={None if sd is None else float(sd)!r}{tiers},",
    ]
    if rel is not None:
        ledger = rel.ledger_path
        lines += [
            f"    target={str(rel.target)!r},",
            f"    spend={float(rel.spend)!r},",
            f"    id={rel.id_column!r},",
            f"    ledger={ledger!r},  # the privacy ledger charged (False: not tracked)"
            if ledger is not None
            else "    ledger=False,  # NOT TRACKED, as on the page",
            f"    dataset={rel.dataset!r},",
            *scope_line(scope),
        ]
    lines += [
        ")",
        "print(rel.text())  # the private mean, its 95% interval and the privacy receipt",
    ]
    return "\n".join(lines) + "\n"
