"""The "Calculators" tab: memory sizing, throughput and build check — the chat's tools without the chat.

The handlers (``memory_calc``, ``perf_calc``, ``check_calc``) are plain functions of the form
values; they run the same registry tools as the engine (``advisor.toolspec.run_tool``, which only
accepts catalog names — never a file path) and return Markdown / HTML, errors as a clear line.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from advisor.toolspec import run_tool
from advisor.ui import chart, render
from advisor.ui.i18n import METHODS, label, t, ui_text
from advisor.ui.relabel import Labels
from knowledge import load_catalog
from knowledge.names import ENGINES as KNOWN_ENGINES

PRECISIONS = (
    "bf16",
    "fp16",
    "fp8",
    "int8",
    "int4",
    "awq",
    "gptq",
    "nf4",
    "fp4",
    "Q8_0",
    "Q6_K",
    "Q5_K_M",
    "Q4_K_M",
    "Q3_K_M",
    "Q2_K",
)
ENGINES = KNOWN_ENGINES  # every engine the tools model (SGLang too), from knowledge.names
CHASSIS = ("tower", "rack", "open-frame")
MAINS = ("120v-15a", "120v-20a", "220v-10a", "230v-16a")
FRAMEWORKS = ("PyTorch", "vLLM", "TensorRT-LLM", "SGLang", "llama.cpp", "DeepSpeed", "MindIE")
WORKLOADS = ("inference", "training", "scientific")


@functools.cache
def gpu_choices() -> list[tuple[str, str]]:
    """(display name, catalog id) of every catalog GPU, by vendor then name."""
    return [(g.name, g.id) for g in sorted(load_catalog().gpus, key=lambda g: (g.vendor, g.name))]


@functools.cache
def model_choices() -> list[tuple[str, str]]:
    return [(m.name, m.id) for m in sorted(load_catalog().models, key=lambda m: (m.family, m.params_b))]


@functools.cache
def platform_choices() -> list[tuple[str, str]]:
    return [(p.name, p.id) for p in load_catalog().platforms]


def workload_choices(lang: str, keys: tuple[str, ...] = ("inference", "training")) -> list[tuple[str, str]]:
    return [(label("use_case", k, lang), k) for k in keys]


def method_choices(lang: str) -> list[tuple[str, str]]:
    return [(label("method", k, lang), k) for k in METHODS if k != "pretrain"]


def _named(kind: str, values: tuple[str, ...], lang: str, blank: bool = False) -> list[tuple[str, str]]:
    """(label, value) choices of a dropdown whose values are ids (engines, chassis, circuits, workloads)."""
    return [("—", "")] * blank + [(label(kind, v, lang), v) for v in values]


def _s(value: Any) -> str | None:
    """A form string, or None when blank."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _i(value: Any, default: int | None = None) -> int | None:
    """A form whole number (blank: ``default``); out-of-range values go on to the tool, which says what fits."""
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return default
    number = float(value)
    return int(number) if math.isfinite(number) else int(math.copysign(10**18, number))


def _f(value: Any) -> float | None:
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return None
    number = float(value)
    return number if number > 0 else None


def _error(message: str, lang: str) -> str:
    return f"⚠️ {render.safe_markdown(ui_text(message, lang))}"


def memory_calc(
    workload: str,
    model: Any,
    params_b: Any,
    precision: Any,
    context: Any,
    batch: Any,
    gpu: Any,
    gpus: Any,
    engine: Any,
    method: Any,
    lang: str,
) -> tuple[str, str, Any]:
    """(chart HTML, Markdown summary, raw result) of an inference or training memory estimate."""
    args: dict[str, Any] = {}
    if _s(model):
        args["model"] = _s(model)
    elif _f(params_b):
        args["params_b"] = _f(params_b)
    else:
        return chart.memory_chart_svg(None, lang), _error(t("calc_need_model", lang), lang), None
    if _s(gpu):
        args["gpu"] = _s(gpu)
    args["gpus"] = _i(gpus, 1)
    if workload == "training":
        args["method"] = _s(method) or "lora"
        args["seq"] = _i(context, 2048)
        args["micro_batch"] = _i(batch, 1)
        name = "size_training"
    else:
        if _s(precision):
            args["precision"] = _s(precision)
        args["context"] = _i(context, 4096)
        args["batch"] = _i(batch, 1)
        args["engine"] = _s(engine) or "vllm"
        name = "size_inference"
    call = run_tool(name, args)
    if not call.ok:
        return (
            chart.memory_chart_svg(None, lang),
            _error(call.error_in(lang) or t("calc_error", lang), lang),
            {"arguments": args},
        )
    return chart.memory_chart_svg(chart.sizing_of(call), lang), render.calls_markdown([call], lang), call.result


def perf_calc(
    model: Any, params_b: Any, gpu: Any, count: Any, precision: Any, context: Any, batch: Any, serving: bool, lang: str
) -> tuple[str, Any]:
    """(Markdown, raw results) of decode + prefill (+ serving) speed on one configuration."""
    base: dict[str, Any] = {}
    if _s(model):
        base["model"] = _s(model)
    elif _f(params_b):
        base["params_b"] = _f(params_b)
    else:
        return _error(t("calc_need_model", lang), lang), None
    if not _s(gpu):
        return _error(t("calc_need_gpu", lang), lang), None
    base["gpu"] = _s(gpu)
    base["count"] = _i(count, 1)
    if _s(precision):
        base["precision"] = _s(precision)
    ctx = _i(context, 4096)
    decode = run_tool("perf_decode", {**base, "context": ctx, "batch": _i(batch, 1)})
    if not decode.ok:
        return _error(decode.error_in(lang) or t("calc_error", lang), lang), None
    prefill = run_tool("perf_prefill", {**base, "prompt_tokens": ctx, "batch": 1})
    serve = run_tool("perf_serving", {**base, "context": ctx}) if serving else None
    md = render.calls_markdown([decode, prefill, serve], lang)
    errors = [c.error_in(lang) for c in (prefill, serve) if c is not None and not c.ok]
    if errors:
        md += "\n\n" + "\n".join(_error(e or t("calc_error", lang), lang) for e in errors)
    raw = {"decode": decode.result, "prefill": prefill.result, "serving": serve.result if serve else None}
    return md, raw


def check_calc(
    gpu: Any,
    count: Any,
    platform: Any,
    psu_w: Any,
    chassis: Any,
    mains: Any,
    workload: Any,
    precision: Any,
    framework: Any,
    cuda_required: bool,
    model: Any,
    context: Any,
    lang: str,
) -> tuple[str, Any]:
    """(Markdown checklist + totals, raw report) of a planned build."""
    if not _s(gpu):
        return _error(t("calc_need_gpu", lang), lang), None
    args: dict[str, Any] = {"gpus": [{"gpu": _s(gpu), "count": _i(count, 1)}], "cuda_required": bool(cuda_required)}
    for key, value in (
        ("platform", _s(platform)),
        ("chassis", _s(chassis)),
        ("mains", _s(mains)),
        ("workload", _s(workload)),
        ("precision", _s(precision)),
        ("framework", _s(framework)),
        ("model", _s(model)),
    ):
        if value:
            args[key] = value
    if _f(psu_w):
        args["psu_w"] = _f(psu_w)
    if args.get("model"):
        args.setdefault("workload", "inference")
        args["context"] = _i(context, 8192)
    call = run_tool("check_build", args)
    report = call.result
    if not call.ok or report is None:  # a successful call always carries its result
        return _error(call.error_in(lang) or t("calc_error", lang), lang), {"arguments": args}
    md = render.calls_markdown([call], lang)
    return md, report


# ------------------------------------------------------------------------------ layout


def build(labels: Labels, lang_box: Any) -> None:
    """Add the calculators tab's components to the current Blocks context."""
    import gradio as gr

    lang = labels.lang
    gpus, models, plats = gpu_choices(), model_choices(), platform_choices()
    labels.text(gr.Markdown(t("calc_intro", lang)), "calc_intro")
    with gr.Tabs():
        with gr.Tab(t("calc_memory", lang), id="calc-memory") as tab_mem:
            labels.label(tab_mem, "calc_memory")
            with gr.Row():
                m_work = labels.add(
                    gr.Radio(workload_choices(lang), value="inference", label=t("calc_workload", lang)),
                    lambda lg: {"label": t("calc_workload", lg), "choices": workload_choices(lg)},
                )
                m_model = labels.label(
                    gr.Dropdown(
                        models,
                        value="llama-3.1-8b",
                        allow_custom_value=True,
                        label=t("model", lang),
                        elem_id="calc-mem-model",
                    ),
                    "model",
                )
                m_params = labels.label(gr.Number(None, label=t("params_b", lang)), "params_b")
                m_prec = labels.label(
                    gr.Dropdown(list(PRECISIONS), value="bf16", allow_custom_value=True, label=t("precision", lang)),
                    "precision",
                )
            with gr.Row():
                m_ctx = labels.label(
                    gr.Number(8192, label=t("context_tokens", lang), precision=0), "context_tokens"
                )
                m_batch = labels.label(gr.Number(1, label=t("calc_batch", lang), precision=0), "calc_batch")
                m_gpu = labels.label(
                    gr.Dropdown(gpus, value="rtx-4090", allow_custom_value=True, label=t("gpu", lang)), "gpu"
                )
                m_gpus = labels.label(gr.Number(1, label=t("calc_gpus", lang), precision=0), "calc_gpus")
                m_engine = labels.add(
                    gr.Dropdown(_named("engine", ENGINES, lang), value="vllm", label=t("calc_engine", lang)),
                    lambda lg: {"label": t("calc_engine", lg), "choices": _named("engine", ENGINES, lg)},
                )
                m_method = labels.add(
                    gr.Dropdown(method_choices(lang), value="lora", label=t("calc_method", lang)),
                    lambda lg: {"label": t("calc_method", lg), "choices": method_choices(lg)},
                )
            m_run = labels.text(gr.Button(t("calc_run", lang), variant="primary", elem_id="calc-mem-run"), "calc_run")
            m_chart = gr.HTML(chart.memory_chart_svg(None, lang), elem_id="calc-mem-chart")
            m_out = gr.Markdown(elem_id="calc-mem-out")
            with gr.Accordion(t("calc_details", lang), open=False) as acc1:
                m_raw = gr.JSON()
            labels.label(acc1, "calc_details")
            m_run.click(
                memory_calc,
                [m_work, m_model, m_params, m_prec, m_ctx, m_batch, m_gpu, m_gpus, m_engine, m_method, lang_box],
                [m_chart, m_out, m_raw],
                api_visibility="private",
            )

        with gr.Tab(t("calc_perf", lang), id="calc-perf") as tab_perf:
            labels.label(tab_perf, "calc_perf")
            with gr.Row():
                p_model = labels.label(
                    gr.Dropdown(models, value="llama-3.1-8b", allow_custom_value=True, label=t("model", lang)), "model"
                )
                p_params = labels.label(gr.Number(None, label=t("params_b", lang)), "params_b")
                p_gpu = labels.label(
                    gr.Dropdown(gpus, value="rtx-4090", allow_custom_value=True, label=t("gpu", lang)), "gpu"
                )
                p_count = labels.label(gr.Number(1, label=t("calc_gpus", lang), precision=0), "calc_gpus")
            with gr.Row():
                p_prec = labels.label(
                    gr.Dropdown(list(PRECISIONS), value="bf16", allow_custom_value=True, label=t("precision", lang)),
                    "precision",
                )
                p_ctx = labels.label(
                    gr.Number(4096, label=t("context_tokens", lang), precision=0), "context_tokens"
                )
                p_batch = labels.label(gr.Number(1, label=t("calc_batch", lang), precision=0), "calc_batch")
                p_serve = labels.label(gr.Checkbox(True, label=t("calc_serving", lang)), "calc_serving")
            p_run = labels.text(gr.Button(t("calc_run", lang), variant="primary", elem_id="calc-perf-run"), "calc_run")
            p_out = gr.Markdown(elem_id="calc-perf-out")
            with gr.Accordion(t("calc_details", lang), open=False) as acc2:
                p_raw = gr.JSON()
            labels.label(acc2, "calc_details")
            p_run.click(
                perf_calc,
                [p_model, p_params, p_gpu, p_count, p_prec, p_ctx, p_batch, p_serve, lang_box],
                [p_out, p_raw],
                api_visibility="private",
            )

        with gr.Tab(t("calc_check", lang), id="calc-check") as tab_chk:
            labels.label(tab_chk, "calc_check")
            with gr.Row():
                c_gpu = labels.label(
                    gr.Dropdown(gpus, value="rtx-4090", allow_custom_value=True, label=t("gpu", lang)), "gpu"
                )
                c_count = labels.label(gr.Number(2, label=t("calc_gpus", lang), precision=0), "calc_gpus")
                c_plat = labels.label(
                    gr.Dropdown([("—", ""), *plats], value="", allow_custom_value=True, label=t("calc_platform", lang)),
                    "calc_platform",
                )
                c_psu = labels.label(gr.Number(None, label=t("calc_psu", lang)), "calc_psu")
            with gr.Row():
                c_chassis = labels.add(
                    gr.Dropdown(_named("chassis", CHASSIS, lang, blank=True), value="", label=t("calc_chassis", lang)),
                    lambda lg: {"label": t("calc_chassis", lg), "choices": _named("chassis", CHASSIS, lg, blank=True)},
                )
                c_mains = labels.add(
                    gr.Dropdown(
                        _named("mains", MAINS, lang, blank=True),
                        value="",
                        allow_custom_value=True,
                        label=t("calc_mains", lang),
                    ),
                    lambda lg: {"label": t("calc_mains", lg), "choices": _named("mains", MAINS, lg, blank=True)},
                )
                c_work = labels.add(
                    gr.Dropdown(
                        _named("use_case", WORKLOADS, lang, blank=True),
                        value="inference",
                        label=t("calc_workload", lang),
                    ),
                    lambda lg: {
                        "label": t("calc_workload", lg),
                        "choices": _named("use_case", WORKLOADS, lg, blank=True),
                    },
                )
                c_prec = labels.label(
                    gr.Dropdown(["", *PRECISIONS], value="", allow_custom_value=True, label=t("precision", lang)),
                    "precision",
                )
            with gr.Row():
                c_fw = labels.label(
                    gr.Dropdown(["", *FRAMEWORKS], value="", allow_custom_value=True, label=t("calc_framework", lang)),
                    "calc_framework",
                )
                c_model = labels.label(
                    gr.Dropdown(
                        [("—", ""), *models], value="", allow_custom_value=True, label=t("calc_model_opt", lang)
                    ),
                    "calc_model_opt",
                )
                c_ctx = labels.label(
                    gr.Number(8192, label=t("context_tokens", lang), precision=0), "context_tokens"
                )
                c_cuda = labels.label(gr.Checkbox(False, label=t("calc_cuda", lang)), "calc_cuda")
            c_run = labels.text(gr.Button(t("calc_run", lang), variant="primary", elem_id="calc-check-run"), "calc_run")
            c_out = gr.Markdown(elem_id="calc-check-out")
            with gr.Accordion(t("calc_details", lang), open=False) as acc3:
                c_raw = gr.JSON()
            labels.label(acc3, "calc_details")
            c_run.click(
                check_calc,
                [
                    c_gpu,
                    c_count,
                    c_plat,
                    c_psu,
                    c_chassis,
                    c_mains,
                    c_work,
                    c_prec,
                    c_fw,
                    c_cuda,
                    c_model,
                    c_ctx,
                    lang_box,
                ],
                [c_out, c_raw],
                api_visibility="private",
            )
