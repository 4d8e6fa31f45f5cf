"""'What specs should I write in the tender?': vendor-neutral minimum specifications for the inference service under
discussion — memory in all and per card, precision, links, software — and acceptance criteria a bidder's system is
load-tested against, each from the sizing of the model at the users and context said."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from advisor.fmt import num
from advisor.planner import DEFAULT_CONCURRENCY, PlannedCall, context_for, size_stand_in
from advisor.session import ToolCall
from knowledge.messages import msg
from tools.inference_memory import InferenceMemoryResult
from tools.scale_out import NODE_GPUS

if TYPE_CHECKING:
    from advisor.asks import AskContext

MARGIN = 1.2  # memory written into a tender: the sizing plus a fifth for longer prompts and engine versions
CARD_SIZES_GB = (16, 24, 32, 48, 64, 80, 96, 128, 141, 192, 288)  # the memory sizes cards are sold in
READING_TOKENS_PER_S = 10.0  # each user's stream, at least: about twice reading speed, the usual floor
TTFT_S = 3.0  # first token for a 2k-token prompt, at the load said
TEST_PROMPT, TEST_ANSWER = 2048, 512  # the load test's request shape, unless the context said is shorter


def tender_needed(c: AskContext) -> bool:
    p = c.session.profile
    return "tender" in c.asks and p.use_case in (None, "inference") and bool(size_stand_in(p))


def tender_calls(c: AskContext) -> list[PlannedCall]:
    """The model's memory at the users and context said, in all (one device, no card): what the bid must hold."""
    p = c.session.profile
    args: dict[str, Any] = {"model": size_stand_in(p), "context": context_for(p),
                            "batch": p.concurrency or DEFAULT_CONCURRENCY, "gpus": 1, "engine": "vllm"}
    if p.precision:
        args["precision"] = p.precision
    return [PlannedCall(name="size_inference", purpose="size", arguments=args)]


def say_tender(c: AskContext, done: list[ToolCall]) -> str | None:
    call = next((x for x in done if x.name == "size_inference" and x.ok and x.result
                 and x.arguments.get("gpu") is None), None)
    if call is None:
        return None
    r = InferenceMemoryResult.model_validate(call.result)
    p = c.session.profile
    total = r.total_bytes / 1e9 * MARGIN
    one, two = (next((size for size in CARD_SIZES_GB if size * NODE_GPUS * n >= total), None) for n in (1, 2))
    prompt = min(TEST_PROMPT, max(256, r.context // 2))
    speed = p.tokens_per_s_target or READING_TOKENS_PER_S
    ttft = p.ttft_target_s or TTFT_S
    if one is not None:  # one server of eight, or two of eight with half the memory each: both open to bidders
        card_line = msg(c.lang, "tender.card", per_card=one, node=NODE_GPUS, two=two)
    else:
        card_line = msg(c.lang, "tender.card_nodes", per_node=num(total / 2, 0))
    native = r.precision.lower() in ("bf16", "fp16")
    lines = [
        msg(c.lang, "tender.head", model=r.model, precision=r.precision.upper(), users=r.batch,
            context=num(r.context)),
        msg(c.lang, "tender.memory", total=num(math.ceil(total)), weights=num(r.weights_total_bytes / 1e9, 0),
            margin=num((MARGIN - 1) * 100, 0)),
        card_line,
        msg(c.lang, "tender.precision_native" if native else "tender.precision", precision=r.precision.upper()),
        msg(c.lang, "tender.link"),
        msg(c.lang, "tender.software", model=r.model),
        msg(c.lang, "tender.acceptance", users=r.batch, prompt=num(prompt), answer=num(TEST_ANSWER),
            speed=num(speed, 0), ttft=num(ttft, 1)),
    ]
    neutral = msg(c.lang, "tender.neutral_domestic" if p.domestic else "tender.neutral")
    return "\n".join(lines) + "\n\n" + neutral  # a paragraph of its own, not part of the last item
