"""Raw tool results, served only when a reader asks for one.

A chat step carries its inputs and a one-line summary; its full result (often tens of KB of JSON) stays on the
server under an unguessable token, and the step links to it (``result_path``). The page fetches it when the
link is opened (``page.js`` shows it in place), so a turn's updates no longer carry every result again.
The store is bounded (least recently used out first); a link to a result it no longer holds says so.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections import OrderedDict
from typing import Any

PATH_PREFIX = "gpu-advisor/result/"
MAX_ITEMS = 4096
MAX_BYTES = 64_000_000
_TOKEN = re.compile(r"[0-9a-f]{32}")


class ResultStore:
    """Token → JSON bytes, least recently used dropped first beyond ``max_items`` or ``max_bytes``."""

    def __init__(self, max_items: int = MAX_ITEMS, max_bytes: int = MAX_BYTES) -> None:
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.max_items = max_items
        self.max_bytes = max_bytes

    def put(self, result: Any) -> str:
        """Keep ``result`` (anything JSON can show); returns its token."""
        data = json.dumps(result, ensure_ascii=False, indent=1, default=str).encode("utf-8")
        token = secrets.token_hex(16)
        with self._lock:
            self._items[token] = data
            self._bytes += len(data)
            while self._items and (len(self._items) > self.max_items or self._bytes > self.max_bytes):
                _, old = self._items.popitem(last=False)
                self._bytes -= len(old)
        return token

    def get(self, token: str) -> bytes | None:
        if not _TOKEN.fullmatch(token or ""):
            return None
        with self._lock:
            data = self._items.get(token)
            if data is not None:
                self._items.move_to_end(token)
            return data


STORE = ResultStore()


def result_path(result: Any) -> str:
    """The link (relative to the page, so it works under a proxy's sub-path) serving ``result`` as JSON."""
    return PATH_PREFIX + STORE.put(result)


def routes() -> list[Any]:
    """The web server's route for stored results (starlette is imported only when serving)."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def serve(request: Request) -> Response:
        data = STORE.get(str(request.path_params.get("token", "")))
        if data is None:
            return JSONResponse({"error": "this result is no longer kept; ask again to recompute it"},
                                status_code=404)
        return Response(data, media_type="application/json; charset=utf-8",
                        headers={"Cache-Control": "private, max-age=86400", "X-Content-Type-Options": "nosniff"})

    return [Route("/" + PATH_PREFIX + "{token}", serve, methods=["GET"])]
