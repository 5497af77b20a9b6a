"""Every example of the guides runs: each ``pycon`` and ``python`` block of a page in ``docs/``,
in order, in one fresh namespace (a block is skipped only when the line before it is
``<!-- illustrative -->``). The builds and the reference page are checked in ``test_docs.py``;
the examples are a file of their own so the two share the run's workers.
"""

from __future__ import annotations

import doctest
import pathlib
import re
import warnings

import attrs
import pytest

DOCS = pathlib.Path(__file__).parents[1] / "docs"
ILLUSTRATIVE = "<!-- illustrative -->"


@attrs.frozen
class Block:
    language: str
    text: str
    line: int


def _runnable_blocks(page: pathlib.Path) -> list[Block]:
    blocks, lines = [], page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        fence = re.match(r"^(`{3,}|~{3,})\s*([\w{}-]*)", lines[index])
        if fence is None:
            index += 1
            continue
        marker, language = fence.groups()
        end = index + 1
        while end < len(lines) and not lines[end].startswith(marker):
            end += 1
        previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
        if language in {"python", "py", "pycon"} and previous.strip() != ILLUSTRATIVE:
            blocks.append(Block(language, "\n".join(lines[index + 1 : end]) + "\n", index + 2))
        index = end + 1
    return blocks


GUIDES = sorted(page for page in DOCS.glob("*.md") if _runnable_blocks(page))


def test_the_block_finder_sees_marked_and_unmarked_blocks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nx = 1\n```\n\n<!-- illustrative -->\n```python\nimport nowhere\n```\n"
        "```text\n>>> no\n```\n````pycon\n>>> 1 + 1\n2\n````\n"
    )
    assert [(b.language, b.line) for b in _runnable_blocks(page)] == [
        ("python", 2),
        ("pycon", 13),
    ]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("page", GUIDES, ids=[page.name for page in GUIDES])
def test_guide_examples_run(page, tmp_path, monkeypatch):
    """Each page's blocks run in order in one fresh namespace, in an empty working directory."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.REPORT_ONLY_FIRST_FAILURE)
    parser = doctest.DocTestParser()
    with warnings.catch_warnings(record=True):
        # A reader sees warnings printed, not raised: an example may cause one on purpose.
        warnings.simplefilter("always")
        for block in _runnable_blocks(page):
            where = f"{page.name}:{block.line}"
            if block.language == "pycon":
                test = parser.get_doctest(block.text, namespace, where, str(page), block.line - 1)
                report: list[str] = []
                result = runner.run(test, out=report.append, clear_globs=False)
                assert result.failed == 0, "".join(report)
                namespace.update(test.globs)
            else:
                code = compile("\n" * (block.line - 1) + block.text, str(page), "exec")
                exec(code, namespace)
