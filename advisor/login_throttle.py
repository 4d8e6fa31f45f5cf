"""An ASGI middleware that slows password guessing on the login route: after a few failed logins from one
address within a minute, further attempts from it are refused (HTTP 429) until the minute has passed."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

MAX_FAILURES = 5
WINDOW_S = 60.0


class LoginThrottle:
    """``--auth`` once allowed ~480 guesses a second; now ``max_failures`` per ``window_s`` per client address
    (behind a reverse proxy every user shares the proxy's address, so the limit is shared)."""

    def __init__(self, app: Any, max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S) -> None:
        self.app = app
        self.max_failures = max_failures
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._failures.setdefault(client, deque())
        while times and now - times[0] > self.window_s:
            times.popleft()
        if not times:
            self._failures.pop(client, None)  # nothing kept for addresses that stopped failing
        return times

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or not str(scope.get("path", "")).endswith(
                "/login"):
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("?", 0))[0]
        with self._lock:
            recent = self._recent(client, time.monotonic())
            wait = self.window_s - (time.monotonic() - recent[0]) if len(recent) >= self.max_failures else 0.0
        if wait > 0:
            body = b"too many failed logins; try again in a minute"
            await send({"type": "http.response.start", "status": 429,
                        "headers": [(b"content-type", b"text/plain"), (b"retry-after", str(int(wait) + 1).encode()),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        status = 0

        async def watched(message: dict[str, Any]) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message.get("status", 0))
            await send(message)

        await self.app(scope, receive, watched)
        if status >= 400:
            with self._lock:
                self._recent(client, time.monotonic())
                self._failures.setdefault(client, deque()).append(time.monotonic())
