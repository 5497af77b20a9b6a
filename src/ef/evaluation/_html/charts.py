"""The charts of a page as Vega-Lite specifications: plain data, drawn in the browser.

Vega-Lite is the charting library (its JavaScript is inlined in every page, see
:mod:`ef.evaluation._html.render`); these functions only say what to draw. Histograms arrive
binned (:func:`bins`), so a page carries a few numbers per chart rather than one per query, and
a test can know how many bars to expect.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation._compare.render_pairs import format_p_value

__all__ = [
    "bins",
    "difference_bars",
    "group_bars",
    "histogram",
    "k_curves",
    "mean_bars",
    "p_value_heatmap",
    "pr_curve",
]

_HEIGHT = 220


def _chart(title: str, data: Sequence[Mapping[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "title": title,
        "width": "container",
        "height": _HEIGHT,
        "data": {"values": list(data)},
        **spec,
    }


def bins(values: Sequence[float], n_bins: int, low: float, high: float) -> list[dict[str, Any]]:
    """``n_bins`` equal bins from ``low`` to ``high`` with the count of ``values`` in each (the
    last bin holds ``high``); every bin is there, empty or not.

    >>> [row['count'] for row in bins([0.0, 0.5, 1.0, 1.0], 2, 0.0, 1.0)]
    [1, 3]
    """
    if not high > low:
        high = low + 1.0
    width = (high - low) / n_bins
    counts = [0] * n_bins
    for value in values:
        index = min(int((value - low) / width), n_bins - 1) if math.isfinite(value) else -1
        if index >= 0:
            counts[index] += 1
    return [
        {"start": low + i * width, "end": low + (i + 1) * width, "count": counts[i]}
        for i in range(n_bins)
    ]


def histogram(
    title: str,
    binned: Sequence[Mapping[str, Any]],
    x_title: str,
    rules: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Bars of binned counts, with optional labelled vertical rules (``{"label", "value"}``)."""
    bars = {
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {"field": "start", "type": "quantitative", "title": x_title, "bin": "binned"},
            "x2": {"field": "end"},
            "y": {"field": "count", "type": "quantitative", "title": "queries"},
        },
    }
    if not rules:
        return _chart(title, binned, **bars)
    marks = {
        "data": {"values": list(rules)},
        "mark": {"type": "rule", "strokeDash": [4, 3], "color": "#c0392b"},
        "encoding": {
            "x": {"field": "value", "type": "quantitative"},
            "tooltip": [{"field": "label"}, {"field": "value", "format": ".4f"}],
        },
    }
    return _chart(title, binned, layer=[bars, marks])


def k_curves(title: str, points: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One line per metric family over its cutoffs (``{"metric", "k", "value"}``)."""
    return _chart(
        title,
        points,
        mark={"type": "line", "point": True, "tooltip": True},
        encoding={
            "x": {"field": "k", "type": "quantitative", "title": "cutoff k"},
            "y": {"field": "value", "type": "quantitative", "title": "mean"},
            "color": {"field": "metric", "type": "nominal"},
        },
    )


def pr_curve(title: str, points: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Interpolated precision over the 11 recall levels (``{"recall", "precision"}``)."""
    return _chart(
        title,
        points,
        mark={"type": "line", "point": True, "tooltip": True},
        encoding={
            "x": {"field": "recall", "type": "quantitative", "scale": {"domain": [0, 1]}},
            "y": {
                "field": "precision",
                "type": "quantitative",
                "title": "interpolated precision",
                "scale": {"domain": [0, 1]},
            },
        },
    )


def difference_bars(title: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The per-topic plot: one bar per query (``{"query", "difference"}``), in the given order,
    coloured by sign."""
    return _chart(
        title,
        rows,
        mark={"type": "bar", "tooltip": True},
        encoding={
            "x": {"field": "query", "type": "nominal", "sort": None, "axis": None},
            "y": {"field": "difference", "type": "quantitative", "title": "system − baseline"},
            "color": {
                "condition": {"test": "datum.difference < 0", "value": "#c0392b"},
                "value": "#4c78a8",
            },
        },
    )


def mean_bars(title: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One bar per metric mean (``{"metric", "mean", "coverage"}``)."""
    return _chart(
        title,
        rows,
        mark={"type": "bar", "tooltip": True},
        encoding={
            "x": {"field": "metric", "type": "nominal", "sort": None, "title": None},
            "y": {"field": "mean", "type": "quantitative"},
        },
    )


def group_bars(title: str, rows: Sequence[Mapping[str, Any]], metric: str) -> dict[str, Any]:
    """One bar per query group (``{"group", "mean", "queries"}``): its mean of ``metric``."""
    return _chart(
        title,
        rows,
        mark={"type": "bar", "tooltip": True},
        encoding={
            "x": {"field": "group", "type": "nominal", "sort": None, "title": None},
            "y": {"field": "mean", "type": "quantitative", "title": metric},
        },
    )


def p_value_heatmap(title: str, cells: Sequence[Mapping[str, Any]], alpha: float) -> dict[str, Any]:
    """A heat map of the p-values of every pair of systems (``{"system", "other", "p"}``, one
    cell per ordered pair), darker for smaller p, each cell labelled as every rendering writes
    a p-value (``< 0.0001`` below that), the significant ones (``p <= alpha``) marked with a
    dagger."""
    order = list(dict.fromkeys(cell["system"] for cell in cells))
    axes = {
        "x": {"field": "other", "type": "nominal", "sort": order, "title": None},
        "y": {"field": "system", "type": "nominal", "sort": order, "title": None},
    }
    rect = {
        "mark": {"type": "rect"},
        "encoding": {
            **axes,
            "color": {
                "field": "shade",
                "type": "quantitative",
                "scale": {"type": "log", "scheme": "blues", "reverse": True, "domainMax": 1},
                "legend": {"title": "p"},
            },
            "tooltip": [
                {"field": "system", "type": "nominal"},
                {"field": "other", "type": "nominal"},
                {"field": "label", "type": "nominal", "title": "adjusted p"},
            ],
        },
    }
    text = {
        "mark": {"type": "text", "fontSize": 11},
        "encoding": {
            **axes,
            "text": {"field": "label", "type": "nominal"},
        },
    }
    # A log scale has no 0: the shade of p stops at 1e-12 (the label keeps the value).
    labelled = [
        {
            **cell,
            "shade": None if cell["p"] is None else max(cell["p"], 1e-12),
            "label": format_p_value(cell["p"])
            + ("†" if cell["p"] is not None and cell["p"] <= alpha else ""),
        }
        for cell in cells
    ]
    return _chart(title, labelled, layer=[rect, text])
