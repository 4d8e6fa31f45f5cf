"""The offline default: no language model; the engine composes every reply from templates."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from advisor.backends.base import Backend, BackendError, LLMResponse, Message


class DeterministicBackend(Backend):
    """Marks the deterministic path. The engine never asks it to generate text."""

    name = "deterministic"
    is_llm = False
    supports_tools = False

    def stream(self, messages: list[Message], tools: list[dict[str, Any]] | None = None,
               deadline: float | None = None, json_schema: dict[str, Any] | None = None,
               max_tokens: int | None = None) -> Iterator[str | LLMResponse]:
        raise BackendError("unavailable", "the deterministic backend does not generate text")

    def describe(self) -> str:
        return "deterministic (no LLM): replies composed from the tool results"
