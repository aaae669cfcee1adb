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

    @property
    def start(self) -> float:
        """The default as a number, for a page that needs the value the widget would start
        from without drawing it (ValueError for a field the page seeds: it has none)."""
        if self.default is None:
            raise ValueError(f"{self.key} has no default: the page seeds its value")
        return float(self.default)


def url_limits(*fields: NumberField) -> dict[str, Limit]:
    """What each bounded field accepts in a link, by widget key (the page hands it to
    hdp_app.url.drop_bad_query_params)."""
    return {f.key: f.limit for f in fields if f.limit is not None}
