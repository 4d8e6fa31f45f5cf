"""Memory rules: does the workload fit per GPU (sizing engine), system RAM vs VRAM, ECC."""

from __future__ import annotations

from tools.compat_rules.types import BuildContext, Card, Finding, finding
from tools.errors import ToolError
from tools.inference_memory import InferenceMemoryInput, InferenceMemoryResult, estimate_inference_memory
from tools.modelspec import load_model_spec, valid_tp_sizes
from tools.precision import resolve_precision
from tools.result import Note, note
from tools.training_memory import TrainingMemoryInput, TrainingMemoryResult, estimate_training_memory
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
    zero = 3 if (inp.method == "full" and n > 1) else 0
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


def _gb(n: float) -> str:
    return f"{n / GB:.1f} GB"


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
        what, what_zh = f"{ctx.inp.method} training of {res.model}", f"{res.model} 的 {ctx.inp.method} 训练"
    else:
        what = f"{res.model} at {res.precision}, {res.context:,} tokens × {res.batch}"
        what_zh = f"{res.model}（{res.precision}，{res.context:,} tokens × {res.batch} 并发）"
    split = f" split over {res.gpus} GPUs" if res.gpus > 1 else ""
    split_zh = f"（{res.gpus} 卡切分）" if res.gpus > 1 else ""
    usable = (f"vLLM may use {_gb(have)} of it (gpu_memory_utilization of {_gb(visible)} visible)"
              if reserved else f"{_gb(have)} usable")
    usable_zh = (f"vLLM 可用其中 {_gb(have)}（按 gpu_memory_utilization 预留，驱动可见 {_gb(visible)}）"
                 if reserved else f"可用 {_gb(have)}")
    bd = res.breakdown
    nums = {"per_gpu_bytes": need, "gpu_memory_bytes": have, "gpu_visible_bytes": visible,
            "gpu_memory_gb": g.memory_gb, "weights_bytes": bd.weights, "kv_cache_bytes": bd.kv_cache,
            "activations_bytes": bd.activations, "optimizer_bytes": bd.optimizer,
            "gradients_bytes": bd.gradients, "overhead_bytes": bd.overhead, "gpus": res.gpus}
    offload = getattr(res, "offload_layers", None)
    if offload:
        return [finding(
            "memory-offload", "memory", "warning",
            f"{what}{split}: only part of the model fits on {g.name} ({_gb(visible)}); {offload} layers stay "
            "in system RAM (llama.cpp offload), so decode runs at CPU memory speed.",
            f"{what_zh}{split_zh}：{g.name}（{_gb(visible)}）只能放下部分模型，{offload} 层留在内存中"
            "（llama.cpp 卸载），解码速度将受限于 CPU 内存带宽。",
            "Add GPU memory or pick a smaller quantisation so all layers fit.",
            "增加显存或使用更小的量化格式，让所有层都放进显卡。",
            {**nums, "offload_layers": offload}, pitfall="ignoring-memory",
        )]
    if res.fits is False:
        short = max(0, need - have)
        if isinstance(res, TrainingMemoryResult):
            fix = ("Use LoRA/QLoRA, ZeRO-3/FSDP over more GPUs, CPU offload or gradient checkpointing, or "
                   "GPUs with more memory.")
            fix_zh = ("改用 LoRA/QLoRA、更多 GPU 上的 ZeRO-3/FSDP、CPU 卸载或梯度检查点，"
                      "或选择显存更大的显卡。")
        else:
            fix = ("Use a smaller precision (int4/AWQ, Q4_K_M), a shorter context or fewer concurrent "
                   "sequences, more GPUs with tensor parallel, or GPUs with more memory.")
            fix_zh = ("使用更低精度（int4/AWQ、Q4_K_M）、更短上下文或更少并发，用更多 GPU 做张量并行，"
                      "或选择显存更大的显卡。")
        extra = extra_zh = ""
        mc = getattr(res, "max_context_tokens", None)
        if mc:
            extra = f" At this concurrency the longest context that fits is {mc:,} tokens."
            extra_zh = f"在当前并发下能放下的最长上下文为 {mc:,} tokens。"
        return [finding(
            "memory-fit", "memory", "error",
            f"{what}{split} does not fit: it needs {_gb(need)} per GPU; {g.name} has {g.memory_gb:g} GB on "
            f"the label and {usable} — {_gb(short)} short.{extra}",
            f"{what_zh}{split_zh} 放不下：每卡需要 {_gb(need)}；{g.name} 标称 {g.memory_gb:g} GB，{usable_zh}"
            f"，差 {_gb(short)}。{extra_zh}",
            fix, fix_zh, {**nums, "shortfall_bytes": short}, pitfall="ignoring-memory",
            sources=["tools.inference_memory", "tools.training_memory"],
        )]
    headroom = have - need
    if headroom < HEADROOM_WARN * have:
        return [finding(
            "memory-headroom", "memory", "warning",
            f"{what}{split} fits with only {_gb(headroom)} to spare per GPU ({need / have:.0%} of "
            f"{_gb(have)}): longer prompts or more users will not fit.",
            f"{what_zh}{split_zh} 勉强放下，每卡只剩 {_gb(headroom)}（占 {_gb(have)} 的 {need / have:.0%}）："
            "更长的输入或更多用户将放不下。",
            "Leave ≥ 10 % headroom: a smaller precision, shorter context, or a larger card.",
            "至少留 10 % 余量：降低精度、缩短上下文或换更大显存的卡。",
            {**nums, "headroom_bytes": headroom}, pitfall="ignoring-memory",
        )]
    return [finding(
        "memory-fit", "memory", "info",
        f"{what}{split} fits: {_gb(need)} per GPU of {_gb(have)}, {_gb(headroom)} to spare.",
        f"{what_zh}{split_zh} 可以放下：每卡 {_gb(need)} / {_gb(have)}，余量 {_gb(headroom)}。",
        "No action needed.", "无需调整。", {**nums, "headroom_bytes": headroom},
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
            f"The problem needs {_gb(pb)}; the GPUs hold {_gb(t.total_vram_bytes)} together (~{_gb(usable)} "
            "usable after workspace), assuming the code distributes the data across GPUs.",
            f"问题规模需要 {_gb(pb)}；全部显卡共 {_gb(t.total_vram_bytes)}（扣除工作空间后约 {_gb(usable)} 可"
            "用，假设代码能把数据分布到多卡）。",
            "Add GPUs, choose larger-memory parts (MI300X 192 GB, H200 141 GB), or an out-of-core solver.",
            "增加显卡，选择更大显存的型号（MI300X 192 GB、H200 141 GB），或使用核外（out-of-core）求解器。",
            nums, pitfall="ignoring-memory",
        )]
    return []


def _system_ram(ctx: BuildContext) -> list[Finding]:
    t = ctx.totals
    assert t is not None
    rec, lo = t.recommended_system_ram_gb, t.min_system_ram_gb
    ram = ctx.inp.system_ram_gb
    nums = {"system_ram_gb": ram, "total_vram_gb": t.total_vram_label_gb, "recommended_ram_gb": rec,
            "min_ram_gb": lo}
    plat = ctx.platform
    ch = plat.memory_channels * plat.sockets if plat else None
    chans, chans_zh = (f"the {ch} memory channels", f"全部 {ch} 个") if ch else ("the memory channels", "所有")
    fix = f"Fit ≥ {rec:,.0f} GB of RAM (2 × VRAM), one DIMM in each of {chans} for full bandwidth."
    fix_zh = f"配置 ≥ {rec:,.0f} GB 内存（显存的 2 倍），并插满{chans_zh}内存通道以获得全部带宽。"
    if ram is None:
        return [finding(
            "system-ram", "memory", "info",
            f"Plan ≥ {rec:,.0f} GB of system RAM (2 × {t.total_vram_label_gb:,.0f} GB VRAM, Puget), never "
            f"below {lo:,.0f} GB (the largest card, Dettmers' minimum).",
            f"建议系统内存 ≥ {rec:,.0f} GB（显存 {t.total_vram_label_gb:,.0f} GB 的 2 倍，Puget），最低不少"
            f"于 {lo:,.0f} GB（最大单卡显存，Dettmers 的下限）。",
            fix, fix_zh, nums, sources=["S-PUGET-ML-QUOTE", "S-DETTMERS"],
        )]
    if ram < lo:
        return [finding(
            "system-ram", "memory", "warning",
            f"{ram:,.0f} GB of RAM is less than the largest card's {lo:,.0f} GB of VRAM: loading and "
            "converting checkpoints will swap or fail.",
            f"{ram:,.0f} GB 内存小于最大单卡显存 {lo:,.0f} GB：加载和转换模型时会爆内存或失败。",
            fix, fix_zh, nums, sources=["S-DETTMERS"],
        )]
    if ram < rec:
        return [finding(
            "system-ram", "memory", "info",
            f"{ram:,.0f} GB of RAM covers the largest card but is below Puget's 2 × VRAM ({rec:,.0f} GB).",
            f"{ram:,.0f} GB 内存满足最低要求，但低于 Puget 建议的显存 2 倍（{rec:,.0f} GB）。",
            fix, fix_zh, nums, sources=["S-PUGET-ML-QUOTE"],
        )]
    return [finding(
        "system-ram", "memory", "info",
        f"{ram:,.0f} GB of RAM is enough: it meets Puget's 2 × VRAM ({rec:,.0f} GB).",
        f"{ram:,.0f} GB 内存够用：达到 Puget 建议的显存 2 倍（{rec:,.0f} GB）。",
        f"Nothing to add; keep one DIMM in each of {chans} for full bandwidth.",
        f"无需加内存；插满{chans_zh}内存通道以获得全部带宽。", nums,
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
                "memory-ecc", "memory", "info", f"ECC support of {g.name} is not known.",
                f"{g.name} 是否支持 ECC 未知。", "Check the datasheet.", "请查阅规格书。", {"ecc": None},
            ))
            continue
        sci = wl == "scientific"
        out.append(finding(
            "memory-ecc", "memory", "warning" if sci else "info",
            f"{g.name} has no ECC memory: a bit flip in a "
            f"{'multi-day simulation' if sci else 'long training run'} goes undetected and can silently "
            "corrupt results"
            + (" — unacceptable for results you publish or certify." if sci else "; checkpoint often."),
            f"{g.name} 没有 ECC 显存：{'长时间仿真' if sci else '长时间训练'}中的位翻转无法被发现，可能悄悄破"
            "坏结果"
            + ("——对于需要发表或认证的结果不可接受。" if sci else "；请频繁保存检查点。"),
            "Use ECC GPUs (datacenter and pro cards) for 24/7 "
            "runs" + (" and scientific results." if sci else "."),
            "7×24 运行" + ("和科学计算" if sci else "") + "请使用带 ECC 的显卡（数据中心卡和专业卡）。",
            {"ecc": False}, pitfall="mixing-server-consumer", sources=["seed §1.1 ECC"],
        ))
    return out
