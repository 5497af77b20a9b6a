"""The gate's rules: floors, tolerated drops and significance-aware regressions, each a small
class that judges a metric's numbers itself (their written forms are :mod:`.config`'s)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import attrs

from ef.evaluation._compare.render_pairs import format_p_value
from ef.evaluation._report.fields import (
    JsonReport,
    checked,
    finite,
    object_,
    optional,
    reading_json,
    string,
    structure,
)

__all__ = [
    "KINDS",
    "RULES",
    "SIGNIFICANTLY_WORSE",
    "TOLERANCE",
    "FailIfSignificantlyWorse",
    "Floor",
    "GateRule",
    "MaxDrop",
    "number",
    "rule_from_json",
]

KINDS = ("min", "max_drop", "fail_if")
"""The rule kinds: a floor on the value, a tolerated drop from the baseline, and
``fail_if = "significantly_worse"``."""

TOLERANCE = 1e-9
"""How far past a threshold a mean may be and still be judged at it: a floor (``min``) holds
when the mean is at least the floor minus this, a tolerated drop (``max_drop``) when the drop is
at most the tolerance plus this. Means are binary floats: 0.70 − 0.69 is a little more than
0.01, and a drop the user tolerated in decimal must not fail by a rounding error."""

SIGNIFICANTLY_WORSE = "significantly_worse"
"""The one setting of ``fail_if``."""


def _finite(rule: GateRule, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is bool or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(
            f"rule {rule.kind!r} on {rule.metric!r}: {attribute.name} {value!r}: expected a "
            "finite number"
        )


_GROUP = attrs.validators.optional(attrs.validators.instance_of(str))
_GROUP_JSON = checked(optional(string))


@attrs.frozen
class GateRule(JsonReport):
    """One rule on one metric: the base of :class:`Floor`, :class:`MaxDrop` and
    :class:`FailIfSignificantlyWorse`, each of which judges the metric's numbers itself
    (:meth:`judge`). Build one of those, or :func:`parse_rule` from the command-line form.

    :param metric: the metric key (``"ndcg@10"``).
    :param group: a query group: the rule then gates that group's queries alone (the current
        report must carry the groups, see :doc:`/groups`); ``None`` gates every query.
    :raises TypeError: for the base class itself, which is no rule.

    ``kind`` is fixed by the class (``"min"``, ``"max_drop"`` or ``"fail_if"``): the rule's
    key in a metric's TOML table, and in its JSON form, where it says which class to build.
    """

    KIND: ClassVar[str] = ""
    """The ``kind`` of the class's rules."""
    TESTED: ClassVar[bool] = False
    """Whether the rule is judged by the paired test: its p-value then joins the one family
    corrected over the gate's ``fail_if`` rules, and shows in its result."""

    metric: str = attrs.field(validator=attrs.validators.instance_of(str), metadata=checked(string))
    kind: str = attrs.field(init=False, repr=False, metadata=checked(string))
    group: str | None = attrs.field(
        default=None, kw_only=True, validator=_GROUP, metadata=_GROUP_JSON
    )

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        if not cls.KIND:
            raise TypeError(
                f"{cls.__name__} is the base of the gate's rules, not a rule: build a Floor, a "
                "MaxDrop or a FailIfSignificantlyWorse (or parse_rule('ndcg@10 >= 0.5'))"
            )
        return super().__new__(cls)

    @kind.default
    def _fixed_kind(self) -> str:
        return self.KIND

    @property
    def text(self) -> str:
        """The rule as written on the command line.

        >>> Floor('ndcg@10', 0.6).text
        'ndcg@10 >= 0.6'
        >>> Floor('ndcg@10', 0.6, group='navigational').text
        'group navigational: ndcg@10 >= 0.6'
        """
        prefix = "" if self.group is None else f"group {self.group}: "
        return prefix + self._condition()

    def _condition(self) -> str:
        raise NotImplementedError

    @classmethod
    def _from_setting(cls, metric: str, setting: Any, where: str, group: str | None) -> GateRule:
        """The rule a TOML table or the command line writes as ``kind = setting``.

        :raises ValueError: naming ``where``, for a setting the rule does not take.
        """
        raise NotImplementedError

    def judge(
        self,
        value: float,
        baseline: float,
        difference: float,
        p_value: float | None,
        alpha: float,
    ) -> tuple[bool, str]:
        """Whether the rule holds for these numbers, and why, in one sentence.

        :param value: the metric's mean now, over the compared queries.
        :param baseline: the baseline's mean over the same queries.
        :param difference: the mean per-query difference, now minus baseline.
        :param p_value: the paired test's p-value after the correction over the family
            (``None`` when undefined, or when the rule is not :attr:`TESTED`).
        :param alpha: the significance level.
        """
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The rule of a JSON form (:meth:`to_dict`), of the class its ``kind`` names.

        >>> GateRule.from_json(MaxDrop('ndcg@10', 0.01).to_json())
        MaxDrop(metric='ndcg@10', threshold=0.01, group=None)
        """
        rule = rule_from_json(data, "")
        if not isinstance(rule, cls):
            raise ValueError(f"kind {rule.kind!r} is a {type(rule).__name__}, not a {cls.__name__}")
        return rule


def _in_range(rule: _Thresholded, attribute: attrs.Attribute[Any], value: float) -> None:
    if rule.NOT_NEGATIVE and value < 0:
        raise ValueError(f"{rule.KIND} of {rule.metric!r} must be 0 or more")


@attrs.frozen
class _Thresholded(GateRule):
    """A rule with a number: the setting it is written with (``min = 0.6``,
    ``max_drop = 0.01``)."""

    NOT_NEGATIVE: ClassVar[bool] = False
    """Whether the threshold must be 0 or more."""

    threshold: float = attrs.field(validator=[_finite, _in_range], metadata=checked(finite))
    # Declared again after the threshold: the JSON form keeps metric, kind, threshold, group.
    group: str | None = attrs.field(
        default=None, kw_only=True, validator=_GROUP, metadata=_GROUP_JSON
    )

    @classmethod
    def _from_setting(cls, metric: str, setting: Any, where: str, group: str | None) -> GateRule:
        return cls(metric, number(setting, where), group=group)


@attrs.frozen
class Floor(_Thresholded):
    """A floor: the metric's mean must be at least ``threshold`` (``ndcg@10 >= 0.6``, ``min``
    in a TOML table), judged within :data:`TOLERANCE`, so a mean exactly at the floor holds
    whatever the binary rounding.

    :param metric: the metric key.
    :param threshold: the floor, a finite number.
    :param group: the query group it gates alone (see :class:`GateRule`).

    >>> rule = Floor('ndcg@10', 0.6)
    >>> rule.text, rule.kind
    ('ndcg@10 >= 0.6', 'min')
    >>> rule.judge(0.6, 0.7, -0.1, None, 0.05)
    (True, '0.6000 is at least the floor 0.6')
    """

    KIND: ClassVar[str] = "min"

    def _condition(self) -> str:
        return f"{self.metric} >= {self.threshold:g}"

    def judge(
        self,
        value: float,
        baseline: float,
        difference: float,
        p_value: float | None,
        alpha: float,
    ) -> tuple[bool, str]:
        """Whether the mean is at least the floor (see :meth:`GateRule.judge`)."""
        passed = value >= self.threshold - TOLERANCE
        return (
            passed,
            f"{value:.4f} is {'at least' if passed else 'under'} the floor {self.threshold:g}",
        )


@attrs.frozen
class MaxDrop(_Thresholded):
    """A tolerated drop: the metric's mean may fall at most ``threshold`` under the
    baseline's (``ndcg@10: max_drop = 0.01``), judged within :data:`TOLERANCE`, so a drop of
    exactly the tolerated size holds whatever the binary rounding.

    :param metric: the metric key.
    :param threshold: the tolerated drop, a finite number of 0 or more.
    :param group: the query group it gates alone (see :class:`GateRule`).
    :raises ValueError: for a negative drop (write a :class:`Floor` instead).

    >>> rule = MaxDrop('recall@10', 0.01)
    >>> rule.text
    'recall@10: max_drop = 0.01'
    >>> rule.judge(0.69, 0.70, -0.01, None, 0.05)
    (True, 'dropped 0.0100, within the tolerated 0.01')
    """

    KIND: ClassVar[str] = "max_drop"
    NOT_NEGATIVE: ClassVar[bool] = True

    def _condition(self) -> str:
        return f"{self.metric}: max_drop = {self.threshold:g}"

    def judge(
        self,
        value: float,
        baseline: float,
        difference: float,
        p_value: float | None,
        alpha: float,
    ) -> tuple[bool, str]:
        """Whether the mean fell no more than the tolerated drop (see :meth:`GateRule.judge`)."""
        drop = baseline - value
        passed = drop <= self.threshold + TOLERANCE
        if drop <= 0:
            return passed, "no drop"
        verdict = "within" if passed else "more than"
        return passed, f"dropped {drop:.4f}, {verdict} the tolerated {self.threshold:g}"


@attrs.frozen
class FailIfSignificantlyWorse(GateRule):
    """A significance-aware regression (``ndcg@10: fail_if = "significantly_worse"``): fails
    when the metric's mean is lower than the baseline's and the paired test, after the
    correction over every such rule of the gate, gives a p-value under ``alpha``.

    :param metric: the metric key.
    :param group: the query group it gates alone (see :class:`GateRule`); its p-value joins
        the one family all the same.

    ``threshold`` is always ``None``: the JSON form of every rule has one.

    >>> rule = FailIfSignificantlyWorse('ndcg@10')
    >>> rule.judge(0.60, 0.65, -0.05, 0.001, 0.05)
    (False, 'significantly worse (p = 0.0010, alpha 0.05)')
    >>> rule.judge(0.60, 0.65, -0.05, 0.05, 0.05)
    (True, 'lower, but not significantly (p = 0.0500, alpha 0.05)')
    """

    KIND: ClassVar[str] = "fail_if"
    TESTED: ClassVar[bool] = True

    threshold: None = attrs.field(
        default=None, init=False, repr=False, metadata=checked(optional(finite))
    )
    group: str | None = attrs.field(
        default=None, kw_only=True, validator=_GROUP, metadata=_GROUP_JSON
    )

    def _condition(self) -> str:
        return f'{self.metric}: fail_if = "{SIGNIFICANTLY_WORSE}"'

    @classmethod
    def _from_setting(cls, metric: str, setting: Any, where: str, group: str | None) -> GateRule:
        """The rule of ``fail_if = "significantly_worse"``, the one setting it takes."""
        if str(setting).strip().strip("'\"") != SIGNIFICANTLY_WORSE:
            raise ValueError(f'{where}: fail_if takes "{SIGNIFICANTLY_WORSE}", got {setting!r}')
        return cls(metric, group=group)

    def judge(
        self,
        value: float,
        baseline: float,
        difference: float,
        p_value: float | None,
        alpha: float,
    ) -> tuple[bool, str]:
        """Whether the mean is not significantly lower (see :meth:`GateRule.judge`): a
        p-value equal to ``alpha`` is not significant, an improvement never fails."""
        if difference >= 0:
            return True, "not worse than the baseline"
        if p_value is not None and p_value < alpha:
            return (
                False,
                f"significantly worse ({format_p_value(p_value, prefix=True)}, alpha {alpha:g})",
            )
        shown = "p undefined" if p_value is None else format_p_value(p_value, prefix=True)
        return True, f"lower, but not significantly ({shown}, alpha {alpha:g})"


RULES: dict[str, type[GateRule]] = {
    rule.KIND: rule for rule in (Floor, MaxDrop, FailIfSignificantlyWorse)
}
"""Each rule class by its ``kind``: the key of a metric's TOML table, the ``kind`` of JSON."""


def rule_from_json(value: Any, where: str) -> GateRule:
    """The rule of a JSON object (a rule's :meth:`~GateRule.to_dict`), of the class its
    ``kind`` names, every field checked; ``where`` names its place in a larger value."""
    with reading_json():
        return _rule_from_json(value, where)


def _rule_from_json(value: Any, where: str) -> GateRule:
    data = object_(value, where or "the rule")
    prefix = f"{where}." if where else ""
    if "kind" not in data:
        raise TypeError(f"{where}: missing field 'kind'" if where else "missing field 'kind'")
    kind = string(data["kind"], f"{prefix}kind")
    cls = RULES.get(kind)
    if cls is None:
        raise ValueError(f"{prefix}kind is {kind!r}; expected one of {', '.join(KINDS)}")
    fixed = [field for field in attrs.fields(cls) if not field.init]
    given = {name: item for name, item in data.items() if name not in {f.name for f in fixed}}
    rule: GateRule = structure(cls, given, where)
    for field in fixed:
        if field.name in data and data[field.name] != getattr(rule, field.name):
            raise ValueError(
                f"{prefix}{field.name} is {data[field.name]!r}; a {kind!r} rule has "
                f"{getattr(rule, field.name)!r}"
            )
    return rule


def number(text: Any, where: str) -> float:
    """``text`` read as a finite number; the error names ``where``."""
    if isinstance(text, bool):
        raise ValueError(f"{where}: expected a number, got {text!r}")
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}: expected a finite number, got {text!r}")
    return value
