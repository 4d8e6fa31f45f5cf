"""LLM backends behind one interface: deterministic (default), OpenAI-compatible, llama.cpp."""

from __future__ import annotations

from advisor.backends.base import Backend, BackendError, LLMResponse, LLMToolCall, Message
from advisor.backends.deterministic import DeterministicBackend
from advisor.settings import Settings

__all__ = [
    "Backend", "BackendError", "DeterministicBackend", "LLMResponse", "LLMToolCall", "Message", "make_backend",
]


def make_backend(settings: Settings) -> Backend:
    """The backend the settings ask for; BackendError (kind 'unavailable') if it cannot be built."""
    if settings.llm == "openai":
        from advisor.backends.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend.from_settings(settings)
    if settings.llm == "llama":
        from advisor.backends.llama_cpp import LlamaCppBackend

        return LlamaCppBackend.from_settings(settings)
    return DeterministicBackend()
