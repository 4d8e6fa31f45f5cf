"""`gpu-advisor recommend`: ranked GPU configurations for a workload and budget, with what was ruled out."""

from __future__ import annotations

import argparse
from typing import Any

from advisor.commands.common import add_lang_flag, domain_errors, finite_float, lang_of, print_json
from advisor.planner import default_context
from advisor.present.recommend import TEXT_OPTIONS, present_recommend
from knowledge.messages import render
from tools.compat import parse_gpu_arg
from tools.recommend import Recommendation, RecommendInput, recommend
from tools.training_time import parse_count
from tools.units import GB


def _count(text: str) -> float:
    return parse_count(text)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "recommend",
        help="what to buy: ranked GPU configurations for a workload, budget and constraints",
        description="Ranks GPU × count configurations by fit, performance per price and compatibility, "
        "and explains the ones it ruled out.",
    )
    p.add_argument("--workload", choices=["inference", "training", "scientific"], required=True)
    p.add_argument("--model", help="catalog model (inference, training)")
    p.add_argument("--precision", help="inference weights (bf16, fp8, int8, int4/awq, Q4_K_M …) or training compute")
    p.add_argument("--context", type=int, help="tokens per sequence (default 8192; 4096 from 8 concurrent "
                                                "sequences, as the chat sizes a service)")
    p.add_argument("--concurrency", type=int, default=1, help="concurrent sequences (default 1)")
    p.add_argument("--target-tps", type=finite_float, help="inference: aggregate decode tokens/s wanted")
    p.add_argument("--method", choices=["full", "lora", "qlora"], help="training method (default lora)")
    p.add_argument("--dataset-tokens", type=_count, help="training tokens, e.g. 2B, 1.4T")
    p.add_argument("--deadline-hours", type=finite_float, help="training must finish within")
    p.add_argument("--code", help="scientific code (gromacs, vasp, openfoam …): its GPU builds, FP64 need and "
                                  "FP64 kind")
    p.add_argument("--no-fp64", action="store_true", help="scientific: FP64 not required")
    p.add_argument("--problem-gb", type=finite_float, help="scientific: working set in GB")
    p.add_argument("--matrix-n", type=int, help="scientific: dense N×N double LU")
    money = p.add_mutually_exclusive_group()
    money.add_argument("--budget-usd", type=finite_float)
    money.add_argument("--budget-cny", type=finite_float)
    p.add_argument("--cny-per-usd", type=finite_float, default=None, help="exchange rate (default 7.2)")
    p.add_argument("--vendor", action="append", default=[], help="allowed vendor, repeatable")
    p.add_argument("--cuda-required", action="store_true", help="the code depends on CUDA")
    p.add_argument("--domestic", action="store_true", help="domestic (信创) accelerators only")
    p.add_argument("--region", choices=["cn", "global", "any"], default=None,
                   help="where the cards are bought: cn (mainland China), global (elsewhere) or any; default: cn "
                        "with --budget-cny or --domestic, else any")
    p.add_argument("--framework", help="serving/training framework to check against")
    p.add_argument("--chassis", choices=["tower", "rack", "open-frame"])
    p.add_argument("--form-factor", choices=["pcie", "sxm", "oam", "module"])
    p.add_argument("--power-limit-w", type=finite_float, help="maximum wall draw")
    p.add_argument("--mains", help="wall circuit, e.g. 120v-15a, 230v-16a")
    p.add_argument("--have", action="append", default=[], metavar="GPU", help="GPUs you own, e.g. 3090x2")
    p.add_argument("--have-cpu", help="platform you already own")
    p.add_argument("--no-host-cost", action="store_true", help="compare GPU prices only")
    p.add_argument("--kwh-price", type=finite_float, help="electricity price per kWh (default 0.8 CNY / 0.15 USD)")
    p.add_argument("--duty-cycle", type=finite_float, default=1.0, help="share of the year at load (default 1.0)")
    p.add_argument("--limit", type=int, default=TEXT_OPTIONS, help="options shown in text output")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_lang_flag(p)
    p.set_defaults(func=_run)


def build_input(args: argparse.Namespace) -> RecommendInput:
    extra: dict[str, Any] = {}
    if args.cny_per_usd:
        extra["cny_per_usd"] = args.cny_per_usd
    if args.code:
        extra["code"] = args.code
    if args.no_fp64 or not args.code:  # with a code, its own FP64 need unless --no-fp64 says otherwise
        extra["fp64_required"] = not args.no_fp64
    return RecommendInput(
        workload=args.workload, model=args.model, precision=args.precision,
        context=args.context or default_context(args.concurrency),
        concurrency=args.concurrency, target_tokens_per_s=args.target_tps, method=args.method,
        dataset_tokens=args.dataset_tokens, deadline_hours=args.deadline_hours,
        problem_bytes=int(args.problem_gb * GB) if args.problem_gb else None, matrix_n=args.matrix_n,
        budget_usd=args.budget_usd, budget_cny=args.budget_cny, vendors=args.vendor,
        cuda_required=args.cuda_required, domestic_only=args.domestic, region=_region(args),
        framework=args.framework,
        chassis=args.chassis, form_factor=args.form_factor, power_limit_w=args.power_limit_w, mains=args.mains,
        existing_gpus=[parse_gpu_arg(h) for h in args.have], existing_platform=args.have_cpu,
        include_host_cost=not args.no_host_cost, kwh_price=args.kwh_price, duty_cycle=args.duty_cycle, **extra,
    )


def _region(args: argparse.Namespace) -> str | None:
    if args.region:
        return None if args.region == "any" else str(args.region)
    return "cn" if args.budget_cny is not None or args.domestic else None


def to_json(rec: Recommendation, lang: str) -> dict[str, Any]:
    """The JSON contract: options carry `why`, rejections `reason`, as text in the chosen language; the notes
    they render (message id and parameters) are kept as `why_note` and `reason_note`."""
    data = rec.model_dump(mode="json")
    for o in data["options"]:
        o["why_note"] = o["why"]
        o["why"] = render(o["why_note"], lang)
    for r in data["rejected"]:
        r["reason_note"] = r["reason"]
        r["reason"] = render(r["reason_note"], lang)
    return data


@domain_errors
def _run(args: argparse.Namespace) -> int:
    rec = recommend(build_input(args))
    lang = lang_of(args)
    if args.json:
        print_json(to_json(rec, lang))
    else:
        print(present_recommend(rec, lang, limit=args.limit).text())
    return 0
