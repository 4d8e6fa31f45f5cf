"""`gpu-advisor check`: will this build work? Power, lanes, slots, cooling, software, memory."""

from __future__ import annotations

import argparse
from typing import Any

from advisor.commands.common import add_lang_flag, domain_errors, finite_float, lang_of, print_json
from advisor.planner import default_context
from advisor.present import present_check
from tools.compat import BuildInput, GPUCount, SlotLayout, check_build, parse_gpu_arg
from tools.units import GB


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
    p.add_argument("--psu-w", type=finite_float, help="total PSU watts")
    p.add_argument("--psu-efficiency", type=finite_float, default=0.9, help="PSU efficiency at load (default 0.9)")
    p.add_argument("--chassis", choices=["tower", "rack", "open-frame"])
    p.add_argument("--mains", help="wall circuit: 120v-15a, 120v-20a, 220v-10a, 230v-16a, '230V 16A' …")
    p.add_argument("--workload", choices=["training", "inference", "scientific"])
    p.add_argument("--precision", help="bf16, fp16, fp8, fp4, int8, int4/awq, Q4_K_M, fp64 …")
    p.add_argument("--framework", help="PyTorch, vLLM, TensorRT-LLM, SGLang, llama.cpp, DeepSpeed, MindIE …")
    p.add_argument("--cuda-required", action="store_true", help="the code depends on CUDA")
    p.add_argument("--model", help="model for the memory fit (needs --workload)")
    p.add_argument("--context", type=_positive, help="tokens per sequence (default 8192; 4096 from 8 concurrent "
                                                     "sequences, as the chat sizes a service)")
    p.add_argument("--concurrency", type=_positive, default=1, help="concurrent sequences (default 1)")
    p.add_argument("--method", choices=["full", "lora", "qlora"], default="full", help="training method")
    p.add_argument("--parallelism", choices=["tensor", "data", "pipeline"], help="multi-GPU split")
    p.add_argument("--os", choices=["linux", "windows", "macos"])
    p.add_argument("--nvme", type=int, help="NVMe drives")
    p.add_argument("--ram-gb", type=finite_float, help="system RAM in GB")
    p.add_argument("--slots", type=_positive, help="x16 slots on the board")
    p.add_argument("--slot-spacing", type=_positive, default=2, help="positions between x16 slots (default "
                                                                     "2)")
    p.add_argument("--case-length-mm", type=finite_float, help="case's maximum GPU length")
    p.add_argument("--power-limit-w", type=finite_float, help="per-card power limit (nvidia-smi -pl)")
    p.add_argument("--problem-gb", type=finite_float, help="scientific: working set in GB")
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
        framework=args.framework, cuda_required=args.cuda_required, model=args.model,
        context=args.context or default_context(args.concurrency),
        concurrency=args.concurrency, method=args.method, parallelism=args.parallelism, os=args.os,
        nvme_drives=args.nvme, system_ram_gb=args.ram_gb,
        slots=SlotLayout(count=args.slots, spacing=args.slot_spacing) if args.slots else None,
        case_max_gpu_length_mm=args.case_length_mm,
        problem_bytes=int(args.problem_gb * GB) if args.problem_gb else None,
    )


@domain_errors
def _run(args: argparse.Namespace) -> int:
    report = check_build(build_input(args))
    if args.json:
        print_json(report)
    else:
        print(present_check(report, lang_of(args)).text())
    return 0
