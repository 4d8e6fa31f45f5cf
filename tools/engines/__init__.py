"""The inference engines the calculators know, by name (see ``tools.engines.base`` for what an engine decides).

Adding an engine: a module with an ``InferenceEngine`` subclass, its name in ``EngineName`` and an instance in
``ENGINES``; its messages (notes and formulas) in ``knowledge/messages``.
"""

from __future__ import annotations

from knowledge.names import EngineName
from tools.engines.base import Activations, Budget, InferenceEngine, Split
from tools.engines.llamacpp import LlamaCpp
from tools.engines.sglang import SGLang
from tools.engines.transformers import Transformers
from tools.engines.vllm import VLLM

ENGINES: dict[str, InferenceEngine] = {e.name: e for e in (VLLM(), LlamaCpp(), Transformers(), SGLang())}
ENGINE_LABEL = {name: e.label for name, e in ENGINES.items()}


def get_engine(name: str) -> InferenceEngine:
    """The engine called ``name`` ("generic" is Transformers' plain accounting)."""
    return ENGINES["transformers" if name == "generic" else name]


__all__ = ["ENGINES", "ENGINE_LABEL", "Activations", "Budget", "EngineName", "InferenceEngine", "Split",
           "get_engine"]
