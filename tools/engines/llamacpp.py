"""llama.cpp: the weights (token embeddings stay in host RAM), one ring of ``n_ctx`` cache cells shared by all
parallel slots (padded to 256), a compute buffer reserved for the worst micro-batch, and layers that do not fit
left in system RAM and run by the CPU (``-ngl``)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from tools.engines.base import Activations, InferenceEngine, Split
from tools.kv_cache import LLAMACPP_CTX_PAD, KVLayout, pad
from tools.modelspec import ModelSpec
from tools.precision import PrecisionSpec
from tools.result import Note, note
from tools.units import MiB

if TYPE_CHECKING:
    from tools.inference_memory import InferenceMemoryInput

LLAMACPP_CUDA_CONTEXT = 384 * MiB  # CUDA context + cuBLAS handles; not printed in llama.cpp's log


class LlamaCpp(InferenceEngine):
    name = "llamacpp"
    label = "llama.cpp"
    host_path = "cpu"
    prefill_chunk = 512  # n_ubatch: weights in RAM are copied to the GPU per micro-batch
    offloads_layers = True

    def default_precision(self, spec: ModelSpec) -> str:
        return spec.weight_precision or "Q4_K_M"

    def precision_reason(self, spec: ModelSpec) -> str:
        return "files" if spec.weight_precision else "llamacpp"

    def default_kv(self, spec: ModelSpec, prec: PrecisionSpec) -> str:
        return "fp16"

    def resolve_split(self, requested: Split | None, gpus: int, warnings: list[Note]) -> Split:
        if gpus > 1 and requested == "tp":
            warnings.append(note("inference.warn.llamacpp_tensor_split"))
        return "pp"

    def kv_tokens(self, lay: KVLayout, context: int, sequences: int, batched_tokens: int = 8192,
                  n_ubatch: int = 512) -> tuple[int, int]:
        """One ring of ``n_ctx = context × sequences`` cells padded to 256; sliding layers a ring of
        ``window × sequences + n_ubatch``."""
        n_ctx = pad(context * sequences, LLAMACPP_CTX_PAD)
        w = lay.sliding_window
        return n_ctx, (min(n_ctx, pad(w * sequences + n_ubatch, LLAMACPP_CTX_PAD)) if w else 0)

    def kv_tokens_formula(self, context: int, sequences: int, full_tokens: int) -> Note:
        return note("inference.formula.kv_tokens_llamacpp", n_ctx=full_tokens, context=context, sequences=sequences)

    def context_step(self, batch: int) -> tuple[int, int] | None:
        return LLAMACPP_CTX_PAD, batch

    def activations(self, spec: ModelSpec, inp: InferenceMemoryInput, act_bytes: int) -> Activations:
        per_cell, rows, logits = llamacpp_buffer_parts(spec, inp.n_ubatch, inp.flash_attention)
        return Activations(per_cell=per_cell, rows=rows, logits=logits)

    def activation_formula(self, spec: ModelSpec, inp: InferenceMemoryInput, act_bytes: int, full_tokens: int,
                           split: Split) -> Note:
        return llamacpp_compute_buffer(spec, full_tokens, inp.n_ubatch, inp.flash_attention)[1]

    def overhead(self, gpus: int) -> int:
        return LLAMACPP_CUDA_CONTEXT

    def overhead_formula(self, gpus: int, value: int) -> Note:
        return note("inference.formula.overhead_llamacpp", mib=LLAMACPP_CUDA_CONTEXT / MiB)

    def setting_notes(self, inp: InferenceMemoryInput, prec: PrecisionSpec, assumptions: list[Note],
                      warnings: list[Note]) -> None:
        """llama.cpp runs every format it loads: nothing to add."""

    def request_assumptions(self, inp: InferenceMemoryInput) -> tuple[Note, ...]:
        return _ctx_note(inp.context, inp.batch, inp.n_ubatch, inp.flash_attention)


@lru_cache(maxsize=1024)
def _ctx_note(context: int, batch: int, n_ubatch: int, flash_attention: bool) -> tuple[Note, ...]:
    fa = "fa" if flash_attention else "no_fa"
    return (note(f"inference.assume.llamacpp_ctx_{fa}", context=context, batch=batch, n_ubatch=n_ubatch),)


def llamacpp_compute_buffer(spec: ModelSpec, n_ctx: int, n_ubatch: int, flash_attention: bool) -> tuple[int, Note]:
    """Size of llama.cpp's CUDA compute buffer, reserved for a worst-case ubatch.

    Peak = max(attention, logits). Without flash attention the attention step materialises
    KQ (f32, n_ctx × n_ubatch × n_head) plus the f32 mask; with flash attention only an f16
    mask. Both add 4 f32 hidden-size rows per token. Logits: ``n_ubatch · (vocab + hidden) · 4``.
    Matches 164 MiB (Llama-2-7B, n_ctx 2048) and 560 MiB (Llama-3.1-8B, n_ctx 8192) measured
    without flash attention (measurements.md rows 3–4) to < 0.1 MiB.
    """
    per_cell, hidden_rows, logits = llamacpp_buffer_parts(spec, n_ubatch, flash_attention)
    attn = per_cell * n_ctx + hidden_rows
    if logits >= attn:
        return logits, note("inference.formula.activations_llamacpp_logits", n_ubatch=n_ubatch,
                            vocab=spec.vocab_size, hidden=spec.hidden_size)
    if flash_attention:
        return attn, note("inference.formula.activations_llamacpp_fa", n_ubatch=n_ubatch, n_ctx=n_ctx,
                          hidden=spec.hidden_size)
    return attn, note("inference.formula.activations_llamacpp", n_ubatch=n_ubatch, n_ctx=n_ctx,
                      heads=spec.num_heads, hidden=spec.hidden_size)


def llamacpp_buffer_parts(spec: ModelSpec, n_ubatch: int, flash_attention: bool) -> tuple[int, int, int]:
    """(attention bytes per n_ctx cell, attention bytes that do not grow with n_ctx, logits bytes)."""
    per_cell = n_ubatch * 2 if flash_attention else n_ubatch * (spec.num_heads + 1) * 4
    return per_cell, n_ubatch * 4 * spec.hidden_size * 4, n_ubatch * (spec.vocab_size + spec.hidden_size) * 4
