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
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import pandas as pd
from gradio import ChatMessage

from advisor import fmt
from advisor.present import (
    Section,
    combine,
    config_label,
    fit_line,
    gpu_name,
    model_name,
    present_call,
    present_recommend,
    word,
)
from advisor.present.calls import result as call_result
from advisor.session import ToolCall
from advisor.tool_trust import OWN_CALL_PREFIX
from advisor.toolspec import TOOLS
from advisor.ui.i18n import USE_CASES, label, t, ui_text
from advisor.ui.results import result_path
from knowledge import load_catalog
from knowledge.messages import has, msg
from tools.compat import BuildReport
from tools.inference_memory import InferenceMemoryResult
from tools.perf import DecodeResult, PrefillResult, ServingResult
from tools.recommend import Option, Recommendation
from tools.training_memory import TrainingMemoryResult
from tools.units import GB

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


# ------------------------------------------------------------------------------ tool steps


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def tool_title(name: str, lang: str) -> str:
    """Display title of a tool (``tool.<name>``; older tool names included), else its identifier."""
    return msg(lang, f"tool.{name}") if has("en", f"tool.{name}") else name


_ARG_KINDS = {"method": "method", "workload": "use_case", "engine": "engine"}


def _short_args(args: Mapping[str, Any], lang: str) -> str:
    """The two or three arguments that identify a call: model, GPU × count, precision, context."""
    bits: list[str] = []
    if args.get("model") or isinstance(args.get("params_b"), int | float):
        bits.append(model_name(args.get("model"), args.get("params_b")))
    gpus = args.get("gpus")
    if isinstance(gpus, list):  # check_build: [{"gpu", "count"}]
        bits.extend(f"{_get(g, 'count', 1)}× {gpu_name(_get(g, 'gpu', '?'))}" for g in gpus[:3])
    elif args.get("gpu"):
        n = args.get("count") or (gpus if isinstance(gpus, int) else None) or 1
        name = gpu_name(args["gpu"])
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
    r = call_result(ToolCall(name=name, result=dict(result))) if name in TOOLS else None
    match r:
        case InferenceMemoryResult() | TrainingMemoryResult():
            return fit_line(r, lang)
        case DecodeResult():
            lo, hi = r.tokens_per_s_range
            return t("summary.decode", lang, tps=fmt.tps(r.tokens_per_s), lo=fmt.num(lo), hi=fmt.num(hi),
                     bound=word(lang, "bound_by", r.bound))
        case PrefillResult():
            return t("summary.prefill", lang, tps=fmt.tps(r.tokens_per_s), ttft=fmt.seconds(r.ttft_s))
        case ServingResult():
            peak = r.peak.tokens_per_s if r.peak is not None else None
            return t("summary.serving", lang, concurrency=fmt.num(r.max_concurrency), tps=fmt.tps(peak))
        case BuildReport():
            sev = [f.severity for f in r.findings]
            return t("summary.check", lang, mark="✅" if r.ok else "❌", errors=sev.count("error"),
                     warnings=sev.count("warning"), infos=sev.count("info"))
        case Recommendation():
            n_opts, n_rej = len(r.options), len(r.rejected)
            if r.options:
                top = config_label(r.options[0], lang)
                return t("summary.recommend_top", lang, options=n_opts, rejected=n_rej, top=top)
            return t("summary.recommend", lang, options=n_opts, rejected=n_rej)
    if name == "search_knowledge":  # the search module's own JSON
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
    call_id = _get(call, "call_id")
    own = f" · {t('own_call', lang)}" if str(call_id or "").startswith(OWN_CALL_PREFIX) else ""
    title = f"{icon} {tool_title(name, lang)}{own}" + (f" · {short}" if short else "")
    meta: dict[str, Any] = {"title": escape_html(title), "status": "pending" if pending else "done"}
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
    elif _get(call, "result_dropped"):
        parts.append(t("tool_result_dropped", lang))
    else:
        summary = result_summary(name, result, lang)
        if summary:
            meta["log"] = escape_html(summary[:120])
            parts.append(f"**{t('tool_result', lang)}**: {safe_markdown(summary)}")
        parts.append(f"[{t('tool_raw', lang)}]({result_path(result)})")  # fetched when opened
    return ChatMessage(role="assistant", content="\n\n".join(parts), metadata=meta)  # type: ignore[arg-type]


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


_CITATION = re.compile(r"\[([a-z0-9][\w.-]*(?:/[\w.#-]+)+)\]")  # '[vram/zh/kv-cache]'


def readable_citations(text: str, citations: Iterable[Any], lang: str) -> str:
    """``text`` with each cited passage's key ('[vram/zh/kv-cache]') replaced by a number in order of first
    mention ('[1]'), linked to the passage itself (served on demand; page.js shows it in place). ``citations``:
    the passages (a reply's, or the session's ``citations`` values); keys that name none of them stay as they are."""
    given = {str(_get(c, "id")): c for c in citations if _get(c, "id")}
    numbers: dict[str, str] = {}

    def number(m: re.Match[str]) -> str:
        key = m.group(1)
        if key not in numbers:
            passage = given.get(key)
            if passage is None or not _get(passage, "text"):
                return m.group(0)
            shown = {"id": key, "title": _get(passage, "title", ""), "text": _get(passage, "text", ""),
                     "source": _get(passage, "source", "")}
            numbers[key] = f"[[{len(numbers) + 1}]]({result_path({'passage': shown})})"
        return numbers[key]

    return _CITATION.sub(number, text)


def notices_message(notices: Iterable[str], lang: str) -> ChatMessage | None:
    """The turn's notices as a plain message right under the answer (a fold at the end went unread)."""
    items = [n for n in notices if n]
    if not items:
        return None
    body = f"**{t('notices', lang)}**\n\n" + "\n".join(f"- {safe_markdown(n)}" for n in items)
    return ChatMessage(role="assistant", content=body)  # type: ignore[arg-type]


def user_message(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=safe_markdown(text))


def assistant_message(text: str, options: Iterable[str] = ()) -> ChatMessage:
    opts = [{"value": o, "label": o} for o in options]
    return ChatMessage(role="assistant", content=safe_markdown(text), options=opts)  # type: ignore[arg-type]


def use_case_options(lang: str) -> list[str]:
    """Quick answers to the opening question (training / inference / scientific)."""
    return [label("use_case", k, lang) for k in USE_CASES]


YES_NO_SLOTS = ("fp64", "cuda_required", "domestic")


def reply_chips(pending: Iterable[str], text: str, lang: str) -> list[str]:
    """Quick answers shown as buttons under a reply: the usual choices for what it asked (``session.pending``),
    yes / no for a single yes-or-no question, and the word for "details" when the reply offers them."""
    slots = list(pending)
    chips: list[str] = []
    if slots == ["use_case"]:
        chips = use_case_options(lang)
    elif len(slots) == 1 and slots[0] in YES_NO_SLOTS:
        chips = t("chips.yes_no", lang).split("|")
    elif slots and has("en", f"ui.chips.{slots[0]}"):
        chips = t(f"chips.{slots[0]}", lang).split("|")
    word = t("chips.detail_word", lang)
    if f"“{word}”" in text:
        chips.append(word)
    return chips


# ------------------------------------------------------------------------------ money


def recommendation_of(call: ToolCall | None) -> Recommendation | None:
    """A recommend call's result, typed (None when there is none or it no longer validates)."""
    r = call_result(call)
    return r if isinstance(r, Recommendation) else None


def display_currency(budget_currency: str | None, lang: str, rec: Recommendation | None = None) -> str:
    """The currency the panel shows money in: the budget's; else the recommendation's euro / pound pricing;
    else the page language's (yuan on a Chinese page, dollars otherwise)."""
    if budget_currency in fmt.SYMBOLS:
        return str(budget_currency)
    if rec is not None and rec.price_currency in fmt.SYMBOLS:
        return str(rec.price_currency)
    return fmt.default_currency(lang)


def _priced_in(opts: list[Option], currency: str) -> str:
    """``currency`` when the options carry totals in it (euro / pound totals only exist when asked), else USD."""
    return currency if currency == "USD" or any(fmt.option_price(o, currency) is not None for o in opts) else "USD"


# ------------------------------------------------------------------------------ what the reply lists

REPLY_OPTIONS = 3  # options the reply names per recommendation: the top priced ones, then up to as many unpriced
QUANT_ROUTES = ("int4", "fp8", "gguf")  # the reply's 'if you quantise' routes, in its order


class ReplyGroup(NamedTuple):
    """One recommendation as the reply lists it: ``route`` is a quantised alternative ('int4', 'fp8', 'gguf') or
    None for the precision asked; ``rec`` keeps only the options the reply names, in its order."""

    route: str | None
    rec: Recommendation


def reply_groups(results: Mapping[str, ToolCall | None]) -> list[ReplyGroup]:
    """The recommendations the chat reply lists, cut to the options it names: the asked precision's (unless the
    reply keeps to the user's own cards because one of their alternatives fits), then each quantised route's."""
    groups: list[ReplyGroup] = []
    main = recommendation_of(results.get("recommend"))
    if main is not None and not _fits_own_cards(results):
        priced = [o for o in main.options if o.total_price_usd is not None]
        unpriced = [o for o in main.options if o.total_price_usd is None]
        groups.append(ReplyGroup(None, main.model_copy(update={"options": priced[:REPLY_OPTIONS]
                                                                + unpriced[:REPLY_OPTIONS]})))
    for route in QUANT_ROUTES:
        rec = recommendation_of(results.get(f"alt/{route}/recommend"))
        if rec is not None:
            opts = [o for o in rec.options if o.total_price_usd is not None and (route != "fp8" or _has_fp8(o))]
            groups.append(ReplyGroup(route, rec.model_copy(update={"options": opts[:REPLY_OPTIONS]})))
    return groups


def _fits_own_cards(results: Mapping[str, ToolCall | None]) -> bool:
    """An alternative sized on the user's own cards fits: the reply then keeps to those cards, not a purchase."""
    return any(key.startswith("alt/") and c is not None and c.ok and c.arguments.get("gpu")
               and getattr(call_result(c), "fits", None) for key, c in results.items())


def _has_fp8(o: Option) -> bool:
    """The card computes in FP8 (the reply lists only those under the FP8 route); unknown counts as yes."""
    try:
        return load_catalog().gpu(o.gpu_id or o.gpu).supports("fp8") is not False
    except Exception:
        return True


def reply_currency(groups: list[ReplyGroup], budget_currency: str | None, lang: str) -> str:
    """The currency the reply prices its options in: a euro / pound pricing; for the asked precision the
    budget's currency (dollars or yuan), else the reply language's; for a quantised route the recommendation's."""
    for route, rec in groups:
        if rec.price_currency:
            return rec.price_currency
        if route is None:
            return str(budget_currency) if budget_currency in ("USD", "CNY") else fmt.default_currency(lang)
        return rec.currency
    return display_currency(budget_currency, lang)


def panel_comparison(results: Mapping[str, ToolCall | None], lang: str, budget_currency: str | None = None,
                     reply_lang: str | None = None) -> tuple[str, str]:
    """(table, notes) of the panel's candidate configurations: the options the last reply lists, with its
    figures, in the currency it used (``reply_lang``: the reply's language, which picks it without a budget)."""
    groups = reply_groups(results)
    currency = reply_currency(groups, budget_currency, reply_lang or lang)
    listed = sum(len(g.rec.options) for g in groups)
    frame = frame_markdown(comparison_frame(groups, lang, limit=listed, currency=currency))
    notes = comparison_notes(groups, lang, currency=currency)
    if not frame:  # nothing to list: still say why the asked precision found nothing, when the reply does
        main = recommendation_of(results.get("recommend"))
        notes = notes or (comparison_notes(main, lang, currency=currency) if main and not main.options else "")
    return frame, notes


def _as_groups(rec: Recommendation | list[ReplyGroup] | None) -> list[ReplyGroup]:
    if rec is None:
        return []
    return [ReplyGroup(None, rec)] if isinstance(rec, Recommendation) else list(rec)


def route_label(route: str | None, lang: str, short: bool = False) -> str:
    """The words the reply heads a quantised route with (``if_quant.*``; ``short``: their first word, for a
    table column); the asked precision's own label."""
    if route is None:
        return t("route_asked", lang)
    return t(f"route_{route}", lang) if short else msg(lang, f"if_quant.{route}")


# ------------------------------------------------------------------------------ comparison table


def comparison_frame(rec: Recommendation | list[ReplyGroup] | None, lang: str, limit: int = 8,
                     currency: str | None = None) -> pd.DataFrame:
    """Candidate configurations: memory fit, est. tokens/s (or FP64), power, price and perf per price in
    ``currency`` (default: :func:`display_currency` without a budget). Given the reply's groups, every option
    they name, with a precision column where a quantised route is among them."""
    groups = _as_groups(rec)
    first = groups[0].rec if groups else None
    rows_of = [(route, o) for route, g in groups for o in g.options][:limit]
    opts = [o for _, o in rows_of]
    cur = _priced_in(opts, currency or display_currency(None, lang, first))
    per = t(f"per_price.{cur}", lang)
    workload = first.workload if first is not None else ""
    scientific = workload == "scientific" or any(
        o.fp64_tflops is not None and o.decode_tokens_per_s is None for o in opts)
    fp32 = scientific and any(o.fp32_tflops is not None for o in opts)  # a single-precision code
    flops = "fp32" if fp32 else "fp64"
    if scientific:
        perf_col = t(f"col_{flops}", lang)
    else:
        perf_col = t("col_train_tps", lang) if workload == "training" else t("col_tps", lang)
    routes = any(route is not None for route, _ in rows_of)
    # the ranking is value × the software stack's weight: shown when the weights differ, so a #2 with more value
    # per price than #1 reads as the stack's doing, not a hidden rule
    weighted = len({o.ecosystem_factor for o in opts}) > 1
    cols = [t("col_config", lang), *([t("col_precision", lang)] if routes else []), t("col_fit", lang),
            t("col_mem", lang), perf_col, t("col_power", lang), t("col_price", lang, currency=cur),
            t(f"col_ppp_{flops}", lang, per=per) if scientific else t("col_ppp", lang, per=per),
            *([t("col_eco", lang)] if weighted else [])]
    rows = []
    for route, o in rows_of:
        if scientific:
            perf = o.fp32_tflops if fp32 else o.fp64_tflops
        else:
            perf = o.training_tokens_per_s if workload == "training" else o.decode_tokens_per_s
        mem = f"{_gb_number(o.per_gpu_bytes)} / {_gb_number(fmt.usable_bytes(o))}"
        precision = [route_label(route, lang, short=True)] if routes else []
        rows.append([config_label(o, lang), *precision, "✅" if o.fits else "❌", mem, _round(perf, 1),
                     _round(o.power_w, 1, 0), fmt.option_total(o, cur), _round(fmt.value_per_price(o, cur), 1, 2),
                     *([_round(o.ecosystem_factor, 1, 2)] if weighted else [])])
    return pd.DataFrame(rows, columns=cols)


def _gb_number(n_bytes: Any) -> str:
    """Bytes as a bare GB figure for a column whose head carries the unit."""
    return f"{n_bytes / GB:,.1f}" if isinstance(n_bytes, int | float) else "—"


_NUMERIC_CELL = re.compile(r"^[~≈]?[$¥€£]?[\d.,]+(\s*/\s*[\d.,]+)?$|^—$")


def frame_markdown(frame: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (cells escaped; None/NaN shown as '—'); each figure in a
    ``<span class="num">`` that the page keeps on one line."""
    if frame.empty:
        return ""

    def cell(v: Any) -> str:
        if v is None or (isinstance(v, float) and v != v):
            return "—"
        text = _figure(v) if isinstance(v, int | float) and not isinstance(v, bool) else str(v)
        text = safe_markdown(text).replace("|", "\\|")
        return f'<span class="num">{text}</span>' if _NUMERIC_CELL.match(text) else text

    head = "| " + " | ".join(safe_markdown(str(c)) for c in frame.columns) + " |"
    sep = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, sep, *body])


def _figure(v: float) -> str:
    """A table figure as the reply words it: a measured value keeps its decimal below 100 ('21.0 tokens/s', as
    :func:`fmt.tps`), a count (an int) has none."""
    return f"{v:,.1f}" if isinstance(v, float) and v.is_integer() and abs(v) < 100 else fmt.num(v)


# a figure with its unit ('¥231,840', '1,100 W', '20.0 GB', '~156 tokens/s'): kept on one line in the notes
_FIGURE = re.compile(r"[~≈]?[$¥€£]?\d[\d,]*(?:\.\d+)?(?:[ \u00a0](?:W|GB|GiB|TB|tokens/s|TFLOPS|kW|h))?(?![\w])")


def nowrap_figures(markdown: str) -> str:
    """Markdown whose figures (with their unit) cannot break across lines: spaces inside them become no-break."""
    return _FIGURE.sub(lambda m: m.group(0).replace(" ", "\u00a0"), markdown)


def comparison_notes(rec: Recommendation | list[ReplyGroup] | None, lang: str, limit: int = 5,
                     currency: str | None = None) -> str:
    """Why each listed option, in the table's order: its memory, speed, price and value in ``currency``,
    then the warnings of its build check (each with its fix); then what was ruled out and why, and the pitfalls —
    the presenter's words, not the tool's raw lines. Several groups: one headed block each (its route)."""
    groups = [g for g in _as_groups(rec) if g.rec.options or g.rec.rejected]
    if not groups:
        return ""
    headed = len(groups) > 1 or groups[0].route is not None
    blocks = [_group_notes(g, lang, limit, currency, headed) for g in groups]
    return nowrap_figures("\n\n".join(b for b in blocks if b))


def _group_notes(group: ReplyGroup, lang: str, limit: int, currency: str | None, headed: bool) -> str:
    """One recommendation's notes; ``headed``: under its route's name, without its ruled-out list when it has
    options (the reply explains what was ruled out only where nothing was left)."""
    rec = group.rec
    cur = _priced_in(rec.options, currency or display_currency(None, lang, rec))
    section = present_recommend(rec, lang, currency=cur, limit=limit, rejected=6)
    why = section.lists[0] if rec.options and section.lists else None
    ruled_out = [] if headed and rec.options else [lst.markdown() for lst in section.lists if lst is not why]
    lines: list[str] = [f"**{escape_html(route_label(group.route, lang))}**"] if headed else []
    for item in why.items if why else []:
        lines.append(safe_markdown(ui_text(item.text, lang)).replace("\n", " "))
        for detail in (d.strip() for d in item.details):
            text = safe_markdown(ui_text(detail, lang))
            if detail.startswith("→") and lines[-1].startswith("   - "):  # a finding's fix, under the finding
                lines[-1] += f"  \n     {text}"
            elif detail:
                lines.append(f"   - {text}")
    return "\n\n".join(p for p in ("\n".join(lines), *(safe_markdown(ui_text(m, lang)) for m in ruled_out)) if p)


def _round(value: Any, divisor: float, digits: int = 1) -> float | int | None:
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value:
        return None
    return round(value / divisor) if digits == 0 else round(value / divisor, digits)


# ------------------------------------------------------------------------------ calculator results


def section_markdown(section: Section | None, lang: str) -> str:
    """A presenter's section as panel Markdown (the panel names the section; tool text made safe)."""
    return safe_markdown(ui_text(section.markdown(level=0), lang)) if section is not None else ""


def calls_markdown(calls: Iterable[ToolCall | None], lang: str, title: str = "") -> str:
    """The sections of several calls as one (decode, prefill and serving of one configuration)."""
    sections = [s for s in (present_call(c, lang) for c in calls) if s is not None]
    if not sections:
        return ""
    return section_markdown(sections[0] if len(sections) == 1 else combine(title or sections[0].title, sections), lang)


# ------------------------------------------------------------------------------ streaming


class TurnView:
    """Folds one turn's engine events (tool started / finished, text delta, final reply) into chat messages.

    Events are read by their ``type`` field, so any object shaped like ``advisor.engine`` events works.
    ``messages`` is the turn's part of the chat at any moment, answer first: the reply text ("Working…" until
    the first delta, then growing with each; a ``replace`` delta starts it over, the final reply replaces it),
    then the notes, then one collapsible "🔧 N calculations" step holding every tool step. The reply's own
    text lists its sources, so they are not repeated.
    """

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.final: Any = None
        self._steps: dict[str, dict[str, Any]] = {}  # call id → the step's info, in start order
        self._text = ""
        self._shown = ""  # the final text as shown: its citations numbered and linked (once, not per redraw)
        self._group = f"calcs-{uuid.uuid4().hex[:12]}"  # unique per turn: id() is reused once a view is freed

    @property
    def messages(self) -> list[ChatMessage]:
        # the answer's place is held from the start ("Working…"), so it never pushes the steps down the list:
        # the page then receives each change as a small edit, not the turn again
        out: list[ChatMessage] = []
        if self._text or self.final is None:
            out.append(assistant_message(self._shown or self._text or f"⏳ {t('thinking', self.lang)}"))
        if self.final is not None:  # where the eye is: right under the answer, before its calculations
            note = notices_message(_get(self.final, "notices") or [], _get(self.final, "lang") or self.lang)
            if note is not None:
                out.append(note)
        out += self._group_messages()
        return out

    def shown_so_far(self) -> list[ChatMessage]:
        """What a stopped turn keeps: the answer text that had arrived (no placeholder, no half-run steps)."""
        return [assistant_message(self._text)] if self._text else []

    def add_call(self, call: Any) -> None:
        """A finished tool call (a ``ToolCall`` or its dict) as a step of this turn."""
        key = str(_get(call, "call_id") or f"step-{len(self._steps)}")
        self._steps[key] = {"name": _get(call, "name"), "arguments": _get(call, "arguments") or {},
                            "result": _get(call, "result"), "error": _get(call, "error"),
                            "duration_ms": _get(call, "duration_ms", 0.0), "call_id": key, "pending": False,
                            "result_dropped": bool(_get(call, "result_dropped"))}

    def apply(self, event: Any) -> bool:
        """Fold one event; True when the visible chat changed."""
        kind = _get(event, "type")
        if kind == "tool_started":
            key = str(_get(event, "call_id"))
            self._steps[key] = {"name": _get(event, "name"), "arguments": _get(event, "arguments") or {},
                                "call_id": key, "pending": True}
            return True
        if kind == "tool_finished":
            key = str(_get(event, "call_id"))
            info = self._steps.get(key, {"name": _get(event, "name"), "arguments": {}, "call_id": key})
            self._steps[key] = {**info, "result": _get(event, "result"), "error": _get(event, "error"),
                                "duration_ms": _get(event, "duration_ms", 0.0), "pending": False}
            return True
        if kind == "text_delta":
            text = str(_get(event, "text", "") or "")
            self._text = text if _get(event, "replace", False) else self._text + text
            return True
        if kind == "final":
            self.final = _get(event, "reply")
            self._text = str(_get(self.final, "text", "") or "")
            self._shown = readable_citations(self._text, _get(self.final, "citations") or [], self.lang)
            return True
        return False

    def _group_messages(self) -> list[ChatMessage]:
        """The turn's tool steps folded into one collapsible step (nothing when the turn ran no tool)."""
        if not self._steps:
            return []
        steps = list(self._steps.values())
        pending = any(s.get("pending") for s in steps)
        failed = sum(1 for s in steps if s.get("error"))
        title = t("calculations", self.lang, n=len(steps)) + (f" · ⚠️ {failed}" if failed else "")
        # always 'done': the page opens a pending step and may leave it open, burying the answer under the
        # steps; progress shows in the answer's own "Working…" line and in the running step inside
        meta: dict[str, Any] = {"title": escape_html(title), "id": self._group, "status": "done"}
        total = sum(float(s.get("duration_ms") or 0.0) for s in steps)
        if not pending and total > 0:
            meta["duration"] = round(total / 1000, 3)
        lines = "\n".join(f"- {escape_html(tool_title(str(s.get('name')), self.lang))}" for s in steps)
        out = [ChatMessage(role="assistant", content=lines, metadata=meta)]  # type: ignore[arg-type]
        for s in steps:
            step = tool_step_message(s, self.lang, pending=bool(s.get("pending")))
            step.metadata = {**(step.metadata or {}), "parent_id": self._group}  # type: ignore[assignment]
            out.append(step)
        return out


def reply_messages(reply: Any, lang: str) -> list[ChatMessage]:
    """A finished (non-streamed) reply as chat messages: its text, its calculations, its notes."""
    view = TurnView(lang)
    for call in _get(reply, "tool_calls") or []:
        view.add_call(call)
    view.apply({"type": "final", "reply": reply})
    return view.messages


def history_messages(session: Any, lang: str) -> list[ChatMessage]:
    """The chat of a resumed session, rebuilt from its history: each turn's text, then its calculations."""
    out: list[ChatMessage] = []
    for turn in _get(session, "history") or []:
        text = str(_get(turn, "text", "") or "")
        if _get(turn, "role") == "user":
            out.append(user_message(text))
            continue
        view = TurnView(_get(turn, "lang") or lang)
        for call in _get(turn, "tool_calls") or []:
            view.add_call(call)
        cited = list((_get(session, "citations") or {}).values())  # every passage the conversation cited
        view.apply({"type": "final", "reply": {"text": text, "citations": cited, "notices": []}})
        out += view.messages
    return out
