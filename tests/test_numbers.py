"""advisor.numbers: numbers and money as written in zh/en chat. Expected values are worked out by hand."""

from __future__ import annotations

import itertools
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.numbers import (
    EN_NUMBER_RE,
    MAX_AMOUNTS,
    NUMBER_RE,
    cn_numeral,
    find_amounts,
    find_money,
    parse_amount,
    parse_number,
    scaled,
)

# ----------------------------------------------------------------------------- parse_number

PARSE_NUMBER = [
    # Arabic
    ("1,000", 1000), ("1.5", 1.5), ("12", 12), ("1,234,567.5", 1234567.5), ("0", 0),
    # formal Chinese
    ("一", 1), ("两", 2), ("十", 10), ("十五", 15), ("二十", 20), ("一百五十", 150), ("三千万", 30_000_000),
    ("十万", 100_000), ("一万零五", 10_005), ("一千零五十", 1050), ("十万八千", 108_000), ("一亿三千万", 130_000_000),
    ("一万亿", 10**12), ("壹佰", 100), ("万", 10_000),
    # spoken Chinese: elided last unit
    ("一万五", 15_000), ("两千五", 2500), ("三万二", 32_000), ("一百五", 150), ("一亿五", 150_000_000),
    ("一万五千五", 15_500),
    # approximate: the stated value
    ("十来万", 100_000), ("两万出头", 20_000), ("二十多", 20), ("20多万", 200_000), ("三千多", 3000),
    # ranges: the upper end
    ("三四万", 40_000), ("二三十", 30), ("一两万", 20_000), ("十二三", 13), ("七八千", 8000), ("三四", 4),
    # decimals, mixed Arabic and Chinese
    ("零点五", 0.5), ("三点一四", 3.14), ("一点五万", 15_000), ("1.5万", 15_000), ("3千", 3000), ("5千", 5000),
    ("2.3万", 23_000), ("3万5", 35_000), ("2万5千", 25_000), ("10 万", 100_000), ("二〇二四", 2024),
    # English words
    ("four", 4), ("twenty", 20), ("a dozen", 12), ("a couple", 2), ("twenty-five", 25), ("two hundred", 200),
    ("a couple thousand", 2000), ("two dozen", 24), ("one hundred twenty", 120), ("Sixteen", 16), ("dual", 2),
]


@pytest.mark.parametrize(("text", "expected"), PARSE_NUMBER)
def test_parse_number(text: str, expected: float) -> None:
    assert parse_number(text) == pytest.approx(expected)


NOT_A_NUMBER = ["几万", "十几万", "", "   ", "abc", "RTX", "一张卡", "五八万", "two three", "1.2.3", "3k", "半",
                "一万两万", "点", "9" * 400, "1e400", "inf", "NaN", "\x00"]


@pytest.mark.parametrize("text", NOT_A_NUMBER)
def test_parse_number_rejects(text: str) -> None:
    assert parse_number(text) is None


@pytest.mark.parametrize(("text", "expected"), [("半", 0.5), ("half", 0.5), ("一个半", 1.5), ("两个半", 2.5),
                                                ("one and a half", 1.5)])
def test_half_only_when_asked(text: str, expected: float) -> None:
    assert parse_number(text, half=True) == expected
    assert parse_number(text) is None


def test_cn_numeral_keeps_chinese_only() -> None:
    assert cn_numeral("一万五") == 15_000
    assert cn_numeral("二十") == 20
    assert cn_numeral("1.5万") is None
    assert cn_numeral("") is None


# ----------------------------------------------------------------------------- regex fragments and scaled


@pytest.mark.parametrize("token", ["1,000", "1.5", "一万五", "十来万", "两万出头", "1.5万", "10 万", "三四万", "零点五",
                                   "3万5", "20多万", "十万八千"])
def test_number_re_matches_whole_token(token: str) -> None:
    assert re.fullmatch(NUMBER_RE, token)
    assert parse_number(token) is not None


def test_number_re_in_context() -> None:
    assert re.search(rf"预算({NUMBER_RE})", "预算一万五左右").group(1) == "一万五"
    assert re.findall(NUMBER_RE, "一万五千块和2,000元") == ["一万五千", "2,000"]
    assert re.search(NUMBER_RE, "hello world, no digits") is None
    assert re.search(rf"({NUMBER_RE})\s*亿\s*参数", "700亿参数").group(1) == "700"  # embedding still backtracks
    assert re.fullmatch(EN_NUMBER_RE, "a couple thousand", re.IGNORECASE)
    assert re.search(EN_NUMBER_RE, "someone atone", re.IGNORECASE) is None


@pytest.mark.parametrize(("number", "mult", "expected"), [
    ("3", "k", 3000), ("3", "K", 3000), ("1.5", "w", 15_000), ("2", "万", 20_000), ("1", "M", 1e6), ("3", "亿", 3e8),
    ("10", "grand", 10_000), ("2", "billion", 2e9), ("1", "t", 1e12), ("5", None, 5), ("五", "千", 5000),
    ("2.5", "thousand", 2500), ("一万五", None, 15_000),
])
def test_scaled(number: str, mult: str | None, expected: float) -> None:
    assert scaled(number, mult) == expected


def test_scaled_rejects_non_numbers() -> None:
    assert scaled("x", "k") is None
    assert scaled("几", "万") is None


@pytest.mark.parametrize(("text", "expected"), [
    ("3k", 3000), ("3K", 3000), ("2.5k", 2500), ("1M", 1e6), ("1.5w", 15_000), ("1.5万", 15_000), ("10 grand", 10_000),
    ("三四万", 40_000), ("$3k", None), ("RTX 4090", None), ("3k 4k", None),
    # chat shorthand: the digit after the multiplier is its tenth, as in '一万七' ('4090要1w7左右' is ¥17,000)
    ("1w7", 17_000), ("2k5", 2500), ("12k4", 12_400), ("1W7", 17_000),
])
def test_parse_amount(text: str, expected: float | None) -> None:
    assert parse_amount(text) == expected


# ----------------------------------------------------------------------------- find_amounts

# (text, [(value, low, approx), ...])
AMOUNTS = [
    ("预算十来万", [(100_000, None, True)]),
    ("三四万", [(40_000, 30_000, False)]),
    ("两万出头", [(20_000, None, True)]),
    ("$3k", [(3000, None, False)]),
    ("1.5w", [(15_000, None, False)]),
    ("5千块", [(5000, None, False)]),
    ("二三十个人", [(30, 20, False)]),
    ("2-3万", [(30_000, 20_000, False)]),
    ("2~3万", [(30_000, 20_000, False)]),
    ("2到3万", [(30_000, 20_000, False)]),
    ("三到五万", [(50_000, 30_000, False)]),
    ("一到三百万", [(3_000_000, 1_000_000, False)]),
    ("20-30k", [(30_000, 20_000, False)]),
    ("2万-3万", [(30_000, 20_000, False)]),
    ("two to three thousand", [(3000, 2000, False)]),
    ("10 grand", [(10_000, None, False)]),
    ("1M tokens", [(1e6, None, False)]),
    ("约5万", [(50_000, None, True)]),
    ("about 5k", [(5000, None, True)]),
    ("5k左右", [(5000, None, True)]),
    ("a couple thousand bucks", [(2000, None, False)]),
    ("H100 80GB", [(80, None, False)]),
    ("8B model, 2T tokens", [(8e9, None, False), (2e12, None, False)]),
    ("我要两张4090和一台服务器", [(2, None, False), (4090, None, False), (1, None, False)]),
    ("2024-05-01", [(2024, None, False), (5, None, False), (1, None, False)]),
    ("一万多少钱", [(10_000, None, False)]),
    ("第三张卡", []),
    ("万一显存不够", []),
    ("千万别买", []),
    ("几万", []),
    ("十几万", []),
    ("统一起来", []),
    ("十分重要", []),
    ("fp16 on Qwen2.5", []),
]


@pytest.mark.parametrize(("text", "expected"), AMOUNTS)
def test_find_amounts(text: str, expected: list[tuple[float, float | None, bool]]) -> None:
    got = [(a.value, a.low, a.approx) for a in find_amounts(text)]
    assert got == expected


def test_amount_span_and_range_fields() -> None:
    [a] = find_amounts("预算2-3万元")
    assert (a.start, a.end, a.text) == (2, 6, "2-3万")
    assert (a.low, a.high) == (20_000, 30_000)
    [b] = find_amounts("一万五")
    assert (b.low, b.high, b.text) == (None, None, "一万五")


# ----------------------------------------------------------------------------- find_money

# (text, [(amount, currency, approx, low), ...])
MONEY = [
    ("$3k", [(3000, "USD", False, None)]),
    ("US$3k", [(3000, "USD", False, None)]),
    ("€2,000", [(2000, "EUR", False, None)]),
    ("2,000 euros", [(2000, "EUR", False, None)]),
    ("a couple thousand bucks", [(2000, "USD", False, None)]),
    ("5千块", [(5000, "CNY", False, None)]),
    ("3万元", [(30_000, "CNY", False, None)]),
    ("200美元", [(200, "USD", False, None)]),
    ("3k刀", [(3000, "USD", False, None)]),
    ("500欧", [(500, "EUR", False, None)]),
    ("¥8000", [(8000, "CNY", False, None)]),
    ("￥8,000", [(8000, "CNY", False, None)]),
    ("RMB 5万", [(50_000, "CNY", False, None)]),
    ("5万人民币", [(50_000, "CNY", False, None)]),
    ("USD 3000", [(3000, "USD", False, None)]),
    ("3000 usd", [(3000, "USD", False, None)]),
    ("十来万块", [(100_000, "CNY", True, None)]),
    ("预算大概三四万块钱", [(40_000, "CNY", True, 30_000)]),  # 大概: roughly
    ("预算十来万", [(100_000, None, True, None)]),
    ("预算2-3万", [(30_000, None, False, 20_000)]),
    ("budget 5k", [(5000, None, False, None)]),
    ("my budget is around 5k", [(5000, None, True, None)]),
    ("under 10k", [(10_000, None, False, None)]),
    ("2万以内", [(20_000, None, False, None)]),
    ("10 grand", [(10_000, None, False, None)]),
    ("两块4090，预算两万出头", [(20_000, None, True, None)]),
    # no money
    ("RTX 4090", []),
    ("8B model", []),
    ("H100 80GB", []),
    ("一张卡", []),
    ("两块4090", []),
    ("三四万", []),
    ("10 万", []),
    ("under 8 GPUs", []),
    ("花3天训练", []),
    ("上下文32k左右", []),
    ("70B左右的模型", []),
    ("up to 80GB", []),
    ("HK$500", []),
    ("budget 300W PSU", []),
]


@pytest.mark.parametrize(("text", "expected"), MONEY)
def test_find_money(text: str, expected: list[tuple[float, str | None, bool, float | None]]) -> None:
    got = [(m.amount, m.currency, m.approx, m.low) for m in find_money(text)]
    assert got == expected


def test_money_span_includes_marks() -> None:
    text = "预算$3k左右, or 5万元"
    spans = [text[m.start:m.end] for m in find_money(text)]
    assert spans == ["$3k", "5万元"]


def test_parse_number_one_via_token_only() -> None:
    assert parse_number("一") == 1
    assert find_money("一张卡") == []


# ----------------------------------------------------------------------------- robustness

HOSTILE = [
    "9" * 100_000,
    "1," * 50_000,
    "1,000" * 20_000,
    "一万五" * 33_000,
    "三四" * 50_000,
    "十来" * 50_000,
    "几" * 100_000,
    "1万" * 50_000,
    "0." * 50_000,
    "one " * 25_000,
    "$1 " * 33_000,
    "预算1" * 25_000,
    "2-" * 50_000,
    "1" + " " * 100_000 + "grand",
    ("1,一万五三四 2-3万 $5k 块 十来万 a couple ") * 2_500,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:12]))
def test_hostile_input_is_fast(text: str) -> None:
    began = time.perf_counter()
    find_amounts(text)
    find_money(text)
    parse_number(text)
    parse_amount(text)
    re.findall(NUMBER_RE, text)
    assert time.perf_counter() - began < 1.0


def test_amounts_are_capped() -> None:
    assert len(find_amounts("1 " * 5000)) == MAX_AMOUNTS


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789,.-~ kKwWmMbBt$¥€元块万千百十一二两三四五来多出头几点到ab")),
               max_size=40))
def test_never_raises_and_spans_are_ordered(text: str) -> None:
    assert parse_number(text) is None or isinstance(parse_number(text), float)
    amounts = find_amounts(text)
    for a, b in itertools.pairwise(amounts):
        assert a.end <= b.start
    for a in amounts:
        assert text[a.start:a.end] == a.text
        assert a.low is None or a.low < a.value
    money = find_money(text)
    for a, b in itertools.pairwise(money):
        assert a.end <= b.start
