"""A hosted API's bill against a machine that serves the same traffic: the dated price table, the tool's arithmetic
(checked by hand from the providers' list prices), the traffic read from a message, and the answer leading the
reply in the user's language and money."""

from __future__ import annotations

import re

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse
from knowledge import UnknownNameError, load_catalog
from knowledge.api_prices import api_mentions, api_model, api_prices
from tools.api_cost import ApiCostInput, api_cost
from tools.ownership import MachineCostInput


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


# ----------------------------------------------------------------------------- the table


def test_every_price_row_has_a_dated_source_and_a_catalog_peer() -> None:
    rows = api_prices()
    assert {r.id for r in rows} >= {"gpt-4o-mini", "gpt-4o", "deepseek-flash", "deepseek-v4-pro"}
    for r in rows:
        assert r.source.startswith("https://") and r.as_of.year >= 2026
        assert r.output >= r.input > r.cached  # output costs more than input, a cache hit less
        load_catalog().model(r.self_host_peer)


def test_deepseek_yuan_and_dollar_rows_agree_at_about_seven_yuan_a_dollar() -> None:
    """The official pages give both currencies: ¥2 / $0.30 and ¥8 / $1.20 per 1M (Flash, peak) are 6.7 ¥/$."""
    for model in ("deepseek-flash", "deepseek-v4-pro"):
        cny = next(r for r in api_prices() if r.id == model and r.currency == "CNY")
        usd = next(r for r in api_prices() if r.id == model and r.currency == "USD")
        assert 6.0 < cny.input / usd.input < 7.5 and 6.0 < cny.output / usd.output < 7.5


def test_api_names_are_read_in_any_spelling_and_an_open_model_name_is_not_an_api() -> None:
    assert api_mentions("through GPT-4o-mini (mostly input)") == ["gpt-4o-mini"]
    assert api_mentions("调用DeepSeek API 2000万token") == ["deepseek-flash"]
    assert api_mentions("gpt-4.1-mini vs gpt-4.1") == ["gpt-4.1-mini", "gpt-4.1"]
    assert api_mentions("DeepSeek-R1-Distill-Qwen-32B") == []
    with pytest.raises(UnknownNameError) as err:
        api_model("gpt-4o-nano")
    assert "gpt-4o" in str(err.value).lower()


# ----------------------------------------------------------------------------- the tool


def test_gpt_4o_mini_bill_by_hand() -> None:
    """36M input × $0.15 + 4M output × $0.60 per 1M = $5.40 + $2.40 = $7.80 a day; × 365 / 12 = $237.25 a month."""
    r = api_cost(ApiCostInput(api="gpt-4o-mini", daily_input_tokens=36e6, daily_output_tokens=4e6))
    assert r.daily_cost == pytest.approx(7.80) and r.monthly_cost == pytest.approx(237.25)
    assert r.yearly_cost == pytest.approx(2847.0) and r.price_as_of == "2026-05-07"


def test_cached_input_is_billed_at_the_cache_price() -> None:
    """Half of 36M input from the cache: 18M × $0.15 + 18M × $0.075 + 4M × $0.60 = $2.70 + $1.35 + $2.40."""
    r = api_cost(ApiCostInput(api="gpt-4o-mini", daily_input_tokens=36e6, daily_output_tokens=4e6, cached_share=0.5))
    assert r.daily_cost == pytest.approx(6.45)


def test_deepseek_off_peak_hours_halve_the_price_of_their_share() -> None:
    """Flash ¥2 / ¥8 per 1M at peak, half off-peak; half the traffic in peak hours → ¥1.50 / ¥6.00:
    16M × 1.5 + 4M × 6 = ¥48 a day. All at peak: 16M × 2 + 4M × 8 = ¥64."""
    half = api_cost(ApiCostInput(api="deepseek", daily_input_tokens=16e6, daily_output_tokens=4e6, currency="CNY"))
    assert half.input_price == pytest.approx(1.5) and half.daily_cost == pytest.approx(48.0)
    peak = api_cost(ApiCostInput(api="deepseek", daily_input_tokens=16e6, daily_output_tokens=4e6, currency="CNY",
                                 peak_share=1.0))
    assert peak.daily_cost == pytest.approx(64.0)


def test_break_even_is_the_price_over_the_monthly_saving() -> None:
    """$4,000 machine, $20 a month of power, $237.25 a month of API: 4000 / 217.25 = 18.4 months; over 3 years it
    costs 4000 / 36 + 20 = $131.11 a month, so it is the cheaper way."""
    r = api_cost(ApiCostInput(api="gpt-4o-mini", daily_input_tokens=36e6, daily_output_tokens=4e6,
                              machine_price=4000, machine_yearly_energy=240))
    assert r.break_even_months == pytest.approx(18.4, abs=0.05)
    assert r.own_monthly_cost == pytest.approx(131.11, abs=0.01) and r.cheaper == "own"


def test_a_machine_whose_power_costs_more_than_the_api_never_pays_back() -> None:
    r = api_cost(ApiCostInput(api="gpt-4o-mini", daily_input_tokens=1e6, daily_output_tokens=1e5,
                              machine_price=10_000, machine_yearly_energy=1200))
    assert r.break_even_months is None and r.cheaper == "api"


def test_a_monthly_spend_said_is_the_bill() -> None:
    r = api_cost(ApiCostInput(api="gpt-4o", daily_input_tokens=0, daily_output_tokens=0, monthly_spend=3000,
                              machine_price=16_100, machine_yearly_energy=12 * 61))
    assert r.monthly_cost == 3000 and r.break_even_months == pytest.approx(16_100 / (3000 - 61), abs=0.05)


def test_a_priced_machine_brings_its_price_and_electricity() -> None:
    """machine_cost's own figures: the same build priced and its energy at 12 h a day at full load."""
    from tools.ownership import machine_cost

    machine = MachineCostInput(gpu="rtx-3090", count=2, hours_per_day=12)
    own = machine_cost(machine)
    r = api_cost(ApiCostInput(api="gpt-4o-mini", daily_input_tokens=36e6, daily_output_tokens=4e6, machine=machine))
    assert r.machine_price == own.total_price and r.machine_yearly_energy == pytest.approx(own.yearly_energy_cost)


# ----------------------------------------------------------------------------- reading the message


@pytest.mark.parametrize("text, daily, share, api", [
    ("We process about 40M tokens a day through GPT-4o-mini (mostly input, ~10% output). Would self-hosting be "
     "cheaper?", 40e6, 0.1, "gpt-4o-mini"),
    ("我们每天大概调用DeepSeek API 2000万token，一年要花多少钱？自己买卡部署Qwen2.5-32B划算吗？", 2e7, None,
     "deepseek-flash"),
])
def test_a_days_tokens_on_an_api_is_traffic_not_a_training_set(text: str, daily: float, share: float | None,
                                                                api: str) -> None:
    p = parse(text)
    assert p.daily_tokens == daily and p.output_share == share and p.api_model == api
    assert p.dataset_tokens is None and p.use_case == "inference" and p.asks[:1] == ["api_cost"]


def test_a_monthly_api_bill_is_not_a_hardware_budget() -> None:
    p = parse("我是个人开发者，日活大概500，现在每月API预算5000块左右。自己买卡部署70B划算吗？还是继续用API？")
    assert p.budget is None and p.api_monthly_spend is not None and p.api_monthly_spend.amount == 5000
    assert p.head_count == 500 and p.asks == ["api_cost"]


def test_requests_a_month_with_tokens_in_and_out_give_the_days_tokens() -> None:
    p = parse("roughly 2 million requests a month, about 1500 tokens in and 300 out each")
    assert p.daily_requests == pytest.approx(2e6 / (365 / 12)) and p.prompt_tokens == 1500
    assert p.context_tokens == 1800


def test_an_openai_compatible_endpoint_is_not_an_api_bill() -> None:
    p = parse("We serve Qwen via an OpenAI-compatible API to 50 users, which GPU is cheapest?")
    assert "api_cost" not in p.asks


# ----------------------------------------------------------------------------- the reply


def _money(text: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"[$¥]([\d,]+(?:\.\d+)?)", text)]


def test_the_api_comparison_leads_and_its_numbers_add_up(adv: Advisor) -> None:
    _, (r,) = talk(adv, "We process about 40M tokens a day through GPT-4o-mini (mostly input, ~10% output). Would "
                        "self-hosting an open model on our own GPUs be cheaper?")
    first = r.text.splitlines()[0]
    assert "GPT-4o mini" in first and "$237 a month" in first and "36M input and 4M output" in first
    (call,) = ok_calls(r, "api_cost")
    res = call.result
    assert res["monthly_cost"] == pytest.approx(237.25)
    own = res["machine_price"] / 36 + res["machine_yearly_energy"] / 12  # spread over 3 years + power
    assert res["own_monthly_cost"] == pytest.approx(own, abs=0.01)
    top = ok_calls(r, "recommend")[0].result["options"][0]
    assert res["machine_price"] == top["total_price_usd"]  # the machine as the table prices it, host included


def test_a_chinese_buyer_gets_yuan_and_deepseek_by_default(adv: Advisor) -> None:
    _, (r,) = talk(adv, "我们每天大概调用DeepSeek API 2000万token，一年要花多少钱？自己买卡部署Qwen2.5-32B划算吗？")
    first = r.text.splitlines()[0]
    assert "每年 ¥17,520" in first and "DeepSeek V4.1 Flash" in first and "$" not in first
    assert not ok_calls(r, "size_training")  # deploying is serving, never a fine-tune


def test_traffic_growth_scales_the_api_bill_and_resizes_the_machine(adv: Advisor) -> None:
    _, (r1, r2) = talk(adv, "We spend about $3k a month on GPT-4o. Would 2x RTX 6000 Ada pay for itself?",
                       "What if traffic grows 10x?")
    assert "$3,000 a month" in r1.text.splitlines()[0] and "Llama-3.3-70B" in r1.text
    assert "$30,000 a month" in r2.text.splitlines()[0]


def test_daily_users_growing_scales_a_monthly_bill(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "我是个人开发者，日活大概500，现在每月API预算5000块左右。"
                          "自己买卡部署70B划算吗？还是继续用API？", "如果日活涨到5000呢？")
    assert "¥50,000" in r.text.splitlines()[0]


def test_requests_a_day_are_billed_at_a_typical_requests_tokens() -> None:
    """5,000 requests × (1,000 in, 300 out) = 5M in, 1.5M out; DeepSeek Flash at half peak hours: ¥1.50 / ¥6.00 per
    1M → 7.5 + 9 = ¥16.50 a day, × 365 / 12 = ¥501.88 a month."""
    r = api_cost(ApiCostInput(api="deepseek", daily_input_tokens=0, daily_output_tokens=0, daily_requests=5000,
                              currency="CNY"))
    assert (r.daily_input_tokens, r.daily_output_tokens) == (5e6, 1.5e6)
    assert r.daily_cost == pytest.approx(16.5) and r.monthly_cost == pytest.approx(501.88, abs=0.01)


def test_users_times_their_questions_are_the_requests(adv: Advisor) -> None:
    p = parse("日活估计500，每人每天问10个问题左右。直接调api划算吗？")
    assert p.head_count == 500 and p.requests_per_user == 10 and p.asks == ["api_cost"]
    _, (r,) = talk(adv, "做法律问答，打算用qwen2.5-32b上线推理，日活估计500，每人每天问10个问题左右。"
                        "买两张4090还是直接调deepseek的api，哪条划算？")
    (call,) = ok_calls(r, "api_cost")
    assert call.arguments["daily_requests"] == 5000
    assert "每月约 ¥502" in r.text.splitlines()[0]


@pytest.mark.parametrize(("text", "people"), [
    # 30 at peak is about a tenth of everyone (the share that sizes a head count at peak): 300 people
    ("公司想上个内部知识库问答，高峰同时30个人用，自己买卡部署划算还是直接调API划算？", 300),
    ("We have about 200 staff who'd use an internal chatbot. Is self-hosting cheaper than paying for the OpenAI "
     "API?", 200),
])
def test_only_people_known_bills_their_questions_said_back(adv: Advisor, text: str, people: int) -> None:
    """No tokens or requests given, only people: 10 questions each a day at 1,000 in / 300 out, said in the reply.
    300 × 10 = 3,000 requests → 3M in + 0.9M out a day; on DeepSeek Flash (¥1.50 / ¥6.00 per 1M at half peak
    hours) 4.5 + 5.4 = ¥9.90 a day = ¥301 a month; 200 × 10 on GPT-4o mini: 2M × $0.15 + 0.6M × $0.60 = $0.66 a
    day = $20 a month."""
    _, (r,) = talk(adv, text)
    (call,) = ok_calls(r, "api_cost")
    assert call.arguments["daily_requests"] == people * 10
    first, second = r.text.splitlines()[:2]
    assert ("每月约 ¥301" in first and "300 人、每人每天 10 次" in second) if people == 300 else \
        ("$20 a month" in first and "200 people asking 10 questions" in second)


def test_naming_another_api_in_a_what_if_bills_it_again(adv: Advisor) -> None:
    """'那用 GPT-4o mini 的 API 呢' serves the same model: the bill is asked again on the API named."""
    _, (_, r) = talk(adv, "公司想上个内部知识库问答，高峰同时30个人用，自己买卡部署划算还是直接调API划算？",
                     "那换成 GPT-4o mini 的 API 呢")
    (call,) = ok_calls(r, "api_cost")
    assert call.arguments["api"] == "gpt-4o-mini" and "GPT-4o mini" in r.text.splitlines()[0]


@pytest.mark.parametrize(("text", "amount", "currency"), [
    ("paying an API like together/fireworks at ~$0.9 per million tokens?", 0.9, "USD"),
    ("API 每百万token 2元，我们一天2000万token，自建划算吗", 2.0, "CNY"),
    ("Groq charges $0.59/M tokens", 0.59, "USD"),
])
def test_a_quoted_price_per_million_tokens_is_read_never_a_budget(text: str, amount: float, currency: str) -> None:
    p = parse(text)
    assert p.api_quoted_per_m is not None and (p.api_quoted_per_m.amount, p.api_quoted_per_m.currency) == (
        amount, currency)
    assert p.budget is None and not p.pooled  # 'together/fireworks' are API providers, not cards used together


def test_a_quoted_price_bills_every_token_at_it() -> None:
    """20M in + 6M out a day at $0.90 per 1M: 26 × 0.9 = $23.40 a day = $711.75 a month (× 365 / 12)."""
    r = api_cost(ApiCostInput(api="gpt-4o-mini", daily_input_tokens=20e6, daily_output_tokens=6e6, quoted_per_m=0.9))
    assert r.quoted and r.daily_cost == pytest.approx(23.4) and r.monthly_cost == pytest.approx(711.75, abs=0.01)


def test_a_quoted_price_leads_the_bill_and_names_no_listed_api(adv: Advisor) -> None:
    """¥2 per 1M tokens on 20M tokens a day (80 % input by default: 16M + 4M): ¥40 a day, ¥1,217 a month."""
    _, (r,) = talk(adv, "API 每百万token 2元，我们一天2000万token，自建部署Qwen2.5-32B划算吗")
    first = r.text.splitlines()[0]
    assert "每月约 ¥1,217" in first and "DeepSeek" not in first
