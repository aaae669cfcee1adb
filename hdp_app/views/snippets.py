""" "Reproduce in Python" snippets with what they need to run (no streamlit).

hdp_app.views.codegen writes the code; a :class:`Snippet` adds the files the code reads, so a
page offers the download or the note from ``needs`` instead of searching the code's text.
(codegen itself returns text: the one place that reads it for a file name is
:func:`profile_needs`, until codegen returns its needs.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hdp_app.views import codegen
from hdp_core.distributions import Distribution
from hdp_core.profile import EpsilonProfile

PROFILE_CSV = "profile.csv"
"""The file a snippet reads a profile from when it cannot rebuild it by a call."""

PROFILE_CSV_NOTE = "Download profile.csv on the Profile page to run this script."
"""The note under a snippet that reads profile.csv, on pages without the download."""


@dataclass(frozen=True)
class Snippet:
    """Python code and the files (``needs``) it reads, beside it, to run."""

    code: str
    needs: tuple[str, ...] = ()

    @property
    def needs_profile_csv(self) -> bool:
        """Whether the code reads the profile from profile.csv."""
        return PROFILE_CSV in self.needs


def profile_needs(profile: EpsilonProfile, spec: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The files codegen.profile_code's snippet for ``profile`` reads: ('profile.csv',) when
    it cannot rebuild the profile by a call or write it out, else ()."""
    return (PROFILE_CSV,) if PROFILE_CSV in codegen.profile_code(profile, spec) else ()


def saturation(profile: EpsilonProfile, spec: Mapping[str, Any] | None) -> Snippet:
    """The Saturation page's snippet (codegen.saturation_code) and its needs."""
    return Snippet(codegen.saturation_code(profile, spec), profile_needs(profile, spec))


def bounds(profile: EpsilonProfile, spec: Mapping[str, Any] | None, mode: str) -> Snippet:
    """The Bounds page's snippet for sweep ``mode`` (codegen.bounds_code) and its needs."""
    return Snippet(codegen.bounds_code(profile, spec, mode), profile_needs(profile, spec))


def simulation(
    profile: EpsilonProfile,
    spec: Mapping[str, Any] | None,
    dist: Distribution,
    methods: Sequence[str],
    trials: int,
    seed: int,
    sweep: Mapping[str, Any] | None = None,
) -> Snippet:
    """The Simulation page's snippet (codegen.reproduce_code) and its needs."""
    code = codegen.reproduce_code(profile, spec, dist, methods, trials, seed, sweep=sweep)
    return Snippet(code, profile_needs(profile, spec))
