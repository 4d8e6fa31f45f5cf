"""Server-side sessions of the web app end after a while idle, and only so many are kept.

Gradio keeps, per browser (or API client) session, the value of every ``gr.State`` plus a copy of every
component's last value (the whole chat included). It frees a session's State only an hour after its tab
closes, and never frees the session itself until 10,000 of them exist; API clients never close at all.
Left alone, a server's memory grew by ~1.7 MB per turn and never came back.

:class:`SessionSweeper` removes whole sessions idle longer than ``idle_s`` (never one whose turn is
running), then hands freed memory back to the operating system. The count bound is Gradio's own
``state_session_capacity`` (least recently used dropped first), set from :func:`limits`.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime as dt
import gc
import logging
import os
import threading
from dataclasses import dataclass
from typing import Any

from advisor.env_limits import env_number
from advisor.ui.state import UIState

log = logging.getLogger(__name__)

DEFAULT_IDLE_S = 4 * 3600
DEFAULT_MAX_SESSIONS = 256
M_ARENA_MAX = -8  # glibc's mallopt parameter number
MIN_IDLE_S = 60  # longer than a turn may take (ADVISOR_TURN_TIMEOUT_S ≤ 90 s by default)


@dataclass(frozen=True)
class SessionLimits:
    idle_s: float = DEFAULT_IDLE_S
    max_sessions: int = DEFAULT_MAX_SESSIONS


def limits(env: Any = None) -> SessionLimits:
    """``GPU_ADVISOR_SESSION_IDLE_S`` and ``GPU_ADVISOR_MAX_SESSIONS`` (defaults 4 h and 256); a value that is
    not a number in range raises ValueError naming the variable and the range."""
    env = os.environ if env is None else env
    idle = env_number(env, "GPU_ADVISOR_SESSION_IDLE_S", DEFAULT_IDLE_S, MIN_IDLE_S, 30 * 86400)
    count = env_number(env, "GPU_ADVISOR_MAX_SESSIONS", DEFAULT_MAX_SESSIONS, 1, 100_000)
    if count != int(count):
        raise ValueError(f"GPU_ADVISOR_MAX_SESSIONS must be a whole number, not {count:g}")
    return SessionLimits(idle_s=idle, max_sessions=int(count))


class SessionSweeper:
    """Removes a Gradio app's sessions idle longer than ``idle_s``; ``start()`` runs it every ``every_s``."""

    def __init__(self, blocks: Any, idle_s: float, every_s: float | None = None) -> None:
        self.blocks = blocks
        self.idle_s = idle_s
        self.every_s = every_s if every_s is not None else min(60.0, idle_s / 4)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self, now: dt.datetime | None = None) -> int:
        """Remove the idle sessions now; returns how many were removed."""
        holder: Any = getattr(self.blocks, "state_holder", None)
        sessions = getattr(holder, "session_data", None)
        last_used = getattr(holder, "time_last_used", None)
        if not isinstance(sessions, dict) or not isinstance(last_used, dict):
            log.warning("this Gradio version keeps sessions elsewhere: idle sessions are not removed")
            self._stop.set()
            return 0
        cutoff = (now or dt.datetime.now()) - dt.timedelta(seconds=self.idle_s)
        removed = 0
        for sid, when in list(last_used.items()):
            session = sessions.get(sid)
            if when >= cutoff or (session is not None and _running(session)):
                continue
            with holder.lock:
                sessions.pop(sid, None)
                last_used.pop(sid, None)
            for value in _state_values(session):
                if isinstance(value, UIState):
                    value.closed = True  # a late event for it shows nothing
            removed += 1
        if removed:
            log.info("removed %d idle session(s); %d kept", removed, len(sessions))
            release_memory()
        return removed

    def start(self) -> SessionSweeper:
        def loop() -> None:
            while not self._stop.wait(self.every_s):
                try:
                    self.sweep()
                except Exception:  # the next round tries again; serving goes on
                    log.warning("removing idle sessions failed", exc_info=True)

        self._thread = threading.Thread(target=loop, name="gpu-advisor-session-sweeper", daemon=True)
        self._thread.start()
        return self


def _state_values(session: Any) -> list[Any]:
    data = getattr(session, "state_data", None)
    return list(data.values()) if isinstance(data, dict) else []


def _running(session: Any) -> bool:
    return any(isinstance(v, UIState) and v.busy for v in _state_values(session))


def limit_malloc_arenas(arenas: int = 2) -> None:
    """Have glibc share ``arenas`` heaps between all threads (unless ``MALLOC_ARENA_MAX`` says otherwise).

    By default each serving thread gets its own heap, and memory freed in one is kept for it: measured
    under 32 concurrent conversations, that left an idle server ~170 MB larger. Elsewhere a no-op."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, arenas)


def release_memory() -> None:
    """Collect garbage and return free heap pages to the OS (glibc's ``malloc_trim``; elsewhere a no-op)."""
    gc.collect()
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None).malloc_trim(0)
