"""HttpRetriever with a batch endpoint, against a real search server in its own process on
127.0.0.1 (``http_server.py``, which counts every query it is asked, alone or in a batch):
batches give the report of one query at a time, a failing query fails alone, and a journal
resumes in the middle of a batch without asking a finished query again. Both event loops
(aiohttp on asyncio, httpcore on trio). The in-process oracle is :func:`evaluate_run` over the
rankings the server serves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.to_thread
import attrs
import pytest

from ef.evaluation import (
    HttpClientError,
    HttpRetriever,
    IncompleteEvaluationWarning,
    QueryError,
    ResponseShapeError,
    RetrievalEvalReport,
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
    write_beir,
)
from http_fixtures import Dataset, SearchServer, running_server
from in_process_cli import ef_eval

DATASET = Dataset(23, seed=11)
TEXT = DATASET.queries
K_VALUES = (1, 3, 10)
LIMIT = 10


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def serve(folder: Path, batch_order: str = "asked", **faults: str) -> Any:
    """The server over the dataset's rankings, with ``faults`` by query id."""
    by_text = {TEXT[query_id]: fault for query_id, fault in faults.items()}
    return running_server(
        folder, rankings=DATASET.rankings, faults=by_text, batch_order=batch_order
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SearchServer]:
    with serve(tmp_path) as running:
        yield running


def retriever(server: SearchServer, **options: Any) -> HttpRetriever:
    return HttpRetriever(
        server.url("/search"), results="hits", score_field="score", batch_url="/batch", **options
    )


def oracle(query_ids: list[str]) -> RetrievalEvalReport:
    qrels = {query_id: DATASET.qrels[query_id] for query_id in query_ids}
    return evaluate_run(DATASET.run(query_ids, LIMIT), qrels, k_values=K_VALUES)


def without_timings(report: RetrievalEvalReport) -> dict[str, Any]:
    fields = attrs.asdict(report)
    del fields["latency"]
    return fields


@pytest.mark.anyio
async def test_batches_give_the_report_of_one_query_at_a_time(server: SearchServer) -> None:
    reports = {}
    for batch_size in (1, 5):
        await anyio.to_thread.run_sync(server.reset_stats)
        # Closed with the block, as docs/remote.md says: an open client left to the collector
        # warns about its unclosed connector wherever the collector happens to run.
        async with retriever(server) as searched:
            reports[batch_size] = await evaluate_retrieval_async(
                searched, DATASET.qrels, TEXT, k_values=K_VALUES, batch_size=batch_size
            )
        stats = await anyio.to_thread.run_sync(server.stats)
        assert stats["requests"] == {text: 1 for text in TEXT.values()}  # each asked once
        expected = [3, 5, 5, 5, 5] if batch_size == 5 else []
        assert sorted(stats["batches"]) == expected
    assert without_timings(reports[5]) == without_timings(reports[1])
    expected_report = oracle(list(TEXT))
    assert reports[5].metrics == expected_report.metrics
    assert reports[5].per_query == expected_report.per_query


def test_the_service_batch_size_is_used_unless_the_evaluation_says(server: SearchServer) -> None:
    evaluate_retrieval(retriever(server, batch_size=10), DATASET.qrels, TEXT, k_values=(1,))
    assert sorted(server.stats()["batches"]) == [3, 10, 10]
    server.reset_stats()
    evaluate_retrieval(
        retriever(server, batch_size=10), DATASET.qrels, TEXT, k_values=(1,), batch_size=12
    )
    assert sorted(server.stats()["batches"]) == [11, 12]


def test_one_failing_query_records_one_failure(tmp_path: Path) -> None:
    with serve(tmp_path, q7="status:400") as running:
        with pytest.warns(IncompleteEvaluationWarning, match="1 of 23 queries failed"):
            report = evaluate_retrieval(
                retriever(running),
                DATASET.qrels,
                TEXT,
                k_values=K_VALUES,
                batch_size=8,
                on_error="record",
            )
        requests = running.stats()["requests"]
    [failure] = report.failures
    assert failure.query_id == "q7"
    assert failure.error_type == f"{HttpClientError.__module__}.HttpClientError"
    # Asked alone at the one-query URL at the end, as one query at a time would be.
    assert failure.message.startswith(f"POST {running.url('/search')} answered 400 Bad Request")
    assert failure.attempts == 1
    scored = [query_id for query_id in TEXT if query_id != "q7"]
    expected = oracle(scored)
    assert report.per_query == expected.per_query
    assert report.metrics == expected.metrics
    # Its batch (q0-q7) was split until it was alone: 1 + 3 halvings; the others of the next
    # batches were asked once.
    assert requests[TEXT["q7"]] == 4
    assert all(requests[TEXT[f"q{i}"]] == 1 for i in range(8, 23))


def test_a_transient_failure_retries_the_batch(tmp_path: Path) -> None:
    with serve(tmp_path, q3="flaky:1:status:503") as running:
        report = evaluate_retrieval(
            retriever(running), DATASET.qrels, TEXT, k_values=K_VALUES, batch_size=8, retries=1
        )
        stats = running.stats()
    assert report.failures == ()
    assert sorted(stats["batches"]) == [7, 8, 8, 8]  # the first batch asked twice
    assert stats["requests"][TEXT["q0"]] == 2
    assert report.per_query == oracle(list(TEXT)).per_query


def test_a_journal_resumes_mid_batch_without_asking_a_finished_query_again(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "run.jsonl"
    options: dict[str, Any] = {"k_values": K_VALUES, "batch_size": 5, "journal": journal}
    # One batch at a time. q8 fails its first four requests: its batch (q5-q9), the halves
    # holding it, and alone, which stops the run in raise mode; q5, q6 and q7, answered
    # meanwhile, are journaled. (The server's counters are those of both runs.)
    options["max_concurrency"] = 1
    with serve(tmp_path, q8="flaky:4:status:400") as running:
        with pytest.raises(QueryError, match="q8"):
            evaluate_retrieval(retriever(running), DATASET.qrels, TEXT, **options)
        first = running.stats()
        report = evaluate_retrieval(retriever(running), DATASET.qrels, TEXT, **options)
        second = running.stats()
    finished = [f"q{i}" for i in range(8)]
    assert set(first["requests"]) == {TEXT[f"q{i}"] for i in range(10)}
    assert first["batches"] == [5, 5, 2, 3, 2]
    assert report.manifest["journal"]["resumed"] == len(finished)
    # Resumed: the finished queries, q5-q7 of the interrupted batch included, are not asked.
    asked = Counter(second["requests"])
    asked.subtract(first["requests"])
    left = [query_id for query_id in TEXT if query_id not in finished]
    assert +asked == {TEXT[query_id]: 1 for query_id in left}
    assert second["batches"][len(first["batches"]) :] == [5, 5, 5]
    expected = oracle(list(TEXT))
    assert report.per_query == expected.per_query
    assert report.metrics == expected.metrics


def test_an_answer_without_one_result_list_per_query_fails_the_batch_not_the_run(
    tmp_path: Path,
) -> None:
    # The batch answers are read at a path the service does not write: every batch fails with
    # a ResponseShapeError, is split, and each query is answered alone at the one-query URL.
    with serve(tmp_path) as running:
        report = evaluate_retrieval(
            retriever(running, batch_answers="results"),
            DATASET.qrels,
            TEXT,
            k_values=K_VALUES,
            batch_size=4,
        )
    assert report.failures == ()
    assert report.per_query == oracle(list(TEXT)).per_query


def test_answers_in_another_order_are_matched_to_their_queries_by_id(tmp_path: Path) -> None:
    reports = {}
    for order in ("asked", "reversed"):
        with serve(tmp_path, batch_order=order) as running:
            reports[order] = evaluate_retrieval(
                retriever(running), DATASET.qrels, TEXT, k_values=K_VALUES, batch_size=5
            )
            stats = running.stats()
        assert sorted(stats["batches"]) == [3, 5, 5, 5, 5]  # none asked again alone
    reversed_fields, asked_fields = map(without_timings, (reports["reversed"], reports["asked"]))
    del reversed_fields["manifest"], asked_fields["manifest"]  # two servers: two ports
    assert reversed_fields == asked_fields
    expected = oracle(list(TEXT))
    assert reports["reversed"].per_query == expected.per_query
    assert reports["reversed"].metrics == expected.metrics


def test_answers_without_ids_are_taken_in_order_unless_ids_are_required(tmp_path: Path) -> None:
    without_ids = {query_id: "batch_query_id:" for query_id in TEXT}
    with serve(tmp_path, **without_ids) as running:
        trusted = evaluate_retrieval(
            retriever(running), DATASET.qrels, TEXT, k_values=K_VALUES, batch_size=5
        )
        with pytest.warns(IncompleteEvaluationWarning, match="23 of 23 queries failed"):
            required = evaluate_retrieval(
                retriever(running, batch_require_ids=True),
                DATASET.qrels,
                TEXT,
                k_values=K_VALUES,
                batch_size=5,
                on_error="record",
            )
        requests = running.stats()["requests"]
    assert trusted.per_query == oracle(list(TEXT)).per_query
    assert required.per_query == {}
    assert sorted(failure.query_id for failure in required.failures) == sorted(TEXT)
    for failure in required.failures:
        assert failure.error_type == f"{ResponseShapeError.__module__}.ResponseShapeError"
        assert failure.attempts == 1
        assert failure.message.startswith(
            f"POST {running.url('/batch')}: expected the answer to query {failure.query_id!r} "
            "to carry its id at 'query_id' (batch_require_ids=True); no answer of the batch "
            'carries one, got \'{"answers": '
        ), failure.message
    assert requests == {text: 2 for text in TEXT.values()}  # none asked again alone


def test_an_unknown_missing_or_repeated_query_id_fails_its_queries(tmp_path: Path) -> None:
    # Batches of 5 in plan order: q3 is answer 3 of q0-q4, q12 and q13 answers 2 and 3 of
    # q10-q14, q18 answer 3 of q15-q19.
    faults = {
        "q3": "batch_query_id:q99",
        "q12": "batch_query_id:q13",
        "q18": "batch_query_id:",
    }
    with serve(tmp_path, **faults) as running:
        with pytest.warns(IncompleteEvaluationWarning, match="4 of 23 queries failed"):
            report = evaluate_retrieval(
                retriever(running),
                DATASET.qrels,
                TEXT,
                k_values=K_VALUES,
                batch_size=5,
                on_error="record",
            )
    where = f"POST {running.url('/batch')}: expected"
    expected = {
        "q3": "an answer with query id 'q3' at 'query_id'; none has it (answer 3 has 'q99', "
        "no query of the batch)",
        "q12": "an answer with query id 'q12' at 'query_id'; none has it (answer 3 has 'q13', "
        "another query's)",
        "q13": "one answer with query id 'q13' at 'query_id'; answers 2, 3 have it",
        "q18": "an answer with query id 'q18' at 'query_id'; none has it (answer 3 has none)",
    }
    failures = {failure.query_id: failure for failure in report.failures}
    assert sorted(failures) == sorted(expected)
    for query_id, message in expected.items():
        assert failures[query_id].message.startswith(f"{where} {message}, got '"), query_id
        assert failures[query_id].attempts == 1
    scored = [query_id for query_id in TEXT if query_id not in expected]
    assert report.per_query == oracle(scored).per_query


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"batch_url": "http://127.0.0.2:9/batch"}, "is not on the service of url"),
        ({"batch_url": "http://u:p@127.0.0.1:8000/batch"}, "carries credentials"),
        ({"batch_url": "/b", "batch_body": {"q": "{query}"}}, "holds no '{queries}' value"),
        ({"batch_url": "/b", "batch_size": 0}, "batch_size must be an int >= 1 or None"),
        ({"batch_url": "/b", "batch_id_field": ""}, "batch_id_field is empty"),
        (
            {"batch_url": "/b", "batch_body": {"q": "{queries}"}, "batch_require_ids": True},
            "batch_require_ids=True but batch_body holds no '{query_ids}' value",
        ),
    ],
)
def test_bad_batch_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        HttpRetriever("http://127.0.0.1:8000/search", **options)


def test_without_a_batch_url_there_is_no_batch_form(server: SearchServer) -> None:
    plain = HttpRetriever(server.url("/search"), results="hits")
    assert plain.search_batch is None
    evaluate_retrieval(plain, DATASET.qrels, TEXT, k_values=(1,), batch_size=8)
    assert server.stats()["batches"] == []
    # The batch endpoint is not part of the identity: a journal resumes across batch sizes.
    assert (
        plain.retriever_id
        == HttpRetriever(server.url("/search"), results="hits", batch_url="/batch").retriever_id
    )


CLI = ("--http-results", "hits", "--k", "1,3,10", "--format", "json", "--per-query")
CLI += ("--no-progress", "--http-batch-url", "/batch", "--batch-size")


def test_the_command_line_sends_batches_to_the_batch_url(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    corpus = {f"d{i}": f"document {i}" for i in range(200)}
    write_beir(folder, corpus, TEXT, DATASET.qrels)
    script = shutil.which("ef-eval", path=str(Path(sys.executable).parent))
    assert script is not None, "the ef-eval script is not installed: pip install -e ."
    reports, batches = {}, {}
    with serve(tmp_path) as running:
        for size in ("1", "6"):
            running.reset_stats()
            done = subprocess.run(
                [
                    script,
                    "retrieval",
                    str(folder),
                    "--retriever",
                    running.url("/search"),
                    *CLI,
                    size,
                ],
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "EF_EVALUATION_PLUGINS": ""},
                check=False,
            )
            assert done.returncode == 0, done.stderr
            reports[size] = json.loads(done.stdout)
            del reports[size]["latency"]
            batches[size] = sorted(running.stats()["batches"])
    assert batches == {"1": [], "6": [5, 6, 6, 6]}
    assert reports["6"] == reports["1"]
    assert reports["6"]["per_query"] == oracle(list(TEXT)).per_query


def test_the_command_line_requires_ids_at_the_field_it_names(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    write_beir(folder, {f"d{i}": f"document {i}" for i in range(200)}, TEXT, DATASET.qrels)
    with serve(tmp_path) as running:  # its answers carry their ids as "query_id", not "qid"
        done = ef_eval(
            "retrieval",
            folder,
            "--retriever",
            running.url("/search"),
            *CLI,
            "6",
            "--http-batch-id-field",
            "qid",
            "--http-batch-require-ids",
            "--on-error",
            "record",
        )
    assert done.returncode == 0, done.stderr
    failures = json.loads(done.stdout)["failures"]
    assert sorted(failure["query_id"] for failure in failures) == sorted(TEXT)
    for failure in failures:
        assert (
            f"expected the answer to query {failure['query_id']!r} to carry its id at 'qid' "
            "(batch_require_ids=True)" in failure["message"]
        )
    assert "23 of 23 queries failed" in done.stderr
