"""Snapshot every reply text the product produces, to diff before and after a presentation change.

    python bench/snapshot.py DIR            # write DIR/{dialogue_tests,utterances,cli}.jsonl
    python bench/snapshot.py --diff OLD NEW # count and show what changed between two snapshots

Three sources: every ``Advisor.reply`` / ``update_profile`` made while the dialogue tests run, the first
reply to each development utterance (held-out files are not used), and the text output of a fixed list
of CLI commands in both languages. Entries are keyed, so a diff names exactly which replies changed.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GPU_ADVISOR_DATA", tempfile.mkdtemp(prefix="gpu-advisor-snapshot-"))
os.environ["ADVISOR_LLM"] = "none"

DIALOGUE_TESTS = [*sorted(str(p) for p in (ROOT / "tests").glob("test_dialogue_*.py")),
                  str(ROOT / "tests" / "test_value.py"), str(ROOT / "tests" / "test_hostile_chat.py")]
DEV_FILES = sorted((ROOT / "tests" / "data" / "understanding").glob("utterances_dev*.jsonl"))
CLI_COMMANDS = [
    ["size", "--model", "llama-3.1-8b", "--gpu", "4090"],
    ["size", "--model", "qwen2.5-72b", "--gpu", "H100", "--gpus", "2", "--precision", "fp8"],
    ["size", "--model", "deepseek-v3", "--gpu", "H200", "--gpus", "8", "--precision", "fp8"],
    ["size", "--train", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "4090"],
    ["size", "--train", "--model", "qwen2.5-7b", "--method", "full", "--gpu", "A100", "--gpus", "8", "--zero", "3"],
    ["perf", "--model", "llama-3.1-8b", "--gpu", "H100", "--precision", "bf16"],
    ["perf", "--model", "qwen2.5-72b", "--gpu", "4090", "--count", "4", "--precision", "int4"],
    ["check", "--gpu", "4090", "--count", "4", "--chassis", "tower"],
    ["check", "--gpu", "L40S", "--chassis", "tower"],
    ["perf", "--model", "qwen2.5-72b", "--gpu", "H100", "--count", "2", "--precision", "fp8", "--serve"],
    ["recommend", "--workload", "inference", "--model", "Qwen2.5-72B", "--budget-cny", "100000"],
    ["recommend", "--workload", "training", "--model", "llama-3.1-8b", "--method", "qlora", "--budget-usd", "3000"],
    ["recommend", "--workload", "scientific", "--budget-usd", "50000"],
    ["perf", "--train", "--model", "llama-3.1-8b", "--gpu", "H100", "--count", "8", "--tokens", "1e9"],
    ["perf", "--fp64", "lu", "--gpu", "A100", "--n", "50000"],
    ["gpus", "show", "H100"],
    ["models", "show", "qwen2.5-72b"],
]


def _record_dialogue_tests(out: list[dict]) -> None:
    import pytest

    from advisor.engine import Advisor

    class Recorder:
        def __init__(self) -> None:
            self.test = "?"
            self.turn = 0

        def pytest_runtest_setup(self, item: pytest.Item) -> None:
            self.test, self.turn = item.nodeid, 0

    rec = Recorder()
    reply, update = Advisor.reply, Advisor.update_profile

    def recording_reply(self, text, session, lang=None):  # type: ignore[no-untyped-def]
        result = reply(self, text, session, lang)
        out.append({"key": f"{rec.test}#{rec.turn}", "lang": result.lang, "in": text[:300], "out": result.text})
        rec.turn += 1
        return result

    def recording_update(self, session, changes, lang=None):  # type: ignore[no-untyped-def]
        result = update(self, session, changes, lang)
        out.append({"key": f"{rec.test}#{rec.turn}", "lang": result.lang,
                    "in": json.dumps(changes, default=str), "out": result.text})
        rec.turn += 1
        return result

    Advisor.reply, Advisor.update_profile = recording_reply, recording_update  # type: ignore[method-assign]
    try:
        pytest.main(["-q", "-p", "no:cacheprovider", "-x", "--no-header", *DIALOGUE_TESTS], plugins=[rec])
    finally:
        Advisor.reply, Advisor.update_profile = reply, update  # type: ignore[method-assign]


def _record_utterances(out: list[dict]) -> None:
    from advisor.engine import Advisor
    from advisor.session import Session

    advisor = Advisor()
    for path in DEV_FILES:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if not line.strip():
                continue
            text = json.loads(line)["text"]
            reply = advisor.reply(text, Session())
            out.append({"key": f"{path.name}:{i}", "lang": reply.lang, "in": text, "out": reply.text})


def _record_cli(out: list[dict]) -> None:
    from advisor.cli import main

    for argv in CLI_COMMANDS:
        for lang in ("en", "zh"):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                try:
                    code = main([*argv, "--lang", lang])
                except SystemExit as exc:
                    code = exc.code
            out.append({"key": " ".join([*argv, "--lang", lang]), "lang": lang, "in": "",
                        "out": f"[exit {code}]\n{buf.getvalue()}"})


def write(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, recorder in (("dialogue_tests", _record_dialogue_tests), ("utterances", _record_utterances),
                           ("cli", _record_cli)):
        rows: list[dict] = []
        recorder(rows)
        with (directory / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows:
                line = json.dumps(row, ensure_ascii=False)
                fh.write(line.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
        print(f"{name:15} {len(rows):6} replies")


def _load(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["key"]: row for row in rows}


def diff(old: Path, new: Path, show: int) -> None:
    print(f"{'source':15} {'replies':>8} {'changed':>8} {'added':>6} {'gone':>5}")
    shown = 0
    for name in ("dialogue_tests", "utterances", "cli"):
        a, b = _load(old / f"{name}.jsonl"), _load(new / f"{name}.jsonl")
        changed = [k for k in a.keys() & b.keys() if a[k]["out"] != b[k]["out"]]
        print(f"{name:15} {len(b):8} {len(changed):8} {len(b.keys() - a.keys()):6} {len(a.keys() - b.keys()):5}")
        for key in sorted(changed):
            if shown >= show:
                break
            shown += 1
            print(f"\n### {name} {key}\n> {a[key]['in']}")
            sys.stdout.writelines(difflib.unified_diff(a[key]["out"].splitlines(True), b[key]["out"].splitlines(True),
                                                       "before", "after", n=0))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--diff", action="store_true", help="compare two snapshot folders")
    parser.add_argument("--show", type=int, default=40, help="how many changed replies to print in full")
    args = parser.parse_args()
    if args.diff:
        diff(args.dirs[0], args.dirs[1], args.show)
    else:
        write(args.dirs[0])
