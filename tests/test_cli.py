"""The ef-eval command, run as the installed console script, checked against the library."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import random
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from hypothesis import given
from hypothesis import strategies as st

import in_process_cli
from ef.evaluation import (
    MissingQueriesWarning,
    evaluate_rag,
    evaluate_retrieval,
    evaluate_run,
    list_plugins,
    read_beir,
    read_trec_qrels,
    read_trec_run,
    registry,
    write_beir,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation._plugins import HOST
from ef.evaluation._report.reports import RetrievalEvalReport
from ef.evaluation.cli._common import CliError, Table, parse_cutoffs, render_text
from ef.evaluation.cli._terminal import column_blocks, natural_width, transposed
from ef.evaluation.cli.demo import (
    DEMO_K_VALUES,
    demo_dataset,
    demo_retriever,
)

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
# Third-party plugins installed next to the library are not what these tests check, and their
# imports would dominate every run of the script; the plugins test runs with them.
QUIET_ENV = {**os.environ, "EF_EVALUATION_PLUGINS": ""}
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RAG_LINES = [
    {
        "user_input": "capital of France?",
        "response": "Paris",
        "reference": "Paris",
        "retrieved_contexts": ["Paris is the capital of France."],
    },
    {"user_input": "2 + 2?", "response": "five", "reference": "four", "retrieved_contexts": []},
    {"user_input": "largest ocean?", "response": "the Pacific", "retrieved_contexts": ["x"]},
    {
        "user_input": "a primary colour?",
        "response": "red",
        "reference": ["blue", "Red"],
        "retrieved_contexts": ["Red, yellow and blue are primary colours.", "Green is not."],
    },
]


def ef_eval(
    *args: object, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command run in this process (see ``tests/in_process_cli.py``); the installed script
    is run by :func:`test_the_installed_script_says_its_version` and on a terminal."""
    return in_process_cli.ef_eval(*args, env=QUIET_ENV if env is None else env)


def ok(*args: object, warning: str | None = None) -> str:
    """Run a command that must succeed, with no word on stderr but ``warning`` if given."""
    result = ef_eval(*args)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ("" if warning is None else f"ef-eval: warning: {warning}\n")
    return result.stdout


def fails(*args: object, code: int) -> str:
    """Run a command that must fail; return its one error line."""
    result = ef_eval(*args)
    assert result.returncode == code, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ef-eval: error: "), result.stderr
    return lines[0]


def markdown_rows(text: str) -> list[list[str]]:
    lines = text.splitlines()
    assert all(line.startswith("| ") and line.endswith(" |") for line in lines)
    rows = [line[2:-2].split(" | ") for line in lines]
    assert set(rows[1]) <= {"---", "---:"}
    return [rows[0], *rows[2:]]


def csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def four(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def random_qrels_and_run(
    rng: random.Random, n_queries: int, n_docs: int
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded qrels with a positive grade per query, and a run of heavily tied scores."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        docs = [f"d{j}" for j in rng.sample(range(3 * n_docs), n_docs)]
        judged = {doc: rng.choice([0, 0, 1, 2, 3]) for doc in rng.sample(docs, n_docs // 4)}
        judged[f"unretrieved{q}"] = 1
        qrels[f"q{q}"] = judged
        run[f"q{q}"] = {doc: rng.choice([0.0, 0.5, 1.0, 1.5, 2.0]) for doc in docs}
    return qrels, run


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("cli")
    rng = random.Random(7)
    qrels, bm25 = random_qrels_and_run(rng, 12, 30)
    _, dense = random_qrels_and_run(rng, 12, 30)
    qrels["q-unjudged"] = {"d1": 0}  # skipped: no positive judgement
    del dense["q3"]  # a judged query missing from a run scores 0, with a warning
    write_trec_qrels(root / "qrels.txt", qrels)
    write_trec_run(root / "bm25.run", bm25, tag="bm25")
    write_trec_run(root / "dense.run", dense, tag="dense")
    queries = {q: f"query {q}" for q in qrels}
    corpus = {doc: "text" for judged in qrels.values() for doc in judged}
    write_beir(root / "beir", corpus, queries, {q: dict(j) for q, j in qrels.items()})
    samples = root / "samples.jsonl"
    lines = [json.dumps(RAG_LINES[0]), "", *map(json.dumps, RAG_LINES[1:])]
    samples.write_text("\n".join(lines) + "\n")
    read = read_trec_qrels(root / "qrels.txt")
    reports = {"bm25.run": evaluate_run(read_trec_run(root / "bm25.run"), read)}
    with pytest.warns(MissingQueriesWarning, match="1 of 12 judged queries are not in the run"):
        reports["dense.run"] = evaluate_run(read_trec_run(root / "dense.run"), read)
    return {
        "root": root,
        "qrels": root / "qrels.txt",
        "runs": [root / "bm25.run", root / "dense.run"],
        "samples": samples,
        "reports": reports,
        # What the command says of dense.run, which lacks q3.
        "dense_warning": (
            f"1 of 12 judged queries are not in {root / 'dense.run'}; they score 0: 'q3'"
        ),
    }


# run


def test_run_json_is_each_reports_to_dict_keyed_by_file_name(data: dict[str, Any]) -> None:
    output = json.loads(
        ok("run", data["qrels"], *data["runs"], "--format", "json", warning=data["dense_warning"])
    )
    assert list(output) == ["bm25.run", "dense.run"]
    for name, report in data["reports"].items():
        assert output[name] == json.loads(report.to_json())
    assert output["dense.run"]["per_query"]["q3"]["ndcg@10"] == 0.0
    assert "q-unjudged" in output["bm25.run"]["skipped"]


def test_run_csv_has_one_row_per_run_with_the_chosen_metrics_and_cutoffs(
    data: dict[str, Any],
) -> None:
    rows = csv_rows(
        ok(
            "run",
            data["qrels"],
            *data["runs"],
            "--k",
            "3,1",
            "--metrics",
            "map,ndcg",
            "--format",
            "csv",
            warning=data["dense_warning"],
        )
    )
    assert rows[0] == ["run", "map@1", "map@3", "ndcg@1", "ndcg@3"]
    qrels = read_trec_qrels(data["qrels"])
    for row, path in zip(rows[1:], data["runs"], strict=True):
        report = evaluate_run(
            read_trec_run(path),
            qrels,
            k_values=(1, 3),
            metrics=("map", "ndcg"),
            missing_queries="zero",
        )
        assert row == [path.name, *(four(report.metrics[key]) for key in rows[0][1:])]


def test_run_markdown_per_query_has_a_row_per_run_and_query(data: dict[str, Any]) -> None:
    rows = markdown_rows(
        ok(
            "run",
            data["qrels"],
            *data["runs"],
            "--format",
            "markdown",
            "--per-query",
            warning=data["dense_warning"],
        )
    )
    reports: dict[str, RetrievalEvalReport] = data["reports"]
    keys = list(reports["bm25.run"].metrics)
    assert rows[0] == ["run", "query", *keys]
    expected = [
        [name, query, *(four(values[key]) for key in keys)]
        for name, report in reports.items()
        for query, values in report.per_query.items()
    ]
    assert rows[1:] == expected


def test_run_table_is_plain_text_when_not_a_terminal_even_if_colour_is_forced(
    data: dict[str, Any],
) -> None:
    result = ef_eval(
        "run", data["qrels"], *data["runs"], env={**QUIET_ENV, "FORCE_COLOR": "1", "TERM": "xterm"}
    )
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0] == "2 runs scored against qrels.txt (12 judged queries)"
    assert max(map(len, lines)) <= 80  # too wide for a log: metrics down the side
    reports = data["reports"]
    assert lines[2].split() == list(reports)
    for key in reports["bm25.run"].metrics:
        (line,) = [line for line in lines if line.split()[:1] == [key]]
        assert line.split()[1:] == [four(report.metrics[key]) for report in reports.values()]


def test_output_writes_the_file_and_nothing_to_stdout(data: dict[str, Any], tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    assert ok("run", data["qrels"], data["runs"][0], "--format", "json", "--output", target) == ""
    assert json.loads(target.read_text()) == {
        "bm25.run": json.loads(data["reports"]["bm25.run"].to_json())
    }
    table = tmp_path / "report.txt"
    assert ok("run", data["qrels"], data["runs"][0], "-o", table) == ""
    assert table.read_text().startswith("1 run scored against qrels.txt")


def test_reader_option_reads_the_qrels_of_a_beir_folder(data: dict[str, Any]) -> None:
    output = json.loads(
        ok(
            "run",
            data["root"] / "beir",
            data["runs"][1],
            "--reader",
            "beir",
            "--format",
            "json",
            warning=data["dense_warning"],
        )
    )
    _, _, qrels = read_beir(str(data["root"] / "beir"))
    expected = evaluate_run(read_trec_run(data["runs"][1]), qrels, missing_queries="zero")
    assert output["dense.run"]["metrics"] == expected.metrics


def test_per_query_json_agrees_with_pytrec_eval_on_a_heavily_tied_run(tmp_path: Path) -> None:
    qrels, run = random_qrels_and_run(random.Random(2024), 40, 60)
    write_trec_qrels(tmp_path / "qrels.txt", qrels)
    write_trec_run(tmp_path / "tied.run", run)
    ks = (1, 3, 5, 10, 100)
    output = json.loads(
        ok(
            "run",
            tmp_path / "qrels.txt",
            tmp_path / "tied.run",
            "--k",
            "1,3,5,10,100",
            "--format",
            "json",
        )
    )["tied.run"]["per_query"]
    cutoffs = ",".join(map(str, ks))
    measures = {f"{m}.{cutoffs}" for m in ("ndcg_cut", "recall", "P", "map_cut")} | {"recip_rank"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert set(output) == set(expected) == set(qrels)
    names = {"ndcg": "ndcg_cut", "recall": "recall", "precision": "P", "map": "map_cut"}
    for query, values in expected.items():
        for ours, theirs in names.items():
            for k in ks:
                assert output[query][f"{ours}@{k}"] == pytest.approx(
                    values[f"{theirs}_{k}"], abs=1e-9
                ), (query, ours, k)
        # Every query has fewer than 100 results, so mrr@100 is the whole list's recip_rank.
        assert output[query]["mrr@100"] == pytest.approx(values["recip_rank"], abs=1e-9)


# rag


def test_rag_json_is_the_reports_to_dict(data: dict[str, Any]) -> None:
    output = json.loads(ok("rag", data["samples"], "--format", "json"))
    assert output == json.loads(evaluate_rag(RAG_LINES).to_json())


def test_rag_csv_has_a_row_per_metric_with_its_coverage(data: dict[str, Any]) -> None:
    rows = csv_rows(ok("rag", data["samples"], "--format", "csv"))
    report = evaluate_rag(RAG_LINES)
    assert rows[0] == ["metric", "mean", "samples"]
    assert rows[1:] == [
        [name, four(report.metrics.get(name)), str(report.coverage[name])]
        for name in report.coverage
    ]


def test_rag_per_query_markdown_names_each_samples_line(data: dict[str, Any]) -> None:
    rows = markdown_rows(
        ok(
            "rag",
            data["samples"],
            "--per-query",
            "--format",
            "markdown",
            "--metrics",
            "token_f1,exact_match",
        )
    )
    report = evaluate_rag(RAG_LINES, metrics=["token_f1", "exact_match"])
    assert rows[0] == ["line", "token_f1", "exact_match"]
    # Line 2 of the file is blank, so the samples sit on lines 1, 3, 4 and 5.
    assert rows[1:] == [
        [str(line), *(four(values[name]) if values[name] is not None else "-" for name in values)]
        for line, values in zip((1, 3, 4, 5), report.per_sample, strict=True)
    ]


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('{"response": "a"}\n{"response": oops}\n', 2, "invalid JSON"),
        ('{"response": "a"}\n\n[1, 2]\n', 3, "found a JSON array, not an object"),
        (
            '{"response": "a", "retrieved_contexts": []}\n{"reference_context_ids": "d1"}\n',
            2,
            "list of ids",
        ),
        ('{"response": "a", "retrieved_contexts": "x"}\n', 1, "'retrieved_contexts' must be"),
    ],
)
def test_a_bad_sample_is_named_by_file_and_line(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(text)
    error = fails("rag", path, code=1)
    assert error.startswith(f"ef-eval: error: {path}:{line}: ")
    assert problem in error


def test_a_file_without_samples_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n\n")
    assert "no samples" in fails("rag", tmp_path / "empty.jsonl", code=1)


# plugins and demo


def test_plugins_lists_every_plugin_with_what_it_provides() -> None:
    HOST.reset()  # this process lists what is installed, as the command's process does
    result = ef_eval("plugins", "--format", "json", env=os.environ)
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    provided = registry()
    assert [(p["name"], p["distribution"], p["version"], p["hooks"]) for p in output] == [
        (info.name, info.distribution, info.version, list(info.hooks)) for info in list_plugins()
    ]
    for kind in ("metrics", "rag_metrics", "readers", "fusion_methods", "normalizations"):
        listed = {name for plugin in output for name in plugin[kind]}
        assert listed == set(getattr(provided, kind))
    builtins = output[0]
    assert builtins["builtin"] and builtins["readers"] == ["beir", "trec"]


def test_plugins_table_shows_the_builtins() -> None:
    text = ok("plugins")
    assert "ef.evaluation._builtins" in text and "register_metrics" in text
    assert "non_empty_rate" in text


@pytest.mark.parametrize("output_format", ["csv", "markdown"])
def test_plugins_csv_and_markdown_have_a_row_per_plugin(output_format: str) -> None:
    text = ok("plugins", "--format", output_format)  # third-party plugins deselected
    rows = csv_rows(text) if output_format == "csv" else markdown_rows(text)
    assert rows[0] == [
        "plugin",
        "distribution",
        "version",
        "hooks",
        "metrics",
        "RAG metrics",
        "readers",
        "fusion methods",
        "normalisations",
    ]
    builtins = [info for info in list_plugins() if info.builtin]
    assert [row[:3] for row in rows[1:]] == [
        [info.name, info.distribution, info.version] for info in builtins
    ]
    separator = "\n" if output_format == "csv" else "<br>"
    assert rows[1][3].split(separator) == [
        hook.removeprefix("ef_evaluation_") for hook in builtins[0].hooks
    ]
    assert rows[1][6].split(separator) == ["beir", "trec"]


def test_rag_table_shows_each_metrics_mean_and_coverage(data: dict[str, Any]) -> None:
    lines = ok("rag", data["samples"]).splitlines()
    assert lines[0] == "RAG metrics over 4 samples from samples.jsonl"
    report = evaluate_rag(RAG_LINES)
    rows = [line.split() for line in lines[4:]]
    assert rows == [
        [name, four(report.metrics[name]), str(report.coverage[name])] for name in report.coverage
    ]


def test_demo_per_query_csv_and_markdown_show_each_query() -> None:
    corpus, queries, qrels = demo_dataset()
    report = evaluate_retrieval(
        demo_retriever(corpus),
        qrels,
        queries,
        k_values=(10,),
        metrics=("ndcg", "recall"),
    )
    expected = [
        ["bm25", query, four(values["ndcg@10"]), four(values["recall@10"])]
        for query, values in report.per_query.items()
    ]
    options = ("--per-query", "--k", "10", "--metrics", "ndcg,recall")
    assert csv_rows(ok("demo", *options, "--format", "csv"))[1:] == expected
    markdown = markdown_rows(ok("demo", *options, "--format", "markdown"))
    assert markdown[0] == ["retriever", "query", "ndcg@10", "recall@10"]
    assert markdown[1:] == expected


def test_demo_runs_with_no_arguments_and_prints_a_titled_table() -> None:
    lines = ok("demo").splitlines()
    assert lines[0] == "BM25 on builtin:stdlib-docs: 1,098 documents, 40 queries"
    corpus, queries, qrels = demo_dataset()
    report = evaluate_retrieval(
        demo_retriever(corpus),
        qrels,
        queries,
        k_values=DEMO_K_VALUES,
    )
    assert lines[2].split() == ["bm25"]  # piped: one metric per line
    for key, value in report.metrics.items():
        (row,) = [line.split() for line in lines if line.split()[:1] == [key]]
        assert row[1:] == [four(value)]


def test_demo_json_is_the_evaluate_retrieval_report() -> None:
    output = json.loads(ok("demo", "--format", "json", "--k", "2,5", "--metrics", "ndcg,mrr"))
    corpus, queries, qrels = demo_dataset()
    report = evaluate_retrieval(
        demo_retriever(corpus),
        qrels,
        queries,
        k_values=(2, 5),
        metrics=("ndcg", "mrr"),
    )
    assert output["metrics"] == report.metrics
    assert output["per_query"] == report.per_query
    assert output["n_queries"] == 40


def test_demo_retriever_ranks_the_matching_document_first() -> None:
    corpus, queries, qrels = demo_dataset()
    index = demo_retriever(corpus)
    assert [hit.segment.source_id for hit in index.search(queries["q18"], limit=1)] == [
        "random.shuffle"
    ]
    assert index.search("zzzqx qqxyz") == []
    assert all(any(grade > 0 for grade in judged.values()) for judged in qrels.values())


# errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "{qrels}", "{run}", "--k", "0"], "argument --k: invalid cutoff '0'"),
        (["run", "{qrels}", "{run}", "--k", "1,x"], "invalid cutoff 'x' in '1,x'"),
        (["run", "{qrels}", "{run}", "--metrics", "ndcg,ndgc"], "unknown metric 'ndgc'"),
        (["run", "{qrels}", "{run}", "--format", "xml"], "invalid choice: 'xml'"),
        (["run", "{qrels}", "{run}", "--reader", "nope"], "unknown dataset reader 'nope'"),
        (["run", "{qrels}"], "the following arguments are required: RUN"),
        (["run", "{qrels}", "{run}", "{run}"], "is given more than once"),
        (["rag", "{samples}", "--metrics", "exact"], "unknown RAG metric 'exact'"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(
    data: dict[str, Any], args: list[str], message: str
) -> None:
    paths = {"qrels": data["qrels"], "run": data["runs"][0], "samples": data["samples"]}
    error = fails(*(arg.format(**paths) for arg in args), code=2)
    assert message in error


def test_bad_files_exit_1_naming_the_file_and_line(data: dict[str, Any], tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    error = fails("run", missing, data["runs"][0], code=1)
    assert error == f"ef-eval: error: {missing}: No such file or directory"
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("q0 Q0 d1 1 0.5 t\nq0 Q0 d2 2 high t\n")
    error = fails("run", data["qrels"], bad_run, code=1)
    assert error == (
        f"ef-eval: error: {bad_run}:2: score 'high' is not a number; "
        "expected a finite number in ASCII decimal notation, such as 2, 0.5 or -1e-3"
    )


def test_an_unwritable_output_is_a_runtime_error(data: dict[str, Any], tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "out.json"
    error = fails("run", data["qrels"], data["runs"][0], "-o", target, code=1)
    assert error == f"ef-eval: error: cannot write {target}: No such file or directory"
    assert not target.parent.exists()


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = ef_eval("rag", tmp_path / "missing.jsonl", "--debug")
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "FileNotFoundError" in result.stderr
    assert result.stderr.rstrip().endswith("missing.jsonl: No such file or directory")


def test_the_installed_script_says_its_version() -> None:
    assert EF_EVAL is not None, "the ef-eval script is not installed: pip install -e ."
    result = subprocess.run(
        [EF_EVAL, "--version"], capture_output=True, text=True, timeout=60, env=QUIET_ENV
    )
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert re.fullmatch(r"ef-eval \S+\n", result.stdout)
    assert ok("--version") == result.stdout


# on a terminal


def run_in_terminal(args: Sequence[object], columns: int) -> str:
    """Run ef-eval with its output on a pseudo-terminal ``columns`` wide."""
    assert EF_EVAL is not None
    main, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
    env = {**QUIET_ENV, "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    process = subprocess.Popen(
        [EF_EVAL, *map(str, args)], stdin=subprocess.DEVNULL, stdout=child, stderr=child, env=env
    )
    os.close(child)
    chunks: list[bytes] = []
    try:
        while select.select([main], [], [], 30)[0]:
            chunk = os.read(main, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:  # the child side closed: everything has been read
        pass
    finally:
        os.close(main)
    assert process.wait(timeout=30) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_wide_table_on_a_narrow_terminal_turns_so_no_number_is_lost(
    data: dict[str, Any],
) -> None:
    text = run_in_terminal(["run", data["qrels"], *data["runs"]], columns=80)
    assert ANSI.search(text)  # a terminal gets styles
    lines = ANSI.sub("", text).splitlines()
    # stderr shares the terminal: the warning about dense.run's missing query is its own line.
    warning = f"ef-eval: warning: {data['dense_warning']}"
    assert lines.count(warning) == 1
    lines.remove(warning)
    assert max(map(len, lines)) <= 80
    for key in data["reports"]["bm25.run"].metrics:
        (line,) = [line for line in lines if line.split()[:1] == [key]]
        assert line.split()[1:] == [four(r.metrics[key]) for r in data["reports"].values()]


# helpers, in-process

cells = st.one_of(
    st.none(),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=8),
)


@given(st.integers(1, 6).flatmap(lambda n: st.lists(st.lists(cells, min_size=n, max_size=n))))
def test_csv_and_markdown_keep_every_cell(rows: list[list[Any]]) -> None:
    columns = [f"c|{i}" for i in range(len(rows[0]))] if rows else ["c"]
    rows = rows or [[None]]
    table = Table("t", columns, rows)
    expected = [[f"{c:.4f}" if isinstance(c, float) else c or "" for c in row] for row in rows]
    assert csv_rows(render_text(table, None, "csv")) == [columns, *expected]
    markdown = render_text(table, None, "markdown")
    assert len(markdown.splitlines()) == len(rows) + 2
    unescaped = [line.replace("\\|", "") for line in markdown.splitlines()]
    assert all(line.count("|") == len(columns) + 1 for line in unescaped)


@given(st.lists(st.integers(1, 10_000), min_size=1))
def test_cutoffs_parse_back_in_order_without_duplicates(values: list[int]) -> None:
    assert parse_cutoffs(",".join(map(str, values))) == tuple(dict.fromkeys(values))


@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=30),
    st.integers(1, 4),
    st.integers(30, 120),
)
def test_column_blocks_fit_the_width_and_keep_every_column(
    values: list[float], n_rows: int, width: int
) -> None:
    columns = ["run", *(f"metric@{i}" for i in range(len(values)))]
    table = Table("t", columns, [[f"run{r}", *values] for r in range(n_rows)])
    blocks = column_blocks(table, width)
    assert [c for block in blocks for c in block.columns[1:]] == columns[1:]
    assert all(block.columns[0] == "run" for block in blocks)
    assert all(natural_width(block) <= width for block in blocks if len(block.columns) > 2)
    swapped = transposed(table)
    assert swapped is not None and transposed(swapped) is not None
    assert [row[0] for row in swapped.rows] == columns[1:]


def test_a_cli_error_carries_its_exit_code() -> None:
    assert CliError("x").exit_code == 1
    assert CliError("x", exit_code=2).exit_code == 2
