"""The chat's event streams are gzipped event by event: each event can be decoded the moment it arrives (a
buffered stream would hold the answer back), the whole stream decodes to what the app sent, and a client
that does not accept gzip, or a response that is not a stream, is passed through unchanged."""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

from advisor.stream_gzip import StreamGzip

EVENTS = [b'data: {"msg": "process_starts"}\n\n', b'data: {"msg": "process_generating", "output": "' + "结论".encode()
          + b'"}\n\n', b'data: {"msg": "process_completed"}\n\n']


def _run(content_type: bytes, accept: bytes | None) -> list[dict[str, Any]]:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", content_type), (b"content-length", b"999")]})
        for i, event in enumerate(EVENTS):
            await send({"type": "http.response.body", "body": event, "more_body": i < len(EVENTS) - 1})

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    headers = [(b"accept-encoding", accept)] if accept is not None else []
    asyncio.run(StreamGzip(app)({"type": "http", "headers": headers}, receive, send))
    return sent


def test_each_event_is_decodable_as_it_arrives_and_the_stream_is_whole() -> None:
    start, *bodies = _run(b"text/event-stream; charset=utf-8", b"gzip, deflate, br")
    headers = dict(start["headers"])
    assert headers[b"content-encoding"] == b"gzip" and b"content-length" not in headers
    reader = zlib.decompressobj(16 + zlib.MAX_WBITS)
    for event, body in zip(EVENTS, bodies, strict=True):
        assert reader.decompress(body["body"]) == event  # nothing of this event is held back
    assert reader.eof  # the last chunk ends the gzip member
    assert sum(len(b["body"]) for b in bodies) < sum(len(e) for e in EVENTS) + 40


def test_a_client_without_gzip_and_a_page_pass_through_unchanged() -> None:
    for kind, accept in ((b"text/event-stream", None), (b"text/event-stream", b"identity"), (b"text/html", b"gzip")):
        start, *bodies = _run(kind, accept)
        assert b"content-encoding" not in dict(start["headers"])
        assert [b["body"] for b in bodies] == EVENTS
