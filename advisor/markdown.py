"""The reply's Markdown made to render the same everywhere (web chat, exported report, terminals that render it)."""

from __future__ import annotations

import re

# '**改用 LoRA 就放得下：**2 张' stays literal in CommonMark: a closing '**' after punctuation must be followed by
# a space or punctuation. The mark goes outside the bold: '**改用 LoRA 就放得下**：2 张'.
_BOLD_PUNCT = re.compile(r"\*\*([^*\n]*?[^*\s])([：:，,；;])\*\*(?=[^\s*])")


def _is_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def tidy(text: str) -> str:
    """Blank lines around every table (a line right after a table would be read as one more row, squeezing
    the real columns) and no emphasis that a renderer would leave as raw asterisks."""
    lines = text.split("\n")
    out: list[str] = []
    fence = False
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
        row = not fence and _is_row(line)
        before = out[-1] if out else ""
        if row and out and before.strip() and not _is_row(before):
            out.append("")  # a table starts: apart from the sentence above it
        elif not row and not fence and out and _is_row(before) and line.strip():
            out.append("")  # a table ended: the next sentence is not a row
        out.append(line if fence else _BOLD_PUNCT.sub(r"**\1**\2", line))
    return "\n".join(out)
