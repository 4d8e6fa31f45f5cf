"""`gpu-advisor size` (inference): the JSON contract, text output and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
import pytest

from advisor.cli import main
from advisor.commands.size import parse_params

GiB = 2**30


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(["size", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(
        capsys,
        "--model",
        "llama-3.1-8b",
        "--precision",
        "bf16",
        "--context",
        "8192",
        "--batch",
        "2",
        "--json",
    )
    assert rc == 0
    data = json.loads(out)
    for key in ("total_bytes", "per_gpu_bytes", "gpus", "breakdown", "assumptions"):
        assert key in data
    assert set(data["breakdown"]) == {
        "weights",
        "kv_cache",
        "activations",
        "gradients",
        "optimizer",
        "overhead",
    }
    assert data["breakdown"]["kv_cache"] == 2 * 8192 * 131_072  # 2 sequences × 8192 tokens, GQA
    assert data["breakdown"]["gradients"] == 0 and data["gpus"] == 1
    assert isinstance(data["assumptions"], list)  # notes: a message id, its parameters and the English text
    assert all(a["id"] and a["text"] for a in data["assumptions"])


def test_json_with_gpu_has_budget_fields(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(
        capsys,
        "--model",
        "Meta-Llama-3-8B",
        "--precision",
        "bf16",
        "--context",
        "8192",
        "--gpu",
        "A100 PCIe 40GB",
        "--gpu-memory-utilization",
        "0.9",
        "--json",
    )
    assert rc == 0
    data = json.loads(out)
    for key in ("fits", "kv_capacity_tokens", "max_concurrency", "max_context_tokens"):
        assert key in data and data[key] is not None
    assert data["fits"] is True
    assert data["gpu_memory_bytes"] / GiB == pytest.approx(39.5, abs=0.05)


def test_context_default_is_stated(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(capsys, "--model", "llama-3.1-8b", "--json")
    data = json.loads(out)
    assert rc == 0 and data["context"] == 4096
    stated = data["assumptions"][0]  # the CLI's own note comes first
    assert stated["id"] == "cli.context_not_given" and stated["params"] == {"tokens": 4096}
    assert "4,096" in stated["text"] and "context" in stated["text"]


def test_custom_params(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(
        capsys,
        "--params",
        "70B",
        "--layers",
        "80",
        "--hidden",
        "8192",
        "--heads",
        "64",
        "--kv-heads",
        "8",
        "--head-dim",
        "128",
        "--vocab",
        "128256",
        "--precision",
        "fp16",
        "--context",
        "4096",
        "--gpus",
        "2",
        "--json",
    )
    data = json.loads(out)
    assert rc == 0
    assert data["breakdown"]["weights"] == 70e9 * 2 / 2  # per GPU under tp 2
    assert data["breakdown"]["kv_cache"] == 4096 * 2 * 80 * 4 * 128 * 2  # 4 KV heads per rank


def test_text_output_labels_units(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "llama-3.1-8b", "--precision", "bf16", "--context", "4096", "--gpu", "H100"]
    rc, out, _ = run_cli(capsys, *argv, "--json")
    data = json.loads(out)
    rc, out, _ = run_cli(capsys, *argv, "--lang", "en")
    assert rc == 0
    assert "GB (1e9 B)" in out and "GiB (2^30 B)" in out
    assert "KV cache" in out and "Assumptions" in out and "✅ fits" in out
    assert "2 × 8 KV heads × 128 head_dim" in out  # the formula is shown
    # the per-GPU row carries the JSON's bytes in GB and GiB, rounded to two decimals
    total = next(line for line in out.splitlines() if line.strip().startswith("Total per GPU"))
    assert total.split()[-2:] == [f"{data['per_gpu_bytes'] / 1e9:,.2f}", f"{data['per_gpu_bytes'] / GiB:,.2f}"]
    weights = next(line for line in out.splitlines() if line.strip().startswith("Weights"))
    assert f"{data['breakdown']['weights'] / 1e9:,.2f}" in weights
    usable = data["reserved_bytes"]  # vLLM's reservation: the figure the verdict weighs the need against
    assert f"{usable / GiB:,.1f} GiB) usable" in out.splitlines()[1]  # the verdict line


def test_text_output_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(capsys, "--model", "llama-3.1-8b", "--context", "4096", "--gpu", "RTX 4090", "--lang", "zh")
    assert rc == 0
    assert "权重" in out and "KV 缓存" in out and "假设" in out and "GiB" in out
    assert "✅ 放得下" in out.splitlines()[1]
    for english in ("fits", "Per GPU", "total per GPU", "headroom", "Assumptions", "max concurrency"):
        assert english not in out


def test_unknown_model_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "--model", "llama-3.1-8c", "--context", "1024")
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "gpu-advisor:" in err


def test_unknown_precision_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run_cli(capsys, "--model", "llama-3.1-8b", "--precision", "Q4_K_N", "--context", "1024")
    assert rc == 2 and "Q4_K_M" in err and len(err.strip().splitlines()) == 1


def test_tp_not_dividing_heads(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run_cli(capsys, "--model", "llama-3.1-70b", "--gpus", "3", "--context", "1024")
    assert rc == 2 and "tp=2, 4, 8" in err


def test_bad_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run_cli(capsys, "--model", "llama-3.1-8b", "--context", "-5")
    assert rc == 2 and "context" in err
    rc, _, err = run_cli(capsys, "--model", "llama-3.1-8b", "--context", "1024", "--batch", "0")
    assert rc == 2 and "batch" in err


def test_needs_a_model(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run_cli(capsys, "--context", "1024")
    assert rc == 2 and "--model" in err


def test_local_gguf_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(f), "llama")
    for add, v in (
        (w.add_block_count, 2),
        (w.add_embedding_length, 256),
        (w.add_head_count, 4),
        (w.add_head_count_kv, 4),
        (w.add_context_length, 2048),
        (w.add_vocab_size, 256),
    ):
        add(v)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q8_0]
    for name, rows in (
        ("token_embd.weight", 256),
        ("output.weight", 256),
        ("blk.0.attn_q.weight", 256),
        ("blk.1.attn_q.weight", 256),
    ):
        w.add_tensor(
            name,
            np.zeros((rows, 256 // block * size), dtype=np.uint8),
            raw_dtype=gguf.GGMLQuantizationType.Q8_0,
        )
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    rc, out, _ = run_cli(capsys, "--model", str(f), "--context", "4096", "--json")
    data = json.loads(out)
    assert rc == 0
    assert data["engine"] == "llamacpp" and data["precision"] == "Q8_0"
    assert data["weights_total_bytes"] == 4 * 256 * 256 // 32 * 34
    over = [w for w in data["warnings"] if w["id"] == "inference.warn.context_over_limit"]  # header says 2048
    assert len(over) == 1 and over[0]["params"]["limit"] == 2048 and "context 4,096 exceeds" in over[0]["text"]


def test_parse_params() -> None:
    assert parse_params("70B") == 70
    assert parse_params("800M") == pytest.approx(0.8)
    assert parse_params("1.5T") == 1500
    assert parse_params("7e9") == 7
