"""Ragas' deterministic RAG metrics: equal to Ragas' own implementation, applicable or not.

Ragas (the ``ragas`` extra) is imported offline, as in tests/test_ragas.py: no API key, no usage
tracking, and a connection attempt fails the test. Every metric is checked against Ragas' class
of the same name on generated samples to 1e-9; BLEU on one-sentence texts only (Ragas scores
the response's first sentence), ROUGE-2 against ``rouge-score`` itself (Ragas has no ROUGE-2).
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import importlib.abc
import json
import os
import random
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

import in_process_cli
from ef.evaluation import as_ragas_dataset, evaluate_rag, registry
from ef.evaluation._builtins.ragas_metrics import RAG_METRICS
from ef.evaluation._rag import contexts, overlap, strings

TOLERANCE = 1e-9
WORDS = (
    "the cat sat on mat dog ran fast Paris is capital of France river Nile longest in Africa "
    "running runs ran quickly quick brown fox 42 1999 café naïve über"
).split()


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No API key, no usage tracking, and any attempt to open a connection fails the test."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "true")
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError(f"network access attempted during a test: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    yield
    assert attempts == []


@pytest.fixture(scope="module", autouse=True)
def ragas_user_id() -> None:
    """Read Ragas' cached user id once with its ResourceWarning ignored.

    Ragas' log formatter reads ``uuid.json`` through ``json.load(open(...))`` and never closes
    the file; the id is cached, so the warning comes once per process, from Ragas, not from us.
    """
    from ragas._analytics import get_userid

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        get_userid()
        gc.collect()


def _text(rng: random.Random, low: int = 1, high: int = 12, punctuation: bool = True) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    text = " ".join(words)
    if punctuation and rng.random() < 0.3:
        text += rng.choice([".", "!", "?", ","])
    return text


def _variant(rng: random.Random, text: str) -> str:
    """``text`` with a few edits, so similarities land on both sides of 0.5."""
    chars = list(text)
    for _ in range(rng.randint(0, max(1, len(chars) // 2))):
        position = rng.randrange(len(chars) + 1)
        if rng.random() < 0.5 and position < len(chars):
            del chars[position]
        else:
            chars.insert(position, rng.choice("abcdefxyz "))
    return "".join(chars)


def answer_samples(n: int = 120, seed: int = 7) -> list[dict[str, str]]:
    """Responses and references: related, unrelated, equal, empty, differing in case only."""
    rng = random.Random(seed)
    samples = []
    for index in range(n):
        reference = _text(rng)
        kind = index % 6
        if kind == 0:
            response = reference
        elif kind == 1:
            response = reference.upper()
        elif kind == 2:
            response = _variant(rng, reference)
        elif kind == 3:
            response = f"{_text(rng, 0, 3, False)} {reference} {_text(rng, 0, 3, False)}".strip()
        else:
            response = _text(rng)
        samples.append({"response": response, "reference": reference})
    samples.append({"response": "", "reference": "Paris"})
    samples.append({"response": "Paris", "reference": ""})
    samples.append({"response": "", "reference": ""})
    samples.append({"response": "   ", "reference": "Paris"})
    return samples


def context_samples(n: int = 80, seed: int = 11) -> list[dict[str, Any]]:
    """Retrieved and reference contexts (texts and ids), near and far from each other."""
    rng = random.Random(seed)
    samples = []
    for _ in range(n):
        reference = [_text(rng, 3, 10) for _ in range(rng.randint(1, 4))]
        retrieved = [
            _variant(rng, rng.choice(reference)) if rng.random() < 0.6 else _text(rng, 3, 10)
            for _ in range(rng.randint(1, 5))
        ]
        ids = [rng.choice([rng.randint(0, 9), f"d{rng.randint(0, 9)}"]) for _ in range(6)]
        samples.append(
            {
                "retrieved_contexts": retrieved,
                "reference_contexts": reference,
                "retrieved_context_ids": ids[: rng.randint(1, 4)],
                "reference_context_ids": [
                    str(i) if rng.random() < 0.5 else i for i in ids[rng.randint(1, 5) :]
                ]
                or ["d0"],
            }
        )
    # Similarity exactly 0.5 ("ab" vs "ac"): precision counts it (>=), recall does not (>).
    samples.append({"retrieved_contexts": ["ab"], "reference_contexts": ["ac"]})
    samples.append({"retrieved_contexts": ["ab", "zz"], "reference_contexts": ["ac", "zz"]})
    return samples


def ragas_score(metric: Any, sample: dict[str, Any]) -> float:
    from ragas.dataset_schema import SingleTurnSample

    return float(asyncio.run(metric.single_turn_ascore(SingleTurnSample(**sample))))


def assert_equal_to_ragas(fn: Any, metric: Any, samples: list[dict[str, Any]]) -> None:
    for sample in samples:
        ours = fn(sample)
        theirs = ragas_score(metric, sample)
        assert ours is not None
        assert abs(ours - theirs) <= TOLERANCE, (sample, ours, theirs)


@pytest.mark.parametrize(
    ("name", "rouge_type"), [("rouge_score", "rougeL"), ("rouge1_score", "rouge1")]
)
def test_rouge_equals_ragas(name: str, rouge_type: str) -> None:
    from ragas.metrics._rouge_score import RougeScore

    assert_equal_to_ragas(RAG_METRICS[name], RougeScore(rouge_type=rouge_type), answer_samples())


def test_every_metric_stays_in_zero_one_and_identical_texts_score_one() -> None:
    samples = answer_samples() + context_samples()
    for name, fn in RAG_METRICS.items():
        values = [fn(sample) for sample in samples]
        assert all(0.0 <= v <= 1.0 for v in values if v is not None), name
    # sacreBLEU gives 100.00000000000004 here; a score above 1 would be a wrong number.
    same = {"response": "the cat sat on the mat", "reference": "the cat sat on the mat"}
    for name in ("bleu_score", "chrf_score", "rouge_score", "rouge2_score"):
        assert RAG_METRICS[name](same) == 1.0, name


def test_rouge2_equals_rouge_score_itself() -> None:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer(["rouge2"], use_stemmer=True)
    samples = answer_samples()
    for sample in samples:
        expected = scorer.score(sample["reference"], sample["response"])["rouge2"].fmeasure
        assert overlap.rouge2_score(sample) == pytest.approx(expected, abs=TOLERANCE)
    # Not a copy of ROUGE-1: bigrams tell a reordering apart.
    swapped = {"response": "cat the sat", "reference": "the cat sat"}
    assert overlap.rouge1_score(swapped) == 1.0
    assert overlap.rouge2_score(swapped) == 0.0


def test_bleu_equals_ragas_on_one_sentence_texts() -> None:
    from ragas.metrics._bleu_score import BleuScore

    one_sentence = [s for s in answer_samples() if ". " not in s["response"] + s["reference"]]
    assert len(one_sentence) > 100
    assert_equal_to_ragas(overlap.bleu_score, BleuScore(), one_sentence)


def test_bleu_scores_the_whole_texts_where_ragas_scores_the_first_sentence() -> None:
    import sacrebleu
    from ragas.metrics._bleu_score import BleuScore

    sample = {
        "response": "the cat sat on the mat. the dog ran fast in the park",
        "reference": "the cat sat on the mat. a fox ran quickly to the river",
    }
    whole = sacrebleu.corpus_bleu([sample["response"]], [[sample["reference"]]]).score / 100
    assert overlap.bleu_score(sample) == pytest.approx(whole, abs=TOLERANCE)
    assert abs(ragas_score(BleuScore(), sample) - whole) > 0.1


def test_chrf_equals_ragas() -> None:
    from ragas.metrics._chrf_score import ChrfScore

    assert_equal_to_ragas(overlap.chrf_score, ChrfScore(), answer_samples())


@pytest.mark.parametrize(
    ("name", "measure"),
    [
        ("non_llm_string_similarity", "LEVENSHTEIN"),
        ("non_llm_string_similarity_jaro_winkler", "JARO_WINKLER"),
        ("non_llm_string_similarity_jaro", "JARO"),
        ("non_llm_string_similarity_hamming", "HAMMING"),
    ],
)
def test_string_similarity_equals_ragas(name: str, measure: str) -> None:
    from ragas.metrics._string import DistanceMeasure, NonLLMStringSimilarity

    metric = NonLLMStringSimilarity(distance_measure=DistanceMeasure[measure])
    assert_equal_to_ragas(RAG_METRICS[name], metric, answer_samples())


@pytest.mark.parametrize(
    ("name", "ragas_class"),
    [("string_present", "StringPresence"), ("raw_exact_match", "ExactMatch")],
)
def test_string_presence_and_raw_exact_match_equal_ragas(name: str, ragas_class: str) -> None:
    ragas_string = importlib.import_module("ragas.metrics._string")
    metric = getattr(ragas_string, ragas_class)()
    assert_equal_to_ragas(RAG_METRICS[name], metric, answer_samples())


def test_context_recall_and_precision_equal_ragas() -> None:
    from ragas.metrics._context_precision import NonLLMContextPrecisionWithReference
    from ragas.metrics._context_recall import NonLLMContextRecall

    samples = context_samples()
    recall = [contexts.non_llm_context_recall(s) for s in samples]
    precision = [contexts.non_llm_context_precision_with_reference(s) for s in samples]
    # The generated samples exercise both verdicts and partial scores.
    assert {0.0, 1.0} <= set(recall) and any(0.0 < value < 1.0 for value in recall)  # type: ignore[operator]
    assert any(0.0 < value < 1.0 for value in precision)  # type: ignore[operator]
    assert_equal_to_ragas(contexts.non_llm_context_recall, NonLLMContextRecall(), samples)
    assert_equal_to_ragas(
        contexts.non_llm_context_precision_with_reference,
        NonLLMContextPrecisionWithReference(),
        samples,
    )


def test_the_thresholds_differ_as_in_ragas_at_exactly_one_half() -> None:
    at_half = {"retrieved_contexts": ["ab"], "reference_contexts": ["ac"]}
    assert strings.similarity("ab", "ac") == 0.5
    assert contexts.non_llm_context_precision_with_reference(at_half) == 1.0
    assert contexts.non_llm_context_recall(at_half) == 0.0


@pytest.mark.parametrize(
    ("name", "ragas_class"),
    [
        ("id_based_context_recall", "IDBasedContextRecall"),
        ("id_based_context_precision", "IDBasedContextPrecision"),
    ],
)
def test_id_based_metrics_equal_ragas(name: str, ragas_class: str) -> None:
    # ragas.metrics binds metric instances over these submodules' names: import them by path.
    kind = "recall" if "recall" in name else "precision"
    module = importlib.import_module(f"ragas.metrics._context_{kind}")
    samples = [s for s in context_samples() if "retrieved_context_ids" in s]
    values = [RAG_METRICS[name](s) for s in samples]
    assert any(0.0 < v < 1.0 for v in values if v is not None)
    assert_equal_to_ragas(RAG_METRICS[name], getattr(module, ragas_class)(), samples)


def test_ids_compare_as_strings_and_count_once() -> None:
    sample = {"retrieved_context_ids": [1, "1", 2, 2], "reference_context_ids": ["1", "3"]}
    assert contexts.id_based_context_precision(sample) == 0.5  # {1, 2}: one of two
    assert contexts.id_based_context_recall(sample) == 0.5  # {1, 3}: one of two


@pytest.mark.parametrize(
    ("sample", "lacking"),
    [
        ({"response": "x"}, "a reference"),
        ({"reference": "x"}, "a response"),
        ({"response": "x", "reference": "x"}, "reference contexts and ids"),
    ],
)
def test_a_metric_whose_inputs_a_sample_lacks_does_not_apply(
    sample: dict[str, Any], lacking: str
) -> None:
    answer = {
        "rouge_score",
        "rouge1_score",
        "rouge2_score",
        "bleu_score",
        "chrf_score",
        "string_present",
        "raw_exact_match",
        *(name for name in RAG_METRICS if name.startswith("non_llm_string")),
    }
    for name, fn in RAG_METRICS.items():
        value = fn(sample)
        if name in answer:
            assert (value is None) == (lacking != "reference contexts and ids"), (name, value)
        else:
            assert value is None, (name, value)


@pytest.mark.parametrize(
    ("sample", "name"),
    [
        ({"retrieved_contexts": ["a"], "reference_contexts": []}, "non_llm_context_recall"),
        (
            {"retrieved_contexts": ["a"], "reference_contexts": []},
            "non_llm_context_precision_with_reference",
        ),
        ({"retrieved_context_ids": ["a"], "reference_context_ids": []}, "id_based_context_recall"),
        (
            {"retrieved_context_ids": [], "reference_context_ids": ["a"]},
            "id_based_context_precision",
        ),
        ({"retrieved_context_ids": ["a"]}, "id_based_context_recall"),
        ({"reference_context_ids": ["a"]}, "id_based_context_precision"),
    ],
)
def test_an_undefined_context_metric_is_not_applicable(sample: dict[str, Any], name: str) -> None:
    assert RAG_METRICS[name](sample) is None


def test_nothing_retrieved_scores_zero_on_the_context_text_metrics() -> None:
    for sample in (
        {"reference_contexts": ["gold"]},
        {"retrieved_contexts": [], "reference_contexts": ["gold"]},
    ):
        assert contexts.non_llm_context_recall(sample) == 0.0
        assert contexts.non_llm_context_precision_with_reference(sample) == 0.0


def test_a_list_of_references_takes_the_best() -> None:
    sample = {"response": "Paris", "reference": ["London", "Paris"]}
    for name in ("raw_exact_match", "string_present", "non_llm_string_similarity", "chrf_score"):
        assert RAG_METRICS[name](sample) == 1.0, name


def test_evaluate_rag_scores_context_metrics_on_samples_without_a_response() -> None:
    samples = [
        {
            "user_input": "q1",
            "retrieved_contexts": ["Paris is in France."],
            "reference_contexts": ["Paris is in France"],
            "retrieved_context_ids": ["d1", "d2"],
            "reference_context_ids": ["d1"],
        },
        {"user_input": "q2", "response": "Paris", "reference": "Paris"},
    ]
    report = evaluate_rag(
        samples,
        metrics=(
            "exact_match",
            "rouge_score",
            "non_llm_context_recall",
            "id_based_context_precision",
            "context_recall",
        ),
    )
    assert report.coverage == {
        "exact_match": 1,
        "rouge_score": 1,
        "non_llm_context_recall": 1,
        "id_based_context_precision": 1,
        "context_recall": 1,
    }
    assert report.metrics == {
        "exact_match": 1.0,
        "rouge_score": 1.0,
        "non_llm_context_recall": 1.0,
        "id_based_context_precision": 0.5,
        "context_recall": 0.0,  # sample 2 has a reference but retrieved nothing
    }
    assert report.per_sample[0]["exact_match"] is None
    assert report.per_sample[1]["non_llm_context_recall"] is None


def test_every_metric_is_registered_by_the_builtin_plugin() -> None:
    registered = registry().rag_metrics
    for name, fn in RAG_METRICS.items():
        assert registered[name].fn is fn
        assert registered[name].plugin == "ef.evaluation._builtins.ragas_metrics"
        assert registered[name].description
    # The spec's names keep the spec's meaning.
    assert registered["exact_match"].plugin == "ef.evaluation._builtins"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("retrieved_context_ids", "d1"),
        ("retrieved_context_ids", ["d1", 1.5]),
        ("reference_context_ids", [True]),
        ("reference_context_ids", {"d1": 1}),
    ],
)
def test_bad_context_ids_are_named(field: str, value: object) -> None:
    with pytest.raises(TypeError, match=rf"sample 1: field '{field}' must be a list of ids"):
        evaluate_rag([{"response": "x"}, {"response": "x", field: value}], metrics=["token_f1"])


def test_as_ragas_dataset_carries_the_context_ids() -> None:
    sample = {
        "user_input": "q",
        "response": "a",
        "retrieved_contexts": ["c"],
        "reference_contexts": ["c"],
        "retrieved_context_ids": ["d1", 2],
        "reference_context_ids": [2],
    }
    converted = as_ragas_dataset([sample]).samples[0]
    assert converted.retrieved_context_ids == ["d1", 2]
    assert converted.reference_context_ids == [2]


class _Refuse(importlib.abc.MetaPathFinder):
    """Makes importing ``name`` fail as a broken install does (an error inside the package)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname.partition(".")[0] == self.name:
            raise ImportError(f"{self.name} is broken: libfoo.so not found")


@pytest.fixture
def fresh_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forget the cached scorers, so the next call imports its package again."""
    for cached in (overlap._rouge_scorer, overlap._sacrebleu, strings._distance):
        cached.cache_clear()
    yield
    for cached in (overlap._rouge_scorer, overlap._sacrebleu, strings._distance):
        cached.cache_clear()


@pytest.mark.parametrize(
    ("package", "name"),
    [
        ("rouge_score", "rouge_score"),
        ("sacrebleu", "bleu_score"),
        ("sacrebleu", "chrf_score"),
        ("rapidfuzz", "non_llm_string_similarity"),
        ("rapidfuzz", "non_llm_context_recall"),
    ],
)
def test_a_missing_extra_is_named(
    monkeypatch: pytest.MonkeyPatch, fresh_imports: None, package: str, name: str
) -> None:
    for module in [m for m in sys.modules if m.partition(".")[0] == package]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, package, None)
    sample = {"response": "a", "reference": "a", "retrieved_contexts": ["a"]}
    sample["reference_contexts"] = ["a"]
    with pytest.raises(
        ImportError, match=r"not installed \(pip install 'ef-evaluation\[rag-metrics\]'\)"
    ) as caught:
        evaluate_rag([sample], metrics=[name])
    assert any(name in note for note in caught.value.__notes__)


def test_a_broken_extra_is_told_apart_from_a_missing_one(
    monkeypatch: pytest.MonkeyPatch, fresh_imports: None
) -> None:
    for module in [m for m in sys.modules if m.partition(".")[0] == "sacrebleu"]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(sys, "meta_path", [_Refuse("sacrebleu"), *sys.meta_path])
    with pytest.raises(ImportError, match=r"installed but failed to import: sacrebleu is broken"):
        overlap.bleu_score({"response": "a", "reference": "a"})


def test_loading_the_plugins_imports_no_scorer() -> None:
    code = (
        "import sys\n"
        "from ef.evaluation import registry\n"
        "assert 'bleu_score' in registry().rag_metrics\n"
        "loaded = {'rouge_score', 'sacrebleu', 'rapidfuzz'} & set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ef_eval_rag_takes_the_new_metric_names(tmp_path: Any) -> None:
    samples = answer_samples(12) + [
        {**sample, "user_input": f"q{i}"} for i, sample in enumerate(context_samples(6))
    ]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    names = ",".join(RAG_METRICS)
    done = in_process_cli.ef_eval(
        "rag", path, "--format", "json", "--metrics", names, env=os.environ
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == evaluate_rag(samples, metrics=list(RAG_METRICS)).to_dict()


# ROUGE-L in linear memory, equal to rouge-score's


_WORDS = ["the", "cat", "cats", "sat", "sitting", "on", "a", "mat", "Paris", "x1", "über", ""]


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(
    response=st.lists(st.sampled_from(_WORDS), max_size=40).map(" ".join),
    reference=st.lists(st.sampled_from(_WORDS), max_size=40).map(" ".join),
)
def test_rouge_l_equals_rouge_score_itself(response: str, reference: str) -> None:
    from rouge_score.rouge_scorer import RougeScorer

    expected = RougeScorer(["rougeL"], use_stemmer=True).score(reference, response)["rougeL"]
    assert overlap.rouge(response, reference) == expected.fmeasure


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    first=st.lists(st.sampled_from("abcd"), max_size=30),
    second=st.lists(st.sampled_from("abcde"), max_size=30),
)
def test_the_lcs_length_is_the_full_tables(first: list[str], second: list[str]) -> None:
    from rouge_score.rouge_scorer import _lcs_table

    from ef.evaluation._rag.lcs import lcs_length

    expected = _lcs_table(first, second)[-1][-1] if first and second else 0
    assert lcs_length(first, second) == lcs_length(second, first) == expected


def test_rouge_l_memory_grows_linearly_with_the_texts() -> None:
    import tracemalloc

    rng = random.Random(7)
    words = [f"w{rng.randrange(500)}" for _ in range(20_000)]
    response, reference = " ".join(words[:10_000]), " ".join(words[10_000:])
    overlap.rouge("warm up", "warm up")
    tracemalloc.start()
    try:
        value = overlap.rouge(response, reference)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert 0.0 < value < 1.0
    # rouge-score's table for 10,000 x 10,000 words holds 10^8 integers (gigabytes)
    assert peak < 20 * 2**20, peak


def test_a_text_over_the_rouge_l_limit_is_refused_naming_the_sample() -> None:
    long_text = "word " * (overlap.MAX_ROUGE_L_TOKENS + 1)
    samples = [
        {"response": "fine", "reference": "fine"},
        {"response": long_text, "reference": "short"},
    ]
    with pytest.raises(ValueError, match=r"the response has 50,001 tokens; ROUGE-L takes at most"):
        evaluate_rag(samples, metrics=["rouge_score"], ids=["ok", "huge"])
    with pytest.raises(ValueError) as caught:
        evaluate_rag(samples, metrics=["rouge_score"], ids=["ok", "huge"])
    assert "on sample 1 (id 'huge')" in "".join(caught.value.__notes__)
    # ROUGE-1 and ROUGE-2 are linear: no limit
    assert overlap.rouge(long_text, "word", "rouge1") > 0.0
