"""A search service over HTTP/1.1 for the tests and benchmarks, with per-query fault injection.

A real server in its own process, on 127.0.0.1, written on the standard library's asyncio
streams so that every fault is exact down to the socket (a reset is a TCP RST, a hang never
answers). Run it as::

    python tests/http_server.py --config config.json --port 0

It prints ``PORT <n>`` as its first line on stdout once it listens, then serves until killed.

The config file is JSON::

    {
      "rankings": {"<query text>": [["d1", 0.9], ["d7", 0.4]]},
      "faults": {"<query text>": "status:503"},
      "latency": 0.0,
      "batch_order": "asked"
    }

``latency`` (seconds) delays every answer. A query with no ranking gets an empty result list.
``batch_order`` is the order of a batch's answers: ``"asked"`` (the default) or ``"reversed"``.

Requests: ``GET`` or ``POST`` on one of the result shapes below. The query is read from the JSON
body or the URL parameters, under ``query`` or ``q``; the limit under ``limit`` or ``k`` (an int
in a JSON body, 10 when absent). Anything else is answered ``400``.

- ``/search`` → ``{"hits": [{"id": "d1", "score": 0.9}, ...]}``
- ``/nested`` → ``{"data": {"results": [{"doc": {"id": "d1"}, "relevance": 0.9}, ...]}}``
- ``/ids`` → ``{"ids": ["d1", ...]}``
- ``POST /batch`` with ``{"queries": [...], "limit": n}`` → ``{"answers": [{"hits": [...]},
  ...]}``, one ``/search`` answer per query; with ``"query_ids": [...]`` too, each answer
  carries its query's id as ``"query_id"``. Each query counts as a request of its own in
  ``requests``, and ``batches`` lists the size of each batch. A batch holding a query with a
  ``status:`` fault (or a ``flaky:`` one in its failing turns) answers with that status, and
  ``latency:`` delays it; ``batch_query_id:<id>`` makes the query's answer carry ``<id>`` as
  its query id instead (nothing after the colon: no query id); the other faults apply to one
  query at a time only.
- ``GET /stats`` → ``{"requests": {"<query text>": n}, "connections_open": n,
  "connections_total": n, "headers": {"<query text>": {...}}, "sent": {"<query text>": n},
  "batches": [n, ...]}``
  (connections that carried a search: open now, and opened since the start or the last reset;
  the headers of the query's last request, names in lower case; the body bytes a streaming
  fault wrote before it ended or the client went away); ``POST /stats`` resets the request
  counts, the total, the headers, the bytes sent and the batches.

Faults, per query text:

- ``latency:<s>`` — answer after ``s`` seconds instead of the default latency;
- ``status:<code>`` — answer with that HTTP status;
- ``reset`` — abort the connection with a TCP RST, no answer;
- ``hang`` — never answer (the connection stays open until the client closes it);
- ``malformed`` — ``200`` with a truncated JSON body;
- ``shape`` — ``200`` with valid JSON that holds no result list;
- ``flaky:<n>[:<fault>]`` — the first ``n`` requests for the query get ``<fault>`` (default
  ``status:503``), the later ones a normal answer. Counters restart at ``POST /stats``.

Hostile answers, per query text (each streaming one stops by itself at its size):

- ``huge:<n>`` — ``200`` declaring ``Content-Length: n``, then writing the ``n`` bytes;
- ``declared:<n>`` — ``200`` declaring ``Content-Length: n`` and sending no body at all (the
  connection stays open until the client closes it);
- ``stream:<n>`` — ``200`` with a chunked body of ``n`` bytes, no length declared;
- ``endless`` — a chunked body that goes on until the client goes away (or 256 MiB);
- ``nested:<depth>`` — ``200`` with ``depth`` nested JSON lists;
- ``echo:<status>`` — that status with a body echoing the request's headers, the
  ``Authorization`` header and any ``X-…`` header first;
- ``redirect:<status>:<url>`` — that status with ``Location: <url>``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import struct
import sys
from collections import Counter
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl

SHAPES = ("/search", "/nested", "/ids")
SEARCHES = (*SHAPES, "/batch")
CHUNK = 64 * 1024
ENDLESS = 256 * 1024 * 1024


class BadRequest(Exception):
    """The request cannot be answered; the message goes back in a ``400``."""


class SearchService:
    """The rankings, the faults and the counters, shared by every connection."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.rankings: dict[str, list[tuple[str, float]]] = {
            text: [(str(doc_id), float(score)) for doc_id, score in ranking]
            for text, ranking in config.get("rankings", {}).items()
        }
        self.faults: dict[str, str] = dict(config.get("faults", {}))
        self.latency = float(config.get("latency", 0.0))
        self.batch_order = str(config.get("batch_order", "asked"))
        self.requests: Counter[str] = Counter()
        self.headers: dict[str, dict[str, str]] = {}
        self.sent: dict[str, int] = {}
        self.batches: list[int] = []
        self.connections_open = 0
        self.connections_total = 0

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one keep-alive connection until the client closes it or a fault ends it.

        Only connections that carry a search count in the connection counters, so asking for
        the stats does not change them.
        """
        searched = False
        try:
            while True:
                request = await read_request(reader)
                if request is None:
                    break
                if not searched and request.target.partition("?")[0] in SEARCHES:
                    searched = True
                    self.connections_open += 1
                    self.connections_total += 1
                if not await self.answer(request, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            if searched:
                self.connections_open -= 1
            if not writer.transport.is_closing():
                writer.close()

    async def answer(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; whether the connection stays open for the next one."""
        path, _, query_string = request.target.partition("?")
        if path == "/stats":
            if request.method == "POST":
                self.requests.clear()
                self.headers.clear()
                self.sent.clear()
                self.batches.clear()
                self.connections_total = 0
            return await send(writer, 200, self.stats(), request.keep_alive)
        if path == "/batch" and request.method == "POST":
            return await self.answer_batch(request, writer)
        if path not in SHAPES:
            return await send(writer, 404, {"error": f"no such path {path!r}"}, request.keep_alive)
        try:
            text, limit = parse_search(request, query_string)
        except BadRequest as error:
            return await send(writer, 400, {"error": str(error)}, request.keep_alive)
        self.requests[text] += 1
        self.headers[text] = request.headers
        fault = self.fault_for(text)
        delay = self.latency
        if fault.startswith("latency:"):
            delay = float(fault.partition(":")[2])
        if fault == "reset":
            reset(writer)
            return False
        if fault == "hang":
            await reader.read()  # until the client gives up and closes the connection
            return False
        if delay > 0:
            await asyncio.sleep(delay)
        if fault.startswith("status:"):
            status = int(fault.partition(":")[2])
            return await send(writer, status, {"error": "injected"}, request.keep_alive)
        if fault == "malformed":
            return await send_raw(writer, 200, b'{"hits": [{"id": "d1", "sco', request.keep_alive)
        if fault == "shape":
            return await send(writer, 200, {"unexpected": [text]}, request.keep_alive)
        if fault.startswith(("huge:", "stream:", "endless")):
            size = int(fault.partition(":")[2] or ENDLESS)
            self.sent[text] = await stream(writer, size, declare=fault.startswith("huge:"))
            return False
        if fault.startswith("declared:"):
            writer.write(head(200, {"Content-Length": fault.partition(":")[2]}))
            await reader.read()  # no body: only a client that reads on would wait for one
            return False
        if fault.startswith("nested:"):
            depth = int(fault.partition(":")[2])
            return await send_raw(writer, 200, b"[" * depth + b"]" * depth, request.keep_alive)
        if fault.startswith("echo:"):
            first = sorted(request.headers, key=lambda n: n != "authorization" and n[:2] != "x-")
            received = {name: request.headers[name] for name in first}
            body = {"error": "unauthorized", "received": received}
            return await send(writer, int(fault.partition(":")[2]), body, request.keep_alive)
        if fault.startswith("redirect:"):
            _, status, location = fault.split(":", 2)
            writer.write(head(int(status), {"Location": location, "Content-Length": "0"}))
            await writer.drain()
            return request.keep_alive
        ranking = self.rankings.get(text, [])[:limit]
        return await send(writer, 200, render(path, ranking), request.keep_alive)

    async def answer_batch(self, request: Request, writer: asyncio.StreamWriter) -> bool:
        """Answer a batch of queries: each one's ``/search`` answer, or the batch's fault."""
        try:
            document = json.loads(request.body)
            texts, limit = document["queries"], document.get("limit", 10)
            query_ids = document.get("query_ids")
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            return await send(writer, 400, {"error": repr(error)}, request.keep_alive)
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return await send(writer, 400, {"error": "queries: not strings"}, request.keep_alive)
        if query_ids is not None and (
            not isinstance(query_ids, list) or len(query_ids) != len(texts)
        ):
            problem = {"error": "query_ids: not one per query"}
            return await send(writer, 400, problem, request.keep_alive)
        self.batches.append(len(texts))
        for text in texts:
            self.requests[text] += 1
        faults = [fault for fault in map(self.fault_for, texts) if fault]
        delays = [float(f.partition(":")[2]) for f in faults if f.startswith("latency:")]
        await asyncio.sleep(max([self.latency, *delays]))
        for fault in faults:
            if fault.startswith("status:"):
                status = int(fault.partition(":")[2])
                return await send(writer, status, {"error": "injected"}, request.keep_alive)
        answers = [render("/search", self.rankings.get(text, [])[:limit]) for text in texts]
        if query_ids is not None:
            for answer, text, query_id in zip(answers, texts, query_ids, strict=True):
                fault = self.faults.get(text, "")
                if fault.startswith("batch_query_id:"):
                    query_id = fault.partition(":")[2] or None
                if query_id is not None:
                    answer["query_id"] = query_id
        if self.batch_order == "reversed":
            answers.reverse()
        return await send(writer, 200, {"answers": answers}, request.keep_alive)

    def fault_for(self, text: str) -> str:
        fault = self.faults.get(text, "")
        if fault.startswith("flaky:"):
            _, count, inner = [*fault.split(":", 2), "status:503"][:3]
            return inner if self.requests[text] <= int(count) else ""
        return fault

    def stats(self) -> dict[str, Any]:
        return {
            "requests": dict(self.requests),
            "connections_open": self.connections_open,
            "connections_total": self.connections_total,
            "headers": self.headers,
            "sent": self.sent,
            "batches": self.batches,
        }


class Request:
    """One parsed HTTP/1.1 request."""

    def __init__(self, method: str, target: str, headers: dict[str, str], body: bytes) -> None:
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.keep_alive = headers.get("connection", "").lower() != "close"


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on the connection, or ``None`` when the client closed it."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        if error.partial.strip():
            raise
        return None
    request_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
    method, target, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return Request(method, target, headers, body)


def parse_search(request: Request, query_string: str) -> tuple[str, int]:
    """The query text and the limit, from the URL parameters and the JSON body."""
    fields: dict[str, Any] = dict(parse_qsl(query_string))
    from_json: dict[str, Any] = {}
    if request.body:
        try:
            from_json = json.loads(request.body)
        except ValueError as error:
            raise BadRequest(f"the body is not JSON: {error}") from None
        if not isinstance(from_json, dict):
            raise BadRequest("the JSON body is not an object")
        fields.update(from_json)
    text = fields.get("query", fields.get("q"))
    if not isinstance(text, str):
        raise BadRequest("no query text under 'query' or 'q'")
    limit_key = "limit" if "limit" in fields else "k"
    limit = fields.get(limit_key, 10)
    if limit_key in from_json:
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise BadRequest(f"the limit in a JSON body must be an int, got {limit!r}")
    else:
        try:
            limit = int(limit)
        except ValueError:
            raise BadRequest(f"the limit must be an int, got {limit!r}") from None
    return text, limit


def render(path: str, ranking: list[tuple[str, float]]) -> Any:
    if path == "/nested":
        return {"data": {"results": [{"doc": {"id": d}, "relevance": s} for d, s in ranking]}}
    if path == "/ids":
        return {"ids": [doc_id for doc_id, _ in ranking]}
    return {"hits": [{"id": doc_id, "score": score} for doc_id, score in ranking]}


async def send(writer: asyncio.StreamWriter, status: int, document: Any, keep_alive: bool) -> bool:
    return await send_raw(writer, status, json.dumps(document).encode(), keep_alive)


def head(status: int, headers: Mapping[str, str]) -> bytes:
    """A response's status line and headers, with a JSON content type."""
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", "Content-Type: application/json"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send_raw(
    writer: asyncio.StreamWriter, status: int, body: bytes, keep_alive: bool
) -> bool:
    headers = {"Content-Length": str(len(body))} | ({} if keep_alive else {"Connection": "close"})
    writer.write(head(status, headers) + body)
    await writer.drain()
    return keep_alive


async def stream(writer: asyncio.StreamWriter, size: int, *, declare: bool) -> int:
    """Write a ``200`` with a ``size``-byte body, as a declared length or chunked; the bytes
    of body written before the end or before the client went away."""
    chunked = not declare
    writer.write(
        head(200, {"Content-Length": str(size)} if declare else {"Transfer-Encoding": "chunked"})
    )
    sent = 0
    try:
        while sent < size:
            piece = b"x" * min(CHUNK, size - sent)
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            await writer.drain()
            sent += len(piece)
        if chunked:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
    except ConnectionError:
        pass
    return sent


def reset(writer: asyncio.StreamWriter) -> None:
    """Close the connection with a TCP RST: a zero linger time makes close() abort it."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def serve(config: Mapping[str, Any], port: int) -> None:
    service = SearchService(config)
    server = await asyncio.start_server(service.connection, "127.0.0.1", port, backlog=2048)
    bound = server.sockets[0].getsockname()[1]
    print(f"PORT {bound}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A search service with fault injection.")
    parser.add_argument("--config", help="the JSON config file (rankings, faults, latency)")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, help="overrides the config's latency")
    arguments = parser.parse_args(argv)
    config: dict[str, Any] = {}
    if arguments.config:
        with open(arguments.config, encoding="utf-8") as file:
            config = json.load(file)
    if arguments.latency is not None:
        config["latency"] = arguments.latency
    try:
        asyncio.run(serve(config, arguments.port))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
