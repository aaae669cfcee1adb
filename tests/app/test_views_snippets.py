"""views.snippets: a "Reproduce in Python" snippet says what it needs (issue 27: the pages
stopped searching the code for "profile.csv"). Oracle: codegen's documented rule (a preset
or generator spec is rebuilt by its call, a small profile without data is written out, any
other profile is read back from profile.csv), and running the snippet's profile part."""

from __future__ import annotations

import numpy as np

import hdp_core as hdp
from hdp_app.views import snippets
from hdp_core.profile import EpsilonProfile


def _run_profile_part(code: str) -> EpsilonProfile:
    ns: dict = {}
    exec(code.split("\nprint(")[0].split("\nsat = ")[0], ns)  # the imports and `prof = ...`
    return ns["prof"]


def test_a_rebuildable_profile_needs_nothing():
    prof = hdp.preset("paper_low", seed=0)
    spec = {"kind": "preset", "name": "paper_low", "seed": 0}
    s = snippets.bounds(prof, spec, "scale")
    assert s.needs == () and not s.needs_profile_csv
    small = EpsilonProfile.from_values([0.5, 1.0, np.inf])
    s = snippets.saturation(small, None)
    assert s.needs == () and _run_profile_part(s.code).key == small.key


def test_a_profile_with_data_needs_its_csv():
    prof = EpsilonProfile.from_values([0.5, 1.0, 2.0], data=[0.1, -0.2, 0.3])
    for s in (snippets.bounds(prof, None, "n"), snippets.saturation(prof, None)):
        assert s.needs == (snippets.PROFILE_CSV,) and s.needs_profile_csv
        assert "profile.csv" in s.code


def test_the_simulation_snippet_says_its_needs_too():
    with_data = EpsilonProfile.from_values([0.5, 1.0, 2.0], data=[0.1, -0.2, 0.3])
    s = snippets.simulation(with_data, None, hdp.Beta(2, 3), ["ADPM"], 500, 0)
    assert s.needs_profile_csv and "profile.csv" in s.code
    plain = snippets.simulation(
        EpsilonProfile.from_values([1.0, 2.0]), None, hdp.Uniform(), [], 500, 1
    )
    assert plain.needs == ()
