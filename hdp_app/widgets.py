"""Shared page furniture: a wrapping metric row and a guard that turns bad input in one
section into a message there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import hdp_core as hdp
from hdp_app.views.cards import Metric
from hdp_app.views.fields import NumberField
from hdp_app.views.formatting import column_groups, plain
from hdp_app.views.limits import Limit

T = TypeVar("T")


def metric_row(gap: Any = "large") -> DeltaGenerator:
    """A row for metrics that wraps onto a new line where the page is narrow (1024 px with the
    sidebar open) instead of cutting their values: give each metric ``width="content"``.
    ``gap``: Streamlit's gap between them ("small" keeps four cards on one row at 1024 px)."""
    return st.container(horizontal=True, wrap=True, gap=gap)


def guarded(section: Callable[..., T], *args: Any) -> T | None:
    """Run one section of a page and return what it returns; bad input shows a message there
    instead of a traceback (and returns None), and the rest of the page (and the current
    profile) stays."""
    try:
        return section(*args)
    except (hdp.ProfileError, ValueError) as exc:
        st.error(f"This part of the page could not be computed: {plain(exc)}")
        return None


def limit_bounds(limit: Limit) -> dict[str, Any]:
    """``min_value`` and ``max_value`` for a number widget from ``limit`` (the same object the
    link's value is checked against, hdp_app.url.drop_bad_query_params), as ints for a
    whole-number limit."""
    if limit.integer:
        return {"min_value": int(limit.lo), "max_value": int(limit.hi)}
    return {"min_value": float(limit.lo), "max_value": float(limit.hi)}


def show_metric(where: DeltaGenerator, m: Metric, *, arrow: bool = True, **kw: Any) -> None:
    """Draw one card of a view (:class:`hdp_app.views.cards.Metric`) in ``where``: its label,
    value, delta (coloured by ``delta_color``; ``arrow=False`` when the delta is a description
    rather than a change) and help."""
    extra: dict[str, Any] = {} if arrow or m.delta is None else {"delta_arrow": "off"}
    where.metric(
        m.label, m.value, m.delta, delta_color=cast(Any, m.delta_color), help=m.help, **extra, **kw
    )


def number(where: Any, f: NumberField, **kw: Any) -> float:
    """Draw the number input ``f`` (hdp_app.views.fields.NumberField) in ``where`` (``st`` or a
    column) and return its value: bounds from its Limit (ints for a whole-number limit), its
    default unless the page seeds the value, and any extra keyword (``bind``, ``disabled``,
    ``on_change``...) passed through."""
    whole = f.limit is not None and f.limit.integer
    cast_ = int if whole else float
    args: dict[str, Any] = {} if f.limit is None else limit_bounds(f.limit)
    if f.default is not None:
        args["value"] = cast_(f.default)
    if f.step is not None:
        args["step"] = cast_(f.step)
    if f.format is not None:
        args["format"] = f.format
    return cast(float, where.number_input(f.label, key=f.key, help=f.help, **args, **kw))


def number_columns(
    columns: Any, formats: dict[str, str], helps: dict[str, str] | None = None
) -> dict[str, Any]:
    """st.column_config for the ``columns`` whose name starts with a key of ``formats``: a
    number column with that format and its help from ``helps`` (the views own formats and
    helps, the page only this call)."""
    out: dict[str, Any] = {}
    for c in columns:
        fmt = next((f for start, f in formats.items() if str(c).startswith(start)), None)
        if fmt is not None:
            h = (helps or {}).get(c)
            out[c] = st.column_config.NumberColumn(c, format=cast(Any, fmt), help=h)
    return out


def lazy_expander(title: str, key: str) -> Any:
    """An expander whose state is in the link (``key`` bound to the query string) and whose
    content is drawn only when open: returns the container to draw into, or None when it is
    closed (opening or closing it reruns the page)."""
    box = st.expander(title, key=key, on_change="rerun", bind="query-params")
    return box if box.open else None


def wide_dataframe(
    df: Any, key: str, formats: dict[str, str] | None = None, helps: dict[str, str] | None = None
) -> None:
    """``df`` (a pandas DataFrame, no index) as one dataframe, or, when its columns are wider
    than the main column at 1024 px, as stacked dataframes that each repeat the first column
    (hdp_app.views.formatting.column_groups): no column hidden off the right edge. Number
    columns formatted by ``formats`` (number_columns); the parts' keys are ``key``,
    ``key_2``, ..."""
    config = number_columns(df.columns, formats or {}, helps)
    for i, cols in enumerate(column_groups(df, formats)):
        part = df[cols]
        st.dataframe(
            part,
            hide_index=True,
            key=key if i == 0 else f"{key}_{i + 1}",
            column_config={c: v for c, v in config.items() if c in cols},
        )
