"""Deterministic bilingual replies composed from tool results and retrieved passages.

The reply leads with the answer, then the key numbers with their units (decimal GB with the
binary GiB beside it), the terms, what was assumed, warnings, the passages cited by id, and the
next question. The sentences that answer the user's question (what changed since the last turn,
which lighter method or precision would fit, what was assumed) are the conversation's own; the
fit line, the term lines, the option table and its reasons, ruled-out configurations and build
findings are taken from the result's presenter section (:mod:`advisor.present`), so the chat says
them exactly as the CLI, the panel and the report do. Every figure is formatted from a tool result
or the user's own words, so the text passes the grounding check.
"""

from __future__ import annotations

import re
from typing import Any

from advisor.fmt import (
    card_by_memory,
    default_currency,
    duration,
    gb,
    gb_short,
    money,
    money_in,
    money_in_exact,
    needed_bytes,
    num,
    price_basis,
    punct,
    tps,
    unit_value,
    usable_bytes,
    usd_in,
)
from advisor.nlu import Kind, Parsed
from advisor.planner import (
    DEFAULT_CONCURRENCY,
    DEFAULT_CONTEXT,
    TOKENS_PER_SAMPLE,
    Plan,
    session_region,
    user_currency,
)
from advisor.present import (
    fit_line,
    gpu_name,
    model_name,
    present_call,
    present_recommend,
    rec_change,
    said_model,
    term_label,
    terms,
)
from advisor.present import word as present_word
from advisor.present.check import finding_item
from advisor.present.recommend import mark_kind, network_text, rejected_item, total_text
from advisor.session import Citation, Profile, Session, ToolCall
from advisor.toolspec import GPUInfo, get_tool, typed
from knowledge import load_catalog
from knowledge.api_prices import api_name
from knowledge.codes import scientific_code
from knowledge.markets import availability
from knowledge.messages import has as has_message
from knowledge.messages import msg, render
from knowledge.stack_support import engine_runs
from tools.compat_rules.software import STACK_NAMES, stack_family
from tools.compat_rules.types import BuildReport, Finding
from tools.inference_memory import InferenceMemoryResult
from tools.perf import HOST_BANDWIDTH_GBS, DecodeResult
from tools.pricing import HOST_COST_USD
from tools.recommend import (
    MAX_CLUSTER_NODES,
    NODE_GPUS,
    WEAK_FP64_SHARE,
    Option,
    Recommendation,
    has_gpu_build,
    nodes_for,
)
from tools.scientific import ScientificResult
from tools.training_memory import TrainingMemoryResult
from tools.training_time import TrainingTimeResult

Sizing = InferenceMemoryResult | TrainingMemoryResult


def sizing(call: ToolCall) -> Sizing:
    """A memory sizing call's result (inference or training), typed."""
    if call.name == "size_inference":
        return typed(call, InferenceMemoryResult)
    return typed(call, TrainingMemoryResult)


def result_of(call: ToolCall) -> Any:
    """Any successful call's result as its tool's output model (for fields several tools share)."""
    return typed(call, get_tool(call.name).output_model)


def rec_currency(rec: Recommendation) -> str:
    """The currency a recommendation's prices are shown in."""
    return rec.price_currency or rec.currency

# ----------------------------------------------------------------------------- formatting


def word(lang: str, key: str) -> str:
    """A single word or short label from the catalog's ``[word]`` table."""
    return msg(lang, f"word.{key}")


def config_label(gid: str | None, count: int, lang: str, memory_gb: float | None = None) -> str:
    """'one RTX 4090', '2× H100'; without a catalog GPU, a card known by its memory ('one 32 GB card')."""
    name = gpu_name(gid) if gid or memory_gb is None else card_by_memory(memory_gb, lang)
    whole = gid is not None and _is_system(gid)  # a Mac or a DGX Spark is a computer, counted as machines
    if count == 1:
        return msg(lang, "compose.config_label.one_system" if whole else "compose.config_label.one", name=name)
    return msg(lang, "compose.config_label.systems" if whole else "compose.config_label.text", count=count, name=name)


def _is_system(gid: str) -> bool:
    try:
        return load_catalog().gpu(gid).form_factor.value == "system"
    except LookupError:  # not a catalog id
        return False


# ----------------------------------------------------------------------------- questions


def question_text(slots: list[str], lang: str | None, confirm: bool = False,
                  after_yes: bool = False, unknown_model: str | None = None) -> str | None:
    """The follow-up question for ``slots`` in ``lang`` (both languages when unknown). ``confirm``: the
    reply already shows the alternatives computed for an open slot, so ask to pick one of them;
    ``after_yes``: the named hardware is enough, so further questions are optional and say why;
    ``unknown_model``: a model named that the catalog lacks, so its size is asked, not its name."""
    if not slots:
        return None
    if lang is None:
        return "\n".join(q for q in (question_text(slots, "zh", confirm, after_yes, unknown_model),
                                      question_text(slots, "en", confirm, after_yes, unknown_model)) if q)
    named: dict[str, object] = {"name": unknown_model} if unknown_model else {}
    slots = ["params_of" if s == "model" and unknown_model else s for s in slots]
    pair = "question.pair." + "+".join(slots)
    if len(slots) == 2 and not (confirm and "precision" in slots) and has_message(lang, pair):
        return msg(lang, pair, **named)
    parts = [msg(lang, key, **named) for key in (_question_id(s, confirm, after_yes) for s in slots) if key]
    return punct(lang, "sentence_gap").join(parts) or None


def _question_id(slot: str, confirm: bool, after_yes: bool) -> str | None:
    """The catalog id asking for ``slot``: the confirm or after-yes variant when there is one."""
    for table, on in (("confirm", confirm), ("after_yes", after_yes), ("question", True)):
        if on and has_message("en", f"{table}.{slot}"):
            return f"{table}.{slot}"
    return None


def opening_text(lang: str | None) -> str:
    if lang is None:
        return opening_text("zh") + "\n\n" + opening_text("en")
    return msg(lang, "opening") + "\n\n" + msg(lang, "question.use_case")


# ----------------------------------------------------------------------------- pieces

def method_label(method: str, lang: str, pretrain: bool = False) -> str:
    """The training method's word; a full training of a model pre-trained from scratch is said as pre-training."""
    return present_word(lang, "method", "pretrain" if pretrain and method == "full" else method)


def term_lines(result: Sizing, lang: str, bytes_only: bool = True, explain: bool = True,
               skip: tuple[str, ...] = ()) -> list[str]:
    """One line per term of the result's section (except those named in ``skip``): label, value and
    (``explain``) what the term is."""
    picked = [t for t in result.terms if not (bytes_only and t.unit != "bytes") and t.name not in skip]
    return [f"- {t.label}: {t.value}" + (f" — {t.meaning}" if explain and t.meaning else "")
            for t in terms(picked, lang)]


_BREAKDOWN_ORDER = ("weights", "kv_cache", "gradients", "optimizer", "activations", "overhead")


def terms_inline(result: Sizing, lang: str) -> str:
    """The per-GPU breakdown on one line ('权重 70.5 GB + KV 缓存 1.3 GB + …'), for the short reply: the parts that
    add up to the per-GPU total (the explained terms overlap: logits sit inside activations, the ZeRO-3 working
    set inside weights)."""
    parts = [f"{term_label(k, lang)} {gb_short(getattr(result.breakdown, k))}" for k in _BREAKDOWN_ORDER
             if getattr(result.breakdown, k)]
    if not parts:
        return ""
    if isinstance(result, InferenceMemoryResult) and result.all_layers_bytes and result.offload_layers:
        on, off = result.gpu_layers, result.offload_layers
        head = msg(lang, "compose.terms_inline.with_layers_gpu_ram", on=on, off=off)
        return head + " + ".join(parts)
    # sized on one GPU (a recommendation's options may then use several): the whole need, not a card's share
    key = "compose.terms_inline.per_gpu" if getattr(result, "gpus", 1) > 1 else "compose.terms_inline.whole"
    return msg(lang, key) + " + ".join(parts)


def _findings(findings: list[Finding], lang: str, limit: int = 4) -> list[str]:
    """The build check's warnings and errors as the check's section words them, marked for chat."""
    items = [finding_item(f, lang, marks=True) for f in findings if f.severity != "info"][:limit]
    return [" ".join([f"- {item.text}", *item.details]) for item in items]


def _options(rec: Recommendation, lang: str, limit: int = 3, detailed: bool = True,
             currency: str | None = None) -> list[str]:
    """The top options: the recommendation section's table and (``detailed``) its 'why' list."""
    if not rec.options:
        return []
    section = present_recommend(rec, lang, currency=rec.price_currency or currency or rec.currency, limit=limit,
                                rejected=0)
    out = section.table.markdown().split("\n") if section.table else []
    if detailed:  # with options, the section's first list is why each one is there (its warnings: the panel)
        out += ["", *(item.text for item in section.lists[0].items)]
    else:  # the why list says it for each option; without it, once per rule under the table
        rules = sorted({o.market_rule for o in rec.options[:limit] if o.market == "restricted" and o.market_rule})
        out += [msg(lang, f"compose.recommend_section.restricted{mark_kind(r)}", rule=msg(lang, f"market.rule.{r}"))
                for r in rules]
    return [*out, *_price_bases(rec.options[:limit], lang)]


def _price_bases(options: list[Option], lang: str) -> list[str]:
    """What each listed card price is and its date ('#1 L20 48GB: list price, as of 2026-06-01 …')."""
    catalog = load_catalog()
    items = [msg(lang, "compose.recommend_section.price_item", rank=o.rank, gpu=o.gpu,
                 basis=price_basis(catalog.gpu(o.gpu_id), lang) if catalog.gpu(o.gpu_id).price
                 else msg(lang, "compare.basis_said"))  # a price the buyer gave
             for o in options if o.price_usd is not None or o.price_cny is not None]
    joined = msg(lang, "compose.recommend_section.price_join").join(items)
    return [msg(lang, "compose.recommend_section.price_bases", items=joined)] if items else []


_OWN_FILTERS = {"recommend.reject.not_domestic", "recommend.reject.vendor", "recommend.reject.not_listed",
                "recommend.reject.market"}
_STAGE_ORDER = {"budget": 0, "power": 1, "target": 2, "compat": 3, "interconnect": 4, "memory": 5, "data": 6,
                "constraint": 7}


def _host_line(options: list[Option], currency: str, lang: str) -> list[str]:
    """What the totals include for the computer around the cards, once per host size shown."""
    # per machine: a plan over several nodes pays one host per node
    hosts = sorted({round(o.host_price_usd / o.nodes, 2) for o in options if o.host_price_usd})
    if not hosts:
        return []
    kind = {usd: k for k, usd in HOST_COST_USD.items()}
    each = msg(lang, "compose.recommend_section.host_each") if any(o.nodes > 1 for o in options) else ""
    amounts = [msg(lang, "compose.recommend_section.host_amount", amount=usd_in(h, currency), each=each,
                   kind=msg(lang, f"perf.host_kind.{kind[h]}") if h in kind else "") for h in hosts]
    return [msg(lang, "compose.recommend_section.host_line", hosts=punct(lang, "list").join(amounts))]


def _rejections(rec: Recommendation, lang: str, limit: int = 3) -> list[str]:
    """One reason per gate, the gates closest to passing first (budget before memory before constraints)."""
    seen: set[str] = set()
    out: list[str] = []
    # within a stage, a card the user's own filters let through says more ('VASP has no build for CANN') than
    # one they ruled out themselves ('not a domestic card')
    ranked = sorted(rec.rejected, key=lambda r: (_STAGE_ORDER.get(r.stage, 9), r.reason.id in _OWN_FILTERS,
                                                 -(r.count or 0)))
    for r in ranked:
        if r.stage in seen:
            continue
        seen.add(r.stage)
        out.append(f"- {rejected_item(r, lang).text}")
        if len(out) >= limit:
            break
    return out


def citations_block(citations: list[Citation], lang: str) -> list[str]:
    if not citations:
        return []
    titles = [without_glosses(c.title) if lang == "en" else c.title for c in citations]
    return [msg(lang, "compose.citations_block.sources")] + [
        f"- [{c.id}] {title}" for c, title in zip(citations, titles, strict=True)]


_CJK_RUN = re.compile(r"\s*[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]+\s*")


def without_glosses(text: str) -> str:
    """English text without the Chinese glosses the corpus adds for retrieval: 'GPU memory (VRAM, 显存)' →
    'GPU memory (VRAM)', 'Huawei 昇腾 Ascend' → 'Huawei Ascend'; empty brackets go."""
    text = re.sub(r"\(([^()]*)\)", lambda m: "(" + ", ".join(
        part.strip() for part in m.group(1).split(",") if part.strip() and not _CJK_RUN.fullmatch(part)) + ")", text)
    text = _CJK_RUN.sub(" ", text)
    return re.sub(r"\s*\(\s*\)", "", text).replace(" ,", ",").replace("  ", " ").strip()



def _known_summary(p: Profile, lang: str) -> str:
    bits = []
    if p.use_case:
        bits.append(present_word(lang, "use_case", p.use_case))
    if p.model or p.params_b:
        bits.append(model_name(p.model, p.params_b))
    if p.precision:
        bits.append(p.precision)
    if p.method:
        bits.append(method_label(p.method, lang))
    if p.context_tokens:
        bits.append(msg(lang, "compose.known_summary.token_context", context_tokens=num(p.context_tokens)))
    if p.concurrency:
        bits.append(msg(lang, "compose.known_summary.concurrent", concurrency=num(p.concurrency)))
    if p.gpu:
        bits.append(config_label(p.gpu, p.gpu_count or 1, lang))
    if p.budget:
        bits.append(msg(lang, "compose.known_summary.budget") + money(p.budget.amount, p.budget.currency))
    if p.fp64 is not None:
        bits.append("FP64" if p.fp64 else msg(lang, "compose.known_summary.no_fp"))
    if p.problem_size_gb:
        bits.append(msg(lang, "compose.known_summary.problem_size_gb", problem_size_gb=num(p.problem_size_gb)))
    if p.domestic:
        bits.append(msg(lang, "compose.known_summary.domestic_only"))
    if p.cuda_required:
        bits.append(msg(lang, "compose.known_summary.needs_cuda"))
    return punct(lang, "comma").join(bits)


# ----------------------------------------------------------------------------- sections


def _by_name(calls: list[ToolCall], name: str, gpu: str | None = None) -> ToolCall | None:
    for c in calls:
        if c.name == name and c.ok and (gpu is None or c.arguments.get("gpu") == gpu
                                        or c.arguments.get("name") == gpu):
            return c
    return None


def _diff(prev: ToolCall | None, r: Sizing, lang: str) -> list[str]:
    """'Compared with the previous setup…' when a what-if changed the memory need: like with like — per GPU
    when both setups split over the same number of GPUs (more than one), else the whole need."""
    if not (prev and prev.ok):
        return []
    p = sizing(prev)
    per_gpu = p.gpus == r.gpus and r.gpus > 1
    before, after = (p.per_gpu_bytes, r.per_gpu_bytes) if per_gpu else (p.total_bytes, r.total_bytes)
    if before == after:
        return []
    key = "compared_with_previous_setup" if per_gpu else "compared_with_previous_total"
    return [msg(lang, f"compose.diff.{key}", before=gb(before), after=gb(after))]


def repeated(previous: dict[str, ToolCall], call: ToolCall | None) -> bool:
    """The same tool with the same arguments as last turn: say it briefly, don't repeat the details."""
    prev = previous.get(call.name) if call is not None else None
    return bool(prev and prev.ok and call is not None and prev.arguments == call.arguments)


def _inference_section(calls: list[ToolCall], p: Profile, plan: Plan, lang: str,
                       previous: dict[str, ToolCall], alts: list[tuple[str, ToolCall]] | None = None,
                       citations: list[Citation] | None = None, detailed: bool = True,
                       speed_first: bool = False) -> list[str]:
    """The sizing verdict and figures, then the speed; a speed question (``speed_first``) opens with the speed
    and keeps the fit as the line under it."""
    size = _by_name(calls, "size_inference")
    out: list[str] = []
    if size is None:
        return out
    brief = repeated(previous, size)
    r = typed(size, InferenceMemoryResult)
    alt_lines = alternatives_lines(size, calls, alts or [], p, lang, citations or [], detailed=detailed)
    if alt_lines and alt_lines[0].startswith("**"):  # a combined verdict replaces the single one
        out.append(alt_lines.pop(0))
        combined = True
    else:
        combined = False
    model = said_model(r.model, p.model, p.model_said)
    args = size.arguments
    what = msg(lang, "compose.inference_section.token_context_concurrent",
               model=model, precision=r.precision, context=num(r.context), batch=num(r.batch))
    gpu = args.get("gpu")
    count = packages(size)
    where = config_label(gpu, count, lang, p.card_memory_gb)
    if combined:
        pass
    elif r.fits is True:
        out.append(msg(lang, "compose.inference_section.answer_fits", where=where, what=what))
    elif r.fits is False and p.precision is None and (fitting := _fitting_alternative(alts or [])) is not None:
        a, x = fitting  # the precision was assumed: lead with the quantisation that runs, not a 'no'
        stand_in = r.precision.lower() == "int8"  # an FP8 model on a card without FP8: run as W8A8 INT8
        key = "answer_fits_quantised_w8a8" if stand_in else "answer_fits_quantised"
        out.append(msg(lang, f"compose.inference_section.{key}", where=where, model=model,
                       option=_alt_label(a, x, lang), need=gb_short(needed_bytes(x)), usable=gb_short(usable_bytes(x)),
                       native=r.precision, native_need=gb_short(r.per_gpu_bytes)))
        speed = next((c for b, c in (alts or []) if b == f"{a}_speed" and c.ok), None)
        if speed is not None:
            d = typed(speed, DecodeResult)
            out.append(msg(lang, "answer.gguf_speed" if d.placement == "gpu" else "answer.gguf_speed_offload",
                           speed=_gguf_rate(d, lang), ram=_ram(d, lang)))
    elif r.fits is False:
        out.append(msg(lang, "compose.inference_section.answer_does_not_fit", where=where, what=what))
    elif count == 1:
        rec = _by_name(calls, "recommend")
        none = rec is not None and not priced(typed(rec, Recommendation))
        budget = money(p.budget.amount, p.budget.currency) if p.budget else ""
        where = msg(lang, "compose.inference_section.within",
                    budget=budget) if p.budget else msg(lang, "compose.inference_section.under_these_constraints")
        tail = msg(lang, "compose.inference_section.no_configuration_can_run", where=where) if none else ""
        quantised = next(((a, typed(c, Recommendation)) for a, c in (alts or []) if c.ok and c.name == "recommend"
                          and priced(typed(c, Recommendation))), None) if none else None
        if quantised is not None:  # say at once which lower precision does run, and on what
            a, qrec = quantised
            tail += msg(lang, "answer.but_quantised", precision=msg(lang, f"if_quant.{a}"),
                        option=_option_brief(priced(qrec)[0], rec_currency(qrec), lang))
        elif rec is not None and priced(typed(rec, Recommendation)):  # what to buy, in the headline
            top = typed(rec, Recommendation)
            first = priced(top)[0]
            tail += msg(lang, "answer.top_pick", precision=r.precision, where=where,
                        option=_option_brief(first, rec_currency(top), lang))
            if first.precision and first.precision.lower() != r.precision.lower():  # '910C has no FP8: W8A8 INT8'
                runs = "W8A8 INT8" if first.precision.lower() == "int8" else first.precision.upper()
                tail += msg(lang, "answer.top_pick_runs_as", gpu=first.gpu, precision=runs, asked=r.precision.upper())
        out.append(msg(lang, "compose.inference_section.answer_needs_about_gpu",
                       what=what, per_gpu_bytes=gb(r.per_gpu_bytes),
                       weights_total_bytes=gb(r.weights_total_bytes), tail=tail))
    else:
        key = "verdict.inference_need_split" if count > 1 else "verdict.inference_need"
        out.append(msg(lang, key, what=what, need=gb(r.per_gpu_bytes), count=count))
    if r.gpu_memory_bytes and not combined:  # the combined verdict already gives these figures
        out.append(fit_line(r, lang, card_by_memory(p.card_memory_gb, lang) if p.card_memory_gb else ""))
        out += [render(a, lang) for a in r.assumptions if a.id == "inference.assume.devices"]
        if r.fits is False and r.max_context_tokens:
            out.append(msg(lang, "compose.inference_section.concurrent_request_s_longest",
                           batch=num(r.batch), max_context_tokens=num(r.max_context_tokens)))
        elif r.fits and r.max_concurrency:
            out.append(msg(lang, "compose.inference_section.tokens_per_request_kv",
                           context=num(r.context), max_concurrency=num(r.max_concurrency)))
    if count > 1 and gpu:
        total = load_catalog().gpu(gpu).memory_gb * count
        out.append(msg(lang, "compose.inference_section.cards_hold_gb_all",
                       count=count, total=num(total), weights_total_bytes=gb_short(r.weights_total_bytes)))
    out += _diff(previous.get("size_inference"), r, lang)
    out += alt_lines
    if not brief and not detailed:
        out.append(terms_inline(r, lang))
    elif not brief:
        out.append("")
        out.append(msg(lang, "compose.inference_section.memory_breakdown_per_gpu"))
        out += term_lines(r, lang, explain=detailed)
        out.append(msg(lang, "compose.inference_section.total", per_gpu_bytes=gb(r.per_gpu_bytes)))
    perf = next((c for c in calls if c.name == "perf_decode" and c.ok and c.arguments.get("count", 1) == r.gpus),
                None)  # the speed of this sizing's cards (a 'how many?' count's speed is the asks' line)
    own = {p.gpu, *(e.gpu for e in p.existing or [])} - {None}
    if perf is not None and speed_first and perf.arguments.get("gpu") in own:  # on the user's own card
        d = typed(perf, DecodeResult)
        lo, hi = d.tokens_per_s_range
        bound = msg(lang, _bound_key(d), ram=_ram(d, lang))
        lead = msg(lang, "speed.verdict_offload" if d.placement != "gpu" else "speed.verdict",
                   speed=tps(d.tokens_per_s), where=where, lo=num(lo), hi=num(hi),
                   per_request=tps(d.per_sequence_tokens_per_s), bound=bound)
        fit = out[0].replace("**", "").removeprefix(word(lang, "answer_prefix")) if out else ""
        out = [lead, *_calibrated(d, lang), *([fit] if fit else []), *out[1:]]
    elif perf is not None:
        d = typed(perf, DecodeResult)
        lo, hi = d.tokens_per_s_range
        bound = msg(lang, _bound_key(d), ram=_ram(d, lang))
        out.append("")
        out.append(msg(lang, "compose.inference_section.speed_about_generation_range",
                       tokens_per_s=tps(d.tokens_per_s), lo=num(lo), hi=num(hi),
                       per_sequence_tokens_per_s=tps(d.per_sequence_tokens_per_s), bound=bound))
        out += _calibrated(d, lang)
    return out


def _mfu_basis(d: TrainingTimeResult) -> str:
    """Where a training time's MFU came from: the user's own measurement, a given figure, or published runs."""
    first = d.assumptions[0].id if d.assumptions else ""
    return {"perf.train_time.mfu_measured": "compose.training_section.basis_measured",
            "perf.train_time.mfu_given": "compose.training_section.basis_given"}.get(
        first, "compose.training_section.basis_published")


def _ram(d: DecodeResult, lang: str) -> str:
    """'89.6 GB/s, dual-channel DDR5 assumed' / '51.2 GB/s': the RAM bandwidth an offloaded speed rests on."""
    bw = d.host_bandwidth_gbs
    if bw is None:
        return ""
    key = "speed.ram_assumed" if bw == HOST_BANDWIDTH_GBS else "speed.ram_given"
    return msg(lang, key, gbs=num(bw))


def _bound_key(d: DecodeResult) -> str:
    """What limits a decode speed: system RAM or PCIe when weights sit in host memory, else the GPU's."""
    if d.placement != "gpu":
        return f"speed.bound_{d.placement}"
    return "speed.bound_memory" if d.bound == "memory" else "speed.bound_compute"


def _calibrated(d: DecodeResult, lang: str) -> list[str]:
    """One line when the speed was scaled to the user's own measurement of this model on this GPU
    (GPU_ADVISOR_GPUS), or when measurements of other models on it left the speed uncalibrated."""
    for a in d.assumptions:
        key = _CALIBRATION_LINES.get(getattr(a, "id", ""))
        if key:
            return [msg(lang, key, **a.params)]  # type: ignore[union-attr]
    return []


_CALIBRATION_LINES = {"perf.decode.calibrated": "speed.calibrated",
                      "perf.decode.not_calibrated": "speed.not_calibrated"}


# ----------------------------------------------------------------------------- alternatives

_SOURCE_4BIT = ("35 GB", "35GB")  # the source guide's '70B at 4-bit ≈ 35 GB' (weights alone)


# the lower precisions a headline may lead with, the least lossy first
_LEAD_ORDER = ("kv_fp8", "fp8", "int8", "int4", "gguf")


def _fitting_alternative(alts: list[tuple[str, ToolCall]]) -> tuple[str, InferenceMemoryResult] | None:
    """The least lossy lower precision the tools found to fit on the same cards, or None."""
    fitting = {a: typed(c, InferenceMemoryResult) for a, c in alts
               if c.ok and c.name == "size_inference" and a in _LEAD_ORDER and typed(c, InferenceMemoryResult).fits}
    return next(((a, fitting[a]) for a in _LEAD_ORDER if a in fitting), None)


def _gguf_rate(d: DecodeResult, lang: str) -> str:
    """'about 19 tokens/s', or with several requests at once each one's rate and the total ('94 tokens/s per
    request, 410 tokens/s in all for 10 at once'): a total alone reads as one user's speed."""
    batch = round(d.tokens_per_s / d.per_sequence_tokens_per_s) if d.per_sequence_tokens_per_s else 1
    if batch <= 1:
        return tps(d.tokens_per_s)
    return msg(lang, "answer.gguf_rate_batch", per_request=tps(d.per_sequence_tokens_per_s), total=tps(d.tokens_per_s),
               batch=batch)


def _alt_label(alt: str, r: InferenceMemoryResult, lang: str) -> str:
    if has_message("en", f"alt.{alt}"):
        return msg(lang, f"alt.{alt}", server=present_word(lang, "engine", r.engine))
    how = msg(lang, "compose.alt_label.pipeline_split") if r.parallel == "pp" else ""
    engine = present_word(lang, "engine", r.engine)
    return msg(lang, "compose.alt_label.text",
               gpus=r.gpus, x=r.gpu or '?', engine=engine, precision=r.precision, how=how)


def fit_verdict(r: InferenceMemoryResult, lang: str) -> str:
    """The tool's own verdict in words: fits / runs with CPU offload / does not fit (+ longest context)."""
    ctx = r.max_context_tokens or 0
    if r.fits:
        return msg(lang, "verdict.fits_ctx", ctx=num(ctx)) if ctx else msg(lang, "verdict.fits_mark")
    if r.offload_layers:
        return msg(lang, "compose.fit_verdict.not_all_layers_fit",
                   gpu_layers=num(r.gpu_layers), offload_layers=num(r.offload_layers),
                   cpu_bytes=gb_short(r.cpu_bytes))
    return msg(lang, "verdict.no_fit_ctx", ctx=num(ctx)) if ctx else msg(lang, "verdict.no_fit_mark")


def _guide_note(size: ToolCall, p: Profile, lang: str, citations: list[Citation]) -> list[str]:
    """The source guide's '4-bit 70B ≈ 35 GB' counts the weights alone — say so when a cited passage has it."""
    r = typed(size, InferenceMemoryResult)
    if not (60e9 <= r.params <= 80e9 and r.weights_total_bytes):
        return []
    with_figure = [c for c in citations if any(x in c.text for x in _SOURCE_4BIT)]
    cite = next((c for c in with_figure if c.id.startswith("vram/") and "weights" in c.id), None) or next(
        iter(with_figure), None)
    if cite is None:
        return []
    return ["", msg(lang, "compose.guide_note.note_guide_s_b",
                    id=cite.id, weights_total_bytes=gb_short(r.weights_total_bytes),
                    per_gpu_bytes=gb_short(r.per_gpu_bytes))]


def _fp8_capable(option: Option) -> bool:
    try:
        return load_catalog().gpu(option.gpu_id or option.gpu).supports("fp8") is not False
    except Exception:
        return True


def priced(rec: Recommendation) -> list[Option]:
    """The options with a known price (the ones a budget was checked against), in rank order."""
    return [o for o in rec.options if o.total_price_usd is not None]


def rec_change_line(previous: dict[str, ToolCall], calls: list[ToolCall], p: Profile, lang: str) -> list[str]:
    """The budget or a gate (vendors, cards ruled out, power, region …) changed since the last recommendation:
    what that did — the top pick kept or replaced, or nothing left that qualifies."""
    rec, before = _by_name(calls, "recommend"), previous.get("recommend")
    if rec is None or before is None or not before.ok or not rec_change.changed(before.arguments, rec.arguments):
        return []
    budget = (p.budget.amount, p.budget.currency) if p.budget else None
    change = rec_change.describe(before.arguments, rec.arguments, budget, lang)
    new, old = priced(typed(rec, Recommendation)), priced(typed(before, Recommendation))
    currency = rec_currency(typed(rec, Recommendation))
    if not new:
        return [msg(lang, "rec_diff.none", change=change), ""]
    top = new[0]
    if old and (old[0].gpu_id, old[0].count) == (top.gpu_id, top.count):
        return [msg(lang, "rec_diff.same_top", change=change, option=_option_brief(top, currency, lang),
                    within=len(new)), ""]
    was = _option_brief(old[0], currency, lang) if old else "—"
    return [msg(lang, "rec_diff.new_top", change=change, option=_option_brief(top, currency, lang), was=was), ""]


def _option_brief(o: Option, currency: str, lang: str) -> str:
    price = total_text(o, currency, lang)
    speed = tps(o.decode_tokens_per_s) if o.decode_tokens_per_s is not None else None
    key = "table.option_short_speed" if speed else "table.option_short"
    gpu = msg(lang, f"present.recommend.restricted_mark{mark_kind(o.market_rule)}", config=o.gpu) \
        if o.market == "restricted" else o.gpu  # a licence or grey market: said wherever the option is named
    return msg(lang, key, count=o.count, gpu=gpu, price=price, speed=speed)


def alternatives_lines(size: ToolCall, calls: list[ToolCall], alts: list[tuple[str, ToolCall]], p: Profile,
                       lang: str, citations: list[Citation], detailed: bool = True) -> list[str]:
    """What else the tools computed for this request. A first line starting with '**' is a combined
    verdict (vLLM 4-bit and llama.cpp Q4_K_M side by side) that replaces the single one."""
    from advisor.planner import is_generic_4bit

    r = typed(size, InferenceMemoryResult)
    out: list[str] = []
    sized = [(a, c) for a, c in alts if c.ok and c.name == "size_inference"]
    recs = {a: c for a, c in alts if c.ok and c.name == "recommend"}
    gguf = next((c for a, c in sized if a == "gguf"), None)
    gpu = size.arguments.get("gpu")
    target = gpu or size.arguments.get("gpu_memory_bytes")  # a catalog card, or one known by its memory
    where = config_label(gpu, packages(size), lang, p.card_memory_gb)
    if gguf is not None and target and is_generic_4bit(size.arguments.get("precision")):
        g = typed(gguf, InferenceMemoryResult)
        ctx = num(r.context)
        vllm_v = word(lang, "fits" if r.fits else "does_not_fit")
        h = r.headroom_bytes
        short = (msg(lang, "compose.alternatives_lines.short", h=gb_short(-h)) if h is not None and h < 0 else "")
        vllm_ctx = (msg(lang, "compose.alternatives_lines.holds_most_about_tokens",
                        max_context_tokens=num(r.max_context_tokens))
                    if not r.fits and r.max_context_tokens else "")
        gg_v = word(lang, "fits" if g.fits else ("partial_offload" if g.offload_layers
                                                         else "does_not_fit"))
        gg_ctx = (msg(lang, "compose.alternatives_lines.longest_context_tokens",
                      max_context_tokens=num(g.max_context_tokens))
                  if g.fits and g.max_context_tokens else "")
        out.append(msg(lang, "compose.alternatives_lines.answer_bit_token_context",
                       where=where, model=said_model(r.model, p.model, p.model_said), ctx=ctx, batch=num(r.batch),
                       precision=r.precision,
                       vllm_v=vllm_v, per_gpu_bytes=gb_short(r.per_gpu_bytes), usable=gb_short(usable_bytes(r)),
                       short=short, vllm_ctx=vllm_ctx, gg_v=gg_v, per_gpu_bytes2=gb_short(needed_bytes(g)),
                       usable2=gb_short(usable_bytes(g)), gg_ctx=gg_ctx,
                       server=present_word(lang, "engine", r.engine)))
        if g.offload_layers:
            out.append(msg(lang, "compose.alternatives_lines.llama_cpp", fit_verdict=fit_verdict(g, lang)[2:]))
        speed = next((c for a, c in alts if a == "gguf_speed" and c.ok), None)
        # the speed llama.cpp would reach: on the GPUs, with the layers that do not fit in system RAM, or — where
        # only this context is too long for the cards — at a shorter one
        if speed is not None:
            d = typed(speed, DecodeResult)
            key = "answer.gguf_speed" if d.placement == "gpu" else "answer.gguf_speed_offload"
            if not (g.fits or g.offload_layers) and d.placement == "gpu":
                key = "answer.gguf_speed_shorter"
            out.append(msg(lang, key, speed=_gguf_rate(d, lang), ram=_ram(d, lang), ctx=num(g.context)))
        sized = [(a, c) for a, c in sized if a != "gguf"]
    # an FP8 KV cache is worth a row only where it makes the difference (the weights themselves may not fit)
    sized = [(a, c) for a, c in sized if a != "kv_fp8" or typed(c, InferenceMemoryResult).fits]
    if sized and target:
        out += ["", msg(lang, "compose.alternatives_lines.other_ways_run_same"),
                msg(lang, "compose.alternatives_lines.option_needed_per_gpu"),
                "|---|---|---|---|"]
        ordered = sorted(sized, key=lambda ac: (not typed(ac[1], InferenceMemoryResult).fits,
                                                not typed(ac[1], InferenceMemoryResult).offload_layers))
        if not detailed:  # the short reply lists what works; when nothing does, the two closest
            working = [ac for ac in ordered if typed(ac[1], InferenceMemoryResult).fits
                       or typed(ac[1], InferenceMemoryResult).offload_layers]
            ordered = working or sorted(ordered, key=lambda ac: typed(ac[1], InferenceMemoryResult).per_gpu_bytes)[:2]
        for a, c in ordered:
            x = typed(c, InferenceMemoryResult)
            out.append(f"| {_alt_label(a, x, lang)} | {gb_short(needed_bytes(x))} | {gb_short(usable_bytes(x))} | "
                       f"{fit_verdict(x, lang)} |")
        if any(a in ("int4", "gguf") for a, _ in sized):
            gpu = size.arguments.get("gpu")  # on a machine vLLM does not run on, llama.cpp is the server
            key = "bit_quantisation_costs_little" if not gpu or engine_runs(gpu, "vllm") else "bit_quantisation_mac"
            out.append(msg(lang, f"compose.alternatives_lines.{key}"))
    elif sized or recs:
        out += ["", msg(lang, "compose.alternatives_lines.if_you_quantise_same")]
        for a in ("int4", "int4_kv_fp8", "fp8", "gguf"):
            sz = next((c for b, c in sized if b == a), None)
            rec = recs.get(a)
            if sz is None and rec is None:
                continue
            head = msg(lang, f"if_quant.{a}")
            need = (msg(lang, "compose.alternatives_lines.about_gpu_memory_weights",
                        per_gpu_bytes=gb(typed(sz, InferenceMemoryResult).per_gpu_bytes),
                        weights_total_bytes=gb(typed(sz, InferenceMemoryResult).weights_total_bytes))
                    if sz is not None else "")
            arec = typed(rec, Recommendation) if rec is not None else None
            opts = [o for o in (priced(arec) if arec else []) if a not in ("fp8", "int4_kv_fp8") or _fp8_capable(o)][:3]
            cur = rec_currency(arec) if arec else "USD"
            if opts:
                where = (msg(lang, "compose.alternatives_lines.best_value_within_budget") if p.budget else
                         msg(lang, "compose.alternatives_lines.best_value"))
                buy = msg(lang, "compose.alternatives_lines.text", where=where) + punct(lang, "semicolon").join(
                    _option_brief(o, cur, lang) for o in opts)
            elif rec is not None:
                buy = msg(lang, "compose.alternatives_lines.still_no_configuration_passes")
            else:
                buy = ""
            body = punct(lang, "semicolon").join(x for x in (need, buy) if x)
            out.append(msg(lang, "compose.alternatives_lines.item", head=head, body=body))
        out.append(msg(lang, "compose.alternatives_lines.fp_loses_almost_no"))
    if is_generic_4bit(size.arguments.get("precision")):
        out += _guide_note(size, p, lang, citations)
    return out


def _base_alt(call: ToolCall) -> str:
    """How the main recommendation runs, named as the alternatives are: 'gguf' when it was sized at GGUF's
    Q4_K_M (a home user's default), else the model's own precision."""
    return "gguf" if call.arguments.get("precision") == "Q4_K_M" else "native"


def _cheapest_line(calls: list[ToolCall], alts: list[tuple[str, ToolCall]], lang: str) -> list[str]:
    """'The cheapest way': the lowest-priced configuration any computed precision runs on, first."""
    found: list[tuple[float, str, Option, str]] = []
    for alt, c in [(_base_alt(c), c) for c in calls] + alts:
        if c.ok and c.name == "recommend":
            rec = typed(c, Recommendation)
            found += [(o.total_price_usd or 0.0, alt, o, rec_currency(rec)) for o in priced(rec)]
    if not found:
        return []
    _, alt, o, cur = min(found, key=lambda f: (f[0], -(f[2].decode_tokens_per_s or 0.0)))
    how = msg(lang, f"if_quant.{alt}") if alt != "native" else msg(lang, "answer.cheapest_native")
    return [msg(lang, "answer.cheapest", option=_option_brief(o, cur, lang), how=how), ""]


def _add_to_owned(calls: list[ToolCall], p: Profile, lang: str, currency: str) -> list[str]:
    """Owned cards that do not hold the training as asked: how many more of the same card would, and what they cost
    (the recommender's plan with the owned cards counted free)."""
    size = _by_name(calls, "size_training")
    rec_call = _by_name(calls, "recommend")
    if not p.existing or size is None or not size.ok or getattr(result_of(size), "fits", True) or rec_call is None \
            or not rec_call.ok:
        return []
    rec = result_of(rec_call)
    owned = {e.gpu: e.count for e in p.existing}
    more = next((o for o in rec.options if o.gpu_id in owned and o.count > owned[o.gpu_id]), None) \
        if isinstance(rec, Recommendation) else None
    if more is None or more.price_usd is None:
        return []
    return [msg(lang, "compose.add_to_owned", add=more.count - owned[more.gpu_id], gpu=more.gpu, count=more.count,
                cost=total_text(more, currency, lang), need=gb_short(more.per_gpu_bytes or 0))]


def _other_jobs(calls: list[ToolCall], alts: list[tuple[str, ToolCall]], lang: str) -> list[str]:
    """Several training jobs named: the plan is for the hardest; each other job's need on one GPU, and whether one
    GPU of the top recommendation holds it."""
    others = [typed(c, TrainingMemoryResult) for alt, c in alts if alt == "workload" and c.ok]
    size = _by_name(calls, "size_training")
    if not others or size is None:
        return []
    main = typed(size, TrainingMemoryResult)
    out = ["", msg(lang, "answer.jobs_lead", job=_job_label(main, lang), need=gb_short(main.per_gpu_bytes))]
    rec = _by_name(calls, "recommend")
    top = priced(typed(rec, Recommendation))[0] if rec is not None and priced(typed(rec, Recommendation)) else None
    timed = {c.arguments.get("model"): c for alt, c in alts if alt == "workload_time" and c.ok}
    for r, sized in zip(others, [c for alt, c in alts if alt == "workload" and c.ok and c.name == "size_training"],
                        strict=False):
        if top is None:
            line = msg(lang, "answer.jobs_other", job=_job_label(r, lang), need=gb_short(r.per_gpu_bytes))
        else:
            key = "answer.jobs_other_fits" if r.per_gpu_bytes <= top.gpu_memory_bytes else "answer.jobs_other_shard"
            line = msg(lang, key, job=_job_label(r, lang), need=gb_short(r.per_gpu_bytes),
                       option=config_label(top.gpu_id, top.count, lang), usable=gb_short(top.gpu_memory_bytes))
        time = timed.get(sized.arguments.get("model"))
        if time is not None:
            line += msg(lang, "answer.jobs_other_time", time=duration(typed(time, TrainingTimeResult).hours, lang),
                        config=config_label(time.arguments["gpu"], int(time.arguments["count"]), lang))
        out.append(line)
    return out


def _job_label(r: TrainingMemoryResult, lang: str) -> str:
    return f"{r.model} ({method_label(r.method, lang)})"


def _lighter_methods(alts: list[tuple[str, ToolCall]], lang: str) -> list[str]:
    """When the requested training does not fit the card: what LoRA / QLoRA would need on it."""
    lines = []
    order = ("checkpointing", "zero3", "offload", "lora", "qlora")  # the same method first, then lighter ones
    for alt, c in sorted(alts, key=lambda ac: order.index(ac[0]) if ac[0] in order else len(order)):
        if alt in order and c.ok and c.name == "size_training":
            r = typed(c, TrainingMemoryResult)
            key = "answer.lighter_fits" if r.fits else "answer.lighter_short"
            how = msg(lang, f"alt_train.{alt}", cpu=gb_short(r.cpu_bytes)) if alt not in ("lora", "qlora") \
                else method_label(alt, lang)
            lines.append(msg(lang, key, method=how, need=gb(r.per_gpu_bytes),
                             card=config_label(c.arguments.get("gpu"), r.gpus, lang),
                             have=gb(r.gpu_memory_bytes or 0)))
    return lines


def _pick_tail(calls: list[ToolCall], p: Profile, lang: str) -> str:
    """What to buy, for a headline that sized a run on no card: the recommendation's first priced option."""
    rec = _by_name(calls, "recommend")
    if rec is None or not rec.ok or not priced(typed(rec, Recommendation)):
        return ""
    top = typed(rec, Recommendation)
    where = msg(lang, "compose.inference_section.within", budget=money(p.budget.amount, p.budget.currency)) \
        if p.budget else msg(lang, "compose.inference_section.under_these_constraints")
    return msg(lang, "answer.train_pick", where=where, option=_option_brief(priced(top)[0], rec_currency(top), lang))


def _training_section(calls: list[ToolCall], p: Profile, plan: Plan, lang: str,
                      previous: dict[str, ToolCall], detailed: bool = True, time_first: bool = False,
                      cost_first: bool = False) -> list[str]:
    size = _by_name(calls, "size_training")
    out: list[str] = []
    if size is None:
        return out
    brief = repeated(previous, size)
    r = typed(size, TrainingMemoryResult)
    gpu = size.arguments.get("gpu")
    count = packages(size)
    # pre-training implied by the dataset is sized as full training and named as what it is
    pretrain = plan.assumed.get("method") == "pretrain" or p.method == "pretrain"
    method = method_label(r.method, lang, pretrain)
    if r.method in ("lora", "qlora") and size.arguments.get("zero_stage") == 3:  # the frozen base sharded too
        method = f"{method}, {msg(lang, 'alt_train.zero3')}"
    what = f"{said_model(r.model, p.model, p.model_said)} ({method})"
    card = load_catalog().gpu(gpu) if gpu else None
    if card is not None and card.inference_only:  # the memory may fit; its software stack does not train
        out.append(msg(lang, "compose.training_section.inference_only", gpu=card.name, what=what,
                       per_gpu_bytes=gb(r.per_gpu_bytes)))
    elif r.fits is True:
        out.append(msg(lang, "compose.training_section.answer_training_fits_per",
                       config_label=config_label(gpu, count, lang), what=what, per_gpu_bytes=gb(r.per_gpu_bytes)))
    elif r.fits is False:
        out.append(msg(lang, "compose.training_section.answer_training_does_not",
                       config_label=config_label(gpu, count, lang), what=what, per_gpu_bytes=gb(r.per_gpu_bytes)))
    else:
        key = "verdict.training_need_gpus" if count > 1 else "verdict.training_need"
        out.append(msg(lang, key, what=what, need=gb(r.per_gpu_bytes), count=count, tail=_pick_tail(calls, p, lang)))
    if r.gpu_memory_bytes and r.headroom_bytes is not None:
        out.append(fit_line(r, lang))
        out += [render(a, lang) for a in r.assumptions if a.id == "inference.assume.devices"]
    out.append(msg(lang, "compose.training_section.trainable_parameters_m_b",
                   trainable_params=num(r.trainable_params / 1000000.0), params=num(r.params / 1000000000.0, 2),
                   seq=num(r.seq), micro_batch=num(r.micro_batch)))
    out += _diff(previous.get("size_training"), r, lang)
    if not brief and not detailed:
        out.append(terms_inline(r, lang))
        if r.cpu_bytes:
            out.append(msg(lang, "compose.training_section.host_ram_also_needed", cpu_bytes=gb_short(r.cpu_bytes)))
    elif not brief:
        out.append("")
        out.append(msg(lang, "compose.training_section.memory_breakdown_per_gpu"))
        out += term_lines(r, lang, explain=detailed, skip=("host RAM per node",))
        if r.cpu_bytes:
            out.append(msg(lang, "compose.training_section.host_ram_also_needed_2", cpu_bytes=gb(r.cpu_bytes)))
    tt = _by_name(calls, "training_time")
    if tt is not None:
        d = typed(tt, TrainingTimeResult)
        cost = money_in(d.cost_usd, d.cost_cny, default_currency(lang), lang, d.cny_per_usd)
        out.append("")
        unpriced = "" if d.cost_usd is not None or d.cost_cny is not None else "_unpriced"  # no '—' for a cost
        time_line = msg(lang, f"compose.training_section.time_about_gpu_hours{unpriced}",
                        count=d.count, gpu=d.gpu, hours=duration(d.hours, lang), gpu_hours=num(d.gpu_hours),
                        mfu=num(d.mfu), cost=cost, low=duration(d.hours_range[0], lang),
                        high=duration(d.hours_range[1], lang), basis=msg(lang, _mfu_basis(d)))
        out.append(time_line)
        if p.deadline_days:
            ok = d.hours <= p.deadline_days * 24
            out.append(msg(lang, "verdict.deadline_ok" if ok else "verdict.deadline_missed",
                           days=num(p.deadline_days)))
        checkpointed = r.fits is False and d.flops_factor > 6  # timed as it fits: with activations recomputed
        if time_first and (r.fits is not False or checkpointed):  # 'how long': the time is the verdict
            out[out.index(time_line)] = msg(lang, f"compose.training_section.time_cost{unpriced}",
                                            gpu_hours=num(d.gpu_hours), mfu=num(d.mfu), cost=cost)
            key = "time_verdict_checkpointed" if checkpointed else "time_verdict"
            lead = msg(lang, f"compose.training_section.{key}", count=d.count, gpu=d.gpu, what=what,
                       hours=duration(d.hours, lang), low=duration(d.hours_range[0], lang),
                       high=duration(d.hours_range[1], lang), basis=msg(lang, _mfu_basis(d)))
            if cost_first and d.cost_usd is not None and d.price_per_gpu_hour:  # 'what would renting it cost?'
                rate = money_in_exact(d.price_per_gpu_hour, d.price_per_gpu_hour * d.cny_per_usd,
                                      default_currency(lang), lang, d.cny_per_usd)
                lead = msg(lang, "compose.training_section.cost_verdict", count=d.count, gpu=d.gpu, cost=cost,
                           hours=duration(d.hours, lang), gpu_hours=num(d.gpu_hours), rate=rate) + "\n" + lead
            fit = out[0].replace("**", "").removeprefix(word(lang, "answer_prefix"))
            if checkpointed:
                fit = msg(lang, "compose.training_section.without_checkpointing", fit=fit)
            out = [lead, fit, *out[1:]]
    return out


def code_on_card(gpu_id: str, code_id: str, lang: str, tokens: int | None = None, cuda_code: bool = False) -> str:
    """Whether the card named runs the scientific code asked about: no GPU build for its software stack; a
    double-precision code on a card with little FP64; an input longer than its memory holds (``tokens``, where the
    code documents tokens per GB); or a fit, by the rate the code computes in."""
    g, code = load_catalog().gpu(gpu_id), scientific_code(code_id)
    stack = stack_family(g)
    if not has_gpu_build(code, g):
        builds = punct(lang, "list").join(msg(lang, f"recommend.code_stack.{s}") for s in code.stacks)
        return msg(lang, "sci_card.no_build", gpu=g.name, code=code.name, stack=STACK_NAMES[stack], builds=builds)
    fp64, fp32 = g.throughput.fp64, g.throughput.fp32
    if tokens and code.tokens_per_gb:  # AlphaFold 3: its documented input per GB of memory
        holds = g.memory_gb * code.tokens_per_gb
        key = "sci_card.tokens_ok" if tokens <= holds else "sci_card.tokens_short"
        return msg(lang, key, gpu=g.name, code=code.name, memory=num(g.memory_gb, 0), holds=num(holds, 0),
                   tokens=num(tokens, 0), need=num(tokens / code.tokens_per_gb, 0), per_gb=num(code.tokens_per_gb, 0))
    if cuda_code and stack != "cuda":  # the buyer's own CUDA code beside it: the card runs the named code only
        return msg(lang, "sci_card.cuda_code", gpu=g.name, code=code.name, stack=STACK_NAMES[stack])
    if code.fp64:
        if fp64 is None or (fp32 and fp64 < fp32 * WEAK_FP64_SHARE):
            return msg(lang, "sci_card.fp64_weak", gpu=g.name, code=code.name,
                       fp64=num(fp64) if fp64 is not None else word(lang, "unknown"))
        return msg(lang, "sci_card.fp64_ok", gpu=g.name, code=code.name, fp64=num(fp64))
    return msg(lang, "sci_card.fp32_ok", gpu=g.name, code=code.name,
               fp32=num(fp32) if fp32 is not None else word(lang, "unknown"))


def _card_needed(info: ToolCall | None, rec: ToolCall | None, p: Profile, lang: str) -> str | None:
    """'Do we need an A100?' beside this turn's ranking: :func:`necessity` against its pick."""
    if info is None or rec is None or not rec.ok:
        return None
    options = typed(rec, Recommendation).options
    if not options:
        return None
    return necessity([typed(info, GPUInfo).id], options[0].model_dump(), p, lang)


def necessity(asked: list[str], top: dict[str, Any], p: Profile, lang: str) -> str | None:
    """'Do we need an A100 (or H100)?': yes when one of them is the ranking's pick ``top`` (an Option's fields);
    no when the pick gives more of the rate the work runs at (FP64 or FP32) than any of them alone — both said with
    the rates; None when neither holds."""
    metric = "fp64" if p.fp64 is not False else "fp32"
    if top["gpu_id"] in asked:
        return msg(lang, "sci_card.needed", gpu=gpu_name(top["gpu_id"]))
    have = top.get(f"{metric}_tflops") or 0.0
    cat = load_catalog()
    rates = {g: cat.gpu(g).throughput.get(metric) or 0.0 for g in asked}
    if not have or any(r >= have for r in rates.values()):
        return None
    best = max(rates, key=lambda g: rates[g])
    return msg(lang, "sci_card.not_needed", gpu=punct(lang, "list").join(gpu_name(g) for g in asked),
               metric=metric.upper(), pick=config_label(top["gpu_id"], top["count"], lang), pick_rate=num(have),
               rate=num(rates[best]), best=gpu_name(best))


def _scientific_section(calls: list[ToolCall], p: Profile, plan: Plan, lang: str,
                        necessity: bool = False) -> list[str]:
    out: list[str] = []
    info = _by_name(calls, "gpu_info")
    sci = _by_name(calls, "scientific_fp64")
    rec = _by_name(calls, "recommend")
    needed = _card_needed(info, rec, p, lang) if necessity else None  # '有必要上 A100 吗'
    if needed is not None:
        out.append(needed)
    elif info is not None and p.sci_code:  # 'is a 4090 enough for GROMACS?', '海光DCU 行不行？': that card, first
        out.append(code_on_card(info.arguments["name"], p.sci_code, lang, p.sequence_tokens, bool(p.cuda_required)))
    need = word(lang, "fp64_needed" if p.fp64 is not False else "fp64_not_needed")
    size = msg(lang, "compose.scientific_section.gb_problem", problem_size_gb=num(p.problem_size_gb)) \
        if p.problem_size_gb else msg(lang, "compose.scientific_section.problem_size_unknown")
    if info is not None and sci is not None:
        g, sres = typed(info, GPUInfo), typed(sci, ScientificResult)
        fp64_tf, fp32_tf = g.throughput.fp64, g.throughput.fp32
        weak = fp64_tf is not None and bool(fp32_tf) and fp64_tf < (fp32_tf or 0) * WEAK_FP64_SHARE
        fits = word(lang, "fits" if sres.fits else "does_not_fit")
        tail = word(lang, "fp64_weak_tail") if weak and p.fp64 is not False else ""
        where = config_label(info.arguments["name"], sres.gpus, lang)
        out.append(msg(lang, "compose.scientific_section.answer",
                       need=need, size=size, where=where, fits=fits, tail=tail))
    elif rec is not None:
        options = typed(rec, Recommendation).options
        n = len(options)
        metric = "FP64" if p.fp64 is not False else "FP32"
        top = options[0] if options else None
        if top is not None and top.score_basis == "performance-only" and top.total_price_usd is not None:
            perf = top.fp64_tflops if metric == "FP64" else top.fp32_tflops  # a budget filled: its pick leads
            out.append(msg(lang, "verdict.sci_budget_pick", need=need, size=size, n=n, metric=metric,
                           config=config_label(top.gpu_id, top.count, lang), perf=num(perf or 0),
                           total=total_text(top, user_currency(p, lang, ("USD", "CNY")), lang)))
        else:
            out.append(msg(lang, "verdict.sci_options" if n else "verdict.sci_none", need=need, size=size, n=n,
                           metric=metric))
    if info is not None:
        g = typed(info, GPUInfo)
        fp64 = g.throughput.get("fp64")
        fp32 = g.throughput.get("fp32")
        unknown = word(lang, "unknown")
        out.append(msg(lang, "verdict.sci_card", name=g.name, fp64=num(fp64) if fp64 is not None else unknown,
                       fp32=num(fp32) if fp32 is not None else unknown, memory=num(g.memory_gb),
                       bandwidth=num(g.bandwidth_gbs), ecc=word(lang, "yes" if g.ecc else "no")))
        if p.fp64 is not False and fp64 is not None and fp32 and fp64 < fp32 * WEAK_FP64_SHARE:
            out.append(msg(lang, "compose.scientific_section.note_this_card_s"))
    if rec is not None and rec.arguments.get("fp64_required", True) and p.fp64 is not False:
        kind = rec.arguments.get("fp64_kind") or ("matrix" if rec.arguments.get("matrix_n") else "vector")
        out.append(msg(lang, f"recommend.assume.fp64_{kind}"))  # which FP64 rate the ranking used, and why
    if sci is not None:
        s = typed(sci, ScientificResult)
        verdict = word(lang, "fits" if s.fits else "does_not_fit")
        out.append(msg(lang, "compose.scientific_section.problem_holds_per_gpu",
                       memory_bytes=gb(s.memory_bytes), per_gpu_bytes=gb(s.per_gpu_bytes), verdict=verdict))
    return out


def _each_maker(r: Recommendation, vendors: list[str], currency: str, lang: str) -> list[str]:
    """'选哪个：昇腾、海光、寒武纪': with a few makers weighed, each one's best option (or that none qualifies)."""
    if not 2 <= len(vendors) <= 4:
        return []
    parts = []
    for vendor in vendors:
        best = next((o for o in r.options if o.vendor.lower() == vendor.lower()), None)
        parts.append(msg(lang, "compose.recommend_section.maker_best", maker=vendor,
                         option=_option_brief(best, currency, lang)) if best is not None
                     else msg(lang, "compose.recommend_section.maker_none", maker=vendor))
    return [msg(lang, "compose.recommend_section.each_maker", items=punct(lang, "semicolon").join(parts))]


def _recommend_section(calls: list[ToolCall], lang: str, alternatives: bool = False,
                       detailed: bool = True, currency: str | None = None, psu_w: float | None = None) -> list[str]:
    rec = _by_name(calls, "recommend")
    if rec is None:
        return []
    r = typed(rec, Recommendation)
    out = [""]
    known = priced(r)
    unpriced = [o for o in r.options if o.total_price_usd is None]
    cur = r.price_currency or currency or r.currency
    if known:  # the priced options make the table; the unpriced ones (not checked against a budget) follow
        by_speed = all(o.score_basis == "performance-only" for o in known)  # a budget for training or science
        out.append(msg(lang, "compose.recommend_section.recommended_configurations_performance"
                       if by_speed else "compose.recommend_section.recommended_configurations_performance_per"))
        out += _options(r.model_copy(update={"options": known}), lang, detailed=detailed, currency=currency)
        out += _host_line(known[:3], cur, lang)
        out += _each_maker(r, rec.arguments.get("vendors") or [], cur, lang)
        if psu_w and known[0].recommended_psu_w > psu_w:  # the user's PSU is no gate, but it is said
            out.append(msg(lang, "compose.recommend_section.psu_upgrade", psu=num(psu_w),
                           need=num(known[0].recommended_psu_w), option=_option_brief(known[0], cur, lang)))
        if unpriced:
            out.append(msg(lang, "compose.recommend_section.unpriced_also", options=punct(lang, "semicolon").join(
                _option_brief(o, cur, lang) for o in unpriced[:3])))
    elif unpriced:
        out.append(msg(lang, "compose.recommend_section.unpriced_heading"))
        out += _options(r, lang, detailed=detailed, currency=currency)
        out.append(msg(lang, "compose.recommend_section.unpriced_note"))
    elif alternatives:  # the alternatives above already say what would work
        prec = rec.arguments.get("precision")
        out.append(msg(lang, "verdict.why_none_at", precision=prec) if prec
                   else msg(lang, "verdict.why_none_native"))
        out += _rejections(r, lang)
    else:
        out.append(msg(lang, "compose.recommend_section.no_configuration_passes_these"))
        out += _rejections(r, lang)
        out.append(msg(lang, "compose.recommend_section.consider_scientific" if r.workload == "scientific"
                       else "compose.recommend_section.consider_lower_precision_e"))
    return out


def _check_section(calls: list[ToolCall], lang: str, brief: bool = False, detailed: bool = True) -> list[str]:
    chk = _by_name(calls, "check_build")
    if chk is None:
        return []
    if not detailed:  # the short reply: blocking problems other than the memory fit the verdict already gave
        findings = typed(chk, BuildReport).findings
        blocking = [f for f in findings if f.severity == "error" and f.category != "memory"]
        warns = sum(1 for f in findings if f.severity == "warning")
        lines = _findings(blocking, lang) if not brief else []
        if warns:
            lines.append(msg(lang, "compose.check_section.build_check_has_more", warns=warns))
        return ["", *lines] if lines else []
    report = typed(chk, BuildReport)
    lines = [] if brief else _findings(report.findings, lang, limit=len(report.findings))  # every note it has
    errors = sum(1 for f in report.findings if f.severity == "error")
    warns = sum(1 for f in report.findings if f.severity == "warning")
    head = msg(lang, "compose.check_section.build_check_error_s", errors=errors, warns=warns)
    return ["", head, *lines]


def _assumption_lines(plan: Plan, calls: list[ToolCall], p: Profile, lang: str) -> list[str]:
    out: list[str] = []
    a = plan.assumed
    if p.service_model and p.model:
        key = "service_model_for_api" if p.api_model else "service_model"
        out.append(msg(lang, f"compose.assumption_lines.{key}", model_name=model_name(p.model),
                       precision=(p.precision or "").upper(), api=api_name(p.api_model) if p.api_model else ""))
    if plan.model_assumed:
        key = "uncatalogued_model" if p.model_said else "only_size_b_known"
        out.append(msg(lang, f"compose.assumption_lines.{key}", x=num(p.params_b or 0), name=p.model_said,
                       model_name=model_name(plan.model_assumed)))
    if "precision" in a and p.use_case == "inference":
        out.append(msg(lang, "compose.assumption_lines.no_precision_given_model"))
    if "context_tokens" in a:
        key = "context_tokens_service" if a["context_tokens"] != DEFAULT_CONTEXT else "context_tokens"
        out.append(msg(lang, f"compose.assumption_lines.{key}", DEFAULT_CONTEXT=num(a["context_tokens"]),
                       users=num(p.concurrency or 1)))
    if "concurrency" in a:
        out.append(msg(lang, "compose.assumption_lines.request_time", DEFAULT_CONCURRENCY=num(DEFAULT_CONCURRENCY)))
    if isinstance(a.get("method"), str):
        method = method_label(a["method"], lang)
        out.append(msg(lang, "compose.assumption_lines.method_not_given", method=method))
    if p.dataset_samples and not p.dataset_tokens and not p.tokens_per_sample:  # a length said is no assumption
        out.append(msg(lang, "compose.assumption_lines.tokens_per_sample", TOKENS_PER_SAMPLE=TOKENS_PER_SAMPLE))
    size = _by_name(calls, "size_inference")
    if size is not None:
        engine_id = typed(size, InferenceMemoryResult).engine
        engine = present_word(lang, "engine", engine_id)
        out.append(msg(lang, "compose.assumption_lines.memory_follows_s_accounting", engine=engine))
    return out


def _tool_assumptions(calls: list[ToolCall], lang: str, limit: int = 3) -> list[str]:
    out: list[str] = []
    for c in calls:
        if c.ok and c.name in ("size_inference", "size_training", "training_time"):
            out += [render(a, lang) for a in result_of(c).assumptions[:2]]
    return out[:limit]


_SAID_IN_SPEED_LINE = ("perf.decode.offload_", "perf.prefill.offload")  # the speed line names the RAM bound


def _tool_warnings(calls: list[ToolCall], lang: str, limit: int = 3) -> list[str]:
    """Tool warnings not already said in the reply (the fit verdict is)."""
    out: list[str] = []
    for c in calls:
        if c.ok and c.name != "recommend":
            for w in getattr(result_of(c), "warnings", []):
                if getattr(w, "id", "").startswith(_SAID_IN_SPEED_LINE):
                    continue
                text = render(w, lang)
                if text not in out and not render(w, "en").startswith("does not fit"):
                    out.append(text)
    return out[:limit]



def _errors(calls: list[ToolCall], lang: str) -> list[str]:
    """Failed tools, each with its error in the reply's language."""
    return [msg(lang, "answer.tool_failed", tool=get_tool(c.name).title(lang), error=c.error_in(lang))
            for c in calls if not c.ok and c.name != "search_knowledge"]


# ----------------------------------------------------------------------------- replies


def _market_line(session: Session, lang: str) -> list[str]:
    """A card under discussion that cannot be bought (or only under a licence) where the user buys it."""
    p = session.profile
    if not p.gpu or any(e.gpu == p.gpu for e in p.existing or []):  # owned cards need no shop
        return []
    region, _ = session_region(session, lang)
    where = availability(p.gpu, region)
    if where.status == "available" or where.rule is None:
        return []
    return ["", msg(lang, f"market.named_{where.status}", gpu=gpu_name(p.gpu),
                    region=msg(lang, f"market.region.{region}"), rule=msg(lang, f"market.rule.{where.rule.id}"))]


def packages(call: ToolCall) -> int:
    """The cards a sizing was asked for, as bought: a package software splits (a dual-die 910C) is sized as its
    devices, so the result counts devices where the buyer counts packages."""
    return int(call.arguments.get("gpus") or sizing(call).gpus)


def count_verdict(calls: list[ToolCall], counts: list[ToolCall], lang: str, currency: str = "USD") -> list[str]:
    """'How many do I need?': the least count (of 1, 2, 4, 8, the nodes of 8 tried and the one asked about) that
    fits; past one node, the network between the nodes and the build's total from the recommender's plan."""
    if not counts:
        return []
    size = _by_name(calls, "size_inference") or _by_name(calls, "size_training")
    tried = sorted([c for c in [size, *counts] if c is not None and c.ok], key=lambda c: sizing(c).gpus)
    if not tried:
        return []
    card = tried[0].arguments.get("gpu")
    if tried[0].name == "size_training" and card and load_catalog().gpu(card).inference_only:
        return []  # no count of an inference card trains: the training verdict says so
    enough = next((c for c in tried if sizing(c).fits), None)
    r = sizing(enough or tried[-1])
    n = packages(enough or tried[-1])
    usable = usable_bytes(r)
    nodes = nodes_for(n)
    key = ("count.none_cluster" if n >= MAX_CLUSTER_NODES * NODE_GPUS else "count.none") if not enough else \
        "count.enough_nodes" if nodes > 1 else "count.enough"
    out = [msg(lang, key, n=n, gpu=r.gpu or "?", need=gb_short(r.per_gpu_bytes), usable=gb_short(usable),
               nodes=nodes, per_node=n // nodes)]
    rec_call = _by_name(calls, "recommend")
    rec = result_of(rec_call) if rec_call is not None and rec_call.ok else None
    plan = next((o for o in rec.options if o.gpu == r.gpu and o.count == r.gpus and o.network is not None), None) \
        if enough and nodes > 1 and isinstance(rec, Recommendation) else None
    if plan is not None:  # the same build as the recommender priced it: network and total
        out.append(msg(lang, "count.network", network=network_text(plan, currency, lang),
                       total=total_text(plan, currency, lang)))
    return [*out, ""]


def compose_answer(plan: Plan, session: Session, calls: list[ToolCall], citations: list[Citation], lang: str,
                   parsed: Parsed, previous: dict[str, ToolCall], detailed: bool = False) -> str:
    """The answer of an 'answer' turn: verdict and key figures; ``detailed`` adds what each term is."""
    p = session.profile
    out: list[str] = []
    counts = [c for c in calls if plan.alt_calls.get(c.call_id) == "count" and c.ok]
    alts = [(plan.alt_calls[c.call_id], c) for c in calls if c.call_id in plan.alt_calls
            and plan.alt_calls[c.call_id] != "count"]
    calls = [c for c in calls if c.call_id not in plan.alt_calls]  # the requested configuration's own calls
    out += rec_change_line(previous, calls, p, lang)
    out += count_verdict(calls, counts, lang, user_currency(p, lang, ("USD", "CNY")))
    if p.use_case == "inference":
        out += _cheapest_line(calls, alts, lang) if parsed.asks_cheapest else []
        out += _inference_section(calls, p, plan, lang, previous, alts, citations, detailed=detailed,
                                  speed_first=parsed.kind == Kind.speed or parsed.asks[:1] == ["speed"])
        if parsed.kind == Kind.speed and not _by_name(calls, "perf_decode") and p.card_memory_gb and not p.gpu:
            named = next(iter(parsed.unknown_gpus), None)  # a card the catalog lacks, named with its memory
            out.append(msg(lang, "speed.need_bandwidth", card=named) if named
                       else msg(lang, "speed.need_card"))  # speed follows from bandwidth, not from a size
    elif p.use_case == "training":
        cost_first = parsed.asks[:1] == ["run_cost"] or parsed.kind == Kind.rent_vs_buy
        out += _training_section(calls, p, plan, lang, previous, detailed=detailed, cost_first=cost_first,
                                 time_first=parsed.kind == Kind.speed or "training_time" in parsed.asks[:1]
                                 or cost_first)
        out += _lighter_methods(alts, lang)
        out += _other_jobs(calls, alts, lang)
        out += _add_to_owned(calls, p, lang, user_currency(p, lang, ("USD", "CNY")))
    else:
        out += _scientific_section(calls, p, plan, lang, necessity="necessity" in parsed.asks)
    size_call = _by_name(calls, "size_inference") or _by_name(calls, "size_training")
    brief = repeated(previous, size_call)  # same configuration as last turn: only what is new in detail
    # a repeated build check is brief, unless this turn asks for the details the last one offered
    out += _check_section(calls, lang, brief=brief and repeated(previous, _by_name(calls, "check_build"))
                          and not detailed, detailed=detailed)
    said = next((turn.text for turn in reversed(session.history) if turn.role == "assistant"), "")
    out += [line for line in _market_line(session, lang) if not line or line not in said]  # once per conversation turn
    fits_here = any(c.ok and getattr(result_of(c), "fits", None) and c.arguments.get("gpu") for _, c in alts)
    rec_call = _by_name(calls, "recommend")
    upgrade = bool(p.existing) and parsed.asks[:1] == ["recommend"]  # 'what should I buy?', cards owned
    other_options = ("alternatives" in parsed.asks or upgrade) and rec_call is not None and bool(
        typed(rec_call, Recommendation).options)  # 'any other options?' with none found: the answer leads
    if detailed or not fits_here or other_options:  # the short reply keeps to the user's own cards when one fits
        options = _recommend_section(calls, lang, alternatives=any(c.ok for _, c in alts), detailed=detailed,
                                     currency=user_currency(p, lang, ("USD", "CNY")), psu_w=p.psu_w)
        # 'any other options?': the options answer it, so they come first
        out = [*options, "", *out] if other_options and options else [*out, *options]
    errs = _errors(calls, lang)
    if errs:
        out += ["", msg(lang, "compose.compose_answer.what_could_not_computed"), *errs]
    if not detailed:
        pass
    elif p.use_case == "inference" and _by_name(calls, "size_inference") and not brief:
        out += ["", msg(lang, "plain.inference")]
    elif p.use_case == "training" and _by_name(calls, "size_training") and not brief:
        out += ["", msg(lang, "plain.training")]
    assumptions = _assumption_lines(plan, calls, p, lang)
    if detailed:
        assumptions += _tool_assumptions(calls, lang)
    if brief:  # only what was not said last turn
        said = next((turn.text for turn in reversed(session.history) if turn.role == "assistant"), "")
        assumptions = [a for a in assumptions if a not in said]
    if assumptions:
        out += ["", msg(lang, "compose.compose_answer.assumptions") + punct(lang, "semicolon").join(assumptions)
                + punct(lang, "stop")]
    if "use_case" in plan.assumed:
        key = "assume.use_case_training" if plan.assumed["use_case"] == "training" else "assume.use_case"
        out += ["", msg(lang, key)]
    if "sci_code" in plan.assumed:
        code = scientific_code(plan.assumed["sci_code"])
        out += ["", msg(lang, "assume.sci_fp64" if code.fp64 else "assume.sci_fp32", code=code.name)]
        if code.cuda_only:
            out.append(msg(lang, "assume.sci_cuda", code=code.name))
        else:  # which vendors' cards can run it at all
            stacks = punct(lang, "list").join(msg(lang, f"recommend.code_stack.{s}") for s in code.stacks)
            out.append(msg(lang, "assume.sci_stacks", code=code.name, stacks=stacks))
    if "precision_gguf" in plan.assumed:
        out.append(msg(lang, "assume.ollama", precision=plan.assumed["precision_gguf"]))
    if plan.assumed.get("card_only") and _by_name(calls, "recommend"):
        out.append(msg(lang, "afford.card_only"))
    if plan.assumed.get("region") and _by_name(calls, "recommend"):
        out.append(msg(lang, f"assume.region_{plan.assumed['region']}"))
    warnings = _tool_warnings(calls, lang) if p.use_case != "scientific" and not brief else []
    if warnings:
        out += ["", msg(lang, "answer.warnings_head"), *[f"- {w}" for w in warnings]]
    if citations:
        out += ["", *citations_block(citations, lang)]
    return "\n".join(out).strip()


_FORMULA_OF_KIND = {"rent_vs_buy": "rent_vs_buy", "build": "check_build"}


def compose_why(session: Session, citations: list[Citation], lang: str) -> str:
    out = [msg(lang, "compose.compose_why.here_how_numbers_were")]
    shown = False
    formula_tool = _FORMULA_OF_KIND.get(session.last_kind or "")
    call = session.last_results.get(formula_tool) if formula_tool else None
    formulas = getattr(result_of(call), "formula", None) if call is not None and call.ok else None
    if formulas:
        out += [f"- `{render(f, lang)}`" for f in (formulas if isinstance(formulas, list) else [formulas])[:6]]
        if citations:
            out += ["", *citations_block(citations, lang)]
        return "\n".join(out).strip()
    compared = session.last_kind == "compare"  # explain the first compared option's sizing
    for name in ("size_inference", "size_training", "perf_decode", "training_time", "scientific_fp64"):
        call = (next((c for k, c in session.last_results.items() if k.startswith(f"compare/{name}/")), None)
                if compared else session.last_results.get(name))
        if not call or not call.ok:
            continue
        for term in result_of(call).terms[:8]:
            label = term_label(term.name, lang)
            value = gb(term.value) if term.unit == "bytes" else unit_value(term.value, term.unit, lang)
            out.append(msg(lang, "compose.compose_why.term", label=label, value=value,
                           formula=render(term.formula, lang), explain=render(term.explain, lang)))
            shown = True
        if name.startswith("size"):
            out += ["", msg(lang, "plain.training" if name == "size_training" else "plain.inference"), ""]
    rec_call = session.last_results.get("recommend")
    if not shown and rec_call is not None and rec_call.ok:  # why this ranking: how options are scored and gated
        rec = typed(rec_call, Recommendation)
        out += [f"- {render(a, lang)}" for a in rec.assumptions
                if a.id.endswith(("_score", ".ecosystem", ".smallest_count", ".inference_memory"))]
        shown = True
    if not shown:
        out = [msg(lang, "compose.compose_why.there_no_result_explain")]
    if citations:
        out += ["", *citations_block(citations, lang)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()  # one blank line between blocks


def compose_ask(session: Session, lang: str) -> str:
    """Before the next question: what we have, and whether a card named can be bought where the user buys."""
    known = _known_summary(session.profile, lang)
    head = (msg(lang, "compose.compose_ask.got_size_this_properly", known=known) if known else
            msg(lang, "compose.compose_ask.sure_few_details_first"))
    return "\n".join([head, *_market_line(session, lang)])


def injection_notice(lang: str) -> str:
    return msg(lang, "compose.injection_notice.note_i_can_t")


_QUIET_REASONS = ("empty query", "the query has no words", "no passage matches")


def search_notice(calls: list[ToolCall], lang: str) -> str | None:
    """One short line when this turn's knowledge search was degraded or failed (None when it was fine).

    A dead vector store leaves keyword search (citations still come, less precise); an index that cannot
    be opened leaves no citations at all — the calculations are unaffected either way."""
    problem: str | None = None
    degraded = False
    for call in calls:
        if call.name != "search_knowledge":
            continue
        result = call.result or {}  # the search module's own JSON (no pydantic model)
        if not call.ok:
            problem = problem or (call.error or "error")
        elif result.get("reason") and not str(result["reason"]).startswith(_QUIET_REASONS):
            problem = problem or str(result["reason"])
        elif result.get("degraded"):
            degraded = True
    if problem:
        detail = problem.removeprefix("knowledge index unavailable: ")[:160]
        return msg(lang, "compose.search_notice.knowledge_base_unavailable_so", detail=detail)
    if degraded:
        return msg(lang, "compose.search_notice.vector_search_knowledge_base")
    return None


def fact_card(computed: str, calls: list[ToolCall], lang: str, limit: int = 6) -> str:
    """What an LLM explains, in at most ``limit`` labelled lines of the user's language: the computed verdict, each
    planned calculation's verdict line (need and usable memory, speed, build check, the top option with its price),
    and the first alternative that fits, named by its engine and precision."""
    headline = computed.strip().split("\n", 1)[0].replace("**", "").strip()
    labelled = re.match(r"^[^:：]{1,12}[:：]", headline)  # 'Answer: …' carries its label already
    lines = [headline if labelled else msg(lang, "compose.fact_card.answer", text=headline)] if headline else []
    alternative: str | None = None
    for c in calls:
        section = present_call(c, lang, options=1, rejected=0)
        facts = section.facts() if section is not None else []
        if not facts:
            continue
        if not c.alternative:
            rows = section.table.rows if section is not None and section.table else []
            top = " · ".join(cell for cell in rows[0] if cell) if rows else ""
            lines.append(f"{facts[0]} {top}".strip())  # a ranking: its header with the top option
        elif alternative is None and isinstance(c.result, dict) and c.result.get("fits") is True:
            alternative = msg(lang, "compose.fact_card.alternative", engine=c.arguments.get("engine") or "",
                              precision=c.arguments.get("precision") or "", text=facts[0])
    lines = list(dict.fromkeys(lines))[:limit - 1 if alternative else limit]
    return "\n".join([*lines, *([alternative] if alternative else [])])
