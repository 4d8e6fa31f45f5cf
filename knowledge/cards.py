"""Generated documents: one card per GPU and per model, the three market-tier tables, and the
compatibility rules — each in English and Chinese, built from the catalog so they never disagree with it.

Every sentence and label comes from the ``cards.*`` messages (punctuation from ``fmt.*``) of
:mod:`knowledge.messages`; this module only picks the facts and the order they come in.

Ids: ``gpu/{id}/{lang}``, ``model/{id}/{lang}``, ``tier/{tier}/{lang}``, ``rule/{id}/{lang}``.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from typing import Any

from knowledge.catalog import Catalog, load_catalog
from knowledge.catalog_text import gpu_link_note, gpu_notes, gpu_price_note, model_notes
from knowledge.corpus import LANGS, Passage
from knowledge.layers import attention_layer_groups, indexer_bytes_per_token_layer
from knowledge.messages import FALLBACK, has, msg
from knowledge.schema import GPU, Model, Tier

GB = 1e9  # bytes; the catalog's memory figures are vendor GB

_PREC_ORDER = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")
# tier-table columns, in order (labels: cards.tier.col.*)
_COLUMNS = ("gpu", "vendor", "memory", "bandwidth", "bf16", "fp64", "power", "price")


def num(value: float | None) -> str:
    """Plain number without thousands separators (keeps '3350' one token for the lexical channel)."""
    if value is None:
        return "—"
    if abs(value - round(value)) < 1e-9:
        return str(round(value))
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.1f}".rstrip("0").rstrip(".")


def _t(lang: str, key: str, **params: object) -> str:
    """The message ``cards.{key}`` in ``lang``."""
    return msg(lang, f"cards.{key}", **params)


def _opt(lang: str, key: str, present: object, **params: object) -> str:
    """``cards.{key}`` when ``present`` is truthy, else nothing (an optional clause of a sentence)."""
    return _t(lang, key, **params) if present else ""


def _sep(lang: str, kind: str) -> str:
    """A separator from ``fmt.*`` (``list``, ``comma``, ``semicolon``: each language's own punctuation),
    or ``join`` from ``cards.*`` (between figures, names and source ids)."""
    return _t(lang, "join") if kind == "join" else msg(lang, f"fmt.{kind}")


def _sentence(lang: str, clauses: Iterable[str]) -> str:
    return _sep(lang, "semicolon").join(clauses) + msg(lang, "fmt.stop")


def _yes(value: bool | None, lang: str) -> str:
    return _t(lang, "unknown" if value is None else ("yes" if value else "no"))


def _throughput(g: GPU, lang: str) -> str:
    t = g.throughput
    parts = []
    for p in _PREC_ORDER:
        v = getattr(t, p)
        if v is not None:
            parts.append(_t(lang, "gpu.tops" if p == "int8" else "gpu.tflops", precision=p.upper(), value=num(v)))
    text = _sep(lang, "join").join(parts) if parts else _t(lang, "gpu.no_figures")
    if g.unsupported:
        names = _sep(lang, "list").join(p.value.upper() for p in g.unsupported)
        text += _t(lang, "gpu.unsupported", names=names)
    return text


def _sparse(g: GPU, lang: str) -> str | None:
    s = g.sparse_throughput
    if s is None:
        return None
    parts = [
        _t(lang, "gpu.sparse_figure", precision=p.upper(), value=num(getattr(s, p)))
        for p in _PREC_ORDER
        if getattr(s, p) is not None
    ]
    if not parts:
        return None
    return _t(lang, "gpu.sparse", figures=_sep(lang, "join").join(parts))


def _price(g: GPU, lang: str) -> str | None:
    p = g.price
    if p is None:
        return None
    bits = []
    if p.usd:
        bits.append(_t(lang, "price.usd", usd=num(p.usd)))
    if p.cny:
        bits.append(_t(lang, "price.cny", cny=num(p.cny)))
    if p.rental_usd_per_hour:
        bits.append(_t(lang, "price.rent", rate=num(p.rental_usd_per_hour)))
    if not bits:
        return None
    note = gpu_price_note(g.id, lang)
    return _t(
        lang,
        "price.line",
        as_of=p.as_of,
        prices=_sep(lang, "comma").join(bits),
        note=_opt(lang, "paren", note, note=note),
    )


def _link(g: GPU, lang: str) -> str:
    link = g.interconnect
    key = f"cards.link_kind.{link.kind}"
    note = gpu_link_note(g.id, lang)
    return _t(
        lang,
        "link.line",
        kind=msg(lang, key) if has(FALLBACK, key) else link.kind,
        bandwidth=_opt(lang, "link.bandwidth", link.bandwidth_gbs, bandwidth=num(link.bandwidth_gbs)),
        max_gpus=_opt(lang, "link.max_gpus", link.max_gpus > 1, count=link.max_gpus),
        p2p=_yes(link.p2p, lang),
        note=_opt(lang, "paren", note, note=note),
    )


def _names(entry: GPU | Model, lang: str) -> str:
    others = [a for a in entry.aliases if a.lower() != entry.name.lower()]
    return _sep(lang, "join").join(others)


def _pcie(g: GPU, lang: str) -> str:
    if g.pcie_gen and g.pcie_lanes:
        return _t(lang, "gpu.pcie_lanes", gen=g.pcie_gen, lanes=g.pcie_lanes)
    return _opt(lang, "gpu.pcie", g.pcie_gen, gen=g.pcie_gen)


def gpu_card(g: GPU, lang: str) -> Passage:
    """The catalog facts of one GPU as a passage in ``lang``."""
    flags = [_t(lang, key) for key, on in (("gpu.domestic", g.domestic), ("gpu.china_market", g.china_market)) if on]
    aliases = _names(g, lang)
    lines = [
        _t(
            lang,
            "gpu.head",
            vendor=g.vendor,
            name=g.name,
            tier=_t(lang, f"tier_name.{g.tier.value}"),
            architecture=g.architecture,
            cc=_opt(lang, "gpu.cc", g.compute_capability, cc=g.compute_capability),
            isa=_opt(lang, "gpu.isa", g.isa_target, isa=g.isa_target),
            flags=_opt(lang, "gpu.flags", flags, flags=_sep(lang, "semicolon").join(flags)),
            aliases=_opt(lang, "aliases", aliases, aliases=aliases),
        ),
        _t(
            lang,
            "gpu.memory",
            memory=num(g.memory_gb),
            memory_type=g.memory_type,
            bandwidth=num(g.bandwidth_gbs),
            tb=g.bandwidth_gbs / 1000,
            ecc=_yes(g.ecc, lang),
        ),
        _t(lang, "gpu.dense", figures=_throughput(g, lang)),
    ]
    if sp := _sparse(g, lang):
        lines.append(sp)
    phys = [
        _t(lang, "phys.power", tdp=num(g.tdp_w)),
        _t(lang, "phys.form", form=_t(lang, f"form.{g.form_factor.value}")),
        _t(lang, "phys.cooling", cooling=_t(lang, f"cooling.{g.cooling.value}")),
    ]
    if g.slot_width:
        phys.append(_t(lang, "phys.slots", slots=num(g.slot_width)))
    if g.length_mm:
        phys.append(_t(lang, "phys.length", mm=num(g.length_mm)))
    if g.display_outputs:
        phys.append(_t(lang, "phys.display", count=g.display_outputs))
    else:
        phys.append(_t(lang, "phys.no_display"))
    if g.power_connectors:
        phys.append(_t(lang, "phys.connectors", connectors=_sep(lang, "list").join(g.power_connectors)))
    if pcie := _pcie(g, lang):
        phys.append(pcie)
    lines.append(_sentence(lang, phys))
    lines.append(_link(g, lang))
    lines.append(_t(lang, "gpu.software", software=_sep(lang, "list").join(g.software), mig=_yes(g.mig, lang)))
    if pr := _price(g, lang):
        lines.append(pr)
    if notes := gpu_notes(g.id, lang):
        lines.append(_t(lang, "notes", notes=notes))
    lines.append(
        _t(
            lang,
            "gpu.sources",
            sources=_sep(lang, "join").join(g.sources),
            as_of=g.as_of,
            confidence=g.confidence,
        )
    )
    return Passage(
        id=f"gpu/{g.id}/{lang}",
        title=_t(lang, "gpu.title", name=g.name, vendor=g.vendor),
        text="\n".join(lines),
        lang=lang,  # type: ignore[arg-type]
        # provenance metadata, the same English in every language (as for articles in knowledge.corpus)
        source=f"catalog GPU '{g.id}' (as of {g.as_of}, confidence {g.confidence}); sources: {', '.join(g.sources)}",
        as_of=g.as_of,
        kind="gpu-card",
        doc=f"gpu:{g.id}",
        names=(g.id, g.name, *g.aliases),
    )


def _kv_at(m: Model, context: int) -> float | None:
    """KV cache of one sequence of ``context`` tokens at 16-bit, by layer group (``knowledge.layers``): full
    layers cache every token, sliding layers their window, linear layers nothing (their state is apart)."""
    a = m.attention
    kind = a.kind.value
    if kind == "mla" and not (a.kv_lora_rank and a.qk_rope_head_dim):
        return None
    total = 0.0
    for g in attention_layer_groups(kind, m.layers, head_dim=a.head_dim, full_attention_layers=a.full_attention_layers,
                                    sliding_window=a.sliding_window, global_head_dim=a.global_head_dim,
                                    kv_lora_rank=a.kv_lora_rank, qk_rope_head_dim=a.qk_rope_head_dim):
        if kind == "mla":  # one latent + RoPE key per token, not per head; DSA adds the indexer key
            per_layer = g.score_width * 2 + (indexer_bytes_per_token_layer(a.indexer_head_dim)
                                             if a.indexer_head_dim else 0)
        elif g.kind == "full" and (a.global_head_dim or a.global_num_kv_heads):
            per_layer = 2 * (a.global_num_kv_heads or a.num_kv_heads) * (a.global_head_dim or a.head_dim) * 2
        else:
            per_layer = 2 * a.num_kv_heads * a.head_dim * 2
        total += per_layer * g.layers * g.attended(context)
    return total


def model_card(m: Model, lang: str) -> Passage:
    """The catalog facts of one model, with weight memory by precision, as a passage in ``lang``."""
    a = m.attention
    w16, w8, w4 = m.params_b * 2, m.params_b * 1, m.params_b * 0.5  # GB: params (1e9) × bytes/param
    kv = _kv_at(m, 1)  # the first token's share: every cached layer holds it
    kv_full = _kv_at(m, m.max_context)
    aliases = _names(m, lang)
    lines = [
        _t(
            lang,
            "model.head",
            name=m.name,
            family=m.family,
            kind=m.kind,
            params=num(m.params_b),
            active=_opt(lang, "model.active", m.is_moe, active=num(m.active_b)),
            aliases=_opt(lang, "aliases", aliases, aliases=aliases),
        ),
        _t(
            lang,
            "model.architecture",
            layers=m.layers,
            hidden=m.hidden_size,
            heads=a.num_heads,
            kv_heads=a.num_kv_heads,
            head_dim=a.head_dim,
            attention=a.kind.value,
            vocab=m.vocab_size,
            context=m.max_context,
            dtype=m.native_dtype.upper(),
        ),
    ]
    if m.moe:
        shared = m.moe.shared_experts
        lines.append(
            _t(
                lang,
                "model.moe",
                experts=m.moe.num_experts,
                top=m.moe.experts_per_token,
                shared=_opt(lang, "model.moe_shared", shared, shared=shared),
            )
        )
    if a.sliding_window:
        lines.append(_t(lang, "model.sliding", window=a.sliding_window, global_layers=a.full_attention_layers))
    lines.append(_t(lang, "model.weights", w16=num(round(w16, 1)), w8=num(round(w8, 1)), w4=num(round(w4, 1))))
    if kv and kv_full:
        windowed = a.kind.value in ("sliding", "hybrid")  # the cache grows more slowly than the context
        lines.append(
            _t(
                lang,
                "model.kv_grouped" if windowed else "model.kv",
                per_token=num(round(kv / 1e3, 1)),
                full=num(round(kv_full / GB, 1)),
                context=m.max_context,
            )
        )
    if m.license:
        lines.append(_t(lang, "model.license", license=m.license))
    if m.hf_repo:
        lines.append(_t(lang, "model.hf_repo", repo=m.hf_repo))
    if notes := model_notes(m.id, lang):
        lines.append(_t(lang, "notes", notes=notes))
    lines.append(_t(lang, "model.sources", sources=_sep(lang, "join").join(m.sources), as_of=m.as_of))
    return Passage(
        id=f"model/{m.id}/{lang}",
        title=_t(lang, "model.title", name=m.name),
        text="\n".join(lines),
        lang=lang,  # type: ignore[arg-type]
        source=f"catalog model '{m.id}' (as of {m.as_of}); sources: {', '.join(m.sources)}",
        as_of=m.as_of,
        kind="model-card",
        doc=f"model:{m.id}",
        names=(m.id, m.name, *m.aliases),
    )


def _price_cell(g: GPU) -> str:
    if g.price is None:
        return "—"
    bits = [f"${num(g.price.usd)}" if g.price.usd else "", f"¥{num(g.price.cny)}" if g.price.cny else ""]
    return " / ".join(b for b in bits if b) or "—"


def _gpu_sort_key(g: GPU) -> tuple[float, float, str]:
    return (-g.memory_gb, -g.bandwidth_gbs, g.name)


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def tier_table(catalog: Catalog, tier: Tier, lang: str) -> Passage:
    """Markdown table of every catalog GPU in ``tier``: memory, bandwidth, dense BF16, FP64, power, price."""
    gpus = sorted((g for g in catalog.gpus if g.tier == tier), key=_gpu_sort_key)
    head = _row(_t(lang, f"tier.col.{c}") for c in _COLUMNS) + "\n|" + "---|" * len(_COLUMNS)
    intro = "\n".join((_t(lang, f"tier_intro.{tier.value}"), _t(lang, "tier.count", count=len(gpus))))
    rows = []
    for g in gpus:
        bf16 = g.throughput.bf16 if g.throughput.bf16 is not None else g.throughput.fp16
        flag = _t(lang, "tier.domestic") if g.domestic else _opt(lang, "tier.china_market", g.china_market)
        rows.append(
            _row(
                (
                    g.name + flag,
                    g.vendor,
                    _t(lang, "tier.memory_cell", memory=num(g.memory_gb), memory_type=g.memory_type),
                    num(g.bandwidth_gbs),
                    num(bf16),
                    num(g.throughput.fp64),
                    num(g.tdp_w),
                    _price_cell(g),
                )
            )
        )
    text = "\n".join([intro, "", head, *rows]) if rows else intro + _t(lang, "tier.none")
    as_of = max((g.as_of for g in gpus), default=dt.date(2026, 1, 1))
    return Passage(
        id=f"tier/{tier.value}/{lang}",
        title=_t(lang, "tier.title", tier=_t(lang, f"tier_name.{tier.value}")),
        text=text,
        lang=lang,  # type: ignore[arg-type]
        source=f"generated from the GPU catalog ({len(gpus)} entries of tier '{tier.value}'); "
        "each row's sources are on its GPU card",
        as_of=as_of,
        kind="tier-table",
        doc=f"tier:{tier.value}",
    )


@cache
def load_rules() -> tuple[dict[str, Any], ...]:
    """The compatibility rules of ``knowledge/data/rules.toml`` (id, category, titles, texts, source)."""
    raw = resources.files("knowledge.data").joinpath("rules.toml").read_text(encoding="utf-8")
    data = tomllib.loads(raw)
    as_of = data.get("as_of", dt.date(2026, 11, 1))
    rules = tuple({**r, "as_of": r.get("as_of", as_of)} for r in data.get("rule", []))
    ids = [r["id"] for r in rules]
    if len(ids) != len(set(ids)):
        raise ValueError("rules.toml: duplicate rule ids")
    return rules


def rule_doc(rule: dict[str, Any], lang: str) -> Passage:
    """One compatibility rule as a passage in ``lang``."""
    return Passage(
        id=f"rule/{rule['id']}/{lang}",
        title=rule[f"title_{lang}"],
        text=rule[f"text_{lang}"].strip(),
        lang=lang,  # type: ignore[arg-type]
        source=f"compatibility rule '{rule['id']}'; sources: {rule['source']}",
        as_of=rule["as_of"],
        kind="rule",
        doc=f"rule:{rule['id']}",
    )


def _both(items: Iterable[Any], make: Callable[[Any, str], Passage]) -> list[Passage]:
    return [make(item, lang) for item in items for lang in LANGS]


def generate_documents(catalog: Catalog | None = None) -> list[Passage]:
    """Every generated passage: GPU cards, model cards, tier tables and rules, in both languages."""
    cat = catalog or load_catalog()
    docs = _both(cat.gpus, gpu_card) + _both(cat.models, model_card)
    docs += [tier_table(cat, tier, lang) for tier in Tier for lang in LANGS]
    docs += _both(load_rules(), rule_doc)
    return docs
