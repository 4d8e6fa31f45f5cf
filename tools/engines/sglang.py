"""SGLang: a static pool of ``mem_fraction_static`` of each GPU holds the weights and a token-granular KV cache
(page size 1, shared through the radix tree); activations and CUDA graphs live in the rest.

Its default fraction is computed from the GPU (``python/sglang/srt/server_args.py``, ``_handle_gpu_memory_
settings``): reserved MiB = 512 + 1.5 × max(chunked_prefill_size, 2048) + 2 × cuda_graph_max_bs + 1024 ×
tp / 8, at least 10 GiB on GPUs over 60 GiB, with chunked_prefill_size and cuda_graph_max_bs chosen by the
GPU's memory; fraction = (memory − reserved) / memory. SGLang measures "memory" as what is free once its
process has started (after NCCL set-up); the cache pool is that × fraction minus the weights
(``model_runner.profile_max_num_token``: free after loading − memory × (1 − fraction)).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.engines.base import Activations, Budget, ServingEngine
from tools.modelspec import ModelSpec
from tools.precision import PrecisionSpec
from tools.result import Note, note
from tools.units import GiB, MiB

if TYPE_CHECKING:
    from tools.inference_memory import InferenceMemoryInput

# Memory taken by NCCL set-up before SGLang measures the GPU ("Init torch distributed ends. mem usage=0.13 GB"
# in a published tensor-parallel-4 log); SGLang's "total" is what is free after it.
SGLANG_DIST_INIT_BYTES = int(0.13 * GiB)
# (GPU memory below, MiB) → (chunked_prefill_size, cuda_graph_max_bs below tp 4, from tp 4)
_BY_MEMORY: tuple[tuple[float, int, int, int], ...] = (
    (20 * 1024, 2048, 8, 8),
    (35 * 1024, 2048, 24, 80),
    (60 * 1024, 4096, 32, 160),
    (90 * 1024, 8192, 256, 512),
    (160 * 1024, 8192, 256, 512),
    (float("inf"), 16384, 512, 512),
)


def default_mem_fraction_static(gpu_bytes: int, tp: int = 1) -> tuple[float, int, int]:
    """SGLang's default ``mem_fraction_static`` for a GPU of ``gpu_bytes``, with the chunked-prefill size and
    CUDA-graph batch it assumes."""
    mib = gpu_bytes / MiB
    chunk, graphs_small, graphs_big = next((c, s, b) for limit, c, s, b in _BY_MEMORY if mib < limit)
    graph_bs = graphs_small if tp < 4 else graphs_big
    reserved = 512 + max(chunk, 2048) * 1.5 + graph_bs * 2 + tp / 8 * 1024
    if mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    # a GPU smaller than SGLang's own reserve leaves no static pool at all (never a negative one)
    return max(0.0, round((mib - reserved) / mib, 3)), chunk, graph_bs


class SGLang(ServingEngine):
    name = "sglang"
    label = "SGLang"

    def default_kv(self, spec: ModelSpec, prec: PrecisionSpec) -> str:
        """SGLang caches DSA models (DeepSeek-V3.2, GLM-5) in FP8 by default; others follow the model dtype."""
        return "fp8" if spec.indexer_head_dim else super().default_kv(spec, prec)

    def activations(self, spec: ModelSpec, inp: InferenceMemoryInput, act_bytes: int) -> Activations:
        """Activations and CUDA graphs live outside the static pool; shown as the part SGLang keeps for them."""
        return Activations(fixed=0, formula=note("inference.formula.activations_sglang"))

    def overhead(self, gpus: int) -> int:
        return SGLANG_DIST_INIT_BYTES if gpus > 1 else 0

    def overhead_formula(self, gpus: int, value: int) -> Note:
        return note("inference.formula.overhead_sglang", gib=value / GiB)

    def fraction(self, visible: int, inp: InferenceMemoryInput) -> float:
        if inp.mem_fraction_static is not None:
            return inp.mem_fraction_static
        tp = inp.gpus // inp.pipeline_stages if inp.gpus > 1 else 1
        return default_mem_fraction_static(visible, tp)[0]

    def budget(self, visible: int, weights: int, activations: int, overhead: int, kv_need: int,
               inp: InferenceMemoryInput) -> Budget:
        reserved = int((visible - overhead) * self.fraction(visible - overhead, inp))
        return Budget(reserved=reserved, kv_budget=reserved - weights)

    def reservation_formula(self, visible: int, inp: InferenceMemoryInput) -> Note:
        free = visible - self.overhead(inp.gpus)
        return note("inference.formula.sglang_reservation", fraction=self.fraction(free, inp))

    def kv_capacity_formula(self) -> Note:
        return note("inference.formula.kv_capacity_sglang")

    def setting_notes(self, inp: InferenceMemoryInput, prec: PrecisionSpec, assumptions: list[Note],
                      warnings: list[Note]) -> None:
        if inp.mem_fraction_static is not None:
            assumptions.append(note("inference.assume.sglang_fraction_given", fraction=inp.mem_fraction_static))
        if prec.family == "gguf":
            warnings.append(note("inference.warn.sglang_gguf"))

    def budget_notes(self, visible: int, inp: InferenceMemoryInput, assumptions: list[Note]) -> None:
        """The fraction this GPU gets, and what SGLang keeps outside the pool."""
        tp = inp.gpus // inp.pipeline_stages if inp.gpus > 1 else 1
        fraction, chunk, graph_bs = default_mem_fraction_static(visible - self.overhead(inp.gpus), tp)
        if inp.mem_fraction_static is None:
            assumptions.append(note("inference.assume.sglang_fraction", fraction=fraction, chunk=chunk,
                                    graph_bs=graph_bs, outside_gib=visible * (1 - fraction) / GiB))
