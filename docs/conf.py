"""Sphinx configuration: the API reference from the docstrings, the guides in MyST Markdown.

Build the HTML site (``docs/_build/html/index.html``) or the Markdown pages::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python -m sphinx -W --keep-going -b markdown docs docs/_build/markdown

The build is offline: no intersphinx, so standard-library names are shown but not linked.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import inspect
import pathlib
import re
import typing
from typing import Any

import sphinx_markdown_builder.translator
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.directives.other import TocTree
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.docutils import SphinxDirective

project = "ef-evaluation"
author = "the ef-evaluation authors"
copyright = "the ef-evaluation authors"
release = version = importlib.metadata.version("ef-evaluation")

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "myst_parser",
    "sphinx_markdown_builder",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]

# The reference reads like the spec: plain signatures, types in the field lists, members in
# alphabetical order.
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented_params"
autodoc_member_order = "alphabetical"
autodoc_default_options = {"members": True, "imported-members": True, "show-inheritance": True}
autosummary_generate = False

# Docstrings use Sphinx field lists; napoleon only picks up RagSample's "Keys:" section, which
# lists the keys of a TypedDict the way "Parameters:" lists arguments.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = [("Keys", "params_style")]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

html_theme = "alabaster"
html_title = "ef-evaluation"
html_theme_options = {"page_width": "1200px", "sidebar_width": "260px"}

markdown_anchor_signatures = True

# The guides in reading order; the index's toctree lists those that exist, then any other page
# of docs/ by name, so a guide still being written never breaks the build of the others.
GUIDE_ORDER = (
    "demo",
    "first-hour",
    "beir",
    "remote",
    "journal",
    "cluster",
    "trec",
    "metrics",
    "measure-families",
    "dataframes",
    "intervals",
    "compare",
    "suites",
    "groups",
    "gate",
    "judgements",
    "report",
    "fusion",
    "rag",
    "plugins",
    "extending",
    "cli",
    "semantics",
)

# The modules of the API reference (docs/api/); every name of their __all__ is documented.
REFERENCE_MODULES = (
    "ef.evaluation",
    "ef.evaluation.testing",
    "ef.evaluation.extending",
    "ef.segments",
    "ef.source_manager",
)

# --------------------------------------------------------------------------------------------
# The summary tables at the top of each reference page, built from the module's ``__all__`` so
# that a newly exported name shows up without editing the page.

_SECTIONS = (
    ("Module Attributes", "attribute"),
    ("Functions", "function"),
    ("Classes", "class"),
    ("Exceptions", "exception"),
)


def _kind(obj: object) -> str:
    if inspect.isclass(obj) and not _is_alias(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj):
        return "function"
    return "attribute"


def _is_alias(obj: object) -> bool:
    """Whether ``obj`` is a type alias such as ``Mapping[str, str]`` or ``A | B``."""
    return typing.get_origin(obj) is not None


def _is_literal(value: object) -> bool:
    """Whether ``repr(value)`` is worth showing: plain data, not an object's address or a view."""
    if isinstance(value, tuple | list | frozenset):
        return all(_is_literal(item) for item in value)
    return value is None or isinstance(value, str | int | float | bool)


@functools.cache
def _module_tree(module_name: str) -> ast.Module:
    return ast.parse(inspect.getsource(importlib.import_module(module_name)))


def _annotation(module_name: str | None, name: str) -> str | None:
    """The annotation written on ``name``'s assignment in ``module_name``, as source text."""
    if module_name is None:
        return None
    for node in _module_tree(module_name).body:
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == name:
            return ast.unparse(node.annotation)
    return None


def _defining_modules(module_name: str) -> dict[str, str]:
    """Map each name a package ``__init__`` imports to the module it is imported from."""
    found: dict[str, str] = {}
    for node in _module_tree(module_name).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found[alias.asname or alias.name] = node.module
    return found


def _source_position(module_name: str, name: str) -> int:
    """The line where ``name`` is defined at the top level of ``module_name`` (0 if unknown)."""
    for node in _module_tree(module_name).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return node.lineno
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node.lineno
    return 0


def public_names_by_kind(module_name: str, module_order: list[str]) -> dict[str, list[str]]:
    """The module's ``__all__``, split by kind, each kind in reading order.

    Reading order groups names by the private module that defines them (``module_order`` first,
    then the rest alphabetically) and keeps each module's source order — the order an author
    chose when writing the module.
    """
    module = importlib.import_module(module_name)
    origins = _defining_modules(module_name)
    rank = {name: index for index, name in enumerate(module_order)}

    def key(name: str) -> tuple[int, str, int, str]:
        origin = origins.get(name, module_name)
        short = origin.removeprefix(module_name + ".")
        return (rank.get(short, len(rank)), origin, _source_position(origin, name), name)

    grouped: dict[str, list[str]] = {kind: [] for _, kind in _SECTIONS}
    for name in sorted(module.__all__, key=key):
        grouped[_kind(getattr(module, name))].append(name)
    return grouped


class PublicApiSummary(SphinxDirective):
    """``.. public-api-summary:: module`` — the autosummary tables of a module's public names."""

    required_arguments = 1
    option_spec = {"module-order": directives.unchanged}  # noqa: RUF012 - the docutils API

    def run(self) -> list[nodes.Node]:
        module_name = self.arguments[0]
        order = self.options.get("module-order", "").split()
        grouped = public_names_by_kind(module_name, order)
        lines: list[str] = [f".. currentmodule:: {module_name}", ""]
        for title, kind in _SECTIONS:
            if not grouped[kind]:
                continue
            lines += [f".. rubric:: {title}", "", ".. autosummary::", ""]
            lines += [f"   {name}" for name in grouped[kind]]
            lines.append("")
        # automodule documents a data member only when the package itself holds its docstring;
        # these are imported, so they are documented here, before the other members (as the
        # spec does), and skipped by automodule (see _keep_public_names).
        for name in grouped["attribute"]:
            lines += [f".. autodata:: {name}"]
            value = getattr(importlib.import_module(module_name), name)
            if not _is_literal(value):
                lines.append("   :no-value:")
            annotation = _annotation(_defining_modules(module_name).get(name), name)
            if annotation and not _is_alias(value):
                lines.append(f"   :annotation: : {annotation}")
            lines.append("")
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=module_name), 0, container)
        return list(container.children)


class GuidesToctree(SphinxDirective):
    """``.. guides-toctree::`` — a toctree of the guides present, in :data:`GUIDE_ORDER`."""

    option_spec = {"maxdepth": directives.nonnegative_int}  # noqa: RUF012 - the docutils API

    def run(self) -> list[nodes.Node]:
        srcdir = pathlib.Path(self.env.srcdir)
        present = sorted(
            page.stem for page in srcdir.glob("*.md") if page.stem not in {"index", "README"}
        )
        ordered = [name for name in GUIDE_ORDER if name in present]
        ordered += [name for name in present if name not in GUIDE_ORDER]
        toctree = TocTree(
            "toctree",
            [],
            {"maxdepth": self.options.get("maxdepth", 2)},
            StringList(ordered, source=self.env.docname),
            self.lineno,
            self.content_offset,
            self.block_text,
            self.state,
            self.state_machine,
        )
        return toctree.run()


def _reread_index_when_pages_come_or_go(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """An incremental build re-reads the index, whose toctree lists the guides present."""
    return [app.config.root_doc] if added or removed else []


# --------------------------------------------------------------------------------------------
# Type aliases and constants are imported into the package, so their docstrings live in the
# private module that defines them; autodoc only looks in the package itself.


def _attribute_docstring(module_name: str, name: str) -> str | None:
    origin = _defining_modules(module_name).get(name) if "." in module_name else None
    for candidate in filter(None, (origin, module_name)):
        try:
            docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        except PycodeError:  # a module without source has no attribute docstrings
            continue
        if ("", name) in docs:
            return "\n".join(docs["", name])
    return None


def _fill_attribute_docstring(
    app: Sphinx, what: str, name: str, obj: object, options: Any, lines: list[str]
) -> None:
    if what != "data" or "." not in name:
        return
    # A callable constant (the hookimpl marker) is data, not a function: no "Return type".
    app.env.current_document.autodoc_annotations.pop(name, None)
    module_name, attribute = name.rsplit(".", 1)
    docstring = _attribute_docstring(module_name, attribute)
    if docstring is None:
        return
    # The value's own __doc__ (e.g. Mapping's, for an alias of Mapping[...]) is not its doc.
    lines[:] = inspect.cleandoc(docstring).splitlines()


def _keep_public_names(
    app: Sphinx, what: str, name: str, obj: object, skip: bool, options: Any
) -> bool | None:
    """Document every name of a module's ``__all__``, also those whose docstring is elsewhere."""
    if what != "module" or inspect.ismodule(obj):
        return None
    public = {n for m in REFERENCE_MODULES for n in importlib.import_module(m).__all__}
    if name not in public:
        return None
    # Data members are documented by the public-api-summary directive.
    return _kind(obj) == "attribute"


_CLASS_REPR = re.compile(r"<class '(?:builtins\.)?([\w.]+)'>")


def _readable_signature(
    app: Sphinx,
    what: str,
    name: str,
    obj: object,
    options: Any,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None] | None:
    """Defaults of exception types as ``(TimeoutError, OSError)``; no Protocol constructor."""
    if what == "class" and getattr(obj, "_is_protocol", False):
        # A protocol is implemented, never instantiated: its (*args, **kwargs) says nothing.
        return "", return_annotation
    if signature is None or "<class '" not in signature:
        return None
    return _CLASS_REPR.sub(r"\1", signature), return_annotation


class MarkdownTranslator(sphinx_markdown_builder.translator.MarkdownTranslator):
    """The Markdown writer, taught the node of the bare ``*`` in keyword-only signatures."""

    def visit_abbreviation(self, node: nodes.Node) -> None:
        """Write the abbreviation's text (the escaped ``*``), as the spec's page shows it."""

    def depart_abbreviation(self, node: nodes.Node) -> None:
        """Nothing closes an abbreviation in Markdown."""


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("public-api-summary", PublicApiSummary)
    app.add_directive("guides-toctree", GuidesToctree)
    app.connect("env-get-outdated", _reread_index_when_pages_come_or_go)
    app.connect("autodoc-process-docstring", _fill_attribute_docstring)
    app.connect("autodoc-skip-member", _keep_public_names)
    app.connect("autodoc-process-signature", _readable_signature)
    app.set_translator("markdown", MarkdownTranslator)
    return {"parallel_read_safe": True}
