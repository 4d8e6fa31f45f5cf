"""OpenAI-compatible chat-completions backend (OpenAI, vLLM, llama.cpp server, Ollama, …) via `openai`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from advisor.backends.base import Backend, BackendError, LLMResponse, LLMToolCall, Message
from advisor.settings import Settings


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
        # A local server needs no key; the client insists on one, so send a placeholder.
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0)

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAICompatBackend:
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return cls(settings.openai_base_url, settings.openai_model, key, settings.llm_timeout_s,
                   settings.temperature, settings.max_tokens)

    def describe(self) -> str:
        return f"OpenAI-compatible: model {self.model} at {self.base_url or 'api.openai.com'}"

    def stream(self, messages: list[Message], tools: list[dict[str, Any]] | None = None,
               deadline: float | None = None) -> Iterator[str | LLMResponse]:
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True,
                                  "temperature": self.temperature, "max_tokens": self.max_tokens}
        if tools:
            kwargs["tools"] = tools
            kwargs["tool_choice"] = "auto"
        timeout = self.timeout_s if deadline is None else max(0.5, min(self.timeout_s, deadline - time.monotonic()))
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        try:
            response = self._client.chat.completions.create(timeout=timeout, **kwargs)
            try:
                for chunk in response:
                    if deadline is not None and time.monotonic() > deadline:
                        raise BackendError("timeout", f"{self.name}: the reply took longer than the turn allows")
                    if getattr(chunk, "error", None):
                        raise BackendError("http", f"{self.name}: server error in stream: {chunk.error}")
                    if not chunk.choices:
                        continue
                    choice = chunk.choices[0]
                    delta = choice.delta
                    if delta is not None and delta.content:
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
                response.close()
        except BackendError:
            raise
        except openai.APITimeoutError as exc:
            raise BackendError("timeout", f"{self.name}: no answer within {timeout:.0f} s") from exc
        except openai.APIConnectionError as exc:
            raise BackendError("connection", f"{self.name}: cannot reach {self.base_url or 'the server'}") from exc
        except openai.RateLimitError as exc:
            raise BackendError("rate_limited", f"{self.name}: rate limited (HTTP 429)") from exc
        except openai.APIStatusError as exc:
            raise BackendError("http", f"{self.name}: HTTP {exc.status_code}") from exc
        except openai.APIError as exc:
            raise BackendError("malformed", f"{self.name}: bad response ({type(exc).__name__})") from exc
        except Exception as exc:  # garbage in the stream: JSON, encoding, protocol errors
            raise BackendError("malformed", f"{self.name}: unreadable response ({type(exc).__name__})") from exc
        if finish is None:
            raise BackendError("truncated", f"{self.name}: the stream ended before the reply was finished")
        tool_calls = [LLMToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
                      for i, c in sorted(calls.items())]
        yield LLMResponse(content="".join(text), tool_calls=tool_calls, finish_reason=finish)

    def close(self) -> None:
        self._client.close()
