"""Precision gates: BF16 before Ampere, FP8 before Ada/Hopper (and Ascend 910B/C), FP4 before Blackwell,
FP64 for scientific work (never judged by FP16 marketing numbers)."""

from __future__ import annotations

from knowledge.schema import GPU, Precision
from tools.compat_rules.types import BuildContext, Finding, Severity, finding
from tools.precision import resolve_precision

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
            f"{gpu.name} ({_cc(gpu)}) has no BF16 tensor path — BF16 needs Ampere (CC "
            "8.0) or newer on NVIDIA; frameworks refuse it or emulate it very slowly.",
            f"{gpu.name}（{_cc(gpu)}）不支持 BF16 张量计算——NVIDIA 需要 Ampere（CC 8.0）"
            "及以上；框架会直接报错或以极慢的方式模拟。",
            ("Train in FP16 mixed precision with loss scaling (torch.amp GradScaler) — watch for overflow "
             "with models pre-trained in BF16 — or use an Ampere+ GPU." if training else
             "Serve in FP16 (vLLM --dtype half) or on an Ampere+ GPU."),
            ("改用 FP16 混合精度训练并启用 loss scaling（torch.amp GradScaler），注意 BF16 预训练模型可能溢"
             "出；或换用 Ampere 及以上显"
             "卡。" if training else "改用 FP16 推理（vLLM --dtype half），或换用 Ampere 及以上显卡。"),
            nums, sources=["S-TE-MATRIX", "vllm gpu_worker _check_if_gpu_supports_dtype"],
        )
    if p in (Precision.fp8, Precision.fp4):
        label = "FP8" if p == Precision.fp8 else "FP4"
        need = ("Ada (CC 8.9), Hopper or Blackwell on NVIDIA, CDNA3+ on AMD" if p == Precision.fp8
                else "Blackwell on NVIDIA, MI355X/CDNA4 on AMD")
        need_zh = ("NVIDIA Ada（CC 8.9）/Hopper/Blackwell 或 AMD CDNA3 及以上" if p == Precision.fp8
                   else "NVIDIA Blackwell 或 AMD MI355X（CDNA4）")
        ascend = gpu.vendor == "Huawei"
        fallback = vllm_inference and nvidia_ampere_plus
        sev: Severity = "warning" if fallback else "error"
        if ascend:
            fix = (f"Dequantise {label} checkpoints to BF16/FP16 or re-quantise to INT8 (W8A8) or W4A16 for "
                   "MindIE / vllm-ascend; native FP8 arrives with Ascend 950.")
            fix_zh = (f"将 {label} 权重反量化为 BF16/FP16，或重新量化为 INT8（W8A8）/W4A16 后用 "
                      "MindIE / vllm-ascend 部署；原生 FP8 需等昇腾 950。")
        elif fallback:
            fix = (f"vLLM runs {label} checkpoints weight-only on this GPU (Marlin, "
                   f"W{'8' if p == Precision.fp8 else '4'}A16): the memory saving stays, the compute "
                   f"speed-up does not. For real speed use INT8 W8A8 / AWQ, or a GPU with {label} tensor "
                   "cores.")
            fix_zh = (f"vLLM 会在此卡上以仅权重方式（Marlin，W{'8' if p == Precision.fp8 else '4'}A16）运行 "
                      f"{label} 模型：显存节省保留，但没有计算加速。如需提速改用 INT8 W8A8 / AWQ，或换用带 "
                      f"{label} 张量核心的显卡。")
        else:
            fix = (f"Use BF16/FP16 (or INT8 / INT4 weight-only for inference), or choose {need}; "
                   f"{label} checkpoints must be dequantised or re-quantised.")
            fix_zh = (f"改用 BF16/FP16（推理可用 INT8 / INT4 仅权重量化），或选择 {need_zh}；"
                      f"{label} 权重需反量化或重新量化。")
        return finding(
            rid, "precision", sev,
            f"{gpu.name} ({_cc(gpu)}) has no {label} tensor cores — {label} needs "
            f"{need}.",
            f"{gpu.name}（{_cc(gpu)}）没有 {label} 张量核心——{label} 需要 {need_zh}。",
            fix, fix_zh, nums, sources=["S-TE-MATRIX", "S-VLLM-QUANT", "S-EPOCH", "S-HUAWEI-950"],
        )
    if p == Precision.tf32:
        return finding(
            rid, "precision", "info",
            f"{gpu.name} has no TF32 tensor path; FP32 matmuls run on the regular FP32 units.",
            f"{gpu.name} 不支持 TF32 张量计算；FP32 矩阵乘法将使用普通 FP32 单元。",
            "Use FP16 mixed precision for speed.", "如需提速请使用 FP16 混合精度。", nums,
        )
    return finding(
        rid, "precision", "error",
        f"{gpu.name} has no {pname.upper()} path.",
        f"{gpu.name} 不支持 {pname.upper()}。",
        "Choose another precision or GPU.", "请改用其他精度或显卡。", nums,
    )


# vLLM quantisation kernels missing per hardware class (hardware_rules.md §4.1, S-VLLM-QUANT).
_VLLM_QUANT_GAPS: dict[str, dict[str, str]] = {
    "int4": {"amd": "AWQ and GPTQ", "volta": "AWQ"},
    "int8": {"amd": "INT8 W8A8", "intel": "INT8 W8A8", "volta": "INT8 W8A8"},
    "nf4": {"amd": "bitsandbytes", "intel": "bitsandbytes"},
    "gguf": {"intel": "GGUF"},
}
_ALTERNATIVE = {
    "amd": ("FP8 (MI300-class) or GGUF on llama.cpp (HIP)", "FP8（MI300 级）或在 llama.cpp（HIP）上用 GGUF"),
    "intel": ("AWQ/GPTQ on vLLM, or GGUF on llama.cpp "
              "(SYCL)", "vLLM 上用 AWQ/GPTQ，或在 llama.cpp（SYCL）上用 GGUF"),
    "volta": ("GPTQ or GGUF", "GPTQ 或 GGUF"),
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
    alt_en, alt_zh = _ALTERNATIVE[hw]
    served = "" if ctx.framework == "vllm" else " if you serve with vLLM"
    served_zh = "" if ctx.framework == "vllm" else "（如使用 vLLM 部署）"
    return finding(
        "vllm-quant-hardware", "precision", "warning",
        f"vLLM has no {gap} kernels for {gpu.name}{served}: {pname} checkpoints will not load there.",
        f"vLLM 没有适用于 {gpu.name} 的 {gap} kernel{served_zh}：{pname} 格式的模型无法加载。",
        f"Use {alt_en} instead.", f"改用{alt_zh}。",
        {"precision": pname, "hardware_class": hw}, pitfall="chasing-peak-tflops", sources=["S-VLLM-QUANT"],
    )


def _requant(gpu: GPU) -> Finding:
    return finding(
        "precision-fp8-unavailable-requant", "precision", "info",
        f"FP8-released checkpoints (e.g. DeepSeek-V3/R1) cannot run natively on {gpu.name}: dequantised to "
        "BF16 they need twice the weight memory; re-quantised to INT8 (W8A8) or W4A16 they keep the "
        "footprint.",
        f"以 FP8 发布的模型（如 DeepSeek-V3/R1）无法在 {gpu.name} 上原生运行：反量化为 BF16 后权重显存翻倍；"
        "重新量化为 INT8（W8A8）或 W4A16 则可保持显存占用。",
        "Plan memory for BF16 weights, or use an INT8/W4A16 re-quantised checkpoint.",
        "按 BF16 权重规划显存，或使用重新量化为 INT8/W4A16 的模型。",
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
                    f"{pname} is weight-only and computes in FP16/BF16, which the catalog does not list for "
                    f"{g.name}.",
                    f"{pname} 为仅权重量化，需在 FP16/BF16 下计算，目录中 {g.name} 没有这两种精度的数据。",
                    "Check the vendor's supported dtypes.", "请核实厂商支持的数据类型。",
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
                f"The catalog has no {p.value.upper()} figure for {g.name}; support is unconfirmed.",
                f"目录中没有 {g.name} 的 {p.value.upper()} 数据，是否支持尚未确认。",
                "Check the vendor datasheet or software docs for this precision.",
                "请查阅厂商规格书或软件文档确认该精度。",
                {"precision": pname},
            ))
        elif p == Precision.fp8 and g.isa_target == "gfx942":
            out.append(finding(
                "precision-fp8-fnuz", "precision", "info",
                f"{g.name} (gfx942) uses the FP8 FNUZ variants; OCP-FP8 checkpoints are converted at load "
                "time.",
                f"{g.name}（gfx942）使用 FP8 FNUZ 格式；OCP FP8 权重会在加载时转换。",
                "Use ROCm-validated FP8 checkpoints where available.", "尽量使用经 ROCm 验证的 FP8 权重。",
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
                f"{g.name} has {'no' if sev == 'error' else 'no published'} FP64 throughput — scientific "
                "codes in double precision will not run (or run emulated).",
                f"{g.name} {'不支持' if sev == 'error' else '没有公开的'} FP64 算力——双精度科学计算无法运行（"
                "或只能模拟）。",
                "Choose a GPU with full-rate FP64 (MI300X, H100/H200, A100 class).",
                "选择具备全速 FP64 的显卡（MI300X、H100/H200、A100 等）。",
                nums, pitfall="chasing-peak-tflops",
            ))
        elif t.fp32 and fp64 < t.fp32 / 8:
            ratio = t.fp32 / fp64 if fp64 else 0
            out.append(finding(
                "precision-fp64-consumer", "precision", "warning",
                f"{g.name} runs FP64 at 1/{ratio:.0f} of FP32: {fp64:g} TFLOPS, although its FP16 tensor "
                f"figure is {t16} TFLOPS — double-precision simulations crawl on it.",
                f"{g.name} 的 FP64 只有 FP32 的 1/{ratio:.0f}：{fp64:g} TFLOPS，尽管其 FP16 张量算力为 {t16} "
                "TFLOPS——双精度仿真在此卡上非常慢。",
                "For FP64 work use datacenter parts with full-rate FP64 and ECC (MI300X 81.7+/H100 67/A100 "
                "19.5 TFLOPS tensor FP64), or check whether the code can use mixed precision.",
                "FP64 计算请选具备全速 FP64 和 ECC 的数据中心卡（MI300X、H100、A100 等），或评估代码能否使用"
                "混合精度。",
                nums, pitfall="chasing-peak-tflops",
            ))
    return out
