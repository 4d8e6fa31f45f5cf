"""Gzip for event streams: the chat's updates arrive as ``text/event-stream``, which the ordinary gzip
middleware leaves alone (it would hold events back until a buffer fills). Here each chunk is compressed
and flushed at once (``Z_SYNC_FLUSH``), so every event reaches the page when it is sent, and the stream
shares one dictionary: an answer's text that recurs in later events costs a few bytes. Other responses
pass through untouched (starlette's ``GZipMiddleware`` handles them)."""

from __future__ import annotations

import zlib
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]


class StreamGzip:
    """ASGI middleware compressing ``text/event-stream`` responses for clients that accept gzip."""

    def __init__(self, app: Any, level: int = 6) -> None:
        self.app = app
        self.level = level

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or not _accepts_gzip(scope):
            await self.app(scope, receive, send)
            return
        packer: Any = None

        async def wrapped(message: Message) -> None:
            nonlocal packer
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                kind = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                encoded = any(k.lower() == b"content-encoding" for k, _ in headers)
                if kind.startswith(b"text/event-stream") and not encoded:
                    packer = zlib.compressobj(self.level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
                    headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
                    headers += [(b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding")]
                    message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and packer is not None:
                more = message.get("more_body", False)
                body = packer.compress(message.get("body", b""))
                body += packer.flush(zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH)
                message = {**message, "body": body}
            await send(message)

        await self.app(scope, receive, wrapped)


def _accepts_gzip(scope: Scope) -> bool:
    for key, value in scope.get("headers") or []:
        if key.lower() == b"accept-encoding":
            return b"gzip" in value.lower()
    return False
