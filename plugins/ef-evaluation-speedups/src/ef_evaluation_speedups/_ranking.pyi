from typing import Any

def score_run(
    run: Any,
    qrels: Any,
    ideals: Any,
    query_ids: list[str],
    ks: tuple[int, ...],
    picks: tuple[int, ...],
    keys: tuple[str, ...],
    frozen: type,
    distinct: bool,
    /,
) -> tuple[list[dict[str, float] | None], list[int]] | None: ...
