"""Server-side sessions of the web app end after a while idle, and only so many are kept.

Gradio keeps, per browser (or API client) session, the value of every ``gr.State`` plus a copy of every
component's last value (the whole chat included). It frees a session's State only an hour after its tab
closes, and never frees the session itself until 10,000 of them exist; API clients never close at all.
Left alone, a server's memory grew by ~1.7 MB per turn and never came back.

:class:`SessionSweeper` takes idle sessions out of Gradio (never one whose turn is running) and parks their
conversations compressed (``advisor/ui/parking.py``), from where the tab's next event revives them — after
ten minutes idle, or after one minute while the server's memory is 20 % above the lowest it has been — then
hands freed memory back to the operating system. Parked conversations are forgotten after ``idle_s``.
The count bound is Gradio's own ``state_session_capacity`` (least recently used dropped first), set from :func:`limits`.
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
from advisor.session import Session
from advisor.ui.parking import Parking
from advisor.ui.state import DEFAULT_KEY, UIState

log = logging.getLogger(__name__)

DEFAULT_IDLE_S = 4 * 3600
DEFAULT_MAX_SESSIONS = 256
M_ARENA_MAX = -8  # glibc's mallopt parameter number
MIN_IDLE_S = 60  # longer than a turn may take (ADVISOR_TURN_TIMEOUT_S ≤ 90 s by default)
PARK_IDLE_S = 600  # a tab idle this long is parked (compressed) even without memory pressure
PRESSURE_IDLE_S = 60  # under memory pressure, one idle this long
MEMORY_HEADROOM = 0.2  # pressure: more than 20 % above the lowest memory use seen
SWEEP_EVERY_S = 15.0


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
    """Takes a Gradio app's idle sessions out of memory; ``start()`` runs it every ``every_s``.

    A session idle for ``park_idle_s`` — or for only ``pressure_idle_s`` while the server's memory is more than
    ``headroom`` above the lowest it has been — is removed from Gradio and parked, compressed, in ``parking``
    (when the app has one), from where its tab's next event revives it; a parked conversation is forgotten once
    it has been idle ``idle_s``. A session whose turn is running is never touched."""

    def __init__(self, blocks: Any, idle_s: float, every_s: float | None = None, *,
                 park_idle_s: float = PARK_IDLE_S, pressure_idle_s: float = PRESSURE_IDLE_S,
                 headroom: float = MEMORY_HEADROOM, parking: Parking | None = None) -> None:
        self.blocks = blocks
        self.idle_s = idle_s
        self.park_idle_s = min(park_idle_s, idle_s)
        self.pressure_idle_s = min(pressure_idle_s, self.park_idle_s)
        self.headroom = headroom
        self.every_s = every_s if every_s is not None else min(SWEEP_EVERY_S, idle_s / 4)
        self.parking = parking if parking is not None else getattr(blocks, "parking", None)
        self.floor_mb: float | None = None  # the lowest memory use seen at a sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def under_pressure(self) -> bool:
        """Whether the process uses more than ``headroom`` above the lowest it has been seen to use."""
        rss = rss_mb()
        if rss is None:
            return False
        self.floor_mb = rss if self.floor_mb is None else min(self.floor_mb, rss)
        return rss > self.floor_mb * (1 + self.headroom)

    def sweep(self, now: dt.datetime | None = None, pressure: bool | None = None) -> int:
        """Take the idle sessions out now; returns how many were taken out."""
        holder: Any = getattr(self.blocks, "state_holder", None)
        sessions = getattr(holder, "session_data", None)
        last_used = getattr(holder, "time_last_used", None)
        if not isinstance(sessions, dict) or not isinstance(last_used, dict):
            log.warning("this Gradio version keeps sessions elsewhere: idle sessions are not removed")
            self._stop.set()
            return 0
        now = now or dt.datetime.now()
        pressure = self.under_pressure() if pressure is None else pressure
        cutoff = now - dt.timedelta(seconds=self.pressure_idle_s if pressure else self.park_idle_s)
        removed = 0
        for sid, when in list(last_used.items()):
            session = sessions.get(sid)
            if when >= cutoff or (session is not None and _running(session)):
                continue
            with holder.lock:
                sessions.pop(sid, None)
                last_used.pop(sid, None)
            self._park(sid, session, idle_s=(now - when).total_seconds())
            removed += 1
        if removed:
            log.info("took out %d idle session(s)%s; %d kept", removed, " under memory pressure" if pressure else "",
                     len(sessions))
            release_memory()
        return removed

    def _park(self, sid: str, session: Any, idle_s: float) -> None:
        for value in _state_values(session):
            if isinstance(value, UIState):
                value.closed = True  # a late event for it shows nothing
                found = (value.session, value.lang, value.backend_key, value.last_sent)
            elif isinstance(value, dict) and isinstance(value.get("session"), Session):  # an API client's
                found = (value["session"], "zh", DEFAULT_KEY, 0)
            else:
                continue
            if self.parking is not None and idle_s < self.idle_s and found[0].history:
                self.parking.park(sid, *found, idle_s=idle_s)

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


def rss_mb() -> float | None:
    """This process's resident memory in MB (Linux ``/proc``; None elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return None


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
