"""Recommendation (``recommend``): ranked options in the request's currency, what was ruled out, pitfalls."""

from __future__ import annotations

import re

from advisor.fmt import VALUE_UNIT, gb_short, money, num, option_total, tps, usd_in, value_per_price
from advisor.present.check import finding_item
from advisor.present.section import Item, ItemList, Section, Table, notes, word
from knowledge import load_catalog
from knowledge.messages import msg, render
from tools.compat_rules.software import stack_family
from tools.recommend import Option, Recommendation, Rejected

TEXT_OPTIONS = 10
TEXT_REJECTED = 15


def present_recommend(rec: Recommendation, lang: str, currency: str | None = None, limit: int = TEXT_OPTIONS,
                      rejected: int = TEXT_REJECTED) -> Section:
    """``currency``: the one prices are shown in (default: the request's — the budget's currency)."""
    cur = currency or rec.price_currency or rec.currency
    s = Section(lang=lang, title=msg(lang, f"present.recommend.title_{_workload(rec.workload)}"),
                notes=notes(rec.assumptions, lang))
    if not rec.options:
        s.verdict = msg(lang, "present.recommend.none")
    else:
        s.verdict = msg(lang, "present.recommend.count", count=len(rec.options),
                        shown=min(limit, len(rec.options)))
        total = "total_host" if any(o.host_price_usd for o in rec.options[:limit]) else "total_cards"
        header = [msg(lang, f"present.recommend.col_{c}") for c in ("rank", "config", "tier", "memory", "perf",
                                                                      "power", total)]
        s.table = Table(header=header, rows=[_row(o, cur, lang) for o in rec.options[:limit]], right=[0, 4, 5, 6])
        s.lists.append(ItemList(title=msg(lang, "present.recommend.why"),
                                items=[_why(o, cur, lang) for o in rec.options[:limit]]))
    shown = [r for r in rec.rejected if r.stage != "constraint"]
    hidden = len(rec.rejected) - len(shown)
    if rec.rejected:
        more = []
        if len(shown) > rejected:
            more.append(msg(lang, "present.recommend.more_rejected", count=len(shown) - rejected))
        if hidden:
            more.append(msg(lang, "present.recommend.hidden", count=hidden))
        items = [rejected_item(r, lang) for r in shown[:rejected]]
        s.lists.append(ItemList(title=msg(lang, "present.recommend.ruled_out"), items=items, more="  ".join(more),
                                bullet="- "))
    if rec.pitfalls:
        s.lists.append(ItemList(title=msg(lang, "present.recommend.pitfalls"),
                                items=[Item(text=render(n, lang)) for n in rec.pitfalls.values()],
                                bullet="- "))
    return s


def config_label(o: Option, lang: str) -> str:
    """'8× H200 SXM 141GB', or '2 nodes × 8× H100 SXM 80GB' for a plan over several machines."""
    if o.nodes > 1:
        label = msg(lang, "present.recommend.nodes_config", nodes=o.nodes, per_node=o.count // o.nodes, gpu=o.gpu)
    else:
        label = f"{o.count}× {o.gpu}"
    if o.market == "restricted":  # a licence or a grey market: said where it is listed
        label = msg(lang, f"present.recommend.restricted_mark{mark_kind(o.market_rule)}", config=label)
    return label


GREY_MARKET_RULES = ("cn-modded",)  # rules whose cards are sold unofficially, not under a licence


def mark_kind(rule: str | None) -> str:
    """The message suffix of a restricted card's mark: '' for a licence, '_grey' for a grey-market card."""
    return "_grey" if rule in GREY_MARKET_RULES else ""


def network_text(o: Option, cur: str, lang: str) -> str | None:
    """The nodes and the network between them, its cost in ``cur``; None for one machine."""
    plan = o.network
    if plan is None:
        return None
    key = "present.recommend.network_unpriced" if plan.unpriced else "present.recommend.network"
    return msg(lang, key, nodes=plan.nodes, fabric=plan.fabric, ports=plan.ports_per_node, gbps=num(plan.port_gbps),
               topology=msg(lang, f"recommend.why.topology.{plan.topology}"), cost=usd_in(plan.cost_usd, cur))


def rejected_item(r: Rejected, lang: str) -> Item:
    """'8× A10 24GB: over budget …' — the configuration written as the options write it."""
    return Item(text=msg(lang, "present.recommend.rejected", config=(f"{r.count}× " if r.count else "") + r.gpu,
                         reason=render(r.reason, lang)))


def _workload(w: str) -> str:
    return w if w in ("inference", "training", "scientific") else "other"


def _perf(o: Option, lang: str) -> str:
    if o.decode_tokens_per_s is not None:
        return tps(o.decode_tokens_per_s)
    if o.training_tokens_per_s is not None:
        return msg(lang, "present.recommend.training_tps", tps=num(o.training_tokens_per_s))
    if o.fp64_tflops is not None:
        return f"FP64 {num(o.fp64_tflops)} TFLOPS"
    if o.fp32_tflops is not None:
        return f"FP32 {num(o.fp32_tflops)} TFLOPS"
    if o.media_tflops is not None:
        return f"FP16 {num(o.media_tflops)} TFLOPS"
    return "—"


def _metric(o: Option, lang: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", o.perf_metric.lower()).strip("_")
    return word(lang, "metric", slug) if slug else ""


def _row(o: Option, cur: str, lang: str) -> list[str]:
    mem = (f"{gb_short(o.per_gpu_bytes).removesuffix(' GB')} / {gb_short(o.gpu_memory_bytes)}"
           if o.per_gpu_bytes is not None else gb_short(o.gpu_memory_bytes))
    return [f"{o.rank}.", config_label(o, lang), word(lang, "tier", o.tier), mem, _perf(o, lang),
            f"{num(o.power_w)} W", total_text(o, cur, lang)]


def total_text(o: Option, cur: str, lang: str) -> str:
    """An option's total in ``cur``, or 'price unknown' for a card without a price."""
    return option_total(o, cur) if o.total_price_usd is not None else msg(lang, "present.recommend.price_unknown")


def _why(o: Option, cur: str, lang: str) -> Item:
    """Why this option, from its figures: memory, speed, price and value in ``cur``, software stack."""
    parts = []
    if o.per_gpu_bytes is not None and o.headroom_bytes is not None:
        parts.append(msg(lang, "present.recommend.memory", need=gb_short(o.per_gpu_bytes),
                         usable=gb_short(o.gpu_memory_bytes), spare=gb_short(o.headroom_bytes)))
    if o.decode_tokens_per_s is not None:
        parts.append(msg(lang, "present.recommend.decode", tps=tps(o.decode_tokens_per_s)))
    if o.training_tokens_per_s is not None:
        parts.append(msg(lang, "present.recommend.training", tps=num(o.training_tokens_per_s)))
        if o.training_hours:
            parts.append(msg(lang, "present.recommend.training_hours", hours=num(o.training_hours)))
    gpu = load_catalog().gpu(o.gpu_id)
    if o.fp64_tflops is not None:
        parts.append(msg(lang, "present.recommend.fp64", tflops=num(o.fp64_tflops),
                         ecc=msg(lang, "present.recommend.ecc" if gpu.ecc else "present.recommend.no_ecc")))
    if o.fp32_tflops is not None:
        parts.append(f"FP32 {num(o.fp32_tflops)} TFLOPS")
    total = option_total(o, cur)
    if total == "—":
        parts.append(msg(lang, "present.recommend.no_price"))
    else:
        host = usd_in(o.host_price_usd, cur) if o.host_price_usd else ""
        parts.append(msg(lang, "present.recommend.price_host", total=total, host=host) if host
                     else msg(lang, "present.recommend.price", total=total))
        value = value_per_price(o, cur)
        if value is not None:
            parts.append(msg(lang, "present.recommend.per_price", value=num(value, 2), metric=_metric(o, lang),
                             unit=money(VALUE_UNIT.get(cur, 1000), cur)))
    network = network_text(o, cur, lang)
    if network:
        parts.append(network)
    if stack_family(gpu) != "cuda":
        parts.append(msg(lang, "present.recommend.software", stack=o.software_stack))
    text = msg(lang, "present.recommend.option", rank=o.rank, config=config_label(o, lang),
               tier=word(lang, "tier", o.tier), parts=msg(lang, "present.recommend.sep").join(parts))
    details = []
    for f in o.findings:
        if f.severity == "warning":
            item = finding_item(f, lang)
            details += [item.text, *["  " + d for d in item.details]]
    return Item(text=text, details=details)
