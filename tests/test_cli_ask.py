"""`gpu-advisor ask` and `gpu-advisor chat`: one turn per call with the session in a file; interactive chat."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.session import Session
from advisor.toolspec import run_tool

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_LLM", "none")
    monkeypatch.setenv("ADVISOR_SEARCH_K", "0")  # retrieval is tested elsewhere; keep these fast


def _ask(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["ask", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_conversation_continues_across_invocations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "conv.json"
    code, out, _ = _ask(capsys, "我想部署推理服务", "--session", str(f), "--json")
    assert code == 0
    first = json.loads(out)
    assert set(first) >= {"reply", "lang", "question", "tool_calls", "citations"}
    assert first["lang"] == "zh" and "模型" in first["question"] and first["tool_calls"] == []
    assert Session.load(f).profile.use_case == "inference"

    code, out, _ = _ask(capsys, "llama 3.1 8b fp16，单张 4090，8k 上下文，10 个并发", "--session", str(f), "--json")
    second = json.loads(out)
    size = next(c for c in second["tool_calls"] if c["name"] == "size_inference")
    assert size["arguments"]["model"] == "llama-3.1-8b" and size["arguments"]["gpu"] == "rtx-4090"
    direct = run_tool("size_inference", size["arguments"]).result
    assert size["result"]["per_gpu_bytes"] == direct["per_gpu_bytes"]
    assert f"{direct['per_gpu_bytes'] / 1e9:,.1f} GB" in second["reply"]
    saved = Session.load(f)
    assert [t.role for t in saved.history] == ["user", "assistant", "user", "assistant"]
    assert "model" not in saved.pending  # not asked again


def test_plain_text_output_and_forced_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _ask(capsys, "推理服务", "--lang", "en")
    assert code == 0 and "Which model" in out and "模型" not in out


def test_corrupt_session_is_reported_and_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.json"
    f.write_text('{"kind": "gpu-advisor-session", "version": 1, "history": [', encoding="utf-8")
    code, out, err = _ask(capsys, "hello", "--session", str(f))
    assert code == 2 and out == ""
    assert "bad.json" in err and "left unchanged" in err and "Traceback" not in err
    assert f.read_text(encoding="utf-8") == '{"kind": "gpu-advisor-session", "version": 1, "history": ['


def test_message_from_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("科学计算\n"))
    code, out, _ = _ask(capsys, "-", "--json")
    assert code == 0 and "FP64" in json.loads(out)["question"]


def test_interactive_chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "plan.md"
    session = tmp_path / "chat.json"
    lines = ["推理", "llama 3.1 8b fp16，一张 4090", f"/export {report}", "/quit"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code = main(["chat", "--session", str(session)])
    out = capsys.readouterr().out
    assert code == 0
    assert "科学计算" in out  # the opening question
    assert "🔧" in out and "显存估算" in out  # tool steps are shown as they run
    assert "放不下" in out or "放得下" in out
    assert report.read_text(encoding="utf-8").startswith("# GPU 选型方案")
    assert Session.load(session).profile.model == "llama-3.1-8b"


def test_chat_ends_cleanly_on_eof(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["chat", "--lang", "en"]) == 0
    assert "scientific computing" in capsys.readouterr().out


def test_real_entry_point_in_a_subprocess(tmp_path: Path) -> None:
    env = {**os.environ, "ADVISOR_LLM": "none", "ADVISOR_SEARCH_K": "0", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-m", "advisor", "ask", "QLoRA qwen2.5-7b on a 3090?", "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["lang"] == "en" and any(c["name"] == "size_training" for c in data["tool_calls"])


def test_two_processes_on_one_session_file_lose_no_turn(tmp_path: Path) -> None:
    """Two `ask` processes on one file: the second waits for the first's lock, then adds its turn to it
    (before, one of the two turns was lost every time, both processes exiting 0)."""
    env = {**os.environ, "ADVISOR_LLM": "none", "ADVISOR_SEARCH_K": "0", "PYTHONIOENCODING": "utf-8"}
    path = tmp_path / "s.json"
    asks = ["70b 4bit on two 4090s?", "what about FP16?", "and 32k?", "换成 A100 呢", "并发 8 个呢", "budget $20k"]
    for pair in (asks[0:2], asks[2:4], asks[4:6]):
        procs = [subprocess.Popen([sys.executable, "-m", "advisor", "ask", text, "--session", str(path)], cwd=ROOT,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for text in pair]
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            assert out.strip()
    said = [t.text for t in Session.load(path).history if t.role == "user"]
    assert sorted(said) == sorted(asks)


def test_the_answer_is_printed_even_when_the_session_cannot_be_saved(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")  # the session's folder is a file: saving fails
    code, out, err = _ask(capsys, "QLoRA qwen2.5-7b on a 3090?", "--session", str(blocker / "s.json"))
    assert code != 0 and "cannot save the session" in err
    assert "QLoRA" in out and "3090" in out  # the computed answer reached the user first


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_session_that_is_not_a_regular_file_is_one_line_never_a_hang(tmp_path: Path, kind: str) -> None:
    """A named pipe as the session blocked for ever; /dev/zero filled memory. Run in a child with a timeout."""
    if kind == "fifo":
        target = tmp_path / "s.json"
        os.mkfifo(target)
    else:
        target = Path("/dev/zero")
    env = {**os.environ, "ADVISOR_LLM": "none", "ADVISOR_SEARCH_K": "0", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-m", "advisor", "ask", "hi", "--session", str(target)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "not a regular file" in proc.stderr and "Traceback" not in proc.stderr
    assert not Path(f"{target}.lock").exists()  # nothing left beside a device or a pipe


def test_terminal_control_sequences_from_input_never_reach_the_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    """An argument (or a name read from a model file) echoed in a message could retitle the window, clear
    the screen or plant a hyperlink: everything the CLI prints passes through one filter."""
    evil = "evil\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://x\x1b\\name\x9b"
    code = main(["size", "--model", evil])
    out = capsys.readouterr()
    assert code != 0 and "evil" in out.err
    assert not any(c in out.out + out.err for c in ("\x1b", "\x07", "\x9b"))
