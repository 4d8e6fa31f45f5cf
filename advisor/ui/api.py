"""Programmatic endpoints of the web app: the deterministic tools and the chat.

``register(get_advisor)`` (inside a ``gr.Blocks`` context) exposes ``/size``, ``/perf``,
``/check``, ``/recommend`` and ``/search`` through Gradio's API — and, when the ``mcp`` package is
installed, as MCP tools (the docstrings below are their descriptions) — plus ``/chat``. Every
endpoint takes catalog names only (a file path is refused, so nothing on the server can be read
through them); a domain error becomes a ``gr.Error`` with the message and suggestions, which
``gradio_client`` raises as ``AppError``.

``/chat``: ``client.predict("两张4090跑70B够吗", api_name="/chat")`` returns
``{"reply", "lang", "question", "tool_calls", "citations", "notices", "backend", "session"}``. The
conversation continues per client connection (server-side state; an MCP ``chat`` call stands alone, as Gradio
runs every MCP call through one client of its own); pass ``session`` (the JSON string returned earlier, or an
exported session file's text) to continue statelessly instead.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

import gradio as gr  # at module level: Gradio resolves the ``gr.Request`` annotation of ``/chat`` from here

from advisor.session import Session, SessionError
from advisor.toolspec import run_tool
from knowledge.messages import msg
from tools.inputs import upper_bound
from tools.recommend import RecommendInput

log = logging.getLogger(__name__)

MAX_SESSION_CHARS = 2_000_000
_SPLIT = re.compile(r"\s*[,;+，；、]\s*")


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (never a traceback)."""
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def _say(key: str, **params: object) -> str:
    """An endpoint's error in English: API callers name parameters in English, whatever their language."""
    return msg("en", f"ui.api.{key}", **params)


def _error(message: str) -> Exception:
    import gradio as gr

    return gr.Error(message, print_exception=False)


def _run(name: str, args: dict[str, Any], named: dict[str, str] | None = None) -> dict[str, Any]:
    """Run tool ``name``; its error as ``gr.Error``, the tool's fields in it called by the endpoint's parameter
    names (``named``: tool field → parameter, where they differ: 'seq' is what ``/size`` calls ``context``)."""
    call = run_tool(name, {k: v for k, v in args.items() if v is not None})
    if not call.ok:
        text = call.error or _say("invalid")
        for field, param in (named or {}).items():
            text = re.sub(rf"(?<![\w.]){field}(?=:)", param, text)
        raise _error(text)
    return call.result if isinstance(call.result, dict) else {"result": call.result}


def _blank(value: str | None) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _positive(value: float | None) -> float | None:
    return value if isinstance(value, int | float) and value > 0 else None


_MAX_PROBLEM_BYTES = upper_bound(RecommendInput, "problem_bytes") or 8e15


def _gb_as_bytes(value: float, name: str, most_bytes: float) -> int:
    """``value`` GB (1e9 B) in bytes; an error naming parameter ``name`` when it is beyond ``most_bytes``."""
    if not value * 1e9 <= most_bytes:  # 1e308 GB is an infinite byte count: refused, not an OverflowError
        raise _error(_say("too_large", name=name, most=f"{most_bytes / 1e9:,.0f}"))
    return int(value * 1e9)


def size(
    model: str | None = None,
    context: int = 4096,
    precision: str | None = None,
    gpu: str | None = None,
    gpus: int = 1,
    batch: int = 1,
    engine: str = "vllm",
    workload: str = "inference",
    method: str = "lora",
    params_b: float | None = None,
) -> dict:
    """Memory one GPU needs to run (inference) or train a model: weights, KV cache, activations, overhead.

    Bytes in the result (GB = 1e9 B, GiB = 2^30 B); with a GPU it says whether it fits and the headroom.

    Args:
        model: catalog model name or alias, e.g. "llama-3.1-70b", "Qwen2.5-72B"
        context: tokens per sequence (inference) or training sequence length (training)
        precision: weights, e.g. bf16, fp8, int4, awq, Q4_K_M (inference; default: native)
        gpu: catalog GPU for the fit check, e.g. "RTX 4090", "H100 SXM"
        gpus: number of GPUs (tensor parallel for inference, data parallel for training)
        batch: concurrent sequences (inference) or micro-batch (training)
        engine: vllm, llamacpp or transformers (inference accounting)
        workload: "inference" or "training"
        method: training method: full, lora or qlora
        params_b: custom model size in billions, instead of a catalog model
    """
    if workload not in ("inference", "training"):
        raise _error(_say("workload"))
    base = {
        "model": _blank(model),
        "params_b": None if _blank(model) else _positive(params_b),
        "gpu": _blank(gpu),
        "gpus": gpus,
    }
    if workload == "training":
        return _run("size_training", {**base, "method": _blank(method) or "lora", "seq": context, "micro_batch": batch},
                    named={"seq": "context", "micro_batch": "batch"})
    return _run(
        "size_inference",
        {
            **base,
            "precision": _blank(precision),
            "context": context,
            "batch": batch,
            "engine": _blank(engine) or "vllm",
        },
    )


def perf(
    model: str | None = None,
    gpu: str = "",
    count: int = 1,
    precision: str | None = None,
    context: int = 4096,
    batch: int = 1,
    serving: bool = False,
    params_b: float | None = None,
) -> dict:
    """Inference speed on a GPU configuration: decode tokens/s (with a range), prefill and time to first token.

    Args:
        model: catalog model name or alias
        gpu: catalog GPU name, e.g. "RTX 4090"
        count: number of GPUs
        precision: weights precision (default: the model's native dtype)
        context: tokens already in each sequence's KV cache (and the prompt length for prefill)
        batch: concurrent sequences
        serving: also estimate vLLM continuous-batching throughput and max concurrency
        params_b: custom model size in billions, instead of a catalog model
    """
    base = {
        "model": _blank(model),
        "params_b": None if _blank(model) else _positive(params_b),
        "gpu": _blank(gpu),
        "count": count,
        "precision": _blank(precision),
    }
    if not base["gpu"]:
        raise _error(_say("gpu_required"))
    out: dict[str, Any] = {
        "decode": _run("perf_decode", {**base, "context": context, "batch": batch}),
        "prefill": _run("perf_prefill", {**base, "prompt_tokens": context, "batch": 1}),
    }
    if serving:
        out["serving"] = _run("perf_serving", {**base, "context": context})
    return out


def parse_gpus(text: str) -> list[dict[str, Any]]:
    """'2x RTX 4090, A100 80GB' → [{"gpu": "RTX 4090", "count": 2}, {"gpu": "A100 80GB", "count": 1}]."""
    from tools.compat import parse_gpu_arg

    items = [p for p in _SPLIT.split(text or "") if p.strip()]
    if not items:
        raise _error(_say("gpus_required"))
    out = []
    for item in items[:16]:
        try:
            g = parse_gpu_arg(item)
        except (LookupError, ValueError) as exc:
            raise _error(str(exc).splitlines()[0]) from None
        out.append({"gpu": g.gpu, "count": g.count})
    return out


def check(
    gpus: str,
    platform: str | None = None,
    psu_w: float | None = None,
    chassis: str | None = None,
    mains: str | None = None,
    workload: str | None = None,
    precision: str | None = None,
    framework: str | None = None,
    cuda_required: bool = False,
    model: str | None = None,
    context: int = 8192,
) -> dict:
    """Compatibility check of a planned machine: power, PSU, wall circuit, PCIe lanes, slots, cooling,
    interconnect, precision support, software stack and memory fit. Findings are errors, warnings or info,
    each in English and Chinese with the numbers behind it and a fix; "ok" is false when any is an error.

    Args:
        gpus: GPUs and counts, e.g. "2x RTX 4090" or "4 × H100 PCIe, 1x RTX 4090"
        platform: CPU platform, e.g. "Ryzen 9 7950X", "EPYC 9004"
        psu_w: total PSU watts
        chassis: tower, rack or open-frame
        mains: wall circuit, e.g. 120v-15a, 230v-16a
        workload: inference, training or scientific
        precision: bf16, fp8, fp4, int4, Q4_K_M, fp64 …
        framework: PyTorch, vLLM, TensorRT-LLM, SGLang, llama.cpp, DeepSpeed, MindIE …
        cuda_required: the code depends on CUDA
        model: catalog model, for the memory fit
        context: tokens per sequence for the memory fit
    """
    args = {
        "gpus": parse_gpus(gpus),
        "platform": _blank(platform),
        "psu_w": _positive(psu_w),
        "chassis": _blank(chassis),
        "mains": _blank(mains),
        "workload": _blank(workload),
        "precision": _blank(precision),
        "framework": _blank(framework),
        "cuda_required": bool(cuda_required),
        "model": _blank(model),
    }
    if args["model"]:
        args["context"] = context
        args["workload"] = args["workload"] or "inference"
    return _run("check_build", args)


def recommend(
    workload: str,
    model: str | None = None,
    precision: str | None = None,
    context: int = 8192,
    concurrency: int = 1,
    method: str | None = None,
    budget_usd: float | None = None,
    budget_cny: float | None = None,
    cuda_required: bool = False,
    domestic_only: bool = False,
    problem_gb: float | None = None,
    target_tokens_per_s: float | None = None,
) -> dict:
    """Ranked GPU configurations for a workload, budget and constraints, with the options ruled out and why.

    Inference ranks by memory fit first, then decode tokens/s per $1k; training by tokens/s per $1k;
    scientific by FP64 TFLOPS per $1k (never FP16), halved without ECC.

    Args:
        workload: inference, training or scientific
        model: catalog model (inference and training)
        precision: weights (inference) or compute precision (training)
        context: tokens per sequence
        concurrency: concurrent sequences
        method: training method: full, lora or qlora
        budget_usd: budget in US dollars
        budget_cny: budget in yuan (give one budget only)
        cuda_required: only CUDA GPUs
        domestic_only: only Chinese-designed accelerators (信创)
        problem_gb: scientific: memory the problem needs, GB (1e9 B)
        target_tokens_per_s: inference: aggregate decode tokens/s wanted
    """
    args = {
        "workload": workload,
        "model": _blank(model),
        "precision": _blank(precision),
        "context": context,
        "concurrency": concurrency,
        "method": _blank(method),
        "budget_usd": _positive(budget_usd),
        "budget_cny": _positive(budget_cny),
        "cuda_required": bool(cuda_required),
        "domestic_only": bool(domestic_only),
        "target_tokens_per_s": _positive(target_tokens_per_s),
    }
    if _positive(problem_gb):
        args["problem_bytes"] = _gb_as_bytes(problem_gb, "problem_gb", _MAX_PROBLEM_BYTES)  # type: ignore[arg-type]
    return _run("recommend", args)


def search(query: str, k: int = 5, lang: str | None = None) -> dict:
    """Search the knowledge base (buying guide, sizing explanations, GPU and model cards), in either language.

    Returns passages with id, title, text and source; an empty result says why ("reason").

    Args:
        query: what to look for, in Chinese or English
        k: number of passages (1–10)
        lang: "zh" or "en" to restrict the language; empty for both
    """
    from knowledge.search import search as kb_search

    lang_value = _blank(lang)
    if lang_value not in (None, "zh", "en"):
        raise _error(_say("lang"))
    res = kb_search(query, k=max(1, min(int(k), 10)), lang=lang_value)
    return res.to_json()


TOOL_ENDPOINTS: dict[str, Callable[..., dict]] = {
    "size": size,
    "perf": perf,
    "check": check,
    "recommend": recommend,
    "search": search,
}


# ------------------------------------------------------------------------------ chat


def load_session_text(text: str) -> Session:
    """A session from its JSON text; ``gr.Error`` with the reason when it cannot be used."""
    if len(text) > MAX_SESSION_CHARS:
        raise _error(_say("session_too_large", limit=f"{MAX_SESSION_CHARS:,}"))
    try:
        return Session.from_json(text, where="session")
    except SessionError as exc:
        raise _error(str(exc)) from None


def chat_payload(reply: Any, session: Session, backend: str) -> dict[str, Any]:
    """The ``/chat`` result: the CLI's ``--json`` shape plus the backend and the session to continue from."""
    out = reply.to_json()
    out["backend"] = backend
    out["session"] = session.to_json()
    return out


def _via_mcp(request: Any) -> bool:
    """Whether the call came through Gradio's MCP server (its loopback client marks itself ``x-gradio-user: mcp``)."""
    headers = getattr(request, "headers", None)
    return headers is not None and headers.get("x-gradio-user") == "mcp"


def register(get_advisor: Callable[[Any], Any], parking: Any = None, chat_limit: int = 16) -> None:
    """Add the tool endpoints and ``/chat`` to the current Blocks. ``get_advisor(state)`` → Advisor;
    ``parking``: where idle API conversations were put away (``advisor.ui.parking.Parking``), to revive them;
    ``chat_limit``: chat turns run at once (shared with the web chat)."""
    for name, fn in TOOL_ENDPOINTS.items():
        gr.api(fn, api_name=name, concurrency_limit=8, concurrency_id="tools")

    def chat(message: str, session: str | None = None, state: dict[str, Session] | None = None,
             request: gr.Request | None = None) -> dict[str, Any]:
        """Ask the GPU advisor one message; the conversation continues across calls.

        Args:
            message: the question, in Chinese or English
            session: optional: a session JSON string returned earlier, to continue from it
        """
        advisor = get_advisor(None)
        # an MCP tool call reaches us through Gradio's one shared loopback client: every MCP user would share its
        # conversation, so each such call stands alone (a client continues by passing ``session``)
        box = state if isinstance(state, dict) and not _via_mcp(request) else {}
        if box is state and "session" not in box and parking is not None:  # put away while idle
            parked = parking.take(getattr(request, "session_hash", None))
            if parked is not None:
                box["session"] = parked.session
        if isinstance(session, str) and session.strip():
            sess = load_session_text(session)
        else:
            sess = box.get("session") or advisor.new_session()
        reply = advisor.reply(message if isinstance(message, str) else "", sess)
        box["session"] = sess
        return chat_payload(reply, sess, advisor.describe())

    with gr.Row(visible=False):
        msg = gr.Textbox(label="message", visible=False)
        sess_in = gr.Textbox(label="session", visible=False)
        out = gr.JSON(label="reply", visible=False)
    # the client's conversation, kept by updating this box in place: an endpoint with a State *output* breaks
    # Gradio's MCP tool call ('pop index out of range'), as the MCP path drops outputs the API does not list
    state = gr.State({})
    msg.submit(chat, [msg, sess_in, state], [out], api_name="chat", concurrency_limit=chat_limit,
               concurrency_id="chat")
