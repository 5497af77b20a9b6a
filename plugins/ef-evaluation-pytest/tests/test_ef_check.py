"""The ``ef_check`` fixture, run by pytest in a project of its own (``pytester``).

Each test writes a small project — the generated search results of ``gate_data.py`` and a test
file using ``ef_check`` — and runs pytest on it. The plugin arrives only through its installed
``pytest11`` entry point: in a subprocess, a fresh interpreter, for the first baseline written;
in this process (``runpytest_inprocess``: a pytest session of its own, without the start of an
interpreter and of its imports) for the rest. The baselines' values are checked against
pytrec_eval, the failure message against what ``ef-eval check`` prints for the same run.
"""

from __future__ import annotations

import json
import re
import runpy
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval

# An in-process run drops the modules it imported when it ends; numpy's extension modules, which
# the gate's statistics import through scipy, cannot be loaded twice in one process: imported
# here, they stay loaded across the runs.
import scipy.stats  # noqa: F401

import ef_evaluation_pytest
from ef.evaluation import read_beir, resolve_builtin, write_trec_qrels, write_trec_run
from ef.evaluation.cli import main
from ef_evaluation_pytest import _gate

pytest_plugins = ["pytester"]

DATA = Path(__file__).with_name("gate_data.py")
GATE_DATA: dict[str, Any] = runpy.run_path(str(DATA))
# Plugins of this environment the projects do not use, left out so each run starts quickly;
# a run that hangs fails on its own timeout, then on this test's (or the subprocess's).
ARGS = (
    "-p",
    "no:hypothesispytest",
    "-p",
    "no:langsmith_plugin",
    "-p",
    "no:xdist",
    "-p",
    "no:xdist.looponfail",
    "-p",
    "no:cacheprovider",
    "-W",
    "error",
    "--timeout=100",
)
RULES = {
    "ndcg@10": {"min": 0.3, "fail_if": "significantly_worse"},
    "recall@10": {"max_drop": 0.02, "fail_if": "significantly_worse"},
}
RULE_LINES = [
    "ndcg@10 >= 0.3",
    'ndcg@10: fail_if = "significantly_worse"',
    "recall@10: max_drop = 0.02",
    'recall@10: fail_if = "significantly_worse"',
]
SEARCH_TESTS = f"""
import pytest
from gate_data import QRELS, QUERIES, retriever

RULES = {RULES!r}


def gate(ef_check, search):
    ef_check(search, qrels=QRELS, queries=QUERIES, baseline="baselines/search.json", rules=RULES)


def test_baseline(ef_check):
    gate(ef_check, retriever())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_regression(ef_check, seed):
    gate(ef_check, retriever(lose=0.10, seed=seed))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_noise(ef_check, seed):
    gate(ef_check, retriever(noise=True, seed=seed))
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest on the project, in this process. Its timeouts use this process's alarm signal,
    as this test's own does: this test's alarm is set again after the run, less the time the
    run took."""
    handler = signal.getsignal(signal.SIGALRM)
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    try:
        return pytester.runpytest_inprocess(*ARGS, *args)
    finally:
        if handler is not None:
            signal.signal(signal.SIGALRM, handler)
        if left:
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - started), 0.01))


def run_subprocess(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest on the project in a fresh interpreter."""
    return pytester.runpytest_subprocess(*ARGS, *args, timeout=240)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(gate_data=DATA.read_text(encoding="utf-8"))
    pytester.makepyfile(test_search=SEARCH_TESTS)
    return pytester


def baseline_path(pytester: pytest.Pytester) -> Path:
    return pytester.path / "baselines" / "search.json"


def failure(output: str, test: str) -> str:
    """What pytest shows under the heading of ``test``'s failure."""
    heading = re.search(rf"^_+ {re.escape(test)} _+$", output, re.MULTILINE)
    assert heading is not None, test
    rest = output[heading.end() :]
    end = re.search(r"^(_{3,} \S.* _{3,}|-{3,} \S.* -{3,}|={3,}.*)$", rest, re.MULTILINE)
    return rest[: end.start() if end else None].strip("\n")


def oracle(rankings: dict[str, list[str]], measure: str = "ndcg_cut.10") -> dict[str, float]:
    """pytrec_eval's ``measure`` of each query's whole ranking."""
    run = {
        q: {doc: float(100 - rank) for rank, doc in enumerate(docs)} for q, docs in rankings.items()
    }
    qrels = {q: {d: int(g) for d, g in docs.items()} for q, docs in GATE_DATA["QRELS"].items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure})
    key = measure.replace(".", "_")
    return {q: values[key] for q, values in evaluator.evaluate(run).items()}


def test_update_baselines_writes_a_baseline_that_then_passes(project):
    written = run_subprocess(project, "--ef-update-baselines", "-k", "baseline")
    written.assert_outcomes(passed=1, deselected=6)
    path = baseline_path(project)
    assert "ef-evaluation baselines written" in written.stdout.str()
    assert str(path) in written.stdout.str()
    # Written atomically: the report alone, no temporary file beside it.
    assert sorted(p.name for p in path.parent.iterdir()) == ["search.json"]
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=1) + "\n"  # as ef-eval check writes it
    saved = json.loads(text)
    expected = oracle(GATE_DATA["rankings"]())
    assert saved["per_query"].keys() == expected.keys()
    for query, value in expected.items():
        assert saved["per_query"][query]["ndcg@10"] == pytest.approx(value, abs=1e-12)
    run(project, "-k", "baseline").assert_outcomes(passed=1, deselected=6)


def cli_check(tmp_path: Path, baseline: Path, rankings: dict[str, list[str]]) -> int:
    """``ef-eval check`` of the same run against the same baseline, under the same rules."""
    write_trec_qrels(tmp_path / "qrels.txt", GATE_DATA["QRELS"])
    run_file = tmp_path / "run.txt"
    write_trec_run(
        run_file,
        {
            q: {doc: float(100 - rank) for rank, doc in enumerate(docs)}
            for q, docs in rankings.items()
        },
    )
    rules = [arg for line in RULE_LINES for arg in ("--rule", line)]
    argv = [
        "check",
        str(run_file),
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--baseline",
        str(baseline),
    ]
    return main([*argv, *rules])


def test_a_seeded_regression_fails_with_the_cli_summary_and_rank_noise_passes(
    project, tmp_path, capsys
):
    run(project, "--ef-update-baselines", "-k", "baseline").assert_outcomes(passed=1, deselected=6)
    result = run(project, "-rf")
    result.assert_outcomes(passed=4, failed=3)
    output = result.stdout.str()
    for seed in (1, 2, 3):
        assert f"test_regression[{seed}]" in output
        assert f"FAILED test_search.py::test_regression[{seed}]" in output
        assert f"FAILED test_search.py::test_noise[{seed}]" not in output
    # The failure message is the table ef-eval check prints for the same run and baseline.
    capsys.readouterr()
    worse = GATE_DATA["rankings"](lose=0.10, seed=1)
    assert cli_check(tmp_path, baseline_path(project), worse) == 1
    printed = capsys.readouterr().out.splitlines()
    section = failure(output, "test_regression[1]")
    assert [line.rstrip() for line in section.splitlines()] == [
        line.rstrip() for line in printed
    ]  # the table alone
    assert "quality gate FAILED" in section
    assert "FAIL recall@10: max_drop = 0.02: dropped 0.1000" in section


def test_a_missing_baseline_fails_saying_how_to_write_it(project):
    result = run(project, "-k", "baseline")
    result.assert_outcomes(failed=1, deselected=6)
    output = result.stdout.str()
    assert failure(output, "test_baseline") == (
        f"{baseline_path(project)}: no baseline: run pytest --ef-update-baselines to write it "
        "from this run, then commit it"
    )
    assert not baseline_path(project).exists()


def test_a_baseline_on_other_qrels_fails_naming_them(project):
    run(project, "--ef-update-baselines", "-k", "baseline").assert_outcomes(passed=1, deselected=6)
    project.makepyfile(
        test_changed="""
        import pytest
        from gate_data import QRELS, QUERIES, async_retriever, retriever
        from test_search import RULES

        CHANGED = dict(qrels={**QRELS, "q0": {"rel0": 1.0, "other0_0": 1.0}}, queries=QUERIES,
                       baseline="baselines/search.json", rules=RULES)

        @pytest.fixture
        def anyio_backend():
            return "asyncio"

        def test_changed_qrels(ef_check):
            ef_check(retriever(), **CHANGED)

        @pytest.mark.anyio
        async def test_changed_qrels_async(ef_check):
            await ef_check.check_async(async_retriever(), **CHANGED)
        """
    )
    result = run(project, "test_changed.py")
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    for test in ("test_changed_qrels", "test_changed_qrels_async"):
        said = failure(output, test)
        assert said.startswith(
            f"{baseline_path(project)}: the baseline was made on other inputs: qrels (fingerprint"
        )
        assert "--ef-update-baselines" in said and len(said.splitlines()) == 1


def test_a_failed_evaluation_leaves_the_old_baseline_whole(project):
    run(project, "--ef-update-baselines", "-k", "baseline").assert_outcomes(passed=1, deselected=6)
    before = baseline_path(project).read_bytes()
    project.makepyfile(
        test_broken="""
        from gate_data import QRELS, QUERIES
        from test_search import RULES

        def broken(query):
            raise ConnectionError("the search service is down")

        def test_broken(ef_check):
            ef_check(broken, qrels=QRELS, queries=QUERIES,
                     baseline="baselines/search.json", rules=RULES)
        """
    )
    result = run(project, "--ef-update-baselines", "test_broken.py")
    result.assert_outcomes(failed=1)
    assert "the search service is down" in result.stdout.str()
    assert baseline_path(project).read_bytes() == before
    assert sorted(p.name for p in baseline_path(project).parent.iterdir()) == ["search.json"]


def test_async_retrievers_in_sync_and_async_tests(project):
    run(project, "--ef-update-baselines", "-k", "baseline").assert_outcomes(passed=1, deselected=6)
    project.makepyfile(
        test_async="""
        import pytest
        from gate_data import QRELS, QUERIES, async_retriever
        from test_search import RULES

        OPTIONS = dict(qrels=QRELS, queries=QUERIES, baseline="baselines/search.json",
                       rules=RULES)

        @pytest.fixture(params=["asyncio", "trio"])
        def anyio_backend(request):
            return request.param

        def test_sync_test_async_retriever(ef_check):
            assert ef_check(async_retriever(noise=True, seed=4), **OPTIONS).passed

        @pytest.mark.anyio
        async def test_async_noise(ef_check):
            report = await ef_check.check_async(async_retriever(noise=True, seed=5), **OPTIONS)
            assert report.passed

        @pytest.mark.anyio
        async def test_async_regression(ef_check):
            await ef_check.check_async(async_retriever(lose=0.10, seed=6), **OPTIONS)
        """
    )
    result = run(project, "test_async.py", "-rA")
    result.assert_outcomes(passed=3, failed=2)
    output = result.stdout.str()
    assert "FAILED test_async.py::test_async_regression[asyncio]" in output
    assert "FAILED test_async.py::test_async_regression[trio]" in output
    assert output.count("quality gate FAILED") >= 2


def test_rules_from_the_projects_pyproject(project):
    run(project, "--ef-update-baselines", "-k", "baseline").assert_outcomes(passed=1, deselected=6)
    project.makepyprojecttoml(
        """
        [tool.ef-evaluation.check]
        alpha = 0.05

        [tool.ef-evaluation.check."recall@10"]
        fail_if = "significantly_worse"
        """
    )
    project.makepyfile(
        test_table="""
        from gate_data import QRELS, QUERIES, retriever

        def test_table(ef_check):
            ef_check(retriever(lose=0.10, seed=2), qrels=QRELS, queries=QUERIES,
                     baseline="baselines/search.json")
        """
    )
    result = run(project, "test_table.py")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert 'recall@10: fail_if = "significantly_worse"' in output
    assert "ndcg@10" not in output.split("test_table", 1)[1]


RECIPROCAL_RANK_TESTS = """
import pytest
from gate_data import QRELS, QUERIES, async_retriever, retriever

RULES = ["recip_rank: max_drop = 0"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_sync(ef_check):
    ef_check(retriever(), qrels=QRELS, queries=QUERIES, baseline="sync.json", rules=RULES)


@pytest.mark.anyio
async def test_async(ef_check):
    await ef_check.check_async(async_retriever(), qrels=QRELS, queries=QUERIES,
                               baseline="async.json", rules=RULES)
"""


def test_a_measure_without_a_cutoff_sees_the_whole_ranking(pytester):
    # The relevant document is at rank 1 to 4: its reciprocal rank, wherever it is.
    pytester.makepyfile(gate_data=DATA.read_text(encoding="utf-8"))
    pytester.makepyfile(test_rr=RECIPROCAL_RANK_TESTS)
    run(pytester, "--ef-update-baselines").assert_outcomes(passed=2)
    expected = oracle(GATE_DATA["rankings"](), "recip_rank")
    assert set(expected.values()) == {1.0, 1 / 2, 1 / 3, 1 / 4}
    for name in ("sync.json", "async.json"):
        written = json.loads((pytester.path / name).read_text(encoding="utf-8"))
        assert {q: v["recip_rank"] for q, v in written["per_query"].items()} == expected, name
    run(pytester).assert_outcomes(passed=2)


QUIET_TESTS = """
import pytest
from gate_data import QRELS, QUERIES, async_retriever, retriever

OPTIONS = dict(qrels=QRELS, queries=QUERIES, rules=["ndcg@10 >= 0"])


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_sync(ef_check, capsys):
    ef_check(retriever(), baseline="baselines/v2/sync/search.json", **OPTIONS)
    assert capsys.readouterr().err == ""


@pytest.mark.anyio
async def test_async(ef_check, capsys):
    await ef_check.check_async(async_retriever(), baseline="baselines/v2/async.json", **OPTIONS)
    assert capsys.readouterr().err == ""
"""


def test_the_gate_shows_no_progress_and_writes_baselines_in_folders_not_yet_made(
    pytester, monkeypatch
):
    # A progress line every 0 s, were any shown: in a test's output, only what it says itself.
    monkeypatch.setenv("EF_PROGRESS_INTERVAL", "0")
    pytester.makepyfile(gate_data=DATA.read_text(encoding="utf-8"))
    pytester.makepyfile(test_quiet=QUIET_TESTS)
    run(pytester, "--ef-update-baselines").assert_outcomes(passed=2)
    for name in ("v2/sync/search.json", "v2/async.json"):
        assert json.loads((pytester.path / "baselines" / name).read_text())["n_queries"] == 200
    run(pytester).assert_outcomes(passed=2)


def test_a_quality_gate_made_without_update_checks_and_writes_nothing(tmp_path):
    gate = ef_evaluation_pytest.QualityGate(folder=tmp_path, rootpath=tmp_path)
    retriever = GATE_DATA["retriever"]()
    data = {"qrels": GATE_DATA["QRELS"], "queries": GATE_DATA["QUERIES"]}
    with pytest.raises(pytest.fail.Exception, match=r"base\.json: no baseline: run pytest --ef-"):
        gate(retriever, baseline="base.json", rules=["ndcg@10 >= 0"], **data)
    assert list(tmp_path.iterdir()) == []


def test_loading_the_plugin_imports_nothing_of_ef(pytester):
    # pytest loads the plugin in every run of a project that installs it.
    probe = (
        "import sys, ef_evaluation_pytest; "
        "print(sorted(m for m in sys.modules if m.startswith('ef.')))"
    )
    result = pytester.run(sys.executable, "-c", probe, timeout=120)
    assert result.ret == 0, result.stderr.str()
    assert result.stdout.lines == ["[]"]


def test_bm25_on_the_bundled_dataset_with_rules_as_the_command_line_writes_them(pytester):
    pytester.makepyfile(
        test_bm25="""
        from ef.evaluation import read_dataset, resolve_builtin
        from ef.source_manager import ingest

        def test_bm25(ef_check):
            corpus, _, _ = read_dataset(resolve_builtin("builtin:stdlib-docs"))
            ef_check(ingest(corpus, embedder="bm25"), dataset="builtin:stdlib-docs",
                     baseline="baselines/bm25.json",
                     rules=["ndcg@10 >= 0.3", 'ndcg@10: fail_if = "significantly_worse"'])
        """
    )
    run(pytester, "--ef-update-baselines").assert_outcomes(passed=1)
    saved = json.loads((pytester.path / "baselines" / "bm25.json").read_text(encoding="utf-8"))
    _, queries, qrels = read_beir(resolve_builtin("builtin:stdlib-docs"))
    assert saved["n_queries"] == len(qrels) == len(queries) == 40
    run(pytester).assert_outcomes(passed=1)


TWO_TESTS_ONE_BASELINE = """
from gate_data import QRELS, QUERIES, retriever


def test_first(ef_check):
    ef_check(retriever(), qrels=QRELS, queries=QUERIES, baseline="baselines/search.json",
             rules=["ndcg@10 >= 0"])


def test_second(ef_check):
    ef_check(retriever(lose=0.5, seed=1), qrels=QRELS, queries=QUERIES,
             baseline="baselines/../baselines/search.json", rules=["ndcg@10 >= 0"])
"""


def test_two_tests_naming_one_baseline_cannot_both_write_it(pytester):
    pytester.makepyfile(gate_data=DATA.read_text(encoding="utf-8"))
    pytester.makepyfile(test_two=TWO_TESTS_ONE_BASELINE)
    result = run(pytester, "--ef-update-baselines", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    output = result.stdout.str()
    assert failure(output, "test_second") == (
        f"{pytester.path}/baselines/../baselines/search.json: test_two.py::test_first and "
        "test_two.py::test_second both name this baseline, and it holds test_two.py::test_first's "
        "run: give each test its own baseline"
    )
    written = json.loads(baseline_path(pytester).read_text(encoding="utf-8"))
    expected = oracle(GATE_DATA["rankings"]())
    assert {q: v["ndcg@10"] for q, v in written["per_query"].items()} == pytest.approx(expected)


# What ef_check makes of its arguments: each shape of rules, correction="none", and the clear
# failures of no rules at all.

ARGUMENT_TESTS = """
import pytest
from gate_data import QRELS, QUERIES, retriever


def gate(ef_check, **given):
    return ef_check(retriever(), qrels=QRELS, queries=QUERIES, baseline="base.json", **given)


def test_write(ef_check):
    assert gate(ef_check, rules=["ndcg@10 >= 0.1"]) is None  # written, nothing checked


def test_one_rule_as_a_string(ef_check):
    report = gate(ef_check, rules="ndcg@10 >= 0.1")
    assert [result.rule.text for result in report.results] == ["ndcg@10 >= 0.1"]


def test_no_correction(ef_check):
    report = gate(ef_check, rules={"ndcg@10": {"fail_if": "significantly_worse"}},
                  correction="none")
    assert report.passed and report.correction is None
    assert "(no correction, alpha 0.05)" in report.to_text()


def test_a_metric_without_a_table(ef_check):
    gate(ef_check, rules={"ndcg@10": 0.5})


def test_no_rule_in_the_list(ef_check):
    gate(ef_check, rules=[])


def test_no_rules_and_no_pyproject(ef_check):
    gate(ef_check)


def test_a_dataset_beside_qrels(ef_check):
    gate(ef_check, rules=["ndcg@10 >= 0.1"], dataset="builtin:stdlib-docs")


def test_a_dataset_beside_qrels_alone(ef_check):
    ef_check(retriever(), qrels=QRELS, baseline="base.json", rules=["ndcg@10 >= 0.1"],
             dataset="builtin:stdlib-docs")


def test_qrels_without_queries(ef_check):
    ef_check(retriever(), qrels=QRELS, baseline="base.json", rules=["ndcg@10 >= 0.1"])


def test_a_baseline_of_another_kind(ef_check, request):
    from ef.evaluation import evaluate_rag

    sample = {"user_input": "q", "retrieved_contexts": ["a b"], "response": "a", "reference": "a"}
    rag = request.path.parent / "rag.json"
    rag.write_text(evaluate_rag([sample]).to_json())
    ef_check(retriever(), qrels=QRELS, queries=QUERIES, baseline="rag.json",
             rules=["ndcg@10 >= 0.1"])


def test_a_baseline_field_of_the_wrong_type(ef_check, request):
    wrong = '{"metrics": {}, "per_query": {}, "n_queries": "6", "k_values": [1]}'
    (request.path.parent / "wrong.json").write_text(wrong)
    ef_check(retriever(), qrels=QRELS, queries=QUERIES, baseline="wrong.json",
             rules=["ndcg@10 >= 0.1"])
"""


def test_each_shape_of_rules_and_the_failures_of_none(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(gate_data=DATA.read_text(encoding="utf-8"))
    pytester.makepyfile(test_arguments=ARGUMENT_TESTS)
    written = run(pytester, "--ef-update-baselines", "-k", "write")
    written.assert_outcomes(passed=1, deselected=10)
    result = run(pytester, "-k", "not write", "-rA")
    result.assert_outcomes(passed=2, failed=8, deselected=1)
    output = result.stdout.str()
    assert "PASSED test_arguments.py::test_one_rule_as_a_string" in output
    assert "PASSED test_arguments.py::test_no_correction" in output
    assert (
        "TypeError: rules['ndcg@10']: expected a table of rules such as {'min': 0.5}, got 0.5"
        in output
    )
    # The gate's own failures are their message alone, without the plugin's traceback.
    assert failure(output, "test_no_rule_in_the_list") == "ef_check: no rules to check"
    assert failure(output, "test_no_rules_and_no_pyproject") == (
        "ef_check: no rules: give rules=..., or a [tool.ef-evaluation.check] table in "
        f"{pytester.path / 'pyproject.toml'}"
    )
    for test in ("test_a_dataset_beside_qrels", "test_a_dataset_beside_qrels_alone"):
        said = failure(output, test)
        assert "TypeError: ef_check: give dataset=, or qrels= and queries=, not both" in said
    assert "TypeError: ef_check: give dataset=, or qrels= and queries=\n" in output
    # A baseline of another kind is refused naming the file, once.
    rag = pytester.path / "rag.json"
    assert f"{rag}: a RagEvalReport, not a retrieval report" in output
    assert f"{rag}: {rag}" not in output
    assert failure(output, "test_a_baseline_field_of_the_wrong_type") == (
        f"{pytester.path / 'wrong.json'}: a retrieval report with n_queries is a JSON string; "
        "expected an integer"
    )


def test_the_gate_classes_are_reached_from_the_package() -> None:
    assert ef_evaluation_pytest.QualityGate is _gate.QualityGate
    assert ef_evaluation_pytest.Rules is _gate.Rules
    with pytest.raises(AttributeError, match="has no attribute 'Gate'"):
        _ = ef_evaluation_pytest.Gate  # type: ignore[attr-defined]
