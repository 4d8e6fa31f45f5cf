"""An ASGI middleware that serves the web page's configuration from memory, compressed.

Gradio builds ``GET /config`` (227 kB of JSON) afresh for every request by deep-copying the whole page
description; 200 simultaneous requests kept its worker threads busy long enough to delay a normal API call
from 0.07 s to 7.8 s. The description does not change while the server runs, so one response per distinct
request (path, query, host and forwarding headers) is built once — concurrent requests wait for that one
build — and kept for ``ttl_s``, gzip-compressed for clients that accept it.

Used only without a login: with one, the response carries the user's name, and requests without a valid
login are refused before anything is built.
"""

from __future__ import annotations

import asyncio
import gzip
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

CONFIG_PATHS = frozenset({"/config", "/config/"})
KEY_HEADERS = (b"host", b"x-forwarded-host", b"x-forwarded-proto", b"forwarded", b"x-forwarded-prefix")
DROPPED_HEADERS = frozenset({b"content-length", b"content-encoding", b"vary"})


@dataclass(frozen=True)
class _Cached:
    at: float
    headers: list[tuple[bytes, bytes]]
    body: bytes
    gzipped: bytes


class ConfigCache:
    def __init__(self, app: Any, ttl_s: float = 60.0, max_entries: int = 32) -> None:
        self.app = app
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[Any, ...], _Cached] = OrderedDict()
        self._building: dict[tuple[Any, ...], asyncio.Future[None]] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET" or scope.get("path") not in CONFIG_PATHS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        key = (scope.get("root_path", ""), scope.get("path"), scope.get("query_string", b""),
               *(headers.get(h, b"") for h in KEY_HEADERS))
        wants_gzip = b"gzip" in headers.get(b"accept-encoding", b"").lower()
        cached = self._fresh(key)
        if cached is None and key in self._building:
            await asyncio.shield(self._building[key])
            cached = self._fresh(key)
        if cached is not None:
            await _send(send, cached, wants_gzip)
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._building[key] = done
        try:
            cached = await self._build(scope, receive, send)
            if cached is not None:
                self._store(key, cached)
                await _send(send, cached, wants_gzip)
        finally:
            self._building.pop(key, None)
            done.set_result(None)

    def _fresh(self, key: tuple[Any, ...]) -> _Cached | None:
        cached = self._entries.get(key)
        if cached is None or time.monotonic() - cached.at > self.ttl_s:
            return None
        self._entries.move_to_end(key)
        return cached

    def _store(self, key: tuple[Any, ...], cached: _Cached) -> None:
        self._entries[key] = cached
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    async def _build(self, scope: dict[str, Any], receive: Any, send: Any) -> _Cached | None:
        """Run the app; a 200 response is returned for caching, anything else is passed on as it came."""
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def collect(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        plain = [(k, v) for k, v in scope.get("headers") or [] if k.lower() != b"accept-encoding"]
        await self.app({**scope, "headers": plain}, receive, collect)  # compressed here, once
        body = b"".join(chunks)
        if start.get("status") != 200:
            if start:
                await send(start)
                await send({"type": "http.response.body", "body": body})
            return None
        kept = [(k, v) for k, v in start.get("headers", []) if k.lower() not in DROPPED_HEADERS]
        return _Cached(time.monotonic(), kept, body, gzip.compress(body, compresslevel=6))


async def _send(send: Any, cached: _Cached, wants_gzip: bool) -> None:
    body = cached.gzipped if wants_gzip else cached.body
    headers = [*cached.headers, (b"content-length", str(len(body)).encode()), (b"vary", b"Accept-Encoding")]
    if wants_gzip:
        headers.append((b"content-encoding", b"gzip"))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
