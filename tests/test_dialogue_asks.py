"""Every ask gets an answer: costs, electricity, rack fit and targets on the configuration under discussion;
changes by an amount ('add a second one', '预算再加 5 万'); head count vs users at once, said back."""

from __future__ import annotations

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor, Reply


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_adding_a_card_changes_the_count_and_costs_follow_on_that_build(adv: Advisor) -> None:
    s, (_, added, costs) = talk(adv, "Can I run Qwen2.5-32B Q4 on my RTX 3090?", "what if I add a second one?",
                                 "what would the whole build cost, and electricity over 3 years at $0.15/kWh, "
                                 "8 hours a day?")
    assert s.profile.gpu == "rtx-3090" and s.profile.gpu_count == 2
    assert "2× GeForce RTX 3090" in added.text.splitlines()[0]
    machine = ok_calls(costs, "machine_cost")[0].result
    assert machine["count"] == 2
    # electricity by hand: kW at the wall × 8 h × 365 d × 3 years × $0.15
    assert machine["energy_cost"] == pytest.approx(machine["total_wall_w"] / 1000 * 8 * 365 * 3 * 0.15, rel=0.01)
    assert costs.text.startswith("**Whole build:**")
    assert "Electricity" in costs.text.split("\n\n")[1]


def test_head_count_and_users_at_once_are_said_back_and_targets_checked(adv: Advisor) -> None:
    _, (r,) = talk(adv, "全公司三百人，高峰同时四十来个，想部署 Qwen2.5-72B 做推理，每人至少 15 tokens/s，首字 2 秒内")
    size = ok_calls(r, "size_inference")[0]
    assert size.arguments.get("batch") == 40 or size.result["concurrency"] == 40
    assert "读作：高峰 40 人同时用（全员 300 人）" in r.text
    assert "**速度要求**" in r.text and "**首 token 时间**" in r.text


def test_rack_power_gives_nodes_per_rack_on_the_build_under_discussion(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "我们要 8 张 L20 的服务器跑 Qwen2.5-72B 推理", "每个机柜 15kW 能放几台？")
    machine = ok_calls(r, "machine_cost")[0].result
    assert machine["nodes_per_rack"] == int(15_000 // machine["node_wall_w"])
    assert r.text.startswith("**机柜**")


def test_money_added_to_the_budget_adds_to_it(adv: Advisor) -> None:
    s, _ = talk(adv, "预算 10 万，想本地部署 Qwen2.5-72B 做推理", "预算再加 5 万呢")
    assert s.profile.budget is not None and s.profile.budget.amount == pytest.approx(150_000)


def test_a_rent_question_is_not_answered_twice_with_a_build_price(adv: Advisor) -> None:
    _, (r,) = talk(adv, "how much does it cost per day to rent 8 H100s?")
    assert not ok_calls(r, "machine_cost")


def test_a_what_if_asks_again_what_the_last_question_asked(adv: Advisor) -> None:
    # 'how many' asked once: the what-ifs after it ('用 SGLang 呢', '80 人同时用') are answered with a count again
    _, replies = talk(adv, "50人同时用 Qwen2.5-72B，买几张 H20 够？", "用 SGLang 呢", "要是 80 个人同时用呢")
    for r in replies:
        assert r.text.startswith("**至少要"), r.text[:80]
    assert "80" not in replies[1].text.splitlines()[0]


def _named_count(r: Reply) -> dict:
    """The largest count of the named card the budget buys (the affordable call limited to that card)."""
    return next(c for c in ok_calls(r, "affordable") if c.arguments.get("only_gpus")).result["options"][0]


def test_what_a_budget_buys_of_the_card_named_leads_when_asked_first(adv: Advisor) -> None:
    _, (r, r2) = talk(adv, "5万能买几张4090，电源怎么配", "40 万能买几张 L20、装几台机器？")
    first = _named_count(r)
    # by hand: the largest count whose cards plus a host stay within the budget
    assert first["gpu"] == "rtx-4090" and first["price"] <= 50_000
    assert r.text.startswith("**¥50,000 能买 1 张 GeForce RTX 4090**")
    assert _named_count(r2)["gpu"] == "l20"
    assert r2.text.startswith("**¥400,000 能买 8 张 L20")


def test_a_vendor_ban_keeps_every_other_vendor_in_its_one_spelling(adv: Advisor) -> None:
    from knowledge.names import VENDORS

    _, (r,) = talk(adv, "不要英伟达的卡，部署 Qwen2.5-72B 推理，预算 50 万")
    rec = next(c for c in r.tool_calls if c.name == "recommend")
    assert set(rec.arguments["vendors"]) == set(VENDORS) - {"NVIDIA"}  # 'Iluvatar CoreX' as the catalog spells it


def test_rent_or_buy_on_the_buyers_own_rate_price_and_horizon(adv: Advisor) -> None:
    _, (r,) = talk(adv, "云上4090租2块钱一小时，自己买一台8卡4090服务器大概20万，每天跑10个小时，电费1块一度，"
                         "3年下来哪个划算？")
    rent = ok_calls(r, "rent_vs_buy")[0]
    assert rent.arguments["months"] == 36 and rent.arguments["purchase_price"] == 200_000
    # by hand: ¥2 × 8 cards × 10 h × 365/12 days × 36 months = ¥175,200 of rent
    assert rent.result["project_rent"] == pytest.approx(2 * 8 * 10 * 365 / 12 * 36, rel=0.01)
    assert "按你给的租价" in r.text and "目录里的常见按需价" not in r.text


def test_a_stated_mfu_retimes_the_run_and_the_time_leads(adv: Advisor) -> None:
    _, (first, second) = talk(adv, "Pretraining a 7B model on 1T tokens with 64 H100s, how long?",
                               "ok what if we only hit 30% MFU")
    before, after = (ok_calls(r, "training_time")[0].result for r in (first, second))
    assert after["hours"] == pytest.approx(before["hours"] * before["mfu"] / 0.3, rel=0.01)
    assert first.text.startswith("**About") and second.text.startswith("**About")


def test_a_cost_follow_up_answers_alone_on_the_run_or_the_build_just_computed(adv: Advisor) -> None:
    _, (_, timed, energy) = talk(adv, "Can I fine-tune Llama-3-8B with QLoRA on one RTX 4090?",
                                  "how long for 50k samples, 3 epochs?", "and the electricity for that?")
    hours = ok_calls(timed, "training_time")[0].result["hours"]
    machine = ok_calls(energy, "machine_cost")[0].result
    kwh = machine["total_wall_w"] / 1000 * hours  # by hand: the run's hours at the wall draw, not a year of 24 h
    assert energy.text.startswith("**Electricity for the run:**")
    assert f"{kwh:,.0f} kWh" in energy.text
    assert "fits on one GeForce RTX 4090" not in energy.text  # the plan is not said again


def test_a_sellers_quote_is_judged_against_the_catalog_not_read_as_a_budget(adv: Advisor) -> None:
    s, (r,) = talk(adv, "采购这边拿到一份报价，帮忙看下：\n- 4x L20 48GB\n- 2x Xeon 8480+\n- 整机报价 ¥268,000\n"
                         "想跑 Qwen2.5-72B，价格合理吗？")
    assert s.profile.budget is None and s.profile.quoted_price == (268_000, "CNY")
    machine = ok_calls(r, "machine_cost")[0].result
    assert machine["count"] == 4 and machine["gpu"] == "l20"  # the quoted list line, not '-4' cards
    gap = round((268_000 / machine["total_price"] - 1) * 100)
    assert r.text.startswith((f"**报价 ¥268,000 比目录估算高 {gap}%**", "**报价 ¥268,000 与目录估算相符"))
