"""Datasets and systems the suite tests share: BEIR folders made here, a local ir_datasets
collection (never downloaded), and a deterministic lexical retriever."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from pathlib import Path

from ef.evaluation import write_beir

TOPICS = ("river", "castle", "engine", "garden", "planet", "violin", "harbor", "desert")
FILLER = ("the", "a", "of", "with", "near", "under", "over", "and", "some", "many", "old", "new")


def synthetic(seed: int, n_docs: int, n_queries: int, prefix: str):
    """A BEIR triple: documents about topics, queries naming a topic and a detail word, graded
    judgements (2 for the detail's document, 1 for others of the topic)."""
    rng = random.Random(seed)
    corpus, topic_of = {}, {}
    for i in range(n_docs):
        topic = rng.choice(TOPICS)
        words = [topic, f"w{seed}x{i}", *rng.choices(FILLER + TOPICS, k=12)]
        rng.shuffle(words)
        corpus[f"{prefix}d{i}"] = " ".join(words)
        topic_of[f"{prefix}d{i}"] = topic
    queries, qrels = {}, {}
    for j, picked in enumerate(rng.sample(range(n_docs), n_queries)):
        doc = f"{prefix}d{picked}"
        topic = topic_of[doc]
        queries[f"{prefix}q{j}"] = f"{prefix} {topic} w{seed}x{doc[len(prefix) + 1 :]}"
        same = [d for d, t in topic_of.items() if t == topic and d != doc]
        qrels[f"{prefix}q{j}"] = {doc: 2.0, **{d: 1.0 for d in rng.sample(same, min(3, len(same)))}}
    return corpus, queries, qrels


def beir_folder(root: Path, name: str, seed: int, n_docs: int = 60, n_queries: int = 24) -> Path:
    folder = root / name
    corpus, queries, qrels = synthetic(seed, n_docs, n_queries, name[:3])
    write_beir(folder, corpus, queries, qrels)
    return folder


def local_ir_dataset(root: Path, name: str, seed: int) -> str:
    """An ir_datasets id registered for files made here (ir_datasets' own API: no download)."""
    import ir_datasets

    corpus, queries, qrels = synthetic(seed, 50, 20, "ir")
    root.mkdir(parents=True, exist_ok=True)
    (root / "docs.tsv").write_text("".join(f"{d}\t{t}\n" for d, t in corpus.items()))
    (root / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in queries.items()))
    (root / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {int(g)}\n" for q, judged in qrels.items() for d, g in judged.items())
    )
    dataset = ir_datasets.create_dataset(
        docs_tsv=str(root / "docs.tsv"),
        queries_tsv=str(root / "queries.tsv"),
        qrels_trec=str(root / "qrels.txt"),
    )
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(name, dataset)
    return name


_WORD = re.compile(r"\w+")


class CosineRetriever:
    """Cosine over raw term counts: deterministic, dependency-free, a second system beside bm25
    (a class: the suite instantiates it with each dataset's corpus)."""

    def __init__(self, corpus):
        self.vectors = {d: Counter(_WORD.findall(t.lower())) for d, t in corpus.items()}
        self.norms = {d: math.sqrt(sum(v * v for v in c.values())) for d, c in self.vectors.items()}

    def __call__(self, query, limit=10):
        terms = Counter(_WORD.findall(query.lower()))
        scores = {}
        for doc, counts in self.vectors.items():
            dot = sum(counts[t] * n for t, n in terms.items())
            if dot:
                scores[doc] = dot / self.norms[doc]
        return sorted(scores, key=lambda d: (-scores[d], d))[:limit]


def numbers(report):
    """What a suite's numbers are, without what differs between runs (latency, manifests)."""
    return {
        "datasets": list(report.datasets),
        "systems": list(report.systems),
        "cells": {
            d: {
                s: [dict(c.metrics), {q: dict(v) for q, v in c.per_query.items()}, c.n_queries]
                for s, c in row.items()
            }
            for d, row in report.cells.items()
        },
        "macro": report.macro,
        "micro": report.micro,
        "comparisons": {d: c.to_dict() for d, c in report.comparisons.items()},
        "wins": report.significant_wins,
        "losses": report.significant_losses,
        "datasets_info": report.datasets_info,
        "table": report.to_markdown(),
    }
