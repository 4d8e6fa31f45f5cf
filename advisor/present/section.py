"""The section model every presenter returns, its text and Markdown renderers, and shared helpers."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from advisor.fmt import gb, gb_short, needed_bytes, num, unit_value, usable_bytes
from knowledge import load_catalog
from knowledge.messages import has, msg, render
from tools.result import Note, Term


class Figure(BaseModel):
    """One labelled figure: 'weights  15.0 GB  14.0 GiB'."""

    label: str
    value: str
    detail: str = ""


class Table(BaseModel):
    header: list[str]
    rows: list[list[str]]
    right: list[int] = Field(default_factory=list, description="columns aligned right (numbers)")

    def markdown(self) -> str:
        align = "|" + "".join("---:|" if i in self.right else "---|" for i in range(len(self.header)))
        return "\n".join([_md_row(self.header), align, *(_md_row(r) for r in self.rows)])


class Item(BaseModel):
    """An entry of a list: a finding, an option, a rejection; ``details`` are indented under it."""

    text: str
    details: list[str] = Field(default_factory=list)


class ItemList(BaseModel):
    title: str = ""
    items: list[Item]
    more: str = Field("", description="a closing line such as '… 12 more (see --json)'")
    bullet: str = Field("", description="text-output marker before each item ('- ')")

    def markdown(self) -> str:
        out = [f"**{self.title}**", ""] if self.title else []
        for item in self.items:
            out.append(f"- {item.text}")
            out += [f"  - {d}" for d in item.details]
        if self.more:
            out.append(f"- {self.more}")
        return "\n".join(out)


class TermLine(BaseModel):
    label: str
    value: str
    formula: str = ""
    meaning: str = ""


class Section(BaseModel):
    """What one result says, in one language, ready to render."""

    lang: str
    title: str
    verdict: str = ""
    figures: list[Figure] = Field(default_factory=list)
    figure_head: list[str] = Field(default_factory=list, description="column heads above the figures")
    detail_right: bool = Field(False, description="align the figures' details right (a second number column)")
    lines: list[str] = Field(default_factory=list, description="short lines after the figures")
    table: Table | None = None
    lists: list[ItemList] = Field(default_factory=list)
    terms: list[TermLine] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="assumptions, rendered")
    warnings: list[str] = Field(default_factory=list, description="warnings, rendered")

    # ------------------------------------------------------------------ renderers
    def facts(self) -> list[str]:
        """The headline lines — verdict, figures, table rows, short lines — for an LLM to phrase."""
        unit = self.figure_head[1].split()[0] if len(self.figure_head) > 1 else ""  # 'GB (1e9 B)' → 'GB'
        out = [self.verdict] if self.verdict else []
        out += [f"{f.label}: {f.value}{' ' + unit if unit else ''}" for f in self.figures]
        if self.table:
            out += [" · ".join(cell for cell in row if cell) for row in self.table.rows]
        return out + self.lines

    def text(self) -> str:
        """Plain aligned text for a terminal."""
        out = [self.title]
        if self.verdict:
            out.append(self.verdict)
        out.append("")
        if self.figures:
            rows = [[f.label, f.value, f.detail] for f in self.figures]
            head = [self.figure_head] if self.figure_head else []
            out += ["  " + line for line in _align(head + rows, right={1, 2} if self.detail_right else {1})]
        out += ["  " + line for line in self.lines]
        if self.table:
            if self.figures or self.lines:
                out.append("")
            out += ["  " + line for line in _align([self.table.header, *self.table.rows], right=set(self.table.right))]
        for lst in self.lists:
            out.append("")
            if lst.title:
                out.append(lst.title)
            for item in lst.items:
                out.append(f"  {lst.bullet}{item.text}")
                out += [f"      {d}" for d in item.details]
            if lst.more:
                out.append(f"  {lst.more}")
        if self.terms:
            out += ["", msg(self.lang, "present.heading.terms")]
            for t in self.terms:
                out.append(f"  - {t.label} = {t.value}" + (f": {t.formula}" if t.formula else ""))
                if t.meaning:
                    out.append(f"      {t.meaning}")
        if self.notes:
            out += ["", msg(self.lang, "present.heading.assumptions")] + [f"  - {n}" for n in self.notes]
        if self.warnings:
            out += ["", msg(self.lang, "present.heading.warnings")] + [f"  ! {w}" for w in self.warnings]
        return "\n".join(_trim_blank(out))

    def markdown(self, heading: str | None = None, level: int = 2) -> str:
        """Markdown for the exported report and the web panel; ``heading`` replaces the title as the heading
        (the title then follows in italics); ``level`` 0: no heading, the title in italics."""
        # level 0: no heading of its own (the page already names the section), the title in italics
        out = [f"*{_md_cell(self.title)}*"] if level == 0 else [f"{'#' * level} {heading or self.title}"]
        if heading and level:
            out += ["", f"*{_md_cell(self.title)}*"]
        if self.verdict:
            out += ["", f"**{self.verdict}**"]
        if self.figures and self.figure_head:  # a column head: the figures are a table
            out += ["", _md_row(self.figure_head), "|---|" + "---:|" * (len(self.figure_head) - 1)]
            out += [_md_row([f.label, f.value, f.detail][:len(self.figure_head)]) for f in self.figures]
        elif self.figures:
            out += [""] + [f"- {f.label}: **{f.value}**" + (f" ({f.detail})" if f.detail else "")
                           for f in self.figures]
        if self.lines:
            out += [""] + [f"- {line}" for line in self.lines]
        if self.table:
            out += ["", self.table.markdown()]
        for lst in self.lists:
            out += ["", lst.markdown()]
        if self.terms:
            out += ["", _md_row([msg(self.lang, f"present.col.{c}") for c in ("term", "value", "formula", "meaning")]),
                    "|---|---|---|---|"]
            out += [f"| {_md_cell(t.label)} | {_md_cell(t.value)} | `{_md_cell(t.formula)}` | {_md_cell(t.meaning)} |"
                    for t in self.terms]
        if self.notes:
            out += ["", f"**{msg(self.lang, 'present.heading.assumptions').rstrip(':：')}**", ""]
            out += [f"- {n}" for n in self.notes]
        if self.warnings:
            out += ["", f"**{msg(self.lang, 'present.heading.warnings').rstrip(':：')}**", ""]
            out += [f"- {w}" for w in self.warnings]
        return "\n".join(out)


# ---------------------------------------------------------------------- shared helpers
def fit_status(result: Any, lang: str) -> str:
    """'✅ fits · headroom 3.1 GB' / '⚠️ runs with CPU offload: …' / '❌ does not fit · short by 3.0 GB' of a sizing
    result (typed or as JSON), from the same need and usable figures :func:`fit_line` quotes."""
    get = result.get if isinstance(result, dict) else (lambda k: getattr(result, k, None))
    need, usable = needed_bytes(result), usable_bytes(result)
    if get("fits"):
        spare = usable - need if usable is not None and need is not None else get("headroom_bytes")
        return msg(lang, "present.fit.fits", headroom=gb_short(spare))
    if get("offload_layers"):
        on_gpu, off = int(get("gpu_layers") or 0), int(get("offload_layers") or 0)
        return msg(lang, "present.fit.offload", gpu_layers=num(on_gpu), layers=num(on_gpu + off),
                   cpu=gb_short(get("cpu_bytes")))
    if usable is None or need is None or need <= usable:
        return msg(lang, "present.fit.no")
    return msg(lang, "present.fit.short", short=gb_short(need - usable))


def fit_line(result: Any, lang: str, card: str = "") -> str:
    """'RTX 4090: needs 26.3 GB per GPU, 23.2 GB usable → ❌ does not fit · short by 3.0 GB'; the need alone
    when no GPU was given; ``card`` names a card known only by its memory ('24 GB card')."""
    get = result.get if isinstance(result, dict) else (lambda k: getattr(result, k, None))
    need, usable = needed_bytes(result), usable_bytes(result)
    key = "present.fit.need_all_layers" if get("all_layers_bytes") else "present.fit.need"
    if usable is None or get("fits") is None:
        return msg(lang, key, need=gb(need))
    return msg(lang, "present.fit.line", gpu=get("gpu") or card or msg(lang, "present.inference.given_memory"),
               need=msg(lang, key, need=gb(need)), usable=gb(usable), status=fit_status(result, lang))


def gpu_name(gid: object) -> str:
    """A catalog GPU's display name ('h100-sxm' → 'H100 SXM'); the id itself when unknown, '?' when empty."""
    if not gid:
        return "?"
    try:
        return load_catalog().gpu(str(gid)).name
    except LookupError:
        return str(gid)


def model_name(mid: object, params_b: float | None = None) -> str:
    """A catalog model's display name; '70B' for a model known only by its size; '?' when neither."""
    if mid:
        try:
            return load_catalog().model(str(mid)).name
        except LookupError:
            return str(mid)
    return f"{num(params_b)}B" if params_b else "?"


def said_model(shown: str, model: str | None, model_said: str | None) -> str:
    """The model a reply names: the name the user gave a model the catalog lacks (sized through a stand-in of its
    size), else the result's ``shown`` name."""
    return model_said if model_said and not model else shown


def word(lang: str, group: str, value: object) -> str:
    """A raw value ('consumer', 'memory', 'tensor') as a word of ``lang``; the value itself when unlabelled."""
    key = f"present.{group}.{value}"
    return msg(lang, key) if has("en", key) else str(value)


def term_label(name: str, lang: str) -> str:
    """A result term's label: ``term.<name>`` where the catalogs have it, else ``present.term.<slug>``."""
    if has("en", f"term.{name}"):
        return msg(lang, f"term.{name}")
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return msg(lang, f"present.term.{slug}") if has("en", f"present.term.{slug}") else name


def terms(items: Iterable[Term], lang: str) -> list[TermLine]:
    return [TermLine(label=term_label(t.name, lang), value=unit_value(t.value, t.unit, lang),
                     formula=render(t.formula, lang), meaning=render(t.explain, lang)) for t in items]


def notes(items: Iterable[Note | str], lang: str) -> list[str]:
    """Notes rendered in ``lang``, each once, in order."""
    return list(dict.fromkeys(render(n, lang) for n in items))


def combine(title: str, sections: Sequence[Section], verdict: str = "") -> Section:
    """Several results shown as one (decode, prefill and serving of one configuration): figures, lines,
    tables and lists in order, terms in order, notes and warnings once each."""
    lang = sections[0].lang if sections else "en"
    out = Section(lang=lang, title=title, verdict=verdict)
    for s in sections:
        out.figures += s.figures
        out.lines += s.lines
        out.lists += s.lists
        out.terms += s.terms
        if s.table is not None and out.table is None:
            out.table = s.table
        elif s.table is not None:
            out.lists.append(ItemList(items=[Item(text=" · ".join(r)) for r in s.table.rows]))
    out.notes = list(dict.fromkeys(n for s in sections for n in s.notes))
    out.warnings = list(dict.fromkeys(w for s in sections for w in s.warnings))
    return out


def width(text: str) -> int:
    """Columns ``text`` takes in a terminal (CJK characters count two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _align(rows: list[list[str]], right: set[int]) -> list[str]:
    n = max(len(r) for r in rows)
    widths = [max((width(r[i]) for r in rows if i < len(r)), default=0) for i in range(n)]
    lines = []
    for r in rows:
        cells = []
        for i, cell in enumerate(r):
            pad = " " * (widths[i] - width(cell))
            cells.append(pad + cell if i in right else cell + pad)
        lines.append("  ".join(cells).rstrip())
    return lines


def _trim_blank(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return out


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(_md_cell(c) for c in cells) + " |"
