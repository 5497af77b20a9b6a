from typing import Any

def score_run(
    run: Any,
    qrels: Any,
    ideals: Any,
    query_ids: list[str],
    ks: tuple[int, ...],
    forms: tuple[int, ...],
    keys: tuple[str, ...],
    frozen: type,
    /,
) -> tuple[list[dict[str, float] | None], list[int]] | None: ...
