"""The reply to "compare these GPUs": one verdict on what fits and what is faster, the spec and speed table, and
value per price when asked — from the same tool results the single-GPU answers use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.compose import citations_block, config_label, method_label, sizing
from advisor.fmt import (
    default_currency,
    duration,
    gb_short,
    gpu_price_text,
    money,
    money_in,
    money_in_exact,
    needed_bytes,
    num,
    punct,
    tps,
    usable_bytes,
)
from advisor.planner import session_region
from advisor.session import Citation, Profile, Session, ToolCall
from advisor.toolspec import GPUInfo, typed
from knowledge import load_catalog
from knowledge.codes import scientific_code
from knowledge.markets import sold_in
from knowledge.messages import has as has_message
from knowledge.messages import msg
from tools.inference_memory import InferenceMemoryResult
from tools.perf import DecodeResult
from tools.recommend import has_gpu_build
from tools.training_memory import TrainingMemoryResult
from tools.training_time import TrainingTimeResult
from tools.value import ValueResult


def _need_usable(s: Any) -> str:
    """'50.1 / 51.0 GB': what one GPU needs and what it offers, in the same units."""
    usable = usable_bytes(s)
    need = gb_short(needed_bytes(s) or 0)
    return f"{need.removesuffix(' GB')} / {gb_short(usable)}" if usable else need


def _leader(gs: list[Any], key: str, lang: str, message: str) -> str:
    """Which card leads on ``key`` — or that they are the same, when they are (catalog entries or plain rows)."""
    def value(g: Any) -> float:
        return float(g[key] if isinstance(g, dict) else getattr(g, key))

    if len({value(g) for g in gs}) == 1:
        return msg(lang, "compare.same")
    top = max(value(g) for g in gs)
    leaders = [g["name"] if isinstance(g, dict) else g.name for g in gs if value(g) == top]
    if len(leaders) > 1:  # 'H100 has more' is false when the H200 has as much
        return msg(lang, "compare.level_at_top", names=punct(lang, "list").join(leaders))
    return msg(lang, message, name=leaders[0])


_VALUE_UNITS = {"bf16_tflops": "TFLOPS", "fp64_tflops": "TFLOPS", "fp32_tflops": "TFLOPS", "memory_gb": "GB",
                "tokens_per_s": "tokens/s",
                "bandwidth_gbs": "GB/s"}  # concurrent requests are a plain count


def per_money(metric: str, x: float) -> str:
    """A per-price figure with its unit ('1,170 GB/s', '45.0 TFLOPS'); request counts are plain."""
    unit = _VALUE_UNITS.get(metric)
    return f"{num(x)} {unit}" if unit else num(x)


def _value_metric(session: Session, value: ValueResult) -> str:
    """The figure that decides value here: FP64 for science, decode speed once a model is sized, bandwidth for
    inference without a model, else dense BF16."""
    p = session.profile
    if p.fp64 or (p.use_case == "scientific" and p.fp64 is not False):
        return "fp64_tflops"
    if p.use_case == "scientific":  # a single- or mixed-precision code (GROMACS): FP32 decides
        return "fp32_tflops"
    if value.options and all("tokens_per_s" in o.per_unit for o in value.options):
        return "tokens_per_s"
    if p.use_case == "inference":  # no model yet: generation is bandwidth-bound
        return "bandwidth_gbs"
    return "bf16_tflops"


def _unbuyable_winner(session: Session, value: ValueResult, metric: str, winner: str, labels: dict[str, str],
                      lang: str) -> list[str]:
    """When the value leader cannot be bought new where the buyer is (a B200 for a buyer in China): the leader
    among the cards they can buy."""
    region, _ = session_region(session, lang)
    if sold_in(winner, region):
        return []
    buyable = sorted((o for o in value.options if o.fits is not False and sold_in(o.gpu, region)),
                     key=lambda o: -o.per_unit[metric])
    where = msg(lang, f"market.region.{region}")
    if not buyable:
        return [msg(lang, "compare.value_none_buyable", winner=labels.get(winner, winner), region=where)]
    best = buyable[0]
    return [msg(lang, "compare.value_unbuyable", winner=labels.get(winner, winner), region=where,
                best=labels.get(best.gpu, best.name), value=per_money(metric, best.per_unit[metric]))]


VALUE_TIE = 0.05  # per-price figures this close are a tie: catalog prices are not that precise


def _value_lines(session: Session, value: ValueResult, labels: dict[str, str], lang: str) -> list[str]:
    """The value-for-money verdict (most of the deciding figure per unit of money, or a tie), then the card whose
    KV cache holds more users (for a sized model) or that gives more memory for the money, when that differs."""
    unpriced = [labels.get(g, g) for g in value.unpriced]
    if unpriced and len(value.options) < 2:
        return [msg(lang, "compare.value_unpriced", names=punct(lang, "list").join(unpriced))]
    lines = _priced_value_lines(session, value, labels, lang)
    if unpriced:  # the priced ones compared; the others said apart ('MI300A: sold in systems only, ask a vendor')
        lines.append(msg(lang, "compare.value_some_unpriced", names=punct(lang, "list").join(unpriced)))
    return lines


def _priced_value_lines(session: Session, value: ValueResult, labels: dict[str, str], lang: str) -> list[str]:
    """:func:`_value_lines` over the cards with a price."""
    metric = _value_metric(session, value)
    winner = value.leaders.get(metric)
    session.compare_pick = session.compare_pick or winner
    if winner is None:
        return []
    unit = msg(lang, f"compare.value_unit.{value.currency}")
    by_id = {o.gpu: o for o in value.options}
    others = [msg(lang, "compare.value_other", label=labels.get(o.gpu, o.name),
                  value=per_money(metric, o.per_unit[metric]))
              for o in value.options if o.gpu != winner and o.fits is not False]
    verdict_key = "compare.value_verdict_pair" if len(others) == 1 else "compare.value_verdict"
    able = sorted((o.per_unit[metric] for o in value.options if o.fits is not False), reverse=True)
    if len(able) >= 2 and able[0] <= able[1] * (1 + VALUE_TIE):  # within a few per cent: no winner on this
        verdict_key = "compare.value_tie"
    said = any(g in session.profile.card_prices for g in by_id)  # prices the user gave: those are compared
    basis = msg(lang, "compare.basis_said" if said else "compare.basis_catalog")
    lines = [msg(lang, verdict_key, winner=labels.get(winner, winner), unit=unit, basis=basis,
                 metric=msg(lang, f"compare.value_metric.{metric}"),
                 value=per_money(metric, by_id[winner].per_unit[metric]),
                 others=punct(lang, "semicolon").join(others))]
    lines += _unbuyable_winner(session, value, metric, winner, labels, lang)
    serving_leader = value.leaders.get("concurrent_requests")
    tie = verdict_key == "compare.value_tie"
    one_user = session.profile.concurrency == 1  # 'single-user chat': how many requests fit is beside the point
    if metric == "tokens_per_s" and serving_leader and not one_user and (
            serving_leader != winner or tie or _holds_far_more(value, serving_leader)):  # many users
        held = punct(lang, "list").join(
            msg(lang, "compare.value_other", label=labels.get(o.gpu, o.name),
                value=num(o.totals["concurrent_requests"])) for o in value.options
            if o.gpu != serving_leader and "concurrent_requests" in o.totals)
        lines.append(msg(lang, "compare.value_serving", name=labels.get(serving_leader, serving_leader), unit=unit,
                         value=num(by_id[serving_leader].per_unit["concurrent_requests"]),
                         total=num(by_id[serving_leader].totals["concurrent_requests"]), others=held))
        return lines
    memory_leader = value.leaders.get("memory_gb")
    if memory_leader and (memory_leader != winner or tie):
        lines.append(msg(lang, "compare.value_memory", name=labels.get(memory_leader, memory_leader), unit=unit,
                         value=per_money("memory_gb", by_id[memory_leader].per_unit["memory_gb"])))
    return lines


def _holds_far_more(value: Any, leader: str) -> bool:
    """The serving leader's KV cache holds at least twice the requests of every other card: worth saying even
    when the same card also leads on speed per price."""
    held = {o.gpu: o.totals.get("concurrent_requests") for o in value.options}
    top = held.get(leader) or 0
    return all(v is not None and top >= 2 * v for g, v in held.items() if g != leader)


def _times(count: int, figure: str) -> str:
    """A per-card figure of a configuration: '2 × 24 GB' for two cards, the figure itself for one."""
    return figure if count == 1 or figure == "—" else f"{count} × {figure}"


def _price_cell(g: GPUInfo, p: Profile, lang: str, count: int = 1, value: ValueResult | None = None) -> str:
    """The price the user said for the card ('your price'), else the catalog's; a configuration of several cards
    shows its total first ('¥34,560（2 × ¥17,280）')."""
    said = p.card_prices.get(g.id)
    each = msg(lang, "compare.said_price", price=money(said.amount, said.currency)) if said is not None \
        else (gpu_price_text(g, lang) or ("—", ""))[0]
    if count == 1 or each == "—":
        return each
    option = next((o for o in value.options if o.gpu == g.id and o.count == count), None) if value else None
    if option is None:
        return _times(count, each)
    currency = value.currency if value else "USD"
    return msg(lang, "compare.price_total_said" if said is not None else "compare.price_total",
               total=money(option.price, currency), count=count, each=money(option.price / count, currency))


@dataclass
class _Compared:
    """What a comparison computed, by GPU id: the cards, their counts and labels, and the tools' results."""

    ids: list[str]
    gs: dict[str, GPUInfo]
    counts: dict[str, int]
    labels: dict[str, str]
    sizes: dict[str | None, ToolCall]
    perfs: dict[str | None, ToolCall]
    times: dict[str | None, TrainingTimeResult]
    value: ValueResult | None
    rent_asked: bool = False  # the message asks what renting costs


def _compared(session: Session, calls: list[ToolCall], lang: str) -> _Compared | None:
    infos = [c for c in calls if c.name == "gpu_info" and c.ok]
    if len(infos) < 2:
        return None
    p = session.profile
    sizes = {c.arguments.get("gpu"): c for c in calls if c.name in ("size_inference", "size_training") and c.ok}
    ids = [c.arguments["name"] for c in infos]
    counts = {i: sizes[i].arguments.get("gpus", 1) if i in sizes else p.compare_counts.get(i, 1) for i in ids}
    gs = {i: typed(c, GPUInfo) for i, c in zip(ids, infos, strict=True)}
    labels = {i: gs[i].name if counts[i] == 1 else config_label(i, counts[i], lang) for i in ids}
    times = {c.arguments.get("gpu"): typed(c, TrainingTimeResult) for c in calls  # on the cards that hold the run
             if c.name == "training_time" and c.ok and c.arguments.get("gpu") in sizes
             and sizing(sizes[c.arguments.get("gpu")]).fits}
    value_call = next((c for c in calls if c.name == "value_for_money" and c.ok), None)
    return _Compared(ids=ids, gs=gs, counts=counts, labels=labels, sizes=sizes,
                     perfs={c.arguments.get("gpu"): c for c in calls if c.name == "perf_decode" and c.ok},
                     times=times, value=typed(value_call, ValueResult) if value_call is not None else None)


def _row(label: str, values: list[str]) -> str:
    return f"| {label} | " + " | ".join(values) + " |"


def _tp(g: GPUInfo, key: str) -> str:
    v = getattr(g.throughput, key)
    return "—" if v is None else num(v)


def _spec_rows(c: _Compared, p: Profile, lang: str) -> list[str]:
    """The cards' figures, a configuration of n cards as 'n × figure', and each configuration's price."""
    def per_card(label: str, figure: Callable[[GPUInfo], str]) -> str:
        return _row(label, [_times(c.counts[i], figure(c.gs[i])) for i in c.ids])

    gs = [c.gs[i] for i in c.ids]
    kinds = [g.interconnect.kind for g in gs]
    links = [msg(lang, f"spec.link_kind.{k}") if has_message(lang, f"spec.link_kind.{k}") else k for k in kinds]
    return [
        per_card(msg(lang, "compose.compose_compare.memory"), lambda g: f"{num(g.memory_gb)} GB {g.memory_type}"),
        per_card(msg(lang, "compose.compose_compare.bandwidth"), lambda g: f"{num(g.bandwidth_gbs)} GB/s"),
        per_card("BF16/FP16 TFLOPS", lambda g: _tp(g, "bf16") if g.throughput.bf16 is not None else _tp(g, "fp16")),
        per_card("FP8 TFLOPS", lambda g: _tp(g, "fp8")),
        per_card("FP64 TFLOPS", lambda g: _tp(g, "fp64")),
        per_card(msg(lang, "compose.compose_compare.power"), lambda g: f"{num(g.tdp_w)} W"),
        _row(msg(lang, "compose.compose_compare.form_cooling"),
             [f"{msg(lang, 'spec.form.' + g.form_factor)} / {msg(lang, 'spec.cooling.' + g.cooling)}" for g in gs]),
        _row("ECC", ["✓" if g.ecc else "✗" for g in gs]),
        _row(msg(lang, "compose.compose_compare.interconnect"), links),
        _row(msg(lang, "compose.compose_compare.approx_price"),
             [_price_cell(c.gs[i], p, lang, c.counts[i], c.value) for i in c.ids]),
    ]


def _result_rows(c: _Compared, lang: str) -> list[str]:
    """What the tools computed on each configuration: memory need and fit, decode speed, training time."""
    rows = []
    if c.sizes:
        model = sizing(next(iter(c.sizes.values()))).model
        rows.append(_row(msg(lang, "compose.compose_compare.per_gpu", model=model),  # need / usable
                         [_need_usable(sizing(c.sizes[i])) if i in c.sizes else "—" for i in c.ids]))
        rows.append(_row(msg(lang, "compose.compose_compare.fits"),
                         [("✓" if sizing(c.sizes[i]).fits else "✗") if i in c.sizes else "—" for i in c.ids]))
    if c.perfs:
        rows.append(_row(msg(lang, "compose.compose_compare.decode_speed"),
                         [tps(typed(c.perfs[i], DecodeResult).tokens_per_s) if i in c.perfs else "—"
                          for i in c.ids]))
    if c.times:
        rows.append(_row(msg(lang, "compare.train_time_row"),
                         [duration(c.times[i].hours, lang) if i in c.times else "—" for i in c.ids]))
        if any(t.cost_usd is not None for t in c.times.values()):  # what renting them for the run costs
            rows.append(_row(msg(lang, "compare.train_cost_row"),
                             [_rent_cost(c.times[i], lang) if i in c.times else "—" for i in c.ids]))
    return rows


def _rent_cost(t: TrainingTimeResult, lang: str) -> str:
    """'$141,183 ($2.90/GPU-h)', in the reader's currency; '—' without a rate."""
    if t.cost_usd is None or not t.price_per_gpu_hour:
        return "—"
    currency = default_currency(lang)
    return msg(lang, "compare.train_cost_cell", total=money_in(t.cost_usd, t.cost_usd * t.cny_per_usd, currency, lang),
               rate=money_in_exact(t.price_per_gpu_hour, t.price_per_gpu_hour * t.cny_per_usd, currency, lang))


def _value_rows(session: Session, c: _Compared, lang: str) -> tuple[list[str], list[str]]:
    """The per-price rows and the value verdict lines (none without prices)."""
    if c.value is None:
        return [], []
    unit = msg(lang, f"compare.value_unit.{c.value.currency}")
    per = {o.gpu: o.per_unit for o in c.value.options}
    metric = _value_metric(session, c.value)
    serving = ("concurrent_requests",) if metric == "tokens_per_s" and all(
        "concurrent_requests" in per.get(i, {}) for i in c.ids) else ()
    rows = [_row(msg(lang, f"compare.value_row.{key}", unit=unit),
                 [per_money(key, per[i][key]) if key in per.get(i, {}) else "—" for i in c.ids])
            for key in dict.fromkeys((metric, *serving, "memory_gb"))]
    return rows, _value_lines(session, c.value, c.labels, lang)


def _verdict(session: Session, c: _Compared, lang: str) -> str | None:
    """The comparison's verdict: what holds the model and what is faster; for science the rate the code runs at;
    for a training run every option holds, the better choice."""
    p = session.profile
    verdict = _compare_verdict(c.ids, c.labels, c.sizes, c.perfs, lang, session.profile.method == "pretrain")
    if verdict is None and p.use_case == "scientific":
        verdict = _science_pick(session, c.ids, c.labels, c.gs, c.counts, lang)
    every_fits = bool(c.sizes) and all(sizing(c.sizes[i]).fits for i in c.ids if i in c.sizes)
    if verdict is None or (p.use_case == "training" and every_fits):
        verdict = _training_pick(session, c, lang) or verdict
    return verdict


def _budget_line(p: Profile, c: _Compared, lang: str) -> str | None:
    """The configurations compared that cost more than the budget said, and those within it."""
    if p.budget is None or c.value is None or p.budget.currency != c.value.currency:
        return None
    prices = {o.gpu: o.price for o in c.value.options if o.gpu in c.ids}
    over = [i for i in c.ids if i in prices and prices[i] > p.budget.amount]
    if not over:
        return None
    within = [i for i in c.ids if i in prices and i not in over]
    sep = punct(lang, "list")
    fits = [i for i in within if i not in c.sizes or sizing(c.sizes[i]).fits]
    if len(fits) == 1:  # 'a used 3090 or save for a 5090?' with ¥6,000: the one the budget buys is the answer
        return msg(lang, "compare.budget_pick", budget=money(p.budget.amount, p.budget.currency),
                   pick=c.labels[fits[0]], price=money(prices[fits[0]], c.value.currency),
                   over=sep.join(f"{c.labels[i]} {money(prices[i], c.value.currency)}" for i in over))
    return msg(lang, "compare.over_budget", budget=money(p.budget.amount, p.budget.currency),
               over=sep.join(f"{c.labels[i]} {money(prices[i], c.value.currency)}" for i in over)) + (
        msg(lang, "compare.within_budget", within=sep.join(c.labels[i] for i in within)) if within else "")


def _points(session: Session, c: _Compared, lang: str) -> str:
    """What decides between the cards for this use, and which leads on it."""
    p = session.profile
    gs = [c.gs[i] for i in c.ids]
    if p.use_case == "scientific" and p.memory_bound:  # 'memory bw bound': bandwidth decides, not FP64 peak
        totals = [{"name": c.labels[i], "bw": c.counts[i] * c.gs[i].bandwidth_gbs} for i in c.ids]
        return msg(lang, "compare.points_scientific_bandwidth", bandwidth=_leader(totals, "bw", lang, "compare.faster"))
    if p.use_case == "scientific":
        key = _science_key(session)
        totals = [{"name": c.labels[i], key: c.counts[i] * _science_rate(session, c.gs[i], key)} for i in c.ids]
        return msg(lang, f"compare.points_scientific_{key}",
                   compute=_leader(totals, key, lang, "compare.more_compute"))
    if p.use_case == "training":
        half = [{"name": g.name, "bf16": g.throughput.bf16 or g.throughput.fp16 or 0} for g in gs]
        return msg(lang, "compare.points_training", memory=_leader(gs, "memory_gb", lang, "compare.more_memory"),
                   compute=_leader(half, "bf16", lang, "compare.more_compute"))
    return msg(lang, "compare.points", memory=_leader(gs, "memory_gb", lang, "compare.more_memory"),
               bandwidth=_leader(gs, "bandwidth_gbs", lang, "compare.faster"))


def compose_compare(session: Session, calls: list[ToolCall], citations: list[Citation], lang: str,
                    value_first: bool = False, rent_asked: bool = False) -> str:
    """Side-by-side specs (and fit, speed and value per price when known); the value verdict leads when asked;
    ``rent_asked``: a training run's rent on each leads its pick ('cost if we rent?')."""
    p = session.profile
    c = _compared(session, calls, lang)
    if c is None:
        return msg(lang, "compose.compose_compare.compare_i_need_least")
    c.rent_asked = rent_asked
    session.compare_pick = None  # this comparison's verdict names its own
    names = [c.labels[i] for i in c.ids]
    value_rows, value_lines = _value_rows(session, c, lang)
    rows = [_row(msg(lang, "compare.metric"), names), "|---" * (len(names) + 1) + "|",
            *_spec_rows(c, p, lang), *_result_rows(c, lang), *value_rows]
    budget = _budget_line(p, c, lang)
    parts = (budget, _verdict(session, c, lang)) if budget and budget.startswith("**") else \
        (_verdict(session, c, lang), budget)  # the one the budget buys leads when that decides it
    verdict = "\n".join(x for x in parts if x)
    lead = [*value_lines, *([verdict] if verdict else [])] if value_first else ([verdict] if verdict else [])
    head = msg(lang, "compare.head", names=msg(lang, "compare.joiner").join(names))
    out = [*lead, *([""] if lead else []), head, "", *rows, "", _points(session, c, lang)]
    if value_lines and not value_first:
        out.append(value_lines[0].replace("**", ""))
    if p.model is None and p.params_b is None and p.use_case != "scientific":
        out.append(msg(lang, "compose.compose_compare.tell_me_model_precision"))
    if citations:
        out += ["", *citations_block(citations, lang)]
    return "\n".join(out)


def _compare_verdict(ids: list[str], labels: dict[str, str], sizes: dict[str | None, ToolCall],
                     perfs: dict[str | None, ToolCall], lang: str, pretrain: bool = False) -> str | None:
    """Which compared configuration holds the model (and the faster one when all do), from the sizings."""
    if not ids or any(i not in sizes for i in ids):
        return None
    r0 = sizing(sizes[ids[0]])
    method = method_label(r0.method, lang, pretrain) if isinstance(r0, TrainingMemoryResult) else r0.precision.upper()
    what = msg(lang, "compose.compare_verdict.text", model=r0.model, method=method)
    each = {i: r.precision.upper() for i in ids if isinstance(r := sizing(sizes[i]), InferenceMemoryResult)}
    if len(set(each.values())) > 1:  # each card at the precision it holds the model in: said with each card
        labels = {i: msg(lang, "compose.compare_verdict.at_precision", label=labels[i], precision=each[i])
                  if i in each else labels[i] for i in labels}
        what = r0.model
    fit = [i for i in ids if sizing(sizes[i]).fits]
    unfit = [i for i in ids if i not in fit]

    def detail(i: str) -> str:
        r = sizing(sizes[i])
        return msg(lang, "compare.detail", label=labels[i], need=gb_short(needed_bytes(r) or 0),
                   have=gb_short(usable_bytes(r)))  # what the verdict weighs: every layer, against the usable

    sep = punct(lang, "list")
    if not fit:
        return msg(lang, "compare.verdict_none_fit", what=what, details=punct(lang, "semicolon").join(
            detail(i) for i in ids))
    if unfit:
        return msg(lang, "compare.verdict_some_fit", what=what, fit=sep.join(labels[i] for i in fit),
                   unfit=sep.join(detail(i) for i in unfit))
    speeds = {i: typed(perfs[i], DecodeResult).tokens_per_s for i in ids if i in perfs}
    if len(speeds) == len(ids):
        winner = max(speeds, key=lambda i: speeds[i])
        pair = "_pair" if len(ids) == 2 else ""
        return msg(lang, f"compare.verdict_all_fit_faster{pair}", what=what, winner=labels[winner],
                   speed=tps(speeds[winner]))
    return msg(lang, "compare.verdict_all_fit" + ("_pair" if len(ids) == 2 else ""), what=what,
               labels=sep.join(labels[i] for i in ids))


# a configuration that must split the model across cards over PCIe is chosen only when it is clearly faster: each
# step moves the sharded weights between the cards, which a single card (or NVLink) does not pay
_SHARDED_OVER_PCIE_MARGIN = 1.25


def _shards_over_pcie(size: ToolCall | None, g: GPUInfo, count: int) -> bool:
    """The model is split across the cards (ZeRO-3/FSDP or tensor parallel) and they talk over PCIe."""
    if size is None or count <= 1 or not isinstance(sizing(size), TrainingMemoryResult):
        return False
    r = sizing(size)
    assert isinstance(r, TrainingMemoryResult)
    split = r.zero_stage == 3 or r.fsdp or r.tp > 1
    return bool(split) and g.interconnect.kind == "pcie"


def _training_pick(session: Session, c: _Compared, lang: str) -> str | None:
    """Which compared configuration suits a training run that every one of them holds (:func:`_training_winner`),
    with the price difference and the sharding cost said."""
    if len(c.ids) < 2 or any(i not in c.sizes or not sizing(c.sizes[i]).fits for i in c.ids):
        return None
    compute = {i: c.counts[i] * (c.gs[i].throughput.bf16 or c.gs[i].throughput.fp16 or 0.0) for i in c.ids}
    if not all(compute.values()):
        return None
    sharded = {i: _shards_over_pcie(c.sizes.get(i), c.gs[i], c.counts[i]) for i in c.ids}
    best, reason = _training_winner(c, compute, sharded, lang)
    session.compare_pick = best
    r0 = sizing(c.sizes[c.ids[0]])
    what = msg(lang, "compose.compare_verdict.text", model=r0.model,
               method=method_label(r0.method, lang, session.profile.method == "pretrain")
               if isinstance(r0, TrainingMemoryResult) else "")
    lines = [msg(lang, "compare.train_pick", what=what, winner=c.labels[best], reason=reason)]
    rented = [i for i in c.ids if i in c.times and c.times[i].cost_usd is not None]
    if c.rent_asked and rented:  # 'cost if we rent?': the run's rent on each, not a purchase
        lines.append(msg(lang, "compare.train_rent", costs=punct(lang, "semicolon").join(
            f"{c.labels[i]} {_rent_cost(c.times[i], lang)}" for i in rented)))
        lines += [msg(lang, "compare.train_sharded_cost", label=c.labels[i]) for i in c.ids if sharded[i]]
        return "\n".join(lines)
    prices = {o.gpu: o.price for o in c.value.options} if c.value else {}
    cheaper = [i for i in c.ids if best in prices and i in prices and prices[i] < prices[best]]
    if c.value and cheaper:
        low = min(cheaper, key=lambda i: prices[i])
        lines.append(msg(lang, "compare.train_cheaper", label=c.labels[low],
                         saving=money(prices[best] - prices[low], c.value.currency)))
    lines += [msg(lang, "compare.train_sharded_cost", label=c.labels[i]) for i in c.ids if sharded[i]]
    return "\n".join(lines)


def _training_winner(c: _Compared, compute: dict[str, float], sharded: dict[str, bool],
                     lang: str) -> tuple[str, str]:
    """The shorter run when the data set is known, else the larger dense BF16 sum — unless that one must shard
    over PCIe and is not clearly faster than one that need not; and the reason, in words."""
    sep = punct(lang, "list")
    if len(c.times) == len(c.ids):
        best = min(c.ids, key=lambda i: c.times[i].hours)
        return best, msg(lang, "compare.train_reason_time", time=duration(c.times[best].hours, lang), others=sep.join(
            f"{c.labels[i]} {duration(c.times[i].hours, lang)}" for i in c.ids if i != best))
    best = max(c.ids, key=lambda i: compute[i])
    whole = [i for i in c.ids if not sharded[i]]
    if sharded[best] and whole:
        alt = max(whole, key=lambda i: compute[i])
        if compute[best] < compute[alt] * _SHARDED_OVER_PCIE_MARGIN:
            best = alt
    others = sep.join(f"{c.labels[i]} {num(compute[i])}" for i in c.ids if i != best)
    return best, msg(lang, "compare.train_reason_whole" if not sharded[best] and any(sharded.values())
                     else "compare.train_reason_compute", tflops=num(compute[best]), others=others)


# a card with under this share of the leader's FP64 rate is no card for a double-precision code (GeForce cards run
# FP64 at 1/64 of FP32)
_FP64_UNFIT_SHARE = 0.1


def _science_key(session: Session) -> str:
    """The rate a scientific code runs at: as the user said, else as the code named computes (GROMACS: FP32),
    else FP64."""
    p = session.profile
    if p.fp64 is None and p.sci_code:
        return "fp64" if scientific_code(p.sci_code).fp64 else "fp32"
    return "fp64" if p.fp64 or p.fp64 is None else "fp32"


def _science_rate(session: Session, g: GPUInfo, key: str) -> float:
    """The card's rate for the code: FP32, or FP64 on the vector units for stencil and sparse codes (CFD, FFT)
    where the catalog gives that figure, else its FP64 peak."""
    code = session.profile.sci_code
    t = g.throughput
    if key == "fp64" and code and scientific_code(code).fp64_kind == "vector" and t.fp64_vector:
        return t.fp64_vector
    return getattr(t, key) or 0.0


def _without_build(session: Session, ids: list[str]) -> list[str]:
    """The compared cards the scientific code named has no GPU build for (VASP is CUDA only: an MI210)."""
    code = scientific_code(session.profile.sci_code) if session.profile.sci_code else None
    if code is None:
        return []
    cat = load_catalog()
    return [i for i in ids if not has_gpu_build(code, cat.gpu(i))]


def _bandwidth_pick(session: Session, runs: list[str], rate: dict[str, float], fastest: str, labels: dict[str, str],
                    gs: dict[str, GPUInfo], counts: dict[str, int], key: str, lang: str) -> str:
    """A memory-bandwidth-bound code ('memory bw bound CFD'): the most bandwidth in all leads, among the cards
    whose FP64 (or FP32) is not far too slow for it."""
    able = [i for i in runs if key != "fp64" or rate[i] >= rate[fastest] * _FP64_UNFIT_SHARE] or runs
    bandwidth = {i: counts[i] * gs[i].bandwidth_gbs for i in able}
    best = max(able, key=lambda i: (bandwidth[i], rate[i]))
    session.compare_pick = best
    others = punct(lang, "list").join(f"{labels[i]} {num(bandwidth[i] / 1000, 1)}" for i in able if i != best)
    lines = [msg(lang, "compare.science_pick_bandwidth", winner=labels[best], tbs=num(bandwidth[best] / 1000, 1),
                 others=others, kind=key.upper(), tflops=num(rate[best]))]
    no_build = [i for i in labels if i not in runs]
    code = scientific_code(session.profile.sci_code) if no_build and session.profile.sci_code else None
    if code is not None:  # 'VASP has GPU builds for CUDA only': the cards left out, said
        sep = punct(lang, "list")
        lines.append(msg(lang, "compare.science_no_build", code=code.name, labels=sep.join(labels[i] for i in no_build),
                         builds=sep.join(msg(lang, f"recommend.code_stack.{s}") for s in code.stacks)))
    return "\n".join(lines)


def _science_pick(session: Session, ids: list[str], labels: dict[str, str], gs: dict[str, GPUInfo],
                  counts: dict[str, int], lang: str) -> str | None:
    """A scientific comparison's verdict: which configuration runs the code fastest on the rate it uses (FP64 or
    FP32, count × the card's rate) — never one the code has no GPU build for — and the cards far too slow at FP64
    to use."""
    key = _science_key(session)
    rate = {i: counts[i] * _science_rate(session, gs[i], key) for i in ids}
    if len(ids) < 2 or not any(rate.values()):
        return None
    no_build = _without_build(session, ids)
    runs = [i for i in ids if i not in no_build] or ids
    best = max(runs, key=lambda i: (rate[i], counts[i] * gs[i].bandwidth_gbs))  # equal rates: the faster memory
    if session.profile.memory_bound:
        return _bandwidth_pick(session, runs, rate, best, labels, gs, counts, key, lang)
    session.compare_pick = best
    sep = punct(lang, "list")
    code = scientific_code(session.profile.sci_code) if no_build and session.profile.sci_code else None
    if code is not None:
        others = sep.join(f"{labels[i]} {num(rate[i])}" for i in runs if i != best)
        lines = [msg(lang, "compare.science_pick_only" if len(runs) == 1 else "compare.science_pick_among",
                     winner=labels[best], code=code.name, tflops=num(rate[best]), kind=key.upper(), others=others),
                 msg(lang, "compare.science_no_build", code=code.name, labels=sep.join(labels[i] for i in no_build),
                     builds=sep.join(msg(lang, f"recommend.code_stack.{s}") for s in code.stacks))]
    else:
        vector = key == "fp64" and any(rate[i] != counts[i] * (gs[i].throughput.fp64 or 0.0) for i in ids)
        lines = [msg(lang, f"compare.science_pick_{'fp64_vector' if vector else key}", winner=labels[best],
                     tflops=num(rate[best]), others=sep.join(f"{labels[i]} {num(rate[i])}" for i in ids if i != best))]
    weak = [i for i in runs if key == "fp64" and (gs[i].throughput.fp64 or 0.0)
            < (gs[i].throughput.fp32 or 0.0) * _FP64_UNFIT_SHARE]  # the card's own FP64 against its FP32
    if weak:
        lines.append(msg(lang, "compare.science_fp64_unfit", labels=sep.join(labels[i] for i in weak)))
    return "\n".join(lines)
