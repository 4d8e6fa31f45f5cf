"""How well the advisor understands people, on the hand-labelled set in ``tests/data/understanding``.

    .venv/bin/python bench/understanding.py [--split dev|heldout|all] [--errors N]

Prints first the untuned first look of every blind batch in ``bench/blind`` (``bench/blind_batches.py``: the
grade a batch got from its blind writer on the commit it was written against), then, for the dev split and the
held-out split separately (never tune on the held-out one):
intent accuracy, slot precision / recall / F1 (micro, and per slot), the share of first turns that
contain an answer, the share of dialogue turns that answer and carry their key figures, and the median
reply length per language (Chinese characters / English words, before the sources list). Targets:
intent accuracy ≥ 0.95, slot F1 ≥ 0.95, answered-first ≥ 0.95.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "understanding"
sys.path.insert(0, str(ROOT))

import blind_batches  # noqa: E402 - bench/ is this script's own folder

from advisor.engine import Advisor, Reply  # noqa: E402 - the repository root is put on the path above
from advisor.nlu import Parsed, parse  # noqa: E402

TARGETS = {"intent accuracy": 0.95, "slot F1": 0.95, "answered first": 0.95}
ANSWERABLE = {"spec", "concept", "size_inference", "size_training", "speed", "build", "compare", "recommend",
              "rent_vs_buy"}
ANSWER_MODES = {"answer", "spec", "concept", "build", "rent", "compare", "why", "export", "afford", "value"}
NO_RESULT = ("还没有计算结果可以解释", "There is no result to explain")
SCALAR_SLOTS = ("use_case", "model", "params_b", "precision", "kv_dtype", "gpu_count", "context_tokens",
                "concurrency", "method", "sharding", "grad_checkpointing", "epochs", "dataset_tokens",
                "dataset_samples", "deadline_days", "fp64", "problem_size_gb", "cuda_required", "domestic",
                "form_factor", "power_limit_w", "psu_w", "cpu", "cpu_name", "nodes", "has_host", "budget_scope")
LIST_SLOTS = ("excluded_vendors", "allowed_gpus")
NUMERIC_TOLERANCE = {"params_b": 0.05, "context_tokens": 0.05, "dataset_tokens": 0.05, "dataset_samples": 0.05,
                     "deadline_days": 0.05, "problem_size_gb": 0.1, "power_limit_w": 0.01, "psu_w": 0.01}


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


# ----------------------------------------------------------------------------- slots


def predicted_slots(p: Parsed) -> dict[str, Any]:
    """The parser's reading in the labels' vocabulary."""
    out: dict[str, Any] = {s: getattr(p, s) for s in SCALAR_SLOTS if getattr(p, s, None) is not None}
    if p.model:
        out.pop("params_b", None)  # the labels give params_b only when no catalog model is named
    for s in LIST_SLOTS:
        if getattr(p, s):
            out[s] = list(getattr(p, s))
    if p.gpus:
        out["gpus"] = [{"gpu": g.gpu, "count": g.count} for g in p.gpus]
    if p.existing is not None:
        out["existing"] = [{"gpu": g.gpu, "count": g.count} for g in p.existing]
    if p.budget:
        out["budget"] = {"amount": p.budget.amount, "currency": p.budget.currency}
    if p.unknown_gpus:
        out["unknown_gpu"] = next(iter(p.unknown_gpus))
    return out


def same(slot: str, want: Any, got: Any) -> bool:
    """Whether a predicted value matches the label (numbers within a stated tolerance, lists as sets)."""
    if slot in ("gpus", "existing"):
        return sorted((g["gpu"], g.get("count", 1)) for g in want) == sorted((g["gpu"], g["count"]) for g in got)
    if slot == "budget":
        return want["currency"] == got["currency"] and abs(want["amount"] - got["amount"]) <= 0.03 * want["amount"]
    if slot in LIST_SLOTS:
        return set(want) == set(got)
    if slot == "unknown_gpu":
        return _norm(want) in _norm(got) or _norm(got) in _norm(want)
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    if isinstance(want, int | float) and isinstance(got, int | float):
        tol = NUMERIC_TOLERANCE.get(slot, 0.0)
        return abs(want - got) <= tol * abs(want) + 1e-9
    if slot in ("precision", "cpu_name", "kv_dtype"):
        return _norm(str(want)) == _norm(str(got))
    return want == got


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]", "", text.lower())


class SlotScore:
    def __init__(self) -> None:
        self.tp: Counter[str] = Counter()
        self.fp: Counter[str] = Counter()
        self.fn: Counter[str] = Counter()

    def add(self, want: dict[str, Any], got: dict[str, Any]) -> list[str]:
        errors = []
        for slot in set(want) | set(got):
            if slot in want and slot in got and same(slot, want[slot], got[slot]):
                self.tp[slot] += 1
                continue
            if slot in got:
                self.fp[slot] += 1
            if slot in want:
                self.fn[slot] += 1
            errors.append(f"{slot}: want {want.get(slot)!r} got {got.get(slot)!r}")
        return errors

    def prf(self, slot: str | None = None) -> tuple[float, float, float]:
        tp = sum(self.tp.values()) if slot is None else self.tp[slot]
        fp = sum(self.fp.values()) if slot is None else self.fp[slot]
        fn = sum(self.fn.values()) if slot is None else self.fn[slot]
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)


# ----------------------------------------------------------------------------- replies


def body(reply: Reply) -> str:
    """The reply without its sources list and closing question: what the length target counts."""
    text = reply.text
    if reply.question and text.endswith(reply.question):
        text = text[: -len(reply.question)]
    return re.split(r"\n\*\*(参考资料|Sources)\*\*", text)[0].strip()


def length(text: str, lang: str) -> int:
    """Chinese characters (CJK + other non-space characters) or English words."""
    if lang == "zh":
        return len(re.sub(r"\s", "", text))
    return len(re.findall(r"\S+", text))


def answered(reply: Reply) -> bool:
    """The reply gives an answer (a computed or looked-up result), not only a question."""
    if reply.mode not in ANSWER_MODES:
        return False
    if reply.mode == "export":
        return True
    if reply.mode == "why":
        return not reply.text.startswith(NO_RESULT)
    if reply.mode in ("concept", "rent") and reply.citations:  # the guidance quoted, with its source
        return True
    return any(c.ok and c.name != "search_knowledge" for c in reply.tool_calls)


_FIGURE = re.compile(r"([¥$€]?)\s?(\d[\d,]*(?:\.\d+)?)\s*(GB/s|TB/s|GiB|GB|W|TFLOPS|tokens/s)?")
_SCALE = {"GB": ("GB", 1.0), "GiB": ("GB", 2**30 / 1e9), "TB/s": ("GB/s", 1000.0), "GB/s": ("GB/s", 1.0),
          "W": ("W", 1.0), "TFLOPS": ("TFLOPS", 1.0), "tokens/s": ("tokens/s", 1.0)}


def has_figure(text: str, figure: dict[str, Any]) -> bool:
    """A number in ``text`` within the figure's tolerance, in its unit (GB ↔ GiB and GB/s ↔ TB/s converted)."""
    unit = figure["unit"]
    base, factor = _SCALE.get(unit, (unit, 1.0))
    want = figure["value"] * factor
    tol = figure.get("tol", 0.05)
    for m in _FIGURE.finditer(text):
        value = float(m.group(2).replace(",", ""))
        if unit in ("CNY", "USD"):
            if m.group(1) != ("¥" if unit == "CNY" else "$"):
                continue
            got = value
        else:
            if not m.group(3) or _SCALE[m.group(3)][0] != base:
                continue
            got = value * _SCALE[m.group(3)][1]
        if abs(got - want) <= tol * want:
            return True
    return False


# ----------------------------------------------------------------------------- run


def utterances(only: str | None = None) -> list[dict[str, Any]]:
    """Every labelled single message (``utterances*.jsonl``), or only those of one file."""
    files = sorted(p.name for p in DATA.glob("utterances*.jsonl"))
    return [u for name in files if only in (None, name) for u in load(name)]


def evaluate(split: str, advisor: Advisor, errors: int = 0, only: str | None = None) -> dict[str, Any]:
    """All figures for one split ('dev', 'heldout' or 'all'), optionally of one file only (a new batch
    measured before any tuning on it)."""
    rows = [u for u in utterances(only) if split == "all" or u["split"] == split]
    slots = SlotScore()
    correct = 0
    first_answered: list[bool] = []
    lengths: dict[str, list[int]] = defaultdict(list)
    misses: list[str] = []
    confusion: Counter[tuple[str, str]] = Counter()
    for u in rows:
        parsed = parse(u["text"])
        got_kind = str(parsed.kind)
        if got_kind == u["intent"]:
            correct += 1
        else:
            confusion[(u["intent"], got_kind)] += 1
            misses.append(f"intent {u['id']} {u['text']!r}: want {u['intent']} got {got_kind} ({parsed.kind_by})")
        for e in slots.add(u["slots"], predicted_slots(parsed)):
            misses.append(f"slot   {u['id']} {u['text']!r}: {e}")
        if u["intent"] in ANSWERABLE:
            reply = advisor.reply(u["text"], advisor.new_session())
            first_answered.append(answered(reply))
            lengths[u["lang"]].append(length(body(reply), u["lang"]))
            if not first_answered[-1]:
                misses.append(f"answer {u['id']} {u['text']!r}: mode {reply.mode}")
    dialogues = [d for d in load("dialogues.jsonl") if split == "all" or d["split"] == split]
    turns = answered_turns = figures = figures_found = 0
    for d in dialogues:
        session = advisor.new_session()
        for i, turn in enumerate(d["turns"]):
            reply = advisor.reply(turn["user"], session)
            if turn["answers"]:
                turns += 1
                ok = answered(reply)
                answered_turns += ok
                if not ok:
                    misses.append(f"dialog {d['id']}#{i} {turn['user']!r}: mode {reply.mode}")
            for fig in turn.get("figures", []):
                figures += 1
                if has_figure(reply.text, fig):
                    figures_found += 1
                else:
                    misses.append(f"figure {d['id']}#{i} {turn['user']!r}: no {fig['value']} {fig['unit']}")
    p, r, f1 = slots.prf()
    result = {
        "split": split, "utterances": len(rows), "intent accuracy": correct / len(rows),
        "slot precision": p, "slot recall": r, "slot F1": f1,
        "answered first": sum(first_answered) / len(first_answered) if first_answered else 1.0,
        "dialogue turns answered": answered_turns / turns if turns else 1.0,
        "key figures present": figures_found / figures if figures else 1.0,
        "median reply zh (chars)": statistics.median(lengths["zh"]) if lengths["zh"] else 0,
        "median reply en (words)": statistics.median(lengths["en"]) if lengths["en"] else 0,
        "per slot": {s: slots.prf(s) for s in sorted(set(slots.tp) | set(slots.fp) | set(slots.fn))},
        "confusion": confusion.most_common(12),
        "misses": misses[:errors] if errors else [],
    }
    return result


def print_table(results: list[dict[str, Any]]) -> None:
    names = ["utterances", "intent accuracy", "slot precision", "slot recall", "slot F1", "answered first",
             "dialogue turns answered", "key figures present", "median reply zh (chars)", "median reply en (words)"]
    print("| figure | " + " | ".join(r["split"] for r in results) + " | target |")
    print("|---|" + "---|" * len(results) + "---|")
    for name in names:
        cells = [f"{r[name]:.3f}" if isinstance(r[name], float) and r[name] <= 1 else f"{r[name]:g}" for r in results]
        print(f"| {name} | " + " | ".join(cells) + f" | {TARGETS.get(name, '')} |")
    print()
    print("| slot | " + " | ".join(f"{r['split']} P / R / F1" for r in results) + " |")
    print("|---|" + "---|" * len(results))
    for slot in sorted({s for r in results for s in r["per slot"]}):
        cells = []
        for r in results:
            prf = r["per slot"].get(slot)
            cells.append("—" if prf is None else " / ".join(f"{x:.2f}" for x in prf))
        print(f"| {slot} | " + " | ".join(cells) + " |")
    for r in results:
        if r["confusion"]:
            print(f"\nmost common intent confusions ({r['split']}): "
                  + ", ".join(f"{a}→{b} ×{n}" for (a, b), n in r["confusion"]))
        for line in r["misses"]:
            print("  " + line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=["dev", "heldout", "all", "both"], default="both")
    ap.add_argument("--errors", type=int, default=0, help="print the first N misses per split")
    ap.add_argument("--only", help="one utterance file, e.g. utterances_dev4.jsonl (dialogues still all)")
    args = ap.parse_args()
    blind_batches.main()  # the untuned first look of every blind batch comes first: it is the figure that counts
    print()
    advisor = Advisor()
    splits = ["dev", "heldout"] if args.split == "both" else [args.split]
    print_table([evaluate(s, advisor, args.errors, args.only) for s in splits])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
