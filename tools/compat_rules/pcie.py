"""PCIe rules: CPU lanes vs GPU lanes (+ NVMe), link widths, generation, BIOS settings."""

from __future__ import annotations

from knowledge.schema import Tier
from tools.compat_rules.totals import NVME_LANES, is_board_module
from tools.compat_rules.types import BuildContext, Finding, Severity, finding
from tools.result import Note, note

GEN3_GBS_PER_LANE = 0.985  # GB/s per lane per direction after 128b/130b encoding


def link_gbs(gen: int, lanes: int) -> float:
    """Per-direction PCIe bandwidth in GB/s (1e9 B/s): ~0.985 GB/s per Gen3 lane, doubling each gen."""
    return round(GEN3_GBS_PER_LANE * 2 ** (gen - 3) * lanes, 1)


def _cost_text(ctx: BuildContext, width: int) -> Note:
    par = ctx.parallelism
    if not ctx.multi_gpu:
        return note("compat.pcie.cost_single")
    if par == "data":
        cost = "≈ 5–10 %" if width <= 4 else "≈ 0–2 %"
        return note("compat.pcie.cost_data_parallel", width=width, cost=cost)
    return note("compat.pcie.cost_tensor_parallel", width=width)


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
                note("compat.pcie.lanes_no_cpu", gpus=n_pcie, lanes=t.lanes_needed),
                note("compat.fix.pcie.lanes_no_cpu"),
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
        datacenter_narrow = any(c.gpu.tier == Tier.datacenter for c in pcie_cards) and min_w < 16
        severity: Severity = "warning" if (min_w <= 4 or t.chipset_attached or datacenter_narrow) else "info"
        chipset = note("compat.pcie.chipset_attached", gpus=t.chipset_attached) if t.chipset_attached else ""
        out.append(finding(
            "pcie-lanes", "pcie", severity,
            note("compat.pcie.lanes", platform=plat.name, slot_lanes=plat.gpu_slot_lanes,
                 cpu_lanes=plat.cpu_pcie_lanes, gpus=n_pcie,
                 nvme=note("compat.pcie.plus_nvme") if ctx.inp.nvme_drives else "", lanes=t.lanes_needed,
                 widths="/".join(f"x{x}" for x in widths), gen=gen, min_width=min_w, gbs=link_gbs(gen, min_w),
                 chipset=chipset, cost=_cost_text(ctx, min_w)),
            note("compat.fix.pcie.lanes"),
            nums, pitfall="underrating-interconnect" if severity == "warning" else None,
            sources=["S-DETTMERS", "S-IONET-PCIE", "S-TPU-4090-PCIE"],
        ))
    nvme = ctx.inp.nvme_drives or 0
    spare = plat.cpu_pcie_lanes - plat.gpu_slot_lanes
    if nvme * NVME_LANES > spare and nvme:
        out.append(finding(
            "pcie-m2-lane-sharing", "pcie", "info",
            note("compat.pcie.m2_lane_sharing", drives=nvme, lanes=nvme * NVME_LANES, spare=spare),
            note("compat.fix.pcie.m2_lane_sharing"),
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
                note("compat.pcie.generation_narrow", gpu=card.gpu.name, card_gen=cg, platform_gen=pgen,
                     lanes=card.gpu.pcie_lanes, gbs=link_gbs(pgen, card.gpu.pcie_lanes or 16)) if narrow_card else
                note("compat.pcie.generation", gpu=card.gpu.name, card_gen=cg, platform_gen=pgen),
                note("compat.fix.pcie.generation"),
                {"card_pcie_gen": cg, "platform_pcie_gen": pgen, "card_lanes": card.gpu.pcie_lanes or 16},
                sources=["S-TPU-4090-PCIE", "S-TPU-5090-PCIE"],
            ))
    if plat.segment in ("desktop", "hedt") and any(c.gpu.tier == Tier.datacenter for c in pcie_cards):
        out.append(finding(
            "bios-above-4g-rebar", "pcie", "info",
            note("compat.pcie.above_4g_rebar"),
            note("compat.fix.pcie.above_4g_rebar"),
            {}, pitfall="mixing-server-consumer",
        ))
    return out
