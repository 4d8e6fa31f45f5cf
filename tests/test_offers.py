"""Rental offers by provider and complete servers as buyable units (issue 37, item 6): the data is sourced and
dated, the typical rental rate is the median of the offers as the data file gives them, a complete server is
priced as its source prices it, and the chat answers 'DGX B200 多少钱' with the server, not one card."""

from __future__ import annotations

import datetime as dt
import statistics
import tomllib
from pathlib import Path

import pytest
from fakes.script import one, talk

from advisor.engine import Advisor
from advisor.nlu.rules import parse
from knowledge import load_catalog
from knowledge.offers import rental_offers, system_resolver, systems
from tools.rent import RentVsBuyInput, rent_vs_buy
from tools.rentals import RentalPricesInput, rental_prices
from tools.systems import SystemInfoInput, system_info

DATA = Path(__file__).parents[1] / "knowledge" / "data"
CHECKED = dt.date(2026, 12, 7)
RENTALS = tomllib.loads((DATA / "rentals.toml").read_text())["offer"]
SERVERS = {s["id"]: s for s in tomllib.loads((DATA / "servers.toml").read_text())["system"]}


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_every_offer_names_a_catalog_gpu_a_source_and_a_past_date() -> None:
    ids = {g.id for g in load_catalog().gpus}
    offers = rental_offers()
    assert len(offers) >= 100 and len({o.provider for o in offers}) >= 15
    assert {o.currency for o in offers} == {"USD", "CNY"}
    for o in offers:
        assert o.gpu in ids and o.source.startswith("http") and o.as_of <= CHECKED


def test_every_system_is_sourced_dated_and_found_by_its_names() -> None:
    found = systems()
    assert len(found) >= 25 and len({s.id for s in found}) == len(found)
    for s in found:
        assert s.sources and s.as_of <= CHECKED
        assert s.price is None or (s.price.source.startswith("http") and s.price.as_of <= CHECKED)
        for name in [s.name, *s.aliases]:
            assert system_resolver().get(name).id == s.id, name


def _median_on_demand(gpu: str) -> float:
    """From the data file: the median hourly on-demand dollar offer outside China."""
    return statistics.median(o["per_gpu_hour"] for o in RENTALS if o["gpu"] == gpu and o["region"] != "cn"
                             and o["billing"] == "on-demand" and "per_gpu_hour" in o)


def test_the_typical_rate_is_the_median_of_the_offers_and_the_list_runs_cheapest_first() -> None:
    r = rental_prices(RentalPricesInput(gpu="H100 SXM", currency="USD"))
    assert r.typical_basis == "median_on_demand"
    assert r.typical_per_gpu_hour == pytest.approx(_median_on_demand("h100-sxm"), abs=0.01)
    prices = [o.per_gpu_hour for o in r.offers]
    # a buyer outside China is shown no Chinese provider's offer
    assert prices == sorted(prices) and r.offers_total == sum(o["gpu"] == "h100-sxm" and o["region"] != "cn"
                                                              for o in RENTALS)


def test_a_chinese_buyer_pays_the_china_offer_and_sees_it_first() -> None:
    china = [o for o in RENTALS if o["gpu"] == "a100-sxm-80gb" and o["region"] == "cn"]
    assert len(china) == 1 and china[0]["billing"] == "monthly"
    r = rental_prices(RentalPricesInput(gpu="a100-sxm-80gb", currency="CNY"))
    # a monthly rent, no hours given: spread over 8,760 h / 12 = 730 h
    assert r.typical_per_gpu_hour == pytest.approx(china[0]["per_gpu_month"] / 730, abs=0.01)
    assert r.offers[0].region == "cn" and r.offers[0].monthly_only


def test_a_gpu_nobody_rents_says_so() -> None:
    r = rental_prices(RentalPricesInput(gpu="tesla-p40"))
    assert r.offers == [] and any(a.id == "perf.rentals.none" for a in r.assumptions)


def test_a_complete_server_adds_up_its_cards_and_keeps_its_price_basis() -> None:
    r = system_info(SystemInfoInput(name="DGX B200"))
    # NVIDIA's DGX B200 guide: 8 × B200, 1,440 GB of HBM together, 14.3 kW, 10U
    assert (r.gpu_count, r.gpu_memory_total_bytes, r.max_power_w, r.rack_units) == (8, 1440e9, 14_300, 10)
    assert r.price is not None and r.price.amount == SERVERS["dgx-b200"]["price"]["usd"]
    assert r.price.kind == "reported" and r.price.stale
    rack = system_info(SystemInfoInput(name="GB200 NVL72"))
    assert rack.gpu_id is None and rack.gpu_memory_total_bytes is None and rack.form == "rack"


def test_buying_eight_cards_that_a_catalogued_server_holds_costs_that_server() -> None:
    r = rent_vs_buy(RentVsBuyInput(gpu="h100-sxm", count=8, months=3))
    assert r.purchase == SERVERS["dgx-h100"]["price"]["usd"] and r.host is None
    assert any(a.id == "perf.rent.system" for a in r.assumptions)
    quoted = rent_vs_buy(RentVsBuyInput(gpu="h100-sxm", count=8, months=3, purchase_price=150_000))
    assert quoted.purchase == 150_000  # the buyer's own quote wins
    four = rent_vs_buy(RentVsBuyInput(gpu="h100-sxm", count=4, months=3))
    assert not any(a.id == "perf.rent.system" for a in four.assumptions)  # no 4-GPU server catalogued


def test_a_grey_market_server_never_prices_a_purchase() -> None:
    r = rent_vs_buy(RentVsBuyInput(gpu="h100-sxm", count=8, months=3, currency="CNY"))
    assert r.purchase != SERVERS["cn-8x-h100-grey"]["price"]["cny"]


@pytest.mark.parametrize(("text", "nodes"), [("two DGX H100 for deepseek v3", 2), ("Can a DGX H100 serve it?", 1)])
def test_a_server_named_stands_for_its_cards_counted_per_box(text: str, nodes: int) -> None:
    p = parse(text, load_catalog())
    assert p.systems == ["dgx-h100"] and p.nodes == nodes
    assert [(g.gpu, g.count) for g in p.gpus] == [("h100-sxm", 8)]


def test_a_server_owned_is_owned_hardware() -> None:
    p = parse("我们有一台 Atlas 800T A2，能跑 DeepSeek-V3 吗", load_catalog())
    assert p.existing and (p.existing[0].gpu, p.existing[0].count) == ("ascend-910b", 8) and not p.gpus


@pytest.mark.parametrize(("text", "lead"), [
    ("How much is a DGX B200?", "**NVIDIA DGX B200: 8× B200 SXM 180GB (1,440 GB of card memory together) — about $"),
    ("What's inside an Atlas 800 A3 and what does it cost?",
     "**Huawei Atlas 800I A3 / 800T A3 SuperPoD server: 8× Ascend 910C (1,024 GB of card memory together) — no "
     "public price; from catalog prices about $"),
    ("GB200 NVL72 price", "**NVIDIA GB200 NVL72: 72× Blackwell GPU"),
])
def test_a_system_asked_about_is_answered_as_the_system(adv: Advisor, text: str, lead: str) -> None:
    _, (r,) = talk(adv, text)
    assert r.text.startswith(lead), r.text.splitlines()[0]


@pytest.mark.parametrize(("text", "status", "system"), [
    ("DGX B200 多少钱", "B200 SXM 180GB 在中国大陆买不到新卡",
     "**NVIDIA DGX B200：8× B200 SXM 180GB（显存合计 1,440 GB），约 ¥"),
    ("8卡H200整机多少钱", "H200 SXM 141GB 在中国大陆：",
     "**8 卡 H200 服务器（国内渠道，2025 年 12 月获准出口后）：8× H200 SXM 141GB（显存合计 1,128 GB），约 ¥1,500,000"),
    ("DGX H100 多少钱，预算 200 万够吗", "H100 SXM 80GB 在中国大陆买不到新卡", "**NVIDIA DGX H100：8× H100"),
])
def test_a_buyer_in_china_hears_a_servers_status_before_its_price(adv: Advisor, text: str, status: str,
                                                                   system: str) -> None:
    _, (r,) = talk(adv, text)
    lines = r.text.splitlines()
    assert status in lines[0] and any(line.startswith(system) for line in lines[1:4]), lines[:4]


def test_the_price_of_several_cards_is_the_price_of_all_of_them(adv: Advisor) -> None:
    usd = load_catalog().gpu("h200-sxm").price.usd  # type: ignore[union-attr]
    _, (r,) = talk(adv, "what would a whole 8x H200 server cost?")
    cost = one(r, "machine_cost").result
    assert cost["cards_price"] == pytest.approx(8 * usd) and cost["host_price"] > 0
    assert r.text.startswith("**Whole build:** 8× H200 SXM 141GB")
    _, (cards,) = talk(adv, "两张4090多少钱")
    assert cards.text.startswith("**2 张 GeForce RTX 4090：显卡约 ¥") and "不含主机" in cards.text.splitlines()[0]


def test_a_rent_answer_lists_providers_with_dates(adv: Advisor) -> None:
    _, (r,) = talk(adv, "8 H100s, rent or buy for a 3 month project?")
    offers = one(r, "rental_prices").result["offers"]
    assert offers and all(f"{o['provider']} · " in r.text and o["as_of"] in r.text for o in offers[:5])
    assert "Buying means one complete NVIDIA DGX H100" in r.text


@pytest.mark.parametrize(("text", "providers"), [
    ("cheapest place to rent a single H100 right now?", []),
    ("runpod vs vast for 4090s, whats the hourly diff?", ["RunPod", "Vast.ai"]),
    ("8卡H100租两个月，阿里云和lambda、runpod哪个便宜", ["阿里云 (Alibaba Cloud)", "Lambda", "RunPod"]),
    ("哪个平台租 A100 最便宜", []),
])
def test_where_to_rent_is_a_rent_question_with_the_providers_named(text: str, providers: list[str]) -> None:
    p = parse(text, load_catalog())
    assert p.kind == "rent_vs_buy" and p.asks_where_rent and p.providers == providers


def test_an_ordinary_word_is_no_provider_outside_a_rental_question() -> None:
    assert parse("a vast amount of data on 4 H100s", load_catalog()).providers == []


def test_where_to_rent_leads_with_the_offers_and_keeps_asking_it(adv: Advisor) -> None:
    _, (first, second) = talk(adv, "runpod vs vast for 4090s, whats the hourly diff?", "what about an H100 instead")
    assert first.text.startswith("**Of the providers you named, RunPod")
    assert second.mode == "rent" and second.text.startswith("**Of the providers you named")
    assert one(second, "rental_prices").arguments["gpu"] == "h100-sxm"
    _, (china,) = talk(adv, "8卡H100租两个月，阿里云和lambda、runpod哪个便宜")
    assert "阿里云的 H100 SXM 80GB 价格没有带日期的记录" in china.text


def test_a_follow_up_on_a_server_stays_on_it(adv: Advisor) -> None:
    _, (_, versus, power) = talk(adv, "how much is a DGX H200 and what do you get in it",
                                 "vs DGX B200? worth the jump?", "how much power does it draw, can we air cool it")
    assert versus.text.startswith("**NVIDIA DGX H200 vs NVIDIA DGX B200: 8× H200 SXM 141GB vs 8× B200 SXM 180GB")
    assert power.mode == "spec" and "kW" in power.text.splitlines()[0]
    _, (_, market) = talk(adv, "how much is a DGX H200 and what do you get in it",
                          "can we sell it to a customer in China?")
    assert market.text.startswith("**H200 SXM 141GB in mainland China: licensed case by case")  # its cards decide
    _, (_, rack_power) = talk(adv, "GB200 NVL72 机柜多少钱", "功耗多少，能风冷吗")
    assert rack_power.text.startswith("**NVIDIA GB200 NVL72 最大功耗 120 kW；液冷")  # the data file's 120 kW


def test_a_server_priced_against_a_budget(adv: Advisor) -> None:
    _, (r,) = talk(adv, "8卡H20服务器整机现在多少钱啊，预算100w够不够")
    # the data file's ¥1,200,000 against ¥1,000,000 ('100w' is 100 万)
    assert SERVERS["cn-8x-h20-server"]["price"]["cny"] == 1_200_000
    assert "**不够：按这个价格，¥1,000,000 的预算还差 ¥200,000。**" in r.text.splitlines()[:2]


def test_which_gpu_to_rent_ranks_the_rentable_cards_that_run_the_job() -> None:
    from tools.rent_choices import RentChoicesInput, rent_choices

    r = rent_choices(RentChoicesInput(workload="training", model="qwen2.5-7b", method="lora", dataset_tokens=2e8))
    hourly = [c.hourly for c in r.choices]
    assert r.choices and [c.job_cost for c in r.choices] == sorted(c.job_cost for c in r.choices)  # type: ignore[misc]
    # LoRA on a 7B model needs about 16-20 GB (Unsloth/PEFT tables): one 24 GB card is enough, so no 24 GB card is
    # rented by the pair
    assert all(c.count == 1 for c in r.choices if load_catalog().gpu(c.gpu_id).memory_gb >= 24)
    for c in r.choices:  # the typical rate is the data file's median of on-demand offers (outside China, dollars)
        if any(o["gpu"] == c.gpu_id and o["region"] != "cn" and o["billing"] == "on-demand" for o in RENTALS):
            assert c.hourly == pytest.approx(_median_on_demand(c.gpu_id) * c.count, abs=0.02)
        assert c.job_cost == pytest.approx(c.job_hours * c.hourly, rel=0.01)  # type: ignore[operator]
    assert hourly


def test_which_gpu_to_rent_is_answered_in_the_chat(adv: Advisor) -> None:
    _, (r,) = talk(adv, "要微调一个7b模型 lora 就跑几天，租啥卡合适 多少钱")
    assert r.mode == "rent" and r.text.startswith("**租来跑 7B 模型（按 Qwen2.5-7B 计） 最省钱的是 1× ")


def test_an_unpriced_server_is_estimated_from_its_cards_and_host(adv: Advisor) -> None:
    _, (r,) = talk(adv, "quote me roughly a dell xe9680 with 8 h100s")
    cost = one(r, "machine_cost").result
    usd = load_catalog().gpu("h100-sxm").price.usd  # type: ignore[union-attr]
    assert cost["cards_price"] == pytest.approx(8 * usd) and cost["host_price"] > 0
    assert r.text.startswith("**Dell PowerEdge XE9680") and "no public price; from catalog prices about $" in r.text


def test_another_card_with_its_count_after_a_two_node_answer_is_that_many_in_all(adv: Advisor) -> None:
    s, (_, r) = talk(adv, "kimi k2 能本地跑吗 要几张H100", "用h20行不行，8卡")
    assert s.profile.nodes in (None, 1) and one(r, "size_inference").arguments["gpus"] == 8


def test_gpu_hours_beyond_one_card_buy_enough_cards(adv: Advisor) -> None:
    _, (r,) = talk(adv, "we need ~20k gpu hours of h100 for a course + research this academic year. rent or buy?")
    # 20,000 h / 12 months / 30.4 days / 24 h = 2.3 GPUs busy around the clock: buying one cannot do it
    assert one(r, "rent_vs_buy").arguments["count"] == 3


def test_rent_on_a_named_provider_costs_its_price_for_the_whole_fleet(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "we want to self host deepseek v3.1 for our product, how many h100s needed",
                     "what if we rent that on runpod, monthly cost")
    rent = one(r, "rent_vs_buy")
    runpod = min(o["per_gpu_hour"] for o in RENTALS if o["gpu"] == "h100-sxm" and o["provider"] == "RunPod"
                 and o["billing"] == "on-demand")
    assert rent.arguments["count"] == 16 and rent.arguments["provider"] == "RunPod"
    assert rent.result["rent_per_hour"] == pytest.approx(16 * runpod)
    assert r.text.startswith("**Renting 16× H100 SXM 80GB at 24 h a day costs about $")


def test_a_buyer_in_china_asking_in_yuan_gets_the_china_status_and_yuan(adv: Advisor) -> None:
    _, (r,) = talk(adv, "im in shenzhen actually, can i even buy a 5090 here and whats the price in yuan")
    first = r.text.splitlines()[0]
    assert first.startswith("**GeForce RTX 5090 cannot be bought new in mainland China")
    assert "Its China version, GeForce RTX 5090 D v2" in first and "**GeForce RTX 5090: about ¥" in r.text


def test_no_greeting_in_the_middle_of_a_conversation(adv: Advisor) -> None:
    _, (_, warranty, mi355x) = talk(adv, "how much is a DGX H200 and what do you get in it",
                                    "warranty / support on these, what comes with it",
                                    "what about mi355x, is it out and price?")
    assert warranty.mode == "concept" and "[servers-support/en/warranty]" in warranty.text
    assert mi355x.mode == "spec" and mi355x.text.startswith("**Instinct MI355X 288GB: about $")


def test_a_rack_power_asked_of_servers_counts_how_many_fit(adv: Advisor) -> None:
    _, (_, two) = talk(adv, "procurement wants a sanity check on a quote: DGX H200, what should list price be + specs",
                       "our DC rack is 15kW air cooled, can we fit two of those")
    # the data file's 10.2 kW a DGX H200: two draw 20.4 kW, over 15 kW; one fits
    assert SERVERS["dgx-h200"]["max_power_w"] == 10_200
    assert two.text.startswith("**No: 2× NVIDIA DGX H200 draw up to 20.4 kW, more than a 15 kW rack; it holds 1")
    _, (_, air) = talk(adv, "exec wants a GB200 NVL72 rack. budget $3.5M. does that cover it?",
                       "our DC does max 40kW per rack air. what now")
    assert air.text.startswith("**No: NVIDIA GB200 NVL72 needs up to 120 kW in its own rack") and "liquid" in air.text


def test_renting_past_an_owned_card_prices_what_runs_the_job(adv: Advisor) -> None:
    _, (r,) = talk(adv, "想训练flux的lora，自己电脑是3060 12g不太够，租卡的话一天大概花多少")
    choice = one(r, "rent_choices").result["choices"][0]
    assert r.text.startswith("**租来跑 FLUX.1-dev 最省钱的是") and "全天 24 小时约 ¥" in r.text.splitlines()[0]
    assert load_catalog().gpu(choice["gpu_id"]).memory_gb * choice["count"] > 12  # more than the 3060 owned


def test_which_gpu_to_rent_wins_over_the_rest_of_the_question(adv: Advisor) -> None:
    _, (r,) = talk(adv, "need to full finetune a 7b model on ~2B tokens. which gpu should i rent and how long will it "
                        "take")
    best = one(r, "rent_choices").result["choices"][0]
    assert r.mode == "rent" and best["job_hours"] and f"the job takes about {best['job_hours']:.1f}"[:24] in r.text


def test_a_monthly_rent_is_paid_in_full_whatever_the_hours(adv: Advisor) -> None:
    _, (r,) = talk(adv, "包月租一台8卡A800，每天用10小时，一个月多少钱")
    china = [o for o in RENTALS if o["gpu"] == "a800-sxm-80gb" and o["region"] == "cn"]
    assert len(china) == 1 and china[0]["billing"] == "monthly"
    # 8 cards × the monthly fee per card, not 10/24 of it
    assert one(r, "rent_vs_buy").result["rent_per_month"] == pytest.approx(8 * china[0]["per_gpu_month"], rel=0.01)
    assert r.text.startswith("**包月租 8× A800 SXM 80GB 每月约 ¥")


def test_a_server_configured_with_another_card_is_priced_with_it(adv: Advisor) -> None:
    _, (r,) = talk(adv, "client wants an 8x H200 box. dell xe9680 vs supermicro, ballpark price?")
    assert one(r, "machine_cost").arguments["gpu"] == "h200-sxm"
    assert r.text.startswith("**Dell PowerEdge XE9680") and "8× H200 SXM 141GB" in r.text.splitlines()[0]


def test_a_total_of_gpu_hours_is_priced_as_a_rental(adv: Advisor) -> None:
    _, (r,) = talk(adv, "need ~500 gpu hrs on A100 80gb for a training run, cheapest option?")
    typical = one(r, "rental_prices").result["typical_per_gpu_hour"]
    assert r.mode == "rent" and r.text.startswith(f"**500 GPU-hours of A100 SXM 80GB cost about ${500 * typical:,.0f}")


def test_a_sites_megawatts_asked_of_a_rack_system_count_racks(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "ballpark on a GB300 NVL72 rack? and power draw",
                     "customer has 1MW of IT power, how many racks is that")
    # the data file's 142 kW a GB300 NVL72: 1,000 kW // 142 kW = 7
    assert SERVERS["gb300-nvl72"]["max_power_w"] == 142_000
    assert r.text.startswith("**1,000 kW of IT power holds 7× NVIDIA GB300 NVL72")
