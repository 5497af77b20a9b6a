"""The values of ``ef-eval``'s options: argparse types, and the keywords they give the library.

An absent option is left out, so the library's own default applies; ``--help`` shows that
default from the function's signature (:func:`keyword_defaults`), the one place it is declared.
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "RUN_FORMATS",
    "add_depth_option",
    "add_html_option",
    "add_interval_options",
    "add_judging_options",
    "add_missing_queries_option",
    "add_run_format_option",
    "count",
    "html_path",
    "interval_options",
    "keyword_defaults",
    "parse_cutoffs",
    "parse_level",
    "parse_names",
    "positive_int",
    "retrieval_options",
    "seconds",
]


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (``--limit``, ``--permutations``).

    >>> positive_int("10")
    10
    """
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def count(text: str) -> int:
    """An argparse type: an integer >= 0 (``--retries``)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return int(text)


def seconds(text: str) -> float:
    """An argparse type: a finite number of seconds > 0 (``--timeout``)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def parse_cutoffs(text: str) -> tuple[int, ...]:
    """Parse ``--k``: comma-separated integers >= 1, duplicates dropped, order kept.

    :raises argparse.ArgumentTypeError: naming the bad part.

    >>> parse_cutoffs("1,5,10,5")
    (1, 5, 10)
    """
    values: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise argparse.ArgumentTypeError(
                f"invalid cutoff {part!r} in {text!r}; expected comma-separated integers >= 1, "
                "e.g. 1,5,10"
            )
        values.append(int(part))
    return tuple(dict.fromkeys(values))


_CUTOFF = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_TREC_CUTOFFS = re.compile(r"[A-Za-z][A-Za-z0-9_]*\.[0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*")


def split_names(text: str) -> list[str]:
    """Split on the commas outside parentheses, braces and quotes, each name stripped; a
    number after trec_eval's ``family.cutoff`` is one more cutoff of it (``P.5,10,20``).

    >>> split_names("nDCG@10, RBP(rel=1,p=0.8),nDCG(dcg='a,b')@5")
    ['nDCG@10', 'RBP(rel=1,p=0.8)', "nDCG(dcg='a,b')@5"]
    >>> split_names("P.5,10,20,ndcg_cut.10,100,map")
    ['P.5,10,20', 'ndcg_cut.10,100', 'map']
    """
    names: list[str] = []
    depth, quote, start = 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "({":
            depth += 1
        elif char in ")}":
            depth = max(depth - 1, 0)
        elif char == "," and not depth:
            names.append(text[start:i].strip())
            start = i + 1
    names.append(text[start:].strip())
    joined: list[str] = []
    for name in names:
        if joined and _CUTOFF.fullmatch(name) and _TREC_CUTOFFS.fullmatch(joined[-1]):
            joined[-1] += "," + name
        else:
            joined.append(name)
    return joined


def parse_names(text: str) -> tuple[str, ...]:
    """Parse ``--metrics``: comma-separated names, duplicates dropped, order kept.

    Commas inside parentheses or quotes belong to a name: ``RBP(rel=1,p=0.8),nDCG@10`` is two.

    :raises argparse.ArgumentTypeError: for an empty name.

    >>> parse_names("ndcg, recall,ndcg")
    ('ndcg', 'recall')
    >>> parse_names("P(rel=2)@5,RBP(rel=1,p=0.8)")
    ('P(rel=2)@5', 'RBP(rel=1,p=0.8)')
    """
    names = split_names(text)
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"empty name in {text!r}; expected comma-separated names, e.g. ndcg,recall"
        )
    return tuple(dict.fromkeys(names))


def keyword_defaults(function: Callable[..., Any]) -> dict[str, Any]:
    """The defaults of ``function``'s keyword-only parameters: what an absent flag means.

    The command line leaves out what is not given, so the library's defaults apply; the help
    shows them from the one place they are declared.

    >>> from ef.evaluation import evaluate_retrieval
    >>> keyword_defaults(evaluate_retrieval)["retries"]
    0
    """
    return {
        name: parameter.default
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }


def parse_level(text: str) -> int:
    """Parse ``--relevance-level``: an integer >= 1.

    :raises argparse.ArgumentTypeError: for anything else.

    >>> parse_level("2")
    2
    """
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def add_judging_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--relevance-level`` and ``--judged-only``: trec_eval's ``-l`` and ``-J``.

    Both are ``None`` when absent, so :func:`retrieval_options` leaves the library's defaults.
    """
    parser.add_argument(
        "--relevance-level",
        type=parse_level,
        metavar="N",
        help="the smallest grade that counts as relevant, as trec_eval -l (default: any grade "
        "> 0); nDCG ignores it, as trec_eval does",
    )
    parser.add_argument(
        "--judged-only",
        action="store_true",
        default=None,
        help="rank only judged documents, as trec_eval -J",
    )


def add_depth_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--depth N``: score each query's first N results only (trec_eval's ``-M``)."""
    parser.add_argument(
        "--depth",
        type=positive_int,
        metavar="N",
        help="score only each query's first N results, in trec_eval's order, as trec_eval -M "
        "(default: every result)",
    )


def add_missing_queries_option(parser: argparse.ArgumentParser, lacking: str) -> None:
    """Add ``--missing-queries``: what a judged query a run lacks does (``missing_queries=``).

    :param lacking: what lacks the queries, and what becomes of them, for the help text.
    """
    parser.add_argument(
        "--missing-queries",
        choices=("zero", "warn", "error"),
        metavar="RULE",
        help=f"what {lacking}: warn (the default: one warning per run), zero (silently, even "
        "when a run shares no query id at all) or error (refuse the run); a run that shares no "
        "query id is refused unless zero",
    )


RUN_FORMATS = ("trec", "json", "jsonl", "parquet")
"""The run file formats :func:`ef.evaluation.read_run` reads, as ``--run-format`` names them."""


def add_run_format_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--run-format``: the format of every run file, instead of telling it by name."""
    parser.add_argument(
        "--run-format",
        choices=RUN_FORMATS,
        metavar="FORMAT",
        help="the format of the run files: trec, json (ranx's {qid: {docid: score}}), jsonl "
        "(one {query_id, doc_id, score} per line) or parquet (default: from each file name, "
        ".json, .jsonl, .parquet, possibly .gz, else trec)",
    )


# Each flag's destination, and the keyword of the evaluation it gives.
_KEYWORDS = {
    "k": "k_values",
    "metrics": "metrics",
    "limit": "limit",
    "max_concurrency": "max_concurrency",
    "batch_size": "batch_size",
    "timeout": "timeout",
    "retries": "retries",
    "on_error": "on_error",
    "relevance_level": "relevance_level",
    "judged_only": "judged_only",
    "missing_queries": "missing_queries",
    "depth": "depth",
    "interval": "interval",
    "interval_confidence": "confidence_level",
}


def retrieval_options(args: argparse.Namespace) -> dict[str, Any]:
    """The evaluation keywords given on the command line; absent ones keep the library's
    defaults (a subcommand without such a flag gives none).

    >>> retrieval_options(argparse.Namespace(k=(10,), metrics=None, retries=2))
    {'k_values': (10,), 'retries': 2}
    """
    return {
        keyword: value
        for flag, keyword in _KEYWORDS.items()
        if (value := getattr(args, flag, None)) is not None
    }


def confidence_level(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (``--interval-confidence``).

    >>> confidence_level("0.9")
    0.9
    """
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}")
    return value


def add_interval_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--interval t|bootstrap`` and ``--interval-confidence LEVEL``: the confidence
    interval of each mean (``interval=``, ``confidence_level=``); absent, none is computed."""
    parser.add_argument(
        "--interval",
        choices=("t", "bootstrap"),
        metavar="METHOD",
        help="also give each mean a confidence interval: t (Student's t) or bootstrap "
        "(percentile, 10,000 resamples, seed 0); needs scipy (the stats extra)",
    )
    parser.add_argument(
        "--interval-confidence",
        type=confidence_level,
        metavar="LEVEL",
        help="the coverage of --interval (default: 0.95)",
    )


def interval_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of ``--interval`` and ``--interval-confidence``, those given only.

    >>> interval_options(argparse.Namespace(interval="t", interval_confidence=None))
    {'interval': 't'}
    """
    return {
        keyword: value
        for flag, keyword in (("interval", "interval"), ("interval_confidence", "confidence_level"))
        if (value := getattr(args, flag, None)) is not None
    }


def html_path(text: str) -> str:
    """An argparse type: a path ending in ``.html`` or ``.htm`` (so that a slip of the command
    line cannot replace a run or qrels file with a page).

    >>> html_path("report.html")
    'report.html'
    """
    if not text.lower().endswith((".html", ".htm")):
        raise argparse.ArgumentTypeError(f"expected a file name ending in .html, got {text!r}")
    return text


def add_html_option(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--html PATH``: also write the result as one self-contained HTML page.

    :param what: what the page shows beyond the report, for the help text.
    """
    parser.add_argument(
        "--html",
        type=html_path,
        metavar="PATH",
        help=f"also write a visual report to PATH: one HTML page that opens offline ({what})",
    )
