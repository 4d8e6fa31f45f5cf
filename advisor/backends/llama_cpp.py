"""Local GGUF models through llama-cpp-python, in process.

The chat template comes from the GGUF file (``tokenizer.chat_template``) unless a llama-cpp-python
``chat_format`` is configured. Many templates (Gemma, Mistral) accept only alternating user /
assistant turns, so system text and tool results are folded into user turns before templating.
Function calling is offered only with a chat format that supports it ("chatml-function-calling",
"functionary*"); otherwise the engine runs the tools itself and asks the model to write the answer.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from advisor.backends.base import Backend, BackendError, LLMResponse, LLMToolCall, Message
from advisor.backends.context import MESSAGE_OVERHEAD, context_size_for
from advisor.settings import Settings
from knowledge.paths import expand_user

_TOOL_FORMATS = ("chatml-function-calling", "functionary")
# Formats by GGUF ``general.architecture`` for files that carry no chat template.
_ARCH_FORMATS = {"gemma": "gemma", "gemma2": "gemma", "gemma3": "gemma", "qwen2": "chatml", "qwen3": "chatml",
                 "llama": "llama-3", "mistral": "mistral-instruct", "phi3": "chatml"}


def pick_chat_format(metadata: dict[str, str], configured: str | None) -> str | None:
    """The configured format; else None when the file has a template (llama-cpp-python uses it);
    else a format matching the architecture (chatml when unknown)."""
    if configured:
        return configured
    if metadata.get("tokenizer.chat_template"):
        return None
    return _ARCH_FORMATS.get(metadata.get("general.architecture", ""), "chatml")


_OVERFLOW = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)")


def _generation_error(name: str, what: str, exc: Exception) -> BackendError:
    """The backend error for a failed generation; a prompt longer than the context says which n_ctx it needs."""
    m = _OVERFLOW.search(str(exc))
    if m:
        need = int(m.group(1))
        size = 1 << max(need + 512, 1).bit_length()  # room for the reply, rounded up to a power of two
        return BackendError("internal", f"{name}: the prompt is {need} tokens, more than the context of "
                                        f"{m.group(2)}; set ADVISOR_LLAMA_N_CTX={size} (or more)")
    return BackendError("internal", f"{name}: {what}: {exc}")


_SYSTEM_FORMATS = ("chatml", "llama-2", "llama-3", "qwen", "mistral-instruct", "functionary")


def physical_cores() -> int:
    """Cores this process may use, one thread per physical core (hyper-threads slow llama.cpp's decode down on a
    busy box): the distinct sibling groups among the allowed CPUs, else the allowed CPU count."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    groups = set()
    for cpu in allowed:
        try:
            groups.add(Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text().strip())
        except OSError:
            groups.add(str(cpu))
    return max(1, len(groups))


def fold_messages(messages: list[Message], keep_system: bool = False) -> list[Message]:
    """Rewrite OpenAI messages as strictly alternating user/assistant text turns; the system text stays a system
    message when the chat template has that role (``keep_system``), else it opens the first user turn."""
    out: list[Message] = []
    system: list[str] = []

    def add(role: str, text: str) -> None:
        if not text:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})

    for m in messages:
        role, content = m.get("role"), m.get("content") or ""
        if role == "system":
            system.append(content)
        elif role == "tool":
            add("user", f"[tool result {m.get('name') or m.get('tool_call_id', '')}]\n{content}")
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            text = content + "".join(
                f"\n[called {c['function']['name']}({c['function'].get('arguments', '')})]" for c in calls)
            add("assistant", text.strip())
        else:
            add("user", content)
    if out and out[0]["role"] == "assistant":
        out.insert(0, {"role": "user", "content": "(conversation continues)"})
    if system and keep_system:  # fixed text first, in its own role: prefix caches hit across turns
        return [{"role": "system", "content": "\n\n".join(system)}, *out]
    if system:
        prefix = "\n\n".join(system)
        if out and out[0]["role"] == "user":
            out[0]["content"] = prefix + "\n\n" + out[0]["content"]
        else:
            out.insert(0, {"role": "user", "content": prefix})
    if out and out[0]["role"] == "assistant":
        out.insert(0, {"role": "user", "content": "(conversation continues)"})
    return out


class LlamaCppBackend(Backend):
    """A llama.cpp model loaded once; pass ``llama=`` to reuse an already loaded ``llama_cpp.Llama``."""

    def __init__(self, model_path: str | None = None, *, n_ctx: int = 4096, n_threads: int | None = None,
                 chat_format: str | None = None, max_tokens: int = 700, temperature: float = 0.2,
                 timeout_s: float = 60.0, llama: Any = None, seed: int = 0):
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.chat_format = chat_format
        self.supports_tools = bool(chat_format and chat_format.startswith(_TOOL_FORMATS))
        if llama is not None:
            self._llm = llama
            self.model_path = str(getattr(llama, "model_path", model_path or "(preloaded)"))
        else:
            if not model_path:
                raise BackendError("unavailable", "llama backend: set ADVISOR_LLAMA_MODEL to a .gguf file")
            path = expand_user(model_path)
            if not path.is_file():
                raise BackendError("unavailable", f"llama backend: model file not found: {path.name}")
            try:
                import llama_cpp
            except ImportError as exc:
                raise BackendError("unavailable", "llama backend: llama-cpp-python is not installed "
                                   "(pip install 'gpu-advisor[local]')") from exc
            try:
                self._llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads or
                                            physical_cores(), chat_format=chat_format,
                                            seed=seed, verbose=False)
            except Exception as exc:  # bad or unsupported GGUF
                raise BackendError("unavailable", f"llama backend: cannot load {path.name}: {exc}") from exc
            self.model_path = str(path)
        metadata = getattr(self._llm, "metadata", {}) or {}
        fmt = pick_chat_format(metadata, chat_format)
        if fmt and not chat_format:
            self._llm.chat_format = fmt  # the file has no template: use the architecture's format
        self.chat_format = chat_format or fmt
        self.template_source = ("configured" if chat_format else "file" if fmt is None else
                                f"architecture {metadata.get('general.architecture', '?')}")
        self.name = f"llama.cpp:{Path(self.model_path).name}"
        template = str(metadata.get("tokenizer.chat_template") or "")
        # a template that names the system role renders it; the others (Gemma) get it folded into the first turn
        self.system_role = "system" in template or (self.chat_format or "").startswith(_SYSTEM_FORMATS)
        self._lock = threading.Lock()  # one llama.cpp context serves one generation at a time

    @classmethod
    def from_settings(cls, settings: Settings) -> LlamaCppBackend:
        return cls(settings.llama_model, n_ctx=settings.llama_n_ctx, n_threads=settings.llama_threads,
                   chat_format=settings.llama_chat_format, max_tokens=settings.max_tokens,
                   temperature=settings.temperature, timeout_s=settings.llm_timeout_s)

    @property
    def llama(self) -> Any:
        """The loaded ``llama_cpp.Llama`` (for reuse by another backend instance)."""
        return self._llm

    def context_window(self) -> int | None:
        n_ctx = getattr(self._llm, "n_ctx", None)
        try:
            size = n_ctx() if callable(n_ctx) else n_ctx
        except Exception:  # a stand-in without a context
            return None
        return int(size) if isinstance(size, int) and size > 0 else None

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]] | None = None) -> int:
        """The prompt's tokens by the model's own tokenizer (template markers estimated per message)."""
        folded = fold_messages(messages, keep_system=self.system_role)
        try:
            return sum(MESSAGE_OVERHEAD + len(self._llm.tokenize(str(m["content"]).encode(), add_bos=False))
                       for m in folded) + (super().count_tokens([], tools) if tools else 0)
        except Exception:  # a stand-in without a tokenizer
            return super().count_tokens(messages, tools)

    def context_fix(self, tokens: int) -> str:
        return f"ADVISOR_LLAMA_N_CTX={context_size_for(tokens)}"

    def describe(self) -> str:
        fmt = self.chat_format or "the GGUF file's template"
        return f"llama.cpp: {Path(self.model_path).name} (chat format: {fmt}, from {self.template_source})"

    def stream(self, messages: list[Message], tools: list[dict[str, Any]] | None = None,
               deadline: float | None = None, json_schema: dict[str, Any] | None = None,
               max_tokens: int | None = None) -> Iterator[str | LLMResponse]:
        limit = time.monotonic() + self.timeout_s
        deadline = min(deadline, limit) if deadline is not None else limit
        with self._lock:
            yield from self._generate(messages, tools, deadline, json_schema,
                                      min(self.max_tokens, max_tokens or self.max_tokens))

    def _generate(self, messages: list[Message], tools: list[dict[str, Any]] | None, deadline: float,
                  json_schema: dict[str, Any] | None, max_tokens: int) -> Iterator[str | LLMResponse]:
        if tools and self.supports_tools and json_schema is None:
            yield self._with_tools(messages, tools, max_tokens)
            return
        folded = fold_messages(messages, keep_system=self.system_role)
        # a schema becomes a grammar: the model cannot write anything but a JSON object that follows it
        constrained = {"response_format": {"type": "json_object", "schema": json_schema}} if json_schema else {}
        try:
            chunks = self._llm.create_chat_completion(messages=folded, stream=True, max_tokens=max_tokens,
                                                      temperature=self.temperature, **constrained)
        except Exception as exc:
            raise _generation_error(self.name, "cannot start generation", exc) from exc
        text: list[str] = []
        finish: str | None = None
        try:
            for chunk in chunks:
                choice = (chunk.get("choices") or [{}])[0]
                piece = (choice.get("delta") or {}).get("content") or ""
                if piece:
                    text.append(piece)
                    yield piece
                finish = choice.get("finish_reason") or finish
                if time.monotonic() > deadline:
                    finish = "length"
                    break
        except Exception as exc:
            raise _generation_error(self.name, "generation failed", exc) from exc
        yield LLMResponse(content="".join(text), finish_reason=finish or "stop")

    def _with_tools(self, messages: list[Message], tools: list[dict[str, Any]], max_tokens: int) -> LLMResponse:
        try:
            out = self._llm.create_chat_completion(messages=messages, tools=tools, tool_choice="auto",
                                                   max_tokens=max_tokens, temperature=self.temperature)
        except Exception as exc:
            raise _generation_error(self.name, "generation failed", exc) from exc
        choice = (out.get("choices") or [{}])[0]
        msg = choice.get("message") or {}
        calls = []
        for i, c in enumerate(msg.get("tool_calls") or []):
            fn = c.get("function") or {}
            args = fn.get("arguments", "")
            calls.append(LLMToolCall(id=c.get("id") or f"call_{i}", name=fn.get("name", ""),
                                     arguments=args if isinstance(args, str) else json.dumps(args)))
        return LLMResponse(content=msg.get("content") or "", tool_calls=calls,
                           finish_reason=choice.get("finish_reason") or "stop")

    def close(self) -> None:
        closer = getattr(self._llm, "close", None)
        if callable(closer):
            closer()
