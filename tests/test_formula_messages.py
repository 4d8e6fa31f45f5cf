"""The formula of every computed term is a note (``<area>.formula.*`` messages in en/zh.toml).

Its English rendering (``term.formula.text``) is byte for byte what the tools wrote before formulas became
message ids — the expected strings below were copied from the tools' output before the change — and its
Chinese rendering keeps the math (symbols, numbers, units, identifiers) with the words in Chinese.
Driven through real tool calls (``run_tool``), as the chat, the CLI and the web panel make them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from advisor.toolspec import output_model, run_tool, typed
from knowledge.messages import render
from tools.result import Note

# Latin-script words (identifiers such as head_dim or gpu_memory_utilization count as words here).
_WORD_RUN = re.compile(r"[A-Za-z][\w'’./-]*(?:[ ,;:]+[A-Za-z][\w'’./-]*){2,}")
_WORDS2 = re.compile(r"[A-Za-z][a-z]+(?:[ ,;:-]+[A-Za-z][a-z]+)+")
_CJK = re.compile(r"[\u3400-\u9fff]")
# Names that stay as they are in every language.
_NAMES = ("llama.cpp", "vLLM", "CUDA", "cuBLAS", "NCCL")

# A formula that depends on catalog data that may be revised (a rental price, a calibrated step time).
_PRICE = re.compile(r"GPU-hours × \$[\d.]+/h \(catalog rental price as of \d{4}-\d\d-\d\d\)")
_PEAK = re.compile(r"\d+ / step time [\d.]+ ms")

# (tool, arguments, the English formula of each term as the tools wrote it before the change)
CALLS: list[tuple[str, dict[str, Any], list[str | re.Pattern[str]]]] = [
    ("size_inference", {"model": "llama-3.1-8b", "engine": "vllm", "context": 8192, "gpu": "h100"}, [
        "8.03 B params × 16 bits",
        "32 layers × 1 seq × ⌈8192/16⌉ blocks × 16 × [2 × 8 KV heads × 128 head_dim × 2 B]",
        "8192 tok × (3×14336 + 6×4096) × 2 B + 256 × vocab 128256 × 8.5 B",
        "non-torch memory ≈ 0.15 GiB per GPU",
        "total × gpu_memory_utilization 0.92",
        "KV budget / KV bytes per token (16-token blocks)",
    ]),
    ("size_inference", {"model": "llama-3.1-70b", "engine": "vllm", "context": 8192, "gpus": 2, "gpu": "h100"}, [
        "131.41 GiB / tp 2",
        "80 layers × 1 seq × ⌈8192/16⌉ blocks × 16 × [2 × 4 KV heads × 128 head_dim × 2 B]",
        "8192 tok × (3×28672 + 6×8192) × 2 B + 256 × vocab 128256 × 8.5 B",
        "non-torch memory ≈ 0.50 GiB per GPU (NCCL buffers)",
        "total × gpu_memory_utilization 0.92",
        "KV budget / KV bytes per token (16-token blocks)",
    ]),
    # llama.cpp with layers left in system RAM (-ngl): the cpu_ram term
    ("size_inference", {"model": "llama-3.1-70b", "engine": "llamacpp", "context": 8192, "gpu": "rtx-4090"}, [
        "GPU: 44 of 80 layers; token embeddings (563.6 MiB) stay in host RAM",
        "80 layers × n_ctx 8192 cells (= 8192 × 1 slots, padded to 256) × [2 × 8 KV heads × 128 head_dim × 2 B]",
        "max(attention, logits) = logits: 512 × (vocab 128256 + 8192) × 4 B",
        "CUDA context + cuBLAS ≈ 384 MiB per GPU (not in llama.cpp's log)",
        "token embeddings + layers left on the CPU (+ their KV)",
        "KV budget / KV bytes per token",
    ]),
    ("size_inference", {"model": "gemma-2-9b", "engine": "transformers", "context": 8192, "gpus": 2,
                        "parallel": "tp"}, [
        "17.21 GiB / tp 2",
        "21 layers × 8192 tokens × 1 seq × [2 × 4 KV heads × 256 head_dim × 2 B] + 21 sliding layers × 4096 tokens "
        "(window 4096) × same",
        "8192 tok × (4×3584 + 2×14336) × 2 B + 1 × 256000 × 8 B, / tp 2",
        "CUDA context + cuBLAS workspace + allocator slack ≈ 0.75 GiB per GPU",
    ]),
    ("size_training", {"model": "llama-3.1-8b", "method": "lora", "seq": 2048, "gpu": "rtx-4090"}, [
        "bf16 base: 16,060,000,000 B",
        "41,943,040 LoRA params × 4 B (fp32)",
        "T × 4 B",
        "T × 8 B",
        "L·e·s·b·h + one layer recomputed; per layer e·s·b·(4h + 2h + 2·kv + 4I) + 4·a·s·b (fp32 LSE) = 328.2 MiB",
        "b·s·V·4 B × 2 copies",
        "CUDA context 512 MiB + 5% × (activations + gradients)",
        "max(loading: P·2·gpus_per_node, offloaded states / nodes) × 1.5",
    ]),
    ("size_training", {"model": "llama-3.1-8b", "method": "full", "zero_stage": 3, "gpus": 8, "gpu": "h100"}, [
        "P/tp × 2 B / N(8) + gathered working set",
        "T × 4 B / N(8)",
        "T × 12 B / N(8)",
        "4·LL, LL = 525,336,576 params (largest layer)",
        "L · per-layer; per layer e·s·b·(4h + 2h + 2·kv + 4I) + 4·a·s·b (fp32 LSE) = 328.2 MiB",
        "b·s·V·4 B × 2 copies",
        "CUDA context 512 MiB + 5% × (activations + gradients)",
        "max(loading: LL·4·gpus_per_node, offloaded states / nodes) × 1.5",
    ]),
    ("perf_decode", {"model": "llama-3.1-70b", "gpu": "h100", "count": 2, "context": 4096}, [
        "active weights: params × bits/8, minus the untied input embedding (a row lookup)",
        "batch 1 × KV of 4096 tokens (fp16) per rank",
        "bytes / (3350 GB/s × η_stream 0.536)",
        "80 layers × τ 86 µs",
        "1 × (2·P_active + attention) FLOPs / (bf16 989.4 TFLOPS × MFU 0.5 × 2)",
        "2 × 80 layers × (nvlink 900 GB/s (assumed 10 µs per small all-reduce))",
        "batch / (max(streaming, compute) + fixed + comm)",
    ]),
    ("perf_decode", {"model": "mixtral-8x7b", "gpu": "rtx-4090", "count": 4, "parallel": "layer", "batch": 8}, [
        "dense part + 7.2 of 8 experts per layer (top-2, batch 8): params × bits/8, minus the untied input "
        "embedding (a row lookup)",
        "batch 8 × KV of 1024 tokens (fp16)",
        "bytes / (1008 GB/s × η_stream 0.926)",
        "9% of the weights / PCIe 25.2 GB/s",  # vLLM keeps 8 % of the 4 cards free: the rest crosses PCIe
        "32 layers × τ 97 µs",
        "8 × (2·P_active + attention) FLOPs / (bf16 165.2 TFLOPS × MFU 0.5)",
        "τ_hop 0.29 ms × log2(4)",
        "batch / (max(streaming + system RAM, compute) + fixed + comm)",
    ]),
    ("perf_prefill", {"model": "llama-3.1-8b", "gpu": "h100", "count": 2, "prompt_tokens": 4096, "mfu": 0.5}, [
        "2 × 8,030,000,000 active params × 4,096 tokens + causal attention 2·L·s²·a·d",
        "FLOPs / (bf16 dense 989.4 TFLOPS × MFU 0.5 × 2 GPUs)",
        "all weights read once / (bandwidth × η_stream)",
        "2 × 32 × all-reduce of 4096·h·2 B (nvlink 900 GB/s (assumed 10 µs per small all-reduce))",
        "max(compute, streaming) + fixed + comm",
    ]),
    ("perf_serving", {"model": "llama-3.1-8b", "gpu": "h100", "context": 4096}, [
        "vLLM KV budget / KV bytes per token",
        "capacity / 4,096",
        _PEAK,
    ]),
    ("training_time", {"model": "llama-3.1-8b", "gpu": "h100", "count": 8, "tokens": 1e12}, [
        "6 × N 8.03e+09 × D 1e+12",
        "8 GPUs × bf16 dense 989.4 TFLOPS × MFU 0.242",  # the median of the published whole runs on H100-class GPUs
        "FLOPs / achieved / 3600",
        "hours × 8",
        _PRICE,
    ]),
    ("training_time", {"model": "llama-3.1-8b", "gpu": "h100", "tokens": 1e12, "recompute": "full",
                       "price_per_gpu_hour": 2.5}, [
        "8 × N 8.03e+09 × D 1e+12",
        "1 GPUs × bf16 dense 989.4 TFLOPS × MFU 0.242",
        "FLOPs / achieved / 3600",
        "hours × 1",
        "GPU-hours × $2.5/h (given)",
    ]),
    ("scientific_fp64", {"gpu": "h100", "count": 2, "problem": "dense-lu", "n": 50000}, [
        "8 B × N² (N = 50,000)",
        "memory / 2",
        "2/3 · N³",
        "FLOPs / (2 × FP64 67 TFLOPS × efficiency 0.7)",
    ]),
    ("scientific_fp64", {"gpu": "a100-80gb", "problem": "grid", "cells": 1e8, "variables": 5, "time_levels": 2,
                         "steps": 1000, "flops_per_cell_step": 200}, [
        "100,000,000 cells × 5 variables × 8 B × 2 time levels",
        "memory / 1",
        "200 FLOPs × cells × 1000 steps",
        "max(steps × state × levels / (1 × 2039 GB/s × 0.8), FLOPs / FP64 rate)",
    ]),
]


def _call(name: str, arguments: dict[str, Any]) -> Any:
    call = run_tool(name, arguments)
    assert call.ok, (name, arguments, call.error)
    return typed(call, output_model(name))


def _ids(n: Note | dict[str, Any]) -> list[str]:
    """The message ids of a note and of the notes nested in its parameters."""
    ident, params = (n.id, n.params) if isinstance(n, Note) else (n["id"], n.get("params") or {})
    return [ident, *(i for v in params.values() if isinstance(v, dict) for i in _ids(v))]


def assert_chinese_formula(f: Note, model: str | None = None) -> None:
    """The Chinese formula: no run of three Latin-script words once names are left out, and Chinese words
    wherever the English has words (not only symbols, numbers and units)."""
    zh = render(f, "zh")
    text = zh.replace(model, " ") if model else zh
    for name in _NAMES:
        text = text.replace(name, " ")
    assert not _WORD_RUN.search(text), (f.id, zh)
    if _WORDS2.search(f.text.replace("llama.cpp's", "")):
        assert _CJK.search(zh), (f.id, f.text, zh)


@pytest.mark.parametrize(("name", "arguments", "expected"), CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_english_formulas_are_unchanged_and_chinese_ones_are_chinese(
    name: str, arguments: dict[str, Any], expected: list[str | re.Pattern[str]]
) -> None:
    result = _call(name, arguments)
    english = [t.formula.text for t in result.terms]
    assert len(english) == len(expected), english
    for got, want in zip(english, expected, strict=True):
        assert want.fullmatch(got) if isinstance(want, re.Pattern) else got == want, (got, want)
    for t in result.terms:
        assert isinstance(t.formula, Note)
        assert render(t.formula, "en") == t.formula.text
        assert t.formula.id.split(".")[1] == "formula", t.formula.id
        assert all(".formula." in i or i.startswith(("perf.link.", "perf.train_time.", "training.frozen."))
                   for i in _ids(t.formula)), _ids(t.formula)
        assert_chinese_formula(t.formula, arguments.get("model"))


def test_chinese_formulas_keep_the_math() -> None:
    """Numbers, symbols, units and identifiers are the same in both languages; the words are translated."""
    by_name = {t.name: render(t.formula, "zh") for t in _call(*CALLS[0][:2]).terms}
    assert by_name["weights"] == "8.03 B 参数 × 16 bit"
    assert by_name["kv_cache"] == "32 层 × 1 路 × ⌈8192/16⌉ 块 × 16 × [2 × 8 个 KV 头 × 128 head_dim × 2 B]"
    assert by_name["overhead"] == "非 torch 显存 ≈ 每卡 0.15 GiB"
    assert by_name["vllm_reservation"] == "总显存 × gpu_memory_utilization 0.92"
    training = {t.name: render(t.formula, "zh") for t in _call(*CALLS[5][:2]).terms}
    assert training["overhead"] == "CUDA 上下文 512 MiB + 5% × (激活 + 梯度)"
    assert training["weights"] == "P/tp × 2 B / N(8) + 聚合的工作集"
    decode = {t.name: render(t.formula, "zh") for t in _call(*CALLS[6][:2]).terms}
    assert decode["tensor-parallel all-reduce"].startswith("2 × 80 层 × (nvlink 900 GB/s（假设")


def test_formulas_in_the_presented_sections_follow_the_language() -> None:
    from advisor.present import present_inference

    result = _call(*CALLS[2][:2])
    zh, en = present_inference(result, "zh"), present_inference(result, "en")
    assert [t.formula for t in en.terms] == [t.formula.text for t in result.terms]
    assert [t.formula for t in zh.terms] == [render(t.formula, "zh") for t in result.terms]
    assert "80 层 × n_ctx 8192 个单元" in zh.markdown()


def test_build_formulas_name_their_quantities_in_chinese() -> None:
    """BuildReport.formula: the English keeps its variable names, the Chinese says them in words."""
    report = _call("check_build", {"gpus": [{"gpu": "rtx-4090", "count": 2}]})
    assert report.formula and report.formula[0].text.startswith("system_power_w = ")
    for f in report.formula:
        zh = render(f, "zh")
        assert _CJK.search(zh) and not re.search(r"\b[a-z]+_[a-z_]+\b", zh), zh
    assert render(report.formula[1], "zh").startswith("建议电源功率 = max(系统功耗 × ")


# ----------------------------------------------------------------------------- result-level formulas
# The `formula` of the cost, value and catalog results (perf.formula.price/rent/value/find/afford.*): the English
# as the tools wrote it before these became notes (copied from their output), the Chinese in Chinese words.

_BREAK_EVEN = "break-even months = purchase / (rent per month − electricity per month)"
_PROJECT = ["project rent = rent per month × months", "project buy = purchase + electricity per month × months"]
RESULT_CALLS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("rent_vs_buy", {"gpu": "h100", "count": 8, "months": 3, "currency": "CNY"}, [
        "yearly kWh = 6750 W / 1000 × 8760 h × 1", "yearly cost = kWh × 0.8 CNY", _BREAK_EVEN, *_PROJECT]),
    ("rent_vs_buy", {"gpu": "rtx-4090", "count": 2, "hours_per_day": 8, "kwh_price": 0.3}, [
        "yearly kWh = 1300 W / 1000 × 8760 h × 0.333333", "yearly cost = kWh × 0.3 USD", _BREAK_EVEN, *_PROJECT]),
    ("value_for_money", {"options": [{"gpu": "rtx-4090"}, {"gpu": "rtx-5090", "count": 2}], "currency": "CNY"}, [
        "price = catalog unit price × count", "X per 10,000 CNY = X × count / price × 10,000"]),
    ("value_for_money", {"options": [{"gpu": "rtx-4090"}], "currency": "EUR"}, [
        "price = catalog unit price × count", "X per 1,000 EUR = X × count / price × 1,000"]),
    ("best_value", {}, ["bandwidth_gbs per 1,000 USD = bandwidth_gbs / card price × 1,000"]),
    ("best_value", {"metric": "bf16_tflops", "currency": "CNY"}, [
        "bf16_tflops per 10,000 CNY = bf16_tflops / card price × 10,000"]),
    ("best_value", {"metric": "fp64_tflops", "currency": "GBP", "tiers": ["datacenter"]}, [
        "fp64_tflops per 1,000 GBP = fp64_tflops / card price × 1,000"]),
    ("best_value", {"metric": "memory_gb"}, ["memory_gb per 1,000 USD = memory_gb / card price × 1,000"]),
    ("find_gpus", {"supports": "fp8"}, [
        "supports(p) = the catalog has a dense figure for p and p is not marked unsupported"]),
    ("affordable", {"budget_usd": 5000}, [
        "largest model = memory × 0.8 / bytes per parameter (0.612 B at Q4_K_M, 2 B at bf16)",
        "price = card price × count + host"]),
    ("affordable", {"budget_usd": 5000, "currency": "CNY"}, [
        "largest model = memory × 0.8 / bytes per parameter (0.612 B at Q4_K_M, 2 B at bf16)",
        "price = card price × count + host"]),
]


def _result_formulas(result: Any) -> list[Note]:
    f = result.formula
    return f if isinstance(f, list) else [f]


@pytest.mark.parametrize(("name", "arguments", "expected"), RESULT_CALLS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(RESULT_CALLS)])
def test_result_formulas_keep_their_english_and_are_chinese_in_chinese(
    name: str, arguments: dict[str, Any], expected: list[str]
) -> None:
    formulas = _result_formulas(_call(name, arguments))
    assert [f.text for f in formulas] == expected
    for f in formulas:
        assert isinstance(f, Note) and render(f, "en") == f.text
        assert all(i.startswith("perf.formula.") for i in _ids(f)), _ids(f)
        assert_chinese_formula(f)
        assert _CJK.search(render(f, "zh")), render(f, "zh")


def test_result_formulas_in_chinese_keep_the_math() -> None:
    rent = [render(f, "zh") for f in _call(*RESULT_CALLS[0][:2]).formula]
    assert rent == ["年用电量 (kWh) = 6750 W / 1000 × 8760 h × 1", "年电费 = 年用电量 (kWh) × 0.8 CNY",
                    "回本月数 = 购置费用 / (每月租金 − 每月电费)", "项目租用费用 = 每月租金 × 月数",
                    "项目购买费用 = 购置费用 + 每月电费 × 月数"]
    best = _call(*RESULT_CALLS[5][:2]).formula[0]
    assert render(best, "zh") == "每 10,000 CNY 的稠密 BF16 算力 (TFLOPS) = 稠密 BF16 算力 (TFLOPS) / 单卡价格 × 10,000"
    afford = _call(*RESULT_CALLS[9][:2]).formula[0]
    assert render(afford, "zh") == "最大模型 = 显存 × 0.8 / 每参数字节数（Q4_K_M 下 0.612 B，bf16 下 2 B）"


def test_the_llm_facts_keep_the_english_result_formulas() -> None:
    from advisor.engine import _compact

    for name, arguments, expected in RESULT_CALLS:
        compact = _compact(name, run_tool(name, arguments).result)
        assert compact["formula"] == (expected if name != "find_gpus" else expected[0]), name
