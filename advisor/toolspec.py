"""Tool registry for the engine and for LLM function calling: name, description, pydantic input, callable.

Tools whose real input holds Python objects (a ``ModelSpec``, a catalog ``GPU``) are offered
through a *facade* input model derived from the real one: the same fields, with the object
fields replaced by catalog names. The facade's ``model_json_schema()`` is what the LLM sees,
so the schemas follow the tools as they change. Model names must be catalog names here — a
file path from an LLM is refused (``tools.modelspec`` would read any file it is given).
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from advisor.session import ToolCall
from knowledge import load_catalog
from knowledge.errors import AdvisorError
from knowledge.markets import REGIONS, Availability, availability
from knowledge.messages import msg
from knowledge.schema import GPU, Model, Platform
from tools.api_cost import ApiCostInput, ApiCostResult, api_cost
from tools.catalog_query import AffordableInput, AffordableResult, FindGPUsInput, FindGPUsResult, affordable, find_gpus
from tools.compat import BuildInput, BuildReport, check_build
from tools.errors import ToolError, error_note
from tools.inference_memory import InferenceMemoryInput, InferenceMemoryResult, estimate_inference_memory
from tools.inputs import ToolInput
from tools.latency import LoadInput, LoadResult, ttft_under_load
from tools.modelspec import ModelSpec, checkpoint_precision
from tools.ownership import MachineCostInput, MachineCostResult, machine_cost
from tools.perf import (
    DecodeInput,
    DecodeResult,
    PrefillInput,
    PrefillResult,
    ServingInput,
    ServingResult,
    estimate_decode,
    estimate_prefill,
    estimate_serving,
)
from tools.pooled import PooledInput, PooledResult, pooled_fit
from tools.precision import native_precision
from tools.pricing import GPUPrice, gpu_price
from tools.recommend import Recommendation, RecommendInput, recommend
from tools.rent import RentVsBuyInput, RentVsBuyResult, rent_vs_buy
from tools.rent_choices import RentChoicesInput, RentChoicesResult, rent_choices
from tools.rentals import RentalPricesInput, RentalPricesResult, rental_prices
from tools.result import note
from tools.scale_out import ScaleOutInput, ScaleOutPlan, plan_scale_out
from tools.scientific import ScientificInput, ScientificResult, estimate_fp64
from tools.systems import SystemInfoInput, SystemInfoResult, system_info
from tools.training_memory import TrainingMemoryInput, TrainingMemoryResult, estimate_training_memory
from tools.training_time import TrainingTimeInput, TrainingTimeResult, estimate_training_time
from tools.value import (
    BestValueInput,
    BestValueResult,
    ValueInput,
    ValueOption,
    ValueResult,
    best_value,
    value_for_money,
)


class UnknownToolError(LookupError):
    """The name is not a registered tool."""


class GPUInfo(GPU):
    """``gpu_info``'s result: the catalog entry and its price in both currencies."""

    price_both: GPUPrice
    markets: dict[str, Availability] = Field(default_factory=dict, description="status per region (cn, global)")


class SearchResult(BaseModel):
    """``search_knowledge``'s result (passages as the search module returns them)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_model: type[BaseModel]
    run: Callable[[Any], Any]  # takes an instance of input_model
    output_model: type[BaseModel] = SearchResult

    def schema(self) -> dict[str, Any]:
        """OpenAI function-calling entry: ``{"type": "function", "function": {...}}``."""
        params = self.input_model.model_json_schema()
        params.pop("title", None)
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": params}}

    def slim_schema(self) -> dict[str, Any]:
        """The schema a small local model is shown: the user-level fields only (``SLIM_FIELDS``), the rest left
        to their defaults; a few hundred tokens instead of the full input model."""
        full = self.schema()
        keep = SLIM_FIELDS.get(self.name)
        params = full["function"]["parameters"]
        if keep is None:
            return full
        props = {k: v for k, v in params.get("properties", {}).items() if k in keep}
        slim: dict[str, Any] = {"type": "object", "properties": props,
                                "required": [r for r in params.get("required", []) if r in props]}
        if "$defs" in params and "$ref" in json.dumps(props):
            slim["$defs"] = params["$defs"]
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": slim}}

    def title(self, lang: str) -> str:
        """The tool's display name in ``lang`` (message ``tool.<name>``)."""
        return msg(lang, f"tool.{self.name}")


# what a user would say, per tool: the fields a small model is offered (the others keep their defaults)
SLIM_FIELDS: dict[str, tuple[str, ...]] = {
    "size_inference": ("model", "gpu", "gpus", "precision", "context", "batch", "engine"),
    "perf_decode": ("model", "gpu", "count", "precision", "context", "batch"),
    "size_training": ("model", "gpu", "gpus", "method", "seq", "zero_stage"),
    "training_time": ("model", "gpu", "count", "tokens"),
    "recommend": ("workload", "model", "precision", "context", "concurrency", "method", "budget_usd", "budget_cny"),
    "scientific_fp64": ("gpu", "count", "problem", "n", "cells"),
    "gpu_info": ("name",),
    "model_info": ("name",),
}

# ----------------------------------------------------------------------------- facades


class ToolArgs(ToolInput):
    """Arguments a model or client sends to a tool: unknown keys refused, figures finite."""

    model_config = ConfigDict(extra="forbid")


def facade(name: str, real: type[BaseModel], *, drop: tuple[str, ...] = (),
           replace: dict[str, tuple[Any, Any]] | None = None, doc: str = "") -> type[BaseModel]:
    """A copy of ``real``'s fields without ``drop`` and with ``replace`` swapped in (name → (type, Field))."""
    replace = replace or {}
    fields: dict[str, Any] = {}
    for fname, info in real.model_fields.items():
        if fname in drop or fname in replace:
            continue
        fields[fname] = (info.annotation, info)
    fields.update(replace)
    model = create_model(name, __base__=ToolArgs, __doc__=doc or real.__doc__, **fields)
    return model


_MODEL_NAME = (str | None, Field(None, description="catalog model name or alias, e.g. 'llama-3.1-70b'"))
_PARAMS_B = (float | None, Field(None, gt=0, le=100_000, description="custom model size in billions (no name)"))
_GPU_NAME = (str, Field(description="catalog GPU name or alias, e.g. 'RTX 4090', 'H100 SXM'"))
_GPU_OPT = (str | None, Field(None, description="catalog GPU name for the fit check, e.g. 'A100 80GB'"))

SizeInferenceArgs = facade("SizeInferenceArgs", InferenceMemoryInput, drop=("spec",), replace={"model": _MODEL_NAME})
SizeTrainingArgs = facade("SizeTrainingArgs", TrainingMemoryInput, drop=("cuda_context_bytes", "buffer_factor"),
                          replace={"model": _MODEL_NAME, "params_b": _PARAMS_B, "gpu": _GPU_OPT})
DecodeArgs = facade("DecodeArgs", DecodeInput, replace={"model": _MODEL_NAME, "params_b": _PARAMS_B,
                                                        "gpu": _GPU_NAME})
PrefillArgs = facade("PrefillArgs", PrefillInput, replace={"model": _MODEL_NAME, "params_b": _PARAMS_B,
                                                           "gpu": _GPU_NAME})
LoadArgs = facade("LoadArgs", LoadInput, replace={"model": _MODEL_NAME, "params_b": _PARAMS_B, "gpu": _GPU_NAME})
ServingArgs = facade("ServingArgs", ServingInput, replace={"model": _MODEL_NAME, "params_b": _PARAMS_B,
                                                           "gpu": _GPU_NAME})
TrainingTimeArgs = facade("TrainingTimeArgs", TrainingTimeInput, replace={
    "gpu": _GPU_NAME, "model": _MODEL_NAME, "params_b": _PARAMS_B,
    "params": (float | None, Field(None, gt=0, le=1e15, description="N: (active) parameters; default: the model's")),
})
ScientificArgs = facade("ScientificArgs", ScientificInput, replace={"gpu": _GPU_NAME})


class SearchArgs(ToolArgs):
    """Search the knowledge base (buying guide, sizing explanations, GPU and model cards)."""

    query: str = Field(min_length=1, max_length=1000)
    k: int = Field(3, ge=1, le=10)
    lang: Literal["zh", "en"] | None = None


class ValueOptionArgs(ToolArgs):
    gpu: str = _GPU_NAME[1]
    count: int = Field(1, ge=1, le=4096)
    tokens_per_s: float | None = Field(None, ge=0, description="decode speed from perf_decode, if sized")
    fits: bool | None = Field(None, description="whether it holds the workload, from a sizing")
    concurrent_requests: float | None = Field(None, ge=0, description="requests that fit at once, from a sizing")


ValueArgs = facade("ValueArgs", ValueInput, replace={
    "options": (list[ValueOptionArgs], Field(min_length=1, max_length=8, description="configurations to price"))})


class NameArgs(ToolArgs):
    name: str = Field(min_length=1, max_length=200, description="catalog name or alias")


# ----------------------------------------------------------------------------- adapters


def catalog_model_id(name: str) -> str:
    """The catalog id for a model name, a checkpoint name's weight precision kept on it ('GLM-5-FP8' →
    'glm-5-fp8', which the tools size at FP8 as the CLI does); UnknownNameError for anything else (paths
    included)."""
    model = load_catalog().model(name)
    precision = checkpoint_precision(name, model)
    return f"{model.id}-{precision}" if precision and precision != native_precision(model.native_dtype) else model.id


def _spec(args: BaseModel) -> ModelSpec:
    model, params_b = getattr(args, "model", None), getattr(args, "params_b", None)
    if model:
        return ModelSpec.from_catalog(catalog_model_id(model))
    if params_b:
        return ModelSpec.custom(params_b)
    raise ToolError(note("error.model_or_params"), suggestions=["model='llama-3.1-8b'", "params_b=70"])


def _rest(args: BaseModel, *extra: str) -> dict[str, Any]:
    return args.model_dump(exclude={"model", "params_b", "gpu", *extra}, exclude_unset=True)


def _size_inference(a: BaseModel) -> Any:
    data = a.model_dump(exclude_unset=True)
    if data.get("model"):
        data["model"] = catalog_model_id(data["model"])
    return estimate_inference_memory(InferenceMemoryInput(**data))


def _size_training(a: BaseModel) -> Any:
    gpu = load_catalog().gpu(a.gpu) if a.gpu else None  # type: ignore[attr-defined]
    return estimate_training_memory(TrainingMemoryInput(model=_spec(a), gpu=gpu, **_rest(a)))


def _perf(real: type[BaseModel], fn: Callable[[Any], Any]) -> Callable[[BaseModel], Any]:
    def run(a: BaseModel) -> Any:
        gpu = load_catalog().gpu(a.gpu)  # type: ignore[attr-defined]
        spec, rest = _spec(a), _rest(a)
        # no precision said: the model's own files (gpt-oss MXFP4, DeepSeek FP8, Kimi K2.5 INT4), as the sizing does
        rest.setdefault("precision", spec.weight_precision or spec.native_dtype)
        return fn(real(model=spec, gpu=gpu, **rest))
    return run


def _training_time(a: BaseModel) -> Any:
    gpu = load_catalog().gpu(a.gpu)  # type: ignore[attr-defined]
    data = _rest(a, "params")
    params = a.params  # type: ignore[attr-defined]
    if params is None:
        spec = _spec(a)
        params = spec.active_params
        data.setdefault("model_name", spec.name)
    return estimate_training_time(TrainingTimeInput(params=params, gpu=gpu, **data))


def _scientific(a: BaseModel) -> Any:
    return estimate_fp64(ScientificInput(gpu=load_catalog().gpu(a.gpu), **_rest(a)))  # type: ignore[attr-defined]


def _check(a: BaseModel) -> Any:
    data = a.model_dump(exclude_unset=True)
    if data.get("model"):
        data["model"] = catalog_model_id(data["model"])
    return check_build(BuildInput(**data))


def _recommend(a: BaseModel) -> Any:
    data = a.model_dump(exclude_unset=True)
    if data.get("model"):
        data["model"] = catalog_model_id(data["model"])
    return recommend(RecommendInput(**data))


def _search(a: BaseModel) -> Any:
    from knowledge.search import search  # heavy (vector store): imported on first use

    res = search(a.query, k=a.k, lang=a.lang)  # type: ignore[attr-defined]
    return res.to_json()


def _gpu_info(a: BaseModel) -> Any:
    """The catalog entry, with its price in both currencies (converted at the stated, dated rate)."""
    gpu = load_catalog().gpu(a.name)  # type: ignore[attr-defined]
    return {**gpu.model_dump(mode="json"), "price_both": gpu_price(gpu).model_dump(),
            "markets": {region: availability(gpu.id, region).model_dump(mode="json") for region in REGIONS}}


def _value(a: BaseModel) -> Any:
    catalog = load_catalog()
    options = [ValueOption(gpu=catalog.gpu(o.gpu), count=o.count, tokens_per_s=o.tokens_per_s, fits=o.fits,
                           concurrent_requests=o.concurrent_requests)
               for o in a.options]  # type: ignore[attr-defined]
    return value_for_money(ValueInput(options=options, **_rest(a, "options")))


def _model_info(a: BaseModel) -> Any:
    return load_catalog().model(a.name)  # type: ignore[attr-defined]


def _platform_info(a: BaseModel) -> Any:
    return load_catalog().platform(a.name)  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- registry

_SPECS = [
    ToolSpec("size_inference", "Memory one GPU needs to serve a model: weights, KV cache, activations and "
             "overhead, per GPU, with a fit check when a GPU is named. Engine accounting: vllm, llamacpp or "
             "transformers.", SizeInferenceArgs, _size_inference,
             output_model=InferenceMemoryResult),
    ToolSpec("size_training", "GPU and host memory of training or fine-tuning (full, LoRA, QLoRA): model "
             "states, activations, overhead; ZeRO/FSDP sharding over several GPUs; fit check with a GPU.",
             SizeTrainingArgs, _size_training,
             output_model=TrainingMemoryResult),
    ToolSpec("perf_decode", "Decode (generation) speed in tokens/s on a GPU configuration, bandwidth-bound "
             "roofline with calibrated efficiency.", DecodeArgs, _perf(DecodeInput, estimate_decode),
             output_model=DecodeResult),
    ToolSpec("perf_prefill", "Prompt processing speed and time to first token.", PrefillArgs,
             _perf(PrefillInput, estimate_prefill),
             output_model=PrefillResult),
    ToolSpec("ttft_under_load", "Mean time to first token when N chat users send prompts over time (each reads "
             "the streamed answer and thinks before the next): prompts queue for prefill (M/D/1).", LoadArgs,
             _perf(LoadInput, ttft_under_load), output_model=LoadResult),
    ToolSpec("perf_serving", "Continuous-batching throughput vs batch size, capped by the KV-cache capacity.",
             ServingArgs, _perf(ServingInput, estimate_serving),
             output_model=ServingResult),
    ToolSpec("training_time", "Wall time, GPU-hours and cost of a training run: 6·N·D FLOPs at a stated MFU.",
             TrainingTimeArgs, _training_time,
             output_model=TrainingTimeResult),
    ToolSpec("scientific_fp64", "FP64 scientific workload: memory of a dense matrix or grid, time at FP64 "
             "throughput or memory bandwidth.", ScientificArgs, _scientific,
             output_model=ScientificResult),
    ToolSpec("check_build", "Compatibility check of a planned machine: power, PSU, wall circuit, PCIe lanes, "
             "slots, cooling, interconnect, precision support, software stack, memory fit.", BuildInput,
             _check,
             output_model=BuildReport),
    ToolSpec("recommend", "Rank the catalog GPUs and counts that fit a workload, budget and constraints; "
             "keeps every rejection with its reason.", RecommendInput, _recommend,
             output_model=Recommendation),
    ToolSpec("search_knowledge", "Search the knowledge base for passages to cite by id.", SearchArgs, _search, ),
    ToolSpec("gpu_info", "Catalog entry of one GPU: memory, bandwidth, dense throughput, power, form factor, "
             "interconnect, software, price.", NameArgs, _gpu_info,
             output_model=GPUInfo),
    ToolSpec("model_info", "Catalog entry of one model: parameters, layers, attention, context.", NameArgs,
             _model_info,
             output_model=Model),
    ToolSpec("platform_info", "Catalog entry of one CPU platform: PCIe lanes (all, and wired to GPU slots), memory "
             "channels, sockets, power.", NameArgs, _platform_info,
             output_model=Platform),
    ToolSpec("find_gpus", "Catalog GPUs meeting conditions: a supported precision (fp8, fp4 …), a feature (nvlink, "
             "ecc, fp64), vendor, domestic, minimum memory.", FindGPUsInput, find_gpus,
             output_model=FindGPUsResult),
    ToolSpec("affordable", "What a budget (USD) buys: the GPU configurations that fit it, most total memory first, "
             "with the largest model each holds at 4-bit and 16-bit.", AffordableInput, affordable,
             output_model=AffordableResult),
    ToolSpec("value_for_money", "Per-price value of GPU configurations: dense BF16 and FP64 TFLOPS, memory, "
             "bandwidth and (given) decode tokens/s per 10,000 CNY or 1,000 USD/EUR of catalog price.", ValueArgs,
             _value,
             output_model=ValueResult),
    ToolSpec("best_value", "Catalog cards (by tier, at least some memory) ranked by bandwidth, memory or dense "
             "TFLOPS per price, when no model or budget is named yet.", BestValueInput, best_value,
             output_model=BestValueResult),
    ToolSpec("plan_network", "The network between GPU nodes of one job (2 to 8 nodes): port speed, ports per node, "
             "bandwidth per GPU, NICs, cabling, switches and their cost (USD), with sources.", ScaleOutInput,
             plan_scale_out, output_model=ScaleOutPlan),
    ToolSpec("pooled_fit", "Different cards in one machine used together by llama.cpp's layer split: whether a "
             "model fits their memory combined and its decode speed across them.", PooledInput, pooled_fit,
             output_model=PooledResult),
    ToolSpec("machine_cost", "What a machine of N nodes × M GPUs costs to buy (cards + hosts) and to run: wall power, "
             "electricity per year and over a horizon at a tariff and hours a day, and nodes per rack for a rack's "
             "kW.", MachineCostInput, machine_cost, output_model=MachineCostResult),
    ToolSpec("api_cost", "What a hosted LLM API (GPT-4o mini, DeepSeek …) costs for a day's input and output tokens, "
             "by day, month and year at its dated list price; with a machine that would serve the traffic instead, "
             "that machine's monthly cost over its life and the months to break even.", ApiCostInput, api_cost,
             output_model=ApiCostResult),
    ToolSpec("rent_vs_buy", "Buying N GPUs (+ host) vs renting them by the hour: monthly costs, break-even months, "
             "and the cost of a project of M months.", RentVsBuyInput, rent_vs_buy,
             output_model=RentVsBuyResult),
    ToolSpec("rental_prices", "Where one GPU can be rented: every recorded offer by provider (billing, date, source), "
             "cheapest first in the buyer's currency, and the typical on-demand rate rent-vs-buy uses.",
             RentalPricesInput, rental_prices, output_model=RentalPricesResult),
    ToolSpec("rent_choices", "Which GPU to rent for a job: every rentable GPU at the smallest count that runs it, "
             "priced per hour and for the job, cheapest first.", RentChoicesInput, rent_choices,
             output_model=RentChoicesResult),
    ToolSpec("system_info", "A complete server or rack system (DGX, HGX, Atlas 800, NVL72): its cards, CPUs, memory, "
             "power, cooling and price with its kind and date.", SystemInfoInput, system_info,
             output_model=SystemInfoResult),
]
TOOLS: dict[str, ToolSpec] = {s.name: s for s in _SPECS}


Out = TypeVar("Out", bound=BaseModel)


def typed(call: ToolCall, model: type[Out]) -> Out:
    """``call``'s stored JSON result re-validated into ``model`` (its tool's output model), once per call."""
    cached = call.typed_result()
    if isinstance(cached, model):
        return cached
    out = model.model_validate(call.result)
    call.keep_typed(out)
    return out


def output_model(name: str) -> type[BaseModel]:
    """The pydantic output model of tool ``name``."""
    return get_tool(name).output_model


def get_tool(name: str) -> ToolSpec:
    try:
        return TOOLS[name]
    except KeyError:
        raise UnknownToolError(f"unknown tool {name!r}; known: {', '.join(TOOLS)}") from None


def openai_tools(names: list[str] | None = None) -> list[dict[str, Any]]:
    """Function-calling schemas of the named tools (default: all)."""
    return [TOOLS[n].schema() for n in (names or list(TOOLS))]


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    return obj


def error_text(exc: BaseException) -> str:
    """A one-line English message for a domain or validation error (the English of :func:`error_note`)."""
    lines = error_note(exc).text.splitlines()
    return lines[0] if lines else type(exc).__name__


# The calculators are pure functions of their arguments, so identical calls share one result (kept as
# JSON text, so no caller can alter a cached result). Retrieval is not cached: the index may change.
_CACHE: OrderedDict[str, str] = OrderedDict()
_CACHE_SIZE = 256
_CACHE_CHARS = 8_000_000  # and at most this much text in all: a recommendation's result is ~100–200 k characters
_cache_chars = 0
_UNCACHED = {"search_knowledge"}
_CACHE_LOCK = threading.Lock()


def _cache_key(name: str, arguments: dict[str, Any]) -> str | None:
    if name in _UNCACHED:
        return None
    try:  # the catalog object too: results depend on it (a user's GPU file, a reloaded catalog)
        return f"{id(load_catalog())}:{name}:" + json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def _remember(key: str, text: str) -> None:
    global _cache_chars
    with _CACHE_LOCK:
        old = _CACHE.pop(key, None)
        _cache_chars += len(text) - len(old or "")
        _CACHE[key] = text
        while _CACHE and (len(_CACHE) > _CACHE_SIZE or _cache_chars > _CACHE_CHARS):
            _cache_chars -= len(_CACHE.popitem(last=False)[1])


def run_tool(name: str, arguments: dict[str, Any], by: Literal["planner", "llm"] = "planner") -> ToolCall:
    """Validate and run one tool. Domain and validation errors land in ``ToolCall.error``;
    an unknown name raises UnknownToolError."""
    spec = get_tool(name)
    t0 = time.perf_counter()
    call = ToolCall(name=name, arguments=dict(arguments), by=by)
    key = _cache_key(name, arguments)
    with _CACHE_LOCK:
        hit = _CACHE.get(key) if key else None
        if hit is not None:
            _CACHE.move_to_end(key)  # type: ignore[arg-type]
    if hit is not None:
        call.result = json.loads(hit)
        call.duration_ms = round((time.perf_counter() - t0) * 1000, 3)
        return call
    try:
        args = spec.input_model.model_validate(arguments)
        call.result = _jsonable(spec.run(args))
        if key:
            _remember(key, json.dumps(call.result, ensure_ascii=False))
    except ValidationError as exc:
        call.error_note = error_note(exc)
        call.error, call.error_kind = error_text(exc), "validation"
    except AdvisorError as exc:  # the project's own errors only: anything else is a bug and surfaces as one
        call.error_note = error_note(exc)
        call.error, call.error_kind = error_text(exc), "domain"
    call.duration_ms = round((time.perf_counter() - t0) * 1000, 3)
    return call
