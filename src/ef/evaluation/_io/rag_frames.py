"""RAG samples handed over as a DataFrame: one row per sample, one column per field.

The shape Ragas' ``EvaluationDataset.from_pandas`` takes: columns named as a
:class:`~ef.evaluation.RagSample`'s fields (``user_input``, ``response``, ``retrieved_contexts``,
``reference`` …). pandas, polars and pyarrow are read the same way (through :mod:`narwhals`, as
runs and qrels are); a list column comes back as a list of strings whatever the library held it
as (a numpy array in a frame read from Parquet), and a missing value (``None``, ``NaN``) is
``None``, a value the sample does not have, so the metrics that need it skip the sample. The
column still names the field in every row: no row lacks a field its frame has.
"""

from __future__ import annotations

import math
from typing import Any

from ef.evaluation._io.frames import describe_type, frame_kind, is_frame

__all__ = ["ACCEPTED_SAMPLES", "samples_from_frame"]

ACCEPTED_SAMPLES = (
    "an iterable of RagSample mappings, or a pandas or polars DataFrame or pyarrow Table with "
    "one row per sample and a column per field (user_input, response, retrieved_contexts, "
    "reference, ...)"
)


def _plain(value: Any) -> Any:
    """A cell as the Python value a sample holds: lists for list cells, ``None`` if missing."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "tolist"):  # a numpy array or scalar, a pyarrow scalar
        value = value.tolist()
        if isinstance(value, float) and math.isnan(value):
            return None
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def samples_from_frame(frame: Any, what: str = "samples") -> list[dict[str, Any]]:
    """The samples of ``frame``: one mapping per row and column, ``None`` for a missing value.

    :raises TypeError: if ``frame`` is no DataFrame or Table, or has a column name twice.
    :raises ImportError: without :mod:`narwhals` (extra ``dataframes``).
    """
    if not is_frame(frame):
        raise TypeError(f"{what} is a {describe_type(frame)}; expected {ACCEPTED_SAMPLES}")
    given = frame.column_names if frame_kind(frame) == "pyarrow" else frame.columns
    names = [str(name) for name in given]
    if len(set(names)) != len(names):
        repeated = sorted({name for name in names if names.count(name) > 1})
        raise TypeError(f"{what}: column {repeated[0]!r} appears more than once")
    try:
        import narwhals.stable.v2 as nw
    except ImportError as error:  # pragma: no cover - the extra is part of the test set-up
        raise ImportError(
            "reading a DataFrame needs narwhals: pip install 'ef-evaluation[dataframes]'"
        ) from error
    rows = nw.from_native(frame, eager_only=True).rows(named=True)
    samples: list[dict[str, Any]] = []
    for row in rows:
        samples.append({str(name): _plain(value) for name, value in row.items()})
    return samples
