"""`gpu-advisor gpus`, `models` and `platforms`: browse the catalogs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from advisor.commands.common import add_lang_flag, domain_errors, lang_of, print_json
from advisor.fmt import default_currency, money, money_in_exact
from knowledge import load_catalog
from knowledge.catalog_text import entry_json, gpu_notes, platform_chipset_note, platform_notes
from knowledge.messages import has, msg
from knowledge.schema import GPU, Model, Platform
from tools.pricing import CNY_PER_USD

NOUNS = {"gpus": ("list or show GPUs", "H100"), "models": ("list or show models", "llama3.1:8b"),
         "platforms": ("list or show CPU platforms", "EPYC 9654")}


def register(sub: Any) -> None:
    for noun, (helptext, _) in NOUNS.items():
        p = sub.add_parser(noun, help=helptext)
        p.add_argument("action", nargs="?", choices=["list", "show"], default="list")
        p.add_argument("name", nargs="?", help="name or alias, with 'show'")
        p.add_argument("--json", action="store_true", help="print JSON")
        add_lang_flag(p)
        p.set_defaults(func=_run, noun=noun)


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "—"
    text = f"{value:,.0f}" if value >= 100 else f"{value:g}"
    return f"{text}{unit}"


def _gpu_row(g: GPU) -> str:
    t = g.throughput
    return (f"{g.name:<34} {g.vendor:<14} {g.tier.value:<11} {_fmt(g.memory_gb):>5} GB {g.memory_type:<7} "
            f"{_fmt(g.bandwidth_gbs):>6} GB/s  BF16/FP16 {_fmt(t.bf16 or t.fp16):>6}  FP64 {_fmt(t.fp64):>5}"
            f"  {_fmt(g.tdp_w)} W")


def _model_row(m: Model) -> str:
    active = f" ({m.active_b:g}B active)" if m.is_moe else ""
    return (f"{m.name:<34} {m.kind:<10} {m.params_b:g}B{active:<16} {m.attention.kind.value:<8} "
            f"ctx {m.max_context:,}")


def _label(lang: str, key: str) -> str:
    return msg(lang, f"catalog.{key}")


def _mark(value: bool | None) -> str:
    return "✓" if value else "✗" if value is False else "?"


def _spec_word(lang: str, table: str, value: str) -> str:
    """A catalog value in words ('passive' → 'passive (needs server airflow)' / '被动散热…'); raw when unlabelled."""
    return msg(lang, f"spec.{table}.{value}") if has(lang, f"spec.{table}.{value}") else value


def _price(g: GPU, lang: str) -> str:
    """The price in the reader's currency, the other one in brackets, then the rental rate."""
    assert g.price is not None
    own_cur = default_currency(lang)
    other_cur = "USD" if own_cur == "CNY" else "CNY"
    own, other = (g.price.cny, g.price.usd) if own_cur == "CNY" else (g.price.usd, g.price.cny)
    if own:
        text = money(own, own_cur) + (f" ({money(other, other_cur)})" if other else "")
    else:  # only the other currency's price: converted at the stated rate
        other = other or 0.0
        converted = other * CNY_PER_USD if own_cur == "CNY" else other / CNY_PER_USD
        text = msg(lang, "fmt.converted", price=money(converted, own_cur), original=money(other, other_cur),
                   rate=f"{CNY_PER_USD:g}")
    if g.price.rental_usd_per_hour:
        usd = g.price.rental_usd_per_hour
        text += "; " + msg(lang, "catalog.rent", rate=money_in_exact(usd, usd * CNY_PER_USD, own_cur, lang))
    return text


def _show_gpu(g: GPU, lang: str) -> list[str]:
    t = g.throughput
    lines = [f"{g.name} — {g.vendor}, {g.architecture}"
             + (f" (CC {g.compute_capability})" if g.compute_capability else "")]
    lines.append(f"  {_label(lang, 'memory')}: {_fmt(g.memory_gb)} GB {g.memory_type}, "
                 f"{_fmt(g.bandwidth_gbs)} GB/s, ECC {_mark(g.ecc)}")
    dense = ", ".join(f"{p.upper()} {_fmt(v)}" for p, v in t.model_dump().items() if v is not None)
    lines.append(f"  {_label(lang, 'dense')} (TFLOPS/TOPS): {dense or '—'}")
    if g.unsupported:
        lines.append(f"  {_label(lang, 'unsupported')}: {', '.join(p.value.upper() for p in g.unsupported)}")
    lines.append(f"  {_label(lang, 'power')}: {_fmt(g.tdp_w)} W; {_label(lang, 'form')}: "
                 f"{_spec_word(lang, 'form', g.form_factor.value)}, {_label(lang, 'cooling')}: "
                 f"{_spec_word(lang, 'cooling', g.cooling.value)}"
                 + (f", {msg(lang, 'catalog.slots', slots=f'{g.slot_width:g}')}" if g.slot_width else ""))
    link = g.interconnect
    lines.append(f"  {_label(lang, 'interconnect')}: {_spec_word(lang, 'link_kind', link.kind)}"
                 + (f" {_fmt(link.bandwidth_gbs)} GB/s" if link.bandwidth_gbs else "")
                 + f", P2P {_mark(link.p2p)}")
    lines.append(f"  {_label(lang, 'software')}: {', '.join(g.software)}")
    if g.price:
        lines.append(f"  {_label(lang, 'price')}: {_price(g, lang)} ({_label(lang, 'as_of')} {g.price.as_of})")
    lines.append(f"  {_label(lang, 'sources')}: {', '.join(g.sources)} · {_label(lang, 'as_of')} {g.as_of}"
                 f" · {_label(lang, 'confidence')} {msg(lang, f'confidence.{g.confidence}')}")
    if notes := gpu_notes(g.id, lang):
        lines.append(f"  {_label(lang, 'notes')}: {notes}")
    return lines


def _show_model(m: Model, lang: str) -> list[str]:
    a = m.attention
    kind = msg(lang, f"catalog.kind.{m.kind}") if has("en", f"catalog.kind.{m.kind}") else str(m.kind)
    lines = [f"{m.name} — {m.family}, {kind}"]
    lines.append(f"  {_label(lang, 'params')}: {m.params_b:g}B"
                 + (f", {_label(lang, 'active')} {m.active_b:g}B" if m.is_moe else ""))
    attention = msg(lang, f"attention.{a.kind.value}")
    lines.append("  " + msg(lang, "catalog.shape", layers=m.layers, hidden=m.hidden_size, heads=a.num_heads,
                            kv_heads=a.num_kv_heads, head_dim=a.head_dim, attention=attention))
    if a.kind.value == "mla":
        lines.append(f"  MLA: kv_lora_rank {a.kv_lora_rank}, rope dim {a.qk_rope_head_dim}")
    if a.sliding_window:
        lines.append(f"  {_label(lang, 'sliding')}: {a.sliding_window}, "
                     f"{_label(lang, 'global_layers')} {a.full_attention_layers}")
    if m.moe:
        lines.append("  MoE: " + msg(lang, "catalog.moe", experts=m.moe.num_experts, top=m.moe.experts_per_token)
                     + (msg(lang, "catalog.moe_shared", shared=m.moe.shared_experts) if m.moe.shared_experts else ""))
    lines.append(f"  {_label(lang, 'vocab')} {m.vocab_size:,}; {_label(lang, 'max_context')} "
                 f"{m.max_context:,}; {_label(lang, 'native_dtype')} {m.native_dtype}")
    lines.append(f"  {_label(lang, 'sources')}: {', '.join(m.sources)} · {_label(lang, 'as_of')} {m.as_of}")
    return lines


def _platform_row(p: Platform) -> str:
    return (f"{p.name:<40} {p.segment:<12} {p.sockets}S  PCIe {p.pcie_gen}.0 × {p.cpu_pcie_lanes:<4} "
            f"{p.memory_channels}ch {p.memory_type:<6} ≤{p.max_cores} cores  {p.typical_cpu_power_w:g} W")


def _show_platform(p: Platform, lang: str) -> list[str]:
    lines = [_platform_row(p)]
    chipset = platform_chipset_note(p.id, lang)
    lanes = f"  {_label(lang, 'gpu_lanes')}: {p.gpu_slot_lanes}"
    lines.append(lanes + msg(lang, "fmt.semicolon") + chipset if chipset else lanes)
    lines.append(f"  {_label(lang, 'max_memory')}: {p.max_memory_gb} GB; socket {p.socket}")
    lines.append(f"  {_label(lang, 'sources')}: {', '.join(p.sources)} · {_label(lang, 'as_of')} {p.as_of}")
    if notes := platform_notes(p.id, lang):
        lines.append(f"  {_label(lang, 'notes')}: {notes}")
    return lines


# noun -> (Catalog attribute listing the entries, Catalog lookup method, one-line row, detail view)
_VIEWS: dict[str, tuple[str, str, Callable[[Any], str], Callable[[Any, str], list[str]]]] = {
    "gpus": ("gpus", "gpu", _gpu_row, _show_gpu),
    "models": ("models", "model", _model_row, _show_model),
    "platforms": ("platforms", "platform", _platform_row, _show_platform),
}


@domain_errors
def _run(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    lang = lang_of(args)
    attr, lookup, row, show = _VIEWS[args.noun]
    if args.action == "show":
        if not args.name:
            example = NOUNS[args.noun][1]
            raise ValueError(f"'{args.noun} show' needs a name, e.g. gpu-advisor {args.noun} show {example}")
        entry = getattr(catalog, lookup)(args.name)
        if args.json:  # with its notes, in English as JSON keeps them
            print_json(entry_json(entry))
        else:
            print("\n".join(show(entry, lang)))
        return 0
    entries = getattr(catalog, attr)
    if args.json:
        print_json({args.noun: [entry_json(e) for e in entries]})
    else:
        for e in entries:
            print(row(e))
    return 0
