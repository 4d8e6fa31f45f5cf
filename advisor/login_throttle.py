"""An ASGI middleware that slows password guessing on the login route: after a few failed logins from one
client within a minute, further attempts from it are refused (HTTP 429) until the minute has passed.

Every spelling of the route counts (``/login``, ``/login/``, ``//login``, ``/LOGIN``, under any prefix), and
the client is the connection's peer address: forwarding headers are believed only from the proxies named in
``GPU_ADVISOR_TRUSTED_PROXIES`` (see :func:`trust_proxies`), never guessed from the request."""

from __future__ import annotations

import ipaddress
import os
import re
import threading
import time
from collections import deque
from typing import Any

MAX_FAILURES = 5
WINDOW_S = 60.0
MAX_CLIENTS = 10_000  # failure records kept at most (oldest forgotten first): a flood of addresses stays bounded
TRUSTED_PROXIES_ENV = "GPU_ADVISOR_TRUSTED_PROXIES"
_SLASHES = re.compile(r"/+")


def is_login_path(path: str) -> bool:
    """Whether a request path is the login route, however it is spelled."""
    parts = [p for p in _SLASHES.split(path.strip().lower()) if p]
    return bool(parts) and parts[-1] == "login"


def trust_proxies(env: Any = None) -> str:
    """Tell the web server which proxies may set the client address (``X-Forwarded-For``), and return them.

    ``GPU_ADVISOR_TRUSTED_PROXIES`` lists addresses or networks, comma-separated (e.g. ``127.0.0.1`` when a
    reverse proxy on this machine forwards to the app); the default is none, so a client on localhost cannot
    pose as another by rotating the header. A bad entry raises ValueError naming it."""
    env = os.environ if env is None else env
    raw = str(env.get(TRUSTED_PROXIES_ENV, "") or "").strip()
    entries = [e.strip() for e in raw.split(",") if e.strip()]
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(f"{TRUSTED_PROXIES_ENV}: {entry[:60]!r} is not an IP address or network") from None
    # uvicorn reads this when Gradio builds its server; an empty list trusts no forwarding header
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(entries)
    return ",".join(entries)


class LoginThrottle:
    """``--auth`` once allowed ~480 guesses a second; now ``max_failures`` per ``window_s`` per client address
    (behind a trusted reverse proxy, the address it forwards; behind an untrusted one, the proxy's, shared)."""

    def __init__(self, app: Any, max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S) -> None:
        self.app = app
        self.max_failures = max_failures
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._failures.get(client) or deque()
        while times and now - times[0] > self.window_s:
            times.popleft()
        if not times:
            self._failures.pop(client, None)  # nothing kept for addresses that stopped failing
        return times

    def _fail(self, client: str) -> None:
        now = time.monotonic()
        with self._lock:
            times = self._recent(client, now)
            times.append(now)
            self._failures.pop(client, None)
            self._failures[client] = times  # most recent last
            while len(self._failures) > MAX_CLIENTS:
                self._failures.pop(next(iter(self._failures)))

    def _wait(self, client: str) -> float:
        now = time.monotonic()
        with self._lock:
            recent = self._recent(client, now)
            return self.window_s - (now - recent[0]) if len(recent) >= self.max_failures else 0.0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or not is_login_path(str(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        client = str((scope.get("client") or ("?", 0))[0])
        wait = self._wait(client)
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
        if status >= 400 or status == 0:
            self._fail(client)
