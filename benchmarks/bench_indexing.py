"""Indexing benchmark: the built-in index beside its engines called directly, and reloading.

Three measurements on generated text (a fixed seed, so every run sees the same corpus: SciFact's
shape, 5,000 documents of about 200 words drawn from a Zipf-like vocabulary):

- **dense throughput**: ``DenseIndex(segments, model=model)`` — what ``ingest(corpus,
  embedder="st:all-MiniLM-L6-v2")`` does once the model is loaded — beside
  sentence-transformers' ``model.encode(texts, batch_size=B, normalize_embeddings=True)`` on
  the same texts with the same batch size (``--dense-docs`` of them, 256 by default: encoding
  all 5,000 takes many minutes on a CPU). Target: ef at least 95% of encode's documents/s.
- **BM25 build**: ``Bm25Index(segments)`` beside bm25s used as its README shows it,
  ``bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"))`` then
  ``bm25s.BM25().index(tokens)``, on all 5,000 documents. Target: ef at least 95% of bm25s.
- **reload**: ``load_index(folder)`` of a saved 5,000-document dense index (float32, 384
  dimensions) and of a saved BM25 index, with the engines already imported, so only the index
  files are read (a dense index loads its model at the first query, so no model is loaded).
  The dense index's vectors are random unit vectors here — how they were made does not change
  what loading reads. Target: under 1 s.

The cases of each measurement run interleaved (ef, then the engine, each repeat), so a change
in the machine's load touches both alike; the table shows medians.

    python benchmarks/bench_indexing.py --repeats 3
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench_scoring import Target, format_target

DOCUMENTS = 5_000
WORDS_PER_DOCUMENT = (120, 300)
BATCH_SIZE = 64
DIMENSIONS = 384


def corpus(documents: int = DOCUMENTS, seed: int = 13) -> dict[str, str]:
    """SciFact-shaped generated documents: a title and an abstract of common and rare words."""
    rng = random.Random(seed)
    syllables = ["an", "ti", "bo", "dy", "ce", "ll", "ge", "ne", "pro", "tein", "ex", "pre", "ss"]
    vocabulary = ["".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(20_000)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    texts = {}
    for number in range(documents):
        words = rng.choices(vocabulary, weights=weights, k=rng.randint(*WORDS_PER_DOCUMENT))
        texts[f"doc{number}"] = " ".join(words[:8]).capitalize() + ". " + " ".join(words[8:])
    return texts


def timed(call: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def interleaved(cases: Mapping[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, call in cases.items():
            times[name].append(timed(call))
    return times


def dense(texts: list[str], repeats: int) -> dict[str, list[float]]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ef._dense_index import DenseIndex
    from ef._encoding import load_model
    from ef.segments import Segment

    model = load_model("all-MiniLM-L6-v2", device="cpu")
    segments = [Segment(f"d{i}", text) for i, text in enumerate(texts)]
    model.encode(texts[:BATCH_SIZE], batch_size=BATCH_SIZE)  # warm-up, untimed
    return interleaved(
        {
            "ef DenseIndex": lambda: DenseIndex(segments, model=model, batch_size=BATCH_SIZE),
            "sentence-transformers encode": lambda: model.encode(
                texts,
                batch_size=BATCH_SIZE,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
        },
        repeats,
    )


def bm25(texts: list[str], repeats: int) -> dict[str, list[float]]:
    import bm25s
    import Stemmer

    from ef._bm25_index import Bm25Index
    from ef.segments import Segment

    segments = [Segment(f"d{i}", text) for i, text in enumerate(texts)]

    def direct() -> object:
        tokens = bm25s.tokenize(
            texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False
        )
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return retriever

    return interleaved({"ef Bm25Index": lambda: Bm25Index(segments), "bm25s": direct}, repeats)


class RandomUnitVectors:
    """Stands in for a model while a dense index is built only to be saved: random unit rows."""

    def __init__(self) -> None:
        import numpy

        self._rng = numpy.random.default_rng(7)

    def encode(self, texts: list[str], **_: Any) -> Any:
        import numpy

        rows = self._rng.standard_normal((len(texts), DIMENSIONS)).astype(numpy.float32)
        return rows / numpy.linalg.norm(rows, axis=1, keepdims=True)


def reload(documents: dict[str, str], repeats: int, scratch: Path) -> dict[str, list[float]]:
    import bm25s  # noqa: F401 - the engines are imported before the clock starts
    import numpy  # noqa: F401

    from ef._dense_index import DenseIndex
    from ef.source_manager import ingest, load_index

    segments = ingest(documents).segments
    dense_folder = DenseIndex(segments, model=RandomUnitVectors(), name="st:generated").save(
        scratch / "dense"
    )
    bm25_folder = ingest(documents).save(scratch / "bm25")
    load_index(dense_folder, model=RandomUnitVectors())  # warm-up: first-use imports
    load_index(bm25_folder)
    return interleaved(
        {
            "load_index · dense, 5,000 docs": lambda: load_index(
                dense_folder, model=RandomUnitVectors()
            ),
            "load_index · bm25, 5,000 docs": lambda: load_index(bm25_folder),
        },
        repeats,
    )


def table(times: Mapping[str, list[float]], unit_count: int, unit: str) -> list[str]:
    lines = [f"| case | runs | median s | {unit}/s |", "|---|---:|---:|---:|"]
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(f"| {name} | {len(values)} | {median:.3f} | {unit_count / median:,.1f} |")
    return lines


def targets(result: Mapping[str, Any]) -> list[Target]:
    """The issue's targets: throughput ratios against the engines, and reload seconds."""
    median = {name: statistics.median(values) for name, values in result["times"].items()}
    return [
        (
            "ef ÷ sentence-transformers encode, documents/s",
            median["sentence-transformers encode"] / median["ef DenseIndex"],
            0.95,
            False,
        ),
        (
            "ef ÷ bm25s, BM25 build documents/s",
            median["bm25s"] / median["ef Bm25Index"],
            0.95,
            False,
        ),
        ("reload a saved dense index, s", median["load_index · dense, 5,000 docs"], 1.0, True),
        ("reload a saved BM25 index, s", median["load_index · bm25, 5,000 docs"], 1.0, True),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per case")
    parser.add_argument("--dense-docs", type=int, default=256, help="documents encoded per run")
    parser.add_argument("--json", type=Path, help="also write the timings here")
    args = parser.parse_args()
    documents = corpus()
    texts = list(documents.values())
    average = sum(map(len, texts)) / len(texts)
    print(f"{len(texts):,} generated documents, {average:.0f} characters on average\n")
    dense_times = dense(texts[: args.dense_docs], args.repeats)
    print(f"Dense encoding, {args.dense_docs} documents, batch size {BATCH_SIZE}:\n")
    print("\n".join(table(dense_times, args.dense_docs, "docs")), flush=True)
    bm25_times = bm25(texts, max(args.repeats, 5))
    print(f"\nBM25 index build, {len(texts):,} documents:\n")
    print("\n".join(table(bm25_times, len(texts), "docs")), flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        reload_times = reload(documents, max(args.repeats, 5), Path(scratch))
    print("\nReloading a saved index (index files only):\n")
    print("\n".join(table(reload_times, len(texts), "docs")), flush=True)
    result = {"times": {**dense_times, **bm25_times, **reload_times}}
    print("\n" + "\n".join(map(format_target, targets(result))))
    if args.json:
        args.json.write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
