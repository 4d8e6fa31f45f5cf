"""Export the current plan as a Markdown report: profile, numbers with formulas, configurations,
warnings and citations. Pure function of the session, reused by the CLI and the web UI.

The report never contains local file paths or secrets: it is built only from the profile, the
tool results and the cited passages.
"""

from __future__ import annotations

import datetime as dt
import re

from pydantic import ValidationError

from advisor.compose import gpu_name, model_name
from advisor.fmt import money, num
from advisor.present import (
    present_check,
    present_decode,
    present_fp64,
    present_inference,
    present_recommend,
    present_training,
    present_training_time,
    word,
)
from advisor.session import Session, ToolCall
from advisor.toolspec import Out, typed
from knowledge.messages import msg
from tools.compat import BuildReport
from tools.inference_memory import InferenceMemoryResult
from tools.perf import DecodeResult
from tools.recommend import Recommendation
from tools.scientific import ScientificResult
from tools.training_memory import TrainingMemoryResult
from tools.training_time import TrainingTimeResult

# absolute local paths (/home/x/…, C:\\Users\\…), not URLs or 'org/repo' references
_PATHLIKE = re.compile(r"(?<![\w:/.~-])(?:/[\w.\-]+){2,}/?|\b[A-Za-z]:\\[^\s|]+|~/[^\s|]+")


def _scrub(text: str) -> str:
    """Remove anything that looks like a filesystem path (defence in depth)."""
    return _PATHLIKE.sub("…", text)


PROFILE_KEYS = ("use_case", "model", "params_b", "precision", "context_tokens", "concurrency", "method",
                "dataset_tokens", "dataset_samples", "deadline_days", "fp64", "problem_size_gb", "budget",
                "cuda_required", "domestic", "existing", "form_factor", "power_limit_w", "gpu", "gpu_count")
USE_CASES = {"inference": "report.profile_rows.inference_serving", "training": "report.profile_rows.training",
             "scientific": "report.profile_rows.scientific_computing"}


def _profile_rows(session: Session, lang: str) -> list[str]:
    p = session.profile
    rows = [msg(lang, "report.profile_rows.item_value"), "|---|---|"]
    for key in PROFILE_KEYS:
        value = getattr(p, key, None)
        if value is None or value == []:
            continue
        if key == "budget":
            text = money(value.amount, value.currency)
        elif key == "use_case":
            text = msg(lang, USE_CASES[value]) if value in USE_CASES else str(value)
        elif key == "gpu":
            text = gpu_name(value)
        elif key == "model":
            text = model_name(value)
        elif key in ("form_factor", "method"):
            text = word(lang, "form" if key == "form_factor" else "method", value)
        elif key == "existing":
            text = ", ".join(f"{e.count}× {gpu_name(e.gpu)}" for e in value)
        elif isinstance(value, bool):
            text = msg(lang, "report.profile_rows.yes") if value else msg(lang, "report.profile_rows.no")
        elif isinstance(value, float | int):
            text = num(value)
        else:
            text = str(value)
        rows.append(f"| {msg(lang, f'present.report.profile.{key}')} | {_scrub(text)} |")
    return rows


def _heading(lang: str, key: str) -> str:
    """A section heading from the catalogs, without its Markdown marks ('## Speed' → 'Speed')."""
    return msg(lang, key).lstrip("#").strip()


def _typed(call: ToolCall | None, model: type[Out]) -> Out | None:
    """The call's result as its output model; None when the call failed or its stored result does not validate."""
    if call is None or not call.ok:
        return None
    try:
        return typed(call, model)
    except ValidationError:
        return None


def _sections(session: Session, lang: str) -> list[str]:
    """The Markdown of every result section, each built by its presenter."""
    results = session.last_results
    out: list[str] = []
    call = results.get("size_inference")
    if (r_inf := _typed(call, InferenceMemoryResult)) is not None:
        out.append(present_inference(r_inf, lang).markdown(_heading(lang, "report.section.size_inference")))
    call = results.get("size_training")
    if (r_train := _typed(call, TrainingMemoryResult)) is not None:
        out.append(present_training(r_train, lang).markdown(_heading(lang, "report.section.size_training")))
    call = results.get("scientific_fp64")
    if (r_fp64 := _typed(call, ScientificResult)) is not None and call is not None:
        section = present_fp64(r_fp64, lang, gpu=gpu_name(call.arguments.get("gpu")))
        out.append(section.markdown(_heading(lang, "report.section.scientific_fp64")))
    call = results.get("perf_decode")
    if (r_dec := _typed(call, DecodeResult)) is not None and call is not None:
        args = call.arguments
        title = msg(lang, "present.report.title_speed", model=model_name(args.get("model"), args.get("params_b")),
                    config=f"{args.get('count', 1)}× {gpu_name(args.get('gpu'))}")
        out.append(present_decode(r_dec, lang, title=title).markdown(_heading(lang, "report.export_markdown.speed")))
    call = results.get("training_time")
    if (r_tt := _typed(call, TrainingTimeResult)) is not None and call is not None:
        args = call.arguments
        section = present_training_time(r_tt, lang, model=model_name(args.get("model"), args.get("params_b")),
                                        tokens=args.get("tokens"))
        out.append(section.markdown(_heading(lang, "report.export_markdown.training_time")))
    if (r_chk := _typed(results.get("check_build"), BuildReport)) is not None:
        section = present_check(r_chk, lang, formulas=True)
        out.append(section.markdown(_heading(lang, "report.export_markdown.build_check")))
    if (r_rec := _typed(results.get("recommend"), Recommendation)) is not None:
        section = present_recommend(r_rec, lang, limit=8, rejected=8)
        out.append(section.markdown(_heading(lang, "report.export_markdown.recommended_configurations")))
    return out


def export_markdown(session: Session, lang: str = "en") -> str:
    """The Markdown report of ``session`` in ``lang`` ('zh' or 'en')."""
    lang = "zh" if lang == "zh" else "en"
    today = dt.date.today().isoformat()
    out = [msg(lang, "report.export_markdown.gpu_plan"), "",
           msg(lang, "report.export_markdown.generated_gpu_advisor_offline", today=today),
           "", msg(lang, "report.export_markdown.requirements"), *_profile_rows(session, lang)]
    sections = _sections(session, lang)
    if not sections:
        out += ["", msg(lang, "report.export_markdown.no_results_yet_describe")]
    for text in sections:
        out += ["", *(_scrub(line) for line in text.splitlines())]
    if session.citations:
        out += ["", msg(lang, "report.export_markdown.sources")]
        out += [f"- [{c.id}] {c.title} — {_scrub(c.source)}" for c in session.citations.values()]
    return "\n".join(out).strip() + "\n"
