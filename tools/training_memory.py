"""GPU and host memory of training: model states, activations, logits, overhead.

Model states per parameter (bytes), by regime, for AdamW:

* mixed precision (default): 2 half-precision working weights + 4 fp32 gradients + 12 for
  the optimizer (4 fp32 master weights + 8 for the two fp32 Adam moments) = **18 B/param**.
  This is the bf16 recipe of Megatron-LM (gradients accumulated in fp32 ``main_grad``),
  the accounting of llm-analysis and of DeepSpeed's ZeRO-3 estimator (18·P/N) and
  LLaMA-Factory's "full AMP 18·x GB". The ZeRO paper's **16 B/param** keeps the gradients in
  fp16 (2 + 2 + 12); choose it with ``grad_accounting="half"``.
* pure bf16: 2 weights + 2 grads + 4 (two bf16 moments), no master copy = 8 B/param.
* fp32: 4 + 4 + 8 = 16 B/param.

8-bit AdamW (bitsandbytes) stores both moments in 8 bits with one fp32 scale per 2048-value
block: 2 + 8/2048 B/param. SGD has no state; SGD with momentum one buffer (4 or 2 B).
LoRA/QLoRA freeze the base (bf16, or 4-bit NF4 for QLoRA with embeddings and lm_head kept in
bf16) and train fp32 adapters (PEFT's default) with fp32 gradients and states: 16 B per
trainable parameter with AdamW.

Sharding over the data-parallel group N (ZeRO stage / FSDP), with trainable parameters T
and frozen F: stage 1 shards the optimizer, stage 2 also the gradients, stage 3 and FSDP
also the weights plus a working set of gathered layers; DeepSpeed's ZeRO-2 additionally keeps
the 16-bit gradient partition until the step (its 2·P + 18·P/N). CPU offload moves optimizer
(and gradients) — or with ZeRO-3 also the weights — to host RAM. Host RAM follows DeepSpeed's
estimator (``tools.deepspeed_estimator``): what is offloaded, or what every rank materialises
while loading, times a 1.5 buffer factor. Activations come from
``tools.training_activations``.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge.schema import GPU
from tools.deepspeed_estimator import DEFAULT_BUFFER_FACTOR
from tools.devices import device_view
from tools.errors import ToolError
from tools.gpu_memory import engine_visible_bytes, inline_ecc_on
from tools.inputs import ToolInput
from tools.lora import largest_linear_params, lora_trainable_params, mlp_width, resolve_targets
from tools.modelspec import ModelSpec, check_tensor_parallel
from tools.precision import resolve_precision
from tools.result import MemoryBreakdown, Note, Term, note
from tools.training_activations import ActivationInput, Recompute, estimate_activations
from tools.units import GB, Bytes, GiB, MiB, Tokens

Method = Literal["full", "lora", "qlora"]
Regime = Literal["mixed", "bf16", "fp32"]
Optimizer = Literal["adamw", "adamw8bit", "sgd", "sgd-momentum"]

CUDA_CONTEXT_BYTES = 512 * MiB  # PyTorch CUDA context + cuBLAS workspace, typical on Ampere/Hopper
FRAGMENTATION = 0.05  # caching-allocator slack on the memory that comes and goes each step
# QLoRA's residual stream is fp32: PEFT's prepare_model_for_kbit_training casts the embedding and norms to fp32.
# IBM fms-acceleration's A100 reference runs (torch peak, Mistral-7B, 4,096 tokens, r 16): QLoRA at batch 4 and 8
# is 20.67 / 37.00 GB where LoRA is 26.70 / 38.74 GB; a bf16 stream leaves QLoRA 23–26 % short, fp32 within 3 %.
QLORA_RESIDUAL_BYTES = 4.0
BNB_BLOCK = 2048  # bitsandbytes 8-bit optimizer block size (one fp32 absmax per block)

OPTIMIZER_ALIASES = {
    "adam": "adamw",
    "adamw": "adamw",
    "adamw_torch": "adamw",
    "paged_adamw": "adamw",
    "paged-adamw": "adamw",
    "paged_adamw_32bit": "adamw",
    "adamw8bit": "adamw8bit",
    "adamw-8bit": "adamw8bit",
    "adamw_8bit": "adamw8bit",
    "adam8bit": "adamw8bit",
    "adamw_bnb_8bit": "adamw8bit",
    "paged_adamw_8bit": "adamw8bit",
    "paged-adamw8bit": "adamw8bit",
    "8bit": "adamw8bit",
    "sgd": "sgd",
    "sgd-momentum": "sgd-momentum",
    "sgd_momentum": "sgd-momentum",
    "momentum": "sgd-momentum",
}


def resolve_optimizer(name: str) -> tuple[str, bool]:
    """(canonical optimizer, paged?) from a name such as 'paged_adamw_8bit'."""
    key = name.strip().lower()
    if key not in OPTIMIZER_ALIASES:
        raise ToolError(note("error.training.unknown_optimizer", name=repr(name)),
                        suggestions=["adamw", "adamw8bit", "sgd", "sgd-momentum"])
    return OPTIMIZER_ALIASES[key], key.startswith("paged")


class TrainingMemoryInput(ToolInput):
    """One training configuration."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    model: ModelSpec
    method: Method = "full"
    regime: Regime = Field("mixed", description="full fine-tuning: mixed precision, pure bf16 or fp32")
    grad_accounting: Literal["fp32", "half"] = Field(
        "fp32", description="mixed precision: fp32 gradients (18 B/param) or half gradients (16, ZeRO paper)"
    )
    optimizer: Optimizer = "adamw"
    paged_optimizer: bool | None = Field(None, description="bitsandbytes paged optimizer; default on for QLoRA")
    base_precision: str | None = Field(None, description="frozen base for LoRA/QLoRA (bf16 / nf4 default)")
    lora_rank: int = Field(16, ge=1, le=4096)
    lora_targets: tuple[str, ...] = ("all",)
    zero_stage: int = Field(0, ge=0, le=3)
    fsdp: bool = Field(False, description="PyTorch FSDP FULL_SHARD (≈ ZeRO-3, one decoder block per unit)")
    offload_optimizer: bool = False
    offload_params: bool = False
    zero_init: bool = Field(True, description="ZeRO-3 zero.Init / FSDP meta-device init: no full copy per rank")
    gpus: int = Field(1, ge=1, le=100_000)
    gpus_per_node: int | None = Field(None, ge=1, le=64)
    tp: int = Field(1, ge=1)
    sequence_parallel: bool = False
    seq: int = Field(2048, ge=1, le=10_000_000)
    micro_batch: int = Field(1, ge=1, le=100_000)
    recompute: Recompute | None = Field(None, description="None: 'full' for LoRA and QLoRA, else 'none'")
    flash_attention: bool = True
    fused_loss: bool = Field(False, description="chunked/fused cross-entropy that never holds all logits")
    gpu: GPU | None = None
    cuda_context_bytes: int = Field(CUDA_CONTEXT_BYTES, ge=0)
    fragmentation: float = Field(FRAGMENTATION, ge=0, le=1)
    buffer_factor: float = Field(DEFAULT_BUFFER_FACTOR, ge=1.0, description="DeepSpeed host-RAM margin")


class TrainingMemoryResult(BaseModel):
    """Memory of one training configuration; bytes, per GPU unless named otherwise."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["training"] = "training"
    model: str
    method: Method
    regime: Regime
    optimizer: Optimizer
    zero_stage: int
    fsdp: bool
    gpus: int
    tp: int
    data_parallel: int
    total_bytes: Bytes = Field(description="sum over all GPUs")
    per_gpu_bytes: Bytes
    breakdown: MemoryBreakdown = Field(description="one GPU")
    cpu_bytes: Bytes = Field(description="host RAM per node (DeepSpeed accounting, ×buffer factor)")
    params: int
    trainable_params: int
    state_bytes_per_param: float = Field(description="unsharded model-state bytes per trainable parameter")
    seq: Tokens
    micro_batch: int
    recompute: Recompute
    terms: list[Term]
    assumptions: list[Note]
    warnings: list[Note]
    gpu: str | None = None
    gpu_memory_bytes: Bytes | None = None
    fits: bool | None = None
    headroom_bytes: Bytes | None = None
    kv_capacity_tokens: Tokens | None = Field(None, description="inference only; always None for training")
    max_concurrency: int | None = Field(
        None, description="with a GPU: largest micro-batch of `seq` tokens that fits (sequences per GPU)"
    )
    max_context_tokens: Tokens | None = Field(
        None, description="with a GPU: longest sequence that fits at this micro-batch (≤ the model's context)"
    )


class _States(BaseModel):
    """Bytes per parameter of each model-state component."""

    w: float  # working weights
    g: float  # gradients kept until the step
    o: float  # optimizer: master weights + moments
    half_grads: float = 0.0  # DeepSpeed ZeRO-2's extra 16-bit gradient partition
    explain: Note  # the sum spelled out, term by term


def _optimizer_state_bytes(opt: str, state_bytes: float) -> float:
    if opt == "adamw":
        return 2 * state_bytes
    if opt == "adamw8bit":
        return 2 * (1 + 4 / BNB_BLOCK)
    if opt == "sgd-momentum":
        return state_bytes
    return 0.0


def _states(inp: TrainingMemoryInput) -> _States:
    opt = inp.optimizer
    if inp.method != "full":  # fp32 adapters, fp32 grads, fp32 states
        o = _optimizer_state_bytes(opt, 4)
        return _States(w=4, g=4, o=o, explain=note("training.states.adapters", optimizer=opt, state=o))
    if inp.regime == "mixed":
        g = 4.0 if inp.grad_accounting == "fp32" else 2.0
        o = 4 + _optimizer_state_bytes(opt, 4)
        half = 2.0 if (g == 4 and inp.zero_stage == 2 and not inp.offload_optimizer) else 0.0
        return _States(
            w=2,
            g=g,
            o=o,
            half_grads=half,
            explain=note(f"training.states.mixed_{'fp32' if g == 4 else 'half'}", optimizer=opt, state=o - 4),
        )
    if inp.regime == "bf16":
        o = _optimizer_state_bytes(opt, 2)
        return _States(w=2, g=2, o=o, explain=note("training.states.bf16", optimizer=opt, state=o))
    o = _optimizer_state_bytes(opt, 4)
    return _States(w=4, g=4, o=o, explain=note("training.states.fp32", optimizer=opt, state=o))


def _frozen_bytes(spec: ModelSpec, method: str, base_precision: str | None) -> tuple[int, float, Note | None]:
    """(frozen bytes, bytes per frozen param, label) of the LoRA/QLoRA base; no label for full fine-tuning."""
    if method == "full":
        return 0, 0.0, None
    prec = resolve_precision(base_precision or ("nf4" if method == "qlora" else "bf16"))
    nbytes = spec.weight_bytes_at(prec.name)
    if prec.bits_per_weight >= 16 or prec.quantizes_embeddings:
        label = note("training.frozen.base", precision=prec.name)
    else:
        label = note("training.frozen.blocks", precision=prec.name, bits=prec.bits_per_weight)
    return nbytes, nbytes / spec.params, label


def _t(name: str, value: float, formula: Note, explain: Note, unit: str = "bytes") -> Term:
    return Term(name=name, value=round(value), unit=unit, formula=formula, explain=explain)


def _check(inp: TrainingMemoryInput) -> None:
    sharded = inp.zero_stage >= 1 or inp.fsdp
    if inp.offload_optimizer and not sharded:
        raise ToolError(note("error.training.offload_needs_sharding"), suggestions=["--zero 2 --offload"])
    if inp.offload_params and not (inp.zero_stage == 3 or inp.fsdp):
        raise ToolError(note("error.training.param_offload_needs_zero3"), suggestions=["--zero 3 --offload-params"])
    if inp.fsdp and inp.zero_stage not in (0, 3):
        raise ToolError(note("error.training.fsdp_and_zero"))
    if inp.gpus % inp.tp:
        raise ToolError(note("error.training.gpus_not_multiple_of_tp", gpus=inp.gpus, tp=inp.tp))
    if inp.method == "full" and inp.base_precision:
        raise ToolError(note("error.training.base_precision_full"))


FROZEN_BASE_SHARE = 0.7  # a frozen base taking more of one card than this leaves too little for the rest: shard it


def default_zero_stage(method: str, params: float, card_bytes: float, gpus: int) -> int:
    """ZeRO-3 when no sharding was said: full fine-tuning on several GPUs, or a LoRA / QLoRA base (16-bit / ~4.8-bit)
    that takes most of one card's memory; else 0 (data parallel, each GPU a full copy)."""
    base_bytes = params * (0.6 if method == "qlora" else 2.0)
    return 3 if gpus > 1 and (method in ("full", "pretrain") or base_bytes > FROZEN_BASE_SHARE * card_bytes) else 0


def estimate_training_memory(inp: TrainingMemoryInput, *, limits: bool = True) -> TrainingMemoryResult:
    """Per-GPU and host memory of a training configuration, term by term.

    With a GPU, ``limits`` also searches the largest micro-batch and sequence that fit
    (``max_concurrency``, ``max_context_tokens``); callers that only need the fit verdict (the
    recommender) pass ``limits=False`` and get None there.
    """
    split: list[Note] = []
    if inp.gpu is not None and inp.gpu.devices > 1:  # a package software splits trains as its devices
        d = inp.gpu.devices
        split = [note("inference.assume.devices", gpu=inp.gpu.name, devices=d, device_gb=inp.gpu.memory_gb / d,
                      packages=inp.gpus, count=inp.gpus * d,
                      visible_gib=engine_visible_bytes(device_view(inp.gpu))[0] / 2**30)]
        inp = inp.model_copy(update={"gpu": device_view(inp.gpu), "gpus": inp.gpus * d,
                                     "gpus_per_node": (inp.gpus_per_node or min(inp.gpus, 8)) * d})
    _check(inp)
    spec = inp.model
    check_tensor_parallel(spec, inp.tp)
    tp, gpus = inp.tp, inp.gpus
    dp = gpus // tp
    gpn = inp.gpus_per_node or min(gpus, 8)
    nodes = math.ceil(gpus / gpn)
    sharded3 = inp.zero_stage == 3 or inp.fsdp
    recompute: Recompute = inp.recompute or ("full" if inp.method in ("lora", "qlora") else "none")
    paged = inp.paged_optimizer if inp.paged_optimizer is not None else inp.method == "qlora"
    st = _states(inp)
    assumptions: list[Note] = [*split, *spec.notes]
    warnings: list[Note] = []
    terms: list[Term] = []

    lora = inp.method != "full"
    trainable = lora_trainable_params(spec, inp.lora_rank, inp.lora_targets) if lora else spec.params
    frozen_total, frozen_bpp, frozen_label = _frozen_bytes(spec, inp.method, inp.base_precision)
    t_rank = trainable / tp  # trainable params on one TP rank
    f_rank = frozen_total / tp

    # Largest module (DeepSpeed: per-module params, recurse=False — normally the embedding).
    largest = max(spec.embedding_params, largest_linear_params(spec)) / tp
    # A user-described shape may put more in its embeddings than the model holds: no negative blocks.
    emb_params = spec.embedding_params * (1 if spec.tie_word_embeddings else 2)
    block_params = max(0, spec.params - emb_params) / spec.layers / tp
    root_params = emb_params / tp

    # ---- weights, gradients, optimizer on one GPU --------------------------------------
    # FSDP CPUOffload(offload_params=True) moves parameters, gradients and the optimizer step.
    offload_opt = inp.offload_optimizer or (inp.fsdp and inp.offload_params)
    # FSDP with mixed precision shards the fp32 parameter itself (the master copy, counted in the
    # optimizer term); 16-bit copies exist only while a unit is gathered.
    fsdp_master = inp.fsdp and inp.method == "full" and inp.regime == "mixed"
    w_dp = dp if sharded3 else 1
    weights = (0.0 if fsdp_master else t_rank * st.w / w_dp) + f_rank / w_dp
    if inp.offload_params:
        weights = 0.0
    grads_div = dp if (inp.zero_stage >= 2 or inp.fsdp) else 1
    grads = 0.0 if offload_opt else t_rank * (st.g + st.half_grads) / grads_div
    opt_div = dp if (inp.zero_stage >= 1 or inp.fsdp) else 1
    optim = 0.0 if offload_opt else t_rank * st.o / opt_div

    working_w = working_g = 0.0
    half_w = 4 if (inp.method == "full" and inp.regime == "fp32") else 2
    if inp.zero_stage == 3:
        # DeepSpeed LLmem = 4·LL: gathered 16-bit params + 16-bit grads of the largest layer.
        working_w = largest * half_w
        working_g = largest * half_w if inp.method == "full" else 0.0
        ws_formula = note("training.formula.working_set_zero3", largest=largest)
    elif inp.fsdp:
        # Root unit (embeddings + lm_head) stays gathered; current + prefetched block gathered.
        frozen_or_w = half_w if inp.method == "full" else max(frozen_bpp, 0.5)
        working_w = (root_params + 2 * block_params) * frozen_or_w
        working_g = block_params * half_w if inp.method == "full" else 0.0
        ws_formula = note("training.formula.working_set_fsdp")
    weights += working_w
    grads += working_g
    per_dp = note("training.formula.per_dp", dp=dp)
    on_cpu = note("training.formula.on_cpu") if offload_opt else ""

    if inp.method == "full":
        terms.append(
            _t(
                "weights",
                weights,
                note("training.formula.weights", bytes=st.w, shard=per_dp if sharded3 else "",
                     gathered=note("training.formula.gathered") if working_w else ""),
                note("training.explain.weights"),
            )
        )
    else:
        terms.append(
            _t(
                "frozen base",
                f_rank / w_dp if not inp.offload_params else 0.0,
                note("training.formula.frozen", label=frozen_label or "", total=frozen_total,
                     tp=note("training.formula.per_tp") if tp > 1 else "", shard=per_dp if sharded3 else ""),
                note("training.explain.frozen_base"),
            )
        )
        terms.append(
            _t(
                "adapters",
                t_rank * st.w / w_dp if not inp.offload_params else 0.0,
                note("training.formula.adapters", trainable=trainable),
                note("training.explain.adapters", rank=inp.lora_rank,
                     targets=", ".join(resolve_targets(inp.lora_targets))),
            )
        )
    terms.append(
        _t(
            "gradients",
            grads,
            note("training.formula.states", bytes=st.g + st.half_grads, shard=per_dp if grads_div > 1 else "",
                 on_cpu=on_cpu),
            note("training.explain.gradients"),
        )
    )
    terms.append(
        _t(
            "optimizer",
            optim,
            note("training.formula.states", bytes=st.o, shard=per_dp if opt_div > 1 else "", on_cpu=on_cpu),
            note("training.explain.optimizer_master" if inp.method == "full" and inp.regime == "mixed"
                 else "training.explain.optimizer", optimizer=inp.optimizer),
        )
    )
    if working_w:
        terms.append(
            _t(
                "ZeRO-3/FSDP working set",
                working_w + working_g,
                ws_formula,
                note("training.explain.working_set"),
            )
        )

    # ---- activations ----------------------------------------------------------------
    elem = 4.0 if (inp.method == "full" and inp.regime == "fp32") else 2.0
    act = estimate_activations(
        ActivationInput(
            layers=spec.layers,
            hidden=spec.hidden_size,
            heads=spec.num_heads,
            kv_heads=spec.num_kv_heads,
            head_dim=spec.head_dim,
            intermediate=mlp_width(spec),
            vocab=spec.vocab_size,
            seq=inp.seq,
            micro_batch=inp.micro_batch,
            element_bytes=elem,
            residual_bytes=QLORA_RESIDUAL_BYTES if inp.method == "qlora" else None,
            tp=tp,
            sequence_parallel=inp.sequence_parallel,
            recompute=recompute,
            flash_attention=inp.flash_attention,
            experts_per_token=(spec.experts_per_token or 0) if spec.is_moe else 0,
            num_experts=spec.num_experts or 0,
            logits_copies=0.0 if inp.fused_loss else 2.0,
        )
    )
    terms.append(
        _t(
            "activations",
            act.layers_bytes + act.head_bytes,
            note("training.formula.activations", layers=act.layers_formula, per_layer=act.per_layer_formula,
                 per_layer_mib=act.per_layer_bytes / MiB),
            note("training.explain.activations_flash" if inp.flash_attention else "training.explain.activations",
                 recompute=note(f"recompute.{recompute}")),
        )
    )
    terms.append(
        _t(
            "logits",
            act.logits_bytes,
            act.logits_formula,
            note("training.explain.logits"),
        )
    )
    activations = act.total_bytes

    # ---- overhead -------------------------------------------------------------------
    frag = inp.fragmentation * (activations + grads)
    dequant = largest_linear_params(spec) / tp * 2 if inp.method == "qlora" else 0.0
    overhead = inp.cuda_context_bytes + frag + dequant
    terms.append(
        _t(
            "overhead",
            overhead,
            note("training.formula.overhead_dequant" if dequant else "training.formula.overhead",
                 context_mib=inp.cuda_context_bytes / MiB, fragmentation=inp.fragmentation),
            note("training.explain.overhead_dequant" if dequant else "training.explain.overhead"),
        )
    )

    breakdown = MemoryBreakdown(
        weights=round(weights),
        kv_cache=0,
        activations=round(activations),
        gradients=round(grads),
        optimizer=round(optim),
        overhead=round(overhead),
    )
    per_gpu = breakdown.total

    # ---- host RAM (per node), DeepSpeed accounting -----------------------------------
    load_bpp = 4.0 if inp.method == "full" else max(frozen_bpp, 2.0)
    if inp.zero_stage == 3 and inp.zero_init:
        load_floor, load_txt = largest * tp * load_bpp * gpn, note("training.formula.load_zero3", bpp=load_bpp)
    elif inp.fsdp and inp.zero_init:  # rank 0 loads, the others start on the meta device
        load_floor, load_txt = spec.params * load_bpp, note("training.formula.load_fsdp", bpp=load_bpp)
    else:
        load_floor, load_txt = spec.params * load_bpp * gpn, note("training.formula.load", bpp=load_bpp)
    offloaded = 0.0
    if offload_opt:
        offloaded = trainable * (st.g + st.o) / nodes
    if inp.offload_params:
        offloaded += (trainable * (0.0 if fsdp_master else st.w) + frozen_total) / nodes
    cpu = max(load_floor, offloaded) * inp.buffer_factor
    cpu_formula = note("training.formula.host_ram", loading=load_txt, buffer=inp.buffer_factor)
    if inp.zero_stage == 3 and inp.zero_init and offloaded:
        cpu = offloaded * inp.buffer_factor  # DeepSpeed: 16 or 18·P/nodes × 1.5
        cpu_formula = note("training.formula.host_ram_offloaded", buffer=inp.buffer_factor)
    terms.append(
        _t(
            "host RAM per node",
            cpu,
            cpu_formula,
            note("training.explain.host_ram"),
        )
    )

    # ---- assumptions and warnings ---------------------------------------------------
    if inp.method == "full" and inp.regime == "mixed":
        assumptions.append(
            note(
                f"training.assume.mixed_{'fp32' if inp.grad_accounting == 'fp32' else 'half'}_grads",
                states=st.explain,
                total=st.w + st.g + st.o,
            )
        )
    else:
        assumptions.append(note("training.assume.model_states", states=st.explain))
    if fsdp_master:
        assumptions.append(note("training.assume.fsdp_master"))
    if st.half_grads:
        assumptions.append(note("training.assume.zero2_half_grads"))
    if frozen_label is not None:
        assumptions.append(
            note("training.assume.lora", trainable=trainable, frozen=frozen_label, frozen_gb=frozen_total / GB)
        )
        if inp.method == "qlora":
            assumptions.append(note("training.assume.qlora"))
    if inp.optimizer == "adamw8bit":
        assumptions.append(note("training.assume.adamw8bit"))
    if paged:
        assumptions.append(note("training.assume.paged"))
    act_key = "activations" if tp == 1 else ("activations_tp_sp" if inp.sequence_parallel else "activations_tp")
    assumptions.append(
        note(
            f"training.assume.{act_key}",
            dtype="bf16" if elem == 2 else "fp32",
            seq=inp.seq,
            micro_batch=inp.micro_batch,
            **({"tp": tp} if tp > 1 else {}),
        )
    )
    assumptions.append(note("training.assume.logits_fused" if inp.fused_loss else "training.assume.logits_fp32"))
    if inp.method == "qlora":
        assumptions.append(note("training.assume.qlora_fp32_stream"))
    if inp.recompute is None:
        if inp.method in ("lora", "qlora"):
            assumptions.append(note("training.assume.recompute_default_adapters", method=inp.method))
        else:
            assumptions.append(note("training.assume.recompute_default_full"))
    assumptions.append(
        note("training.assume.host_ram", buffer_factor=inp.buffer_factor, gpus_per_node=gpn, nodes=nodes)
    )
    assumptions.append(note("training.assume.not_counted"))
    if inp.regime == "bf16" and inp.method == "full":
        warnings.append(note("training.warn.pure_bf16"))
    if recompute == "selective" and inp.flash_attention:
        assumptions.append(note("training.assume.selective_flash"))
    if spec.max_context and inp.seq > spec.max_context:
        warnings.append(note("training.warn.seq_exceeds", seq=inp.seq, context=spec.max_context))
    if gpus > 1 and not (inp.zero_stage or inp.fsdp) and tp == 1:
        warnings.append(note("training.warn.plain_dp"))

    fits = headroom = gpu_mem = max_batch = max_seq = None
    if inp.gpu is not None:
        gpu_mem, visible_note = _visible(inp.gpu)
        assumptions.append(visible_note)
        headroom = gpu_mem - per_gpu
        fits = headroom >= 0
        if not fits:
            warnings.append(_advice(inp, inp.gpu.name, per_gpu, gpu_mem))
        if limits:
            max_batch = _largest_fitting(inp, "micro_batch", gpu_mem)
            max_seq = _largest_fitting(inp, "seq", gpu_mem, limit=spec.max_context or 1 << 22)

    return TrainingMemoryResult(
        model=spec.name,
        method=inp.method,
        regime=inp.regime,
        optimizer=inp.optimizer,
        zero_stage=inp.zero_stage,
        fsdp=inp.fsdp,
        gpus=gpus,
        tp=tp,
        data_parallel=dp,
        total_bytes=per_gpu * gpus,
        per_gpu_bytes=per_gpu,
        breakdown=breakdown,
        cpu_bytes=round(cpu),
        params=spec.params,
        trainable_params=trainable,
        state_bytes_per_param=(0 if fsdp_master else st.w) + st.g + st.o,
        seq=inp.seq,
        micro_batch=inp.micro_batch,
        recompute=recompute,
        terms=terms,
        assumptions=assumptions,
        warnings=warnings,
        gpu=inp.gpu.name if inp.gpu else None,
        gpu_memory_bytes=gpu_mem,
        fits=fits,
        headroom_bytes=headroom,
        max_concurrency=max_batch,
        max_context_tokens=max_seq,
    )


def _largest_fitting(inp: TrainingMemoryInput, field: str, budget: int, limit: int = 1 << 22) -> int:
    """Largest micro-batch or sequence length whose per-GPU need fits ``budget`` (0 if none)."""

    def need(value: int) -> int:
        probe = inp.model_copy(update={field: value, "gpu": None})
        return estimate_training_memory(probe).per_gpu_bytes

    lo, hi = 0, 1
    while hi <= limit and need(hi) <= budget:
        lo, hi = hi, hi * 2
    hi = min(hi, limit + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if need(mid) <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def _advice(inp: TrainingMemoryInput, gpu: str, need: int, have: int) -> Note:
    tips: list[Note] = []
    if inp.method == "full":
        tips.append(note("training.tip.lora"))
        if inp.zero_stage < 3 and not inp.fsdp:
            stage = min(3, inp.zero_stage + 1)
            tips.append(note("training.tip.zero_more_gpus" if inp.gpus == 1 else "training.tip.zero", stage=stage))
    if not inp.offload_optimizer and (inp.zero_stage or inp.fsdp):
        tips.append(note("training.tip.offload"))
    if inp.recompute != "full":
        tips.append(note("training.tip.checkpointing"))
    if inp.micro_batch > 1 or inp.seq > 1024:
        tips.append(note("training.tip.smaller"))
    if not tips:
        return note("training.warn.does_not_fit_no_tips", need_gib=need / GiB, gpu=gpu, have_gib=have / GiB)
    return note("training.warn.does_not_fit", need_gib=need / GiB, gpu=gpu, have_gib=have / GiB, tips=_joined(tips))


def _joined(items: list[Note]) -> Note:
    """One note listing ``items`` ('a, b, c' in English), nested pairwise through ``training.tip.join``."""
    out = items[-1]
    for item in reversed(items[:-1]):
        out = note("training.tip.join", first=item, rest=out)
    return out


def _visible(gpu: GPU) -> tuple[int, Note]:
    """``engine_visible_bytes`` with its explanation as a note (built here while tools.gpu_memory returns text)."""
    seen, explained = engine_visible_bytes(gpu)
    if isinstance(explained, Note):
        return seen, explained
    if gpu.gpu_assignable_gb is not None:  # a unified-memory system: the OS keeps part of the shared pool
        return seen, note("training.assume.gpu_visible_unified", gpu=gpu.name, memory_gb=gpu.memory_gb,
                          assignable_gb=gpu.gpu_assignable_gb, visible_gib=seen / GiB)
    key = "gpu_visible_ecc" if inline_ecc_on(gpu) else "gpu_visible"
    return seen, note(f"training.assume.{key}", gpu=gpu.name, memory_gb=gpu.memory_gb, visible_gib=seen / GiB)
