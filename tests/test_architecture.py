"""The house in layers: the import graph of ``src/`` has no cycle and only points downwards.

The graph is built from the source text, not from what happens to be imported at run time, so a
lazy import inside a function counts exactly like one at the top of a module, and so does an
``importlib.import_module("...")`` with a literal name. Imports inside an ``if TYPE_CHECKING:``
block are left out: they never run (they only name types for annotations), so they can create
neither a cycle nor a dependency at run time.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import warnings
from collections.abc import Iterator

import pytest

import ef.evaluation
from ef.evaluation import EvaluationError, EvaluationWarning

SRC = pathlib.Path(__file__).parents[1] / "src"
PACKAGE = "ef.evaluation"

# The layers of ef.evaluation, lowest first: the one declaration of the order. A module may
# import from its own layer's earlier siblings (left to right) and from any lower layer, never
# upwards. ``_fusion`` has its place before it exists.
LAYERS: list[list[str]] = [
    ["_exceptions", "_types", "_json", "_redact", "_version"],
    ["_report"],
    ["_scoring"],
    ["_io"],
    ["_plugins"],
    ["_running", "_fusion", "_http", "_rag", "_compare"],
    ["_html"],
    ["_builtins"],
    ["__init__", "testing"],
    ["cli"],
]
# The rest of the ``ef`` namespace: the corpus types and engines sit below the evaluation
# package, the ``ef-eval`` script entry point above it.
BELOW = (
    "ef.segments",
    "ef.source_manager",
    "ef._indexing",
    "ef._search_types",
    "ef._segmenting",
    "ef._encoding",
    "ef._index_store",
    "ef._index_files",
    "ef._segment_index",
    "ef._bm25_index",
    "ef._dense_index",
    "ef._bert_numpy",
    "ef._progress",
    "ef._index_progress",
)
ABOVE = ("ef._ef_eval",)
MAX_LINES = 400
OVER_MAX_LINES: dict[str, int] = {}


def module_files() -> dict[str, pathlib.Path]:
    """Every module of ``src/``, by dotted name."""
    found: dict[str, pathlib.Path] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = module_files()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from (inner for child in node.orelse for inner in [child, *_nodes(child)])
            continue
        yield node
        yield from _nodes(node)


def _resolve(importer: str, module: str | None, level: int) -> str:
    if not level:
        return module or ""
    package = importer if MODULES[importer].name == "__init__.py" else importer.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{module}" if module else package


def imports_of(name: str) -> set[str]:
    """The modules of ``src/`` that module ``name`` imports, however and wherever it does."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    targets: set[str] = set()
    for node in _nodes(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, node.module, node.level)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in MODULES else base)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            targets.add(node.args[0].value)
    return {target for target in targets if target in MODULES and target != name}


GRAPH = {name: imports_of(name) for name in MODULES}


def position(name: str) -> tuple[int, int]:
    """Where a module sits: (layer, place among the layer's siblings)."""
    if name.startswith(BELOW):
        return (-1, 0)
    if name.startswith(ABOVE):
        return (len(LAYERS), 0)
    assert name == PACKAGE or name.startswith(PACKAGE + "."), name
    unit = "__init__" if name == PACKAGE else name.split(".")[2]
    for layer, siblings in enumerate(LAYERS):
        if unit in siblings:
            return (layer, siblings.index(unit))
    raise AssertionError(f"{name} is in no layer: add {unit!r} to LAYERS")


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(GRAPH[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_lazy_and_string_imports():
    # Function-level imports and import_module strings are edges too, or cycles could hide.
    assert "ef._indexing" in GRAPH["ef.source_manager"]  # inside ingest()
    assert "ef.evaluation._running.runner" in GRAPH["ef.evaluation._running.driver"]
    assert "ef.evaluation._builtins.metrics" in GRAPH["ef.evaluation._builtins"]


def test_no_import_cycle():
    assert _cycles() == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    upward = [
        f"{importer} -> {target}"
        for importer, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if position(target) > position(importer)
    ]
    assert upward == []


def test_every_module_has_a_layer_and_every_layer_package_a_docstring():
    for name in MODULES:
        position(name)
    for siblings in LAYERS:
        for unit in siblings:
            folder = SRC / "ef" / "evaluation" / unit
            if folder.is_dir():
                docstring = ast.get_docstring(ast.parse((folder / "__init__.py").read_text()))
                assert docstring and docstring.splitlines()[0].endswith("."), unit


def test_the_plugin_host_depends_only_on_hookspecs_and_registry_types():
    own = {
        target
        for target in GRAPH["ef.evaluation._plugins.host"]
        if target.startswith(PACKAGE + ".")
    }
    assert own <= {
        "ef.evaluation._exceptions",
        "ef.evaluation._version",
        "ef.evaluation._plugins.hookspecs",
        "ef.evaluation._plugins.registry",
        "ef.evaluation._plugins.calls",
    }


def test_readers_and_adapters_never_import_the_plugin_host():
    for name, targets in GRAPH.items():
        if name.startswith(("ef.evaluation._io", "ef.evaluation._running.adapters")):
            assert not {t for t in targets if t.startswith("ef.evaluation._plugins")}, name


def test_the_cli_imports_nothing_private():
    private = [
        f"{importer} -> {target}"
        for importer, targets in sorted(GRAPH.items())
        if importer.startswith(PACKAGE + ".cli")
        for target in sorted(targets)
        if target.startswith(PACKAGE + "._")
    ]
    assert private == []


def test_no_module_is_over_400_lines():
    long = {
        name: lines
        for name, path in MODULES.items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines()))
        > OVER_MAX_LINES.get(name, MAX_LINES)
    }
    assert long == {}


# --- exceptions and warnings ---------------------------------------------------------------


def _defined_classes() -> Iterator[tuple[str, type]]:
    """Every class defined at the top level of a module of ``src/``, imported."""
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        class_names = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
        if not class_names:
            continue
        module = importlib.import_module(name)
        for class_name in class_names:
            yield f"{name}.{class_name}", getattr(module, class_name)


DEFINED = list(_defined_classes())


def test_the_walk_finds_exceptions_outside_the_exceptions_module():
    names = {name for name, cls in DEFINED if issubclass(cls, BaseException)}
    assert "ef.evaluation._exceptions.DatasetFormatError" in names
    assert "ef.evaluation.cli._common.CliError" in names


@pytest.mark.parametrize(
    "qualified, cls", [(n, c) for n, c in DEFINED if issubclass(c, BaseException)]
)
def test_every_exception_class_in_src_has_the_library_base(qualified, cls):
    if issubclass(cls, Warning):
        assert issubclass(cls, EvaluationWarning) and issubclass(cls, UserWarning), qualified
    else:
        assert issubclass(cls, EvaluationError), qualified


PUBLIC = [getattr(ef.evaluation, name) for name in ef.evaluation.__all__]
PUBLIC_EXCEPTIONS = [c for c in PUBLIC if isinstance(c, type) and issubclass(c, BaseException)]


def test_every_public_exception_derives_from_evaluation_error():
    errors = [c for c in PUBLIC_EXCEPTIONS if not issubclass(c, Warning)]
    assert len(errors) >= 10
    for cls in errors:
        assert issubclass(cls, EvaluationError), cls.__name__
    warns = [c for c in PUBLIC_EXCEPTIONS if issubclass(c, Warning)]
    assert {c.__name__ for c in warns} >= {"PluginWarning", "IncompleteEvaluationWarning"}
    for cls in warns:
        assert issubclass(cls, EvaluationWarning) and issubclass(cls, UserWarning), cls.__name__


@pytest.mark.parametrize(
    "name, builtin",
    [
        ("DatasetFormatError", ValueError),
        ("JournalCorruptError", ValueError),
        ("JournalMismatchError", ValueError),
        ("QueryError", RuntimeError),
        ("HttpServerError", OSError),
        ("HttpClientError", ValueError),
        ("HttpConnectionError", OSError),
        ("ResponseShapeError", ValueError),
    ],
)
def test_each_error_keeps_its_builtin_base(name, builtin):
    assert issubclass(getattr(ef.evaluation, name), builtin)


def test_journal_corruption_is_its_own_dataset_format_error():
    assert issubclass(ef.evaluation.JournalCorruptError, ef.evaluation.DatasetFormatError)
    assert ef.evaluation.JournalCorruptError is not ef.evaluation.DatasetFormatError


def test_one_except_clause_catches_a_real_library_error(tmp_path):
    bad = tmp_path / "qrels.txt"
    bad.write_text("q1 0 d1 high\n")
    with pytest.raises(EvaluationError) as caught:
        ef.evaluation.read_trec_qrels(bad)
    assert isinstance(caught.value, ValueError) and "qrels.txt:1" in str(caught.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvaluationWarning)
        with pytest.raises(ef.evaluation.PluginWarning):
            warnings.warn("x", ef.evaluation.PluginWarning, stacklevel=1)


def test_exception_modules_are_documented():
    for cls in PUBLIC_EXCEPTIONS:
        assert inspect.getdoc(cls), cls.__name__
