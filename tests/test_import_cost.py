"""Importing the package stays cheap: what only running retrievers or plugins need waits.

``import ef.evaluation`` is paid by every command and script that scores a run; asyncio (the
runner's event loop and the HTTP client) and ``importlib.metadata`` (plugin discovery) are
loaded when first needed. Checked in a fresh interpreter, by module, not by a timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

DEFERRED = ("asyncio", "importlib.metadata", "ef.evaluation._http")


def modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    # No third-party plugin: what an installed plugin imports is its own business.
    env = {**os.environ, "EF_EVALUATION_PLUGINS": ""}
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True, env=env
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_importing_the_package_loads_none_of_the_deferred_modules():
    loaded = modules_after("import ef.evaluation")
    assert not loaded & set(DEFERRED)


def test_scoring_a_run_needs_no_event_loop():
    loaded = modules_after(
        "from ef.evaluation import evaluate_run\n"
        "evaluate_run({'q': ['a', 'b']}, {'q': {'b': 1.0}}, k_values=(1, 2))"
    )
    assert "ef.evaluation._scoring" in loaded
    assert "asyncio" not in loaded


def test_a_deferred_name_still_comes_from_the_package():
    loaded = modules_after(
        "import ef.evaluation\nassert ef.evaluation.HttpRetriever.__module__ == 'ef.evaluation'"
    )
    assert "ef.evaluation._http" in loaded
