"""`gpu-advisor check`: will this build work? Power, lanes, slots, cooling, software, memory."""

from __future__ import annotations

import argparse
from typing import Any

from advisor.commands.common import add_lang_flag, domain_errors, lang_of, print_json
from knowledge.messages import render
from tools.compat import BuildInput, BuildReport, Finding, GPUCount, SlotLayout, check_build, parse_gpu_arg
from tools.units import GB

SEVERITY_LABEL = {
    "en": {"error": "ERROR", "warning": "WARN ", "info": "INFO "},
    "zh": {"error": "错误", "warning": "警告", "info": "提示"},
}


class _GpuAction(argparse.Action):
    """--gpu NAME (repeatable); '4090x2' or '2x 4090' carries its own count."""

    def __call__(self, parser: Any, ns: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        items = list(getattr(ns, "gpu_items", None) or [])
        items.append([values, None])
        ns.gpu_items = items


class _CountAction(argparse.Action):
    """--count N applies to the --gpu just before it."""

    def __call__(self, parser: Any, ns: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        items = list(getattr(ns, "gpu_items", None) or [])
        if not items:
            parser.error("--count must follow a --gpu")
        if items[-1][1] is not None:
            parser.error(f"--gpu {items[-1][0]} already has a count")
        items[-1][1] = values
        ns.gpu_items = items


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be ≥ 1")
    return value


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="check a planned build: power, PCIe, slots, cooling, software, memory",
        description="Compatibility check of a GPU build. Mixes: --gpu 4090 --count 2 --gpu 3090 --count 1 "
        "(or --gpu 4090x2).",
    )
    p.add_argument("--gpu", action=_GpuAction, required=True, metavar="NAME",
                   help="GPU name or alias, repeatable; '4090x2' sets the count")
    p.add_argument("--count", action=_CountAction, type=_positive, metavar="N", help="cards of the preceding "
                                                                                     "--gpu")
    p.add_argument("--cpu", "--platform", dest="platform", help="CPU / platform, e.g. 'Ryzen 9 9950X', 'EPYC "
                                                                "9004'")
    p.add_argument("--psu-w", type=float, help="total PSU watts")
    p.add_argument("--psu-efficiency", type=float, default=0.9, help="PSU efficiency at load (default 0.9)")
    p.add_argument("--chassis", choices=["tower", "rack", "open-frame"])
    p.add_argument("--mains", help="wall circuit: 120v-15a, 120v-20a, 220v-10a, 230v-16a, '230V 16A' …")
    p.add_argument("--workload", choices=["training", "inference", "scientific"])
    p.add_argument("--precision", help="bf16, fp16, fp8, fp4, int8, int4/awq, Q4_K_M, fp64 …")
    p.add_argument("--framework", help="PyTorch, vLLM, TensorRT-LLM, SGLang, llama.cpp, DeepSpeed, MindIE …")
    p.add_argument("--cuda-required", action="store_true", help="the code depends on CUDA")
    p.add_argument("--model", help="model for the memory fit (needs --workload)")
    p.add_argument("--context", type=_positive, default=8192, help="tokens per sequence (default 8192)")
    p.add_argument("--concurrency", type=_positive, default=1, help="concurrent sequences (default 1)")
    p.add_argument("--method", choices=["full", "lora", "qlora"], default="full", help="training method")
    p.add_argument("--parallelism", choices=["tensor", "data", "pipeline"], help="multi-GPU split")
    p.add_argument("--os", choices=["linux", "windows", "macos"])
    p.add_argument("--nvme", type=int, help="NVMe drives")
    p.add_argument("--ram-gb", type=float, help="system RAM in GB")
    p.add_argument("--slots", type=_positive, help="x16 slots on the board")
    p.add_argument("--slot-spacing", type=_positive, default=2, help="positions between x16 slots (default "
                                                                     "2)")
    p.add_argument("--case-length-mm", type=float, help="case's maximum GPU length")
    p.add_argument("--power-limit-w", type=float, help="per-card power limit (nvidia-smi -pl)")
    p.add_argument("--problem-gb", type=float, help="scientific: working set in GB")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_lang_flag(p)
    p.set_defaults(func=_run)


def build_input(args: argparse.Namespace) -> BuildInput:
    gpus: list[GPUCount] = []
    for name, count in args.gpu_items:
        g = parse_gpu_arg(name, count)
        if args.power_limit_w:
            g = GPUCount(gpu=g.gpu, count=g.count, power_limit_w=args.power_limit_w)
        gpus.append(g)
    return BuildInput(
        gpus=gpus, platform=args.platform, psu_w=args.psu_w, psu_efficiency=args.psu_efficiency,
        chassis=args.chassis, mains=args.mains, workload=args.workload, precision=args.precision,
        framework=args.framework, cuda_required=args.cuda_required, model=args.model, context=args.context,
        concurrency=args.concurrency, method=args.method, parallelism=args.parallelism, os=args.os,
        nvme_drives=args.nvme, system_ram_gb=args.ram_gb,
        slots=SlotLayout(count=args.slots, spacing=args.slot_spacing) if args.slots else None,
        case_max_gpu_length_mm=args.case_length_mm,
        problem_bytes=int(args.problem_gb * GB) if args.problem_gb else None,
    )


def finding_lines(f: Finding, lang: str, indent: str = "") -> list[str]:
    """Two lines per finding: '[ERROR] power-psu-headroom: message' and '→ fix'."""
    zh = lang == "zh"
    label = SEVERITY_LABEL[lang][f.severity]
    return [f"{indent}[{label}] {f.id}: {f.message_zh if zh else f.message_en}",
            f"{indent}        → {f.fix_zh if zh else f.fix}"]


def report_text(report: BuildReport, lang: str) -> str:
    zh = lang == "zh"
    t = report.totals
    n_err = len(report.errors)
    if zh:
        head = "✓ 配置可行（无错误）" if report.ok else f"✗ 配置有 {n_err} 个错误"
    else:
        head = "✓ Build OK (no errors)" if report.ok else f"✗ Build has {n_err} error(s)"
    lines = [head]
    lanes = f"{t.lanes_needed}/{t.lanes_available}" if t.lanes_available is not None else f"{t.lanes_needed}/?"
    widths = "/".join(f"x{x}" for x in t.link_widths) or "—"
    if zh:
        lines.append(f"  功耗：显卡 {t.gpu_power_w:,.0f} W + CPU {t.cpu_power_w:,.0f} W + 平台 "
                     f"{t.platform_overhead_w:,.0f} W = {t.system_power_w:,.0f} W；建议电源 ≥ "
                     f"{t.recommended_psu_w:,.0f} W；墙端约 {t.wall_draw_w:,.0f} W"
                     + (f"（回路上限 {t.continuous_limit_w:,.0f} W）" if t.continuous_limit_w else ""))
        lines.append(f"  PCIe 通道 需要/可用 {lanes}，链路宽度 {widths}；显存合计 "
                     f"{t.total_vram_label_gb:,.0f} GB；建议内存 ≥ {t.recommended_system_ram_gb:,.0f} GB；"
                     f"CPU ≥ {t.cpu_cores_needed} 核")
    else:
        lines.append(f"  Power: GPUs {t.gpu_power_w:,.0f} W + CPU {t.cpu_power_w:,.0f} W + platform "
                     f"{t.platform_overhead_w:,.0f} W = {t.system_power_w:,.0f} W; PSU ≥ "
                     f"{t.recommended_psu_w:,.0f} W; wall ~{t.wall_draw_w:,.0f} W"
                     + (f" (circuit limit {t.continuous_limit_w:,.0f} W)" if t.continuous_limit_w else ""))
        lines.append(f"  PCIe lanes needed/available {lanes}, link widths {widths}; VRAM total "
                     f"{t.total_vram_label_gb:,.0f} GB; RAM ≥ {t.recommended_system_ram_gb:,.0f} GB; "
                     f"CPU ≥ {t.cpu_cores_needed} cores")
    lines.append("")
    for f in report.findings:
        lines += finding_lines(f, lang, "  ")
    if report.assumptions:
        lines.append("")
        lines.append("假设：" if zh else "Assumptions:")
        lines += [f"  - {render(a, lang)}" for a in report.assumptions]
    return "\n".join(lines)


@domain_errors
def _run(args: argparse.Namespace) -> int:
    report = check_build(build_input(args))
    if args.json:
        print_json(report)
    else:
        print(report_text(report, lang_of(args)))
    return 0
