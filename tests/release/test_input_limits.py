"""Issue 12, library side: unambiguous cache keys, one supported range of levels with correct
numbers at both ends, caps on runaway inputs, and the library's error family for bad input.

Oracles are independent: exact rational arithmetic (fractions.Fraction) on the paper's and
the formulas of the hdp_core.baselines docstring, never numbers copied from hdp_core's output.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hdp_core as hdp
from hdp_app.views import links
from hdp_core import experiments, presets, simulate
from hdp_core.design_io import menu_from_json
from hdp_core.distributions import WORST_CASE
from hdp_core.errors import HdpError, LinkError, ProfileError
from hdp_core.menu import make_menu, menu_to_dict
from hdp_core.tables import MAX_COLUMNS, MAX_TIERS_FILE, read_profile_csv
from hdp_core.validate import LEVEL_MAX, LEVEL_MIN

EP = hdp.EpsilonProfile
INF = math.inf


# 1. cache keys ------------------------------------------------------------------------------
def test_issue_examples_have_distinct_keys():
    assert EP.from_values([0.5, 2]).key != EP.from_values([0.5], data=[2]).key
    a = EP.from_tiers([1, 2], [1, 1], ["p\x1fq", "r"])
    b = EP.from_tiers([1, 2], [1, 1], ["p", "q\x1fr"])
    assert a.key != b.key


def test_csv_built_from_the_default_profile_has_its_own_key():
    """eps = the default profile's first 500 levels, value = its last 500: the same bytes as
    the default profile's levels, which used to give the same key."""
    default = links.profile_from_spec({"kind": "preset", "name": "paper_high", "seed": 0})
    lv = default.levels
    forged = EP.from_values(lv[:500], data=lv[500:])
    assert forged.levels.tobytes() + forged.data.tobytes() == lv.tobytes()
    assert forged.key != default.key
    pairs = zip(lv[:500], lv[500:])
    text = "eps,value\n" + "".join(f"{float(a)!r},{float(b)!r}\n" for a, b in pairs)
    assert hdp.profile_from_csv(text).key != default.key


def _fields(p: hdp.EpsilonProfile):
    return (
        p.is_tiered,
        tuple(p.levels.tolist()),
        tuple(p.counts.tolist()) if p.is_tiered else None,
        p.names,
        None if p.data is None else tuple(p.data.tolist()),
    )


_level = st.one_of(
    st.just(0.0),
    st.just(INF),
    st.sampled_from([LEVEL_MIN, 1.0, LEVEL_MAX]),
    st.floats(LEVEL_MIN, LEVEL_MAX),
)
_name = st.text(alphabet=st.sampled_from(["p", "q", "\x1f", "\x00", "é", ","]), max_size=3)


@st.composite
def any_profile(draw):
    k = draw(st.integers(1, 4))
    lv = draw(st.lists(_level, min_size=k, max_size=k))
    if draw(st.booleans()):
        ct = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
        if sum(ct) == 0:
            ct[0] = 1
        names = draw(st.one_of(st.none(), st.lists(_name, min_size=k, max_size=k)))
        return EP.from_tiers(lv, ct, names)
    data = draw(
        st.one_of(st.none(), st.lists(_level.filter(math.isfinite), min_size=k, max_size=k))
    )
    return EP.from_values(lv, data=data)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(any_profile(), any_profile())
def test_distinct_profiles_have_distinct_keys(a, b):
    assert (a.key == b.key) == (_fields(a) == _fields(b))


# 2. one supported range ---------------------------------------------------------------------
@pytest.mark.parametrize("bad", [1e-7, 9.99e-7, 1.000001e6, 1e308, 5e-324, 10**400])
def test_levels_outside_the_range_are_refused_everywhere(bad):
    with pytest.raises(ProfileError, match=r"level 1 .*supported|level 1 .*too large"):
        EP.from_values([0.5, bad])
    with pytest.raises(ProfileError, match="tier level 0"):
        EP.from_tiers([bad], [3])
    with pytest.raises(ProfileError):
        hdp.adpm([bad] * 3)  # the issue's adpm([1e308]*3) returned NaN
    if not isinstance(bad, int):
        with pytest.raises(ProfileError, match=r"row 2 \(line 3 of the file\), column 'eps'"):
            hdp.profile_from_csv(f"eps\n0.5\n{bad!r}\n")
    with pytest.raises(ProfileError, match=r"supported level|below|above|too large"):
        presets.two_groups(10, 0.5, 1.0, bad)
    with pytest.raises(LinkError):
        links.decode({"profile": "tiers", "p_tier": f"{bad!r}~10"})


def test_range_ends_zero_and_public_are_accepted():
    p = EP.from_values([0, LEVEL_MIN, LEVEL_MAX, INF])
    assert p.levels.tolist() == [0, LEVEL_MIN, LEVEL_MAX, INF]
    assert hdp.profile_from_csv("eps\n0\n1e-6\n1e6\ninf\n").key == p.key
    assert presets.log_uniform(200, LEVEL_MIN, LEVEL_MAX).levels.min() >= LEVEL_MIN


def _oracle(levels, counts, method):
    """Exact MSE under TwoPoint(1/2) (V = 1/4, mean 0) and the worst case, from
    the hdp_core.baselines docstring and Algorithm 1, in rational arithmetic."""
    V = Fraction(1, 4)
    tiers = [(Fraction(e), c) for e, c in zip(levels, counts) if c > 0 and e > 0 and e != INF]
    pub = sum(c for e, c in zip(levels, counts) if c > 0 and e == INF)
    n_act = sum(c for _, c in tiers) + pub

    def affine(r):  # r: list of (r_j, c_j); public users (r = inf) handled by callers
        s1 = sum(c * x for x, c in r)
        s2 = sum(c * x * x for x, c in r)
        return V * s2 / s1**2 + 2 / s1**2

    if method in ("PropDPM", "LDPE", "SM") and pub:
        if method != "LDPE":
            return V / pub  # PropDPM/SM: only the public users count (SM: t = inf)
    if method == "ADPM":
        srt = sorted(tiers)
        s1 = s2 = Fraction(0)
        r = []
        for j, (e, c) in enumerate(srt):
            if j and e >= (s2 + 8) / s1:  # saturation (never inside a tier of ties)
                tau = (s2 + 8) / s1
                r += [(tau, cc) for _, cc in srt[j:]]
                break
            r.append((e, c))
            s1 += c * e
            s2 += c * e * e
        else:
            if pub:
                r.append(((s2 + 8) / s1, 0))
        if pub:
            tau = r[-1][0] if len(r) > len(srt) or r[-1][1] == 0 else (s2 + 8) / s1
            r = [x for x in r if x[1] > 0] + [(tau, pub)]
        s1 = sum(c * x for x, c in r)
        s2 = sum(c * x * x for x, c in r)
        f = (s2 + 8) / (4 * s1 * s1)
        return Fraction(0) if f > V else affine(r)  # outputs 0: MSE = mean^2 = 0
    if method == "UNI":
        emin = min(e for e, _ in tiers)
        return V / n_act + 2 / (n_act * emin) ** 2
    if method == "PropDPM":
        return affine(tiers)
    if method == "FME":
        cap = Fraction(1.0 / math.sqrt(n_act))  # the reconstruction's constant, as a float
        return affine([(min(e, cap), c) for e, c in tiers] + ([(cap, pub)] if pub else []))
    if method == "LDPE":
        raw = [(e * e / (e * e + 8), c, V + 2 / (e * e)) for e, c in tiers] + [(1, pub, V)]
        tot = sum(c * a for a, c, _ in raw)
        return sum(c * (a / tot) ** 2 * v for a, c, v in raw if c)
    if method == "SM":  # every case below keeps the users at t surely and others never
        t = max(e for e, _ in tiers)
        m = sum(c for e, c in tiers if e == t)
        return V / m + 2 / (m * t) ** 2
    raise AssertionError(method)


EDGE_CASES = {
    "one user at 1e-6": ([LEVEL_MIN], [1]),
    "three at 1e-6": ([LEVEL_MIN], [3]),
    "1e15 at 1e-6": ([LEVEL_MIN], [10**15]),
    "one user at 1e6": ([LEVEL_MAX], [1]),
    "three at 1e6": ([LEVEL_MAX], [3]),
    "1e15 at 1e6": ([LEVEL_MAX], [10**15]),
    "ends, public and 0": ([LEVEL_MIN, LEVEL_MAX, INF, 0.0], [1, 1, 1, 1]),
    "ends, 1e14 each": ([LEVEL_MIN, LEVEL_MAX], [10**14, 10**14]),
    "1e6 and 1e15-1 excluded": ([LEVEL_MAX, 0.0], [1, 10**15 - 1]),
    "1e-6 many, 1e6 one": ([LEVEL_MIN, LEVEL_MAX], [10**15 - 1, 1]),
    "1e-6 many, public": ([LEVEL_MIN, INF, 0.0], [10**15 - 2, 1, 1]),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
@pytest.mark.parametrize("method", hdp.METHODS)
def test_every_method_is_finite_and_exact_at_the_ends_of_the_range(case, method):
    levels, counts = EDGE_CASES[case]
    expected = float(_oracle(levels, counts, method))
    profiles = [EP.from_tiers(levels, counts)]
    if sum(counts) <= 10:
        profiles.append(EP.from_values(np.repeat(levels, counts)))
    for prof in profiles:
        est = hdp.get_method(method, prof)
        got = est.exact_mse(WORST_CASE)
        wc = est.worst_case_mse
        assert math.isfinite(got) and got >= 0 and math.isfinite(wc) and wc >= 0
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-300), (case, method)
        assert wc >= got * (1 - 1e-12)
    sol = hdp.adpm(profiles[0])
    assert 0 < sol.worst_case_mse <= 0.25
    assert 0 < hdp.lower_bound(profiles[0]) <= hdp.upper_bound(profiles[0])


# 3. caps --------------------------------------------------------------------------------------
def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_wide_header_refused_before_parsing():
    content = b"eps" + b"," * 300_000 + b"\n1\n"  # 0.3 MB, 300,001 columns
    box = {}

    def read():
        with pytest.raises(ProfileError, match=f"300,001 columns.*at most {MAX_COLUMNS}"):
            hdp.profile_from_csv(content)
        box["ok"] = True

    assert _peak(read) < 8 * len(content) and box["ok"]


def test_tier_files_are_capped():
    rows = "".join(f"{0.001 * (j + 1)!r},1\n" for j in range(MAX_TIERS_FILE + 1))
    with pytest.raises(
        ProfileError, match=f"{MAX_TIERS_FILE + 1:,} tiers.*at most {MAX_TIERS_FILE:,}"
    ):
        hdp.profile_from_csv("eps,count\n" + rows)
    ok = "eps,count\n" + "".join(rows.splitlines(True)[:MAX_TIERS_FILE])
    assert hdp.profile_from_csv(ok).k == MAX_TIERS_FILE


def test_simulation_planning_never_expands_many_small_tiers():
    """300,000 tiers of 2,000 users (6e8 users drawn one by one) used to take 4.6 GB."""
    k = 300_000
    prof = EP.from_tiers(np.linspace(0.1, 1.0, k), np.full(k, 2_000))
    dist = hdp.Beta(2, 3)
    assert _peak(lambda: simulate.simulated_width(prof, dist)) < 20 * 2**20
    assert simulate.simulated_width(prof, dist) == k * 2_000

    def run():
        with pytest.raises(
            ProfileError,
            match=f"{k * 2000:,} values per trial.*limit is {simulate.MAX_SIM_WIDTH:,}",
        ):
            hdp.simulate_mse(["ADPM"], prof, dist, trials=10)

    assert _peak(run) < 50 * 2**20


def test_table1_trials_are_capped():
    cap = experiments.MAX_TABLE1_TRIALS
    assert cap * 2 * experiments.PAPER_N <= 50_000_000
    for bad in (cap + 1, 200_000, 1, 2.5, True):
        with pytest.raises(HdpError, match=f"2 to {cap:,}"):
            experiments.table1(trials=bad)


# 4. exception types and messages ------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: EP.from_values([10**400]), "too large"),
        (lambda: EP.from_tiers([1.0], [10**400]), "at most 1,000,000,000,000,000"),
        (lambda: EP.from_tiers([1.0], [10**15 + 1]), "1,000,000,000,000,001"),
        (lambda: EP.from_tiers([1.0, 2.0], [10**15, 1]), "1,000,000,000,000,001 users"),
        (lambda: EP.from_tiers([1.0], [1.0000000001]), "1.0000000001"),
        (lambda: EP.from_values({0.5: 1, 2: 3}), "mapping"),
        (lambda: EP.from_values({0.5, 2}), "set"),
        (lambda: EP.from_values([0.5, 1], data=[1, None]), "data value 1"),
        (lambda: links.decode(None), "mapping"),
        (lambda: links.tiers_spec_from_rows(None), "list of rows"),
        (lambda: links.tiers_spec_from_rows([None]), "row 1"),
        (lambda: links.tiers_spec_from_rows([{"eps": 1, "count": 10**400}]), "row 1"),
        (lambda: links.decode({"profile": "tiers", "p_tier": "٠.٥~10"}), "not a number"),
        (lambda: links.decode({"profile": "tiers", "p_tier": "０.５~10"}), "not a number"),
        (lambda: links.decode({"profile": "tiers", "p_tier": "0.5~١٠"}), "'١٠' is not a whole"),
        (lambda: menu_from_json('{"n_users": 1' + "0" * 5000 + "}"), "too long"),
        (lambda: menu_from_json('{"n_users": 3, "n_users": 4}'), "appears twice"),
        (lambda: make_menu(["a"], [1.0], [100], 10**15 + 1), "1,000,000,000,000,001"),
        (lambda: make_menu(["a"], [1.0], [100], 1.0000000001), "1.0000000001"),
    ],
)
def test_bad_input_raises_the_library_error_family(call, words):
    with pytest.raises(HdpError) as info:
        call()
    assert words in str(info.value)
    assert "e+15" not in str(info.value)


def test_none_in_an_object_column_is_a_profile_error():
    import pandas as pd

    with pytest.raises(ProfileError, match=r"row 2.*empty"):
        hdp.profile_from_frame(pd.DataFrame({"eps": ["0.5", None]}, dtype=object))


def test_windows_1252_csv_is_read_and_says_so():
    content = "name;eps;count\nCafé – strict;0,1;600\n".replace("0,1", "0.1").encode("cp1252")
    res = read_profile_csv(content)
    assert res.encoding == "cp1252" and res.profile.names == ("Café – strict",)
    assert read_profile_csv(b"eps\n0.5\n").encoding == "utf-8"
    assert hdp.profile_from_csv(content).key == res.profile.key


def test_menu_key_distinguishes_every_field():
    m = make_menu(["a", "b"], [0.5, INF], [50, 50], 100)
    others = [
        make_menu(["a b", "b"], [0.5, INF], [50, 50], 100),
        make_menu(["a", "b"], [0.5, 1e4], [50, 50], 100),
        make_menu(["a", "b"], [0.5, INF], [40, 60], 100),
        make_menu(["a", "b"], [0.5, INF], [50, 50], 101),
        make_menu(["a", "b"], [0.5, INF], [50, 50], 100, 0, 2),
        make_menu(["a", "b"], [0.5, INF], [50, 50], 100, 0, 1, "kg"),
        make_menu(["a", "b"], [0.5, INF], [50, 50], 100, 0, 1, "", 0.1),
    ]
    assert len({m.key, *(o.key for o in others)}) == len(others) + 1
    assert json.loads(json.dumps(menu_to_dict(m))) == menu_to_dict(m)


def test_a_huge_integer_after_a_public_level_is_named_not_an_overflow():
    """Found by the fuzz test: a float inf before a Python int beyond float range."""
    with pytest.raises(hdp.ProfileError, match=r"level 1 \(0-based\) is a 4\d\d-digit number"):
        hdp.EpsilonProfile.from_tiers([float("inf"), 10**400], [1, 2])
