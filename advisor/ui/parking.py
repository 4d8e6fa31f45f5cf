"""Conversations taken out of the server's live sessions, kept compressed until their tab comes back.

Gradio holds, per browser tab or API client, the conversation plus a rendered copy of every output — a few
MB after a dozen turns. When a tab has been idle a while (sooner when the server's memory has grown), the
sweeper (``advisor/ui/expiry.py``) parks it here: the session as zlib-compressed JSON, a few kB. The tab's
next event finds its state gone, and the handlers revive it from here by the tab's Gradio session hash:
the conversation, its language and its backend carry on as if nothing happened.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass

from advisor.session import Session, SessionError

MAX_PARKED = 4096  # conversations kept (oldest dropped first): ~10 kB each


@dataclass(frozen=True)
class Parked:
    session: Session
    lang: str
    backend_key: str
    last_sent: int


@dataclass(frozen=True)
class _Packed:
    at: float
    data: bytes
    lang: str
    backend_key: str
    last_sent: int


class Parking:
    """Parked conversations by Gradio session hash, at most ``max_items``, none older than ``max_age_s``."""

    def __init__(self, max_age_s: float, max_items: int = MAX_PARKED) -> None:
        self.max_age_s = max_age_s
        self.max_items = max_items
        self._items: OrderedDict[str, _Packed] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def park(self, key: str, session: Session, lang: str = "zh", backend_key: str = "default",
             last_sent: int = 0, idle_s: float = 0.0) -> None:
        """Keep ``session`` for ``key``; ``idle_s``: how long it has been idle already (it counts to its age)."""
        data = zlib.compress(session.to_json().encode("utf-8"), 6)
        packed = _Packed(time.monotonic() - idle_s, data, lang, backend_key, last_sent)
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = packed
            self._prune()

    def take(self, key: str | None) -> Parked | None:
        """The conversation parked for ``key`` (removed from here), or None."""
        if not key:
            return None
        with self._lock:
            self._prune()
            packed = self._items.pop(key, None)
        if packed is None:
            return None
        try:
            session = Session.from_json(zlib.decompress(packed.data).decode("utf-8"), where="a parked session")
        except (SessionError, zlib.error, UnicodeDecodeError):
            return None
        return Parked(session, packed.lang, packed.backend_key, packed.last_sent)

    def _prune(self) -> None:
        cutoff = time.monotonic() - self.max_age_s
        while self._items and (len(self._items) > self.max_items or next(iter(self._items.values())).at < cutoff):
            self._items.popitem(last=False)
