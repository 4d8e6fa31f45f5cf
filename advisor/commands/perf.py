"""`gpu-advisor perf`: decode/prefill speed, serving concurrency, training time, FP64 problems."""

from __future__ import annotations

import argparse
from typing import Any

from advisor.commands.common import add_lang_flag, domain_errors, finite_float, lang_of, print_json
from advisor.present import (
    combine,
    notes,
    present_decode,
    present_fp64,
    present_prefill,
    present_serving,
    present_training_time,
)
from knowledge import load_catalog
from knowledge.messages import msg
from knowledge.names import ENGINES
from tools.efficiency import PREFILL_MFU
from tools.errors import ToolError
from tools.modelspec import ModelSpec, load_model_spec
from tools.perf import (
    HOST_BANDWIDTH_GBS,
    DecodeInput,
    PrefillInput,
    ServingInput,
    estimate_decode,
    estimate_prefill,
    estimate_serving,
    speed_engine,
)
from tools.result import Note, note
from tools.scientific import ScientificInput, estimate_fp64
from tools.training_time import TrainingTimeInput, estimate_training_time, parse_count

DEFAULT_CONTEXT = 4096


def register(sub: Any) -> None:
    p = sub.add_parser(
        "perf",
        help="speed: decode/prefill tokens/s, serving, training time, FP64 problems",
        description="Inference speed (decode tokens/s with a range, prefill tokens/s, time to first token), "
        "continuous-batching concurrency (--serve), training time (--train) or an FP64 problem (--fp64).",
    )
    p.add_argument("--model", help="catalog name, or a local .gguf / config.json / model folder")
    p.add_argument("--params", help="custom model size instead of --model, e.g. 70B")
    p.add_argument("--gpu", help="catalog GPU, e.g. 'RTX 4090', 'H100'")
    p.add_argument("--count", type=int, default=1, help="number of GPUs, all nodes together (default 1)")
    p.add_argument("--nodes", type=int, default=None,
                   help="machines the GPUs are spread over: tensor parallel inside each, layers between "
                        "(default: nodes of 8 past 8 GPUs)")
    p.add_argument("--precision", help="weights: bf16, fp16, fp8, int8, int4, Q4_K_M … (default: native)")
    p.add_argument(
        "--parallel",
        choices=["layer", "tensor"],
        help="multi-GPU inference: layer split (llama.cpp) or tensor parallel (default by format)",
    )
    p.add_argument("--context", type=int, help=f"KV tokens per sequence while decoding (default {DEFAULT_CONTEXT})")
    p.add_argument("--prompt", type=int, help="prompt tokens for prefill/TTFT (default: --context)")
    p.add_argument("--batch", type=int, default=1, help="concurrent sequences (default 1)")
    p.add_argument("--kv-dtype", default=None, help="KV cache dtype (default fp16)")
    p.add_argument(
        "--mfu",
        type=finite_float,
        help=f"compute efficiency (default: prefill, fitted to published prompt speeds of the engine's kernel path; "
             f"compute-bound decode {PREFILL_MFU}; training, the median of published whole runs on that class of GPU)",
    )
    p.add_argument("--engine", choices=list(ENGINES),
                   help="inference engine (default: llama.cpp for GGUF, vLLM otherwise); decides the multi-GPU "
                        "split and how weights that do not fit the GPUs are used")
    p.add_argument("--host-bandwidth", type=finite_float, default=HOST_BANDWIDTH_GBS,
                   help=f"system RAM bandwidth in GB/s, for a model that does not fit the GPUs (default "
                        f"{HOST_BANDWIDTH_GBS:g}: dual-channel DDR5-5600)")
    p.add_argument("--serve", action="store_true", help="also continuous-batching throughput and concurrency")
    g = p.add_argument_group("training time (--train)")
    g.add_argument("--train", action="store_true", help="training time instead of inference speed")
    g.add_argument("--tokens", help="training tokens: 1.4T, 300B, 2e12")
    g.add_argument(
        "--recompute",
        choices=["none", "selective", "full"],
        default="none",
        help="full recomputation costs 8·N·D instead of 6·N·D",
    )
    g.add_argument("--price", type=finite_float, help="USD per GPU-hour (default: catalog rental price)")
    s = p.add_argument_group("FP64 scientific computing (--fp64)")
    s.add_argument("--fp64", choices=["lu", "gemm", "grid"], help="dense LU, dense GEMM, or a grid/stencil code")
    s.add_argument("--n", help="matrix order N (lu, gemm), e.g. 50000")
    s.add_argument("--cells", help="grid cells, e.g. 1e9")
    s.add_argument("--vars", type=int, default=1, help="doubles per grid cell (default 1)")
    s.add_argument("--levels", type=int, default=2, help="time levels kept (default 2)")
    s.add_argument("--steps", type=int, default=1, help="time steps (default 1)")
    s.add_argument("--flops-per-cell", type=finite_float, help="FP64 FLOPs per cell per step")
    s.add_argument("--efficiency", type=finite_float, help="share of FP64 peak (grid: of bandwidth)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_lang_flag(p)
    p.set_defaults(func=_run)


def _spec(args: argparse.Namespace) -> ModelSpec:
    if (args.model is None) == (args.params is None):
        raise ToolError("give --model NAME|PATH or --params SIZE (e.g. --params 70B)")
    if args.model is not None:
        return load_model_spec(args.model)
    return ModelSpec.custom(parse_count(args.params) / 1e9)


def _need(value: Any, flag: str, example: str) -> Any:
    if value is None:
        raise ToolError(f"{flag} is required here", suggestions=[f"{flag} {example}"])
    return value


@domain_errors
def _run(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    gpu = catalog.gpu(_need(args.gpu, "--gpu", "'RTX 4090'"))
    lang = lang_of(args)
    if args.fp64:
        return _fp64(args, gpu, lang)
    spec = _spec(args)
    if args.train:
        return _train(args, spec, gpu, lang)
    return _inference(args, spec, gpu, lang)


def _inference(args: argparse.Namespace, spec: ModelSpec, gpu: Any, lang: str) -> int:
    notes_cli: list[Note] = []
    precision = args.precision or spec.weight_precision or spec.native_dtype
    if not args.precision:
        notes_cli.append(note("cli.precision_not_given", precision=precision))
    context = args.context
    if context is None:
        context = DEFAULT_CONTEXT
        notes_cli.append(note("cli.context_not_given", tokens=DEFAULT_CONTEXT))
    prompt = args.prompt or context
    mfu = args.mfu if args.mfu is not None else PREFILL_MFU
    kv = args.kv_dtype or "fp16"
    decode = estimate_decode(
        DecodeInput(
            model=spec,
            gpu=gpu,
            count=args.count,
            nodes=args.nodes,
            parallel=args.parallel,
            precision=precision,
            kv_dtype=kv,
            context=context,
            batch=args.batch,
            mfu=mfu,
            engine=args.engine,
            host_bandwidth_gbs=args.host_bandwidth,
        )
    )
    prefill = estimate_prefill(
        PrefillInput(
            model=spec,
            gpu=gpu,
            count=args.count,
            nodes=args.nodes,
            parallel=args.parallel,
            precision=precision,
            prompt_tokens=prompt,
            batch=args.batch,
            mfu=args.mfu,
            engine=args.engine,
        )
    )
    serving = None
    if args.serve:
        serving = estimate_serving(
            ServingInput(
                model=spec,
                gpu=gpu,
                count=args.count,
                precision=precision,
                kv_dtype=args.kv_dtype,
                context=context,
                mfu=mfu,
            )
        )
    out = {
        "kind": "inference-speed",
        "model": spec.name,
        "gpu": gpu.name,
        "count": args.count,
        "precision": precision,
        "engine": speed_engine(precision, args.engine),
        "context": context,
        "prompt_tokens": prompt,
        "batch": args.batch,
        "decode_tokens_per_s": decode.tokens_per_s,
        "decode_tokens_per_s_range": list(decode.tokens_per_s_range),
        "per_sequence_tokens_per_s": decode.per_sequence_tokens_per_s,
        "prefill_tokens_per_s": prefill.tokens_per_s,
        "prefill_tokens_per_s_range": list(prefill.tokens_per_s_range),
        "ttft_s": prefill.ttft_s,
        "ttft_s_range": list(prefill.ttft_s_range),
        "decode": decode,
        "prefill": prefill,
        "serving": serving,
        "assumptions": notes_cli + decode.assumptions + [a for a in prefill.assumptions if a not in decode.assumptions],
        "warnings": list({str(w): w for w in  # one of each, in order (notes are not hashable)
                          decode.warnings + prefill.warnings + (serving.warnings if serving else [])}.values()),
    }
    if args.json:
        print_json(out)
        return 0
    group = args.count // decode.nodes
    split = msg(lang, f"present.perf.split_{decode.parallel}", count=group) if group > 1 else ""
    if decode.nodes > 1:
        split += msg(lang, "present.perf.split_nodes", nodes=decode.nodes)
    title = msg(lang, "present.perf.title", model=spec.name, precision=precision, gpu=gpu.name, split=split,
                context=f"{context:,}", batch=args.batch)
    parts = [present_decode(decode, lang), present_prefill(prefill, lang, prompt_tokens=prompt)]
    if serving:
        parts.append(present_serving(serving, lang, context=context))
    section = combine(title, parts)
    section.notes = notes(notes_cli, lang) + section.notes
    print(section.text())
    return 0


def _train(args: argparse.Namespace, spec: ModelSpec, gpu: Any, lang: str) -> int:
    tokens = parse_count(_need(args.tokens, "--tokens", "1.4T"))
    res = estimate_training_time(
        TrainingTimeInput(
            params=spec.active_params,
            tokens=tokens,
            gpu=gpu,
            count=args.count,
            mfu=args.mfu,
            recompute=args.recompute,
            price_per_gpu_hour=args.price,
            model_name=spec.name,
        )
    )
    if args.json:
        out = {"model": spec.name, "tokens": tokens, **res.model_dump(mode="json")}
        print_json(out)
        return 0
    section = present_training_time(res, lang, model=spec.name, tokens=tokens)
    section.notes = notes(list(spec.notes), lang) + section.notes
    print(section.text())
    return 0


def _fp64(args: argparse.Namespace, gpu: Any, lang: str) -> int:
    problem = {"lu": "dense-lu", "gemm": "dense-gemm", "grid": "grid"}[args.fp64]
    res = estimate_fp64(
        ScientificInput(
            gpu=gpu,
            count=args.count,
            problem=problem,
            n=int(parse_count(args.n)) if args.n else None,
            cells=parse_count(args.cells) if args.cells else None,
            variables=args.vars,
            time_levels=args.levels,
            steps=args.steps,
            flops_per_cell_step=args.flops_per_cell,
            efficiency=args.efficiency,
        )
    )
    if args.json:
        print_json(res)
        return 0
    print(present_fp64(res, lang, gpu=gpu.name).text())
    return 0
