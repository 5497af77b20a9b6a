"""HttpRetriever against hostile and careless services: credentials, caps, timeouts, redirects.

Every service here is the real search server (``http_server.py``) in its own process on
127.0.0.1, answering some queries with a hostile fault: a body far over the cap (declared or
chunked, or endless), JSON nested too deeply, a 401 that echoes the request's headers, a
redirect to a second real server on another port, a request that never gets an answer. Each
runs on asyncio (aiohttp) and trio (httpcore). The streaming faults stop by themselves, and the
caps under test are a few KiB, so no test holds more than a few MiB.
"""

from __future__ import annotations

import base64
import gc
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from ef.evaluation import (
    HttpClientError,
    HttpRetriever,
    IncompleteEvaluationWarning,
    ResponseShapeError,
    evaluate_retrieval_async,
)
from http_fixtures import SearchServer, running_server

MB = 1_000_000
PASSWORD = "pa ss/wörd:42"  # percent-encoded in the URL below
URL_PASSWORD = "pa%20ss%2Fw%C3%B6rd%3A42"
API_KEY = "k3y-0f-the-API"
BASIC = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchServer]:
    """A second, well-behaved server: where the hostile one redirects to."""
    rankings = {"redirect": [("d9", 1.0)]}
    with running_server(tmp_path_factory.mktemp("target"), rankings=rankings) as running:
        yield running


@pytest.fixture(scope="module")
def hostile(
    tmp_path_factory: pytest.TempPathFactory, target: SearchServer
) -> Iterator[SearchServer]:
    faults = {
        "huge": f"huge:{50 * MB}",
        "declared": f"declared:{1000 * MB}",
        "stream": f"stream:{50 * MB}",
        "endless": "endless",
        "nested": "nested:100000",
        "echo": "echo:401",
        "redirect": f"redirect:307:{target.url()}",
        "hang": "hang",
    }
    rankings = {"ok": [("d1", 2.0), ("d2", 1.0)]}
    with running_server(
        tmp_path_factory.mktemp("hostile"), rankings=rankings, faults=faults
    ) as running:
        yield running


async def in_thread(function: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(function, *args)


def with_credentials(server: SearchServer) -> str:
    return server.url().replace("http://", f"http://alice:{URL_PASSWORD}@")


# --- resources: the body cap --------------------------------------------------------------


@pytest.mark.anyio
async def test_a_declared_length_over_the_cap_is_refused_before_any_body_is_read(
    hostile: SearchServer,
) -> None:
    # The server declares 1 GB and sends none of it: a client that read on would wait forever.
    async with HttpRetriever(hostile.url(), max_response_bytes=4096, timeout=None) as retriever:
        with anyio.fail_after(10), pytest.raises(ResponseShapeError) as caught:
            await retriever.search("declared")
        message = str(caught.value)
        assert message.startswith(f"POST {hostile.url()}: the answer is larger than ")
        assert "max_response_bytes=4096 (Content-Length: 1000000000)" in message
        # The connection is closed at once, not kept for another request.
        assert await in_thread(hostile.open_connections) == 0


@pytest.mark.anyio
async def test_a_huge_declared_body_is_refused_and_the_server_stops_early(
    hostile: SearchServer,
) -> None:
    await in_thread(hostile.reset_stats)
    async with HttpRetriever(hostile.url(), max_response_bytes=4096) as retriever:
        with pytest.raises(ResponseShapeError, match=r"Content-Length: 50000000\)"):
            await retriever.search("huge")
    # Only what the socket buffers took before the client hung up, not the 50 MB.
    assert await in_thread(hostile.sent, "huge") < 25 * MB


@pytest.mark.anyio
async def test_a_chunked_body_is_cut_at_the_cap_without_holding_it(hostile: SearchServer) -> None:
    await in_thread(hostile.reset_stats)
    tracemalloc.start()
    try:
        async with HttpRetriever(hostile.url(), max_response_bytes=4096) as retriever:
            with pytest.raises(ResponseShapeError) as caught:
                await retriever.search("stream")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value).endswith("the answer is larger than max_response_bytes=4096")
    assert peak < 8 * 2**20
    assert await in_thread(hostile.sent, "stream") < 25 * MB


@pytest.mark.anyio
async def test_an_endless_stream_ends_at_the_cap_and_its_connection_is_closed(
    hostile: SearchServer,
) -> None:
    await in_thread(hostile.reset_stats)
    cap = 64 * 1024
    async with HttpRetriever(hostile.url(), results="hits", max_response_bytes=cap) as retriever:
        with pytest.raises(ResponseShapeError, match="max_response_bytes=65536"):
            await retriever.search("endless")
        # Still inside the block: the client discarded the connection, it did not pool it.
        assert await in_thread(hostile.open_connections) == 0
        assert await in_thread(hostile.sent, "endless") < 32 * MB
        # The client goes on working for the next query.
        assert await retriever.search("ok") == ["d1", "d2"]


@pytest.mark.anyio
async def test_deeply_nested_json_is_a_shape_error(hostile: SearchServer) -> None:
    async with HttpRetriever(hostile.url(), results="hits") as retriever:
        with pytest.raises(ResponseShapeError, match=r"got '\[\[\[.*…': JSON nested too deeply"):
            await retriever.search("nested")


def test_not_a_number_in_an_answer_is_a_shape_error() -> None:
    retriever = HttpRetriever("http://127.0.0.1:9/search", results="hits", score_field="s")
    with pytest.raises(ResponseShapeError, match="NaN is not a JSON number"):
        retriever._parse(b'{"hits": [{"id": "d1", "s": NaN}]}')


# --- resources: the timeout ---------------------------------------------------------------


def test_the_default_limits() -> None:
    retriever = HttpRetriever("http://127.0.0.1:9/search")
    assert (retriever.timeout, retriever.max_response_bytes) == (30.0, 64 * 2**20)
    unlimited = HttpRetriever("http://127.0.0.1:9/search", timeout=None, max_response_bytes=None)
    assert (unlimited.timeout, unlimited.max_response_bytes) == (None, None)


@pytest.mark.anyio
async def test_a_silent_service_times_out_and_its_connection_is_closed(
    hostile: SearchServer,
) -> None:
    async with HttpRetriever(hostile.url(), timeout=0.3) as retriever:
        # The service never answers: only the client's own timeout ends the search (the suite's
        # in-loop limit fails the test if it does not).
        with pytest.raises(TimeoutError) as caught:
            await retriever.search("hang")
        assert str(caught.value) == (
            f"POST {hostile.url()}: no complete answer within the 0.3 s timeout"
        )
        assert await in_thread(hostile.open_connections) == 0


@pytest.mark.anyio
async def test_a_cancelled_request_closes_its_connection(hostile: SearchServer) -> None:
    async with HttpRetriever(hostile.url(), results="hits", timeout=None) as retriever:
        with anyio.move_on_after(0.3) as scope:
            await retriever.search("hang")
        assert scope.cancelled_caught
        # The client is still open: only discarding the connection closes it.
        assert await in_thread(hostile.open_connections) == 0
        assert await retriever.search("ok") == ["d1", "d2"]


def test_failed_requests_leave_no_httpcore_connection_behind(hostile: SearchServer) -> None:
    import httpcore

    def live_connections() -> int:
        gc.collect()
        # type(), not isinstance: isinstance reads __class__, which some lazy modules warn on.
        return sum(type(o) is httpcore.AsyncHTTPConnection for o in gc.get_objects())

    async def fail_often() -> tuple[int, int]:
        # Two clients: a short timeout for the answer that never comes, and none for the endless
        # one (on a busy machine 0.05 s can pass before the cap is reached).
        hanging = HttpRetriever(hostile.url(), timeout=0.05, max_response_bytes=4096)
        endless = HttpRetriever(hostile.url(), timeout=None, max_response_bytes=4096)
        async with hanging, endless:
            before = live_connections()
            for _ in range(10):
                with pytest.raises(TimeoutError):
                    await hanging.search("hang")
                with anyio.fail_after(60), pytest.raises(ResponseShapeError):
                    await endless.search("endless")
            return before, live_connections()

    # httpcore closes a failed connection itself; the client must also let go of it, or an
    # evaluation with many failures holds one object per failure until it ends.
    before, after = anyio.run(fail_often, backend="trio")
    assert after <= before


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("own", "runner", "message"),
    [
        (0.3, 30.0, "no complete answer within the 0.3 s timeout"),
        (30.0, 0.3, "the retriever gave no answer within the 0.3 s timeout"),
    ],
)
async def test_the_smaller_of_the_two_timeouts_applies(
    hostile: SearchServer, own: float, runner: float, message: str
) -> None:
    qrels = {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}}
    queries = {"q1": "hang", "q2": "ok"}
    async with HttpRetriever(hostile.url(), results="hits", timeout=own) as retriever:
        with pytest.warns(IncompleteEvaluationWarning):
            report = await evaluate_retrieval_async(
                retriever, qrels, queries, k_values=(1,), timeout=runner, on_error="record"
            )
    (failure,) = report.failures
    assert (failure.query_id, failure.error_type) == ("q1", "TimeoutError")
    assert failure.message.endswith(message)
    assert report.per_query["q2"]["ndcg@1"] == 1.0


# --- credentials --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_url_credentials_are_sent_as_basic_auth(hostile: SearchServer) -> None:
    async with HttpRetriever(with_credentials(hostile), results="hits") as retriever:
        assert await retriever.search("ok") == ["d1", "d2"]
    headers = (await in_thread(hostile.stats))["headers"]["ok"]
    assert headers["authorization"] == f"Basic {BASIC}"


@pytest.mark.anyio
async def test_an_echoed_credential_reaches_no_message_report_or_journal(
    hostile: SearchServer, tmp_path: Path
) -> None:
    retriever = HttpRetriever(
        with_credentials(hostile), results="hits", headers={"X-Api-Key": API_KEY}
    )
    journal = tmp_path / "journal.jsonl"
    with pytest.warns(IncompleteEvaluationWarning):
        report = await evaluate_retrieval_async(
            retriever,
            {"q1": {"d1": 1.0}, "q2": {"d1": 1.0}},
            {"q1": "echo", "q2": "ok"},
            k_values=(1,),
            on_error="record",
            journal=journal,
        )
    await retriever.aclose()
    # The server did echo them: without the redaction they would be in the message.
    echoed = (await in_thread(hostile.stats))["headers"]["echo"]
    assert (echoed["authorization"], echoed["x-api-key"]) == (f"Basic {BASIC}", API_KEY)
    (failure,) = report.failures
    assert failure.error_type == "ef.evaluation.HttpClientError"
    assert "401 Unauthorized" in failure.message
    assert '"authorization": "***"' in failure.message
    assert '"x-api-key": "***"' in failure.message
    shown = [
        failure.message,
        journal.read_text(encoding="utf-8"),
        json.dumps(report.manifest),
        retriever.retriever_id,
        retriever.url,
        repr(retriever),
    ]
    for secret in (PASSWORD, URL_PASSWORD, BASIC, API_KEY):
        assert not any(secret in text for text in shown), secret
    assert retriever.url == f"http://alice:***@127.0.0.1:{hostile.url().split(':')[2]}"


def test_a_secret_across_the_excerpt_cut_shows_no_part_of_itself() -> None:
    token = "tok-0123456789-SECRET"
    retriever = HttpRetriever(
        "http://127.0.0.1:9/search", results="hits", headers={"Authorization": f"Bearer {token}"}
    )
    # The token starts 4 characters before the excerpt's 200-character cut.
    answer = b'"' + b"x" * 195 + token.encode() + b'"'
    with pytest.raises(ResponseShapeError) as caught:
        retriever._parse(answer)
    assert "x***" in str(caught.value)
    assert "tok-" not in str(caught.value)


def test_credentials_and_an_authorization_header_are_refused_at_once() -> None:
    with pytest.raises(ValueError, match="carries credentials") as caught:
        HttpRetriever(
            f"http://alice:{URL_PASSWORD}@127.0.0.1:9/search",
            headers={"authorization": "Bearer other"},
        )
    assert URL_PASSWORD not in str(caught.value)
    assert "alice:***@" in str(caught.value)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"headers": {"X-Key\r\nInjected": "v"}}, ValueError, "not a valid header name"),
        ({"headers": {"X-Key": "k3y\r\nInjected: 1"}}, ValueError, "line break or NUL"),
        ({"headers": {"X-Key": 12345}}, TypeError, r"headers\['X-Key'\] must be a string"),
        ({"headers": {"X-Key": "a", "x-key": "b"}}, ValueError, "given twice"),
        ({"headers": [("X-Key", "v")]}, TypeError, "headers must be a mapping"),
        ({"url": "http://alice:s3cret@127.0.0.1:99999/s"}, ValueError, r"alice:\*\*\*@.*Port out"),
        ({"url": "http://alice:s3cret@/s"}, ValueError, r"alice:\*\*\*@/s"),
        ({"timeout": 0}, ValueError, "timeout must be a number > 0 or None"),
        ({"timeout": float("nan")}, ValueError, "timeout must be"),
        ({"timeout": float("inf")}, ValueError, "timeout must be"),
        ({"timeout": True}, ValueError, "timeout must be"),
        ({"max_response_bytes": 0}, ValueError, "max_response_bytes must be an int >= 1"),
        ({"max_response_bytes": 4096.0}, ValueError, "max_response_bytes must be"),
    ],
)
def test_bad_set_up_is_refused_in_the_constructor(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as caught:
        HttpRetriever(**({"url": "http://127.0.0.1:9/search"} | options))
    assert "s3cret" not in str(caught.value)
    assert "k3y" not in str(caught.value)


# --- what is sent, and what is not followed -----------------------------------------------


@pytest.mark.anyio
async def test_a_json_body_is_sent_as_json_and_a_get_has_no_content_type(
    hostile: SearchServer,
) -> None:
    async with HttpRetriever(hostile.url(), results="hits") as retriever:
        await retriever.search("ok")
    sent = (await in_thread(hostile.stats))["headers"]["ok"]
    assert sent["content-type"] == "application/json"
    async with HttpRetriever(
        hostile.url(), method="GET", results="hits", headers={"Accept": "application/json"}
    ) as retriever:
        await retriever.search("ok")
    sent = (await in_thread(hostile.stats))["headers"]["ok"]
    assert "content-type" not in sent
    assert sent["accept"] == "application/json"


@pytest.mark.anyio
async def test_a_content_type_of_ones_own_is_kept(hostile: SearchServer) -> None:
    own = "application/json; charset=utf-8"
    async with HttpRetriever(
        hostile.url(), results="hits", headers={"content-type": own}
    ) as retriever:
        await retriever.search("ok")
    assert (await in_thread(hostile.stats))["headers"]["ok"]["content-type"] == own


@pytest.mark.anyio
async def test_a_redirect_to_another_server_is_not_followed(
    hostile: SearchServer, target: SearchServer
) -> None:
    await in_thread(target.reset_stats)
    async with HttpRetriever(hostile.url(), results="hits") as retriever:
        with pytest.raises(HttpClientError) as caught:
            await retriever.search("redirect")
    assert caught.value.status == 307
    assert (await in_thread(target.stats))["requests"] == {}
    # The redirect pointed at a live server, which would have answered.
    async with HttpRetriever(target.url(), results="hits") as retriever:
        assert await retriever.search("redirect") == ["d9"]
