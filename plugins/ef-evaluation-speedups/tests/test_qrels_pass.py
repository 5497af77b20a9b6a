"""The C first pass over plain qrels gives marshal's bytes and the core's ideal grades, or steps
aside.

The oracles are ``marshal.dumps(qrels, 2)`` and ef.evaluation's own ideal grades
(``ef.evaluation.extending.reference_ideal_grades``): on
generated qrels — empty qrels and queries, ids of 1 to 5 UTF-8 bytes and very long ones, astral
characters, ints about the 32-bit and 2**53 edges, signed zeros, subnormal and huge floats, ties
of ``1`` and ``1.0`` — the pass gives the same bytes and, query by query, the very same grade
objects in the same order. Qrels it does not take make it return ``None``, and an evaluation
then gives what it gives without the plugin: the same values, digest or named error.
"""

from __future__ import annotations

import contextlib
import marshal
import random
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from ef.evaluation import evaluate_run, hookimpl
from ef.evaluation.extending import reference_ideal_grades
from ef.evaluation.testing import registered_plugin
from hypothesis import given, settings
from hypothesis import strategies as st

from ef_evaluation_speedups import _qrels, qrels_pass
from speedups_switch import speedups_hooks, speedups_off

LIMIT = 2**53

# 1 to 5 UTF-8 bytes, several characters of 1 to 4 bytes each, control characters.
IDS = ["", "a", "é", "中", "\U0001f600", "ab", "aé", "a中", "a\U0001f600", "d10", "\x00", "e\u0301"]
INTS = [
    0, 1, -1, 2, 3, 2**15 - 1, 2**15, 2**30 - 1, 2**30, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1,
    2**32, -(2**32), 2**45 + 12345, 2**52 + 1, LIMIT, -LIMIT, LIMIT + 1, -LIMIT - 1, 2**64, 10**30,
]  # fmt: skip
FLOATS = [
    0.0, -0.0, 1.0, 2.0, 0.5, -1.5, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 1e300,
    -1e300, 3.0, 2**31 + 0.5, float(LIMIT), 1e307,
]  # fmt: skip


def _id(rng: random.Random) -> str:
    kind = rng.randrange(10)
    if kind == 0:
        return rng.choice(IDS) * rng.choice([1000, 70000])  # very long: past 2**16 bytes
    if kind <= 3:
        return rng.choice(IDS)
    return "".join(rng.choice(IDS) for _ in range(rng.randrange(1, 4))) + str(rng.randrange(99))


def _grade(rng: random.Random, kind: int) -> Any:
    if kind == 0:
        return rng.choice([0, 1, 2, 1.0, 2.0, 0.0, -0.0])  # ties of ints and floats
    if kind == 1:
        return rng.choice(INTS)
    if kind == 2:
        return rng.choice(FLOATS)
    return rng.choice([rng.randrange(-3, 5), rng.uniform(-2, 4), rng.choice(INTS + FLOATS)])


def _generated(seed: int) -> dict[str, dict[str, Any]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, Any]] = {}
    for _ in range(rng.choice([0, 1, 5, 30])):
        kind = rng.randrange(4)
        size = rng.choice([0, 1, 3, 17, 40, 150])  # past the insertion sort's 16
        qrels[_id(rng)] = {_id(rng): _grade(rng, kind) for _ in range(size)}
    return qrels


def _taken(qrels: dict[str, dict[str, Any]]) -> bool:
    """Whether the pass takes these (plain) qrels: ints within 2**53, magnitudes below 2**1023."""
    grades = [g for judged in qrels.values() for g in judged.values()]
    if any(type(g) is int and abs(g) > LIMIT for g in grades):
        return False
    return sum(abs(float(g)) for g in grades) < 2.0**1023


def assert_as_python(qrels: Any) -> None:
    """The pass's bytes are marshal's, its grades the core's, type for type and value for
    value, in order (a query may share an equal list of the previous query's objects)."""
    passed = _qrels.qrels_pass(qrels)
    assert passed is not None
    written, ideals = passed
    assert type(written) is bytes and written == marshal.dumps(qrels, 2)
    expected = reference_ideal_grades(qrels)
    assert expected is not None
    assert type(ideals) is dict and list(ideals) == list(expected)
    for (query_id, mine), (key, theirs) in zip(ideals.items(), expected.items(), strict=True):
        assert query_id is key and type(mine) is list
        assert len(mine) == len(theirs), query_id
        pairs = zip(mine, theirs, strict=True)
        assert all(type(a) is type(b) and a == b for a, b in pairs), (query_id, mine, theirs)


@pytest.fixture(scope="module", autouse=True)
def plugin(speedups_loaded: None) -> None:
    """Every test here runs with the plugin loaded (conftest.py)."""


@contextlib.contextmanager
def without_pass() -> Iterator[None]:
    """The plugin switched off: plans digest, check and sort the qrels in Python (and what
    plans remember of qrels planned with the pass is forgotten)."""
    with speedups_off():
        yield


@contextlib.contextmanager
def counted() -> Iterator[list[bool]]:
    """Each call of the C pass, recorded: whether it took the qrels (``True``) or declined."""
    calls: list[bool] = []
    real = _qrels.qrels_pass

    def spy(qrels: Any) -> Any:
        result = real(qrels)
        calls.append(result is not None)
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_qrels, "qrels_pass", spy)
        yield calls


def outcome(call: Callable[[], Any]) -> Any:
    """A report's values, per-query values and manifest, or the error's type and message."""
    try:
        report = call()
    except Exception as error:
        return type(error), str(error)
    return report.metrics, report.per_query, report.skipped, report.manifest


@pytest.mark.parametrize("seed", range(24))
def test_generated_qrels_give_marshal_bytes_and_the_core_ideals(seed: int) -> None:
    qrels = _generated(seed)
    if _taken(qrels):
        assert_as_python(qrels)
    else:
        assert _qrels.qrels_pass(qrels) is None


def test_the_generated_qrels_reach_every_case() -> None:
    generated = [_generated(seed) for seed in range(24)]
    grades = [g for q in generated for judged in q.values() for g in judged.values()]
    ids = [i for q in generated for judged in q.items() for i in (judged[0], *judged[1])]
    assert {} in generated and any({} in q.values() for q in generated)
    assert sum(map(_taken, generated)) >= 12 and not all(map(_taken, generated))
    for value in [2**31, -(2**31) - 1, LIMIT, LIMIT + 1, 5e-324, 1e307]:
        assert value in grades, value
    assert any(str(g) == "-0.0" for g in grades)
    assert {len(i.encode()) for i in ids} >= {1, 2, 3, 4, 5} and max(map(len, ids)) >= 70000
    # Large queries with ties of 1 and 1.0: the merge sort's stability is tested.
    assert any(
        len(judged) > 16 and 1 in judged.values() and 1.0 in judged.values()
        for q in generated
        for judged in q.values()
        if any(type(g) is int and g == 1 for g in judged.values())
        and any(type(g) is float and g == 1.0 for g in judged.values())
    )


plain_ids = st.text(st.characters(exclude_categories=["Cs"]), max_size=6)
plain_grades = st.one_of(
    st.integers(-LIMIT, LIMIT),
    st.sampled_from([0, 1, 2, 1.0, 2.0, -0.0, 2**31, -(2**31) - 1]),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300),
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(plain_ids, st.dictionaries(plain_ids, plain_grades, max_size=30)))
def test_any_plain_qrels_give_marshal_bytes_and_the_core_ideals(qrels: dict[str, Any]) -> None:
    assert_as_python(qrels)


def test_marshal_edges_exactly() -> None:
    # TYPE_INT up to the 32-bit edges, TYPE_LONG of 3 and 4 digits beyond, negative ones
    # counting their digits negative; float bits as they are.
    for grade in [2**31 - 1, -(2**31), 2**31, -(2**31) - 1, 2**45, -(2**45), LIMIT, -LIMIT]:
        assert_as_python({"q": {"d": grade}})
    # 2**31: three 15-bit digits, 0, 0 and 2, after the dict, the query id and the doc id.
    written = b"{u\x01\x00\x00\x00q{u\x01\x00\x00\x00d"
    written += b"l\x03\x00\x00\x00" + b"\x00\x00" + b"\x00\x00" + b"\x02\x00" + b"00"
    assert _qrels.qrels_pass({"q": {"d": 2**31}}) == (written, {"q": [2**31]})
    assert_as_python({"q": {"d": -0.0, "e": 5e-324, "f": 8.9e307}})
    assert_as_python({"\U0001f600" * 3: {"中" * 40000: 1, "": 1.0}})
    assert _qrels.qrels_pass({}) == (b"{0", {})
    assert _qrels.qrels_pass({"q": {}}) == (b"{u\x01\x00\x00\x00q{00", {"q": []})


def test_equal_grades_keep_their_judgement_order() -> None:
    one, one_float, two = 1, 1.0, 2
    judged = {f"d{i}": [one, one_float, two][i % 3] for i in range(40)}
    passed = _qrels.qrels_pass({"q": judged})
    assert passed is not None
    ideals = passed[1]
    assert [type(g) for g in ideals["q"]] == [int] * 13 + [int, float] * 13 + [int]
    assert ideals["q"][13:] == [1, 1.0] * 13 + [1]
    assert_as_python({"q": judged})
    assert_as_python({"q": dict(reversed(judged.items()))})


class Grade(float):
    pass


class Id(str):
    pass


class Judged(dict):  # type: ignore[type-arg]
    pass


DECLINED: list[tuple[str, Any]] = [
    ("bool grade", {"q1": {"d1": True, "d2": 1}}),
    ("NaN", {"q1": {"d1": 1}, "q2": {"d1": float("nan")}}),
    ("inf", {"q1": {"d1": float("inf")}}),
    ("-inf", {"q1": {"d1": 1.0, "d2": float("-inf")}}),
    ("int beyond 2**53", {"q1": {"d1": LIMIT + 1}}),
    ("int below -2**53", {"q1": {"d1": 1, "d2": -LIMIT - 1}}),
    ("int beyond a float", {"q1": {"d1": 10**400}}),
    ("sum overflows", {"q1": {"d1": 1.7e308, "d2": 1.7e308}}),
    ("float subclass grade", {"q1": {"d1": Grade(1.0)}}),
    ("str grade", {"q1": {"d1": "1"}}),
    ("None grade", {"q1": {"d1": None}}),
    ("str subclass doc id", {"q1": {Id("d1"): 1}}),
    ("str subclass query id", {Id("q1"): {"d1": 1}}),
    ("dict subclass query", {"q1": Judged(d1=1)}),
    ("OrderedDict query", {"q1": OrderedDict(d1=1)}),
    ("OrderedDict qrels", OrderedDict(q1={"d1": 1})),
    ("non-dict query", {"q1": 1}),
    ("list judgements", {"q1": ["d1", "d2"]}),
    ("lone surrogate doc id", {"q1": {"d\ud800": 1}}),
    ("lone surrogate query id", {"q\udfff": {"d1": 1}}),
    ("int doc id", {"q1": {1: 1}}),
    ("int query id", {1: {"d1": 1}}),
    ("a list of qrels", [("q1", "d1", 1)]),
]


@pytest.mark.parametrize("name", [name for name, _ in DECLINED])
def test_the_pass_declines_what_it_does_not_take(name: str) -> None:
    qrels = dict(DECLINED)[name]
    assert _qrels.qrels_pass(qrels) is None
    assert qrels_pass(qrels) is None


def test_declined_qrels_evaluate_as_without_the_pass() -> None:
    run = {"q1": {"d1": 2.0, "d2": 1.0, "d3": 0.5}, "q2": ["d1", "d9"]}
    calls = [
        lambda qrels=qrels: evaluate_run(run, qrels, k_values=[1, 10]) for _, qrels in DECLINED
    ]
    with counted() as seen:
        mine = [outcome(call) for call in calls]
    with without_pass():
        theirs = [outcome(call) for call in calls]
    assert True not in seen
    for (name, _), a, b in zip(DECLINED, mine, theirs, strict=True):
        assert a == b, name
    # Among them, plain judgements Python takes, and named errors.
    assert isinstance(mine[4][0], dict) and mine[1][0] is ValueError and "q2" in mine[1][1]


def test_evaluate_run_uses_the_pass_and_keeps_the_digest() -> None:
    assert "ef_evaluation_qrels_pass" in (speedups_hooks() or ())
    qrels = {"q1": {"d1": 1, "d2": 2.0, "d3": 0}, "q2": {"d1": 1.0, "é": 1}, "q3": {}}
    run = {"q1": {"d2": 1.0, "d1": 0.5}, "q2": {"é": 3.0, "d9": 1.0}}
    with counted() as seen:
        report = outcome(lambda: evaluate_run(run, qrels, k_values=[1, 10]))
    assert seen == [True]
    with without_pass():
        assert outcome(lambda: evaluate_run(run, qrels, k_values=[1, 10])) == report
    digest = report[3]["fingerprints"]["qrels"]
    # The value the Python path gives (marshal's bytes), pinned.
    assert digest == "sha256-m2:" + (
        "14cdfbd8df9765257395bf81eef551159a0f12f69d01519ebc61c4285d2fdd0c"
    )
    assert report[2] == {"q3": "no positive judgement"}


def test_plans_ask_the_hook_for_their_pass() -> None:
    # A pass in plain Python, registered before the C one is asked: its answer is the plan's,
    # so the hook is wired (its made-up bytes give another digest, its grades other values).
    given: list[Any] = []

    class Plugin:
        @staticmethod
        @hookimpl(tryfirst=True)
        def ef_evaluation_qrels_pass() -> object:
            def made_up(qrels: Any) -> Any:
                given.append(qrels)
                return b"made up", {"q1": [2.0]}

            return made_up

    qrels = {"q1": {"d1": 1}}
    with registered_plugin(Plugin()):
        report = evaluate_run({"q1": ["d1"]}, qrels, metrics=["ndcg"], k_values=[1])
    assert given == [qrels]
    # SHA-256 of b"made up"
    assert report.manifest["fingerprints"]["qrels"] == "sha256-m2:" + (
        "48168fa99cb7e014e77dbf4af79fc5b2a50caac8e820883ea7326f88bc713ac9"
    )
    assert report.metrics["ndcg@1"] == 0.5  # a dcg of 1 over the made-up ideal's 2


def test_the_pass_leaves_the_qrels_and_counts_its_references() -> None:
    grade = 12345.5
    qrels = {"q": {"d1": grade, "d2": grade, "d3": -1.0}}
    before = sys.getrefcount(grade)
    passed = _qrels.qrels_pass(qrels)
    assert sys.getrefcount(grade) == before + 2  # held twice by the ideal grades
    assert passed is not None and passed[1] == {"q": [grade, grade]}
    del passed
    assert sys.getrefcount(grade) == before
    for _ in range(3):
        assert _qrels.qrels_pass({"q": {"d1": grade, "d\ud800": grade}}) is None
    assert sys.getrefcount(grade) == before
    assert qrels == {"q": {"d1": grade, "d2": grade, "d3": -1.0}}


def test_queries_with_the_same_grades_share_one_list_and_only_then():
    qrels = {
        "q1": {"a": 1, "b": 0},
        "q2": {"c": 1},  # the same grades: shares q1's list
        "q3": {"d": 1.0},  # 1.0 is not 1
        "q4": {"e": 1.0, "f": 2.0},
        "q5": {"g": 2.0, "h": 1.0, "i": -1},  # the same grades, in another judgement order
        "q6": {"j": 2.0},
        "q7": {},
        "q8": {"k": 0},
    }
    passed = _qrels.qrels_pass(qrels)
    assert passed is not None
    _, ideals = passed
    assert ideals == {
        "q1": [1], "q2": [1], "q3": [1.0], "q4": [2.0, 1.0], "q5": [2.0, 1.0], "q6": [2.0],
        "q7": [], "q8": [],
    }  # fmt: skip
    assert type(ideals["q3"][0]) is float and type(ideals["q1"][0]) is int
    assert ideals["q2"] is ideals["q1"] and ideals["q5"] is ideals["q4"]
    assert ideals["q8"] is ideals["q7"]
    assert ideals["q3"] is not ideals["q2"] and ideals["q6"] is not ideals["q5"]
    assert_as_python(qrels)
