"""The teaching path's numbers (no streamlit): the Algorithm 1 walk-through's extras, a
five-step guided tour of the paper's story, the tone of each verdict the pages show, and the
two-group phase diagram with movable levels.

* Walk-through: :func:`saturation_step` (the step to jump to), :func:`step_weights` (each
  step's weights w_i = r_i/||r||_1 and Laplace scale eta = 1/||r||_1, the two MSE terms).
  Its sentences (why the constant is 8, the weights, a tau* beside the sidebar's) are in
  views.explain.
* Tour: :data:`TOUR` (five steps: who saturates, privacy for free, the bound gap, the
  simulation, a tier menu), :func:`tour_step` (one step's title, sentences, live controls and
  numbers, each number from the same function as the chart that shows it).
* Tones: :func:`answer_tone`, :func:`change_tone`, :func:`delta_color`: success only
  for good news, a change of about 0% neutral.
* Phase diagram: :func:`phase_state` (the boundary, the point, the verdict and the ranges of
  the two sliders for the groups' levels).

Privacy levels are in units of eps; MSEs are for data in [-1/2, 1/2] unless a unit is named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from hdp_app.views.cards import Metric
from hdp_app.views.explain import approx_percent, two_group_verdict
from hdp_app.views.formatting import count_noun, plain, short_eps
from hdp_app.views.saturation import TwoLevelPoint, free_privacy, phase_boundary, two_level_point
from hdp_core.adpm import AlgorithmTrace, adpm
from hdp_core.bounds import lower_bound, lower_bound_H, optimality_ratio, upper_bound
from hdp_core.design import evaluate_menu
from hdp_core.distributions import Beta
from hdp_core.estimators import exact_mse, get_method
from hdp_core.menu import make_menu
from hdp_core.presets import two_groups
from hdp_core.profile import EpsilonProfile
from hdp_core.solvers import DesignAnswer

__all__ = [
    "MENU_RANGE",
    "PHASE_EPS_MAX",
    "PHASE_EPS_MIN",
    "RMSE_LABELS",
    "TOUR",
    "Control",
    "PhaseState",
    "StepWeights",
    "Tone",
    "TourStep",
    "answer_tone",
    "change_tone",
    "control_grid",
    "control_text",
    "delta_color",
    "log_grid",
    "nearest",
    "number_text",
    "parse_control",
    "phase_point",
    "phase_state",
    "saturation_step",
    "step_cards",
    "step_weights",
    "tour_defaults",
    "tour_menu",
    "tour_step",
    "weights_column",
]

Tone = Literal["success", "info", "warning", "error"]
"""The box a verdict is shown in: success only for good news."""


# ------------------------------------------------------------------------------ walk-through
def saturation_step(trace: AlgorithmTrace) -> int | None:
    """The 1-based step of Algorithm 1 at which the first user saturates (the step to jump
    to), or None when nobody does (then every user gets what they asked for)."""
    sat = np.asarray(trace.saturated, dtype=bool)
    if not sat.any():
        return None
    return int(np.argmax(sat)) + 1


@dataclass(frozen=True)
class StepWeights:
    """ADPM on the first ``step`` users of the walk-through (as if the others were absent):
    ``r``: granted levels r_1..r_k; ``weights``: w_i = r_i/||r||_1 (sum 1); ``noise_scale``:
    the Laplace scale eta = 1/||r||_1; ``sampling`` = ||r||_2^2/(4||r||_1^2) (the data's part
    of the worst-case MSE, variance 1/4 per unit weight) and ``noise`` = 2 eta^2 (the
    Laplace variance); ``f`` = sampling + noise = (||r||_2^2 + 8)/(4||r||_1^2) (Theorem 2).
    With a tuned constant c = 2/s^2 the data part uses s^2 instead of 1/4."""

    step: int
    r: np.ndarray
    weights: np.ndarray
    noise_scale: float
    l1: float
    l2: float
    sampling: float
    noise: float
    f: float
    constant: float


def step_weights(trace: AlgorithmTrace, step: int) -> StepWeights:
    """Weights and noise scale after ``step`` steps of ``trace`` (1-based; see StepWeights).
    Raises ValueError for a step outside 1..m or when every usable user is public (no
    noise: equal weights)."""
    m = int(trace.eps.size)
    if not 1 <= step <= m:
        raise ValueError(f"step must be between 1 and {m}, got {step}")
    r = np.asarray(trace.r[:step], dtype=np.float64)
    if not np.all(np.isfinite(r)):
        raise ValueError("every usable user is public: equal weights and no noise")
    l1 = float(r.sum())
    l2 = float(np.dot(r, r))
    c = float(trace.constant)
    var = 2.0 / c  # the data variance Algorithm 1's constant stands for (1/4 when c = 8)
    eta = 1.0 / l1
    sampling = var * l2 / (l1 * l1)
    noise = 2.0 * eta * eta
    return StepWeights(step, r, r / l1, eta, l1, l2, sampling, noise, sampling + noise, c)


# ------------------------------------------------------------------------------ tones
def answer_tone(answer: DesignAnswer, question: str, n_users: int | None = None) -> Tone:
    """The tone of a Tier designer answer (design.DesignAnswer) to ``question`` ("users",
    "level" or "move"): success when the menu meets the target as it is; a warning when it
    needs a change (more users, users to move, a stricter level cannot be offered); error
    when the target cannot be met; info for a target met without any data ("trivial")."""
    if answer.status == "already":
        return "success"
    if answer.status == "impossible":
        return "error"
    if answer.status == "trivial":
        return "info"
    if answer.status != "ok":
        raise ValueError(f"unknown answer status {answer.status!r}")
    if question == "users":
        if n_users is None:
            raise ValueError("the 'users' question needs the menu's current number of users")
        return "success" if answer.value is not None and answer.value <= n_users else "warning"
    if question == "move":
        return "success" if not answer.value else "warning"
    if question == "level":
        return "info"  # a fact about the menu, neither good nor bad news
    raise ValueError(f"unknown question {question!r}")


def change_tone(
    value: float, reference: float, lower_is_better: bool = True, digits: int = 3
) -> Literal["better", "worse", "neutral"]:
    """Whether ``value`` is better or worse than ``reference`` (errors: lower is better);
    "neutral" exactly when explain.approx_percent shows '≈ 0%' (or cannot compare)."""
    text = approx_percent(value, reference, digits)
    if text in ("", "≈ 0%"):
        return "neutral"
    lower = value < reference
    return "better" if lower == lower_is_better else "worse"


def delta_color(
    value: float, reference: float, lower_is_better: bool = True, digits: int = 3
) -> Literal["normal", "inverse", "off"]:
    """st.metric's delta_color for a delta 'value vs reference': "off" (grey) when the change
    is about 0%, else the colouring that shows a better value green."""
    if change_tone(value, reference, lower_is_better, digits) == "neutral":
        return "off"
    return "inverse" if lower_is_better else "normal"


# ------------------------------------------------------------------------------ phase diagram
PHASE_EPS_MIN, PHASE_EPS_MAX = 1e-3, 1e2
"""The range of the phase diagram's axes and of its two level sliders."""


@dataclass(frozen=True)
class PhaseState:
    """The two-group phase diagram with the groups' levels movable in place.

    ``n``, ``frac``: users and the strict group's share; ``eps1`` < ``eps2``: the two levels
    (eps2 may be inf, drawn at the top edge); ``boundary_eps1``/``boundary_eps2``: the
    saturation boundary eps2 = eps1 + 8/(n f eps1); ``threshold``: its value at ``eps1``;
    ``saturated``/``tau``/``n_capped``: from ADPM on the profile presets.two_groups builds;
    ``verdict``: explain.two_group_verdict's sentence; ``slider_min``/``slider_max``: the
    range of both sliders; ``from_profile``: the point is the current profile itself (two
    levels, not moved); ``start_eps1``/``start_eps2``: where the sliders start for this
    profile (its two levels, or its halves' medians)."""

    n: int
    frac: float
    eps1: float
    eps2: float
    boundary_eps1: np.ndarray
    boundary_eps2: np.ndarray
    threshold: float
    saturated: bool
    tau: float
    n_capped: int
    verdict: str
    slider_min: float = PHASE_EPS_MIN
    slider_max: float = PHASE_EPS_MAX
    from_profile: bool = False
    start_eps1: float = math.nan
    start_eps2: float = math.nan


def _start_levels(prof: EpsilonProfile) -> tuple[int, float, float, float, bool]:
    """(n, frac, eps1, eps2, exact) for the diagram's first point: the profile itself when it
    has two positive levels, else its strict half against its loose half (medians)."""
    pt = two_level_point(prof)
    if pt is not None:
        return pt.n, pt.frac, pt.eps1, pt.eps2, True
    lv, ct = prof.grouped()
    keep = lv > 0
    lv, ct = lv[keep], ct[keep]
    n = int(ct.sum())
    if n < 2 or lv.size < 2:
        return max(n, 2), 0.5, 0.1, 1.0, False
    cum = np.cumsum(ct)
    half = int(np.searchsorted(cum, n / 2))  # the tier holding the median user
    split = min(max(half, 0), lv.size - 2)
    n1 = int(cum[split])
    frac = n1 / n
    mid1 = int(np.searchsorted(cum, n1 / 2))
    mid2 = int(np.searchsorted(cum, n1 + (n - n1) / 2))
    return n, frac, float(lv[mid1]), float(lv[mid2]), False


def _clip_level(e: float) -> float:
    """A level within the sliders' range (inf, public, is kept)."""
    return e if math.isinf(e) else min(max(e, PHASE_EPS_MIN), PHASE_EPS_MAX)


def phase_state(
    profile: EpsilonProfile,
    eps1: float | None = None,
    eps2: float | None = None,
    n: int | None = None,
    frac: float | None = None,
) -> PhaseState:
    """The phase diagram for ``profile``'s n and strict share, at levels ``eps1``/``eps2``
    (the two sliders; None: the profile's own levels, or its strict and loose halves'
    medians when it does not have exactly two). Levels are clipped to the slider range
    (eps2 = inf is kept: public). ``n`` and ``frac`` (a what-if too) replace the profile's."""
    n0, f0, e1, e2, exact = _start_levels(profile)
    start = (_clip_level(e1), _clip_level(e2))
    n = n0 if n is None else max(int(n), 2)
    frac = f0 if frac is None else float(frac)
    e1 = _clip_level(e1 if eps1 is None else float(eps1))
    e2 = _clip_level(e2 if eps2 is None else float(eps2))
    frac = min(max(frac, 1.0 / n), 1.0 - 1.0 / n)
    f0 = min(max(f0, 1.0 / n0), 1.0 - 1.0 / n0)
    bx, by = phase_boundary(n, frac, lo=PHASE_EPS_MIN, hi=PHASE_EPS_MAX)
    v = two_group_verdict(n, frac, e1, e2)
    sol = adpm(two_groups(n, frac, e1, e2))
    return PhaseState(
        n=n,
        frac=frac,
        eps1=e1,
        eps2=e2,
        boundary_eps1=bx,
        boundary_eps2=by,
        threshold=v.threshold,
        saturated=v.capped > 0,
        tau=float(sol.saturation_level),
        n_capped=v.capped,
        verdict=v.text,
        # the profile's own point (a share within the f slider's 0.01 steps of its own)
        start_eps1=start[0],
        start_eps2=start[1],
        from_profile=exact and (e1, e2) == start and n == n0 and abs(frac - f0) < 0.005,
    )


def phase_point(state: PhaseState) -> TwoLevelPoint:
    """The point ``state`` marks on the phase diagram (figures.saturation.phase_figure)."""
    return TwoLevelPoint(
        n=state.n,
        frac=state.frac,
        eps1=state.eps1,
        eps2=state.eps2,
        threshold=state.threshold,
        saturated=state.saturated,
    )


def log_grid(lo: float, hi: float, step: float, include: tuple[float, ...] = ()) -> tuple:
    """The values of a log-scale slider: 10^(log10(lo) + k step) from ``lo`` to ``hi``
    (``step`` in decades), each rounded to 2 significant digits (a teacher reads 5.0, not
    5.012), sorted, without repeats, with the values ``include`` (finite, in range) added."""
    if not (0 < lo < hi < math.inf and step > 0):
        raise ValueError(f"need 0 < lo < hi < inf and step > 0, got {lo}, {hi}, {step}")
    k = np.arange(0, math.floor(math.log10(hi / lo) / step + 1e-9) + 1)
    raw = np.concatenate([10.0 ** (math.log10(lo) + k * step), [lo, hi]])
    digits = 1 - np.floor(np.log10(raw)).astype(int)
    vals = {float(np.round(x, d)) for x, d in zip(raw, digits)}
    vals |= {float(x) for x in include if math.isfinite(x) and lo <= x <= hi}
    return tuple(sorted(v for v in vals if lo <= v <= hi))


def nearest(grid: tuple, x: float) -> float:
    """The value of ``grid`` (sorted) nearest to ``x`` on a log scale (inf: the largest)."""
    fin = np.asarray([g for g in grid if math.isfinite(g)], dtype=np.float64)
    if math.isinf(x) and x > 0:
        return float(grid[-1])
    if not (x > 0):
        return float(fin[0])
    return float(fin[int(np.argmin(np.abs(np.log(fin) - math.log(x))))])


def control_grid(c: Control) -> tuple:
    """The values a tour control offers: a log grid (with its default) for "slider_log",
    lo..hi by ``step`` for "slider"."""
    if c.kind == "slider_log":
        return log_grid(c.lo, c.hi, c.step, (c.default,))
    if c.kind == "slider":
        m = round((c.hi - c.lo) / c.step)
        return tuple(float(round(c.lo + i * c.step, 10)) for i in range(m + 1))
    raise ValueError(f"control {c.key!r} has no grid (kind {c.kind!r})")


def control_text(c: Control, x: float) -> str:
    """A value of tour control ``c`` as its slider shows it: users with thousands separators,
    a share in percent, a level with 2 significant digits."""
    if c.key == "tour_n":
        return f"{x:,.0f}"
    if c.kind == "slider":
        return f"{x:.0f}%"
    return f"{x:.2g}"


def parse_control(c: Control, text: str | None) -> float | None:
    """A link's value of control ``c`` (as control_text writes it: "5,000", "90%", "0.1"),
    or None when it is absent, not a number or outside the control's range (the slider
    then starts at its default); callers snap it to the grid (:func:`nearest`)."""
    if text is None:
        return None
    try:
        x = float(str(text).replace(",", "").replace("%", "").strip())
    except ValueError:
        return None
    return x if math.isfinite(x) and c.lo <= x <= c.hi else None


def number_text(label: str, value: float) -> str:
    """A tour step's number (``TourStep.numbers[label]``) as its card shows it: counts of
    users whole, MSEs in scientific notation, other values to 4 significant digits, 'none'
    for a τ* that does not exist (nobody is capped) and '—' for an undefined value."""
    if math.isnan(value):
        return "—"
    if math.isinf(value):
        return "none" if label.startswith("tau") or "threshold" in label else "∞"
    if label.startswith("users"):
        return f"{value:,.0f}"
    if "RMSE" in label:  # an error in the data's own units
        return f"{value:.4g}"
    if "MSE" in label or "bound" in label or "worst" in label:
        return f"{value:.3e}"
    return f"{value:.4g}"


def weights_column(trace: AlgorithmTrace, step: int) -> np.ndarray:
    """Each processed user's weight w_i = r_i/||r_1..r_step||_1 after ``step`` steps, latest
    first (the order of views.saturation.trace_table's rows); see :func:`step_weights`."""
    return step_weights(trace, step).weights[::-1]


# ------------------------------------------------------------------------------ the tour
@dataclass(frozen=True)
class Control:
    """A live control of a tour step: ``key`` (its session key), ``label``, ``kind``
    ("slider_log": a log-scale slider over [lo, hi]; "slider": linear; "toggle"),
    ``default``, ``lo``/``hi``/``step`` and plain-language ``help``."""

    key: str
    label: str
    kind: str
    default: float
    lo: float
    hi: float
    step: float
    help: str


@dataclass(frozen=True)
class TourStep:
    """One step of the guided path: ``index`` (1..5), ``key``, ``title``, ``sentences``
    (markdown, numbers quoted from ``numbers``), ``controls`` it uses, ``numbers`` (label ->
    value, floats in the units the label names), ``chart``: which page's chart to show
    ("r_curve", "free_privacy", "bounds", "simulation", "tier_menu"), ``profile``: the
    profile the numbers are for, and ``cards``: the labels of ``numbers`` shown as cards, in
    one row (empty: all of them)."""

    index: int
    key: str
    title: str
    sentences: tuple[str, ...]
    controls: tuple[Control, ...]
    numbers: dict[str, float]
    chart: str
    profile: EpsilonProfile = field(repr=False)
    cards: tuple[str, ...] = ()

    def card_labels(self) -> tuple[str, ...]:
        """The labels of the numbers shown as cards (``cards``, else every number)."""
        return self.cards or tuple(self.numbers)


N_USERS = Control(
    "tour_n",
    "Number of users n",
    "slider_log",
    1000,
    10,
    100_000,
    0.1,
    "How many users contribute one value each; more users, smaller errors.",
)
EPS1 = Control(
    "tour_eps1",
    "Strict group's eps",
    "slider_log",
    0.1,
    0.01,
    10.0,
    0.05,
    "The privacy level of the strict group. Smaller eps means more privacy.",
)
EPS2 = Control(
    "tour_eps2",
    "Loose group's eps",
    "slider_log",
    5.0,
    0.01,
    100.0,
    0.05,
    "The privacy level of the loose group. Smaller eps means more privacy.",
)
SHARE = Control(
    "tour_share",
    "Strict group's share of users (%)",
    "slider",
    90.0,
    5.0,
    95.0,
    5.0,
    "Percentage of the users in the strict group; the others are in the loose group.",
)

TOUR: tuple[tuple[str, str, tuple[Control, ...], str], ...] = (
    ("saturates", "1. Who saturates", (N_USERS, SHARE, EPS1, EPS2), "r_curve"),
    ("free", "2. Privacy for free", (EPS2,), "free_privacy"),
    ("gap", "3. The bound gap", (N_USERS, EPS1), "bounds"),
    ("simulation", "4. The simulation", (N_USERS,), "simulation"),
    ("menu", "5. A tier menu", (EPS2,), "tier_menu"),
)
"""The five steps: (key, title, controls, chart)."""

TOUR_DATA = Beta(2.0, 3.0)
"""The data of step 4 (the Simulation page's default distribution, on [-1/2, 1/2])."""


def tour_defaults() -> dict[str, float]:
    """Every tour control's key and default value."""
    return {c.key: c.default for _, _, cs, _ in TOUR for c in cs}


def _values(values: dict[str, float] | None) -> tuple[int, float, float, float]:
    v = tour_defaults() | dict(values or {})
    n = round(float(v["tour_n"]))
    frac = float(v["tour_share"]) / 100.0
    return n, frac, float(v["tour_eps1"]), float(v["tour_eps2"])


def tour_step(index: int, values: dict[str, float] | None = None) -> TourStep:
    """Step ``index`` (1..5) of the guided path for the control ``values`` (missing keys take
    their defaults). Every step uses the same two-group profile presets.two_groups(n, share,
    eps1, eps2), so moving a control in one step carries to the next."""
    if not 1 <= index <= len(TOUR):
        raise ValueError(f"the tour has steps 1 to {len(TOUR)}, got {index}")
    from hdp_app.views import explain  # the sentences live there (appended section)

    key, title, controls, chart = TOUR[index - 1]
    n, frac, e1, e2 = _values(values)
    prof = two_groups(n, frac, e1, e2)
    sol = adpm(prof)
    nums: dict[str, float]
    cards: tuple[str, ...] = ()
    if key == "saturates":
        fp = free_privacy(sol)
        v = two_group_verdict(n, frac, e1, e2)
        nums = {
            "tau*": fp.tau,
            "users capped": float(fp.n_saturated),
            "threshold eps1 + 8/(n1 eps1)": v.threshold,
        }
        text = explain.tour_saturates_text(fp, v)
    elif key == "free":
        fp = free_privacy(sol)
        nums = {
            "tau*": fp.tau,
            "users capped": float(fp.n_saturated),
            "asked (median of the capped)": fp.requested_median,
            "times more privacy": fp.gain,
            "ADPM worst-case MSE": sol.worst_case_mse,
            "PropDPM worst-case MSE": get_method("PropDPM", prof).worst_case_mse,
        }
        text = explain.tour_free_text(nums)
        # one row of four facts; the MSEs are in the sentences
        cards = ("tau*", "users capped", "asked (median of the capped)", "times more privacy")
    elif key == "gap":
        nums = {
            "ADPM worst case f ∧ 1/4": upper_bound(prof),
            "lower bound (H ∧ 1/4)/512": lower_bound(prof),
            "H": lower_bound_H(prof),
            "f/H": optimality_ratio(prof),
        }
        text = explain.tour_gap_text(nums)
    elif key == "simulation":
        nums = {f"{m} exact MSE": exact_mse(m, prof, TOUR_DATA) for m in ("ADPM", "PropDPM", "UNI")}
        text = explain.tour_simulation_text(nums)
    else:
        menu = tour_menu(values)
        rep = evaluate_menu(menu)
        nums = {
            "tau*": rep.tau_star,
            "users granted tau*": float(rep.n_saturated),
            RMSE_LABELS["ADPM"]: rep.errors["ADPM"].rmse,
            RMSE_LABELS["UNI"]: rep.errors["UNI"].rmse,
        }
        text = _menu_text(nums, menu)
    return TourStep(index, key, title, text, controls, nums, chart, prof, cards)


MENU_RANGE = (0.0, 500.0, "USD")
"""Step 5's data: values between 0 and 500 USD."""
RMSE_LABELS = {m: f"{m} RMSE (USD, data 0 to 500)" for m in ("ADPM", "UNI")}
"""Step 5's error cards: each real-unit figure with the range it is for."""


def _menu_text(nums: dict[str, float], menu) -> tuple[str, ...]:
    """Tour step 5's sentences (``menu``: tour_menu): its tiers by name, level and share, who
    is capped, the RMSEs with the range they are for."""
    (strict, loose), lo, hi, unit = menu.tiers, menu.low, menu.high, plain(menu.unit)
    intro = (
        f"The same two groups as a product's menu of two tiers: **{plain(strict.name)}** "
        f"(eps {short_eps(strict.eps)}, {strict.share_percent:.3g}% of the users) and "
        f"**{plain(loose.name)}** (eps {short_eps(loose.eps)}, {loose.share_percent:.3g}%), "
        f"for values between {lo:g} and {hi:g} {unit}."
    )
    if nums["users granted tau*"]:
        cap = (
            f"{count_noun(int(nums['users granted tau*']), 'user')} of {plain(loose.name)} "
            f"get τ* = {nums['tau*']:.4g}: offering a looser tier adds no accuracy."
        )
    else:
        cap = "No tier is capped: every tier gets the privacy it promises."
    return (
        intro,
        cap,
        f"For values between {lo:g} and {hi:g} {unit}, the RMSE of the mean is "
        f"{nums[RMSE_LABELS['ADPM']]:.4g} {unit} with ADPM and "
        f"{nums[RMSE_LABELS['UNI']]:.4g} {unit} if everyone got the strictest level (UNI).",
    )


def step_cards(step: TourStep) -> list[Metric]:
    """The step's cards, in one row: each shown number (TourStep.card_labels) as a delta-free
    card (no arrow that reads as an increase), as number_text writes it."""
    return [Metric(label, number_text(label, step.numbers[label])) for label in step.card_labels()]


def tour_menu(values: dict[str, float] | None = None):
    """The menu of tour step 5 for the control ``values``: the two groups as tiers 'Strict'
    and 'Relaxed' (range 0-500 USD); evaluate_menu of it gives the step's numbers and chart."""
    return _tour_menu(*_values(values))


def _tour_menu(n: int, frac: float, e1: float, e2: float):
    """The tour's menu: the two groups as tiers 'Strict' and 'Relaxed' (range 0-500 USD)."""
    low, high, unit = MENU_RANGE
    return make_menu(
        ["Strict", "Relaxed"],
        [e1, e2],
        [100.0 * frac, 100.0 * (1.0 - frac)],
        n_users=n,
        low=low,
        high=high,
        unit=unit,
    )


def next_step(now: int | None, delta: int) -> int:
    """The tour's step after moving ``delta`` from ``now`` (None: the first), kept within
    1..len(TOUR)."""
    return int(min(max(int(now or 1) + delta, 1), len(TOUR)))
