"""A buyer's constraints are gates: a list of allowed GPUs, a rack chassis (a server host), vendors.

Reasoning: "we can only buy L40S or H100" means nothing else may be offered, whatever it scores; a rack-server
buyer gets a server host (about $15,000 in the catalog's estimates) under any PCIe card, never a desktop."""

from __future__ import annotations

import pytest

from advisor.engine import Advisor
from tests.fakes.script import one, turn
from tools.recommend import RecommendInput, recommend


def test_only_the_listed_gpus_are_offered_and_the_rest_are_ruled_out_with_the_reason() -> None:
    rec = recommend(RecommendInput(workload="inference", model="llama-3.1-70b", precision="fp8", concurrency=30,
                                   budget_usd=200_000, only_gpus=["L40S", "H100"]))
    assert rec.options and {o.gpu_id for o in rec.options} <= {"l40s", "h100-sxm"}
    listed = [r for r in rec.rejected if r.gpu_id == "b200"]
    assert listed and "L40S 48GB" in listed[0].reason.text and "H100 SXM 80GB" in listed[0].reason.text


def test_a_rack_chassis_prices_a_server_host_even_for_workstation_cards() -> None:
    """A server asked for: a small single-socket one for one or two cards, a 2U/4U GPU server for more."""
    rec = recommend(RecommendInput(workload="inference", model="qwen2.5-72b", precision="int4", concurrency=20,
                                   chassis="rack", region="global"))
    pro = [o for o in rec.options if o.gpu_id.startswith("rtx-pro-6000")]
    assert pro and all(o.host_price_usd == (6_000 if o.count <= 2 else 15_000) for o in pro)


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_the_chat_passes_the_allowed_gpus(adv: Advisor) -> None:
    r = turn(adv, adv.new_session(), "We can only buy L40S or H100. Serve Llama-3.1-70B fp8 to 30 users, "
                                     "budget $200k")
    rec = one(r, "recommend")
    assert {o["gpu_id"] for o in rec.result["options"]} <= {"l40s", "h100-sxm"} and "L40S" in r.text


def test_cfd_is_ranked_on_vector_fp64_and_dense_algebra_on_tensor_cores() -> None:
    """An A100 does 9.7 TFLOPS of FP64 on its vector units and 19.5 with tensor cores (datasheet); stencil codes
    (CFD, FEM) see the first, dense LU/GEMM the second. An H100 PCIe: 26 vs 51."""
    cfd = recommend(RecommendInput(workload="scientific", budget_usd=60_000, region="global"))
    dense = recommend(RecommendInput(workload="scientific", budget_usd=60_000, region="global", matrix_n=60_000))
    for rec, a100, h100 in ((cfd, 9.7, 26), (dense, 19.5, 51)):
        per_card = {o.gpu_id: (o.fp64_tflops or 0) / o.count for o in rec.options}  # as many as $60k buys
        assert per_card.get("a100-pcie-80gb") in (None, pytest.approx(a100))
        assert per_card["h100-pcie"] == pytest.approx(h100)
    assert any("vector units" in n.text for n in cfd.assumptions)
    assert any("tensor/matrix cores" in n.text for n in dense.assumptions)


def test_a_named_code_decides_the_fp64_rate_in_the_chat(adv: Advisor) -> None:
    vasp = one(turn(adv, adv.new_session(), "VASP calculations, budget $60k, which GPUs?"), "recommend")
    foam = one(turn(adv, adv.new_session(), "OpenFOAM 双精度 CFD，预算 40 万，买什么卡"), "recommend")
    assert vasp.arguments["fp64_kind"] == "matrix" and foam.arguments["fp64_kind"] == "vector"


@pytest.mark.parametrize(("text", "vendors"), [
    ("只能买华为的卡，部署 DeepSeek-R1-Distill-Qwen-32B，预算 100 万", {"Huawei"}),
    ("only NVIDIA please: serve Qwen2.5-32B to 10 users, budget $40k", {"NVIDIA"}),
])
def test_a_vendor_restriction_is_a_gate(adv: Advisor, text: str, vendors: set[str]) -> None:
    rec = one(turn(adv, adv.new_session(), text), "recommend")
    assert set(rec.arguments["vendors"]) == vendors
    assert rec.result["options"] and {o["vendor"] for o in rec.result["options"]} == vendors


def test_owning_consumer_cards_means_a_desktop_to_add_to(adv: Advisor) -> None:
    """Two RTX 3090s sit in a desktop: what to buy next is a desktop card, not an OAM/SXM server module."""
    r = turn(adv, adv.new_session(), "We own 2x RTX 3090. Can we QLoRA Llama-3.1-70B on them?")
    rec = one(r, "recommend")
    assert rec.arguments["chassis"] == "tower"
    assert {o["tier"] for o in rec.result["options"]} <= {"consumer", "workstation"}


def test_an_fp8_kv_cache_is_offered_when_the_cache_is_what_does_not_fit(adv: Advisor) -> None:
    """Llama-3.1-70B's KV cache is 2 × 80 layers × 8 KV heads × 128 × 2 B = 327,680 B per token at 16 bit; 8 users
    × 32,768 tokens hold 85.9 GB, 42.9 GB per GPU over two H100s — with 36.3 GB of FP8 weights it misses 78.5 GB.
    At FP8 the cache halves to 21.5 GB per GPU: 36.3 + 21.5 + 2.5 activations + 0.5 overhead = 60.8 GB fits."""
    r = turn(adv, adv.new_session(), "Llama-3.1-70B fp8 on 2x H100, 32k context, 8 users")
    kv = [c for c in r.tool_calls if c.ok and c.name == "size_inference" and c.arguments.get("kv_dtype") == "fp8"]
    assert kv and kv[0].result["fits"] and kv[0].result["per_gpu_bytes"] == pytest.approx(60.8e9, rel=0.01)
    assert "FP8 KV cache" in r.text
