"""Multi-GPU interconnect rules: NVLink / bridges / fabrics, P2P, mixed GPU models."""

from __future__ import annotations

from knowledge.markets import availability
from tools.compat_rules.pcie import link_gbs
from tools.compat_rules.totals import is_board_module
from tools.compat_rules.types import BuildContext, Card, Finding, Severity, finding, joined
from tools.result import note

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


def _export_variant(card: Card) -> bool:
    """A China-market variant cut down to fit the US export rules (H800, A800, H20: market rule cn-variant), whose
    link the capped-NVLink note is about; a board modded in China (cn-modded: the 22 GB RTX 2080 Ti) keeps the
    link of the card it was made from, so the note is not for it."""
    rule = availability(card.gpu.id, "global").rule
    return card.gpu.china_market and rule is not None and rule.id == "cn-variant"


def check_interconnect(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    if not ctx.multi_gpu:
        return out
    par = ctx.parallelism
    for card in ctx.cards:
        if card.count < 2:
            continue
        out += _one_model(ctx, card, par)
        if _export_variant(card) and card.gpu.interconnect.kind in ("nvlink", "nvlink-bridge"):
            bw = card.gpu.interconnect.bandwidth_gbs
            out.append(finding(
                "nvlink-china-variants", "interconnect", "info",
                note("compat.interconnect.china_variant", gpu=card.gpu.name, bw=bw),
                note("compat.fix.interconnect.china_variant"),
                {"link_bandwidth_gbs": bw}, sources=["S-PHILISUN-H800", "S-ASTRO-DS"],
            ))
    models = {c.gpu.id for c in ctx.cards}
    if len(models) > 1:
        vendors = sorted({c.gpu.vendor for c in ctx.cards})
        slow = min(ctx.cards, key=lambda c: (c.gpu.bandwidth_gbs, c.gpu.id))
        cross = len(vendors) > 1
        out.append(finding(
            "mixed-gpu-types", "interconnect", "warning",
            note("compat.interconnect.mixed_gpus", slowest=slow.gpu.name,
                 vendors=note("compat.interconnect.mixed_vendors", vendors=joined(vendors)) if cross else ""),
            note("compat.fix.interconnect.mixed_gpus"),
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
                note("compat.interconnect.bridge", gpus=n, gpu=g.name, bw=link.bandwidth_gbs, pcie=pcie),
                note("compat.fix.interconnect.bridge"),
                nums, sources=["S-ACCEL-2328", "S-TPU"],
            )]
        return [finding(
            "nvlink-bridge", "interconnect", "warning",
            note("compat.interconnect.bridge_too_many", max_gpus=link.max_gpus, gpu=g.name, gpus=n, pcie=pcie),
            note("compat.fix.interconnect.bridge_too_many", max_gpus=link.max_gpus),
            nums, pitfall="underrating-interconnect",
        )]
    if link.p2p is False:
        sev: Severity = "warning" if (tp or n >= 4) else "info"
        cost = note("compat.interconnect.no_p2p_tensor" if tp else "compat.interconnect.no_p2p_data")
        return [finding(
            "p2p-geforce", "interconnect", sev,
            note("compat.interconnect.no_p2p", gpu=g.name, gpus=n, pcie=pcie, cost=cost),
            note("compat.fix.interconnect.no_p2p"),
            nums, pitfall="underrating-interconnect", sources=["S-NCCL-1127", "S-ACCEL-2328", "S-NCCL-1637"],
        )]
    if link.kind in ("pcie", "none"):
        sev = "warning" if (tp and n >= 4) else "info"
        return [finding(
            "tensor-parallel-pcie" if tp else "interconnect-pcie-only", "interconnect", sev,
            note("compat.interconnect.pcie_only", gpu=g.name, gpus=n, pcie=pcie,
                 p2p=note("compat.interconnect.peer_to_peer") if link.p2p else "",
                 loss=note("compat.interconnect.tensor_parallel_loss") if sev == "warning" else ""),
            note("compat.fix.interconnect.pcie_only"),
            nums, pitfall="underrating-interconnect" if sev == "warning" else None,
        )]
    if n > link.max_gpus:
        return [finding(
            "interconnect-fabric-size", "interconnect", "warning",
            note("compat.interconnect.fabric_size", link=name, max_gpus=link.max_gpus, gpu=g.name, gpus=n),
            note("compat.fix.interconnect.fabric_size", max_gpus=link.max_gpus),
            nums, pitfall="underrating-interconnect",
        )]
    return [finding(
        "interconnect-fabric", "interconnect", "info",
        note("compat.interconnect.fabric", gpus=n, gpu=g.name, link=name, bw=link.bandwidth_gbs, pcie=pcie),
        note("compat.fix.interconnect.fabric"),
        nums,
    )]
