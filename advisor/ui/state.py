"""Per-browser-session UI state and the shared pool of engines (one per backend configuration).

Each browser tab gets its own :class:`UIState` (held in a ``gr.State``, so it lives on the server,
never in the page): the advisor session, the chat as rendered, the UI language and which backend
this tab uses. Engines are shared read-only objects: the pool keeps the server's default one plus
a few user-configured ones, keyed by a fingerprint of their settings (API keys hashed, never kept
in the key or shown).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from advisor.session import Session
from advisor.settings import Settings

log = logging.getLogger(__name__)

DEFAULT_KEY = "default"
MAX_SNAPSHOTS = 5  # turns that can be asked again or edited (~75 kB each, compressed, after a sizing turn)
MAX_CUSTOM_ENGINES = 4


@dataclass
class UIState:
    """Everything one browser tab owns."""

    session: Session
    lang: str = "zh"
    backend_key: str = DEFAULT_KEY
    messages: list[Any] = field(default_factory=list)
    shown_profile: dict[str, Any] = field(default_factory=dict)
    user_turns: int = 0
    inbox: list[tuple[int, str]] = field(default_factory=list)  # (order sent, text) waiting for their turn
    busy: bool = False  # a turn of this tab is running
    stopping: bool = False  # Stop was pressed: the running turn ends at its next step
    closed: bool = False  # replaced by a new conversation: a turn still running for it shows nothing
    worker: threading.Thread | None = None  # the thread running this tab's engine turn (layout._stream_turn)
    last_sent: int = 0  # the number of the page's last send taken (see layout.TAKE_JS)
    panel_sent: dict[int, Any] = field(default_factory=dict)  # what the page's panel views show now
    previous: UIState | None = None  # the conversation "new conversation" replaced, until this one starts
    snapshots: dict[int, bytes] = field(default_factory=dict)  # user message's index → the session before it
    refresh_panel: bool = False  # the panel must be redrawn at the next turn's end (a conversation brought back)

    def enqueue(self, text: str, seq: int | None = None) -> None:
        """Queue a message in the order it was sent (``seq`` from the page; None: after all the others)."""
        order = seq if seq is not None else max((s for s, _ in self.inbox), default=0) + 1
        self.inbox.append((order, text))
        self.inbox.sort(key=lambda item: item[0])

    def snapshot(self, index: int) -> None:
        """Keep the session as it is before the user message about to go at ``index`` (compressed; the last
        ``MAX_SNAPSHOTS`` turns), so that message can be asked again or edited."""
        self.snapshots[index] = zlib.compress(self.session.to_json().encode("utf-8"), 6)
        for old in sorted(self.snapshots)[:-MAX_SNAPSHOTS]:
            del self.snapshots[old]

    def rewind(self, index: int) -> str | None:
        """Go back to just before the user message at ``index``: the session as it was, the chat cut there.
        Returns that message's text; None when no snapshot is kept for it."""
        data = self.snapshots.get(index)
        if data is None or index >= len(self.messages) or getattr(self.messages[index], "role", "") != "user":
            return None
        text = str(getattr(self.messages[index], "content", ""))
        self.session = Session.from_json(zlib.decompress(data).decode("utf-8"), where="a kept turn")
        self.messages = self.messages[:index]
        self.user_turns = sum(1 for m in self.messages if getattr(m, "role", "") == "user")
        self.snapshots = {i: d for i, d in self.snapshots.items() if i < index}
        return text

    def shown(self) -> list[Any]:
        """The chat as the page shows it: the conversation, then the messages still waiting for their turn."""
        from advisor.ui.render import user_message  # the render module imports gradio: only when drawing

        return [*self.messages, *(user_message(text) for _, text in self.inbox)]


def ui_settings(
    llm: str, llama_model: str | None, base_url: str | None, model: str | None, api_key: str | None
) -> Settings:
    """Backend settings typed into the Settings tab.

    Only what the user typed is used: the server's own ``OPENAI_API_KEY`` is never sent to a URL a
    web user entered (an empty key stays empty); limits and timeouts come from the server's environment.
    """
    return Settings(
        llm=llm if llm in ("none", "llama", "openai") else "none",
        llama_model=(llama_model or "").strip() or None,
        openai_base_url=(base_url or "").strip() or None,
        openai_model=(model or "").strip() or "gpt-4o-mini",
        openai_api_key=(api_key or "").strip() or None,
    )


def settings_key(settings: Settings) -> str:
    """A stable fingerprint of the backend part of ``settings`` (the key only as a short hash)."""
    secret = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
    parts = [
        settings.llm,
        settings.llama_model or "",
        settings.openai_base_url or "",
        settings.openai_model,
        hashlib.sha256(secret.encode()).hexdigest()[:16] if secret else "",
    ]
    return "llm:" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


class AdvisorPool:
    """The default engine plus a small LRU of user-configured ones; thread-safe."""

    def __init__(self, factory: Callable[..., Any], default_settings: Settings | None = None) -> None:
        self._factory = factory
        self._default_settings = default_settings
        self._default: Any = None
        self._custom: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def default(self) -> Any:
        with self._lock:
            if self._default is None:
                self._default = (
                    self._factory(settings=self._default_settings) if self._default_settings else self._factory()
                )
            return self._default

    def get(self, key: str) -> Any:
        """The engine for ``key``; the default one when the key is unknown (e.g. evicted)."""
        if key != DEFAULT_KEY:
            with self._lock:
                adv = self._custom.get(key)
                if adv is not None:
                    self._custom.move_to_end(key)
                    return adv
        return self.default()

    def configure(self, settings: Settings) -> tuple[str, Any]:
        """Build (or reuse) an engine for ``settings``; returns (key, engine)."""
        if settings.llm == "none":
            return DEFAULT_KEY if self._default_is_offline() else "llm:none", self._offline(settings)
        key = settings_key(settings)
        with self._lock:
            if key in self._custom:
                self._custom.move_to_end(key)
                return key, self._custom[key]
        adv = self._factory(settings=settings)  # may load a model: outside the lock
        with self._lock:
            self._custom[key] = adv
            while len(self._custom) > MAX_CUSTOM_ENGINES:
                _, old = self._custom.popitem(last=False)
                _close(old)
        return key, adv

    def _default_is_offline(self) -> bool:
        return not getattr(getattr(self.default(), "backend", None), "is_llm", False)

    def _offline(self, settings: Settings) -> Any:
        if self._default_is_offline():
            return self.default()
        with self._lock:
            adv = self._custom.get("llm:none")
            if adv is None:
                adv = self._custom["llm:none"] = self._factory(settings=settings)
            return adv


def _close(adv: Any) -> None:
    try:
        adv.backend.close()
    except Exception:  # closing is best effort
        log.debug("closing an evicted backend failed", exc_info=True)


# headers a reverse proxy adds: a request carrying one did not come from this machine's own browser
PROXY_HEADERS = frozenset({"forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip",
                           "via"})


def forwarded(headers: Any) -> bool:
    """Whether a request's ``headers`` (a mapping, any case) show that it came through a proxy."""
    try:
        return any(str(name).lower() in PROXY_HEADERS for name in headers)
    except TypeError:
        return False
