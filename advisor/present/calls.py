"""The section of a tool call: its stored result re-validated into the tool's output model, then presented.

This is the one door through which the web panel, the tool steps in the chat, the exported report and the
facts given to an LLM reach the presenters; the call's arguments supply what the result itself does not
carry (the model's name for a training time, the context of a serving estimate).
"""

from __future__ import annotations

from pydantic import ValidationError

from advisor.present.check import present_check
from advisor.present.inference import present_inference
from advisor.present.perf import present_decode, present_fp64, present_prefill, present_serving, present_training_time
from advisor.present.recommend import TEXT_OPTIONS, TEXT_REJECTED, present_recommend
from advisor.present.section import Section, gpu_name, model_name
from advisor.present.training import present_training
from advisor.session import ToolCall
from advisor.toolspec import UnknownToolError, output_model, typed
from knowledge.messages import msg
from tools.compat import BuildReport
from tools.inference_memory import InferenceMemoryResult
from tools.perf import DecodeResult, PrefillResult, ServingResult
from tools.recommend import Recommendation
from tools.scientific import ScientificResult
from tools.training_memory import TrainingMemoryResult
from tools.training_time import TrainingTimeResult


def result(call: ToolCall | None) -> object | None:
    """A successful call's result as its tool's output model; None when it failed or no longer validates
    (a session file written by an older version or edited by hand)."""
    if call is None or not call.ok or call.result is None:
        return None
    try:
        return typed(call, output_model(call.name))
    except (ValidationError, UnknownToolError):
        return None


def present_call(call: ToolCall | None, lang: str, *, formulas: bool = False, options: int = TEXT_OPTIONS,
                 rejected: int = TEXT_REJECTED) -> Section | None:
    """The section for ``call`` in ``lang``; None for calls without a presenter (spec lookups, search)."""
    r = result(call)
    if r is None or call is None:
        return None
    args = call.arguments
    model = model_name(args.get("model"), args.get("params_b"))
    match r:
        case InferenceMemoryResult():
            return present_inference(r, lang)
        case TrainingMemoryResult():
            return present_training(r, lang)
        case DecodeResult():
            title = msg(lang, "present.report.title_speed", model=model,
                        config=f"{args.get('count', 1)}× {gpu_name(args.get('gpu'))}")
            return present_decode(r, lang, title=title)
        case PrefillResult():
            return present_prefill(r, lang, prompt_tokens=args.get("prompt_tokens"))
        case ServingResult():
            return present_serving(r, lang, context=args.get("context"))
        case TrainingTimeResult():
            return present_training_time(r, lang, model=model, tokens=args.get("tokens"))
        case ScientificResult():
            return present_fp64(r, lang, gpu=gpu_name(args.get("gpu")))
        case BuildReport():
            return present_check(r, lang, formulas=formulas)
        case Recommendation():
            return present_recommend(r, lang, limit=options, rejected=rejected)
    return None
