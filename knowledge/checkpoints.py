"""Checkpoint names: the weight precision a published checkpoint's name states.

People name the checkpoint they run, not the model: 'GLM-5-FP8', 'Qwen3-32B-AWQ', 'Qwen2.5-7B-Instruct-GPTQ-Int4',
'Llama-3.3-70B-Instruct-quantized.w8a8', 'qwen3:32b-q4_K_M', 'Qwen3-8B-GGUF:Q4_K_M'. The words after the model's
own name say how its weights are stored. :func:`checkpoint` reads them — one reading for the catalog look-up (the
model resolver falls back to the name without them) and for the sizing (``tools.modelspec`` sets the weight
precision from them), so the CLI, the tools a language model calls and the chat agree.

The precision is named as ``tools.precision`` names it ('fp8', 'int4', 'Q4_K_M' …); the tools check it there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# separators between the words of a checkpoint name; '_' is kept inside a word (Q4_K_M, FP8_DYNAMIC is split below)
_SEPARATOR = re.compile(r"[\s\-:/@.]+")
_WORD = re.compile(r"[^\s\-:/@.]+")
_GGUF_TYPE = re.compile(r"^i?q[1-8](?:_[a-z0-9]{1,2}){0,2}$")  # q4_k_m, iq2_xxs, q8_0, q4

# the storage a word of a checkpoint name states (keys lower case)
_PRECISION_WORDS: dict[str, str] = {
    "fp8": "fp8", "f8": "fp8", "float8": "fp8", "e4m3": "fp8",
    "int8": "int8", "w8a8": "int8", "8bit": "int8",
    "int4": "int4", "awq": "int4", "gptq": "int4", "w4a16": "int4", "4bit": "int4",
    "mxfp4": "mxfp4", "nvfp4": "nvfp4", "fp4": "nvfp4",
    "nf4": "nf4",
    "bf16": "bf16", "fp16": "fp16", "f16": "fp16",
}
# words a checkpoint tail may carry besides its precision: how it was quantized, its format, the usual suffixes
_TAIL_WORDS = frozenset({
    "dynamic", "static", "block", "blockwise", "quantized", "qat", "gguf", "ud", "instruct", "it", "chat", "hf",
    "g32", "g64", "g128", "gs32", "gs64", "gs128", "pertensor", "perchannel",
})


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A checkpoint name read: the model's own name and the weight precision its tail states."""

    base: str  # 'GLM-5' of 'GLM-5-FP8'
    precision: str  # as tools.precision names it: 'fp8', 'int4', 'nf4', 'Q4_K_M' …


def _precision_of(word: str) -> str | None:
    if _GGUF_TYPE.match(word):
        return word.upper()
    return _PRECISION_WORDS.get(word)


def checkpoint(name: str) -> Checkpoint | None:
    """The model name and weight precision of a checkpoint name ('GLM-5-FP8' → GLM-5, fp8); None when its tail
    states no precision ('Qwen3-32B-Instruct', 'gpt-oss-120b').

    The tail is the run of precision words and packaging words ('Instruct', 'Dynamic', 'GGUF' …) at the end of the
    name; its last precision word wins ('GPTQ-Int8' is 8-bit), 'bnb' 4-bit is NF4. The first word is never tail.
    """
    if not isinstance(name, str) or len(name) > 200:
        return None
    words = [(m.start(), m.group(0).lower()) for m in _WORD.finditer(name)]
    tail_start: int | None = None
    found: list[str] = []
    for start, word in reversed(words[1:]):
        parts = [word] if _precision_of(word) or word in _TAIL_WORDS else word.split("_")  # FP8_DYNAMIC
        if not all(p in _TAIL_WORDS or _precision_of(p) or p == "bnb" for p in parts):
            break
        found += [p for part in reversed(parts) if (p := part if part == "bnb" else _precision_of(part))]
        tail_start = start
    precisions = [p for p in found if p != "bnb"]
    if tail_start is None or not precisions:
        return None
    precision = precisions[0]  # the last one written
    if "bnb" in found:  # bitsandbytes: 4-bit is NF4, 8-bit is LLM.int8()
        precision = "int8" if precision == "int8" else "nf4"
    base = name[:tail_start].rstrip(" -:/@._")
    return Checkpoint(base=base, precision=precision) if _SEPARATOR.sub("", base) else None


def base_name(name: str) -> str | None:
    """``name`` without the precision tail of a checkpoint name; None when it has none (the model resolver's
    fallback)."""
    found = checkpoint(name)
    return found.base if found else None
