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
        raise ToolError(f"unknown framework {name!r}", suggestions=list(FRAMEWORK_LABELS.values()))
    return key


def stack_family(gpu: GPU) -> str:
    """The software stack a GPU runs: 'cuda', 'rocm-cdna', 'rocm-rdna', 'gaudi', 'xpu', 'ascend', 'mlu',
    'maca', 'musa', 'dtk', 'supa', 'corex'."""
    v = gpu.vendor
    if v == "NVIDIA":
        return "cuda"
    if v == "AMD":
        isa = (gpu.isa_target or "").lower()
        return "rocm-rdna" if isa.startswith("gfx1") or gpu.tier.value != "datacenter" else "rocm-cdna"
    if v == "Intel":
        return "gaudi" if "gaudi" in (gpu.name + gpu.architecture).lower() else "xpu"
    return {"Huawei": "ascend", "Cambricon": "mlu", "MetaX": "maca", "Moore Threads": "musa", "Hygon": "dtk",
            "Biren": "supa", "Iluvatar CoreX": "corex"}[v]


STACK_NAMES = {
    "cuda": "CUDA", "rocm-cdna": "ROCm "
                                 "(Instinct)", "rocm-rdna": "ROCm (Radeon)", "gaudi": "Intel Gaudi software",
    "xpu": "oneAPI / Intel XPU", "ascend": "CANN (Ascend)", "mlu": "Cambricon Neuware", "maca": "MetaX MACA",
    "musa": "Moore Threads MUSA", "dtk": "Hygon DTK (HIP-compatible)", "supa": "Biren BIRENSUPA",
    "corex": "Iluvatar CoreX SDK",
}

# Migration cost of CUDA-dependent code, per stack (en, zh).
MIGRATION: dict[str, tuple[str, str]] = {
    "rocm-cdna": (
        "HIP mirrors the CUDA API: PyTorch code runs unchanged (torch.cuda maps to HIP), custom kernels are "
        "converted with hipify and re-tuned, CUDA-only libraries need their ROCm ports (FlashAttention "
        "CK/Triton, bitsandbytes ROCm build); budget days to weeks per custom kernel.",
        "HIP 与 CUDA API 对应：PyTorch 代码基本无需修改（torch.cuda 映射到 HIP），自定义 kernel 用 hipify 转"
        "换后需重新调优，仅支持 CUDA 的库需换成 ROCm 版本（FlashAttention 的 CK/Triton 实现、bitsandbytes "
        "ROCm 版）；每个自定义 kernel 需数天到数周。",
    ),
    "rocm-rdna": (
        "HIP mirrors the CUDA API, but Radeon (RDNA) is a secondary ROCm target: many CUDA-only libraries "
        "have no RDNA build; expect to hipify custom kernels and to patch or replace libraries.",
        "HIP 与 CUDA API 对应，但 Radeon（RDNA）是 ROCm 的次要目标：许多仅支持 CUDA 的库没有 RDNA 版本，"
        "自定义 kernel 需 hipify 转换，部分库需打补丁或替换。",
    ),
    "dtk": (
        "Hygon DTK is HIP-compatible: hipify-converted code and ROCm-style PyTorch builds work, at a cost "
        "similar to ROCm; check DTK versions against the PyTorch/vLLM builds Hygon ships.",
        "海光 DTK 兼容 HIP：经 hipify 转换的代码和 ROCm 风格的 PyTorch 可用，迁移成本与 ROCm 相近；请核对海光"
        "提供的 PyTorch/vLLM 版本与 DTK 版本。",
    ),
    "ascend": (
        "No CUDA: PyTorch runs through torch_npu (device 'npu'), custom CUDA kernels must be rewritten in "
        "Ascend C (or Triton-Ascend), CUDA-only libraries (FlashAttention, bitsandbytes, xformers, apex) "
        "need NPU equivalents such as npu_fusion_attention; plan weeks to months with vendor support.",
        "没有 CUDA：PyTorch 通过 torch_npu 运行（设备 'npu'），自定义 CUDA kernel 需用 Ascend C（或 "
        "Triton-Ascend）重写，仅支持 CUDA 的库（FlashAttention、bitsandbytes、xformers、apex）需换成 NPU 等价"
        "实现（如 npu_fusion_attention）；需数周到数月并依赖厂商支持。",
    ),
    "mlu": (
        "No CUDA: PyTorch via torch_mlu (Neuware), custom kernels rewritten in BANG C; CUDA-only libraries "
        "need Cambricon ports; plan weeks to months.",
        "没有 CUDA：PyTorch 通过 torch_mlu（Neuware）运行，自定义 kernel 需用 BANG C 重写，仅支持 CUDA 的库需"
        "寒武纪移植版；需数周到数月。",
    ),
    "maca": (
        "MetaX MACA offers CUDA-like APIs: much code recompiles with the MACA toolchain, but CUDA-only "
        "binaries and libraries need MetaX builds; validate every custom kernel.",
        "沐曦 MACA 提供类 CUDA 接口：多数代码可用 MACA 工具链重新编译，但仅有 CUDA 二进制的库需沐曦版本；每个"
        "自定义 kernel 都需验证。",
    ),
    "musa": (
        "Moore Threads MUSA is CUDA-like (the musify tool converts sources, PyTorch via torch_musa); "
        "CUDA-only binaries need MUSA builds; the ecosystem is young.",
        "摩尔线程 MUSA 类似 CUDA（musify 工具转换源码，PyTorch 通过 torch_musa 运行）；仅有 CUDA 二进制的库需"
        " MUSA 版本，生态尚新。",
    ),
    "corex": (
        "Iluvatar CoreX aims at CUDA source compatibility: recompile with the CoreX SDK, then validate "
        "custom kernels and libraries one by one.",
        "天数智芯 CoreX 以 CUDA 源码兼容为目标：用 CoreX SDK 重新编译，再逐个验证自定义 kernel 和依赖库。",
    ),
    "supa": (
        "No CUDA: Biren BIRENSUPA needs kernels rewritten and vendor framework builds.",
        "没有 CUDA：壁仞 BIRENSUPA 需重写 kernel，并使用厂商提供的框架版本。",
    ),
    "gaudi": (
        "No CUDA: PyTorch via the Gaudi bridge (habana_frameworks), custom CUDA kernels become TPC kernels; "
        "CUDA-only libraries have no Gaudi build.",
        "没有 CUDA：PyTorch 通过 Gaudi 桥接（habana_frameworks）运行，自定义 CUDA kernel 需改写为 TPC "
        "kernel；仅支持 CUDA 的库没有 Gaudi 版本。",
    ),
    "xpu": (
        "No CUDA: Intel GPUs run SYCL/oneAPI; SYCLomatic converts CUDA sources, PyTorch uses the 'xpu' "
        "device; CUDA-only libraries need replacements.",
        "没有 CUDA：Intel GPU 使用 SYCL/oneAPI；SYCLomatic 可转换 CUDA 源码，PyTorch 使用 'xpu' 设备；仅支持 "
        "CUDA 的库需替换。",
    ),
}

Rule = tuple[str, Severity, str, str, str, str]  # id, severity, en, zh, fix, fix_zh
Check = Callable[[GPU, str, BuildContext], Rule | None]

_TRTLLM_LISTED = re.compile(r"\b(B200|GB200|B300|GB300|H100|H200|GH200|L20|L40S?|A100|DGX Spark)\b",
                            re.IGNORECASE)


def _cc(gpu: GPU) -> float:
    return float(gpu.compute_capability or 0)


def _vllm(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        if _cc(g) < 7.5:
            return ("cuda-cc-vllm", "error",
                    f"Current vLLM needs compute capability ≥ 7.5; {g.name} is CC {g.compute_capability} "
                    "(V100-class support ended after v0.14).",
                    f"当前 vLLM 要求计算能力 ≥ 7.5；{g.name} 为 CC {g.compute_capability}（V100 类显卡在 "
                    "v0.14 之后不再支持）。",
                    "Pin vLLM ≤ 0.14, or serve with llama.cpp / SGLang / TGI, or use a Turing+ GPU.",
                    "固定使用 vLLM ≤ 0.14，或改用 llama.cpp / SGLang / TGI，或换用 Turing 及以上显卡。")
        if _cc(g) >= 10:
            return ("cuda-blackwell-toolkit", "info",
                    f"{g.name} (Blackwell) needs CUDA ≥ 12.8 builds of vLLM and PyTorch (B300/GB300: CUDA 13 "
                    "preferred).",
                    f"{g.name}（Blackwell）需要基于 CUDA ≥ 12.8 构建的 vLLM 和 PyTorch（B300/GB300 建议 CUDA "
                    "13）。",
                    "Install the cu128/cu130 wheels or the vendor's Docker images.",
                    "安装 cu128/cu130 版本的 wheel 或使用官方 Docker 镜像。")
        return None
    if fam == "rocm-cdna":
        isa = g.isa_target or "?"
        extra = " MI350/MI355X (gfx950) need ROCm ≥ 7.0." if isa == "gfx950" else ""
        return ("rocm-support", "info",
                f"vLLM supports {g.name} ({isa}) on ROCm ≥ 6.3; the prebuilt ROCm wheels are for Python 3.12 "
                f"only (other versions silently fall back to the CUDA wheel).{extra}",
                f"vLLM 在 ROCm ≥ 6.3 上支持 {g.name}（{isa}）；预编译 ROCm wheel 仅支持 Python 3.12（其他版本"
                "会静默装成 CUDA 版）。"
                + ("MI350/MI355X（gfx950）需要 ROCm ≥ 7.0。" if extra else ""),
                "Use Python 3.12 or AMD's rocm/vllm Docker "
                "images.", "使用 Python 3.12 或 AMD 的 rocm/vllm Docker 镜像。")
    if fam == "rocm-rdna":
        isa = (g.isa_target or "").lower()
        if isa in ("gfx1100", "gfx1101", "gfx1200", "gfx1201", "gfx1150", "gfx1151"):
            return ("rocm-support", "info",
                    f"vLLM supports {g.name} ({isa}) on ROCm (Radeon RX 7900 / RX 9000 class); wheels are "
                    "Python 3.12 only, and AWQ/GPTQ kernels are not available on AMD in vLLM (use FP8 or "
                    "GGUF).",
                    f"vLLM 在 ROCm 上支持 {g.name}（{isa}，RX 7900 / RX 9000 类）；wheel 仅支持 Python 3.12，"
                    "且 vLLM 在 AMD 上不支持 AWQ/GPTQ kernel（可用 FP8 或 GGUF）。",
                    "Use Python 3.12 / the ROCm Docker image.", "使用 Python 3.12 或 ROCm Docker 镜像。")
        return ("rocm-support", "warning",
                f"{g.name} ({isa or 'unknown ISA'}) is not on vLLM's ROCm list (gfx90a/942/950, gfx1100/1101,"
                " gfx1200/1201).",
                f"{g.name}（{isa or 'ISA 未知'}）不在 vLLM 的 ROCm 支持列表中（gfx90a/942/950、gfx1100/1101、"
                "gfx1200/1201）。",
                "Use llama.cpp (HIP or Vulkan) instead.", "改用 llama.cpp（HIP 或 Vulkan 后端）。")
    if fam == "xpu":
        return ("software-vllm-plugin", "info",
                "vLLM runs on Intel Arc / Data Center GPUs through its XPU backend (oneAPI 2025.x, Python "
                "3.12).",
                "vLLM 通过 XPU 后端支持 Intel Arc / 数据中心 GPU（oneAPI 2025.x，Python 3.12）。",
                "Follow vLLM's XPU install guide or Intel's LLM-Scaler "
                "images.", "按 vLLM XPU 安装指南或使用 Intel LLM-Scaler 镜像。")
    plugins = {"ascend": "vllm-ascend", "gaudi": "vllm-gaudi", "maca": "MetaX-MACA/vLLM-metax",
               "mlu": "Cambricon/vllm-mlu"}
    if fam in plugins:
        plug = plugins[fam]
        return ("domestic-software-stack" if g.domestic else "software-vllm-plugin", "info",
                f"vLLM reaches {g.name} only through the out-of-tree plugin {plug}; it tracks upstream with "
                "a lag, and not every model, quantisation or feature is covered.",
                f"vLLM 只能通过树外插件 {plug} 支持 {g.name}；插件版本滞后于上游，并非所有模型、量化格式和特"
                "性都支持。",
                f"Install {plug} matching your vLLM version (or the vendor image) and check its model list.",
                f"安装与 vLLM 版本匹配的 {plug}（或厂商镜像），并核对其支持的模型列表。")
    return ("software-vllm-unsupported", "warning",
            f"vLLM has no listed backend or plugin for {g.name} ({STACK_NAMES[fam]}); only vendor forks "
            "exist.",
            f"vLLM 没有 {g.name}（{STACK_NAMES[fam]}）的官方后端或插件，只有厂商自维护的分支。",
            "Ask the vendor for its validated vLLM fork/image, or use the vendor's own serving stack.",
            "向厂商索取经过验证的 vLLM 分支/镜像，或使用厂商自己的推理框架。")


def _trtllm(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam != "cuda":
        return ("software-trtllm-nvidia-only", "error",
                f"TensorRT-LLM runs only on NVIDIA GPUs; {g.name} is {g.vendor} ({STACK_NAMES[fam]}).",
                f"TensorRT-LLM 只支持 NVIDIA GPU；{g.name} 属于 {g.vendor}（{STACK_NAMES[fam]}）。",
                "Use vLLM or SGLang on this hardware"
                + (" (or MindIE on Ascend)." if fam == "ascend" else ", or choose NVIDIA hardware."),
                "在该硬件上改用 vLLM 或 "
                "SGLang" + ("（昇腾可用 MindIE）。" if fam == "ascend" else "，或选用 NVIDIA 硬件。"))
    if _TRTLLM_LISTED.search(g.name):
        return None
    if g.china_market and _cc(g) in (8.0, 9.0):
        return ("software-trtllm-support", "info",
                f"{g.name} is not on TensorRT-LLM's hardware list, but shares the architecture (CC "
                f"{g.compute_capability}) of listed A100/H100 parts and runs the same kernels.",
                f"{g.name} 不在 TensorRT-LLM 的硬件列表中，但与列表中的 A100/H100 架构相同（CC "
                f"{g.compute_capability}），可运行相同 kernel。",
                "Build engines as for the listed sibling.", "按同架构的列表型号构建引擎。")
    return ("software-trtllm-support", "warning",
            f"{g.name} is not on TensorRT-LLM's supported-hardware list (Blackwell B200/B300, Hopper "
            "H100/H200, Ada L20/L40/L40S, Ampere A100): community support only.",
            f"{g.name} 不在 TensorRT-LLM 官方支持列表（Blackwell B200/B300、Hopper H100/H200、Ada "
            "L20/L40/L40S、Ampere A100）中，仅有社区支持。",
            "Expect to build engines yourself; vLLM/SGLang are the safer choice on this card.",
            "需要自行构建引擎；在该卡上 vLLM/SGLang 更稳妥。")


def _sglang(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        if _cc(g) < 7.5:
            return ("software-sglang-support", "warning",
                    f"SGLang's kernels target Turing (CC 7.5) and newer; {g.name} is CC "
                    f"{g.compute_capability}.",
                    f"SGLang 的 kernel 面向 Turing（CC 7.5）及以上；{g.name} 为 CC {g.compute_capability}。",
                    "Use llama.cpp or an older vLLM on this card.", "在该卡上改用 llama.cpp 或旧版 vLLM。")
        return None
    if fam == "rocm-cdna":
        isa = g.isa_target or "?"
        if isa in ("gfx942", "gfx950"):
            return None
        return ("software-sglang-support", "info",
                "SGLang's AMD reference platform is MI300X; sgl-kernel is built for gfx942/gfx950, so "
                f"{g.name} ({isa}) depends on the ROCm image's coverage.",
                f"SGLang 的 AMD 参考平台为 MI300X；sgl-kernel 只为 gfx942/gfx950 构建，{g.name}（{isa}）取决"
                "于 ROCm 镜像的覆盖情况。",
                "Test with AMD's SGLang ROCm image first.", "先用 AMD 的 SGLang ROCm 镜像测试。")
    if fam == "rocm-rdna":
        return ("rocm-support", "warning",
                f"SGLang does not officially support Radeon/RDNA ({g.name}): sgl-kernel builds only for "
                "gfx942/gfx950; a community patch package (sglang-radeon-rdna3) exists for RDNA3.",
                f"SGLang 官方不支持 Radeon/RDNA（{g.name}）：sgl-kernel 只为 gfx942/gfx950 构建；RDNA3 只有社"
                "区补丁包（sglang-radeon-rdna3）。",
                "Use vLLM (ROCm) or llama.cpp on Radeon "
                "cards.", "Radeon 显卡请改用 vLLM（ROCm）或 llama.cpp。")
    if fam == "ascend":
        return ("software-sglang-support", "info",
                "SGLang supports Ascend NPUs with CANN ≥ 8.3.RC2 and Python 3.11 (images for Atlas 800I A2 / "
                "A3).",
                "SGLang 支持昇腾 NPU，需 CANN ≥ 8.3.RC2 和 Python 3.11（提供 Atlas 800I A2 / A3 镜像）。",
                "Use the SGLang Ascend image that matches your CANN "
                "version.", "使用与 CANN 版本匹配的 SGLang 昇腾镜像。")
    if fam in ("gaudi", "xpu"):
        return ("software-sglang-support", "info",
                f"SGLang runs on {g.name} through Intel's "
                f"{'Gaudi (Habana docs)' if fam == 'gaudi' else 'XPU'} backend.",
                f"SGLang 通过 Intel {'Gaudi（Habana 文档）' if fam == 'gaudi' else 'XPU'} 后端支持 {g.name}"
                "。",
                "Follow Intel's SGLang guide for this device.", "按 Intel 针对该设备的 SGLang 指南部署。")
    return ("software-sglang-support", "warning",
            f"SGLang lists no backend for {g.name} ({STACK_NAMES[fam]}).",
            f"SGLang 没有 {g.name}（{STACK_NAMES[fam]}）的后端。",
            "Use the vendor's serving stack or its vLLM "
            "plugin/fork.", "使用厂商自己的推理框架或其 vLLM 插件/分支。")


_LLAMACPP_BACKEND = {"cuda": "CUDA", "rocm-cdna": "HIP", "rocm-rdna": "HIP or "
                                                                      "Vulkan", "xpu": "SYCL or Vulkan",
                     "ascend": "CANN", "musa": "MUSA", "dtk": "HIP (DTK)"}


def _llamacpp(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    backend = _LLAMACPP_BACKEND.get(fam)
    if backend is None:
        return ("software-llamacpp-backend", "warning",
                f"llama.cpp has no backend for {g.name} ({STACK_NAMES[fam]}); it would run on the CPU, or on "
                "Vulkan only if the driver exposes it.",
                f"llama.cpp 没有 {g.name}（{STACK_NAMES[fam]}）的后端，只能在 CPU 上运行，或在驱动支持 "
                "Vulkan 时使用 Vulkan。",
                "Use the vendor's own inference stack (or its vLLM "
                "plugin).", "使用厂商自己的推理框架（或其 vLLM 插件）。")
    if fam == "cuda":
        return None
    return ("software-llamacpp-backend", "info",
            f"llama.cpp runs on {g.name} through its {backend} backend (build with that backend enabled).",
            f"llama.cpp 可通过 {backend} 后端在 {g.name} 上运行（编译时启用该后端）。",
            f"Build llama.cpp with the {backend} backend.", f"编译 llama.cpp 时启用 {backend} 后端。")


_TORCH_STACK = {"rocm-cdna": "ROCm wheels (download.pytorch.org/whl/rocm*) or rocm/pytorch images",
                "rocm-rdna": "ROCm wheels (check the ROCm Radeon compatibility matrix)",
                "xpu": "the 'xpu' device build", "gaudi": "habana_frameworks (Gaudi bridge)",
                "ascend": "torch_npu (CANN)", "mlu": "torch_mlu (Neuware)", "maca": "MetaX's MACA build",
                "musa": "torch_musa", "dtk": "Hygon's DTK build", "supa": "Biren's vendor build",
                "corex": "Iluvatar's CoreX build"}


def _pytorch(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        return None
    return ("software-pytorch-backend", "info",
            f"PyTorch on {g.name} comes from {_TORCH_STACK[fam]}, not the default CUDA wheel; pin the "
            "versions the vendor validates.",
            f"{g.name} 上的 PyTorch 需使用 {_TORCH_STACK[fam]}，而不是默认的 CUDA 版本；请固定厂商验证过的版"
            "本。",
            "Install the vendor's PyTorch build and check extension libraries one by one.",
            "安装厂商提供的 PyTorch 版本，并逐个核对扩展库。")


def _deepspeed(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        return None
    if fam in ("rocm-cdna", "rocm-rdna", "gaudi", "ascend", "xpu"):
        how = {"gaudi": "Habana's DeepSpeed fork", "ascend": "its NPU accelerator (torch_npu)",
               "xpu": "its XPU accelerator"}.get(fam, "ROCm builds")
        return ("software-deepspeed-backend", "info",
                f"DeepSpeed runs on {g.name} through {how}; fused CUDA ops (e.g. FusedAdam, some ZeRO "
                "kernels) may fall back to slower paths.",
                f"DeepSpeed 可通过 {how} 在 {g.name} 上运行；部分融合 CUDA 算子（如 FusedAdam、部分 ZeRO "
                "kernel）可能退化为较慢实现。",
                "Use the vendor-validated DeepSpeed version.", "使用厂商验证过的 DeepSpeed 版本。")
    return ("software-deepspeed-backend", "warning",
            f"DeepSpeed has no upstream accelerator for {g.name} ({STACK_NAMES[fam]}).",
            f"DeepSpeed 上游没有 {g.name}（{STACK_NAMES[fam]}）的加速器后端。",
            "Use the vendor's training framework or its DeepSpeed "
            "fork.", "使用厂商的训练框架或其 DeepSpeed 分支。")


def _mindie(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "ascend":
        return None
    return ("software-mindie-ascend-only", "error",
            f"MindIE is Huawei's inference engine for Ascend NPUs only; it does not run on {g.name}.",
            f"MindIE 是华为面向昇腾 NPU 的推理引擎，不能在 {g.name} 上运行。",
            "Use vLLM / SGLang / TensorRT-LLM on this GPU, or choose Ascend hardware.",
            "在该卡上改用 vLLM / SGLang / TensorRT-LLM，或选用昇腾硬件。")


def _megatron(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        return None
    alt = {"ascend": "MindSpeed (Ascend's Megatron "
                     "port)", "rocm-cdna": "AMD's ROCm Megatron-LM fork"}.get(fam)
    if alt:
        return ("software-megatron-backend", "info", f"Megatron-LM on {g.name} means {alt}.",
                f"在 {g.name} 上使用 Megatron-LM 需借助 {alt}。", f"Use {alt}.", f"使用 {alt}。")
    return ("software-megatron-backend", "warning", f"Megatron-LM has no port for {g.name} "
                                                    f"({STACK_NAMES[fam]}).",
            f"Megatron-LM 没有 {g.name}（{STACK_NAMES[fam]}）的移植版本。",
            "Use the vendor's training framework.", "使用厂商的训练框架。")


def _jax(g: GPU, fam: str, ctx: BuildContext) -> Rule | None:
    if fam == "cuda":
        return None
    if fam in ("rocm-cdna", "xpu"):
        return ("software-jax-backend", "info", f"JAX on {g.name} needs the vendor's plugin build.",
                f"在 {g.name} 上运行 JAX 需要厂商的插件版"
                "本。", "Install the vendor JAX plugin.", "安装厂商的 JAX 插件。")
    return ("software-jax-backend", "warning", f"JAX has no supported backend for {g.name}.",
            f"JAX 不支持 {g.name}"
            "。", "Port to PyTorch with the vendor's build.", "改用厂商提供的 PyTorch 版本。")


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
                rid, sev, en, zh, fix, fix_zh = rule
                out.append(finding(rid, "software", sev, en, zh, fix, fix_zh,
                                   {"framework": label, "stack": STACK_NAMES[fam],
                                    "compute_capability": g.compute_capability, "isa_target": g.isa_target},
                                   pitfall="chasing-peak-tflops" if sev == "error" else None,
                                   sources=["S-VLLM-CUDA", "S-VLLM-ROCM", "S-VLLM-PLUGINS", "S-TRTLLM-HW",
                                            "S-SGL-PLATFORMS", "S-LLAMACPP"]))
        if ctx.inp.cuda_required and fam != "cuda":
            en_cost, zh_cost = MIGRATION[fam]
            out.append(finding(
                "software-cuda-required", "software", "error",
                f"The code depends on CUDA, but {g.name} runs {STACK_NAMES[fam]}, not CUDA. {en_cost}",
                f"代码依赖 CUDA，而 {g.name} 使用的是 {STACK_NAMES[fam]}，不是 CUDA。{zh_cost}",
                "Choose NVIDIA hardware, or budget the port (inventory every custom kernel and CUDA-only "
                "library, then prototype on one card before buying the rest).",
                "选用 NVIDIA 硬件，或为迁移预留预算（清点所有自定义 kernel 和仅支持 CUDA 的库，先用一张卡做原"
                "型验证再批量采购）。",
                {"stack": STACK_NAMES[fam], "vendor": g.vendor}, pitfall="chasing-peak-tflops",
                sources=["seed §国产算力的现实考量"],
            ))
    out += _xinchuang(ctx)
    out += _os(ctx)
    if fw == "llama.cpp" and ctx.multi_gpu:
        out.append(finding(
            "software-llamacpp-layer-split", "software", "info",
            "llama.cpp splits layers across GPUs by default: memory adds up, decode speed does not "
            "(Llama-3-8B Q4_K_M measured 127.7 → 116.1 tok/s on 1 → 8 × RTX 4090).",
            "llama.cpp 默认按层把模型切分到多卡：显存可以叠加，但解码速度不会提升（Llama-3-8B Q4_K_M 实测 1 "
            "→ 8 张 RTX 4090 从 127.7 降到 116.1 tok/s）。",
            "For more tokens/s across GPUs use a tensor-parallel server (vLLM/SGLang) on identical GPUs.",
            "若要多卡提升吞吐，请在相同型号显卡上使用张量并行推理框架（vLLM/SGLang）。",
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
    cpu_en = cpu_zh = ""
    if plat is not None and not plat.domestic:
        cpu_en = (f" The CPU platform ({plat.name}) is not a domestic one; 信创 tenders usually also require "
                  "Kunpeng, Hygon or Phytium CPUs.")
        cpu_zh = f"当前 CPU 平台（{plat.name}）不是国产平台；信创项目通常还要求鲲鹏、海光或飞腾 CPU。"
    return [finding(
        "software-xinchuang", "software", "info",
        f"Domestic accelerators ({names}) run {stacks}. Inference on them is production-ready for mainstream "
        "models; large-scale training and the newest models lag, and moving CUDA code costs engineering "
        "time." + cpu_en,
        f"国产加速卡（{names}）使用 {stacks}。主流模型的推理已可用于生产，但大规模训练和最新模型的支持仍滞"
        "后，从 CUDA 迁移需要投入工程时间。" + cpu_zh,
        "For 信创 compliance check the vendor's certified lists (CPU, OS such as openEuler / Kylin / UOS, "
        "framework and model versions) and run a pilot with your own model first.",
        "为满足信创要求，请核对厂商的兼容认证清单（CPU、openEuler / 麒麟 / 统信等操作系统、框架和模型版本），"
        "并先用自己的模型做试点。",
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
            "macOS has no NVIDIA drivers or CUDA; these GPUs cannot be used from macOS.",
            "macOS 没有 NVIDIA 驱动和 CUDA，无法在 macOS 上使用这些显卡。",
            "Run Linux on the machine.", "请在该机器上安装 Linux。", {"os": os_},
        )]
    if fw in LINUX_ONLY:
        return [finding(
            "os-linux-serving", "software", "warning",
            f"{label} is Linux-only; on Windows it runs only inside WSL2 (with some loss in multi-GPU and "
            "I/O).",
            f"{label} 仅支持 Linux；在 Windows 上只能通过 WSL2 运行（多卡和 I/O 有一定损失）。",
            "Install Linux (Ubuntu LTS) or use WSL2; llama.cpp runs natively on Windows.",
            "安装 Linux（Ubuntu LTS）或使用 WSL2；llama.cpp 可原生运行于 Windows。",
            {"os": os_, "framework": label}, sources=["S-VLLM-CUDA"],
        )]
    return []
