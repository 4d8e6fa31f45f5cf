"""`gpu-advisor perf` and `gpu-advisor size --train`: the JSON contract, text output and errors.

Expected numbers are derived here from the catalog's datasheet figures (H100 SXM: 989.4 dense
bf16 TFLOPS; Llama-3.1-8B: 8.03 B parameters) or from published measurements.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from advisor.cli import main
from advisor.fmt import money_exact, num, tps


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    rc = main([*argv, "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def test_perf_inference_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(
        capsys,
        "perf",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "RTX 4090",
        "--precision",
        "Q4_K_M",
        "--context",
        "512",
        "--prompt",
        "512",
    )
    for key in ("decode_tokens_per_s", "decode_tokens_per_s_range", "prefill_tokens_per_s", "ttft_s"):
        assert key in d
    # measurements.md row 14: Llama-3-8B Q4_K_M on an RTX 4090, 127.74 tok/s (band ±30 % per the notes).
    assert d["decode_tokens_per_s"] == pytest.approx(127.74, rel=0.30)
    lo, hi = d["decode_tokens_per_s_range"]
    assert lo < 127.74 < hi
    assert d["ttft_s"] == pytest.approx(512 / d["prefill_tokens_per_s"])
    assert d["assumptions"] and isinstance(d["decode"]["terms"], list)


def test_perf_serve_adds_concurrency(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(
        capsys,
        "perf",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "H100",
        "--precision",
        "bf16",
        "--context",
        "4096",
        "--serve",
    )
    s = d["serving"]
    assert s["max_concurrency"] == pytest.approx(s["kv_capacity_tokens"] / 4096, rel=0.01)
    assert s["points"][-1]["tokens_per_s"] > s["points"][0]["tokens_per_s"]


def test_perf_train_hours(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(
        capsys,
        "perf",
        "--train",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "H100",
        "--count",
        "8",
        "--tokens",
        "1.4T",
        "--mfu",
        "0.5",
    )
    hours = 6 * 8.03e9 * 1.4e12 / (8 * 989.4e12 * 0.5) / 3600
    assert d["hours"] == pytest.approx(hours, rel=1e-3)
    assert d["gpu_hours"] == pytest.approx(8 * hours, rel=1e-3)


@pytest.mark.parametrize("tokens, value", [("300B", 3e11), ("2e12", 2e12)])
def test_perf_train_token_formats(capsys: pytest.CaptureFixture[str], tokens: str, value: float) -> None:
    d = run_json(capsys, "perf", "--train", "--model", "llama-3.1-8b", "--gpu", "H100", "--tokens", tokens)
    assert d["tokens"] == value and d["flops"] == pytest.approx(6 * 8.03e9 * value)


def test_perf_fp64(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "perf", "--fp64", "lu", "--n", "50000", "--gpu", "H100")
    assert d["memory_bytes"] == 8 * 50_000**2 and d["ecc"] is True


def test_perf_text_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["perf", "--model", "llama-3.1-8b", "--gpu", "H100", "--precision", "bf16"]
    d = run_json(capsys, *argv)
    assert main([*argv, "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "解码速度" in out and "首 token 延迟" in out and "tokens/s" in out
    decode = next(line for line in out.splitlines() if "解码速度" in line)
    assert tps(d["decode_tokens_per_s"]) in decode and "瓶颈：显存带宽" in decode
    assert "memory" not in decode and "range" not in out and "bound" not in out


def test_perf_text_in_english_shows_the_json_figures(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["perf", "--model", "qwen2.5-72b", "--gpu", "H100", "--count", "2", "--precision", "fp8", "--serve"]
    d = run_json(capsys, *argv)
    assert main([*argv, "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert "tensor parallel × 2" in out.splitlines()[0]
    assert tps(d["decode_tokens_per_s"]) in out and tps(d["prefill_tokens_per_s"]) in out
    assert f"{d['serving']['kv_capacity_tokens']:,} tokens" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit() and "tokens/s" in line]
    assert [int(r[0]) for r in rows] == [p["batch"] for p in d["serving"]["points"]]


def test_perf_train_and_fp64_text(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["perf", "--train", "--model", "llama-3.1-8b", "--gpu", "H100", "--count", "8", "--tokens", "1e9"]
    d = run_json(capsys, *argv)
    assert main([*argv, "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert f"{num(d['hours'])} h" in out and "GPU 时" in out and money_exact(d["cost_usd"], "USD") in out
    d = run_json(capsys, "perf", "--fp64", "lu", "--n", "50000", "--gpu", "A100")
    assert main(["perf", "--fp64", "lu", "--n", "50000", "--gpu", "A100", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "稠密 LU 分解" in out and f"{d['memory_bytes'] / 1e9:,.2f} GB" in out and "放得下" in out
    assert "dense-lu" not in out and "compute-bound" not in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["perf", "--model", "llama-3.1-8b", "--gpu", "H300", "--precision", "bf16"], "did you mean"),
        (["perf", "--train", "--model", "llama-3.1-8b", "--gpu", "H100", "--tokens", "lots"], "1.4T"),
        (["perf", "--model", "llama-3.1-8b", "--precision", "bf16"], "--gpu"),
        (
            ["perf", "--model", "llama-3.1-8b", "--gpu", "H100", "--count", "3", "--parallel", "tensor"],
            "divide",
        ),
        (["size", "--train", "--model", "llama-3.1-8b", "--optimizer", "lion"], "optimizer"),
        (["size", "--train", "--model", "llama-3.1-8b", "--offload"], "ZeRO"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


def test_size_train_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(
        capsys,
        "size",
        "--train",
        "--model",
        "llama-3.1-8b",
        "--method",
        "qlora",
        "--gpu",
        "RTX 4090",
        "--seq",
        "1024",
    )
    for key in ("total_bytes", "per_gpu_bytes", "gpus", "breakdown", "assumptions", "fits"):
        assert key in d
    assert set(d["breakdown"]) == {"weights", "kv_cache", "activations", "gradients", "optimizer", "overhead"}
    assert d["fits"] is True and d["breakdown"]["kv_cache"] == 0
    assert d["per_gpu_bytes"] == sum(d["breakdown"].values())
    # notes are message ids with parameters, and their English text
    host = next(a for a in d["assumptions"] if a["id"] == "training.assume.host_ram")
    assert host["params"] == {"buffer_factor": 1.5, "gpus_per_node": 1, "nodes": 1}
    assert host["text"] == "host RAM: DeepSpeed estimator accounting with buffer factor 1.5; 1 GPU per node, 1 node"


def test_size_train_zero3_offload_host_ram(capsys: pytest.CaptureFixture[str]) -> None:
    d = run_json(capsys, "size", "--train", "--model", "llama-3.1-8b", "--zero", "3", "--gpus", "8", "--offload")
    # DeepSpeed ZeRO-3 optimizer offload with zero.Init: host RAM 16·P/nodes × 1.5.
    assert d["cpu_bytes"] == pytest.approx(16 * 8.03e9 * 1.5, rel=1e-6)
    assert d["breakdown"]["optimizer"] == 0 and d["gpus"] == 8


def test_size_train_text_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["size", "--train", "--model", "llama-3.1-8b", "--method", "lora", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "梯度" in out and "优化器状态" in out and "GiB" in out
    assert "主机内存：按 DeepSpeed 估算器的口径" in out and "host RAM:" not in out and "not counted:" not in out


def test_real_process_unknown_model_one_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "perf", "--model", "nosuch-model", "--gpu", "H100"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
