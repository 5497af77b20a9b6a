"""as_ragas_dataset against the real Ragas: lossless round trips, errors, import failures."""

from __future__ import annotations

import builtins
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation._rag.ragas import as_ragas_dataset

INSTALL_HINT = "pip install 'ef-evaluation[ragas]'"


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No API key, no usage tracking, and any attempt to open a connection fails the test."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    # Ragas posts usage events from `evaluate`; opt out so no code path here may phone home.
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "true")
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError(f"network access attempted during a test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield
    assert attempts == []


def full_sample(n: int) -> dict[str, Any]:
    return {
        "user_input": f"question {n}?",
        "response": f"answer {n}",
        "retrieved_contexts": [f"context {n}a", f"context {n}b"],
        "reference": f"truth {n}",
        "reference_contexts": [f"gold {n}"],
    }


def test_samples_round_trip_field_for_field() -> None:
    from ragas import EvaluationDataset, SingleTurnSample

    samples = [full_sample(0), full_sample(1), {"response": "only a response"}]
    dataset = as_ragas_dataset(samples)
    assert isinstance(dataset, EvaluationDataset)
    assert len(dataset.samples) == len(samples)
    for sample, converted in zip(samples, dataset.samples, strict=True):
        assert isinstance(converted, SingleTurnSample)
        for key, value in sample.items():
            assert getattr(converted, key) == value
    assert dataset.to_list() == samples


text = st.text(max_size=30)
ragas_samples = st.fixed_dictionaries(
    {"response": text},
    optional={
        "user_input": text,
        "retrieved_contexts": st.lists(text, max_size=3),
        "reference": text,
        "reference_contexts": st.lists(text, max_size=3),
    },
)


@settings(max_examples=40)
@given(st.lists(ragas_samples, min_size=1, max_size=4))
def test_any_rag_sample_survives_the_conversion(samples: list[dict[str, Any]]) -> None:
    assert as_ragas_dataset(iter(samples)).to_list() == samples


def test_other_single_turn_sample_fields_pass_through() -> None:
    sample = {"response": "r", "rubrics": {"score1": "bad"}, "retrieved_context_ids": ["d1"]}
    assert as_ragas_dataset([sample]).to_list() == [sample]


def test_empty_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="samples is empty"):
        as_ragas_dataset([])


def test_a_key_ragas_would_drop_is_named() -> None:
    with pytest.raises(ValueError, match=r"sample 1: key 'score' is not a field .* dropped"):
        as_ragas_dataset([full_sample(0), {**full_sample(1), "score": 0.5}])


def test_a_list_reference_is_refused() -> None:
    with pytest.raises(ValueError, match=r"sample 0: key 'reference' holds a list"):
        as_ragas_dataset([{"response": "Paris", "reference": ["Paris", "paris, France"]}])


def test_a_value_ragas_rejects_names_the_sample() -> None:
    with pytest.raises(ValueError, match=r"sample 1: Ragas rejected it") as raised:
        as_ragas_dataset([full_sample(0), {"response": 3}])
    assert raised.value.__cause__ is not None


def test_a_non_mapping_sample_is_refused() -> None:
    with pytest.raises(TypeError, match=r"sample 0: expected a mapping"):
        as_ragas_dataset(["just a string"])


def test_missing_ragas_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ragas", None)
    with pytest.raises(ImportError) as raised:
        as_ragas_dataset([full_sample(0)])
    message = str(raised.value)
    assert f"ragas is not installed ({INSTALL_HINT})" in message
    assert "failed to import" not in message
    assert isinstance(raised.value.__cause__, ModuleNotFoundError)


def test_broken_ragas_is_not_mistaken_for_a_missing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    original = ModuleNotFoundError(
        "No module named 'langchain_community.chat_models.vertexai'",
        name="langchain_community.chat_models.vertexai",
    )
    real_import = builtins.__import__

    def failing_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "ragas" or name.startswith("ragas."):
            raise original
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing_import)
    with pytest.raises(ImportError) as raised:
        as_ragas_dataset([full_sample(0)])
    message = str(raised.value)
    assert message.startswith(
        "ragas is installed but failed to import: "
        "No module named 'langchain_community.chat_models.vertexai'"
    )
    assert "not installed" not in message
    assert raised.value.__cause__ is original


def test_ragas_imports_offline_without_key_or_warnings() -> None:
    """A fresh interpreter imports ragas and converts a sample with sockets disabled."""
    script = (
        "import socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise SystemExit('network access attempted')\n"
        "socket.socket.connect = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from ef.evaluation._rag.ragas import as_ragas_dataset\n"
        "dataset = as_ragas_dataset([{'response': 'r', 'reference': 'x'}])\n"
        "assert dataset.to_list() == [{'response': 'r', 'reference': 'x'}]\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["RAGAS_DO_NOT_TRACK"] = "true"
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert result.returncode == 0, result.stderr
