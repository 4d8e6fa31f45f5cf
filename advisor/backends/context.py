"""How many tokens a request holds: the backend's context window, and a prompt's size in tokens.

A server says its window in different places: llama.cpp's ``GET /props`` (``default_generation_settings.n_ctx``,
the tokens one request slot holds), vLLM's ``GET /v1/models`` (``max_model_len``), and a few others
(``context_length``, ``max_context_length``). Where none does, the window is unknown and nothing is trimmed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

import httpx

PROBE_TIMEOUT_S = 2.0
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")
_MODEL_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window")
MESSAGE_OVERHEAD = 8  # role markers and separators a chat template adds per message


def estimate_tokens(text: str) -> int:
    """A prompt's tokens, estimated on the high side for any common tokenizer: one per CJK character, one per
    three other characters."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 3)


def estimate_messages(messages: Iterable[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """Tokens of chat messages (texts, tool calls, template overhead) and tool schemas, estimated."""
    total = 0
    for m in messages:
        total += MESSAGE_OVERHEAD + estimate_tokens(str(m.get("content") or ""))
        if m.get("tool_calls"):
            total += estimate_tokens(json.dumps(m["tool_calls"], ensure_ascii=False))
    if tools:
        total += estimate_tokens(json.dumps(tools, ensure_ascii=False))
    return total


def _positive(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


def window_from_props(body: Any) -> int | None:
    """llama.cpp's ``/props``: the context one request slot holds."""
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    return _positive(settings.get("n_ctx")) if isinstance(settings, dict) else _positive(body.get("n_ctx"))


def window_from_models(body: Any, model: str) -> int | None:
    """An OpenAI-style ``/v1/models`` listing: the served model's window (the named one, else the only one)."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    named = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in named:
        for key in _MODEL_FIELDS:
            if (found := _positive(entry.get(key))) is not None:
                return found
    return None


def probe_window(base_url: str, model: str, api_key: str | None, timeout_s: float = PROBE_TIMEOUT_S) -> int | None:
    """The context window a server reports, or None (no such endpoint, no answer, nothing readable).
    ``base_url`` is the OpenAI base (``http://host:8080/v1``); ``/props`` lives at the server's root."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    probes = ((f"{root}/props", window_from_props), (f"{base}/models", lambda b: window_from_models(b, model)))
    try:
        with httpx.Client(timeout=timeout_s, headers=headers, follow_redirects=False) as client:
            for url, read in probes:
                try:
                    resp = client.get(url)
                    if resp.status_code == 200 and (found := read(resp.json())) is not None:
                        return found
                except (httpx.HTTPError, ValueError):
                    continue
    except httpx.HTTPError:
        return None
    return None


def context_size_for(tokens: int) -> int:
    """The context to configure for ``tokens``: the next power of two, at least 4,096."""
    return max(4096, 1 << max(tokens - 1, 1).bit_length())
