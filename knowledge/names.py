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


# technologies that belong to one maker, with the words that name them: a text that credits one to another maker
# ('NVLink is AMD's') is wrong
TECHNOLOGY_MAKERS: dict[str, tuple[Vendor, str]] = {
    "NVLink": ("NVIDIA", r"nvlink|nvswitch"),
    "CUDA": ("NVIDIA", r"cuda|cudnn|nccl|tensorrt"),
    "MIG": ("NVIDIA", r"\bmig\b|multi-instance gpu"),
    "Infinity Fabric": ("AMD", r"infinity fabric|xgmi"),
    "ROCm": ("AMD", r"rocm|\bhip\b|rccl"),
    "HCCS": ("Huawei", r"hccs"),
    "CANN": ("Huawei", r"\bcann\b|mindspore|mindie"),
    "Xe Link": ("Intel", r"xe ?link|oneapi"),
    "MUSA": ("Moore Threads", r"\bmusa\b|mtlink"),
    "MLU-Link": ("Cambricon", r"mlu-?link|neuware"),
    "DTK": ("Hygon", r"\bdtk\b"),
}
