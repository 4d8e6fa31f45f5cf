"""Engine configuration from the environment (and keyword overrides): backend choice, timeouts, limits.

| variable | meaning | default |
|---|---|---|
| ``ADVISOR_LLM`` | ``none`` (deterministic), ``llama`` or ``openai`` | ``none`` |
| ``ADVISOR_LLAMA_MODEL`` | path of a local GGUF file for llama.cpp | — |
| ``ADVISOR_LLAMA_CHAT_FORMAT`` | llama-cpp-python chat format; empty = the template stored in the GGUF | — |
| ``ADVISOR_LLAMA_N_CTX`` / ``ADVISOR_LLAMA_THREADS`` | llama.cpp context size / CPU threads | 4096 / auto |
| ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` | OpenAI-compatible server (OpenAI, vLLM, llama.cpp server, Ollama) | — |
| ``ADVISOR_OPENAI_MODEL`` | model name sent to that server | ``gpt-4o-mini`` |
| ``ADVISOR_LLM_TIMEOUT_S`` | seconds one LLM request may take | 30 |
| ``ADVISOR_LLM_READ_ALL`` | ``1``: the LLM reads every message beside the rules (else only unplaced ones) | 0 |
| ``ADVISOR_LLM_TOOL_CALLS`` | ``1``: the model gets the tools and the results as JSON (else a fact card) | 0 |
| ``ADVISOR_TURN_TIMEOUT_S`` | seconds one whole turn may spend in the LLM before falling back | 90 |
| ``ADVISOR_MAX_MESSAGE_CHARS`` | longer messages are truncated, with a notice | 8000 |
| ``ADVISOR_MAX_TURNS_KEPT`` | turns of history kept in a session (older ones are dropped) | 50 |
| ``ADVISOR_MAX_TOOL_STEPS`` | LLM tool-call rounds per turn before it counts as a loop | 4 |
| ``ADVISOR_MAX_TOKENS`` | tokens the LLM may generate per step (an explanation is 2–4 sentences) | 256 |
| ``ADVISOR_ASK_DENSE`` | one-shot ``gpu-advisor ask`` uses the fused (vector + keyword) search, like ``--dense`` | 0 |
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """All knobs of the engine. ``Settings(llm="openai", openai_model="x")`` overrides the environment."""

    model_config = SettingsConfigDict(env_prefix="ADVISOR_", extra="ignore", populate_by_name=True)

    llm: Literal["none", "llama", "openai"] = "none"
    llama_model: str | None = None
    llama_chat_format: str | None = None
    llama_n_ctx: int = Field(4096, ge=256, le=262_144)
    llama_threads: int | None = Field(None, ge=1, le=512)
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("openai_base_url", "OPENAI_BASE_URL", "ADVISOR_OPENAI_BASE_URL"))
    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("openai_api_key", "OPENAI_API_KEY", "ADVISOR_OPENAI_API_KEY"))
    openai_model: str = "gpt-4o-mini"
    llm_timeout_s: float = Field(30.0, gt=0, le=600, description="the most one model call may take; once the "
                                                               "backend's speed is measured, 3× what it predicts")
    llm_understand: bool = Field(True, description="with an LLM configured, it reads messages the rules could not "
                                                   "place (fields the parser left empty, numbers the user wrote)")
    llm_read_all: bool = Field(False, description="the LLM reads every message, not only those the rules could not "
                                                  "place; the readings are reconciled field by field (one more model "
                                                  "call per turn: 9–25 s on a small local model)")
    llm_tool_calls: bool = Field(False, description="the model is offered the tools and this turn's results as JSON "
                                                    "(a 7–9k-token prompt) and may call tools; off: it explains a "
                                                    "fact card of at most six lines (a prompt under 600 tokens)")
    llm_min_timeout_s: float = Field(5.0, gt=0, le=600, description="the least a measured deadline allows")
    turn_timeout_s: float = Field(90.0, gt=0, le=3600)
    temperature: float = Field(0.2, ge=0, le=2)
    max_tokens: int = Field(256, ge=16, le=32_768, description="the model explains in 2–4 sentences (~100 tokens); "
                                                             "a reply that reaches this limit is dropped")
    max_message_chars: int = Field(8000, ge=100, le=1_000_000)
    max_turns_kept: int = Field(50, ge=2, le=10_000)
    max_tool_steps: int = Field(4, ge=1, le=32)
    search_k: int = Field(3, ge=0, le=20)
    detailed: bool = Field(False, description="replies carry the full derivation (term explanations, plain-words "
                                              "paragraph); otherwise short, with 'detail'/'详细' on request")
    ask_dense: bool = Field(False, description="`gpu-advisor ask` opens the vector index even for one question")

    def describe(self) -> str:
        """One line naming the active backend, safe to show (never contains the API key)."""
        if self.llm == "openai":
            return f"openai-compatible: {self.openai_model} @ {self.openai_base_url or 'api.openai.com'}"
        if self.llm == "llama":
            return f"llama.cpp: {self.llama_model or '(no model path set)'}"
        return "deterministic (no LLM)"
