"""Memory rules: does the workload fit per GPU (sizing engine), system RAM vs VRAM, ECC."""

from __future__ import annotations

from tools.compat_rules.types import BuildContext, Card, Finding, finding
from tools.errors import ToolError
from tools.inference_memory import InferenceMemoryInput, InferenceMemoryResult, estimate_inference_memory
from tools.modelspec import load_model_spec, valid_tp_sizes
from tools.precision import resolve_precision
from tools.result import Note, note
from tools.training_memory import (
    TrainingMemoryInput,
    TrainingMemoryResult,
    default_zero_stage,
    estimate_training_memory,
)
from tools.units import GB

HEADROOM_WARN = 0.05  # fits with < 5 % of the card left: one longer prompt and it no longer does

_ENGINE_BY_FRAMEWORK = {
    "vllm": "vllm", "sglang": "vllm", "tensorrt-llm": "vllm", "mindie": "vllm", "llama.cpp": "llamacpp",
    "pytorch": "transformers", "deepspeed": "transformers", "megatron": "transformers", "jax": "transformers",
}


def binding_card(ctx: BuildContext) -> Card:
    """The card with the least memory: it bounds an even split across GPUs."""
    return min(ctx.cards, key=lambda c: (c.gpu.memory_bytes, c.gpu.id))


def inference_engine(ctx: BuildContext) -> str:
    if ctx.framework:
        return _ENGINE_BY_FRAMEWORK[ctx.framework]
    if ctx.precision_name:
        try:
            if resolve_precision(ctx.precision_name).family == "gguf":
                return "llamacpp"
        except ToolError:
            pass
    return "vllm"


def size_inference(ctx: BuildContext) -> InferenceMemoryResult:
    """Run the inference sizing for the build's model on its smallest card."""
    inp = ctx.inp
    card = binding_card(ctx)
    engine = inference_engine(ctx)
    n = ctx.gpu_count
    par = ctx.parallelism
    gpus = 1 if par == "data" else n
    parallel = None if gpus == 1 else ("pp" if par == "pipeline" else "tp")
    base = dict(model=inp.model, precision=_weight_precision(ctx), context=inp.context, batch=inp.concurrency,
                gpu=card.gpu.id, engine=engine)
    try:
        return estimate_inference_memory(InferenceMemoryInput(**base, gpus=gpus, parallel=parallel))
    except ToolError as exc:
        if parallel != "tp":
            raise
        ctx.assume(note("compat.assume.tp_layer_split", gpus=gpus, reason=_tp_reason(inp.model or "", gpus, exc)))
        return estimate_inference_memory(InferenceMemoryInput(**base, gpus=gpus, parallel="pp"))


def _tp_reason(model: str, tp: int, exc: ToolError) -> Note:
    """Why ``tp``-way tensor parallel cannot split ``model``, as a note (the sizing engine's message as is
    when it is not one of the head-count reasons)."""
    detail = str(exc)
    try:
        spec = load_model_spec(model)
    except (ToolError, LookupError):
        return note("compat.tp_reason.other", detail=detail)
    sizes = ", ".join(str(t) for t in valid_tp_sizes(spec, limit=max(tp, 16)) if 1 < t <= 16) or "1"
    for reason in (note("compat.tp_reason.heads", tp=tp, heads=spec.num_heads, model=spec.name, sizes=sizes),
                   note("compat.tp_reason.kv_heads", tp=tp, kv_heads=spec.num_kv_heads, model=spec.name,
                        sizes=sizes)):
        if reason.text == detail:
            return reason
    return note("compat.tp_reason.other", detail=detail)


def _weight_precision(ctx: BuildContext) -> str | None:
    name = ctx.precision_name
    if not name or name.lower() in ("fp64", "tf32", "double"):
        return None
    return name


def size_training(ctx: BuildContext) -> TrainingMemoryResult:
    inp = ctx.inp
    card = binding_card(ctx)
    n = ctx.gpu_count
    spec = load_model_spec(inp.model or "")
    zero = default_zero_stage(inp.method, spec.params, card.gpu.memory_bytes, n)
    if zero:
        ctx.assume(note("compat.assume.zero3", gpus=n))
    tin = TrainingMemoryInput(model=spec, method=inp.method, gpus=n, zero_stage=zero, gpu=card.gpu)
    return estimate_training_memory(tin)


def size_memory(ctx: BuildContext) -> None:
    """Fill ctx.per_gpu_bytes / ctx.memory_result from the sizing engine when a model is given."""
    if not ctx.inp.model or ctx.inp.workload == "scientific":
        return
    res: InferenceMemoryResult | TrainingMemoryResult
    res = size_training(ctx) if ctx.inp.workload == "training" else size_inference(ctx)
    ctx.memory_result = res
    ctx.per_gpu_bytes = res.per_gpu_bytes
    if isinstance(res, TrainingMemoryResult):
        ctx.assume(note("compat.assume.memory_fit_training"))
    else:
        ctx.assume(note("compat.assume.memory_fit", engine=note(f"compat.engine.{res.engine}")))


def check_memory(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    res = ctx.memory_result
    if res is not None:
        out += _fit(ctx, res)  # type: ignore[arg-type]
    out += _scientific(ctx)
    out += _system_ram(ctx)
    out += _ecc(ctx)
    return out


def _fit(ctx: BuildContext, res: InferenceMemoryResult | TrainingMemoryResult) -> list[Finding]:
    card = binding_card(ctx)
    g = card.gpu
    reserved = getattr(res, "reserved_bytes", None)
    visible = res.gpu_memory_bytes or g.memory_bytes
    have = reserved or visible
    need = res.per_gpu_bytes
    if isinstance(res, TrainingMemoryResult):
        what = note("compat.memory.what_training", method=note(f"method.{ctx.inp.method}"), model=res.model)
    else:
        what = note("compat.memory.what_inference", model=res.model, precision=res.precision, context=res.context,
                    batch=res.batch)
    split = note("compat.memory.split", gpus=res.gpus) if res.gpus > 1 else ""
    usable = (note("compat.memory.usable_vllm", have_gb=have / GB, visible_gb=visible / GB) if reserved else
              note("compat.memory.usable", have_gb=have / GB))
    bd = res.breakdown
    nums = {"per_gpu_bytes": need, "gpu_memory_bytes": have, "gpu_visible_bytes": visible,
            "gpu_memory_gb": g.memory_gb, "weights_bytes": bd.weights, "kv_cache_bytes": bd.kv_cache,
            "activations_bytes": bd.activations, "optimizer_bytes": bd.optimizer,
            "gradients_bytes": bd.gradients, "overhead_bytes": bd.overhead, "gpus": res.gpus}
    offload = getattr(res, "offload_layers", None)
    if offload:
        return [finding(
            "memory-offload", "memory", "warning",
            note("compat.memory.offload", what=what, split=split, gpu=g.name, visible_gb=visible / GB,
                 layers=offload),
            note("compat.fix.memory.offload"),
            {**nums, "offload_layers": offload}, pitfall="ignoring-memory",
        )]
    if res.fits is False:
        short = max(0, need - have)
        fix = note("compat.fix.memory.no_fit_training" if isinstance(res, TrainingMemoryResult)
                   else "compat.fix.memory.no_fit_inference")
        mc = getattr(res, "max_context_tokens", None)
        return [finding(
            "memory-fit", "memory", "error",
            note("compat.memory.no_fit", what=what, split=split, need_gb=need / GB, gpu=g.name,
                 label_gb=g.memory_gb, usable=usable, short_gb=short / GB,
                 longest=note("compat.memory.longest_context", tokens=mc) if mc else ""),
            fix, {**nums, "shortfall_bytes": short}, pitfall="ignoring-memory",
            sources=["tools.inference_memory", "tools.training_memory"],
        )]
    headroom = have - need
    if headroom < HEADROOM_WARN * have:
        return [finding(
            "memory-headroom", "memory", "warning",
            note("compat.memory.headroom", what=what, split=split, headroom_gb=headroom / GB, share=need / have,
                 have_gb=have / GB),
            note("compat.fix.memory.headroom"),
            {**nums, "headroom_bytes": headroom}, pitfall="ignoring-memory",
        )]
    return [finding(
        "memory-fit", "memory", "info",
        note("compat.memory.fits", what=what, split=split, need_gb=need / GB, have_gb=have / GB,
             headroom_gb=headroom / GB),
        note("compat.fix.memory.fits"), {**nums, "headroom_bytes": headroom},
    )]


def _scientific(ctx: BuildContext) -> list[Finding]:
    pb = ctx.inp.problem_bytes
    if not pb or ctx.inp.workload != "scientific":
        return []
    t = ctx.totals
    assert t is not None
    usable = 0.9 * t.total_vram_bytes
    nums = {"problem_bytes": pb, "total_vram_bytes": t.total_vram_bytes, "usable_bytes": int(usable)}
    if pb > usable:
        return [finding(
            "memory-fit", "memory", "error",
            note("compat.memory.problem_too_big", need_gb=pb / GB, total_gb=t.total_vram_bytes / GB,
                 usable_gb=usable / GB),
            note("compat.fix.memory.problem_too_big"),
            nums, pitfall="ignoring-memory",
        )]
    return []


def _system_ram(ctx: BuildContext) -> list[Finding]:
    t = ctx.totals
    assert t is not None
    if t.recommended_system_ram_gb == 0:  # a unified-memory system: its memory is the GPU's memory
        return []
    rec, lo = t.recommended_system_ram_gb, t.min_system_ram_gb
    ram = ctx.inp.system_ram_gb
    nums = {"system_ram_gb": ram, "total_vram_gb": t.total_vram_label_gb, "recommended_ram_gb": rec,
            "min_ram_gb": lo}
    plat = ctx.platform
    ch = plat.memory_channels * plat.sockets if plat else None
    chans = note("compat.memory.channels_n", channels=ch) if ch else note("compat.memory.channels_all")
    fix = note("compat.fix.memory.system_ram", recommended_gb=rec, channels=chans)
    if ram is None:
        return [finding(
            "system-ram", "memory", "info",
            note("compat.memory.system_ram_plan", recommended_gb=rec, vram_gb=t.total_vram_label_gb, min_gb=lo),
            fix, nums, sources=["S-PUGET-ML-QUOTE", "S-DETTMERS"],
        )]
    if ram < lo:
        return [finding(
            "system-ram", "memory", "warning",
            note("compat.memory.system_ram_low", ram_gb=ram, min_gb=lo),
            fix, nums, sources=["S-DETTMERS"],
        )]
    if ram < rec:
        return [finding(
            "system-ram", "memory", "info",
            note("compat.memory.system_ram_below_recommended", ram_gb=ram, recommended_gb=rec),
            fix, nums, sources=["S-PUGET-ML-QUOTE"],
        )]
    return [finding(
        "system-ram", "memory", "info",
        note("compat.memory.system_ram_enough", ram_gb=ram, recommended_gb=rec),
        note("compat.fix.memory.system_ram_enough", channels=chans), nums,
        sources=["S-PUGET-ML-QUOTE"],
    )]


def _ecc(ctx: BuildContext) -> list[Finding]:
    wl = ctx.inp.workload
    if wl not in ("training", "scientific"):
        return []
    out: list[Finding] = []
    seen: set[str] = set()
    for card in ctx.cards:
        g = card.gpu
        if g.id in seen or g.ecc:
            continue
        seen.add(g.id)
        if g.ecc is None:
            out.append(finding(
                "memory-ecc", "memory", "info", note("compat.memory.ecc_unknown", gpu=g.name),
                note("compat.fix.memory.ecc_unknown"), {"ecc": None},
            ))
            continue
        sci = wl == "scientific"
        kind = "scientific" if sci else "training"
        out.append(finding(
            "memory-ecc", "memory", "warning" if sci else "info",
            note(f"compat.memory.no_ecc_{kind}", gpu=g.name),
            note(f"compat.fix.memory.no_ecc_{kind}"),
            {"ecc": False}, pitfall="mixing-server-consumer", sources=["seed §1.1 ECC"],
        ))
    return out
