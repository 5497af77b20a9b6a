"""``ef-eval rag`` imports no scorer before a chosen metric needs it.

Each case runs the command in a fresh interpreter, with every installed plugin loaded as a user
would have them, and reads back which heavy modules ended up in ``sys.modules``: the lexical
defaults need none, and a metric of the ``rag-metrics`` extra brings its own library only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "ragas",
    "rouge_score",
    "sacrebleu",
    "rapidfuzz",
    "torch",
    "sentence_transformers",
    "transformers",
    "langchain_core",
    "ray",
    "ir_datasets",
)
PROBE = f"""\
import json, sys
from ef.evaluation.cli import main
code = main(sys.argv[1:])
heavy = [name for name in {HEAVY!r} if name in sys.modules]
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
"""
SAMPLES = [
    {
        "user_input": "capital of France?",
        "response": "Paris",
        "reference": "Paris",
        "retrieved_contexts": ["Paris is the capital of France."],
    },
    {"user_input": "2 + 2?", "response": "five", "reference": "four", "retrieved_contexts": []},
    {
        "user_input": "largest ocean?",
        "response": "the Pacific",
        "reference": "Pacific",
        "retrieved_contexts": ["x"],
    },
    {
        "user_input": "a primary colour?",
        "response": "red",
        "reference": ["blue", "Red"],
        "retrieved_contexts": ["Red, yellow and blue are primary colours."],
    },
]


def imported(tmp_path: Path, *args: str) -> list[str]:
    """The heavy modules ``ef-eval rag SAMPLES *args`` imported, in a fresh interpreter."""
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(sample) + "\n" for sample in SAMPLES))
    env = {key: value for key, value in os.environ.items() if key != "EF_EVALUATION_PLUGINS"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, "rag", str(samples), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    last = result.stderr.strip().splitlines()[-1]
    outcome = json.loads(last)
    assert outcome["code"] == 0, result.stderr
    heavy: list[str] = outcome["heavy"]
    return heavy


@pytest.mark.parametrize(
    ("args", "needed"),
    [
        ((), []),
        (("--format", "json"), []),
        (("--metrics", "exact_match,token_f1,context_recall"), []),
        (("--metrics", "rouge_score"), ["rouge_score"]),
        (("--metrics", "bleu_score,chrf_score"), ["sacrebleu"]),
        (("--metrics", "non_llm_string_similarity"), ["rapidfuzz"]),
        (("--html", "rag.html"), []),
    ],
)
def test_only_the_chosen_metrics_scorers_are_imported(
    tmp_path: Path, args: tuple[str, ...], needed: list[str]
) -> None:
    assert imported(tmp_path, *args) == needed
