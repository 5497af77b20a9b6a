"""What ``ef-eval demo``, ``retrieval`` and ``run`` print, piped, logged or on a terminal.

Off a terminal a table is laid out for 80 columns (``COLUMNS``), no number or word broken: a
table too wide turns (metrics down the side) or is cut into blocks of columns, and text wraps
between its words. Each test reads the table
back cell by cell and checks it against the command's own ``--format json``, the report at full
precision; ``--format tsv`` and ``csv`` are read back with the ``csv`` module.
"""

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import in_process_cli
from ef.evaluation import write_trec_qrels, write_trec_run

EF_EVAL = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
ENV = {
    key: value
    for key, value in os.environ.items()
    if key not in ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR")
}
ENV["EF_EVALUATION_PLUGINS"] = ""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BOX_RULE = re.compile(r"^\s*─+\s*$")


def piped(*args: object, env: dict[str, str] | None = None) -> str:
    """Run ef-eval with its output in a pipe; its standard output."""
    result = in_process_cli.ef_eval(*args, env=ENV if env is None else env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def on_terminal(args: Sequence[object], columns: int) -> str:
    """Run ef-eval with its output on a pseudo-terminal ``columns`` wide; what it showed."""
    assert EF_EVAL is not None
    main, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 60, columns, 0, 0))
    process = subprocess.Popen(
        [EF_EVAL, *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=subprocess.DEVNULL,
        env={**ENV, "TERM": "xterm-256color"},
    )
    os.close(child)
    chunks: list[bytes] = []
    try:
        while select.select([main], [], [], 120)[0]:
            chunk = os.read(main, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:  # the child side closed: everything has been read
        pass
    finally:
        os.close(main)
    assert process.wait(timeout=120) == 0
    text = ANSI.sub("", b"".join(chunks).decode().replace("\r\n", "\n"))
    # rich pads a terminal's lines to the table's width and frames tables with blank lines.
    return re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in text.splitlines()))


def read_blocks(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The plain tables of ``text`` (after its title line): each block's header and rows.

    A block is a header line, a rule of ─, rows, and a blank line before the next block. Cells
    hold no spaces in these tests, so splitting on whitespace reads them back; an empty header
    cell (the turned table's corner) is not in the header.
    """
    blocks = []
    lines = text.splitlines()[2:]
    while lines:
        header, rule, *rest = lines
        assert BOX_RULE.match(rule), rule
        end = rest.index("") if "" in rest else len(rest)
        blocks.append((header.split(), [line.split() for line in rest[:end]]))
        lines = rest[end + 1 :]
    return blocks


def cells(text: str, labels: int) -> dict[tuple[str, ...], dict[str, str]]:
    """Every cell of a plain table, however it was laid out: ``{row labels: {column: text}}``.

    :param labels: how many label columns the table has (``run``, ``query``).
    """
    found: dict[tuple[str, ...], dict[str, str]] = {}
    for header, rows in read_blocks(text):
        turned = len(header) + 1 == len(rows[0])
        for row in rows:
            if turned:  # metrics down the side, a column per system
                key, *values = row
                for name, value in zip(header, values, strict=True):
                    assert key not in found.setdefault((name,), {})
                    found[(name,)][key] = value
            else:
                names = header[labels:]
                entry = found.setdefault(tuple(row[:labels]), {})
                for name, value in zip(names, row[labels:], strict=True):
                    assert name not in entry, f"{name} shown twice"
                    entry[name] = value
    return found


def four(value: float) -> str:
    return f"{value:.4f}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Qrels and three run files over 30 queries with numeric ids."""
    folder = tmp_path_factory.mktemp("runs")
    rng = random.Random(43)
    docs = [f"d{i}" for i in range(60)]
    qrels = {
        str(q): {doc: float(rng.randint(0, 2)) for doc in rng.sample(docs, 8)} for q in range(30)
    }
    for judged in qrels.values():
        judged[docs[0]] = 1.0
    write_trec_qrels(folder / "qrels.txt", qrels)
    paths = []
    for name in ("bm25.run", "dense.run", "hybrid.run"):
        run = {q: {doc: rng.random() for doc in rng.sample(docs, 20)} for q in qrels}
        write_trec_run(folder / name, run, tag=name)
        paths.append(folder / name)
    return {"qrels": folder / "qrels.txt", "runs": paths}


def test_demo_piped_fits_80_columns_with_one_metric_per_line() -> None:
    text = piped("demo")
    lines = text.splitlines()
    assert lines[0].startswith("BM25 on builtin:stdlib-docs")
    assert max(map(len, lines)) <= 80
    assert "**" not in text and "\x1b" not in text
    report = json.loads(piped("demo", "--format", "json"))
    shown = cells(text, labels=1)
    assert shown == {("bm25",): {key: four(v) for key, v in report["metrics"].items()}}


def test_columns_in_the_environment_sets_the_piped_width() -> None:
    text = piped("demo", env={**ENV, "COLUMNS": "200"})
    lines = text.splitlines()
    assert 80 < max(map(len, lines)) <= 200
    assert lines[2].split()[0] == "retriever"  # wide enough: one row, as on a wide terminal
    report = json.loads(piped("demo", "--format", "json"))
    assert cells(text, labels=1) == {
        ("bm25",): {key: four(v) for key, v in report["metrics"].items()}
    }


def wrapped_cells(text: str) -> dict[str, dict[str, list[str]]]:
    """Every cell of a plain table of text, its lines wrapped and its columns in blocks
    repeating the first: ``{first column: {column: the cell's words}}``. A column starts where
    its name starts in the header; a line with nothing in the first column goes on its row."""
    found: dict[str, dict[str, list[str]]] = {}
    lines = text.splitlines()[2:]
    while lines:
        header, rule, *rest = lines
        assert BOX_RULE.match(rule), rule
        end = rest.index("") if "" in rest else len(rest)
        names = header.split()
        starts = [header.index(f" {name}") + 1 for name in names]
        row: dict[str, list[str]] = {}
        for line in rest[:end]:
            parts = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
            if parts[0]:
                row = found.setdefault(parts[0], {})
            for name, part in zip(names[1:], parts[1:], strict=True):
                row.setdefault(name, []).extend(part.split())
        lines = rest[end + 1 :]
    return found


@pytest.mark.parametrize("columns", [None, "120"])
def test_metrics_piped_wraps_its_text_to_the_width_without_breaking_a_word(columns) -> None:
    env = ENV if columns is None else {**ENV, "COLUMNS": columns}
    text = piped("metrics", env=env)
    assert max(map(len, text.splitlines())) <= int(columns or 80)
    measures = json.loads(piped("metrics", "--format", "json"))
    fields = {
        "notations": "notations",
        "parameters": "parameters",
        "definition": "description",
        "aggregation": "aggregation",
        "source": "source",
    }
    assert wrapped_cells(text) == {
        measure["name"]: {
            column: " ".join(measure[field]).split()
            if isinstance(measure[field], list)
            else measure[field].split()
            for column, field in fields.items()
        }
        for measure in measures
    }


def test_run_piped_per_query_is_cut_into_blocks_that_each_fit(runs: dict[str, Any]) -> None:
    args = ["run", runs["qrels"], *runs["runs"], "--k", "1,5,10,20", "--per-query"]
    text = piped(*args)
    blocks = read_blocks(text)
    assert len(blocks) > 1
    assert max(map(len, text.splitlines())) <= 80
    assert all(header[:2] == ["run", "query"] for header, _ in blocks)
    data = json.loads(piped(*args, "--format", "json"))
    expected = {
        (name, query): {key: four(value) for key, value in values.items()}
        for name, report in data.items()
        for query, values in report["per_query"].items()
    }
    assert cells(text, labels=2) == expected


def test_run_on_a_narrow_terminal_turns_and_a_wide_one_keeps_rows(runs: dict[str, Any]) -> None:
    args = ["run", runs["qrels"], *runs["runs"]]
    data = json.loads(piped(*args, "--format", "json"))
    expected = {
        (name,): {key: four(value) for key, value in report["metrics"].items()}
        for name, report in data.items()
    }
    narrow = on_terminal(args, columns=80)
    assert max(map(len, narrow.splitlines())) <= 80
    assert narrow.splitlines()[2].split() == [path.name for path in runs["runs"]]
    wide = on_terminal(args, columns=400)
    assert wide.splitlines()[2].split()[0] == "run"
    for text in (narrow, wide):
        assert cells(text, labels=1) == expected


@pytest.mark.parametrize("output_format", ["tsv", "csv"])
def test_tsv_and_csv_hold_every_value_of_the_json(runs: dict[str, Any], output_format: str) -> None:
    args = ["run", runs["qrels"], *runs["runs"], "--per-query"]
    text = piped(*args, "--format", output_format)
    delimiter = "\t" if output_format == "tsv" else ","
    header, *rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    data = json.loads(piped(*args, "--format", "json"))
    keys = header[2:]
    assert header[:2] == ["run", "query"]
    assert {(row[0], row[1]): dict(zip(keys, row[2:], strict=True)) for row in rows} == {
        (name, query): {key: four(value) for key, value in values.items()}
        for name, report in data.items()
        for query, values in report["per_query"].items()
    }
    assert len(rows) == sum(len(report["per_query"]) for report in data.values())


def test_tsv_escapes_tabs_and_newlines_so_each_line_is_one_row(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "a\tb.run"
    write_trec_qrels(qrels, {"q1": {"d1": 1.0}})
    write_trec_run(run, {"q1": {"d1": 1.0}})
    lines = piped("run", qrels, run, "--format", "tsv", "--k", "1").splitlines()
    assert [line.split("\t") for line in lines] == [
        ["run", "ndcg@1", "recall@1", "precision@1", "mrr@1", "map@1"],
        ["a\\tb.run", "1.0000", "1.0000", "1.0000", "1.0000", "1.0000"],
    ]


def test_retrieval_piped_fits_and_tsv_is_offered() -> None:
    args = ["retrieval", "builtin:stdlib-docs", "--retriever", "bm25", "--no-progress"]
    text = piped(*args)
    assert max(map(len, text.splitlines())) <= 80
    data = json.loads(piped(*args, "--format", "json"))
    assert cells(text, labels=1) == {
        ("bm25",): {key: four(value) for key, value in data["metrics"].items()}
    }
    header, row = [line.split("\t") for line in piped(*args, "--format", "tsv").splitlines()]
    assert dict(zip(header, row, strict=True)) == {
        "retriever": "bm25",
        **{key: four(value) for key, value in data["metrics"].items()},
    }


def test_rag_per_sample_blocks_each_repeat_the_line_number(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    lines = [
        {"user_input": f"q{i}?", "response": f"a{i}", "reference": f"a{i % 3}"}
        | {"retrieved_contexts": [f"a{i} b"] if i % 4 else []}
        for i in range(1, 13)
    ]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    metrics = "exact_match,token_f1,context_recall,context_precision,non_empty_rate,"
    metrics += "raw_exact_match,string_present,non_llm_string_similarity"
    args = ["rag", samples, "--per-query", "--metrics", metrics]
    text = piped(*args)
    blocks = read_blocks(text)
    assert len(blocks) > 1 and all(header[0] == "line" for header, _ in blocks)
    assert max(map(len, text.splitlines())) <= 80
    data = json.loads(piped(*args, "--format", "json"))
    assert cells(text, labels=1) == {
        (str(line),): {key: "-" if value is None else four(value) for key, value in values.items()}
        for line, values in enumerate(data["per_sample"], 1)
    }
