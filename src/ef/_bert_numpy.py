"""A BERT sentence encoder in numpy: the ``dense-lite`` backend, without torch.

It reads a sentence-transformers model folder — ``tokenizer.json`` with the ``tokenizers``
package, ``model.safetensors`` with ``safetensors`` — and runs BERT's forward pass (embeddings,
self-attention layers, exact GELU) with numpy's matrix products, then mean pooling and, when the
model asks for it, unit length: what sentence-transformers computes for a BERT model with mean
pooling (all-MiniLM-L6-v2 and its kind), to float32 rounding (cosine >= 0.9999 against it).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["ENCODER_THREADS", "NumpyBertEncoder"]

ENCODER_THREADS = 1
"""The BLAS threads the encoder's matrix products run on, set with ``threadpoolctl`` around
:meth:`NumpyBertEncoder.encode` alone (the rest of the process keeps its own setting).

One, by measurement (``benchmarks/bench_dense.py --encoders``; figures in
``benchmarks/README.md``): on a machine busy with other work, BLAS threads that wait on each
other for a core cost several times their work, and on an idle one a second thread gains little
on matrices this small."""

_ERF = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429, 0.3275911)


def _erf(x: Any, numpy: Any) -> Any:
    """The error function to about 1.5e-7 (Abramowitz and Stegun 7.1.26): numpy has none.

    In place on two buffers: a layer's activations are tens of megabytes, and every
    temporary of that size costs more than the arithmetic."""
    a1, a2, a3, a4, a5, p = _ERF
    # Past 4 erf is 1 in float32; clipped, exp(-x * x) never reaches the subnormal floats,
    # whose arithmetic is a hundred times slower.
    ax = numpy.minimum(numpy.abs(x), 4.0)
    t = ax * p
    t += 1.0
    numpy.reciprocal(t, out=t)
    poly = t * a5
    for a in (a4, a3, a2, a1):
        poly += a
        poly *= t
    numpy.square(ax, out=ax)
    numpy.negative(ax, out=ax)
    numpy.exp(ax, out=ax)
    poly *= ax
    numpy.subtract(1.0, poly, out=poly)
    return numpy.copysign(poly, x, out=poly)


_CACHE_FLOATS = 256 * 1024
"""Floats in a block that the elementwise passes walk several times (1 MiB: in a core's cache)."""

_ROOT_HALF = 1.0 / math.sqrt(2.0)


def _gelu(x: Any, numpy: Any) -> Any:
    """Exact GELU, ``0.5 x (1 + erf(x / sqrt 2))``, in place on ``x``, by blocks of rows that
    stay in the cache through the dozen passes erf takes."""
    flat = x.reshape(-1, x.shape[-1])
    rows = max(1, _CACHE_FLOATS // flat.shape[1])
    for first in range(0, flat.shape[0], rows):
        block = flat[first : first + rows]
        erf = _erf(block * numpy.float32(_ROOT_HALF), numpy)
        erf += 1.0
        erf *= 0.5
        block *= erf
    return x


def _batches_by_length(order: Any, lengths: Any, size: int) -> list[Any]:
    """``order`` (positions, longest text first) cut into batches of at most ``size``, a batch
    ending early where a text is shorter than half the batch's first, longest one.

    >>> import numpy
    >>> [b.tolist() for b in _batches_by_length(numpy.arange(5), numpy.array([9, 8, 4, 3, 3]), 4)]
    [[0, 1], [2, 3, 4]]
    """
    batches, start = [], 0
    for end in range(1, len(order) + 1):
        full = end - start == size
        if end == len(order) or full or 2 * lengths[order[end]] < lengths[order[start]]:
            batches.append(order[start:end])
            start = end
    return batches


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"dense encoding without torch needs the {module.split('.')[0]!r} package: "
            "pip install 'ef-evaluation[dense-lite]'"
        ) from error


def _read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as file:
        return json.load(file)


class NumpyBertEncoder:
    """A sentence-transformers BERT model with mean pooling, run in numpy.

    :param folder: the model's folder (``config.json``, ``model.safetensors``,
        ``tokenizer.json``, ``modules.json``, ``1_Pooling/config.json``).
    :param threads: the BLAS threads :meth:`encode` runs on (:data:`ENCODER_THREADS`);
        ``None`` leaves them as the process has them.
    :raises ImportError: naming the ``dense-lite`` extra when tokenizers, safetensors or
        threadpoolctl is missing.
    :raises ValueError: for a model this backend does not run (another architecture or pooling).
    """

    def __init__(self, folder: str | Path, *, threads: int | None = ENCODER_THREADS) -> None:
        self._numpy = numpy = _require("numpy")
        self._threads = threads
        self._controller = (
            None if threads is None else _require("threadpoolctl").ThreadpoolController()
        )
        tokenizers = _require("tokenizers")
        safetensors = _require("safetensors.numpy")
        root = Path(folder)
        config = _read_json(root / "config.json")
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError(
                f"{root}: the numpy backend runs BERT models with GELU; this one is "
                f"{config.get('model_type')!r}: use the sentence-transformers backend"
            )
        self._normalize = True
        modules = root / "modules.json"
        pooling_config = root / "1_Pooling" / "config.json"
        if modules.exists():
            kinds = [module["type"].rsplit(".", 1)[-1] for module in _read_json(modules)]
            self._normalize = "Normalize" in kinds
            if not set(kinds) <= {"Transformer", "Pooling", "Normalize"}:
                raise ValueError(f"{modules}: modules {kinds} are beyond the numpy backend")
        if pooling_config.exists() and not _read_json(pooling_config).get(
            "pooling_mode_mean_tokens"
        ):
            raise ValueError(f"{pooling_config}: only mean pooling runs in the numpy backend")
        settings = root / "sentence_bert_config.json"
        self.max_seq_length = int(
            _read_json(settings).get("max_seq_length", 512) if settings.exists() else 512
        )
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self._tokenizer = tokenizers.Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=self.max_seq_length)
        # Padded here, batch by batch, to the longest text of each batch (see encode).
        self._tokenizer.no_padding()
        self._pad_id = int(config.get("pad_token_id", 0))
        weights = safetensors.load_file(str(root / "model.safetensors"))
        self._w = {
            name.removeprefix("bert."): (
                numpy.ascontiguousarray(value.T)
                if value.ndim == 2 and "embeddings." not in name
                else value
            )
            for name, value in weights.items()
        }

    def get_sentence_embedding_dimension(self) -> int:
        return int(self._w["embeddings.word_embeddings.weight"].shape[1])

    def _layer_norm(self, x: Any, name: str) -> Any:
        numpy = self._numpy
        mean = x.mean(-1, keepdims=True)
        centred = x - mean
        variance = (centred * centred).mean(-1, keepdims=True)
        normed = centred / numpy.sqrt(variance + self._eps)
        return normed * self._w[f"{name}.weight"] + self._w[f"{name}.bias"]

    def _linear(self, x: Any, name: str) -> Any:
        # One matrix product over every token of the batch (a stacked product would be one
        # small product per text).
        weight = self._w[f"{name}.weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight
        flat += self._w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[1])

    def _forward(self, ids: Any, mask: Any) -> Any:
        numpy, w = self._numpy, self._w
        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._layer_norm(x, "embeddings.LayerNorm")
        heads = self._heads
        size = x.shape[-1] // heads
        scale = numpy.float32(1.0 / math.sqrt(size))
        bias = ((1.0 - mask) * numpy.finfo(numpy.float32).min).astype(numpy.float32)
        bias = bias[:, None, None, :]
        for layer in range(self._layers):
            prefix = f"encoder.layer.{layer}"

            def split(t: Any) -> Any:
                # Contiguous: numpy hands stacked products to BLAS only for contiguous blocks.
                return numpy.ascontiguousarray(
                    t.reshape(batch, length, heads, size).transpose(0, 2, 1, 3)
                )

            # Scaled before the product: the queries are length times smaller than the scores.
            query = self._linear(x, f"{prefix}.attention.self.query")
            query *= scale
            q = split(query)
            k = numpy.ascontiguousarray(
                self._linear(x, f"{prefix}.attention.self.key")
                .reshape(batch, length, heads, size)
                .transpose(0, 2, 3, 1)
            )
            v = split(self._linear(x, f"{prefix}.attention.self.value"))
            context = numpy.empty((batch, heads, length, size), dtype=numpy.float32)
            # A few texts at a time, so that each block of scores stays in the cache through
            # the softmax's passes over it.
            step = max(1, _CACHE_FLOATS // (heads * length * length))
            for first in range(0, batch, step):
                block = slice(first, first + step)
                scores = q[block] @ k[block]
                scores += bias[block]
                scores -= scores.max(-1, keepdims=True)
                # Floored at -80: exp stays out of the subnormal floats (0 in float32 there).
                numpy.maximum(scores, -80.0, out=scores)
                numpy.exp(scores, out=scores)
                scores /= scores.sum(-1, keepdims=True)
                numpy.matmul(scores, v[block], out=context[block])
            context = context.transpose(0, 2, 1, 3).reshape(batch, length, heads * size)
            attended = self._linear(context, f"{prefix}.attention.output.dense")
            x = self._layer_norm(attended + x, f"{prefix}.attention.output.LayerNorm")
            inner = self._linear(x, f"{prefix}.intermediate.dense")
            out = self._linear(_gelu(inner, numpy), f"{prefix}.output.dense")
            x = self._layer_norm(out + x, f"{prefix}.output.LayerNorm")
        return x

    def encode(
        self,
        texts: list[str],
        *,
        batch_size: int = 32,
        normalize_embeddings: bool = False,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
    ) -> Any:
        """Embeddings of ``texts``, one float32 row each, as ``SentenceTransformer.encode``
        gives them (the keywords the index passes are accepted alike).

        The texts are encoded longest first, each batch padded to its own longest text, as
        sentence-transformers does: texts of like length share a batch, so little of the work
        is on padding. A batch also ends where the texts
        get shorter than half its longest one, so that at most half of a batch is padding. The
        rows come back in the order of ``texts``. The matrix products run on the encoder's
        ``threads`` BLAS threads, the process's setting restored on return."""
        with self._blas_threads():
            return self._encode(list(texts), batch_size, normalize_embeddings)

    @contextlib.contextmanager
    def _blas_threads(self) -> Iterator[None]:
        if self._controller is None:
            yield
            return
        with self._controller.limit(limits=self._threads, user_api="blas"):
            yield

    def _encode(self, texts: list[str], batch_size: int, normalize_embeddings: bool) -> Any:
        numpy = self._numpy
        encodings = self._tokenizer.encode_batch(texts)
        lengths = numpy.array([len(e.ids) for e in encodings], dtype=numpy.int64)
        order = numpy.argsort(-lengths, kind="stable")
        rows = []
        for chosen in _batches_by_length(order, lengths, batch_size):
            longest = int(lengths[chosen[0]])
            ids = numpy.full((len(chosen), longest), self._pad_id, dtype=numpy.int64)
            mask = numpy.zeros((len(chosen), longest), dtype=numpy.float32)
            for row, position in enumerate(chosen):
                tokens = encodings[position].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1.0
            hidden = self._forward(ids, mask)
            pooled = (hidden * mask[:, :, None]).sum(1) / numpy.maximum(
                mask.sum(1, keepdims=True), 1e-9
            )
            if normalize_embeddings or self._normalize:
                norms = numpy.linalg.norm(pooled, axis=1, keepdims=True)
                pooled = pooled / numpy.maximum(norms, 1e-12)
            rows.append(pooled.astype(numpy.float32))
        if not rows:
            return numpy.zeros((0, self.get_sentence_embedding_dimension()), numpy.float32)
        embeddings = numpy.empty((len(texts), rows[0].shape[1]), dtype=numpy.float32)
        embeddings[order] = numpy.concatenate(rows)
        return embeddings
