"""Multi-GPU interconnect rules: NVLink / bridges / fabrics, P2P, mixed GPU models."""

from __future__ import annotations

from tools.compat_rules.pcie import link_gbs
from tools.compat_rules.totals import is_board_module
from tools.compat_rules.types import BuildContext, Card, Finding, Severity, finding

_LINK_NAMES = {
    "nvlink": "NVLink (switch "
              "fabric)", "nvlink-bridge": "NVLink bridge", "infinity-fabric": "Infinity Fabric",
    "hccs": "HCCS", "mlu-link": "MLU-Link", "mtlink": "MTLink", "metaxlink": "MetaXLink", "blink": "BLink",
    "ethernet": "on-chip Ethernet (RoCE)", "pcie": "PCIe", "none": "none",
}


def _pcie_gbs(ctx: BuildContext, card: Card) -> float:
    gen = min(card.gpu.pcie_gen or 4, ctx.platform.pcie_gen if ctx.platform else (card.gpu.pcie_gen or 4))
    t = ctx.totals
    assert t is not None
    # width of this card group = the narrowest width allocated to its cards
    start = 0
    for c in ctx.cards:
        if c is card:
            break
        if not is_board_module(c):
            start += c.count
    widths = t.link_widths[start:start + card.count] or [card.gpu.pcie_lanes or 16]
    return link_gbs(gen, min(widths))


def check_interconnect(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    if not ctx.multi_gpu:
        return out
    par = ctx.parallelism
    for card in ctx.cards:
        if card.count < 2:
            continue
        out += _one_model(ctx, card, par)
        if card.gpu.china_market and card.gpu.interconnect.kind in ("nvlink", "nvlink-bridge"):
            bw = card.gpu.interconnect.bandwidth_gbs
            out.append(finding(
                "nvlink-china-variants", "interconnect", "info",
                f"{card.gpu.name} is a China-market variant with its NVLink capped at {bw:g} GB/s (H100 SXM: "
                "900, A100: 600): it matters for multi-node training, much less for single-node inference.",
                f"{card.gpu.name} 是中国特供版，NVLink 限制为 {bw:g} GB/s（H100 SXM 为 900，A100 为 600）："
                "对多机训练影响明显，对单机推理影响小得多。",
                "Plan fewer, larger tensor-parallel groups and a fast inter-node network for training.",
                "训练时规划更少、更大的张量并行组，并配置高速节点间网络。",
                {"link_bandwidth_gbs": bw}, sources=["S-PHILISUN-H800", "S-ASTRO-DS"],
            ))
    models = {c.gpu.id for c in ctx.cards}
    if len(models) > 1:
        vendors = sorted({c.gpu.vendor for c in ctx.cards})
        slow = min(ctx.cards, key=lambda c: (c.gpu.bandwidth_gbs, c.gpu.id))
        cross = len(vendors) > 1
        out.append(finding(
            "mixed-gpu-types", "interconnect", "warning",
            "Mixed GPU models: no NVLink between different cards, data-parallel speed is bounded by the "
            f"slowest ({slow.gpu.name}), and vLLM/SGLang tensor parallelism needs identical GPUs."
            + (f" Different vendors ({', '.join(vendors)}) share no collective library — run them as "
               "separate workers." if cross else ""),
            f"混用不同型号显卡：不同型号之间无法 NVLink，数据并行速度受最慢的卡（{slow.gpu.name}）限制，"
            "vLLM/SGLang 的张量并行要求显卡完全相同。"
            + (f"不同厂商（{'、'.join(vendors)}）之间没有共同的集合通信库，只能作为独立的服务实例运"
               "行。" if cross else ""),
            "Use identical GPUs for one job; give each model type its own job or serving instance.",
            "同一任务使用相同型号显卡；不同型号分别承担独立的任务或服务实例。",
            {"gpu_models": len(models), "vendors": len(vendors)}, pitfall="underrating-interconnect",
            sources=["S-DETTMERS"],
        ))
    return out


def _one_model(ctx: BuildContext, card: Card, par: str | None) -> list[Finding]:
    g = card.gpu
    link = g.interconnect
    n = card.count
    name = _LINK_NAMES.get(link.kind, link.kind)
    pcie = _pcie_gbs(ctx, card)
    nums: dict[str, float | int | str | bool | None] = {
        "gpus": n, "link": link.kind, "link_bandwidth_gbs": link.bandwidth_gbs,
        "link_max_gpus": link.max_gpus,
        "p2p": link.p2p, "pcie_link_gbs_per_direction": pcie,
    }
    tp = par == "tensor"
    if link.kind == "nvlink-bridge":
        if n <= link.max_gpus:
            return [finding(
                "nvlink-bridge", "interconnect", "info",
                f"{n} × {g.name} can be joined by a {n}-way NVLink bridge ({link.bandwidth_gbs:g} GB/s, vs "
                f"~{pcie:g} GB/s each way over PCIe): good for tensor parallel and fast gradient all-reduce.",
                f"{n} 张 {g.name} 可用 {n} 路 NVLink 桥接（{link.bandwidth_gbs:g} GB/s，PCIe 单向约 {pcie:g} "
                "GB/s），适合张量并行和快速梯度同步。",
                "Buy the bridge separately and match its spacing (3- or 4-slot) to the board's x16 slot "
                "spacing.",
                "桥接器需单独购买，其间距（3 槽或 4 槽）必须与主板 x16 插槽间距一致。",
                nums, sources=["S-ACCEL-2328", "S-TPU"],
            )]
        return [finding(
            "nvlink-bridge", "interconnect", "warning",
            f"NVLink bridges join at most {link.max_gpus} × {g.name}; with {n} cards the traffic between "
            f"bridged groups goes over PCIe (~{pcie:g} GB/s each way).",
            f"NVLink 桥最多连接 {link.max_gpus} 张 {g.name}；{n} 张卡时各桥接组之间的通信走 PCIe（单向约 "
            f"{pcie:g} GB/s）。",
            f"Use tensor parallel inside each bridged group of {link.max_gpus} and data/pipeline parallel "
            "across groups.",
            f"在每组 {link.max_gpus} 张桥接卡内做张量并行，组间做数据/流水线并行。",
            nums, pitfall="underrating-interconnect",
        )]
    if link.p2p is False:
        sev: Severity = "warning" if (tp or n >= 4) else "info"
        cost_en = ("Tensor-parallel inference all-reduces activations every layer, so each token waits on "
                   "the host-memory round trip; prefer fewer, larger-memory GPUs or pipeline/layer split."
                   if tp else
                   "Data-parallel training still works but gradient all-reduce is slower; keep the model "
                   "replicated per GPU and use large batches.")
        cost_zh = ("张量并行推理每层都要 all-reduce，每个 token 都要经过主机内存中转；宜选更少、显存更大的显"
                   "卡，或改用流水线/按层切分。"
                   if tp else "数据并行训练仍可运行，但梯度同步更慢；尽量让每卡放下完整模型并使用大 batch。")
        return [finding(
            "p2p-geforce", "interconnect", sev,
            f"{g.name} has no NVLink and no PCIe peer-to-peer: NCCL copies between the {n} GPUs through host "
            f"memory (≤ ~{pcie:g} GB/s each way per link, shared). {cost_en}",
            f"{g.name} 没有 NVLink，也不支持 PCIe P2P：{n} 张卡之间的 NCCL 通信需经主机内存中转"
            f"（每条链路单向最多约 {pcie:g} GB/s，且共享）。{cost_zh}",
            "For tensor parallel choose cards with NVLink (RTX 3090/A6000 pairs, H100 NVL, SXM) or one "
            "larger-VRAM card; set NCCL_P2P_DISABLE=1 if NCCL hangs.",
            "张量并行请选支持 NVLink 的卡（RTX 3090/A6000 成对、H100 NVL、SXM）或一张更大显存的卡；"
            "若 NCCL 卡死请设置 NCCL_P2P_DISABLE=1。",
            nums, pitfall="underrating-interconnect", sources=["S-NCCL-1127", "S-ACCEL-2328", "S-NCCL-1637"],
        )]
    if link.kind in ("pcie", "none"):
        sev = "warning" if (tp and n >= 4) else "info"
        return [finding(
            "tensor-parallel-pcie" if tp else "interconnect-pcie-only", "interconnect", sev,
            f"{g.name} has no NVLink-class link: the {n} GPUs talk over PCIe"
            + (" peer-to-peer" if link.p2p else "") + f" (~{pcie:g} GB/s each way)."
            + (" Tensor parallel over 4+ GPUs on PCIe loses much of its "
               "speed-up." if sev == "warning" else ""),
            f"{g.name} 没有 NVLink 类互联：{n} 张卡通过 PCIe" + ("P2P" if link.p2p else "")
            + f" 通信（单向约 {pcie:g} GB/s）"
              "。" + ("4 卡以上走 PCIe 的张量并行会损失大部分加速。" if sev == "warning" else ""),
            "Keep tensor parallel to 2 GPUs (or within a PCIe switch) and use data parallel beyond that.",
            "张量并行尽量限制在 2 卡（或同一 PCIe 交换芯片下），更多卡用数据并行。",
            nums, pitfall="underrating-interconnect" if sev == "warning" else None,
        )]
    if n > link.max_gpus:
        return [finding(
            "interconnect-fabric-size", "interconnect", "warning",
            f"{name} joins at most {link.max_gpus} × {g.name}; {n} GPUs span more than one fabric domain, so "
            "traffic between domains uses the (much slower) network or PCIe.",
            f"{name} 最多连接 {link.max_gpus} 张 {g.name}；{n} 张卡跨越多个互联域，域间通信走更慢的网络或 "
            "PCIe。",
            f"Keep tensor parallel within {link.max_gpus} GPUs; plan InfiniBand/RoCE between nodes.",
            f"张量并行限制在 {link.max_gpus} 卡以内；节点之间规划 InfiniBand/RoCE 网络。",
            nums, pitfall="underrating-interconnect",
        )]
    return [finding(
        "interconnect-fabric", "interconnect", "info",
        f"{n} × {g.name} are linked by {name} at {link.bandwidth_gbs:g} GB/s per GPU (PCIe: ~{pcie:g} GB/s "
        "each way).",
        f"{n} 张 {g.name} 通过 {name} 互联，每卡 {link.bandwidth_gbs:g} GB/s（PCIe 单向约 {pcie:g} GB/s）。",
        "Use the vendor's collective library (NCCL, RCCL, HCCL, CNCL …) and keep tensor parallel inside the "
        "fabric.",
        "使用厂商的集合通信库（NCCL、RCCL、HCCL、CNCL 等），张量并行保持在同一互联域内。",
        nums,
    )]
