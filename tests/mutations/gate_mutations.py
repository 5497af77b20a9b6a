"""Hand-made mutations of the quality gate, each run against the gate's tests.

Each mutant changes one thing in a copy of the sources: one comparison at its boundary (``<``
and ``<=``, ``>`` and ``>=``) or negated (``==``, ``!=``), one ``not`` dropped, one ``+``/``-``
swapped, one exit code or the tolerance changed, or one guard dropped (a ``raise``, ``return``
or ``pytest.fail`` under an ``if``, a checking call). The source's own tests then run on that
copy (``PYTHONPATH`` puts it before the installed sources, so nothing in the working tree is
touched), and the rest of the core's tests when those pass. A mutant the tests fail on is
killed; one they pass survives and is reported with where it is and what it changed::

    .venv/bin/python tests/mutations/gate_mutations.py            # every mutant
    .venv/bin/python tests/mutations/gate_mutations.py --list     # the mutants, not run
    .venv/bin/python tests/mutations/gate_mutations.py --only _gate/check.py:212
    .venv/bin/python tests/mutations/gate_mutations.py --jobs 3  # three at once

Mutants known to be equivalent (no test can tell them apart) are listed in ``EQUIVALENT``
with the reason, and counted apart.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_SRC = ROOT / "plugins" / "ef-evaluation-pytest" / "src"
GATE = ROOT / "src" / "ef" / "evaluation" / "_gate"
# Each source with the tests that exercise it, the likeliest to fail first (pytest -x stops
# at the first failure: a killed mutant costs one start of pytest and a few tests).
TESTS: dict[Path, tuple[str, ...]] = {
    GATE / "check.py": (
        "tests/test_gate_thresholds.py",
        "tests/test_gate_inputs.py",
        "tests/test_gate.py",
        "tests/test_groups_gate.py",
        "tests/test_gate_messages.py",
    ),
    GATE / "rules.py": (
        "tests/test_gate_thresholds.py",
        "tests/test_gate_rules.py",
        "tests/test_gate_messages.py",
        "tests/test_gate.py",
        "tests/test_gate_inputs.py",
        "tests/test_groups_gate.py",
    ),
    GATE / "config.py": (
        "tests/test_gate_rules.py",
        "tests/test_gate_messages.py",
        "tests/test_groups_gate.py",
        "tests/test_gate.py",
    ),
    ROOT / "src" / "ef" / "evaluation" / "cli" / "check.py": (
        "tests/test_gate_cli_edges.py",
        "tests/test_gate.py",
        "tests/test_gate_outputs.py",
        "tests/test_gate_inputs.py",
        "tests/test_gate_messages.py",
        "tests/test_outputs_guard.py",
        "tests/test_gate_retrievers.py",
        "tests/test_groups_gate.py",
        "tests/test_gate_thresholds.py",
        "tests/test_gate_page.py",
    ),
    GATE / "render.py": (
        "tests/test_gate_tables.py",
        "tests/test_gate_outputs.py",
        "tests/test_gate.py",
    ),
    GATE / "report.py": (
        "tests/test_gate_outputs.py",
        "tests/test_gate.py",
        "tests/test_gate_tables.py",
    ),
    GATE / "reading.py": ("tests/test_read_report.py", "tests/test_gate_inputs.py"),
    **{
        path: ("plugins/ef-evaluation-pytest/tests",)
        for path in sorted((PLUGIN_SRC / "ef_evaluation_pytest").glob("*.py"))
    },
}
TARGETS = tuple(TESTS)
CORE_TESTS = tuple(
    dict.fromkeys(test for tests in TESTS.values() for test in tests if "plugins" not in test)
)
PLUGIN_TESTS = ("plugins/ef-evaluation-pytest/tests",)
PYTEST = ("-x", "-q", "-n", "0", "-p", "no:cacheprovider", "--no-header", "--durations=0")

_BOUNDARY = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}
_NEGATED = {ast.Eq: "!=", ast.NotEq: "=="}
_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_TEXT |= {ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_GUARDS = ("_check", "_refuse", "check_outputs", "_check_written")
_EXIT_CODES = {"EXIT_PASS": "EXIT_REGRESSION", "EXIT_REGRESSION": "EXIT_PASS"}
_EXIT_CODES |= {"EXIT_USAGE": "EXIT_REGRESSION"}

_REWRAPPED = (
    "ef-eval check's handle() raises every CliError out of _gate() again with exit code 2, "
    "so the exit code this one was given is never seen"
)
EQUIVALENT: dict[str, str] = {
    "cli/check.py:207:EXIT_USAGE -> EXIT_REGRESSION": _REWRAPPED,
    "cli/check.py:217:EXIT_USAGE -> EXIT_REGRESSION": _REWRAPPED,
    "cli/check.py:227:EXIT_USAGE -> EXIT_REGRESSION": _REWRAPPED,
    "cli/check.py:325:EXIT_USAGE -> EXIT_REGRESSION": _REWRAPPED,
    "_gate/reading.py:148:drop guard": (
        "with no bounded measure, the loops after this return test each key against an empty "
        "set and return None the same"
    ),
    "cli/check.py:265:drop guard": (
        "a stream (/dev/stdout, a FIFO, a descriptor) exists and is not a folder, so its folder "
        "exists: the checks after this return find nothing wrong either"
    ),
}
"""Mutants no test can tell apart from the source (by ``file:line:change``), with why."""


@dataclass(frozen=True)
class Mutant:
    path: Path
    line: int
    start: int
    end: int
    replacement: str
    change: str

    @property
    def name(self) -> str:
        return f"{self.path.parent.name}/{self.path.name}:{self.line}:{self.change}"

    def applied(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode("utf-8")))
    return starts


class _Finder(ast.NodeVisitor):
    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.data = text.encode("utf-8")
        self.starts = _offsets(text)
        self.found: list[Mutant] = []
        self.docstrings: set[int] = set()

    def at(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.at(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.at(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def add(self, node: ast.AST, start: int, end: int, new: str, change: str) -> None:
        line = node.lineno  # type: ignore[attr-defined]
        self.found.append(Mutant(self.path, line, start, end, new, change))

    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            _, after_left = self.span(left)
            before_right, _ = self.span(right)
            between = self.data[after_left:before_right].decode("utf-8")
            old = _TEXT[type(op)]
            index = between.find(old if old != "in" else " in")
            if old == "in":
                index += 1
            if index >= 0:
                start = after_left + len(between[:index].encode("utf-8"))
                for new in (_BOUNDARY.get(type(op)), _NEGATED.get(type(op))):
                    if new is not None:
                        self.add(node, start, start + len(old), new, f"{old} -> {new}")
            left = right
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            start, _ = self.span(node)
            operand, _ = self.span(node.operand)
            self.add(node, start, operand, "", "drop not")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        textual = (ast.JoinedStr, ast.List, ast.Tuple)
        operands = (node.left, node.right)
        is_text = any(
            isinstance(o, textual) or (isinstance(o, ast.Constant) and isinstance(o.value, str))
            for o in operands
        )
        if isinstance(node.op, ast.Add | ast.Sub) and not is_text:
            old, new = ("+", "-") if isinstance(node.op, ast.Add) else ("-", "+")
            _, end = self.span(node.left)
            start, _ = self.span(node.right)
            between = self.data[end:start].decode("utf-8")
            index = between.find(old)
            if index >= 0:
                at = end + len(between[:index].encode("utf-8"))
                self.add(node, at, at + 1, new, f"{old} -> {new}")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _EXIT_CODES and isinstance(node.ctx, ast.Load):
            start, end = self.span(node)
            self.add(node, start, end, _EXIT_CODES[node.id], f"{node.id} -> {_EXIT_CODES[node.id]}")

    def visit_Assign(self, node: ast.Assign) -> None:
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        value = node.value
        if names and names[0] in ("EXIT_PASS", "EXIT_REGRESSION", "TOLERANCE"):
            if isinstance(value, ast.Constant) and isinstance(value.value, int | float):
                start, end = self.span(value)
                new = "0" if names[0] == "TOLERANCE" else str(value.value + 1)
                self.add(node, start, end, new, f"{names[0]} = {new}")
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        for statement in node.body:
            if isinstance(statement, ast.Raise | ast.Return) or (
                isinstance(statement, ast.Expr) and _is_fail(statement.value)
            ):
                start, end = self.span(statement)
                self.add(statement, start, end, "pass", "drop guard")
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        call = node.value
        if isinstance(call, ast.Call):
            name = ast.unparse(call.func).rsplit(".", 1)[-1]
            if name.startswith(_GUARDS):
                start, end = self.span(node)
                self.add(node, start, end, "pass", f"drop {name}()")
        self.generic_visit(node)


def _is_fail(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) == "pytest.fail"


def mutants() -> Iterator[Mutant]:
    for path in TARGETS:
        text = path.read_text(encoding="utf-8")
        finder = _Finder(path, text)
        finder.visit(ast.parse(text))
        yield from finder.found


_SOURCES = (ROOT / "src" / "ef", PLUGIN_SRC / "ef_evaluation_pytest")


def _fresh_copy(pristine: Path, copy: Path) -> None:
    """``copy`` made equal to ``pristine``, the sources as they were when the run began (the
    working tree may change while the mutants run)."""
    for source in _SOURCES:
        relative = source.relative_to(ROOT)
        if (copy / relative).exists():
            shutil.rmtree(copy / relative)
        shutil.copytree(pristine / relative, copy / relative)


def run(
    mutant: Mutant | None, pristine: Path, copy: Path, tests: tuple[str, ...]
) -> tuple[bool, float]:
    """Whether the tests pass on the copy (with ``mutant`` applied), and how long they took."""
    _fresh_copy(pristine, copy)
    if mutant is not None:
        relative = mutant.path.relative_to(ROOT)
        data = (pristine / relative).read_bytes()
        new = data[: mutant.start] + mutant.replacement.encode() + data[mutant.end :]
        (copy / relative).write_bytes(new)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(copy / "src"), str(copy / PLUGIN_SRC.relative_to(ROOT)), env.get("PYTHONPATH", "")]
    )
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *PYTEST, *tests],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return done.returncode == 0, time.monotonic() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--only", action="append", default=[], help="FILE:LINE (repeatable)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once")
    args = parser.parse_args(argv)
    found = list(mutants())
    if args.only:
        found = [m for m in found if any(m.name.startswith(o) for o in args.only)]
    if args.list:
        for mutant in found:
            print(mutant.name)
        print(f"{len(found)} mutants")
        return 0
    with tempfile.TemporaryDirectory(prefix="gate-mutants-") as folder:
        pristine = Path(folder) / "pristine"
        for source in _SOURCES:
            shutil.copytree(
                source,
                pristine / source.relative_to(ROOT),
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        copies = [Path(folder) / f"copy{i}" for i in range(args.jobs)]
        passed, seconds = run(None, pristine, copies[0], CORE_TESTS)
        if not passed:
            print("the tests fail on the unmutated sources: nothing to learn")
            return 2
        print(f"unmutated: the core's tests pass in {seconds:.0f} s; {len(found)} mutants")
        free = list(copies)

        def one(mutant: Mutant) -> tuple[Mutant, bool]:
            copy = free.pop()
            # The plugin's tests (a pytest in a subprocess each) take most of the time: a
            # mutant of the core meets the rest of the core's tests if its own let it through.
            first = TESTS[mutant.path]
            try:
                survived, _ = run(mutant, pristine, copy, first)
                if survived and first != PLUGIN_TESTS:
                    survived, _ = run(mutant, pristine, copy, CORE_TESTS)
            finally:
                free.append(copy)
            print(f"{'SURVIVED' if survived else 'killed  '} {mutant.name}", flush=True)
            return mutant, survived

        with ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(one, found))
    survivors = [m for m, survived in outcomes if survived]
    equivalent = [m for m in survivors if m.name in EQUIVALENT]
    real = [m for m in survivors if m.name not in EQUIVALENT]
    killed = len(found) - len(survivors)
    judged = len(found) - len(equivalent)
    print(f"\n{len(found)} mutants: {killed} killed, {len(real)} survived, ", end="")
    print(f"{len(equivalent)} equivalent; {killed / max(judged, 1):.1%} of the others killed")
    for mutant in equivalent:
        print(f"equivalent {mutant.name}: {EQUIVALENT[mutant.name]}")
    for mutant in real:
        print(f"survived   {mutant.name}")
    return 1 if real else 0


if __name__ == "__main__":
    sys.exit(main())
