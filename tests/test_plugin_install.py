"""Installed plugins, end to end: real wheels in a fresh virtual environment.

The core, the example plugin and three faulty test plugins (``tests/plugin_fixtures``) are built
as wheels and installed into one virtual environment per module; every check runs a probe script
there in a subprocess, so plugins arrive only through their entry points — never through
in-process registration or this checkout's ``sys.path``. (Plugins that misbehave in other ways
are in test_plugin_isolation.py, in an environment of their own.)
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ef.evaluation._scoring.measures.family_scorer import TREC_FAMILIES
from oracle import trec_eval_values
from plugin_venvs import FIXTURES, ROOT, build_venv, environment, outside_checkout, run

EXAMPLE = ROOT / "plugins" / "ef-evaluation-extra-metrics"
FAULTY = ("broken_import", "misspelled_hook", "raising_hook")
BUILTIN_METRICS = ["map", "mrr", "ndcg", "precision", "recall"]
# Every name the core registers: its five, every trec_eval family, and the measures the example
# plugin used to carry.
BUILTIN_NAMES = [
    *BUILTIN_METRICS,
    *(family.name for family in TREC_FAMILIES),
    "hit_rate",
    "judged",
    "r_precision",
]
EXTRA_METRICS = ["rbp"]
K_VALUES = (1, 3, 5)

QRELS = {
    "q1": {"d1": 2, "d2": 1, "d3": 0, "d4": -1},
    "q2": {"d5": 1, "d6": 0, "d7": 1, "d8": 3},
    "q3": {"d9": 1, "d1": 0},
    "q4": {"d2": 0},  # nothing relevant: skipped
}
RANKINGS = {
    "q1": ["d4", "d3", "d1", "x1", "d1", "d2"],
    "q2": ["x1", "d6", "x2", "d8", "d5"],
    "q3": ["d1", "x3"],
    "q4": ["d2"],
}

PROBE = """
import json, sys, warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import ef.evaluation as ev

    request = json.loads(sys.stdin.read())
    metric_names = list(ev.RETRIEVAL_METRICS)
    metrics = ev.registry().metrics
    plugins = ev.list_plugins()
    rankings = request["rankings"]
    report = ev.evaluate_retrieval(
        lambda query, *, limit: rankings[query][:limit],
        request["qrels"],
        {q: q for q in request["qrels"]},
        k_values=request["k_values"],
        metrics=request["metrics"],
        limit=20,
    )
    run_report = ev.evaluate_run(
        rankings, request["qrels"], k_values=request["k_values"], metrics=request["metrics"]
    )
    # A second use of everything: a faulty plugin is reported once, not on every use.
    list(ev.RETRIEVAL_METRICS), ev.list_plugins(), ev.registry()

json.dump(
    {
        "prefix": sys.prefix,
        "core": ev.__file__,
        "sys_path": sys.path,
        "metric_names": metric_names,
        "metric_plugins": {name: metric.plugin for name, metric in metrics.items()},
        "plugins": [
            {
                "name": info.name,
                "distribution": info.distribution,
                "version": info.version,
                "hooks": list(info.hooks),
                "builtin": info.builtin,
            }
            for info in plugins
        ],
        "modules": {
            name: sys.modules[name].__file__
            for name in sys.modules
            if name.startswith("ef_evaluation_")
        },
        "per_query": report.per_query,
        "run_per_query": run_report.per_query,
        "warnings": [
            {
                "category": f"{w.category.__module__}.{w.category.__qualname__}",
                "message": str(w.message),
            }
            for w in caught
        ],
    },
    sys.stdout,
)
"""


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the core, the example plugin and the faulty plugins."""
    base = tmp_path_factory.mktemp("plugin-install")
    return build_venv(base, [ROOT, EXAMPLE, *(FIXTURES / name for name in FAULTY)])


def probe(python: Path, selection: str | None, metrics: Sequence[str]) -> dict[str, Any]:
    """Run the probe in the test environment with ``EF_EVALUATION_PLUGINS`` set to ``selection``
    (``None``: unset), outside this checkout so nothing is imported from it."""
    request = {"qrels": QRELS, "rankings": RANKINGS, "k_values": K_VALUES, "metrics": metrics}
    output = run(
        [python, "-c", PROBE],
        input=json.dumps(request),
        env=environment(selection),
        **outside_checkout(python),
    )
    result: dict[str, Any] = json.loads(output)
    return result


@pytest.fixture(scope="module")
def all_plugins(venv_python: Path) -> dict[str, Any]:
    return probe(venv_python, None, [*BUILTIN_METRICS, *EXTRA_METRICS])


@pytest.fixture(scope="module")
def no_plugins(venv_python: Path) -> dict[str, Any]:
    return probe(venv_python, "", BUILTIN_METRICS)


@pytest.fixture(scope="module")
def selected_plugins(venv_python: Path) -> dict[str, Any]:
    # One entry-point name, one distribution name, one name nothing has.
    selection = "extra_metrics, ef-evaluation-raising-hook ,no_such_plugin"
    return probe(venv_python, selection, ["ndcg", "rbp"])


def plugin_warnings(result: Mapping[str, Any], needle: str) -> list[str]:
    found = [w for w in result["warnings"] if needle in w["message"]]
    assert all(w["category"] == "ef.evaluation.PluginWarning" for w in found), found
    return [w["message"] for w in found]


def third_party(result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {info["name"]: info for info in result["plugins"] if not info["builtin"]}


def trec_eval_expected(metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    """pytrec_eval's values for the scored queries, keyed like ef's reports: the built-in
    ``metrics`` and the example plugin's (rank-biased precision, which trec_eval lacks, summed
    by its definition)."""
    scored = {q: r for q, r in QRELS.items() if any(grade > 0 for grade in r.values())}
    expected = trec_eval_values(RANKINGS, scored, metrics, K_VALUES)
    for q, row in expected.items():
        top = list(dict.fromkeys(RANKINGS[q]))
        for k in K_VALUES:
            row[f"rbp@{k}"] = sum(
                0.2 * 0.8**i for i, doc_id in enumerate(top[:k]) if QRELS[q].get(doc_id, 0) > 0
            )
    return expected


def test_the_example_plugin_comes_from_its_installed_distribution(all_plugins):
    environment = Path(all_plugins["prefix"])
    module = Path(all_plugins["modules"]["ef_evaluation_extra_metrics"])
    assert module.is_relative_to(environment)
    assert Path(all_plugins["core"]).is_relative_to(environment)
    checkout = {ROOT, ROOT / "src", ROOT / "tests", EXAMPLE, EXAMPLE / "src"}
    assert not checkout & {Path(entry).resolve() for entry in all_plugins["sys_path"] if entry}


def test_the_example_metrics_are_in_retrieval_metrics(all_plugins):
    assert all_plugins["metric_names"] == [*BUILTIN_NAMES, *EXTRA_METRICS]
    for name in EXTRA_METRICS:
        assert all_plugins["metric_plugins"][name] == "extra_metrics"


def test_installed_metrics_equal_trec_eval_in_evaluate_retrieval_and_evaluate_run(all_plugins):
    expected = trec_eval_expected(BUILTIN_METRICS)
    assert sorted(all_plugins["per_query"]) == sorted(expected)
    for q, values in all_plugins["per_query"].items():
        assert values.keys() == expected[q].keys()
        for key, value in values.items():
            assert value == pytest.approx(expected[q][key], abs=1e-9), (q, key)
    assert all_plugins["run_per_query"] == all_plugins["per_query"]


def test_list_plugins_names_distribution_version_and_hooks(all_plugins):
    pyproject = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    assert third_party(all_plugins)["extra_metrics"] == {
        "name": "extra_metrics",
        "distribution": "ef-evaluation-extra-metrics",
        "version": pyproject["project"]["version"],
        "hooks": ["ef_evaluation_register_metrics"],
        "builtin": False,
    }
    builtins = [info["builtin"] for info in all_plugins["plugins"]]
    assert builtins == sorted(builtins, reverse=True), "built-ins are listed first"


def test_unset_selection_loads_every_installed_plugin(all_plugins):
    assert set(third_party(all_plugins)) == {"extra_metrics", "raising_hook"}
    for name in ("broken_import", "misspelled_hook"):
        assert len(plugin_warnings(all_plugins, f"plugin {name!r}")) == 1


def test_a_plugin_that_fails_to_import_is_skipped_with_one_warning(all_plugins):
    [message] = plugin_warnings(all_plugins, "'broken_import'")
    assert "distribution ef-evaluation-broken-import 0.2.0" in message
    assert "ModuleNotFoundError: No module named 'ef_evaluation_missing_dependency'" in message
    assert "broken_import" not in third_party(all_plugins)
    assert "broken_import_metric" not in all_plugins["metric_names"]


def test_a_plugin_whose_hook_raises_loses_its_metrics_with_one_warning(all_plugins):
    [message] = plugin_warnings(all_plugins, "'raising_hook'")
    assert "distribution ef-evaluation-raising-hook 0.3.0" in message
    assert "ef_evaluation_register_metrics" in message
    assert "RuntimeError: the metric table could not be read" in message
    # It registered a metric before raising; that registration is withdrawn too.
    assert "raising_hook_metric" not in all_plugins["metric_names"]


def test_a_misspelled_hook_is_reported_and_its_plugin_skipped(all_plugins):
    [message] = plugin_warnings(all_plugins, "'misspelled_hook'")
    assert "distribution ef-evaluation-misspelled-hook 0.4.0" in message
    assert re.search(r"\bef_evaluation_register_metric\b", message)
    assert "misspelled_hook" not in third_party(all_plugins)
    assert "misspelled_hook_metric" not in all_plugins["metric_names"]


def test_faulty_plugins_cause_no_other_warning(all_plugins):
    assert len(all_plugins["warnings"]) == 3, all_plugins["warnings"]


def test_an_empty_selection_loads_only_the_builtins(no_plugins):
    assert third_party(no_plugins) == {}
    assert no_plugins["metric_names"] == BUILTIN_NAMES
    assert no_plugins["warnings"] == []
    expected = trec_eval_expected(BUILTIN_METRICS)
    for q, values in no_plugins["per_query"].items():
        for key, value in values.items():
            assert value == pytest.approx(expected[q][key], abs=1e-9), (q, key)


def test_a_selection_loads_only_the_named_plugins(selected_plugins):
    assert set(third_party(selected_plugins)) == {"extra_metrics", "raising_hook"}
    assert selected_plugins["metric_names"] == [*BUILTIN_NAMES, *EXTRA_METRICS]
    # The others are not even imported, so they cannot warn.
    assert plugin_warnings(selected_plugins, "broken_import") == []
    assert plugin_warnings(selected_plugins, "misspelled_hook") == []
    assert len(plugin_warnings(selected_plugins, "'raising_hook'")) == 1
    assert "ef_evaluation_broken_import" not in selected_plugins["modules"]
    expected = trec_eval_expected(["ndcg"])
    for q, values in selected_plugins["per_query"].items():
        assert values == pytest.approx({key: expected[q][key] for key in values}, abs=1e-9)


def test_a_selected_name_no_plugin_has_is_reported(selected_plugins):
    [message] = plugin_warnings(selected_plugins, "no_such_plugin")
    assert "EF_EVALUATION_PLUGINS" in message
    assert len(selected_plugins["warnings"]) == 2
