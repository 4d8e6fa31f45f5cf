"""Replies for the answer kinds beyond sizing: spec lookups, concepts, build checks, buy vs rent.

Each composer takes this turn's tool results and returns the reply body, verdict first. All prose
comes from the message files (:mod:`knowledge.messages`); every figure from a tool result or the catalog.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from advisor.compare import per_money
from advisor.compose import citations_block, config_label, without_glosses
from advisor.fmt import (
    gb_short,
    gpu_price_text,
    money,
    money_exact,
    needed_bytes,
    num,
    price_basis,
    punct,
    usable_bytes,
    usd_in,
)
from advisor.nlu import Money
from advisor.planner import tensor_precision, user_currency
from advisor.present.market import china_version, export_figures, market_verdict
from advisor.present.recommend import total_text
from advisor.session import Citation, Profile, ToolCall
from advisor.toolspec import GPUInfo, typed
from knowledge import load_catalog
from knowledge.markets import availability, markets_as_of
from knowledge.messages import has, msg, render
from knowledge.offers import provider_name
from knowledge.schema import GPU, Model, Platform
from knowledge.source_titles import source_title
from tools.catalog_query import AffordableResult, FindGPUsResult
from tools.compat_rules.types import BuildReport
from tools.inference_memory import InferenceMemoryResult
from tools.ownership import MachineCostResult
from tools.pricing import CNY_PER_USD, FX_AS_OF, USD_PER_FOREIGN
from tools.rates import media_tflops
from tools.recommend import Recommendation
from tools.rent import RentVsBuyResult
from tools.rent_choices import RentChoicesResult
from tools.rentals import RentalPricesResult
from tools.scale_out import ScaleOutPlan
from tools.systems import SystemInfoResult
from tools.value import BestValueResult

LIST_LIMIT = 12
QUOTE_CHARS = {"zh": 240, "en": 480}  # about the same reading time: Chinese packs ~2× the meaning per character


SERVICE_LIFE_MONTHS = 60  # GPUs are written off over about five years: a later break-even never comes in practice


def _ok(calls: list[ToolCall], name: str) -> list[ToolCall]:
    return [c for c in calls if c.name == name and c.ok and c.result is not None]


def _tflops(value: float | None) -> str:
    return "—" if value is None else num(value)


def _gpu_card(g: GPUInfo, lang: str, currency: str | None = None) -> list[str]:
    t = g.throughput
    lines = [msg(lang, "spec.card", name=g.name, memory=num(g.memory_gb), memory_type=g.memory_type,
                 bandwidth=num(g.bandwidth_gbs), bf16=_tflops(t.bf16 or t.fp16),
                 fp64=_tflops(t.fp64), tdp=num(g.tdp_w), form=msg(lang, f"spec.form.{g.form_factor}"),
                 cooling=msg(lang, f"spec.cooling.{g.cooling}"))]
    price = gpu_price_text(g, lang, currency)
    if price:
        lines.append(msg(lang, "spec.price_line", price=price[0], basis=price_basis(g, lang, currency)))
    return lines


def _gpu_verdict(g: GPUInfo, attribute: str | None, precision: str | None, lang: str,
                 currency: str | None = None) -> str:
    name = g.name
    t = g.throughput
    if attribute == "support" and precision:
        key = tensor_precision(precision)
        if key in g.unsupported:
            return msg(lang, "spec.support_no", name=name, precision=precision.upper())
        tflops = getattr(t, key, None) if key else None
        if tflops is not None:
            return msg(lang, "spec.support_yes", name=name, precision=precision.upper(), tflops=num(tflops))
        return msg(lang, "spec.support_unknown", name=name, precision=precision.upper())
    if attribute == "link":
        link = g.interconnect
        if link.kind in ("pcie", "none", "ethernet"):
            p2p = "spec.p2p_unknown" if link.p2p is None else ("spec.p2p_yes" if link.p2p else "spec.p2p_no")
            return msg(lang, "spec.link_no", name=name, p2p=msg(lang, p2p))
        label = msg(lang, f"spec.link_kind.{link.kind}") if has(lang, f"spec.link_kind.{link.kind}") else link.kind
        return msg(lang, "spec.link_yes", name=name, link=label, link_bw=num(link.bandwidth_gbs),
                   max_gpus=link.max_gpus)
    if attribute == "ecc":
        return msg(lang, "spec.ecc_yes" if g.ecc else "spec.ecc_no", name=name)
    if attribute == "china":  # from the market table: the rule behind a 'no' or a licence, and its date
        where = g.markets.get("cn") or availability(g.id, "cn")  # gpu_info's status; older results lack it
        rule = msg(lang, f"market.rule.{where.rule.id}") if where.rule else ""
        key = {"available": "spec.china_yes", "restricted": "spec.china_restricted"}.get(where.status, "spec.china_no")
        return msg(lang, key, name=name, as_of=markets_as_of().isoformat(), rule=rule,
                   figures=export_figures(where, lang)) + china_version(where, lang)
    if attribute == "price":
        price = gpu_price_text(g, lang, currency)
        if not price:
            return msg(lang, "spec.price_unknown", name=name)
        return msg(lang, "spec.price", name=name, price=price[0], basis=price_basis(g, lang, currency))
    if attribute == "bandwidth":
        return msg(lang, "spec.bandwidth", name=name, bandwidth=num(g.bandwidth_gbs), memory=num(g.memory_gb),
                   memory_type=g.memory_type)
    if attribute == "power":
        return msg(lang, "spec.power", name=name, tdp=num(g.tdp_w))
    if attribute == "cooling":
        return msg(lang, "spec.cooling_line", name=name, cooling=msg(lang, f"spec.cooling.{g.cooling}"),
                   form=msg(lang, f"spec.form.{g.form_factor}"), slots=num(g.slot_width))
    if attribute == "architecture":
        return msg(lang, "spec.architecture", name=name, arch=g.architecture or "?",
                   cc=g.compute_capability or "—")
    if attribute == "pcie":
        return msg(lang, "spec.pcie", name=name, gen=g.pcie_gen, lanes=g.pcie_lanes)
    if attribute == "compute":
        parts = [f"{k.upper()} {num(getattr(t, k))} TFLOPS" for k in ("fp64", "fp32", "bf16", "fp8", "fp4")
                 if getattr(t, k)]
        return msg(lang, "spec.compute", name=name, what=", ".join(parts))
    return msg(lang, "spec.memory", name=name, memory=num(g.memory_gb), memory_type=g.memory_type,
               bandwidth=num(g.bandwidth_gbs))


def _model_lines(m: Model, lang: str) -> list[str]:
    active = msg(lang, "spec.model_active", active=num(m.active_params_b)) if m.active_params_b else ""
    return [msg(lang, "spec.model", name=m.name, params=num(m.params_b), active=active, layers=m.layers,
                attention=str(m.attention.kind).upper(), context=num(m.max_context))]


def _source(entry: GPU | Model | Platform, lang: str) -> str:
    titles = list(dict.fromkeys(source_title(str(s)) for s in entry.sources[:2]))
    return msg(lang, "spec.source", sources="; ".join(titles),
               as_of=entry.as_of or "?", confidence=_confidence(getattr(entry, "confidence", None), lang))


def _system_block(system: SystemInfoResult, lang: str, attribute: str | None, more: list[str],
                  budget: Money | None, rack: tuple[float, int] | None, region: str | None,
                  estimate: MachineCostResult | None) -> list[str]:
    """One system's answer, what was asked first: its China status (asked, or for a buyer in China when its cards
    are not freely sold there), a rack's fit, its power, a budget against its price; then the system itself."""
    out: list[str] = []
    status = availability(system.market_gpu, "cn") if system.market_gpu else None
    figures_asked = rack is not None or attribute in ("power", "cooling")  # a follow-up on its power: that first
    if status is not None and ("china" in (attribute, *more)
                               or (region == "cn" and status.status != "available" and not figures_asked)):
        out.append(market_verdict(status, load_catalog().gpu(status.gpu_id).name, "cn", lang))
    if rack is not None and system.max_power_w:  # 'our racks are 15 kW air cooled, can we fit two of those?'
        out.append(_rack_fit(system, rack[0], rack[1], lang))
    elif attribute in ("power", "cooling") and system.max_power_w:  # 'how much power, can we air cool it?'
        out.append(msg(lang, "spec.system.power_lead", name=system.name_zh if lang == "zh" and system.name_zh
                       else system.name, kw=num(system.max_power_w / 1000),
                       cooling=msg(lang, f"spec.system.cooling_lead.{system.cooling or 'unknown'}")))
    if budget is not None and system.price is not None and budget.currency == system.currency:
        gap = budget.amount - system.price.amount  # 'budget $3.5M, does it cover it?': the answer leads
        out.append(msg(lang, "spec.system.budget_ok" if gap >= 0 else "spec.system.budget_short",
                       budget=money(budget.amount, budget.currency), gap=money(abs(gap), budget.currency))
                   + (msg(lang, "spec.system.budget_more") if system.form == "rack" else ""))
    return [*out, *system_lines(system, lang, estimate)]


def _rack_fit(r: SystemInfoResult, rack_kw: float, units: int, lang: str) -> str:
    """How many of a system a rack's power holds, and whether its cooling suits the room."""
    kw = (r.max_power_w or 0) / 1000
    fits = int(rack_kw // kw) if kw else 0
    name = r.name_zh if lang == "zh" and r.name_zh else r.name
    key = "spec.system.rack_fits" if fits >= units else "spec.system.rack_short"
    if r.form == "rack" and fits < units:  # a rack system is its own rack: the room's rack power is what it lacks
        key = "spec.system.rack_system_short"
    line = msg(lang, key, name=name, kw=num(kw), units=units, total=num(kw * units), rack=num(rack_kw), fits=fits,
               gap=num(kw * units - rack_kw))
    if r.cooling == "liquid":
        line += msg(lang, "spec.system.rack_liquid")
    return line


def _systems_side_by_side(a: SystemInfoResult, b: SystemInfoResult, lang: str) -> str:
    """'DGX H200 vs DGX B200': card memory, price and power of the two in one line."""
    def mem(r: SystemInfoResult) -> str:
        return f"{num(r.gpu_memory_total_bytes / 1e9)} GB" if r.gpu_memory_total_bytes else "—"

    def price(r: SystemInfoResult) -> str:
        return money(r.price.amount, r.currency) if r.price else msg(lang, "spec.system.unpriced")

    def power(r: SystemInfoResult) -> str:
        return f"{num(r.max_power_w / 1000)} kW" if r.max_power_w else "—"

    def name(r: SystemInfoResult) -> str:
        return r.name_zh if lang == "zh" and r.name_zh else r.name

    return msg(lang, "spec.system.versus", a=name(a), b=name(b), mem_a=mem(a), mem_b=mem(b), price_a=price(a),
               price_b=price(b), power_a=power(a), power_b=power(b), gpus_a=f"{a.gpu_count}× {a.gpu}",
               gpus_b=f"{b.gpu_count}× {b.gpu}") + "\n"


def system_lines(r: SystemInfoResult, lang: str, estimate: MachineCostResult | None = None) -> list[str]:
    """A server or rack system: its cards and their memory together and its price first, then what is inside,
    and the sources with their date."""
    cur = r.currency
    memory = (msg(lang, "spec.system.memory", total=f"{num(r.gpu_memory_total_bytes / 1e9)} GB")
              if r.gpu_memory_total_bytes else "")
    price = ""
    if r.price is not None:
        as_of = msg(lang, "spec.system.undated", as_of=r.price.as_of) if r.price.undated else r.price.as_of
        converted = next((a.params.get("rate") for a in r.assumptions if a.id == "perf.system.converted"), None)
        kind = msg(lang, f"spec.system.kind.{r.price.kind}") + (
            msg(lang, "spec.system.converted", rate=converted) if converted else "")
        basis = msg(lang, "spec.basis", kind=kind, as_of=as_of,
                    stale=msg(lang, "spec.stale") if r.price.stale and not r.price.undated else "")
        price = msg(lang, "spec.system.price", price=money(r.price.amount, cur), basis=basis)
    elif estimate is not None and estimate.total_price is not None:
        price = msg(lang, "spec.system.estimated", total=money(estimate.total_price, estimate.currency),
                    cards=money(estimate.cards_price, estimate.currency), host=money(estimate.host_price,
                                                                                    estimate.currency))
    else:
        price = msg(lang, "spec.system.no_price")
    name = r.name_zh if lang == "zh" and r.name_zh else r.name
    card = r.gpu_zh if lang == "zh" and r.gpu_zh else r.gpu
    out = [msg(lang, "spec.system.head", name=name, count=num(r.gpu_count), gpu=card, memory=memory, price=price)]
    parts = [msg(lang, "spec.system.cpu", cpu=r.cpu)] if r.cpu else []
    if r.memory_bytes:
        parts.append(msg(lang, "spec.system.ram", ram=f"{num(r.memory_bytes / 1e9)} GB"))
    if r.max_power_w:
        parts.append(msg(lang, "spec.system.power", kw=num(r.max_power_w / 1000)))
    if r.cooling:
        parts.append(msg(lang, f"spec.system.cooling.{r.cooling}"))
    if r.rack_units and r.form == "server":
        parts.append(msg(lang, "spec.system.units", units=r.rack_units))
    if r.form == "rack":
        parts.append(msg(lang, "spec.system.rack"))
    if parts:
        out.append(msg(lang, "spec.system.inside", parts=punct(lang, "list").join(parts)))
    if r.price_per_gpu and r.gpu_count > 1:
        out.append(msg(lang, "spec.system.per_gpu", price=money(r.price_per_gpu, cur)))
    if r.grey_market:
        out.append(msg(lang, "spec.system.grey"))
    hosts = [re.sub(r"^https?://(?:www\.)?([^/]+).*$", r"\1", u) for u in r.sources[:3]]
    out.append(msg(lang, "spec.system.source", sources=", ".join(dict.fromkeys(hosts)), as_of=r.as_of,
                   confidence=_confidence(r.confidence, lang)))
    return [*out, ""]


def compose_spec(calls: list[ToolCall], attribute: str | None, precision: str | None, lang: str,
                 more: list[str] | None = None, budget: Money | None = None, currency: str | None = None,
                 rack: tuple[float, int] | None = None, region: str | None = None,
                 site_kw: float | None = None) -> str:
    """Verdict first: the fact asked for, per GPU or model (and each further fact asked of one GPU); then one
    compact card line and the source."""
    out: list[str] = []
    systems = [typed(call, SystemInfoResult) for call in _ok(calls, "system_info")]
    costs = [typed(call, MachineCostResult) for call in _ok(calls, "machine_cost")]
    built = {(c.gpu, c.count): c for c in costs}  # an unpriced server's cards and host at catalog prices
    if len(systems) == 2:  # 'DGX H200 vs DGX B200': the two side by side first
        out.append(_systems_side_by_side(systems[0], systems[1], lang))
    for system in systems:
        if site_kw and system.max_power_w:  # '1MW of IT power, how many racks is that?'
            out.append(msg(lang, "spec.system.site_fits", site=num(site_kw), name=system.name_zh if lang == "zh"
                           and system.name_zh else system.name, fits=int(site_kw * 1000 // system.max_power_w),
                           kw=num(system.max_power_w / 1000)))
        out += _system_block(system, lang, attribute, more or [], budget, rack, region,
                             built.pop((system.gpu_id, system.gpu_count), None)
                             if system.price is None and system.gpu_id else None)
    for cost in built.values():  # the price of several cards asked: cards and host together first
        if cost.total_price is not None:
            out.append(msg(lang, "asks.build_cost" if cost.host_price else "spec.cards_cost",
                           config=config_label(cost.gpu, cost.count, lang), cards=money(cost.cards_price,
                                                                                         cost.currency),
                           hosts=money(cost.host_price, cost.currency), total=money(cost.total_price, cost.currency)))
    for call in _ok(calls, "find_gpus"):
        out += _filter_lines(typed(call, FindGPUsResult), lang)
    gpus = [typed(c, GPUInfo) for c in _ok(calls, "gpu_info")]
    models = [typed(c, Model) for c in _ok(calls, "model_info")]
    for g in gpus:
        out.append(_gpu_verdict(g, attribute, precision, lang, currency))
    if len(gpus) == 1:
        said = {attribute, "bandwidth"} if attribute == "memory" else {attribute}  # the memory line has bandwidth
        out += [_gpu_verdict(gpus[0], extra, None, lang, currency) for extra in more or [] if extra not in said]
    if len(gpus) == 1:
        out += ["", *_gpu_card(gpus[0], lang, currency), _source(gpus[0], lang)]
    elif gpus:
        out += ["", *[_source(g, lang) for g in gpus]]
    for m in models:
        out += [*_model_lines(m, lang), _source(m, lang)]
    for c in _ok(calls, "platform_info"):
        pf = typed(c, Platform)
        out += [msg(lang, "spec.platform", name=pf.name, lanes=pf.cpu_pcie_lanes, gen=pf.pcie_gen,
                    slot_lanes=pf.gpu_slot_lanes, channels=pf.memory_channels * pf.sockets,
                    memory_type=pf.memory_type, max_memory=num(pf.max_memory_gb)),
                msg(lang, "spec.platform_gpus", x16=pf.gpu_slot_lanes // 16, x8=pf.gpu_slot_lanes // 8),
                _source(pf, lang)]
    return "\n".join(out).strip() or msg(lang, "spec.unknown_entity")


def _filter_lines(r: FindGPUsResult, lang: str) -> list[str]:
    crit = r.criteria
    if "supports" in crit:
        what = msg(lang, "spec.what.supports", precision=str(crit["supports"]).upper())
    elif "feature" in crit:
        what = msg(lang, f"spec.what.{crit['feature']}")
    elif "min_memory_gb" in crit:
        what = msg(lang, "spec.what.min_memory", gb=num(float(crit["min_memory_gb"])))
    elif "exclude_vendors" in crit:
        what = msg(lang, "spec.what.exclude", vendors=str(crit["exclude_vendors"]))
    else:
        what = msg(lang, "spec.what.domestic")
    matches = r.matches
    if not matches:
        return [msg(lang, "spec.filter_none", what=what)]
    out = [msg(lang, "spec.filter_head", count=len(matches), what=what)]
    for e in matches[:LIST_LIMIT]:
        tf = f", {num(e.tflops)} TFLOPS" if e.tflops else ""
        out.append(f"- {e.name} ({num(e.memory_gb)} GB{tf})")
    if len(matches) > LIST_LIMIT:
        out.append(msg(lang, "spec.filter_more", count=len(matches) - LIST_LIMIT))
    if r.unknown:
        out.append(msg(lang, "spec.filter_unknown", names=", ".join(r.unknown[:6])))
    return out


# ----------------------------------------------------------------------------- concepts

# a sentence ends at 。！？ or at . ! ? not inside a number ('85.9 GB', 'compute capability 8.9')
_SENTENCE = re.compile(r"(?:[^。！？.!?\n]|(?<=\d)\.(?=\d)|\.(?=[a-z0-9_]))+[。！？.!?]?")
_WORD = re.compile(r"[a-z0-9][a-z0-9.+\-]*|[\u3400-\u9fff]", re.IGNORECASE)


def _terms(text: str) -> set[str]:
    """Query terms: Latin words and Chinese character bigrams."""
    tokens = _WORD.findall(text.lower())
    words = {w for w in tokens if len(w) > 1}
    cjk = [w for w in tokens if len(w) == 1 and "\u3400" <= w <= "\u9fff"]
    return words | {a + b for a, b in itertools.pairwise(cjk)}


def quote(passage: str, query: str, limit: int = QUOTE_CHARS["en"]) -> str:
    """The passage's sentences that share most terms with the query, in their own order, within ``limit``."""
    sentences = [s.strip() for s in _SENTENCE.findall(passage) if s.strip()]
    if not sentences:
        return ""
    want = _terms(query)
    scored = sorted(range(len(sentences)), key=lambda i: (-len(_terms(sentences[i]) & want), i))
    keep: list[int] = []
    size = 0
    for i in scored:
        if size + len(sentences[i]) > limit and keep:
            break
        keep.append(i)
        size += len(sentences[i])
    joiner = "" if re.search(r"[\u3400-\u9fff]", passage) else " "
    return joiner.join(sentences[i] for i in sorted(keep))


def compose_concept(citations: list[Citation], query: str, lang: str) -> str:
    """The best passage's own words, quoted with its citation; the next passages named."""
    if not citations:
        return msg(lang, "concept.none")
    best = citations[0]
    title = best.title.split(" — ")[-1] if " — " in best.title else best.title
    limit = QUOTE_CHARS["zh" if re.search(r"[\u3400-\u9fff]", best.text) else "en"]
    quoted = quote(best.text, query, limit)
    if lang == "en":
        title, quoted = without_glosses(title), without_glosses(quoted)
    out = [msg(lang, "concept.head", title=title), "", f"> {quoted} [{best.id}]"]
    others = [c for c in citations[1:3] if c.title != best.title]
    if others:
        out += ["", msg(lang, "concept.more", titles="; ".join(
            f"{without_glosses(c.title) if lang == 'en' else c.title} [{c.id}]" for c in others))]
    out += ["", *citations_block(citations[:3], lang)]
    return "\n".join(out)


# ----------------------------------------------------------------------------- builds


# The findings of check_build (tools/compat_rules) that answer each build topic the user can ask about.
BUILD_TOPIC_FINDINGS: dict[str, tuple[str, ...]] = {
    "ram": ("system-ram",),
    "fit": ("memory-fit", "memory-offload", "memory-headroom"),
    "slots": ("slots-width-count", "slots-risers", "fit-gpu-length", "form-sxm-oam-baseboard"),
    "lanes": ("pcie-lanes", "pcie-generation", "pcie-m2-lane-sharing"),
    "wall": ("power-machine-cap", "power-wall-circuit"),
    "psu": ("power-psu-headroom", "power-multi-psu", "power-vendor-minimum", "power-connector-12v-2x6",
            "power-transient-spikes"),
    "cooling": ("cooling-open-air-stacking", "cooling-passive-in-tower"),
    "link": ("nvlink-bridge", "p2p-geforce", "interconnect-pcie-only", "interconnect-fabric",
             "nvlink-china-variants"),
}
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def compose_build(calls: list[ToolCall], gpus_label: str, cpu_unknown: str | None, lang: str,
                  assumed_card: str | None = None, topic: str | None = None) -> str:
    """Verdict, the blocking findings with their fixes, the warnings, then the totals. A ``topic`` the user
    asked about (system RAM, slots, lanes, wall circuit, PSU, cooling, links) leads: its findings, or a line that
    it is fine, then the rest of the check."""
    checks = _ok(calls, "check_build")
    if not checks:
        return msg(lang, "build.need_gpus")
    r = typed(checks[0], BuildReport)
    wanted = BUILD_TOPIC_FINDINGS.get(topic or "", ())
    asked = sorted((f for f in r.findings if f.id in wanted), key=lambda f: _SEVERITY_ORDER[f.severity])
    errors = [f for f in r.findings if f.severity == "error" and f not in asked]
    warnings = [f for f in r.findings if f.severity == "warning" and f not in asked]
    tot = r.totals
    if topic in BUILD_TOPIC_FINDINGS:  # the asked topic is the verdict; the rest of the check follows it
        if asked and (asked[0].severity != "info" or topic in ("ram", "fit")):  # their notes are the verdict
            severity: str = asked[0].severity
            if severity == "warning" and errors:  # not 'workable' while another part of the build blocks it
                severity = "warning_elsewhere_blocked"
            head = [msg(lang, f"build.topic_verdict.{severity}",
                        text=render(asked[0].message, lang)),
                    *[f"- {render(f.message, lang)}" for f in asked[1:3]]]
            fix = asked[0].fix
            if fix and asked[0].severity != "info":
                head.append(msg(lang, "build.fix", fix=fix))
            out = [*head, msg(lang, "build.rest_ok", gpus=gpus_label) if not errors else
                   msg(lang, "build.rest_problems", gpus=gpus_label, count=len(errors))]
        else:
            have = checks[0].arguments.get("psu_w")
            other = checks[0].arguments.get("other_load_w") or 0
            key = ("machines_known" if topic == "wall" and tot.continuous_limit_w and tot.machines > 1 else
                   "wall_known_shared" if topic == "wall" and tot.continuous_limit_w and other else
                   "wall_known" if topic == "wall" and tot.continuous_limit_w else
                   "psu_known" if topic == "psu" and have else
                   "slots_baseboard" if topic == "slots" and tot.gpu_count and not tot.slots_needed else topic)
            head = [msg(lang, f"build.topic_ok.{key}", gpus=gpus_label, count=tot.gpu_count, have=num(have or 0),
                        slots=num(tot.slots_needed or 0), lanes=tot.lanes_needed, wall=num(tot.wall_draw_w),
                        limit=num(tot.continuous_limit_w or 0), psu=num(tot.recommended_psu_w), other=num(other),
                        machines=tot.machines, circuits=checks[0].arguments.get("circuits", 1)),
                    *[f"- {render(f.message, lang)}" for f in asked[:1]]]
            if errors and key in ("psu", "psu_known"):  # 'no power problem found' never leads a build whose power
                # elsewhere blocks it: the problems do
                fine = msg(lang, f"build.topic_fine.{key}", psu=num(tot.recommended_psu_w), have=num(have or 0)) \
                    if has(lang, f"build.topic_fine.{key}") else head[0].replace("**", "")
                out = [msg(lang, "build.problems", gpus=gpus_label, count=len(errors)),
                       *_problem_lines(errors, lang), "", fine, *head[1:]]
                errors = []
            else:
                out = [*head, msg(lang, "build.rest_ok", gpus=gpus_label)]
        warnings = []  # what was not asked stays to the blocking problems and the totals
    else:
        out = [msg(lang, "build.ok", gpus=gpus_label) if not errors else
               msg(lang, "build.problems", gpus=gpus_label, count=len(errors))]
    out += _problem_lines(errors, lang)
    if warnings:
        out += ["", msg(lang, "build.warnings"), *[f"- {render(f.message, lang)}"
                                                   for f in warnings[:3]]]
    key = ("build.totals" if tot.slots_needed else "build.totals_system" if tot.platform_overhead_w == 0
           else "build.totals_board")  # PCIe cards; a complete unified-memory system; modules on a baseboard
    out += ["", msg(lang, key, gpus=num(tot.gpu_power_w),
                    system=num(tot.system_power_w),
                    wall=num(tot.wall_draw_w),
                    psu=num(tot.recommended_psu_w), lanes=tot.lanes_needed, slots=num(tot.slots_needed))]
    if cpu_unknown:
        out.append(msg(lang, "build.cpu_unknown", name=cpu_unknown))
    if assumed_card:
        out.append(msg(lang, "build.assumed.card", gpu=assumed_card))
    return "\n".join(out)


def _problem_lines(errors: list[Any], lang: str) -> list[str]:
    """The blocking findings (up to four), each with its fix."""
    out = []
    for f in errors[:4]:
        out.append(f"- {render(f.message, lang)}")
        if f.fix:
            out.append(f"  {msg(lang, 'build.fix', fix=f.fix)}")
    return out


def network_lines(calls: list[ToolCall], lang: str, p: Profile) -> str:
    """'What network do two 8-GPU servers need?': the fabric, ports and bandwidth per GPU, how the nodes are
    cabled, what to buy and its cost in the user's currency — ahead of the per-node build check."""
    found = _ok(calls, "plan_network")
    if not found:
        return ""
    r = typed(found[0], ScaleOutPlan)
    cur = user_currency(p, lang, ("USD", "CNY"))
    gpu = load_catalog().gpu(found[0].arguments["gpu"]).name
    parts = [msg(lang, "network.nics_bought", count=r.nics_to_buy, nic=r.nic) if r.nics_to_buy else
             msg(lang, "network.nics_included", nic=r.nic),
             msg(lang, "network.links", count=r.links, cost=usd_in(r.links_usd, cur) if r.links_usd is not None else
                 msg(lang, "network.unpriced"))]
    if r.switches:
        parts.append(msg(lang, "network.switches", count=r.switches, switch=r.switch,
                         cost=usd_in(r.switches_usd, cur) if r.switches_usd is not None else
                         msg(lang, "network.unpriced")))
    out = _sync_lines(r, found[0].arguments, lang)
    if out and r.sync_s_have is not None and r.sync_s_have <= SLOW_SYNC_S:
        return "\n".join([*out, ""]) + "\n"  # the network they have will do: nothing to buy
    out += [msg(lang, f"network.verdict.{r.topology}", nodes=r.nodes, per_node=r.gpus // r.nodes, gpu=gpu,
               fabric=r.fabric, ports=r.ports_per_node, gbps=num(r.port_gbps), per_gpu=num(r.per_gpu_gbps)),
           msg(lang, "network.why_training" if r.handoff_tokens_per_s is None else "network.why_inference",
               tokens=num(r.handoff_tokens_per_s or 0)),
           msg(lang, "network.parts", parts="; ".join(parts) if lang == "en" else "；".join(parts),
               total=usd_in(r.cost_usd, cur), more=msg(lang, "network.unpriced_more") if r.unpriced else ""),
           msg(lang, "network.source", kind=msg(lang, f"spec.kind.{r.price_kind}"), confidence=r.confidence,
               as_of=r.as_of), ""]
    return "\n".join(out) + "\n"


SLOW_SYNC_S = 10.0  # an exchange this long per step is felt in the run time; below a second it is hidden


def _sync_lines(r: ScaleOutPlan, args: dict[str, Any], lang: str) -> list[str]:
    """The network the nodes have, judged by how long one gradient exchange takes on it (and on the plan's)."""
    if r.sync_s_have is None or r.sync_bytes_per_node is None:
        return []
    key = "network.sync_slow" if r.sync_s_have > SLOW_SYNC_S else "network.sync_ok"
    per = msg(lang, "network.per_micro_batch" if args.get("sharded_across_nodes") else "network.per_step")
    return [msg(lang, key, gbps=num(float(args.get("have_gbps_per_node") or 0)), gb=num(r.sync_bytes_per_node / 1e9),
                s=num(r.sync_s_have), planned=num(r.sync_s_planned or 0, 1), per=per)]


# ----------------------------------------------------------------------------- buy vs rent


def compose_rent(calls: list[ToolCall], months: float | None, hours: float, lang: str,
                 hourly_first: bool = False, daily_first: bool = False, offers_first: bool = False,
                 monthly_first: bool = False, total_hours: float | None = None) -> str:
    """Which is cheaper for the project (or when buying pays off), with the monthly figures; the hourly rent leads
    when that is what was asked ('租一小时多少钱'), the providers' offers when where to rent was ('哪家便宜')."""
    found = _ok(calls, "rent_vs_buy")
    if not found:
        return msg(lang, "rent.need_gpu")
    r = typed(found[0], RentVsBuyResult)
    cur = r.currency
    what = f"{r.count}× {r.gpu}"
    rented = f"{r.rented_count}× {r.rented_gpu}"  # the card rented: the one bought unless another was named
    if r.purchase is None or r.rent_per_month is None:
        return msg(lang, "rent.unknown", name=r.gpu)
    offers_first = offers_first and not (hourly_first or daily_first or monthly_first or total_hours)
    out: list[str] = rental_offer_lines(calls, lang, lead=True) if offers_first else []
    if total_hours:  # '500 GPU-hours of A100, cheapest option?': the job at the typical rate and the cheapest
        out += _total_hours_lines(calls, total_hours, lang)
    said = {a.id: a for a in r.assumptions}  # the buyer's own rate or purchase price, not the catalog's
    rate_note = said.get("perf.rent.rate_offers")
    offers = rate_note.params.get("count") if rate_note else 0
    listed = [typed(c, RentalPricesResult) for c in _ok(calls, "rental_prices")][:1]
    only = next((o for lr in listed for o in lr.offers if o.billing in ("on-demand", "monthly")
                 and (o.region == "cn") == (lr.market == "cn")), None)  # the one provider-run offer behind a rate
    named = said.get("perf.rent.rate_provider")
    basis = msg(lang, "rent.basis.provider", provider=provider_name(str(named.params.get("provider")), lang),
                billing=msg(lang, f"rent.billing.{named.params.get('billing')}")) if named else \
        msg(lang, "rent.basis.offers", count=offers) if offers and offers != 1 else \
        (msg(lang, "rent.basis.offer_one", provider=provider_name(only.provider, lang)) if only
         else msg(lang, "rent.basis.offer_one_unnamed")) if offers \
        else msg(lang, "rent.basis.catalog")
    if monthly_first and r.rent_per_month:
        flat = "perf.rent.by_the_month" in said  # 包月: the month is paid in full
        out.append(msg(lang, "rent.monthly_flat_verdict" if flat else "rent.monthly_verdict",
                       monthly=money(r.rent_per_month, cur), what=rented,
                       hours=num(hours), hourly=money_exact(r.rent_per_hour or 0, cur), basis=basis))
    elif daily_first and r.rent_per_day:
        out.append(msg(lang, "rent.daily_verdict", daily=money_exact(r.rent_per_day, cur), what=rented,
                       hourly=money_exact(r.rent_per_hour or 0, cur), basis=basis))
    elif hourly_first and r.rent_per_hour:
        out.append(msg(lang, "rent.hourly_verdict", hourly=money_exact(r.rent_per_hour, cur), what=rented,
                       basis=basis))
    if months is not None and r.cheaper is not None:
        key = "rent.verdict_rent" if r.cheaper == "rent" else "rent.verdict_buy"
        out.append(msg(lang, key, months=num(months), rent=money(r.project_rent, cur),
                       buy=money(r.project_buy, cur), what=what))
    elif r.break_even_months is not None and r.break_even_months > SERVICE_LIFE_MONTHS:
        out.append(msg(lang, "rent.verdict_past_life", hours=num(hours), months=num(r.break_even_months),
                       what=what, years=num(SERVICE_LIFE_MONTHS / 12)))
    elif r.break_even_months is not None:
        out.append(msg(lang, "rent.verdict_break_even", hours=num(hours), months=num(r.break_even_months),
                       what=what))
    else:
        out.append(msg(lang, "rent.verdict_never", hours=num(hours), what=rented))
    out.append(msg(lang, "rent.figures", buy=money(r.purchase, cur), rent=money(r.rent_per_month, cur),
                   energy=money(r.energy_per_month, cur), hours=num(hours)))
    if r.rent_per_hour and not (hourly_first or daily_first):
        key = "rent.hourly_quoted" if "perf.rent.rate_quoted" in said else "rent.hourly"
        out.append(msg(lang, key, hourly=money_exact(r.rent_per_hour, cur), what=rented, basis=basis))
    if months is not None and r.break_even_months is not None:
        out.append(msg(lang, "rent.break_even", months=num(r.break_even_months)))
    if r.host and "perf.rent.price_quoted" not in said:
        out.append(msg(lang, "rent.host", host=money(r.host, cur)))
    if "perf.rent.system" in said:  # bought as the catalogued complete server of these cards
        system = said["perf.rent.system"].params
        as_of = system.get("as_of")
        out.append(msg(lang, "rent.system", name=system.get("name_zh" if lang == "zh" else "name"),
                       as_of=msg(lang, "spec.system.undated", as_of=as_of) if system.get("undated") else as_of,
                       kind=msg(lang, f"spec.system.kind.{system.get('kind')}")))
    if "perf.rent.rate_quoted" not in said and not offers_first:
        out += rental_offer_lines(calls, lang)  # the named providers first, then the cheapest
    return "\n".join(out).strip()


OFFERS_SHOWN = 5


def _total_hours_lines(calls: list[ToolCall], hours: float, lang: str) -> list[str]:
    """A total of GPU-hours priced at the market's typical rate and at the cheapest recorded offer."""
    found = _ok(calls, "rental_prices")
    if not found:
        return []
    r = typed(found[0], RentalPricesResult)
    if r.typical_per_gpu_hour is None or not r.offers:
        return []
    cheap = min(r.offers, key=lambda o: o.per_gpu_hour)
    return [msg(lang, "rent.total_hours", hours=num(hours), gpu=r.gpu,
                cost=money(hours * r.typical_per_gpu_hour, r.currency),
                rate=money_exact(r.typical_per_gpu_hour, r.currency), provider=provider_name(cheap.provider, lang),
                billing=msg(lang, f"rent.billing.{cheap.billing}"), cheap=money_exact(cheap.per_gpu_hour, r.currency),
                cheap_cost=money(hours * cheap.per_gpu_hour, r.currency))]
CHOICES_SHOWN = 5


def compose_rent_choices(calls: list[ToolCall], lang: str, said: str | None = None, size: float | None = None,
                         daily: bool = False) -> str:
    """Which GPU to rent for the job: the cheapest that runs it first, then the others side by side. ``said``,
    ``size``: a model known only by a name the catalog lacks or by its size, sized through a stand-in."""
    found = _ok(calls, "rent_choices")
    if not found:
        return msg(lang, "rent.need_gpu")
    r = typed(found[0], RentChoicesResult)
    if not r.choices:
        return msg(lang, "rent.choices_none", model=r.model)
    best, cur = r.choices[0], r.currency
    job = msg(lang, "rent.choices_job", hours=num(best.job_hours), cost=money(best.job_cost, cur)) \
        if best.job_cost is not None else ""
    if daily:  # '租卡一天大概花多少': a day around the clock
        job += msg(lang, "rent.choices_day", day=money(best.hourly * 24, cur))
    model = said or (msg(lang, "rent.sized_as", x=num(size), model=r.model) if size else r.model)
    out = [msg(lang, "rent.choices_verdict", model=model, count=best.count, gpu=best.gpu,
               hourly=money_exact(best.hourly, cur), provider=provider_name(best.cheapest_provider, lang),
               cheapest=money_exact(best.cheapest_per_gpu_hour, cur), job=job), "",
           msg(lang, "rent.choices_head")]
    for i, c in enumerate(r.choices[:CHOICES_SHOWN], 1):
        out.append(f"| {i} | {c.count}× {c.gpu} | {money_exact(c.hourly, cur)} | "
                   f"{provider_name(c.cheapest_provider, lang)} "
                   f"{money_exact(c.cheapest_per_gpu_hour, cur)} ({c.cheapest_as_of}) | "
                   f"{num(c.tokens_per_s) if c.tokens_per_s else '—'} | "
                   f"{money(c.job_cost, cur) if c.job_cost is not None else '—'} |")
    out += ["", *[render(a, lang) for a in r.assumptions if a.id == "perf.rent_choices.no_data"]]
    return "\n".join(out).strip()


def rental_offer_lines(calls: list[ToolCall], lang: str, lead: bool = False) -> list[str]:
    """Where the GPU can be rented: the cheapest recorded offers (the providers named first), each with its
    provider, billing and date; ``lead``: they answer the question, so a verdict line names the cheapest."""
    found = _ok(calls, "rental_prices")
    if not found:
        return []
    r = typed(found[0], RentalPricesResult)
    missing = ([msg(lang, "rent.offers_named_missing", providers=punct(lang, "list").join(
        provider_name(n, lang) for n in r.named_without_offer),
                    gpu=r.gpu)] if r.named_without_offer else [])
    if not r.offers:
        return [*missing, msg(lang, "rent.offers_none", gpu=r.gpu), ""]
    shown = r.offers[:OFFERS_SHOWN]
    head: list[str] = []
    named = [o for o in r.offers if o.named]
    if lead and named:
        reachable = [o for o in r.offers if r.market == "cn" or o.region != "cn"] or r.offers
        mine, best = min(named, key=lambda o: o.per_gpu_hour), min(reachable, key=lambda o: o.per_gpu_hour)
        head = [msg(lang, "rent.offers_verdict_named", gpu=r.gpu, provider=provider_name(mine.provider, lang),
                    billing=msg(lang, f"rent.billing.{mine.billing}"),
                    price=money_exact(mine.per_gpu_hour, r.currency), as_of=mine.as_of,
                    best_provider=provider_name(best.provider, lang),
                    best_price=money_exact(best.per_gpu_hour, r.currency)), *missing]
        missing = []
    elif lead:
        cheapest = min([o for o in r.offers if r.market == "cn" or o.region != "cn"] or r.offers,
                       key=lambda o: o.per_gpu_hour)
        head = [msg(lang, "rent.offers_verdict", gpu=r.gpu, provider=provider_name(cheapest.provider, lang),
                    billing=msg(lang, f"rent.billing.{cheapest.billing}"),
                    price=money_exact(cheapest.per_gpu_hour, r.currency), as_of=cheapest.as_of,
                    typical=money_exact(r.typical_per_gpu_hour or 0, r.currency), count=r.typical_count)
                if r.typical_count else
                msg(lang, "rent.offers_verdict_one", gpu=r.gpu, provider=provider_name(cheapest.provider, lang),
                    billing=msg(lang, f"rent.billing.{cheapest.billing}"),
                    price=money_exact(cheapest.per_gpu_hour, r.currency), as_of=cheapest.as_of), *missing]
        missing = []
    local_first = r.market == "cn" and any(o.region == "cn" for o in shown) and any(o.region != "cn" for o in shown)
    title = "rent.offers_head_named" if named else "rent.offers_head_local" if local_first else "rent.offers_head"
    out = [*head, *missing, "", msg(lang, title, gpu=r.gpu, shown=len(shown), total=r.offers_total)]
    for o in shown:
        out.append(msg(lang, "rent.offer", provider=provider_name(o.provider, lang),
                       billing=msg(lang, f"rent.billing.{o.billing}"),
                       instance=msg(lang, "rent.offer_instance", count=o.gpus_per_instance)
                       if o.gpus_per_instance > 1 else "",
                       price=money_exact(o.per_gpu_hour, r.currency),
                       monthly=msg(lang, "rent.offer_monthly") if o.monthly_only else "", as_of=o.as_of,
                       stale=msg(lang, "rent.offer_stale") if o.stale else "",
                       abroad=msg(lang, "rent.offer_abroad") if r.market == "cn" and o.region != "cn" else ""))
    return [*out, ""] if lead else out


# ----------------------------------------------------------------------------- best value without a model


def compose_best_value(calls: list[ToolCall], lang: str) -> str:
    """The cards that give the most for the money, ranked, with memory and bandwidth per price side by side."""
    found = _ok(calls, "best_value")
    if not found or not typed(found[0], BestValueResult).ranked:
        return msg(lang, "value.none")
    r = typed(found[0], BestValueResult)
    cur, metric = r.currency, r.metric
    unit = msg(lang, f"compare.value_unit.{cur}")
    first = r.ranked[0]
    second = "bandwidth_gbs" if metric == "memory_gb" else "memory_gb"  # the other figure people weigh
    out = [msg(lang, "value.head", metric=msg(lang, f"compare.value_metric.{metric}"), unit=unit,
               name=first.name, price=money(first.price, cur),
               value=per_money(metric, first.per_unit[metric])),
           "", msg(lang, "value.table_head", per_metric=msg(lang, f"compare.value_row.{metric}", unit=unit),
                   per_memory=msg(lang, f"compare.value_row.{second}", unit=unit)),
           "|---|---|---|---|---|---|"]
    for i, o in enumerate(r.ranked, 1):
        per = o.per_unit
        out.append(f"| {i} | {o.name} | {num(o.totals['memory_gb'])} GB | {money(o.price, cur)} | "
                   f"{per_money(metric, per[metric])} | {per_money(second, per[second])} |")
    out += ["", msg(lang, "value.note_training" if metric == "bf16_tflops" else "value.note")]
    if found[0].arguments.get("vendors") == ["NVIDIA"] and metric == "bf16_tflops":
        out.append(msg(lang, "value.training_note"))
    return "\n".join(out)


# ----------------------------------------------------------------------------- what a budget buys


def compose_afford(calls: list[ToolCall], budget: tuple[float, str], lang: str, card_only: bool = False) -> str:
    """What the budget buys, most memory first, with the model sizes each option holds."""
    found = _ok(calls, "affordable")
    amount, currency = budget
    shown = money(amount, currency)
    if not found or not typed(found[0], AffordableResult).options:
        return msg(lang, "afford.none", budget=shown)
    r = typed(found[0], AffordableResult)
    host = any(o.host_usd for o in r.options)
    out = [msg(lang, "afford.head_host" if host else "afford.head", budget=shown), "",
           msg(lang, "afford.table_head"), "|---|---|---|---|---|"]
    cur = r.currency
    for o in r.options:
        out.append(f"| {o.count}× {o.name} | {num(o.memory_gb)} GB | {num(o.bandwidth_gbs)} GB/s | "
                   f"{money(o.price, cur)} | ~{num(o.max_params_b_4bit)}B / ~{num(o.max_params_b_16bit)}B |")
    out += ["", msg(lang, "afford.note", share=f"{r.weight_share:.0%}")]
    if card_only:
        out.append(msg(lang, "afford.card_only"))
    catalog = load_catalog()
    converted = host or any((g := catalog.gpu(o.gpu)).price is None or g.price.cny is None for o in r.options)
    if cur == "CNY" and converted:  # yuan prices the catalog has (China channel, street) are shown as they are
        out.append(msg(lang, "afford.fx", rate=f"{CNY_PER_USD:g}", as_of=str(FX_AS_OF)))
    elif cur in USD_PER_FOREIGN:
        out.append(msg(lang, "afford.fx_foreign", rate=f"{USD_PER_FOREIGN[cur]:g}",
                       currency=msg(lang, f"afford.currency_name.{cur}"), as_of=str(FX_AS_OF)))
    return "\n".join(out)


def _confidence(grade: str | None, lang: str) -> str:
    """A catalog confidence grade ('H', 'M', 'L') in words."""
    return msg(lang, f"confidence.{grade}") if grade in ("H", "M", "L") else "?"


# ----------------------------------------------------------------------------- image and video models


def compose_generative(calls: list[ToolCall], lang: str) -> str:
    """An image or video model on the cards: its weights at each precision against each card's memory, the cards'
    dense BF16 compute side by side, and what the figures do not say (seconds per image)."""
    sized = _ok(calls, "size_inference")
    cards = [typed(c, GPUInfo) for c in _ok(calls, "gpu_info")]
    if not sized or not cards:
        return msg(lang, "generative.none")
    model = sized[0].result["model"] if sized[0].result else ""
    out = [msg(lang, "generative.head", model=model)]
    rec = next((typed(c, Recommendation) for c in _ok(calls, "recommend")), None)
    top = next((o for o in rec.options if o.total_price_usd is not None), None) if rec is not None else None
    if rec is not None and top is not None:  # a budget said: the fastest card it buys leads (CUDA first)
        out.insert(0, msg(lang, "generative.pick", config=config_label(top.gpu_id, top.count, lang),
                          total=total_text(top, rec.currency, lang), tflops=num(top.media_tflops or 0),
                          usable=gb_short(top.gpu_memory_bytes)))
    for card in cards:
        mine = [typed(c, InferenceMemoryResult) for c in sized if c.arguments.get("gpu") == card.id]
        if not mine:
            continue
        parts = [msg(lang, "generative.fit", precision=r.precision, need=gb_short(needed_bytes(r)),
                     mark=msg(lang, "generative.yes" if r.fits else "generative.no")) for r in mine]
        out.append(msg(lang, "generative.card", card=card.name, usable=gb_short(usable_bytes(mine[0])),
                       fits=punct(lang, "semicolon").join(parts)))
    speed = sorted(((media_tflops(load_catalog().gpu(card.id)), card.name) for card in cards), reverse=True)
    if len(speed) > 1 and speed[-1][0] > 0:
        out.append(msg(lang, "generative.compute", fast=speed[0][1], slow=speed[-1][1],
                       ratio=num(speed[0][0] / speed[-1][0], 1),
                       table=punct(lang, "comma").join(f"{n} {num(t)}" for t, n in speed)))
    out.append(msg(lang, "generative.notes"))
    return "\n".join(out)
