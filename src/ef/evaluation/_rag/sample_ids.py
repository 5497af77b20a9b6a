"""The ids that name RAG samples, so two pipelines' reports pair sample by sample."""

from __future__ import annotations

from collections.abc import Sequence

from ef.evaluation._json import lone_surrogate

__all__ = ["check_ids", "sample_ids"]


def check_ids(ids: object) -> list[str]:
    """``ids`` as a list of unique strings, or an error saying what is wrong with it.

    :raises TypeError: if ``ids`` is a string or not a sequence of strings.
    :raises ValueError: if an id repeats, or holds a lone surrogate (UTF-8 cannot encode it).

    >>> check_ids(['q1', 'q1'])
    Traceback (most recent call last):
    ...
    ValueError: ids must be unique: 'q1' is given twice
    """
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise TypeError(f"ids must be a sequence of strings, one per sample, got {ids!r:.80}")
    seen: set[str] = set()
    for index, sample_id in enumerate(ids):
        if not isinstance(sample_id, str):
            raise TypeError(
                f"ids[{index}] must be a string, got {type(sample_id).__name__} {sample_id!r:.80}"
            )
        code = lone_surrogate(sample_id)
        if code is not None:
            raise ValueError(
                f"ids[{index}] holds a lone UTF-16 surrogate (\\u{code:04x}); expected text "
                "UTF-8 can encode"
            )
        if sample_id in seen:
            raise ValueError(f"ids must be unique: {sample_id!r:.80} is given twice")
        seen.add(sample_id)
    return list(ids)


def sample_ids(ids: Sequence[str] | None, user_inputs: Sequence[str | None]) -> tuple[str, ...]:
    """The samples' ids: ``ids`` when given, else the ``user_input`` of each when all are unique.

    Without ``ids``, a sample lacking ``user_input`` or a question asked twice leaves the
    samples without ids (an empty tuple): pairing them by position could pair different
    questions, so a comparison asks for ``ids=`` instead.

    :param ids: the caller's ids (already checked by :func:`check_ids`), or ``None``.
    :param user_inputs: each sample's ``user_input``, in order (``None`` where it has none).
    :raises ValueError: if ``ids`` does not name every sample exactly once.

    >>> sample_ids(None, ['capital of France?', '2 + 2?'])
    ('capital of France?', '2 + 2?')
    >>> sample_ids(None, ['same?', 'same?'])
    ()
    """
    if ids is not None:
        if len(ids) != len(user_inputs):
            raise ValueError(
                f"ids has {len(ids)} ids for {len(user_inputs)} samples; give one id per sample"
            )
        return tuple(ids)
    if any(text is None for text in user_inputs) or len(set(user_inputs)) != len(user_inputs):
        return ()
    return tuple(text for text in user_inputs if text is not None)
