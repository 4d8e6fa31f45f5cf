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
    rec = recommend(RecommendInput(workload="inference", model="qwen2.5-72b", precision="int4", concurrency=20,
                                   chassis="rack", region="global"))
    pro = [o for o in rec.options if o.gpu_id.startswith("rtx-pro-6000")]
    assert pro and all(o.host_price_usd == 15_000 for o in pro)


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_the_chat_passes_the_allowed_gpus(adv: Advisor) -> None:
    r = turn(adv, adv.new_session(), "We can only buy L40S or H100. Serve Llama-3.1-70B fp8 to 30 users, "
                                     "budget $200k")
    rec = one(r, "recommend")
    assert {o["gpu_id"] for o in rec.result["options"]} <= {"l40s", "h100-sxm"} and "L40S" in r.text
