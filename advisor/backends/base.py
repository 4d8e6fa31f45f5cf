"""The one small interface every LLM backend implements, and the error it raises."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from advisor.backends.context import estimate_messages
from advisor.backends.pace import Pace

Message = dict[str, Any]  # OpenAI chat-completions message: role, content, tool_calls, tool_call_id

FailureKind = Literal[
    "unavailable", "connection", "timeout", "http", "rate_limited", "malformed", "truncated", "empty", "internal",
]


class BackendError(RuntimeError):
    """The LLM could not give a usable answer; ``kind`` says why (for the fallback notice)."""

    def __init__(self, kind: FailureKind, message: str):
        self.kind = kind
        super().__init__(message)


class LLMToolCall(BaseModel):
    """A tool call as the model wrote it: ``arguments`` is the raw JSON text, not yet trusted."""

    id: str
    name: str
    arguments: str = ""


class LLMResponse(BaseModel):
    content: str = ""
    tool_calls: list[LLMToolCall] = Field(default_factory=list)
    finish_reason: str | None = None


class Backend(ABC):
    """A chat model. ``stream`` yields text deltas (str) as they arrive, then one final LLMResponse."""

    name: str = "backend"
    is_llm: bool = True
    supports_tools: bool = False

    @abstractmethod
    def stream(self, messages: list[Message], tools: list[dict[str, Any]] | None = None,
               deadline: float | None = None, json_schema: dict[str, Any] | None = None,
               max_tokens: int | None = None) -> Iterator[str | LLMResponse]:
        """Send ``messages`` (and tool schemas); ``deadline`` is a time.monotonic() limit for the whole call;
        ``json_schema``: the reply must be one JSON object that follows it (constrained where the backend can);
        ``max_tokens``: a lower reply limit than the backend's own (to fit its context)."""

    def complete(self, messages: list[Message], tools: list[dict[str, Any]] | None = None,
                 deadline: float | None = None, json_schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None) -> LLMResponse:
        """The final response, ignoring the deltas."""
        final: LLMResponse | None = None
        for item in self.stream(messages, tools, deadline, json_schema, max_tokens):
            if isinstance(item, LLMResponse):
                final = item
        if final is None:
            raise BackendError("truncated", f"{self.name}: the reply ended without a final message")
        return final

    @property
    def pace(self) -> Pace:
        """This backend's speed, measured once on its first long-enough reply (sizes later deadlines)."""
        if "_pace" not in self.__dict__:
            self._pace = Pace()
        return self._pace

    def context_window(self) -> int | None:
        """Tokens one request may hold, prompt and reply together; None when the backend cannot tell."""
        return None

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]] | None = None) -> int:
        """A request's prompt tokens (estimated on the high side unless the backend has its tokenizer)."""
        return estimate_messages(messages, tools)

    def context_fix(self, tokens: int) -> str:
        """The setting that gives this backend a context of ``tokens`` (a command-line or environment hint)."""
        return f"context ≥ {tokens}"

    def describe(self) -> str:
        return self.name

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (network clients, model memory)."""
