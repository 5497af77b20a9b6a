"""The numpy encoder's BLAS threads: its matrix products run on ``ENCODER_THREADS`` threads, set
around ``encode`` alone, and the process gets its own setting back, on return and on an error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from ef._bert_numpy import ENCODER_THREADS, NumpyBertEncoder
from ef._encoding import resolve_model

TEXTS = ["sorting a list in place", "open a file for reading", "x"]
PROCESS_THREADS = 2  # the process's own setting, other than the encoder's


def blas_threads(controller: ThreadpoolController) -> set[int]:
    return {pool.num_threads for pool in controller.select(user_api="blas").lib_controllers}


def watched(encoder: NumpyBertEncoder, controller: ThreadpoolController) -> list[set[int]]:
    """The BLAS threads seen by each forward pass of ``encoder`` from now on."""
    seen: list[set[int]] = []
    forward = encoder._forward

    def counting(ids: Any, mask: Any) -> Any:
        seen.append(blas_threads(controller))
        return forward(ids, mask)

    encoder._forward = counting  # type: ignore[method-assign]
    return seen


@pytest.fixture(scope="module")
def folder() -> Any:
    return resolve_model("all-MiniLM-L6-v2")


@pytest.fixture
def controller() -> ThreadpoolController:
    controller = ThreadpoolController()
    assert controller.select(user_api="blas").lib_controllers, "numpy is linked to no BLAS"
    return controller


def test_the_encoder_runs_on_its_threads_and_gives_the_process_its_own_back(
    folder: Any, controller: ThreadpoolController
) -> None:
    assert ENCODER_THREADS == 1
    encoder = NumpyBertEncoder(folder)
    seen = watched(encoder, controller)
    with controller.limit(limits=PROCESS_THREADS, user_api="blas"):
        limited = encoder.encode(TEXTS, batch_size=2)
        assert blas_threads(controller) == {PROCESS_THREADS}
    assert seen and all(threads == {ENCODER_THREADS} for threads in seen)

    untouched = NumpyBertEncoder(folder, threads=None)
    seen = watched(untouched, controller)
    with controller.limit(limits=PROCESS_THREADS, user_api="blas"):
        free = untouched.encode(TEXTS, batch_size=2)
    assert seen and all(threads == {PROCESS_THREADS} for threads in seen)
    # The same embeddings, to float32 rounding (the threads may sum in another order).
    np.testing.assert_allclose(limited, free, rtol=0, atol=1e-6)


def test_an_error_in_the_encoder_gives_the_process_its_threads_back(
    folder: Any, controller: ThreadpoolController
) -> None:
    encoder = NumpyBertEncoder(folder)

    def failing(ids: Any, mask: Any) -> Any:
        assert blas_threads(controller) == {ENCODER_THREADS}
        raise MemoryError("no room for the batch")

    encoder._forward = failing  # type: ignore[method-assign]
    with controller.limit(limits=PROCESS_THREADS, user_api="blas"):
        with pytest.raises(MemoryError, match="no room for the batch"):
            encoder.encode(TEXTS)
        assert blas_threads(controller) == {PROCESS_THREADS}
