"""Export the current plan as a Markdown report: profile, numbers with formulas, configurations,
warnings and citations. Pure function of the session, reused by the CLI and the web UI.

The report never contains local file paths or secrets: it is built only from the profile, the
tool results and the cited passages.
"""

from __future__ import annotations

import datetime as dt
import re

from advisor.compose import gb, gpu_name, model_name, money, num, option_total, term_label, tps
from advisor.session import Session
from knowledge.messages import msg, render

# absolute local paths (/home/x/…, C:\\Users\\…), not URLs or 'org/repo' references
_PATHLIKE = re.compile(r"(?<![\w:/.~-])(?:/[\w.\-]+){2,}/?|\b[A-Za-z]:\\[^\s|]+|~/[^\s|]+")


def _scrub(text: str) -> str:
    """Remove anything that looks like a filesystem path (defence in depth)."""
    return _PATHLIKE.sub("…", text)


def _profile_rows(session: Session, lang: str) -> list[str]:
    p = session.profile
    labels = {
        "use_case": ("用途", "Use case"), "model": ("模型", "Model"), "params_b": ("参数量（B）", "Parameters (B)"),
        "precision": ("精度", "Precision"), "context_tokens": ("上下文（tokens）", "Context (tokens)"),
        "concurrency": ("并发", "Concurrency"), "method": ("训练方式", "Method"),
        "dataset_tokens": ("数据量（tokens）", "Dataset (tokens)"), "dataset_samples": ("样本数", "Samples"),
        "deadline_days": ("期限（天）", "Deadline (days)"), "fp64": ("需要 FP64", "Needs FP64"),
        "problem_size_gb": ("问题规模（GB）", "Problem size (GB)"), "budget": ("预算", "Budget"),
        "cuda_required": ("依赖 CUDA", "Needs CUDA"), "domestic": ("信创 / 国产", "Domestic only"),
        "existing": ("已有硬件", "Existing hardware"), "form_factor": ("形态", "Form factor"),
        "power_limit_w": ("功率限制（W）", "Power limit (W)"), "gpu": ("讨论中的 GPU", "GPU under discussion"),
        "gpu_count": ("GPU 数量", "GPU count"),
    }
    rows = [msg(lang, "report.profile_rows.item_value"), "|---|---|"]
    for key, (zh, en) in labels.items():
        value = getattr(p, key, None)
        if value is None or value == []:
            continue
        if key == "budget":
            text = money(value.amount, value.currency)
        elif key == "use_case":
            text = {"inference": msg(lang, "report.profile_rows.inference_serving"),
                    "training": msg(lang, "report.profile_rows.training"),
                    "scientific": msg(lang, "report.profile_rows.scientific_computing")}[value]
        elif key == "gpu":
            text = gpu_name(value)
        elif key == "model":
            text = model_name(value)
        elif key == "existing":
            text = ", ".join(f"{e.count}× {gpu_name(e.gpu)}" for e in value)
        elif isinstance(value, bool):
            text = msg(lang, "report.profile_rows.yes") if value else msg(lang, "report.profile_rows.no")
        elif isinstance(value, float | int):
            text = num(value)
        else:
            text = str(value)
        rows.append(f"| {zh if lang == 'zh' else en} | {_scrub(text)} |")
    return rows


def _terms_table(result: dict, lang: str) -> list[str]:
    rows = [msg(lang, "report.terms_table.term_value_formula_meaning"), "|---|---|---|---|"]
    for term in result.get("terms", []):
        label = term_label(term["name"], lang)
        value = gb(term["value"]) if term["unit"] == "bytes" else f"{num(term['value'])} {term['unit']}"
        formula = str(term.get("formula", "")).replace("|", "\\|")
        meaning = term.get("explain_zh" if lang == "zh" else "explain_en", "")
        rows.append(f"| {label} | {value} | `{_scrub(formula)}` | {meaning} |")
    return rows


def export_markdown(session: Session, lang: str = "en") -> str:
    """The Markdown report of ``session`` in ``lang`` ('zh' or 'en')."""
    lang = "zh" if lang == "zh" else "en"
    today = dt.date.today().isoformat()
    out = [msg(lang, "report.export_markdown.gpu_plan"), "",
           msg(lang, "report.export_markdown.generated_gpu_advisor_offline", today=today),
           "", msg(lang, "report.export_markdown.requirements"), *_profile_rows(session, lang)]
    results = session.last_results
    if not any(c.ok for c in results.values() if c.name != "search_knowledge"):
        out += ["", msg(lang, "report.export_markdown.no_results_yet_describe")]
    for name in ("size_inference", "size_training", "scientific_fp64"):
        call = results.get(name)
        if not call or not call.ok:
            continue
        r = call.result
        out += ["", f"## {msg(lang, f'report.section.{name}')}"]
        fits = r.get("fits")
        if fits is not None:
            verdict = msg(lang, "word.fits" if fits else "report.does_not_fit")
            out.append(msg(lang, "report.export_markdown.verdict_per_gpu",
                           verdict=verdict, per_gpu_bytes=gb(r['per_gpu_bytes'])))
        out += ["", *_terms_table(r, lang)]
        if r.get("assumptions"):
            out += ["", msg(lang, "report.export_markdown.assumptions"),
                    *[f"- {_scrub(render(a, lang))}" for a in r["assumptions"]]]
        if r.get("warnings"):
            out += ["", msg(lang, "report.export_markdown.warnings"),
                    *[f"- {_scrub(render(w, lang))}" for w in r["warnings"]]]
    perf = results.get("perf_decode")
    if perf and perf.ok:
        r = perf.result
        out += ["", msg(lang, "report.export_markdown.speed"),
                msg(lang, "report.export_markdown.decode_about_range_bound",
                    tokens_per_s=tps(r['tokens_per_s']), tokens_per_s_range=num(r['tokens_per_s_range'][0]),
                    tokens_per_s_range2=num(r['tokens_per_s_range'][1]), bound=r['bound']), "", *_terms_table(r, lang)]
    tt = results.get("training_time")
    if tt and tt.ok:
        r = tt.result
        out += ["", msg(lang, "report.export_markdown.training_time"),
                msg(lang, "report.export_markdown.about_hours_gpu_hours",
                    count=r['count'], gpu=r['gpu'], hours=num(r['hours']), gpu_hours=num(r['gpu_hours'])),
                "", *_terms_table(r, lang)]
    chk = results.get("check_build")
    if chk and chk.ok:
        out += ["", msg(lang, "report.export_markdown.build_check")]
        for f in chk.result.get("findings", []):
            said = f["message_zh"] if lang == "zh" else f["message_en"]
            fix = f.get("fix_zh") if lang == "zh" else f.get("fix")
            out.append(f"- **{f['severity']}** {_scrub(said)}" + (f" — {_scrub(fix)}" if fix else ""))
        if chk.result.get("formula"):
            out += ["", msg(lang, "report.export_markdown.how_totals_were_computed"),
                    *[f"- `{_scrub(render(x, lang))}`" for x in chk.result["formula"]]]
    rec = results.get("recommend")
    if rec and rec.ok:
        r = rec.result
        cur = r.get("price_currency") or r.get("currency", "USD")
        out += ["", msg(lang, "report.export_markdown.recommended_configurations")]
        if r.get("options"):
            out += [msg(lang, "report.export_markdown.configuration_total_performance_power"),
                    "|---|---|---|---|---|---|"]
            for o in r["options"][:8]:
                price = option_total(o, cur)
                perf_txt = (tps(o["decode_tokens_per_s"]) if o.get("decode_tokens_per_s") is not None else
                            f"{num(o['fp64_tflops'])} FP64 TFLOPS" if o.get("fp64_tflops") is not None else
                            f"{num(o['fp32_tflops'])} FP32 TFLOPS" if o.get("fp32_tflops") is not None else
                            f"{num(o['training_hours'])} h" if o.get("training_hours") is not None else "—")
                out.append(f"| {o['rank']} | {o['count']}× {o['gpu']} | {price} | {perf_txt} | "
                           f"{num(o['power_w'])} W | {o['platform']} |")
            out += [""] + [f"{o['rank']}. {o['why_zh'] if lang == 'zh' else o['why_en']}" for o in r["options"][:8]]
        else:
            out.append(msg(lang, "report.export_markdown.no_configuration_satisfies_constraints"))
        if r.get("pitfalls"):
            out += ["", msg(lang, "report.export_markdown.pitfalls_flagged"),
                    *[f"- {pair[1] if lang == 'zh' else pair[0]}" for pair in r["pitfalls"].values()]]
        if r.get("assumptions"):
            out += ["", msg(lang, "report.export_markdown.recommendation_assumptions"),
                    *[f"- {_scrub(render(a, lang))}" for a in r["assumptions"]]]
    if session.citations:
        out += ["", msg(lang, "report.export_markdown.sources")]
        out += [f"- [{c.id}] {c.title} — {_scrub(c.source)}" for c in session.citations.values()]
    return "\n".join(out).strip() + "\n"
