"""Generated documents: one card per GPU and per model, the three market-tier tables, and the
compatibility rules — each in English and Chinese, built from the catalog so they never disagree with it.

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
from knowledge.corpus import LANGS, Passage
from knowledge.schema import GPU, Model, Tier

GB = 1e9  # bytes; the catalog's memory figures are vendor GB

_COOLING = {
    "passive": ("passive (no fan; needs server airflow)", "被动散热（无风扇，需要服务器风道）"),
    "blower": ("blower (exhausts out of the case)", "涡轮/鼓风散热（向机箱外排风）"),
    "open-air": ("open-air fans (heat stays in the case)", "开放式风扇散热（热量留在机箱内）"),
    "liquid": ("liquid cooling", "液冷"),
}
_FORM = {
    "pcie": ("PCIe card", "PCIe 插卡"),
    "sxm": ("SXM module (HGX baseboard)", "SXM 模组（HGX 基板）"),
    "oam": ("OAM module (OAM baseboard)", "OAM 模组（OAM 基板）"),
    "module": ("vendor module / board", "厂商模组 / 整板"),
}
_TIER_NAME = {
    Tier.datacenter: ("datacenter / enterprise", "企业级与数据中心"),
    Tier.workstation: ("workstation / professional", "工作站与专业用途"),
    Tier.consumer: ("development and experiments (entry, consumer)", "开发与实验（入门、消费级）"),
}
_PREC_ORDER = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")


def num(value: float | None) -> str:
    """Plain number without thousands separators (keeps '3350' one token for the lexical channel)."""
    if value is None:
        return "—"
    if abs(value - round(value)) < 1e-9:
        return str(round(value))
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:.1f}".rstrip("0").rstrip(".")


def _yes(value: bool | None, zh: bool) -> str:
    if value is None:
        return "未知" if zh else "unknown"
    return ("是" if value else "否") if zh else ("yes" if value else "no")


def _throughput(g: GPU, zh: bool) -> str:
    t = g.throughput
    parts = []
    for p in _PREC_ORDER:
        v = getattr(t, p)
        if v is not None:
            unit = "TOPS" if p == "int8" else "TFLOPS"
            parts.append(f"{p.upper()} {num(v)} {unit}")
    text = ", ".join(parts) if parts else ("无公开数据" if zh else "no published figures")
    if g.unsupported:
        names = (
            "、".join(p.value.upper() for p in g.unsupported)
            if zh
            else ", ".join(p.value.upper() for p in g.unsupported)
        )
        text += f"；硬件不支持 {names}" if zh else f"; no hardware support for {names}"
    return text


def _sparse(g: GPU, zh: bool) -> str | None:
    s = g.sparse_throughput
    if s is None:
        return None
    parts = [f"{p.upper()} {num(getattr(s, p))}" for p in _PREC_ORDER if getattr(s, p) is not None]
    if not parts:
        return None
    if zh:
        return f"厂商宣传的 2:4 稀疏算力（不要与稠密值比较）：{', '.join(parts)}。"
    return f"Vendor 2:4-sparsity figures (do not compare with dense ones): {', '.join(parts)}."


def _price(g: GPU, zh: bool) -> str | None:
    p = g.price
    if p is None:
        return None
    bits = []
    if p.usd:
        bits.append(f"约 ${num(p.usd)}" if zh else f"about ${num(p.usd)}")
    if p.cny:
        bits.append(f"约 ¥{num(p.cny)}" if zh else f"about ¥{num(p.cny)} (CNY)")
    if p.rental_usd_per_hour:
        bits.append(
            f"租用约 ${num(p.rental_usd_per_hour)}/卡时"
            if zh
            else f"rent about ${num(p.rental_usd_per_hour)} per GPU-hour"
        )
    if not bits:
        return None
    note = f"（{p.note}）" if zh and p.note else (f" ({p.note})" if p.note else "")
    if zh:
        return f"参考价格（截至 {p.as_of}）：{'，'.join(bits)}{note}。"
    return f"Approximate price (as of {p.as_of}): {', '.join(bits)}{note}."


def _link(g: GPU, zh: bool) -> str:
    link = g.interconnect
    kind = {"none": "none", "pcie": "PCIe only"}.get(link.kind, link.kind)
    if zh:
        kind = {"none": "无", "pcie": "仅 PCIe"}.get(link.kind, link.kind)
        text = f"多卡互联：{kind}"
        if link.bandwidth_gbs:
            text += f"，每卡 {num(link.bandwidth_gbs)} GB/s（双向）"
        if link.max_gpus > 1:
            text += f"，最多 {link.max_gpus} 卡互联"
        text += f"，P2P：{_yes(link.p2p, True)}"
    else:
        text = f"Multi-GPU interconnect: {kind}"
        if link.bandwidth_gbs:
            text += f", {num(link.bandwidth_gbs)} GB/s per GPU (bidirectional)"
        if link.max_gpus > 1:
            text += f", up to {link.max_gpus} GPUs"
        text += f", peer-to-peer (P2P): {_yes(link.p2p, False)}"
    if link.note:
        text += f"（{link.note}）" if zh else f" ({link.note})"
    return text + ("。" if zh else ".")


def _names(entry: GPU | Model) -> str:
    others = [a for a in entry.aliases if a.lower() != entry.name.lower()]
    return ", ".join(others)


def gpu_card(g: GPU, lang: str) -> Passage:
    """The catalog facts of one GPU as a passage in ``lang``."""
    zh = lang == "zh"
    cool_en, cool_zh = _COOLING[g.cooling.value]
    form_en, form_zh = _FORM[g.form_factor.value]
    tier_en, tier_zh = _TIER_NAME[g.tier]
    cc = f", compute capability {g.compute_capability}" if g.compute_capability else ""
    isa = f", ISA target {g.isa_target}" if g.isa_target else ""
    pcie = (
        f"PCIe Gen{g.pcie_gen} x{g.pcie_lanes}"
        if g.pcie_gen and g.pcie_lanes
        else (f"PCIe Gen{g.pcie_gen}" if g.pcie_gen else "")
    )
    tb = f"{g.bandwidth_gbs / 1000:.3g} TB/s"
    aliases = _names(g)
    lines: list[str]
    if zh:
        flags = []
        if g.domestic:
            flags.append("国产加速卡（信创可选）")
        if g.china_market:
            flags.append("中国特供（出口管制版本）")
        lines = [
            f"{g.vendor} {g.name}（{tier_zh}，{g.architecture} 架构"
            + (f"，计算能力 {g.compute_capability}" if g.compute_capability else "")
            + (f"，ISA {g.isa_target}" if g.isa_target else "")
            + "）"
            + (f"；{'；'.join(flags)}" if flags else "")
            + "。"
            + (f"别名：{aliases}。" if aliases else ""),
            f"显存：{num(g.memory_gb)} GB {g.memory_type}，显存容量 {num(g.memory_gb)} GB；"
            f"显存带宽 {num(g.bandwidth_gbs)} GB/s（{tb}）；ECC：{_yes(g.ecc, True)}。",
            f"稠密算力（不含稀疏）：{_throughput(g, True)}。",
        ]
        if sp := _sparse(g, True):
            lines.append(sp)
        phys = [f"功耗（板卡功耗/TDP）{num(g.tdp_w)} W", f"形态：{form_zh}", f"散热：{cool_zh}"]
        if g.slot_width:
            phys.append(f"占 {num(g.slot_width)} 个槽位")
        if g.length_mm:
            phys.append(f"长度 {num(g.length_mm)} mm")
        phys.append(f"视频输出 {g.display_outputs} 个" if g.display_outputs else "无视频输出")
        if g.power_connectors:
            phys.append(f"供电接口 {'、'.join(g.power_connectors)}")
        if pcie:
            phys.append(pcie)
        lines.append("；".join(phys) + "。")
        lines.append(_link(g, True))
        lines.append(f"软件栈：{'、'.join(g.software)}；MIG 多实例：{_yes(g.mig, True)}。")
        if pr := _price(g, True):
            lines.append(pr)
        if g.notes:
            lines.append(f"备注：{g.notes}")
        lines.append(f"来源：{', '.join(g.sources)}；数据截至 {g.as_of}，可信度 {g.confidence}。")
        title = f"{g.name} 规格卡（{g.vendor}）"
    else:
        flags = []
        if g.domestic:
            flags.append("Chinese domestic accelerator (Xinchuang candidate)")
        if g.china_market:
            flags.append("China-market export-control variant")
        lines = [
            f"{g.vendor} {g.name}: {tier_en} GPU, {g.architecture} architecture{cc}{isa}."
            + (f" {'; '.join(flags)}." if flags else "")
            + (f" Also known as {aliases}." if aliases else ""),
            f"Memory (VRAM): {num(g.memory_gb)} GB {g.memory_type}; memory bandwidth {num(g.bandwidth_gbs)} GB/s"
            f" ({tb}); ECC: {_yes(g.ecc, False)}.",
            f"Dense throughput (no sparsity): {_throughput(g, False)}.",
        ]
        if sp := _sparse(g, False):
            lines.append(sp)
        phys = [f"Board power (TDP) {num(g.tdp_w)} W", form_en, f"cooling: {cool_en}"]
        if g.slot_width:
            phys.append(f"{num(g.slot_width)} slots wide")
        if g.length_mm:
            phys.append(f"{num(g.length_mm)} mm long")
        phys.append(f"{g.display_outputs} display outputs" if g.display_outputs else "no display outputs")
        if g.power_connectors:
            phys.append(f"power connectors {', '.join(g.power_connectors)}")
        if pcie:
            phys.append(pcie)
        lines.append("; ".join(phys) + ".")
        lines.append(_link(g, False))
        lines.append(f"Software: {', '.join(g.software)}; MIG partitioning: {_yes(g.mig, False)}.")
        if pr := _price(g, False):
            lines.append(pr)
        if g.notes:
            lines.append(f"Notes: {g.notes}")
        lines.append(f"Sources: {', '.join(g.sources)}; data as of {g.as_of}, confidence {g.confidence}.")
        title = f"{g.name} spec card ({g.vendor})"
    return Passage(
        id=f"gpu/{g.id}/{lang}",
        title=title,
        text="\n".join(lines),
        lang=lang,  # type: ignore[arg-type]
        source=f"catalog GPU '{g.id}' (as of {g.as_of}, confidence {g.confidence}); sources: {', '.join(g.sources)}",
        as_of=g.as_of,
        kind="gpu-card",
        doc=f"gpu:{g.id}",
        names=(g.id, g.name, *g.aliases),
    )


def _kv_bytes_per_token(m: Model) -> float | None:
    """KV cache per token at 16-bit, when it follows from the catalog without per-layer detail."""
    a = m.attention
    kind = a.kind.value
    if kind in ("mha", "gqa", "mqa"):
        return 2 * m.layers * a.num_kv_heads * a.head_dim * 2
    if kind == "mla" and a.kv_lora_rank and a.qk_rope_head_dim:
        return m.layers * (a.kv_lora_rank + a.qk_rope_head_dim) * 2
    return None


def model_card(m: Model, lang: str) -> Passage:
    """The catalog facts of one model, with weight memory by precision, as a passage in ``lang``."""
    zh = lang == "zh"
    a = m.attention
    w16, w8, w4 = m.params_b * 2, m.params_b * 1, m.params_b * 0.5  # GB: params (1e9) × bytes/param
    kv = _kv_bytes_per_token(m)
    aliases = _names(m)
    if zh:
        lines = [
            f"{m.name}（{m.family} 系列，类型 {m.kind}）：总参数 {num(m.params_b)}B"
            + (f"，每个 token 激活 {num(m.active_b)}B（MoE）" if m.is_moe else "")
            + "。"
            + (f"别名：{aliases}。" if aliases else ""),
            f"结构：{m.layers} 层，hidden {m.hidden_size}，注意力头 {a.num_heads}，KV 头 {a.num_kv_heads}，"
            f"head_dim {a.head_dim}，注意力类型 {a.kind.value}；词表 {m.vocab_size}；最大上下文 {m.max_context} "
            f"token；原生精度 {m.native_dtype.upper()}。",
        ]
        if m.moe:
            lines.append(
                f"MoE：{m.moe.num_experts} 个专家，每 token 选 {m.moe.experts_per_token} 个"
                + (f"，{m.moe.shared_experts} 个共享专家" if m.moe.shared_experts else "")
                + "。"
            )
        if a.sliding_window:
            lines.append(f"滑动窗口 {a.sliding_window} token，全局注意力层 {a.full_attention_layers} 层。")
        lines.append(
            f"仅权重所需显存（参数量 × 每参数字节数，1 GB = 1e9 字节）：BF16/FP16 约 {num(round(w16, 1))} GB，"
            f"8-bit（FP8/INT8）约 {num(round(w8, 1))} GB，4-bit 约 {num(round(w4, 1))} GB；"
            "KV 缓存和运行时开销另计。"
        )
        if kv:
            lines.append(
                f"KV 缓存（16-bit）每 token 约 {num(round(kv / 1e3, 1))} KB，"
                f"{m.max_context} token 满上下文单序列约 {num(round(kv * m.max_context / GB, 1))} GB。"
            )
        if m.license:
            lines.append(f"许可证：{m.license}。")
        if m.hf_repo:
            lines.append(f"Hugging Face：{m.hf_repo}。")
        if m.notes:
            lines.append(f"备注：{m.notes}")
        lines.append(f"来源：{', '.join(m.sources)}；数据截至 {m.as_of}。")
        title = f"{m.name} 模型卡"
    else:
        lines = [
            f"{m.name} ({m.family} family, {m.kind}): {num(m.params_b)}B parameters in total"
            + (f", {num(m.active_b)}B active per token (mixture of experts)" if m.is_moe else "")
            + "."
            + (f" Also known as {aliases}." if aliases else ""),
            f"Architecture: {m.layers} layers, hidden size {m.hidden_size}, {a.num_heads} attention heads, "
            f"{a.num_kv_heads} KV heads, head_dim {a.head_dim}, {a.kind.value} attention; vocabulary "
            f"{m.vocab_size}; max context {m.max_context} tokens; native dtype {m.native_dtype.upper()}.",
        ]
        if m.moe:
            lines.append(
                f"MoE: {m.moe.num_experts} experts, top-{m.moe.experts_per_token} routing"
                + (f", {m.moe.shared_experts} shared experts" if m.moe.shared_experts else "")
                + "."
            )
        if a.sliding_window:
            lines.append(f"Sliding window {a.sliding_window} tokens with {a.full_attention_layers} global layers.")
        lines.append(
            f"Memory for the weights alone (parameters × bytes per parameter, 1 GB = 1e9 bytes): "
            f"BF16/FP16 about {num(round(w16, 1))} GB, 8-bit (FP8/INT8) about {num(round(w8, 1))} GB, "
            f"4-bit about {num(round(w4, 1))} GB; KV cache and runtime overhead come on top."
        )
        if kv:
            lines.append(
                f"KV cache at 16-bit: about {num(round(kv / 1e3, 1))} KB per token, about "
                f"{num(round(kv * m.max_context / GB, 1))} GB for one sequence at the full "
                f"{m.max_context}-token context."
            )
        if m.license:
            lines.append(f"License: {m.license}.")
        if m.hf_repo:
            lines.append(f"Hugging Face: {m.hf_repo}.")
        if m.notes:
            lines.append(f"Notes: {m.notes}")
        lines.append(f"Sources: {', '.join(m.sources)}; data as of {m.as_of}.")
        title = f"{m.name} model card"
    return Passage(
        id=f"model/{m.id}/{lang}",
        title=title,
        text="\n".join(lines),
        lang=lang,  # type: ignore[arg-type]
        source=f"catalog model '{m.id}' (as of {m.as_of}); sources: {', '.join(m.sources)}",
        as_of=m.as_of,
        kind="model-card",
        doc=f"model:{m.id}",
        names=(m.id, m.name, *m.aliases),
    )


_TIER_INTRO = {
    Tier.datacenter: (
        "Datacenter and enterprise compute, for cloud providers, research institutes and companies that "
        "want top performance and stability: HBM memory, ECC, NVLink/Infinity Fabric or vendor fabrics, "
        "passive cooling or SXM/OAM modules.",
        "企业级与数据中心算力，面向云服务商、科研机构和追求极致性能与稳定性的企业：HBM 显存、ECC、NVLink / "
        "Infinity Fabric 或厂商互联，被动散热或 SXM/OAM 模组。",
    ),
    Tier.workstation: (
        "Workstation and professional cards, balancing performance and cost for universities, research "
        "groups, small companies and individual developers: fine-tuning and mid-size inference, "
        "actively cooled (often blower) cards with large GDDR memory and ECC.",
        "工作站与专业用途，兼顾性能与性价比，适合高校、研究机构、中小企业或个人开发者，用于模型微调和中型推理："
        "自带散热（多为涡轮）的专业卡，显存大，支持 ECC。",
    ),
    Tier.consumer: (
        "Development and experiments: affordable entry options for individual developers and data "
        "scientists — consumer GeForce cards plus AMD and Intel alternatives; no ECC on most, limited "
        "multi-GPU scaling (no NVLink or P2P on current GeForce).",
        "开发与实验用途，个人开发者和数据科学家触手可及的高性价比入门选择——GeForce 消费级显卡以及越来越多的 AMD "
        "和 Intel 方案；大多没有 ECC，多卡扩展受限（当前 GeForce 没有 NVLink 和 P2P）。",
    ),
}


def _price_cell(g: GPU) -> str:
    if g.price is None:
        return "—"
    bits = [f"${num(g.price.usd)}" if g.price.usd else "", f"¥{num(g.price.cny)}" if g.price.cny else ""]
    return " / ".join(b for b in bits if b) or "—"


def _gpu_sort_key(g: GPU) -> tuple[float, float, str]:
    return (-g.memory_gb, -g.bandwidth_gbs, g.name)


def tier_table(catalog: Catalog, tier: Tier, lang: str) -> Passage:
    """Markdown table of every catalog GPU in ``tier``: memory, bandwidth, dense BF16, FP64, power, price."""
    zh = lang == "zh"
    gpus = sorted((g for g in catalog.gpus if g.tier == tier), key=_gpu_sort_key)
    name_en, name_zh = _TIER_NAME[tier]
    intro_en, intro_zh = _TIER_INTRO[tier]
    if zh:
        head = (
            "| GPU | 厂商 | 显存 | 带宽 (GB/s) | 稠密 BF16 (TFLOPS) | FP64 (TFLOPS) | 功耗 (W) | 参考价格 |\n"
            "|---|---|---|---|---|---|---|---|"
        )
        intro = f"{intro_zh}\n目录中该档位的 {len(gpus)} 个方案（数字为稠密算力，由 GPU 目录自动生成）："
        title = f"市场档位：{name_zh} — 2026 年可选方案"
    else:
        head = (
            "| GPU | vendor | memory | bandwidth (GB/s) | dense BF16 (TFLOPS) | FP64 (TFLOPS) | power (W) "
            "| approx. price |\n|---|---|---|---|---|---|---|---|"
        )
        intro = (
            f"{intro_en}\nThe {len(gpus)} options of this tier in the catalog (dense figures, generated "
            "from the GPU catalog):"
        )
        title = f"Market tier: {name_en} — the 2026 options"
    rows = []
    for g in gpus:
        bf16 = g.throughput.bf16 if g.throughput.bf16 is not None else g.throughput.fp16
        flag = ""
        if g.domestic:
            flag = "（国产）" if zh else " (domestic)"
        elif g.china_market:
            flag = "（中国特供）" if zh else " (China variant)"
        rows.append(
            f"| {g.name}{flag} | {g.vendor} | {num(g.memory_gb)} GB {g.memory_type} | "
            f"{num(g.bandwidth_gbs)} | {num(bf16)} | {num(g.throughput.fp64)} | {num(g.tdp_w)} | "
            f"{_price_cell(g)} |"
        )
    text = "\n".join([intro, "", head, *rows]) if rows else intro + (" （暂无）" if zh else " (none yet)")
    as_of = max((g.as_of for g in gpus), default=dt.date(2026, 1, 1))
    return Passage(
        id=f"tier/{tier.value}/{lang}",
        title=title,
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
