"""The numpy BERT backend: the embeddings of sentence-transformers without torch, and a missing
model reported at once when the hub cannot answer."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ef._bert_numpy import NumpyBertEncoder
from ef._encoding import load_model, resolve_model
from ef.evaluation import read_beir


def generated_texts(count: int, seed: int = 7) -> list[str]:
    """Texts of every length, from one word to well past the 256-token truncation."""
    rng = random.Random(seed)
    words = "the a of retrieval index query naïve café 42 x-ray co-operate Zürich !? ()".split()
    return [
        " ".join(rng.choice(words) for _ in range(rng.choice([1, 3, 20, 300])))
        for _ in range(count)
    ]


def test_numpy_embeddings_equal_sentence_transformers() -> None:
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


@pytest.mark.parametrize("backend", ["numpy", "sentence-transformers"])
def test_a_missing_model_is_reported_when_the_hub_cannot_answer(
    backend: str, tmp_path: Path
) -> None:
    # One process for both reasons (importing sentence-transformers costs seconds): first the
    # hub on a closed port, then offline mode turned on after huggingface_hub was imported, as
    # the setting is read at each load.
    script = textwrap.dedent(
        """
        import os
        from ef._encoding import load_model
        for offline in ("", "1"):
            os.environ["HF_HUB_OFFLINE"] = offline
            try:
                load_model("example-org/no-such-model")
            except OSError as error:
                print(f"HF_HUB_OFFLINE={offline}: OSError:", " ".join(str(error).split()))
            else:
                print(f"HF_HUB_OFFLINE={offline}: loaded")
        """
    )
    environment = {
        **os.environ,
        "EF_DENSE_BACKEND": backend,
        "HF_HUB_OFFLINE": "",
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
    unreachable, offline = done.stdout.splitlines()
    for line, why in ((unreachable, "cannot be reached"), (offline, "offline mode is on")):
        assert "OSError: cannot load" in line, done.stdout
        assert "no-such-model" in line, done.stdout
        assert why in line, done.stdout
    assert unreachable.startswith("HF_HUB_OFFLINE=:") and offline.startswith("HF_HUB_OFFLINE=1:")
