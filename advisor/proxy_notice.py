"""An ASGI middleware that says once, on stderr, when the app is being reached through a reverse proxy.

Behind a proxy every user arrives from 127.0.0.1, so the start-up warning about serving beyond loopback
never fires. The first request carrying forwarding headers prints what that means for this server: no
login required, and whether the Settings tab is unlocked."""

from __future__ import annotations

import sys
import threading
from typing import Any

from advisor.ui.state import PROXY_HEADERS


class ProxyNotice:
    def __init__(self, app: Any, auth: bool = False, settings_locked: bool = True) -> None:
        self.app = app
        self.auth = auth
        self.settings_locked = settings_locked
        self._said = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not self._said.is_set() and scope.get("type") == "http" and any(
                name.decode("latin-1").lower() in PROXY_HEADERS for name, _ in scope.get("headers") or ()):
            self._said.set()
            sys.stderr.write(proxy_warning(self.auth, self.settings_locked) + "\n")
        await self.app(scope, receive, send)


def proxy_warning(auth: bool, settings_locked: bool) -> str:
    """The one-time notice for a proxied server (English: it is for the administrator's log)."""
    parts = ["gpu-advisor: requests are arriving through a reverse proxy"]
    if not auth:
        parts.append("no login is required here, so anyone who can reach the proxy can use the app — add --auth "
                     "or authenticate at the proxy")
    if not settings_locked:
        parts.append("GPU_ADVISOR_LOCK_SETTINGS=0 unlocks the Settings tab; changes arriving through the proxy "
                     "are refused, but lock it when serving others")
    return "; ".join(parts) + "."
