"""Load test: many concurrent chat sessions against the running web app, through ``gradio_client``,
with hostile traffic beside them.

    .venv/bin/python bench/load.py [--sessions 50] [--turns 10] [--idle-s 180] [--url URL] [--json OUT]

Starts the app (deterministic backend, **default settings**) on a free 127.0.0.1 port unless ``--url`` names
a running one (loopback only), then runs ``--sessions`` clients in parallel threads, each with its own Gradio
session, each holding a conversation of up to twenty turns whose profile is unique to it (its own context
length, concurrency and budget). Beside them, for as long as they talk:

* a config flood: rounds of ``--flood`` simultaneous ``GET /config`` requests (each 227 kB uncompressed);
* slow clients: ``--slow`` connections that send half a request and never finish it.

Then the server is left idle for ``--idle-s`` seconds. Checks:

* zero errors (every ``/chat`` call returns a reply; no client time-out); the flood requests answered are
  reported (while more than 512 connections wait for their headers, the longest-waiting are closed);
* isolation — after every turn the profile the server returns is the session's own (context,
  concurrency, budget), the sizing call uses its numbers, and its exported report names its own budget;
  for a sample of sessions the whole conversation must match, reply for reply, the same script run
  in-process on a fresh ``Advisor`` (the deterministic backend makes replies reproducible);
* bounded: at most ``--max-s`` seconds for the turns;
* memory (only for the app it starts): the server's RSS after the burst and the idle period is within 20 %
  of its RSS at the start — measured once a first burst of the same size has gone idle, since CPython keeps
  the pages of its busiest moment (a server settles ~30 % above a lightly used one after its first burst, and
  stays there: the figure shows it does not grow burst after burst). Idle conversations are parked by the
  server's own sweeper under memory pressure, as in production; nothing is configured for the benchmark.

Reports turns/s and p50/p95/max latency per turn as seen by the clients.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests", ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from speed import figure, pct, rss_mb, table  # noqa: E402 - bench/ is on the path only once ROOT is known

WARM_UP_SESSIONS = 4  # conversations that load what the server loads lazily
PARK_WAIT_S = 100  # idle conversations are parked after 60 s under memory pressure; the sweeper runs every 15 s
MODELS = ["Llama 3.1 8B", "Qwen2.5 7B", "Llama 3.1 70B", "Mistral 7B"]
GPUS = ["RTX 4090", "A100 80GB", "L40S", "H100 SXM"]


def script(i: int, turns: int) -> tuple[list[str], dict[str, Any]]:
    """Session ``i``'s conversation and the profile values only it uses."""
    mine = {"context_tokens": 2048 + 64 * i, "concurrency": i + 1, "budget": 10_000 + 500 * i}
    lines = [
        "I need GPUs for high-concurrency inference serving",
        f"{MODELS[i % len(MODELS)]}, {mine['context_tokens']} tokens of context, "
        f"{mine['concurrency']} concurrent users",
        f"budget ${mine['budget']}",
        "no CUDA requirement, nothing domestic, no existing hardware",
        f"on one {GPUS[i % len(GPUS)]}",
        "what about FP16?",
        "what about int4?",
        "what about two cards?",
        "why?",
        "export",
        "what about FP8?",
        "which GPU would you recommend instead?",
        "how much of that is KV cache?",
        "what about 4 cards?",
        "would that run in a workstation with a 1600W PSU?",
        "what about Q4?",
        "how fast would it generate?",
        "compare A100 80GB and H100 SXM",
        "why?",
        "export",
    ]
    return lines[:turns], mine


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.violations: list[str] = []
        self.transcripts: dict[int, list[str]] = {}


def check_turn(i: int, turn: int, text: str, out: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    """What in this reply is not session ``i``'s own."""
    problems: list[str] = []
    profile = json.loads(out["session"])["profile"]
    if turn >= 1:
        for key in ("context_tokens", "concurrency"):
            if profile.get(key) != mine[key]:
                problems.append(f"session {i} turn {turn}: {key} {profile.get(key)} != {mine[key]}")
    if turn >= 2 and (profile.get("budget") or {}).get("amount") != mine["budget"]:
        problems.append(f"session {i} turn {turn}: budget {profile.get('budget')} != {mine['budget']}")
    for call in out["tool_calls"]:
        result = call["result"]
        if (call["name"] == "size_inference" and isinstance(result, dict)
                and result.get("context", mine["context_tokens"]) != mine["context_tokens"]):
            problems.append(f"session {i} turn {turn}: sized context {call['result']['context']}")
    if text == "export" and f"{mine['budget']:,}" not in out["reply"] and str(mine["budget"]) not in out["reply"]:
        problems.append(f"session {i}: exported report does not name its own budget {mine['budget']}")
    return problems


def run_session(url: str, i: int, turns: int, stats: Stats, deadline: float) -> None:
    from gradio_client import Client

    lines, mine = script(i, turns)
    try:
        client = Client(url, verbose=False)
    except Exception as exc:
        with stats.lock:
            stats.errors.append(f"session {i}: cannot connect: {type(exc).__name__}: {exc}")
        return
    replies: list[str] = []
    for turn, text in enumerate(lines):
        if time.monotonic() > deadline:
            with stats.lock:
                stats.errors.append(f"session {i}: stopped at turn {turn}, time budget spent")
            return
        t = time.perf_counter()
        try:
            out = client.predict(text, "", api_name="/chat")
        except Exception as exc:
            with stats.lock:
                stats.errors.append(f"session {i} turn {turn}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        dt = (time.perf_counter() - t) * 1000
        problems = check_turn(i, turn, text, out, mine)
        replies.append(out["reply"])
        with stats.lock:
            stats.latencies.append(dt)
            stats.violations += problems
    with stats.lock:
        stats.transcripts[i] = replies


def replay_in_process(i: int, turns: int) -> list[str]:
    from advisor import Advisor

    adv = Advisor()
    session = adv.new_session()
    return [adv.reply(text, session).text for text in script(i, turns)[0]]


def run(url: str, sessions: int, turns: int, max_s: float, sample: int) -> list[dict[str, Any]]:
    stats = Stats()
    deadline = time.monotonic() + max_s
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=sessions) as pool:
        futures = [pool.submit(run_session, url, i, turns, stats, deadline) for i in range(sessions)]
        for f in futures:
            f.result()
    wall = time.perf_counter() - t0
    mismatched = []
    for i in sorted(stats.transcripts)[:: max(1, sessions // max(sample, 1))][:sample]:
        expected = replay_in_process(i, turns)
        got = stats.transcripts[i]
        if got != expected:
            first = next((n for n, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b), len(got))
            mismatched.append(f"session {i}: reply {first} differs from the same script run in-process")
    done = len(stats.latencies)
    planned = sessions * turns
    rows = [
        figure(f"load: errors ({sessions} sessions × {turns} turns)", len(stats.errors), "", 0,
               note="; ".join(stats.errors[:3])),
        figure("load: cross-session leaks (profile, numbers, replies)", len(stats.violations) + len(mismatched), "",
               0, note="; ".join((stats.violations + mismatched)[:3]) or f"{sample} transcripts replayed in-process"),
        figure("load: turns completed", done, f"of {planned}", planned, ">="),
        figure("load: throughput", done / wall if wall else None, "turns/s", note=f"wall {wall:.0f} s"),
        figure("load: latency per turn, p50", pct(stats.latencies, 0.5) if done else None, "ms",
               note="client-side, under full load"),
        figure("load: latency per turn, p95", pct(stats.latencies, 0.95) if done else None, "ms",
               note=f"max {max(stats.latencies):.0f} ms" if done else ""),
        figure("load: wall time", wall, "s", max_s, note="bounded"),
    ]
    if done:
        rows[4]["mean_ms"] = round(statistics.fmean(stats.latencies), 1)
    return rows


def memory_rows(pid: int, cold: float, start: float, idle_s: float) -> list[dict[str, Any]]:
    """RSS after the measured burst, then after ``idle_s`` seconds idle."""
    busy = rss_mb(pid)
    time.sleep(idle_s)  # the point of the measurement: what an idle server gives back
    idle = rss_mb(pid)
    return [
        figure("load: server RSS, cold", cold, "MB", note="before any turn"),
        figure("load: server RSS at the start", start, "MB",
               note=f"{PARK_WAIT_S} s after a first burst of the same size"),
        figure("load: server RSS after the turns", busy, "MB", note=f"+{busy - start:.0f} MB"),
        figure(f"load: server RSS after {idle_s:.0f} s idle", idle, "MB", start * 1.2,
               note="target: within 20 % of the start, default settings"),
    ]


def config_flood(port: int, width: int, stop: threading.Event, max_rounds: int = 40) -> dict[str, Any]:
    """Rounds of ``width`` simultaneous ``GET /config`` until ``stop``; counts answers and failures.

    The requests are raw sockets that read the answer's status line and discard the rest, so that the
    attacker, which shares this machine's two cores with the server, spends as little of them as it can."""
    import asyncio

    counts = {"requests": 0, "failed": 0}
    request = (b"GET /config HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n"
               b"Connection: close\r\n\r\n")

    why: collections.Counter[str] = collections.Counter()

    async def get() -> bool:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 60)
            writer.write(request)
            status = await asyncio.wait_for(reader.readline(), 60)
            while await asyncio.wait_for(reader.read(65536), 60):
                pass
            writer.close()
        except (OSError, TimeoutError) as exc:
            why[type(exc).__name__] += 1
            return False
        if not status.startswith(b"HTTP/1.1 200"):
            why[status.decode("latin-1").strip()[:40] or "no status line"] += 1
        return status.startswith(b"HTTP/1.1 200")

    async def rounds() -> None:
        for _ in range(max_rounds if width > 0 else 0):
            if stop.is_set():
                break
            ok = await asyncio.gather(*(get() for _ in range(width)))
            counts["requests"] += len(ok)
            counts["failed"] += ok.count(False)

    asyncio.run(rounds())
    counts["why"] = ", ".join(f"{n} {kind}" for kind, n in why.most_common(3))
    return counts


def slow_clients(port: int, count: int) -> list[Any]:
    """``count`` connections that send half a request line and headers, and never the rest."""
    import socket

    socks = []
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(sock)
        except OSError:
            break
    return socks


def closed_by_server(socks: list[Any]) -> int:
    closed = 0
    for sock in socks:
        sock.setblocking(False)
        try:
            closed += sock.recv(16) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        sock.close()
    return closed


def with_floods(url: str, port: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The chat burst with the config flood and the slow clients beside it."""
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as side:
        flood = side.submit(config_flood, port, args.flood, stop)
        slow = slow_clients(port, args.slow)
        rows = run(url, args.sessions, args.turns, args.max_s, args.sample)
        stop.set()
        counts = flood.result()
    closed = closed_by_server(slow)
    rows += [
        figure("load: config flood, requests answered", counts["requests"] - counts["failed"],
               f"of {counts['requests']}",
               note=f"GET /config in rounds of {args.flood}, during the turns"
                    + (f"; not answered: {counts['why']} (closed while more than 512 connections waited for their "
                       "headers: the guard, by design)" if counts["why"] else "")),
        figure("load: slow clients closed by the server", closed, f"of {len(slow)}", len(slow), ">=",
               note="half-sent requests, held open during the turns"),
    ]
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--turns", type=int, default=10, choices=range(1, 21), metavar="1..20")
    ap.add_argument("--idle-s", type=float, default=180.0, help="idle time before the last memory reading")
    ap.add_argument("--flood", type=int, default=200, help="simultaneous GET /config per round (0: none)")
    ap.add_argument("--slow", type=int, default=600, help="half-sent requests held open during the turns")
    ap.add_argument("--url", help="a running app on loopback (default: start one)")
    ap.add_argument("--json", help="write the rows to this JSON file")
    ap.add_argument("--max-s", type=float, default=900.0, help="stop after this many seconds")
    ap.add_argument("--sample", type=int, default=4, help="sessions replayed in-process for the transcript check")
    args = ap.parse_args(argv)
    if not 1 <= args.sessions <= 256:
        ap.error("--sessions must be 1–256")
    if args.url:
        parsed = urlparse(args.url)
        if (parsed.hostname or "") not in ("127.0.0.1", "localhost", "::1"):
            ap.error("the load test drives loopback only")
        rows = with_floods(args.url.rstrip("/") + "/", parsed.port or 80, args)
    else:
        from fakes.app_server import AppServer

        with AppServer(env={"ADVISOR_LLM": "none"}) as app:
            pid = app.pid or 0
            cold = rss_mb(pid)
            run(app.url, WARM_UP_SESSIONS, args.turns, args.max_s, 0)
            light = rss_mb(pid)
            # a first burst of the same size, left to the server's own sweeper: CPython keeps the pages of its
            # busiest moment, so what must come back is measured from where the server settles after one
            first = with_floods(app.url, app.port, args)
            time.sleep(PARK_WAIT_S)
            start = rss_mb(pid)
            rows = with_floods(app.url, app.port, args)
            rows.insert(2, figure("load: first burst, errors and leaks", first[0]["value"] + first[1]["value"], "",
                                  0, note=first[0]["note"] or first[1]["note"]))
            rows.insert(3, figure("load: first burst, p95 latency per turn", first[5]["value"], "ms"))
            rows.append(figure(f"load: server RSS after {WARM_UP_SESSIONS} conversations", light, "MB",
                               note="catalog, index and encoders loaded"))
            rows += memory_rows(pid, cold, start, args.idle_s)
            if "Traceback" in app.output():
                rows.append(figure("load: tracebacks in the server log", 1, "", 0, note=app.output()[-300:]))
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0 if all(r["passed"] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
