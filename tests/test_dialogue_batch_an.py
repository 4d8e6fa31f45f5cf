"""The classes blind batches am and an found, each fixed by mechanism: cards added to those owned, machines counted
with 台 and 'of those servers', a UPS and racks for every machine said, a three-phase feed, a catalogued system's own
cards, an FP8 model on a card without FP8, the largest quant that fits, a comparison against the pick, a baseboard
card a budget cannot buy, mainstream CPUs, a dismissed model, a conditional purchase, the renting market said."""

from __future__ import annotations

import math
import re

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.fmt import seconds
from advisor.nlu import parse
from tools.compat_rules.types import parse_mains


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize("text", [
    "手上有一张3090，想再收一张二手3090跑70b，两张能跑llama3 70b不，q4的话速度多少",
    "have a 3090 24gb already, want to run llama 3.3 70b. is buying a second used 3090 worth it or get a 5090?",
])
def test_a_card_added_to_the_one_owned_makes_two(adv: Advisor, text: str) -> None:
    session, _ = talk(adv, text)
    p = session.profile  # weighed against a 5090 the two are an option compared; alone, the plan
    assert p.compare_counts.get("rtx-3090") == 2 if p.compare else (p.gpu, p.gpu_count) == ("rtx-3090", 2)


@pytest.mark.parametrize(("text", "cpu"), [
    ("电源850w够吗，cpu是13600k", "core-i5-13600k"),
    ("my cpu is a Ryzen 7 7700", "ryzen-7-7700"),
    ("my cpu is a ryzen 9 7950x", "ryzen-9-7950x"),  # the longest name, not 'ryzen 9' alone
])
def test_mainstream_cpus_are_read(text: str, cpu: str) -> None:
    assert parse(text).cpu == cpu


def test_machines_said_with_tai_are_nodes_and_the_ups_carries_them_all(adv: Advisor) -> None:
    said = parse("配UPS的话，4台H100要多大容量，后备15分钟")
    assert (said.nodes, said.gpus[0].count, said.asked_attribute, said.ups_minutes) == (4, 8, None, 15.0)
    _, (_, r) = talk(adv, "机房要上4台8卡H20服务器，每台功耗大概多少，单机柜12kW能放几台？",
                     "配UPS的话，4台H100要多大容量，后备15分钟")
    node = ok_calls(r, "machine_cost")[0].result["node_wall_w"]  # type: ignore[index]
    watts = node * 4
    # the battery carries four machines for a quarter of an hour through a 0.9-efficient inverter
    assert f"{watts:,.0f} W" in r.text and f"{watts * 15 / 60 / 0.9 / 1000:.1f} kWh" in r.text
    assert "H100 SXM 80GB：80 GB" not in r.text  # no card sheet beside the UPS answer


def test_two_of_those_servers_are_machines_and_their_cache_is_pooled(adv: Advisor) -> None:
    said = parse("and if we buy two of those servers, roughly how many concurrent users at 4k context?")
    assert (said.nodes, said.gpu_count, said.added_cards) == (2, None, None)
    _, (_, _, r) = talk(adv, "must be domestic hardware (xinchuang): Qwen2.5-72B on an 8-card Ascend 910B server?",
                        "what if we want to run the full deepseek R1 671B instead, is one 8x910B server enough?",
                        "and if we buy two of those servers, roughly how many concurrent users at 4k context?")
    serving = ok_calls(r, "perf_serving")[0]
    assert (serving.arguments["count"], serving.arguments["precision"]) == (16, "int8")  # W8A8: no FP8 on Ascend


def test_an_fp8_model_on_ascend_is_sized_as_w8a8(adv: Advisor) -> None:
    _, (r,) = talk(adv, "is one 8x Ascend 910B server enough for DeepSeek R1 671B?")
    assert ok_calls(r, "size_inference")[0].arguments["precision"] == "int8"
    assert "native fp8" not in r.text and "W8A8 INT8" in r.text


def test_a_catalogued_system_keeps_its_own_cards(adv: Advisor) -> None:
    _, (r,) = talk(adv, "Our racks are rated 17 kW each. How many DGX B200s per rack? and what about HGX H200 boxes "
                        "instead?")
    info = ok_calls(r, "system_info")[0]
    assert "gpu" not in info.arguments and "8× B200 SXM 180GB" in r.text


def test_a_three_phase_feed_and_a_row_of_racks(adv: Advisor) -> None:
    assert parse("would the PDUs need changing — currently 2x 208V 30A three-phase per rack").mains == "208v-30a-3p"
    mains = parse_mains("208v-30a-3p")
    assert mains.continuous_limit_w == pytest.approx(208 * 30 * math.sqrt(3) * 0.8, abs=0.1)
    _, (_, r2, r3) = talk(adv, "Our racks are rated 17 kW each, air cooled. HGX H200 boxes, how many per rack?",
                          "we have 10 racks like that. how many GPUs total can we host, and would the PDUs need "
                          "changing — currently 2x 208V 30A three-phase per rack",
                          "And cooling-wise, what airflow are we talking about for that whole row?")
    assert "10 racks hold **10 nodes, 80 cards**" in r2.text
    watts = ok_calls(r3, "machine_cost")[0].result["total_wall_w"]  # type: ignore[index]
    assert f"{3.16 * watts / 20:,.0f} CFM" in r3.text  # CFM = 3.16 × W ÷ ΔT (°F) at a 20 °F rise


def test_a_total_of_gpus_is_counted_in_racks_with_the_facility_power(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "how many 8-gpu HGX H200 servers per 20kW rack?",
                     "we need 64 GPUs total for training. how many racks, and total facility power incl. cooling at "
                     "PUE 1.4?")
    cost = ok_calls(r, "machine_cost")[0]
    assert (cost.arguments["count"], cost.arguments["nodes"]) == (8, 8)
    total = cost.result["total_wall_w"]  # type: ignore[index]
    assert "8 nodes need **8** racks" in r.text and f"{total * 1.4 / 1000:,.0f} kW" in r.text


@pytest.mark.parametrize(("text", "asks"), [
    ("It must sit in an office cupboard. Is noise/heat a problem? we only have a normal 230V 16A socket",
     {"noise", "heat"}),
    ("And cooling-wise, what airflow are we talking about?", {"heat"}),
])
def test_noise_heat_and_airflow_are_asked(text: str, asks: set[str]) -> None:
    assert asks <= set(parse(text).asks)


def test_renting_instead_weighs_rent_against_buy() -> None:
    said = parse("What if we rather rent cloud GPUs in a German datacenter instead, whats the monthly cost compared?")
    assert said.kind.value == "rent_vs_buy"


def test_a_dismissed_model_and_a_conditional_purchase() -> None:
    said = parse("ok forget deepseek. if i go llama 70b or qwen 72b class at fp8, how many users could the 4x5090 "
                 "serve?")
    assert said.model == "llama-3.1-70b"
    bought = parse("and if we bought 4x RTX 5090 with the budget instead, could we do the same job, how long?")
    assert not bought.existing and bought.gpus[0].count == 4


def test_the_market_said_prices_the_rented_run(adv: Advisor) -> None:
    assert parse("租的话大概要花多少钱，按国内行情").region == "cn"
    _, (_, r) = talk(adv, "我们团队要从头预训练一个7B模型，数据1T token，用24张H100，要多久",
                     "租的话大概要花多少钱，按国内行情")
    timed = ok_calls(r, "training_time")[0]
    from tools.rentals import typical_rate_usd

    rate, offers = typical_rate_usd("h100-sxm", "cn")
    assert offers >= 1 and timed.result["price_per_gpu_hour"] == pytest.approx(rate)  # type: ignore[index]


def test_customers_at_peak_send_the_traffic_not_the_staff(adv: Advisor) -> None:
    _, (r,) = talk(adv, "我们是20人的小公司，想做个客服机器人，峰值大概30个客户同时问，调API一个月多少钱？")
    api = ok_calls(r, "api_cost")[0]
    # 30 at once is about a tenth of those who ask in a day (the share that sizes a head count at peak): 300
    # people, 10 questions each
    assert api.arguments["daily_requests"] == 300 * 10


def test_a_lower_quant_is_the_largest_that_fits(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "thinking of getting a Mac Studio M3 Ultra w/ 512gb to run deepseek v3 locally",
                     "what about the 256gb version, can i still run it at a lower quant?")
    sizes = [c for c in r.tool_calls if c.name == "size_inference" and c.ok]
    chosen = next(c for c in sizes if not c.call_id.startswith("alt_"))
    above = [c for c in sizes if c is not chosen and c.arguments.get("precision") != chosen.arguments["precision"]]
    assert chosen.result["fits"] is True  # type: ignore[index]
    assert above and all(c.result["fits"] is False for c in above)  # type: ignore[index]
    assert f"{chosen.arguments['precision']} is the largest quant of DeepSeek-V3 that fits" in r.text


def test_compared_with_the_pick_per_dollar_and_fp64_share(adv: Advisor) -> None:
    _, (_, r2, r3) = talk(adv, "I run an HPC group, our codes are mostly FP64 — CFD in CUDA Fortran and some VASP. "
                               "RTX cards or datacenter GPUs? Budget ~$200k",
                          "how does that compare to the AMD MI300 for FP64 per dollar? our fortran is CUDA Fortran",
                          "ok and if we spent the same budget on B200 instead of H100, more FP64 or less?")
    assert r2.mode == "compare" and "per $1k" in r2.text
    assert r3.mode == "compare" and "small fraction" not in r3.text  # B200's FP64 is half its FP32
    # an HGX B200 server (four modules at the least) costs more than the budget: said so, not a count no server holds
    assert "$200,000 does not buy a B200 SXM 180GB server" in r3.text


def test_a_budget_too_small_for_a_baseboard_buys_its_pcie_card(adv: Advisor) -> None:
    _, (r,) = talk(adv, "Structural bio lab. GROMACS and cryoSPARC. Got ~£40k. 4090/5090s or A100/H100? How many GPUs "
                        "can we get?")
    assert re.search(r"does not buy a 4- or 8-GPU H100 SXM 80GB server .* it buys \d+× H100 (PCIe|NVL)", r.text)


def test_long_durations_carry_no_false_precision() -> None:
    assert seconds(4840.91) == "4,840 s (~81 min)"
    assert seconds(48.31) == "48.3 s"
    assert seconds(6.114) == "6.11 s"


def test_a_cost_question_gets_no_budget_question(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "老板想自己部署qwen2.5-14b，用两张4090，50人同时用",
                     "整台机器大概多少钱？一年电费多少（商业电1.2元一度）")
    assert "预算大概多少" not in r.text


def test_makers_weighed_are_a_choice_not_one_card(adv: Advisor) -> None:
    said = parse("单位要求全信创不能用英伟达，模型用Qwen2.5-72B，大概50个人用，国产卡选哪个好：昇腾、海光DCU、寒武纪？")
    assert (said.only_vendors, said.gpus) == (["huawei", "hygon", "cambricon"], [])
    _, (r1, _, r3) = talk(adv, said.text, "机房单机柜只有6kW，放得下吗？",
                          "那用300I Duo做推理是不是更省电更便宜？速度差多少")
    options = ok_calls(r1, "recommend")[0].result["options"]  # type: ignore[index]
    makers = {"Huawei", "Hygon", "Cambricon"}
    assert options and all(o["vendor"] in makers for o in options)
    each = next(line for line in r1.text.splitlines() if line.startswith("**各家最合适的"))
    for maker in makers:  # each maker's first option in the ranking, or that none qualifies
        best = next((o for o in options if o["vendor"] == maker), None)
        assert maker in each and (best is None or f"{best['count']}× {best['gpu']}" in each)
    assert r3.mode == "compare"  # the inference card against the pick: power, price and speed side by side


def test_a_what_if_with_a_model_is_sized_beside_the_psu_check(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "have a 3090 24gb already, is buying a second used 3090 worth it for llama 3.3 70b?",
                     "what if i also want 32k context for coding with qwen2.5 coder 32b, and my psu is only 850w?")
    size = ok_calls(r, "size_inference")[0]
    assert (size.arguments["model"], size.arguments["context"]) == ("qwen2.5-coder-32b", 32_768)
    assert "850 W PSU" in r.text


def test_a_tender_for_serving_sizes_the_served_model_and_keeps_brands_open() -> None:
    said = parse("tender spec for a university inference server, must be vendor-neutral (can't name NVIDIA). "
                 "workload: serving 70B-class models to ~100 students + some fine tuning of 7B models")
    assert (said.params_b, said.side_training.params_b if said.side_training else None) == (70.0, 7.0)
    assert not said.excluded_vendors


@pytest.mark.parametrize("text", ["我有一张3090，能跑什么模型？", "what models can I run on a 3090?"])
def test_what_the_cards_at_hand_run(adv: Advisor, text: str) -> None:
    _, (r,) = talk(adv, text)
    sized = {(c.arguments["model"], c.arguments["precision"]): c.result for c in r.tool_calls
             if c.name == "size_inference" and c.ok and c.arguments.get("batch") == 1}
    # a 70B model at 4.8 bits a weight is about 42 GB of file: more than a 24 GB card holds; a 32B at Q4_K_M
    # (about 20 GB) fits
    assert sized[("llama-3.3-70b", "Q4_K_M")]["fits"] is False  # type: ignore[index]
    assert sized[("qwen2.5-32b", "Q4_K_M")]["fits"] is True  # type: ignore[index]
    assert "Qwen2.5-32B" in r.text.split("\n")[3] and ("Q4_K_M" in r.text)
    fitting = [m for (m, p), res in sized.items() if res and res["fits"]]
    assert r.text.startswith(("**一张 GeForce RTX 3090", "**one GeForce RTX 3090")) and fitting


def test_cards_said_owned_become_the_ones_asked_about(adv: Advisor) -> None:
    session, _ = talk(adv, "what models can I run on a 3090?", "I have 8x H100, what can I run?")
    assert (session.profile.gpu, session.profile.gpu_count) == ("h100-sxm", 8)


def test_how_many_to_train_with_no_deadline_finishes_within_a_month(adv: Advisor) -> None:
    _, (r1, r2) = talk(adv, "planning to pretrain a 7B model from scratch on 2T tokens. how many GPU hours on H100 and "
                            "how long with 64 GPUs?", "what if we use B200s instead, and how many nodes")
    assert r1.text.startswith("**About") and "64× H100" in r1.text.split("\n")[0]  # the count said is kept
    run = ok_calls(r2, "training_time")[0].result
    assert run is not None
    # the fewest B200s that finish within 30 days, in whole nodes of 8: GPU-hours ÷ 720 h, rounded up to a node
    need = math.ceil(run["gpu_hours"] / (30 * 24))
    assert f"**{math.ceil(need / 8) * 8}× B200 SXM 180GB**" in r2.text


def test_an_api_bill_is_set_against_the_cheapest_rental_kept_on_all_month(adv: Advisor) -> None:
    _, (r,) = talk(adv, "我们是个创业团队，产品要用Llama 3.1 70B，每个月推理大概5亿tokens，"
                        "调API、租GPU还是自己买卡哪个划算？")
    api = ok_calls(r, "api_cost")[0].result
    best = ok_calls(r, "rent_choices")[0].result["choices"][0]  # type: ignore[index]
    assert api is not None and api["daily_input_tokens"] + api["daily_output_tokens"] == pytest.approx(5e8 / 30.4,
                                                                                                         rel=0.01)
    month = best["hourly"] * 730  # 8,760 hours a year ÷ 12
    assert f"¥{month:,.0f}" in r.text and ("租卡更贵" in r.text) == (api["monthly_cost"] < month)


def test_sources_are_named_by_title_cut_at_a_word() -> None:
    from knowledge.source_titles import SHORT_TITLE, source_title

    assert source_title("S-EPOCH") == "Epoch AI"  # 'Epoch AI, Machine Learning Hardware dataset (CSV snapshot)'
    long = source_title("S-TWEAKTOWN-H20")
    assert len(long) <= SHORT_TITLE + 1 and (not long.endswith("…") or long[:-1] == long[:-1].rstrip())
    assert source_title("https://example.com/x") == "https://example.com/x"  # a URL cited directly stays as it is


def test_how_many_to_train_with_no_data_is_the_count_the_verdict_is_on(adv: Advisor) -> None:
    _, (r,) = talk(adv, "70b 全量微调 得几张 A800")
    counted = int(r.text.split("至少要 ")[1].split(" 张")[0])
    sized = ok_calls(r, "size_training")[0]
    assert sized.arguments["gpus"] == counted and f"**结论：{counted} 张 A800" in r.text
