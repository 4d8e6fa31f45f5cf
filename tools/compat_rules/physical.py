"""Physical, cooling and display rules: slots, length, SXM/OAM baseboards, airflow, video outputs."""

from __future__ import annotations

from knowledge.schema import Cooling, FormFactor, Tier
from tools.compat_rules.totals import TOWER_SLOT_POSITIONS, is_board_module, slot_positions
from tools.compat_rules.types import BuildContext, Card, Finding, Severity, finding, joined
from tools.result import note


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
                    note("compat.physical.gpu_length", gpu=card.gpu.name, length_mm=card.gpu.length_mm,
                         max_mm=lim),
                    note("compat.fix.physical.gpu_length"),
                    {"card_length_mm": card.gpu.length_mm, "case_max_gpu_length_mm": lim},
                    sources=["S-MAXMYBUILD"],
                ))
    return out


def _module(card: Card, chassis: str | None) -> list[Finding]:
    g = card.gpu
    form = g.form_factor.value if g.form_factor.value in ("sxm", "oam") else "other"
    kind = note(f"compat.physical.module_kind.{form}")
    board = note(f"compat.physical.module_board.{form}")
    nums = {"form_factor": g.form_factor.value, "count": card.count}
    if chassis in ("tower", "open-frame"):
        where = "tower" if chassis == "tower" else "open_frame"
        return [finding(
            "form-sxm-oam-baseboard", "physical", "error",
            note("compat.physical.module_in_case", gpu=g.name, kind=kind, board=board,
                 chassis=note(f"compat.physical.chassis.{where}")),
            note(f"compat.fix.physical.module_in_{where}"),
            nums, pitfall="mixing-server-consumer", sources=["hardware_rules §5 A1"],
        )]
    out = []
    sev: Severity = "info" if chassis == "rack" else "warning"
    out.append(finding(
        "form-sxm-oam-baseboard", "physical", sev,
        note("compat.physical.module", gpu=g.name, kind=kind, board=board),
        note("compat.fix.physical.module"),
        nums, sources=["hardware_rules §5 A1"],
    ))
    if card.count not in (4, 8):
        out.append(finding(
            "form-sxm-oam-count", "physical", "warning",
            note("compat.physical.module_count", count=card.count, gpu=g.name,
                 kind=note(f"compat.physical.module_word.{form}")),
            note("compat.fix.physical.module_count"),
            nums,
        ))
    return out


def _slots(ctx: BuildContext, pcie: list[Card]) -> list[Finding]:
    t = ctx.totals
    assert t is not None
    chassis = ctx.inp.chassis
    n = sum(c.count for c in pcie)
    widths = [slot_positions(c) for c in pcie for _ in range(c.count)]
    desc = joined([note("compat.physical.cards", count=c.count, gpu=c.gpu.name, slots=c.gpu.slot_width or 2)
                   for c in pcie], "clause")
    out: list[Finding] = []
    thick = any((c.gpu.slot_width or 2) > 2 for c in pcie)
    fix = note("compat.fix.physical.slots")
    layout = ctx.inp.slots
    if layout is not None:
        placed = _place(layout.count, layout.spacing, widths)
        if placed < n and chassis != "open-frame":
            out.append(finding(
                "slots-width-count", "physical", "error",
                note("compat.physical.slots_layout", cards=desc, slots=layout.count, spacing=layout.spacing,
                     placed=placed, total=n),
                fix,
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
                note("compat.physical.slots_tower", cards=desc, needed=t.slots_needed),
                fix,
                {"slots_needed": t.slots_needed, "slots_available": TOWER_SLOT_POSITIONS, "cards": n},
                sources=["S-LAMBDA-30XX", "S-PUGET-ML-QUOTE", "S-DETTMERS"],
            ))
        elif t.slots_needed == TOWER_SLOT_POSITIONS and n > 1:
            out.append(finding(
                "slots-width-count", "physical", "info",
                note("compat.physical.slots_full", cards=desc, positions=TOWER_SLOT_POSITIONS),
                note("compat.fix.physical.slots_full"),
                {"slots_needed": t.slots_needed, "slots_available": TOWER_SLOT_POSITIONS},
            ))
    elif chassis == "rack" and thick and any(c.gpu.tier != Tier.datacenter for c in pcie):
        out.append(finding(
            "slots-width-count", "physical", "warning",
            note("compat.physical.slots_rack", cards=desc),
            note("compat.fix.physical.slots_rack"),
            {"cards": n}, pitfall="mixing-server-consumer",
        ))
    elif chassis == "open-frame" and n > 2:
        out.append(finding(
            "slots-risers", "physical", "info",
            note("compat.physical.risers", cards=n),
            note("compat.fix.physical.risers"),
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
                note("compat.cooling.passive_rack", gpu=card.gpu.name, tdp_w=card.gpu.tdp_w),
                note("compat.fix.cooling.passive_rack"),
                nums,
            ))
            continue
        sev: Severity = "error" if chassis == "tower" else "warning"
        where = {"tower": "tower", "open-frame": "open_frame", None: "unknown"}[chassis]
        out.append(finding(
            "cooling-passive-in-tower", "cooling", sev,
            note("compat.cooling.passive", gpu=card.gpu.name, tdp_w=card.gpu.tdp_w,
                 where=note(f"compat.cooling.where.{where}")),
            note("compat.fix.cooling.passive"),
            nums, pitfall="mixing-server-consumer", sources=["S-SPECSJSON", "S-3DNEWS-300IDUO"],
        ))
    open_air = sum(c.count for c in ctx.cards if c.gpu.cooling == Cooling.open_air)
    if open_air > 2 and chassis in (None, "tower"):
        out.append(finding(
            "cooling-open-air-stacking", "cooling", "warning",
            note("compat.cooling.open_air_stacked", cards=open_air),
            note("compat.fix.cooling.open_air_stacked"),
            {"open_air_cards": open_air}, sources=["S-LAMBDA-30XX", "S-DETTMERS"],
        ))
    elif open_air == 2 and chassis in (None, "tower"):
        out.append(finding(
            "cooling-open-air-stacking", "cooling", "info",
            note("compat.cooling.open_air_two"),
            note("compat.fix.cooling.open_air_two"),
            {"open_air_cards": open_air},
        ))
    elif open_air and chassis == "rack":
        out.append(finding(
            "cooling-open-air-stacking", "cooling", "warning",
            note("compat.cooling.open_air_rack"),
            note("compat.fix.cooling.open_air_rack"),
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
            note("compat.display.no_outputs_other_card", gpus=names),
            note("compat.fix.display.no_outputs_other_card"),
            {"cards_without_outputs": sum(c.count for c in headless)},
        )]
    sev: Severity = "info" if ctx.inp.chassis == "rack" else "warning"
    return [finding(
        "display-no-outputs", "display", sev,
        note("compat.display.no_outputs", gpus=names),
        note("compat.fix.display.no_outputs"),
        {"cards_without_outputs": sum(c.count for c in headless)}, pitfall="mixing-server-consumer",
        sources=["hardware_rules §5 C11"],
    )]
