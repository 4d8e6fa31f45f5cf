"""The memory chart: a stacked bar of what one GPU holds (weights, KV cache, activations, …) drawn against the
memory the fit verdict weighs it against, as self-contained HTML + SVG, and the same data as a table."""

from __future__ import annotations

import pandas as pd

from advisor import fmt
from advisor.present import fit_status
from advisor.present.calls import result as call_result
from advisor.session import ToolCall
from advisor.ui.i18n import label, t
from advisor.ui.render import escape_html
from tools.inference_memory import InferenceMemoryResult
from tools.training_memory import TrainingMemoryResult
from tools.units import GB, GiB

Sizing = InferenceMemoryResult | TrainingMemoryResult

SEGMENTS: tuple[tuple[str, str], ...] = (
    ("weights", "#4C78A8"),
    ("kv_cache", "#F58518"),
    ("activations", "#54A24B"),
    ("gradients", "#B279A2"),
    ("optimizer", "#9D755D"),
    ("overhead", "#8C8C8C"),
)


def sizing_of(call: ToolCall | None) -> Sizing | None:
    """A sizing call's result, typed (None for other calls, failed ones, or a result that no longer validates)."""
    r = call_result(call)
    return r if isinstance(r, InferenceMemoryResult | TrainingMemoryResult) else None


def memory_chart_data(result: Sizing | None) -> list[tuple[str, int]]:
    """Non-zero breakdown segments of a sizing result, in a fixed order: [(category, bytes)]."""
    if result is None:
        return []
    return [(k, getattr(result.breakdown, k)) for k, _ in SEGMENTS if getattr(result.breakdown, k) > 0]


def memory_chart_frame(result: Sizing | None, lang: str) -> pd.DataFrame:
    """The chart's data as a table: category, GB (1e9 B), GiB (2^30 B) — plus the usable-memory row."""
    rows = [{"category": t(k, lang), "GB": v / GB, "GiB": v / GiB} for k, v in memory_chart_data(result)]
    usable = fmt.usable_bytes(result) if result else None
    if usable:
        rows.append({"category": t("capacity", lang), "GB": usable / GB, "GiB": usable / GiB})
    return pd.DataFrame(rows, columns=["category", "GB", "GiB"])


def memory_chart_svg(result: Sizing | None, lang: str) -> str:
    """A stacked horizontal bar (weights / KV cache / activations / … per GPU) drawn against the
    candidate GPU's usable memory, as self-contained HTML + SVG (no scripts, no network assets)."""
    segs = memory_chart_data(result)
    if not segs or result is None:
        return f'<div class="mem-chart mem-empty">{escape_html(t("chart_empty", lang))}</div>'
    on_gpu = sum(v for _, v in segs)
    need = fmt.needed_bytes(result) or on_gpu
    cap = result.gpu_memory_bytes
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
    if isinstance(result, InferenceMemoryResult) and result.all_layers_bytes:
        label_need = t("chart.need_offload", lang, on_gpu=fmt.gb_short(on_gpu), all=fmt.gb_short(need))
    else:
        label_need = f"{t('need', lang)} {fmt.gb_short(on_gpu)}"
    if cap and usable:
        gpu_name = result.gpu or "GPU"
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
        usable_html = f'<div class="mem-lbl mem-usable">{escape_html(text)}</div>'
    else:
        usable_html = ""
    # the words stay outside the drawing, so they keep their size however narrow the scaled bar gets
    view = "0 20 600 70" if cap and usable else "0 20 600 44"
    legend = "".join(
        f'<span class="leg"><i style="background:{colors[k]}"></i>{escape_html(t(k, lang))} '
        f"{escape_html(fmt.gb_short(v))}</span>"
        for k, v in segs
    )
    status = fit_status(result, lang) if cap and usable else ""
    title = _chart_title(result, lang)
    return (
        f'<div class="mem-chart"><div class="mem-title">{escape_html(title)}</div>'
        f'<div class="mem-lbl mem-need">{escape_html(label_need)}</div>'
        f'<svg viewBox="{view}" width="100%" role="img" '
        f'aria-label="{escape_html(t("memory_chart", lang))}">{"".join(rects)}</svg>'
        f'{usable_html}<div class="mem-legend">{legend}</div>'
        + (f'<div class="mem-status">{escape_html(status)}</div>' if status else "")
        + '<div class="mem-units">GB = 10⁹ B · GiB = 2³⁰ B</div></div>'
    )


def _chart_title(result: Sizing, lang: str) -> str:
    """Model · precision or method · context × batch · GPUs; "per GPU" only where the bar is one of several."""
    bits = [result.model]
    if isinstance(result, TrainingMemoryResult):
        bits.append(label("method", result.method, lang))
    else:
        bits.append(result.precision)
        bits.append(f"{fmt.num(result.context)} tok × {result.batch}")
    if result.gpus > 1:
        bits.append(t("chart.title_gpus", lang, n=result.gpus, gpu=result.gpu or "GPU"))
    elif result.gpu:
        bits.append(result.gpu)
    return " · ".join(b for b in bits if b)
