"""Where cards can be bought: the market table, the recommender's region gate, and the chat around it.

Expectations come from the export rules themselves, not from the code:
* US rules of Oct 2022 stop A100/H100-class chips going to China; the Oct 2023 update adds everything above
  its performance threshold (A800/H800, L40S, RTX 4090 and later RTX 5090, MI300-class, Gaudi 3, Blackwell).
  A buyer in mainland China can still buy H20 (licence since Apr 2025) and, from Dec 2025, H200 to approved
  buyers — both with a caveat — and every card below the threshold (L20, RTX 4090 D, RTX 3090, A6000 …).
* Chinese domestic accelerators and the China-only variants (H20, L20, RTX 4090 D, A800, H800) are not sold
  outside mainland China.
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from advisor.cli import main
from advisor.engine import Advisor
from advisor.nlu.rules import parse
from knowledge import load_catalog
from knowledge.markets import availability, control_met, figures, load_markets, needs_die_area
from knowledge.messages import has, render
from tests.fakes.script import one, turn
from tools.recommend import Recommendation, RecommendInput, recommend

CAT = load_catalog()
BLOCKED_IN_CHINA = {"a100-sxm-80gb", "h100-sxm", "h100-pcie", "a800-sxm-80gb", "h800-sxm", "l40s", "rtx-4090",
                    "rtx-5090", "b200", "mi300x", "gaudi3-oam", "rtx-pro-6000-blackwell-ws", "l4", "h20"}
BUYABLE_IN_CHINA = {"rtx-4090d", "l20", "rtx-3090", "rtx-a6000", "rtx-5080", "a10", "t4"}
CHINA_ONLY = {"h20", "l20", "rtx-4090d", "a800-sxm-80gb", "h800-sxm"}

# Every catalogued data-centre card, its mainland-China status and the rule, derived by hand from the public record
# (NVIDIA Form 8-K 2022-08-31 and 2023-10-24; AMD 10-K 2022; BIS rules of 2022-10-07, 2023-10-17, 2026-01-15; the
# December 2026 catalog audit) and, for the parts between the thresholds, from TPP = dense TOPS x bits and the die
# area: L4 1,940 / 294.5 mm² = 6.59 >= 5.92 (3A090.a.2); L40 2,896 / 608.5 = 4.76 >= 1.6 with TPP >= 2,400
# (3A090.b); MI210 2,899 / 790 = 3.67 (3A090.b); A10 2,000 / 628.4 = 3.18 < 3.2 and L20 1,914 / 608.5 = 3.14
# (free); H20 2,368 < 2,400 with 2.91 (free of 3A090, then a licence in 2025 and end of production).
DATACENTER_STATUS = {
    "a100-sxm-80gb": ("unavailable", "us-2022-10"), "a100-pcie-80gb": ("unavailable", "us-2022-10"),
    "a100-pcie-40gb": ("unavailable", "us-2022-10"), "h100-sxm": ("unavailable", "us-2022-10"),
    "h100-pcie": ("unavailable", "us-2022-10"), "h100-nvl": ("unavailable", "us-2022-10"),
    "mi250x": ("unavailable", "us-2022-10"), "mi300x": ("unavailable", "us-2022-10"),
    # MI300A: TPP = 980.6 dense FP16 TFLOPS x 16 = 15,690 >= 4,800 with a 768 GB/s link >= 600 GB/s (3A090, 2022)
    "mi300a": ("unavailable", "us-2022-10"),
    "mi350x": ("unavailable", "us-2022-10"), "mi355x": ("unavailable", "us-2022-10"),
    "b200": ("unavailable", "us-2022-10"), "b300": ("unavailable", "us-2022-10"),
    "gaudi3-oam": ("unavailable", "us-2022-10"), "gaudi3-pcie": ("unavailable", "us-2022-10"),
    "a800-sxm-80gb": ("unavailable", "us-2023-10"), "a800-pcie-80gb": ("unavailable", "us-2023-10"),
    "h800-sxm": ("unavailable", "us-2023-10"), "l40s": ("unavailable", "us-2023-10"),
    "l40": ("unavailable", "us-2023-10"), "l4": ("unavailable", "us-2023-10"), "mi210": ("unavailable", "us-2023-10"),
    "mi100": ("unavailable", "us-2023-10"),  # FP16 matrix 184.6 x 16 = TPP 2,954 on 750 mm²: density 3.94
    "mi50-16gb": ("available", None), "mi50-32gb": ("available", None), "mi60": ("available", None),
    "h200-sxm": ("restricted", "us-2026-01"), "h200-nvl": ("restricted", "us-2026-01"),
    "mi325x": ("restricted", "us-2026-01"),
    "h20": ("unavailable", "nv-h20-eol"), "h20-141gb": ("unavailable", "nv-h20-eol"),
    "l20": ("available", None), "l2": ("available", None), "a10": ("available", None), "t4": ("available", None),
    "v100-sxm2-32gb": ("available", None), "v100-pcie-16gb": ("available", None),
    "v100-pcie-32gb": ("available", None), "tesla-p40": ("available", None), "tesla-p100-16gb": ("available", None),
}


def test_every_rule_is_known_and_worded_in_both_languages() -> None:
    markets = load_markets()
    ids = {g.id for g in CAT.gpus}
    for entry in markets.entries:
        assert set(entry.gpus) <= ids, set(entry.gpus) - ids
    for rule in markets.rules:
        assert rule.sources and all(has(lang, f"market.rule.{rule.id}") for lang in ("en", "zh"))


@pytest.mark.parametrize("gpu", sorted(g.id for g in CAT.gpus if g.tier == "datacenter" and not g.domestic))
def test_each_datacenter_card_has_the_status_its_figures_give(gpu: str) -> None:
    """The table is the whole datacenter catalog: a new card fails here until its expected status is written."""
    assert gpu in DATACENTER_STATUS, f"add {gpu}'s expected China status, derived by hand, to DATACENTER_STATUS"
    status, rule = DATACENTER_STATUS[gpu]
    where = availability(gpu, "cn")
    assert (where.status, where.rule.id if where.rule else None) == (status, rule)


def test_a_card_between_the_thresholds_always_has_its_die_area() -> None:
    """Without a die area the density tests cannot decide: the L4 was shown as on sale for that reason."""
    missing = [g.id for g in CAT.gpus if needs_die_area(g) and figures(g).die_mm2 is None]
    assert not missing


def test_the_figures_decide_not_the_names() -> None:
    """The same figures give the same answer whatever the card is called: an L4 with a lower INT8 rate (the China
    L2's 193 TOPS, TPP 1,544) falls under the 1,600 line and is free; a GeForce with the L4's figures is judged on
    TPP >= 4,800 alone and is free too."""
    l4 = next(g for g in CAT.gpus if g.id == "l4")
    assert figures(l4).tpp == pytest.approx(242.5 * 8, rel=0.01)
    assert figures(l4).density == pytest.approx(1940 / 294.5, rel=0.01)
    assert control_met(l4) is not None
    scale = 193 / 242.5
    rates = {p: v * scale for p, v in l4.throughput.model_dump().items() if v is not None}
    slower = l4.model_copy(update={"throughput": l4.throughput.model_copy(update=rates)})
    assert control_met(slower) is None
    consumer = l4.model_copy(update={"tier": "consumer"})
    assert control_met(consumer) is None


def test_licensed_parts_lie_inside_their_window() -> None:
    """The January 2026 policy covers chips under TPP 21,000 and 6,500 GB/s: a licensed part outside it would
    contradict its own figures (B200: TPP 36,000)."""
    for window in load_markets().windows:
        for gpu in window.gpus:
            g = next(x for x in CAT.gpus if x.id == gpu)
            assert figures(g).tpp < window.tpp_max and g.bandwidth_gbs < window.bandwidth_max_gbs, gpu


def test_domestic_and_china_only_cards_are_not_sold_elsewhere() -> None:
    for g in CAT.gpus:
        if g.domestic:
            assert availability(g.id, "global").rule.id == "cn-domestic"  # type: ignore[union-attr]
            assert availability(g.id, "cn").status == "available"


@pytest.mark.parametrize("gpu", sorted(BLOCKED_IN_CHINA))
def test_export_controlled_cards_cannot_be_bought_in_china(gpu: str) -> None:
    where = availability(gpu, "cn")
    assert where.status == "unavailable" and where.rule is not None and where.rule.date.year in (2022, 2023, 2025)
    assert availability(gpu, "global").status == ("unavailable" if gpu in CHINA_ONLY else "available")


def test_china_buyers_can_get_the_cards_below_the_threshold_and_h200_with_a_caveat() -> None:
    assert all(availability(g, "cn").status == "available" for g in BUYABLE_IN_CHINA)
    assert availability("h200-sxm", "cn").status == "restricted"
    assert availability("rtx-4090-48gb", "cn").status == "restricted"  # grey market: offered with the caveat
    assert all(availability(g, "global").status == "unavailable" for g in CHINA_ONLY)


def test_december_2026_additions_follow_the_2023_threshold() -> None:
    """TPP = dense TOPS x bit length: the RTX 5090 D v2 (4,750) and the new RTX PRO 4000/4500/5000 and GeForce
    5070 Ti / 5070 / 5060 Ti 8GB stay under 4,800 and are sold in China; the MI350X (FP8 4,614 x 8) is not. The
    5090 D v2 is made for China and is not sold elsewhere."""
    for gpu in ("rtx-5090-d-v2", "rtx-pro-5000-blackwell", "rtx-pro-4500-blackwell", "rtx-pro-4000-blackwell",
                "rtx-5070-ti", "rtx-5070", "rtx-5060-ti-8gb", "arc-pro-b50"):
        assert availability(gpu, "cn").status == "available", gpu
    for gpu, region, rule_id in (("mi350x", "cn", "us-2022-10"), ("rtx-5090-d-v2", "global", "cn-variant")):
        where = availability(gpu, region)
        assert where.status == "unavailable" and where.rule is not None and where.rule.id == rule_id, gpu
    assert availability("rtx-5090", "cn").status == "unavailable"


@pytest.fixture(scope="module")
def china_72b() -> Recommendation:
    return recommend(RecommendInput(workload="inference", model="qwen2.5-72b", budget_cny=2_000_000, region="cn"))


def test_a_china_buyer_is_never_offered_an_export_controlled_card(china_72b: Recommendation) -> None:
    offered = {o.gpu_id for o in china_72b.options}
    assert offered and not offered & BLOCKED_IN_CHINA
    market = {r.gpu_id for r in china_72b.rejected if r.stage == "market"}
    assert market >= BLOCKED_IN_CHINA
    reason = next(r.reason for r in china_72b.rejected if r.gpu_id == "h100-sxm")
    assert "2022" in render(reason, "en") and "中国大陆" in render(reason, "zh")


def test_a_china_buyer_sees_the_licence_caveat_on_h200(china_72b: Recommendation) -> None:
    restricted = [o for o in china_72b.options if o.gpu_id in ("h200-sxm", "h200-nvl")]
    assert restricted, "a ¥2M budget for a 72B model has room for H200 servers"
    for o in restricted:
        assert o.market == "restricted" and "licen" in render(o.why, "en") and "许可" in render(o.why, "zh")


def test_a_buyer_outside_china_gets_no_domestic_or_china_only_card() -> None:
    rec = recommend(RecommendInput(workload="inference", model="qwen2.5-72b", budget_usd=300_000, region="global"))
    offered = {o.gpu_id for o in rec.options}
    assert offered and not offered & (CHINA_ONLY | {g.id for g in CAT.gpus if g.domestic})
    assert any(o.gpu_id in ("h100-sxm", "h200-sxm", "b200", "mi300x") for o in rec.options)


def test_domestic_only_outside_china_is_a_clear_error() -> None:
    with pytest.raises(ValidationError, match="mainland China only"):
        RecommendInput(workload="inference", model="qwen2.5-72b", domestic_only=True, region="global")


@pytest.mark.parametrize(("text", "region"), [
    ("我们公司在杭州，想部署一个 32B 的模型", "cn"),
    ("人在上海，H100 买不到，有什么替代", "cn"),
    ("国内采购，预算 80 万", "cn"),
    ("受出口管制影响，我们只能买特供版", "cn"),
    ("we're a Chinese startup looking at inference boxes", "cn"),
    ("our lab is based in Shenzhen", "cn"),
    ("我在美国读书，想买张卡跑模型", "global"),
    ("we are based in the UK and need a training server", "global"),
    ("buying in Japan, budget ¥2,000,000", "global"),
    ("I want to run Llama 3 8B at home", None),
])
def test_the_region_is_read_from_what_people_say(text: str, region: str | None) -> None:
    assert parse(text).region == region


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_chinese_chat_without_a_place_assumes_mainland_china_and_says_so(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "预算 50 万，部署 Qwen2.5-72B 推理，10 个并发，买什么卡")
    rec = one(r, "recommend")
    assert rec.arguments["region"] == "cn"
    offered = {o["gpu_id"] for o in rec.result["options"]}
    assert not offered & BLOCKED_IN_CHINA
    assert "按中国大陆能买到的卡推荐" in r.text


def test_saying_where_you_buy_changes_the_cards(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "Qwen2.5-72B inference for 10 users, budget $300k, what should we buy?")
    assert one(turn(adv, s, "we are in Shanghai"), "recommend").arguments["region"] == "cn"
    r = turn(adv, s, "actually we buy through our office in Singapore")
    rec = one(r, "recommend")
    assert rec.arguments["region"] == "global"
    assert not {o["gpu_id"] for o in rec.result["options"]} & CHINA_ONLY


def test_a_named_card_the_buyer_cannot_get_is_flagged(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "我们在北京，想用 4 张 RTX 4090 跑 Llama-3.1-70B int4 推理")
    assert "买不到新卡" in r.text and "2023" in r.text
    s = adv.new_session()
    r = turn(adv, s, "We are in Texas. Can 4x RTX 4090 run Llama-3.1-70B int4 for inference?")
    assert "cannot be bought" not in r.text


def test_cli_and_chat_agree_for_a_china_buyer(adv: Advisor, capsys: pytest.CaptureFixture[str]) -> None:
    s = adv.new_session()
    r = turn(adv, s, "我在国内，预算 50 万，部署 Qwen2.5-72B 推理，上下文 8k，1 个并发")
    chat = one(r, "recommend").result["options"]
    assert main(["recommend", "--workload", "inference", "--model", "qwen2.5-72b", "--budget-cny", "500000",
                 "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["options"]
    assert [(o["gpu_id"], o["count"]) for o in cli[:3]] == [(o["gpu_id"], o["count"]) for o in chat[:3]]


@pytest.mark.parametrize("text", ["I'm in China and can't get H100s. What should I buy for Qwen2.5-72B inference, "
                                  "budget ¥800k?", "H100 买不到，部署 Qwen2.5-72B 推理有什么替代，预算 80 万"])
def test_a_card_the_buyer_cannot_get_is_ruled_out_not_planned_on(adv: Advisor, text: str) -> None:
    s = adv.new_session()
    r = turn(adv, s, text)
    assert s.profile.gpu is None and not [c for c in r.tool_calls if c.arguments.get("gpu") == "h100-sxm"]
    rec = one(r, "recommend")
    assert rec.arguments["region"] == "cn" and rec.result["options"]
    assert not {o["gpu_id"] for o in rec.result["options"]} & BLOCKED_IN_CHINA


def test_the_market_warning_is_said_once_and_answers_an_availability_question(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "想用 8 张 H200 训练，国内能买到吗")
    assert "H200 SXM 141GB 在中国大陆" in r.text and "许可" in r.text  # asked before the next question
    s = adv.new_session()
    first = turn(adv, s, "两张 4090 做 Llama-3-8B 的 LoRA 微调，够不够")
    again = turn(adv, s, "详细")
    assert "买不到新卡" in first.text and "买不到新卡" not in again.text


def test_a_yuan_buyer_pays_and_is_ranked_on_the_china_channel_price(china_72b: Recommendation) -> None:
    """H200 in China: ¥182,000 per GPU through the channel (Jan 2026: ¥1.4M per 8-GPU board, ¥190k per chip), not
    its dollar price × 7.2 — 4 GPUs + an HGX baseboard host ($60,000 × 7.2 = ¥432,000) = ¥1,160,000; value per
    price follows what is paid."""
    h200 = next(o for o in china_72b.options if o.gpu_id == "h200-sxm")
    assert h200.count == 4 and h200.total_price_cny == pytest.approx(4 * 182_000 + 60_000 * 7.2)
    assert h200.perf_per_price == pytest.approx(h200.decode_tokens_per_s / (h200.total_price_cny / 7.2 / 1000),
                                                rel=0.01)


def test_the_assumed_region_stays_when_the_conversation_switches_language(adv: Advisor) -> None:
    s = adv.new_session()
    first = one(turn(adv, s, "预算 50 万，部署 Qwen2.5-72B 推理，10 个并发，买什么卡"), "recommend")
    assert first.arguments["region"] == "cn"
    again = one(turn(adv, s, "what about 20 concurrent users?", lang="en"), "recommend")
    assert again.arguments["region"] == "cn"  # still mainland China until the user says otherwise
    moved = one(turn(adv, s, "we actually buy in Singapore"), "recommend")
    assert moved.arguments["region"] == "global"


def test_what_a_budget_buys_and_the_best_value_cards_are_those_sold_there(adv: Advisor) -> None:
    """¥300,000 would buy RTX 5090s or an RTX PRO 6000 elsewhere; in mainland China neither is sold new."""
    r = turn(adv, adv.new_session(), "预算 30 万能买什么卡")
    afford = one(r, "affordable")
    assert afford.arguments["region"] == "cn"
    assert not {o["gpu"] for o in afford.result["options"]} & {"rtx-5090", "rtx-4090", "rtx-pro-6000-blackwell-ws",
                                                                "rtx-pro-6000-blackwell-max-q", "rtx-6000-ada"}
    r = turn(adv, adv.new_session(), "best bang for buck GPU for local LLMs? we're in Berlin")
    value = one(r, "best_value")
    assert value.arguments["region"] == "global"
    assert value.result["ranked"] and not {o["gpu"] for o in value.result["ranked"]} & CHINA_ONLY


@pytest.mark.parametrize(("text", "says"), [
    ("RTX 3090 国内能买吗", "在中国大陆有售"),
    ("A800 还能买到吗", "在中国大陆买不到新卡"),
    ("H20 还能买吗", "许可证"),
    ("Can I still buy an RTX 4090 new in Shenzhen?", "cannot be bought new in mainland China"),
])
def test_an_availability_question_is_answered_from_the_market_table(adv: Advisor, text: str, says: str) -> None:
    """A800 (a 2022 China variant) fell under the 2023 rules; the RTX 3090 is below every threshold."""
    r = turn(adv, adv.new_session(), text)
    assert says in r.text.splitlines()[0]


def test_a_price_answer_names_the_kind_of_price(adv: Advisor) -> None:
    r = turn(adv, adv.new_session(), "3090 多少钱")
    assert "二手价" in r.text.splitlines()[0]  # the catalog's RTX 3090 price is a used-market one


def test_the_exchange_rate_line_appears_only_when_something_was_converted(adv: Advisor) -> None:
    """Domestic cards carry yuan prices of their own (China channel); with the host left out nothing is converted,
    while a listing with a host estimate (kept in dollars) converts it at the stated rate."""
    r = turn(adv, adv.new_session(), "信创，已经有服务器了，只买卡，预算 20 万能买什么卡")
    assert one(r, "affordable").result["options"] and "换算" not in r.text
    r = turn(adv, adv.new_session(), "预算 30 万能买什么卡")
    assert "按 7.2 人民币/美元换算" in r.text


@pytest.mark.parametrize(("text", "gpus"), [("the 4090 has 72 MB of L2 cache, is that enough?", ["rtx-4090"]),
                                            ("L2 缓存有多大", []), ("国内能买 L2 吗", ["l2"])])
def test_a_cache_level_is_no_card(text: str, gpus: list[str]) -> None:
    """The China-only L2 card shares its name with the L2 cache: a name followed by 'cache' is the cache."""
    assert [g.gpu for g in parse(text).gpus] == gpus


@pytest.mark.parametrize(("text", "verdict"), [
    ("国内能买 L4 吗？想用来跑 Qwen3-8B 推理", "L4 24GB 在中国大陆买不到新卡"),
    ("国内能买 B200 或者 B300 吗？", "B200 SXM 180GB 在中国大陆买不到新卡"),
    ("Can I buy an MI210 in China?", "cannot be bought new in mainland China"),
    ("国内现在能买 H20 吗", "H20 96GB (HGX) 在中国大陆买不到新卡"),
    ("我们是上海的一家中小企业，现在能买到 H200 吗？", "H200 SXM 141GB 在中国大陆：自 2026 年 1 月 15 日起"),
    ("RTX 5090 国内能买吗？", "GeForce RTX 5090 在中国大陆买不到新卡"),
    ("国内能买 L20 吗，跑 Qwen2.5-32B 够不够", "L20 48GB 在中国大陆有新卡销售"),
    ("4090D 国内还能买到吗", "在中国大陆有售"),
    ("国内能买到 L2 吗", "在中国大陆有售"),
    ("魔改的 4090 48G 国内能买吗？靠谱吗", "灰色市场"),
    ("Are H20 and H200 allowed to be sold to our Shanghai office?", "H20 96GB (HGX) cannot be bought new in mainland"),
])
def test_can_i_buy_it_here_is_answered_first(adv: Advisor, text: str, verdict: str) -> None:
    """Ten '能买吗' questions: the market verdict is the reply's first line, from the market table."""
    r = turn(adv, adv.new_session(), text)
    assert verdict in r.text.split("\n")[0], r.text[:300]


def test_a_value_winner_the_buyer_cannot_buy_is_followed_by_the_best_they_can(adv: Advisor) -> None:
    """B200 leads BF16 per yuan at catalog prices, but a Beijing buyer cannot get it new: the next line names the
    leader among the cards sold there (H200, licensed case by case)."""
    r = turn(adv, adv.new_session(), "B200、H200 和 H20 哪个性价比高？我们在北京")
    lines = r.text.split("\n")
    assert "B200" in lines[0] and "H200 SXM" in lines[1]
    assert lines[1].startswith("但 B200 SXM 180GB 在中国大陆买不到新卡")
