"""The gate a test calls: score a retriever, check it against its baseline, fail the test."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest

from ef.evaluation import (
    CheckReport,
    GateConfig,
    GateRule,
    RetrievalEvalReport,
    check,
    evaluate_retrieval,
    evaluate_retrieval_async,
    parse_rule,
    read_dataset,
    read_gate_config,
    read_report,
    resolve_builtin,
    write_text_atomically,
)
from ef_evaluation_pytest._option import UPDATE_OPTION

__all__ = ["QualityGate", "Rules"]

Rules = Mapping[str, Mapping[str, Any]] | Iterable[str | GateRule]
"""The rules a test gives: the TOML table's shape (``{"ndcg@10": {"min": 0.5}}``) or rules as
the command line writes them (``["ndcg@10 >= 0.5"]``), or :class:`~ef.evaluation.GateRule`\\ s."""


def _rules(rules: Rules) -> tuple[GateRule, ...]:
    if isinstance(rules, Mapping):
        found: list[GateRule] = []
        for metric, table in rules.items():
            if not isinstance(table, Mapping):
                raise TypeError(
                    f"rules[{metric!r}]: expected a table of rules such as "
                    f"{{'min': 0.5}}, got {table!r}"
                )
            found.extend(parse_rule(f"{metric}: {key} = {value}") for key, value in table.items())
        return tuple(found)
    if isinstance(rules, str):
        return (parse_rule(rules),)
    return tuple(rule if isinstance(rule, GateRule) else parse_rule(rule) for rule in rules)


@attrs.define
class _Checked:
    """One call's inputs, resolved: what to score and against which baseline, under what."""

    baseline: Path
    config: GateConfig
    qrels: Any
    queries: Any
    allow_changed_qrels: bool
    options: dict[str, Any]

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(rule.metric for rule in self.config.rules))


@attrs.define
class QualityGate:
    """What the ``ef_check`` fixture gives a test: call it with a retriever, its dataset, a
    baseline and rules; it fails the test, with the summary ``ef-eval check`` prints, when a
    rule fails.

    :param folder: where a relative baseline path starts (the test file's folder).
    :param rootpath: pytest's root folder, whose ``pyproject.toml`` gives the rules a call
        does not.
    :param update: ``--ef-update-baselines``: write the baselines instead of checking.
    :param written: the baselines written in this session, each with the test that wrote it:
        for the terminal summary, and so that no second test replaces one (the last would win
        unseen).
    :param test: the test calling (its node id).
    """

    folder: Path
    rootpath: Path
    update: bool = False
    written: dict[Path, str] = attrs.field(factory=dict)
    test: str = "this test"

    def __call__(
        self,
        retriever: Any,
        *,
        baseline: str | os.PathLike[str],
        rules: Rules | None = None,
        dataset: str | os.PathLike[str] | None = None,
        reader: str = "beir",
        qrels: Any = None,
        queries: Any = None,
        alpha: float | None = None,
        test: str | None = None,
        correction: str | None = None,
        allow_changed_qrels: bool = False,
        **options: Any,
    ) -> CheckReport | None:
        """Score ``retriever`` (anything :func:`~ef.evaluation.evaluate_retrieval` takes,
        sync or async) and check it against ``baseline`` under ``rules``.

        :param baseline: the baseline report (JSON), relative to the test file's folder.
        :param rules: the rules (:data:`Rules`); ``None``: the ``[tool.ef-evaluation.check]``
            table of the ``pyproject.toml`` in pytest's root folder.
        :param dataset: what :func:`~ef.evaluation.read_dataset` reads with ``reader``
            (a BEIR folder, ``builtin:NAME``); else give ``qrels`` and ``queries``.
        :param alpha: the significance level (the table's, else 0.05).
        :param test: the paired test (the table's, else ``"t-test"``).
        :param correction: the correction over the metrics under ``fail_if`` (the table's,
            else ``"holm"``; ``"none"`` for none).
        :param allow_changed_qrels: compare on the common queries when the baseline's qrels
            or queries changed.
        :param options: passed to :func:`~ef.evaluation.evaluate_retrieval`.
        :returns: the :class:`~ef.evaluation.CheckReport` when every rule holds; ``None``
            under ``--ef-update-baselines`` (the baseline was written).
        """
        checked = self._resolved(locals())
        current = evaluate_retrieval(
            retriever,
            checked.qrels,
            checked.queries,
            metrics=checked.metrics,
            progress=False,
            **checked.options,
        )
        return self._judged(current, checked)

    async def check_async(
        self,
        retriever: Any,
        *,
        baseline: str | os.PathLike[str],
        rules: Rules | None = None,
        dataset: str | os.PathLike[str] | None = None,
        reader: str = "beir",
        qrels: Any = None,
        queries: Any = None,
        alpha: float | None = None,
        test: str | None = None,
        correction: str | None = None,
        allow_changed_qrels: bool = False,
        **options: Any,
    ) -> CheckReport | None:
        """The same check awaited in the test's event loop (an async test under anyio's or
        pytest-asyncio's plugin), for a retriever bound to that loop: the evaluation is
        :func:`~ef.evaluation.evaluate_retrieval_async`."""
        checked = self._resolved(locals())
        current = await evaluate_retrieval_async(
            retriever,
            checked.qrels,
            checked.queries,
            metrics=checked.metrics,
            progress=False,
            **checked.options,
        )
        return self._judged(current, checked)

    def _config(self, given: Mapping[str, Any]) -> GateConfig:
        if given["rules"] is not None:
            config = GateConfig(rules=_rules(given["rules"]))
        else:
            pyproject = self.rootpath / "pyproject.toml"
            if not pyproject.is_file():
                pytest.fail(
                    f"ef_check: no rules: give rules=..., or a [tool.ef-evaluation.check] "
                    f"table in {pyproject}",
                    pytrace=False,
                )
            config = read_gate_config(pyproject)
        correction = given["correction"]
        chosen = GateConfig(
            alpha=given["alpha"],
            test=given["test"],
            correction=None if correction == "none" else correction,
            has_correction=correction is not None,
        )
        config = config.updated(chosen)
        if not config.rules:
            pytest.fail("ef_check: no rules to check", pytrace=False)
        return config

    def _resolved(self, given: dict[str, Any]) -> _Checked:
        config = self._config(given)
        qrels, queries = given["qrels"], given["queries"]
        if given["dataset"] is not None:
            if qrels is not None or queries is not None:
                raise TypeError("ef_check: give dataset=, or qrels= and queries=, not both")
            source = resolve_builtin(os.fspath(given["dataset"]))
            _, queries, qrels = read_dataset(source, reader=given["reader"])
        elif qrels is None or queries is None:
            raise TypeError("ef_check: give dataset=, or qrels= and queries=")
        return _Checked(
            baseline=self.folder / given["baseline"],
            config=config,
            qrels=qrels,
            queries=queries,
            allow_changed_qrels=given["allow_changed_qrels"],
            options=dict(given["options"]),
        )

    def _judged(self, current: RetrievalEvalReport, checked: _Checked) -> CheckReport | None:
        path = checked.baseline
        if self.update:
            key = path.resolve()
            if key in self.written:
                pytest.fail(
                    f"{path}: {self.written[key]} and {self.test} both name this baseline, "
                    f"and it holds {self.written[key]}'s run: give each test its own baseline",
                    pytrace=False,
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            with write_text_atomically(path) as sink:
                sink.write(current.to_json(indent=1) + "\n")
            self.written[key] = self.test
            return None
        if not path.is_file():
            pytest.fail(
                f"{path}: no baseline: run pytest {UPDATE_OPTION} to write it from this run, "
                "then commit it",
                pytrace=False,
            )
        try:
            baseline = read_report(path)
            if not isinstance(baseline, RetrievalEvalReport):
                raise ValueError(f"a {type(baseline).__name__}, not a retrieval report")
            report = check(
                current,
                baseline,
                checked.config.rules,
                allow_changed_qrels=checked.allow_changed_qrels,
                **checked.config.check_options(),
            )
        except (ValueError, TypeError) as error:
            # The test fails outside this block: within it, pytest shows the error above too.
            problem = str(error)
        else:
            if not report.passed:
                pytest.fail(report.to_text(), pytrace=False)
            return report
        if not problem.startswith(str(path)):
            problem = f"{path}: {problem}"
        advice = f"make the baseline again ({UPDATE_OPTION})"
        pytest.fail(problem.replace("make the baseline again", advice), pytrace=False)
