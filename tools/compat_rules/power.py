"""Power rules: PSU size and headroom, vendor minimums, transients, wall circuit, connectors."""

from __future__ import annotations

import re

from tools.compat_rules.totals import PSU_HEADROOM, vendor_min_psu_w
from tools.compat_rules.types import BuildContext, Finding, Severity, finding, w

SINGLE_ATX_PSU_MAX_W = 1600  # largest common ATX PSU on 115 V mains
SINGLE_ATX_PSU_MAX_W_230V = 2000  # 2,000 W-class ATX units (e.g. Super Flower Leadex 2000 W) run on 200–240 V only

_COUNT_RE = re.compile(r"^\s*(\d+)\s*[x×]\s*", re.IGNORECASE)


def connector_kind(text: str) -> str:
    """'12v-2x6', 'eps-8pin', 'pcie-8pin', 'pcie-6pin' or 'other' for one catalog connector string."""
    t = text.lower()
    if "12v-2x6" in t or "12vhpwr" in t or "16-pin" in t or "16pin" in t:
        return "12v-2x6"
    if "eps" in t or "cpu" in t:
        return "eps-8pin"
    if "8-pin" in t or "8pin" in t:
        return "pcie-8pin"
    if "6-pin" in t or "6pin" in t:
        return "pcie-6pin"
    return "other"


def connector_counts(connectors: list[str]) -> dict[str, int]:
    """Count connectors by kind; '2x 8-pin PCIe' counts two."""
    out: dict[str, int] = {}
    for text in connectors:
        m = _COUNT_RE.match(text)
        n = int(m.group(1)) if m else 1
        kind = connector_kind(text)
        out[kind] = out.get(kind, 0) + n
    return out


def check_power(ctx: BuildContext) -> list[Finding]:
    t = ctx.totals
    assert t is not None
    out: list[Finding] = []
    nums = {
        "gpu_power_w": t.gpu_power_w, "cpu_power_w": t.cpu_power_w,
        "platform_overhead_w": t.platform_overhead_w,
        "system_power_w": t.system_power_w, "required_w": t.recommended_psu_w,
    }
    formula_en = (f"({w(t.gpu_power_w)} GPUs + {w(t.cpu_power_w)} CPU + {w(t.platform_overhead_w)} platform)"
                  f" × {PSU_HEADROOM} = {w(t.system_power_w * PSU_HEADROOM)}")
    formula_zh = (f"(显卡 {w(t.gpu_power_w)} + CPU {w(t.cpu_power_w)} + 平台 {w(t.platform_overhead_w)})"
                  f" × {PSU_HEADROOM} = {w(t.system_power_w * PSU_HEADROOM)}")
    high_voltage = ctx.mains is not None and ctx.mains.volts >= 200
    single_max = SINGLE_ATX_PSU_MAX_W_230V if high_voltage else SINGLE_ATX_PSU_MAX_W
    big = t.recommended_psu_w > single_max and ctx.inp.chassis != "rack"
    multi_fix = ", which means two PSUs or a server chassis" if big else ""
    multi_fix_zh = "，即双电源或服务器机箱" if big else ""
    psu = ctx.inp.psu_w
    if psu is None:
        out.append(finding(
            "power-psu-headroom", "power", "info",
            f"No PSU given. Size it at ≥ {w(t.recommended_psu_w)}: {formula_en}.",
            f"未指定电源。建议电源 ≥ {w(t.recommended_psu_w)}：{formula_zh}。",
            f"Choose a PSU of at least {w(t.recommended_psu_w)}{multi_fix}.",
            f"选择至少 {w(t.recommended_psu_w)} 的电源{multi_fix_zh}。",
            nums, sources=["S-LOCALLLMGEAR"],
        ))
    else:
        nums = {"psu_w": psu, **nums}
        if psu < t.system_power_w:
            out.append(finding(
                "power-psu-headroom", "power", "error",
                f"The {w(psu)} PSU is below the sustained load of {w(t.system_power_w)} — it will shut down "
                f"under load. With 25 % headroom the build needs {w(t.recommended_psu_w)} ({formula_en}).",
                f"{w(psu)} 电源低于持续负载 {w(t.system_power_w)}，满载时会断电保护。按 25 % 余量需要 "
                f"{w(t.recommended_psu_w)}（{formula_zh}）。",
                f"Use ≥ {w(t.recommended_psu_w)} of PSU capacity{multi_fix}, or fewer / power-limited GPUs.",
                f"使用 ≥ {w(t.recommended_psu_w)} 的电源容量{multi_fix_zh}，或减少显卡数量、限制显卡功耗。",
                nums, sources=["S-LOCALLLMGEAR"],
            ))
        elif psu < t.system_power_w * PSU_HEADROOM:
            headroom = (psu / t.system_power_w - 1) * 100
            out.append(finding(
                "power-psu-headroom", "power", "warning",
                f"The {w(psu)} PSU covers the {w(t.system_power_w)} load with only {headroom:.0f} % headroom;"
                f" the rule of thumb is 25 % ({w(t.recommended_psu_w)}) for transients and ageing.",
                f"{w(psu)} 电源只比 {w(t.system_power_w)} 的负载高 {headroom:.0f}%；经验规则要求 25 % 余量"
                f"（{w(t.recommended_psu_w)}），以应对瞬时峰值和老化。",
                f"Move to a {w(t.recommended_psu_w)} PSU, or cap the GPUs (nvidia-smi -pl) a few percent.",
                f"换用 {w(t.recommended_psu_w)} 电源，或用 nvidia-smi -pl 小幅限制显卡功耗。",
                {**nums, "headroom_pct": headroom}, sources=["S-LOCALLLMGEAR"],
            ))
        for card in ctx.cards:
            vmin = vendor_min_psu_w(card.gpu.id)
            if vmin is not None and psu < vmin:
                out.append(finding(
                    "power-vendor-minimum", "power", "error",
                    f"{card.gpu.name}: the vendor asks for at least a {w(vmin)} PSU for one card; "
                    f"this build has {w(psu)}.",
                    f"{card.gpu.name}：厂商要求单卡系统电源至少 {w(vmin)}，当前只有 {w(psu)}。",
                    f"Use a PSU of ≥ {w(max(vmin, t.recommended_psu_w))} (ATX 3.1 with a native 12V-2x6 "
                    "cable).",
                    f"使用 ≥ {w(max(vmin, t.recommended_psu_w))} 的电源（ATX 3.1，原生 12V-2x6 线）。",
                    {"psu_w": psu, "vendor_min_psu_w": vmin}, sources=["S-MICROCENTER-4090", "S-TPU"],
                ))
        if t.transient_peak_w is not None and psu < t.transient_peak_w:
            out.append(finding(
                "power-transient-spikes", "power", "warning",
                f"Millisecond power spikes of these cards can take the system to ~{w(t.transient_peak_w)}, "
                f"above the {w(psu)} PSU rating; older (pre-ATX 3.0) PSUs may trip over-current protection.",
                f"这些显卡的毫秒级瞬时功耗可使整机达到约 {w(t.transient_peak_w)}，超过 {w(psu)} 电源额定值；"
                f"ATX 3.0 之前的电源可能触发过流保护而重启。",
                "Use an ATX 3.x PSU (rated for 200 % excursions) with margin, or power-limit the GPUs.",
                "使用 ATX 3.x 电源（可承受 200 % 瞬时峰值）并留足余量，或限制显卡功耗。",
                {"psu_w": psu, "transient_peak_w": t.transient_peak_w}, sources=["S-CLANKERBUILDER"],
            ))
    if big:
        out.append(finding(
            "power-multi-psu", "power", "warning",
            f"The build needs ~{w(t.recommended_psu_w)} of PSU capacity, more than one ATX PSU delivers "
            + ("(2,000 W-class units on 200–240 V mains)." if high_voltage else
               f"(common units top out at {w(SINGLE_ATX_PSU_MAX_W)}; 2,000 W-class ones need 200–240 V mains)."),
            f"整机需要约 {w(t.recommended_psu_w)} 的电源容量，超过单个 ATX 电源的能力"
            + ("（220–240 V 下最大约 2,000 W 级）。" if high_voltage else
               f"（常见型号最大 {w(SINGLE_ATX_PSU_MAX_W)}，2,000 W 级需要 220–240 V 供电）。"),
            "Use two PSUs (one per group of GPUs, synchronised power-on, common ground) ideally on separate "
            "circuits, or a server chassis with redundant 2 kW+ supplies; or power-limit the GPUs.",
            "使用双电源（每组显卡一个，同步开机、共地），最好接在不同回路上；或选用带 2 kW 以上冗余电源的服务"
            "器机箱；或限制显卡功耗。",
            {"required_w": t.recommended_psu_w, "single_psu_max_w": single_max},
            sources=["S-WOPR-POWER", "S-LAMBDA-30XX"],
        ))
    out += _wall(ctx)
    out += _connectors(ctx)
    return out


def _wall(ctx: BuildContext) -> list[Finding]:
    t = ctx.totals
    assert t is not None
    eff = ctx.inp.psu_efficiency
    nums: dict[str, float | int | str | bool | None] = {
        "system_power_w": t.system_power_w, "psu_efficiency": eff, "wall_draw_w": t.wall_draw_w,
    }
    fix = ("Put the machine on a 240 V / 230 V circuit, split it across two circuits (two PSUs), "
           "use a dedicated 20 A circuit, or power-limit the GPUs.")
    fix_zh = "改用 220–240 V 电路、分接两路电路（双电源）、使用专用 20 A 回路，或限制显卡功耗。"
    if ctx.mains is None and ctx.inp.chassis == "rack":
        if t.wall_draw_w > 1440:
            return [finding(
                "power-wall-circuit", "power", "info",
                f"The server draws ~{w(t.wall_draw_w)} at the wall: plan rack PDUs / 208–415 V circuits for "
                "it (typically two redundant feeds).",
                f"该服务器墙端功耗约 {w(t.wall_draw_w)}：请为其规划机柜 PDU / 208–415 V 供电（通常为双路冗"
                "余）。",
                "Check the rack's power budget per cabinet with the datacenter.",
                "与机房确认每个机柜的供电预算。",
                nums, sources=["S-OCC-CIRCUIT"],
            )]
        return []
    if ctx.mains is None:
        if t.wall_draw_w > 1440:
            return [finding(
                "power-wall-circuit", "power", "warning",
                f"At the wall this build draws ~{w(t.wall_draw_w)} ({w(t.system_power_w)} / {eff:g}); a "
                "120 V / 15 A outlet allows 1,440 W continuous, 120 V / 20 A 1,920 W, 220 V / 10 A ~1,760 W.",
                f"整机墙插功耗约 {w(t.wall_draw_w)}（{w(t.system_power_w)} / {eff:g}）；120 V/15 A 插座持续"
                "上限 1,440 W，120 V/20 A 为 1,920 W，220 V/10 A 约 1,760 W。",
                "Check the outlet's volts and amps (e.g. 120 V 15 A) before buying. " + fix,
                "购买前确认插座的电压和电流（如 220 V 10 A）。" + fix_zh,
                nums, sources=["S-OCC-CIRCUIT", "S-REEF-80PCT"],
            )]
        return []
    m = ctx.mains
    limit = m.continuous_limit_w
    nums = {**nums, "mains_v": m.volts, "mains_a": m.amps, "circuit_peak_w": m.peak_w,
            "continuous_limit_w": limit}
    if t.wall_draw_w > limit:
        return [finding(
            "power-wall-circuit", "power", "error",
            f"At the wall the build draws ~{w(t.wall_draw_w)} ({w(t.system_power_w)} / {eff:g} PSU "
            f"efficiency), over the {w(limit)} continuous limit of a {m.label} circuit (80 % of "
            f"{w(m.peak_w)}); the breaker will trip under sustained load.",
            f"整机墙插功耗约 {w(t.wall_draw_w)}（{w(t.system_power_w)} / 电源效率 {eff:g}），超过 {m.label} "
            f"回路 {w(limit)} 的持续负载上限（{w(m.peak_w)} 的 80 %），长时间满载会跳闸。",
            fix, fix_zh, nums, sources=["S-OCC-CIRCUIT", "S-REEF-80PCT", "S-PUGET-4x3090"],
        )]
    if t.wall_draw_w > 0.9 * limit:
        return [finding(
            "power-wall-circuit", "power", "warning",
            f"~{w(t.wall_draw_w)} at the wall is within 10 % of the {w(limit)} continuous limit of a "
            f"{m.label} circuit — anything else on that circuit (monitor, heater) will trip it.",
            f"墙插功耗约 {w(t.wall_draw_w)}，距离 {m.label} 回路 {w(limit)} 的持续上限不足 10 %，同一回路上"
            "再接其他电器（显示器、取暖器）就会跳闸。",
            "Give the machine a dedicated circuit, or power-limit the GPUs by 10–20 %.",
            "为机器使用专用回路，或将显卡功耗限制 10–20 %。",
            nums, sources=["S-OCC-CIRCUIT", "S-PUGET-4x3090"],
        )]
    psu = ctx.inp.psu_w
    if psu is not None and psu / eff > limit:
        return [finding(
            "power-wall-circuit", "power", "info",
            f"The estimated load fits the {m.label} circuit ({w(t.wall_draw_w)} of {w(limit)}), but the "
            f"{w(psu)} PSU could pull {w(psu / eff)} at full rating — more than the circuit carries "
            "continuously.",
            f"估算负载在 {m.label} 回路之内（{w(t.wall_draw_w)} / {w(limit)}），但 {w(psu)} 电源满额时可从墙"
            f"插取电 {w(psu / eff)}，超过该回路的持续上限。",
            "Keep GPU power limits in place so the load never reaches the PSU rating.",
            "保持显卡功耗限制，确保负载不会达到电源额定值。",
            {**nums, "psu_w": psu}, sources=["S-OCC-CIRCUIT"],
        )]
    return []


def _connectors(ctx: BuildContext) -> list[Finding]:
    totals: dict[str, int] = {}
    eps_cards: list[str] = []
    for card in ctx.cards:
        counts = connector_counts(card.gpu.power_connectors)
        for kind, n in counts.items():
            totals[kind] = totals.get(kind, 0) + n * card.count
        if counts.get("eps-8pin"):
            eps_cards.append(card.gpu.name)
    out: list[Finding] = []
    hp = totals.get("12v-2x6", 0)
    if hp:
        out.append(finding(
            "power-connector-12v-2x6", "power", "info",
            f"The GPUs need {hp} × 12V-2x6 (12VHPWR) connector(s), each carrying up to 600 W.",
            f"显卡共需要 {hp} 个 12V-2x6（12VHPWR）接口，每个最高 600 W。",
            f"Pick a PSU with {hp} native 12V-2x6 cable(s) (ATX 3.1); seat each plug fully and keep ≥ 35 mm "
            "of straight cable before any bend; avoid adapters and daisy chains.",
            f"选择带 {hp} 根原生 12V-2x6 线的电源（ATX 3.1）；插头插到底，弯折前保留 ≥ 35 mm 直线段；避免转接"
            "和串联。",
            {"connectors_12v_2x6": hp}, sources=["S-SEASONIC-35MM", "S-MICROCENTER-4090"],
        ))
    if eps_cards:
        sev: Severity = "info" if ctx.inp.chassis == "rack" else "warning"
        n = totals.get("eps-8pin", 0)
        out.append(finding(
            "power-connector-eps", "power", sev,
            f"{', '.join(eps_cards)} take {n} × 8-pin EPS (CPU-style) power input(s), not PCIe 8-pin; "
            "desktop PSUs rarely have spare EPS cables and a PCIe plug does not fit (or is wired "
            "differently).",
            f"{'、'.join(eps_cards)} 使用 {n} 个 8-pin EPS（CPU 式）供电接口，而非 PCIe 8-pin；台式机电源很少"
            "有多余的EPS 线，PCIe 插头无法插入（或针脚定义不同）。",
            "Use a server/workstation chassis with GPU EPS leads, or the vendor's dual-PCIe-to-EPS adapter.",
            "使用带 GPU EPS 供电线的服务器/工作站机箱，或厂商提供的双 PCIe 转 EPS 转接线。",
            {"connectors_eps_8pin": n}, sources=["S-SPECSJSON"],
        ))
    return out
