"""Export the current plan as a Markdown report: profile, numbers with formulas, configurations,
warnings and citations. Pure function of the session, reused by the CLI and the web UI.

The report never contains local file paths or secrets: it is built only from the profile, the
tool results and the cited passages.
"""

from __future__ import annotations

import datetime as dt
import re

from advisor.compose import _TERM_LABELS, gb, gpu_name, model_name, money, num, option_total, t, tps
from advisor.session import Session
from knowledge.messages import render

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
    rows = [t(lang, "| 项目 | 值 |", "| Item | Value |"), "|---|---|"]
    for key, (zh, en) in labels.items():
        value = getattr(p, key, None)
        if value is None or value == []:
            continue
        if key == "budget":
            text = money(value.amount, value.currency)
        elif key == "use_case":
            text = {"inference": t(lang, "推理服务", "inference serving"),
                    "training": t(lang, "训练 / 微调", "training"),
                    "scientific": t(lang, "科学计算", "scientific computing")}[value]
        elif key == "gpu":
            text = gpu_name(value)
        elif key == "model":
            text = model_name(value)
        elif key == "existing":
            text = ", ".join(f"{e.count}× {gpu_name(e.gpu)}" for e in value)
        elif isinstance(value, bool):
            text = t(lang, "是", "yes") if value else t(lang, "否", "no")
        elif isinstance(value, float | int):
            text = num(value)
        else:
            text = str(value)
        rows.append(f"| {zh if lang == 'zh' else en} | {_scrub(text)} |")
    return rows


def _terms_table(result: dict, lang: str) -> list[str]:
    rows = [t(lang, "| 项 | 数值 | 公式 | 含义 |", "| Term | Value | Formula | Meaning |"), "|---|---|---|---|"]
    for term in result.get("terms", []):
        label = _TERM_LABELS.get(term["name"], (term["name"], term["name"]))[0 if lang == "zh" else 1]
        value = gb(term["value"]) if term["unit"] == "bytes" else f"{num(term['value'])} {term['unit']}"
        formula = str(term.get("formula", "")).replace("|", "\\|")
        meaning = term.get("explain_zh" if lang == "zh" else "explain_en", "")
        rows.append(f"| {label} | {value} | `{_scrub(formula)}` | {meaning} |")
    return rows


def export_markdown(session: Session, lang: str = "en") -> str:
    """The Markdown report of ``session`` in ``lang`` ('zh' or 'en')."""
    lang = "zh" if lang == "zh" else "en"
    today = dt.date.today().isoformat()
    out = [t(lang, "# GPU 选型方案", "# GPU plan"), "",
           t(lang, f"生成日期：{today}（GPU Advisor，离线计算）",
             f"Generated {today} by GPU Advisor (offline calculators)"),
           "", t(lang, "## 需求概况", "## Requirements"), *_profile_rows(session, lang)]
    results = session.last_results
    if not any(c.ok for c in results.values() if c.name != "search_knowledge"):
        out += ["", t(lang, "还没有计算结果：先在对话里说明用途和模型。",
                      "No results yet: describe the use case and the model in the chat first.")]
    for name, title in (("size_inference", ("推理显存", "Inference memory")),
                        ("size_training", ("训练显存", "Training memory")),
                        ("scientific_fp64", ("双精度计算", "FP64 workload"))):
        call = results.get(name)
        if not call or not call.ok:
            continue
        r = call.result
        out += ["", f"## {title[0] if lang == 'zh' else title[1]}"]
        fits = r.get("fits")
        if fits is not None:
            verdict = t(lang, "放得下" if fits else "放不下", "fits" if fits else "does NOT fit")
            out.append(t(lang, f"结论：{verdict}（每卡需要 {gb(r['per_gpu_bytes'])}）",
                         f"Verdict: {verdict} ({gb(r['per_gpu_bytes'])} per GPU)"))
        out += ["", *_terms_table(r, lang)]
        if r.get("assumptions"):
            out += ["", t(lang, "假设：", "Assumptions:"), *[f"- {_scrub(render(a, lang))}" for a in r["assumptions"]]]
        if r.get("warnings"):
            out += ["", t(lang, "警告：", "Warnings:"), *[f"- {_scrub(render(w, lang))}" for w in r["warnings"]]]
    perf = results.get("perf_decode")
    if perf and perf.ok:
        r = perf.result
        out += ["", t(lang, "## 速度", "## Speed"),
                t(lang, f"生成速度约 {tps(r['tokens_per_s'])}（区间 {num(r['tokens_per_s_range'][0])}–"
                        f"{num(r['tokens_per_s_range'][1])}），瓶颈：{r['bound']}",
                  f"Decode about {tps(r['tokens_per_s'])} (range {num(r['tokens_per_s_range'][0])}–"
                  f"{num(r['tokens_per_s_range'][1])}), bound by {r['bound']}"), "", *_terms_table(r, lang)]
    tt = results.get("training_time")
    if tt and tt.ok:
        r = tt.result
        out += ["", t(lang, "## 训练时间", "## Training time"),
                t(lang, f"{r['count']} 张 {r['gpu']}：约 {num(r['hours'])} 小时，{num(r['gpu_hours'])} GPU·小时",
                  f"{r['count']}× {r['gpu']}: about {num(r['hours'])} hours, {num(r['gpu_hours'])} GPU-hours"),
                "", *_terms_table(r, lang)]
    chk = results.get("check_build")
    if chk and chk.ok:
        out += ["", t(lang, "## 兼容性检查", "## Build check")]
        for f in chk.result.get("findings", []):
            msg = f["message_zh"] if lang == "zh" else f["message_en"]
            fix = f.get("fix_zh") if lang == "zh" else f.get("fix")
            out.append(f"- **{f['severity']}** {_scrub(msg)}" + (f" — {_scrub(fix)}" if fix else ""))
        if chk.result.get("formula"):
            out += ["", t(lang, "计算方法：", "How the totals were computed:"),
                    *[f"- `{_scrub(x)}`" for x in chk.result["formula"]]]
    rec = results.get("recommend")
    if rec and rec.ok:
        r = rec.result
        cur = r.get("price_currency") or r.get("currency", "USD")
        out += ["", t(lang, "## 推荐配置", "## Recommended configurations")]
        if r.get("options"):
            out += [t(lang, "| # | 配置 | 总价 | 性能 | 功耗 | 平台 |",
                      "| # | Configuration | Total | Performance | Power | Platform |"), "|---|---|---|---|---|---|"]
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
            out.append(t(lang, "没有满足条件的配置。", "No configuration satisfies the constraints."))
        if r.get("pitfalls"):
            out += ["", t(lang, "需要注意的陷阱：", "Pitfalls flagged:"),
                    *[f"- {pair[1] if lang == 'zh' else pair[0]}" for pair in r["pitfalls"].values()]]
        if r.get("assumptions"):
            out += ["", t(lang, "推荐的假设：", "Recommendation assumptions:"),
                    *[f"- {_scrub(render(a, lang))}" for a in r["assumptions"]]]
    if session.citations:
        out += ["", t(lang, "## 参考资料", "## Sources")]
        out += [f"- [{c.id}] {c.title} — {_scrub(c.source)}" for c in session.citations.values()]
    return "\n".join(out).strip() + "\n"
