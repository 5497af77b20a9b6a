"""Checking a report against a baseline report under the gate's rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ef.evaluation._compare import stats as _stats
from ef.evaluation._compare.compare import compare
from ef.evaluation._compare.report import PairedComparison
from ef.evaluation._gate.report import FAIL, PASS, CheckReport, RuleResult
from ef.evaluation._gate.rules import TOLERANCE, GateRule
from ef.evaluation._report.reports import RetrievalEvalReport

__all__ = ["TOLERANCE", "VALUE_OPTIONS", "changed_inputs", "check", "unproven_inputs"]

VALUE_OPTIONS = (
    "relevance_level",
    "judged_only",
    "ignore_identical_ids",
    "missing_queries",
    "depth",
)
"""The recorded options that change a metric's value: a baseline made under others is
refused (the cutoffs and metric list only say which values were computed)."""

# Recorded only when not the default.
_DEFAULTS: dict[str, Any] = {"relevance_level": None, "judged_only": False, "depth": None}
_GATE_TESTS = ("t-test", "randomization", "wilcoxon")


def _short(value: Any) -> str:
    return f"{value[:12]}…" if isinstance(value, str) and len(value) > 12 else repr(value)


def changed_inputs(
    baseline: Mapping[str, Any], current: Mapping[str, Any]
) -> tuple[list[str], list[str]]:
    """What differs between two reports' manifests: the changed inputs (qrels, queries, each
    described) and the changed options (each described).

    >>> changed_inputs({'fingerprints': {'qrels': 'a'}}, {'fingerprints': {'qrels': 'b'}})
    (["qrels (fingerprint 'a' in the baseline, 'b' now)"], [])
    """
    inputs = []
    old, new = _fingerprints(baseline), _fingerprints(current)
    for key in ("qrels", "queries"):
        if key in old and key in new and old[key] != new[key]:
            inputs.append(
                f"{key} (fingerprint {_short(old[key])} in the baseline, {_short(new[key])} now)"
            )
    options = []
    old_options, new_options = _parameters(baseline), _parameters(current)
    for key in VALUE_OPTIONS:
        default = _DEFAULTS.get(key)
        if key not in _DEFAULTS and (key not in old_options or key not in new_options):
            continue  # recorded by one kind of evaluation only
        if old_options.get(key, default) != new_options.get(key, default):
            options.append(
                f"option {key} ({old_options.get(key)!r} in the baseline, "
                f"{new_options.get(key)!r} now)"
            )
    return inputs, options


def _fingerprints(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    found = manifest.get("fingerprints")
    return found if isinstance(found, Mapping) else {}


def _parameters(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    found = manifest.get("parameters")
    return found if isinstance(found, Mapping) else {}


def _lacking(baseline: Mapping[str, Any], section: str) -> str:
    """What the baseline's manifest lacks of ``section`` (``"fingerprints"``, ``"parameters"``)."""
    found = baseline.get(section)
    if not baseline:
        return "it has no manifest"
    if found is None:
        return f"its manifest has no {section}"
    if not isinstance(found, Mapping):
        return f"its {section} are a {type(found).__name__}, not a table"
    return f"its {section} have no qrels"


def unproven_inputs(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What the current report's manifest records and the baseline's does not, each with what
    the baseline lacks: such a baseline cannot show it was made on the same qrels and options.

    Only the qrels' fingerprint is required: a baseline made from a run file records no
    queries, and checks a retriever's report (which does) all the same.

    >>> unproven_inputs({}, {'fingerprints': {'qrels': 'a'}, 'parameters': {}})
    ['the fingerprint of its qrels (it has no manifest)', 'the options it was made under (it \
has no manifest)']
    >>> unproven_inputs({'fingerprints': 'a'}, {'fingerprints': {'qrels': 'a'}})
    ['the fingerprint of its qrels (its fingerprints are a str, not a table)']
    """
    unproven = []
    found = baseline.get("fingerprints")
    if "qrels" in _fingerprints(current) and not (
        isinstance(found, Mapping) and found.get("qrels")
    ):
        unproven.append(f"the fingerprint of its qrels ({_lacking(baseline, 'fingerprints')})")
    if isinstance(current.get("parameters"), Mapping) and not isinstance(
        baseline.get("parameters"), Mapping
    ):
        unproven.append(f"the options it was made under ({_lacking(baseline, 'parameters')})")
    return unproven


def _restricted(report: RetrievalEvalReport, query_ids: Sequence[str]) -> RetrievalEvalReport:
    per_query = report.per_query
    return RetrievalEvalReport({}, {q: per_query[q] for q in query_ids}, len(query_ids), (1,))


def _queries(
    baseline: RetrievalEvalReport, current: RetrievalEvalReport, allowed: bool
) -> tuple[list[str], list[str]]:
    """The queries compared, and the notes on those left out."""
    old, new = baseline.per_query, current.per_query
    common = [q for q in old if q in new]
    only_old = [q for q in old if q not in new]
    only_new = [q for q in new if q not in old]
    notes = []
    if only_old or only_new:
        detail = f"{len(only_old)} only in the baseline, {len(only_new)} only now"
        if not allowed:
            raise ValueError(
                f"the baseline was scored on other queries ({detail}): make the baseline "
                "again, or compare on the common queries (allow_changed_qrels)"
            )
        notes.append(f"compared on the {len(common)} common queries ({detail})")
    if not common:
        raise ValueError("no query in common with the baseline: nothing to compare")
    return common, notes


def check(
    current: RetrievalEvalReport,
    baseline: RetrievalEvalReport,
    rules: Sequence[GateRule],
    *,
    alpha: float = 0.05,
    test: str = "t-test",
    correction: str | None = "holm",
    allow_changed_qrels: bool = False,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    seed: int = 0,
) -> CheckReport:
    """Check a retrieval report against a baseline report under ``rules``.

    Each rule judges its metric's numbers itself (:meth:`GateRule.judge`): a :class:`Floor`
    holds when the metric's mean is at least the threshold, a :class:`MaxDrop` when the mean
    falls by no more than it from the baseline's — both judged within :data:`TOLERANCE`
    (1e-9), so a drop of exactly the tolerated size passes whatever the binary rounding of the
    means — and a :class:`FailIfSignificantlyWorse` fails when the mean is lower than the
    baseline's and the paired ``test`` (two-sided, by :func:`compare`), after ``correction``
    over the metrics under such a rule, is under ``alpha``. The queries are paired by id.
    Every rule also shows the paired bootstrap interval of the difference at
    ``confidence_level``. A rule with a ``group`` judges that query group's queries alone (by
    the current report's groups, see :doc:`/groups`; its ``fail_if`` p-value joins the one
    family), and the report's notes list every group of the current report with its compared
    queries.

    The baseline must have been made on the same qrels, queries and value-changing options
    (the manifests' fingerprints and :data:`VALUE_OPTIONS`): otherwise a :class:`ValueError`
    names what changed, unless ``allow_changed_qrels``, which compares on the common queries
    and says so in the report's notes (changed options are always refused). A baseline that
    does not record the fingerprint of its qrels, or its options, while the current report
    does (a manifest edited or lost) cannot show that, and is refused the same way.

    :raises ValueError: for no rule, an unknown test, correction or metric, a report with
        failed queries, or a baseline made on other inputs.
    :raises TypeError: for a report that is not a :class:`RetrievalEvalReport`, or a rule that
        is not a :class:`GateRule`.
    """
    for name, report in (("current", current), ("baseline", baseline)):
        if not isinstance(report, RetrievalEvalReport):
            raise TypeError(f"{name}: expected a RetrievalEvalReport, got {type(report).__name__}")
    if isinstance(rules, str | GateRule):
        one = "GateRule" if isinstance(rules, GateRule) else type(rules).__name__
        raise TypeError(f"rules: expected a list of GateRule, got one {one}")
    for index, rule in enumerate(rules):
        if not isinstance(rule, GateRule):
            raise TypeError(
                f"rules[{index}]: expected a GateRule (Floor, MaxDrop, FailIfSignificantlyWorse "
                f"or parse_rule('ndcg@10 >= 0.5')), got a {type(rule).__name__}: {rule!r}"
            )
    if not rules:
        raise ValueError("no rule to check: give at least one (such as 'ndcg@10 >= 0.5')")
    if test not in _GATE_TESTS:
        raise ValueError(f"unknown test {test!r}: expected one of {', '.join(_GATE_TESTS)}")
    changed, options = changed_inputs(baseline.manifest, current.manifest)
    if options:
        raise ValueError(
            "the baseline was made under other options: "
            + "; ".join(options)
            + ": make the baseline again"
        )
    notes = []
    if unproven := unproven_inputs(baseline.manifest, current.manifest):
        problem = "the baseline does not record " + "; nor ".join(unproven)
        if not allow_changed_qrels:
            raise ValueError(
                f"{problem}, so it cannot show it was made on the same judgements and options: "
                "make the baseline again, or compare on the common queries (allow_changed_qrels)"
            )
        notes.append(f"{problem}: compared without knowing it was made on the same inputs")
    if changed:
        if not allow_changed_qrels:
            raise ValueError(
                "the baseline was made on other inputs: "
                + "; ".join(changed)
                + ": make the baseline again, or compare on the common queries "
                "(allow_changed_qrels)"
            )
        notes.append("the baseline was made on other inputs: " + "; ".join(changed))
    query_ids, query_notes = _queries(baseline, current, allow_changed_qrels)
    notes.extend(query_notes)
    by_group: dict[str | None, list[str]] = {}
    for rule in rules:
        if rule.metric not in by_group.setdefault(rule.group, []):
            by_group[rule.group].append(rule.metric)
    rows: dict[tuple[str | None, str], PairedComparison] = {}
    sizes: dict[str | None, int] = {}
    for group, metrics in by_group.items():
        ids = query_ids if group is None else _group_queries(current, group, query_ids)
        sizes[group] = len(ids)
        comparison = compare(
            {"baseline": _restricted(baseline, ids), "current": _restricted(current, ids)},
            baseline="baseline",
            metrics=metrics,
            tests=(test, "bootstrap"),
            correction=None,
            alpha=alpha,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            n_permutations=n_permutations,
            seed=seed,
        )
        rows.update({(group, m): comparison.comparison("current", m) for m in metrics})
    notes.extend(_group_notes(current, query_ids))
    p_values = _family_p_values(rows, rules, test, correction)
    results = [
        _judged(rule, rows[rule.group, rule.metric], p_values.get((rule.group, rule.metric)), alpha)
        for rule in rules
    ]
    results = [
        result
        if result.rule.group is None
        else attrs.evolve(
            result,
            reason=f"group {result.rule.group} ({sizes[result.rule.group]} queries): "
            + result.reason,
        )
        for result in results
    ]
    return CheckReport(
        results=results,
        n_queries=len(query_ids),
        test=test,
        correction=correction,
        alpha=alpha,
        notes=notes,
    )


Key = tuple[str | None, str]


def _family_p_values(
    rows: Mapping[Key, PairedComparison],
    rules: Sequence[GateRule],
    test: str,
    correction: str | None,
) -> dict[Key, float | None]:
    """The p-values of the metrics under a ``fail_if`` rule (each group's apart), corrected
    as one family."""
    family = list(dict.fromkeys((r.group, r.metric) for r in rules if r.TESTED))
    defined = [(k, p) for k in family if (p := rows[k].p_values.get(test)) is not None]
    adjusted = _stats.adjust_p_values([p for _, p in defined], correction)
    found: dict[Key, float | None] = dict.fromkeys(family)
    found.update({k: value for (k, _), value in zip(defined, adjusted, strict=True)})
    return found


def _group_queries(current: RetrievalEvalReport, group: str, query_ids: Sequence[str]) -> list[str]:
    """The compared queries of ``group``, by the current report's groups."""
    if group not in current.groups:
        held = ", ".join(map(repr, current.groups)) or "none: evaluate it with groups="
        raise ValueError(f"a rule gates query group {group!r}, which the report lacks ({held})")
    ids = [q for q in query_ids if group in current.query_groups.get(q, ())]
    if not ids:
        raise ValueError(f"query group {group!r} has no compared query: nothing to gate")
    return ids


def _group_notes(current: RetrievalEvalReport, query_ids: Sequence[str]) -> list[str]:
    """Every query group of the current report, with its compared queries."""
    if not current.groups:
        return []
    counts = dict.fromkeys(current.groups, 0)
    for query in query_ids:
        for group in current.query_groups.get(query, ()):
            counts[group] += 1
    listed = ", ".join(f"{group} ({n} queries)" for group, n in counts.items())
    return [f"query groups: {listed}"]


def _judged(
    rule: GateRule, row: PairedComparison, p_value: float | None, alpha: float
) -> RuleResult:
    value, baseline, difference = row.mean, row.baseline_mean, row.difference
    passed, reason = rule.judge(value, baseline, difference, p_value, alpha)
    return RuleResult(
        rule=rule,
        verdict=PASS if passed else FAIL,
        value=value,
        baseline=baseline,
        difference=difference,
        interval=row.confidence_interval,
        p_value=p_value if rule.TESTED else None,
        reason=reason,
    )
