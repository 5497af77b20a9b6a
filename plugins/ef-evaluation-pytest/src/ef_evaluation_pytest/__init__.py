"""ef-evaluation's quality gate in pytest: the ``ef_check`` fixture::

    def test_search_quality(ef_check):
        ef_check(my_retriever, dataset="builtin:stdlib-docs", baseline="baselines/search.json",
                 rules={"ndcg@10": {"fail_if": "significantly_worse"}})

The test fails with the summary ``ef-eval check`` prints when a rule fails;
``pytest --ef-update-baselines`` writes each baseline from the run instead. pytest loads this
module in every run of a project that installs it: ef itself is imported only when a test asks
for ``ef_check``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ef_evaluation_pytest._option import UPDATE_OPTION

if TYPE_CHECKING:
    from ef_evaluation_pytest._gate import QualityGate, Rules

__all__ = ["UPDATE_OPTION", "QualityGate", "Rules", "ef_check"]

_WRITTEN = pytest.StashKey[dict[Path, str]]()


def __getattr__(name: str) -> Any:
    if name in {"QualityGate", "Rules"}:
        from ef_evaluation_pytest import _gate

        return getattr(_gate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ef-evaluation", "ef-evaluation quality gate")
    group.addoption(
        UPDATE_OPTION,
        action="store_true",
        default=False,
        help="write each ef_check baseline from the current run instead of checking against it",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_WRITTEN] = {}


@pytest.fixture
def ef_check(request: pytest.FixtureRequest) -> QualityGate:
    """Check a retriever against a saved baseline under rules; a failed rule fails the test.

    ``ef_check(retriever, baseline=..., rules=..., dataset=...)`` (or ``qrels=``,
    ``queries=``); ``await ef_check.check_async(...)`` in an async test. See
    :class:`~ef_evaluation_pytest.QualityGate`.
    """
    from ef_evaluation_pytest._gate import QualityGate

    return QualityGate(
        folder=request.path.parent,
        rootpath=request.config.rootpath,
        update=bool(request.config.getoption("ef_update_baselines")),
        written=request.config.stash[_WRITTEN],
        test=request.node.nodeid,
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    written = terminalreporter.config.stash.get(_WRITTEN, {})
    if written:
        terminalreporter.write_sep("-", "ef-evaluation baselines written")
        for path in written:
            terminalreporter.write_line(str(path))
