"""`gpu-advisor size --train`: training memory per GPU and host RAM (plugged into `size`).

`advisor.commands.size` defines the shared flags (--model/--params and architecture flags,
--precision, --gpus, --gpu, --json, --lang, --no-flash-attn) and calls :func:`add_arguments`
and :func:`run` of this module.
"""

from __future__ import annotations

import argparse

from advisor.commands.common import lang_of, print_json
from advisor.present import present_training
from knowledge import load_catalog
from tools.errors import ToolError
from tools.modelspec import ModelSpec, load_model_spec
from tools.result import Note, note
from tools.training_memory import (
    TrainingMemoryInput,
    estimate_training_memory,
    resolve_optimizer,
)

DEFAULT_SEQ = 2048


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("training (--train)")
    g.add_argument("--method", choices=["full", "lora", "qlora"], default="full", help="default full")
    g.add_argument(
        "--optimizer",
        default="adamw",
        help="adamw (default), adamw8bit, sgd, sgd-momentum; paged_adamw / paged_adamw_8bit",
    )
    g.add_argument(
        "--regime",
        choices=["mixed", "bf16", "fp32"],
        help="full fine-tuning: mixed precision (default), pure bf16, or fp32",
    )
    g.add_argument(
        "--grad-accounting",
        choices=["fp32", "half"],
        default="fp32",
        help="mixed precision: fp32 grads = 18 B/param (default) or half grads = 16 (ZeRO paper)",
    )
    g.add_argument("--zero", type=int, choices=[0, 1, 2, 3], default=0, help="DeepSpeed ZeRO stage (default 0)")
    g.add_argument("--fsdp", action="store_true", help="PyTorch FSDP full sharding (instead of --zero)")
    g.add_argument("--offload", action="store_true", help="offload optimizer states (and gradients) to CPU")
    g.add_argument("--offload-params", action="store_true", help="ZeRO-3/FSDP: offload weights too")
    g.add_argument("--no-zero-init", action="store_true", help="ZeRO-3 without zero.Init (more host RAM)")
    g.add_argument("--gpus-per-node", type=int, help="default min(gpus, 8)")
    g.add_argument("--tp", type=int, default=1, help="tensor-parallel size (default 1)")
    g.add_argument("--sequence-parallel", action="store_true", help="Megatron sequence parallelism with --tp")
    g.add_argument("--seq", type=int, help=f"sequence length (default {DEFAULT_SEQ}, stated)")
    g.add_argument("--micro-batch", type=int, default=1, help="micro-batch per GPU (default 1)")
    g.add_argument(
        "--recompute",
        choices=["none", "selective", "full"],
        help="activation recomputation (default: full for QLoRA, none otherwise)",
    )
    g.add_argument("--lora-rank", type=int, default=16, help="LoRA rank (default 16)")
    g.add_argument(
        "--lora-targets",
        default="all",
        help="comma list: all, attention, mlp, q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj",
    )
    g.add_argument("--fused-loss", action="store_true", help="chunked/fused cross-entropy (logits not stored)")


def _spec(args: argparse.Namespace) -> ModelSpec:
    if (args.model is None) == (args.params is None):
        raise ToolError("give --model NAME|PATH or --params SIZE (e.g. --params 70B)")
    if args.model is not None:
        return load_model_spec(args.model)
    return ModelSpec.custom(
        args.params,
        layers=args.layers,
        hidden_size=args.hidden,
        num_heads=args.heads,
        num_kv_heads=args.kv_heads,
        head_dim=args.head_dim,
        vocab_size=args.vocab,
    )


def _precisions(args: argparse.Namespace) -> tuple[str, str | None]:
    """(regime, base precision) from --regime / --precision."""
    prec = (args.precision or "").lower() or None
    if args.method == "full":
        if args.regime:
            return args.regime, None
        if prec in (None, "mixed", "amp", "bf16", "fp16", "bfloat16", "float16"):
            return "mixed", None
        if prec in ("fp32", "float32"):
            return "fp32", None
        raise ToolError(
            f"full fine-tuning runs in mixed precision, pure bf16 or fp32, not {args.precision!r}",
            suggestions=["--regime mixed", "--regime bf16", "--method qlora for a 4-bit base"],
        )
    if args.regime:
        raise ToolError("--regime applies to full fine-tuning; LoRA/QLoRA take the base as --precision")
    return "mixed", prec


def run(args: argparse.Namespace) -> int:
    spec = _spec(args)
    optimizer, paged = resolve_optimizer(args.optimizer)
    regime, base = _precisions(args)
    notes: list[Note] = []
    seq = args.seq or getattr(args, "context", None)
    if seq is None:
        seq = DEFAULT_SEQ
        notes.append(note("cli.seq_not_given", tokens=DEFAULT_SEQ))
    gpu = load_catalog().gpu(args.gpu) if args.gpu else None
    inp = TrainingMemoryInput(
        model=spec,
        method=args.method,
        regime=regime,
        grad_accounting=args.grad_accounting,
        optimizer=optimizer,
        paged_optimizer=True if paged else None,
        base_precision=base,
        lora_rank=args.lora_rank,
        lora_targets=tuple(t for t in args.lora_targets.split(",") if t.strip()),
        zero_stage=args.zero,
        fsdp=args.fsdp,
        offload_optimizer=args.offload,
        offload_params=args.offload_params,
        zero_init=not args.no_zero_init,
        gpus=args.gpus,
        gpus_per_node=args.gpus_per_node,
        tp=args.tp,
        sequence_parallel=args.sequence_parallel,
        seq=seq,
        micro_batch=args.micro_batch,
        recompute=args.recompute,
        flash_attention=not getattr(args, "no_flash_attn", False),
        fused_loss=args.fused_loss,
        gpu=gpu,
    )
    result = estimate_training_memory(inp)
    result.assumptions[:0] = notes
    if args.json:
        print_json(result)
    else:
        print(present_training(result, lang_of(args)).text())
    return 0
