"""One metric card as the pages draw it (st.metric's label, value, delta and help), built by
the views so that the page only lays cards out."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """One st.metric card: label, value and optional delta (all plain text) and help."""

    label: str
    value: str
    help: str = ""
    delta: str | None = None
    delta_color: str = "normal"
