"""Tests for TREC run and qrels files and trec_eval's ranking order."""

from __future__ import annotations

import gzip
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation._exceptions import DatasetFormatError
from ef.evaluation._io.trec import (
    read_trec_qrels,
    read_trec_run_with,
    write_trec_qrels,
    write_trec_run,
)
from ef.evaluation._scoring.order import as_ranking, rank_by_score, rank_query

# Every test reads run files with the compiled parser plugin and with the built-in reader.
pytestmark = pytest.mark.usefixtures("trec_run_parser")

TREC_MEASURES = {"P_1", "P_5", "ndcg_cut_10", "recip_rank", "map"}

# Doc ids whose code-point order differs from their UTF-16 order and exercises multi-byte UTF-8.
ID_CHARS = "abAB09_-é\u00ff\u0100\ufb01\ufffd\U0001f600"
doc_ids = st.text(alphabet=ID_CHARS, min_size=1, max_size=4)
query_ids = st.text(alphabet="qQ1_é\ufeff", min_size=1, max_size=3)  # U+FEFF: a BOM look-alike
# A handful of scores, so that ties are the rule rather than the exception.
tied_scores = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0])


def rankings_from_run(run: Mapping[str, object]) -> dict[str, list[str]]:
    """A run as ranked doc ids per query: scored queries in trec_eval's order, lists as given."""
    rankings: dict[str, list[str]] = {}
    for qid, result in run.items():
        if isinstance(result, Mapping):
            rankings[qid] = rank_query(qid, result)
        elif isinstance(result, list):
            rankings[qid] = result
        else:
            rankings[qid] = list(as_ranking(qid, result))  # type: ignore[arg-type]
    return rankings


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode())
    return path


def assert_points_at(error: DatasetFormatError, path: Path, line: int) -> None:
    assert error.path == str(path)
    assert error.line == line
    assert str(error).startswith(f"{path}:{line}: ")


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """trec_eval's order, spelled out: score descending, then doc id bytes descending."""
    return sorted(scores, key=lambda doc: (scores[doc], doc.encode()), reverse=True)


# --- reading runs -------------------------------------------------------------------------------


def test_run_is_read_as_scores_in_file_order(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.txt",
        "q1 Q0 d2 1 0.5 sys\nq1 Q0 d1 2 1.5 sys\nq2\tQ0\td9\t1\t-3e2\tsys\n",
    )
    run = read_trec_run_with(path)
    assert run == {"q1": {"d2": 0.5, "d1": 1.5}, "q2": {"d9": -300.0}}
    assert list(run["q1"]) == ["d2", "d1"]


def test_run_rank_q0_and_tag_columns_are_ignored(tmp_path: Path) -> None:
    path = write(tmp_path / "run.txt", "q1 X d1 99 1 a\nq1 Y d2 -4 2 b\n")
    assert rankings_from_run(read_trec_run_with(path)) == {"q1": ["d2", "d1"]}


def test_run_queries_split_across_the_file_are_merged(tmp_path: Path) -> None:
    path = write(tmp_path / "run.txt", "q1 Q0 a 1 3 t\nq2 Q0 a 1 3 t\nq1 Q0 b 2 2 t\n")
    assert read_trec_run_with(path) == {"q1": {"a": 3.0, "b": 2.0}, "q2": {"a": 3.0}}


def test_run_accepts_gzip_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    text = "\ufeffq1 Q0 d1 1 2 t\r\n\r\n   \nq1 Q0 é 2 1 t\r\n\n"
    path = tmp_path / "run"
    path.write_bytes(gzip.compress(text.encode()))
    assert read_trec_run_with(path) == {"q1": {"d1": 2.0, "é": 1.0}}


def test_empty_run_file_is_an_empty_run(tmp_path: Path) -> None:
    assert read_trec_run_with(write(tmp_path / "run.txt", "")) == {}


@pytest.mark.parametrize(
    ("bad_line", "problem"),
    [
        ("q1 Q0 d2 2 0.5", "found 5 columns"),
        ("q1 Q0 d2 2 0.5 t extra", "found 7 columns"),
        ("q1 Q0 d2 2 high t", "score 'high' is not a number"),
        ("q1 Q0 d2 2 inf t", "score 'inf' is not finite"),
        ("q1 Q0 d2 2 nan t", "score 'nan' is not finite"),
        ("q1 Q0 d2 2 -Infinity t", "score '-Infinity' is not finite"),
    ],
)
def test_bad_run_line_is_reported_with_file_and_line(
    tmp_path: Path, bad_line: str, problem: str
) -> None:
    path = write(tmp_path / "run.txt", f"q1 Q0 d1 1 1.0 t\n\n{bad_line}\nq1 Q0 d3 3 0.1 t\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_run_with(path)
    assert_points_at(caught.value, path, 3)
    assert caught.value.problem == problem


def test_column_error_says_what_a_run_line_looks_like(tmp_path: Path) -> None:
    path = write(tmp_path / "run.txt", "q1 d1 1.0\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_run_with(path)
    assert caught.value.expected == (
        "6 whitespace-separated columns 'query-id Q0 doc-id rank score tag'"
    )


def test_duplicate_doc_in_a_query_names_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.txt",
        "q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq2 Q0 d2 1 2 t\n\nq1 Q0 d2 3 1 t\n",
    )
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_run_with(path)
    assert_points_at(caught.value, path, 5)
    assert caught.value.problem == "doc 'd2' listed again for query 'q1' (first on line 2)"


def test_invalid_utf8_in_a_run_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1 1 1 t\nq1 Q0 d\xff 2 0 t\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_run_with(path)
    assert_points_at(caught.value, path, 2)


# --- reading qrels ------------------------------------------------------------------------------


def test_qrels_grades_are_floats(tmp_path: Path) -> None:
    path = write(tmp_path / "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\nq2 iter d1 -1\nq2 0 d5 2.5\n")
    qrels = read_trec_qrels(path)
    assert qrels == {"q1": {"d1": 1.0, "d2": 0.0}, "q2": {"d1": -1.0, "d5": 2.5}}
    assert all(type(grade) is float for grades in qrels.values() for grade in grades.values())


def test_qrels_accept_gzip_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt.gz"
    path.write_bytes(gzip.compress("\ufeffq1 0 d1 1\r\n\r\nq1 0 d2 0\r\n".encode()))
    assert read_trec_qrels(path) == {"q1": {"d1": 1.0, "d2": 0.0}}


@pytest.mark.parametrize(
    ("bad_line", "problem"),
    [
        ("q1 0 d2", "found 3 columns"),
        ("q1 0 d2 1 extra", "found 5 columns"),
        ("q1 0 d2 yes", "grade 'yes' is not a number"),
        ("q1 0 d2 nan", "grade 'nan' is not finite"),
    ],
)
def test_bad_qrels_line_is_reported_with_file_and_line(
    tmp_path: Path, bad_line: str, problem: str
) -> None:
    path = write(tmp_path / "qrels.txt", f"q1 0 d1 1\n{bad_line}\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_qrels(path)
    assert_points_at(caught.value, path, 2)
    assert caught.value.problem == problem


def test_qrels_pair_judged_twice_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "qrels.txt", "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n")
    with pytest.raises(DatasetFormatError) as caught:
        read_trec_qrels(path)
    assert_points_at(caught.value, path, 3)
    assert "(first on line 1)" in caught.value.problem


# --- ranking order ------------------------------------------------------------------------------


def test_ties_are_broken_by_doc_id_descending() -> None:
    assert rank_by_score({"a": 1.0, "c": 1.0, "b": 1.0, "z": 0.0, "y": 2.0}) == [
        "y",
        "c",
        "b",
        "a",
        "z",
    ]


def test_tie_order_is_by_code_point_not_utf16() -> None:
    # U+FFFD sorts below U+1F600 by code point and UTF-8 bytes, above it in UTF-16.
    assert rank_by_score({"\ufffd": 1.0, "\U0001f600": 1.0}) == ["\U0001f600", "\ufffd"]


@given(st.dictionaries(doc_ids, tied_scores | st.floats(-1e9, 1e9)))
def test_rank_by_score_is_trec_eval_order(scores: dict[str, float]) -> None:
    assert rank_by_score(scores) == trec_order(scores)


@given(st.lists(doc_ids, unique=True), st.booleans())
def test_rank_by_score_keeps_input_already_in_order(ids: list[str], tie: bool) -> None:
    ordered = sorted(ids, reverse=True) if tie else ids
    scores = {doc: 1.0 if tie else float(len(ids) - i) for i, doc in enumerate(ordered)}
    assert rank_by_score(scores) == ordered


def test_rank_by_score_refuses_nan() -> None:
    with pytest.raises(ValueError, match="'b'"):
        rank_by_score({"a": 1.0, "b": math.nan, "c": 3.0})


def test_rankings_pass_lists_through_untouched() -> None:
    ranking = ["d3", "d1", "d3"]
    rankings = rankings_from_run({"q1": ranking, "q2": ("x", "y"), "q3": {"a": 0.0, "b": 0.0}})
    assert rankings["q1"] is ranking
    assert rankings == {"q1": ["d3", "d1", "d3"], "q2": ["x", "y"], "q3": ["b", "a"]}


def test_rankings_refuse_a_bare_string() -> None:
    with pytest.raises(TypeError, match="'q1'"):
        rankings_from_run({"q1": "d1"})


def test_rankings_name_the_query_with_a_nan_score() -> None:
    with pytest.raises(ValueError, match="query 'q7'"):
        rankings_from_run({"q7": {"a": math.nan, "b": 1.0}})


# --- writing ------------------------------------------------------------------------------------


def test_unscored_ranking_gets_strictly_decreasing_scores(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    write_trec_run(path, {"q1": ["b", "a", "c"]}, tag="mine")
    assert path.read_text() == "q1 Q0 b 1 3 mine\nq1 Q0 a 2 2 mine\nq1 Q0 c 3 1 mine\n"


def test_scored_run_is_written_in_trec_order_with_ranks(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    write_trec_run(path, {"q1": {"a": 0.5, "b": 0.5, "c": 0.75}})
    assert path.read_text() == "q1 Q0 c 1 0.75 ef\nq1 Q0 b 2 0.5 ef\nq1 Q0 a 3 0.5 ef\n"


def test_repeated_id_in_a_ranking_keeps_its_first_place(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    write_trec_run(path, {"q1": ["a", "b", "a", "c"]})
    assert rankings_from_run(read_trec_run_with(path)) == {"q1": ["a", "b", "c"]}


@settings(max_examples=60)
@given(st.dictionaries(query_ids, st.lists(doc_ids, unique=True), max_size=4))
def test_unscored_run_reads_back_in_the_same_order(
    tmp_path_factory: pytest.TempPathFactory, run: dict[str, list[str]]
) -> None:
    path = tmp_path_factory.mktemp("run") / "run.txt"
    write_trec_run(path, run)
    assert rankings_from_run(read_trec_run_with(path)) == {q: ids for q, ids in run.items() if ids}


@settings(max_examples=60)
@given(
    st.dictionaries(
        query_ids,
        st.dictionaries(doc_ids, tied_scores | st.floats(allow_nan=False, allow_infinity=False)),
        max_size=4,
    )
)
def test_scored_run_round_trips_exactly(
    tmp_path_factory: pytest.TempPathFactory, run: dict[str, dict[str, float]]
) -> None:
    path = tmp_path_factory.mktemp("run") / "run.txt.gz"
    write_trec_run(path, run)
    back = read_trec_run_with(path)
    assert back == {q: scores for q, scores in run.items() if scores}
    assert {q: list(scores) for q, scores in back.items()} == rankings_from_run(back)


@settings(max_examples=60)
@given(
    st.dictionaries(
        query_ids,
        st.dictionaries(
            doc_ids,
            st.integers(-2, 3).map(float) | st.floats(allow_nan=False, allow_infinity=False),
            min_size=1,
        ),
        max_size=4,
    )
)
def test_qrels_round_trip_exactly(
    tmp_path_factory: pytest.TempPathFactory, qrels: dict[str, dict[str, float]]
) -> None:
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    write_trec_qrels(path, qrels)
    assert read_trec_qrels(path) == qrels


def test_whole_grades_are_written_as_integers(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    write_trec_qrels(path, {"q1": {"d1": 2.0, "d2": 0}})
    assert path.read_text() == "q1 0 d1 2\nq1 0 d2 0\n"


@pytest.mark.parametrize(
    ("run", "tag", "message"),
    [
        ({"q 1": ["d1"]}, "ef", "query id 'q 1'"),
        ({"": ["d1"]}, "ef", "query id ''"),
        ({"q1": ["d1", "d\t2"]}, "ef", "doc id 'd\\t2'"),
        ({"q1": {"": 1.0}}, "ef", "doc id ''"),
        ({"q1": ["d1"]}, "my run", "run tag 'my run'"),
        ({"q1": {"d1": math.inf}}, "ef", "doc 'd1' has score inf"),
    ],
)
def test_unwritable_run_is_refused_and_nothing_is_written(
    tmp_path: Path, run: dict[str, list[str]], tag: str, message: str
) -> None:
    path = tmp_path / "run.txt"
    with pytest.raises(ValueError, match="expected") as caught:
        write_trec_run(path, run, tag=tag)
    assert message in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_run_with_a_bare_string_ranking_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="'q1'"):
        write_trec_run(tmp_path / "run.txt", {"q1": "d1"})


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ({"q1": {"d 1": 1.0}}, "doc id 'd 1'"),
        ({"q1": {"d1": math.nan}}, "grade of 'd1' is nan"),
    ],
)
def test_unwritable_qrels_are_refused(
    tmp_path: Path, qrels: dict[str, dict[str, float]], message: str
) -> None:
    with pytest.raises(ValueError, match="expected") as caught:
        write_trec_qrels(tmp_path / "qrels.txt", qrels)
    assert message in str(caught.value)


# --- agreement with trec_eval -------------------------------------------------------------------


def reference_measures(ranking: Sequence[str], judged: Mapping[str, float]) -> dict[str, float]:
    """trec_eval's P_1, P_5, ndcg_cut_10, recip_rank and map, transcribed from their sources.

    Relevant means grade >= 1 (trec_eval's default relevance level); nDCG's gain is the grade.
    """
    relevant = {doc for doc, grade in judged.items() if grade >= 1}

    def precision(k: int) -> float:
        return sum(doc in relevant for doc in ranking[:k]) / k

    reciprocal = next((1 / rank for rank, doc in enumerate(ranking, 1) if doc in relevant), 0.0)
    hits, precision_sum = 0, 0.0
    for rank, doc in enumerate(ranking, 1):
        if doc in relevant:
            hits += 1
            precision_sum += hits / rank
    dcg = sum(
        max(judged.get(doc, 0.0), 0.0) / math.log2(i + 2) for i, doc in enumerate(ranking[:10])
    )
    ideal = sorted((grade for grade in judged.values() if grade > 0), reverse=True)[:10]
    idcg = sum(grade / math.log2(i + 2) for i, grade in enumerate(ideal))
    return {
        "P_1": precision(1),
        "P_5": precision(5),
        "ndcg_cut_10": dcg / idcg if idcg else 0.0,
        "recip_rank": reciprocal,
        "map": precision_sum / len(relevant) if relevant else 0.0,
    }


def assert_agrees_with_pytrec_eval(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]
) -> None:
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: dict(judged) for q, judged in qrels.items()}, TREC_MEASURES
    )
    expected = evaluator.evaluate({q: dict(scores) for q, scores in run.items()})
    rankings = rankings_from_run(run)
    assert set(expected) == {q for q in run if q in qrels and run[q]}
    for query, measures in expected.items():
        ours = reference_measures(rankings[query], qrels[query])
        assert ours == pytest.approx(measures, abs=1e-12), query


def test_heavily_tied_run_agrees_with_pytrec_eval() -> None:
    run = {
        "q1": {f"d{i}": float(i % 3) for i in range(30)},
        "q2": {doc: 0.0 for doc in ["b", "a", "é", "\U0001f600", "\ufffd", "Z", "z"]},
        "q3": {"x": 1.0, "w": 1.0, "v": 0.5, "u": 0.5, "t": 0.5},
    }
    qrels = {
        "q1": {"d3": 1, "d4": 2, "d29": 1, "d0": 0, "d8": 3},
        "q2": {"\ufffd": 1, "a": 2, "z": 0},
        "q3": {"u": 1, "x": 0, "nowhere": 2},
    }
    assert_agrees_with_pytrec_eval(run, qrels)


def test_run_file_read_back_agrees_with_pytrec_eval(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.txt",
        "".join(f"q1 Q0 d{i} {i} {(i * 7) % 4} t\n" for i in range(40))
        + "".join(f"q2 Q0 e{i} 1 1.5 t\n" for i in range(12)),
    )
    qrels = {"q1": {"d1": 1, "d5": 2, "d9": 1, "d30": 1}, "q2": {"e3": 1, "e10": 2}}
    assert_agrees_with_pytrec_eval(read_trec_run_with(path), qrels)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        query_ids, st.dictionaries(doc_ids, tied_scores, min_size=1, max_size=25), max_size=4
    ),
    st.data(),
)
def test_random_tied_runs_agree_with_pytrec_eval(
    run: dict[str, dict[str, float]], data: st.DataObject
) -> None:
    qrels: dict[str, dict[str, int]] = {}
    for query, scores in run.items():
        judged = data.draw(st.dictionaries(st.sampled_from(sorted(scores)), st.integers(0, 3)))
        judged["never-retrieved"] = 1  # at least one relevant doc, as trec_eval requires
        qrels[query] = judged
    assert_agrees_with_pytrec_eval(run, qrels)


def test_written_unscored_ranking_is_evaluated_in_its_own_order(tmp_path: Path) -> None:
    ranking = ["d5", "d1", "d9", "d2", "d7", "d3"]
    qrels = {"q1": {"d1": 1, "d2": 2, "d3": 1}}
    path = tmp_path / "run.txt"
    write_trec_run(path, {"q1": ranking})
    run = read_trec_run_with(path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES)
    expected = evaluator.evaluate(run)["q1"]
    assert reference_measures(ranking, qrels["q1"]) == pytest.approx(expected, abs=1e-12)
