"""HttpRetriever against a real search server in its own process, with injected faults.

The server (``http_server.py``) serves the rankings of a generated dataset on 127.0.0.1; some
queries answer with a fault. Every async behaviour runs on asyncio (aiohttp) and trio
(httpcore). The in-process oracle is :func:`evaluate_run` over the same rankings.
"""

from __future__ import annotations

import json
import pickle
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ef.evaluation._exceptions import (
    HttpClientError,
    HttpConnectionError,
    HttpServerError,
    HttpStatusError,
    IncompleteEvaluationWarning,
    QueryError,
    ResponseShapeError,
)
from ef.evaluation._http.retriever import HttpRetriever
from ef.evaluation._http.shapes import fill
from ef.evaluation._running.evaluate import (
    evaluate_retrieval,
    evaluate_retrieval_async,
    evaluate_run,
)
from ef.source_manager import SearchHit
from http_fixtures import Dataset, SearchServer, running_server

DATASET = Dataset(60, seed=7)
TEXT = {query_id: text for query_id, text in DATASET.queries.items()}
K_VALUES = (1, 3, 10)
LIMIT = 10
FAULTS = {
    "q1": "status:503",
    "q2": "status:404",
    "q3": "reset",
    "q4": "hang",
    "q5": "malformed",
    "q6": "shape",
    "q7": "flaky:2",
    "q8": "flaky:1:reset",
    "q9": "flaky:1:hang",
    "q10": "flaky:2:status:429",
    "q11": "latency:0.2",
}
# Query id -> (error type, attempts) after retries=2.
PERMANENT = {
    "q1": (HttpServerError, 3),
    "q2": (HttpClientError, 1),
    "q3": (HttpConnectionError, 3),
    "q4": (TimeoutError, 3),
    "q5": (ResponseShapeError, 1),
    "q6": (ResponseShapeError, 1),
}
# Requests the server sees per query: 1 unless listed.
REQUESTS = {"q7": 3, "q8": 2, "q9": 2, "q10": 3} | {q: n for q, (_, n) in PERMANENT.items()}
CLEAN = [query_id for query_id in DATASET.queries if query_id not in FAULTS]
STATUSES = (500, 429, 404, 301)


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchServer]:
    faults = {TEXT[query_id]: fault for query_id, fault in FAULTS.items()}
    faults |= {f"answer {status}": f"status:{status}" for status in STATUSES}
    with running_server(
        tmp_path_factory.mktemp("server"), rankings=DATASET.rankings, faults=faults
    ) as running:
        yield running


def type_name(cls: type) -> str:
    return "TimeoutError" if cls is TimeoutError else f"{cls.__module__}.{cls.__qualname__}"


def oracle(query_ids: list[str]) -> Any:
    """The same rankings scored in-process, over the same queries in the same order."""
    qrels = {query_id: DATASET.qrels[query_id] for query_id in query_ids}
    return evaluate_run(DATASET.run(query_ids, LIMIT), qrels, k_values=K_VALUES)


def subset(query_ids: list[str]) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    return {q: DATASET.qrels[q] for q in query_ids}, {q: TEXT[q] for q in query_ids}


async def stats(server: SearchServer) -> dict[str, Any]:
    return await anyio.to_thread.run_sync(server.stats)


def wait_until_closed(server: SearchServer) -> int:
    """Connections the server still sees open, after waiting up to 5 s for them to close."""
    deadline = time.monotonic() + 5
    while (open_now := server.stats()["connections_open"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return int(open_now)


@pytest.mark.anyio
async def test_every_query_ends_scored_or_failed_and_scores_match_in_process(
    server: SearchServer,
) -> None:
    await anyio.to_thread.run_sync(server.reset_stats)
    async with HttpRetriever(server.url(), results="hits", score_field="score") as retriever:
        with pytest.warns(IncompleteEvaluationWarning, match="6 of 60 queries failed"):
            report = await evaluate_retrieval_async(
                retriever,
                DATASET.qrels,
                DATASET.queries,
                k_values=K_VALUES,
                on_error="record",
                retries=2,
                # Ends the hanging queries only: a loaded machine answers the others well
                # within it (0.5 s once timed two of them out beside a starting MLflow server).
                timeout=2.0,
            )

    failed = {failure.query_id: failure for failure in report.failures}
    assert set(report.per_query).isdisjoint(failed)
    assert set(report.per_query) | set(failed) == set(DATASET.queries)
    assert {q: (f.error_type, f.attempts) for q, f in failed.items()} == {
        q: (type_name(cls), attempts) for q, (cls, attempts) in PERMANENT.items()
    }
    scored = [query_id for query_id in DATASET.queries if query_id not in PERMANENT]
    expected = oracle(scored)
    assert report.per_query == expected.per_query
    assert report.metrics == expected.metrics
    requests = (await stats(server))["requests"]
    assert {q: requests[TEXT[q]] for q in DATASET.queries} == {
        q: REQUESTS.get(q, 1) for q in DATASET.queries
    }


@pytest.mark.anyio
async def test_failure_messages_say_what_came_back(server: SearchServer) -> None:
    retriever = HttpRetriever(server.url(), results="hits")
    with pytest.raises(HttpServerError, match=r"POST http://127\.0\.0\.1:\d+/search answered 503"):
        await retriever.search(TEXT["q1"])
    with pytest.raises(ResponseShapeError, match=r"expected a JSON body, got '\{\"hits\""):
        await retriever.search(TEXT["q5"])
    with pytest.raises(ResponseShapeError, match=r"a list of results at 'hits', got .*unexpected"):
        await retriever.search(TEXT["q6"])
    with pytest.raises(HttpConnectionError, match=r"POST http://127\.0\.0\.1") as caught:
        await retriever.search(TEXT["q3"])
    assert caught.value.__cause__ is not None
    await retriever.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "error"),
    [
        (500, HttpServerError),
        (429, HttpServerError),
        (404, HttpClientError),
        (301, HttpClientError),
    ],
)
async def test_statuses_map_to_retryable_or_not(
    server: SearchServer, tmp_path: Path, status: int, error: type[HttpStatusError]
) -> None:
    with running_server(tmp_path, faults={"x": f"status:{status}"}) as own:
        async with HttpRetriever(own.url()) as retriever:
            with pytest.raises(error) as caught:
                await retriever.search("x")
    assert caught.value.status == status
    assert isinstance(caught.value, OSError) == (error is HttpServerError)


@pytest.mark.anyio
async def test_connections_are_pooled_and_closed_with_the_block(server: SearchServer) -> None:
    qrels, queries = subset(CLEAN)
    await anyio.to_thread.run_sync(server.reset_stats)
    async with HttpRetriever(server.url(), results="hits") as retriever:
        report = await evaluate_retrieval_async(
            retriever, qrels, queries, k_values=K_VALUES, max_concurrency=4
        )
        during = await stats(server)
    assert report.per_query == oracle(CLEAN).per_query
    assert 1 <= during["connections_total"] <= 4
    assert await anyio.to_thread.run_sync(wait_until_closed, server) == 0


@pytest.mark.anyio
async def test_max_connections_caps_the_pool(server: SearchServer) -> None:
    qrels, queries = subset(CLEAN[:20])
    await anyio.to_thread.run_sync(server.reset_stats)
    async with HttpRetriever(server.url(), results="hits", max_connections=2) as retriever:
        await evaluate_retrieval_async(
            retriever, qrels, queries, k_values=K_VALUES, max_concurrency=8
        )
    assert (await stats(server))["connections_total"] <= 2


@pytest.mark.anyio
async def test_nested_blocks_share_one_client(server: SearchServer) -> None:
    await anyio.to_thread.run_sync(server.reset_stats)
    retriever = HttpRetriever(server.url(), results="hits")
    async with retriever:
        async with retriever:
            await retriever.search(TEXT["q20"])
        await retriever.search(TEXT["q21"])
        assert (await stats(server))["connections_total"] == 1
    assert await anyio.to_thread.run_sync(wait_until_closed, server) == 0


@pytest.mark.anyio
async def test_get_with_url_parameters(server: SearchServer) -> None:
    async with HttpRetriever(
        server.url(), method="GET", params={"q": "{query}", "k": "{limit}"}, results="hits"
    ) as retriever:
        found = await retriever.search(TEXT["q20"], limit=4)
    assert found == DATASET.run(["q20"], 4)["q20"]


@pytest.mark.anyio
async def test_dotted_paths_and_scores(server: SearchServer) -> None:
    async with HttpRetriever(
        server.url("/nested"), results="data.results", id_field="doc.id", score_field="relevance"
    ) as retriever:
        hits = await retriever.search(TEXT["q20"], limit=5)
    expected = DATASET.rankings[TEXT["q20"]][:5]
    assert all(isinstance(hit, SearchHit) for hit in hits)
    assert [(hit.segment.source_id, hit.score) for hit in hits] == expected


@pytest.mark.anyio
async def test_bare_string_results(server: SearchServer) -> None:
    async with HttpRetriever(server.url("/ids"), results="ids") as retriever:
        assert await retriever.search(TEXT["q21"], limit=3) == DATASET.run(["q21"], 3)["q21"]


@pytest.mark.anyio
async def test_placeholder_inside_text_is_sent_as_a_string(server: SearchServer) -> None:
    # The server wants an int limit in a JSON body: "top {limit}" is a string, so it answers 400.
    async with HttpRetriever(server.url(), body={"q": "{query}", "k": "top {limit}"}) as r:
        with pytest.raises(HttpClientError, match=r"400 Bad Request.*must be an int"):
            await r.search(TEXT["q20"])


@pytest.mark.anyio
async def test_a_refused_connection_is_a_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with HttpRetriever(f"http://127.0.0.1:{port}/search") as retriever:
        with pytest.raises(HttpConnectionError):
            await retriever.search("anything")


@pytest.mark.anyio
async def test_raise_mode_names_the_query_and_chains_the_http_error(server: SearchServer) -> None:
    qrels, queries = subset(["q2", *CLEAN[:5]])
    async with HttpRetriever(server.url(), results="hits") as retriever:
        with pytest.raises(QueryError, match="'q2' after 1 attempt") as caught:
            await evaluate_retrieval_async(retriever, qrels, queries, k_values=K_VALUES)
    assert isinstance(caught.value.__cause__, HttpClientError)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_plain_use_closes_the_client_when_the_loop_ends(server: SearchServer, backend: str) -> None:
    retriever = HttpRetriever(server.url(), results="hits")
    server.reset_stats()
    found = anyio.run(lambda: retriever.search(TEXT["q22"], limit=2), backend=backend)
    assert found == DATASET.run(["q22"], 2)["q22"]
    assert server.stats()["connections_total"] == 1
    assert wait_until_closed(server) == 0


def test_the_sync_entry_point_works(server: SearchServer) -> None:
    qrels, queries = subset(CLEAN)
    retriever = HttpRetriever(server.url(), results="hits")
    report = evaluate_retrieval(
        retriever,
        qrels,
        queries,
        k_values=K_VALUES,
        max_concurrency=8,
    )
    assert report.per_query == oracle(CLEAN).per_query
    assert report.manifest["retriever"] == retriever.retriever_id


@pytest.mark.anyio
async def test_the_sync_entry_point_inside_a_running_loop(server: SearchServer) -> None:
    # It runs on a fresh loop in a helper thread; the retriever opens a client for that loop.
    retriever = HttpRetriever(server.url(), results="hits")
    qrels, queries = subset(CLEAN[:10])
    report = evaluate_retrieval(retriever, qrels, queries, k_values=K_VALUES)
    assert report.per_query == oracle(CLEAN[:10]).per_query
    assert await anyio.to_thread.run_sync(wait_until_closed, server) == 0


# --- without a server: shapes, templates, identity, configuration ---------------------------

RETRIEVER = HttpRetriever("http://127.0.0.1:9/search", results="data.hits", score_field="s")
doc_ids = st.lists(st.text(min_size=1), max_size=12)


@given(doc_ids, st.integers(min_value=-5, max_value=5))
def test_results_are_read_in_order_at_the_dotted_path(ids: list[str], shift: int) -> None:
    items = [{"id": doc_id, "s": float(shift - i)} for i, doc_id in enumerate(ids)]
    answer = json.dumps({"data": {"hits": items}}).encode()
    hits = RETRIEVER._parse(answer)
    assert [(hit.segment.source_id, hit.score) for hit in hits] == [
        (item["id"], item["s"]) for item in items
    ]
    ids_only = HttpRetriever("http://h/s", results="", id_field="id")._parse(
        json.dumps([*items[:1], *ids[1:]]).encode()
    )
    assert ids_only == ids


@given(st.text(), st.integers(min_value=1, max_value=1000))
def test_placeholders_keep_their_types(query: str, limit: int) -> None:
    template = {"q": "{query}", "k": "{limit}", "text": "find {query} top {limit}", "n": [1]}
    assert fill(template, query, limit) == {
        "q": query,
        "k": limit,
        "text": f"find {query} top {limit}",
        "n": [1],
    }


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (b"<html>busy</html>", "expected a JSON body, got '<html>busy</html>'"),
        (b'{"data": {}}', "expected a list of results at 'data.hits'"),
        (b'{"data": {"hits": [{"id": "d1"}]}}', "result 0 to hold a number at 's'"),
        (b'{"data": {"hits": [{"s": 1}]}}', "result 0 to be an object with a doc id at 'id'"),
        (b'{"data": {"hits": [{"id": true, "s": 1}]}}', "result 0 to be an object"),
        (b'{"data": {"hits": ["d1"]}}', "result 0 to hold a number"),
    ],
)
def test_a_wrong_shape_says_what_was_expected_and_what_came(answer: bytes, expected: str) -> None:
    with pytest.raises(ResponseShapeError) as caught:
        RETRIEVER._parse(answer)
    assert expected in str(caught.value)
    assert str(caught.value).startswith("POST http://127.0.0.1:9/search: ")


def test_long_answers_are_cut_in_messages() -> None:
    with pytest.raises(ResponseShapeError) as caught:
        RETRIEVER._parse(b"x" * 5000)
    assert len(str(caught.value)) < 400
    assert str(caught.value).endswith("…': invalid JSON (Expecting value at column 1)")


def test_int_doc_ids_become_strings_and_lists_index_by_number() -> None:
    retriever = HttpRetriever("http://h/s", results="pages.0.hits", id_field="doc.0")
    answer = {"pages": [{"hits": [{"doc": [7]}, {"doc": ["d2"]}]}]}
    assert retriever._parse(json.dumps(answer).encode()) == ["7", "d2"]


def test_identity_is_the_url_and_shapes_not_key_order_or_headers() -> None:
    def identity(**changes: Any) -> str:
        options: dict[str, Any] = {"body": {"q": "{query}", "k": "{limit}"}, "results": "hits"}
        return HttpRetriever("http://h:1/search", **(options | changes)).retriever_id

    base = identity()
    assert base == f"{HttpRetriever.__module__}.HttpRetriever POST http://h:1/search " + (
        'body={"k":"{limit}","q":"{query}"} results=hits id=id'
    )
    assert identity(body={"k": "{limit}", "q": "{query}"}) == base
    assert identity(headers={"Authorization": "secret"}) == base
    different = [
        identity(body={"q": "{query}"}),
        identity(results="data"),
        identity(id_field="_id"),
        identity(score_field="score"),
        identity(params={"index": "a"}),
        HttpRetriever("http://h:2/search", body={"q": "{query}"}).retriever_id,
    ]
    assert len({base, *different}) == len(different) + 1
    assert identity(retriever_id="my-search-v2") == "my-search-v2"


def test_credentials_in_the_url_stay_out_of_identity_and_messages() -> None:
    retriever = HttpRetriever("http://user:s3cret@h:1/search?index=a", results="hits")
    assert "s3cret" not in retriever.retriever_id + repr(retriever)
    assert " http://h:1/search?index=a " in retriever.retriever_id
    with pytest.raises(ResponseShapeError) as caught:
        retriever._parse(b"{}")
    assert str(caught.value).startswith("POST http://h:1/search: ")


def test_defaults_put_the_query_in_the_body_or_the_url() -> None:
    post, get = HttpRetriever("http://h/s"), HttpRetriever("http://h/s", method="get")
    assert 'body={"limit":"{limit}","query":"{query}"}' in post.retriever_id
    assert 'GET http://h/s params={"limit":"{limit}","query":"{query}"}' in get.retriever_id


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"url": "ftp://h/s"}, ValueError, "http:// or https:// URL"),
        ({"method": "PUT"}, ValueError, "'GET' or 'POST'"),
        ({"method": "GET", "body": {"q": "{query}"}}, ValueError, "GET request has no body"),
        ({"body": {"q": "fixed"}}, ValueError, "holds '{query}'"),
        ({"body": ["{query}"]}, TypeError, "body must be a mapping"),
        ({"body": {"q": "{query}", "x": object()}}, TypeError, "JSON values only"),
        ({"params": {"q": "{query}", "x": [1]}}, TypeError, r"params\['x'\]"),
        ({"results": "data..hits"}, ValueError, "empty part"),
        ({"max_connections": 0}, ValueError, "max_connections"),
    ],
)
def test_bad_configuration_is_refused_with_a_reason(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    arguments = {"url": "http://h/s"} | options
    with pytest.raises(error, match=message):
        HttpRetriever(**arguments)


@pytest.mark.parametrize("missing", ["aiohttp", "httpcore"])
def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(ImportError, match=rf"needs {missing}: .*ef-evaluation\[http\]"):
        HttpRetriever("http://h/s")


def test_errors_survive_pickling() -> None:
    for error in (
        HttpServerError("POST http://h/s", 503, "'busy'"),
        HttpClientError("POST http://h/s", 404, "''"),
        HttpConnectionError("POST http://h/s: reset"),
        ResponseShapeError("POST http://h/s: expected JSON"),
    ):
        copy = pickle.loads(pickle.dumps(error))
        assert (type(copy), str(copy)) == (type(error), str(error))
