"""vLLM: a reservation of ``gpu_memory_utilization`` of each GPU, filled with 16-token cache blocks after the
weights, the activation peak of a start-up profile run and non-torch memory (``vllm/v1/worker/gpu_worker.py``)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

from tools.engines.base import Activations, Budget, ServingEngine, intermediate
from tools.kv_cache import VLLM_BLOCK_SIZE, KVLayout
from tools.modelspec import ModelSpec
from tools.precision import PrecisionSpec
from tools.result import Note, note
from tools.units import GiB

if TYPE_CHECKING:
    from tools.inference_memory import InferenceMemoryInput

VLLM_LOGIT_BYTES = 8.5  # bytes per (token × vocab) logit in vLLM's profile run: bf16 + fp32 + sampler
VLLM_NON_TORCH_BYTES = int(0.15 * GiB)  # NCCL-free single GPU: 0.10–0.20 GiB in vLLM logs
VLLM_NON_TORCH_TP_BYTES = int(0.5 * GiB)  # with tensor parallel: NCCL / custom all-reduce buffers


class VLLM(ServingEngine):
    name = "vllm"
    label = "vLLM"

    def kv_tokens(self, lay: KVLayout, context: int, sequences: int, batched_tokens: int = 8192,
                  n_ubatch: int = 512) -> tuple[int, int]:
        """Whole 16-token blocks per sequence; a sliding layer keeps ``min(window − 1 + max_num_batched_tokens,
        context)`` tokens plus one block."""
        blocks_full = -(-context // VLLM_BLOCK_SIZE)
        full_tokens = sequences * blocks_full * VLLM_BLOCK_SIZE
        w = lay.sliding_window
        if not w:
            return full_tokens, 0
        blocks_swa = min(-(-min(w - 1 + batched_tokens, context) // VLLM_BLOCK_SIZE) + 1, blocks_full)
        return full_tokens, sequences * blocks_swa * VLLM_BLOCK_SIZE

    def kv_tokens_formula(self, context: int, sequences: int, full_tokens: int) -> Note:
        return note("inference.formula.kv_tokens_vllm", sequences=sequences, context=context)

    def context_step(self, batch: int) -> tuple[int, int] | None:
        return VLLM_BLOCK_SIZE, 1

    def activations(self, spec: ModelSpec, inp: InferenceMemoryInput, act_bytes: int) -> Activations:
        peak, formula = vllm_activation_peak(spec, inp, act_bytes)
        return Activations(fixed=peak, formula=formula)

    def overhead(self, gpus: int) -> int:
        return VLLM_NON_TORCH_TP_BYTES if gpus > 1 else VLLM_NON_TORCH_BYTES

    def overhead_formula(self, gpus: int, value: int) -> Note:
        return note("inference.formula.overhead_vllm_tp" if gpus > 1 else "inference.formula.overhead_vllm",
                    gib=value / GiB)

    def budget(self, visible: int, weights: int, activations: int, overhead: int, kv_need: int,
               inp: InferenceMemoryInput) -> Budget:
        reserved = math.floor(visible * inp.gpu_memory_utilization)
        return Budget(reserved=reserved, kv_budget=reserved - (weights + activations + overhead))

    def kv_capacity_formula(self) -> Note:
        return note("inference.formula.kv_capacity_vllm")

    def reservation_formula(self, visible: int, inp: InferenceMemoryInput) -> Note:
        return note("inference.formula.vllm_reservation", utilization=inp.gpu_memory_utilization)

    def budget_warnings(self, visible: int, inp: InferenceMemoryInput, warnings: list[Note]) -> None:
        if (1 - inp.gpu_memory_utilization) * visible < 0.75 * GiB:
            warnings.append(note("inference.warn.little_outside_util"))

    def setting_notes(self, inp: InferenceMemoryInput, prec: PrecisionSpec, assumptions: list[Note],
                      warnings: list[Note]) -> None:
        assumptions.extend(_vllm_notes(inp.gpu_memory_utilization, inp.max_num_batched_tokens, inp.max_num_seqs,
                                       inp.profile_logits_all_tokens))
        if prec.family == "gguf":
            warnings.append(note("inference.warn.vllm_gguf"))

    def request_notes(self, inp: InferenceMemoryInput, warnings: list[Note]) -> None:
        if inp.batch > inp.max_num_seqs:
            warnings.append(note("inference.warn.batch_over_max_seqs", batch=inp.batch,
                                 max_num_seqs=inp.max_num_seqs))


def vllm_activation_peak(spec: ModelSpec, inp: InferenceMemoryInput, act_bytes: int) -> tuple[int, Note]:
    """Torch activation peak of vLLM's profile run.

    forward: ``T · (3·I + 6·h) · b`` (gate/up/activation outputs of the MLP plus residual and
    norm copies for T = max_num_batched_tokens tokens); logits: ``N · V · 8.5 B`` where N is
    max_num_seqs (the sampler's dummy run) or, for the 0.7-era V1 profile, every token.
    Calibrated on two logs of Llama-3-8B with T = 8192: 9.37 GiB with all-token logits
    (measurements.md row 8) and 1.26 GiB with 256 sampled sequences (vLLM PR #10511).
    """
    t = inp.max_num_batched_tokens
    inter = intermediate(spec)
    forward = t * (3 * inter + 6 * spec.hidden_size) * act_bytes
    n_logits = t if inp.profile_logits_all_tokens else min(inp.max_num_seqs, t)
    logits = round(n_logits * spec.vocab_size * VLLM_LOGIT_BYTES)
    formula = note("inference.formula.activations_vllm", tokens=t, intermediate=inter, hidden=spec.hidden_size,
                   act_bytes=act_bytes, logits=n_logits, vocab=spec.vocab_size, logit_bytes=VLLM_LOGIT_BYTES)
    return forward + logits, formula


@lru_cache(maxsize=256)
def _vllm_notes(util: float, batched_tokens: int, max_seqs: int, all_tokens: bool) -> tuple[Note, Note]:
    """The two vLLM accounting assumptions (remembered per setting)."""
    profile = "vllm_profile_all_tokens" if all_tokens else "vllm_profile_sampled"
    return (
        note("inference.assume.vllm_reservation", util=util, rest=1 - util),
        note(f"inference.assume.{profile}", batched_tokens=batched_tokens, max_num_seqs=max_seqs),
    )
