"""Depth-k pooling: the documents several runs put in their top k, per query, to be judged.

This is the pool of the TREC tracks (and trectools' ``TrecPoolMaker.make_pool(runs,
strategy="topX", topX=k)``): for each query, the union of every run's first ``depth``
documents. The file it writes is BEIR's qrels TSV with the grade column left empty, so the
judged file reads back with every qrels reader of the library, and a row left blank is an error
naming its line, never a silent 0.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ef.evaluation._io.atomic import write_text_atomically
from ef.evaluation._judgements.inputs import (
    RunsArg,
    check_depth,
    checked_qrels,
    named_runs,
    top_documents,
)
from ef.evaluation._report.fields import (
    JsonReport,
    checked,
    count,
    list_of,
    mapping_of,
    string,
)
from ef.evaluation._report.frozen import FrozenDict, as_tuple, frozen_dict

__all__ = ["JudgementPool", "pool_runs"]

_POOL_HEADER = "query-id\tcorpus-id\tscore\n"
_UNWRITABLE = ("\t", "\n", "\r")


def _documents(value: Mapping[str, Iterable[str]]) -> FrozenDict[str, tuple[str, ...]]:
    return frozen_dict({query_id: tuple(docs) for query_id, docs in value.items()})


@attrs.frozen
class JudgementPool(JsonReport):
    """The documents to judge: per query, the union of the runs' first ``depth`` documents.

    :param documents: ``{query_id: doc ids}``, queries in the order the runs first name them,
        doc ids sorted (so the order says nothing about which run found a document).
    :param depth: how many documents of each run's ranking were pooled per query.
    :param runs: the names of the pooled runs.
    :param left_out: how many pooled documents were left out because ``judged`` already had a
        grade for them.

    >>> pool = JudgementPool({"q1": ("d1", "d2")}, depth=10, runs=("bm25",))
    >>> pool.n_documents
    2
    """

    documents: FrozenDict[str, tuple[str, ...]] = attrs.field(
        converter=_documents, metadata=checked(mapping_of(list_of(string)))
    )
    depth: int = attrs.field(metadata=checked(count))
    runs: tuple[str, ...] = attrs.field(converter=as_tuple, metadata=checked(list_of(string)))
    left_out: int = attrs.field(default=0, kw_only=True, metadata=checked(count))

    @property
    def n_documents(self) -> int:
        """How many (query, document) pairs there are to judge."""
        return sum(len(docs) for docs in self.documents.values())

    def to_tsv(self) -> str:
        """The file to judge, as text: BEIR's qrels TSV with the score column empty.

        The header ``query-id<TAB>corpus-id<TAB>score``, then one row per document, queries in
        the pool's order and doc ids sorted. Write each grade into the empty column and read
        the file with :func:`read_trec_qrels` (or pass its path as ``qrels``); a row left empty
        is refused, naming its line.

        :raises ValueError: for an id with a tab or a line break, which the format cannot hold.

        >>> JudgementPool({"q1": ("d1", "d2")}, depth=10, runs=("bm25",)).to_tsv().splitlines()
        ['query-id\\tcorpus-id\\tscore', 'q1\\td1\\t', 'q1\\td2\\t']
        """
        lines = [_POOL_HEADER]
        for query_id, docs in self.documents.items():
            for text in (query_id, *docs):
                if not text or any(char in text for char in _UNWRITABLE):
                    raise ValueError(
                        f"query {query_id!r}: id {text!r} cannot be written in a TSV pool file "
                        "(empty, or holding a tab or a line break)"
                    )
            lines.extend(f"{query_id}\t{doc}\t\n" for doc in docs)
        return "".join(lines)

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_tsv` to ``path`` all at once: an existing file is replaced only when
        every line is written. A name ending in ``.gz`` is compressed.

        :raises ValueError: for an id with a tab or a line break, which the format cannot hold.
        :raises OSError: naming ``path``, if it cannot be written.
        """
        text = self.to_tsv()
        with write_text_atomically(path) as out:
            out.write(text)


def pool_runs(runs: RunsArg, *, depth: int = 10, judged: Any = None) -> JudgementPool:
    """Pool the first ``depth`` documents of each run, per query: what is left to judge.

    The union, per query, of every run's top ``depth`` documents — the depth-k pool of the TREC
    tracks, equal to trectools' ``TrecPoolMaker().make_pool(runs, strategy="topX",
    topX=depth).pool``, except that ties of score are broken as trec_eval breaks them (doc id
    descending; trectools: ascending). Every query any run answers is pooled. With ``judged``,
    documents that already have a grade there are left out (and counted in ``left_out``), so
    a new run adds only what is new to judge; a query left with nothing to judge has no entry.

    :param runs: ``{name: run}`` or a list of runs; each run a ``{query_id: [doc ids]}`` or
        ``{query_id: {doc_id: score}}`` mapping, a DataFrame, or a run file's path (named after
        the file).
    :param depth: how many documents of each ranking to pool (the k of depth-k pooling).
    :param judged: judgements already made (a mapping, a DataFrame or a qrels file's path), or
        ``None``.
    :returns: a :class:`JudgementPool`; :meth:`JudgementPool.write` writes the file to judge.
    :raises ValueError: for ``depth < 1``, no runs, or a score or grade that is not finite.
    :raises TypeError: for a single run where a list or mapping of runs is expected, or an
        entry that is no ranking.

    >>> runs = {"bm25": {"q1": ["d1", "d2", "d3"]}, "dense": {"q1": ["d4", "d1"]}}
    >>> pool = pool_runs(runs, depth=2)
    >>> pool.documents["q1"], pool.n_documents
    (('d1', 'd2', 'd4'), 3)
    >>> pool_runs(runs, depth=2, judged={"q1": {"d1": 1}}).documents["q1"]
    ('d2', 'd4')
    """
    check_depth(depth)
    named = named_runs(runs)
    known = {} if judged is None else checked_qrels(judged, "judged")
    pooled: dict[str, set[str]] = {}
    left_out: set[tuple[str, str]] = set()
    for run in named.values():
        for query_id, entry in run.items():
            grades = known.get(query_id, {})
            docs = pooled.setdefault(query_id, set())
            for doc_id in top_documents(query_id, entry, depth):
                if doc_id in grades:
                    left_out.add((query_id, doc_id))
                else:
                    docs.add(doc_id)
    documents = {query_id: sorted(docs) for query_id, docs in pooled.items() if docs}
    return JudgementPool(documents, depth=depth, runs=tuple(named), left_out=len(left_out))
