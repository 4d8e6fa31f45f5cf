"""The body of a turn's reply, composed by mode: one small composer per ``Plan.mode`` (``BODIES``), each
given the turn's ``TurnContext``. ``Advisor._turn`` (advisor/engine.py) runs the plan, then asks
``compose_body`` for the text; notices, the question and streaming stay in the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor import answers as A
from advisor import compare
from advisor import compose as C
from advisor.fmt import duration, num, punct
from advisor.nlu import Parsed
from advisor.planner import Plan, session_region
from advisor.report import export_markdown
from advisor.session import Citation, Session, ToolCall
from advisor.settings import Settings
from knowledge.messages import msg
from knowledge.names import Lang


@dataclass
class TurnContext:
    """What a composer may read: this turn's understanding, plan and tool results. ``lang`` is the turn's
    language as asked (None: not known yet), ``out_lang`` the one the reply is written in; ``report`` is
    filled by the export composer (the Markdown report the reply carries)."""

    parsed: Parsed
    session: Session
    plan: Plan
    calls: list[ToolCall]
    citations: list[Citation]
    lang: Lang | None
    out_lang: Lang
    previous: dict[str, ToolCall]
    settings: Settings
    report: str | None = None


def _reset(ctx: TurnContext) -> str:
    return msg(ctx.out_lang, "engine.turn.sure_starting_over") + "\n\n" + C.opening_text(ctx.lang)


def _opening(ctx: TurnContext) -> str:
    if any(ctx.session.profile.known(s) for s in ("model", "budget", "precision")):
        return C.compose_ask(ctx.session, ctx.out_lang) + "\n\n" + (C.question_text(["use_case"], ctx.lang) or "")
    return C.opening_text(ctx.lang)


def _export(ctx: TurnContext) -> str:
    ctx.report = export_markdown(ctx.session, ctx.out_lang)
    intro = msg(ctx.out_lang, "engine.turn.here_current_plan_markdown")
    return intro + "\n\n" + ctx.report


def _empty(ctx: TurnContext) -> str:
    return msg(ctx.out_lang, "engine.turn.i_didn_t_get")


def _ask(ctx: TurnContext) -> str:
    return C.compose_ask(ctx.session, ctx.out_lang)


def _compare(ctx: TurnContext) -> str:
    return compare.compose_compare(ctx.session, ctx.calls, ctx.citations, ctx.out_lang,
                                   value_first=ctx.parsed.asks_value, rent_asked="run_cost" in ctx.parsed.asks)


def _why(ctx: TurnContext) -> str:
    return C.compose_why(ctx.session, ctx.citations, ctx.out_lang)


def _spec(ctx: TurnContext) -> str:
    parsed = ctx.parsed
    attribute = parsed.asked_attribute or ctx.session.focus_attribute
    return A.compose_spec(ctx.calls, attribute, parsed.about_precision or parsed.precision, ctx.out_lang,
                          more=parsed.more_attributes or [], budget=parsed.budget,
                          currency=parsed.currency_wanted,
                          rack=(parsed.rack_kw, parsed.gpu_count or 1) if parsed.rack_kw else None,
                          site_kw=parsed.site_kw,
                          region=session_region(ctx.session, ctx.out_lang)[0])


def _concept(ctx: TurnContext) -> str:
    return A.compose_concept(ctx.citations, ctx.parsed.text, ctx.out_lang)


def _generative(ctx: TurnContext) -> str:
    return A.compose_generative(ctx.calls, ctx.out_lang)


def _build(ctx: TurnContext) -> str:
    lang = ctx.out_lang
    gpus: list[dict[str, Any]] = next((c.arguments["gpus"] for c in ctx.calls if c.name == "check_build"), [])
    label = punct(lang, "list").join(C.config_label(g["gpu"], g["count"], lang) for g in gpus)
    card = ctx.plan.assumed.get("gpu")
    body = A.compose_build(ctx.calls, label, ctx.session.profile.cpu_name, lang,
                           assumed_card=C.gpu_name(card) if card else None,
                           topic=_build_topic(ctx))
    return A.network_lines(ctx.calls, lang, ctx.session.profile) + body


def _build_topic(ctx: TurnContext) -> str | None:
    """What the build answer leads with: the model's fit when that is asked first ('够不够？价格贵不贵？'),
    system RAM when asked or said, else the part of the build the message is about."""
    parsed = ctx.parsed
    checked = next((c for c in ctx.calls if c.name == "check_build"), None)
    if parsed.asks[:1] == ["fits"] and checked is not None and checked.arguments.get("model") \
            and not parsed.asks_ram and parsed.build_topic in (None, "ram") and parsed.psu_w is None:
        return "fit"
    said_ram = parsed.system_ram_gb and parsed.quoted_price is None  # a quote's parts list asks about none of them
    return "ram" if parsed.asks_ram or said_ram else parsed.build_topic


def _value(ctx: TurnContext) -> str:
    return A.compose_best_value(ctx.calls, ctx.out_lang)


def _afford(ctx: TurnContext) -> str:
    budget = ctx.session.profile.budget
    return A.compose_afford(ctx.calls, (budget.amount, budget.currency) if budget else (0.0, "USD"), ctx.out_lang,
                            card_only=bool(ctx.plan.assumed.get("card_only")))


def _rent(ctx: TurnContext) -> str:
    rent = next((c for c in ctx.calls if c.name == "rent_vs_buy"), None)
    if rent is None and any(c.name == "rent_choices" for c in ctx.calls):  # which GPU to rent for the job
        p = ctx.session.profile
        return A.compose_rent_choices(ctx.calls, ctx.out_lang, said=p.model_said,
                                      size=p.params_b if p.model is None else None, daily=ctx.parsed.asks_daily)
    if rent is None:  # no card to price: what renting is, and what the comparison needs
        return A.compose_concept(ctx.citations, ctx.parsed.text, ctx.out_lang) + "\n\n" + msg(ctx.out_lang,
                                                                                             "rent.need_gpu")
    months = rent.arguments.get("months")
    text = A.compose_rent(ctx.calls, months, rent.arguments["hours_per_day"], ctx.out_lang,
                          hourly_first=ctx.parsed.asks_hourly, daily_first=ctx.parsed.asks_daily,
                          monthly_first=ctx.parsed.asks_monthly, total_hours=ctx.session.profile.gpu_hours_total,
                          offers_first="where_rent" in ctx.parsed.asks or (bool(ctx.parsed.providers)
                                                                            and "break_even" not in ctx.parsed.asks))
    runs = ctx.plan.assumed.get("runs")
    if not runs:
        return text
    verdict, _, rest = text.partition("\n")  # how the hours were counted, under the verdict it led to
    return "\n".join([verdict, msg(ctx.out_lang, "rent.runs", runs=num(runs["runs"], 2),
                                    gpu_hours=num(runs["gpu_hours"], 0),
                                    run=duration(runs["gpu_hours"] / runs["count"], ctx.out_lang),
                                    monthly=num(runs["gpu_hours"] * runs["runs"], 0)), rest])


# the parts of a machine whose check answers the question when asked beside a sizing ('4 张够吗？1600W 带得动吗？')
_LEAD_TOPICS = ("psu", "wall", "slots", "cooling", "lanes")


def _without_repeats(body: str, part: str) -> str:
    """The sizing answer without the build check's findings the part placed beside it already states."""
    def repeated(line: str) -> bool:
        finding = line.removeprefix("- ❌ ").removeprefix("- ⚠️ ").split(" → ")[0].strip()
        return line.startswith(("- ❌ ", "- ⚠️ ")) and len(finding) > 20 and finding in part
    return "\n".join(line for line in body.split("\n") if not repeated(line))


def _answer(ctx: TurnContext) -> str:
    parsed = ctx.parsed
    network = A.network_lines(ctx.calls, ctx.out_lang, ctx.session.profile)
    body = C.compose_answer(ctx.plan, ctx.session, ctx.calls, ctx.citations, ctx.out_lang, parsed, ctx.previous,
                            detailed=ctx.settings.detailed or parsed.wants_detail)
    if parsed.build_topic in _LEAD_TOPICS and parsed.asks[:1] != ["fits"] and \
            any(c.name == "check_build" and c.ok for c in ctx.calls):  # the part asked about leads, then the sizing
        part = _build(ctx).partition("\n\n")[0]
        body = _without_repeats(body, part)
        if parsed.asks[:1] in (["speed"], ["ttft"], ["training_time"]):  # asked first: the part said after it
            lead, _, rest = body.partition("\n\n")
            body = f"{lead}\n\n{part}\n\n{rest}".rstrip()
        else:
            body = part + "\n\n" + body
    if network and parsed.asks[:1] != ["network"]:  # asked after the time or the fit, or not asked: said after it
        lead, _, rest = body.partition("\n\n")
        return f"{lead}\n\n{network}\n{rest}".rstrip()
    return network + body


Composer = Callable[[TurnContext], str]

# a mode not listed here (the plain "answer") gets the sized answer
BODIES: dict[str, Composer] = {
    "reset": _reset, "opening": _opening, "export": _export, "empty": _empty, "ask": _ask, "compare": _compare,
    "why": _why, "spec": _spec, "concept": _concept, "build": _build, "value": _value, "afford": _afford,
    "rent": _rent, "generative": _generative,
}


def compose_body(ctx: TurnContext) -> str:
    """The reply's body for ``ctx.plan.mode`` (before the question and any notices placed in it)."""
    return BODIES.get(ctx.plan.mode, _answer)(ctx)
