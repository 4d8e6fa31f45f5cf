"""Every ask in a message gets an answer: a table from ask to the tool calls that answer it and the line
that says the answer.

The turn's mode answers the main ask (a sizing, a comparison, a build check …). What else the message asks
— what the whole machine costs, its electricity over N years, how many of its nodes a rack holds, whether
the speed or first-token time meets a stated target — is looked up in :data:`ROUTES` and answered on the
configuration this turn computed, or the one computed a turn earlier, in the order asked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, get_args

from advisor.add_which import add_which_calls, add_which_needed, say_add_which
from advisor.box_count import box_calls, box_needed, say_box
from advisor.code_fit import code_fit_calls, code_fit_needed, say_code_fit
from advisor.compose import config_label, gpu_name, method_label, necessity
from advisor.config_at_hand import Config, current_config, remember_count
from advisor.fmt import (
    count_short,
    duration,
    gb,
    money,
    money_exact,
    num,
    price_basis,
    punct,
    seconds,
    tps,
    usable_bytes,
)
from advisor.model_fit import model_fit_calls, model_fit_needed, say_model_fit
from advisor.nlu import vocab
from advisor.nlu.rules import PEAK_SHARE
from advisor.planner import (
    DEFAULT_TRAIN_SEQ,
    TRAIN_COUNTS,
    PlannedCall,
    dataset_tokens,
    keep_count,
    model_args,
    quant_ladder,
    representative_model,
    said_prices,
    session_region,
    size_stand_in,
    tensor_precision,
    train_count,
    train_count_calls,
    training_rates,
    user_currency,
)
from advisor.present.market import market_verdict
from advisor.session import Profile, Session, ToolCall
from advisor.tender import say_tender, tender_calls, tender_needed
from advisor.toolspec import GPUInfo, typed
from knowledge import load_catalog
from knowledge.messages import msg, render
from knowledge.offers import System, system_resolver, systems
from knowledge.stack_support import Architecture, StackLimit, limits_for
from tools.api_cost import TYPICAL_OUTPUT, TYPICAL_PROMPT, ApiCostResult
from tools.catalog_query import BOARD_COUNTS
from tools.compat_rules.software import STACK_NAMES, stack_family
from tools.compat_rules.types import Chassis
from tools.efficiency import PCIE_X16_GBS
from tools.inference_memory import InferenceMemoryResult
from tools.latency import LoadResult
from tools.ownership import MachineCostResult
from tools.perf import DecodeResult, PrefillResult, ServingResult
from tools.pricing import HOST_COST_USD, HOURS_PER_MONTH, from_usd, gpu_price, to_usd
from tools.scale_out import NODE_GPUS
from tools.training_memory import TrainingMemoryResult
from tools.training_time import TrainingTimeResult

DEFAULT_PROMPT_TOKENS = 2048
DEFAULT_YEARS = 3.0
DEFAULT_SERVE_CONTEXT = 8192


@dataclass(frozen=True)
class AskContext:
    session: Session
    asks: tuple[str, ...]
    config: Config | None
    calls: tuple[ToolCall, ...]
    lang: str
    fresh: bool = True  # this turn computed a configuration or stated a target: targets are checked again
    pooled: bool = False  # the message says the cards are used together
    named: tuple[str, ...] = ()  # the cards this message names (catalog ids)
    topic: str | None = None  # the part of a build the message is about (a build check's answer leads with it)
    budget_said: bool = True  # the message itself names a budget ('how many for $80k')
    count_said: bool = False  # the message itself says how many cards ('how long with 64 GPUs')
    card_prices: tuple[tuple[str, Any], ...] = ()  # unit prices said this turn ('a used 3090 for $650')
    text: str = ""  # the message, for an ask's own wording ('the whole build')
    added: int = 0  # cards the message adds to those owned ('再加一张', 'add a second card')


@dataclass(frozen=True)
class Route:
    """How one ask is answered: ``needed`` says whether this turn still owes it, ``calls`` plans the tools,
    ``say`` writes the line from their results (None: nothing to say)."""

    needed: Callable[[AskContext], bool]
    calls: Callable[[AskContext], list[PlannedCall]]
    say: Callable[[AskContext, list[ToolCall]], str | None]
    scratch: bool = False  # its calls are trials (many counts), not the configuration the session goes on with
    once: bool = False  # its answer is the same whatever configuration is at hand: given once a turn, unlabelled


# ----------------------------------------------------------------------------- routes


def _asked(name: str) -> Callable[[AskContext], bool]:
    return lambda c: name in c.asks and c.config is not None


def _ran(calls: Iterable[ToolCall], name: str) -> bool:
    return any(c.name == name and c.ok for c in calls)


def _machine_call(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    p = c.session.profile
    currency = user_currency(p, c.lang)
    count = c.config.count
    if count == 1 and p.gpu_count is None and c.config.nodes == 1 \
            and load_catalog().gpu(c.config.gpu).on_baseboard:
        count = NODE_GPUS  # 'rack power with H200': an SXM/OAM card comes in a node of eight, not alone
    args: dict[str, Any] = {"gpu": c.config.gpu, "count": count, "nodes": c.config.nodes,
                            "currency": currency, "years": p.years or DEFAULT_YEARS,
                            "include_host": not p.has_host and p.budget_scope != "gpu_only"}
    for slot in ("hours_per_day", "kwh_price", "rack_kw", "gpu_power_limit_w", "pue", "racks"):
        if getattr(p, slot):
            args[slot] = getattr(p, slot)
    if p.supply:  # '208V 3 phase': the current each node draws on it
        args["supply_voltage_v"], args["phases"] = p.supply
    if p.kwh_price and p.kwh_currency and p.kwh_currency != currency:  # 'CNY 0.8/kWh' in an English chat
        args["currency"] = p.kwh_currency  # the bill in the money the tariff is in
    if p.cpu:
        args["platform"] = p.cpu
    checked = next((x for x in c.calls if x.name == "check_build" and x.ok and x.arguments.get("chassis")), None)
    if checked is not None and not p.cpu and checked.arguments["chassis"] in get_args(Chassis):  # the same machine
        args["chassis"] = checked.arguments["chassis"]  # as the build check beside it (a Mac is its own box)
    args.update(said_prices(p))
    named = [x.result["id"] for x in c.calls if x.name == "system_info" and x.ok and x.result]
    system = next((s for s in map(system_resolver().get, dict.fromkeys([*named, *c.session.focus_systems]))
                   if s.gpu == c.config.gpu and s.gpu_count == count and s.max_power_w), None)
    system = system or reference_system(c.config.gpu, count)
    if system is not None:  # 'the DGX B200s', 'HGX B200 8-GPU servers': the box as its maker rates it
        args["node_power_w"] = system.max_power_w
    return [PlannedCall(name="machine_cost", arguments=args, purpose="value")]


def reference_system(gpu: str, count: int) -> System | None:
    """The catalogued server of exactly ``count`` × ``gpu`` whose maker rates its power (the GPU vendor's own, such as
    a DGX, first): an 8-GPU baseboard node is planned at that figure."""
    found = [s for s in systems() if s.form == "server" and s.gpu == gpu and s.gpu_count == count and s.max_power_w]
    vendor = load_catalog().gpu(gpu).vendor
    return next((s for s in found if s.vendor == vendor), found[0] if found else None)


def _machine(done: list[ToolCall]) -> MachineCostResult | None:
    call = next((c for c in done if c.name == "machine_cost" and c.ok), None)
    return MachineCostResult.model_validate(call.result) if call else None


def _cluster_label(gpu: str, count: int, nodes: int, lang: str) -> str:
    """'4× H100' or '2 nodes × 8× H100'."""
    label = config_label(gpu, count, lang)
    return msg(lang, "asks.nodes_label", nodes=nodes, label=label) if nodes > 1 else label


def _label(r: MachineCostResult, lang: str) -> str:
    return _cluster_label(r.gpu, r.count, r.nodes, lang)


def _owned_here(c: AskContext) -> int:
    """How many of the configuration's cards the buyer owns, when it adds to them ('add a second used 3090') and
    the message does not ask for the whole build."""
    assert c.config is not None
    owned = sum(e.count for e in c.session.profile.existing or [] if e.gpu == c.config.gpu)
    return owned if 0 < owned < c.config.count * c.config.nodes and not _WHOLE_BUILD.search(c.text) else 0


_WHOLE_BUILD = re.compile(r"\b(?:whole|entire|complete|full)\s+(?:build|machine|system|box|rig|setup|thing)\b|"
                          r"整机|整套|全套|总价", re.IGNORECASE)


def _build_cost_calls(c: AskContext) -> list[PlannedCall]:
    """The build's price: of the cards to buy only, when the buyer owns some of them and the machine they sit in."""
    calls = _machine_call(c)
    owned = _owned_here(c)
    if owned and c.config is not None and c.config.nodes == 1:
        calls[0].arguments.update(count=c.config.count - owned, include_host=False)
    return calls


def _say_build_cost(c: AskContext, done: list[ToolCall]) -> str | None:
    r = _machine(done)
    if r is None:
        return None
    if r.total_price is None:  # asked, and the catalog has no price to give: said, not skipped
        return msg(c.lang, "asks.build_cost_unpriced", config=_label(r, c.lang))
    if (owned := _owned_here(c)) and r.nodes == 1:  # 'what would that cost me': the cards added, the rest is owned
        return msg(c.lang, "asks.build_cost_added", config=_label(r, c.lang), total=money(r.total_price, r.currency),
                   owned=owned, gpu=gpu_name(c.config.gpu) if c.config else r.gpu)
    key = "asks.build_cost" if r.host_price else "asks.build_cost_cards"
    line = msg(c.lang, key, config=_label(r, c.lang), cards=money(r.cards_price, r.currency),
               hosts=money(r.host_price, r.currency), total=money(r.total_price, r.currency), nodes=r.nodes)
    budget = c.session.profile.budget
    if c.budget_said and budget is not None and budget.currency == r.currency:  # '整机 1 万还够吗': against it
        over = r.total_price - budget.amount
        line += msg(c.lang, "asks.build_cost_over" if over > 0 else "asks.build_cost_within",
                    budget=money(budget.amount, r.currency), gap=money(abs(over), r.currency))
    return line


# the API priced when the buyer names none: the one such buyers most often weigh in their currency
DEFAULT_API = {"CNY": "deepseek-flash"}
DEFAULT_API_ELSE = "gpt-4o-mini"
SERVING_HOURS_AT_LOAD = 12.0  # a serving machine's day: about half of it at full load, the rest idle or light
QUESTIONS_A_DAY = 10  # a staff member's questions a day to an assistant, when only people are known (said back)


def _people_behind(p: Profile) -> int | None:
    """Everyone behind the traffic when only people are known: the head count, else the users at peak over the
    share of a group at once (30 at peak ≈ 300 people) — the same share that sizes a head count at peak."""
    behind_peak = math.ceil(p.concurrency / PEAK_SHARE) if p.concurrency and p.concurrency > 1 else None
    if p.head_count and not (behind_peak and p.concurrency and p.concurrency > p.head_count):
        return p.head_count
    return behind_peak  # '20 人的公司，峰值 30 个客户同时问': more at once than staff, so customers send the traffic


def _api_needed(c: AskContext) -> bool:
    return "api_cost" in c.asks


def _api_calls(c: AskContext) -> list[PlannedCall]:
    p = c.session.profile
    currency = user_currency(p, c.lang)
    args: dict[str, Any] = {"api": p.api_model or DEFAULT_API.get(currency, DEFAULT_API_ELSE),
                            "daily_input_tokens": p.daily_input_tokens or 0.0,
                            "daily_output_tokens": p.daily_output_tokens or 0.0,
                            "currency": currency, "years": p.years or DEFAULT_YEARS}
    spend = p.api_monthly_spend
    quoted = p.api_quoted_per_m
    if quoted is not None:  # '~$0.9 per million tokens': the buyer's price, in the bill's money
        args["quoted_per_m"] = quoted.amount if quoted.currency == currency else \
            round(from_usd(to_usd(quoted.amount, quoted.currency), currency), 4)  # type: ignore[arg-type]
    if p.daily_requests and not (p.daily_input_tokens or p.daily_output_tokens):  # '500 users × 10 questions'
        args["daily_requests"] = p.daily_requests
    elif not (p.daily_input_tokens or p.daily_output_tokens or spend) and (people := _people_behind(p)):
        args["daily_requests"] = people * QUESTIONS_A_DAY  # only people known: their questions, said back
    if spend is not None:
        args["monthly_spend"] = spend.amount if spend.currency == currency else \
            round(from_usd(to_usd(spend.amount, spend.currency), currency), 2)  # type: ignore[arg-type]
    if c.config is not None and (p.daily_input_tokens or p.daily_output_tokens or args.get("daily_requests") or spend):
        machine = _machine_call(c)[0].arguments
        machine.pop("currency", None)
        machine.pop("years", None)
        machine.setdefault("hours_per_day", SERVING_HOURS_AT_LOAD)
        args["machine"] = machine
        priced = {"USD": c.config.price_usd, "CNY": c.config.price_cny}.get(currency)
        if priced:  # the machine as the recommendation priced it, its host included
            args["machine_price"] = priced
    return [PlannedCall(name="api_cost", arguments=args, purpose="value")]


def _against_rent(c: AskContext, api: ApiCostResult) -> str:
    """'调API、租GPU还是自己买卡': the cheapest rental of the plan kept on all month, set against the API bill."""
    rent = next((x.result for x in c.calls if x.name == "rent_choices" and x.ok and x.result), None)
    choices = rent.get("choices") if rent else None
    if not rent or not choices or rent.get("currency") != api.currency:
        return ""
    best = choices[0]
    month = float(best["hourly"]) * HOURS_PER_MONTH
    key = "asks.api_vs_rent_api" if api.monthly_cost < month else "asks.api_vs_rent_rent"
    return "\n" + msg(c.lang, key, month=money(month, api.currency), config=f"{best['count']}× {best['gpu']}",
                      hourly=money_exact(float(best["hourly"]), api.currency),
                      api=money(api.monthly_cost, api.currency))


def _say_api(c: AskContext, done: list[ToolCall]) -> str | None:
    call = next((x for x in done if x.name == "api_cost" and x.ok), None)
    if call is None:
        return None
    r = typed(call, ApiCostResult)
    p = c.session.profile
    if r.quoted:  # the buyer's own price: no listed API is assumed or named
        name = msg(c.lang, "asks.api_quoted_name")
        r = r.model_copy(update={"api_name": name})
    assumed = "" if p.api_model or r.quoted else msg(c.lang, "asks.api_assumed", name=r.api_name)
    volume = ""  # the traffic assumed when only people were given: said on its own line, under the verdict
    if call.arguments.get("daily_requests") and not p.daily_requests and (people := _people_behind(p)):
        volume = "\n" + msg(c.lang, "asks.api_volume_assumed", people=people, each=QUESTIONS_A_DAY,
                            prompt=TYPICAL_PROMPT, output=TYPICAL_OUTPUT)
    prices = msg(c.lang, "asks.api_prices_quoted", name=r.api_name, input=money_exact(r.input_price, r.currency)) \
        if r.quoted else msg(c.lang, "asks.api_prices", name=r.api_name, input=money_exact(r.input_price, r.currency),
                             output=money_exact(r.output_price, r.currency), as_of=r.price_as_of)
    if p.api_monthly_spend is not None:
        bill = msg(c.lang, "asks.api_spend", monthly=money(r.monthly_cost, r.currency),
                   yearly=money(r.yearly_cost, r.currency))
    elif r.daily_input_tokens or r.daily_output_tokens:  # tokens said, or requests at a typical request's tokens
        bill = msg(c.lang, "asks.api_bill", name=r.api_name, input=count_short(r.daily_input_tokens, c.lang),
                   output=count_short(r.daily_output_tokens, c.lang), monthly=money(r.monthly_cost, r.currency),
                   yearly=money(r.yearly_cost, r.currency))
    else:
        return msg(c.lang, "asks.api_prices_only", prices=prices, assumed=assumed) + volume
    if r.own_monthly_cost is None or c.config is None:
        return msg(c.lang, "asks.api_no_machine", bill=bill, prices=prices, assumed=assumed) + volume + \
            _against_rent(c, r)
    key = "asks.api_own_cheaper" if r.cheaper == "own" else "asks.api_cheaper"
    months = r.break_even_months
    payback = (msg(c.lang, "asks.api_never") if months is None else
               msg(c.lang, "asks.api_past_life", years=num(r.years, 0), months=num(months, 0))
               if months > r.years * 12 else msg(c.lang, "asks.api_break_even", months=num(months, 0 if months >= 10
                                                                                          else 1)))
    if _known_not_to_fit(c.calls, c.config):
        assumed += msg(c.lang, "asks.api_not_fit", config=_config_text(c))
    return msg(c.lang, key, bill=bill, prices=prices, assumed=assumed, config=_config_text(c),
               price=money(r.machine_price, r.currency), years=num(r.years, 0),
               own=money(r.own_monthly_cost, r.currency), energy=money(r.machine_monthly_energy, r.currency),
               payback=payback) + volume


def _run_hours(c: AskContext) -> float | None:
    """The hours of the training run under discussion (this turn's or the last one's), if one was timed."""
    for call in [*c.calls, *c.session.last_results.values()]:
        if call.name == "training_time" and call.ok and call.result:
            return float(call.result["hours"])
    return None


def _say_energy(c: AskContext, done: list[ToolCall]) -> str | None:
    r = _machine(done)
    if r is None:
        return None
    hours = _run_hours(c)
    p = c.session.profile
    if hours is not None and not (p.hours_per_day or p.years):  # 'the electricity for that': for the run
        kwh = r.total_wall_w / 1000 * hours
        return msg(c.lang, "asks.energy_run", config=_label(r, c.lang), kw=num(r.total_wall_w / 1000, 2),
                   hours=num(hours, 1), kwh=num(kwh, 0), total=money(kwh * r.kwh_price, r.currency),
                   price=num(r.kwh_price, 2), currency=r.currency)
    facility_kw = r.total_wall_w / 1000 * (r.pue or 1.0)
    line = msg(c.lang, "asks.energy_cost", config=_label(r, c.lang), kw=num(r.total_wall_w / 1000, 1),
               hours=num(r.yearly_kwh / max(facility_kw, 1e-9) / 365, 1), kwh=num(r.yearly_kwh, 0),
               yearly=money(r.yearly_energy_cost, r.currency), years=num(r.years, 1),
               monthly=money(r.yearly_energy_cost / 12, r.currency),
               total=money(r.energy_cost, r.currency), price=num(r.kwh_price, 2), currency=r.currency)
    return line + (msg(c.lang, "asks.energy_pue", pue=num(r.pue, 2), kw=num(facility_kw, 1)) if r.pue else "")


def _ups_calls(c: AskContext) -> list[PlannedCall]:
    calls = _machine_call(c)
    if c.session.profile.ups_va:
        calls[0].arguments["ups_va"] = c.session.profile.ups_va
    return calls


def _say_ups(c: AskContext, done: list[ToolCall]) -> str | None:
    """One node's UPS: the size for its wall draw, and whether the UPS said carries it."""
    r = _machine(done)
    if r is None:
        return None
    nodes = max(1, r.nodes)  # every machine said is on the UPS ('4台H100要多大容量'): their draw together
    size = dict(config=_label(r, c.lang), watts=num(r.node_wall_w * nodes, 0),
                online=num((r.ups_va_online or 0) * nodes, 0), desktop=num((r.ups_va_desktop or 0) * nodes, 0))
    minutes = c.session.profile.ups_minutes
    battery = msg(c.lang, "asks.ups_battery", minutes=num(minutes, 0), watts=size["watts"],
                  kwh=num(r.node_wall_w * nodes * minutes / 60 / UPS_INVERTER_EFFICIENCY / 1000, 1)) if minutes else ""
    va = c.session.profile.ups_va
    if va is None or r.ups_limit_w is None or nodes > 1:
        return msg(c.lang, "asks.ups_size", **size) + battery
    key = "asks.ups_holds" if r.ups_holds else "asks.ups_short" if r.ups_holds is False else "asks.ups_online_only"
    return msg(c.lang, key, va=num(va, 0), low=num(r.ups_limit_w[0], 0), high=num(r.ups_limit_w[1], 0),
               **size) + battery


UPS_INVERTER_EFFICIENCY = 0.9  # battery to outlet through an online UPS's inverter (assumed, said in the line)


NOISE_PASSAGE = "office-noise-ups"  # the corpus section that answers how loud a machine is and where it can sit


def _noise_machines(c: AskContext) -> list[AskContext]:
    """The machines a noise question is about: each one compared ('which is quieter?'), else the one at hand."""
    p = c.session.profile
    if len(p.compare) >= 2:
        return [replace(c, config=Config(gpu=g, count=p.compare_counts.get(g, 1))) for g in p.compare[:4]]
    return [c] if c.config is not None else []


def _noise_calls(c: AskContext) -> list[PlannedCall]:
    """The office-placement passage, and the draw of each machine asked about (its heat is what the room must
    lose, and the fans' work)."""
    query = msg(c.lang, "asks.noise_query")
    machines = [call for m in _noise_machines(c) for call in _machine_call(m)]
    return [*machines, PlannedCall(name="search_knowledge", arguments={"query": query, "k": 3, "lang": c.lang},
                                   purpose="search")]


def _say_noise(c: AskContext, done: list[ToolCall]) -> str | None:
    """How loud: each machine's draw and heat under load (the least of them is the quietest), then the
    office-placement passage's first paragraph, cited."""
    call = next((x for x in done if x.name == "search_knowledge" and x.ok and x.result), None)
    found = [r for r in (call.result or {}).get("results", []) if r["id"].split("/")[-1] == NOISE_PASSAGE] \
        if call else []
    drawn = [MachineCostResult.model_validate(x.result) for x in done if x.name == "machine_cost" and x.ok]
    load = "\n".join(msg(c.lang, "asks.noise_load", config=_label(r, c.lang), watts=num(r.total_wall_w),
                         btu=num(r.total_wall_w * BTU_PER_WH)) for r in drawn)
    if len(drawn) >= 2:
        least = min(drawn, key=lambda r: r.total_wall_w)
        load = msg(c.lang, "asks.noise_least", config=_label(least, c.lang), watts=num(least.total_wall_w)) + \
            "\n" + load
    if not found:
        return load or None
    first = found[0]["text"].split("\n\n")[0].strip()
    return "\n".join(x for x in (load, msg(c.lang, "asks.noise", text=first, id=found[0]["id"])) if x)


def _cards_asked_about(c: AskContext) -> list[str]:
    """The cards a question about them ('can I buy it here?', 'which software?') is about: those the message
    names, else the configuration at hand's."""
    return list(c.named) or ([c.config.gpu] if c.config is not None else [])


def _info_calls(c: AskContext) -> list[PlannedCall]:
    return [PlannedCall(name="gpu_info", arguments={"name": gpu}, purpose="info") for gpu in _cards_asked_about(c)]


def _infos(c: AskContext, done: list[ToolCall], cards: list[str] | None = None) -> list[GPUInfo]:
    """The ``gpu_info`` results for the cards asked about (or ``cards``), in that order."""
    found = {x.arguments.get("name"): typed(x, GPUInfo) for x in done if x.ok and x.name == "gpu_info"}
    return [found[g] for g in (cards if cards is not None else _cards_asked_about(c)) if g in found]


def _say_market(c: AskContext, done: list[ToolCall]) -> str | None:
    """Whether each card can be bought new where the buyer is, from the market status ``gpu_info`` returns."""
    region, _ = session_region(c.session, c.lang)
    lines = [market_verdict(card.markets[region], gpu_name(card.id), region, c.lang) for card in _infos(c, done)
             if region in card.markets]
    return "\n".join(lines) or None


def _limit_text(lim: StackLimit, lang: str) -> str:
    """' vLLM runs only dense models at FP16/BF16/INT8 on it.'; only the precisions when every architecture runs."""
    engine = msg(lang, f"recommend.engine.{lim.engine}")
    if not lim.runs:
        return msg(lang, "asks.software_no_engine", engine=engine)
    precisions = "/".join(p.upper() for p in lim.precisions)
    if set(lim.architectures) >= set(get_args(Architecture)):
        return msg(lang, "asks.software_precisions", engine=engine, precisions=precisions)
    return msg(lang, "asks.software_limit", engine=engine, precisions=precisions,
               architectures="/".join(msg(lang, f"recommend.arch.{a}") for a in lim.architectures))


def _say_software(c: AskContext, done: list[ToolCall]) -> str | None:
    """Which software stack each card at hand runs, and where an engine is narrower there (stack_support)."""
    lines = [msg(c.lang, "asks.software", gpu=gpu_name(card.id), stack=STACK_NAMES[stack_family(card)],
                 software=", ".join(card.software),
                 limits="".join(_limit_text(lim, c.lang) for lim in limits_for(card.id)))
             for card in _infos(c, done)]
    return "\n".join(lines) or None


def _say_precision_support(c: AskContext, done: list[ToolCall]) -> str | None:
    """Whether each card at hand has the precision the conversation is about (a hardware path or not)."""
    precision = c.session.profile.precision
    key = tensor_precision(precision) if precision else None
    if key is None:
        return None
    lines = []
    for card in _infos(c, done):
        has = card.supports(key)
        word = "unknown" if has is None else "yes" if has else "no"
        lines.append(msg(c.lang, f"spec.support_{word}", name=gpu_name(card.id), precision=key.upper(),
                         tflops=num(card.throughput.get(key) or 0)))
    return "\n".join(lines) or None


def _said_prices(c: AskContext) -> dict[str, Any]:
    """Unit prices the buyer gave, this turn's over earlier ones."""
    return {**c.session.profile.card_prices, **dict(c.card_prices)}


def _priced_cards(c: AskContext) -> list[str]:
    """The cards asked about whose unit price the buyer said ('a used 3090 for $650')."""
    said = _said_prices(c)
    return [g for g in _cards_asked_about(c) if g in said]


def _say_card_price(c: AskContext, done: list[ToolCall]) -> str | None:
    """'Is $650 fair for a used 3090?': the price said against the catalog's for that card, with its kind and date."""
    lines = []
    for card in _infos(c, done, _priced_cards(c)):
        said = _said_prices(c)[card.id]
        both = card.price_both
        if both.usd is None:
            lines.append(msg(c.lang, "asks.card_price_unknown", gpu=gpu_name(card.id),
                             price=money(said.amount, said.currency)))
            continue
        shown = both.cny if said.currency == "CNY" and both.cny else both.usd
        currency = "CNY" if said.currency == "CNY" and both.cny else "USD"
        gap = to_usd(said.amount, said.currency) / both.usd - 1
        key = "asks.card_price_fair" if abs(gap) <= FAIR_BAND else \
            "asks.card_price_high" if gap > 0 else "asks.card_price_low"
        lines.append(msg(c.lang, key, gpu=gpu_name(card.id), price=money(said.amount, said.currency),
                         pct=num(abs(gap) * 100, 0), catalog=money(shown, currency), basis=price_basis(card, c.lang)))
    return "\n".join(lines) or None


def _say_rack(c: AskContext, done: list[ToolCall]) -> str | None:
    r = _machine(done)
    if r is None:
        return None
    if r.nodes_per_rack is None:
        return msg(c.lang, "asks.rack_need_kw", kw=num(r.node_wall_w / 1000, 1), config=_label(r, c.lang))
    node = config_label(r.gpu, r.count, c.lang)
    if r.nodes_per_rack == 0:
        return msg(c.lang, "asks.rack_none", kw=num(r.node_wall_w / 1000, 1),
                   rack=num(c.session.profile.rack_kw or 0, 1), config=node)
    if c.session.profile.racks:  # '20 个柜子全上，总共能放多少张卡': the racks filled
        return msg(c.lang, "asks.rack_filled", rack=num(c.session.profile.rack_kw or 0, 1), fits=r.nodes_per_rack,
                   config=node,
                   kw=num(r.node_wall_w / 1000, 1), racks=c.session.profile.racks, nodes=r.nodes,
                   cards=r.nodes * r.count, total_kw=num(r.total_wall_w / 1000, 1))
    pue = c.session.profile.pue
    facility = msg(c.lang, "asks.rack_pue", nodes=r.nodes, total_kw=num(r.total_wall_w / 1000, 1), pue=num(pue, 2),
                   facility_kw=num(r.total_wall_w * pue / 1000, 1)) if pue and r.nodes > 1 else ""
    return msg(c.lang, "asks.rack" if r.nodes > 1 else "asks.rack_one", rack=num(c.session.profile.rack_kw or 0, 1),
               config=node,
               fits=r.nodes_per_rack, kw=num(r.node_wall_w / 1000, 1), nodes=r.nodes, racks=r.racks or 1) + facility


def _say_liquid(c: AskContext, done: list[ToolCall]) -> str | None:
    """'If we went liquid cooled, could we fit more per rack?': liquid cooling carries the heat away in water, but
    the rack's power feed still caps how many machines it holds; the feed the next machine needs, said."""
    r = _machine(done)
    rack = c.session.profile.rack_kw
    if r is None or not rack or r.nodes_per_rack is None:
        return msg(c.lang, "asks.liquid_general")
    node_kw = r.node_wall_w / 1000
    return msg(c.lang, "asks.liquid", rack=num(rack, 1), fits=r.nodes_per_rack, config=config_label(r.gpu, r.count,
               c.lang), kw=num(node_kw, 1), more=r.nodes_per_rack + 1, need=num(node_kw * (r.nodes_per_rack + 1), 1))


def _necessity_needed(c: AskContext) -> bool:
    """'真的有必要上 A100 吗' when cards are weighed after a ranking for scientific work: against its pick."""
    p = c.session.profile
    return "necessity" in c.asks and bool(c.named) and p.use_case == "scientific" \
        and not _ran(c.calls, "recommend") and _last_pick(c) is not None


def _last_pick(c: AskContext) -> Any:
    ranked = c.session.last_results.get("recommend")
    options = (ranked.result or {}).get("options") if ranked is not None and ranked.ok else None
    return options[0] if options else None


def _say_necessity(c: AskContext, done: list[ToolCall]) -> str | None:
    top = _last_pick(c)
    return necessity(list(c.named), top, c.session.profile, c.lang) if top is not None else None


def _say_circuit(c: AskContext, done: list[ToolCall]) -> str | None:
    """'What circuit per system at 208V 3-phase?': one node's current and breaker, two feeds for A/B power."""
    r = _machine(done)
    if r is None:
        return None
    node = dict(config=config_label(r.gpu, r.count, c.lang), kw=num(r.node_wall_w / 1000, 1))
    if r.feed_amps is None:
        return msg(c.lang, "asks.circuit_need_supply", **node)
    volts, phases = c.session.profile.supply or (0.0, 1)
    return msg(c.lang, "asks.circuit" if r.breaker_a else "asks.circuit_over", **node, volts=num(volts, 0),
               phases=msg(c.lang, f"asks.phases_{phases}"), amps=num(r.feed_amps, 1), breaker=r.breaker_a or 0)


BTU_PER_WH = 3.412  # one watt of heat is 3.412 BTU an hour
BTU_PER_COOLING_TON = 12_000  # a ton of refrigeration removes 12,000 BTU an hour
CFM_PER_W_PER_F = 3.16  # sensible heat of air at sea level: CFM = 3.16 × W ÷ ΔT (°F)
AIR_RISE_F = 20.0  # a typical server inlet-to-outlet temperature rise (11 °C)


def _say_heat(c: AskContext, done: list[ToolCall]) -> str | None:
    """'how much heat in BTU/hr': every watt drawn at the wall ends up as heat in the room."""
    r = _machine(done)
    if r is None:
        return None
    btu = r.total_wall_w * BTU_PER_WH
    cfm = CFM_PER_W_PER_F * r.total_wall_w / AIR_RISE_F
    return msg(c.lang, "asks.heat", config=_label(r, c.lang), kw=num(r.total_wall_w / 1000, 1), btu=num(btu),
               tons=num(btu / BTU_PER_COOLING_TON, 1), cfm=num(cfm, 0))


def _decode(calls: Iterable[ToolCall]) -> DecodeResult | None:
    call = next((c for c in calls if c.name == "perf_decode" and c.ok and not c.alternative), None)
    return DecodeResult.model_validate(call.result) if call else None


def _speed_needed(c: AskContext) -> bool:
    p = c.session.profile
    return ("speed" in c.asks or c.fresh) and p.tokens_per_s_target is not None and c.config is not None \
        and bool(c.config.model or p.model)


def _speed_calls(c: AskContext) -> list[PlannedCall]:
    """Decode speed with every user at once, unless this turn measured it already."""
    assert c.config is not None
    p = c.session.profile
    if _decode_for(c.calls, c.config) is not None:
        return []
    args: dict[str, Any] = {"model": c.config.model or p.model, "gpu": c.config.gpu,
                            "count": c.config.count, "batch": p.concurrency or 1}
    if c.config.precision or p.precision:
        args["precision"] = c.config.precision or p.precision
    return [PlannedCall(name="perf_decode", arguments=args, purpose="perf")]


def _say_speed_target(c: AskContext, done: list[ToolCall]) -> str | None:
    assert c.config is not None
    d = _decode_for([*c.calls, *done], c.config) or _decode(done)
    target = c.session.profile.tokens_per_s_target
    if d is None or target is None:
        return None
    per_user = d.per_sequence_tokens_per_s or d.tokens_per_s
    key = "asks.speed_target_met" if per_user >= target else "asks.speed_target_missed"
    return msg(c.lang, key, speed=tps(per_user), target=tps(target), users=c.session.profile.concurrency or 1)


MAX_REPLICAS = 16  # copies of a configuration tried for a per-user speed target, each serving its share of users


def _replicas_needed(c: AskContext) -> bool:
    """A per-user speed target this turn's configuration misses with everyone on it: how many copies of it, each
    serving a share of the users, reach it."""
    p = c.session.profile
    if p.tokens_per_s_target is None or (p.concurrency or 1) < 2 or c.config is None or c.config.nodes > 1:
        return False
    d = _decode_for(c.calls, c.config)
    return d is not None and (d.per_sequence_tokens_per_s or d.tokens_per_s) < p.tokens_per_s_target


def _replica_shares(users: int) -> list[tuple[int, int]]:
    """(copies, users each copy serves) for 2 … MAX_REPLICAS copies, while a copy still serves fewer than all."""
    return [(k, -(-users // k)) for k in range(2, MAX_REPLICAS + 1) if -(-users // k) < users]


def _replica_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    base = next(x for x in c.calls if x.ok and x.name == "perf_decode" and x.arguments.get("gpu") == c.config.gpu
                and x.arguments.get("count") == c.config.count)
    return [PlannedCall(name="perf_decode", purpose="perf", arguments={**base.arguments, "batch": share})
            for _, share in _replica_shares(c.session.profile.concurrency or 1)]


def _say_replicas(c: AskContext, done: list[ToolCall]) -> str | None:
    assert c.config is not None
    p = c.session.profile
    target = p.tokens_per_s_target or 0
    for k, share in _replica_shares(p.concurrency or 1):
        run = next((x for x in done if x.name == "perf_decode" and x.arguments.get("gpu") == c.config.gpu
                    and x.arguments.get("batch") == share), None)
        if run is None:
            continue
        d = DecodeResult.model_validate(run.result)
        if (speed := d.per_sequence_tokens_per_s or d.tokens_per_s) >= target:
            return msg(c.lang, "asks.speed_replicas", k=k, config=_config_text(c), share=share, speed=tps(speed),
                       cards=k * c.config.count, gpu=gpu_name(c.config.gpu))
    return msg(c.lang, "asks.speed_replicas_none", most=MAX_REPLICAS, config=_config_text(c), target=tps(target))


def _speed_at_count_needed(c: AskContext) -> bool:
    """'How many, and how fast?': the speed on the configuration at hand (the least count that fits, nodes of a
    cluster together), when the answer has no speed for all of its cards."""
    return "speed" in c.asks and c.config is not None and c.session.profile.use_case == "inference" \
        and _decode_for(c.calls, c.config) is None and not _known_not_to_fit(c.calls, c.config)


def _known_not_to_fit(calls: Iterable[ToolCall], config: Config) -> bool:
    """The turn sized this configuration and it does not hold the model (no speed to give for it)."""
    sized = [InferenceMemoryResult.model_validate(x.result) for x in calls if x.ok and x.name == "size_inference"
             and x.arguments.get("gpu") == config.gpu and x.arguments.get("gpus", 1) == config.count * config.nodes]
    return bool(sized) and all(r.fits is False and not r.offload_layers for r in sized)


def _decode_for(calls: Iterable[ToolCall], config: Config) -> DecodeResult | None:
    found = next((x for x in calls if x.ok and x.name == "perf_decode" and x.arguments.get("gpu") == config.gpu
                  and x.arguments.get("count") == config.count * config.nodes), None)
    return DecodeResult.model_validate(found.result) if found is not None else None


def _speed_at_count_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    p = c.session.profile
    args: dict[str, Any] = {"model": c.config.model or p.model, "gpu": c.config.gpu,
                            "count": c.config.count * c.config.nodes, "batch": p.concurrency or 1}
    if c.config.precision or p.precision:
        args["precision"] = c.config.precision or p.precision
    return [PlannedCall(name="perf_decode", arguments=args, purpose="perf")]


def _say_speed_at_count(c: AskContext, done: list[ToolCall]) -> str | None:
    assert c.config is not None
    d = _decode_for(done, c.config)
    if d is None:
        return None
    return msg(c.lang, "asks.speed_at_count", speed=tps(d.per_sequence_tokens_per_s or d.tokens_per_s),
               total=tps(d.tokens_per_s), users=c.session.profile.concurrency or 1,
               config=config_label(c.config.gpu, c.config.count * c.config.nodes, c.lang))


def _time_needed(c: AskContext) -> bool:
    """'How long would that box take for 50M tokens?': the run timed on the configuration at hand, when the
    turn's plan did not time one itself."""
    p = c.session.profile
    return "training_time" in c.asks and p.use_case == "training" and bool(dataset_tokens(p)) \
        and c.config is not None and not _ran(c.calls, "training_time") and "how_many" not in c.asks


def _time_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    p = c.session.profile
    return [PlannedCall(name="training_time", purpose="time", arguments={
        **model_args(p), "tokens": dataset_tokens(p), "gpu": c.config.gpu,
        "count": c.config.count * c.config.nodes, **training_rates(p)})]


def _say_time(c: AskContext, done: list[ToolCall]) -> str | None:
    call = next((x for x in done if x.name == "training_time" and x.ok and x.result), None)
    if call is None:
        return None
    r = TrainingTimeResult.model_validate(call.result)
    low, high = r.hours_range
    return msg(c.lang, "asks.train_time", config=_config_text(c), time=duration(r.hours, c.lang),
               low=duration(low, c.lang), high=duration(high, c.lang), gpu_hours=num(r.gpu_hours, 0),
               mfu=num(r.mfu, 2), tokens=num(float(call.arguments["tokens"]) / 1e6, 0))


def _served_needed(c: AskContext) -> bool:
    """A model served beside the one trained ('… and later serve DeepSeek-V3'): whether the machine holds it."""
    return "served" in c.asks and c.session.profile.served_model is not None and c.config is not None


def _served_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    p = c.session.profile
    return [PlannedCall(name="size_inference", purpose="size", arguments={
        "model": p.served_model, "gpu": c.config.gpu, "gpus": c.config.count * c.config.nodes,
        "context": DEFAULT_SERVE_CONTEXT, "batch": p.concurrency or 1})]


def _say_served(c: AskContext, done: list[ToolCall]) -> str | None:
    call = next((x for x in done if x.name == "size_inference" and x.ok and x.result
                 and x.arguments.get("model") == c.session.profile.served_model), None)
    if call is None:
        return None
    r = InferenceMemoryResult.model_validate(call.result)
    return msg(c.lang, "asks.served_fits" if r.fits else "asks.served_short", model=r.model, precision=r.precision,
               config=_config_text(c), need=gb(r.per_gpu_bytes), usable=gb(usable_bytes(r) or 0),
               weights=gb(r.weights_total_bytes), context=num(call.arguments["context"]),
               users=call.arguments["batch"])


def _side_needed(c: AskContext) -> bool:
    """A training job on the side of the serving ('顺便做 7B/14B 的 LoRA'): whether the same machine trains it."""
    p = c.session.profile
    return "side_training" in c.asks and p.side_training is not None and c.config is not None


def _side_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None and c.session.profile.side_training is not None
    job = c.session.profile.side_training
    model = job.model or representative_model(job.params_b or 0)
    cards = c.config.count * c.config.nodes
    size: dict[str, Any] = {**({"model": model} if model else {"params_b": job.params_b}), "gpu": c.config.gpu,
                            "gpus": cards, "method": "full" if job.method == "pretrain" else job.method,
                            "seq": DEFAULT_TRAIN_SEQ}
    if cards > 1:
        size["zero_stage"] = 3  # several cards share the job's states, as a multi-GPU run is set up
    return [PlannedCall(name="size_training", purpose="size", arguments=size)]


def _say_side(c: AskContext, done: list[ToolCall]) -> str | None:
    call = next((x for x in done if x.name == "size_training" and x.ok and x.result), None)
    if call is None:
        return None
    r = TrainingMemoryResult.model_validate(call.result)
    return msg(c.lang, "asks.side_fits" if r.fits else "asks.side_short", config=_config_text(c),
               model=r.model, method=method_label(r.method, c.lang), need=gb(r.per_gpu_bytes),
               usable=gb(usable_bytes(r) or 0))


SIDE_MEDIA_PRECISIONS = ("bf16", "fp8")  # how image tools load a model: full weights, or FP8 files on 16-24 GB


def _media_cards(c: AskContext) -> list[str]:
    p = c.session.profile
    return list(p.compare) or ([c.config.gpu] if c.config is not None else [])


def _side_media_needed(c: AskContext) -> bool:
    return "side_media" in c.asks and c.session.profile.side_media is not None and bool(_media_cards(c))


def _side_media_calls(c: AskContext) -> list[PlannedCall]:
    model = c.session.profile.side_media
    return [PlannedCall(name="size_inference", purpose="size", gpu=gpu, arguments={
        "model": model, "gpu": gpu, "gpus": 1, "precision": precision, "engine": "transformers", "context": 512,
        "batch": 1}) for gpu in _media_cards(c) for precision in SIDE_MEDIA_PRECISIONS]


def _say_side_media(c: AskContext, done: list[ToolCall]) -> str | None:
    """The image model on each card: which of its usual precisions fits (one card each: an image is not split)."""
    model = c.session.profile.side_media
    sized = [(str(x.arguments["gpu"]), InferenceMemoryResult.model_validate(x.result)) for x in done
             if x.name == "size_inference" and x.ok and x.result and x.arguments.get("model") == model]
    if not sized:
        return None
    cards = []
    for gpu in _media_cards(c):
        fits = [r.precision.upper() for g, r in sized if g == gpu and r.fits]
        cards.append(msg(c.lang, "asks.side_media_card", card=gpu_name(gpu),
                         fits=msg(c.lang, "asks.side_media_fits", precisions=punct(c.lang, "list").join(fits))
                         if fits else msg(c.lang, "asks.side_media_none")))
    first = sized[0][0]
    return msg(c.lang, "asks.side_media", model=sized[0][1].model,
               needs=punct(c.lang, "list").join(f"{r.precision.upper()} {gb(r.per_gpu_bytes)}"
                                                for g, r in sized if g == first),
               cards=punct(c.lang, "semicolon").join(cards))


def _compute_needed(c: AskContext) -> bool:
    """'How much total FP64 throughput would that give us?': a science configuration's compute, in all."""
    p = c.session.profile
    return "speed" in c.asks and p.use_case == "scientific" and c.config is not None


def _compute_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    return [PlannedCall(name="gpu_info", arguments={"name": c.config.gpu}, purpose="info")]


def _say_compute(c: AskContext, done: list[ToolCall]) -> str | None:
    call = next((x for x in done if x.name == "gpu_info" and x.ok and x.result), None)
    if call is None or c.config is None:
        return None
    t = call.result["throughput"]  # type: ignore[index]
    cards = c.config.count * c.config.nodes
    vector = t.get("fp64_vector") or t.get("fp64")
    if not vector:
        return msg(c.lang, "asks.compute_no_fp64", config=_config_text(c), fp32=num((t.get("fp32") or 0) * cards, 0))
    return msg(c.lang, "asks.compute", config=_config_text(c), vector=num(vector * cards, 0),
               matrix=num((t.get("fp64") or vector) * cards, 0), fp32=num((t.get("fp32") or 0) * cards, 0),
               per_card=num(vector, 1))


def _config_text(c: AskContext) -> str:
    assert c.config is not None
    return _cluster_label(c.config.gpu, c.config.count, c.config.nodes, c.lang)


def _ttft_needed(c: AskContext) -> bool:
    p = c.session.profile
    return ("ttft" in c.asks or (c.fresh and p.ttft_target_s is not None)) and c.config is not None \
        and bool(c.config.model or p.model)


def _ttft_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    p = c.session.profile
    prompt = p.prompt_tokens or p.context_tokens or DEFAULT_PROMPT_TOKENS  # else a context said is the prompt
    base: dict[str, Any] = {"model": c.config.model or p.model, "gpu": c.config.gpu, "count": c.config.count,
                            "prompt_tokens": prompt}
    if c.config.precision or p.precision:
        base["precision"] = c.config.precision or p.precision
    calls = [PlannedCall(name="perf_prefill", arguments=base, purpose="perf")]
    if p.answer_tokens and _decode_for(c.calls, c.config) is None:  # 'a 200-token completion: how long?'
        calls += _speed_at_count_calls(c)
    if (p.concurrency or 1) > 1:
        calls.append(PlannedCall(name="perf_prefill", arguments={**base, "batch": p.concurrency}, purpose="perf"))
        load = {**base, "users": p.concurrency}
        if p.prompt_tokens and p.context_tokens and p.context_tokens > p.prompt_tokens:
            load["answer_tokens"] = p.context_tokens - p.prompt_tokens  # 'prompts 2k, answers 300'
        calls.append(PlannedCall(name="ttft_under_load", arguments=load, purpose="perf"))
    return calls


def _say_ttft(c: AskContext, done: list[ToolCall]) -> str | None:
    results = [PrefillResult.model_validate(x.result) for x in done if x.name == "perf_prefill" and x.ok]
    if not results:
        return None
    p = c.session.profile
    one = results[0]
    prompt = next(x.arguments["prompt_tokens"] for x in done if x.name == "perf_prefill" and x.ok)
    text = msg(c.lang, "asks.ttft", ttft=seconds(one.ttft_s), prompt=num(prompt, 0))
    load = next((LoadResult.model_validate(x.result) for x in done if x.name == "ttft_under_load" and x.ok), None)
    if load is not None:  # users sending prompts over time: the figure a latency target is about
        text += msg(c.lang, "asks.ttft_load", users=p.concurrency, ttft=seconds(load.ttft_s),
                    busy=num(load.prefill_utilisation * 100, 0)) if load.ttft_s is not None else \
            msg(c.lang, "asks.ttft_saturated", users=p.concurrency)
    if p.ttft_target_s is not None:  # judged on users sending over time; the burst is only the worst case
        typical = load.ttft_s if load is not None else results[-1].ttft_s
        met = typical is not None and typical <= p.ttft_target_s
        text += msg(c.lang, "asks.ttft_target_met" if met else "asks.ttft_target_missed",
                    target=seconds(p.ttft_target_s))
    if len(results) > 1:
        text += msg(c.lang, "asks.ttft_burst", users=p.concurrency, ttft=seconds(results[1].ttft_s))
    text = text if text.endswith((".", "。")) else text + punct(c.lang, "stop").strip()
    decode = _decode_for([*done, *c.calls], c.config) if c.config is not None else None
    if p.answer_tokens and decode is not None and decode.per_sequence_tokens_per_s:  # the whole answer's wait
        first = load.ttft_s if load is not None and load.ttft_s is not None else one.ttft_s
        writing = p.answer_tokens / decode.per_sequence_tokens_per_s
        text += "\n" + msg(c.lang, "asks.ttft_answer", answer=num(p.answer_tokens, 0), write=seconds(writing),
                            rate=tps(decode.per_sequence_tokens_per_s), total=seconds(first + writing))
    return text


BATCH_JOB_SEQUENCES = 16  # sequences a batch job keeps in flight on one configuration (offline classification)


def _volume_needed(c: AskContext) -> bool:
    p = c.session.profile
    return "volume_time" in c.asks and c.config is not None and bool(c.config.model or p.model) \
        and bool(p.daily_input_tokens or p.daily_output_tokens)


def _volume_calls(c: AskContext) -> list[PlannedCall]:
    """A day's traffic as a batch job: prompts read at the prefill rate, answers written at a batched decode."""
    assert c.config is not None
    p = c.session.profile
    base: dict[str, Any] = {"model": c.config.model or p.model, "gpu": c.config.gpu, "count": c.config.count}
    if c.config.precision or p.precision:
        base["precision"] = c.config.precision or p.precision
    prompt = p.prompt_tokens or DEFAULT_PROMPT_TOKENS
    return [PlannedCall(name="perf_prefill", arguments={**base, "prompt_tokens": prompt}, purpose="perf"),
            PlannedCall(name="perf_decode", purpose="perf", arguments={
                **base, "context": prompt, "batch": max(p.concurrency or 1, BATCH_JOB_SEQUENCES)})]


def _say_volume(c: AskContext, done: list[ToolCall]) -> str | None:
    prefill = next((PrefillResult.model_validate(x.result) for x in done if x.name == "perf_prefill" and x.ok), None)
    decode = next((DecodeResult.model_validate(x.result) for x in reversed(done) if x.name == "perf_decode" and x.ok),
                  None)
    if prefill is None or decode is None or not prefill.tokens_per_s or not decode.tokens_per_s:
        return None
    p = c.session.profile
    read, written = p.daily_input_tokens or 0.0, p.daily_output_tokens or 0.0
    hours = read / prefill.tokens_per_s / 3600 + written / decode.tokens_per_s / 3600
    batch = next((x.arguments.get("batch") for x in reversed(done) if x.name == "perf_decode" and x.ok), None)
    return msg(c.lang, "asks.volume_time", config=_config_text(c), total=count_short(read + written, c.lang),
               read=count_short(read, c.lang), prefill=num(prefill.tokens_per_s, 0),
               written=count_short(written, c.lang), decode=num(decode.tokens_per_s, 0),
               hours=duration(hours, c.lang), share=num(hours / 24 * 100, 0), batch=batch or 1)


DEFAULT_CHAT_CONTEXT = 4096  # tokens a chat holds when no context was said: prompt, history and answer


def _capacity_needed(c: AskContext) -> bool:
    return "capacity" in c.asks and c.config is not None and bool(c.config.model or _model_of(c.session.profile)) \
        and c.config.count * c.config.nodes <= 64


def _capacity_calls(c: AskContext) -> list[PlannedCall]:
    """Users at once on the configuration at hand: at the context and precision its sizing used this turn (the
    same figures as the answer above it), else the context said or a chat's."""
    assert c.config is not None
    p = c.session.profile
    sized = _sized_here(c)
    context = sized.result.get("context") if sized is not None and sized.result else None
    precision = sized.result.get("precision") if sized is not None and sized.result else None
    # every machine's memory holds the cache: layers split between the machines pool it as one replica would
    args: dict[str, Any] = {"model": c.config.model or _model_of(p), "gpu": c.config.gpu,
                            "count": c.config.count * c.config.nodes,
                            "context": context or p.context_tokens or DEFAULT_CHAT_CONTEXT}
    if precision or p.precision or c.config.precision:
        args["precision"] = precision or p.precision or c.config.precision
    return [PlannedCall(name="perf_serving", arguments=args, purpose="perf")]


def _say_capacity(c: AskContext, done: list[ToolCall]) -> str | None:
    call = next((x for x in done if x.name == "perf_serving" and x.ok), None)
    if call is None or c.config is None:
        return None
    r = ServingResult.model_validate(call.result)
    args = call.arguments
    config = _cluster_label(c.config.gpu, c.config.count, c.config.nodes, c.lang)
    if r.max_batch < 1:
        return msg(c.lang, "asks.capacity_none", config=config, context=num(args["context"], 0))
    at_most = max((pt for pt in r.points if pt.batch <= r.max_batch), key=lambda pt: pt.batch, default=r.peak)
    text = msg(c.lang, "asks.capacity", config=config, precision=args.get("precision", "bf16"),
               users=num(r.max_concurrency, 0), context=num(args["context"], 0),
               batch=at_most.batch if at_most else r.max_batch,
               speed=tps(at_most.per_sequence_tokens_per_s) if at_most else "—")
    target = c.session.profile.tokens_per_s_target
    if target:
        ok = [pt.batch for pt in r.points if pt.per_sequence_tokens_per_s >= target and pt.batch <= r.max_batch]
        text += msg(c.lang, "asks.capacity_target", target=tps(target), users=max(ok) if ok else 0)
    return text


def _sized_here(c: AskContext) -> ToolCall | None:
    """This turn's sizing of the configuration at hand (not an alternative beside it)."""
    assert c.config is not None
    return next((x for x in c.calls if x.ok and x.name == "size_inference" and not x.alternative
                 and x.arguments.get("gpu") == c.config.gpu), None)


def _max_context_needed(c: AskContext) -> bool:
    return "max_context" in c.asks and c.config is not None and bool(c.config.model or _model_of(c.session.profile))


def _max_context_calls(c: AskContext) -> list[PlannedCall]:
    """The sizing that finds the longest context: this turn's when there is one, else the configuration at hand's
    at the users said (or one)."""
    assert c.config is not None
    if _sized_here(c) is not None:
        return []
    p = c.session.profile
    args: dict[str, Any] = {"model": c.config.model or _model_of(p), "gpu": c.config.gpu,
                            "gpus": c.config.count * c.config.nodes, "batch": p.concurrency or 1,
                            "context": p.context_tokens or DEFAULT_CHAT_CONTEXT}
    if c.config.precision or p.precision:
        args["precision"] = c.config.precision or p.precision
    return [PlannedCall(name="size_inference", arguments=args, purpose="size")]


def _say_max_context(c: AskContext, done: list[ToolCall]) -> str | None:
    """'上下文能开多长': the longest context the memory left after the weights holds, at the users sized, capped by
    the model's own limit."""
    call = _sized_here(c) or next((x for x in done if x.name == "size_inference" and x.ok), None)
    if call is None or c.config is None:
        return None
    r = InferenceMemoryResult.model_validate(call.result)
    config = _cluster_label(c.config.gpu, c.config.count, c.config.nodes, c.lang)
    limit = load_catalog().model(call.arguments["model"]).max_context if call.arguments.get("model") else None
    if not r.max_context_tokens:
        return msg(c.lang, "asks.max_context_none", config=config, model=r.model, precision=r.precision)
    capped = limit is not None and r.max_context_tokens >= limit
    return msg(c.lang, "asks.max_context_capped" if capped else "asks.max_context", config=config, model=r.model,
               precision=r.precision, tokens=num(min(r.max_context_tokens, limit or r.max_context_tokens)),
               users=num(r.batch), limit=num(limit or 0))


LINK_FINDINGS = ("nvlink-bridge", "p2p-geforce", "interconnect-pcie-only", "interconnect-fabric",
                 "nvlink-china-variants")  # what a build check says about how the cards talk to each other


def _link_needed(c: AskContext) -> bool:
    return "nvlink" in c.asks and c.config is not None and c.topic != "link"  # a link-topic check says it itself


def _link_calls(c: AskContext) -> list[PlannedCall]:
    assert c.config is not None
    if _ran(c.calls, "check_build"):
        return []
    return [PlannedCall(name="check_build", purpose="check",
                        arguments={"gpus": [{"gpu": c.config.gpu, "count": max(2, c.config.count)}]})]


def _say_link(c: AskContext, done: list[ToolCall]) -> str | None:
    check = next((x for x in [*c.calls, *done] if x.name == "check_build" and x.ok), None)
    if check is None:
        return None
    found = [f for f in (check.result or {}).get("findings", []) if f["id"] in LINK_FINDINGS]
    need = _link_need(c)
    if not found:
        return need or msg(c.lang, "asks.link_none", gpu=gpu_name(c.config.gpu) if c.config else "")
    return "\n".join(x for x in (need, msg(c.lang, "asks.link", text=render(found[0]["message"], c.lang))) if x)


NO_P2P_SHARE = 0.5  # without peer-to-peer (GeForce) the exchange is staged through host memory: about half the rate
LINK_PAYS_OFF = 0.10  # an exchange under a tenth of the step's compute hides behind it; a link buys little


def _link_need(c: AskContext) -> str | None:
    """Whether a data-parallel training run needs a fast link: each step's gradient all-reduce (a ring sends
    2·(n−1)/n of the trainable gradients, 2 bytes each) over PCIe, against the step's compute time (its tokens at
    the run's per-GPU rate)."""
    size = next((x for x in c.calls if x.name == "size_training" and x.ok and not x.alternative), None)
    timed = next((x for x in c.calls if x.name == "training_time" and x.ok), None)
    if size is None or timed is None or c.config is None:
        return None
    r, t = size.result or {}, timed.result or {}
    n = int(size.arguments.get("gpus") or 1)
    if n < 2 or r.get("zero_stage") or not t.get("tokens_per_s_per_gpu"):
        return None  # one card, or sharded states (their traffic is the sharding's, not one all-reduce)
    card = load_catalog().gpu(c.config.gpu)
    rate = PCIE_X16_GBS.get(card.pcie_gen or 4, PCIE_X16_GBS[4]) * (1.0 if card.interconnect.p2p else NO_P2P_SHARE)
    exchanged = 2 * (n - 1) / n * r["trainable_params"] * 2
    comm_s = exchanged / (rate * 1e9)
    step_s = r["seq"] * r["micro_batch"] / t["tokens_per_s_per_gpu"]
    key = "asks.link_not_needed" if comm_s < LINK_PAYS_OFF * step_s else "asks.link_needed"
    return msg(c.lang, key, mb=num(exchanged / 1e6, 0), ms=num(comm_s * 1000, 1), step=num(step_s, 2),
               pct=num(comm_s / step_s * 100, 0), rate=num(rate, 1))


def _train_cards(c: AskContext) -> list[str]:
    """The cards 'how many to train it?' is asked of: those the message names ('换成昇腾 910B 要多少张'), else
    the ones compared, else the configuration at hand's."""
    p = c.session.profile
    return list(c.named) or (list(p.compare) if p.compare else [c.config.gpu] if c.config else [])


def _train_count_needed(c: AskContext) -> bool:
    p = c.session.profile
    return "how_many" in c.asks and p.use_case == "training" and bool(dataset_tokens(p)) \
        and bool(model_args(p)) and bool(_train_cards(c)) \
        and not (c.count_said and not p.deadline_days)  # '… with 64 GPUs': said (a deadline still asks how many)


def _train_count_calls(c: AskContext) -> list[PlannedCall]:
    p = c.session.profile
    return [call for gpu in _train_cards(c) for call in train_count_calls(p, model_args(p), gpu)]


def _say_train_count(c: AskContext, done: list[ToolCall]) -> str | None:
    """The fewest cards that hold the run in memory and, with a deadline, finish it in time; whole nodes past 8."""
    p = c.session.profile
    lines = []
    for gpu in _train_cards(c):
        timed = next((x for x in done if x.name == "training_time" and x.arguments["gpu"] == gpu), None)
        fits = [x.arguments["gpus"] for x in done if x.name == "size_training" and x.arguments["gpu"] == gpu
                and (x.result or {}).get("fits")]
        n, memory = train_count(p, timed.result if timed is not None else None, fits)
        if n is None and timed is not None and fits and p.deadline_days:  # it fits; no count finishes in time
            need = float(timed.result["gpu_hours"]) / (p.deadline_days * 24)  # type: ignore[index]
            lines.append(msg(c.lang, "asks.train_count_too_slow", gpu=gpu_name(gpu), most=TRAIN_COUNTS[-1],
                             need=num(need, 0), deadline=num(p.deadline_days, 0)))
            continue
        if n is None or timed is None:
            lines.append(msg(c.lang, "asks.train_count_none", gpu=gpu_name(gpu), most=TRAIN_COUNTS[-1]))
            continue
        if len(_train_cards(c)) == 1 and p.gpu_count is None:
            keep_count(p, gpu, n)  # the follow-ups ('network between them?', 'rent them instead?') are about these
        else:  # each card counted is a scheme to come back to ('租 H100 整体训下来多少钱': the H100 option)
            remember_count(c.session, gpu, n)
        key = "asks.train_count_deadline" if p.deadline_days else "asks.train_count" if n == memory \
            else "asks.train_count_month"
        gpu_hours = float(timed.result["gpu_hours"])  # type: ignore[index]
        line = msg(c.lang, key, gpu=gpu_name(gpu), n=n, days=num(gpu_hours / n / 24, 1), memory=memory,
                   deadline=num(p.deadline_days or 0, 0))
        if not p.deadline_days and n < NODE_GPUS:  # 'how many and how long': a whole node is the other answer
            line += msg(c.lang, "asks.train_count_node", node=NODE_GPUS,
                        time=duration(gpu_hours / NODE_GPUS, c.lang))
        lines.append(_beside_owned(c, gpu, n) or line)
    return "\n".join(lines) if lines else None


def _beside_owned(c: AskContext, gpu: str, n: int) -> str | None:
    """'再租多少张 H100 来补' with cards owned: the count that adds to the owned ones' compute (by dense BF16, the
    rate training runs at) to match ``n`` of the card rented — if one job can span both; else ``n`` on their own."""
    owned = [e for e in c.session.profile.existing or [] if e.gpu != gpu]
    if not owned or not vocab.matches("slot", "supplement", c.text):
        return None
    cat = load_catalog()
    rate = cat.gpu(gpu).throughput.get("bf16") or 0.0
    if not rate:
        return None
    equal = sum(e.count * (cat.gpu(e.gpu).throughput.get("bf16") or 0.0) for e in owned) / rate
    extra = max(0, math.ceil((n - equal) / NODE_GPUS) * NODE_GPUS) if n > NODE_GPUS else max(0, math.ceil(n - equal))
    have = punct(c.lang, "list").join(config_label(e.gpu, e.count, c.lang) for e in owned)
    return msg(c.lang, "asks.train_count_beside", extra=extra, gpu=gpu_name(gpu), owned=have, n=n,
               deadline=num(c.session.profile.deadline_days or 30, 0))


def _budget_cards(c: AskContext) -> list[str]:
    """The cards a budget is counted in: each one compared ('how many L40S vs 4090 for $80k'), else the one at
    hand."""
    p = c.session.profile
    if c.named:  # 'how many nodes for the budget with H200': the card this message names
        return list(c.named)
    return list(p.compare) if p.compare else [c.config.gpu] if c.config is not None and c.config.nodes == 1 else []


def _budget_count_needed(c: AskContext) -> bool:
    p = c.session.profile
    # 'how many cards to run it?' with a model to size is the count it needs ('910B 和 H20 各要几台', a budget said
    # beside it or not); a budget counts cards when there is nothing to size ('40 万能买几张 L20')
    return "how_many" in c.asks and p.budget is not None and p.use_case != "training" and bool(_budget_cards(c)) \
        and p.model is None and p.params_b is None


def _budget_count_calls(c: AskContext) -> list[PlannedCall]:
    p = c.session.profile
    budget = p.budget
    assert budget is not None
    cards = _budget_cards(c)  # several compared are counted in one call: none of them is the configuration at hand
    groups = [cards[:8]] if len(cards) > 1 else [[gpu] for gpu in cards]
    groups = [list(dict.fromkeys([*g, *(s for gpu in g if (s := pcie_sibling(gpu)))])) for g in groups]
    return [PlannedCall(name="affordable", purpose="value", arguments={
        "budget_usd": round(to_usd(budget.amount, budget.currency), 2), "only_gpus": group, "limit": len(group),
        "currency": budget.currency, "include_host": not p.has_host and p.budget_scope != "gpu_only",
        **said_prices(p)})
        for group in groups]


def pcie_sibling(gpu: str) -> str | None:
    """The priced PCIe card of a baseboard card's family, nearest in memory ('h100-sxm' → 'h100-pcie'): what a
    budget too small for an 8-GPU baseboard buys of that chip."""
    cat = load_catalog()
    card = cat.gpu(gpu)
    if not card.on_baseboard:
        return None
    family = gpu.split("-")[0]
    near = [g for g in cat.gpus if g.id.split("-")[0] == family and not g.on_baseboard and g.price is not None
            and g.form_factor.value == "pcie"]
    return min(near, key=lambda g: abs(g.memory_gb - card.memory_gb)).id if near else None


def _say_budget_count(c: AskContext, done: list[ToolCall]) -> str | None:
    budget = c.session.profile.budget
    if budget is None:
        return None
    shown = money(budget.amount, budget.currency)
    lines = []
    for gpu in _budget_cards(c):
        call = next((x for x in done if x.name == "affordable" and gpu in x.arguments["only_gpus"]), None)
        options = [o for o in ((call.result or {}).get("options") or []) if o["gpu"] == gpu] if call else []
        sibling = pcie_sibling(gpu)
        plain = [o for o in ((call.result or {}).get("options") or []) if o["gpu"] == sibling] if call else []
        if not options and plain:  # a baseboard over the budget: its PCIe card is what the money buys
            o = plain[0]
            lines.append(msg(c.lang, "asks.budget_count_sibling", budget=shown, gpu=gpu_name(gpu), n=o["count"],
                             sibling=o["name"], total=money(o["price"], budget.currency)))
            continue
        if not options:  # no price to count with, or even one is over the budget
            card = load_catalog().gpu(gpu)
            key = "asks.budget_count_unpriced" if card.price is None else \
                "asks.budget_count_board_none" if card.on_baseboard else "asks.budget_count_none"
            least = (gpu_price(card).usd or 0) * BOARD_COUNTS[0] + HOST_COST_USD["baseboard"]
            lines.append(msg(c.lang, key, budget=shown, gpu=gpu_name(gpu),
                             least=money(from_usd(least, budget.currency), budget.currency)))
            continue
        o = options[0]
        key = "asks.budget_count_host" if o["host_usd"] else "asks.budget_count"
        nodes = o["count"] // NODE_GPUS if load_catalog().gpu(gpu).on_baseboard and o["count"] > NODE_GPUS else 1
        lines.append(msg(c.lang, key, budget=shown, n=o["count"], gpu=o["name"],
                         total=money(o["price"], budget.currency))
                     + (msg(c.lang, "asks.budget_count_nodes", nodes=nodes, per_node=NODE_GPUS) if nodes > 1 else ""))
    return "\n".join(lines) or None


def pool_cards(session: Session, pooled_said: bool) -> list[dict[str, Any]]:
    """Unlike cards used together: the owned ones when there are two kinds or more, or, when the message says
    'together', the cards compared or named plus the owned ones."""
    p = session.profile
    owned = {e.gpu: e.count for e in p.existing or []}
    cards = dict(owned)
    if pooled_said:
        for gid in [*p.compare, *([p.gpu] if p.gpu else [])]:
            cards.setdefault(gid, p.compare_counts.get(gid, p.gpu_count if gid == p.gpu and p.gpu_count else 1))
    return [{"gpu": g, "count": n} for g, n in cards.items()] if len(cards) >= 2 else []


def _model_of(p: Profile) -> str | None:
    """The model under discussion, or the catalog model that stands for a size said alone ('32B')."""
    return size_stand_in(p)


def _pool_needed(c: AskContext) -> bool:
    p = c.session.profile
    return bool(_model_of(p)) and p.use_case in (None, "inference") and bool(pool_cards(c.session, c.pooled))


def _pool_calls(c: AskContext) -> list[PlannedCall]:
    p = c.session.profile
    args: dict[str, Any] = {"model": _model_of(p), "cards": pool_cards(c.session, c.pooled),
                            "context": p.context_tokens or 8192}
    if p.precision:
        args["precision"] = p.precision
    return [PlannedCall(name="pooled_fit", arguments=args, purpose="size")]


def _say_pool(c: AskContext, done: list[ToolCall]) -> str | None:
    call = next((x for x in done if x.name == "pooled_fit"), None)
    if call is None or not call.result:
        return None
    r = call.result
    cards = " + ".join(x["name"] for x in r["cards"])
    key = "asks.pool_fits" if r["fits"] else "asks.pool_short"
    return msg(c.lang, key, cards=cards, model=r["model"], precision=r["precision"], need=gb(r["need_bytes"]),
               usable=gb(r["usable_bytes"]), short=gb(-r["headroom_bytes"]), speed=tps(r["tokens_per_s"]),
               slowest=r["slowest"])


FAIR_BAND = 0.10  # a quote within ±10 % of the catalog estimate is called in line with it


def _quote_needed(c: AskContext) -> bool:
    return "price_check" in c.asks and c.session.profile.quoted_price is not None and c.config is not None


def _quote_calls(c: AskContext) -> list[PlannedCall]:
    calls = _machine_call(c)
    quote = c.session.profile.quoted_price
    if quote and quote[1] in ("USD", "CNY"):
        calls[0].arguments["currency"] = quote[1]
    return calls


def _say_quote(c: AskContext, done: list[ToolCall]) -> str | None:
    r = _machine(done)
    quote = c.session.profile.quoted_price
    if r is None or quote is None or r.total_price is None or quote[1] != r.currency:
        return None
    gap = quote[0] / r.total_price - 1
    key = "asks.quote_fair" if abs(gap) <= FAIR_BAND else "asks.quote_high" if gap > 0 else "asks.quote_low"
    return msg(c.lang, key, quote=money(quote[0], quote[1]), pct=num(abs(gap) * 100, 0), config=_label(r, c.lang),
               cards=money(r.cards_price, r.currency), hosts=money(r.host_price, r.currency),
               total=money(r.total_price, r.currency))


def _main_sizing(c: AskContext) -> ToolCall | None:
    """The plan's own inference sizing of a catalog model (the configuration it answers on)."""
    return next((x for x in c.calls if x.name == "size_inference" and x.ok and "model" in x.arguments
                 and not x.alternative), None)


def _quant_neighbour(c: AskContext) -> str | None:
    """The quant the fit is weighed against: the next one up when the plan's fits, else the ladder's smallest."""
    main = _main_sizing(c)
    if main is None:
        return None
    ladder = quant_ladder(main.arguments["engine"])
    said = str(main.arguments.get("precision") or "").lower()
    at = next((i for i, q in enumerate(ladder) if q.lower() == said), -1)
    if not (main.result or {}).get("fits"):
        return ladder[-1] if at != len(ladder) - 1 else None
    return ladder[at - 1] if at > 0 else None


def _quant_calls(c: AskContext) -> list[PlannedCall]:
    main, other = _main_sizing(c), _quant_neighbour(c)
    if main is None or other is None:
        return []
    return [PlannedCall(name="size_inference", arguments={**main.arguments, "precision": other}, purpose="size")]


def _say_quant(c: AskContext, done: list[ToolCall]) -> str | None:
    """'Can I still run it at a lower quant?': the largest that fits, its need against the card, and the next
    one up (or, when nothing fits, what even the smallest needs)."""
    main = _main_sizing(c)
    if main is None:
        return None
    r = typed(main, InferenceMemoryResult)
    other = next((typed(x, InferenceMemoryResult) for x in done if x.name == "size_inference"), None)
    config = config_label(main.arguments.get("gpu"), r.gpus, c.lang)
    name = r.model
    if r.fits:  # the answer above states its need and the card's usable memory; this names the quant and the next
        line = msg(c.lang, "asks.quant_fit", model=name, quant=r.precision, config=config)
        if other is not None:
            line += msg(c.lang, "asks.quant_above", quant=other.precision, need=gb(other.per_gpu_bytes))
        return line
    smallest = other or r
    return msg(c.lang, "asks.quant_none", model=name, quant=smallest.precision, config=config,
               need=gb(smallest.per_gpu_bytes), usable=gb(usable_bytes(smallest)))


# routes that answer an ask under another name: 'how many cards?' for a training run
ANSWERS_ASK = {"train_count": "how_many", "compute": "speed", "time": "training_time", "card_price": "price_check"}


def ask_of(route: str) -> str:
    """The ask a route answers."""
    return ANSWERS_ASK.get(route, route)


# an ask another answer already says: a judged quote states the catalog price of the build
COVERED_BY = {"build_cost": "price_check", "ttft": "volume_time", "compare": "add_which"}


def still_asked(asks: Iterable[str], answered: set[str]) -> list[str]:
    """The asks in order, less those an answered ask covers."""
    return [a for a in asks if COVERED_BY.get(a) not in answered]


ROUTES: dict[str, Route] = {
    "api_cost": Route(_api_needed, _api_calls, _say_api),
    "price_check": Route(_quote_needed, _quote_calls, _say_quote),
    "fits": Route(_pool_needed, _pool_calls, _say_pool),
    "how_many": Route(_budget_count_needed, _budget_count_calls, _say_budget_count),
    "train_count": Route(_train_count_needed, _train_count_calls, _say_train_count, scratch=True),
    "capacity": Route(_capacity_needed, _capacity_calls, _say_capacity),
    "max_context": Route(_max_context_needed, _max_context_calls, _say_max_context),
    "nvlink": Route(_link_needed, _link_calls, _say_link),
    "build_cost": Route(lambda c: _asked("build_cost")(c) and not _ran(c.calls, "rent_vs_buy")
                        and not _ran(c.calls, "system_info")  # a catalogued server's answer says its price
                        and not _quote_needed(c), _build_cost_calls, _say_build_cost),  # a judged quote says the price
    "energy_cost": Route(lambda c: _asked("energy_cost")(c) and not _ran(c.calls, "rent_vs_buy"), _machine_call,
                         _say_energy),
    "rack": Route(_asked("rack"),
                  _machine_call, _say_rack),
    "circuit": Route(_asked("circuit"), _machine_call, _say_circuit),
    "necessity": Route(_necessity_needed, lambda c: [], _say_necessity),
    "liquid": Route(lambda c: "liquid" in c.asks and c.config is not None, _machine_call, _say_liquid),
    "heat": Route(_asked("heat"), _machine_call, _say_heat),
    "ups": Route(_asked("ups"), _ups_calls, _say_ups),
    "noise": Route(lambda c: "noise" in c.asks, _noise_calls, _say_noise),
    "software": Route(lambda c: "software" in c.asks and bool(_cards_asked_about(c)), _info_calls, _say_software),
    "precision_support": Route(lambda c: "precision_support" in c.asks and bool(_cards_asked_about(c)), _info_calls,
                               _say_precision_support),
    "card_price": Route(lambda c: "price_check" in c.asks and c.session.profile.quoted_price is None
                        and bool(_priced_cards(c)), _info_calls, _say_card_price),
    "market": Route(lambda c: "market" in c.asks and bool(_cards_asked_about(c)), _info_calls, _say_market),
    "speed_target": Route(_speed_needed, _speed_calls, _say_speed_target),
    "speed_replicas": Route(_replicas_needed, _replica_calls, _say_replicas, scratch=True),
    "speed": Route(_speed_at_count_needed, _speed_at_count_calls, _say_speed_at_count),
    "compute": Route(_compute_needed, _compute_calls, _say_compute),
    "time": Route(_time_needed, _time_calls, _say_time),
    "served": Route(_served_needed, _served_calls, _say_served),
    "side_training": Route(_side_needed, _side_calls, _say_side),
    "side_media": Route(_side_media_needed, _side_media_calls, _say_side_media),
    "volume_time": Route(_volume_needed, _volume_calls, _say_volume),
    "ttft": Route(_ttft_needed, _ttft_calls, _say_ttft),
    "box_count": Route(box_needed, box_calls, say_box, scratch=True),
    "tender": Route(tender_needed, tender_calls, say_tender),
    "code_fit": Route(code_fit_needed, code_fit_calls, say_code_fit),
    "what_runs": Route(model_fit_needed, model_fit_calls, say_model_fit, scratch=True),
    "add_which": Route(add_which_needed, add_which_calls, say_add_which, scratch=True, once=True),
    "quant_fit": Route(lambda c: "quant_fit" in c.asks and _main_sizing(c) is not None, _quant_calls, _say_quant,
                       scratch=True),
}


def owed(session: Session, asks: Iterable[str], calls: Iterable[ToolCall], lang: str, fresh: bool = True,
         named: Iterable[str] = (), pooled: bool = False, topic: str | None = None,
         config: Config | None = None, budget_said: bool = True, count_said: bool = False,
         card_prices: dict[str, Any] | None = None, text: str = "", added: int = 0
         ) -> list[tuple[str, Route, AskContext]]:
    """The routes this turn still owes an answer, in the order asked (targets after the asks); ``fresh``: the
    turn computed a configuration or stated a target, so stated targets are checked again; ``config``: the
    configuration to answer on (one of 'both options'), else the one at hand."""
    done = tuple(calls)
    named = tuple(dict.fromkeys(named))
    p = session.profile
    if p.quoted_price is None and not p.card_prices and not card_prices:  # '大概要多少钱' with no price said to
        asks = ["build_cost" if a == "price_check" else a for a in asks]  # judge: what the machine costs
    at_hand = config or current_config(session, done, bool(named))
    ctx = AskContext(session=session, asks=tuple(asks), config=at_hand, calls=done,
                     lang=lang, fresh=fresh, pooled=pooled, named=named, topic=topic, budget_said=budget_said,
                     count_said=count_said,
                     card_prices=tuple((card_prices or {}).items()), text=text, added=added)
    order = [r for a in ctx.asks for r in ROUTES if ask_of(r) == a]
    order += [r for r in ROUTES if r not in order]
    return [(a, ROUTES[a], ctx) for a in order if ROUTES[a].needed(ctx)]
