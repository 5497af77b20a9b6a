from collections.abc import Sequence
from typing import Any

def fuse(
    runs: Sequence[Any],
    norm: str | None,
    weights: Sequence[float] | None,
    rank_scores: Sequence[float] | None,
    in_rank_order: bool,
    combine: str = ...,
    factors: Sequence[float] | None = ...,
    /,
) -> dict[str, dict[str, float]] | None: ...
