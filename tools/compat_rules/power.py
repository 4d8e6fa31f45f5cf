"""Power rules: PSU size and headroom, vendor minimums, transients, wall circuit, connectors."""

from __future__ import annotations

import math
import re

from tools.compat_rules.totals import PSU_HEADROOM, vendor_min_psu_w
from tools.compat_rules.types import BuildContext, Finding, Severity, finding, joined
from tools.result import note

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
    formula = note("compat.power.formula", gpu_w=t.gpu_power_w, cpu_w=t.cpu_power_w,
                   platform_w=t.platform_overhead_w, headroom=PSU_HEADROOM,
                   total_w=t.system_power_w * PSU_HEADROOM)
    high_voltage = ctx.mains is not None and ctx.mains.volts >= 200
    single_max = SINGLE_ATX_PSU_MAX_W_230V if high_voltage else SINGLE_ATX_PSU_MAX_W
    big = t.recommended_psu_w > single_max and ctx.inp.chassis != "rack"
    multi = note("compat.fix.power.two_psus") if big else ""
    psu = ctx.inp.psu_w
    if psu is None:
        out.append(finding(
            "power-psu-headroom", "power", "info",
            note("compat.power.no_psu", required_w=t.recommended_psu_w, formula=formula),
            note("compat.fix.power.no_psu", required_w=t.recommended_psu_w, multi=multi),
            nums, sources=["S-LOCALLLMGEAR"],
        ))
    else:
        nums = {"psu_w": psu, **nums}
        if psu < t.system_power_w:
            out.append(finding(
                "power-psu-headroom", "power", "error",
                note("compat.power.psu_below_load", psu_w=psu, load_w=t.system_power_w,
                     required_w=t.recommended_psu_w, formula=formula),
                note("compat.fix.power.psu_below_load", required_w=t.recommended_psu_w, multi=multi),
                nums, sources=["S-LOCALLLMGEAR"],
            ))
        elif psu < t.system_power_w * PSU_HEADROOM:
            headroom = (psu / t.system_power_w - 1) * 100
            out.append(finding(
                "power-psu-headroom", "power", "warning",
                note("compat.power.psu_headroom", psu_w=psu, load_w=t.system_power_w, headroom_pct=headroom,
                     required_w=t.recommended_psu_w),
                note("compat.fix.power.psu_headroom", required_w=t.recommended_psu_w),
                {**nums, "headroom_pct": headroom}, sources=["S-LOCALLLMGEAR"],
            ))
        for card in ctx.cards:
            vmin = vendor_min_psu_w(card.gpu.id)
            if vmin is not None and psu < vmin:
                out.append(finding(
                    "power-vendor-minimum", "power", "error",
                    note("compat.power.vendor_minimum", gpu=card.gpu.name, vendor_min_w=vmin, psu_w=psu),
                    note("compat.fix.power.vendor_minimum", required_w=max(vmin, t.recommended_psu_w)),
                    {"psu_w": psu, "vendor_min_psu_w": vmin}, sources=["S-MICROCENTER-4090", "S-TPU"],
                ))
        if t.transient_peak_w is not None and psu < t.transient_peak_w:
            out.append(finding(
                "power-transient-spikes", "power", "warning",
                note("compat.power.transient_spikes", peak_w=t.transient_peak_w, psu_w=psu),
                note("compat.fix.power.transient_spikes"),
                {"psu_w": psu, "transient_peak_w": t.transient_peak_w}, sources=["S-CLANKERBUILDER"],
            ))
    if big:
        out.append(finding(
            "power-multi-psu", "power", "warning",
            note("compat.power.multi_psu_high_voltage", required_w=t.recommended_psu_w) if high_voltage else
            note("compat.power.multi_psu", required_w=t.recommended_psu_w, single_max_w=SINGLE_ATX_PSU_MAX_W),
            note("compat.fix.power.multi_psu"),
            {"required_w": t.recommended_psu_w, "single_psu_max_w": single_max},
            sources=["S-WOPR-POWER", "S-LAMBDA-30XX"],
        ))
    out += _wall(ctx)
    out += _machine_cap(ctx)
    out += _connectors(ctx)
    return out


def _machine_cap(ctx: BuildContext) -> list[Finding]:
    """The draw at the wall against a per-machine cap the user states ('每台服务器限 3000W')."""
    t, cap = ctx.totals, ctx.inp.max_wall_w
    assert t is not None
    if cap is None or t.wall_draw_w <= cap:
        return []
    per_gpu = t.gpu_power_w / max(1, sum(g.count for g in ctx.inp.gpus))
    limited = max(0.0, per_gpu - (t.wall_draw_w - cap) * ctx.inp.psu_efficiency
                  / max(1, sum(g.count for g in ctx.inp.gpus)))
    return [finding(
        "power-machine-cap", "power", "error",
        note("compat.power.machine_cap", wall_w=t.wall_draw_w, cap_w=cap),
        note("compat.fix.power.machine_cap", limit_w=limited),
        {"wall_draw_w": t.wall_draw_w, "max_wall_w": cap, "gpu_limit_w": limited},
    )]


def _wall(ctx: BuildContext) -> list[Finding]:
    t = ctx.totals
    assert t is not None
    eff = ctx.inp.psu_efficiency
    nums: dict[str, float | int | str | bool | None] = {
        "system_power_w": t.system_power_w, "psu_efficiency": eff, "wall_draw_w": t.wall_draw_w,
    }
    fix = note("compat.fix.power.wall_circuit")
    if ctx.mains is None and ctx.inp.chassis == "rack":
        if t.wall_draw_w > 1440:
            return [finding(
                "power-wall-circuit", "power", "info",
                note("compat.power.wall_rack", wall_w=t.wall_draw_w),
                note("compat.fix.power.wall_rack"),
                nums, sources=["S-OCC-CIRCUIT"],
            )]
        return []
    if ctx.mains is None:
        if t.wall_draw_w > 1440:
            return [finding(
                "power-wall-circuit", "power", "warning",
                note("compat.power.wall_unknown_outlet", wall_w=t.wall_draw_w, load_w=t.system_power_w,
                     efficiency=eff),
                note("compat.fix.power.wall_unknown_outlet", circuit=fix),
                nums, sources=["S-OCC-CIRCUIT", "S-REEF-80PCT"],
            )]
        return []
    m = ctx.mains
    if ctx.inp.machines > 1 or ctx.inp.circuits > 1:
        return _machines_on_circuits(ctx, nums)
    limit = max(0.0, m.continuous_limit_w - ctx.inp.other_load_w)  # what the circuit has left (none if overloaded)
    nums = {**nums, "mains_v": m.volts, "mains_a": m.amps, "circuit_peak_w": m.peak_w,
            "continuous_limit_w": limit}
    if t.wall_draw_w > limit:
        return [finding(
            "power-wall-circuit", "power", "error",
            note("compat.power.wall_over_shared", wall_w=t.wall_draw_w, limit_w=limit, circuit=m.label,
                 other_w=ctx.inp.other_load_w) if ctx.inp.other_load_w else
            note("compat.power.wall_over_limit", wall_w=t.wall_draw_w, load_w=t.system_power_w, efficiency=eff,
                 limit_w=limit, circuit=m.label, peak_w=m.peak_w),
            note("compat.fix.power.wall_circuit_high_voltage", amps=m.amps,
                 need_a=t.wall_draw_w / (m.peak_w / m.amps) / 0.8)  # per phase on a three-phase feed
            if m.volts >= 200 else fix, nums, sources=["S-OCC-CIRCUIT", "S-REEF-80PCT", "S-PUGET-4x3090"],
        )]
    if t.wall_draw_w > 0.9 * limit:
        return [finding(
            "power-wall-circuit", "power", "warning",
            note("compat.power.wall_near_limit", wall_w=t.wall_draw_w, limit_w=limit, circuit=m.label),
            note("compat.fix.power.wall_near_limit"),
            nums, sources=["S-OCC-CIRCUIT", "S-PUGET-4x3090"],
        )]
    psu = ctx.inp.psu_w
    if psu is not None and psu / eff > limit:
        return [finding(
            "power-wall-circuit", "power", "info",
            note("compat.power.wall_psu_rating", circuit=m.label, wall_w=t.wall_draw_w, limit_w=limit, psu_w=psu,
                 psu_wall_w=psu / eff),
            note("compat.fix.power.wall_psu_rating"),
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
            note("compat.power.connector_12v_2x6", count=hp),
            note("compat.fix.power.connector_12v_2x6", count=hp),
            {"connectors_12v_2x6": hp}, sources=["S-SEASONIC-35MM", "S-MICROCENTER-4090"],
        ))
    if eps_cards:
        sev: Severity = "info" if ctx.inp.chassis == "rack" else "warning"
        n = totals.get("eps-8pin", 0)
        out.append(finding(
            "power-connector-eps", "power", sev,
            note("compat.power.connector_eps", cards=joined(eps_cards), count=n),
            note("compat.fix.power.connector_eps"),
            {"connectors_eps_8pin": n}, sources=["S-SPECSJSON"],
        ))
    return out


def _machines_on_circuits(ctx: BuildContext, nums: dict[str, float | int | str | bool | None]) -> list[Finding]:
    """Several machines on several circuits of one kind ('30 workstations on 2× 32 A'): all of them at the wall
    against all the circuits' continuous limit, and how many such circuits they need."""
    t, m, inp = ctx.totals, ctx.mains, ctx.inp
    assert t is not None and m is not None
    total = t.wall_draw_w * inp.machines
    limit = max(0.0, m.continuous_limit_w * inp.circuits - inp.other_load_w)
    need = math.ceil((total + inp.other_load_w) / m.continuous_limit_w)
    nums = {**nums, "machines": inp.machines, "circuits": inp.circuits, "machines_wall_w": total,
            "continuous_limit_w": limit, "circuits_needed": need}
    args: dict[str, str | int | float] = dict(machines=inp.machines, each_w=t.wall_draw_w, wall_w=total,
                                              circuits=inp.circuits, circuit=m.label, limit_w=limit, need=need)
    if total > limit:
        return [finding("power-wall-circuit", "power", "error", note("compat.power.machines_over", **args),
                        note("compat.fix.power.machines_over", need=need, circuit=m.label,
                             at_once=max(0, math.floor(limit / t.wall_draw_w))),
                        nums, sources=["S-OCC-CIRCUIT", "S-REEF-80PCT"])]
    if total > 0.9 * limit:
        return [finding("power-wall-circuit", "power", "warning", note("compat.power.machines_near", **args),
                        note("compat.fix.power.wall_near_limit"), nums, sources=["S-OCC-CIRCUIT"])]
    return []
