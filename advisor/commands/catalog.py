"""`gpu-advisor gpus`, `models` and `platforms`: browse the catalogs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from advisor.commands.common import add_lang_flag, domain_errors, lang_of, print_json
from knowledge import load_catalog
from knowledge.schema import GPU, Model, Platform

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


def _show_gpu(g: GPU, zh: bool) -> list[str]:
    label = (lambda z, e: z) if zh else (lambda z, e: e)
    t = g.throughput
    lines = [f"{g.name} — {g.vendor}, {g.architecture}"
             + (f" (CC {g.compute_capability})" if g.compute_capability else "")]
    lines.append(f"  {label('显存', 'Memory')}: {_fmt(g.memory_gb)} GB {g.memory_type}, "
                 f"{_fmt(g.bandwidth_gbs)} GB/s, ECC {'✓' if g.ecc else '✗' if g.ecc is False else '?'}")
    dense = ", ".join(f"{p.upper()} {_fmt(v)}" for p, v in t.model_dump().items() if v is not None)
    lines.append(f"  {label('稠密算力', 'Dense throughput')} (TFLOPS/TOPS): {dense or '—'}")
    if g.unsupported:
        lines.append(f"  {label('不支持', 'Not supported')}: {', '.join(p.value.upper() for p in g.unsupported)}")
    lines.append(f"  {label('功耗', 'Power')}: {_fmt(g.tdp_w)} W; {label('形态', 'Form factor')}: "
                 f"{g.form_factor.value}, {label('散热', 'cooling')}: {g.cooling.value}"
                 + (f", {g.slot_width:g} {label('槽', 'slots')}" if g.slot_width else ""))
    link = g.interconnect
    lines.append(f"  {label('互联', 'Interconnect')}: {link.kind}"
                 + (f" {_fmt(link.bandwidth_gbs)} GB/s" if link.bandwidth_gbs else "")
                 + f", P2P {'✓' if link.p2p else '✗' if link.p2p is False else '?'}")
    lines.append(f"  {label('软件栈', 'Software')}: {', '.join(g.software)}")
    if g.price:
        price = ", ".join(x for x in (
            f"${g.price.usd:,.0f}" if g.price.usd else "",
            f"¥{g.price.cny:,.0f}" if g.price.cny else "",
            f"{label('租用', 'rent')} ${g.price.rental_usd_per_hour:g}/h" if g.price.rental_usd_per_hour else "",
        ) if x)
        lines.append(f"  {label('参考价格', 'Approx. price')}: {price} ({label('截至', 'as of')} {g.price.as_of})")
    lines.append(f"  {label('来源', 'Sources')}: {', '.join(g.sources)} · {label('截至', 'as of')} {g.as_of}"
                 f" · {label('可信度', 'confidence')} {g.confidence}")
    if g.notes:
        lines.append(f"  {label('备注', 'Notes')}: {g.notes}")
    return lines


def _show_model(m: Model, zh: bool) -> list[str]:
    label = (lambda z, e: z) if zh else (lambda z, e: e)
    a = m.attention
    lines = [f"{m.name} — {m.family}, {m.kind}"]
    lines.append(f"  {label('参数量', 'Parameters')}: {m.params_b:g}B"
                 + (f", {label('激活', 'active')} {m.active_b:g}B" if m.is_moe else ""))
    lines.append(f"  {label('层数', 'Layers')} {m.layers}, hidden {m.hidden_size}, heads {a.num_heads}, "
                 f"KV heads {a.num_kv_heads}, head_dim {a.head_dim}, {label('注意力', 'attention')} {a.kind.value}")
    if a.kind.value == "mla":
        lines.append(f"  MLA: kv_lora_rank {a.kv_lora_rank}, rope dim {a.qk_rope_head_dim}")
    if a.sliding_window:
        lines.append(f"  {label('滑动窗口', 'Sliding window')}: {a.sliding_window}, "
                     f"{label('全局层', 'global layers')} {a.full_attention_layers}")
    if m.moe:
        lines.append(f"  MoE: {m.moe.num_experts} experts, top-{m.moe.experts_per_token}"
                     + (f", {m.moe.shared_experts} shared" if m.moe.shared_experts else ""))
    lines.append(f"  {label('词表', 'Vocabulary')} {m.vocab_size:,}; {label('最大上下文', 'max context')} "
                 f"{m.max_context:,}; {label('原生精度', 'native dtype')} {m.native_dtype}")
    lines.append(f"  {label('来源', 'Sources')}: {', '.join(m.sources)} · {label('截至', 'as of')} {m.as_of}")
    return lines


def _platform_row(p: Platform) -> str:
    return (f"{p.name:<40} {p.segment:<12} {p.sockets}S  PCIe {p.pcie_gen}.0 × {p.cpu_pcie_lanes:<4} "
            f"{p.memory_channels}ch {p.memory_type:<6} ≤{p.max_cores} cores  {p.typical_cpu_power_w:g} W")


def _show_platform(p: Platform, zh: bool) -> list[str]:
    label = (lambda z, e: z) if zh else (lambda z, e: e)
    lines = [_platform_row(p)]
    lines.append(f"  {label('接 GPU 的通道', 'Lanes wired to GPU slots')}: {p.gpu_slot_lanes}; {p.chipset_lanes_note}")
    lines.append(f"  {label('最大内存', 'Max memory')}: {p.max_memory_gb} GB; socket {p.socket}")
    lines.append(f"  {label('来源', 'Sources')}: {', '.join(p.sources)} · {label('截至', 'as of')} {p.as_of}")
    if p.notes:
        lines.append(f"  {label('备注', 'Notes')}: {p.notes}")
    return lines


# noun -> (Catalog attribute listing the entries, Catalog lookup method, one-line row, detail view)
_VIEWS: dict[str, tuple[str, str, Callable[[Any], str], Callable[[Any, bool], list[str]]]] = {
    "gpus": ("gpus", "gpu", _gpu_row, _show_gpu),
    "models": ("models", "model", _model_row, _show_model),
    "platforms": ("platforms", "platform", _platform_row, _show_platform),
}


@domain_errors
def _run(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    zh = lang_of(args) == "zh"
    attr, lookup, row, show = _VIEWS[args.noun]
    if args.action == "show":
        if not args.name:
            example = NOUNS[args.noun][1]
            raise ValueError(f"'{args.noun} show' needs a name, e.g. gpu-advisor {args.noun} show {example}")
        entry = getattr(catalog, lookup)(args.name)
        if args.json:
            print_json(entry)
        else:
            print("\n".join(show(entry, zh)))
        return 0
    entries = getattr(catalog, attr)
    if args.json:
        print_json({args.noun: list(entries)})
    else:
        for e in entries:
            print(row(e))
    return 0
