"""Fallback vulnerability audit for a lock file, from PyPI's project JSON (``/pypi/<name>/json``).

Used by ``.ci/audit.sh`` when pip-audit cannot look anything up, as on networks whose PyPI proxy
serves only the project pages and answers 404 for the release pages (``/pypi/<name>/<version>/json``)
that pip-audit reads. A project page carries the known vulnerabilities of the project's *newest*
release only, so a package is audited here exactly when the installed version is that release;
every other package is listed as not audited, with the newer version. Nothing is guessed.

    python .ci/audit_newest.py LOCK [--json OUT] [--index https://pypi.org/pypi]

Prints the findings and, on its last line, ``audit: OK``/``FINDINGS``/``PARTIAL``/``NOT RUN``; exits 0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

TIMEOUT_S = 15


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: str) -> list[tuple[str, str]]:
    pins = []
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==", 1)
            pins.append((name.split("[", 1)[0].strip(), version.split(";", 1)[0].strip()))
    return pins


def same_version(a: str, b: str) -> bool:
    try:
        from packaging.version import Version

        return Version(a) == Version(b)
    except Exception:
        return a == b


def look_up(index: str, name: str, version: str) -> dict[str, Any]:
    url = f"{index.rstrip('/')}/{canonical(name)}/json"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
            data = json.load(resp)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return {"name": name, "version": version, "status": "unreachable", "why": f"{type(exc).__name__}: {exc}"}
    newest = str(data.get("info", {}).get("version", ""))
    if not same_version(newest, version):
        return {"name": name, "version": version, "status": "older", "newest": newest}
    vulns = [v for v in data.get("vulnerabilities") or [] if not v.get("withdrawn")]
    return {"name": name, "version": version, "status": "audited", "vulns": vulns}


def unique_advisories(vulns: list[dict[str, Any]]) -> list[tuple[list[str], dict[str, Any]]]:
    """One entry per vulnerability: PyPI lists the same one under each of its ids (GHSA, PYSEC, CVE)."""
    groups: list[tuple[set[str], dict[str, Any]]] = []
    for v in vulns:
        ids = {v.get("id", "?"), *(v.get("aliases") or [])}
        for seen, _ in groups:
            if seen & ids:
                seen |= ids
                break
        else:
            groups.append((ids, v))
    return [(sorted(ids, key=lambda i: (not i.startswith("CVE"), i)), v) for ids, v in groups]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lock")
    ap.add_argument("--json", help="write the per-package results here")
    ap.add_argument("--index", default="https://pypi.org/pypi")
    args = ap.parse_args(argv)

    pins = read_lock(args.lock)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda p: look_up(args.index, *p), pins))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"source": f"{args.index}/<name>/json (newest release only)", "packages": results}, fh, indent=2)

    audited = [r for r in results if r["status"] == "audited"]
    older = [r for r in results if r["status"] == "older"]
    unreachable = [r for r in results if r["status"] == "unreachable"]
    for r in audited:
        r["advisories"] = unique_advisories(r["vulns"])
    vulnerable = [r for r in audited if r["advisories"]]
    if not audited:
        why = unreachable[0]["why"] if unreachable else "no package is at its newest release"
        print(f"audit: NOT RUN — the fallback could not audit any of {len(pins)} packages ({why})")
        return 0
    for r in vulnerable:
        for ids, v in r["advisories"]:
            fixes = ", ".join(v.get("fixed_in") or []) or "no fixed version yet"
            summary = " ".join(str(v.get("summary") or v.get("details") or "").split())[:160]
            print(f"  {r['name']} {r['version']}: {' / '.join(ids)} — fixed in {fixes}\n      {summary}")
    if older:
        listed = ", ".join(f"{r['name']} {r['version']} (newest {r['newest']})" for r in older[:12])
        more = f" and {len(older) - 12} more" if len(older) > 12 else ""
        print(f"  not audited — an older release is installed: {listed}{more}")
    if unreachable:
        print(f"  not audited — lookup failed: {', '.join(r['name'] for r in unreachable[:12])}")
    scope = f"{len(audited)} of {len(pins)} packages (those installed at their newest release)"
    if vulnerable:
        count = sum(len(r["advisories"]) for r in vulnerable)
        print(f"audit: FINDINGS — {count} known vulnerabilities in {len(vulnerable)} packages; audited {scope} "
              "against PyPI's vulnerability data")
        print(f"::warning::audit fallback: {count} known vulnerabilities", file=sys.stderr)
    elif older or unreachable:
        print(f"audit: PARTIAL — no known vulnerabilities in {scope}; {len(older) + len(unreachable)} not audited "
              "(listed above: PyPI's project pages describe only the newest release)")
    else:
        print(f"audit: OK — {len(audited)} packages audited against PyPI's vulnerability data, none vulnerable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
