"""OpenAI-compatible chat-completions backend (OpenAI, vLLM, llama.cpp server, Ollama, …) via `openai`."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from advisor.backends.base import Backend, BackendError, LLMResponse, LLMToolCall, Message
from advisor.backends.context import context_size_for, probe_window
from advisor.settings import Settings

MAX_REPLY_CHARS = 16_000  # far above a 2–4 sentence explanation; a runaway reply is cut, never held in memory


class OpenAICompatBackend(Backend):
    """Streams chat completions with function calling. No retries: a failed turn falls back at once."""

    supports_tools = True

    def __init__(self, base_url: str | None, model: str, api_key: str | None = None, timeout_s: float = 30.0,
                 temperature: float = 0.2, max_tokens: int = 700):
        try:
            from openai import OpenAI
        except ImportError as exc:  # pragma: no cover - openai is a core dependency
            raise BackendError("unavailable", "the 'openai' package is not installed") from exc
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.name = f"openai:{model}"
        self._api_key = api_key
        self._window: int | None = None
        self._window_probed = False
        self._probe_lock = threading.Lock()
        # A local server needs no key; the client insists on one, so send a placeholder.
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAICompatBackend:
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return cls(settings.openai_base_url, settings.openai_model, key, settings.llm_timeout_s,
                   settings.temperature, settings.max_tokens)

    def context_window(self) -> int | None:
        """The window the server reports (llama.cpp ``/props``, vLLM ``/v1/models``), asked once; None for the
        hosted API (no base URL) or a server that says nothing."""
        with self._probe_lock:
            if not self._window_probed and self.base_url:
                self._window = probe_window(self.base_url, self.model, self._api_key)
            self._window_probed = True
            return self._window

    def context_fix(self, tokens: int) -> str:
        size = context_size_for(tokens)
        return f"llama-server -c {size} · vllm serve --max-model-len {size}"

    def describe(self) -> str:
        return f"OpenAI-compatible: model {self.model} at {self.base_url or 'api.openai.com'}"

    def stream(self, messages: list[Message], tools: list[dict[str, Any]] | None = None,
               deadline: float | None = None, json_schema: dict[str, Any] | None = None,
               max_tokens: int | None = None) -> Iterator[str | LLMResponse]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True,
                                  "temperature": self.temperature,
                                  "max_tokens": min(self.max_tokens, max_tokens or self.max_tokens)}
        if json_schema:
            kwargs["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": "reply", "schema": json_schema, "strict": True}}
        if tools:
            kwargs["tools"] = tools
            kwargs["tool_choice"] = "auto"
        timeout = self.timeout_s if deadline is None else max(0.5, min(self.timeout_s, deadline - time.monotonic()))
        text: list[str] = []
        size = 0
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        watchdog: threading.Timer | None = None
        expired = threading.Event()
        try:
            response = self._client.chat.completions.create(timeout=timeout, **kwargs)
            # a wall clock for the whole reply (this call's own limit or the turn's, the sooner): keep-alive lines
            # from the server reset a read timeout, never this
            limit = time.monotonic() + self.timeout_s if deadline is None else min(deadline,
                                                                                    time.monotonic() + self.timeout_s)

            def cut() -> None:
                expired.set()
                response.close()

            watchdog = threading.Timer(max(0.0, limit - time.monotonic()), cut)
            watchdog.daemon = True
            watchdog.start()
            try:
                for chunk in response:
                    if expired.is_set() or (deadline is not None and time.monotonic() > deadline):
                        raise BackendError("timeout", f"{self.name}: the reply took longer than the turn allows")
                    if getattr(chunk, "error", None):
                        raise BackendError("http", f"{self.name}: server error in stream: {chunk.error}")
                    if not chunk.choices:
                        continue
                    choice = chunk.choices[0]
                    delta = choice.delta
                    if delta is not None and delta.content:
                        size += len(delta.content)
                        if size > MAX_REPLY_CHARS:  # a runaway reply: stop reading, keep nothing of it
                            finish = "length"
                            break
                        text.append(delta.content)
                        yield delta.content
                    for tc in (delta.tool_calls or []) if delta is not None else []:
                        slot = calls.setdefault(tc.index if tc.index is not None else len(calls),
                                                {"id": "", "name": "", "arguments": ""})
                        if tc.id:
                            slot["id"] = tc.id
                        if tc.function is not None:
                            slot["name"] += tc.function.name or ""
                            slot["arguments"] += tc.function.arguments or ""
                    if choice.finish_reason:
                        finish = choice.finish_reason
            finally:
                if watchdog is not None:
                    watchdog.cancel()
                response.close()
        except BackendError:
            raise
        except Exception as exc:
            if expired.is_set():  # the watchdog closed the stream under the reader
                raise BackendError("timeout", f"{self.name}: the reply took longer than the turn allows") from exc
            raise _backend_error(self.name, self.base_url, timeout, exc) from exc
        if expired.is_set():
            raise BackendError("timeout", f"{self.name}: the reply took longer than the turn allows")
        if finish is None:
            raise BackendError("truncated", f"{self.name}: the stream ended before the reply was finished")
        tool_calls = [LLMToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
                      for i, c in sorted(calls.items())]
        yield LLMResponse(content="".join(text), tool_calls=tool_calls, finish_reason=finish)

    def close(self) -> None:
        self._client.close()


def _backend_error(name: str, base_url: str | None, timeout: float, exc: Exception) -> BackendError:
    """The typed error for a failure of the openai client."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return BackendError("timeout", f"{name}: no answer within {timeout:.0f} s")
    if isinstance(exc, openai.APIConnectionError):
        return BackendError("connection", f"{name}: cannot reach {base_url or 'the server'}")
    if isinstance(exc, openai.RateLimitError):
        return BackendError("rate_limited", f"{name}: rate limited (HTTP 429)")
    if isinstance(exc, openai.APIStatusError):
        return BackendError("http", f"{name}: HTTP {exc.status_code}")
    if isinstance(exc, openai.APIError):
        return BackendError("malformed", f"{name}: bad response ({type(exc).__name__})")
    return BackendError("malformed", f"{name}: unreadable response ({type(exc).__name__})")  # garbage in the stream
