"""The two dense backends: the numpy BERT backend gives the embeddings of sentence-transformers
without torch, each reports a missing model at once when the hub cannot answer, and
sentence-transformers runs on the device asked for.

The run's other tests encode with the numpy backend (``tests/conftest.py``): what they check
does not depend on the backend, and importing sentence-transformers costs about ten CPU-seconds
in each process. The tests of sentence-transformers itself are here, in one file, so that one
worker imports it."""

from __future__ import annotations

import importlib
import os
import random
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ef._bert_numpy import NumpyBertEncoder
from ef._encoding import choose_device, load_model, resolve_model
from ef.evaluation import read_beir
from ef.source_manager import ingest


def generated_texts(count: int, seed: int = 7) -> list[str]:
    """Texts of every length, from one word to well past the 256-token truncation."""
    rng = random.Random(seed)
    words = "the a of retrieval index query naïve café 42 x-ray co-operate Zürich !? ()".split()
    return [
        " ".join(rng.choice(words) for _ in range(rng.choice([1, 3, 20, 300])))
        for _ in range(count)
    ]


@pytest.fixture
def sentence_transformers_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EF_DENSE_BACKEND", "sentence-transformers")


def test_numpy_embeddings_equal_sentence_transformers(sentence_transformers_backend: None) -> None:
    corpus, queries, _ = read_beir("builtin:stdlib-docs")
    texts = [*list(corpus.values())[:3], *list(queries.values())[:20], *generated_texts(6), ""]
    numpy_encoder = NumpyBertEncoder(resolve_model("all-MiniLM-L6-v2"))
    reference = load_model("all-MiniLM-L6-v2", device="cpu")
    ours = numpy_encoder.encode(texts, batch_size=16, normalize_embeddings=True)
    theirs = reference.encode(
        texts, batch_size=16, normalize_embeddings=True, convert_to_numpy=True
    )
    assert ours.shape == theirs.shape == (len(texts), 384)
    assert ours.dtype == np.float32
    cosines = (ours * theirs).sum(axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1)
    )
    assert cosines.min() >= 0.9999
    # A text alone or in a padded batch: the same embedding.
    alone = numpy_encoder.encode([texts[10]], normalize_embeddings=True)
    assert float(alone[0] @ ours[10]) >= 0.99999


def test_the_backend_is_chosen_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EF_DENSE_BACKEND", "numpy")
    assert isinstance(load_model("all-MiniLM-L6-v2"), NumpyBertEncoder)
    with pytest.raises(ValueError, match="the numpy backend runs on the CPU only"):
        load_model("all-MiniLM-L6-v2", device="cuda")
    monkeypatch.setenv("EF_DENSE_BACKEND", "onnx")
    with pytest.raises(ValueError, match="EF_DENSE_BACKEND must be one of"):
        load_model("all-MiniLM-L6-v2")


def test_a_model_the_backend_cannot_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "roberta", "hidden_act": "gelu"}')
    with pytest.raises(ValueError, match="the numpy backend runs BERT models"):
        NumpyBertEncoder(tmp_path)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed once the probe is


@pytest.mark.parametrize("offline", ["1", ""])
def test_a_missing_model_is_reported_when_the_hub_cannot_answer(
    offline: str, tmp_path: Path
) -> None:
    # In a new process, so that huggingface_hub reads the settings as it is imported. The same
    # check for sentence-transformers, with the hub in three states, is the next test.
    script = textwrap.dedent(
        """
        from ef._encoding import load_model
        try:
            load_model("example-org/no-such-model")
        except OSError as error:
            print("OSError:", error)
        """
    )
    environment = {
        **os.environ,
        "EF_DENSE_BACKEND": "numpy",
        "HF_HUB_OFFLINE": offline,
        "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}",
        "HF_HOME": str(tmp_path / "empty-cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=100,
        env=environment,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "OSError: cannot load" in done.stdout
    assert "no-such-model" in done.stdout
    why = "offline mode is on" if offline else "cannot be reached"
    assert why in done.stdout


@pytest.fixture(params=["offline-mode", "refusing", "silent"])
def unavailable_hub(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    sentence_transformers_backend: None,
) -> Iterator[str]:
    """A Hugging Face hub that cannot serve a model: offline mode is switched on after
    huggingface_hub was imported, or the endpoint is a local port that refuses connections, or
    one that accepts them and never answers. Yields what the error message should say."""
    import huggingface_hub.constants

    importlib.import_module("sentence_transformers")  # its slow import is not the test's time

    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    if request.param == "offline-mode":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        yield "offline mode is on"
        return
    with socket.socket() as port:
        port.bind(("127.0.0.1", 0))
        if request.param == "silent":
            port.listen()  # the kernel completes the handshake; nothing ever replies
        endpoint = f"http://127.0.0.1:{port.getsockname()[1]}"
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", endpoint)
        yield f"the Hugging Face hub {endpoint} "


# Without the check the hub's retries wait over a minute; the check waits 2 s at most, so the
# test's own timeout (the call alone, not the fixture's imports) fails it if the retries come back.
@pytest.mark.timeout(45, func_only=True)
def test_an_unknown_model_says_how_to_get_it(
    unavailable_hub: str,
) -> None:
    with pytest.raises(OSError) as raised:
        load_model("no-such-org/no-such-model")
    message = str(raised.value)
    assert message.startswith("cannot load the sentence-transformers model 'no-such-org/")
    assert unavailable_hub in message
    assert "so only the local cache was searched" in message
    assert "download it once while online" in message
    assert "or pass 'st:<directory of a local copy>'" in message


DEVICE_CORPUS = {"sort": "Sort a list in place.", "open": "Open a file for reading."}


def test_this_machine_has_no_accelerator_so_the_cpu_is_chosen(
    sentence_transformers_backend: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert choose_device(None) == "cpu"
    with pytest.raises(ValueError, match="not available here"):
        ingest(DEVICE_CORPUS, embedder="st:all-MiniLM-L6-v2", device="cuda")
    index = ingest(DEVICE_CORPUS, embedder="st:all-MiniLM-L6-v2", device="cpu")
    assert str(index.model.device) == "cpu"
