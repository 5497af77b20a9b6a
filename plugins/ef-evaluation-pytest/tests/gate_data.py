"""Generated search results of known quality, for the tests that run pytest on a project.

Each of 200 queries has one relevant document, placed at a rank from 1 to 4 among nine others.
A seeded regression loses the relevant document on exactly 10 % of the queries; rank noise gives
each query the rank of another's (a random permutation over the queries) and shuffles the
others: every ranking changes, the mean quality does not.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

N_QUERIES = 200
QUERIES = {f"q{i}": f"query number {i}" for i in range(N_QUERIES)}
QRELS = {f"q{i}": {f"rel{i}": 1.0} for i in range(N_QUERIES)}
_START = random.Random(0)
POSITIONS = {query: _START.randrange(0, 4) for query in QRELS}


def rankings(*, lose: float = 0.0, noise: bool = False, seed: int = 0) -> dict[str, list[str]]:
    """Each query id's ranking, best first."""
    rng = random.Random(seed)
    lost = set(rng.sample(sorted(QRELS), round(lose * N_QUERIES)))
    positions = dict(POSITIONS)
    if noise:
        moved = list(positions.values())
        rng.shuffle(moved)
        positions = dict(zip(positions, moved, strict=True))
    found = {}
    for i, query in enumerate(QRELS):
        docs = [f"other{i}_{j}" for j in range(9)]
        if noise:
            rng.shuffle(docs)
        if query not in lost:
            docs.insert(positions[query], f"rel{i}")
        found[query] = docs
    return found


def retriever(**options: object) -> Callable[[str], list[str]]:
    """A search function over :func:`rankings`: query text in, doc ids out."""
    by_text = {QUERIES[q]: docs for q, docs in rankings(**options).items()}  # type: ignore[arg-type]

    def search(query: str) -> list[str]:
        return by_text[query]

    return search


def async_retriever(**options: object) -> Callable[[str], Awaitable[list[str]]]:
    """The same search as a coroutine function that yields to its event loop."""
    search = retriever(**options)

    async def asearch(query: str) -> list[str]:
        import anyio

        await anyio.lowlevel.checkpoint()
        return search(query)

    return asearch
