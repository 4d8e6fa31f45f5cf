"""Quantities as typed spans: each number goes to the unit beside it, once, with the role its clause gives;
numbers inside product names and years are never quantities."""

from __future__ import annotations

import itertools

import pytest

from advisor.nlu import parse
from advisor.nlu.quantities import read_quantities


def _by_role(text: str) -> dict[tuple[str, str | None], float]:
    return {(q.unit, q.role): q.value for q in read_quantities(text)}


@pytest.mark.parametrize(("text", "head", "at_once"), [
    ("全公司三百人，高峰同时四十来个，想部署 Qwen2.5-72B", 300, 40),
    ("我们公司 120 名员工，同时在线大概 15 人", 120, 15),
    ("a company of 300 people, about 40 of them at the same time", 300, 40),
    ("Our firm has 80 staff; peak of 12 concurrent users", 80, 12),
])
def test_head_count_and_simultaneous_users_are_told_apart(text: str, head: int, at_once: int) -> None:
    p = parse(text, context=False)
    assert (p.head_count, p.concurrency) == (head, at_once)
    assert p.readback and p.readback[0][0] == "nlu.readback.simultaneous"


def test_simultaneous_users_alone_are_the_concurrency() -> None:
    assert parse("40 concurrent users on Llama-3.1-70B", context=False).concurrency == 40
    assert parse("同时在线 25 人，跑 Qwen2.5-32B", context=False).concurrency == 25


@pytest.mark.parametrize(("text", "tps", "ttft"), [
    ("Need at least 20 tokens/s per user and TTFT under 2 s for 30 users", 20, 2.0),
    ("首字延迟 500ms 以内，每人至少 15 token/s", 15, 0.5),
    ("每个用户不低于 25 tokens/s，首 token 1.5 秒内", 25, 1.5),
])
def test_per_user_speed_and_first_token_targets(text: str, tps: float, ttft: float) -> None:
    p = parse(text, context=False)
    assert p.tokens_per_s_target == tps
    assert p.ttft_target_s == pytest.approx(ttft)


@pytest.mark.parametrize("text", [
    "两颗 EPYC 9654 配 8 张 L20，每个机柜 15kW 能放几台",
    "2x EPYC 9654, 8x L20 per server, 15 kW per rack",
])
def test_cpu_model_numbers_are_not_counts_and_rack_power_is_read(text: str) -> None:
    p = parse(text, context=False)
    assert [(g.gpu, g.count) for g in p.gpus] == [("l20", 8)]
    assert p.rack_kw == 15
    assert p.cpu == "epyc-9004-2p"


def test_years_are_a_horizon_only_for_costs_not_dates_or_ages() -> None:
    assert parse("3年电费多少，电价 0.8 元/度", context=False).years == 3
    assert parse("over 5 years, what is the electricity cost?", context=False).years == 5
    assert parse("2021年买的3090，还能用吗", context=False).years is None
    assert parse("我的卡 3 年前买的", context=False).years is None


def test_a_number_is_used_once() -> None:
    spans = [(q.start, q.end) for q in read_quantities("30 users at once, 20 tokens/s each, 2 s TTFT")]
    assert len(spans) == len(set(spans))
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


def test_blanked_spans_are_never_read() -> None:
    text = "Ryzen 9 7950X with 2 users at once"
    start = text.index("7950")
    found = read_quantities(text, [(start, start + 5)])
    assert [(q.unit, q.value) for q in found] == [("people", 2)]


@pytest.mark.parametrize(("text", "asks"), [
    ("能跑吗？多快？整机多少钱？", ["fits", "speed", "build_cost"]),
    ("How long would training take, and what is the electricity over 3 years?", ["training_time", "energy_cost"]),
    ("每个机柜 15kW 能放几台，3 年电费多少", ["rack", "energy_cost"]),
])
def test_every_ask_is_read_in_the_order_asked(text: str, asks: list[str]) -> None:
    got = parse(text, context=False).asks
    assert [a for a in got if a in asks] == asks


@pytest.mark.parametrize(("text", "hours"), [
    ("I use it about 20 hrs a week. rent or buy?", 20 / 7),
    ("我一个月大概用 100 小时，租还是买", 100 / (365 / 12)),
    ("其实利用率只有40%左右", 24 * 0.4),
    ("每天跑 10 个小时", 10),
])
def test_hours_a_day_from_a_week_a_month_or_a_utilisation(text: str, hours: float) -> None:
    assert parse(text, context=True).hours_per_day == pytest.approx(hours, abs=0.01)


@pytest.mark.parametrize(("text", "price"), [
    ("云上A100租9块钱一小时，自己买一台8卡4090服务器大概20万，每天跑10个小时，3年下来哪个划算？", (200_000, "CNY")),
    ("runpod 4090 is $0.34/hr, a used 4090 is ~$1800. rent or buy?", (1800, "USD")),
])
def test_a_quoted_purchase_price_is_that_price_not_a_budget(text: str, price: tuple[float, str]) -> None:
    p = parse(text, context=False)
    assert p.purchase_price == price
    assert p.budget is None


@pytest.mark.parametrize("text", ["5090D要多大电源，CPU是7950X", "4x 4090 with a 14900K", "i5-13600K and a 3090"])
def test_bare_cpu_codes_are_never_counts(text: str) -> None:
    p = parse(text, context=False)
    assert "gpu_count" not in p.unusable and p.gpu_count is None
    assert all(g.count <= 4 for g in p.gpus)


@pytest.mark.parametrize(("text", "mfu"), [("ok what if we only hit 30% MFU", 0.3),
                                           ("If we got MFU up to 40%, how long?", 0.4), ("MFU 能到 45% 的话呢", 0.45)])
def test_a_stated_mfu_is_read_as_a_fraction(text: str, mfu: float) -> None:
    assert parse(text, context=True).mfu == pytest.approx(mfu)


@pytest.mark.parametrize(("text", "per_sample"), [("数据20万条，平均800 token，训3个epoch", 800),
                                                  ("~1k tokens per sample, 50k samples", 1000)])
def test_tokens_per_sample_is_the_samples_length_not_a_context(text: str, per_sample: float) -> None:
    p = parse(text, context=False)
    assert p.tokens_per_sample == per_sample and p.context_tokens is None


@pytest.mark.parametrize("text", ["what if we quantize to INT4 to fit in one node?", "如果只做 LoRA 呢，一台够不够？"])
def test_one_node_is_read_as_one_machine(text: str) -> None:
    assert parse(text, context=True).nodes == 1


def test_a_motherboard_chipset_is_not_an_unknown_gpu_and_home_cards_are_owned() -> None:
    assert not parse("Got a 7800X3D, B650 board, 850W gold PSU and a RTX 4080 16GB", context=False).unknown_gpus
    owned = parse("家里有张2080ti 11G和一张1080ti 11G，两张一起能跑qwen2.5 14b吗", context=False).existing or []
    assert {g.gpu for g in owned} == {"rtx-2080-ti", "gtx-1080-ti"}


@pytest.mark.parametrize(("text", "price"), [("at $0.08/kWh", 0.08), ("电价0.6，一年多少电费", 0.6),
                                             ("电费 0.55 元一度", 0.55), ("electricity is 0.12 per kWh", 0.12)])
def test_an_electricity_price_is_read_however_it_is_written(text: str, price: float) -> None:
    assert parse(text, context=True).kwh_price == pytest.approx(price)


@pytest.mark.parametrize(("text", "users"), [("同时用的人变成 40 个呢", 40), ("要是同时在线涨到 80 个", 80),
                                             ("peak concurrency goes up to 120", 120), ("what if 16 users?", 16)])
def test_a_follow_up_that_changes_the_users_at_once_is_read(text: str, users: int) -> None:
    assert parse(text, context=True).concurrency == users


def test_two_models_at_once_are_not_users_and_a_rate_is_not_a_card_count() -> None:
    assert parse("同时跑 2 个模型", context=True).concurrency is None
    p = parse("租金涨到 4 块一小时呢", context=True)
    assert p.gpu_count is None and p.rental_rate == (4.0, "CNY")


def test_raising_the_budget_to_an_amount_sets_it_and_adding_adds() -> None:
    p = parse("预算加到 3 万呢", context=True)
    assert p.budget is not None and p.budget.amount == 30_000 and p.budget_added is None
    assert parse("预算再加 5 万", context=True).budget_added == 50_000


def test_a_large_amount_in_kuai_is_money_not_cards() -> None:
    p = parse("预算三万块，做 Stable Diffusion 和 7B 模型推理，推荐什么显卡？", context=False)
    assert p.budget is not None and p.budget.amount == 30_000
    assert "gpu_count" not in p.unusable and p.gpu_count is None
    assert parse("买两块卡", context=False).gpu_count == 2
