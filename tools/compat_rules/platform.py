"""Platform rules: CPU cores per GPU, server vs consumer card roles, driver licensing, storage."""

from __future__ import annotations

from knowledge.schema import Tier
from tools.compat_rules.types import BuildContext, Finding, finding
from tools.result import note


def check_platform(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    t = ctx.totals
    assert t is not None
    plat = ctx.platform
    n = ctx.gpu_count
    if plat is not None:
        cores = plat.max_cores * plat.sockets
        need = t.cpu_cores_needed
        nums = {"cpu_cores_max": cores, "cpu_cores_needed": need, "gpus": n}
        if cores < need:
            out.append(finding(
                "cpu-cores-per-gpu", "platform", "warning",
                note("compat.platform.cores_short", platform=plat.name, cores=cores, gpus=n, needed=need),
                note("compat.fix.platform.cores_short"),
                nums, sources=["S-PUGET-ML-QUOTE"],
            ))
        elif n > 1:
            out.append(finding(
                "cpu-cores-per-gpu", "platform", "info",
                note("compat.platform.cores_pick", platform=plat.name, needed=need),
                note("compat.fix.platform.cores_pick", needed=need), nums, sources=["S-PUGET-ML-QUOTE"],
            ))
    tiers = {c.gpu.tier for c in ctx.cards}
    if Tier.datacenter in tiers and (Tier.consumer in tiers or Tier.workstation in tiers):
        out.append(finding(
            "server-consumer-mix", "platform", "warning",
            note("compat.platform.server_consumer_mix"),
            note("compat.fix.platform.server_consumer_mix"),
            {"tiers": ", ".join(sorted(x.value for x in tiers))}, pitfall="mixing-server-consumer",
            sources=["seed §避开关键陷阱 4"],
        ))
    geforce = [c for c in ctx.cards if c.gpu.vendor == "NVIDIA" and c.gpu.tier == Tier.consumer]
    if geforce and (ctx.inp.chassis == "rack" or (plat is not None and plat.segment == "server")):
        out.append(finding(
            "geforce-datacenter-licence", "platform", "warning",
            note("compat.platform.geforce_datacenter_licence"),
            note("compat.fix.platform.geforce_datacenter_licence"),
            {"geforce_cards": sum(c.count for c in geforce)}, pitfall="mixing-server-consumer",
            sources=["NVIDIA GeForce driver EULA §2.1.3"],
        ))
    dc_nvidia = [c for c in ctx.cards if c.gpu.vendor == "NVIDIA" and c.gpu.tier == Tier.datacenter]
    if dc_nvidia:
        out.append(finding(
            "datacenter-driver-licensing", "platform", "info",
            note("compat.platform.datacenter_driver_licensing"),
            note("compat.fix.platform.datacenter_driver_licensing"),
            {"datacenter_gpus": sum(c.count for c in dc_nvidia)},
        ))
    if ctx.inp.nvme_drives == 0:
        out.append(finding(
            "storage-nvme", "platform", "info",
            note("compat.platform.storage_nvme"),
            note("compat.fix.platform.storage_nvme"),
            {"nvme_drives": 0}, sources=["S-PUGET-ML-QUOTE"],
        ))
    return out
