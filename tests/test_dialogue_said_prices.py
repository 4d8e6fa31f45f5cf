"""The buyer's own numbers are the ones used: a price written beside a card is that card's unit price (never a
budget), a rent per card-hour is the rent, 'a month of 22 days' is days used; a question asking how many is
answered on the count that fits; a new workload after a rent-or-buy is sized; a what-if on one compared card
changes that option; 'other options than X' leads with the options."""

from __future__ import annotations

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


USED_PRICES = ("ebay prices rn: Tesla P40 24GB ~$300, RTX 3090 ~$750, MI50 32GB ~$150. want to run 70B models for "
               "me + a few friends. 4x P40 or 2x 3090? which is smarter")


def test_prices_beside_cards_are_unit_prices_not_a_budget() -> None:
    said = parse(USED_PRICES)
    assert said.budget is None  # '$300' is the P40's price, '$150' the MI50's
    assert {g: (m.amount, m.currency) for g, m in said.card_prices.items()} == {
        "tesla-p40": (300, "USD"), "rtx-3090": (750, "USD"), "mi50-32gb": (150, "USD")}
    zh = parse("闲鱼上看到几种：矿卡3090 24G 4500块，魔改2080Ti 22G 2300块，Tesla P40 24G 900块。选哪个？")
    assert {g: m.amount for g, m in zh.card_prices.items()} == {
        "rtx-3090": 4500, "rtx-2080-ti-22gb": 2300, "tesla-p40": 900}
    both = parse("H100 一张 22 万，预算 100 万能买几张")
    assert both.card_prices["h100-sxm"].amount == 220_000 and both.budget is not None \
        and both.budget.amount == 1_000_000
    # a budget after a card, a server's price and a rent rate are no unit prices
    assert not parse("For GROMACS: how many L40S vs RTX 4090 would $80k get us?").card_prices
    assert not parse("自己买一台8卡4090服务器大概20万").card_prices
    assert not parse("AutoDL上租4090大概每卡时2块钱").card_prices


def test_a_comparison_is_valued_at_the_prices_the_buyer_gave(adv: Advisor) -> None:
    """4 × $300 = $1,200 and 2 × $750 = $1,500, by hand; the MI50 named with its price joins at the least count
    that holds the model (2 × $150 = $300); per $1k: speed × 1000 / price."""
    s, (r,) = talk(adv, USED_PRICES)
    assert s.profile.budget is None
    value = ok_calls(r, "value_for_money")[0].result
    prices = {o["gpu"]: o["price"] for o in value["options"]}
    assert prices == {"tesla-p40": pytest.approx(1200), "rtx-3090": pytest.approx(1500),
                      "mi50-32gb": pytest.approx(300)}
    assert "$1,200 (4 × $300, your price)" in r.text and "$1,500 (2 × $750, your price)" in r.text
    assert "At the prices you gave" in r.text and "At catalog prices" not in r.text


def test_a_what_if_on_one_compared_card_changes_that_option(adv: Advisor) -> None:
    _, (_, r) = talk(adv, USED_PRICES, "what if I go with 8 P40 instead?")
    sized = {c.arguments["gpu"]: c.arguments["gpus"] for c in ok_calls(r, "size_inference")}
    assert sized == {"tesla-p40": 8, "rtx-3090": 2, "mi50-32gb": 2}  # the 8 is the P40's alone
    assert "8× Tesla P40" in r.text


def test_rent_per_card_hour_and_days_a_month_are_read_as_said(adv: Advisor) -> None:
    """8 cards × ¥2 a card-hour = ¥16 an hour; '一个月22天' is 22 working days, no one-month project."""
    _, (first, later, sized) = talk(
        adv, "纠结租还是买：AutoDL上租8卡4090大概每卡时2块钱，自己买一台8卡4090服务器大概20万。"
             "我们几乎每天24小时都在跑，怎么算划算？",
        "如果只是工作日白天用，每天8小时，一个月22天呢？", "如果我们要全参微调70B，8张4090够吗？")
    rent = ok_calls(first, "rent_vs_buy")[0]
    assert rent.arguments["rental_usd_per_gpu_hour"] * 7.2 == pytest.approx(2.0, rel=0.01)
    assert rent.arguments["purchase_price"] == 200_000
    assert "months" not in ok_calls(later, "rent_vs_buy")[0].arguments  # no project length was said
    assert parse("每天8小时，一个月22天").deadline_days is None
    training = ok_calls(sized, "size_training")  # a new workload: sized on the 8 cards, not the rent again
    assert training and training[0].arguments["gpus"] == 8 and training[0].arguments["method"] == "full"
    assert not ok_calls(sized, "rent_vs_buy")


def test_how_many_is_answered_on_the_count_that_fits_without_a_one_card_verdict(adv: Advisor) -> None:
    """Qwen2.5-72B BF16 is ~145 GB of weights: one 64 GB 910B cannot hold it; the answer is on the count that
    does. At INT8 (72.7 GB of weights, 30 users × 4k × 320 KiB of KV = 40 GB) two of them do: 'fewer?' is
    answered on two."""
    s, (r, _) = talk(adv, "我们单位是信创项目，只能采购国产卡。想部署 Qwen2.5-72B 给内部300人用，昇腾910B 64G 要几张？",
                     "如果做 INT8 量化呢？能少几张吗")
    main = ok_calls(r, "size_inference")[0]
    assert main.arguments["gpus"] == 4 and main.result["fits"]
    assert r.text.startswith("**至少要 4 张 Ascend 910B") and "放不下" not in r.text
    assert s.profile.gpu_count == 2


def test_other_options_keep_the_domestic_rule_and_lead_with_the_options(adv: Advisor) -> None:
    s, (_, r) = talk(adv, "信创项目，只能采购国产卡。部署 Qwen2.5-72B 给 300 人用，昇腾910B 要几张？",
                     "除了昇腾还有别的国产选择吗？海光、寒武纪这些，大概什么价？")
    assert s.profile.domestic is True and s.profile.excluded_vendors == ["huawei"]
    assert r.text.startswith("**推荐配置**")
    options = ok_calls(r, "recommend")[0].result["options"]
    assert options and all(not o["gpu_id"].startswith(("ascend", "atlas")) for o in options)


@pytest.mark.parametrize(("text", "bought", "rented", "rent_month"), [
    # 4 h × 30.4 days × ¥2 = ¥243 a month of rent
    ("买一张5090大概2万块，租4090每小时2块钱，我每天用4小时跑SD和小模型，哪个划算？", "rtx-5090", "rtx-4090", "¥243"),
    # 6 h × 30.4 days × $0.35 = $64 a month
    ("Should I buy a 5090 for $2,500 or keep renting a 4090 on vast.ai at $0.35/hr? I use it maybe 6 hours a day.",
     "rtx-5090", "rtx-4090", "$64"),
])
def test_buying_one_card_against_renting_another_prices_each_side_on_its_own_card(
        adv: Advisor, text: str, bought: str, rented: str, rent_month: str) -> None:
    """The card bought at the buyer's price, the other card rented at the buyer's rate: the verdict leads (not a
    list of providers) and names the card bought, the rent line the card rented; 5,090 is never a count or a
    price."""
    _, (r,) = talk(adv, text)
    (call,) = ok_calls(r, "rent_vs_buy")
    assert (call.arguments["gpu"], call.arguments["rented_gpu"]) == (bought, rented)
    res = call.result
    assert res["purchase"] == (20_000 if "¥" in rent_month else 2_500) and res["count"] == 1
    first, *rest = r.text.splitlines()
    assert "5090" in first and ("Keep renting" in first or "继续租" in first)
    assert any(rent_month in line for line in rest) and any("4090" in line and ("2.00" in line or "0.35" in line)
                                                            for line in rest)


def test_a_rented_pair_against_bought_cards_keeps_its_count_in_a_what_if(adv: Advisor) -> None:
    """2 H100 rented on RunPod (its on-demand $3.99 an hour each: $7.98 for two) against 4 L40S bought; 'only 4 h a
    day' changes the hours, never the two rented cards or their provider: 4 h × 30.4 days × $7.98 ≈ $971."""
    _, (r1, r2) = talk(adv, "We rent 2x H100 on RunPod for fine-tuning, about 8h a day. Would buying 4x L40S pay off?",
                       "what if we only use it 4 hours a day?")
    for r in (r1, r2):
        (call,) = ok_calls(r, "rent_vs_buy")
        assert (call.arguments["gpu"], call.arguments["count"]) == ("l40s", 4)
        assert (call.result["rented_count"], call.result["rent_per_hour"]) == (2, 7.98)
    assert r1.text.startswith("**At 8 h a day, buying 4× L40S")
    assert "$971 a month" in r2.text
