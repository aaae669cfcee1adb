"""Number inputs as the views describe them (no streamlit): label, widget key, default,
bounds, step, format and help in one place, so that a page draws the widget from one object
(hdp_app.widgets.number) and no default or limit is typed twice."""

from __future__ import annotations

from dataclasses import dataclass

from hdp_app.views.limits import Limit


@dataclass(frozen=True)
class NumberField:
    """One number input: ``label`` and ``key`` of the widget, ``default`` (None when the page
    seeds the value in the session state), ``limit`` (the bounds, the same Limit a link's value
    is checked against; None for unbounded), ``step``, ``format`` and ``help``."""

    label: str
    key: str
    default: float | None = None
    limit: Limit | None = None
    step: float | None = None
    format: str | None = None
    help: str = ""
