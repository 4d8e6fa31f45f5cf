"""The classes blind batch ak found (bench/blind/batch-ak), each fixed by mechanism: a monthly budget is no API bill
and no purchase budget, 'together' as a provider is no pooling of cards, an image model named beside local LLM use
is the side job, 'which of these' after a comparison compares them again, and a speed question with a quant and a
context after a training turn is a serving question."""

from __future__ import annotations

import math

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize(("text", "budget", "api"), [
    ("买一张5090、租云上A100/H100、还是直接调API？每月预算大概3000块", None, None),
    ("每月 API 预算 5000 元，自建划算吗", None, 5000.0),
    ("预算3000，买什么卡", 3000.0, None),
    ("monthly budget $500 for cloud GPUs", None, None),
])
def test_a_monthly_budget_is_neither_an_api_bill_nor_a_price(text: str, budget: float | None,
                                                             api: float | None) -> None:
    said = parse(text)
    assert (said.budget.amount if said.budget else None, said.api_monthly_spend.amount
            if said.api_monthly_spend else None) == (budget, api)


@pytest.mark.parametrize(("text", "pooled"), [
    ("would it be cheaper to just use a fine-tuning API like openai or together?", False),
    ("can I run the 3090 and the 3060 together?", True),
])
def test_together_the_provider_is_no_pooling(text: str, pooled: bool) -> None:
    assert parse(text).pooled is pooled


def test_local_llms_with_an_image_model_on_the_side_compare_the_cards_for_llms(adv: Advisor) -> None:
    said = parse("is AMD any good for local LLMs now? looking at a 7900 XTX 24gb for about £800 vs a used 3090 for "
                 "~£650. mostly use ollama but want to try comfyui / flux image gen too")
    assert (said.model, said.side_media) == (None, "flux.1-dev")
    _, (_, r) = talk(adv, said.text, "if i want to run a 32B model at decent quality with 16k context, which of "
                                     "these would you pick?")
    assert r.mode == "compare"
    assert {c.arguments["gpu"] for c in ok_calls(r, "size_inference")} >= {"rx-7900-xtx", "rtx-3090"}
    assert all(c.arguments.get("context") == 16_384 for c in ok_calls(r, "size_inference"))


def test_a_speed_question_with_a_quant_after_a_training_turn_is_a_serving_one(adv: Advisor) -> None:
    session, _ = talk(adv, "想搞两张3090跑本地大模型+炼丹（SD/flux lora），预算1.5w以内")
    adv.reply("两张3090的话跑70B的模型，Q4量化，每秒能出几个字？上下文开到32k行不行", session)
    assert session.profile.use_case == "inference" and session.profile.context_tokens == 32_768


def test_a_code_named_in_a_follow_up_is_answered_on_the_cards_at_hand(adv: Advisor) -> None:
    """Fluent's GPU solver: CUDA only, single or double precision (Ansys's GPU-solver feature page), one case spread
    over GPUs; AlphaFold runs one job per GPU. The answer leads, on each card compared."""
    _, (*_, r) = talk(adv, "我们组做分子动力学（GROMACS和AMBER），预算20万，4090还是5090？",
                      "组里还有做CFD的同学用Fluent，他那个能用这批卡吗？要不要考虑多卡")
    first = r.text.split("\n\n")[0]
    assert first.startswith("**Ansys Fluent (GPU solver) 在这批卡上") and "GeForce RTX 4090 能跑" in first
    assert "GeForce RTX 5090 能跑" in first and "一个算例可以分到多张卡上" in first
    _, (*_, af) = talk(adv, "冷冻电镜平台，RELION，上4张卡，选A6000还是4090？",
                       "隔壁组想顺便跑AlphaFold3，共用这台机器行不行")
    assert af.text.startswith("**AlphaFold / OpenFold 在这批卡上") and "一个任务只用一张卡" in af.text.split("\n\n")[0]


def test_a_card_without_the_codes_build_is_said_so() -> None:
    from advisor.code_fit import _card_verdict
    from knowledge.codes import find_code

    vasp = find_code("vasp")
    assert vasp is not None
    assert "没有 GPU 版本" in _card_verdict(vasp, "mi300x", "zh")
    assert "FP64 只有" in _card_verdict(vasp, "rtx-4090", "zh")


def test_a_companys_headcount_is_not_its_customers_traffic(adv: Advisor) -> None:
    """20 staff; 5,000 chats a day × 6 turns = 30,000 requests of ~1,000 in / 300 out: 9M output tokens a day,
    9M / 86,400 × 3 = 312 tokens/s at the busiest hour, 15.6 → 16 replies at 20 tokens/s — not the 20 staff."""
    said = parse("我们是个20人的电商公司，想做AI客服，自己部署划算还是调API划算？"
                 "每天大概5000个咨询，每个对话平均来回6轮")
    assert said.daily_requests == 30_000
    _, (r,) = talk(adv, said.text)
    rec = next(c for c in ok_calls(r, "recommend") if not c.call_id.startswith("alt_"))
    assert rec.arguments["concurrency"] == 16
    assert "20 人同时在用" not in r.text


def test_rent_or_buy_with_a_count_asked_prices_the_count_that_finishes_in_time(adv: Advisor) -> None:
    """6 × 7e9 × 2e12 FLOP at 989.4 TFLOPS × MFU 0.242 ≈ 97,400 GPU-hours; in 61 days (1,464 h) that is 67 GPUs,
    72 in whole nodes — and renting against buying is priced on those 72, not on one node of 8."""
    _, (r,) = talk(adv, "创业团队，要从头预训练一个7B的模型，数据大概2T token，想两个月内训完，"
                        "需要多少张H100？租还是买？")
    (rent,) = ok_calls(r, "rent_vs_buy")
    assert rent.arguments["count"] == 72 and "72 张" in r.text.splitlines()[0]


def test_racks_said_are_filled_and_the_bill_is_for_all_of_them(adv: Advisor) -> None:
    """A 12 kW rack holds one 10.2 kW DGX H100 (⌊12,000 / 10,724⌋ = 1): 20 racks hold 20 nodes, 160 cards, and the
    year's electricity is for all 20 at PUE 1.4."""
    _, (_, r) = talk(adv, "机房每个机柜供电只有12kW，想上8卡H100 SXM服务器（DGX H100那种），一个柜子能放几台？",
                     "我们现在有20个这样12kW的柜子，如果全上H100，总共能放多少张卡？PUE按1.4算一年电费多少，电价0.8元/度")
    (cost,) = ok_calls(r, "machine_cost")
    result = cost.result
    assert result["nodes"] == 20 and result["nodes_per_rack"] == 1
    assert math.isclose(result["yearly_kwh"], result["total_wall_w"] / 1000 * 8760 * 1.4, rel_tol=1e-3)
    assert r.text.startswith("**机柜**") and "160 张卡" in r.text.splitlines()[0]


@pytest.mark.parametrize(("text", "asks"), [
    ("what should the spec say for power and rack, and what is the total kW", ["rack", "energy_cost"]),
])
def test_power_and_rack_wording_asks_the_rack_and_the_power(text: str, asks: list[str]) -> None:
    assert parse(text).asks == asks


def test_a_tender_is_not_repeated_for_a_what_if_about_the_machines_split(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "I'm writing a tender spec, domestic accelerators only, Qwen2.5-72B inference for ~50 "
                          "internal users. What should the spec say?",
                     "if they insist on 2 servers for redundancy instead of one how does the budget and power change")
    assert "Tender specification" not in r.text


def test_adding_to_an_owned_card_or_switching_compares_the_two_machines(adv: Advisor) -> None:
    """An owned 3090 plus a second one against selling it for a 5090: 2× 3090 (48 GB) hold 70B at Q4_K_M
    (~45 GB), one 5090 (32 GB) does not."""
    session, (r,) = talk(adv, "got a 3090 24gb already, thinking of adding a second used one to run llama 3.3 70b "
                              "at q4. will that fit? or should i just sell it and get a 5090")
    assert session.profile.compare == ["rtx-3090", "rtx-5090"]
    assert session.profile.compare_counts == {"rtx-3090": 2, "rtx-5090": 1}
    assert r.text.startswith("**2× GeForce RTX 3090 holds Llama-3.3-70B-Instruct")


def test_an_fp8_model_on_a_card_without_fp8_says_how_it_runs(adv: Advisor) -> None:
    """Ascend has no FP8 units: DeepSeek's FP8 weights are deployed as W8A8 INT8 there (one byte a weight either
    way), and the headline says so instead of 'runs at FP8' alone."""
    _, (r,) = talk(adv, "只能用国产卡，部署满血 DeepSeek-R1 671B，20 人同时用，预算 300 万，怎么配？")
    rec = next(c for c in ok_calls(r, "recommend") if not c.call_id.startswith("alt_")).result
    top = next(o for o in rec["options"] if o["total_price_usd"] is not None)
    assert top["vendor"] == "Huawei" and top["precision"] == "int8"
    assert "实际按 W8A8 INT8 部署" in r.text.splitlines()[0]
