"""'组里还有人用 Fluent，能用这批卡吗？': whether a scientific code named runs on the cards under discussion — a GPU
build for their software stack, the precision it computes in against the card's FP64 — and what more cards do for
it (one job per card, or one job spread over them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.fmt import num, punct
from advisor.planner import PlannedCall
from advisor.session import ToolCall
from knowledge import load_catalog
from knowledge.codes import ScientificCode, find_code
from knowledge.messages import msg
from tools.recommend import WEAK_FP64_SHARE, has_gpu_build

if TYPE_CHECKING:
    from advisor.asks import AskContext


def _code(c: AskContext) -> ScientificCode | None:
    said = c.session.profile.sci_code
    return find_code(said) if said else None


def _cards(c: AskContext) -> list[str]:
    p = c.session.profile
    return list(c.named) or list(p.compare) or ([c.config.gpu] if c.config is not None else [])


def code_fit_needed(c: AskContext) -> bool:
    return "code_fit" in c.asks and _code(c) is not None and bool(_cards(c))


def code_fit_calls(c: AskContext) -> list[PlannedCall]:
    return []  # the catalog and the code table answer it


def say_code_fit(c: AskContext, done: list[ToolCall]) -> str | None:
    code = _code(c)
    if code is None:
        return None
    verdicts = [_card_verdict(code, gpu, c.lang) for gpu in _cards(c)]
    built = any(has_gpu_build(code, load_catalog().gpu(gpu)) for gpu in _cards(c))
    more = "code_fit.cpu_only" if not built else \
        "code_fit.one_job_per_card" if code.one_gpu_per_job else "code_fit.spreads"
    port = msg(c.lang, "code_fit.port", port=code.gpu_port, code=code.name) if code.gpu_port and built else ""
    return msg(c.lang, "code_fit.head", code=code.name, verdicts=punct(c.lang, "semicolon").join(verdicts)) + \
        port + msg(c.lang, more)


def _card_verdict(code: ScientificCode, gpu_id: str, lang: str) -> str:
    g = load_catalog().gpu(gpu_id)
    if not has_gpu_build(code, g):
        builds = punct(lang, "list").join(msg(lang, f"recommend.code_stack.{s}") for s in code.stacks)
        return msg(lang, "code_fit.no_build", card=g.name, builds=builds)
    fp64, fp32 = g.throughput.fp64_vector or g.throughput.fp64 or 0.0, g.throughput.fp32 or 0.0
    if code.fp64 and fp32 and fp64 < fp32 * WEAK_FP64_SHARE:
        return msg(lang, "code_fit.slow_fp64", card=g.name, fp64=num(fp64, 1))
    key = "code_fit.runs_fp64" if code.fp64 else "code_fit.runs_fp32"
    return msg(lang, key, card=g.name, fp64=num(fp64, 1), fp32=num(fp32, 1))
