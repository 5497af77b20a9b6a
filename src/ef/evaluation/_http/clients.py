"""The HTTP clients behind HttpRetriever: one per event loop, aiohttp on asyncio, httpcore on trio.

The client libraries are the ``http`` extra, imported on first use, and chosen by measurement
(``benchmarks/bench_http.py``): on asyncio an aiohttp session, whose pool keeps its throughput
with hundreds of requests in flight where httpx's does not; on trio, where aiohttp does not run,
httpcore connections on a plain stack, because httpcore's pool (httpx's) slows down sharply and
fails requests with hundreds in flight.

A client sends a request and returns the status and the body; a failed connection raises the
library's own error, one of the client's :attr:`Client.errors`, for the retriever to translate.
A body larger than the client's cap raises :class:`BodyTooLarge` as soon as it is known: from
its ``Content-Length`` before any of it is read, or while streaming it, without holding more
than the cap and one network read.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import ssl
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlencode

import anyio

if TYPE_CHECKING:
    from httpcore import AsyncHTTPConnection, Response

from ef.evaluation._exceptions import BodyTooLarge

__all__ = ["Client", "LoopClients"]

_EXTRA_HINT = "install the 'http' extra: pip install 'ef-evaluation[http]'"


def _declared_length(headers: Iterable[tuple[bytes, bytes]]) -> int | None:
    """The ``Content-Length`` header's value; ``None`` if absent (h11 has checked its form)."""
    for name, value in headers:
        if name.lower() == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


async def _read_capped(
    chunks: AsyncIterator[bytes], declared: int | None, cap: int | None
) -> bytes:
    """The whole body from ``chunks``, refused as soon as it is known to pass ``cap`` bytes."""
    if cap is not None and declared is not None and declared > cap:
        raise BodyTooLarge(cap, declared)
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if cap is not None and len(body) > cap:
            raise BodyTooLarge(cap, None)
    return bytes(body)


class Client(Protocol):
    """Requests to one URL with one method, over pooled connections."""

    #: The library's errors for a connection that failed before a complete answer.
    errors: tuple[type[BaseException], ...]

    async def send(self, params: dict[str, str] | None, content: bytes | None) -> tuple[int, bytes]:
        """One request to the URL: the status and the whole body.

        :raises BodyTooLarge: when the body is larger than the client's cap.
        """
        ...

    async def aclose(self) -> None: ...


class _AiohttpClient:
    """asyncio: one aiohttp session; its connector pools connections with no cap of its own."""

    def __init__(
        self, method: str, url: str, headers: dict[str, str], cap: int | None, max_bytes: int | None
    ) -> None:
        import aiohttp
        import yarl

        self.errors: tuple[type[BaseException], ...] = (aiohttp.ClientError, OSError)
        self._method, self._url, self._max_bytes = method, yarl.URL(url), max_bytes
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=cap or 0, limit_per_host=0),
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=None),
        )

    async def send(self, params: dict[str, str] | None, content: bytes | None) -> tuple[int, bytes]:
        async with self._session.request(
            self._method, self._url, params=params, data=content, allow_redirects=False
        ) as reply:
            # Leaving the block with the body unread closes the connection instead of reusing it.
            return reply.status, await _read_capped(
                reply.content.iter_any(), reply.content_length, self._max_bytes
            )

    async def aclose(self) -> None:
        await self._session.close()
        # Lets the transports run their connection_lost callbacks before the loop closes.
        await asyncio.sleep(0)


class _HttpcoreClient:
    """trio: httpcore connections kept on a stack, one request on each at a time.

    httpcore's own pool (the one httpx uses) slows down sharply and fails requests with
    hundreds in flight on trio; a stack of idle connections has nothing to scan or race on.
    """

    def __init__(
        self, method: str, url: str, headers: dict[str, str], cap: int | None, max_bytes: int | None
    ) -> None:
        import httpcore

        self._httpcore, self._max_bytes = httpcore, max_bytes
        self.errors: tuple[type[BaseException], ...] = (
            httpcore.NetworkError,
            httpcore.ProtocolError,
            httpcore.TimeoutException,
            httpcore.ConnectionNotAvailable,
            OSError,
        )
        self._method, self._url = method, url
        self._origin = httpcore.URL(url).origin
        self._ssl = ssl.create_default_context() if url.startswith("https:") else None
        self._headers = [(name.encode(), value.encode()) for name, value in headers.items()]
        self._idle: list[AsyncHTTPConnection] = []
        self._open: set[AsyncHTTPConnection] = set()
        self._cap = anyio.Semaphore(cap) if cap else None

    async def send(self, params: dict[str, str] | None, content: bytes | None) -> tuple[int, bytes]:
        if self._cap is None:
            return await self._send(params, content)
        async with self._cap:
            return await self._send(params, content)

    async def _send(
        self, params: dict[str, str] | None, content: bytes | None
    ) -> tuple[int, bytes]:
        url = self._url
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        connection = await self._checkout()
        try:
            async with connection.stream(
                self._method, url, headers=self._headers, content=content
            ) as reply:
                body = await self._read(reply)
        except BaseException:  # cancellation and a refused body too: the connection is mid-request
            await self._discard(connection)
            raise
        if connection.is_idle():
            self._idle.append(connection)
        else:
            await self._discard(connection)
        return reply.status, body

    async def _read(self, reply: Response) -> bytes:
        chunks = reply.aiter_stream()
        try:
            return await _read_capped(chunks, _declared_length(reply.headers), self._max_bytes)
        except BodyTooLarge:
            # The body is a chain of async generators, left mid-way here; once the connection
            # is closed they run to their end (a read error) rather than being left to the
            # garbage collector, which trio warns about.
            with anyio.CancelScope(shield=True):
                await reply.aclose()
                with contextlib.suppress(*self.errors):
                    async for _ in chunks:
                        pass
            raise

    async def _checkout(self) -> AsyncHTTPConnection:
        while self._idle:
            connection = self._idle.pop()
            if not connection.has_expired():
                return connection
            await self._discard(connection)
        connection = self._httpcore.AsyncHTTPConnection(self._origin, ssl_context=self._ssl)
        self._open.add(connection)
        return connection

    async def _discard(self, connection: AsyncHTTPConnection) -> None:
        self._open.discard(connection)
        with anyio.CancelScope(shield=True):
            await connection.aclose()

    async def aclose(self) -> None:
        self._idle.clear()
        for connection in list(self._open):
            await self._discard(connection)


def _loop_key() -> tuple[str, object]:
    """The running event loop: ``("asyncio", loop)`` or ``("trio", root task)``."""
    try:
        return "asyncio", asyncio.get_running_loop()
    except RuntimeError:
        pass
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            return "trio", trio.lowlevel.current_root_task()
        except RuntimeError:
            pass
    raise RuntimeError("HttpRetriever runs under asyncio or trio; no event loop is running")


class _Slot:
    """One event loop's client, the async generator that closes it, the `async with` depth."""

    def __init__(self, client: Client, holder: AsyncGenerator[None, None]) -> None:
        self.client, self.holder, self.depth = client, holder, 0


def _require_extra() -> None:
    def missing(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is None
        except (ImportError, ValueError):
            return True

    absent = [name for name in ("aiohttp", "httpcore") if missing(name)]
    if absent:
        raise ImportError(f"HttpRetriever needs {' and '.join(absent)}: {_EXTRA_HINT}")


class LoopClients:
    """The client of each running event loop, opened on first use, closed with its loop.

    aiohttp under asyncio, httpcore under trio. A client lives until its event loop ends (the
    loop finalises the async generator that holds it), until :meth:`aclose`, or until the last
    :meth:`exit` matching an :meth:`enter` on that loop; the next request then opens a new one.

    :param method: the request method.
    :param url: the URL every request goes to (with the request's parameters added).
    :param headers: headers sent with every request.
    :param cap: a cap on connections, or ``None`` for one per request in flight.
    :param max_bytes: a cap on each answer's body, in bytes, or ``None`` for none.
    :raises ImportError: when aiohttp or httpcore is not installed.

    >>> async def client_kind() -> tuple[str, bool]:
    ...     clients = LoopClients("POST", "http://127.0.0.1:8000/search", {}, None)
    ...     client = await clients.current()
    ...     reused = await clients.current() is client
    ...     await clients.aclose()
    ...     return type(client).__name__, reused
    >>> anyio.run(client_kind)
    ('_AiohttpClient', True)
    >>> anyio.run(client_kind, backend="trio")
    ('_HttpcoreClient', True)
    """

    def __init__(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        cap: int | None,
        max_bytes: int | None = None,
    ) -> None:
        _require_extra()
        self._method, self._url, self._headers, self._cap = method, url, headers, cap
        self._max_bytes = max_bytes
        self._slots: dict[tuple[str, object], _Slot] = {}

    async def current(self) -> Client:
        """The running event loop's client, opened if it has none."""
        return (self._slots.get(_loop_key()) or await self._open()).client

    async def enter(self) -> None:
        """Open the running event loop's client if need be, and keep it open until :meth:`exit`."""
        slot = self._slots.get(_loop_key()) or await self._open()
        slot.depth += 1

    async def exit(self) -> None:
        """Close the running event loop's client if this ends the outermost :meth:`enter`."""
        slot = self._slots.get(_loop_key())
        if slot is not None:
            slot.depth -= 1
            if slot.depth <= 0:
                await slot.holder.aclose()

    async def aclose(self) -> None:
        """Close the running event loop's client now."""
        slot = self._slots.get(_loop_key())
        if slot is not None:
            await slot.holder.aclose()

    async def _open(self) -> _Slot:
        key = _loop_key()
        kind = _HttpcoreClient if key[0] == "trio" else _AiohttpClient
        client = kind(self._method, self._url, self._headers, self._cap, self._max_bytes)
        slot = self._slots[key] = _Slot(client, self._hold(key, client))
        # The first step registers the generator with the loop, which finalises it at its end.
        await slot.holder.asend(None)
        return slot

    async def _hold(self, key: tuple[str, object], client: Client) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            slot = self._slots.get(key)
            if slot is not None and slot.client is client:
                del self._slots[key]
            with anyio.CancelScope(shield=True):
                await client.aclose()
