"""Pure functions from engine data (tool calls, results, citations, profile) to what the UI shows.

Nothing here touches gradio state or the network: every function maps plain data (dicts as the
tools return them in JSON, ``advisor.session`` models) to chat messages, an SVG chart, a pandas
table or Markdown. Words come from the message catalogs (``ui.*`` via :mod:`advisor.ui.i18n`, and the
presenters' ``present.*``), numbers from :mod:`advisor.fmt`. All text that came from a user or a tool is
HTML-escaped before it reaches the page, so ``<script>`` or ``<img onerror=…>`` typed in the chat is
shown, never run.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
from gradio import ChatMessage

from advisor import fmt
from advisor.present import terms as present_terms
from advisor.present import word
from advisor.ui.i18n import USE_CASES, label, t, tool_label, ui_text
from knowledge.messages import msg, render
from tools.units import GB, GiB

log = logging.getLogger(__name__)

MAX_DETAIL_CHARS = 6000
MAX_PASSAGE_CHARS = 1500

# ------------------------------------------------------------------------------ safe text

_FENCE = re.compile(r"(```.*?(?:```|$)|`[^`\n]*`)", re.DOTALL)


def escape_html(text: str) -> str:
    """Escape ``& < >`` so the text is shown literally (quotes need no escaping in Markdown prose)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def safe_markdown(text: object) -> str:
    """Markdown with every raw HTML tag neutralised; code spans and fences are left as they are
    (the Markdown renderer shows their content literally)."""
    s = "" if text is None else str(text)
    s = s.replace("\x00", "")
    parts = _FENCE.split(s)
    return "".join(p if i % 2 else escape_html(p) for i, p in enumerate(parts))


def _code_block(obj: Any, lang: str, limit: int = MAX_DETAIL_CHARS) -> str:
    text = json.dumps(obj, ensure_ascii=False, indent=1, default=str)
    if len(text) > limit:
        text = text[:limit] + "\n" + t("truncated", lang)
    return "```json\n" + text.replace("```", "ˋˋˋ") + "\n```"


# ------------------------------------------------------------------------------ the fit, one figure each


def needed_bytes(result: Mapping[str, Any]) -> int | None:
    """What the fit verdict weighs per GPU: every layer on the GPU for a llama.cpp plan that offloads, else the
    per-GPU need."""
    value = result.get("all_layers_bytes") or result.get("per_gpu_bytes")
    return int(value) if isinstance(value, int | float) else None


def _fit_line(result: Mapping[str, Any], need: int | None, usable: int | None, lang: str, area: str) -> str:
    """✅ fits · headroom / ⚠️ runs with CPU offload / ❌ does not fit · short by — from the same need and usable
    figures the line beside it shows, so the three always agree."""
    if result.get("fits"):
        head = usable - need if usable is not None and need is not None else result.get("headroom_bytes")
        return t(f"{area}.fits", lang, headroom=fmt.gb_short(head))
    if result.get("offload_layers"):
        gpu_layers = int(result.get("gpu_layers") or 0)
        return t(
            f"{area}.offload",
            lang,
            gpu_layers=fmt.num(gpu_layers),
            layers=fmt.num(gpu_layers + int(result["offload_layers"])),
            cpu=fmt.gb_short(result.get("cpu_bytes")),
        )
    short = need - usable if usable is not None and need is not None else None
    if short is None or short <= 0:
        return f"❌ {t('does_not_fit', lang)}"
    return t(f"{area}.short", lang, short=fmt.gb_short(short))


def _verdict_word(result: Mapping[str, Any], lang: str) -> str:
    if result.get("fits"):
        return f"✅ {t('fits', lang)}"
    if result.get("offload_layers"):
        return f"⚠️ {t('offload', lang)}"
    return f"❌ {t('does_not_fit', lang)}"


# ------------------------------------------------------------------------------ tool steps


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def tool_title(name: str, lang: str) -> str:
    """Display title of a tool: the registry's own bilingual title when there is one."""
    try:
        from advisor.toolspec import TOOLS

        spec = TOOLS.get(name)
        if spec is not None:
            return spec.title(lang)
    except ImportError:  # pragma: no cover - registry always present in this package
        pass
    return tool_label(name, lang)


_ARG_KINDS = {"method": "method", "workload": "use_case", "engine": "engine"}


def _short_args(args: Mapping[str, Any], lang: str) -> str:
    """The two or three arguments that identify a call: model, GPU × count, precision, context."""
    bits: list[str] = []
    model = (
        _catalog_name("model", args["model"])
        if args.get("model")
        else (f"{args['params_b']:g}B" if isinstance(args.get("params_b"), int | float) else None)
    )
    if model:
        bits.append(str(model))
    gpus = args.get("gpus")
    if isinstance(gpus, list):  # check_build: [{"gpu", "count"}]
        bits.extend(f"{_get(g, 'count', 1)}× {_catalog_name('gpu', _get(g, 'gpu', '?'))}" for g in gpus[:3])
    elif args.get("gpu"):
        n = args.get("count") or (gpus if isinstance(gpus, int) else None) or 1
        name = _catalog_name("gpu", args["gpu"])
        bits.append(f"{n}× {name}" if n != 1 else str(name))
    for key in ("precision", "method", "workload"):
        if args.get(key):
            kind = _ARG_KINDS.get(key)
            bits.append(label(kind, args[key], lang) if kind else str(args[key]))
    if isinstance(args.get("context"), int | float):
        bits.append(f"{fmt.num(int(args['context']))} tok")
    if args.get("query"):
        bits.append(f"“{str(args['query'])[:40]}”")
    if args.get("name"):
        bits.append(str(args["name"]))
    return " · ".join(bits[:5])


def result_summary(name: str, result: Any, lang: str) -> str:
    """One or two lines saying what a tool found, in ``lang`` (units always labelled)."""
    if not isinstance(result, Mapping):
        return ""
    if "per_gpu_bytes" in result and "breakdown" in result:
        line = t("summary.need", lang, need=fmt.gb(needed_bytes(result)))
        usable = fmt.usable_bytes(result)
        if usable:
            line += " · " + t(
                "summary.fit",
                lang,
                gpu=result.get("gpu") or "GPU",
                usable=fmt.gb_short(usable),
                verdict=_verdict_word(result, lang),
            )
        return line
    if name == "perf_decode" or ("tokens_per_s" in result and "step_time_s" in result):
        lo, hi = result.get("tokens_per_s_range") or (None, None)
        return t(
            "summary.decode",
            lang,
            tps=fmt.tps(result.get("tokens_per_s")),
            lo=fmt.num(lo),
            hi=fmt.num(hi),
            bound=word(lang, "bound_by", result.get("bound") or "unknown"),
        )
    if "ttft_s" in result:
        return t(
            "summary.prefill", lang, tps=fmt.tps(result.get("tokens_per_s")), ttft=fmt.seconds(result.get("ttft_s"))
        )
    if "max_concurrency" in result and "points" in result:
        peak = result.get("peak") or {}
        return t(
            "summary.serving",
            lang,
            concurrency=fmt.num(result.get("max_concurrency")),
            tps=fmt.tps(_get(peak, "tokens_per_s")),
        )
    if "findings" in result and "ok" in result:
        sev = [f.get("severity") for f in result.get("findings", []) if isinstance(f, Mapping)]
        return t(
            "summary.check",
            lang,
            mark="✅" if result.get("ok") else "❌",
            errors=sev.count("error"),
            warnings=sev.count("warning"),
            infos=sev.count("info"),
        )
    if "options" in result and "rejected" in result:
        opts = result.get("options") or []
        n_opts, n_rej = len(opts), len(result.get("rejected") or [])
        if opts:
            top = f"{opts[0].get('count', 1)}× {opts[0].get('gpu')}"
            return t("summary.recommend_top", lang, options=n_opts, rejected=n_rej, top=top)
        return t("summary.recommend", lang, options=n_opts, rejected=n_rej)
    if "results" in result:
        ids = [str(_get(p, "id", "")) for p in result.get("results") or []]
        return t("list_sep", lang).join(ids) or str(result.get("reason") or "")
    return ""


def tool_step_message(call: Any, lang: str, *, pending: bool = False) -> ChatMessage:
    """A collapsible chat step "🔧 <tool> · <args>" with the inputs, a summary and the raw result.

    ``call`` is an ``advisor.session.ToolCall`` or a dict with name / arguments / result / error.
    """
    name = str(_get(call, "name", "tool"))
    args = _get(call, "arguments", {}) or {}
    error = _get(call, "error")
    result = _get(call, "result")
    short = _short_args(args, lang)
    icon = "⚠️" if error else "🔧"
    title = f"{icon} {tool_title(name, lang)}" + (f" · {short}" if short else "")
    meta: dict[str, Any] = {"title": escape_html(title), "status": "pending" if pending else "done"}
    call_id = _get(call, "call_id")
    if call_id:
        meta["id"] = str(call_id)
    duration = _get(call, "duration_ms")
    if not pending and isinstance(duration, int | float) and duration > 0:
        meta["duration"] = round(duration / 1000, 3)
    if pending:
        meta["log"] = t("tool_running", lang)
        body = f"**{t('tool_inputs', lang)}**\n\n{_code_block(args, lang)}"
        return ChatMessage(role="assistant", content=body, metadata=meta)  # type: ignore[arg-type]
    parts = [f"**{t('tool_inputs', lang)}**\n\n{_code_block(args, lang, 2000)}"]
    if error:
        meta["log"] = t("tool_failed", lang)
        parts.append(f"**{t('tool_error', lang)}**: {safe_markdown(ui_text(str(error), lang))}")
    else:
        summary = result_summary(name, result, lang)
        if summary:
            meta["log"] = escape_html(summary[:120])
            parts.append(f"**{t('tool_result', lang)}**: {safe_markdown(summary)}")
        parts.append(_code_block(_slim(result, lang), lang))
    return ChatMessage(role="assistant", content="\n\n".join(parts), metadata=meta)  # type: ignore[arg-type]


def _slim(result: Any, lang: str) -> Any:
    """Drop the bulkiest lists (rejections, serving points) to keep the step readable."""
    if isinstance(result, Mapping):
        out = dict(result)
        for key in ("rejected", "points"):
            if isinstance(out.get(key), list) and len(out[key]) > 8:
                out[key] = [*out[key][:8], t("more", lang, n=len(out[key]) - 8)]
        return out
    return result


# ------------------------------------------------------------------------------ replies


def citations_messages(citations: Iterable[Any], lang: str, parent: str = "sources") -> list[ChatMessage]:
    """A "📚 Sources" step with one nested, collapsible child per cited passage (its text)."""
    cites = [c for c in citations if _get(c, "id")]
    if not cites:
        return []
    ids = ", ".join(f"[{_get(c, 'id')}]" for c in cites)
    out = [
        ChatMessage(
            role="assistant",
            content=escape_html(ids),  # type: ignore[arg-type]
            metadata={"title": f"{t('citations', lang)} ({len(cites)})", "id": parent, "status": "done"},
        )
    ]
    for c in cites:
        text = str(_get(c, "text", "") or "")
        if len(text) > MAX_PASSAGE_CHARS:
            text = text[:MAX_PASSAGE_CHARS] + " …"
        title = f"[{_get(c, 'id')}] {_get(c, 'title', '')}".strip()
        source = _get(c, "source", "")
        body = safe_markdown(text) + (f"\n\n— *{safe_markdown(source)}*" if source else "")
        out.append(
            ChatMessage(
                role="assistant",
                content=body,  # type: ignore[arg-type]
                metadata={"title": escape_html(title), "parent_id": parent, "status": "done"},
            )
        )
    return out


def notices_message(notices: Iterable[str], lang: str) -> ChatMessage | None:
    items = [n for n in notices if n]
    if not items:
        return None
    body = "\n".join(f"- {safe_markdown(n)}" for n in items)
    return ChatMessage(
        role="assistant",
        content=body,  # type: ignore[arg-type]
        metadata={"title": t("notices", lang), "status": "done"},
    )


def user_message(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=safe_markdown(text))


def assistant_message(text: str, options: Iterable[str] = ()) -> ChatMessage:
    opts = [{"value": o, "label": o} for o in options]
    return ChatMessage(role="assistant", content=safe_markdown(text), options=opts)  # type: ignore[arg-type]


def use_case_options(lang: str) -> list[str]:
    """Quick answers to the opening question (training / inference / scientific)."""
    return [label("use_case", k, lang) for k in USE_CASES]


# ------------------------------------------------------------------------------ memory chart

SEGMENTS: tuple[tuple[str, str], ...] = (
    ("weights", "#4C78A8"),
    ("kv_cache", "#F58518"),
    ("activations", "#54A24B"),
    ("gradients", "#B279A2"),
    ("optimizer", "#9D755D"),
    ("overhead", "#8C8C8C"),
)


def memory_chart_data(result: Mapping[str, Any] | None) -> list[tuple[str, int]]:
    """Non-zero breakdown segments of a sizing result, in a fixed order: [(category, bytes)]."""
    if not result or not isinstance(result.get("breakdown"), Mapping):
        return []
    bd = result["breakdown"]
    return [(k, int(bd.get(k) or 0)) for k, _ in SEGMENTS if int(bd.get(k) or 0) > 0]


def memory_chart_frame(result: Mapping[str, Any] | None, lang: str) -> pd.DataFrame:
    """The chart's data as a table: category, GB (1e9 B), GiB (2^30 B) — plus the usable-memory row."""
    rows = [{"category": t(k, lang), "GB": v / GB, "GiB": v / GiB} for k, v in memory_chart_data(result)]
    usable = fmt.usable_bytes(result) if result else None
    if usable:
        rows.append({"category": t("capacity", lang), "GB": usable / GB, "GiB": usable / GiB})
    return pd.DataFrame(rows, columns=["category", "GB", "GiB"])


def memory_chart_svg(result: Mapping[str, Any] | None, lang: str) -> str:
    """A stacked horizontal bar (weights / KV cache / activations / … per GPU) drawn against the
    candidate GPU's usable memory, as self-contained HTML + SVG (no scripts, no network assets)."""
    segs = memory_chart_data(result)
    if not segs or result is None:
        return f'<div class="mem-chart mem-empty">{escape_html(t("chart_empty", lang))}</div>'
    on_gpu = sum(v for _, v in segs)
    need = needed_bytes(result) or on_gpu
    cap = result.get("gpu_memory_bytes")
    # the figure the verdict uses: vLLM's reservation (total × gpu_memory_utilization), else what the engine sees
    usable = fmt.usable_bytes(result)
    scale_max = max(on_gpu, cap or 0) * 1.06 or 1
    x0, width, bar_h = 8.0, 584.0, 34.0

    def x(v: float) -> float:
        return x0 + width * v / scale_max

    colors = dict(SEGMENTS)
    rects: list[str] = []
    pos = 0
    for key, value in segs:
        w = max(width * value / scale_max, 0.5)
        tip = f"{t(key, lang)}: {fmt.gb(value)}"
        rects.append(
            f'<rect class="seg seg-{key}" x="{x(pos):.1f}" y="26" width="{w:.1f}" height="{bar_h}" '
            f'fill="{colors[key]}"><title>{escape_html(tip)}</title></rect>'
        )
        pos += value
    if result.get("all_layers_bytes"):
        label_need = t("chart.need_offload", lang, on_gpu=fmt.gb_short(on_gpu), all=fmt.gb_short(need))
    else:
        label_need = f"{t('need', lang)} {fmt.gb_short(on_gpu)}"
    rects.append(f'<text x="{x0}" y="18" class="lbl">{escape_html(label_need)}</text>')
    if cap and usable:
        gpu_name = str(result.get("gpu") or "GPU")
        rects.append(
            f'<rect class="cap" x="{x0}" y="70" width="{x(cap) - x0:.1f}" height="14" fill="#d9d9d9">'
            f"<title>{escape_html(gpu_name)}: {fmt.gb(cap)}</title></rect>"
        )
        rects.append(
            f'<line class="limit" x1="{x(usable):.1f}" y1="20" x2="{x(usable):.1f}" y2="88" '
            'stroke="#d62728" stroke-width="2" stroke-dasharray="5,3"/>'
        )
        if usable != cap:
            text = t(
                "chart.usable_vllm",
                lang,
                usable=fmt.gb_short(usable),
                util=f"{usable / cap:.2f}",
                total=fmt.gb_short(cap),
                gpu=gpu_name,
            )
        else:
            text = t("chart.usable", lang, usable=fmt.gb_short(usable), gpu=gpu_name)
        rects.append(f'<text x="{x0}" y="104" class="lbl">{escape_html(text)}</text>')
    svg_h = 112 if cap else 66
    legend = "".join(
        f'<span class="leg"><i style="background:{colors[k]}"></i>{escape_html(t(k, lang))} '
        f"{escape_html(fmt.gb_short(v))}</span>"
        for k, v in segs
    )
    status = _fit_line(result, need, usable, lang, "chart") if cap and usable else ""
    title = _chart_title(result, lang)
    return (
        f'<div class="mem-chart"><div class="mem-title">{escape_html(title)}</div>'
        f'<svg viewBox="0 0 600 {svg_h}" width="100%" role="img" '
        f'aria-label="{escape_html(t("memory_chart", lang))}">{"".join(rects)}</svg>'
        f'<div class="mem-legend">{legend}</div>'
        + (f'<div class="mem-status">{escape_html(status)}</div>' if status else "")
        + '<div class="mem-units">GB = 10⁹ B · GiB = 2³⁰ B</div></div>'
    )


def _chart_title(result: Mapping[str, Any], lang: str) -> str:
    """Model · precision or method · context × batch · GPUs; "per GPU" only where the bar is one of several."""
    bits = [str(result.get("model") or "")]
    if result.get("kind") == "training":
        bits.append(label("method", result.get("method") or "", lang))
    else:
        bits.append(str(result.get("precision") or ""))
        if result.get("context"):
            bits.append(f"{fmt.num(int(result['context']))} tok × {result.get('batch', 1)}")
    n = int(result.get("gpus") or 1)
    if n > 1:
        bits.append(t("chart.title_gpus", lang, n=n, gpu=result.get("gpu") or "GPU"))
    elif result.get("gpu"):
        bits.append(str(result["gpu"]))
    return " · ".join(b for b in bits if b)


# ------------------------------------------------------------------------------ money


def display_currency(budget_currency: str | None, lang: str, recommendation: Mapping[str, Any] | None = None) -> str:
    """The currency the panel shows money in: the budget's; else the recommendation's euro / pound pricing;
    else yuan for a Chinese page and dollars otherwise."""
    if budget_currency in fmt.SYMBOLS:
        return str(budget_currency)
    priced = (recommendation or {}).get("price_currency")
    if priced in fmt.SYMBOLS:
        return str(priced)
    return "CNY" if lang == "zh" else "USD"


def _local_total(o: Mapping[str, Any], currency: str) -> float | None:
    if currency == "USD":
        return o.get("total_price_usd")
    if currency == "CNY":
        return o.get("total_price_cny")
    return o.get("total_price_local")


def _priced_in(opts: list[Mapping[str, Any]], currency: str) -> str:
    """``currency`` when the options carry totals in it (euro / pound totals only exist when asked), else USD."""
    if currency == "USD" or any(_local_total(o, currency) is not None for o in opts):
        return currency
    return "USD"


def _per_price(o: Mapping[str, Any], currency: str) -> float | None:
    """The option's performance per $1k (its ``perf_per_price``) re-based to per ¥10k, €1k or £1k."""
    ppp, usd = o.get("perf_per_price"), o.get("total_price_usd")
    if not isinstance(ppp, int | float):
        return None
    if currency == "USD":
        return float(ppp)
    local = _local_total(o, currency)
    if not local or not usd:
        return None
    unit = 10_000 if currency == "CNY" else 1_000
    return float(ppp) * (usd / 1000) / (local / unit)


# ------------------------------------------------------------------------------ comparison table


def comparison_frame(
    recommendation: Mapping[str, Any] | None, lang: str, limit: int = 8, currency: str | None = None
) -> pd.DataFrame:
    """Candidate configurations: memory fit, est. tokens/s (or FP64), power, price and perf per price in
    ``currency`` (default: :func:`display_currency` without a budget)."""
    opts = [o for o in list((recommendation or {}).get("options") or [])[:limit] if isinstance(o, Mapping)]
    cur = _priced_in(opts, currency or display_currency(None, lang, recommendation))
    per = t(f"per_price.{cur}", lang)
    scientific = (recommendation or {}).get("workload") == "scientific" or any(
        o.get("fp64_tflops") is not None and o.get("decode_tokens_per_s") is None for o in opts
    )
    training = (recommendation or {}).get("workload") == "training"
    fp32 = scientific and any(o.get("fp32_tflops") is not None for o in opts)  # a single-precision code
    flops = "fp32" if fp32 else "fp64"
    perf_col = t(f"col_{flops}", lang) if scientific else (t("col_train_tps", lang) if training else t("col_tps", lang))
    cols = [
        t("col_config", lang),
        t("col_fit", lang),
        t("col_mem", lang),
        perf_col,
        t("col_power", lang),
        t("col_price", lang, currency=cur),
        t(f"col_ppp_{flops}", lang, per=per) if scientific else t("col_ppp", lang, per=per),
    ]
    rows = []
    for o in opts:
        fit = "✅" if o.get("fits") else "❌"
        if scientific:
            perf = o.get(f"{flops}_tflops")
        elif training:
            perf = o.get("training_tokens_per_s")
        else:
            perf = o.get("decode_tokens_per_s")
        need, usable = o.get("per_gpu_bytes"), fmt.usable_bytes(o)
        mem = f"{_gb_number(need)} / {_gb_number(usable)}"
        rows.append(
            [
                f"{o.get('count', 1)}× {o.get('gpu', '?')}",
                fit,
                mem,
                _round(perf, 1),
                _round(o.get("power_w"), 1, 0),
                fmt.option_total(dict(o), cur),
                _round(_per_price(o, cur), 1, 2),
            ]
        )
    return pd.DataFrame(rows, columns=cols)


def _gb_number(n_bytes: Any) -> str:
    """Bytes as a bare GB figure for a column whose head carries the unit."""
    return f"{n_bytes / GB:,.1f}" if isinstance(n_bytes, int | float) else "—"


def frame_markdown(frame: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (cells escaped; None/NaN shown as '—')."""
    if frame.empty:
        return ""

    def cell(v: Any) -> str:
        if v is None or (isinstance(v, float) and v != v):
            return "—"
        text = fmt.num(v) if isinstance(v, int | float) and not isinstance(v, bool) else str(v)
        return safe_markdown(text).replace("|", "\\|")

    head = "| " + " | ".join(safe_markdown(str(c)) for c in frame.columns) + " |"
    sep = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, sep, *body])


def comparison_notes(
    recommendation: Mapping[str, Any] | None, lang: str, limit: int = 5, currency: str | None = None
) -> str:
    """Why each ranked option, numbered like the table: its memory, speed, price and value in ``currency``,
    then the warnings of its build check (each with its fix) — the presenter's words, not the tool's raw line."""
    if not (recommendation or {}).get("options"):
        return ""
    from advisor.present import present_recommend
    from tools.recommend import Recommendation

    try:
        rec = Recommendation.model_validate(recommendation)
    except ValueError:  # a hand-edited session: say nothing rather than something wrong
        log.warning("recommendation in the session does not validate; no notes shown")
        return ""
    cur = _priced_in([o.model_dump() for o in rec.options], currency or display_currency(None, lang, recommendation))
    section = present_recommend(rec, lang, currency=cur, limit=limit)
    items = section.lists[0].items if section.lists else []
    lines: list[str] = []
    for item in items:
        lines.append(safe_markdown(ui_text(item.text, lang)).replace("\n", " "))
        for detail in (d.strip() for d in item.details):
            text = safe_markdown(ui_text(detail, lang))
            if detail.startswith("→") and lines[-1].startswith("   - "):  # a finding's fix, under the finding
                lines[-1] += f"  \n     {text}"
            elif detail:
                lines.append(f"   - {text}")
    return "\n".join(lines)


def _round(value: Any, divisor: float, digits: int = 1) -> float | int | None:
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        return None
    return round(value / divisor) if digits == 0 else round(value / divisor, digits)


def rejected_markdown(recommendation: Mapping[str, Any] | None, lang: str, limit: int = 6) -> str:
    rej = list((recommendation or {}).get("rejected") or [])
    if not rej:
        return ""
    lines = [f"**{t('rejected', lang)}** ({len(rej)})"]
    for r in rej[:limit]:
        n = f"{r.get('count')}× " if r.get("count") else ""
        why = r.get("reason_zh") if lang == "zh" else r.get("reason_en")
        lines.append(
            f"- {safe_markdown(n + str(r.get('gpu', '?')))}: "
            f"{safe_markdown(ui_text(why, lang) if why else label('stage', r.get('stage', ''), lang))}"
        )
    if len(rej) > limit:
        lines.append(f"- … +{len(rej) - limit}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ checklist

_SEV_ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def checklist_markdown(report: Mapping[str, Any] | None, lang: str) -> str:
    """The compatibility findings, errors first: severity, message and fix in ``lang`` (no rule ids, no
    command-line flags)."""
    if not report or "findings" not in report:
        return t("checklist_empty", lang)
    findings = [f for f in report.get("findings") or [] if isinstance(f, Mapping)]
    head = ("✅ " + t("checklist_ok", lang)) if report.get("ok") else ""
    lines = [head] if head else []
    order = {"error": 0, "warning": 1, "info": 2}
    for f in sorted(findings, key=lambda f: order.get(str(f.get("severity")), 3)):
        sev = str(f.get("severity", "info"))
        said = f.get("message_zh") if lang == "zh" else f.get("message_en")
        fix = f.get("fix_zh") if lang == "zh" else f.get("fix")
        line = (
            f"- {_SEV_ICON.get(sev, '•')} **{word(lang, 'severity', sev)}** {safe_markdown(ui_text(said or '', lang))}"
        )
        if fix:
            line += f"  \n  → {safe_markdown(ui_text(fix, lang))}"
        lines.append(line)
    if not findings and not head:
        lines.append(t("checklist_ok", lang))
    return "\n".join(lines)


# ------------------------------------------------------------------------------ profile panel

PROFILE_FIELDS = (
    "use_case",
    "model",
    "params_b",
    "precision",
    "context_tokens",
    "concurrency",
    "method",
    "gpu",
    "gpu_count",
)


def profile_values(profile: Any) -> dict[str, Any]:
    """The editable profile fields as plain values (None when unknown) for the side-panel inputs."""
    out: dict[str, Any] = {}
    for key in PROFILE_FIELDS:
        value = _get(profile, key) if profile is not None else None
        out[key] = getattr(value, "value", value)
    return out


def profile_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """Fields the user edited in the panel: {field: new value}, blanks meaning "not set"."""
    changes: dict[str, Any] = {}
    for key in PROFILE_FIELDS:
        new = _blank_to_none(after.get(key))
        old = _blank_to_none(before.get(key))
        if isinstance(new, float) and key in ("context_tokens", "concurrency", "gpu_count"):
            new = int(new)
        if new != old:
            changes[key] = new
    return changes


def _blank_to_none(value: Any) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, float) and value != value:  # NaN from an emptied number box
        return None
    return value


def _catalog_name(kind: str, ident: Any) -> Any:
    """Display name of a catalog id (the id itself when unknown)."""
    try:
        from knowledge import load_catalog

        catalog = load_catalog()
        return (catalog.gpu(str(ident)) if kind == "gpu" else catalog.model(str(ident))).name
    except Exception:  # unknown or ambiguous: show what we have
        return ident


def field_text(key: str, value: Any, lang: str) -> str:
    """A profile field's value as users read it: labels for use case and method, names for catalog ids,
    grouped digits for numbers."""
    if value is None:
        return t("unset", lang)
    if key == "use_case":
        return label("use_case", value, lang)
    if key == "method":
        return label("method", value, lang)
    if key in ("gpu", "model"):
        return str(_catalog_name(key, value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fmt.num(value)
    return str(value)


def profile_markdown(profile: Any, lang: str) -> str:
    """A compact read-only summary of everything known so far (budget, constraints included)."""
    if profile is None:
        return ""
    rows: list[str] = []
    vals = profile_values(profile)
    for key in PROFILE_FIELDS:
        if vals[key] is None:
            continue
        rows.append(f"{t(key, lang)}: **{safe_markdown(field_text(key, vals[key], lang))}**")
    budget = _get(profile, "budget")
    if budget is not None:
        amount = _get(budget, "amount")
        currency = str(getattr(_get(budget, "currency"), "value", _get(budget, "currency")) or "USD")
        rows.append(f"{t('budget', lang)}: **{fmt.money(amount, currency)}**")
    return " · ".join(rows)


def budget_currency(profile: Any) -> str | None:
    """The currency of the session's budget, when it has one."""
    budget = _get(profile, "budget") if profile is not None else None
    cur = _get(budget, "currency") if budget is not None else None
    cur = getattr(cur, "value", cur)
    return str(cur) if cur else None


# ------------------------------------------------------------------------------ calculator results


def terms_markdown(result: Mapping[str, Any] | None, lang: str) -> str:
    """Each computed term with its value (in its unit), formula and plain-words meaning."""
    from tools.result import Term

    items = []
    for x in (result or {}).get("terms") or []:
        try:
            items.append(Term.model_validate(x))
        except ValueError:  # not a term (a hand-edited session): leave it out
            continue
    if not items:
        return ""
    head = "| " + " | ".join(msg(lang, f"present.col.{c}") for c in ("term", "value", "formula", "meaning")) + " |"
    rows = [head, "|---|---|---|---|"]
    for line in present_terms(items, lang):
        formula = line.formula.replace("|", "\\|").replace("`", "'")
        meaning = safe_markdown(line.meaning).replace("|", "\\|")
        rows.append(f"| {safe_markdown(line.label)} | {line.value} | `{formula}` | {meaning} |")
    return "\n".join(rows)


def _bullets(heading: str, items: Iterable[Any], lang: str) -> str:
    lines = [f"- {safe_markdown(ui_text(render(i, lang), lang))}" for i in items if i]
    title = msg(lang, f"present.heading.{heading}").rstrip(":：")
    return f"**{title}**\n" + "\n".join(lines) if lines else ""


def memory_summary_markdown(result: Mapping[str, Any] | None, lang: str) -> str:
    """Verdict, per-GPU need, usable memory, the term table, assumptions and warnings of a sizing run.

    Need, usable and verdict are one set of figures: the need the verdict weighs (:func:`needed_bytes`)
    against the memory it weighs it against (:func:`advisor.fmt.usable_bytes`)."""
    if not result:
        return ""
    need = needed_bytes(result)
    key = "mem.need_offload" if result.get("all_layers_bytes") else "mem.need"
    lines = [t(key, lang, need=fmt.gb(need))]
    if int(result.get("gpus") or 1) > 1 and result.get("total_bytes"):
        lines.append(t("mem.total", lang, total=fmt.gb_short(result["total_bytes"])))
    usable, cap = fmt.usable_bytes(result), result.get("gpu_memory_bytes")
    if usable and cap:
        gpu = safe_markdown(result.get("gpu") or "GPU")
        if usable != cap:
            line = t(
                "mem.usable_vllm",
                lang,
                gpu=gpu,
                usable=fmt.gb(usable),
                util=f"{usable / cap:.2f}",
                total=fmt.gb_short(cap),
            )
        else:
            line = t("mem.usable", lang, gpu=gpu, usable=fmt.gb(usable))
        lines.append(f"{line} → {_fit_line(result, need, usable, lang, 'mem')}")
    if result.get("kv_capacity_tokens") is not None and not result.get("offload_layers"):
        lines.append(
            t(
                "mem.kv",
                lang,
                tokens=fmt.num(int(result["kv_capacity_tokens"])),
                concurrency=fmt.num(result.get("max_concurrency"), 2),
            )
        )
    if result.get("cpu_bytes"):
        lines.append(t("mem.host_ram", lang, bytes=fmt.gb_short(result["cpu_bytes"])))
    parts = [
        "  \n".join(lines),
        terms_markdown(result, lang),
        _bullets("assumptions", result.get("assumptions") or [], lang),
        _bullets("warnings", result.get("warnings") or [], lang),
    ]
    return "\n\n".join(p for p in parts if p)


def perf_summary_markdown(
    decode: Mapping[str, Any] | None, prefill: Mapping[str, Any] | None, serving: Mapping[str, Any] | None, lang: str
) -> str:
    """Decode tokens/s (with its range), prefill tokens/s and time to first token, serving capacity."""
    rows = [
        f"| {t('perf.figure', lang)} | {t('perf.estimate', lang)} | {t('perf.range', lang)} |",
        "|---|---|---|",
    ]
    if decode:
        lo, hi = decode.get("tokens_per_s_range") or (None, None)
        rows.append(
            f"| {t('perf.decode', lang)} | {fmt.tps(decode.get('tokens_per_s'))} | {fmt.num(lo)}–{fmt.num(hi)} |"
        )
        bound = word(lang, "bound_by", decode.get("bound") or "unknown")
        rows.append(
            f"| {t('perf.per_sequence', lang)} | {fmt.tps(decode.get('per_sequence_tokens_per_s'))} | "
            f"{safe_markdown(bound)} |"
        )
    if prefill:
        lo, hi = prefill.get("tokens_per_s_range") or (None, None)
        rows.append(
            f"| {t('perf.prefill', lang)} | {fmt.tps(prefill.get('tokens_per_s'))} | {fmt.num(lo)}–{fmt.num(hi)} |"
        )
        lo, hi = prefill.get("ttft_s_range") or (None, None)
        rows.append(
            f"| {t('perf.ttft', lang)} | {fmt.seconds(prefill.get('ttft_s'))} | {fmt.seconds(lo)}–{fmt.seconds(hi)} |"
        )
    if serving:
        peak = serving.get("peak") or {}
        rows.append(f"| {t('perf.kv', lang)} | {fmt.num(serving.get('kv_capacity_tokens'))} tokens | |")
        rows.append(f"| {t('perf.max_concurrency', lang)} | {fmt.num(serving.get('max_concurrency'), 2)} | |")
        rows.append(
            f"| {t('perf.peak', lang)} | {fmt.tps(_get(peak, 'tokens_per_s'))} | "
            f"{t('perf.at_batch', lang, batch=_get(peak, 'batch', '—'))} |"
        )
    warnings: list[Any] = []
    assumptions: list[Any] = []
    for r in (decode, prefill, serving):
        for w in (r or {}).get("warnings") or []:
            if w not in warnings:
                warnings.append(w)
        for a in (r or {}).get("assumptions") or []:
            if a not in assumptions:
                assumptions.append(a)
    parts = [
        "\n".join(rows),
        terms_markdown(decode, lang),
        _bullets("assumptions", assumptions, lang),
        _bullets("warnings", warnings, lang),
    ]
    return "\n\n".join(p for p in parts if p)


def totals_markdown(report: Mapping[str, Any] | None, lang: str) -> str:
    """Whole-build totals behind the findings: power, PSU, wall draw, lanes, VRAM."""
    tot = (report or {}).get("totals")
    if not isinstance(tot, Mapping):
        return ""
    ram = tot.get("recommended_system_ram_gb")
    items = [
        ("gpu_power", _w(tot.get("gpu_power_w"))),
        ("system_power", _w(tot.get("system_power_w"))),
        ("psu", _w(tot.get("recommended_psu_w"))),
        ("wall", _w(tot.get("wall_draw_w"))),
        ("circuit", _w(tot.get("continuous_limit_w"))),
        ("lanes", f"{fmt.num(tot.get('lanes_needed'))} / {fmt.num(tot.get('lanes_available'))}"),
        ("vram", fmt.gb_short(tot.get("total_vram_bytes"))),
        ("ram", f"{fmt.num(ram)} GB" if ram else "—"),
    ]
    rows = ["| | |", "|---|---|"] + [f"| {t('totals.' + k, lang)} | {v} |" for k, v in items if v != "—"]
    return "\n".join(rows)


def _w(value: Any) -> str:
    return f"{fmt.num(value)} W" if isinstance(value, int | float) else "—"


# ------------------------------------------------------------------------------ streaming


class TurnView:
    """Folds one turn's engine events (tool started / finished, text delta, final reply) into chat messages.

    Events are read by their ``type`` field, so any object shaped like ``advisor.engine`` events works.
    ``messages`` is the turn's part of the chat at any moment: pending steps show a spinner, finished
    steps their inputs and result, the reply text grows with each delta (a ``replace`` delta discards
    the provisional LLM draft), and the final reply replaces the draft and adds sources and notes.
    """

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.messages: list[ChatMessage] = []
        self.final: Any = None
        self._pending: dict[str, tuple[int, dict[str, Any]]] = {}
        self._reply_idx: int | None = None
        self._draft = ""

    def apply(self, event: Any) -> bool:
        """Fold one event; True when the visible chat changed."""
        kind = _get(event, "type")
        if kind == "tool_started":
            info = {
                "name": _get(event, "name"),
                "arguments": _get(event, "arguments") or {},
                "call_id": _get(event, "call_id"),
            }
            self.messages.append(tool_step_message(info, self.lang, pending=True))
            self._pending[str(info["call_id"])] = (len(self.messages) - 1, info)
            return True
        if kind == "tool_finished":
            call_id = str(_get(event, "call_id"))
            idx, info = self._pending.pop(call_id, (None, {"name": _get(event, "name"), "arguments": {}}))
            done = {
                **info,
                "result": _get(event, "result"),
                "error": _get(event, "error"),
                "duration_ms": _get(event, "duration_ms", 0.0),
                "call_id": call_id,
            }
            step = tool_step_message(done, self.lang)
            if idx is None:
                self.messages.append(step)
            else:
                self.messages[idx] = step
            return True
        if kind == "text_delta":
            text = str(_get(event, "text", "") or "")
            self._draft = text if _get(event, "replace", False) else self._draft + text
            self._set_reply(assistant_message(self._draft))
            return True
        if kind == "final":
            self.final = _get(event, "reply")
            reply_lang = _get(self.final, "lang") or self.lang
            self._set_reply(assistant_message(str(_get(self.final, "text", "") or "")))
            self.messages += citations_messages(
                _get(self.final, "citations") or [], reply_lang, parent=f"sources-{id(self.final):x}"
            )
            note = notices_message(_get(self.final, "notices") or [], reply_lang)
            if note is not None:
                self.messages.append(note)
            return True
        if kind == "profile":
            return False
        return False

    def _set_reply(self, message: ChatMessage) -> None:
        if self._reply_idx is None:
            self.messages.append(message)
            self._reply_idx = len(self.messages) - 1
        else:
            self.messages[self._reply_idx] = message


def reply_messages(reply: Any, lang: str) -> list[ChatMessage]:
    """A finished (non-streamed) reply as chat messages: its tool steps, text, sources and notes."""
    view = TurnView(lang)
    for call in _get(reply, "tool_calls") or []:
        view.messages.append(tool_step_message(call, lang))
    view.apply({"type": "final", "reply": reply})
    return view.messages


def history_messages(session: Any, lang: str) -> list[ChatMessage]:
    """The chat of a resumed session, rebuilt from its history: each turn's tool steps and text."""
    out: list[ChatMessage] = []
    for turn in _get(session, "history") or []:
        text = str(_get(turn, "text", "") or "")
        if _get(turn, "role") == "user":
            out.append(user_message(text))
            continue
        for call in _get(turn, "tool_calls") or []:
            out.append(tool_step_message(call, _get(turn, "lang") or lang))
        out.append(assistant_message(text))
    return out
