"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol, scripted per test.

Each request to ``POST /v1/chat/completions`` is answered by ``server.script`` — a list of
:class:`FakeReply` consumed in order (the last one repeats), or a callable taking the request
body. It supports plain JSON and SSE streaming replies, tool calls (with raw, possibly broken,
argument text), HTTP error statuses, garbage bodies, truncated streams and slow replies
(which wait on an event that ``stop()`` releases, so no thread outlives the test).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeReply:
    content: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, raw JSON arguments)
    status: int = 200
    delay_s: float = 0.0  # wait before answering (released early by stop())
    truncate: bool = False  # stream stops mid-reply: no finish_reason, no [DONE]
    garbage: bool = False  # body is not JSON / SSE lines are not JSON
    chunk_chars: int = 6  # streamed content piece size
    finish_reason: str | None = None
    keepalive_s: float = 0.0  # SSE comment lines (': keep-alive') every 0.2 s for this long before any content


class FakeChatServer:
    """``with FakeChatServer() as srv: srv.script = [...]; OpenAI(base_url=srv.base_url)``."""

    def __init__(self) -> None:
        self.script: list[FakeReply] | Callable[[dict[str, Any]], FakeReply] = [FakeReply(content="ok")]
        self.requests: list[dict[str, Any]] = []
        self.props: dict[str, Any] | None = None  # GET /props (llama.cpp's server); 404 when None
        self.model_fields: dict[str, Any] = {}  # more fields of the model in GET /v1/models ('max_model_len')
        self.gets: list[str] = []  # paths asked with GET
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    # ---------------------------------------------------------------- lifecycle
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release slow handlers, stop serving and close the socket (safe if never started)."""
        self._released.set()
        if self._thread.is_alive():
            self._httpd.shutdown()  # waits for serve_forever, so only when it runs
            self._thread.join(timeout=5)
        self._httpd.server_close()

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- scripting
    def _next(self, body: dict[str, Any]) -> FakeReply:
        with self._lock:
            self.requests.append(body)
            if callable(self.script):
                return self.script(body)
            if len(self.script) > 1:
                return self.script.pop(0)
            return self.script[0]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                return

            def do_GET(self) -> None:  # /v1/models and llama.cpp's /props, for clients that probe
                server.gets.append(self.path)
                if self.path == "/props":
                    if server.props is None:
                        self._json(404, {"error": {"message": "File Not Found", "type": "not_found_error"}})
                    else:
                        self._json(200, server.props)
                    return
                self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model",
                                                             **server.model_fields}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._json(400, {"error": {"message": "bad request body"}})
                    return
                if any(m.get("content") is None for m in body.get("messages", [])):
                    # llama.cpp's server rejects a message whose content is null (an assistant tool call included)
                    server.requests.append(body)
                    self._json(500, {"error": {"message": "content must not be null", "type": "server_error"}})
                    return
                reply = server._next(body)
                if reply.delay_s:
                    server._released.wait(reply.delay_s)
                    if server._released.is_set():
                        return
                if reply.status != 200:
                    self._json(reply.status, {"error": {"message": f"fake error {reply.status}",
                                                        "type": "server_error"}})
                    return
                if body.get("stream"):
                    self._stream(reply, body)
                else:
                    self._complete(reply, body)

            # ---------------------------------------------------------- replies
            def _json(self, status: int, obj: Any, raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def _complete(self, reply: FakeReply, body: dict[str, Any]) -> None:
                if reply.garbage:
                    self._json(200, None, raw=b"{not json")
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
                if reply.tool_calls:
                    message["tool_calls"] = [
                        {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                        for i, (n, a) in enumerate(reply.tool_calls)]
                finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
                self._json(200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                                 "model": body.get("model", "fake"),
                                 "choices": [{"index": 0, "message": message, "finish_reason": finish}]})

            def _stream(self, reply: FakeReply, body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": body.get("model", "fake")}

                def send(delta: dict[str, Any], finish: str | None = None) -> None:
                    chunk = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()

                try:
                    if reply.garbage:
                        self.wfile.write(b"data: {this is not json\n\n")
                        self.wfile.flush()
                        return
                    send({"role": "assistant", "content": ""})
                    until = time.monotonic() + reply.keepalive_s
                    while time.monotonic() < until and not server._released.is_set():
                        self.wfile.write(b": keep-alive\n\n")
                        self.wfile.flush()
                        server._released.wait(0.2)
                    text = reply.content
                    pieces = [text[i:i + reply.chunk_chars] for i in range(0, len(text), reply.chunk_chars)]
                    for n, piece in enumerate(pieces):
                        if reply.truncate and n >= len(pieces) // 2:
                            return
                        send({"content": piece})
                    for i, (name, args) in enumerate(reply.tool_calls):
                        send({"tool_calls": [{"index": i, "id": f"call_{i}", "type": "function",
                                              "function": {"name": name, "arguments": ""}}]})
                        step = max(10, len(args) // 64)  # a 200 kB argument in 64 pieces, not 20,000: its size is
                        for j in range(0, len(args), step):  # what is tested, not how fast a client parses chunks
                            send({"tool_calls": [{"index": i, "function": {"arguments": args[j:j + step]}}]})
                    if reply.truncate:
                        return
                    send({}, reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return
                finally:
                    self.close_connection = True

        return Handler
