"""Build check (``check``): the verdict, power and lane totals, each finding with its fix (no rule ids)."""

from __future__ import annotations

from advisor.fmt import num
from advisor.present.section import Item, ItemList, Section, notes
from knowledge.messages import msg, render
from tools.compat import BuildReport, Finding

_MARK = {"error": "❌", "warning": "⚠️", "info": "ℹ️"}


def finding_item(f: Finding, lang: str, marks: bool = False) -> Item:
    """'[ERROR] message' (``marks``: '❌ message', for chat) with '→ fix' under it."""
    head = _MARK[f.severity] if marks else f"[{msg(lang, f'present.severity.{f.severity}')}]"
    return Item(text=f"{head} {render(f.message, lang)}", details=[f"→ {render(f.fix, lang)}"] if f.fix else [])


def present_check(report: BuildReport, lang: str, formulas: bool = False) -> Section:
    t = report.totals
    n_err = len(report.errors)
    verdict = msg(lang, "present.check.ok") if report.ok else msg(lang, "present.check.errors", count=n_err)
    circuit = msg(lang, "present.check.circuit", limit=num(t.continuous_limit_w)) if t.continuous_limit_w else ""
    lanes = f"{t.lanes_needed}/{t.lanes_available if t.lanes_available is not None else '?'}"
    lines = [
        msg(lang, "present.check.power", gpu=num(t.gpu_power_w), cpu=num(t.cpu_power_w),
            platform=num(t.platform_overhead_w), system=num(t.system_power_w), psu=num(t.recommended_psu_w),
            wall=num(t.wall_draw_w), circuit=circuit),
        msg(lang, "present.check.lanes", lanes=lanes, widths="/".join(f"x{x}" for x in t.link_widths) or "—",
            vram=num(t.total_vram_label_gb), ram=num(t.recommended_system_ram_gb), cores=t.cpu_cores_needed),
    ]
    s = Section(lang=lang, title=msg(lang, "present.check.title", count=t.gpu_count), verdict=verdict, lines=lines,
                notes=notes(report.assumptions, lang))
    if report.findings:
        s.lists.append(ItemList(items=[finding_item(f, lang) for f in report.findings]))
    if formulas and report.formula:
        s.lists.append(ItemList(title=msg(lang, "present.check.formulas"),
                                items=[Item(text=render(x, lang)) for x in report.formula]))
    return s
