"""Calling one registered metric for one query, and checking what it returns.

Plugin metrics are code we do not control. Whatever goes wrong in one — it raises, its
all-cutoffs form returns the wrong number of values, or a value is not a finite number — the
error names the metric, the plugin that registered it and the query, so a report never holds a
value nobody can trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ef.evaluation._scoring.metrics import checked_value

if TYPE_CHECKING:  # annotations only: the summary's module imports this one
    from ef.evaluation._scoring.ranked import RankingSummary

__all__ = ["Metric", "MetricStep"]


class Metric(Protocol):
    """What scoring needs of a metric: a registered one (``RetrievalMetric``) has all of it.

    Scoring sits below the plugins; the caller looks metrics up in the registry and hands them
    over.
    """

    @property
    def name(self) -> str: ...
    @property
    def fn(self) -> Callable[..., float]: ...
    @property
    def all_cutoffs(self) -> Callable[[Any, Sequence[int]], Sequence[float]] | None: ...
    @property
    def cutoff(self) -> bool: ...
    @property
    def plugin(self) -> str: ...


class MetricStep:
    """One metric's values for one query, at each cutoff (or once, for a metric without one).

    :param metric: the registered metric.
    :param ks: the ascending cutoffs (ignored for a metric without a cutoff).
    :param trusted: skip the checks (for the built-in all-cutoffs forms, whose values are
        finite floats by construction).
    """

    __slots__ = ("_at", "ks", "metric", "trusted")

    def __init__(self, metric: Metric, ks: tuple[int, ...], *, trusted: bool) -> None:
        self.metric = metric
        self.ks = ks
        self.trusted = trusted
        self._at = [f" at k={k}" for k in ks] if metric.cutoff else [""]

    def _named(self, query_id: str | None) -> str:
        metric = self.metric
        where = "" if query_id is None else f" for query {query_id!r}"
        return f"metric {metric.name!r} from plugin {metric.plugin!r}{where}"

    def _returned(self, query_id: str | None, where: str) -> Callable[[str], str]:
        named = self._named(query_id) + where
        return lambda shown: f"{named} returned {shown}"

    def _call(self, summary: RankingSummary) -> object:
        metric = self.metric
        if not metric.cutoff:
            return [metric.fn(summary.ranked, summary.relevant)]
        if metric.all_cutoffs is None:
            fn, ranked, relevant = metric.fn, summary.ranked, summary.relevant
            return [fn(ranked, relevant, k) for k in self.ks]
        result = metric.all_cutoffs(summary, self.ks)
        if isinstance(result, list | str | bytes | Mapping) or not isinstance(result, Iterable):
            return result
        return list(result)  # a tuple or a generator: a generator runs the metric's code

    def run(self, summary: RankingSummary, query_id: str | None = None) -> list[float]:
        """The metric's values for one query, one per cutoff, each a finite float.

        :param summary: the scoring core's pass over the query's ranking.
        :param query_id: the query, named in errors.
        :raises TypeError: for a value that is not a number (or is a bool), naming the metric,
            its plugin, the query and the cutoff.
        :raises ValueError: for a NaN or infinite value, or a value count other than the
            number of cutoffs.
        """
        try:
            raw = self._call(summary)
        except Exception as error:
            error.add_note(f"while computing {self._named(query_id)}")
            raise
        if self.trusted:
            return raw  # type: ignore[return-value]
        if not isinstance(raw, list):
            raise TypeError(
                f"{self._named(query_id)}: its all-cutoffs form returned {raw!r:.80}; "
                "expected a list with one value per cutoff"
            )
        at = self._at
        if len(raw) != len(at):
            raise ValueError(
                f"{self._named(query_id)}: its all-cutoffs form returned {len(raw)} values "
                f"for the {len(at)} cutoffs {list(self.ks)}; expected one per cutoff"
            )
        values: list[float] = []
        for value, where in zip(raw, at, strict=True):
            if type(value) is float and value - value == 0.0:  # the usual case, in one test
                values.append(value)
                continue
            values.append(checked_value(value, self._returned(query_id, where)))
        return values
