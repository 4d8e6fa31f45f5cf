"""Every enumerated name the project uses, defined once: the NLU, the tools, the UI and the CLI import them
from here, so a vendor or an engine is never spelled two ways."""

from __future__ import annotations

from typing import Literal, get_args

Lang = Literal["zh", "en"]
LANGS: tuple[Lang, ...] = get_args(Lang)

Vendor = Literal["NVIDIA", "AMD", "Intel", "Huawei", "Cambricon", "Hygon", "Moore Threads", "Biren", "Iluvatar CoreX",
                 "MetaX", "Kunlunxin", "Enflame", "T-Head", "Apple"]
VENDORS: tuple[Vendor, ...] = get_args(Vendor)

# inference engines whose memory accounting and speed the tools model
EngineName = Literal["vllm", "llamacpp", "transformers", "sglang"]
ENGINES: tuple[EngineName, ...] = get_args(EngineName)

# the engines a user names in a message (Ollama runs llama.cpp)
EngineHint = Literal["llamacpp", "sglang", "vllm"]
ENGINE_HINTS: tuple[EngineHint, ...] = get_args(EngineHint)


def vendor_named(text: str) -> Vendor | None:
    """The vendor a lower-case word names ('iluvatar', 'moore threads', 'nvidia'), or None."""
    low = text.strip().lower()
    return next((v for v in VENDORS if v.lower() == low or v.lower().split()[0] == low), None)
