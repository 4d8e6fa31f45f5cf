"""Export the current plan as a Markdown report: profile, numbers with formulas, configurations,
warnings and citations. Pure function of the session, reused by the CLI and the web UI.

The report never contains local file paths or secrets: it is built only from the profile, the
tool results and the cited passages.
"""

from __future__ import annotations

import datetime as dt
import re

from advisor.fmt import money, num
from advisor.markdown import tidy
from advisor.present import gpu_name, model_name, present_call, word
from advisor.session import Session
from knowledge.messages import msg

# absolute local paths (/home/x/…, C:\\Users\\…), not URLs or 'org/repo' references
_PATHLIKE = re.compile(r"(?<![\w:/.~-])(?:/[\w.\-]+){2,}/?|\b[A-Za-z]:\\[^\s|]+|~/[^\s|]+")


def _scrub(text: str) -> str:
    """Remove anything that looks like a filesystem path (defence in depth)."""
    return _PATHLIKE.sub("…", text)


PROFILE_KEYS = ("use_case", "model", "params_b", "precision", "context_tokens", "concurrency", "method",
                "dataset_tokens", "dataset_samples", "deadline_days", "fp64", "problem_size_gb", "budget",
                "cuda_required", "domestic", "existing", "form_factor", "power_limit_w", "gpu", "gpu_count")


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
            text = word(lang, "use_case", value)
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


SECTIONS = ("size_inference", "size_training", "scientific_fp64", "perf_decode", "training_time", "check_build",
            "recommend")  # the report's result sections, in order


def _sections(session: Session, lang: str) -> list[str]:
    """The Markdown of every result section, each built by its presenter."""
    out: list[str] = []
    for name in SECTIONS:
        section = present_call(session.last_results.get(name), lang, formulas=True, options=8, rejected=8)
        if section is not None:
            out.append(section.markdown(msg(lang, f"report.section.{name}")))
    return out


def export_markdown(session: Session, lang: str = "en") -> str:
    """The Markdown report of ``session`` in ``lang`` (a language without its own messages reads English)."""
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
    return tidy("\n".join(out).strip()) + "\n"
