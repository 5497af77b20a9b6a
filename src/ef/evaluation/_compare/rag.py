"""Pairing RAG reports for :func:`compare`: per-sample values by id, not-applicable pairs out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ef.evaluation._report.reports import RagEvalReport

__all__ = ["DEFAULT_RAG_METRIC", "applicable_pairs", "check_kinds", "rag_per_sample"]

DEFAULT_RAG_METRIC = "token_f1"
"""The metric :func:`compare` compares RAG reports on when none is named."""


def rag_per_sample(name: str, report: RagEvalReport) -> dict[str, dict[str, float | None]]:
    """A RAG report's per-sample values keyed by sample id (``None``: not applicable).

    :raises ValueError: if the report has no per-sample values or no sample ids to pair by.
    """
    if not report.per_sample:
        raise ValueError(
            f"system {name!r}: its RAG report has no per-sample values to pair; "
            "make it with evaluate_rag"
        )
    if not report.sample_ids:
        raise ValueError(
            f"system {name!r}: its RAG report has no sample ids, so its samples cannot be "
            "paired with another system's; pass ids= to evaluate_rag (without them, "
            "user_input names the samples only when every sample has one and none repeats)"
        )
    return dict(zip(report.sample_ids, report.per_sample, strict=True))


def applicable_pairs(
    values: Sequence[float | None], base: Sequence[float | None]
) -> tuple[list[float], list[float], int]:
    """The pairs where both sides apply, and how many pairs were left out.

    >>> applicable_pairs([0.5, None, 1.0], [0.25, 0.5, None])
    ([0.5], [0.25], 2)
    """
    kept = [(v, b) for v, b in zip(values, base, strict=True) if v is not None and b is not None]
    return [v for v, _ in kept], [b for _, b in kept], len(values) - len(kept)


def check_kinds(systems: Mapping[str, object]) -> bool:
    """Whether the systems are RAG reports (all of them), or an error for a mix.

    :raises TypeError: if some systems are RAG reports and others are not.
    """
    rag = [name for name, system in systems.items() if isinstance(system, RagEvalReport)]
    if rag and len(rag) != len(systems):
        other = next(name for name in systems if name not in rag)
        raise TypeError(
            f"systems {rag[0]!r} (a RAG report) and {other!r} (retrieval) cannot be compared: "
            "compare RAG reports only with RAG reports"
        )
    return bool(rag)
