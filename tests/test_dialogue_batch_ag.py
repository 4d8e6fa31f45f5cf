"""The classes blind batch ag found (bench/blind/batch-ag), each fixed by mechanism: a count written after '的'
('H200的8卡'), a rack asked of '柜' alone, a budget said of cards compared counts what it buys of each, a question
about the wait before the answer starts is time to first token, each training job named is timed, and a memory size
said alone ('the 256gb one') is the compared card of that size or its sibling."""

from __future__ import annotations

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize(("text", "gpu", "count"), [
    ("想上H200的8卡HGX服务器", "h200-sxm", 8),
    ("4090 的 4 张卡", "rtx-4090", 4),
])
def test_a_count_written_after_de_is_the_cards_count(text: str, gpu: str, count: int) -> None:
    assert [(g.gpu, g.count) for g in parse(text).gpus] == [(gpu, count)]


def test_an_hgx_node_in_an_8kw_rack_does_not_fit(adv: Advisor) -> None:
    """A DGX/HGX H200 is rated 10.2 kW by its maker: over an 8 kW rack's power, so not even one fits (the reply
    once read one H200 at 2.0 kW and put four in the rack)."""
    _, (r,) = talk(adv, "机房单柜供电8kW，风冷，想上H200的8卡HGX服务器，一个柜能放几台？")
    (cost,) = ok_calls(r, "machine_cost")
    assert (cost.arguments["gpu"], cost.arguments["count"]) == ("h200-sxm", 8)
    assert cost.result["nodes_per_rack"] == 0 and "10.2 kW" in r.text.splitlines()[0]


@pytest.mark.parametrize("text", ["那换成8卡L20的推理机或者8卡4090的呢，一个柜几台", "柜子能放几台",
                                  "每柜放几台8卡4090", "几台放一个柜"])
def test_a_rack_asked_of_gui_alone_is_the_rack_question(text: str) -> None:
    assert "rack" in parse(text).asks


def test_cards_compared_in_8kw_racks_each_get_their_count_per_rack(adv: Advisor) -> None:
    """8× L20 at 275 W and 8× RTX 4090 at 450 W (+ host): about 2.9 kW and 4.4 kW at the wall, so an 8 kW rack takes
    2 and 1 of them (floor(8 / 2.9) = 2, floor(8 / 4.4) = 1)."""
    _, (_, r) = talk(adv, "机房单柜供电8kW，风冷，想上H200的8卡HGX服务器，一个柜能放几台？",
                     "那换成8卡L20的推理机或者8卡4090的呢，一个柜几台")
    per_rack = {c.arguments["gpu"]: c.result["nodes_per_rack"] for c in ok_calls(r, "machine_cost")}
    assert per_rack == {"l20": 2, "rtx-4090": 1}
    assert r.text.startswith("【8 张 L20 48GB】**机柜**")


def test_a_budget_what_if_on_cards_compared_counts_what_it_buys_of_each_first(adv: Advisor) -> None:
    """¥500,000 on RTX 4090 (¥17,280 each, 8 to a host): 16 cards in two hosts fit (3 hosts' worth would not); the
    answer leads and the comparison's verdict is not repeated above it."""
    _, (r1, r2) = talk(adv, "4090和A100哪个适合跑gromacs？预算20万", "预算加到50万呢")
    assert r1.text.startswith("**单精度（FP32）算例") and "¥200,000 能买 8 张 GeForce RTX 4090" in r1.text
    assert r2.text.startswith("**¥500,000 能买 16 张 GeForce RTX 4090**")
    (call,) = ok_calls(r2, "affordable")
    # the two compared, and the A100's PCIe card (what a budget too small for an SXM baseboard buys of that chip)
    assert set(call.arguments["only_gpus"]) == {"rtx-4090", "a100-sxm-80gb", "a100-pcie-80gb"}


def test_counting_several_cards_on_a_budget_keeps_the_comparisons_pick(adv: Advisor) -> None:
    """The cards counted on the budget are not 'the configuration': 'the 8-gpu option' stays the H200 the FP64
    comparison picked."""
    _, (_, r) = talk(adv, "FP64 CFD and VASP, ~$400k. L40S, H200 or MI300X?",
                     "how much power per node for the 8-gpu option? our racks are 15kW")
    (cost,) = ok_calls(r, "machine_cost")
    assert cost.arguments["gpu"] == "h200-sxm"


@pytest.mark.parametrize("text", [
    "and how long to process a 20k token document before it starts answering",
    "how long before it starts answering if I paste a 30k token contract?",
    "一份2万token的文档，开始回答前要等多久",
])
def test_the_wait_before_the_answer_starts_is_time_to_first_token(text: str) -> None:
    p = parse(text)
    assert "ttft" in p.asks and "training_time" not in p.asks


def test_each_training_job_named_is_timed_on_the_cards(adv: Advisor) -> None:
    """Qwen2.5-7B full fine-tune on 2B tokens on 8× H100: 6 × 7.6e9 × 2e9 = 9.1e19 FLOP; at 8 × 989 TFLOPS and an
    MFU of 0.2–0.4 that is 8–16 hours — never the 72B LoRA's days."""
    _, (r,) = talk(adv, "want to full fine-tune Qwen2.5-7B on ~2B tokens, and later LoRA on a 72B. what GPUs do we "
                        "need and how long would the 7B run take on 8xH100?")
    timed = {c.arguments["model"]: c.result["hours"] for c in ok_calls(r, "training_time")}
    assert 8 <= timed["qwen2.5-7b"] <= 16
    line = next(x for x in r.text.splitlines() if x.startswith("- Qwen2.5-7B"))
    assert "Time on 8× H100 SXM 80GB on the same data: about 13" in line


def test_a_size_said_alone_is_the_compared_card_of_that_size_or_its_sibling(adv: Advisor) -> None:
    """DeepSeek-V3 at Q4_K_M is about 406 GB: the M3 Ultra 256GB (192 GiB for the GPU under macOS) does not hold it,
    the 512GB does; never a generic '256 GB card' with system RAM beside it."""
    _, (_, r) = talk(adv, "M4 Max 128GB vs M3 Ultra 256GB Mac Studio for 70B models?",
                     "what about deepseek v3 671b, would the 256gb one handle it? or do i need the 512gb")
    first = r.text.splitlines()[0]
    assert first.startswith("**Mac Studio M3 Ultra 512GB holds DeepSeek-V3") and "256 GB card" not in r.text
    assert parse("would the 256gb one handle it? or do i need the 512gb").memory_variants == [256, 512]


@pytest.mark.parametrize(("text", "amount"), [("如果用户涨10倍，API一个月三万呢？", 30_000), ("API每月2万", 20_000),
                                              ("现在调deepseek api一个月3000块左右", 3_000)])
def test_an_api_bill_in_wan_is_the_monthly_spend_never_a_budget(text: str, amount: float) -> None:
    p = parse(text)
    assert p.api_monthly_spend is not None and p.api_monthly_spend.amount == amount and p.budget is None


@pytest.mark.parametrize(("text", "tokens"), [("那要是换成13B，数据2T呢", 2e12), ("训练集大概3000亿", 3e11),
                                              ("pretrain a 1B model, dataset of 500B", 5e11),
                                              ("数据2T，要多大硬盘", None)])
def test_a_corpus_said_by_its_size_is_tokens_unless_it_is_storage(text: str, tokens: float | None) -> None:
    assert parse(text).dataset_tokens == tokens


def test_a_model_swapped_in_asks_the_last_question_again_and_the_card_named_keeps_its_count(adv: Advisor) -> None:
    """13B on 2T tokens: 6 × 13e9 × 2e12 = 1.56e23 FLOP, (13 / 7) × 2 ≈ 3.7× the first run (7B on 1T); each card's
    count to finish in about two months is asked again, and the H100 then named alone is that count (never one card,
    which would take ten years)."""
    _, (r1, r2, r3) = talk(adv, "我们打算从头预训练一个7B模型，数据1T tokens，能租到H800/H100，想两个月内训完，"
                                "要多少卡", "那要是换成13B，数据2T呢",
                           "租的话H100大概多少钱一卡时？13B这个整体训下来多少钱")
    first, second = ({c.arguments["gpu"]: c.result["gpu_hours"] for c in ok_calls(r, "training_time")
                      if c.arguments["count"] == 1} for r in (r1, r2))
    assert second["h100-sxm"] == pytest.approx(first["h100-sxm"] * 13 * 2 / 7, rel=0.02)
    assert r2.text.startswith("**H800 SXM 80GB：") and "张**能在" in r2.text.splitlines()[0]
    counted = int(r2.text.splitlines()[1].split("：")[1].split(" 张")[0])
    (timed,) = [c for c in ok_calls(r3, "training_time") if c.arguments["gpu"] == "h100-sxm"]
    assert timed.arguments["count"] == counted and r3.text.startswith(f"**租 {counted} 张 H100")


@pytest.mark.parametrize(("text", "asks"), [
    ("how much power and noise for that? it would sit in our office storage room, not a datacenter", ["heat", "noise"]),
    ("这台整机功耗多少", ["heat"]),
])
def test_a_machines_power_and_noise_asked_together_are_both_asks(text: str, asks: list[str]) -> None:
    assert parse(text).asks == asks
    assert parse("4090功耗多少").asks == []  # a card's own power is a spec, not the machine's heat


def test_power_and_noise_for_the_recommended_box_answer_both(adv: Advisor) -> None:
    """4× RTX 3090 Ti at 450 W plus a host: about 2.4 kW at the wall, all of it heat (× 3.412 BTU/hr per W)."""
    _, (_, r) = talk(adv, "We're a 40-person law firm, want a private assistant on-prem, 20 people using it at the "
                          "same time, 70B model. Budget about 30k EUR.",
                     "how much power and noise for that? it would sit in our office storage room")
    assert r.text.startswith("**Heat:**") and "**Noise:**" in r.text and "None of my calculators" not in r.text


def test_adding_a_card_to_one_owned_prices_only_the_card_added(adv: Advisor) -> None:
    """'got a used 3090' owns one (and the PC it is in): a second one costs the catalog's $750 for a used 3090,
    never two cards plus a $2,500 host."""
    assert parse("got a used 3090 24gb, can i run llama 3.3 70b on it?").existing is not None
    assert parse("how many GPUs do we need? got to decide by friday").existing is None
    _, (_, r) = talk(adv, "got a used 3090 24gb, can i run llama 3.3 70b on it? q4 is fine. how many tok/s roughly",
                     "what if i add a second used 3090, so 48gb total? what would that cost me in usd and how fast "
                     "would it be")
    (cost,) = ok_calls(r, "machine_cost")
    assert cost.arguments["count"] == 1 and not cost.arguments["include_host"]
    assert r.text.startswith("**To buy:** one GeForce RTX 3090: **$750**")


@pytest.mark.parametrize(("text", "gpu"), [
    ("if we go with the Max-Q version of the pro 6000, how many fit in one box?", "rtx-pro-6000-blackwell-max-q"),
    ("the max-q pro 6000", "rtx-pro-6000-blackwell-max-q"),
    ("A100 80GB pcie version", "a100-pcie-80gb"),
    ("RTX 4090 in a PCIe x8 slot", "rtx-4090"),  # a slot's word is no edition of a card that has none
])
def test_an_edition_said_apart_from_the_name_is_that_edition(text: str, gpu: str) -> None:
    assert [g.gpu for g in parse(text).gpus] == [gpu]


@pytest.mark.parametrize(("text", "lead"), [
    # 4090: 3 slots each, a tower's 8 slot positions take 2 (hardware_rules §5); 2 × 450 W + 230 W CPU + 150 W ≈ 1.3 kW
    ("一台工作站能装几张4090？", "**一台塔式工作站能装 2 张 GeForce RTX 4090**"),
    # Max-Q: a 2-slot 300 W blower: 4 in a tower, 1.2 kW of cards
    ("how many RTX PRO 6000 Max-Q can I fit in a tower? total power?",
     "**4× RTX PRO 6000 Blackwell Max-Q Workstation Edition fit in one tower workstation**"),
    # passive L40S: a server, at most the 8 a GPU server holds
    ("how many L40S can go in one server?", "**Up to 8× L40S 48GB in one rack server**"),
])
def test_how_many_fit_in_one_box_is_the_most_the_build_check_passes(adv: Advisor, text: str, lead: str) -> None:
    _, (r,) = talk(adv, text)
    assert r.text.startswith(lead)
    assert "你好" not in r.text and "Hello" not in r.text  # an answer, then the use question: no greeting


def test_a_per_user_speed_target_missed_says_how_many_copies_reach_it(adv: Advisor) -> None:
    """50 users at once on 4× RTX 4090 (Qwen2.5-32B INT4) give under 20 tokens/s each; copies of the box, each
    serving its share of the users (ceil(50 / k)), reach it — the answer names the count, and each copy's speed is
    its own decode at that share (checked against the tool's figure for that batch)."""
    _, (r,) = talk(adv, "部署Qwen2.5-32B，4张4090，50人同时用，每人要20 tokens/s，够吗")
    line = next(x for x in r.text.splitlines() if x.startswith("**要达到的话"))
    k = int(line.split("部署 ")[1].split(" 套")[0])
    share = -(-50 // k)
    assert f"每套分担 {share} 个用户" in line
    runs = {c.arguments["batch"]: c.result for c in r.tool_calls if c.name == "perf_decode" and c.ok}
    per_user = {b: x["per_sequence_tokens_per_s"] or x["tokens_per_s"] for b, x in runs.items()}
    assert per_user[share] >= 20 > per_user[-(-50 // (k - 1))] if k > 2 else per_user[share] >= 20


def test_each_card_compared_is_held_to_the_speed_target_on_its_own_decode(adv: Advisor) -> None:
    """The L40S option's per-user speed is the L40S's decode, never the H100's (a review found the H100's figure
    under the L40S label)."""
    _, (r,) = talk(adv, "serving llama 3.1 8b, ~200 concurrent sessions, ~50 tok/s per user. H100 vs L40S, how many "
                        "of each?")
    base = {c.arguments["gpu"]: c.result for c in r.tool_calls if c.name == "perf_decode" and c.ok
            and c.arguments["batch"] == 200}
    for gpu, label in (("h100-sxm", "H100 SXM 80GB]"), ("l40s", "L40S 48GB]")):
        line = next(x for x in r.text.splitlines() if label in x and "Speed target" in x)
        speed = base[gpu]["per_sequence_tokens_per_s"] or base[gpu]["tokens_per_s"]
        assert f"about {speed:.1f} tokens/s per user" in line


def test_each_card_compared_gets_its_speed_when_another_does_not_fit(adv: Advisor) -> None:
    """The owned 3060 12GB does not hold Qwen2.5-32B Q4_K_M (22.3 GB); the 3090, the 22 GB 2080 Ti and the 4090 do,
    and each is timed (the 3060's miss once skipped every later card's speed). '两千多' is the 2080 Ti's price
    (¥2,000), never a budget: at ¥2,000 it gives the most speed for the money."""
    text = ("手上一张3060 12g，想本地跑大模型玩，主要qwen 14b、32b量化版。闲鱼二手3090 24g大概4500，"
            "2080ti魔改22g两千多，换哪个？还是加钱上4090")
    p = parse(text)
    assert {g: m.amount for g, m in p.card_prices.items()} == {"rtx-3090": 4500, "rtx-2080-ti-22gb": 2000}
    assert p.budget is None
    _, (r,) = talk(adv, text)
    timed = {c.arguments["gpu"] for c in r.tool_calls if c.name == "perf_decode" and c.ok}
    assert {"rtx-3090", "rtx-2080-ti-22gb", "rtx-4090"} <= timed
    assert "按你给的价格，Modded RTX 2080 Ti 22GB (China) 性价比最高" in r.text


@pytest.mark.parametrize("text", ["Is the RTX 6000 Ada or the L40S any good for VASP, or do we need H100/H200? "
                                  "budget for ~8 GPUs", "预算够买8张卡，跑VASP用H100还是A100"])
def test_a_count_said_apart_from_several_cards_is_each_ones_count(adv: Advisor, text: str) -> None:
    """Eight of each are compared: 8 × 67 TFLOPS of FP64 = 536 for the H100 (one card's 67 once stood for the
    cluster)."""
    assert parse(text).gpu_count == 8
    s, _ = talk(adv, text)
    assert set(s.profile.compare_counts.values()) == {8}


def test_a_box_count_asked_in_a_follow_up_replaces_the_one_card_check(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "Should I buy a 5090 for $2,500 or keep renting a 4090 at $0.35/hr? 6 hours a day.",
                     "how many RTX PRO 6000 Max-Q can I fit in a tower? total power?")
    assert r.text.startswith("**4× RTX PRO 6000 Blackwell Max-Q") and "for one RTX PRO 6000" not in r.text


@pytest.mark.parametrize(("text", "method", "tokens"), [
    ("我们团队要从头预训一个7B的模型，数据1T token", "pretrain", 1e12), ("如果数据加到2T呢", None, 2e12)])
def test_pretraining_from_scratch_and_a_corpus_grown_to_a_size(text: str, method: str | None,
                                                                  tokens: float) -> None:
    p = parse(text)
    assert (p.method, p.dataset_tokens) == (method, tokens)


def test_an_sxm_card_named_for_rack_power_is_a_node_of_eight_and_the_budget_counts_it(adv: Advisor) -> None:
    """H200 SXM comes on 8-GPU baseboards: an HGX/DGX H200 node is rated 10.2 kW, so a 15 kW rack holds one (a
    single 700 W card once read as 2 kW put seven in it); €400k buys one node of eight (two would be over)."""
    _, (_, r) = talk(adv, "Research computing: VASP and an FP64 CFD code. H100, H200, L40S or MI210? Budget ~400k "
                          "EUR.", "how many nodes could we get for the budget with H200, and what is the rack "
                                  "power? our racks are limited to 15 kW each")
    (cost,) = ok_calls(r, "machine_cost")
    assert (cost.arguments["count"], cost.result["nodes_per_rack"]) == (8, 1)
    assert r.text.startswith("**€400,000 buys 8× H200 SXM 141GB**")


@pytest.mark.parametrize(("text", "circuits", "redundant"), [
    ("供电是双路220V 32A", None, True), ("dual A/B feeds, 230V 32A each", None, True),
    ("two 230V 32A circuits", 2, None), ("两路 32A 回路", 2, None)])
def test_redundant_feeds_do_not_add_up(text: str, circuits: int | None, redundant: bool | None) -> None:
    p = parse(text)
    assert (p.circuits, p.redundant_feeds) == (circuits, redundant)


def test_an_hgx_node_on_redundant_220v_32a_feeds_is_over_one_feed(adv: Advisor) -> None:
    """Each A/B feed must carry the node alone: 220 V × 32 A × 0.8 = 5,632 W continuous, under the ~10.7 kW an
    8× H100 node draws at the wall (the two feeds were once added up and the verdict was 'no problem')."""
    _, (r,) = talk(adv, "一台8卡H100 SXM（HGX）的服务器，我们机柜单柜12kW，能放几台？供电是双路220V 32A")
    check = ok_calls(r, "check_build")[0].result
    wall = next(f for f in check["findings"] if f["id"] == "power-wall-circuit")
    assert wall["severity"] == "error" and wall["numbers"]["continuous_limit_w"] == 5632
    assert "读作：双路是冗余供电" in r.text


@pytest.mark.parametrize(("text", "gpus"), [("contracts are long, like 50-80 pages.", []), ("30-90 users at peak", []),
                                            ("RTX 50-90 series", ["rtx-5090"]), ("4090 vs 3090", ["rtx-4090",
                                                                                                  "rtx-3090"])])
def test_a_range_of_two_numbers_is_never_a_card(text: str, gpus: list[str]) -> None:
    assert [g.gpu for g in parse(text).gpus] == gpus


@pytest.mark.parametrize(("text", "price", "currency"), [("I pay 27p per kWh", 0.27, "GBP"),
                                                         ("electricity is 12 cents/kWh", 0.12, "USD")])
def test_a_tariff_in_pence_or_cents_is_hundredths(text: str, price: float, currency: str) -> None:
    p = parse(text)
    assert (p.kwh_price, p.kwh_currency) == (price, currency)


def test_a_context_said_outweighs_the_pages_estimate() -> None:
    """'50-80 pages … 32k context open': the 32,768 tokens said are sized (80 pages × 650 = 52,000 is only an
    estimate)."""
    p = parse("contracts are long, like 50-80 pages. how much for kv cache if 15 people have 32k context open")
    assert (p.context_tokens, p.concurrency) == (32768, 15) and not p.gpus
    assert parse("contracts are 80 pages long").context_tokens == 52_000


def test_a_card_called_by_its_maker_is_the_one_the_conversation_holds(adv: Advisor) -> None:
    """'Mac那台' after a Mac Studio and an RTX 4090 were discussed: the Mac's power (about 270 W at most), never the
    4090's."""
    _, (_, _, r) = talk(adv, "想在家跑DeepSeek R1 671B，Mac Studio M3 Ultra 512G 和攒多卡比哪个好？",
                        "那我现在的4090加128G内存能跑吗？", "Mac那台功耗和噪音咋样？一天开24小时电费多少钱")
    (cost,) = ok_calls(r, "machine_cost")
    assert cost.arguments["gpu"] == "mac-studio-m3-ultra-512gb" and "Mac Studio" in r.text.splitlines()[0]


@pytest.mark.parametrize(("text", "added"), [
    ("what if i only get one 3090 for now and add the second later, can i run the 70b?", None),
    ("先买一张4090，以后再加一张", None), ("what if I add a second 3090?", 1), ("再加一张4090", 1)])
def test_a_card_added_later_is_not_added_now(text: str, added: int | None) -> None:
    assert parse(text).added_cards == added


@pytest.mark.parametrize(("text", "share"), [("如果预算砍一半，改部署qwen3-32b，一台够不够？能撑多少并发", None),
                                             ("如果一半的人同时用呢", 0.5), ("员工里一半同时在线", 0.5),
                                             ("what if half of them use it at the same time", 0.5)])
def test_half_is_a_share_of_people_only_when_people_are_said(text: str, share: float | None) -> None:
    """'预算砍一半' halves the budget: it once made 1,000 of 2,000 staff users at once."""
    assert parse(text).people_share == share
