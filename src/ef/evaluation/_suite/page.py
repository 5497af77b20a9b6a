"""A suite as one HTML page: the table, a chart per dataset, links into each cell's page.

The page follows the visual report's conventions (:mod:`ef.evaluation._html`): one
self-contained file that opens from disk with the network off, Jinja2 with autoescaping, the
data as escaped JSON, Vega-Lite inlined, the same style and script. Its template extends the
report's base template. Each cell's own evaluation page (:meth:`RetrievalEvalReport.to_html`)
is written into the folder ``<page name>-cells/DATASET/SYSTEM.html`` beside it, and the
table's values link there.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ef.evaluation._html.render import page_json, vega_bundle
from ef.evaluation._io.atomic import write_text_atomically
from ef.evaluation._suite.datasets import file_name
from ef.evaluation._suite.tables import caption, counted, grid

if TYPE_CHECKING:
    from ef.evaluation._suite.report import SuiteReport

__all__ = ["suite_page", "write_suite_page"]

_CHART_HEIGHT = 220
_END_OF_SCRIPT = re.compile(r"</(script)", re.IGNORECASE)


def _chart(dataset: str, metric: str, values: dict[str, float | None]) -> dict[str, Any]:
    rows = [{"system": s, "value": v} for s, v in values.items() if v is not None]
    return {
        "title": dataset,
        "width": "container",
        "height": _CHART_HEIGHT,
        "data": {"values": rows},
        "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "x": {"field": "system", "type": "nominal", "sort": None, "title": None},
            "y": {"field": "value", "type": "quantitative", "title": metric},
        },
    }


def _cell_link(folder: str, dataset: str, system: str) -> str:
    return f"{folder}/{file_name(dataset)}/{file_name(system)}.html"


def suite_page(
    report: SuiteReport, *, title: str | None = None, cells_folder: str | None = None
) -> dict[str, Any]:
    """The data of the suite's page.

    :param cells_folder: the folder (relative to the page) holding each cell's page, which the
        table's values link to; ``None``: no links.
    """
    rows = []
    for index, (label, cells) in enumerate(grid(report)):
        dataset = report.datasets[index] if index < len(report.datasets) else None
        shown = []
        for system, cell in zip(report.systems, cells, strict=True):
            linked = (
                cells_folder is not None
                and dataset is not None
                and system in report.cells.get(dataset, {})
            )
            link = _cell_link(cells_folder, dataset, system) if linked else None  # type: ignore[arg-type]
            shown.append({"text": cell.text, "best": cell.bold, "mark": cell.mark, "link": link})
        rows.append({"label": label, "average": dataset is None, "cells": shown})
    header = [f"{s} (baseline)" if s == report.baseline else s for s in report.systems]
    systems = counted(len(report.systems), "system")
    datasets = counted(len(report.datasets), "dataset")
    return {
        "kind": "suite",
        "title": title or f"Suite: {systems}, {datasets}",
        "sizes": f"{systems} over {datasets}",
        "metric": report.metric,
        "baseline": report.baseline,
        "systems": list(report.systems),
        "datasets": list(report.datasets),
        "header": header,
        "rows": rows,
        "caption": caption(report),
        "linked": cells_folder is not None,
        "charts": {
            f"dataset:{d}": _chart(d, report.metric, report.table()[d]) for d in report.datasets
        },
    }


def _render(data: dict[str, Any]) -> str:
    try:
        import jinja2
        from markupsafe import Markup
    except ImportError as error:
        raise ImportError(
            "an HTML report needs jinja2: pip install 'ef-evaluation[html]'"
        ) from error
    environment = jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [
                jinja2.PackageLoader("ef.evaluation._suite", "templates"),
                jinja2.PackageLoader("ef.evaluation._html", "templates"),
            ]
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    assets = resources.files("ef.evaluation._html").joinpath("templates")
    script = assets.joinpath("page.js").read_text("utf-8")
    return environment.get_template("suite.html.j2").render(
        data=data,
        data_json=Markup(page_json(data)),
        style=Markup(assets.joinpath("style.css").read_text("utf-8")),
        script=Markup(_END_OF_SCRIPT.sub(r"<\\/\1", script)),
        vega=Markup(vega_bundle()),
    )


def write_suite_page(
    report: SuiteReport,
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    cell_pages: bool = True,
) -> Path:
    """Write the suite's page at ``path`` (atomically) and, with ``cell_pages``, each cell's
    evaluation page in ``<page name>-cells/`` beside it.

    :returns: ``path``.
    :raises ImportError: naming the ``html`` extra when Jinja2 or vl-convert is missing.
    """
    page = Path(path)
    folder = f"{page.stem}-cells" if cell_pages else None
    text = _render(suite_page(report, title=title, cells_folder=folder))
    if folder is not None:
        for dataset, row in report.cells.items():
            for system, cell in row.items():
                target = page.parent / _cell_link(folder, dataset, system)
                target.parent.mkdir(parents=True, exist_ok=True)
                cell.to_html(target, title=f"{system} on {dataset}")
    with write_text_atomically(page, compress=False) as out:
        out.write(text)
    return page
