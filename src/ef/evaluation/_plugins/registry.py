"""What plugins register: metrics, RAG metrics, dataset readers, and the snapshot of them all.

The entries are shapes the host fills and hands on; what a metric's measure family or a fusion
parameter's domain means is the scoring layer's business, named here for the annotations only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ef.evaluation._types import Corpus, Qrels, Queries, RagMetricFn

if TYPE_CHECKING:
    from ef.evaluation._scoring.domains import Domain
    from ef.evaluation._scoring.measures.family import Family

__all__ = [
    "CORE_PLUGIN",
    "REGISTERED",
    "CommandExtension",
    "DatasetReader",
    "FusionMethod",
    "Normalization",
    "PluginInfo",
    "RagMetric",
    "Registry",
    "ReportLocation",
    "RetrievalMetric",
    "make_command_extension",
    "make_fusion_method",
    "make_metric",
    "make_normalization",
    "make_rag_metric",
    "make_reader",
    "make_report_location",
]

CORE_PLUGIN = "ef.evaluation._builtins"
"""The plugin ef's own metrics, RAG metrics and dataset readers are registered under: what
``registry().metrics['ndcg'].plugin`` and ``ef-eval plugins`` show."""


@attrs.frozen
class RetrievalMetric:
    """A registered retrieval metric.

    :param name: the short name used in ``metrics=`` and in report keys (``name@k``).
    :param fn: ``fn(ranked, relevant, k) -> float``; for a metric without a cutoff,
        ``fn(ranked, relevant) -> float`` over the whole retrieved list.
    :param all_cutoffs: optionally ``all_cutoffs(summary, ks) -> [float, ...]``, every cutoff at
        once from the scoring core's :class:`RankingSummary` (``ks`` ascending).
    :param cutoff: ``False`` for metrics reported without ``@k`` (R-precision, bpref).
    :param family: for a trec_eval measure family, its keys, parameters, aggregation and
        source; the scoring core then computes it from the query's facts and reports its own
        keys (``P_5``), not ``name@k``.
    :param parameters: the keyword parameters ``fn`` takes, each with its default (an int, a
        float or a str): ``name(p=0.5)@10`` calls ``fn(ranked, relevant, 10, p=0.5)``.
    """

    name: str
    fn: Callable[..., float]
    all_cutoffs: Callable[[Any, Sequence[int]], Sequence[float]] | None = None
    cutoff: bool = True
    description: str = ""
    plugin: str = ""
    family: Family | None = attrs.field(default=None, kw_only=True)
    parameters: Mapping[str, int | float | str] = attrs.field(factory=dict, kw_only=True)


@attrs.frozen
class RagMetric:
    """A registered RAG metric: ``fn(sample) -> float``, or ``None`` when not applicable."""

    name: str
    fn: RagMetricFn
    description: str = ""
    plugin: str = ""


@attrs.frozen
class DatasetReader:
    """A registered dataset reader: ``reader(source, **options) -> (corpus, queries, qrels)``."""

    name: str
    reader: Callable[..., tuple[Corpus, Queries, Qrels]]
    description: str = ""
    plugin: str = ""


@attrs.frozen
class FusionMethod:
    """A registered fusion method: ``fn(rankings, **params) -> {doc_id: score}`` for one query.

    :param fn: takes the query's rankings, one ``{doc_id: score}`` dict per run iterated best
        first, and the parameters (``weights=`` for a weighted method); returns the fused scores.
    :param rank_based: whether it reads only ranks (its default normalisation is then none,
        else ``min-max``).
    :param weighted: whether it takes one weight per run.
    :param defaults: parameters with their defaults; ``required``: those without one.
    :param train: for a supervised method, ``train(hits, relevant_counts, **options) ->
        {trained parameter: value}``; ``trained`` names what it returns and ``train_params``
        the parameters it takes.
    :param grid: ``grid(n_runs) -> {parameter: [values]}``, the default search grid of
        ``optimize_fusion`` (``None``: nothing to optimise).
    :param aliases: other names it answers to.
    :param domains: the values each parameter takes (``{"k": number(0, low_open=True)}``); a
        parameter without one takes its default's type, a required one any finite number.
    """

    name: str
    fn: Callable[..., Mapping[str, float]]
    rank_based: bool
    weighted: bool = False
    defaults: Mapping[str, Any] = attrs.field(factory=dict)
    required: tuple[str, ...] = ()
    train: Callable[..., Mapping[str, Any]] | None = None
    trained: tuple[str, ...] = ()
    train_params: tuple[str, ...] = ()
    grid: Callable[[int], Mapping[str, Sequence[Any]]] | None = None
    aliases: tuple[str, ...] = ()
    description: str = ""
    plugin: str = ""
    domains: Mapping[str, Domain] = attrs.field(factory=dict, kw_only=True)


@attrs.frozen
class Normalization:
    """A registered score normalisation: ``fn(rankings) -> [normalised {doc_id: score}, ...]``.

    ``rankings`` is one query's ``{doc_id: score}`` per run, best first; ``order_based`` marks a
    normalisation that reads only the order (so runs of ranked ids without scores may use it).
    """

    name: str
    fn: Callable[..., Sequence[Mapping[str, float]]]
    order_based: bool = False
    description: str = ""
    plugin: str = ""


@attrs.frozen
class ReportLocation:
    """A registered place reports are read from: ``read_report("name:rest")`` reads the JSON
    bytes ``fetch("rest")`` returns."""

    name: str
    fetch: Callable[[str], bytes]
    description: str = ""
    plugin: str = ""


@attrs.frozen
class CommandExtension:
    """A registered extension of ``ef-eval``'s evaluating commands: ``add_options(parser,
    command)`` adds its options, ``finished(command, reports, args, **details)`` acts on the
    finished reports."""

    name: str
    add_options: Callable[[Any, str], None]
    finished: Callable[..., None]
    description: str = ""
    plugin: str = ""


@attrs.frozen
class PluginInfo:
    """An installed plugin: its name, distribution, version and the hooks it implements."""

    name: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]
    builtin: bool = False


@attrs.frozen
class Registry:
    """A read-only snapshot of what the loaded plugins provide, each with its plugin's name."""

    metrics: Mapping[str, RetrievalMetric]
    rag_metrics: Mapping[str, RagMetric]
    readers: Mapping[str, DatasetReader]
    fusion_methods: Mapping[str, FusionMethod] = attrs.field(factory=dict, kw_only=True)
    normalizations: Mapping[str, Normalization] = attrs.field(factory=dict, kw_only=True)
    report_locations: Mapping[str, ReportLocation] = attrs.field(factory=dict, kw_only=True)
    command_extensions: Mapping[str, CommandExtension] = attrs.field(factory=dict, kw_only=True)


def _check_callable(name: str, value: object, what: str) -> None:
    if not callable(value):
        raise TypeError(f"{name!r}: {what} must be callable, got {type(value).__name__}")


def _is_family(value: object) -> bool:
    """Whether ``value`` is a measure family, as the scoring layer's ``Family`` is one."""
    return isinstance(getattr(value, "keys", None), tuple) and callable(
        getattr(value, "function", None)
    )


def _is_domain(value: object) -> bool:
    """Whether ``value`` is a parameter domain, as the scoring layer's ``Domain`` is one."""
    return callable(getattr(value, "check", None)) and callable(getattr(value, "describe", None))


def make_metric(
    name: str,
    fn: Callable[..., float],
    *,
    all_cutoffs: Callable[[Any, Sequence[int]], Sequence[float]] | None = None,
    cutoff: bool = True,
    description: str = "",
    plugin: str,
    family: Family | None = None,
    parameters: Mapping[str, int | float | str] | None = None,
) -> RetrievalMetric:
    _check_callable(name, fn, "the metric function")
    if all_cutoffs is not None:
        _check_callable(name, all_cutoffs, "all_cutoffs")
    if family is not None and not _is_family(family):
        raise TypeError(f"{name!r}: family must be a measure Family, got {type(family).__name__}")
    declared = dict(parameters or {})
    for key, default in declared.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise TypeError(f"{name!r}: parameter names must be identifiers, got {key!r}")
        if isinstance(default, bool) or not isinstance(default, int | float | str):
            raise TypeError(
                f"{name!r}: parameter {key!r} needs a default int, float or str, got {default!r}"
            )
    return RetrievalMetric(
        name,
        fn,
        all_cutoffs,
        bool(cutoff),
        description,
        plugin,
        family=family,
        parameters=declared,
    )


def make_rag_metric(name: str, fn: RagMetricFn, *, description: str = "", plugin: str) -> RagMetric:
    _check_callable(name, fn, "the RAG metric function")
    return RagMetric(name, fn, description, plugin)


def make_reader(
    name: str,
    reader: Callable[..., tuple[Corpus, Queries, Qrels]],
    *,
    description: str = "",
    plugin: str,
) -> DatasetReader:
    _check_callable(name, reader, "the reader")
    return DatasetReader(name, reader, description, plugin)


def _names(name: str, what: str, values: Any) -> tuple[str, ...]:
    if isinstance(values, str) or not all(isinstance(value, str) for value in values):
        raise TypeError(f"{name!r}: {what} must be a sequence of names")
    return tuple(values)


def make_fusion_method(
    name: str,
    fn: Callable[..., Mapping[str, float]],
    *,
    rank_based: bool,
    weighted: bool = False,
    defaults: Mapping[str, Any] | None = None,
    required: Sequence[str] = (),
    train: Callable[..., Mapping[str, Any]] | None = None,
    trained: Sequence[str] = (),
    train_params: Sequence[str] = (),
    grid: Callable[[int], Mapping[str, Sequence[Any]]] | None = None,
    aliases: Sequence[str] = (),
    description: str = "",
    domains: Mapping[str, Domain] | None = None,
    plugin: str,
) -> FusionMethod:
    _check_callable(name, fn, "the fusion function")
    if train is not None:
        _check_callable(name, train, "train")
    if grid is not None:
        _check_callable(name, grid, "grid")
    if (train is None) != (not trained):
        raise TypeError(f"{name!r}: a supervised method gives both train and trained")
    return FusionMethod(
        name,
        fn,
        bool(rank_based),
        bool(weighted),
        dict(defaults or {}),
        _names(name, "required", required),
        train,
        _names(name, "trained", trained),
        _names(name, "train_params", train_params),
        grid,
        _names(name, "aliases", aliases),
        description,
        plugin,
        domains=_domains(name, domains),
    )


def _domains(name: str, domains: Mapping[str, Domain] | None) -> dict[str, Domain]:
    given = dict(domains or {})
    bad = [key for key, domain in given.items() if not _is_domain(domain)]
    if bad:
        raise TypeError(f"{name!r}: domains[{bad[0]!r}] must be a Domain")
    return given


def make_normalization(
    name: str,
    fn: Callable[..., Sequence[Mapping[str, float]]],
    *,
    order_based: bool = False,
    description: str = "",
    plugin: str,
) -> Normalization:
    _check_callable(name, fn, "the normalisation function")
    return Normalization(name, fn, bool(order_based), description, plugin)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+")


def make_report_location(
    name: str, fetch: Callable[[str], bytes], *, description: str = "", plugin: str
) -> ReportLocation:
    if not _SCHEME.fullmatch(name):
        raise ValueError(
            f"invalid report location scheme {name!r}: two characters or more, letters, "
            "digits, + . -, a letter first"
        )
    _check_callable(name, fetch, "fetch")
    return ReportLocation(name, fetch, description, plugin)


def make_command_extension(
    name: str,
    add_options: Callable[[Any, str], None],
    finished: Callable[..., None],
    *,
    description: str = "",
    plugin: str,
) -> CommandExtension:
    _check_callable(name, add_options, "add_options")
    _check_callable(name, finished, "finished")
    return CommandExtension(name, add_options, finished, description, plugin)


REGISTERED: tuple[tuple[str, str, Callable[..., Any], str], ...] = (
    ("metrics", "metrics", make_metric, "metric"),
    ("rag_metrics", "rag_metrics", make_rag_metric, "RAG metric"),
    ("readers", "dataset_readers", make_reader, "reader"),
    ("fusion_methods", "fusion_methods", make_fusion_method, "fusion method"),
    ("normalizations", "normalizations", make_normalization, "normalisation"),
    ("report_locations", "report_locations", make_report_location, "report location"),
    ("command_extensions", "command_extensions", make_command_extension, "command extension"),
)
"""What the ``register_*`` hooks fill: each :class:`Registry` field, the hook's name after
``ef_evaluation_register_``, the function that checks and builds an entry, and what an entry is
called in messages."""
