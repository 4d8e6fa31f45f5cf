"""Precision gates: BF16 before Ampere, FP8 before Ada/Hopper (and Ascend 910B/C), FP4 before Blackwell,
FP64 for scientific work (never judged by FP16 marketing numbers)."""

from __future__ import annotations

from knowledge.schema import GPU, Precision
from tools.compat_rules.types import BuildContext, Finding, Severity, finding
from tools.precision import resolve_precision
from tools.result import note

# Minimum NVIDIA compute capability for a tensor path, used when the catalog has no mark either way.
_NVIDIA_MIN_CC = {Precision.bf16: 8.0, Precision.fp8: 8.9, Precision.fp4: 10.0, Precision.tf32: 8.0}

_RULE_IDS = {
    Precision.bf16: "precision-bf16-ampere",
    Precision.fp8: "precision-fp8-ada-hopper",
    Precision.fp4: "precision-fp4-blackwell",
    Precision.int8: "precision-int8",
    Precision.tf32: "precision-tf32",
    Precision.fp16: "precision-fp16",
    Precision.fp32: "precision-fp32",
    Precision.fp64: "precision-fp64",
}


def hardware_precision(name: str) -> tuple[Precision, bool, str]:
    """(tensor precision the matmuls run at, weight_only, canonical name) for a user precision string."""
    key = name.strip().lower()
    if key in ("fp64", "double", "float64", "f64"):
        return Precision.fp64, False, "fp64"
    if key in ("tf32",):
        return Precision.tf32, False, "tf32"
    spec = resolve_precision(name)
    return Precision(spec.compute_precision), spec.weight_only, spec.name


def supports(gpu: GPU, p: Precision) -> bool | None:
    """Catalog answer, or the NVIDIA compute-capability rule when the catalog does not say."""
    known = gpu.supports(p)
    if known is not None:
        return known
    if gpu.vendor == "NVIDIA" and gpu.compute_capability and p in _NVIDIA_MIN_CC:
        return float(gpu.compute_capability) >= _NVIDIA_MIN_CC[p]
    return None


def _cc(gpu: GPU) -> str:
    """'Turing, CC 7.5' or just the architecture when there is no compute capability."""
    return f"{gpu.architecture}, CC {gpu.compute_capability}" if gpu.compute_capability else gpu.architecture


def _unsupported(ctx: BuildContext, gpu: GPU, p: Precision, pname: str) -> Finding:
    training = ctx.inp.workload == "training"
    vllm_inference = ctx.inp.workload != "training" and ctx.framework == "vllm"
    nvidia_ampere_plus = gpu.vendor == "NVIDIA" and float(gpu.compute_capability or 0) >= 8.0
    nums = {"precision": pname, "compute_capability": gpu.compute_capability,
            "architecture": gpu.architecture}
    rid = _RULE_IDS[p]
    if p == Precision.bf16:
        return finding(
            rid, "precision", "error",
            note("compat.precision.no_bf16", gpu=gpu.name, cc=_cc(gpu)),
            note("compat.fix.precision.no_bf16_training" if training else "compat.fix.precision.no_bf16_serving"),
            nums, sources=["S-TE-MATRIX", "vllm gpu_worker _check_if_gpu_supports_dtype"],
        )
    if p in (Precision.fp8, Precision.fp4):
        label = "FP8" if p == Precision.fp8 else "FP4"
        need = note("compat.precision.needs_fp8" if p == Precision.fp8 else "compat.precision.needs_fp4")
        ascend = gpu.vendor == "Huawei"
        fallback = vllm_inference and nvidia_ampere_plus
        sev: Severity = "warning" if fallback else "error"
        if ascend:
            fix = note("compat.fix.precision.low_bit_ascend", label=label)
        elif fallback:
            fix = note("compat.fix.precision.low_bit_weight_only", label=label,
                       bits="8" if p == Precision.fp8 else "4")
        else:
            fix = note("compat.fix.precision.low_bit", label=label, need=need)
        return finding(
            rid, "precision", sev,
            note("compat.precision.no_low_bit", gpu=gpu.name, cc=_cc(gpu), label=label, need=need),
            fix, nums, sources=["S-TE-MATRIX", "S-VLLM-QUANT", "S-EPOCH", "S-HUAWEI-950"],
        )
    if p == Precision.tf32:
        return finding(
            rid, "precision", "info",
            note("compat.precision.no_tf32", gpu=gpu.name),
            note("compat.fix.precision.no_tf32"), nums,
        )
    return finding(
        rid, "precision", "error",
        note("compat.precision.no_path", gpu=gpu.name, precision=pname.upper()),
        note("compat.fix.precision.no_path"), nums,
    )


# vLLM quantisation kernels missing per hardware class (hardware_rules.md §4.1, S-VLLM-QUANT).
_VLLM_QUANT_GAPS: dict[str, dict[str, str]] = {
    "int4": {"amd": "AWQ / GPTQ", "volta": "AWQ"},
    "int8": {"amd": "INT8 W8A8", "intel": "INT8 W8A8", "volta": "INT8 W8A8"},
    "nf4": {"amd": "bitsandbytes", "intel": "bitsandbytes"},
    "gguf": {"intel": "GGUF"},
}


def _hw_class(gpu: GPU) -> str | None:
    if gpu.vendor == "AMD":
        return "amd"
    if gpu.vendor == "Intel" and "gaudi" not in gpu.name.lower():
        return "intel"
    if gpu.vendor == "NVIDIA" and gpu.compute_capability and float(gpu.compute_capability) < 7.5:
        return "volta"
    return None


def _vllm_quant(ctx: BuildContext, gpu: GPU, pname: str) -> Finding | None:
    if not (ctx.framework == "vllm" or (ctx.framework is None and ctx.inp.workload == "inference")):
        return None
    spec = resolve_precision(pname)
    key = "gguf" if spec.family == "gguf" else spec.name
    hw = _hw_class(gpu)
    gap = _VLLM_QUANT_GAPS.get(key, {}).get(hw or "")
    if not gap or hw is None:
        return None
    served = "" if ctx.framework == "vllm" else note("compat.precision.if_served_with_vllm")
    return finding(
        "vllm-quant-hardware", "precision", "warning",
        note("compat.precision.vllm_quant_hardware", gap=gap, gpu=gpu.name, served=served, precision=pname),
        note("compat.fix.precision.vllm_quant_hardware", alternative=note(f"compat.precision.alternative.{hw}")),
        {"precision": pname, "hardware_class": hw}, pitfall="chasing-peak-tflops", sources=["S-VLLM-QUANT"],
    )


def _requant(gpu: GPU) -> Finding:
    return finding(
        "precision-fp8-unavailable-requant", "precision", "info",
        note("compat.precision.fp8_requant", gpu=gpu.name),
        note("compat.fix.precision.fp8_requant"),
        {"weight_bytes_factor_bf16_vs_fp8": 2}, sources=["S-EPOCH", "S-HUAWEI-950"],
    )


def check_precision(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    if ctx.inp.workload == "scientific":
        out += _fp64(ctx)
    if not ctx.precision_name:
        return out
    p, weight_only, pname = hardware_precision(ctx.precision_name)
    seen: set[str] = set()
    for card in ctx.cards:
        g = card.gpu
        if g.id in seen:
            continue
        seen.add(g.id)
        gap = _vllm_quant(ctx, g, pname) if p != Precision.fp64 and p != Precision.tf32 else None
        if gap:
            out.append(gap)
        if weight_only:
            if not (supports(g, Precision.fp16) or supports(g, Precision.bf16)):
                out.append(finding(
                    "precision-fp16", "precision", "warning",
                    note("compat.precision.weight_only_compute", precision=pname, gpu=g.name),
                    note("compat.fix.precision.weight_only_compute"),
                    {"precision": pname},
                ))
            continue
        ok = supports(g, p)
        if ok is False:
            out.append(_unsupported(ctx, g, p, pname))
            if p == Precision.fp8 and (g.vendor == "Huawei" or g.architecture.lower().startswith("ampere")):
                out.append(_requant(g))
        elif ok is None:
            out.append(finding(
                "precision-unknown", "precision", "info",
                note("compat.precision.unknown", precision=p.value.upper(), gpu=g.name),
                note("compat.fix.precision.unknown"),
                {"precision": pname},
            ))
        elif p == Precision.fp8 and g.isa_target == "gfx942":
            out.append(finding(
                "precision-fp8-fnuz", "precision", "info",
                note("compat.precision.fp8_fnuz", gpu=g.name),
                note("compat.fix.precision.fp8_fnuz"),
                {"isa_target": g.isa_target},
            ))
    return out


def _fp64(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    seen: set[str] = set()
    for card in ctx.cards:
        g = card.gpu
        if g.id in seen:
            continue
        seen.add(g.id)
        t = g.throughput
        fp64 = t.fp64
        tensor16 = t.bf16 or t.fp16
        t16 = f"{tensor16:g}" if tensor16 is not None else "?"
        nums = {"fp64_tflops": fp64, "fp16_tensor_tflops": tensor16, "fp32_tflops": t.fp32}
        if fp64 is None:
            sev: Severity = "error" if Precision.fp64 in g.unsupported else "warning"
            out.append(finding(
                "precision-fp64", "precision", sev,
                note("compat.precision.no_fp64" if sev == "error" else "compat.precision.fp64_unpublished",
                     gpu=g.name),
                note("compat.fix.precision.no_fp64"),
                nums, pitfall="chasing-peak-tflops",
            ))
        elif t.fp32 and fp64 < t.fp32 / 8:
            ratio = t.fp32 / fp64 if fp64 else 0
            out.append(finding(
                "precision-fp64-consumer", "precision", "warning",
                note("compat.precision.fp64_consumer", gpu=g.name, ratio=ratio, fp64_tflops=fp64, fp16_tflops=t16),
                note("compat.fix.precision.fp64_consumer"),
                nums, pitfall="chasing-peak-tflops",
            ))
    return out
