"""Pure functions from engine data (tool calls, results, citations, profile) to what the UI shows.

Nothing here touches gradio state or the network: every function maps plain data (dicts as the
tools return them in JSON, ``advisor.session`` models) to chat messages, an SVG chart, a pandas
table or Markdown. All text that came from a user or a tool is HTML-escaped before it reaches
the page, so ``<script>`` or ``<img onerror=…>`` typed in the chat is shown, never run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
from gradio import ChatMessage

from advisor.ui.i18n import METHODS, USE_CASES, pick, t, tool_label
from knowledge.messages import render
from tools.units import GB, GiB

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


def _code_block(obj: Any, limit: int = MAX_DETAIL_CHARS) -> str:
    text = json.dumps(obj, ensure_ascii=False, indent=1, default=str)
    if len(text) > limit:
        text = text[:limit] + "\n… (truncated)"
    return "```json\n" + text.replace("```", "ˋˋˋ") + "\n```"


# ------------------------------------------------------------------------------ numbers


def gb(n_bytes: float | None, digits: int = 1) -> str:
    """'24.3 GB' (GB = 1e9 B); '—' for None."""
    return "—" if n_bytes is None else f"{n_bytes / GB:,.{digits}f} GB"


def gib(n_bytes: float | None, digits: int = 1) -> str:
    """'22.6 GiB' (GiB = 2**30 B); '—' for None."""
    return "—" if n_bytes is None else f"{n_bytes / GiB:,.{digits}f} GiB"


def _num(value: Any, digits: int = 1) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


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


def _short_args(args: Mapping[str, Any]) -> str:
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
            bits.append(str(args[key]))
    if args.get("context"):
        bits.append(f"{int(args['context']):,} tok")
    if args.get("query"):
        bits.append(f"“{str(args['query'])[:40]}”")
    if args.get("name"):
        bits.append(str(args["name"]))
    return " · ".join(bits[:5])


def result_summary(name: str, result: Any, lang: str) -> str:
    """One or two lines saying what a tool found, in ``lang`` (units always labelled)."""
    if not isinstance(result, Mapping):
        return ""
    zh = lang == "zh"
    if "per_gpu_bytes" in result and "breakdown" in result:
        need = result["per_gpu_bytes"]
        line = f"{t('need', lang)} {gb(need)} ({gib(need)}) / GPU"
        if result.get("gpu_memory_bytes"):
            verdict = t("fits", lang) if result.get("fits") else t("does_not_fit", lang)
            mark = "✅" if result.get("fits") else "❌"
            line += f" · {result.get('gpu') or 'GPU'} {gb(result['gpu_memory_bytes'])} → {mark} {verdict}"
        return line
    if name == "perf_decode" or ("tokens_per_s" in result and "step_time_s" in result):
        lo, hi = result.get("tokens_per_s_range") or (None, None)
        return (
            f"{'解码' if zh else 'decode'} ≈ {_num(result.get('tokens_per_s'))} tokens/s"
            f" ({_num(lo)}–{_num(hi)}), {result.get('bound', '')}-bound"
        )
    if "ttft_s" in result:
        return (
            f"{'预填充' if zh else 'prefill'} ≈ {_num(result.get('tokens_per_s'), 0)} tokens/s · "
            f"TTFT ≈ {_num(result.get('ttft_s'), 2)} s"
        )
    if "max_concurrency" in result and "points" in result:
        peak = result.get("peak") or {}
        return (
            f"{'最大并发' if zh else 'max concurrency'} {_num(result.get('max_concurrency'))} · "
            f"{'峰值' if zh else 'peak'} {_num(_get(peak, 'tokens_per_s'), 0)} tokens/s"
        )
    if "findings" in result and "ok" in result:
        sev = [f.get("severity") for f in result.get("findings", []) if isinstance(f, Mapping)]
        mark = "✅" if result.get("ok") else "❌"
        return (
            f"{mark} {sev.count('error')} {t('error', lang)} · {sev.count('warning')} "
            f"{t('warning', lang)} · {sev.count('info')} {t('info', lang)}"
        )
    if "options" in result and "rejected" in result:
        opts = result.get("options") or []
        top = opts[0] if opts else None
        head = f"{len(opts)} {'个方案' if zh else 'options'}, {len(result.get('rejected') or [])} " + (
            "个被排除" if zh else "ruled out"
        )
        if top:
            head += f" · #1 {top.get('count', 1)}× {top.get('gpu')}"
        return head
    if "results" in result:
        ids = [str(_get(p, "id", "")) for p in result.get("results") or []]
        return ("、".join(ids) if zh else ", ".join(ids)) or str(result.get("reason") or "")
    return ""


def tool_step_message(call: Any, lang: str, *, pending: bool = False) -> ChatMessage:
    """A collapsible chat step "🔧 <tool> · <args>" with the inputs, a summary and the raw result.

    ``call`` is an ``advisor.session.ToolCall`` or a dict with name / arguments / result / error.
    """
    name = str(_get(call, "name", "tool"))
    args = _get(call, "arguments", {}) or {}
    error = _get(call, "error")
    result = _get(call, "result")
    short = _short_args(args)
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
        body = f"**{t('tool_inputs', lang)}**\n\n{_code_block(args)}"
        return ChatMessage(role="assistant", content=body, metadata=meta)  # type: ignore[arg-type]
    parts = [f"**{t('tool_inputs', lang)}**\n\n{_code_block(args, 2000)}"]
    if error:
        meta["log"] = t("tool_failed", lang)
        parts.append(f"**{t('tool_error', lang)}**: {safe_markdown(error)}")
    else:
        summary = result_summary(name, result, lang)
        if summary:
            meta["log"] = escape_html(summary[:120])
            parts.append(f"**{t('tool_result', lang)}**: {safe_markdown(summary)}")
        parts.append(_code_block(_slim(result)))
    return ChatMessage(role="assistant", content="\n\n".join(parts), metadata=meta)  # type: ignore[arg-type]


def _slim(result: Any) -> Any:
    """Drop the bulkiest lists (rejections, serving points) to keep the step readable."""
    if isinstance(result, Mapping):
        out = dict(result)
        for key in ("rejected", "points"):
            if isinstance(out.get(key), list) and len(out[key]) > 8:
                out[key] = [*out[key][:8], f"… {len(out[key]) - 8} more"]
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
    return [pick(USE_CASES[k], lang) for k in ("training", "inference", "scientific")]


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
    """The chart's data as a table: category, GB (1e9 B), GiB (2^30 B) — plus the capacity row."""
    rows = [{"category": t(k, lang), "GB": v / GB, "GiB": v / GiB} for k, v in memory_chart_data(result)]
    if result and result.get("gpu_memory_bytes"):
        cap = int(result["gpu_memory_bytes"])
        rows.append({"category": t("capacity", lang), "GB": cap / GB, "GiB": cap / GiB})
    return pd.DataFrame(rows, columns=["category", "GB", "GiB"])


def memory_chart_svg(result: Mapping[str, Any] | None, lang: str) -> str:
    """A stacked horizontal bar (weights / KV cache / activations / … per GPU) drawn against the
    candidate GPU's usable memory, as self-contained HTML + SVG (no scripts, no network assets)."""
    segs = memory_chart_data(result)
    if not segs or result is None:
        return f'<div class="mem-chart mem-empty">{escape_html(t("chart_empty", lang))}</div>'
    need = sum(v for _, v in segs)
    cap = result.get("gpu_memory_bytes")
    reserved = result.get("reserved_bytes")
    # vLLM must fit inside its reservation (total × gpu_memory_utilization); other engines in the total
    limit = reserved if cap and reserved and 0 < reserved <= cap else cap
    scale_max = max(need, cap or 0) * 1.06 or 1
    x0, width, bar_h = 8.0, 584.0, 34.0

    def x(v: float) -> float:
        return x0 + width * v / scale_max

    colors = dict(SEGMENTS)
    rects: list[str] = []
    pos = 0
    for key, value in segs:
        w = max(width * value / scale_max, 0.5)
        tip = f"{t(key, lang)}: {gb(value, 2)} ({gib(value, 2)})"
        rects.append(
            f'<rect class="seg seg-{key}" x="{x(pos):.1f}" y="26" width="{w:.1f}" height="{bar_h}" '
            f'fill="{colors[key]}"><title>{escape_html(tip)}</title></rect>'
        )
        pos += value
    label_need = f"{t('need', lang)} {gb(need)}"
    rects.append(f'<text x="{x0}" y="18" class="lbl">{escape_html(label_need)}</text>')
    if cap:
        gpu_name = str(result.get("gpu") or "GPU")
        rects.append(
            f'<rect class="cap" x="{x0}" y="70" width="{x(cap) - x0:.1f}" height="14" fill="#d9d9d9">'
            f"<title>{escape_html(gpu_name)}: {gb(cap, 2)} ({gib(cap, 2)})</title></rect>"
        )
        rects.append(
            f'<line class="limit" x1="{x(limit):.1f}" y1="20" x2="{x(limit):.1f}" y2="88" '
            'stroke="#d62728" stroke-width="2" stroke-dasharray="5,3"/>'
        )
        label = f"{t('capacity', lang)} {gb(limit)}"
        if limit != cap:
            label += f" (vLLM {limit / cap:.2f} × {gb(cap)} {gpu_name})"
        else:
            label += f" ({gpu_name})"
        rects.append(f'<text x="{x0}" y="104" class="lbl">{escape_html(label)}</text>')
    svg_h = 112 if cap else 66
    legend = "".join(
        f'<span class="leg"><i style="background:{colors[k]}"></i>{escape_html(t(k, lang))} {escape_html(gb(v))}</span>'
        for k, v in segs
    )
    status = ""
    if cap:
        head = result.get("headroom_bytes")
        if result.get("fits"):
            status = f"✅ {t('fits', lang)} · {t('headroom', lang)} {gb(head)}"
        else:
            short = -head if isinstance(head, int | float) and head < 0 else max(need - (limit or 0), 0)
            status = f"❌ {t('does_not_fit', lang)} · {t('short_by', lang)} {gb(short)}"
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
    bits = [str(result.get("model") or "")]
    if result.get("kind") == "training":
        bits.append(str(result.get("method") or ""))
    else:
        bits.append(str(result.get("precision") or ""))
        if result.get("context"):
            bits.append(f"{int(result['context']):,} tok × {result.get('batch', 1)}")
    n = result.get("gpus") or 1
    if result.get("gpu"):
        bits.append(f"{n}× {result['gpu']}")
    return " · ".join(b for b in bits if b) + (" · 每卡" if lang == "zh" else " · per GPU")


# ------------------------------------------------------------------------------ comparison table


def comparison_frame(recommendation: Mapping[str, Any] | None, lang: str, limit: int = 8) -> pd.DataFrame:
    """Candidate configurations: memory fit, est. tokens/s (or FP64), power, price, perf per price."""
    opts = [o for o in list((recommendation or {}).get("options") or [])[:limit] if isinstance(o, Mapping)]
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
        t("col_price", lang),
        t(f"col_ppp_{flops}", lang) if scientific else t("col_ppp", lang),
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
        price = o.get("total_price_usd") if o.get("total_price_usd") is not None else o.get("price_usd")
        need, have = _round(o.get("per_gpu_bytes"), GB), _round(o.get("gpu_memory_bytes"), GB)
        rows.append(
            [
                f"{o.get('count', 1)}× {o.get('gpu', '?')}",
                fit,
                f"{_num(need)} / {_num(have)}",
                _round(perf, 1),
                _round(o.get("power_w"), 1, 0),
                _round(price, 1, 0),
                _round(o.get("perf_per_price"), 1, 2),
            ]
        )
    return pd.DataFrame(rows, columns=cols)


def frame_markdown(frame: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (cells escaped; None/NaN shown as '—')."""
    if frame.empty:
        return ""

    def cell(v: Any) -> str:
        if v is None or (isinstance(v, float) and v != v):
            return "—"
        return safe_markdown(_num(v)).replace("|", "\\|")

    head = "| " + " | ".join(safe_markdown(str(c)) for c in frame.columns) + " |"
    sep = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, sep, *body])


def comparison_notes(recommendation: Mapping[str, Any] | None, lang: str, limit: int = 5) -> str:
    """The "why" line of each ranked option, numbered like the table."""
    opts = [o for o in list((recommendation or {}).get("options") or [])[:limit] if isinstance(o, Mapping)]
    lines = [
        f"{o.get('rank', i + 1)}. {safe_markdown(o.get('why_zh') if lang == 'zh' else o.get('why_en') or '')}"
        for i, o in enumerate(opts)
    ]
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
        lines.append(f"- {safe_markdown(n + str(r.get('gpu', '?')))}: {safe_markdown(why or r.get('stage', ''))}")
    if len(rej) > limit:
        lines.append(f"- … +{len(rej) - limit}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ checklist

_SEV_ICON = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def checklist_markdown(report: Mapping[str, Any] | None, lang: str) -> str:
    """The compatibility findings, errors first, each with its fix (bilingual messages picked by lang)."""
    if not report or "findings" not in report:
        return t("checklist_empty", lang)
    findings = [f for f in report.get("findings") or [] if isinstance(f, Mapping)]
    head = ("✅ " + t("checklist_ok", lang)) if report.get("ok") else ""
    lines = [head] if head else []
    order = {"error": 0, "warning": 1, "info": 2}
    for f in sorted(findings, key=lambda f: order.get(str(f.get("severity")), 3)):
        sev = str(f.get("severity", "info"))
        msg = f.get("message_zh") if lang == "zh" else f.get("message_en")
        fix = f.get("fix_zh") if lang == "zh" else f.get("fix")
        line = (
            f"- {_SEV_ICON.get(sev, '•')} **{t(sev, lang) if sev in _SEV_ICON else sev}** "
            f"`{f.get('category', '')}` {safe_markdown(msg or '')}"
        )
        if fix:
            line += f"  \n  → {t('fix', lang)}: {safe_markdown(fix)}"
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


def profile_markdown(profile: Any, lang: str) -> str:
    """A compact read-only summary of everything known so far (budget, constraints included)."""
    if profile is None:
        return ""
    rows: list[str] = []
    vals = profile_values(profile)
    for key in PROFILE_FIELDS:
        v = vals[key]
        if v is None:
            continue
        if key == "use_case" and v in USE_CASES:
            v = pick(USE_CASES[v], lang)
        if key == "method" and v in METHODS:
            v = pick(METHODS[v], lang)
        if key in ("gpu", "model"):
            v = _catalog_name(key, v)
        rows.append(f"{t(key, lang)}: **{safe_markdown(_num(v))}**")
    budget = _get(profile, "budget")
    if budget is not None:
        rows.append(f"{t('budget', lang)}: **{_num(_get(budget, 'amount'), 0)} {_get(budget, 'currency', '')}**")
    return " · ".join(rows)


# ------------------------------------------------------------------------------ calculator results


def terms_markdown(result: Mapping[str, Any] | None, lang: str) -> str:
    """Each computed term with its value (bytes in GB and GiB), formula and plain-words meaning."""
    terms = [x for x in (result or {}).get("terms") or [] if isinstance(x, Mapping)]
    if not terms:
        return ""
    head = "| 项 | 数值 | 公式 | 含义 |" if lang == "zh" else "| Term | Value | Formula | Meaning |"
    rows = [head, "|---|---|---|---|"]
    for x in terms:
        value = x.get("value")
        unit = str(x.get("unit", ""))
        if isinstance(value, float) and value.is_integer() and abs(value) >= 100:
            value = int(value)
        shown = f"{gb(value, 2)} ({gib(value, 2)})" if unit == "bytes" else f"{_num(value, 2)} {unit}"
        name = str(x.get("name", ""))
        label = t(name, lang) if name in _TERM_KEYS else pick(_TERM_EXTRA[name], lang) if name in _TERM_EXTRA else name
        meaning = x.get("explain_zh") if lang == "zh" else x.get("explain_en")
        formula = str(x.get("formula", "")).replace("|", "\\|").replace("`", "'")
        meaning_md = safe_markdown(meaning or "").replace("|", "\\|")
        rows.append(f"| {safe_markdown(label)} | {shown} | `{formula}` | {meaning_md} |")
    return "\n".join(rows)


_TERM_KEYS = {k for k, _ in SEGMENTS}
_TERM_EXTRA = {
    "vllm_reservation": ("vLLM 预留", "vLLM reservation"),
    "kv_capacity": ("KV 容量", "KV capacity"),
    "max_concurrency": ("最大并发", "Max concurrency"),
    "host_ram": ("主机内存", "Host RAM"),
}


def _bullets(title: str, items: Iterable[Any], lang: str) -> str:
    lines = [f"- {safe_markdown(render(i, lang))}" for i in items if i]
    return f"**{title}**\n" + "\n".join(lines) if lines else ""


def memory_summary_markdown(result: Mapping[str, Any] | None, lang: str) -> str:
    """Verdict, per-GPU need, engine budget, the term table, assumptions and warnings of a sizing run."""
    if not result:
        return ""
    zh = lang == "zh"
    need = result.get("all_layers_bytes") or result.get("per_gpu_bytes")  # llama.cpp offload: all layers on GPU
    lines = [f"**{t('need', lang)}**: {gb(need, 2)} ({gib(need, 2)}) / GPU"]
    if result.get("gpus", 1) and int(result.get("gpus") or 1) > 1 and result.get("total_bytes"):
        lines.append(("全部 GPU 合计" if zh else "All GPUs together") + f": {gb(result['total_bytes'])}")
    if result.get("gpu_memory_bytes"):
        mark = "✅" if result.get("fits") else "❌"
        verdict = t("fits", lang) if result.get("fits") else t("does_not_fit", lang)
        lines.append(
            f"**{safe_markdown(result.get('gpu') or 'GPU')}**: {gb(result['gpu_memory_bytes'], 2)} "
            f"{'引擎可用' if zh else 'usable'} → {mark} {verdict} · {t('headroom', lang)} "
            f"{gb(result.get('headroom_bytes'), 2)}"
        )
    if result.get("kv_capacity_tokens") is not None:
        lines.append(
            ("KV 容量" if zh else "KV capacity")
            + f": {int(result['kv_capacity_tokens']):,} tokens · "
            + ("最大并发" if zh else "max concurrency")
            + f" {_num(result.get('max_concurrency'), 2)}"
        )
    if result.get("cpu_bytes"):
        lines.append(("主机内存" if zh else "Host RAM") + f": {gb(result['cpu_bytes'])}")
    parts = [
        "  \n".join(lines),
        terms_markdown(result, lang),
        _bullets("假设" if zh else "Assumptions", result.get("assumptions") or [], lang),
        _bullets("警告" if zh else "Warnings", result.get("warnings") or [], lang),
    ]
    return "\n\n".join(p for p in parts if p)


def perf_summary_markdown(
    decode: Mapping[str, Any] | None, prefill: Mapping[str, Any] | None, serving: Mapping[str, Any] | None, lang: str
) -> str:
    """Decode tokens/s (with its range), prefill tokens/s and time to first token, serving capacity."""
    zh = lang == "zh"
    rows = [
        "| "
        + ("指标" if zh else "Figure")
        + " | "
        + ("估计" if zh else "Estimate")
        + " | "
        + ("范围" if zh else "Range")
        + " |",
        "|---|---|---|",
    ]
    if decode:
        lo, hi = decode.get("tokens_per_s_range") or (None, None)
        rows.append(
            f"| {'解码（生成）' if zh else 'Decode'} | {_num(decode.get('tokens_per_s'))} tokens/s | "
            f"{_num(lo)}–{_num(hi)} |"
        )
        rows.append(
            f"| {'每序列' if zh else 'Per sequence'} | {_num(decode.get('per_sequence_tokens_per_s'))} "
            f"tokens/s | {safe_markdown(decode.get('bound', ''))}-bound |"
        )
    if prefill:
        lo, hi = prefill.get("tokens_per_s_range") or (None, None)
        rows.append(
            f"| {'预填充' if zh else 'Prefill'} | {_num(prefill.get('tokens_per_s'), 0)} tokens/s | "
            f"{_num(lo, 0)}–{_num(hi, 0)} |"
        )
        lo, hi = prefill.get("ttft_s_range") or (None, None)
        rows.append(
            f"| {'首 token 延迟' if zh else 'Time to first token'} | {_num(prefill.get('ttft_s'), 2)} s | "
            f"{_num(lo, 2)}–{_num(hi, 2)} s |"
        )
    if serving:
        peak = serving.get("peak") or {}
        rows.append(f"| {'KV 容量' if zh else 'KV capacity'} | {_num(serving.get('kv_capacity_tokens'))} tokens | |")
        rows.append(f"| {'最大并发' if zh else 'Max concurrency'} | {_num(serving.get('max_concurrency'), 2)} | |")
        rows.append(
            f"| {'峰值吞吐' if zh else 'Peak throughput'} | {_num(_get(peak, 'tokens_per_s'))} tokens/s | "
            f"batch {_get(peak, 'batch', '—')} |"
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
        _bullets("假设" if zh else "Assumptions", assumptions, lang),
        _bullets("警告" if zh else "Warnings", warnings, lang),
    ]
    return "\n\n".join(p for p in parts if p)


def totals_markdown(report: Mapping[str, Any] | None, lang: str) -> str:
    """Whole-build totals behind the findings: power, PSU, wall draw, lanes, VRAM."""
    tot = (report or {}).get("totals")
    if not isinstance(tot, Mapping):
        return ""
    zh = lang == "zh"
    items = [
        ("GPU 功耗" if zh else "GPU power", _w(tot.get("gpu_power_w"))),
        ("整机持续功耗" if zh else "Sustained system power", _w(tot.get("system_power_w"))),
        ("建议电源" if zh else "Recommended PSU", _w(tot.get("recommended_psu_w"))),
        ("墙插功耗" if zh else "Wall draw", _w(tot.get("wall_draw_w"))),
        ("回路持续上限" if zh else "Circuit continuous limit", _w(tot.get("continuous_limit_w"))),
        (
            "PCIe 通道 需要/可用" if zh else "PCIe lanes needed / available",
            f"{_num(tot.get('lanes_needed'))} / {_num(tot.get('lanes_available'))}",
        ),
        ("显存合计" if zh else "Total VRAM", gb(tot.get("total_vram_bytes"))),
        (
            "建议内存" if zh else "Recommended system RAM",
            f"{_num(tot.get('recommended_system_ram_gb'), 0)} GB" if tot.get("recommended_system_ram_gb") else "—",
        ),
    ]
    rows = ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in items if v not in ("—", "— W")]
    return "\n".join(rows)


def _w(value: Any) -> str:
    return f"{_num(value, 0)} W" if isinstance(value, int | float) else "—"


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
