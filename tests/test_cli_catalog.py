"""The catalog subcommands, run as a user runs them (a real process)."""

from __future__ import annotations

import json
import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True, text=True, timeout=60)


def test_gpus_json_lists_catalog() -> None:
    out = run("gpus", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert len(data["gpus"]) >= 50
    h100 = next(g for g in data["gpus"] if g["id"] == "h100-sxm")
    assert h100["memory_gb"] == 80 and h100["bandwidth_gbs"] == 3350


def test_gpu_show_text_in_chinese() -> None:
    out = run("gpus", "show", "昇腾910B", "--lang", "zh")
    assert out.returncode == 0, out.stderr
    assert "显存" in out.stdout and "910B" in out.stdout


def test_unknown_gpu_exit_2_one_line() -> None:
    out = run("gpus", "show", "H300")
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "did you mean" in lines[0] and "Traceback" not in out.stderr


def test_models_show_json() -> None:
    out = run("models", "show", "llama3.1:8b", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["layers"] == 32 and data["attention"]["num_kv_heads"] == 8


def test_unknown_model_exit_2() -> None:
    out = run("models", "show", "llama-9000")
    assert out.returncode == 2 and "unknown model" in out.stderr


def test_show_without_name_is_a_clear_error() -> None:
    out = run("gpus", "show")
    assert out.returncode == 2 and "needs a name" in out.stderr
