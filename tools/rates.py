"""The dense tensor throughput a model's matmuls run at on one GPU: the precision's column, or its fallback."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from knowledge.schema import GPU, Precision
from tools.errors import ToolError
from tools.precision import resolve_precision
from tools.result import Note, note

_FALLBACK = {
    "fp4": ["fp8", "bf16", "fp16"],
    "fp8": ["bf16", "fp16"],
    "int8": ["bf16", "fp16"],
    "bf16": ["fp16"],
    "fp16": ["bf16"],
    "tf32": ["fp32"],
    "fp32": [],
}


class ComputeRate(BaseModel):
    """The dense tensor throughput a workload runs at on one GPU."""

    model_config = ConfigDict(extra="forbid")

    precision: str = Field(description="catalog throughput column used")
    flops_per_s: float = Field(description="dense peak, FLOP/s (TOPS for int8)")
    warnings: list[Note] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list, description="how the rate was chosen, where it is not the column")


def compute_rate(gpu: GPU, weight_precision: str, engine: str | None = None) -> ComputeRate:
    """Dense tensor FLOP/s for matmuls of a model stored in ``weight_precision``.

    Weight-only formats (GGUF, AWQ/GPTQ, NF4) dequantise and compute in fp16/bf16; fp8 and
    int8 (W8A8) use their own tensor path when the GPU has one, else fall back to bf16/fp16
    with a warning. llama.cpp multiplies in fp16 (or int8 dot products) whatever the file holds,
    so MXFP4 and FP8 files there run at the fp16 rate. Sparse figures are never used.
    """
    spec = resolve_precision(weight_precision)
    wanted = spec.compute_precision
    if engine == "llamacpp" and wanted in ("fp8", "fp4"):
        wanted = "fp16"
    warnings: list[Note] = []
    for cand in [wanted, *_FALLBACK.get(wanted, [])]:
        value = gpu.throughput.get(Precision(cand))
        if value:
            if cand != wanted:
                why = "fallback_none" if gpu.supports(Precision(wanted)) is False else "fallback_unlisted"
                warnings.append(note(f"perf.rate.{why}", gpu=gpu.name, wanted=wanted, precision=spec.name, used=cand))
            if cand == "fp32":
                warnings.append(note("perf.rate.fp32_only"))
            rate = ComputeRate(precision=cand, flops_per_s=value * 1e12, warnings=warnings)
            if engine == "llamacpp" and cand == "fp16" and _halved_fp32_accumulate(gpu):
                rate = rate.model_copy(update={"flops_per_s": rate.flops_per_s * 2, "notes": [
                    note("perf.rate.fp16_accumulate", gpu=gpu.name, listed=value, used=value * 2)]})
            return _faster_path(gpu, rate)
    raise ToolError(
        note("error.perf.no_throughput", gpu=gpu.name, precision=wanted),
        suggestions=[note("error.hint.gpu_with_bf16"), note("error.hint.pass_mfu")],
    )


def _halved_fp32_accumulate(gpu: GPU) -> bool:
    """GeForce cards since Turing list fp16 tensor throughput with fp32 accumulation, which they run at half the
    rate of fp16 accumulation (RTX 4090: 165.2 vs 330.3 TFLOPS, Ada whitepaper); llama.cpp accumulates in fp16."""
    return gpu.vendor.lower() == "nvidia" and gpu.tier == "consumer" and not gpu.architecture.startswith("Pascal")


def _faster_path(gpu: GPU, rate: ComputeRate) -> ComputeRate:
    """On a GPU whose fp16 is slower than its fp32 (Pascal: P40) engines compute in fp32: a P40's published pp512
    of a 7B Q4_0 (912 tokens/s, llama.cpp PR #4766) is its fp32 peak, not its int8 dot-product rate."""
    fp32 = (gpu.throughput.fp32 or 0) * 1e12
    if rate.precision == "fp32" or rate.flops_per_s >= fp32:
        return rate
    return ComputeRate(precision="fp32", flops_per_s=fp32, warnings=rate.warnings)


# GeForce tensor cores run FP16 at twice their FP32-accumulate rate (the catalog's figure) when the sums stay in
# FP16, which PyTorch allows for FP16 matmuls by default (allow_fp16_reduced_precision_reduction): image tools run
# there, so an RTX 4090 keeps pace with an RTX 6000 Ada in Stable Diffusion rather than running at half its speed.
GEFORCE_FP16_ACCUMULATE = 2.0


def media_tflops(gpu: GPU) -> float:
    """Dense FP16 TFLOPS an image or video model's denoising steps run at on one card (0 when unknown)."""
    rate = gpu.throughput.fp16 or gpu.throughput.bf16 or 0.0
    geforce = gpu.vendor == "NVIDIA" and gpu.tier.value == "consumer" and rate > (gpu.throughput.fp32 or 0) * 1.5
    return rate * (GEFORCE_FP16_ACCUMULATE if geforce else 1.0)
