"""'我有一张4090，能跑什么模型？', 'what models can I run on a 3090?': which models of common sizes the cards at hand
hold, each at the highest precision that fits (one user, an 8k window), and the largest of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.compose import config_label
from advisor.fmt import gb
from advisor.planner import PlannedCall
from advisor.session import ToolCall
from knowledge import load_catalog
from knowledge.messages import msg
from tools.inference_memory import InferenceMemoryResult

if TYPE_CHECKING:
    from advisor.asks import AskContext

# one model per common size, smallest first: what a buyer weighs ('an 8B, a 32B, a 70B, a big MoE')
REPRESENTATIVES = ("llama-3.1-8b", "qwen2.5-14b", "qwen2.5-32b", "qwen3-30b-a3b", "llama-3.3-70b", "gpt-oss-120b",
                   "qwen3-235b-a22b", "deepseek-v3")
CHAT_CONTEXT = 8192  # one person chatting: an 8k window
_LADDERS = {"llamacpp": ("bf16", "Q8_0", "Q4_K_M"), "vllm": ("bf16", "fp8", "int4")}


def _engine(gpu: str) -> str:
    """llama.cpp on a desktop card or a Mac (one user, GGUF files), vLLM on datacenter cards."""
    return "vllm" if load_catalog().gpu(gpu).tier.value == "datacenter" else "llamacpp"


def model_fit_needed(c: AskContext) -> bool:
    return "what_runs" in c.asks and c.config is not None


def model_fit_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    gpu, count = c.config.gpu, c.config.count * c.config.nodes
    engine = _engine(gpu)
    return [PlannedCall(name="size_inference", purpose="size", arguments={
        "model": model, "precision": precision, "gpu": gpu, "gpus": count, "context": CHAT_CONTEXT, "batch": 1,
        "engine": engine}) for model in REPRESENTATIVES for precision in _LADDERS[engine]]


def say_model_fit(c: AskContext, done: list[ToolCall]) -> str | None:
    """The largest model that fits first, then each size at its best precision (or what its smallest needs)."""
    if c.config is None:
        return None
    sized = [(x.arguments["model"], x.arguments["precision"], InferenceMemoryResult.model_validate(x.result))
             for x in done if x.name == "size_inference" and x.arguments.get("batch") == 1 and x.result]
    lines, largest = [], None
    for model in REPRESENTATIVES:
        tries = [(p, r) for m, p, r in sized if m == model]
        if not tries:
            continue
        name = load_catalog().model(model).name
        best = next(((p, r) for p, r in tries if r.fits), None)
        if best is not None:
            largest = (name, best[0], best[1])
            lines.append(msg(c.lang, "model_fit.fits", model=name, precision=best[0], need=gb(best[1].per_gpu_bytes)))
        else:
            p, r = tries[-1]
            lines.append(msg(c.lang, "model_fit.no_fit", model=name, precision=p, need=gb(r.per_gpu_bytes)))
    if not lines:
        return None
    config = config_label(c.config.gpu, c.config.count * c.config.nodes, c.lang)
    head = msg(c.lang, "model_fit.largest", config=config, model=largest[0], precision=largest[1]) if largest \
        else msg(c.lang, "model_fit.none", config=config)
    return "\n".join([head, *lines, msg(c.lang, "model_fit.basis", context=f"{CHAT_CONTEXT:,}")])
