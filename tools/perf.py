"""Inference speed: decode tokens/s, prefill tokens/s, time to first token, serving throughput.

Decode is bandwidth-bound at small batch: every generated token streams the (active) weights
and its sequence's KV cache once. Prefill is compute-bound: ``2·P_active`` FLOPs per prompt
token plus attention, at the GPU's *dense tensor* throughput for the precision the matmuls
actually run at (never sparse, never plain FP32). Efficiencies come from ``tools.efficiency``.
Both functions also cover batches: one step serves ``batch`` sequences, so its time is the
larger of the streaming time and the compute time (a roofline), plus fixed per-layer costs.
Serving (continuous batching) sweeps the batch up to the KV capacity of vLLM's memory budget
(``tools.inference_memory``).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowledge.schema import GPU, DecodeMeasurement, FormFactor
from tools.efficiency import (
    DECODE_RANGE,
    PCIE_X16_GBS,
    PREFILL_MFU,
    PREFILL_RANGE,
    LinkModel,
    allreduce_time,
    decode_fit,
    link_model,
    memory_class,
    weight_read_bytes,
)
from tools.engines import ENGINE_LABEL, EngineName, get_engine
from tools.errors import ToolError
from tools.gpu_memory import engine_visible_bytes
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.inputs import ToolInput
from tools.kv_cache import attention_flops_per_token, kv_cache_bytes
from tools.modelspec import ModelSpec, check_tensor_parallel
from tools.precision import resolve_kv_dtype, resolve_precision
from tools.prefill_fit import expert_gemm_share, prefill_fit, prefill_flops, prefill_path
from tools.rates import compute_rate
from tools.result import Note, Term, note
from tools.scale_out import NODE_GPUS, nodes_for
from tools.units import BytesF, Seconds, Tokens, TokensPerS

Parallel = Literal["layer", "tensor"]
# One pipeline hand-off between nodes: a hidden state sent over the cluster network (NCCL send/recv over
# InfiniBand or RoCE, ~10–30 µs) plus the engine's stage scheduling. An assumption, labelled in every result.
NODE_HOP_S = 100e-6
NODE_LINK_BYTES_S = 40e9  # one 400 Gb/s port per node at ~80 % (the scale-out plan's smallest rail)


def _engine_parallel(engine: SpeedEngine, count: int) -> Parallel | None:
    """How an engine splits a model over GPUs by default (llama.cpp and Transformers by layers, the servers
    tensor parallel)."""
    return None if count == 1 else get_engine(engine).speed_split


def _parallel(spec: ModelSpec, precision: str, count: int, parallel: Parallel | None) -> tuple[str, int]:
    if count == 1:
        return "single", 1
    mode = parallel or ("layer" if resolve_precision(precision).family == "gguf" else "tensor")
    if mode == "tensor":
        check_tensor_parallel(spec, count)
        return "tensor", count
    return "layer", 1


def default_nodes(gpu: GPU, count: int) -> int:
    """Machines ``count`` GPUs are in when none is said: one up to a node's worth (or the card's whole NVLink
    domain, as in an NVL72 rack), else nodes of eight when they divide evenly."""
    if count <= NODE_GPUS or count <= gpu.interconnect.max_gpus:
        return 1
    nodes = nodes_for(count)
    return nodes if count % nodes == 0 else 1


def check_nodes(count: int, nodes: int) -> None:
    """Each node holds the same number of GPUs."""
    if nodes > count or count % nodes:
        raise ToolError(note("error.perf.uneven_nodes", count=count, nodes=nodes))


def node_hops(nodes: int, message_bytes: float) -> float:
    """Seconds a step spends sending ``message_bytes`` of hidden states between pipeline stages on separate nodes."""
    return (nodes - 1) * (NODE_HOP_S + message_bytes / NODE_LINK_BYTES_S)


def _node_term(nodes: int, seconds: float, message_bytes: float) -> Term:
    return _term("hand-offs between nodes", seconds, "s",
                 note("perf.formula.decode_nodes", hops=nodes - 1, hop_us=NODE_HOP_S * 1e6, mb=message_bytes / 1e6,
                      gbs=NODE_LINK_BYTES_S / 1e9), "decode_nodes")


def _moe_weight_bytes(spec: ModelSpec, precision: str, batch: int) -> tuple[float, Note]:
    """Weight bytes one decode step reads; for MoE the experts touched by ``batch`` tokens."""
    if not (spec.is_moe and spec.num_experts and spec.experts_per_token) or spec.params == spec.active_params:
        return weight_read_bytes(spec, precision), note("perf.formula.active_weights")
    e, k = spec.num_experts, spec.experts_per_token
    all_experts = (spec.params - spec.active_params) * e / (e - k)
    touched = e * (1 - (1 - k / e) ** batch)  # expected distinct experts per layer
    total = weight_read_bytes(spec, precision, active=False)
    experts = all_experts * _bpp(precision)
    if experts >= total:  # a mixed-width file (GGUF K-quants) whose experts sit below its nominal width
        experts = total * all_experts / spec.params
    read = total - experts + experts * min(1.0, touched / e)
    return read, note("perf.formula.moe_weights", touched=touched, experts=e, k=k, batch=batch)


def _bpp(precision: str) -> float:
    return resolve_precision(precision).bits_per_weight / 8


SpeedEngine = EngineName
HOST_BANDWIDTH_GBS = 89.6  # dual-channel DDR5-5600, a typical desktop; servers have 4–12 channels
# CPU decode reaches ~0.68 of its RAM's bandwidth: llama.cpp issue #34, 13900K with DDR5-6400 (102.4 GB/s),
# 7B Q4_0 (3.82 GB) at 18.27 tokens/s = 70 GB/s.
HOST_EFFICIENCY = 0.68
PCIE_EFFICIENCY = 0.8


def speed_engine(precision: str, engine: SpeedEngine | None) -> SpeedEngine:
    """The engine a speed estimate assumes: the given one, else llama.cpp for GGUF files and vLLM otherwise."""
    return engine or ("llamacpp" if resolve_precision(precision).family == "gguf" else "vllm")


class Placement(BaseModel):
    """Where the weights of one model live: the share held in system RAM and how it is used."""

    model_config = ConfigDict(frozen=True)

    host_share: float = 0.0  # of the weights (and, for llama.cpp, of the layers and their KV cache)
    host_layers: int = 0
    how: Literal["gpu", "cpu", "pcie"] = "gpu"  # llama.cpp computes host layers on the CPU; others stream them


def placement(spec: ModelSpec, gpu: GPU, count: int, precision: str, kv_dtype: str, context: int, batch: int,
              engine: SpeedEngine, nodes: int = 1) -> Placement:
    """What does not fit the GPUs stays in system RAM: llama.cpp keeps whole layers there (its own fit search),
    vLLM's ``--cpu-offload-gb`` and Transformers' ``device_map="auto"`` keep weights there and read them over
    PCIe each step. Everything on the GPUs when it fits (the quick check avoids the search)."""
    if gpu.form_factor == FormFactor.system:  # unified memory: no separate system RAM to keep layers in
        return Placement()
    visible = engine_visible_bytes(gpu)[0]
    cache = kv_cache_bytes(spec, context, batch, kv_dtype, 1)  # every sequence's cache, all GPUs together
    if spec.weight_bytes_at(resolve_precision(precision).name) + cache < 0.85 * visible * count:
        return Placement()
    eng = get_engine(engine)
    try:
        mem = estimate_inference_memory(InferenceMemoryInput(
            spec=spec, precision=precision, kv_dtype=kv_dtype, context=context, batch=batch, gpus=count,
            pipeline_stages=nodes, gpu_memory_bytes=visible, engine=engine))
    except ToolError:
        return Placement()
    if mem.fits:
        return Placement()
    if eng.offloads_layers:
        host = mem.offload_layers or 0
        return Placement(host_share=host / spec.layers, host_layers=host, how="cpu") if host else Placement()
    usable = (mem.reserved_bytes or visible) * count
    short = max(0, mem.per_gpu_bytes * count - usable)
    weights = max(mem.weights_total_bytes, 1)
    return Placement(host_share=min(1.0, short / weights), how=eng.host_path)


def pcie_bytes_per_s(gpu: GPU) -> float:
    """One direction of the GPU's host link at ``PCIE_EFFICIENCY`` (x16 of its generation by default)."""
    gbs = PCIE_X16_GBS.get(gpu.pcie_gen or 4, 31.5) * (gpu.pcie_lanes or 16) / 16
    return gbs * 1e9 * PCIE_EFFICIENCY


MAX_TIMED_GPUS = 64  # the most GPUs one decode or prefill estimate spreads a model over


class DecodeInput(ToolInput):
    """Generation of ``batch`` sequences, each with ``context`` tokens already in its KV cache."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    model: ModelSpec
    gpu: GPU
    count: int = Field(1, ge=1, le=MAX_TIMED_GPUS, description="GPUs in all nodes together")
    nodes: int | None = Field(None, ge=1, le=64, description="machines the GPUs are spread over: tensor parallel (or "
                                                             "the layer split) inside each node, the layers split "
                                                             "between nodes; default: nodes of 8 past 8 GPUs")
    parallel: Parallel | None = Field(None, description="default: layer split for GGUF, tensor otherwise")
    precision: str = "bf16"
    kv_dtype: str = "fp16"
    context: int = Field(1024, ge=1, le=10_000_000)
    batch: int = Field(1, ge=1, le=100_000)
    mfu: float = Field(PREFILL_MFU, ge=0.001, le=1, description="compute efficiency once decode turns compute-bound")
    engine: SpeedEngine | None = Field(None, description="default: llama.cpp for GGUF, vLLM otherwise")
    host_bandwidth_gbs: float = Field(HOST_BANDWIDTH_GBS, gt=0, le=10_000, allow_inf_nan=False,
                                      description="system RAM bandwidth, GB/s, for weights that do not fit the GPUs")

    @model_validator(mode="after")
    def _whole_nodes(self) -> DecodeInput:
        self.nodes = self.nodes or default_nodes(self.gpu, self.count)
        check_nodes(self.count, self.nodes)
        return self


class DecodeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens_per_s: TokensPerS = Field(description="all sequences together")
    tokens_per_s_range: tuple[TokensPerS, TokensPerS]
    per_sequence_tokens_per_s: TokensPerS
    step_time_s: Seconds
    bytes_per_step_per_gpu: BytesF
    bandwidth_efficiency: float = Field(description="bytes / (bandwidth · step time), one GPU")
    bound: Literal["memory", "compute"]
    parallel: str
    tp: int
    nodes: int = Field(1, description="pipeline stages, one per node")
    compute_precision: str
    engine: str = Field("llamacpp", description="the engine the estimate assumes")
    placement: Literal["gpu", "cpu", "pcie"] = Field(
        "gpu", description="gpu: all weights on the GPUs; cpu: layers run on the CPU from system RAM (llama.cpp); "
                           "pcie: weights in system RAM streamed over PCIe each step")
    host_share: float = Field(0.0, description="share of the weights held in system RAM")
    host_bandwidth_gbs: float | None = Field(None, description="system RAM bandwidth assumed for them, GB/s")
    terms: list[Term]
    assumptions: list[Note | str] = Field(description="model notes (may be plain text), then this tool's notes")
    warnings: list[Note]


CALIBRATION_CONTEXT = 512  # a short prompt, as llama-bench's tg128 and most quick tests measure
MAX_CALIBRATION = 4.0  # a measurement more than 4× off the model is more likely a different setup than the GPU


def _term(name: str, value: float, unit: str, formula: Note, explain: str) -> Term:
    """A term explained by message ``perf.explain.<explain>``."""
    return Term(name=name, value=value, unit=unit, formula=formula, explain=note(f"perf.explain.{explain}"))


def estimate_decode(inp: DecodeInput) -> DecodeResult:
    """Decode speed: streaming time over bandwidth × η, fixed per-layer cost, TP all-reduces; scaled to the
    user's own measurement of this model on this GPU when there is one (``GPU.measured_decode``)."""
    result = _decode(inp)
    if not inp.gpu.measured_decode:
        return result
    return _calibrated(result, inp.model, inp.gpu)


def _calibrated(result: DecodeResult, spec: ModelSpec, gpu: GPU) -> DecodeResult:
    """``result`` × (measured ÷ predicted) for the GPU's first usable measurement of ``spec`` (one GPU, one
    request): a measurement says how this GPU runs that model, not every model. Measurements of other models
    only leave a note saying the speed is the uncalibrated prediction."""
    from tools.modelspec import load_model_spec

    bare = gpu.model_copy(update={"measured_decode": ()})
    others: list[str] = []
    for m in gpu.measured_decode:
        try:
            measured_spec = load_model_spec(m.model)
            if not same_model(measured_spec, spec):
                others.append(measured_spec.name)
                continue
            predicted = _decode(DecodeInput(model=measured_spec, gpu=bare, precision=m.precision,
                                            context=CALIBRATION_CONTEXT)).tokens_per_s
        except (ToolError, ValueError, LookupError):
            continue  # a model or precision the calculators cannot place: the next measurement, if any
        return _scaled(result, m, measured_spec.name, predicted)
    if not others:
        return result
    return result.model_copy(update={"assumptions": [
        *result.assumptions, note("perf.decode.not_calibrated", measured=", ".join(dict.fromkeys(others)),
                                  model=spec.name)]})


def same_model(a: ModelSpec, b: ModelSpec) -> bool:
    """The same model, or another build or fine-tune of it (a GGUF file of a catalog model, Llama-3 and 3.1 8B):
    the same layers, widths, heads and experts, and a parameter count within 5 %."""
    shape = ("layers", "hidden_size", "num_heads", "num_kv_heads", "head_dim", "num_experts", "experts_per_token")
    return (all(getattr(a, k) == getattr(b, k) for k in shape)
            and abs(a.params - b.params) <= 0.05 * max(a.params, b.params))


def _scaled(result: DecodeResult, m: DecodeMeasurement, model: str, predicted: float) -> DecodeResult:
    """``result`` × (measured ÷ predicted), the factor held to [1/4, 4], with the calibration as a term."""
    factor = min(max(m.tokens_per_s / predicted, 1 / MAX_CALIBRATION), MAX_CALIBRATION)
    lo, hi = result.tokens_per_s_range
    calibration = _term("calibration to your measurement", factor, "×",
                        note("perf.formula.decode_calibration", measured=m.tokens_per_s, predicted=predicted),
                        "decode_calibration")
    terms = [t.model_copy(update={"value": t.value * factor}) if t.name == "decode throughput" else t
             for t in result.terms]
    return result.model_copy(update={
        "terms": [*terms[:-1], calibration, terms[-1]],
        "tokens_per_s": result.tokens_per_s * factor,
        "tokens_per_s_range": (lo * factor, hi * factor),
        "per_sequence_tokens_per_s": result.per_sequence_tokens_per_s * factor,
        "step_time_s": result.step_time_s / factor,
        "assumptions": [*result.assumptions, note("perf.decode.calibrated", model=model, precision=m.precision,
                                                  measured=m.tokens_per_s, predicted=predicted, factor=factor)],
    })


def _decode(inp: DecodeInput) -> DecodeResult:
    spec, gpu, b = inp.model, inp.gpu, inp.batch
    resolve_kv_dtype(inp.kv_dtype)
    fit = decode_fit(memory_class(gpu))
    engine = speed_engine(inp.precision, inp.engine)
    nodes = inp.nodes or 1  # set by the input check
    group = inp.count // nodes  # GPUs in one node; past one node the layers are split between nodes
    mode, tp = _parallel(spec, inp.precision, group, inp.parallel or _engine_parallel(engine, group))
    warnings: list[Note] = []
    if spec.max_context and inp.context > spec.max_context:
        warnings.append(note("perf.decode.context_over", context=inp.context, model=spec.name, limit=spec.max_context))
    weights, weights_how = _moe_weight_bytes(spec, inp.precision, b)
    kv_seq = kv_cache_bytes(spec, inp.context, 1, inp.kv_dtype, tp)  # one sequence, one rank
    bw = gpu.bandwidth_gbs * 1e9
    place = placement(spec, gpu, inp.count, inp.precision, inp.kv_dtype, inp.context, b, engine, nodes)
    host_read = 0.0  # bytes a step reads from system RAM
    host_time = 0.0
    if place.how == "cpu":  # llama.cpp: host layers, with their share of the KV cache, computed by the CPU
        host_read = place.host_share * (weights + b * kv_seq * tp)
        host_time = host_read / (inp.host_bandwidth_gbs * 1e9 * HOST_EFFICIENCY)
    elif place.how == "pcie":  # the offloaded weights cross the host link every step
        host_read = place.host_share * weights
        host_time = host_read / pcie_bytes_per_s(gpu)
    on_gpu = weights - (host_read if place.how == "pcie" else place.host_share * weights)
    kv_gpu = kv_seq * (1 - place.host_share) if place.how == "cpu" else kv_seq
    # Bytes one GPU of each stage streams, summed over the stages a token passes in turn (one per node).
    streamed = on_gpu / tp + b * kv_gpu
    if mode == "layer":  # each GPU streams its share in turn: same total, plus hand-offs
        streamed = on_gpu + b * kv_gpu
    stream = streamed / (bw * fit.eta_stream)
    per_gpu_bytes = streamed / (inp.count if mode == "layer" else nodes)
    fixed = spec.layers * fit.tau_layer_s
    hop = fit.tau_hop_s * math.log2(group) if mode == "layer" and group > 1 else 0.0
    network = node_hops(nodes, b * spec.hidden_size * 2)
    link: LinkModel | None = link_model(gpu, group) if group > 1 else None
    comm = 2 * spec.layers * allreduce_time(link, b * spec.hidden_size * 2, tp) if (link and tp > 1) else 0.0
    rate = compute_rate(gpu, inp.precision, engine)
    warnings += rate.warnings
    flops = b * (2 * spec.active_params + attention_flops_per_token(spec, inp.context))
    compute = flops / (rate.flops_per_s * inp.mfu * tp)
    step = max(stream + host_time, compute) + fixed + hop + comm + network
    bound: Literal["memory", "compute"] = "memory" if stream + host_time >= compute else "compute"
    tps = b / step
    eff = streamed / (bw * step)
    terms = [
        _term(
            "weights read per step",
            weights,
            "bytes",
            note("perf.formula.decode_weights", how=weights_how),
            "decode_weights",
        ),
        _term(
            "KV read per step",
            b * kv_seq,
            "bytes",
            note("perf.formula.decode_kv_tp" if tp > 1 else "perf.formula.decode_kv", batch=b, context=inp.context,
                 kv_dtype=inp.kv_dtype),
            "decode_kv",
        ),
        _term(
            "streaming time",
            stream,
            "s",
            note("perf.formula.decode_streaming", bandwidth=gpu.bandwidth_gbs, eta=fit.eta_stream),
            "decode_streaming",
        ),
        _term(
            "fixed per-layer cost",
            fixed,
            "s",
            note("perf.formula.decode_fixed", layers=spec.layers, tau_us=fit.tau_layer_s * 1e6),
            "decode_fixed",
        ),
        _term(
            "compute time",
            compute,
            "s",
            note("perf.formula.decode_compute_tp" if tp > 1 else "perf.formula.decode_compute", batch=b,
                 precision=rate.precision, tflops=rate.flops_per_s / 1e12, mfu=inp.mfu, tp=tp),
            "decode_compute",
        ),
    ]
    if host_time:
        terms.insert(3, _term(
            "system RAM time",
            host_time,
            "s",
            note(f"perf.formula.decode_host_{place.how}", read=host_read, share=place.host_share,
                 layers=place.host_layers, bandwidth=inp.host_bandwidth_gbs, eta=HOST_EFFICIENCY,
                 pcie=pcie_bytes_per_s(gpu) / 1e9),
            f"decode_host_{place.how}",
        ))
    if hop:
        terms.append(
            _term(
                "layer-split hand-offs",
                hop,
                "s",
                note("perf.formula.decode_hops", hop_ms=fit.tau_hop_s * 1e3, count=inp.count),
                "decode_hops",
            )
        )
    if comm and link is not None:
        terms.append(
            _term(
                "tensor-parallel all-reduce",
                comm,
                "s",
                note("perf.formula.decode_allreduce", layers=spec.layers, link=link.note),
                "decode_allreduce",
            )
        )
    if network:
        terms.append(_node_term(nodes, network, b * spec.hidden_size * 2))
    terms.append(
        _term(
            "decode throughput",
            tps,
            "tokens/s",
            note("perf.formula.decode_throughput_host" if host_time else "perf.formula.decode_throughput"),
            "decode_throughput",
        )
    )
    assumptions: list[Note | str] = [
        *spec.notes,
        note(
            f"perf.decode.fit_{fit.kind}",
            eta=fit.eta_stream,
            tau_us=fit.tau_layer_s * 1e6,
            error=max(abs(r) for r in fit.residuals),
        ),
        note("perf.decode.range", lo=DECODE_RANGE[0], hi=DECODE_RANGE[1]),
        note("perf.decode.kv", context=inp.context),
    ]
    if nodes > 1:
        assumptions.append(note("perf.decode.nodes", nodes=nodes, group=group, hop_us=NODE_HOP_S * 1e6))
    if mode == "layer":
        assumptions.append(note("perf.decode.layer_split", count=group, hop_ms=fit.tau_hop_s * 1e3))
    if mode == "tensor" and link is not None:
        assumptions.append(note("perf.decode.tp", tp=tp, link=link.note))
        if link.kind.startswith("pcie"):
            warnings.append(note("perf.decode.tp_pcie"))
    if spec.is_moe:
        assumptions.append(note("perf.decode.moe"))
    assumptions.append(note("perf.decode.engine", engine=ENGINE_LABEL[engine]))
    if place.how != "gpu":
        warnings.append(note(f"perf.decode.offload_{place.how}", share=place.host_share, layers=place.host_layers,
                             total=spec.layers, bandwidth=inp.host_bandwidth_gbs))
    return DecodeResult(
        tokens_per_s=tps,
        tokens_per_s_range=(tps * DECODE_RANGE[0], tps * DECODE_RANGE[1]),
        per_sequence_tokens_per_s=1 / step,
        step_time_s=step,
        bytes_per_step_per_gpu=per_gpu_bytes,
        bandwidth_efficiency=eff,
        bound=bound,
        parallel=mode,
        tp=tp,
        nodes=nodes,
        compute_precision=rate.precision,
        engine=engine,
        placement=place.how,
        host_share=place.host_share,
        host_bandwidth_gbs=inp.host_bandwidth_gbs if place.how == "cpu" else None,
        terms=terms,
        assumptions=assumptions,
        warnings=warnings,
    )


class PrefillInput(ToolInput):
    """Processing a prompt of ``prompt_tokens`` for ``batch`` sequences."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    model: ModelSpec
    gpu: GPU
    count: int = Field(1, ge=1, le=MAX_TIMED_GPUS, description="GPUs in all nodes together")
    nodes: int | None = Field(None, ge=1, le=64, description="machines the GPUs are spread over (layers split between "
                                                             "them); default: nodes of 8 past 8 GPUs")
    parallel: Parallel | None = None
    precision: str = "bf16"
    prompt_tokens: int = Field(1024, ge=1, le=10_000_000)
    batch: int = Field(1, ge=1, le=100_000)
    mfu: float | None = Field(None, ge=0.001, le=2, description="default: the efficiency fitted to published "
                                                               "prompt speeds of the engine's kernel path")
    engine: SpeedEngine | None = Field(None, description="default: llama.cpp for GGUF, vLLM otherwise")

    @model_validator(mode="after")
    def _whole_nodes(self) -> PrefillInput:
        self.nodes = self.nodes or default_nodes(self.gpu, self.count)
        check_nodes(self.count, self.nodes)
        return self


class PrefillResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens_per_s: TokensPerS
    tokens_per_s_range: tuple[TokensPerS, TokensPerS]
    ttft_s: Seconds
    ttft_s_range: tuple[Seconds, Seconds]
    flops: float
    compute_precision: str
    peak_flops_per_s: float = Field(description="dense peak, FLOP/s")
    mfu: float
    bound: Literal["memory", "compute"]
    parallel: str
    tp: int
    nodes: int = Field(1, description="pipeline stages, one per node")
    terms: list[Term]
    assumptions: list[Note | str] = Field(description="model notes (may be plain text), then this tool's notes")
    warnings: list[Note]


def estimate_prefill(inp: PrefillInput) -> PrefillResult:
    """Prompt processing: FLOPs = 2·P_active·tokens + causal attention, over peak × MFU."""
    spec, gpu = inp.model, inp.gpu
    fit = decode_fit(memory_class(gpu))
    engine = speed_engine(inp.precision, inp.engine)
    nodes = inp.nodes or 1  # set by the input check
    group = inp.count // nodes
    mode, tp = _parallel(spec, inp.precision, group, inp.parallel or _engine_parallel(engine, group))
    warnings: list[Note] = []
    if spec.max_context and inp.prompt_tokens > spec.max_context:
        warnings.append(
            note("perf.prefill.prompt_over", tokens=inp.prompt_tokens, model=spec.name, limit=spec.max_context)
        )
    rate = compute_rate(gpu, inp.precision, engine)
    warnings += rate.warnings
    s, b = inp.prompt_tokens, inp.batch
    flops = prefill_flops(spec, s, b)
    fitted = prefill_fit()[prefill_path(engine, gpu)]
    mfu = inp.mfu if inp.mfu is not None else fitted.achieved(rate.flops_per_s) / rate.flops_per_s
    lo, hi = (fitted.low, fitted.high) if inp.mfu is None else PREFILL_RANGE
    compute = flops / (rate.flops_per_s * mfu * tp * expert_gemm_share(spec, s, engine))
    weights = weight_read_bytes(spec, inp.precision, active=False)
    memory = weights / tp / (gpu.bandwidth_gbs * 1e9 * fit.eta_stream)
    fixed = spec.layers * fit.tau_layer_s
    hop = fit.tau_hop_s * math.log2(group) if mode == "layer" and group > 1 else 0.0
    network = node_hops(nodes, s * b * spec.hidden_size * 2)
    comm = 0.0
    link = link_model(gpu, group) if tp > 1 else None
    if link is not None:
        comm = 2 * spec.layers * allreduce_time(link, s * b * spec.hidden_size * 2, tp)
    # Weights left in system RAM are copied to the GPU for every chunk of the prompt: llama.cpp does so per
    # micro-batch (n_ubatch 512) when it offloads, vLLM per scheduler step (max_num_batched_tokens 8192).
    place = placement(spec, gpu, inp.count, inp.precision, "fp16", s, b, engine, nodes)
    chunk = get_engine(engine).prefill_chunk
    host = weight_read_bytes(spec, inp.precision, active=False) * place.host_share
    transfer = math.ceil(s * b / chunk) * host / pcie_bytes_per_s(gpu) if host else 0.0
    ttft = max(compute, memory) + transfer + fixed + hop + comm + network
    tps = s * b / ttft
    bound: Literal["memory", "compute"] = "compute" if compute >= memory + transfer else "memory"
    terms = [
        _term(
            "prefill FLOPs",
            flops,
            "FLOP",
            note("perf.formula.prefill_flops", active=spec.active_params, tokens=s * b),
            "prefill_flops",
        ),
        _term(
            "compute time",
            compute,
            "s",
            note("perf.formula.prefill_compute_tp" if tp > 1 else "perf.formula.prefill_compute",
                 precision=rate.precision, tflops=rate.flops_per_s / 1e12, mfu=mfu, tp=tp),
            "prefill_compute",
        ),
        _term(
            "weight streaming",
            memory,
            "s",
            note("perf.formula.prefill_streaming"),
            "prefill_streaming",
        ),
    ]
    if transfer:
        terms.append(_term("offloaded weights over PCIe", transfer, "s",
                           note("perf.formula.prefill_transfer", gb=host / 1e9, chunks=math.ceil(s * b / chunk),
                                chunk=chunk, pcie=pcie_bytes_per_s(gpu) / 1e9),
                           "prefill_transfer"))
        warnings.append(note("perf.prefill.offload", gb=host / 1e9))
    if comm and link is not None:
        terms.append(
            _term(
                "tensor-parallel all-reduce",
                comm,
                "s",
                note("perf.formula.prefill_allreduce", layers=spec.layers, tokens=s * b, link=link.note),
                "prefill_allreduce",
            )
        )
    if network:
        terms.append(_node_term(nodes, network, s * b * spec.hidden_size * 2))
    terms.append(
        _term(
            "time to first token",
            ttft,
            "s",
            note("perf.formula.prefill_ttft"),
            "prefill_ttft",
        )
    )
    path = note(f"perf.prefill.path_{fitted.path.replace('-', '_')}")
    how = note("perf.prefill.capped", eff=fitted.efficiency, cap=fitted.cap_flops_per_s / 1e12) \
        if fitted.cap_flops_per_s else note("perf.prefill.uncapped", eff=fitted.efficiency)
    efficiency = note("perf.prefill.mfu", mfu=mfu, precision=rate.precision, lo=lo, hi=hi) if inp.mfu is not None \
        else note("perf.prefill.fitted", mfu=mfu, precision=rate.precision, runs=fitted.runs,
                  families=fitted.families, lo=lo, hi=hi, path=path, how=how)
    assumptions: list[Note | str] = [
        *spec.notes,
        efficiency,
        *rate.notes,
        note("perf.prefill.dequant"),
    ]
    if mode == "layer":
        assumptions.append(note("perf.prefill.layer_split"))
    if tp > 1 and link is not None:
        assumptions.append(note("perf.prefill.tp", tp=tp, link=link.note))
    return PrefillResult(
        tokens_per_s=tps,
        tokens_per_s_range=(tps * lo, tps * hi),
        ttft_s=ttft,
        ttft_s_range=(ttft / hi, ttft / lo),
        flops=flops,
        compute_precision=rate.precision,
        peak_flops_per_s=rate.flops_per_s,
        mfu=mfu,
        bound=bound,
        parallel=mode,
        tp=tp,
        nodes=nodes,
        terms=terms,
        assumptions=assumptions,
        warnings=warnings,
    )


class ServingInput(ToolInput):
    """Continuous batching (vLLM-style) at a target context per sequence."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    model: ModelSpec
    gpu: GPU
    count: int = Field(1, ge=1, le=64, description="GPUs in one tensor-parallel replica")
    precision: str = "bf16"
    kv_dtype: str | None = None
    context: int = Field(4096, ge=1, le=10_000_000, description="KV tokens each running sequence holds")
    gpu_memory_utilization: float = Field(0.92, gt=0, le=1)
    max_num_seqs: int = Field(256, ge=1, le=100_000)
    mfu: float = Field(PREFILL_MFU, ge=0.001, le=1)


class ServingPoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch: int
    step_time_s: Seconds
    tokens_per_s: TokensPerS
    per_sequence_tokens_per_s: TokensPerS
    bound: Literal["memory", "compute"]


class ServingResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kv_capacity_tokens: Tokens
    max_concurrency: float = Field(description="sequences of `context` tokens the KV budget holds")
    max_batch: int = Field(description="min(floor(max_concurrency), max_num_seqs)")
    peak: ServingPoint | None
    knee_batch: int | None = Field(description="smallest batch at which a step turns compute-bound")
    points: list[ServingPoint]
    terms: list[Term]
    assumptions: list[Note]
    warnings: list[Note | str] = Field(description="the memory estimate's warnings (may be text), then this tool's")


def estimate_serving(inp: ServingInput) -> ServingResult:
    """Aggregate decode throughput vs batch, capped by the KV capacity of vLLM's memory budget.

    time per step(B) = max(bytes(weights + B·KV) / (BW·η), B·FLOPs / (peak·MFU)) + fixed costs;
    throughput = B / step. The KV capacity comes from ``tools.inference_memory`` (vLLM accounting).
    """
    visible, _ = engine_visible_bytes(inp.gpu)
    mem = estimate_inference_memory(
        InferenceMemoryInput(
            spec=inp.model,
            precision=inp.precision,
            kv_dtype=inp.kv_dtype,
            context=inp.context,
            batch=1,
            gpus=inp.count,
            parallel="tp",
            gpu_memory_bytes=visible,
            engine="vllm",
            gpu_memory_utilization=inp.gpu_memory_utilization,
            max_num_seqs=inp.max_num_seqs,
        )
    )
    capacity = mem.kv_capacity_tokens or 0
    conc = float(mem.max_concurrency or 0.0)
    max_batch = min(int(conc), inp.max_num_seqs)
    warnings: list[Note | str] = list(mem.warnings)
    points: list[ServingPoint] = []
    batches = sorted({b for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if b <= max_batch} | {max_batch})
    for b in (x for x in batches if x >= 1):
        d = estimate_decode(
            DecodeInput(
                model=inp.model,
                gpu=inp.gpu,
                count=inp.count,
                parallel="tensor",
                precision=inp.precision,
                kv_dtype=mem.kv_dtype,
                context=inp.context,
                batch=b,
                mfu=inp.mfu,
            )
        )
        points.append(
            ServingPoint(
                batch=b,
                step_time_s=d.step_time_s,
                tokens_per_s=d.tokens_per_s,
                per_sequence_tokens_per_s=d.per_sequence_tokens_per_s,
                bound=d.bound,
            )
        )
    if max_batch < 1:
        warnings.append(note("perf.serving.nothing_fits", context=inp.context, count=inp.count, gpu=inp.gpu.name))
    peak = points[-1] if points else None
    knee = next((p.batch for p in points if p.bound == "compute"), None)
    terms = [
        Term(
            name="kv_capacity",
            value=capacity,
            unit="tokens",
            formula=note("perf.formula.serving_kv_capacity"),
            explain=note("perf.explain.serving_kv_capacity"),
        ),
        Term(
            name="max_concurrency",
            value=conc,
            unit="sequences",
            formula=note("perf.formula.serving_concurrency", context=inp.context),
            explain=note("perf.explain.serving_concurrency"),
        ),
    ]
    if peak:
        terms.append(
            Term(
                name="peak throughput",
                value=peak.tokens_per_s,
                unit="tokens/s",
                formula=note("perf.formula.serving_peak", batch=peak.batch, step_ms=peak.step_time_s * 1e3),
                explain=note("perf.explain.serving_peak"),
            )
        )
    assumptions = [
        note("perf.serving.worst_case", context=inp.context),
        note("perf.serving.budget", utilization=inp.gpu_memory_utilization, max_num_seqs=inp.max_num_seqs),
        note("perf.serving.mfu", mfu=inp.mfu),
        note("perf.serving.no_prefill"),
    ]
    return ServingResult(
        kv_capacity_tokens=capacity,
        max_concurrency=conc,
        max_batch=max(max_batch, 0),
        peak=peak,
        knee_batch=knee,
        points=points,
        terms=terms,
        assumptions=assumptions,
        warnings=warnings,
    )
