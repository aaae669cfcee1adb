"""One small interface for every mean estimator (ADPM and the five baselines), and the registry
of methods by name.

Like diffprivlib's mechanisms, each estimator built for a profile knows its weights and noise,
the privacy it grants each user, its exact MSE under a data distribution, and how to draw one
estimate; pages and the simulator loop over estimators instead of special-casing them. A
method class joins the registry with :func:`register`; :func:`get_method` builds one by name.

Conventions: data in [-0.5, 0.5]; arrays are per profile entry (a user, or a tier, where the
value is that of one user of the tier); MSE is E[(estimate - population mean)^2].
"""

from __future__ import annotations

import abc
import math
from typing import Any, TypeVar, cast

import numpy as np

from hdp_core.adpm import ADPMSolution, adpm
from hdp_core.distributions import WORST_CASE, Distribution, TwoPoint
from hdp_core.errors import ProfileError, UnknownMethod
from hdp_core.profile import EpsilonProfile, as_profile
from hdp_core.table_mean import TableMeanSolution, table_mean
from hdp_core.trials import TrialChunk, wsum

__all__ = [
    "METHODS",
    "METHOD_CLASSES",
    "ADPMEstimator",
    "AffineEstimator",
    "Estimator",
    "TableMeanEstimator",
    "TunedADPMEstimator",
    "estimate",
    "exact_mse",
    "get_method",
    "register",
    "stream_id",
    "tuned_spread",
]

METHODS: tuple[str, ...] = ("ADPM", "PropDPM", "LDPE", "SM", "FME", "UNI")
"""The paper's six methods, in the order of its Table 1."""

METHOD_CLASSES: dict[str, type[Estimator]] = {}
"""Every registered method class by name (the six of METHODS, and any added with register)."""

_E = TypeVar("_E", bound="type[Estimator]")


def register(cls: _E) -> _E:
    """Class decorator: add an Estimator subclass to the registry under ``cls.name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} has no name to register under")
    METHOD_CLASSES[cls.name] = cls
    return cls


def get_method(name: str, eps: Any, data_sd: float | None = None) -> Estimator:
    """The estimator called ``name`` built for profile ``eps``. ``data_sd`` (sd on the
    [-0.5, 0.5] scale) is the spread a tuned method ("ADPM-tuned") is tuned to; the paper's six
    ignore it.

    Raises :class:`hdp_core.errors.UnknownMethod` (a ValueError) listing the known names.
    """
    cls = METHOD_CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise UnknownMethod(
            f"unknown method {str(name)[:40]!r}; choose from {', '.join(METHOD_CLASSES)}"
        )
    if cls.tuned:
        return cls(as_profile(eps), data_sd)  # type: ignore[call-arg]
    return cls(as_profile(eps))


def stream_id(name: str) -> int:
    """A method's fixed noise-stream number in simulations: its place in METHODS, then in the
    order of registration (so adding a method never changes another's numbers)."""
    if name in METHODS:
        return METHODS.index(name)
    extra = [m for m in METHOD_CLASSES if m not in METHODS]
    return len(METHODS) + extra.index(name)


def tuned_spread(data_sd: float | None, dist: Distribution | None) -> float | None:
    """``data_sd``, else the standard deviation of ``dist``: what a tuned method is tuned to."""
    if data_sd is None and dist is not None:
        return math.sqrt(dist.variance)
    return data_sd


def exact_mse(
    method: str | Estimator, eps: Any, dist: Distribution, data_sd: float | None = None
) -> float:
    """Exact MSE (data in [-0.5, 0.5]) of ``method`` on profile ``eps`` under ``dist``.
    "ADPM-tuned" is tuned to ``data_sd``, by default to the standard deviation of ``dist``."""
    if isinstance(method, Estimator):
        return method.exact_mse(dist)
    return get_method(method, eps, tuned_spread(data_sd, dist)).exact_mse(dist)


def estimate(method: str, x: Any, eps: Any, rng: np.random.Generator | None = None) -> float:
    """One private estimate of mean(x) by ``method`` for users with privacy ``eps`` (numpy
    noise: for simulation and teaching only; a real release uses hdp_release.release)."""
    return get_method(method, eps).estimate(x, rng)


class Estimator(abc.ABC):
    """Common interface: build with ``Cls(profile)``; see module docstring for units.

    Subclasses give ``granted_eps``, ``exact_mse`` and ``estimate``; ``_finish`` (or
    ``_simulate_chunk``) is the simulator's hook that turns a block of trials into estimates.
    """

    name: str = ""
    label: str = ""
    note: str = ""
    affine: bool = True
    tuned: bool = False
    """True for a method tuned to a known data spread (built as ``Cls(profile, data_sd)``)."""
    outputs_zero: bool = False
    """True when the method answers the constant 0 (the middle of the range) whatever the data
    (ADPM when f(r) > 1/4, any method when no user's data may be used)."""

    def __init__(self, eps: Any):
        self.profile: EpsilonProfile = (
            eps if isinstance(eps, EpsilonProfile) else EpsilonProfile.from_values(eps)
        )
        lv, ct = self.profile.levels, self.profile.counts
        self._active = (lv > 0) & (ct > 0)
        self._public = np.isinf(lv) & self._active
        self._finite = self._active & ~self._public
        self._cf = ct.astype(np.float64)
        self.n_active = int(ct[self._active].sum())

    # what every method knows ------------------------------------------------------------------
    weights: np.ndarray | None = None
    """Weight of one user of each entry in the combined estimate (None if not affine)."""
    noise_scale: float | None = None
    """Scale of the central Laplace noise (None for methods without one)."""

    @property
    @abc.abstractmethod
    def granted_eps(self) -> np.ndarray:
        """Privacy each user gets (per entry; inf = none; 0 = data unused)."""

    @abc.abstractmethod
    def exact_mse(self, dist: Distribution) -> float:
        """Exact MSE of one estimate under i.i.d. data from ``dist`` (closed form)."""

    @property
    def worst_case_mse(self) -> float:
        """Largest MSE over all distributions on [-0.5, 0.5].

        Every method's MSE is A V + B mu^2 + C with A, B, C >= 0, and V + mu^2 = E[X^2] <= 1/4,
        so the maximum is at V = 1/4 (TwoPoint(1/2)) or mu^2 = 1/4 (a point mass at 1/2; it
        matters when a method outputs 0, e.g. when no user's data may be used).
        """
        return max(self.exact_mse(WORST_CASE), self.exact_mse(TwoPoint(1.0)))

    @abc.abstractmethod
    def estimate(self, x: Any, rng: np.random.Generator | None = None) -> float:
        """One private estimate of the mean from per-user data ``x`` (tiers expanded)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.profile!r})"

    def _estimate_once(self, x: Any, rng: np.random.Generator | None) -> float:
        """One estimate through the simulator's hook (one trial of the user's own data)."""
        rng = np.random.default_rng() if rng is None else rng
        x = self._user_data(x)
        chunk = TrialChunk(
            x=x[None, :],
            col_entry=self._user_entries(),
            sums=np.zeros((1, 0)),
            big_entry=np.zeros(0, dtype=np.int64),
        )
        return float(self._simulate_chunk(chunk, rng)[0])

    # the simulator's hooks (not part of the interface) -------------------------------------
    def _keep_probabilities(self) -> np.ndarray | None:
        """Per-entry probability that a user is sampled (only the sampling mechanism)."""
        return None

    def _simulate_chunk(self, chunk: TrialChunk, rng: np.random.Generator) -> np.ndarray:
        """Estimates for every trial of ``chunk`` (vectorised; no loop over users or trials)."""
        assert self.weights is not None
        lin = wsum(chunk.x, self.weights[chunk.col_entry]) + wsum(
            chunk.sums, self.weights[chunk.big_entry]
        )
        return self._finish(lin, chunk, rng)

    def _finish(self, lin: np.ndarray, chunk: TrialChunk, rng: np.random.Generator) -> np.ndarray:
        """Add this method's noise to the weighted sums ``lin`` (one per trial)."""
        raise NotImplementedError(f"{type(self).__name__} simulates whole chunks")

    # helpers ------------------------------------------------------------------------------------
    def _user_entries(self) -> np.ndarray:
        self.profile.check_expandable()
        return np.repeat(np.arange(self.profile.k), self.profile.counts)

    def _user_data(self, x: Any) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64).ravel()
        if x.size != self.profile.n:
            raise ProfileError(f"got {x.size} data values for {self.profile.n} users")
        if not np.isfinite(x).all():
            raise ProfileError("data values must be finite numbers in [-0.5, 0.5]")
        return cast(np.ndarray, x)

    def sum_sq_weights(self) -> float:
        """||w||_2^2 over all users (sum of count * weight^2)."""
        if self.weights is None:
            raise TypeError(f"{self.name} is not a weighted mean")
        return float(np.dot(self._cf, self.weights * self.weights))


class AffineEstimator(Estimator):
    """sum_i w_i x_i + Laplace(b): user i gets privacy w_i / b (the appendix's lemma on the
    Laplace mechanism for affine estimators).

    MSE under variance V is V ||w||_2^2 + 2 b^2 (unbiased since the weights sum to 1).
    """

    def __init__(self, eps: Any, weights: np.ndarray, noise_scale: float):
        super().__init__(eps)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.noise_scale = float(noise_scale)

    weights: np.ndarray
    noise_scale: float

    @property
    def granted_eps(self) -> np.ndarray:
        w, b = self.weights, self.noise_scale
        if b == 0:
            return np.where(w > 0, math.inf, 0.0)
        return w / b

    def exact_mse(self, dist: Distribution) -> float:
        if self.outputs_zero:
            return dist.mean**2
        return dist.variance * self.sum_sq_weights() + 2.0 * self.noise_scale**2

    def estimate(self, x: Any, rng: np.random.Generator | None = None) -> float:
        return self._estimate_once(x, rng)

    def _finish(self, lin: np.ndarray, chunk: TrialChunk, rng: np.random.Generator) -> np.ndarray:
        if self.outputs_zero:
            return np.zeros(lin.shape[0])
        if self.noise_scale > 0:
            return lin + rng.laplace(0.0, self.noise_scale, lin.shape[0])
        return lin


@register
class ADPMEstimator(AffineEstimator):
    """ADPM (Algorithm 1): optimal affine weights r/||r||_1 with Laplace(1/||r||_1) noise."""

    name = "ADPM"
    label = "ADPM (optimal)"
    note = "The paper's Algorithm 1: weights min(eps, tau*), capped at the saturation level."

    def __init__(self, eps: Any):
        self.solution: ADPMSolution = adpm(eps)
        s = self.solution
        noise = 0.0 if not math.isfinite(s.noise_scale) else s.noise_scale
        super().__init__(s.profile, s.weights, noise)
        self.outputs_zero = s.outputs_zero  # f = inf (no usable user) counts too

    @property
    def granted_eps(self) -> np.ndarray:
        return self.solution.granted_eps

    @property
    def worst_case_mse(self) -> float:
        return self.solution.worst_case_mse


@register
class TunedADPMEstimator(ADPMEstimator):
    """ADPM tuned to a known data spread s (beyond the paper): Algorithm 1 with 8 replaced by
    c = 2/s^2, the optimal unbiased affine estimator for data of standard deviation s.

    ``data_sd`` is s on the [-0.5, 0.5] scale, in (0, 1/2] (1/2 gives ADPM exactly). Users get
    r_i <= eps_i whatever the data. It answers 0 when its MSE at spread s passes 1/4 (see
    :class:`~hdp_core.adpm.ADPMSolution`); ``worst_case_mse`` is over all data in the range
    (it can exceed 1/4 when s < 1/2), ``tuned_mse`` over data of sd at most s.
    """

    name = "ADPM-tuned"
    label = "ADPM tuned to a known spread"
    tuned = True
    note = (
        "Beyond the paper: Algorithm 1 with 8 replaced by 2/s^2, the best affine estimator when "
        "the data's standard deviation s is known; s = 1/2 is ADPM, s -> 0 tends to PropDPM."
    )

    def __init__(self, eps: Any, data_sd: float | None):
        if data_sd is None:
            raise ValueError("ADPM-tuned needs data_sd, the data's standard deviation in (0, 1/2]")
        self.solution = adpm(eps, data_sd=data_sd)
        s = self.solution
        noise = 0.0 if not math.isfinite(s.noise_scale) else s.noise_scale
        AffineEstimator.__init__(self, s.profile, s.weights, noise)
        self.outputs_zero = s.outputs_zero
        self.data_sd: float = s.data_sd
        self.label = f"ADPM tuned to s = {s.data_sd:.3g}"

    @property
    def tuned_mse(self) -> float:
        """MSE when the data's standard deviation is ``data_sd`` (at most it, if smaller)."""
        return self.solution.tuned_mse


@register
class TableMeanEstimator(AffineEstimator):
    """The minimax affine estimator of the table's own mean (beyond the paper; see
    :mod:`hdp_core.table_mean`): weights min(1/n, eps_i eta), Laplace(eta) noise, minimising the
    worst case over every table of E[(T - table mean)^2], whatever the link between a user's
    level and value.

    Against a population mean (users i.i.d. from ``dist``, the paper's setting) it is biased
    towards 0 when its weights sum to less than 1: ``exact_mse`` is
    V ||w||_2^2 + (1 - sum w)^2 mu^2 + 2 eta^2. ``table_worst_case_mse`` and ``bias_bound`` are
    against the table's own mean (every row counts, eps = 0 rows included).
    """

    name = "TableMean"
    label = "TableMean (the table's own mean)"
    note = (
        "Beyond the paper: weights min(1/n, eps eta), the best worst case against the table's "
        "own mean, whatever the link between a user's privacy level and value."
    )

    def __init__(self, eps: Any):
        self.solution: TableMeanSolution = table_mean(eps)
        s = self.solution
        super().__init__(s.profile, s.weights, s.noise_scale)

    @property
    def granted_eps(self) -> np.ndarray:
        return self.solution.granted_eps

    @property
    def weight_total(self) -> float:
        """sum over users of w_i (at most 1; below 1 when some users are held below 1/n)."""
        return self.solution.weight_total

    @property
    def bias_bound(self) -> float:
        """Largest |E[T] - table mean| over every table in range (unit scale)."""
        return self.solution.bias_bound

    @property
    def table_worst_case_mse(self) -> float:
        """Largest E[(T - table mean)^2] over every table in range (unit scale)."""
        return self.solution.worst_case_mse

    def exact_mse(self, dist: Distribution) -> float:
        shrink = 1.0 - self.weight_total
        return (
            dist.variance * self.sum_sq_weights()
            + (shrink * dist.mean) ** 2
            + 2.0 * self.noise_scale**2
        )
