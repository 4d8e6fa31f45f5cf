"""What an inference engine decides about memory and speed, as one object per engine.

An engine owns its defaults (precision, KV dtype, multi-GPU split), how it allocates the KV cache for each
kind of attention layer (whole blocks, one padded ring, exact tokens), its activation peak and fixed
overhead, how it budgets the GPU (a reservation it fills with cache, or simply what is left), the notes that
explain all this, and how it runs weights that do not fit. ``tools.inference_memory`` and ``tools.perf`` ask
the engine instead of testing its name; adding an engine is one module in this package and one line in
``tools.engines.ENGINES``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from tools.kv_cache import KVLayout
from tools.modelspec import ModelSpec
from tools.precision import PrecisionSpec
from tools.result import Note, note
from tools.units import GiB

if TYPE_CHECKING:
    from tools.inference_memory import InferenceMemoryInput

Split = Literal["tp", "pp"]
TRANSFORMERS_OVERHEAD = int(0.75 * GiB)  # CUDA context + cuBLAS workspace + allocator slack (0.5–1 GiB)


@dataclass(frozen=True, slots=True)
class Activations:
    """An engine's activation bytes per GPU as coefficients (the searches evaluate them many times).

    ``fixed`` is a peak that does not move with the request (vLLM's profile run); llama.cpp's compute
    buffer is ``max(logits, per_cell · n_ctx + rows)``; a plain forward is ``per_token · tokens +
    per_seq · sequences``, split over tensor-parallel ranks.
    """

    fixed: int | None = None
    per_cell: int = 0
    rows: int = 0
    logits: int = 0
    per_token: int = 0
    per_seq: int = 0
    formula: Note | None = None  # for a fixed peak: its formula, known up front


@dataclass(frozen=True, slots=True)
class Budget:
    """How an engine budgets one GPU of ``visible`` bytes: what it reserves up front (None: nothing, the need
    just has to fit) and what of that is left for the KV cache."""

    reserved: int | None
    kv_budget: int


class InferenceEngine:
    """Base of the engines: the generic behaviour (a Hugging Face ``generate``), overridden where an engine
    differs."""

    name: ClassVar[str]
    label: ClassVar[str]
    split: ClassVar[Split] = "pp"  # default multi-GPU split of the memory estimate
    speed_split: ClassVar[Literal["layer", "tensor"]] = "layer"  # how its decode runs over several GPUs
    host_path: ClassVar[Literal["cpu", "pcie"]] = "pcie"  # weights left in system RAM: CPU-run or streamed
    prefill_chunk: ClassVar[int] = 8192  # prompt tokens per forward (weights in RAM are copied once per chunk)
    offloads_layers: ClassVar[bool] = False  # runs whole layers from system RAM when VRAM is short (-ngl)
    reserves: ClassVar[bool] = False  # takes a share of the GPU up front and fills it with cache

    # --- defaults ---------------------------------------------------------------------------------------------
    def default_precision(self, spec: ModelSpec) -> str:
        return spec.weight_precision or spec.native_dtype

    def precision_reason(self, spec: ModelSpec) -> str:
        """Which ``inference.assume.precision_*`` note explains the default precision."""
        return "files" if spec.weight_precision else "native"

    def default_kv(self, spec: ModelSpec, prec: PrecisionSpec) -> str:
        return "bf16" if prec.compute_precision == "bf16" else "fp16"  # the cache follows the model dtype

    def resolve_split(self, requested: Split | None, gpus: int, warnings: list[Note]) -> Split:
        if gpus == 1:
            return self.split
        return requested or self.split

    # --- the KV cache -----------------------------------------------------------------------------------------
    def kv_tokens(self, lay: KVLayout, context: int, sequences: int, batched_tokens: int = 8192,
                  n_ubatch: int = 512) -> tuple[int, int]:
        """Tokens each full-attention layer and each sliding layer holds, all sequences together."""
        w = lay.sliding_window
        return context * sequences, (min(context, w) * sequences if w else 0)

    def kv_tokens_formula(self, context: int, sequences: int, full_tokens: int) -> Note:
        return note("inference.formula.kv_tokens", context=context, sequences=sequences)

    def context_step(self, batch: int) -> tuple[int, int] | None:
        """The cache grows in steps of ``unit`` tokens for ``seqs`` sequences (None: token by token)."""
        return None

    # --- activations and overhead ------------------------------------------------------------------------------
    def activations(self, spec: ModelSpec, inp: InferenceMemoryInput, act_bytes: int) -> Activations:
        per_token, per_seq = transformers_activation_parts(spec, act_bytes)
        return Activations(per_token=per_token, per_seq=per_seq)

    def activation_formula(self, spec: ModelSpec, inp: InferenceMemoryInput, act_bytes: int, full_tokens: int,
                           split: Split) -> Note:
        formula = note("inference.formula.activations_transformers", tokens=inp.context * inp.batch,
                       hidden=spec.hidden_size, intermediate=intermediate(spec), act_bytes=act_bytes,
                       seqs=inp.batch, vocab=spec.vocab_size)
        if split == "tp" and inp.gpus > 1:
            formula = note("inference.formula.per_tp", formula=formula, gpus=inp.gpus)
        return formula

    def overhead(self, gpus: int) -> int:
        return TRANSFORMERS_OVERHEAD

    def overhead_formula(self, gpus: int, value: int) -> Note:
        return note("inference.formula.overhead_transformers", gib=TRANSFORMERS_OVERHEAD / GiB)

    # --- the budget -------------------------------------------------------------------------------------------
    def budget(self, visible: int, weights: int, activations: int, overhead: int, kv_need: int,
               inp: InferenceMemoryInput) -> Budget:
        """No reservation: the cache may use whatever the rest leaves."""
        return Budget(reserved=None, kv_budget=visible - (weights + activations + overhead))

    def kv_capacity_formula(self) -> Note:
        return note("inference.formula.kv_capacity")

    def reservation_formula(self, visible: int, inp: InferenceMemoryInput) -> Note:
        """How an engine that reserves computes its share of a GPU of ``visible`` bytes."""
        raise NotImplementedError(f"{self.name} reserves nothing")

    def budget_notes(self, visible: int, inp: InferenceMemoryInput, assumptions: list[Note]) -> None:
        """Notes on how a GPU of ``visible`` bytes is budgeted (an engine that reserves explains its share)."""

    def budget_warnings(self, visible: int, inp: InferenceMemoryInput, warnings: list[Note]) -> None:
        """Warnings about the reservation on a GPU of ``visible`` bytes."""

    # --- notes ------------------------------------------------------------------------------------------------
    def setting_notes(self, inp: InferenceMemoryInput, prec: PrecisionSpec, assumptions: list[Note],
                      warnings: list[Note]) -> None:
        """Notes that follow from the engine's settings (cached with the plan)."""
        if prec.family == "gguf":
            warnings.append(note("inference.warn.transformers_gguf"))

    def request_notes(self, inp: InferenceMemoryInput, warnings: list[Note]) -> None:
        """Warnings about the request against the engine's settings."""

    def request_assumptions(self, inp: InferenceMemoryInput) -> tuple[Note, ...]:
        """Extra assumptions about how the request's cache is laid out."""
        return ()


class ServingEngine(InferenceEngine):
    """A serving engine (vLLM, SGLang): tensor parallel by default, and a share of each GPU reserved up front."""

    split: ClassVar[Split] = "tp"
    speed_split = "tensor"
    reserves = True


def intermediate(spec: ModelSpec) -> int:
    """The MLP width (4 × hidden when the spec does not say)."""
    return spec.intermediate_size or 4 * spec.hidden_size


def transformers_activation_parts(spec: ModelSpec, act_bytes: int) -> tuple[int, int]:
    """(bytes per prompt token, bytes per sequence) of a Hugging Face forward: hidden states and the MLP's
    gate/up outputs per token (SDPA/flash attention: no s² term), fp32 logits of the last position per
    sequence (``generate`` keeps only it)."""
    return (4 * spec.hidden_size + 2 * intermediate(spec)) * act_bytes, spec.vocab_size * 4 * 2
