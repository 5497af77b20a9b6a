"""What the guides promise a first user: a plugin's whole ``pyproject.toml``, a Ray start that
stays on this machine with public arguments only, and ERR's numbers on binary judgements."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import ir_measures
import pytest
from ir_measures import ERR

from ef.evaluation import evaluate_run

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def blocks(page: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` in the guide ``page``."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_the_plugin_guide_gives_a_whole_pyproject_like_the_templates() -> None:
    (shown,) = [tomllib.loads(b) for b in blocks("plugins.md", "toml") if "[build-system]" in b]
    template = tomllib.loads(
        (ROOT / "plugins/ef-evaluation-extra-metrics/pyproject.toml").read_text()
    )
    assert shown["build-system"] == template["build-system"]
    project = shown["project"]
    for key in ("requires-python", "license", "dependencies"):
        assert project[key] == template["project"][key], key
    assert {"name", "version", "description", "readme"} <= set(project)
    ((entry, module),) = project["entry-points"]["ef.evaluation"].items()
    assert entry.isidentifier()
    # The wheel holds the package the entry point names, from src/ as in the template.
    assert shown["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [f"src/{module}"]
    assert f"src/{module}/__init__.py" in (DOCS / "plugins.md").read_text()


def test_the_plugin_guides_module_registers_a_metric_that_counts_hits() -> None:
    (code,) = [b for b in blocks("plugins.md", "python") if "description=hits.__doc__" in b]
    namespace: dict[str, object] = {}
    exec(compile(code, "plugins.md", "exec"), namespace)
    registered: list[tuple[str, object]] = []
    hook = namespace["ef_evaluation_register_metrics"]
    hook(lambda name, fn, **options: registered.append((name, fn)))  # type: ignore[operator]
    ((name, fn),) = registered
    ranked, relevant = ["d1", "x", "d2", "d1", "d3"], {"d1": 1, "d2": 2, "d3": 0}
    assert name == "hits" and fn(ranked, relevant, 3) == 2.0  # type: ignore[operator]
    assert fn(ranked, relevant, 5) == 2.0  # type: ignore[operator]  # d1 once, d3 not relevant


def test_the_local_ray_start_uses_public_arguments_only() -> None:
    import ray

    text = (DOCS / "cluster.md").read_text(encoding="utf-8")
    start = text.index("## Keeping Ray on this machine")
    section = text[start : text.index("\n## ", start + 1)]
    assert "_node_ip_address" not in text  # no private argument anywhere in the guide
    (python,) = [b for b in blocks("cluster.md", "python") if 'address="local"' in b]
    call = python[python.index("ray.init(") : python.index("\n)", python.index("ray.init("))]
    keywords = re.findall(r"^\s+(\w+)=", call, flags=re.MULTILINE)
    assert keywords == ["address", "include_dashboard", "num_cpus"]
    assert set(keywords) <= set(inspect.signature(ray.init).parameters)
    assert 'os.environ["RAY_USAGE_STATS_ENABLED"] = "0"' in python
    (console,) = [b for b in blocks("cluster.md", "console") if "ray start" in b]
    assert "RAY_USAGE_STATS_ENABLED=0" in console
    flags = set(re.findall(r"(--[a-z-]+)", console.partition("ray start")[2].partition("$")[0]))
    assert {"--head", "--node-ip-address", "--include-dashboard", "--port"} <= flags
    executable = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert executable is not None
    usage = subprocess.run(
        [executable, "start", "--help"], capture_output=True, text=True, timeout=120
    ).stdout
    for flag in flags | set(re.findall(r"`(--[a-z-]+)`", section)):
        assert re.search(rf"^\s+{flag}\b", usage, flags=re.MULTILINE), flag


def _err(grades: list[int], k: int) -> float:
    """Chapelle et al.'s ERR@k with gdeval's stopping probabilities, by hand."""
    total, going_on = 0.0, 1.0
    for rank, grade in enumerate(grades[:k], 1):
        stop = (2**grade - 1) / 2**4
        total += going_on * stop / rank
        going_on *= 1 - stop
    return total


def test_the_err_paragraph_gives_the_numbers_of_binary_judgements() -> None:
    text = (DOCS / "metrics.md").read_text(encoding="utf-8")
    paragraph = text[text.index("**ERR on binary qrels**") :].partition("\n\n")[0]
    cases = {
        "0.0625": ({"q1": ["d1"]}, {"q1": {"d1": 1}}),
        "0.1761": ({"q1": [f"d{i}" for i in range(20)]}, {"q1": {f"d{i}": 1 for i in range(20)}}),
        "0.9375": ({"q1": ["d1"]}, {"q1": {"d1": 4}}),
    }
    for shown, (run, qrels) in cases.items():
        assert shown in paragraph
        ours = evaluate_run(run, qrels, metrics=["ERR@20"], k_values=(20,)).metrics["ERR@20"]
        grades = [qrels["q1"].get(doc, 0) for doc in run["q1"]]
        assert f"{ours:.4f}" == shown and ours == pytest.approx(_err(grades, 20), abs=1e-12)
    # gdeval itself, through ir_measures, on numeric query ids (all it reads).
    gdeval = ir_measures.gdeval.calc_aggregate([ERR @ 20], {"1": {"d1": 1}}, {"1": {"d1": 1.0}})
    assert gdeval[ERR @ 20] == pytest.approx(0.0625, abs=5e-6)
