"""``ef-eval demo``: a retriever scored on a small dataset, with nothing to download or set up.

The dataset is a tiny BEIR-shaped triple written into this module (30 one-sentence documents on
everyday topics, 10 queries, graded judgements: 2 answers the query, 1 helps, 0 judged off
topic); the retriever is a small pure-Python BM25. Both sit behind one function each,
:func:`demo_dataset` and :func:`demo_retriever`, so either can be swapped for a real one.
"""

from __future__ import annotations

import argparse
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from ef.evaluation import Corpus, Qrels, Queries, evaluate_retrieval, registry
from ef.evaluation.cli._common import (
    add_metric_options,
    add_output_options,
    check_names,
    emit,
    retrieval_options,
    retrieval_table,
)

if TYPE_CHECKING:
    from ef.evaluation.cli._common import Subparsers

__all__ = ["DEMO_K_VALUES", "add_parser", "demo_dataset", "demo_retriever", "handle"]

DEMO_K_VALUES = (1, 3, 10)
"""The demo's default cutoffs: its queries have two or three relevant documents each."""

_DOCUMENTS = (
    "Plants make their own food through photosynthesis, using sunlight to turn water and "
    "carbon dioxide into sugar.",
    "Chlorophyll is the green pigment in leaves that absorbs red and blue light and reflects "
    "green.",
    "Houseplants need bright indirect light and should be watered only when the top of the "
    "soil feels dry.",
    "Espresso is brewed by forcing hot water through finely ground coffee under high pressure.",
    "A French press steeps coarse coffee grounds in hot water for about four minutes before "
    "the plunger is pressed.",
    "Caffeine blocks adenosine receptors in the brain, which is why coffee makes people feel "
    "more alert.",
    "Ocean tides are caused mainly by the gravitational pull of the Moon on the Earth's oceans.",
    "The Moon always shows the same face to the Earth because its rotation is locked to its orbit.",
    "Spring tides happen at new moon and full moon, when the Sun and the Moon line up and "
    "their pulls add together.",
    "Adults need seven to nine hours of sleep each night to stay healthy and focused.",
    "Blue light from phone screens in the evening can delay sleep by suppressing the hormone "
    "melatonin.",
    "A regular bedtime, a dark cool room and no caffeine after noon all help people fall "
    "asleep faster.",
    "Volcanoes erupt when molten rock called magma rises through cracks in the Earth's crust.",
    "Iceland sits on the Mid-Atlantic Ridge, where two tectonic plates pull apart and cause "
    "frequent eruptions.",
    "Volcanic ash can ground aircraft because the glassy particles melt inside jet engines.",
    "Python lists are ordered, mutable sequences that can hold values of any type.",
    "A Python dictionary maps keys to values and looks up a key in constant time on average.",
    "List comprehensions build a new list from an iterable in a single readable expression.",
    "Sourdough bread rises thanks to a starter of wild yeast and lactic acid bacteria.",
    "Kneading dough develops gluten, the protein network that traps gas and gives bread its "
    "chewy structure.",
    "Bake bread in a very hot oven with steam for the first minutes so the crust turns thin "
    "and crisp.",
    "Honey bees pollinate flowers while collecting nectar, carrying pollen from one blossom "
    "to the next.",
    "A honey bee colony has one queen, thousands of female worker bees and a few hundred male "
    "drones.",
    "Many fruit crops, such as apples and almonds, depend on bees and other insects for "
    "pollination.",
    "A marathon is a road race of 42.195 kilometres, about 26.2 miles.",
    "Marathon training plans slowly increase the weekly distance and include one long run "
    "each week.",
    "Runners eat carbohydrates before a long race to fill their muscles with glycogen and "
    "avoid hitting the wall.",
    "Solar panels turn sunlight into electricity using photovoltaic cells made of silicon.",
    "A home battery stores the extra electricity that solar panels produce during the day for "
    "use at night.",
    "Wind turbines generate electricity when moving air spins their blades and drives a generator.",
)

# (query text, {document number: grade}); documents are numbered from 1 as d01..d30.
_QUERIES = (
    ("how do plants turn sunlight into food", {1: 2, 2: 1, 28: 0}),
    ("how to brew coffee", {4: 2, 5: 2, 6: 0}),
    ("what causes ocean tides", {7: 2, 9: 2, 8: 1}),
    ("how many hours of sleep do adults need", {10: 2, 12: 1, 11: 1}),
    ("why do volcanoes erupt", {13: 2, 14: 1, 15: 0}),
    ("python dictionary key lookup", {17: 2, 16: 1}),
    ("how to bake bread with a crisp crust", {21: 2, 20: 1, 19: 1}),
    ("why are bees important for crops", {24: 2, 22: 2, 23: 0}),
    ("what to eat before a marathon race", {27: 2, 26: 1, 25: 1}),
    ("store solar electricity for the night", {29: 2, 28: 1, 30: 0}),
)


def demo_dataset() -> tuple[Corpus, Queries, Qrels]:
    """The demo's ``(corpus, queries, qrels)``: 30 documents, 10 queries, graded judgements.

    >>> corpus, queries, qrels = demo_dataset()
    >>> len(corpus), len(queries), queries['q3'], qrels['q3']
    (30, 10, 'what causes ocean tides', {'d07': 2.0, 'd09': 2.0, 'd08': 1.0})
    """
    corpus = {f"d{number:02d}": text for number, text in enumerate(_DOCUMENTS, 1)}
    queries = {f"q{number}": text for number, (text, _) in enumerate(_QUERIES, 1)}
    qrels = {
        f"q{number}": {f"d{doc:02d}": float(grade) for doc, grade in grades.items()}
        for number, (_, grades) in enumerate(_QUERIES, 1)
    }
    return corpus, queries, qrels


_WORD = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    """Whitespace-separated words, lowercased, with the punctuation around them dropped."""
    return [word for token in text.lower().split() for word in _WORD.findall(token)]


def demo_retriever(
    corpus: Mapping[str, str], *, k1: float = 1.2, b: float = 0.75
) -> Callable[..., list[str]]:
    """A BM25 retriever over ``corpus``: ``retriever(query, *, limit=10) -> [doc ids]``.

    Okapi BM25 with Lucene's non-negative idf, ``log(1 + (N - df + 0.5) / (df + 0.5))``, over
    lowercased words. Only documents sharing a word with the query are returned, best first,
    ties by doc id.

    :param corpus: ``{doc_id: text}``.
    :param k1: term-frequency saturation.
    :param b: document-length normalisation.

    >>> retriever = demo_retriever({'a': 'red apples', 'b': 'green apples and pears'})
    >>> retriever('pears'), retriever('apples', limit=1)
    (['b'], ['a'])
    """
    doc_ids = list(corpus)
    term_counts = [Counter(_tokens(corpus[doc_id])) for doc_id in doc_ids]
    lengths = [sum(counts.values()) for counts in term_counts]
    average_length = sum(lengths) / len(lengths) if lengths else 1.0
    frequency = Counter(term for counts in term_counts for term in counts)
    n = len(doc_ids)
    idf = {term: math.log(1 + (n - df + 0.5) / (df + 0.5)) for term, df in frequency.items()}

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        terms = [term for term in _tokens(query) if term in idf]
        scores: dict[str, float] = {}
        for doc_id, counts, length in zip(doc_ids, term_counts, lengths, strict=True):
            norm = k1 * (1 - b + b * length / average_length)
            score = sum(
                idf[t] * counts[t] * (k1 + 1) / (counts[t] + norm) for t in terms if t in counts
            )
            if score > 0:
                scores[doc_id] = score
        return sorted(scores, key=lambda doc_id: (-scores[doc_id], doc_id))[:limit]

    return retriever


def add_parser(subparsers: Subparsers) -> None:
    """Register the ``demo`` subcommand."""
    parser = subparsers.add_parser(
        "demo",
        help="score a built-in BM25 retriever on a built-in dataset (no files needed)",
        description="Score a small pure-Python BM25 retriever on a built-in dataset of 30 "
        "documents and 10 queries with graded judgements, with evaluate_retrieval. Cutoffs "
        f"default to {','.join(map(str, DEMO_K_VALUES))} here.",
    )
    add_metric_options(parser, cutoffs=True, default="ndcg,recall,precision,mrr,map")
    add_output_options(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the demo evaluation and print the metrics."""
    check_names(args.metrics, registry().metrics, "metric")
    corpus, queries, qrels = demo_dataset()
    options = {"k_values": DEMO_K_VALUES, **retrieval_options(args)}
    report = evaluate_retrieval(demo_retriever(corpus), qrels, queries, **options)
    title = (
        f"BM25 (built-in, pure Python) on the demo dataset: {len(corpus)} documents, "
        f"{report.n_queries} queries"
    )
    table = retrieval_table(title, {"bm25": report}, label="retriever", per_query=args.per_query)
    emit(args, table, report.to_dict())
    return 0
