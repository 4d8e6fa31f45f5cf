"""PCIe rules: CPU lanes vs GPU lanes (+ NVMe), link widths, generation, BIOS settings."""

from __future__ import annotations

from knowledge.schema import Tier
from tools.compat_rules.totals import NVME_LANES, is_board_module
from tools.compat_rules.types import BuildContext, Finding, Severity, finding

GEN3_GBS_PER_LANE = 0.985  # GB/s per lane per direction after 128b/130b encoding


def link_gbs(gen: int, lanes: int) -> float:
    """Per-direction PCIe bandwidth in GB/s (1e9 B/s): ~0.985 GB/s per Gen3 lane, doubling each gen."""
    return round(GEN3_GBS_PER_LANE * 2 ** (gen - 3) * lanes, 1)


def _cost_text(ctx: BuildContext, width: int) -> tuple[str, str]:
    par = ctx.parallelism
    if not ctx.multi_gpu:
        return ("For a single GPU the link width mostly affects model-loading time (~1–2 % at x8).",
                "单卡时链路宽度主要影响模型加载时间（x8 约损失 1–2 %）。")
    if par == "data":
        cost = "≈ 5–10 %" if width <= 4 else "≈ 0–2 %"
        return (f"Data-parallel training syncs gradients once per step, so x{width} costs {cost} "
                "(Dettmers: x8 fine, x4 ≈ 5–10 % with 4 GPUs).",
                f"数据并行训练每步同步一次梯度，x{width} 约损失 {cost}（Dettmers：x8 足够，4 卡 x4 约损失 "
                "5–10 %）。")
    return (f"Tensor-parallel inference all-reduces activations in every layer, so a x{width} link "
            "directly slows each token — far more than in data-parallel training.",
            f"张量并行推理每一层都要 all-reduce 激活值，x{width} 链路会直接拖慢每个 token，影响远大于数据并行"
            "训练。")


def check_pcie(ctx: BuildContext) -> list[Finding]:
    t = ctx.totals
    assert t is not None
    out: list[Finding] = []
    pcie_cards = [c for c in ctx.cards if not is_board_module(c)]
    n_pcie = sum(c.count for c in pcie_cards)
    if n_pcie == 0:
        return out
    plat = ctx.platform
    if plat is None:
        if n_pcie > 2:
            out.append(finding(
                "pcie-lanes", "pcie", "warning",
                f"{n_pcie} PCIe GPUs need {t.lanes_needed} lanes at full width; desktop CPUs offer 16–24, so "
                "with a desktop CPU they would run at x8/x4 or through the chipset.",
                f"{n_pcie} 张 PCIe 显卡全速需要 {t.lanes_needed} 条通道；台式机 CPU 只有 16–24 条，"
                "会降为 x8/x4 或挂在芯片组下。",
                "Name the CPU (--cpu) to check; for 3–4 GPUs at x16 use Threadripper PRO, Xeon W or EPYC.",
                "请指定 CPU（--cpu）以便检查；3–4 卡全速 x16 需选 Threadripper PRO、Xeon W 或 EPYC。",
                {"gpus": n_pcie, "lanes_needed": t.lanes_needed}, pitfall="underrating-interconnect",
                sources=["S-IONET-PCIE", "S-PUGET-ML-QUOTE"],
            ))
        return out
    widths = t.link_widths
    full = [c.gpu.pcie_lanes or 16 for c in pcie_cards for _ in range(c.count)]
    narrowed = [(wd, f) for wd, f in zip(widths, full, strict=True) if wd < f]
    card_gen = min((c.gpu.pcie_gen or plat.pcie_gen) for c in pcie_cards)
    gen = min(plat.pcie_gen, card_gen)  # a link runs at the older generation of its two ends
    nums: dict[str, float | int | str | bool | None] = {
        "lanes_needed": t.lanes_needed, "lanes_available": plat.cpu_pcie_lanes,
        "gpu_slot_lanes": plat.gpu_slot_lanes, "gpus": n_pcie,
        "link_widths": "/".join(f"x{x}" for x in widths), "chipset_attached": t.chipset_attached,
        "min_link_gbs_per_direction": link_gbs(gen, min(widths)),
    }
    if narrowed or t.lanes_needed > plat.cpu_pcie_lanes:
        min_w = min(widths)
        cost_en, cost_zh = _cost_text(ctx, min_w)
        datacenter_narrow = any(c.gpu.tier == Tier.datacenter for c in pcie_cards) and min_w < 16
        severity: Severity = "warning" if (min_w <= 4 or t.chipset_attached or datacenter_narrow) else "info"
        chip_en = (f" {t.chipset_attached} GPU(s) would sit on chipset lanes (x4, sharing the chipset uplink "
                   "with USB, SATA and network)." if t.chipset_attached else "")
        chip_zh = (f"其中 {t.chipset_attached} 张显卡只能接在芯片组通道上（x4，与 USB、SATA、网卡共享上行带"
                   "宽）。"
                   if t.chipset_attached else "")
        out.append(finding(
            "pcie-lanes", "pcie", severity,
            f"{plat.name} wires {plat.gpu_slot_lanes} lanes to GPU slots ({plat.cpu_pcie_lanes} CPU lanes in "
            f"all); {n_pcie} GPUs{' + NVMe' if ctx.inp.nvme_drives else ''} need {t.lanes_needed}, so the "
            f"GPUs run at {'/'.join(f'x{x}' for x in widths)} (Gen{gen} x{min_w} ≈ {link_gbs(gen, min_w)} "
            f"GB/s each way).{chip_en} {cost_en}",
            f"{plat.name} 仅有 {plat.gpu_slot_lanes} 条通道接到显卡插槽（CPU 共 {plat.cpu_pcie_lanes} 条）；"
            f"{n_pcie} 张显卡{'加 NVMe ' if ctx.inp.nvme_drives else ''}需要 {t.lanes_needed} 条，显卡将以 "
            f"{'/'.join(f'x{x}' for x in widths)} 运行（Gen{gen} x{min_w} 单向约 {link_gbs(gen, min_w)} "
            f"GB/s）。{chip_zh}{cost_zh}",
            "For 3+ GPUs at x16 use a workstation/server platform (Threadripper PRO 128 lanes, Xeon W, EPYC);"
            " with two GPUs on a desktop board x8/x8 is fine.",
            "3 卡及以上全速 x16 请选工作站/服务器平台（Threadripper PRO 128 条、Xeon W、EPYC）；台式机双卡 "
            "x8/x8 可以接受。",
            nums, pitfall="underrating-interconnect" if severity == "warning" else None,
            sources=["S-DETTMERS", "S-IONET-PCIE", "S-TPU-4090-PCIE"],
        ))
    nvme = ctx.inp.nvme_drives or 0
    spare = plat.cpu_pcie_lanes - plat.gpu_slot_lanes
    if nvme * NVME_LANES > spare and nvme:
        out.append(finding(
            "pcie-m2-lane-sharing", "pcie", "info",
            f"{nvme} NVMe drive(s) need {nvme * NVME_LANES} lanes but only {spare} CPU lanes are left beside "
            "the GPU slots; the rest go through the chipset, or share lanes with a GPU slot (on many boards "
            "a Gen5 M.2 slot drops the GPU to x8).",
            f"{nvme} 块 NVMe 需要 {nvme * NVME_LANES} 条通道，但显卡插槽之外只剩 {spare} 条 CPU 通道；其余走"
            "芯片组，或与显卡插槽共享（很多主板占用 Gen5 M.2 后显卡降为 x8）。",
            "Check the board manual's lane-sharing table; put data drives on chipset M.2 slots.",
            "查阅主板手册的通道共享表；数据盘放在芯片组 M.2 插槽上。",
            {"nvme_drives": nvme, "nvme_lanes": nvme * NVME_LANES, "spare_cpu_lanes": spare},
            sources=["S-TPU-4090-PCIE", "S-PCPP-REVIEW"],
        ))
    pgen = plat.pcie_gen
    for card in pcie_cards:
        cg = card.gpu.pcie_gen
        if cg and cg > pgen:
            narrow_card = (card.gpu.pcie_lanes or 16) <= 8
            out.append(finding(
                "pcie-generation", "pcie", "warning" if narrow_card else "info",
                f"{card.gpu.name} is a Gen{cg} card on a Gen{pgen} platform: it runs at Gen{pgen}"
                + (f" with only x{card.gpu.pcie_lanes} lanes ({link_gbs(pgen, card.gpu.pcie_lanes or 16)} "
                   "GB/s), so it loses more than a x16 card would." if narrow_card else
                   " (≈ 1–2 % loss for a x16 card, e.g. RTX 4090 at Gen4 x8)."),
                f"{card.gpu.name} 为 Gen{cg} 显卡，平台为 Gen{pgen}，将以 Gen{pgen} 运行"
                + (f"，且只有 x{card.gpu.pcie_lanes}（{link_gbs(pgen, card.gpu.pcie_lanes or 16)} GB/s），损"
                   "失比 x16 卡更大。"
                   if narrow_card else "（x16 显卡约损失 1–2 %）。"),
                "Acceptable for most AI work; prefer a platform of the card's generation for x8 cards.",
                "多数 AI 负载可接受；x8 显卡最好配同代 PCIe 平台。",
                {"card_pcie_gen": cg, "platform_pcie_gen": pgen, "card_lanes": card.gpu.pcie_lanes or 16},
                sources=["S-TPU-4090-PCIE", "S-TPU-5090-PCIE"],
            ))
    if plat.segment in ("desktop", "hedt") and any(c.gpu.tier == Tier.datacenter for c in pcie_cards):
        out.append(finding(
            "bios-above-4g-rebar", "pcie", "info",
            "Datacenter cards map large PCIe BARs: enable Above-4G decoding and Resizable BAR in the BIOS, "
            "or the card may not be detected; consumer boards are not validated for them.",
            "数据中心卡需要大 PCIe BAR 空间：请在 BIOS 中开启 Above 4G Decoding 和 Resizable BAR，否则可能识"
            "别不到；消费级主板通常未针对这些卡做验证。",
            "Enable Above-4G decoding / ReBAR, update the BIOS; prefer a server board from the card's "
            "qualified list.",
            "开启 Above 4G / ReBAR 并更新 BIOS；最好选用该卡认证列表中的服务器主板。",
            {}, pitfall="mixing-server-consumer",
        ))
    return out
