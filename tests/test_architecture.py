"""The house in layers: the import graph of ``src/`` has no cycle and only points downwards,
and the plugins under ``plugins/`` reach ef through public names only, with no cycle either.

The graph is built from the source text, not from what happens to be imported at run time, so a
lazy import inside a function counts exactly like one at the top of a module, and so does an
``importlib.import_module("...")`` with a literal name. Imports inside an ``if TYPE_CHECKING:``
block are left out: they never run (they only name types for annotations), so they can create
neither a cycle nor a dependency at run time.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pathlib
import re
import warnings
from collections.abc import Callable, Iterator

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
    ["_groups"],
    ["_plugins"],
    ["_metric_names", "_running", "_fusion", "_http", "_rag", "_compare", "_judgements"],
    ["_html"],
    ["_suite", "_gate"],
    ["_builtins"],
    ["__init__", "testing", "extending"],
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
)
ABOVE = ("ef._ef_eval",)
MAX_LINES = 400
OVER_MAX_LINES: dict[str, int] = {}


def module_files(root: pathlib.Path = SRC) -> dict[str, pathlib.Path]:
    """Every module under ``root`` (``src/``, or a plugin's ``src/``), by dotted name."""
    found: dict[str, pathlib.Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
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


def _resolve(
    importer: str, module: str | None, level: int, modules: dict[str, pathlib.Path] = MODULES
) -> str:
    if not level:
        return module or ""
    package = importer if modules[importer].name == "__init__.py" else importer.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{module}" if module else package


def _import_statements(
    nodes: Iterator[ast.AST], resolve: Callable[[str | None, int], str]
) -> Iterator[tuple[str, list[str]]]:
    """Each import among ``nodes``: the module named, and for ``from … import a, b`` the names
    under it (``module.a``, ``module.b``), which may be modules or not. ``import_module("…")``
    and ``__import__("…")`` with a literal name count as imports."""
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node.module, node.level)
            yield base, [f"{base}.{alias.name}" for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, []


def imports_of(name: str, modules: dict[str, pathlib.Path] = MODULES) -> set[str]:
    """The modules of ``modules`` that module ``name`` imports, however and wherever it does."""
    tree = ast.parse(modules[name].read_text(encoding="utf-8"))
    targets: set[str] = set()
    resolve = functools.partial(_resolve, name, modules=modules)
    for base, names in _import_statements(_nodes(tree), resolve):
        if not names:
            targets.add(base)
        for submodule in names:
            targets.add(submodule if submodule in modules else base)
    return {target for target in targets if target in modules and target != name}


def import_graph(modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """Module → the modules of the same tree it imports at run time."""
    return {name: imports_of(name, modules) for name in modules}


@functools.cache
def graph() -> dict[str, set[str]]:
    """The import graph of the package's modules, made once, by the first test that reads it
    (not by each test worker's collection)."""
    return import_graph(MODULES)


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


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module of ``graph`` (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_lazy_and_string_imports():
    # Function-level imports and import_module strings are edges too, or cycles could hide.
    assert "ef._indexing" in graph()["ef.source_manager"]  # inside ingest()
    assert "ef.evaluation._running.runner" in graph()["ef.evaluation._running.driver"]
    assert "ef.evaluation._builtins.metrics" in graph()["ef.evaluation._builtins"]


def test_no_import_cycle():
    assert cycles(graph()) == []


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import of ``graph`` from a lower layer to a higher one, as ``importer -> target``."""
    return [
        f"{importer} -> {target}"
        for importer, targets in sorted(graph.items())
        for target in sorted(targets)
        if position(target) > position(importer)
    ]


def test_no_import_from_a_lower_layer_to_a_higher_one():
    assert upward_imports(graph()) == []


def test_the_cycle_and_layer_checks_see_a_planted_fault_in_a_source_tree(tmp_path):
    # The same functions as on src/, run on a tree of its shape with a fault planted in it.
    package = tmp_path / "ef" / "evaluation"
    for folder in ("_scoring", "_running"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text('"""A layer."""\n')
    (package / "__init__.py").write_text("from ef.evaluation._running.loop import run\n")
    (package / "_running" / "loop.py").write_text(
        "from ef.evaluation._scoring import walk\ndef run():\n    return walk\n"
    )
    (package / "_scoring" / "walk.py").write_text(
        "import importlib\n"
        "def later():\n"  # a lazy import by name: an upward edge and a cycle all the same
        "    return importlib.import_module('ef.evaluation._running.loop')\n"
    )
    graph = import_graph(module_files(tmp_path))
    assert cycles(graph) == [["ef.evaluation._running.loop", "ef.evaluation._scoring.walk"]]
    assert upward_imports(graph) == ["ef.evaluation._scoring.walk -> ef.evaluation._running.loop"]
    (package / "_scoring" / "walk.py").write_text("def later():\n    return 1\n")
    graph = import_graph(module_files(tmp_path))
    assert cycles(graph) == [] and upward_imports(graph) == []


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
        for target in graph()["ef.evaluation._plugins.host"]
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
    for name, targets in graph().items():
        if name.startswith(("ef.evaluation._io", "ef.evaluation._running.adapters")):
            assert not {t for t in targets if t.startswith("ef.evaluation._plugins")}, name


def test_the_cli_imports_nothing_private():
    private = [
        f"{importer} -> {target}"
        for importer, targets in sorted(graph().items())
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


def shared_module_names(modules: dict[str, pathlib.Path]) -> dict[str, list[str]]:
    """Module file names used twice inside one top-level subpackage of ``ef.evaluation``."""
    seen: dict[tuple[str, str], list[str]] = {}
    for name, path in modules.items():
        parts = name.split(".")
        if len(parts) < 4 or parts[:2] != ["ef", "evaluation"] or path.name == "__init__.py":
            continue
        seen.setdefault((parts[2], parts[-1]), []).append(name)
    return {f"{unit}/{leaf}.py": names for (unit, leaf), names in seen.items() if len(names) > 1}


def test_no_two_modules_share_a_name_in_one_subpackage():
    assert shared_module_names(MODULES) == {}


def test_a_shared_module_name_is_seen(tmp_path):
    for relative in ("_scoring/plan.py", "_scoring/measures/plan.py", "_io/plan.py"):
        path = tmp_path / "ef" / "evaluation" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    assert shared_module_names(module_files(tmp_path)) == {
        "_scoring/plan.py": ["ef.evaluation._scoring.measures.plan", "ef.evaluation._scoring.plan"]
    }


# --- the plugin host -----------------------------------------------------------------------
# The process's plugin host, ``HOST``, lives in ``_plugins.active`` (the ``_plugins`` package
# re-exports it, with the public functions that ask it). Only the public entry points ask it, once
# per call, and hand it (or what it answered) to what they drive; a module below them is handed
# the plugins as an argument and never imports the host. The host itself knows nothing of what
# plugins do: ``_plugins`` imports nothing of scoring (its measure vocabulary, notation parser,
# steps, domains).

HOST_MODULES = frozenset({"ef.evaluation._plugins", "ef.evaluation._plugins.active"})
# The modules that define public functions needing the plugins, besides the public top.
ENTRY_POINTS = frozenset(
    {
        "ef.evaluation._running.evaluate",  # evaluate_retrieval(_async), evaluate_run
        "ef.evaluation._running.run_files",  # read_trec_run, read_run
        "ef.evaluation._fusion.api",  # fuse
        "ef.evaluation._fusion.optimize",  # optimize_fusion
        "ef.evaluation._rag.evaluate",  # evaluate_rag
        "ef.evaluation._compare.compare",  # compare
        "ef.evaluation._metric_names.api",  # measure_catalogue, check_metrics
        "ef.evaluation._suite.datasets",  # SuiteDataset.parse, SuiteDataset.read
        "ef.evaluation._gate.reading",  # read_report (a plugin's report locations)
    }
)


def host_askers(graph: dict[str, set[str]]) -> list[str]:
    """The modules of ``graph`` that import the plugin host and may not."""
    top = position(PACKAGE)[0]
    return sorted(
        name
        for name, targets in graph.items()
        if targets & HOST_MODULES
        and name not in HOST_MODULES | ENTRY_POINTS
        and not (name.startswith(PACKAGE) and position(name)[0] >= top)
    )


def scoring_in_plugins(graph: dict[str, set[str]]) -> list[str]:
    """The scoring modules a module of ``_plugins`` imports, directly or through others."""
    reached: set[str] = set()
    todo = [name for name in graph if name.startswith(PACKAGE + "._plugins")]
    while todo:
        name = todo.pop()
        for target in graph[name] - reached:
            reached.add(target)
            todo.append(target)
    return sorted(name for name in reached if name.startswith(PACKAGE + "._scoring"))


def test_the_host_rule_sees_a_planted_import():
    planted = {name: set(targets) for name, targets in graph().items()}
    planted["ef.evaluation._running.driver"].add("ef.evaluation._plugins")
    planted["ef.evaluation._fusion._compiled"].add("ef.evaluation._plugins.active")
    planted["ef.evaluation._plugins.registry"].add("ef.evaluation._scoring.notation")
    planted["ef.evaluation._io.builtin_datasets"].add("ef.evaluation._scoring.order")
    assert host_askers(planted) == [
        "ef.evaluation._fusion._compiled",
        "ef.evaluation._running.driver",
    ]
    assert {"ef.evaluation._scoring.notation", "ef.evaluation._scoring.order"} <= set(
        scoring_in_plugins(planted)
    )


def test_only_the_public_entry_points_import_the_plugin_host():
    assert host_askers(graph()) == []
    assert ENTRY_POINTS <= set(graph())  # a renamed entry point must be renamed here too
    for name in ENTRY_POINTS:  # and each still asks the host, or it is no entry point
        assert graph()[name] & HOST_MODULES, name


def test_the_plugin_package_imports_nothing_of_scoring_even_indirectly():
    assert scoring_in_plugins(graph()) == []


def test_the_builtin_plugin_name_is_written_once_in_src():
    written = [
        name
        for name, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value == "ef.evaluation._builtins"
    ]
    assert written == ["ef.evaluation._plugins.registry"]


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


# --- plugins on the public API ------------------------------------------------------------
# Every distribution under ``plugins/`` (its sources and its tests) reaches ef through public
# names only: ``ef.evaluation``, ``ef.evaluation.extending``, ``ef.evaluation.testing``,
# ``ef.segments``, ``ef.source_manager``. An import of ``ef._…`` or ``ef.evaluation._…`` — at
# the top, inside a function, under ``TYPE_CHECKING``, through ``importlib.import_module("…")``,
# or in the text of code run in another process — would break on the next internal change. So
# would a private name reached through a public import (``ef.evaluation._plugins.HOST`` after
# ``import ef.evaluation``, ``getattr(evaluation, "_running")``) or named by a string
# (``monkeypatch.setattr("ef.evaluation._plugins.HOST", …)``, ``sys.modules["ef._segmenting"]``).
# A plugin's own private modules (``ef_evaluation_ray._hits``) are its business.

PLUGINS = SRC.parent / "plugins"
_IMPORT_IN_TEXT = re.compile(r"\b(?:from|import)\s+(ef(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
# A whole string that is a dotted name in ef, ``pkgutil.resolve_name``'s ``module:attr`` too.
_DOTTED_EF_NAME = re.compile(r"ef(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?")


def is_private_name(dotted: str) -> bool:
    """Whether ``dotted`` names something private of ef: a part after ``ef`` with one leading
    underscore (``ef._segmenting``, ``ef.evaluation._plugins.HOST``; not ``__version__``)."""
    root, *parts = dotted.split(".")
    return root == "ef" and any(p.startswith("_") and not p.endswith("__") for p in parts)


def private_imports(path: pathlib.Path, root: pathlib.Path) -> list[str]:
    """Every private name of ef that the file ``path`` (a module under ``root``) imports, as
    ``file:line name``. Every node counts, ``if TYPE_CHECKING:`` blocks included, and so do
    string literals holding an import statement (code a test runs in another process)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    name = ".".join(parts[:-1] if is_package else parts)
    package = name if is_package else name.rpartition(".")[0]

    def resolve(module: str | None, level: int) -> str:
        base = package
        for _ in range(level - 1):
            base = base.rpartition(".")[0]
        return module or "" if not level else f"{base}.{module}" if module else base

    where = path.relative_to(PLUGINS.parent) if path.is_relative_to(PLUGINS.parent) else path
    bound = ef_bindings(tree, resolve)
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        named = [base_and for base, names in _import_statements(iter([node]), resolve)
                 for base_and in (base, *names)]  # fmt: skip
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            named += _IMPORT_IN_TEXT.findall(node.value)
            if _DOTTED_EF_NAME.fullmatch(node.value):
                named.append(node.value.replace(":", "."))
        if reached := name_reached(node, bound):
            named.append(reached)
        found.update((line, dotted) for dotted in named if is_private_name(dotted))
    return [f"{where}:{line} {dotted}" for line, dotted in sorted(found)]


def ef_bindings(tree: ast.AST, resolve: Callable[[str | None, int], str]) -> dict[str, str]:
    """Each local name an import in ``tree`` binds to something of ef, with what it names:
    ``import ef.evaluation`` binds ``ef``, ``from ef import evaluation as ev`` binds ``ev`` to
    ``ef.evaluation``. Every scope counts alike: a checker may see too much, never too little."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                first = alias.name.partition(".")[0]
                bound[alias.asname or first] = alias.name if alias.asname else first
        elif isinstance(node, ast.ImportFrom):
            base = resolve(node.module, node.level)
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    return {local: dotted for local, dotted in bound.items() if dotted.split(".")[0] == "ef"}


def name_reached(node: ast.AST, bound: dict[str, str]) -> str | None:
    """The dotted name of ef that ``node`` reaches when it is an attribute chain, or a
    ``getattr(…, "literal")``, starting at a local name ``bound`` to something of ef."""
    attributes: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            attributes.append(node.attr)
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            attributes.append(node.args[1].value)
            node = node.args[0]
        else:
            break
    if not attributes or not isinstance(node, ast.Name) or node.id not in bound:
        return None
    return ".".join([bound[node.id], *reversed(attributes)])


def plugin_roots(plugins: pathlib.Path = PLUGINS) -> list[pathlib.Path]:
    """Each plugin distribution's ``src/`` and ``tests/`` folders, where they exist."""
    return [
        folder
        for distribution in sorted(plugins.iterdir())
        for folder in (distribution / "src", distribution / "tests")
        if folder.is_dir()
    ]


def plugin_python_files(plugins: pathlib.Path = PLUGINS) -> list[tuple[pathlib.Path, pathlib.Path]]:
    """Every Python file (``.py``, ``.pyi``) of every plugin distribution — sources, tests,
    build scripts, stubs — with the folder its module names start from (``src/``, ``tests/``,
    or the distribution's own folder). Caches and build output are left out."""
    left_out = ("__pycache__", "build", "dist")
    found = []
    for distribution in sorted(path for path in plugins.iterdir() if path.is_dir()):
        for path in sorted(distribution.rglob("*")):
            inside = path.relative_to(distribution).parts
            if path.suffix not in (".py", ".pyi") or any(
                part.startswith(".") or part.endswith(".egg-info") or part in left_out
                for part in inside[:-1]
            ):
                continue
            nested = len(inside) > 1 and inside[0] in ("src", "tests")
            found.append((path, distribution / inside[0] if nested else distribution))
    return found


def private_imports_under(plugins: pathlib.Path = PLUGINS) -> list[str]:
    """Every private name of ef reached anywhere in the plugins' Python files."""
    return [
        found
        for path, root in plugin_python_files(plugins)
        for found in private_imports(path, root)
    ]


def plugin_cycles(plugins: pathlib.Path = PLUGINS) -> dict[str, list[list[str]]]:
    """The import cycles of each plugin's sources (its ``src/`` tree), where there are any."""
    found = {}
    for root in plugin_roots(plugins):
        if root.name == "src":
            if in_circles := cycles(import_graph(module_files(root))):
                found[root.parent.name] = in_circles
    return found


def test_the_plugins_are_found():
    roots = {f"{root.parent.name}/{root.name}" for root in plugin_roots()}
    assert {"ef-evaluation-ray/src", "ef-evaluation-ray/tests"} <= roots
    assert {"ef-evaluation-speedups/tests", "ef-evaluation-langchain/src"} <= roots
    assert len(roots) >= 10


def test_plugins_import_no_private_name_of_ef():
    assert private_imports_under() == []


def test_no_import_cycle_in_any_plugin():
    assert plugin_cycles() == {}


def test_the_private_import_check_sees_every_form_of_import(tmp_path):
    package = tmp_path / "ef-evaluation-fake" / "src" / "ef_evaluation_fake"
    tests = tmp_path / "ef-evaluation-fake" / "tests"
    package.mkdir(parents=True)
    tests.mkdir()
    (package / "__init__.py").write_text(
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "from ef.evaluation import hookimpl\n"  # public
        "from ef.evaluation.extending import whole_documents\n"  # public
        "from ef.evaluation import __version__\n"  # a dunder is public
        "from ef_evaluation_fake import _own\n"  # the plugin's own private module
        "from ef._bm25_index import Bm25Index\n"
        "if TYPE_CHECKING:\n"
        "    from ef.evaluation._types import Qrels\n"
        "def lazy():\n"
        "    import ef.evaluation._plugins as plugins\n"
        "    return importlib.import_module('ef._segmenting')\n"
        "from ef.evaluation import _running\n"
    )
    (package / "_own.py").write_text("from . import _other\nfrom .. import _missing\n")
    (tests / "test_fake.py").write_text(
        "CODE = 'import sys\\nfrom ef.evaluation._plugins import HOST\\n'\n"
        "NOTE = 'the ef.evaluation._plugins package'\n"  # prose, not an import
        "__import__('ef._encoding')\n"
    )
    src = "ef-evaluation-fake/src/ef_evaluation_fake/__init__.py"
    assert private_imports_under(tmp_path) == [
        f"{tmp_path / src}:7 ef._bm25_index",
        f"{tmp_path / src}:7 ef._bm25_index.Bm25Index",
        f"{tmp_path / src}:9 ef.evaluation._types",
        f"{tmp_path / src}:9 ef.evaluation._types.Qrels",
        f"{tmp_path / src}:11 ef.evaluation._plugins",
        f"{tmp_path / src}:12 ef._segmenting",
        f"{tmp_path / src}:13 ef.evaluation._running",
        f"{tmp_path}/ef-evaluation-fake/tests/test_fake.py:1 ef.evaluation._plugins",
        f"{tmp_path}/ef-evaluation-fake/tests/test_fake.py:3 ef._encoding",
    ]


def test_the_cycle_check_sees_a_planted_cycle_in_a_plugin(tmp_path):
    package = tmp_path / "ef-evaluation-fake" / "src" / "ef_evaluation_fake"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from ef_evaluation_fake.a import A\n")
    (package / "a.py").write_text("from ef_evaluation_fake import b\nA = 1\n")
    (package / "b.py").write_text("def later():\n    from ef_evaluation_fake.a import A\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ef_evaluation_fake.d import D\n"  # never runs: no cycle
    )
    (package / "d.py").write_text("from . import c\nD = 1\n")
    assert plugin_cycles(tmp_path) == {
        "ef-evaluation-fake": [["ef_evaluation_fake.a", "ef_evaluation_fake.b"]]
    }
    (package / "b.py").write_text("def later():\n    return 1\n")
    assert plugin_cycles(tmp_path) == {}


def test_the_private_import_check_sees_private_names_reached_through_public_ones(tmp_path):
    distribution = tmp_path / "ef-evaluation-fake"
    tests = distribution / "tests"
    tests.mkdir(parents=True)
    (distribution / "setup.py").write_text("from ef._version import VERSION\n")
    (distribution / "build" / "lib").mkdir(parents=True)  # build output: not the plugin's code
    (distribution / "build" / "lib" / "copy.py").write_text("from ef._version import VERSION\n")
    (tests / "test_reach.py").write_text(
        "import pkgutil, sys\n"
        "import ef.evaluation\n"
        "import ef.evaluation as evaluation\n"
        "from ef import evaluation as ev\n"
        "from ef.evaluation import registry\n"
        "HOST = ef.evaluation._plugins.HOST\n"
        "RUNNING = evaluation._running\n"
        "SCORING = getattr(ev, '_scoring')\n"
        "INNER = registry._loaded\n"
        "PUBLIC = ef.evaluation.extending.whole_documents, ev.__version__, sys._getframe\n"
        "def test_patched(monkeypatch):\n"
        "    monkeypatch.setattr('ef.evaluation._plugins.HOST', None)\n"
        "    del sys.modules['ef._segmenting']\n"
        "    return pkgutil.resolve_name('ef._bm25_index:Bm25Index')\n"
        "NOTE = 'see ef.evaluation._plugins'\n"  # prose, not a name
    )
    test = f"{tmp_path}/ef-evaluation-fake/tests/test_reach.py"
    assert private_imports_under(tmp_path) == [
        f"{tmp_path}/ef-evaluation-fake/setup.py:1 ef._version",
        f"{tmp_path}/ef-evaluation-fake/setup.py:1 ef._version.VERSION",
        f"{test}:6 ef.evaluation._plugins",
        f"{test}:6 ef.evaluation._plugins.HOST",
        f"{test}:7 ef.evaluation._running",
        f"{test}:8 ef.evaluation._scoring",
        f"{test}:9 ef.evaluation.registry._loaded",
        f"{test}:12 ef.evaluation._plugins.HOST",
        f"{test}:13 ef._segmenting",
        f"{test}:14 ef._bm25_index.Bm25Index",
    ]
