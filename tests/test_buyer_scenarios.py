"""Buyers the recommender must fit, asked in chat and on the command line: both give the same ranking, and the
ranking is what an expert would advise. (A China buyer and a model that needs two nodes: test_markets.py and
test_multi_node.py.)

Expert reasoning per scenario:
- domestic only (信创) with ¥1M for Qwen2.5-72B: only Chinese accelerators, each priced in yuan and within budget;
- a GPU-only $2,500 budget for QLoRA on an 8B model, PC already owned: about 6 GB of 4-bit weights plus LoRA
  states fit a 12–24 GB card, so single cards qualify, no host is added, and a used RTX 3090 ($750) is among them;
- a $1,500 hobbyist at home runs what Ollama pulls, GGUF Q4_K_M: Llama-3.1-8B is ~4.9 GB of weights, ~6–7 GB with
  an 8k context, so one consumer card of 8–12 GB holds it; the cards alone (too little for a computer as well),
  desk cards only, one card each, no datacenter part;
- 4 × A100 80GB owned, full fine-tuning Qwen2.5-14B: 14.8B × 16–18 B ≈ 240–270 GB of model states, about
  60–67 GB per GPU with ZeRO-3 over four, plus checkpointed activations — it fits what they own, nothing to buy;
- 'only NVIDIA': every option is NVIDIA;
- MD (GROMACS, mixed precision) runs on FP32/FP16 units, so GeForce cards lead; CFD (OpenFOAM, FP64 vector) is
  ranked on the vector FP64 rate (H100 PCIe 26 TFLOPS), which GeForce cards barely have (1/64 rate).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from advisor.cli import main
from advisor.engine import Advisor
from knowledge import load_catalog
from tests.fakes.script import one, turn

Options = list[dict[str, Any]]


def _domestic(opts: Options) -> bool:
    return bool(opts) and all(load_catalog().gpu(o["gpu_id"]).domestic for o in opts) and all(
        o["total_price_cny"] is None or o["total_price_cny"] <= 1_000_000 for o in opts)


def _cards_only(opts: Options) -> bool:
    return all(o["host_price_usd"] == 0 and (o["total_price_usd"] or 0) <= 2500 for o in opts) and any(
        o["gpu_id"] == "rtx-3090" and o["count"] == 1 for o in opts)


def _hobbyist(opts: Options) -> bool:
    top = load_catalog().gpu(opts[0]["gpu_id"])
    return opts[0]["count"] == 1 and top.tier.value == "consumer" and 8 <= top.memory_gb <= 12 and all(
        o["tier"] != "datacenter" and o["host_price_usd"] == 0 and (o["total_price_usd"] or 0) <= 1500 for o in opts)


def _owned(opts: Options) -> bool:
    top = opts[0]
    return (top["gpu_id"], top["count"], top["total_price_usd"]) == ("a100-sxm-80gb", 4, 0) and \
        "ZeRO-3" in top["why"]["text"] and "checkpointing" in top["why"]["text"]


def _nvidia(opts: Options) -> bool:
    return bool(opts) and {o["vendor"] for o in opts} == {"NVIDIA"}


def _md(opts: Options) -> bool:
    """Mixed-precision MD runs on FP32: the most FP32 $20k buys leads, and consumer cards give the most of it."""
    top = opts[0]
    return load_catalog().gpu(top["gpu_id"]).tier.value == "consumer" and top["count"] > 1 and all(
        (o["total_price_usd"] or 0) <= 20_000 for o in opts)


def _cfd(opts: Options) -> bool:
    first = {o["gpu_id"]: o for o in opts}.get("h100-pcie")  # 26 TFLOPS of vector FP64 a card, as many as fit $60k
    return first is not None and first["fp64_tflops"] / first["count"] == 26 and not any(
        load_catalog().gpu(o["gpu_id"]).tier.value == "consumer" for o in opts[:5])


SCENARIOS: list[tuple[str, list[str], Callable[[Options], bool]]] = [
    ("信创要求，只能用国产卡，预算 100 万元，部署 Qwen2.5-72B 推理",
     ["--workload", "inference", "--model", "qwen2.5-72b", "--domestic", "--budget-cny", "1000000"], _domestic),
    ("I already have a PC. $2,500 for the GPU only: QLoRA fine-tune Llama-3.1-8B",
     ["--workload", "training", "--method", "qlora", "--model", "llama-3.1-8b", "--budget-usd", "2500",
      "--no-host-cost", "--region", "global"], _cards_only),
    ("Hobbyist here, $1,500 in total, I want to run Llama-3.1-8B at home",
     ["--workload", "inference", "--model", "llama-3.1-8b", "--budget-usd", "1500", "--no-host-cost",
      "--chassis", "tower", "--region", "global", "--precision", "Q4_K_M", "--framework", "llama.cpp"], _hobbyist),
    ("We own 4x A100 80GB. Can we full fine-tune Qwen2.5-14B on them?",
     ["--workload", "training", "--method", "full", "--model", "qwen2.5-14b", "--have", "A100 SXM 80GB x4",
      "--region", "global"], _owned),
    ("only NVIDIA please: serve Qwen2.5-32B to 10 users, budget $40k",
     ["--workload", "inference", "--model", "qwen2.5-32b", "--concurrency", "10", "--vendor", "NVIDIA",
      "--budget-usd", "40000", "--region", "global"], _nvidia),
    ("GROMACS molecular dynamics, mixed precision, budget $20k",
     ["--workload", "scientific", "--code", "gromacs", "--budget-usd", "20000", "--region", "global"], _md),
    ("OpenFOAM CFD in double precision, budget $60k",
     ["--workload", "scientific", "--code", "openfoam", "--budget-usd", "60000", "--region", "global"], _cfd),
]


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize(("text", "cli", "expert"), SCENARIOS, ids=[s[2].__name__.strip("_") for s in SCENARIOS])
def test_chat_and_cli_agree_and_fit_the_buyer(adv: Advisor, capsys: pytest.CaptureFixture[str], text: str,
                                              cli: list[str], expert: Callable[[Options], bool]) -> None:
    chat = one(turn(adv, adv.new_session(), text), "recommend").result["options"]
    assert main(["recommend", *cli, "--json"]) == 0
    line = json.loads(capsys.readouterr().out)["options"]
    assert [(o["gpu_id"], o["count"]) for o in chat[:5]] == [(o["gpu_id"], o["count"]) for o in line[:5]]
    assert expert(chat), [(o["gpu_id"], o["count"], o["total_price_usd"]) for o in chat[:6]]
