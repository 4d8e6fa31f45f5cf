"""Software gates: framework support per vendor and architecture, CUDA dependence, 信创, OS.

Support facts are from hardware_rules.md §4 (vLLM, TensorRT-LLM, SGLang, llama.cpp, ROCm matrices) and
§5 E (domestic stacks). Each GPU is classified into a *stack family* (CUDA, ROCm CDNA, ROCm RDNA, Gaudi,
Intel XPU, Ascend CANN, Cambricon Neuware, MetaX MACA, Moore Threads MUSA, Hygon DTK, Biren SUPA,
Iluvatar CoreX) and each framework has a rule per family.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from knowledge.schema import GPU
from tools.compat_rules.types import BuildContext, Finding, Severity, finding
from tools.errors import ToolError
from tools.result import Note, note

# canonical key → accepted spellings
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "pytorch": ("pytorch", "torch", "transformers", "hf", "huggingface", "accelerate", "peft", "unsloth"),
    "vllm": ("vllm",),
    "tensorrt-llm": ("tensorrt-llm", "tensorrtllm", "trt-llm", "trtllm", "tensorrt", "triton-trtllm"),
    "sglang": ("sglang",),
    "llama.cpp": ("llama.cpp", "llamacpp", "llama-cpp", "ollama", "lmstudio", "lm "
                                                                              "studio", "gguf", "koboldcpp"),
    "deepspeed": ("deepspeed",),
    "mindie": ("mindie", "mind ie", "mindspore-ie"),
    "megatron": ("megatron", "megatron-lm", "megatron-core", "nemo"),
    "jax": ("jax", "flax"),
}
FRAMEWORK_LABELS = {
    "pytorch": "PyTorch", "vllm": "vLLM", "tensorrt-llm": "TensorRT-LLM", "sglang": "SGLang",
    "llama.cpp": "llama.cpp", "deepspeed": "DeepSpeed", "mindie": "MindIE", "megatron": "Megatron-LM",
    "jax": "JAX",
}
LINUX_ONLY = {"vllm", "sglang", "tensorrt-llm", "mindie", "megatron"}


def _fkey(text: str) -> str:
    return re.sub(r"[\s_]+", "", text.strip().lower())


_F_INDEX = {_fkey(a): k for k, aliases in FRAMEWORKS.items() for a in (k, *aliases)}


def resolve_framework(name: str) -> str:
    """Canonical framework key; ToolError listing the known ones otherwise."""
    key = _F_INDEX.get(_fkey(name))
    if key is None:
        shown = name if len(name) <= 60 else name[:57] + "…"  # a 10 KB name is not echoed whole
        raise ToolError(f"unknown framework {shown!r}", suggestions=list(FRAMEWORK_LABELS.values()))
    return key


def stack_family(gpu: GPU) -> str:
    """The software stack a GPU runs: 'cuda', 'rocm-cdna', 'rocm-rdna', 'gaudi', 'xpu', 'ascend', 'mlu',
    'maca', 'musa', 'dtk', 'supa', 'corex', 'metal' (Apple), or 'vendor' for a vendor with no stack named here."""
    v = gpu.vendor
    if v == "NVIDIA":
        return "cuda"
    if v == "AMD":
        isa = (gpu.isa_target or "").lower()
        return "rocm-rdna" if isa.startswith("gfx1") or gpu.tier.value != "datacenter" else "rocm-cdna"
    if v == "Intel":
        return "gaudi" if "gaudi" in (gpu.name + gpu.architecture).lower() else "xpu"
    return {"Huawei": "ascend", "Cambricon": "mlu", "MetaX": "maca", "Moore Threads": "musa", "Hygon": "dtk",
            "Biren": "supa", "Iluvatar CoreX": "corex", "Apple": "metal"}.get(v, "vendor")


STACK_NAMES = {
    "cuda": "CUDA", "rocm-cdna": "ROCm (Instinct)", "rocm-rdna": "ROCm (Radeon)", "gaudi": "Intel Gaudi SDK",
    "xpu": "oneAPI / Intel XPU", "ascend": "CANN (Ascend)", "mlu": "Cambricon Neuware", "maca": "MetaX MACA",
    "musa": "Moore Threads MUSA", "dtk": "Hygon DTK (HIP-compatible)", "supa": "Biren BIRENSUPA",
    "corex": "Iluvatar CoreX SDK", "metal": "Metal / MLX (macOS)", "vendor": "the vendor's own SDK",
}

Rule = tuple[str, Severity, Note, Note]  # id, severity, message, fix
Check = Callable[[GPU, str, BuildContext], Rule | None]

_TRTLLM_LISTED = re.compile(r"\b(B200|GB200|B300|GB300|H100|H200|GH200|L20|L40S?|A100|DGX Spark)\b",
                            re.IGNORECASE)


def _cc(gpu: GPU) -> float:
    return float(gpu.compute_capability or 0)


def _vllm(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        if _cc(g) < 7.5:
            return ("cuda-cc-vllm", "error",
                    note("compat.software.vllm_cc", gpu=g.name, cc=g.compute_capability),
                    note("compat.fix.software.vllm_cc"))
        if _cc(g) >= 10:
            return ("cuda-blackwell-toolkit", "info",
                    note("compat.software.blackwell_toolkit", gpu=g.name),
                    note("compat.fix.software.blackwell_toolkit"))
        return None
    if fam == "rocm-cdna":
        isa = g.isa_target or "?"
        extra = note("compat.software.vllm_rocm_gfx950") if isa == "gfx950" else ""
        return ("rocm-support", "info",
                note("compat.software.vllm_rocm_instinct", gpu=g.name, isa=isa, extra=extra),
                note("compat.fix.software.vllm_rocm_instinct"))
    if fam == "rocm-rdna":
        isa = (g.isa_target or "").lower()
        if isa in ("gfx1100", "gfx1101", "gfx1200", "gfx1201", "gfx1150", "gfx1151"):
            return ("rocm-support", "info",
                    note("compat.software.vllm_rocm_radeon", gpu=g.name, isa=isa),
                    note("compat.fix.software.vllm_rocm_radeon"))
        return ("rocm-support", "warning",
                note("compat.software.vllm_rocm_unlisted", gpu=g.name,
                     isa=isa or note("compat.software.isa_unknown")),
                note("compat.fix.software.vllm_rocm_unlisted"))
    if fam == "xpu":
        return ("software-vllm-plugin", "info",
                note("compat.software.vllm_xpu"),
                note("compat.fix.software.vllm_xpu"))
    plugins = {"ascend": "vllm-ascend", "gaudi": "vllm-gaudi", "maca": "MetaX-MACA/vLLM-metax",
               "mlu": "Cambricon/vllm-mlu"}
    if fam in plugins:
        plug = plugins[fam]
        return ("domestic-software-stack" if g.domestic else "software-vllm-plugin", "info",
                note("compat.software.vllm_plugin", gpu=g.name, plugin=plug),
                note("compat.fix.software.vllm_plugin", plugin=plug))
    return ("software-vllm-unsupported", "warning",
            note("compat.software.vllm_unsupported", gpu=g.name, stack=STACK_NAMES[fam]),
            note("compat.fix.software.vllm_unsupported"))


def _trtllm(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam != "cuda":
        return ("software-trtllm-nvidia-only", "error",
                note("compat.software.trtllm_nvidia_only", gpu=g.name, vendor=g.vendor, stack=STACK_NAMES[fam]),
                note("compat.fix.software.trtllm_on_ascend" if fam == "ascend"
                     else "compat.fix.software.trtllm_nvidia_only"))
    if _TRTLLM_LISTED.search(g.name):
        return None
    if g.china_market and _cc(g) in (8.0, 9.0):
        return ("software-trtllm-support", "info",
                note("compat.software.trtllm_sibling", gpu=g.name, cc=g.compute_capability),
                note("compat.fix.software.trtllm_sibling"))
    return ("software-trtllm-support", "warning",
            note("compat.software.trtllm_unlisted", gpu=g.name),
            note("compat.fix.software.trtllm_unlisted"))


def _sglang(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        if _cc(g) < 7.5:
            return ("software-sglang-support", "warning",
                    note("compat.software.sglang_cc", gpu=g.name, cc=g.compute_capability),
                    note("compat.fix.software.sglang_cc"))
        return None
    if fam == "rocm-cdna":
        isa = g.isa_target or "?"
        if isa in ("gfx942", "gfx950"):
            return None
        return ("software-sglang-support", "info",
                note("compat.software.sglang_instinct", gpu=g.name, isa=isa),
                note("compat.fix.software.sglang_instinct"))
    if fam == "rocm-rdna":
        return ("rocm-support", "warning",
                note("compat.software.sglang_radeon", gpu=g.name),
                note("compat.fix.software.sglang_radeon"))
    if fam == "ascend":
        return ("software-sglang-support", "info",
                note("compat.software.sglang_ascend"),
                note("compat.fix.software.sglang_ascend"))
    if fam in ("gaudi", "xpu"):
        return ("software-sglang-support", "info",
                note(f"compat.software.sglang_{fam}", gpu=g.name),
                note("compat.fix.software.sglang_intel"))
    return ("software-sglang-support", "warning",
            note("compat.software.sglang_unsupported", gpu=g.name, stack=STACK_NAMES[fam]),
            note("compat.fix.software.sglang_unsupported"))


_LLAMACPP_BACKEND = {"cuda": "CUDA", "rocm-cdna": "HIP", "rocm-rdna": "HIP or "
                                                                      "Vulkan", "xpu": "SYCL or Vulkan",
                     "ascend": "CANN", "musa": "MUSA", "dtk": "HIP (DTK)", "metal": "Metal"}


def _llamacpp(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    backend = _LLAMACPP_BACKEND.get(fam)
    if backend is None:
        return ("software-llamacpp-backend", "warning",
                note("compat.software.llamacpp_no_backend", gpu=g.name, stack=STACK_NAMES[fam]),
                note("compat.fix.software.llamacpp_no_backend"))
    if fam == "cuda":
        return None
    return ("software-llamacpp-backend", "info",
            note("compat.software.llamacpp_backend", gpu=g.name, backend=backend),
            note("compat.fix.software.llamacpp_backend", backend=backend))


_TORCH_STACK = {"rocm-cdna": "ROCm wheels (download.pytorch.org/whl/rocm*) or rocm/pytorch images",
                "rocm-rdna": "ROCm wheels (check the ROCm Radeon compatibility matrix)",
                "xpu": "the 'xpu' device build", "gaudi": "habana_frameworks (Gaudi bridge)",
                "ascend": "torch_npu (CANN)", "mlu": "torch_mlu (Neuware)", "maca": "MetaX's MACA build",
                "musa": "torch_musa", "dtk": "Hygon's DTK build", "supa": "Biren's vendor build",
                "corex": "Iluvatar's CoreX build", "metal": "the 'mps' device (Metal Performance Shaders)",
                "vendor": "the vendor's own build"}


def _pytorch(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        return None
    return ("software-pytorch-backend", "info",
            note("compat.software.pytorch_backend", gpu=g.name, build=_TORCH_STACK[fam]),
            note("compat.fix.software.pytorch_backend"))


def _deepspeed(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        return None
    if fam in ("rocm-cdna", "rocm-rdna", "gaudi", "ascend", "xpu"):
        how = {"gaudi": "Habana's DeepSpeed fork", "ascend": "its NPU accelerator (torch_npu)",
               "xpu": "its XPU accelerator"}.get(fam, "ROCm builds")
        return ("software-deepspeed-backend", "info",
                note("compat.software.deepspeed_backend", gpu=g.name, how=how),
                note("compat.fix.software.deepspeed_backend"))
    return ("software-deepspeed-backend", "warning",
            note("compat.software.deepspeed_unsupported", gpu=g.name, stack=STACK_NAMES[fam]),
            note("compat.fix.software.deepspeed_unsupported"))


def _mindie(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "ascend":
        return None
    return ("software-mindie-ascend-only", "error",
            note("compat.software.mindie_ascend_only", gpu=g.name),
            note("compat.fix.software.mindie_ascend_only"))


def _megatron(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        return None
    alt = {"ascend": "MindSpeed (Ascend's Megatron "
                     "port)", "rocm-cdna": "AMD's ROCm Megatron-LM fork"}.get(fam)
    if alt:
        return ("software-megatron-backend", "info", note("compat.software.megatron_port", gpu=g.name, port=alt),
                note("compat.fix.software.megatron_port", port=alt))
    return ("software-megatron-backend", "warning",
            note("compat.software.megatron_unsupported", gpu=g.name, stack=STACK_NAMES[fam]),
            note("compat.fix.software.megatron_unsupported"))


def _jax(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        return None
    if fam in ("rocm-cdna", "xpu"):
        return ("software-jax-backend", "info", note("compat.software.jax_plugin", gpu=g.name),
                note("compat.fix.software.jax_plugin"))
    return ("software-jax-backend", "warning", note("compat.software.jax_unsupported", gpu=g.name),
            note("compat.fix.software.jax_unsupported"))


_FRAMEWORK_CHECKS: dict[str, Check] = {
    "vllm": _vllm, "tensorrt-llm": _trtllm, "sglang": _sglang, "llama.cpp": _llamacpp, "pytorch": _pytorch,
    "deepspeed": _deepspeed, "mindie": _mindie, "megatron": _megatron, "jax": _jax,
}


def check_software(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    seen: set[str] = set()
    fw = ctx.framework
    label = FRAMEWORK_LABELS.get(fw or "", fw or "")
    for card in ctx.cards:
        g = card.gpu
        if g.id in seen:
            continue
        seen.add(g.id)
        fam = stack_family(g)
        if fw:
            rule = _FRAMEWORK_CHECKS[fw](g, fam, ctx)
            if rule:
                rid, sev, message, fix = rule
                out.append(finding(rid, "software", sev, message, fix,
                                   {"framework": label, "stack": STACK_NAMES[fam],
                                    "compute_capability": g.compute_capability, "isa_target": g.isa_target},
                                   pitfall="chasing-peak-tflops" if sev == "error" else None,
                                   sources=["S-VLLM-CUDA", "S-VLLM-ROCM", "S-VLLM-PLUGINS", "S-TRTLLM-HW",
                                            "S-SGL-PLATFORMS", "S-LLAMACPP"]))
        if ctx.inp.cuda_required and fam != "cuda":
            out.append(finding(
                "software-cuda-required", "software", "error",
                note("compat.software.cuda_required", gpu=g.name, stack=STACK_NAMES[fam],
                     migration=note(f"compat.software.migration.{fam}")),
                note("compat.fix.software.cuda_required"),
                {"stack": STACK_NAMES[fam], "vendor": g.vendor}, pitfall="chasing-peak-tflops",
                sources=["seed §国产算力的现实考量"],
            ))
    out += _xinchuang(ctx)
    out += _os(ctx)
    if fw == "llama.cpp" and ctx.multi_gpu:
        out.append(finding(
            "software-llamacpp-layer-split", "software", "info",
            note("compat.software.llamacpp_layer_split"),
            note("compat.fix.software.llamacpp_layer_split"),
            {"decode_tok_s_1gpu": 127.74, "decode_tok_s_8gpu": 116.13},
            sources=["XiongjieDai/GPU-Benchmarks-on-LLM-Inference"],
        ))
    return out


def _xinchuang(ctx: BuildContext) -> list[Finding]:
    domestic = [c.gpu for c in ctx.cards if c.gpu.domestic]
    if not domestic:
        return []
    names = "、".join(dict.fromkeys(g.name for g in domestic))
    stacks = ", ".join(dict.fromkeys(STACK_NAMES[stack_family(g)] for g in domestic))
    plat = ctx.platform
    cpu = note("compat.software.xinchuang_cpu", platform=plat.name) if plat is not None and not plat.domestic else ""
    return [finding(
        "software-xinchuang", "software", "info",
        note("compat.software.xinchuang", gpus=names, stacks=stacks, cpu=cpu),
        note("compat.fix.software.xinchuang"),
        {"domestic_gpus": len(domestic), "domestic_cpu": plat.domestic if plat else None},
        sources=["seed §国产算力的现实考量", "hardware_rules §5 E16"],
    )]


def _os(ctx: BuildContext) -> list[Finding]:
    os_ = ctx.inp.os
    fw = ctx.framework
    if os_ in (None, "linux") or fw is None:
        return []
    label = FRAMEWORK_LABELS[fw]
    if os_ == "macos" and any(stack_family(c.gpu) == "cuda" for c in ctx.cards):
        return [finding(
            "software-os", "software", "error",
            note("compat.software.macos_cuda"),
            note("compat.fix.software.macos_cuda"), {"os": os_},
        )]
    if fw in LINUX_ONLY:
        return [finding(
            "os-linux-serving", "software", "warning",
            note("compat.software.linux_only", framework=label),
            note("compat.fix.software.linux_only"),
            {"os": os_, "framework": label}, sources=["S-VLLM-CUDA"],
        )]
    return []
