"""The classes blind batch aj found (bench/blind/batch-aj), each fixed by mechanism: a relative budget change
('预算砍一半', 'cut by 30%'), a day's traffic split by a ratio said ('输入输出比 3:1', 'mostly input, maybe 90/10'), a
quarter of a year is no GGUF level ('by Q3'), a what-if that runs a card at a precision is no card lookup, an hourly
rate said makes the cost a rental one, requests a day × tokens a request is traffic that sizes the users at once, an
organisation buys new cards first, a card swapped into a configuration keeps its count, a count asked with a
deadline is the count that finishes in time (said right under the verdict), a PUE and a supply said are used, and
'with each one' after a comparison answers for each card compared."""

from __future__ import annotations

import math

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse
from tools.ownership import MachineCostInput, feed, machine_cost


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


# ----------------------------------------------------------------------------- what the message says


@pytest.mark.parametrize(("text", "factor"), [
    ("预算砍一半呢？", 0.5), ("预算只剩一半了怎么办", 0.5), ("一半的预算呢", 0.5), ("经费要砍掉30%", 0.7),
    ("what if the budget is cut by 30%", 0.7), ("预算再加 20%", 1.2),
])
def test_a_budget_changed_by_a_share_scales_the_budget(text: str, factor: float) -> None:
    assert parse(text).scaled == ("budget", factor)


def test_half_the_budget_in_a_follow_up_halves_it(adv: Advisor) -> None:
    session, _ = talk(adv, "预算三万，想本地跑 Qwen2.5-14B 聊天，买什么卡？")
    adv.reply("预算砍一半呢？", session)
    assert session.profile.budget is not None and session.profile.budget.amount == 15_000


@pytest.mark.parametrize(("text", "share"), [
    ("我们每天大概 2000 万 token，输入输出比 3:1，用 API 还是自建？", 0.25),  # 1 of 4 tokens is output
    ("about 50M tokens a day, input:output 4:1, buy or API?", 0.2),
    ("50M tokens/day with a 5 to 1 input to output ratio", round(1 / 6, 4)),
    ("we push roughly 50M tokens/day through gpt-4o-mini (mostly input, maybe 90/10)", 0.1),
    ("每天5000万tokens（输入占80%），API 贵还是自己买卡划算", 0.2),
])
def test_a_ratio_said_splits_the_days_tokens(text: str, share: float) -> None:
    said = parse(text)
    assert said.output_share == share
    assert said.daily_tokens is not None and said.daily_input_tokens is None  # a total, not an input total


@pytest.mark.parametrize(("text", "precision"), [
    ("traffic is gonna 5x by Q3. how much would it cost", None), ("Q4 2027 we will buy", None),
    ("明年Q3前要上线", None), ("70b at q4 on a 3090", "Q4_K_M"), ("run it in q4 please", "Q4_K_M"),
])
def test_a_quarter_of_the_year_is_no_gguf_level(text: str, precision: str | None) -> None:
    assert parse(text).precision == precision


@pytest.mark.parametrize(("text", "pue", "supply"), [
    ("两台H100那套一年电费多少？按0.8元/度，PUE 1.5算", 1.5, None),
    ("we're 208V 3 phase in the US", None, (208.0, 3)),
    ("三相380V", None, (380.0, 3)),
    ("230V single phase", None, (230.0, 1)),
])
def test_a_pue_and_a_supply_are_read(text: str, pue: float | None, supply: tuple[float, int] | None) -> None:
    said = parse(text)
    assert (said.pue, said.supply) == (pue, supply)


@pytest.mark.parametrize(("text", "org"), [
    ("我们是做跨境电商的小公司", True), ("We're a 25 person law firm", True), ("我想在家跑 70b", None),
])
def test_an_organisation_buying_is_read(text: str, org: bool | None) -> None:
    assert parse(text).organisation is org


# ----------------------------------------------------------------------------- what the reply does


def test_a_precision_tried_on_a_card_after_an_answer_reruns_the_plan(adv: Advisor) -> None:
    """'What about FP8 on the L40S, does that change the count?' once printed the L40S spec sheet."""
    _, (_, r) = talk(adv, "serving llama 3.1 8B to ~200 concurrent users, 1500 input / 300 output tokens per req, "
                          "how many H100s or L40S do we need? using vLLM",
                     "what about FP8 on the L40S, does that change the count?")
    assert r.mode != "spec"
    assert {c.arguments.get("precision") for c in ok_calls(r, "size_inference")} == {"fp8"}


def test_an_hourly_rate_said_prices_the_run_at_it(adv: Advisor) -> None:
    """The run's GPU-hours at the rate said: cost = GPU-hours × $2.50."""
    _, (_, r) = talk(adv, "need to full fine-tune qwen2.5 14B on ~2B tokens. how long on 8x H100?",
                     "and cost of each option at like $2.5/hr per H100?")
    run = ok_calls(r, "training_time")[0].result
    assert run is not None and math.isclose(run["cost_usd"], run["gpu_hours"] * 2.5, rel_tol=1e-6)
    assert "$2.50" in r.text.splitlines()[0]


def test_requests_a_day_times_tokens_a_request_size_the_users_at_once(adv: Advisor) -> None:
    """20,000 chats × 1,500 tokens = 30M tokens a day; 20 % output = 6M; the busiest hour at 3× the day's average
    is 6M / 86,400 × 3 = 208 tokens/s; at 20 tokens/s each, 10.4 → 11 replies streamed at once."""
    _, (r,) = talk(adv, "我们是做跨境电商的小公司，客服想接个大模型，每天大概2万条对话，每条来回平均1500 token左右，"
                        "是直接调deepseek api划算还是自己买卡部署？")
    sized = ok_calls(r, "recommend")[0].arguments
    assert sized["concurrency"] == math.ceil(6e6 / 86_400 * 3 / 20)
    api = ok_calls(r, "api_cost")[0].arguments
    assert api["daily_input_tokens"] + api["daily_output_tokens"] == 30e6


def test_an_organisation_gets_new_cards_before_used_and_grey_ones(adv: Advisor) -> None:
    from knowledge import load_catalog

    _, (r,) = talk(adv, "我们公司想部署 Qwen2.5-32B 给 10 个人用，INT4，预算 6 万，买什么卡？")
    (rec,) = [c for c in ok_calls(r, "recommend") if not c.call_id.startswith("alt_")]
    assert rec.arguments.get("new_cards_first") is True
    top = load_catalog().gpu(rec.result["options"][0]["gpu_id"])
    assert (top.price is None or top.price.kind != "used") and rec.result["options"][0]["market_rule"] is None


def test_cards_swapped_into_a_configuration_keep_its_count(adv: Advisor) -> None:
    """8× H100 for a 7B pre-training; 'H200 or B200 instead' is 8 of each, and the H200 (the H100's dense
    989 TFLOPS BF16 and the same MFU) takes the H100's time, the run pre-training a 7B of its own (not Qwen2.5-7B)."""
    _, (first, r) = talk(adv, "团队准备从头预训练一个7b的模型，数据1T token，打算租卡，h100八卡一台大概要跑多久？",
                         "那换成h200或者b200呢，大概能快多少")
    assert {(c.arguments["gpu"], c.arguments["count"]) for c in ok_calls(r, "training_time")} == \
        {("h200-sxm", 8), ("b200", 8)}
    h100 = ok_calls(first, "training_time")[0].result
    h200 = next(c.result for c in ok_calls(r, "training_time") if c.arguments["gpu"] == "h200-sxm")
    assert h100 is not None and h200 is not None and math.isclose(h100["hours"], h200["hours"], rel_tol=1e-9)
    assert "预训练" in r.text.splitlines()[0] and "全参微调" not in r.text


def test_a_count_asked_with_a_deadline_is_the_count_that_finishes_in_time(adv: Advisor) -> None:
    """6 × 7e9 × 1e12 = 4.2e22 FLOP at 989.4 TFLOPS × MFU 0.242 per GPU ≈ 48,700 GPU-hours; a month of 30.4 days
    is 730 hours, so 67 GPUs, whole nodes of 8: 72 — said before the memory details."""
    _, (r,) = talk(adv, "团队准备从头预训练一个7b的模型，数据1T token，打算租卡，h100八卡一台大概要跑多久？"
                        "用多少台能在一个月内训完")
    run = ok_calls(r, "training_time")[0].result
    assert run is not None
    needed = math.ceil(run["gpu_hours"] / (30.4 * 24))
    assert needed == 67
    line = next(i for i, x in enumerate(r.text.splitlines()) if "72 张" in x)
    assert line < next(i for i, x in enumerate(r.text.splitlines()) if "每卡构成" in x)
    assert "至少要 2 张" not in r.text


def test_the_electricity_counts_the_pue_said(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "机房运维，老板要上两台8卡H100的服务器（HGX那种）",
                     "两台H100那套一年电费多少？按0.8元/度，PUE 1.5算")
    (cost,) = ok_calls(r, "machine_cost")
    result = cost.result
    assert result is not None and cost.arguments["pue"] == 1.5
    assert math.isclose(result["yearly_kwh"], result["total_wall_w"] / 1000 * 8760 * 1.5, rel_tol=1e-3)
    assert "PUE 1.5" in r.text


@pytest.mark.parametrize(("watts", "volts", "phases", "amps", "breaker"), [
    (14_300, 208, 3, 39.7, 50),  # 14,300 / (208 × √3) = 39.7 A; ÷ 0.8 = 49.6 → 50 A (NEC sizes)
    (14_300, 400, 3, 20.6, 32),  # 20.6 A ÷ 0.8 = 25.8 → 32 A (IEC sizes)
    (1_800, 120, 1, 15.0, 20),   # 15 A ÷ 0.8 = 18.75 → 20 A
    (120_000, 208, 3, 333.1, None),  # past any one branch circuit
])
def test_a_feed_is_sized_by_the_80_percent_rule(watts: float, volts: float, phases: int, amps: float,
                                                breaker: int | None) -> None:
    assert feed(watts, volts, phases) == (amps, breaker)


def test_the_circuit_per_system_is_answered_on_the_supply_said(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "we're getting 4x DGX B200 next quarter. racks are 17kW air cooled",
                     "how many C13/C19 drops and what circuit per system? we're 208V 3 phase in the US")
    assert r.text.startswith("**Circuit:**") and "39.7 A" in r.text and "50 A" in r.text


def test_machine_cost_without_a_pue_counts_the_it_load_only() -> None:
    plain = machine_cost(MachineCostInput(gpu="h100-sxm", count=8, kwh_price=0.8, currency="CNY"))
    with_pue = machine_cost(MachineCostInput(gpu="h100-sxm", count=8, kwh_price=0.8, currency="CNY", pue=1.5))
    assert math.isclose(with_pue.yearly_kwh, plain.yearly_kwh * 1.5, rel_tol=1e-3)
    assert math.isclose(plain.yearly_kwh, plain.total_wall_w / 1000 * 8760, rel_tol=1e-3)


def test_with_each_one_after_a_comparison_answers_for_each_card(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "Mac Studio M4 Max 128GB or M3 Ultra 256GB for 70b models?",
                     "how long would it take to chew through a 30k token prompt on the 70b with each one?")
    assert r.mode == "compare"
    assert r.text.count("Time to first token") == 2 and r.text.startswith("[one Mac Studio")


# ----------------------------------------------------------------------------- two jobs, old boxes, image models


def test_serving_said_as_the_main_job_is_sized_and_the_side_training_checked(adv: Advisor) -> None:
    """'主要想跑 72B 给 20 个同学用，顺便做 7B/14B 的 LoRA': 72B served to 20 users is what is sized; the LoRA of the
    larger size said (14B) is checked on the same card."""
    said = parse("课题组预算30w左右，主要想本地跑qwen2.5-72b给组里20来个同学用，顺便做7b/14b的lora微调，买啥卡合适？")
    assert (said.use_case, said.model, said.concurrency) == ("inference", "qwen2.5-72b", 20)
    assert said.side_training is not None and (said.side_training.params_b, said.side_training.method) == (14, "lora")
    _, (r,) = talk(adv, said.text + "4090能不能上")
    side = [c for c in ok_calls(r, "size_training")]
    assert side and side[0].arguments["method"] == "lora" and side[0].arguments["gpu"] == "rtx-4090"
    assert "顺带的训练" in r.text.split("\n\n")[1]


@pytest.mark.parametrize("text", [
    "our old 4x GTX 1080 Ti box is dying. budget ~$40k for one or two new workstations. which GPUs?",
    "实验室那台4张V100的服务器坏了，预算20万换新的",
])
def test_a_dying_box_is_replaced_not_planned_on(text: str) -> None:
    said = parse(text)
    assert said.sold and not said.gpus and not said.existing


@pytest.mark.parametrize(("text", "people"), [("给组里20来个同学用", 20), ("30个研究生在用", 30)])
def test_students_are_people(text: str, people: int) -> None:
    assert parse(text).concurrency == people


def test_a_lab_budget_for_workstations_is_spent_on_the_fastest_it_buys(adv: Advisor) -> None:
    """A lab's $40k for cryo-EM workstations: four cards in a box lead, not the one card with the best FP32 per
    dollar."""
    _, (r,) = talk(adv, "lab manager here, we do cryo-EM processing (RELION 5, cryoSPARC). our old 4x GTX 1080 Ti box "
                        "is dying. budget ~$40k for one or two new workstations. which GPUs?")
    top = ok_calls(r, "recommend")[0].result["options"][0]
    assert top["count"] == 4 and top["score_basis"] == "performance-only" and top["total_price_usd"] <= 40_000
    assert f"4× {top['gpu']}" in r.text.splitlines()[0]


def test_a_count_said_against_the_pick_is_compared_at_that_count(adv: Advisor) -> None:
    _, (first, r) = talk(adv, "lab manager, cryo-EM with RELION. budget ~$12k for a workstation, which GPUs?",
                         "compare that with 4x RTX 6000 Ada")
    pick = ok_calls(first, "recommend")[0].result["options"][0]
    assert pick["gpu_id"] != "rtx-6000-ada"
    assert r.mode == "compare" and "4× RTX 6000 Ada Generation" in r.text


def test_an_image_model_with_a_budget_gets_the_fastest_new_cuda_card_it_buys(adv: Advisor) -> None:
    """SDXL with ¥30,000: one card (an image is not split over cards), the fastest the budget buys by FP16 compute
    as image tools run (GeForce at its FP16-accumulate rate), CUDA first, no grey-market board; half the budget
    buys a slower one."""
    from knowledge import load_catalog
    from tools.rates import media_tflops

    session, (r,) = talk(adv, "预算三万，想本地跑 Stable Diffusion XL 出图，买什么卡？")
    rec = ok_calls(r, "recommend")[0].result
    top = rec["options"][0]
    card = load_catalog().gpu(top["gpu_id"])
    assert top["count"] == 1 and card.vendor == "NVIDIA" and top["market_rule"] is None
    assert top["total_price_cny"] <= 30_000 and top["media_tflops"] == round(media_tflops(card), 1)
    assert all(o["count"] == 1 for o in rec["options"])
    assert card.name in r.text.splitlines()[0]
    cheaper = adv.reply("预算砍一半呢？", session)
    half = ok_calls(cheaper, "recommend")[0].result["options"][0]
    assert half["total_price_cny"] <= 15_000 and half["media_tflops"] < top["media_tflops"]


def test_geforce_runs_image_models_at_its_fp16_accumulate_rate() -> None:
    """RTX 4090: 165 TFLOPS dense FP16 with FP32 sums (the catalog's figure), 330 with FP16 sums; the RTX 6000 Ada
    (a workstation card) has no such split, so the two come out alike, as in published Stable Diffusion runs."""
    from knowledge import load_catalog
    from tools.rates import media_tflops

    cat = load_catalog()
    assert media_tflops(cat.gpu("rtx-4090")) == pytest.approx(2 * (cat.gpu("rtx-4090").throughput.fp16 or 0))
    ada = cat.gpu("rtx-6000-ada")
    assert media_tflops(ada) == ada.throughput.fp16
    assert 0.8 < media_tflops(cat.gpu("rtx-4090")) / media_tflops(ada) < 1.25


def test_prices_asked_in_euros_are_said_in_euros(adv: Advisor) -> None:
    _, (r,) = talk(adv, "We're a 25 person law firm and want a private assistant on-prem, 5-8 ppl at the same time. "
                        "What hardware do we need and roughly what does it cost in EUR?")
    assert "€" in r.text.splitlines()[0] and "$" not in r.text.splitlines()[0]


@pytest.mark.parametrize(("text", "kind"), [
    ("our IT guy says the server room only has a normal 16A socket and no extra cooling. is that a problem for "
     "what you suggested?", "build"),
    ("is the box you recommended ok for a 15A circuit?", "build"),
    ("why did you suggest the 4090?", "why"),
    ("can you suggest a card", "recommend"),
])
def test_what_you_suggested_refers_to_the_pick_it_does_not_ask_for_one(text: str, kind: str) -> None:
    said = parse(text)
    assert said.kind == kind and "recommend" not in said.asks


def test_a_room_without_cooling_gets_the_heat_and_the_outlet_check(adv: Advisor) -> None:
    """The build's wall draw is its heat: W × 3.412 BTU/hr; and a 230 V / 16 A outlet carries 80 % of 3,680 W."""
    _, (_, r) = talk(adv, "We're a 25 person law firm, private assistant, 5-8 ppl at once. What hardware do we need?",
                     "our IT guy says the server room only has a normal 16A socket and no extra cooling. is that a "
                     "problem for what you suggested?")
    (cost,) = ok_calls(r, "machine_cost")
    heat = cost.result["total_wall_w"] * 3.412
    assert f"{heat:,.0f} BTU/hr" in r.text and "2,944 W" in r.text


# ----------------------------------------------------------------------------- an HPC partition


HPC = ("I run the HPC group at a university. Main codes are VASP and a home-grown FP64 CFD solver (memory bw bound). "
       "Looking at H100 vs H200 vs MI300A vs B200 for a new partition. FP64 perf per dollar? total budget 1.2M USD")


def test_a_home_grown_code_is_no_domestic_chip_requirement() -> None:
    assert parse(HPC).domestic is None and parse("domestic accelerators only (no NVIDIA)").domestic is True


def test_mi300a_is_in_the_catalog_as_amd_publishes_it() -> None:
    """AMD's MI300A data sheet: 128 GB HBM3 at 5.3 TB/s, FP64 61.3 TFLOPS vector / 122.6 matrix."""
    from knowledge import load_catalog

    g = load_catalog().gpu("MI300A")
    assert (g.memory_gb, g.bandwidth_gbs, g.throughput.fp64_vector, g.throughput.fp64) == (128, 5300, 61.3, 122.6)


def test_a_bandwidth_bound_code_ranks_cards_by_bandwidth_and_value_skips_only_the_unpriced(adv: Advisor) -> None:
    """B200 7.7 TB/s > H200 4.8 > H100 3.35 (MI300A has no VASP GPU build); FP64 per $1k still ranks the priced
    cards (H100 67 TFLOPS / $25k = 2.7); the MI300A, sold only in systems, is said apart."""
    _, (r,) = talk(adv, HPC)
    assert r.text.splitlines()[0].startswith("**At catalog prices, H100 SXM 80GB gives the most FP64")
    assert "For a memory-bandwidth-bound code, B200 SXM 180GB is fastest: 7.7 TB/s" in r.text
    assert "No catalog price for Instinct MI300A 128GB (APU): left out" in r.text
    assert "H100 SXM 80GB has more" not in r.text and "memory bandwidth decides speed" in r.text


def test_a_tie_at_the_top_is_said_as_a_tie() -> None:
    from advisor.compare import _leader

    rows = [{"name": "H100", "fp64": 67.0}, {"name": "H200", "fp64": 67.0}, {"name": "B200", "fp64": 37.0}]
    assert _leader(rows, "fp64", "en", "compare.more_compute") == "H100, H200 are level at the top"


def test_nodes_the_budget_buys_are_counted_in_nodes_and_checked_as_one(adv: Advisor) -> None:
    """$1.2M ÷ (8 × H200 + an 8-GPU host) = 3 nodes; a named SXM card with no count is a node of 8 in the build
    check, and a 20 kW rack holds one 10.2 kW node."""
    _, (_, r) = talk(adv, HPC, "how many H200 nodes would that budget get us and what about power per rack? our racks "
                               "are 20kW")
    assert "That is 3 nodes of 8." in r.text.splitlines()[0]
    assert all(g["count"] == 8 for c in ok_calls(r, "check_build") for g in c.arguments["gpus"])
    assert "holds **1** of the 8× H200 SXM 141GB machines" in r.text and "1 nodes need" not in r.text


# ----------------------------------------------------------------------------- tender wording


@pytest.mark.parametrize("text", ["spec wording: what min specs should I write so it's not tailored to one vendor?",
                                  "招标参数怎么写，不想指定厂商", "what number should i put as acceptance criteria"])
def test_a_tender_wording_ask_is_read(text: str) -> None:
    assert "tender" in parse(text).asks


def test_a_tender_states_memory_in_all_and_per_card_from_the_sizing(adv: Advisor) -> None:
    """DeepSeek-V3 at FP8 for 30 users: the sizing's total × 1.2, and the smallest card size that holds it on one
    server of 8 (total ÷ 8) or two (total ÷ 16); acceptance at the users said, ≥ 10 tokens/s each."""
    _, (r,) = talk(adv, "我们要给政府客户写招标文件，只能用国产卡，跑 DeepSeek-V3 671B，大概30人同时用，"
                        "招标参数怎么写，"
                        "验收指标怎么定？")
    sized = next(c for c in ok_calls(r, "size_inference") if c.arguments.get("gpu") is None).result
    total = math.ceil(sized["total_bytes"] / 1e9 * 1.2)
    sizes = (16, 24, 32, 48, 64, 80, 96, 128, 141, 192, 288)
    one = next(s for s in sizes if s * 8 >= total * 1.0)
    two = next(s for s in sizes if s * 16 >= total * 1.0)
    lines = r.text.splitlines()
    assert lines[0].startswith("**招标技术参数") and f"≥ {total:,} GB" in lines[1]
    assert f"≥ {one} GB" in lines[2] and f"≥ {two} GB" in lines[2]
    assert "30 路并发" in r.text and "≥ 10 tokens/s" in r.text and "国产加速卡" in r.text


# ----------------------------------------------------------------------------- a student's two cards


STUDENT = ("本人学生党，手上有张3060 12g，想本地跑ds-r1 32b蒸馏版和画图（flux），预算6000块，"
           "是再收张二手3090还是直接攒钱上5090？")


def test_a_language_model_beside_an_image_model_is_the_one_compared(adv: Advisor) -> None:
    """The 32B language model decides between the cards; FLUX (12B: 24.8 GB at BF16, 13 GB in FP8 files) is checked
    on each; with ¥6,000 only the used 3090 is bought, and that leads."""
    said = parse(STUDENT)
    assert (said.model, said.side_media) == ("deepseek-r1-distill-qwen-32b", "flux.1-dev") and "side_media" in said.asks
    _, (r,) = talk(adv, STUDENT)
    lines = r.text.splitlines()
    assert lines[0].startswith("**预算 ¥6,000 内选 GeForce RTX 3090")
    assert any(line.startswith("**画图（FLUX.1-dev）**") and "GeForce RTX 5090：BF16、FP8 放得下" in line
               for line in lines)


def test_both_cards_said_of_an_owned_card_and_one_weighed_are_those_two(adv: Advisor) -> None:
    """A 3060 (170 W) owned and a 3090 (350 W) weighed: 'two cards together' is those two, 520 W of GPUs."""
    _, (*_, r) = talk(adv, STUDENT, "3090和3060能一起用吗？加起来36g能跑70b吗",
                      "那电源呢，我现在是650w金牌，两张卡一起插会不会炸，要换多大的")
    (check,) = ok_calls(r, "check_build")
    assert sorted((g["gpu"], g["count"]) for g in check.arguments["gpus"]) == [("rtx-3060-12gb", 1), ("rtx-3090", 1)]
    assert "显卡 520 W" in r.text and "3090 + GeForce RTX 3090" not in r.text


def test_requests_a_day_alone_size_the_users_at_once_on_the_typical_request(adv: Advisor) -> None:
    """50,000 requests of ~1,000 prompt / 300 output tokens: 15M output tokens a day; the busiest hour at 3× the
    day's average is 15M / 86,400 × 3 = 521 tokens/s, 26.04 → 27 replies at 20 tokens/s; the API is billed on the
    same 50M + 15M tokens."""
    _, (r,) = talk(adv, "我们是做AI写作工具的初创团队，想上线 llama3.1 70b 推理，每天请求量大概5万次。"
                        "自己买卡还是直接用大厂API，怎么算划算？")
    rec = next(c for c in ok_calls(r, "recommend") if not c.call_id.startswith("alt_"))
    assert rec.arguments["concurrency"] == math.ceil(50_000 * 300 / 86_400 * 3 / 20) == 27
    api = ok_calls(r, "api_cost")[0]
    assert api.arguments["daily_requests"] == 50_000  # billed at the same 1,000 in / 300 out a request
    assert "5,000 万" in r.text.splitlines()[0] and "1,500 万" in r.text.splitlines()[0]


@pytest.mark.parametrize(("text", "vendors"), [
    ("国产卡里海光、寒武纪、昇腾怎么选？", ["hygon", "cambricon", "huawei"]),
    ("Hygon or Ascend for our cluster?", ["hygon", "huawei"]),
    ("华为和海光哪家好", ["huawei", "hygon"]),
    ("we use NVIDIA and AMD cards", None),
])
def test_vendors_weighed_against_each_other_bound_the_choice(text: str, vendors: list[str] | None) -> None:
    assert parse(text).only_vendors == vendors
