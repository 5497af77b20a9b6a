"""The data of a RAG page: a :class:`RagEvalReport`, with its samples when given.

A RAG report keeps each sample's metric values, not the sample: the question, response,
reference and contexts appear when the caller hands the samples over, in the report's order.
The sample column names each sample by its id when the caller gave ids, else by its position
(0-based, as ``report.per_sample`` and the library's errors count): an id that is only the
question again (``evaluate_rag`` names samples by their question when no ``ids=`` are given)
is not repeated beside it. A list of references (any of them counts as right) is kept a list,
shown one answer after another, never as Python's ``['a', 'b']``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ef.evaluation._html import charts
from ef.evaluation._rag.encodable import check_encodable
from ef.evaluation._report.reports import RagEvalReport

__all__ = ["rag_page"]

_TEXT_FIELDS = ("user_input", "response", "reference")


def _text(sample: Mapping[str, Any], field: str) -> str | list[str] | None:
    """A text field as the page shows it; a list of references stays a list of texts."""
    value = sample.get(field)
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return [str(item) for item in value]
    return str(value)


def _name(report: RagEvalReport, index: int, sample: Mapping[str, Any]) -> str:
    """The sample column's cell: the caller's id, else the position (never the question).

    >>> report = RagEvalReport({}, {}, 1, per_sample=[{}], sample_ids=["capital of France?"])
    >>> _name(report, 0, {"user_input": "capital of France?"}), _name(report, 0, {})
    ('0', 'capital of France?')
    """
    name = report.sample_ids[index] if report.sample_ids else str(index)
    return str(index) if name == sample.get("user_input") else name


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
        sample = samples[index] if samples is not None else {}
        name = _name(report, index, sample)
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
