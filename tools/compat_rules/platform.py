"""Platform rules: CPU cores per GPU, server vs consumer card roles, driver licensing, storage."""

from __future__ import annotations

from knowledge.schema import Tier
from tools.compat_rules.types import BuildContext, Finding, finding


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
                f"Even the largest {plat.name} has {cores} cores; {n} GPU(s) want ≥ {need} (4 per GPU, 16 "
                "minimum for an AI workstation) for data loading and preprocessing.",
                f"{plat.name} 最多只有 {cores} 核；{n} 张显卡需要 ≥ {need} 核（每卡 4 核，AI 工作站至少 16 "
                "核）用于数据加载和预处理。",
                "Choose a workstation/server CPU with more cores (Threadripper PRO, Xeon W, EPYC).",
                "选择核心更多的工作站/服务器 CPU（Threadripper PRO、Xeon W、EPYC）。",
                nums, sources=["S-PUGET-ML-QUOTE"],
            ))
        elif n > 1:
            out.append(finding(
                "cpu-cores-per-gpu", "platform", "info",
                f"Pick a SKU of {plat.name} with ≥ {need} cores (4 per GPU, 16 minimum); 32–64 if "
                "preprocessing is heavy.",
                f"选择 ≥ {need} 核的 {plat.name} 型号（每卡 4 核，至少 16 核）；预处理负载重时选 32–64 核。",
                f"Choose ≥ {need} cores.", f"选择 ≥ {need} 核。", nums, sources=["S-PUGET-ML-QUOTE"],
            ))
    tiers = {c.gpu.tier for c in ctx.cards}
    if Tier.datacenter in tiers and (Tier.consumer in tiers or Tier.workstation in tiers):
        out.append(finding(
            "server-consumer-mix", "platform", "warning",
            "The build mixes datacenter and desktop cards: they want different chassis (server airflow vs "
            "fans), drivers/licences and display arrangements, and cannot share NVLink or tensor "
            "parallelism.",
            "该配置混用了数据中心卡和桌面卡：两者需要不同的机箱风道（服务器风道 vs 自带风扇）、驱动/授权和显"
            "示方案，且无法共享 NVLink 或张量并行。",
            "Keep datacenter cards in a rack server and desktop cards in a workstation, each running its own "
            "jobs.",
            "数据中心卡放在机架服务器、桌面卡放在工作站，各自承担独立任务。",
            {"tiers": ", ".join(sorted(x.value for x in tiers))}, pitfall="mixing-server-consumer",
            sources=["seed §避开关键陷阱 4"],
        ))
    geforce = [c for c in ctx.cards if c.gpu.vendor == "NVIDIA" and c.gpu.tier == Tier.consumer]
    if geforce and (ctx.inp.chassis == "rack" or (plat is not None and plat.segment == "server")):
        out.append(finding(
            "geforce-datacenter-licence", "platform", "warning",
            "NVIDIA's GeForce driver licence excludes datacenter deployment (blockchain processing aside); "
            "GeForce cards in rack servers are also unsupported by server vendors (no ECC, no vGPU, consumer "
            "coolers).",
            "NVIDIA GeForce 驱动许可协议不允许在数据中心部署（区块链处理除外）；服务器厂商也不支持机架中使用 "
            "GeForce （无 ECC、无 vGPU、消费级散热）。",
            "For a datacenter use L40S / L4 / RTX PRO 6000 Server-class cards; keep GeForce in "
            "desktops/workstations.",
            "数据中心部署请选用 L40S / L4 / RTX PRO 6000 Server 等卡；GeForce 留在台式机/工作站中使用。",
            {"geforce_cards": sum(c.count for c in geforce)}, pitfall="mixing-server-consumer",
            sources=["NVIDIA GeForce driver EULA §2.1.3"],
        ))
    dc_nvidia = [c for c in ctx.cards if c.gpu.vendor == "NVIDIA" and c.gpu.tier == Tier.datacenter]
    if dc_nvidia:
        out.append(finding(
            "datacenter-driver-licensing", "platform", "info",
            "Bare-metal CUDA on datacenter GPUs needs no licence, but sharing them through vGPU / virtual "
            "workstations needs NVIDIA vGPU or AI Enterprise licences (per GPU, yearly or perpetual); MIG "
            "partitioning needs none.",
            "在数据中心 GPU 上裸机运行 CUDA 不需要授权，但通过 vGPU / 虚拟工作站共享需购买 NVIDIA vGPU 或 AI "
            "Enterprise 授权（按 GPU 计，年付或永久）；MIG 分区不需要授权。",
            "Budget vGPU / AI Enterprise licences only if you virtualise the GPUs.",
            "仅在需要虚拟化 GPU 时才为 vGPU / AI Enterprise 授权做预算。",
            {"datacenter_gpus": sum(c.count for c in dc_nvidia)},
        ))
    if ctx.inp.nvme_drives == 0:
        out.append(finding(
            "storage-nvme", "platform", "info",
            "No NVMe drive: a 70B checkpoint (~140 GB) loads in minutes from SATA/HDD but seconds from NVMe.",
            "没有 NVMe 固态：70B 模型（约 140 GB）从 SATA/机械硬盘加载要数分钟，从 NVMe 只需数十秒。",
            "Keep the OS, models and working data on NVMe; bulk datasets on SATA or network storage.",
            "系统、模型和工作数据放在 NVMe 上；大批量数据集放在 SATA 或网络存储上。",
            {"nvme_drives": 0}, sources=["S-PUGET-ML-QUOTE"],
        ))
    return out
