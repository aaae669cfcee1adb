"""The sentences of hdp_app.views.explain against independent calculations.

Oracle for ADPM here: Algorithm 1 written out per user in this file (sorted levels; user k
gets min(eps_k, tau_{k-1}) with tau = (||r||_2^2 + 8)/||r||_1 over the users before), and the
worst-case MSE f(r) = (||r||_2^2 + 8)/(4 ||r||_1^2) (Theorem 2) on explicit per-user vectors.
"""

from __future__ import annotations

import math
import pathlib

import numpy as np
import pytest

import hdp_core as hdp
from hdp_app.views import explain
from hdp_app.views.saturation import teaching_example

ROOT = pathlib.Path(__file__).resolve().parents[2]


def algorithm1(eps) -> np.ndarray:
    """Per-user r of Algorithm 1 (eps sorted ascending; public = inf; no zeros)."""
    eps = np.sort(np.asarray(eps, dtype=float))
    r = np.empty_like(eps)
    s1 = s2 = 0.0
    for k, e in enumerate(eps):
        r[k] = e if k == 0 else min(e, (s2 + 8.0) / s1)
        s1 += r[k]
        s2 += r[k] ** 2
    return r


def f(r) -> float:
    r = np.asarray(r, dtype=float)
    return (np.dot(r, r) + 8.0) / (4.0 * r.sum() ** 2)


def test_issue_example_numbers():
    """1000 users at 0.1 + 10 at 5: capped users from r = 0.18 to 0.25 (the issue's numbers)."""
    at = np.array([0.1] * 1000 + [0.18] * 10)
    up = np.array([0.1] * 1000 + [0.25] * 10)
    noise = lambda r: 2.0 / r.sum() ** 2  # noqa: E731
    samp = lambda r: np.dot(r, r) / (4.0 * r.sum() ** 2)  # noqa: E731
    assert noise(at) + samp(at) == pytest.approx(f(at), rel=1e-12)
    assert (noise(at), noise(up)) == pytest.approx((1.930e-4, 1.904e-4), abs=5e-8)
    assert (samp(at), samp(up)) == pytest.approx((2.491e-4, 2.528e-4), abs=5e-8)
    t = explain.saturation_tradeoff(hdp.EpsilonProfile.from_tiers([0.1, 5.0], [1000, 10]))
    assert (t.n_capped, t.raised) == (10, 0.25)
    assert t.tau == pytest.approx(0.18, rel=1e-12)
    assert (t.noise_at, t.noise_raised) == pytest.approx((noise(at), noise(up)), rel=1e-12)
    assert (t.sampling_at, t.sampling_raised) == pytest.approx((samp(at), samp(up)), rel=1e-12)
    s = t.sentence()
    for x in ("1.930e-04", "1.904e-04", "2.491e-04", "2.528e-04", "10 capped users"):
        assert x in s


@pytest.mark.parametrize("seed", range(5))
def test_direction_and_balance_at_tau(seed):
    """More weight on the capped users: noise down, sampling up, MSE up; at tau* the two
    balance (the derivative of f in the capped users' common r is 0)."""
    rng = np.random.default_rng(seed)
    eps = np.concatenate([rng.uniform(0.05, 0.3, 200), rng.uniform(2, 9, 15), [math.inf] * 3])
    r = algorithm1(eps)
    tau = r[-1]
    capped = np.sort(eps) >= tau
    assert capped.sum() >= 18
    prof = hdp.EpsilonProfile.from_values(eps)
    t = explain.saturation_tradeoff(prof)
    assert t.tau == pytest.approx(tau, rel=1e-10) and t.n_capped == capped.sum()
    assert t.noise_raised < t.noise_at and t.sampling_raised > t.sampling_at
    assert t.noise_raised + t.sampling_raised > t.noise_at + t.sampling_at

    def g(x):
        q = r.copy()
        q[capped] = x
        return f(q)

    h = 1e-6 * tau
    assert abs(g(tau + h) - g(tau - h)) / (2 * h) < 1e-6 * f(r) / tau
    assert g(tau * 1.01) > g(tau) and g(tau * 0.99) > g(tau)


def test_saturation_caption_and_pages_use_one_explanation():
    cap = explain.saturation_caption(hdp.EpsilonProfile.from_tiers([0.1, 5.0], [1000, 10]))
    assert "10 users who asked for eps ≥ 0.18" in cap and explain.SATURATION_WHY in cap
    one = explain.saturation_caption(hdp.EpsilonProfile.from_tiers([0.1, 5.0], [1000, 1]))
    assert one.startswith("The user who asked") and " is granted" in one
    none = explain.saturation_caption(hdp.EpsilonProfile.from_values([0.5, 0.6, 0.7]))
    assert none.startswith("No user is capped")
    why = explain.SATURATION_WHY
    assert "lower the privacy (Laplace) noise but raise the sampling error" in why
    for page in ("profile", "tier_designer", "simulation"):
        src = (ROOT / "pages" / f"{page}.py").read_text()
        assert "explain." in src, page
        for wrong in ("more noise than it removes", "cost more in noise"):
            assert wrong not in src, (page, wrong)


@pytest.mark.parametrize(
    ("n", "frac", "e1", "e2", "capped"),
    [(10, 0.25, 1.0, 4.5, 0), (7, 0.5, 0.5, 5.0, 3), (10, 0.01, 1.0, 100.0, 0)],
)
def test_two_group_cases_from_the_issue(n, frac, e1, e2, capped):
    v = explain.two_group_verdict(n, frac, e1, e2)
    assert v.capped == capped
    assert ("**is capped**" in v.text) == (capped > 0)


def test_two_group_verdict_matches_algorithm1_on_the_built_profile():
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        frac = float(rng.uniform(0, 1))
        e1 = float(np.exp(rng.uniform(-3, 1)))
        e2 = e1 * float(np.exp(rng.uniform(0, 4)))
        n1 = round(frac * n)
        eps = [e1] * n1 + [e2] * (n - n1)
        r = algorithm1(eps)
        want = int(np.sum(r < np.sort(eps) - 1e-12))  # users granted less than they asked
        v = explain.two_group_verdict(n, frac, e1, e2)
        assert v.n_strict == n1
        assert v.capped == want, (n, frac, e1, e2)
        if 0 < n1 < n:
            assert ("**is capped**" in v.text) == (want > 0), v.text


def test_approx_percent():
    assert explain.approx_percent(1 - 4.44e-16, 1.0) == "≈ 0%"
    assert explain.approx_percent(0.4902 * (1 + 2.13e-7), 0.4902) == "≈ 0%"  # shown as 0.49 both
    assert explain.approx_percent(0.4902 * (1 + 2.13e-7), 0.4902, digits=8) == "+2.13e-05%"
    assert explain.approx_percent(1.2, 1.0) == "+20%"
    assert explain.approx_percent(0.5, 1.0) == "-50%"


def test_teaching_example_saturates_users_25_to_50():
    prof = teaching_example()
    eps = np.sort(prof.expand())
    assert eps.size == 50
    r = algorithm1(eps)
    granted_less = np.flatnonzero(r < eps - 1e-12) + 1
    sat = np.flatnonzero(np.isclose(r, r[-1], rtol=1e-12)) + 1
    assert sat[0] == 25 and sat[-1] == 50 and sat.size == 26
    assert r[-1] == pytest.approx(1.3246, abs=5e-5)
    assert granted_less[0] >= 25
    doc = teaching_example.__doc__
    assert "users 25..50" in doc and "1.3246" in doc


def test_trace_text_uses_printed_numbering_and_one_notation():
    from hdp_app.views import saturation as sat

    trace = hdp.adpm_trace(teaching_example())
    k = int(np.argmax(trace.saturated)) + 1
    texts = [sat.trace_step_text(trace, s) for s in range(1, trace.eps.size + 1)] + [
        sat.TRACE_INTRO
    ]
    for t in texts:
        assert "lem:" not in t and "tau_" not in t and "eps_" not in t and "||" not in t
    assert "Lemma 3" in sat.trace_step_text(trace, k) and "Lemma 3" in sat.TRACE_INTRO
    assert "ε₂₅" in sat.trace_step_text(trace, 25) and "τ₂₄" in sat.trace_step_text(trace, 25)
    table = sat.trace_table(trace, 30)
    assert list(table["step k"][:2]) == [30, 29] and len(table["step k"]) == 30
    assert list(table)[3] == "saturated"


PAPER = (
    pathlib.Path(__file__).resolve().parents[3]
    / "shared"
    / "paper"
    / ("heterogeneous_privacy_mean_estimation.tex")
)


def test_the_saturation_lemma_is_printed_as_lemma_3():
    """The pages call the saturation lemma "Lemma 3": it is the paper's third lemma environment
    (lemmas have their own counter). The paper's source sits beside the repository (as in CI)."""
    if not PAPER.exists():
        pytest.skip(f"the paper's source is not at {PAPER}")
    src = PAPER.read_text()
    labels = [
        src[i:].split("\\label{", 1)[1].split("}", 1)[0]
        for i in [j for j in range(len(src)) if src.startswith("\\begin{lemma}", j)]
    ]
    assert labels.index("lem:sat") + 1 == 3
