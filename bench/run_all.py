"""Run every benchmark, print one table (figure · measured · target · pass/fail), write bench/results.json.

    .venv/bin/python bench/run_all.py [--only speed,load,retrieval,accuracy] [--quick] [--strict]

Each benchmark runs in its own process (so one's imports and caches do not flatter another):

* ``bench/speed.py`` — chat turn latency, CLI cold start, web UI start and memory, tool call rates, the
  llama.cpp backend's overhead;
* ``bench/load.py`` — 50 concurrent sessions × 10 turns through ``gradio_client`` beside a /config flood and
  half-sent requests (errors, isolation, turns/s, latency), then 3 minutes idle (the server's memory comes back);
* ``bench/retrieval.py`` — retrieval quality on the labelled set, its latency, build and reopen time (against targets);
* ``bench/accuracy.py`` — the calculators against published measurements (figures reported).

``--quick`` is a smoke run (fewer repetitions; the load test uses 16 × 5 turns and 90 s idle). ``--strict`` exits 1
when any figure misses its target (default: always 0, the table says what failed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
RESULTS = BENCH / "results.json"
sys.path.insert(0, str(BENCH))

from speed import figure, table  # noqa: E402 - bench/ put on the path just above

TIMEOUT_S = {"speed": 1500, "load": 1200, "retrieval": 1500, "accuracy": 600}


def _run(args: list[str], timeout: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False",
           "ANONYMIZED_TELEMETRY": "False"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=env)


def _failed(name: str, proc: subprocess.CompletedProcess[str] | None, why: str = "") -> list[dict[str, Any]]:
    tail = (proc.stderr or proc.stdout or "")[-300:].replace("\n", " ") if proc else ""
    return [figure(f"{name} benchmark", None, "", note=f"did not run: {why or f'exit {proc.returncode}'} {tail}")]


def speed(quick: bool) -> tuple[list[dict[str, Any]], Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "speed.json"
        proc = _run([str(BENCH / "speed.py"), "--json", str(out), "--profile", *(["--quick"] if quick else [])],
                    TIMEOUT_S["speed"])
        if not out.exists():
            return _failed("speed", proc), None
        rows = json.loads(out.read_text(encoding="utf-8"))
        return rows, {"stdout": proc.stdout}


def load(quick: bool) -> tuple[list[dict[str, Any]], Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "load.json"
        size = ["--sessions", "16", "--turns", "5", "--idle-s", "90"] if quick else []  # default: 50 × 10
        proc = _run([str(BENCH / "load.py"), "--json", str(out), *size], TIMEOUT_S["load"])
        if not out.exists():
            return _failed("load", proc), None
        return json.loads(out.read_text(encoding="utf-8")), None


def retrieval(quick: bool) -> tuple[list[dict[str, Any]], Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "retrieval.json"
        proc = _run([str(BENCH / "retrieval.py"), "--json", str(out), "--repeat", "1" if quick else "3"],
                    TIMEOUT_S["retrieval"])
        if not out.exists():
            return _failed("retrieval", proc), None
        data = json.loads(out.read_text(encoding="utf-8"))
    fused = data.get("quality", {}).get("fused", {}).get("all", {})
    lat = data.get("latency", {})
    build = data.get("build", {})
    reopen = data.get("reopen", {})

    def val(d: dict[str, Any], *keys: str) -> float | None:
        for k in keys:
            if isinstance(d.get(k), int | float):
                return float(d[k])
        return None

    rows = [
        figure("retrieval: recall@3 (fused, labelled set)", val(fused, "r@3", "recall@3", "R@3", "r3"), "", 0.9, ">=",
               note=f"n = {fused.get('n', '?')}; MRR@10 {val(fused, 'mrr@10', 'mrr', 'MRR@10') or float('nan'):.3f}"),
        figure("retrieval: warm query latency, median", val(lat, "median_ms"), "ms", 20,
               note=f"p95 {val(lat, 'p95_ms') or float('nan'):.1f} ms"),
        figure("retrieval: index build, fresh process", val(build, "open_s"), "s", 30),
        figure("retrieval: reopen, new process to first answer", val(reopen, "total_s"), "s", 2,
               note="median of three; totals " + ", ".join(f"{t:.2f}" for t in reopen.get("runs_total_s", []))),
    ]
    return rows, data


def accuracy(quick: bool) -> tuple[list[dict[str, Any]], Any]:
    proc = _run([str(BENCH / "accuracy.py"), "--json"], TIMEOUT_S["accuracy"])
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return _failed("accuracy", proc), None
    independent = [abs(r["error"]) * 100 for r in data if not str(r.get("note", "")).startswith(("fit", "derived"))]
    rows = [
        figure("accuracy: median |error| vs published measurements", statistics.median(independent)
               if independent else None, "%", note=f"{len(independent)} independent comparisons of {len(data)}"),
        figure("accuracy: worst |error|", max(independent) if independent else None, "%"),
    ]
    held = [abs(r["error"]) * 100 for r in data
            if str(r.get("note", "")).startswith("held out") and str(r.get("category", "")).startswith("decode")
            and "vLLM" not in str(r.get("category", ""))]
    if held:
        rows += [figure("accuracy: held-out llama.cpp decode, median |error|", statistics.median(held), "%",
                        target=10, note=f"{len(held)} published figures"),
                 figure("accuracy: held-out llama.cpp decode, worst |error|", max(held), "%", target=30)]
    return rows, data


BENCHES = {"speed": speed, "load": load, "retrieval": retrieval, "accuracy": accuracy}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help=f"comma-separated subset of: {', '.join(BENCHES)}")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a figure misses its target")
    ap.add_argument("--out", default=str(RESULTS), help="where to write the JSON results")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",")] if args.only else list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(unknown)}")

    rows: list[dict[str, Any]] = []
    raw: dict[str, Any] = {}
    started = time.perf_counter()
    for name in names:
        t = time.perf_counter()
        sys.stderr.write(f"[run_all] {name} …\n")
        try:
            got, detail = BENCHES[name](args.quick)
        except subprocess.TimeoutExpired:
            got, detail = _failed(name, None, f"timed out after {TIMEOUT_S[name]} s"), None
        for r in got:
            r.setdefault("bench", name)
        rows += got
        raw[name] = detail
        sys.stderr.write(f"[run_all] {name} done in {time.perf_counter() - t:.0f} s\n")

    print(table(rows))
    failed = [r for r in rows if r["passed"] is False]
    print(f"\n{sum(r['passed'] is True for r in rows)} pass, {len(failed)} fail, "
          f"{sum(r['passed'] is None for r in rows)} reported without a target; "
          f"{time.perf_counter() - started:.0f} s in all")
    for r in rows:
        if r.get("profile") and r["passed"] is False:
            print(f"\nwhere the time goes — {r['name']}:\n{r['profile']}")
    result = {
        "generated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "quick": args.quick,
        "rows": rows,
        "details": {k: v for k, v in raw.items() if k in ("retrieval",) and v is not None},
    }
    Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    out = Path(args.out)
    print(f"\nresults written to {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
