"""Physical, cooling and display rules: slots, length, SXM/OAM baseboards, airflow, video outputs."""

from __future__ import annotations

from knowledge.schema import Cooling, FormFactor, Tier
from tools.compat_rules.totals import TOWER_SLOT_POSITIONS, is_board_module, slot_positions
from tools.compat_rules.types import BuildContext, Card, Finding, Severity, finding


def _place(layout_count: int, spacing: int, widths: list[int]) -> int:
    """Cards that fit in x16 slots `spacing` positions apart when each card covers `width` positions."""
    placed, free_from, i = 0, 0, 0
    for slot in range(layout_count):
        pos = slot * spacing
        if i >= len(widths):
            break
        if pos >= free_from:
            free_from = pos + widths[i]
            placed += 1
            i += 1
    return placed


def check_physical(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    chassis = ctx.inp.chassis
    for card in ctx.cards:
        if is_board_module(card):
            out += _module(card, chassis)
    pcie = [c for c in ctx.cards if not is_board_module(c)]
    if pcie:
        out += _slots(ctx, pcie)
    lim = ctx.inp.case_max_gpu_length_mm
    if lim:
        for card in pcie:
            if card.gpu.length_mm and card.gpu.length_mm > lim:
                out.append(finding(
                    "fit-gpu-length", "physical", "error",
                    f"{card.gpu.name} is {card.gpu.length_mm:.0f} mm long; the case takes {lim:.0f} mm.",
                    f"{card.gpu.name} 长 {card.gpu.length_mm:.0f} mm，机箱最大支持 {lim:.0f} mm。",
                    "Choose a case with more GPU clearance (remove the drive cage) or a shorter card.",
                    "换用显卡限长更大的机箱（或拆除硬盘笼），或选择更短的显卡。",
                    {"card_length_mm": card.gpu.length_mm, "case_max_gpu_length_mm": lim},
                    sources=["S-MAXMYBUILD"],
                ))
    return out


def _module(card: Card, chassis: str | None) -> list[Finding]:
    g = card.gpu
    kind = {"sxm": "an SXM", "oam": "an OAM"}.get(g.form_factor.value, "a mezzanine")
    kind_zh = {"sxm": "SXM", "oam": "OAM"}.get(g.form_factor.value, "板载")
    board = {"sxm": "an NVIDIA HGX baseboard", "oam": "an OAM universal baseboard (UBB)"}.get(
        g.form_factor.value, "the vendor's server (e.g. an Atlas 800-class node)")
    board_zh = {"sxm": "NVIDIA HGX 基板", "oam": "OAM 通用基板（UBB）"}.get(
        g.form_factor.value, "厂商整机（如 Atlas 800 类服务器）")
    nums = {"form_factor": g.form_factor.value, "count": card.count}
    if chassis in ("tower", "open-frame"):
        return [finding(
            "form-sxm-oam-baseboard", "physical", "error",
            f"{g.name} is {kind} module, not a PCIe card: it only runs on {board} in a rack server "
            f"with its power and cooling — it cannot go into a {chassis}.",
            f"{g.name} 是 {kind_zh} 模组而不是 PCIe 卡：只能安装在机架服务器的 {board_zh} 上，由其供电和散"
            f"热，无法装入{'塔式机箱' if chassis == 'tower' else '开放式机架'}。",
            "Buy it as a complete 4- or 8-GPU server, or choose the PCIe/NVL version of the GPU for a "
            f"{chassis}.",
            "以 4 卡或 8 卡整机形式购买，或在该机箱中改用 PCIe/NVL 版本。",
            nums, pitfall="mixing-server-consumer", sources=["hardware_rules §5 A1"],
        )]
    out = []
    sev: Severity = "info" if chassis == "rack" else "warning"
    out.append(finding(
        "form-sxm-oam-baseboard", "physical", sev,
        f"{g.name} is {kind} module: it needs {board}; buy it as a complete server, not as loose cards.",
        f"{g.name} 是 {kind_zh} 模组，需要 {board_zh}；应购买整机而不是单卡。",
        "Order an HGX/OAM (or vendor) system with 4 or 8 GPUs; rack, 3-phase power and cooling included.",
        "采购 4 卡或 8 卡的 HGX/OAM（或厂商）整机，并规划机柜、三相电和散热。",
        nums, sources=["hardware_rules §5 A1"],
    ))
    if card.count not in (4, 8):
        out.append(finding(
            "form-sxm-oam-count", "physical", "warning",
            f"{card.count} × {g.name}: {kind.split()[-1]} baseboards come with 4 or 8 GPUs.",
            f"{card.count} 张 {g.name}：{kind_zh} 基板只有 4 卡或 8 卡两种配置。",
            "Plan for 4 or 8 GPUs per node, or rent a partial node in the cloud.",
            "按每节点 4 卡或 8 卡规划，或在云上租用部分节点。",
            nums,
        ))
    return out


def _slots(ctx: BuildContext, pcie: list[Card]) -> list[Finding]:
    t = ctx.totals
    assert t is not None
    chassis = ctx.inp.chassis
    n = sum(c.count for c in pcie)
    widths = [slot_positions(c) for c in pcie for _ in range(c.count)]
    desc = ", ".join(f"{c.count} × {c.gpu.name} ({c.gpu.slot_width or 2:g}-slot)" for c in pcie)
    desc_zh = "，".join(f"{c.count} 张 {c.gpu.name}（{c.gpu.slot_width or 2:g} 槽）" for c in pcie)
    out: list[Finding] = []
    thick = any((c.gpu.slot_width or 2) > 2 for c in pcie)
    fix = ("Use 2-slot blower cards for 3–4 GPUs (RTX PRO 6000 Max-Q, RTX 6000 Ada, RTX A6000), PCIe risers "
           "in an open frame (structurally fragile, do not ship), or water-cooled single-slot cards; or "
           "fewer GPUs.")
    fix_zh = ("3–4 卡请选 2 槽涡轮卡（RTX PRO 6000 Max-Q、RTX 6000 Ada、RTX A6000），或在开放式机架上用 PCIe "
              "延长线（结构脆弱，不宜运输），或改用水冷单槽卡；或减少显卡数量。")
    layout = ctx.inp.slots
    if layout is not None:
        placed = _place(layout.count, layout.spacing, widths)
        if placed < n and chassis != "open-frame":
            out.append(finding(
                "slots-width-count", "physical", "error",
                f"{desc}: with {layout.count} x16 slots {layout.spacing} positions apart only {placed} of "
                f"the {n} cards can be installed — each wide card covers the next slot.",
                f"{desc_zh}：主板 {layout.count} 个 x16 插槽间距 {layout.spacing} 槽位，只能装下 {placed}/{n}"
                " 张卡，厚卡会挡住下一个插槽。",
                fix, fix_zh,
                {"cards": n, "cards_that_fit": placed, "x16_slots": layout.count,
                 "slot_spacing": layout.spacing,
                 "slots_needed": t.slots_needed},
                sources=["S-LAMBDA-30XX", "S-PUGET-ML-QUOTE"],
            ))
        return out
    if chassis in (None, "tower"):
        if t.slots_needed and t.slots_needed > TOWER_SLOT_POSITIONS:
            out.append(finding(
                "slots-width-count", "physical", "error",
                f"{desc} occupy {t.slots_needed} slot positions; an ATX board offers 7 and a tower case 8, "
                "so they cannot all be mounted (3-slot cards: at most 2 per ATX board).",
                f"{desc_zh}共占 {t.slots_needed} 个槽位；ATX 主板只有 7 个、塔式机箱 8 个，无法全部安装"
                "（3 槽卡每块 ATX 主板最多 2 张）。",
                fix, fix_zh,
                {"slots_needed": t.slots_needed, "slots_available": TOWER_SLOT_POSITIONS, "cards": n},
                sources=["S-LAMBDA-30XX", "S-PUGET-ML-QUOTE", "S-DETTMERS"],
            ))
        elif t.slots_needed == TOWER_SLOT_POSITIONS and n > 1:
            out.append(finding(
                "slots-width-count", "physical", "info",
                f"{desc} fill all {TOWER_SLOT_POSITIONS} slot positions: the bottom card overhangs the "
                "board.",
                f"{desc_zh} 占满全部 {TOWER_SLOT_POSITIONS} 个槽位，最下面一张卡会超出主板边缘。",
                "Use a case with 8 expansion slots and a board whose x16 slots sit at positions 1/3/5/7.",
                "选择 8 个扩展槽位的机箱，以及 x16 插槽位于第 1/3/5/7 位的主板。",
                {"slots_needed": t.slots_needed, "slots_available": TOWER_SLOT_POSITIONS},
            ))
    elif chassis == "rack" and thick and any(c.gpu.tier != Tier.datacenter for c in pcie):
        out.append(finding(
            "slots-width-count", "physical", "warning",
            f"{desc}: GPU servers have double-width bays; cards thicker than 2 slots, with top-mounted power "
            "plugs, usually do not fit a 4U server lid.",
            f"{desc_zh}：GPU 服务器是双槽宽卡位，超过 2 槽厚、顶部供电接口的显卡通常装不进 4U 机箱。",
            "Use 2-slot blower or passive server cards in a rack server.",
            "机架服务器请使用 2 槽涡轮卡或被动散热服务器卡。",
            {"cards": n}, pitfall="mixing-server-consumer",
        ))
    elif chassis == "open-frame" and n > 2:
        out.append(finding(
            "slots-risers", "physical", "info",
            f"{n} cards in an open frame hang on PCIe risers: use short Gen4/Gen5-rated risers and fix the "
            "frame; such rigs are not built to be moved or shipped.",
            f"{n} 张卡在开放式机架上通过 PCIe 延长线连接：请用短的 Gen4/Gen5 规格延长线并固定框架；此类机器不"
            "适合搬运。",
            "Test every riser at the target PCIe generation (drop to Gen3 in BIOS if you see link errors).",
            "逐根测试延长线在目标 PCIe 代数下的稳定性（出现链路错误时在 BIOS 中降到 Gen3）。",
            {"cards": n}, sources=["S-LAMBDA-30XX"],
        ))
    return out


def check_cooling(ctx: BuildContext) -> list[Finding]:
    out: list[Finding] = []
    chassis = ctx.inp.chassis
    passive = [c for c in ctx.cards
               if c.gpu.cooling == Cooling.passive and c.gpu.form_factor == FormFactor.pcie]
    for card in passive:
        nums = {"count": card.count, "tdp_w": card.gpu.tdp_w}
        if chassis == "rack":
            out.append(finding(
                "cooling-passive-in-tower", "cooling", "info",
                f"{card.gpu.name} is passively cooled: the server's fans must push enough air through it "
                f"({card.gpu.tdp_w:.0f} W per card).",
                f"{card.gpu.name} 为被动散热，需要服务器风扇提供足够风量（每卡 {card.gpu.tdp_w:.0f} W）。",
                "Use a server model on the card's qualified-system list and set the fan profile for GPUs.",
                "选择该卡认证列表中的服务器型号，并将风扇策略设置为 GPU 模式。",
                nums,
            ))
            continue
        sev: Severity = "error" if chassis == "tower" else "warning"
        where = {"tower": "a desktop "
                          "tower", "open-frame": "an open frame", None: "a case without server airflow"}
        where_zh = {"tower": "塔式机箱", "open-frame": "开放式机架", None: "没有服务器风道的机箱"}
        out.append(finding(
            "cooling-passive-in-tower", "cooling", sev,
            f"{card.gpu.name} has no fan ({card.gpu.tdp_w:.0f} W passive heatsink); in {where[chassis]} it "
            "throttles within minutes and shuts down — it relies on server chassis airflow.",
            f"{card.gpu.name} 没有风扇（{card.gpu.tdp_w:.0f} W 被动散热片），放在{where_zh[chassis]}中几分钟"
            "内就会降频直至关机——它依赖服务器机箱的强制风道。",
            "Put it in a rack server with front-to-back airflow, or choose a fan-cooled workstation card "
            "(e.g. RTX 6000 Ada / RTX PRO 6000 instead of L40S).",
            "放入前进后出风道的机架服务器，或改选自带风扇的工作站卡（如用 RTX 6000 Ada / RTX PRO 6000 替代 "
            "L40S）。",
            nums, pitfall="mixing-server-consumer", sources=["S-SPECSJSON", "S-3DNEWS-300IDUO"],
        ))
    open_air = sum(c.count for c in ctx.cards if c.gpu.cooling == Cooling.open_air)
    if open_air > 2 and chassis in (None, "tower"):
        out.append(finding(
            "cooling-open-air-stacking", "cooling", "warning",
            f"{open_air} open-air (axial-fan) cards stacked in a tower recirculate each other's hot air: the "
            "inner cards throttle.",
            f"塔式机箱中堆叠 {open_air} 张开放式（轴流风扇）显卡会互相吸入热风，中间的卡会降频。",
            "For 3–4 GPUs use blower-style cards, leave a slot between cards with risers, water-cool, or "
            "power-limit the cards.",
            "3–4 卡请选涡轮（鼓风）散热卡，或用延长线隔开、改水冷，或限制显卡功耗。",
            {"open_air_cards": open_air}, sources=["S-LAMBDA-30XX", "S-DETTMERS"],
        ))
    elif open_air == 2 and chassis in (None, "tower"):
        out.append(finding(
            "cooling-open-air-stacking", "cooling", "info",
            "Two open-air cards: leave at least one empty slot between them and give the case strong intake.",
            "两张开放式散热卡：之间至少空出一个槽位，并保证机箱进风充足。",
            "Pick a board with x16 slots three or four positions apart.",
            "选择 x16 插槽间隔 3–4 个槽位的主板。",
            {"open_air_cards": open_air},
        ))
    elif open_air and chassis == "rack":
        out.append(finding(
            "cooling-open-air-stacking", "cooling", "warning",
            "Open-air consumer cards blow their heat into the server, against its front-to-back airflow.",
            "开放式散热的消费级显卡会把热量吹回服务器机箱内部，与前进后出的风道相冲突。",
            "Use blower or passive server cards in a rack.",
            "机架中请使用涡轮或被动散热的服务器卡。",
            {"open_air_cards": open_air}, pitfall="mixing-server-consumer",
        ))
    return out


def check_display(ctx: BuildContext) -> list[Finding]:
    headless = [c for c in ctx.cards if c.gpu.display_outputs == 0]
    if not headless:
        return []
    names = ", ".join(c.gpu.name for c in headless)
    if len(headless) < len(ctx.cards):
        return [finding(
            "display-no-outputs", "display", "info",
            f"{names} has no display output; connect the monitor to the other card.",
            f"{names} 没有视频输出；显示器请接到另一张显卡上。",
            "Connect the display to a card with outputs.", "将显示器接到有视频输出的显卡。",
            {"cards_without_outputs": sum(c.count for c in headless)},
        )]
    sev: Severity = "info" if ctx.inp.chassis == "rack" else "warning"
    return [finding(
        "display-no-outputs", "display", sev,
        f"{names} has no display outputs: you need the CPU's integrated graphics, a small display card, the "
        "server's BMC (IPMI) video, or headless use over SSH.",
        f"{names} 没有视频输出：需要 CPU 核显、一张亮机卡、服务器 BMC（IPMI）视频，或通过 SSH 无头使用。",
        "Pick a CPU with an iGPU or add a low-power display card; on servers use the BMC.",
        "选择带核显的 CPU 或加一张低功耗亮机卡；服务器使用 BMC 管理口。",
        {"cards_without_outputs": sum(c.count for c in headless)}, pitfall="mixing-server-consumer",
        sources=["hardware_rules §5 C11"],
    )]
