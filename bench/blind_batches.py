"""The blind conversation batches in ``bench/blind``: each batch's untuned first look (the grade its writer gave
on the commit named in its ``meta.toml``), per language.

    .venv/bin/python bench/blind_batches.py

Prints one row per batch and language: turns, mean answered-first, numbers right, recommendation fit, language
and follow-ups (0–3, "na" left out), and the turns answered for the wrong setup, with a number taken from a
product name, or (batches from t on) with a claim the grader knew to be false. Targets on a batch written after
the code (``written_after_code = true``): answered-first ≥ 2.5, recommendation fit ≥ 2.3, follow-ups ≥ 2.3, no
wrong setup, no number from a product name.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from statistics import mean
from typing import Any

ROOT = Path(__file__).resolve().parent / "blind"
CRITERIA = ("answered_first", "numbers_right", "rec_fit", "language", "followups")
TARGETS = {"answered_first": 2.5, "rec_fit": 2.3, "followups": 2.3}


def _mean(rows: list[dict[str, Any]], key: str) -> str:
    values = [float(r[key]) for r in rows if isinstance(r.get(key), int | float) and not isinstance(r[key], bool)]
    return f"{mean(values):.2f}" if values else "—"


def batch_rows(folder: Path) -> list[list[str]]:
    """One table row per language and one for both, from a batch folder's grades and meta."""
    meta = tomllib.loads((folder / "meta.toml").read_text(encoding="utf-8"))
    grades = [json.loads(line) for line in (folder / "grades.jsonl").read_text(encoding="utf-8").splitlines()
              if line.strip()]
    rows = []
    for lang in ("zh", "en", "all"):
        part = [g for g in grades if lang == "all" or g.get("lang") == lang]
        rows.append([folder.name, str(meta.get("first_graded_on", "?")),
                     "after" if meta.get("written_after_code") else "before", lang, str(len(part)),
                     *(_mean(part, c) for c in CRITERIA),
                     str(sum(bool(g.get("wrong_setup")) for g in part)),
                     str(sum(bool(g.get("product_name_number")) for g in part)),
                     str(sum(bool(g.get("false_claim")) for g in part)) if any("false_claim" in g for g in part)
                     else "—"])
    return rows


def main() -> int:
    header = ["batch", "graded on", "written", "lang", "turns", *CRITERIA, "wrong setup", "name number",
              "false claim"]
    batches = sorted((p for p in ROOT.iterdir() if (p / "grades.jsonl").exists()),
                     key=lambda p: (len(p.name), p.name))  # batch-z before batch-aa
    rows = [row for folder in batches
            for row in batch_rows(folder)]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    print("Untuned first look of each blind batch (0–3; targets on a batch written after the code: "
          + ", ".join(f"{k} ≥ {v}" for k, v in TARGETS.items()) + ")")
    for row in [header, *rows]:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
