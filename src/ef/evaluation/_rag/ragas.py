"""The Ragas bridge: hand :class:`RagSample`\\ s to Ragas for the LLM-judged metrics.

Ragas is an optional extra (``pip install 'ef-evaluation[ragas]'``), imported only when
:func:`as_ragas_dataset` is called, so importing ``ef.evaluation`` never pays for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ef.evaluation._rag.encodable import check_encodable
from ef.evaluation._types import RagSample

__all__ = ["as_ragas_dataset"]

_INSTALL_HINT = "pip install 'ef-evaluation[ragas]'"


def _import_ragas() -> tuple[Any, Any]:
    """Ragas' ``(EvaluationDataset, SingleTurnSample)``, or an ImportError that says why not."""
    try:
        from ragas import EvaluationDataset, SingleTurnSample
    except ImportError as error:
        if isinstance(error, ModuleNotFoundError) and error.name == "ragas":
            raise ImportError(
                f"as_ragas_dataset needs ragas, but ragas is not installed ({_INSTALL_HINT})"
            ) from error
        # A broken install (e.g. an incompatible langchain) must not pass for a missing one.
        raise ImportError(
            f"ragas is installed but failed to import: {error} "
            f"(reinstall the supported versions: {_INSTALL_HINT})"
        ) from error
    return EvaluationDataset, SingleTurnSample


def _check_sample(index: int, sample: object, fields: Iterable[str]) -> Mapping[str, Any]:
    """Return ``sample`` if Ragas can hold every key of it, else say which key it would lose."""
    if not isinstance(sample, Mapping):
        raise TypeError(
            f"sample {index}: expected a mapping (a RagSample), got {type(sample).__name__}"
        )
    known = set(fields)
    for key in sample:
        if key not in known:
            raise ValueError(
                f"sample {index}: key {key!r} is not a field of Ragas' SingleTurnSample and "
                f"would be dropped; expected only: {', '.join(sorted(known))}"
            )
    if isinstance(sample.get("reference"), list | tuple):
        raise ValueError(
            f"sample {index}: key 'reference' holds a list of answers, but Ragas' "
            "SingleTurnSample holds one reference string; pick one answer per sample"
        )
    check_encodable(f"sample {index}", sample)
    return sample


def as_ragas_dataset(samples: Iterable[RagSample | Mapping[str, Any]]) -> Any:
    """Convert :class:`RagSample`\\ s into a Ragas ``EvaluationDataset``.

    The hookpoint for the *LLM-judged* RAG metrics ``ef`` deliberately does not compute itself
    (faithfulness, answer relevancy, …). :class:`RagSample` already mirrors Ragas'
    ``SingleTurnSample`` field-for-field, so this is a thin, lossless adapter. Run the
    evaluation with your own LLM::

        from ragas import evaluate
        from ragas.metrics import faithfulness, answer_relevancy

        dataset = as_ragas_dataset(samples)
        result = evaluate(dataset, metrics=[faithfulness, answer_relevancy])

    Lossless means nothing is dropped silently: a key that is not a ``SingleTurnSample`` field,
    or a list of references (which :func:`evaluate_rag` accepts but Ragas cannot hold), raises
    :class:`ValueError` naming the sample and the key.

    :param samples: an iterable of :class:`RagSample`\\ s (or plain mappings).
    :returns: a ``ragas.EvaluationDataset``.
    :raises ImportError: if the optional ``ragas`` package is not installed — or is installed
        but fails to import, which the message tells apart, with the original error as cause.
    :raises ValueError: if ``samples`` is empty, or a sample has a key Ragas would drop, a list
        ``reference``, or a value Ragas rejects.
    :raises TypeError: if a sample is not a mapping.

    >>> dataset = as_ragas_dataset([{
    ...     'user_input': 'capital of France?', 'response': 'Paris', 'reference': 'Paris',
    ...     'retrieved_contexts': ['Paris is the capital of France.']}])
    >>> dataset.samples[0].retrieved_contexts
    ['Paris is the capital of France.']
    """
    materialized = list(samples)
    if not materialized:
        raise ValueError("samples is empty: as_ragas_dataset needs at least one sample")
    evaluation_dataset, single_turn_sample = _import_ragas()
    fields = single_turn_sample.model_fields
    converted = []
    for index, raw in enumerate(materialized):
        sample = _check_sample(index, raw, fields)
        try:
            converted.append(single_turn_sample(**sample))
        except ValueError as error:  # pydantic's ValidationError is a ValueError
            raise ValueError(f"sample {index}: Ragas rejected it: {error}") from error
    return evaluation_dataset(samples=converted)
