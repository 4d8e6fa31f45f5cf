"""Numbers as buyers write them: '预算100w' (万), '35万一台' (a unit price), '30A 208V' circuits, hours a day that
are not card counts, and catalog names of five words."""

from __future__ import annotations

import pytest
from fakes.script import talk

from advisor.engine import Advisor
from advisor.nlu.rules import parse
from advisor.numbers import find_amounts
from knowledge import load_catalog


@pytest.mark.parametrize(("text", "amount"), [("预算100w够不够", 1_000_000), ("预算 50w 左右", 500_000),
                                              ("报价35w一台", None)])
def test_w_after_an_amount_is_wan(text: str, amount: float | None) -> None:
    p = parse(text, load_catalog())
    assert (p.budget.amount if p.budget else None) == amount


@pytest.mark.parametrize("text", ["1600W 电源够吗", "要 1600w 的电源吗", "预算 50w 左右，电源 1600w"])
def test_watts_stay_watts(text: str) -> None:
    p = parse(text, load_catalog())
    assert p.psu_w == 1600 and (p.budget is None or p.budget.amount < 1e6)


@pytest.mark.parametrize(("text", "value"), [("35万一台", 350_000), ("35万一张卡", 350_000), ("3万5", 35_000),
                                             ("1万二", 12_000)])
def test_a_count_after_wan_is_not_its_elided_digit(text: str, value: float) -> None:
    assert find_amounts(text)[0].value == value


def test_a_circuit_with_its_voltage_after_the_amps() -> None:
    p = parse("our server room has 2x 30A 208V circuits per rack, ok?", load_catalog())
    assert p.mains == "208v-30a" and p.scaled is None  # '2x' counts circuits; it scales nothing


def test_hours_a_day_in_a_what_if_are_not_a_card_count() -> None:
    adv = Advisor()
    s, (_, r) = talk(adv, "we need 8x H100 for about 18 months, basically 24/7. rent or buy?",
                     "what if only 10 hrs/day")
    assert s.profile.gpu_count == 8 and r.tool_calls[0].arguments["count"] == 8
    assert r.tool_calls[0].arguments["hours_per_day"] == 10


@pytest.mark.parametrize("count", [0, 2])
def test_a_count_before_a_five_word_name_is_read(count: int) -> None:
    p = parse(f"{count} Mac Studio M1 Ultra 128GB", load_catalog())
    assert (p.bad_counts if count == 0 else {g.gpu: g.count for g in p.gpus}) == {"mac-studio-m1-ultra-128gb": count}


def test_gpu_hours_over_a_year_are_a_monthly_load() -> None:
    p = parse("we need ~20k gpu hours of h100 for a course + research this academic year. rent or buy?",
              load_catalog())
    assert p.gpu_hours_month == pytest.approx(20_000 / 12)


def test_weights_said_in_gigabytes_give_the_size() -> None:
    p = parse("公司有个模型叫“天枢”，权重文件60多G，要几张4090", load_catalog())
    # 60 GB of 16-bit weights is 2 bytes a parameter: about 30B
    assert p.params_b == 30 and p.readback[0][0] == "nlu.readback.params_from_weights"


@pytest.mark.parametrize(("text", "currency"), [("whats the price in yuan", "CNY"), ("折合人民币多少", "CNY"),
                                                ("H20 美元多少", "USD"), ("RTX 5090 多少钱", None)])
def test_the_currency_asked_for(text: str, currency: str | None) -> None:
    assert parse(text, load_catalog()).currency_wanted == currency


@pytest.mark.parametrize("text", ["add 2 more 3090s", "what about adding 2 more 3090s, 4 total?"])
def test_n_more_cards_are_added(text: str) -> None:
    assert parse(text, load_catalog()).added_cards == 2


def test_a_monthly_rent_asked_in_chinese_is_a_rent_question() -> None:
    p = parse("8 卡 H100 月租多少", load_catalog())
    assert p.kind == "rent_vs_buy" and p.asks_monthly


@pytest.mark.parametrize("text", ["那再加一张3090组双卡呢，不量化能跑吗", "run it unquantized"])
def test_unquantized_is_sixteen_bit(text: str) -> None:
    assert parse(text, load_catalog()).precision == "bf16"


@pytest.mark.parametrize("text", ["打算采购华为atlas 800T A2，一台大概什么价位？", "how much is one box?"])
def test_the_price_of_one_machine_is_the_whole_builds(text: str) -> None:
    assert "build_cost" in parse(text, load_catalog()).asks


def test_card_hours_are_no_card_count() -> None:
    p = parse("我们大概要 2000 卡时的 A100", load_catalog())
    assert "gpu_count" not in p.unusable and [g.count for g in p.gpus] == [1] and p.gpu_hours_total == 2000
