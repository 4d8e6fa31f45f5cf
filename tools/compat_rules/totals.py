"""Whole-build totals: power, PCIe lanes and link widths, slot positions, memory rules of thumb.

Formulas (hardware_rules.md §5 B/C/F):
* system power = Σ GPU board power + CPU package power + 150 W platform;
* recommended PSU = max(system × 1.25, the GPU vendor's minimum system PSU);
* wall draw = system power / PSU efficiency; continuous circuit limit = 0.8 × V × A;
* lanes needed = Σ GPU lanes + 4 per NVMe drive; link width = power of two ≤ slot lanes / GPUs;
* slot positions = Σ ceil(slot width); a tower offers 8 (7 on an ATX board + 1 overhang);
* system RAM ≥ 2 × total VRAM (Puget), minimum = largest card's VRAM (Dettmers), both on the vendors'
  "GB" labels (a 48 GB card counts 48);
* CPU cores ≥ max(16, 4 × GPUs) (Puget).
"""

from __future__ import annotations

import math
from functools import cache

from knowledge import UnknownNameError, load_catalog
from knowledge.schema import FormFactor
from tools.compat_rules.types import BuildContext, Card, Totals
from tools.result import Note, note

PLATFORM_OVERHEAD_W = 150.0
# An 8-GPU baseboard node (HGX / OAM) draws far more than its GPUs and CPUs: NVSwitches, one NIC per GPU, fans
# and drives. Fitted to the vendors' maximum system power at the wall, the figure racks are provisioned for:
# DGX H100 10.2 kW (8 × 700 W GPUs, 2 × 350 W CPUs) gives 0.70 of the GPU power on top; DGX A100 6.5 kW
# (8 × 400 W, 2 × 225 W) gives 0.89. Their mean, 0.79, with each system left out of the fit in turn: H100
# predicted from A100's 0.89 → 11.3 kW (+11 %), A100 from H100's 0.70 → 5.9 kW (−10 %). (NVIDIA DGX H100 and
# DGX A100 datasheets, "maximum system power usage".)
BASEBOARD_OVERHEAD = 0.79
PSU_HEADROOM = 1.25
TOWER_SLOT_POSITIONS = 8
DEFAULT_DESKTOP_CPU_W = 250.0  # Core i9 PL2 253 W / Ryzen 9 PPT 230 W
DEFAULT_SERVER_CPU_W = 700.0  # two server sockets at ~350 W
NVME_LANES = 4

# NVIDIA/AMD "minimum system power" for a single card (vendor spec pages; hardware_rules.md §3.5).
_VENDOR_MIN_PSU_BY_NAME: dict[str, float] = {
    "RTX 4090": 850, "RTX 4090 D": 850, "RTX 5090": 1000, "RTX 5080": 850, "RTX 3090": 750,
    "RX 7900 XTX": 800,
}
# Millisecond power excursions measured by reviewers (low confidence; hardware_rules.md §3.5).
_TRANSIENT_W_BY_NAME: dict[str, float] = {"RTX 4090": 600, "RTX 4090 D": 600, "RTX 5090": 900}


@cache
def _by_id(table: tuple[tuple[str, float], ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    catalog = load_catalog()
    for name, value in table:
        try:
            out[catalog.gpu(name).id] = value
        except (UnknownNameError, LookupError):
            continue
    return out


def vendor_min_psu_w(gpu_id: str) -> float | None:
    """The vendor's minimum system PSU for one card of this GPU, if published."""
    return _by_id(tuple(_VENDOR_MIN_PSU_BY_NAME.items())).get(gpu_id)


def transient_w(gpu_id: str) -> float | None:
    """Measured millisecond power excursion of one card, if known."""
    return _by_id(tuple(_TRANSIENT_W_BY_NAME.items())).get(gpu_id)


def pow2_floor(x: float) -> int:
    return 1 << math.floor(math.log2(x)) if x >= 1 else 0


def is_board_module(card: Card) -> bool:
    """SXM / OAM / vendor modules sit on a baseboard, not in a PCIe slot."""
    return card.gpu.form_factor != FormFactor.pcie


def card_lanes(card: Card) -> int:
    return card.gpu.pcie_lanes or 16


def slot_positions(card: Card) -> int:
    return math.ceil(card.gpu.slot_width or 2)


def allocate_widths(ctx: BuildContext) -> tuple[list[int], int]:
    """PCIe width of each slot-mounted GPU and how many hang off the chipset (x4, shared uplink)."""
    pcie_cards = [c for c in ctx.cards if not is_board_module(c) for _ in range(c.count)]
    n = len(pcie_cards)
    if n == 0:
        return [], 0
    plat = ctx.platform
    if plat is None:
        return [card_lanes(c) for c in pcie_cards], 0
    per = min(16, pow2_floor(plat.gpu_slot_lanes / n))
    widths: list[int] = []
    chipset = 0
    if plat.segment == "desktop" and n > 2:
        # Desktop boards wire at most two CPU x16-class slots (x8/x8); the rest go through the chipset.
        for i, c in enumerate(pcie_cards):
            if i < 2:
                widths.append(min(card_lanes(c), 8))
            else:
                widths.append(min(card_lanes(c), 4))
                chipset += 1
        return widths, chipset
    cpu_slots = n if per >= 4 else plat.gpu_slot_lanes // 4
    for i, c in enumerate(pcie_cards):
        if i < cpu_slots:
            widths.append(min(card_lanes(c), max(per, 4)))
        else:
            widths.append(min(card_lanes(c), 4))
            chipset += 1
    return widths, chipset


def compute_totals(ctx: BuildContext) -> Totals:
    """Fill ctx.totals and return it (assumptions are recorded on ctx)."""
    cards = ctx.cards
    gpu_power = sum(c.power_w * c.count for c in cards)
    plat = ctx.platform
    if plat is not None:
        cpu_power = plat.typical_cpu_power_w * plat.sockets
    elif ctx.inp.chassis == "rack" or any(is_board_module(c) for c in cards):
        cpu_power = DEFAULT_SERVER_CPU_W
        ctx.assume(note("compat.assume.cpu_server", cpu_w=DEFAULT_SERVER_CPU_W))
    else:
        cpu_power = DEFAULT_DESKTOP_CPU_W
        ctx.assume(note("compat.assume.cpu_desktop", cpu_w=DEFAULT_DESKTOP_CPU_W))
    system = gpu_power + cpu_power + PLATFORM_OVERHEAD_W
    board_power = sum(c.power_w * c.count for c in cards if is_board_module(c))
    if board_power:  # a baseboard node's wall draw is the vendors' maximum: GPUs × (1 + overhead) + CPUs
        system = max(system, ((gpu_power + BASEBOARD_OVERHEAD * board_power) + cpu_power) * ctx.inp.psu_efficiency)
    vendor_min = max((vendor_min_psu_w(c.gpu.id) or 0) for c in cards)
    recommended = max(system * PSU_HEADROOM, vendor_min)

    spikes = [transient_w(c.gpu.id) for c in cards]
    transient = None
    if any(s is not None for s in spikes):
        transient = cpu_power + PLATFORM_OVERHEAD_W + sum(
            (s * c.power_w / c.gpu.tdp_w if s is not None else c.power_w) * c.count
            for s, c in zip(spikes, cards, strict=True)
        )

    widths, chipset = allocate_widths(ctx)
    pcie_cards = [c for c in cards if not is_board_module(c)]
    nvme = ctx.inp.nvme_drives or 0
    lanes_needed = sum(card_lanes(c) * c.count for c in pcie_cards) + NVME_LANES * nvme

    slots_needed = sum(slot_positions(c) * c.count for c in pcie_cards) if pcie_cards else None
    slots_available = None
    if pcie_cards and ctx.inp.slots is None and ctx.inp.chassis in (None, "tower"):
        slots_available = TOWER_SLOT_POSITIONS

    total_vram = sum(c.gpu.memory_bytes * c.count for c in cards)
    label_total = sum(c.gpu.memory_gb * c.count for c in cards)  # the vendors' "GB" labels
    largest = max(c.gpu.memory_bytes for c in cards)
    n = ctx.gpu_count
    totals = Totals(
        gpu_count=n,
        gpu_power_w=gpu_power,
        cpu_power_w=cpu_power,
        platform_overhead_w=round(system - gpu_power - cpu_power, 1),
        system_power_w=round(system, 1),
        recommended_psu_w=round(recommended, 1),
        transient_peak_w=round(transient, 1) if transient is not None else None,
        wall_draw_w=round(system / ctx.inp.psu_efficiency, 1),
        continuous_limit_w=max(0.0, ctx.mains.continuous_limit_w * ctx.inp.circuits - ctx.inp.other_load_w)
        if ctx.mains else None,
        machines=ctx.inp.machines,
        machines_wall_w=round(system / ctx.inp.psu_efficiency * ctx.inp.machines, 1),
        lanes_needed=lanes_needed,
        lanes_available=plat.cpu_pcie_lanes if plat else None,
        gpu_slot_lanes=plat.gpu_slot_lanes if plat else None,
        link_widths=widths,
        chipset_attached=chipset,
        slots_needed=slots_needed,
        slots_available=slots_available,
        total_vram_bytes=total_vram,
        largest_vram_bytes=largest,
        per_gpu_bytes=ctx.per_gpu_bytes,
        total_vram_label_gb=label_total,
        recommended_system_ram_gb=round(2 * label_total, 1),
        min_system_ram_gb=max(c.gpu.memory_gb for c in cards),
        cpu_cores_needed=max(16, 4 * n),
    )
    if all(c.gpu.form_factor == FormFactor.system for c in cards):  # a complete box: its rating covers it all
        box = float(gpu_power)
        totals = totals.model_copy(update=dict(
            cpu_power_w=0.0, platform_overhead_w=0.0, system_power_w=box, recommended_psu_w=box,
            transient_peak_w=None, wall_draw_w=box, recommended_system_ram_gb=0.0, min_system_ram_gb=0.0,
            cpu_cores_needed=0))
    ctx.totals = totals
    return totals


# How the totals are computed, shown with a build report (BuildReport.formula).
FORMULAS: list[Note] = [
    note("compat.formula.system_power", overhead_w=PLATFORM_OVERHEAD_W),
    note("compat.formula.psu", headroom=PSU_HEADROOM),
    note("compat.formula.wall"),
    note("compat.formula.lanes", nvme_lanes=NVME_LANES),
    note("compat.formula.slots", tower_slots=TOWER_SLOT_POSITIONS),
    note("compat.formula.ram"),
    note("compat.formula.cores"),
]
