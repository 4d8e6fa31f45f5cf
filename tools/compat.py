"""Compatibility checker: will this build work?

``check_build(BuildInput) -> BuildReport`` resolves the GPUs and CPU platform from the catalog, sizes
the workload with the sizing engine when a model is given, computes the whole-build totals (power,
lanes, slots, RAM) and runs every rule category (power, pcie, physical, cooling, display,
interconnect, precision, software, memory, platform). Each finding has a stable id (shared with
``knowledge/data/rules.toml`` where a rule matches), a severity, a message, the numbers
behind it and a concrete fix (the message and fix are notes: message ids compat.* with parameters,
rendered in the reader's language). ``ok`` is True when no finding is an error.
"""

from __future__ import annotations

import re

from knowledge import UnknownNameError, load_catalog
from knowledge.schema import FormFactor
from tools.compat_rules import RULES, SYSTEM_RULES
from tools.compat_rules.memory import size_memory
from tools.compat_rules.precision import hardware_precision
from tools.compat_rules.software import resolve_framework
from tools.compat_rules.totals import FORMULAS, PLATFORM_OVERHEAD_W, compute_totals
from tools.compat_rules.types import (
    PITFALLS,
    SEVERITY_ORDER,
    BuildContext,
    BuildInput,
    BuildReport,
    Card,
    Finding,
    GPUCount,
    Mains,
    SlotLayout,
    Totals,
    parse_mains,
    pitfall_text,
)
from tools.errors import ToolError
from tools.result import note

__all__ = [
    "PITFALLS", "BuildInput", "BuildReport", "Finding", "GPUCount", "Mains", "SlotLayout", "Totals",
    "check_build", "parse_gpu_arg", "parse_mains", "pitfall_text",
]

CATEGORY_ORDER = ("power", "pcie", "physical", "cooling", "display", "interconnect", "precision", "software",
                  "memory", "platform")
_COUNT_SUFFIX = re.compile(r"^(?P<name>.+?)\s*[x×*]\s*(?P<n>\d{1,2})$", re.IGNORECASE)
_COUNT_PREFIX = re.compile(r"^(?P<n>\d{1,2})\s*[x×*]\s*(?P<name>.+)$", re.IGNORECASE)


def parse_gpu_arg(text: str, count: int | None = None) -> GPUCount:
    """'RTX 4090', '4090x2', '2x 4090', '4 × H100' → GPUCount. Names that are catalog entries win
    (so 'MLU370-X8' stays one card)."""
    name = text.strip()
    catalog = load_catalog()
    try:
        catalog.gpu(name)
        return GPUCount(gpu=name, count=count or 1)
    except UnknownNameError:
        pass
    for rx in (_COUNT_SUFFIX, _COUNT_PREFIX):
        m = rx.match(name)
        if m:
            try:
                catalog.gpu(m.group("name"))
            except UnknownNameError:
                continue
            n = int(m.group("n"))
            if count is not None and count != n:
                raise ToolError(f"{text!r} says {n} GPUs but --count says {count}")
            return GPUCount(gpu=m.group("name").strip(), count=n)
    catalog.gpu(name)  # raises UnknownNameError with suggestions
    return GPUCount(gpu=name, count=count or 1)


def _cards(inp: BuildInput) -> list[Card]:
    catalog = load_catalog()
    merged: dict[str, Card] = {}
    order: list[str] = []
    for item in inp.gpus:
        gpu = catalog.gpu(item.gpu)
        power = item.power_limit_w or gpu.tdp_w
        if item.power_limit_w and item.power_limit_w > gpu.tdp_w * 1.34:
            raise ToolError(f"power limit {item.power_limit_w:g} W is far above the {gpu.name}'s "
                            f"{gpu.tdp_w:g} W board power", suggestions=[f"use ≤ {gpu.tdp_w:g} W"])
        key = f"{gpu.id}@{power:g}"
        if key in merged:
            c = merged[key]
            merged[key] = Card(gpu=gpu, count=c.count + item.count, power_w=power)
        else:
            merged[key] = Card(gpu=gpu, count=item.count, power_w=power)
            order.append(key)
    return [merged[k] for k in order]


def build_context(inp: BuildInput) -> BuildContext:
    """Resolve names and normalise inputs; raises UnknownNameError / ToolError on bad input."""
    catalog = load_catalog()
    cards = _cards(inp)
    platform = catalog.platform(inp.platform) if inp.platform else None
    mains = parse_mains(inp.mains) if inp.mains else None
    precision = None
    if inp.precision:
        hardware_precision(inp.precision)  # validates, raising ToolError with suggestions
        precision = inp.precision
    framework = resolve_framework(inp.framework) if inp.framework else None
    ctx = BuildContext(inp=inp, cards=cards, platform=platform, mains=mains, precision_name=precision,
                       framework=framework)
    for card in cards:
        if card.power_w != card.gpu.tdp_w:
            ctx.assume(note("compat.assume.power_limited", gpu=card.gpu.name, limit_w=card.power_w,
                            tdp_w=card.gpu.tdp_w))
    ctx.assume(note("compat.assume.psu_efficiency", efficiency=inp.psu_efficiency, overhead_w=PLATFORM_OVERHEAD_W))
    if inp.chassis is None:
        ctx.assume(note("compat.assume.chassis_not_given"))
    if ctx.parallelism and inp.parallelism is None:
        # without an explicit choice the default is tensor (inference) or data (training) parallel
        ctx.assume(note(f"compat.assume.parallel_{ctx.parallelism}"))
    return ctx


def _sort_key(f: Finding) -> tuple[int, int]:
    return SEVERITY_ORDER[f.severity], CATEGORY_ORDER.index(f.category)


def _system_alone(name: str) -> Finding:
    """A unified-memory system is a whole computer: it takes no other GPU, and two of them are two machines."""
    return Finding(id="system-alone", category="platform", severity="error",
                   message=note("compat.platform.system_alone", gpu=name),
                   fix=note("compat.fix.platform.system_alone", gpu=name), numbers={})


def check_build(inp: BuildInput) -> BuildReport:
    """Run every compatibility rule on a planned build."""
    defaulted = bool(inp.model and inp.workload is None)
    if defaulted:
        inp = inp.model_copy(update={"workload": "inference"})
    ctx = build_context(inp)
    if defaulted:
        ctx.assume(note("compat.assume.workload_defaulted"))
    size_memory(ctx)
    totals = compute_totals(ctx)
    findings: list[Finding] = []
    systems = [c for c in ctx.cards if c.gpu.form_factor == FormFactor.system]
    for rule in (SYSTEM_RULES if systems else RULES):  # a complete box has no slots, lanes or PSU to check
        findings += rule(ctx)
    if systems and (len(ctx.cards) > 1 or ctx.gpu_count > 1):
        findings.append(_system_alone(systems[0].gpu.name))
    findings.sort(key=_sort_key)  # stable: rule order kept within a severity and category
    return BuildReport(
        ok=not any(f.severity == "error" for f in findings), findings=findings, totals=totals,
        assumptions=ctx.assumptions, formula=list(FORMULAS),
    )
