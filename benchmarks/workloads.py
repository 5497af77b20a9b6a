"""Deterministic benchmark workloads: the same judgements and rankings for every tool.

Two shapes, each generated from a fixed seed with :class:`random.Random`, so every run of the
benchmarks (and every tool within a run) sees byte-for-byte the same data:

- **MS MARCO shape** — 6,980 queries × 1,000 retrieved passages, binary judgements, about 1.07
  relevant passages per query (MS MARCO passage dev: 7,437 judgements over 6,980 queries),
  integer-string doc ids drawn from an 8.8M-passage collection.
- **BEIR shape** — 300 queries × 100 retrieved documents, graded judgements (0, 1, 2; at least
  one positive per query, so every tool scores the same set of queries), hex doc ids.

Scores are distinct within a query (no ties), so tools that break ties differently still see one
ranking. A relevant document is retrieved with a fixed probability, at a rank skewed towards the
top, which gives metric values in the range real systems reach.

Each tool gets its native input built from the same data (:class:`Workload`): ranked id lists,
``{doc: score}`` dicts in rank order (as a TREC run file reads), the same dicts in shuffled
insertion order (the caller has to sort), and float or integer grades.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20_240_607
# Bumped whenever the files written by write_trec_files change, so cached copies are not reused.
FILES_VERSION = 2


@dataclass
class Workload:
    """One benchmark data set and every native form of it.

    :ivar name: a short label for tables.
    :ivar qrels: ``{qid: {doc: grade}}`` with float grades (ef, ranx, ir_measures).
    :ivar qrels_int: the same judgements with integer grades (pytrec_eval requires ints).
    :ivar ranked: ``{qid: [doc ids, best first]}``.
    :ivar scores: ``{qid: [scores]}`` aligned with ``ranked``, strictly descending.
    """

    name: str
    qrels: dict[str, dict[str, float]]
    qrels_int: dict[str, dict[str, int]]
    ranked: dict[str, list[str]]
    scores: dict[str, list[float]]
    _scored: dict[str, dict[str, float]] | None = field(default=None, repr=False)

    @property
    def n_queries(self) -> int:
        return len(self.ranked)

    @property
    def n_lines(self) -> int:
        """Run lines: retrieved (query, doc) pairs."""
        return sum(map(len, self.ranked.values()))

    def scored(self) -> dict[str, dict[str, float]]:
        """``{qid: {doc: score}}`` inserted best first (the order a TREC run file is read in)."""
        if self._scored is None:
            self._scored = {
                qid: dict(zip(docs, self.scores[qid], strict=True))
                for qid, docs in self.ranked.items()
            }
        return self._scored

    def scored_shuffled(self, seed: int = SEED) -> dict[str, dict[str, float]]:
        """The same scores with each query's docs inserted in a random order."""
        rng = random.Random(seed)
        out: dict[str, dict[str, float]] = {}
        for qid, docs in self.ranked.items():
            pairs = list(zip(docs, self.scores[qid], strict=True))
            rng.shuffle(pairs)
            out[qid] = dict(pairs)
        return out

    def run_lines(self, tag: str = "anserini-bm25-default") -> Iterator[str]:
        """The run as TREC run-file lines, one per retrieved doc, in rank order."""
        for qid, docs in self.ranked.items():
            scores = self.scores[qid]
            for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), 1):
                yield f"{qid} Q0 {doc} {rank} {score!r} {tag}\n"

    def qrels_lines(self) -> Iterator[str]:
        """The judgements as TREC qrels lines."""
        for qid, judged in self.qrels_int.items():
            for doc, grade in judged.items():
                yield f"{qid} 0 {doc} {grade}\n"


def _descending_scores(rng: random.Random, n: int, low: int, high: int) -> list[float]:
    """``n`` distinct scores in ``[low, high)`` with four decimals, highest first.

    Four decimals, as many run files print them, keep the scores distinct in single precision
    too: trec_eval (and so pytrec_eval) compares scores as C ``float``, and scores that differ
    only beyond that precision would tie there and be ordered differently than in double.
    """
    return [
        value / 10_000
        for value in sorted(rng.sample(range(low * 10_000, high * 10_000), n), reverse=True)
    ]


def msmarco_shape(
    n_queries: int = 6_980, depth: int = 1_000, seed: int = SEED, collection: int = 8_841_823
) -> Workload:
    """MS MARCO passage dev shaped: ``n_queries`` × ``depth``, ~1.07 binary judgements each."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, float]] = {}
    qrels_int: dict[str, dict[str, int]] = {}
    ranked: dict[str, list[str]] = {}
    scores: dict[str, list[float]] = {}
    population = range(collection)
    for q in range(n_queries):
        qid = str(1_048_585 + 7 * q)
        u = rng.random()
        n_relevant = 1 + (u < 0.06) + (u < 0.006)
        picks = rng.sample(population, depth + n_relevant)
        relevant = [str(d) for d in picks[:n_relevant]]
        ranking = [str(d) for d in picks[n_relevant:]]
        taken: set[int] = set()
        for doc in relevant:
            # Retrieved somewhere in the top `depth`, while there is room.
            if rng.random() < 0.85 and len(taken) < depth:
                rank = int(depth ** (rng.random() ** 1.6)) - 1
                while rank in taken:
                    rank = (rank + 1) % depth
                taken.add(rank)
                ranking[rank] = doc
        qrels[qid] = dict.fromkeys(relevant, 1.0)
        qrels_int[qid] = dict.fromkeys(relevant, 1)
        ranked[qid] = ranking
        scores[qid] = _descending_scores(rng, depth, 5, 40)
    return Workload("MS MARCO shape", qrels, qrels_int, ranked, scores)


def beir_shape(
    n_queries: int = 300, depth: int = 100, seed: int = SEED + 1, collection: int = 171_332
) -> Workload:
    """BEIR shaped (graded): ``n_queries`` × ``depth``, 1–60 judgements per query, grades 0–2."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, float]] = {}
    qrels_int: dict[str, dict[str, int]] = {}
    ranked: dict[str, list[str]] = {}
    scores: dict[str, list[float]] = {}
    population = range(collection)
    for q in range(n_queries):
        qid = f"q{q:04d}"
        n_judged = rng.randint(1, 60)
        picks = rng.sample(population, depth + n_judged)
        judged = [f"{d * 2_654_435_761 % 2**32:08x}" for d in picks[:n_judged]]
        grades = [rng.choice((0, 1, 1, 2)) for _ in judged]
        grades[0] = rng.choice((1, 2))  # every query has a positive judgement
        ranking = [f"{d * 2_654_435_761 % 2**32:08x}" for d in picks[n_judged:]]
        taken: set[int] = set()
        for doc in judged:
            # A full ranking takes no more (at a small depth, judged docs can outnumber it).
            if rng.random() < 0.6 and len(taken) < depth:
                rank = int(depth ** (rng.random() ** 1.3)) - 1
                while rank in taken:
                    rank = (rank + 1) % depth
                taken.add(rank)
                ranking[rank] = doc
        qrels_int[qid] = dict(zip(judged, grades, strict=True))
        qrels[qid] = {doc: float(grade) for doc, grade in qrels_int[qid].items()}
        ranked[qid] = ranking
        scores[qid] = _descending_scores(rng, depth, 0, 1)
    return Workload("BEIR shape (graded)", qrels, qrels_int, ranked, scores)


def write_trec_files(workload: Workload, directory: Path) -> tuple[Path, Path]:
    """Write ``run.txt`` and ``qrels.txt`` for ``workload`` into ``directory`` (once: reused
    when both files exist). Returns ``(run path, qrels path)``."""
    directory.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = directory / "run.txt", directory / "qrels.txt"
    if not (run_path.exists() and qrels_path.exists()):
        for path, lines in ((run_path, workload.run_lines()), (qrels_path, workload.qrels_lines())):
            partial = path.with_suffix(".partial")
            with partial.open("w", encoding="utf-8") as out:
                buffer: list[str] = []
                for line in lines:
                    buffer.append(line)
                    if len(buffer) >= 100_000:
                        out.write("".join(buffer))
                        buffer.clear()
                out.write("".join(buffer))
            partial.replace(path)
    return run_path, qrels_path
