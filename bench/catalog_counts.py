"""Catalog counts at two revisions (issue 37's evidence): GPUs by tier, domestic and consumer; complete systems;
rental offers and providers; models; and how many entries carry a source and a date. Reads the TOML files as
committed (git show), so the counts do not depend on today's loader.

    .venv/bin/python bench/catalog_counts.py [BEFORE_REV] [AFTER_REV]
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections import Counter

DATA = "knowledge/data"


def _files(rev: str, folder: str) -> list[str]:
    out = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, f"{DATA}/{folder}"], capture_output=True,
                         text=True, check=True).stdout
    return [p for p in out.split() if p.endswith(".toml")]


def _rows(rev: str, path: str, table: str) -> list[dict]:
    shown = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True)
    return tomllib.loads(shown.stdout).get(table, []) if shown.returncode == 0 else []


def counts(rev: str) -> dict[str, int]:
    gpus = [g for p in _files(rev, "gpus") for g in _rows(rev, p, "gpu")]
    models = [m for p in _files(rev, "models") for m in _rows(rev, p, "model")]
    systems = _rows(rev, f"{DATA}/servers.toml", "system")
    offers = _rows(rev, f"{DATA}/rentals.toml", "offer")
    tiers = Counter(g.get("tier") for g in gpus)
    return {
        "GPUs": len(gpus), "  datacenter": tiers["datacenter"], "  workstation": tiers["workstation"],
        "  consumer": tiers["consumer"], "  domestic (China)": sum(bool(g.get("domestic")) for g in gpus),
        "  GPUs priced": sum("price" in g for g in gpus),
        "  GPUs sourced and dated": sum(bool(g.get("sources")) and "as_of" in g for g in gpus),
        "complete systems": len(systems), "  systems priced": sum("price" in s for s in systems),
        "  systems sourced and dated": sum(bool(s.get("sources")) and "as_of" in s for s in systems),
        "rental offers": len(offers), "  providers with offers": len({o["provider"] for o in offers}),
        "  offers in China (CNY)": sum(o.get("currency") == "CNY" for o in offers),
        "  offers sourced and dated": sum(bool(o.get("source")) and "as_of" in o for o in offers),
        "models": len(models),
        "  models sourced": sum(bool(m.get("sources") or m.get("source")) for m in models),
    }


def main(argv: list[str]) -> int:
    before, after = [*argv, "75ec867^", "HEAD"][:2] if len(argv) != 1 else [argv[0], "HEAD"]
    a, b = counts(before), counts(after)
    print(f"| count | {before} | {after} |")
    print("|---|---|---|")
    for key in b:
        print(f"| {key} | {a.get(key, 0)} | {b[key]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
