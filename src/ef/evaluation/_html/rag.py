"""The data of a RAG page: a :class:`RagEvalReport`, with its samples when given.

A RAG report keeps each sample's metric values, not the sample: the question, response,
reference and contexts appear when the caller hands the samples over, in the report's order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation._html import charts
from ef.evaluation._rag.encodable import check_encodable
from ef.evaluation._report.reports import RagEvalReport

__all__ = ["rag_page"]

_TEXT_FIELDS = ("user_input", "response", "reference")


def _text(sample: Mapping[str, Any], field: str) -> str | None:
    value = sample.get(field)
    return None if value is None else str(value)


def rag_page(
    report: RagEvalReport,
    *,
    samples: Sequence[Mapping[str, Any]] | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """Everything a RAG page shows, as JSON-ready data.

    :param samples: the samples the report scored, in its order (:class:`RagSample` mappings).
    :raises ValueError: if ``samples`` does not hold one sample per scored sample, or a sample
        holds text UTF-8 cannot encode (a lone surrogate).
    """
    if samples is not None and len(samples) != len(report.per_sample):
        raise ValueError(
            f"samples holds {len(samples)} samples, the report scored {len(report.per_sample)}; "
            "give the samples the report was computed from, in the same order"
        )
    metrics = list(report.metrics)
    rows = []
    for index, values in enumerate(report.per_sample):
        name = report.sample_ids[index] if report.sample_ids else str(index)
        sample = samples[index] if samples is not None else {}
        check_encodable(f"samples[{index}] ({name!r})", sample)
        contexts = [str(text) for text in sample.get("retrieved_contexts") or ()]
        rows.append(
            [
                name,
                *(_text(sample, field) for field in _TEXT_FIELDS),
                contexts,
                *(values.get(metric) for metric in metrics),
            ]
        )
    bars = [
        {"metric": metric, "mean": report.metrics[metric], "coverage": report.coverage.get(metric)}
        for metric in metrics
    ]
    chart = charts.mean_bars("Mean of each metric", bars) if bars else None
    return {
        "kind": "rag",
        "title": title or "RAG evaluation",
        "n_samples": report.n_samples,
        "metrics": [
            [metric, report.metrics[metric], report.coverage.get(metric)] for metric in metrics
        ],
        "columns": ["sample", "question", "response", "reference", "contexts", *metrics],
        "text_columns": 5,
        "rows": rows,
        "charts": {} if chart is None else {"means": chart},
    }
