"""`gpu-advisor size`: memory needed to run a model (inference), per GPU, with the formulas.

Training (``size --train``) plugs in through :func:`add_training_arguments` and
:func:`run_training`: if a module ``advisor.commands.size_train`` exists it must define
``add_arguments(parser)`` (the training-only flags: --method, --optimizer, --zero, --offload,
--seq, --micro-batch, --recompute …) and ``run(args) -> int``. The shared flags
(--model, --params and architecture flags, --precision, --gpus, --gpu, --json, --lang) are
defined here once.
"""

from __future__ import annotations

import argparse
import importlib
import re
from typing import Any

from advisor.commands.common import add_lang_flag, domain_errors, fail, finite_float, lang_of, print_json
from advisor.present import present_inference
from knowledge import UnknownNameError
from knowledge.checkpoints import checkpoint
from knowledge.names import ENGINES
from knowledge.resolve import shown_name
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.modelspec import ModelSpec, load_model_spec
from tools.result import Note, note
from tools.units import GiB

DEFAULT_CONTEXT = 4096


def register(sub: Any) -> None:
    p = sub.add_parser(
        "size",
        help="memory to run (or train) a model, per GPU",
        description="Memory per GPU for inference: weights, KV cache, activations and overhead, "
        "with the engine's budget (vLLM, llama.cpp, transformers).",
    )
    add_model_arguments(p)
    add_inference_arguments(p)
    add_training_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object (bytes)")
    add_lang_flag(p)
    p.set_defaults(func=_run)


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """--model / --params and the architecture flags, shared by inference and training."""
    g = p.add_argument_group("model")
    g.add_argument("--model", help="catalog name, or a local .gguf file, config.json or model folder")
    g.add_argument("--params", type=parse_params, help="custom model size, e.g. 70B, 1.5B, 800M")
    g.add_argument("--layers", type=int, help="custom model: transformer layers")
    g.add_argument("--hidden", type=int, help="custom model: hidden size")
    g.add_argument("--heads", type=int, help="custom model: attention heads")
    g.add_argument("--kv-heads", type=int, help="custom model: KV heads (GQA)")
    g.add_argument("--head-dim", type=int, help="custom model: head dimension")
    g.add_argument("--vocab", type=int, help="custom model: vocabulary size")
    p.add_argument("--precision", help="weights: fp16, bf16, fp8, int8, int4/awq/gptq, nf4, Q4_K_M, Q8_0 …")
    p.add_argument("--gpus", type=int, default=1, help="number of GPUs (default 1)")
    p.add_argument("--gpu", help="catalog GPU for the fit check, e.g. 'H100', 'RTX 4090'")


def add_inference_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("inference")
    g.add_argument("--context", type=int, help=f"tokens per sequence (default {DEFAULT_CONTEXT}, stated)")
    g.add_argument("--batch", type=int, default=1, help="concurrent sequences (default 1)")
    g.add_argument("--kv-dtype", help="KV cache: fp16, bf16, fp8 (vLLM), q8_0, q4_0 (llama.cpp)")
    g.add_argument(
        "--engine", choices=list(ENGINES), help="default: llamacpp for GGUF, else vllm"
    )
    g.add_argument("--parallel", choices=["tp", "pp"], help="tensor parallel or layer split (multi-GPU)")
    g.add_argument("--gpu-memory-utilization", type=finite_float, default=0.92, help="vLLM reservation (default 0.92)")
    g.add_argument("--max-num-batched-tokens", type=int, default=8192, help="vLLM (default 8192)")
    g.add_argument("--max-num-seqs", type=int, default=256, help="vLLM (default 256)")
    g.add_argument("--mem-fraction-static", type=finite_float,
                   help="SGLang's static pool (weights + KV cache) per GPU (default: SGLang's own rule for the GPU)")
    g.add_argument("--vllm-profile", choices=["sampler", "all-tokens"], default="sampler",
                   help="vLLM's start-up profile run: 'sampler' (default; vLLM 0.6 V0 and current V1 compute "
                        "logits for the sampled tokens only) or 'all-tokens' (vLLM 0.7-era V1 ran the LM head "
                        "over every profiled token, leaving less for the KV cache)")
    g.add_argument("--n-ubatch", type=int, default=512, help="llama.cpp physical batch (default 512)")
    g.add_argument("--n-gpu-layers", type=int, help="llama.cpp -ngl (default: all that fit)")
    g.add_argument("--no-flash-attn", action="store_true", help="llama.cpp without flash attention")
    g.add_argument("--gpu-memory-gib", type=finite_float, help="override: GiB each GPU shows to the engine")


def add_training_arguments(p: argparse.ArgumentParser) -> None:
    """Hook for the training half: `--train` plus the flags of advisor.commands.size_train."""
    p.add_argument("--train", action="store_true", help="training memory instead of inference")
    mod = _training_module()
    if mod is not None:
        mod.add_arguments(p)


def _training_module() -> Any:
    try:
        return importlib.import_module("advisor.commands.size_train")
    except ModuleNotFoundError as exc:
        if exc.name != "advisor.commands.size_train":
            raise
        return None


def parse_params(text: str) -> float:
    """'70B' → 70.0 (billions); also '800M', '1.5T', '7e9' and plain billions '70'."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?\d+)?)\s*([kKmMbBtT]?)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"cannot read a parameter count from {text!r} (try 70B or 800M)")
    value, unit = float(m.group(1)), m.group(2).upper()
    if unit == "":
        return value / 1e9 if value >= 1e6 else value
    return value * {"K": 1e-6, "M": 1e-3, "B": 1.0, "T": 1e3}[unit]


@domain_errors
def _run(args: argparse.Namespace) -> int:
    if getattr(args, "train", False):
        return run_training(args)
    return run_inference(args)


def run_training(args: argparse.Namespace) -> int:
    mod = _training_module()
    if mod is None:
        return fail("size --train is not available in this build yet")
    return int(mod.run(args) or 0)


def _engine(args: argparse.Namespace) -> str:
    if args.engine:
        return args.engine
    model = (args.model or "").lower()
    named = checkpoint(args.model or "")  # 'qwen3:32b-q4_K_M' names a GGUF checkpoint
    prec = (args.precision or (named.precision if named else "")).upper()
    if model.endswith(".gguf") or re.match(r"^(Q\d|IQ\d)", prec):
        return "llamacpp"
    return "vllm"


def _uncatalogued(args: argparse.Namespace) -> tuple[ModelSpec, Note] | None:
    """``--model NAME --params SIZE`` for a model the catalog lacks: a custom model of that size under that name,
    with the note that says so; None when the name is a catalog model (or a path), which needs no size."""
    try:
        load_model_spec(args.model)
    except UnknownNameError as exc:
        spec = ModelSpec.custom(args.params, name=args.model, layers=args.layers, hidden_size=args.hidden,
                                num_heads=args.heads, num_kv_heads=args.kv_heads, head_dim=args.head_dim,
                                vocab_size=args.vocab)
        said = note("cli.uncatalogued.sized_from_params", name=shown_name(args.model), params_b=args.params,
                    suggestions=", ".join(exc.suggestions) or "-")
        return spec, said
    return None


def run_inference(args: argparse.Namespace) -> int:
    notes: list[Note] = []
    custom = _uncatalogued(args) if args.model is not None and args.params is not None else None
    if custom is not None:
        notes.append(custom[1])
    elif (args.model is None) == (args.params is None):
        return fail("give --model NAME|PATH or --params SIZE (e.g. --params 70B)")
    context = args.context
    if context is None:
        context = DEFAULT_CONTEXT
        notes.append(note("cli.context_not_given", tokens=DEFAULT_CONTEXT))
    engine = _engine(args)
    if not args.engine:
        notes.append(note("cli.engine_not_given", engine=engine))
    arch = {} if custom else dict(model=args.model, params_b=args.params, layers=args.layers, hidden_size=args.hidden,
                                  num_heads=args.heads, num_kv_heads=args.kv_heads, head_dim=args.head_dim,
                                  vocab_size=args.vocab)
    inp = InferenceMemoryInput(
        **arch,
        spec=custom[0] if custom else None,
        precision=args.precision,
        kv_dtype=args.kv_dtype,
        context=context,
        batch=args.batch,
        gpus=args.gpus,
        parallel=args.parallel,
        gpu=args.gpu,
        gpu_memory_bytes=int(args.gpu_memory_gib * GiB) if args.gpu_memory_gib else None,
        engine=engine,
        gpu_memory_utilization=args.gpu_memory_utilization,
        max_num_batched_tokens=args.max_num_batched_tokens,
        max_num_seqs=args.max_num_seqs,
        profile_logits_all_tokens=args.vllm_profile == "all-tokens",
        mem_fraction_static=args.mem_fraction_static,
        n_ubatch=args.n_ubatch,
        n_gpu_layers=args.n_gpu_layers,
        flash_attention=not args.no_flash_attn,
    )
    result = estimate_inference_memory(inp)
    result.assumptions[:0] = notes
    if args.json:
        print_json(result)
    else:
        print(present_inference(result, lang_of(args)).text())
    return 0
