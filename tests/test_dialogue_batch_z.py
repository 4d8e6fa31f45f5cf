"""The classes blind batch z found (bench/blind/batch-z), each fixed by mechanism: comparisons that count every
card and say which suits the job, follow-ups on the configuration the conversation arrived at, quantities read
by what stands beside them, a stand-in model for a service nobody named a model for, and a question whose plan
would only print the last answer again."""

from __future__ import annotations

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse
from advisor.nlu.rules import asks_in
from knowledge import load_catalog


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


# ----------------------------------------------------------------------------- comparisons


def test_two_cards_are_shown_as_two_and_the_single_big_card_wins_a_split_fine_tune(adv: Advisor) -> None:
    """14B LoRA in BF16: 14.77e9 × 2 bytes = 29.5 GB of frozen weights, more than a 24 GB 4090, so two 4090s shard
    the model over PCIe; 2 × 165 = 330 TFLOPS is not 25 % above the RTX 6000 Ada's 364, so the one card wins."""
    _, (r,) = talk(adv, "双卡 4090 和单卡 RTX 6000 Ada 哪个更适合微调 14B？")
    first = r.text.splitlines()[0]
    assert "更合适的是 RTX 6000 Ada" in first and "330" in first and "364" in first
    assert "| 2 × 24 GB GDDR6X | 48 GB GDDR6 |" in r.text and "| 2 × 450 W | 300 W |" in r.text
    price = load_catalog().gpu("rtx-4090").price
    assert price is not None and price.usd is not None
    each = round(price.usd * 7.2)  # the catalog's dollar price at the reply's 7.2 yuan per dollar
    assert f"¥{2 * each:,}（2 × ¥{each:,}）" in r.text
    assert "经 PCIe 在卡间搬运权重" in r.text


def test_that_rig_is_the_configuration_of_the_last_turn_not_an_older_comparison(adv: Advisor) -> None:
    _, (_, _, r) = talk(adv, "2x 4090 vs 1x 5090 vs RTX PRO 4500 for LoRA on Llama 3.1 8B?",
                        "if i do full fine-tune of llama 3.1 8B instead of LoRA, would 2x5090 work?",
                        "how long would a full FT of 8B on 500M tokens take on that rig vs renting 8xH100?")
    sized = {c.arguments["gpu"]: c.arguments["gpus"] for c in ok_calls(r, "size_training")}
    assert sized == {"rtx-5090": 2, "h100-sxm": 8}
    timed = {c.arguments["gpu"] for c in ok_calls(r, "training_time")}
    assert "h100-sxm" in timed and "rtx-4090" not in timed
    assert "8× H100 SXM 80GB holds" in r.text.splitlines()[0]


def test_a_second_card_of_the_one_owned_makes_two(adv: Advisor) -> None:
    """70B at Q4_K_M with 16k context: ~48 GB in all, so two 24 GB 3090s (24.8 per card) hold it and one 32 GB
    5090 does not."""
    _, (r,) = talk(adv, "got a 3090 already, want to run llama 3.3 70b at q4 w/ ~16k ctx. is a second used 3090 "
                        "(~$700) enough or should i sell mine and get a 5090?")
    sized = {c.arguments["gpu"]: c.arguments["gpus"] for c in ok_calls(r, "size_inference")}
    assert sized["rtx-3090"] == 2
    assert r.text.startswith("**2× GeForce RTX 3090 holds")


def test_a_double_precision_comparison_leads_with_the_vector_fp64_a_cfd_code_runs_at(adv: Advisor) -> None:
    """OpenFOAM runs FP64 on the vector units: H100 SXM 34 TFLOPS (NVIDIA's datasheet), a 4090 1.3 at 1/64 rate."""
    _, (r,) = talk(adv, "CFD with OpenFOAM, FP64 matters. H100 or an RTX 4090?")
    first = r.text.splitlines()[0]
    assert "H100 SXM 80GB is fastest: 34 TFLOPS" in first
    assert "GeForce RTX 4090 run FP64 at a small fraction" in r.text
    assert "Tell me the model and precision" not in r.text


def test_prompt_processing_asked_of_a_comparison_is_answered_for_each_card(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "Mac Studio M4 Max 128GB vs M3 Ultra 96GB for 70B models at q4?",
                     "what about prompt processing, I paste like 20k tokens of code at once")
    prefill = ok_calls(r, "perf_prefill")
    assert {c.arguments["gpu"] for c in prefill} == {"mac-studio-m4-max-128gb", "mac-studio-m3-ultra-96gb"}
    assert all(c.arguments["prompt_tokens"] == 20_000 for c in prefill)
    assert r.text.startswith("[one Mac Studio M4 Max 128GB] **Time to first token:**")


# ----------------------------------------------------------------------------- what numbers are attached to


@pytest.mark.parametrize(("text", "dataset"), [
    ("想自建推理跑Qwen3-235B-A22B，FP8，日均大概2000万token", None),
    ("we serve about 50M tokens per day with llama 70b", None),
    ("train llama 8b on 50M tokens", 50e6),
])
def test_a_token_count_per_day_is_traffic_not_a_training_set(text: str, dataset: float | None) -> None:
    r = parse(text)
    assert r.dataset_tokens == dataset
    assert r.use_case == ("training" if dataset else "inference")


def test_a_precision_after_a_comma_is_read() -> None:
    assert parse("想自建推理跑Qwen3-235B-A22B，FP8，日均").precision == "fp8"


@pytest.mark.parametrize(("text", "count"), [("How many 8-GPU H200 nodes fit per rack?", 8),
                                             ("8-way H100 box", 8), ("the way 4090 runs", 1)])
def test_an_n_gpu_node_is_n_cards(text: str, count: int) -> None:
    assert [g.count for g in parse(text).gpus] == [count]


@pytest.mark.parametrize(("text", "psu", "limit"), [
    ("ok and whats the PSU i need for the 2-card setup, my current one is 850w", 850, None),
    ("what PSU for a 450W card?", None, None),
    ("电源1000W够吗", 1000, None),
    ("relax the limit to 600W at the wall", None, 600),
])
def test_a_wattage_is_read_as_what_it_stands_beside(text: str, psu: float | None, limit: float | None) -> None:
    r = parse(text)
    assert (r.psu_w, r.power_limit_w) == (psu, limit)


def test_a_limit_at_the_wall_under_a_kilowatt_is_the_machine_s(adv: Advisor) -> None:
    """One 5090 (575 W) with a desktop CPU and platform draws ~1.1 kW at the wall: over 600 W."""
    _, (r,) = talk(adv, "5090 desktop, I need it under 600W at the wall. Will the power work?")
    assert r.text.startswith("**Problem — About") and "600 W allowed per machine" in r.text.splitlines()[0]


def test_the_pasted_prompt_is_the_prompt() -> None:
    r = parse("I paste 2000 tokens of code, how long until the first token?")
    assert (r.prompt_tokens, r.asks) == (2000, ["ttft"])


def test_asks_are_read_within_their_sentence() -> None:
    text = ("We want to do a full fine-tune of Llama 3.1 70B on ~2B tokens. Planning 4 nodes of 8xH100 SXM with IB. "
            "Is that enough memory, and how long would it take?")
    assert asks_in(text) == ["fits", "training_time"]


def test_a_stated_latency_target_does_not_lead_the_question_it_sits_in() -> None:
    r = parse("拟采购推理服务器，部署DeepSeek-R1-Distill-Qwen-32B，并发≥50路，首token延迟≤2s，请给出GPU型号、数量及"
              "显存配置建议，预算80万元以内。")
    assert r.asks == ["recommend", "ttft"]


# ----------------------------------------------------------------------------- follow-ups


def test_half_of_them_at_once_is_half_the_head_count(adv: Advisor) -> None:
    s, _ = talk(adv, "We're a 20-person law firm. Private on-prem box for chatting with our documents, budget £15k.",
                "What if half of them use it at the same time in the morning?")
    assert s.profile.concurrency == 10


def test_a_service_with_no_model_named_is_sized_on_the_stand_in_and_says_so(adv: Advisor) -> None:
    s, (r,) = talk(adv, "We're a 20-person law firm. Want a private on-prem AI box so staff can chat with our own "
                        "documents (RAG). Budget about £15k all in. What should we buy?")
    assert s.profile.service_model and s.profile.model == "qwen2.5-32b"
    assert ok_calls(r, "recommend") and "no model named" in r.text
    s2, _ = talk(adv, "We're a 20-person firm, private chat box for documents, budget £15k.", "we'll run Llama 3.1 8B")
    assert s2.profile.model == "llama-3.1-8b" and not s2.profile.service_model


def test_a_family_name_means_the_card_the_conversation_holds(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "Qwen2.5-72B in FP8 for 30 users: what if we use 4x RTX 6000 Ada?",
                     "how much for the whole box with the RTX 6000 option and what power circuit do we need")
    assert {g["gpu"] for c in ok_calls(r, "check_build") for g in c.arguments["gpus"]} == {"rtx-6000-ada"}


def test_a_size_said_again_means_the_model_of_that_size_sized_before(adv: Advisor) -> None:
    s, _ = talk(adv, "Deploy DeepSeek-R1 671B on 16 Ascend 910B", "what if we use a 70B distill instead?",
                "and the 671B setup, how many users?")
    assert s.profile.model == "deepseek-r1"


def test_how_many_of_a_card_named_in_a_what_if_counts_that_card(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "从头预训练一个7B模型，数据1T tokens，一个月内训完，需要多少张H800/H100？",
                     "如果换成国产卡，比如昇腾910B，要多少张，时间一样")
    assert r.text.startswith("**Ascend 910B")


def test_a_double_precision_code_ranks_real_fp64_cards_first(adv: Advisor) -> None:
    """VASP computes in FP64; GeForce and RTX PRO cards run it at 1/64 of FP32 and rank after every card that
    does not."""
    _, (r,) = talk(adv, "跑VASP，要双精度，经费15万，买什么卡")
    options = ok_calls(r, "recommend")[0].result["options"]
    priced = [o for o in options if o["total_price_usd"] is not None]
    cat = load_catalog()
    fast = [cat.gpu(o["gpu_id"]).throughput.fp64 * 16 >= cat.gpu(o["gpu_id"]).throughput.fp32 for o in priced]
    assert fast[0] and fast == sorted(fast, reverse=True)


def test_a_new_question_is_not_answered_by_printing_the_last_answer_again(adv: Advisor) -> None:
    _, (first, r) = talk(adv, "做CFD的，用OpenFOAM，上H100还是多张4090？",
                         "另外组里还想跑WRF气象，GPU能加速吗？")
    assert r.text.splitlines()[0] != first.text.splitlines()[0]
    assert "WRF" in r.text.splitlines()[0] and "AceCAST" in r.text.splitlines()[0]  # its GPU build is a port


# ----------------------------------------------------------------------------- batch aa's classes


@pytest.mark.parametrize(("text", "mains"), [
    ("can it run on a normal office circuit or do we need something special?", "120v-15a"),
    ("办公室普通插座带得动吗", "220v-10a"),
    ("in the UK, is a normal wall socket enough?", "230v-13a"),
])
def test_an_ordinary_outlet_is_the_usual_one_where_the_buyer_writes(text: str, mains: str) -> None:
    assert parse(text).mains == mains


def test_a_psu_ok_never_leads_a_build_whose_wall_circuit_blocks_it(adv: Advisor) -> None:
    """4 × 300 W cards + 250 W CPU + 150 W platform = 1,600 W; / 0.9 = 1,778 W at the wall, over 220 V × 10 A ×
    0.8 = 1,760 W."""
    _, (r,) = talk(adv, "4张RTX PRO 5000 Blackwell 48GB的工作站，电源要配多大的，实验室是普通220V插座")
    lines = r.text.splitlines()
    assert lines[0].startswith("**按现在的方案不行") and "1,778 W" in lines[1] and "1,760 W" in lines[1]
    assert not any(ln.startswith("**没问题") for ln in lines)


def test_heat_is_every_watt_at_the_wall(adv: Advisor) -> None:
    """BTU/hr = W × 3.412; a ton of cooling is 12,000 BTU/hr."""
    _, (r,) = talk(adv, "4x HGX B200 servers, how much heat in BTU/hr?")
    cost = ok_calls(r, "machine_cost")[0].result
    btu = cost["total_wall_w"] * 3.412
    assert f"{btu:,.0f} BTU/hr" in r.text and f"{btu / 12_000:.1f} tons" in r.text


def test_to_switch_cards_is_no_network_switch() -> None:
    assert parse("what if they switch to H100 HGX instead, same 4 servers?").asks == []
    assert parse("which switch do we need for 4 nodes?").asks == ["network"]


@pytest.mark.parametrize(("text", "fp64"), [("gromacs和amber为主，FP64重要吗", None), ("does FP64 matter?", None),
                                            ("我们的CFD必须用FP64", True), ("FP64 matters for some codes.", True)])
def test_a_question_about_fp64_is_no_fp64_requirement(text: str, fp64: bool | None) -> None:
    assert parse(text).fp64 is fp64


def test_molecular_dynamics_is_compared_at_fp32_and_several_codes_by_the_strictest(adv: Advisor) -> None:
    """GROMACS and AMBER's GPU builds run in mixed single precision: the 4090's 82.6 TFLOPS FP32 beats an H100's
    67; VASP (FP64, CUDA only) decides a machine that also runs OpenFOAM and GROMACS."""
    _, (r,) = talk(adv, "做分子动力学的，gromacs和amber为主，买4090还是H100？FP64重要吗")
    assert r.text.startswith("**单精度（FP32）算例：GeForce RTX 4090 最快")
    assert parse("We run OpenFOAM, GROMACS and VASP").sci_code == "vasp"


def test_a_new_code_named_after_an_answer_is_planned_not_explained(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "做分子动力学的，gromacs为主，买4090还是H100？",
                     "组里另一个方向是VASP，要FP64的吧？那换什么卡")
    assert r.mode != "why" and ok_calls(r, "recommend")


def test_a_comparison_says_what_is_over_the_budget(adv: Advisor) -> None:
    _, (r,) = talk(adv, "预算8万左右，想在家跑deepseek r1 671b（q4就行），纠结 mac studio m3 ultra 512g 和 "
                        "RTX PRO 6000 96G 的工作站，选哪个")
    line = next(ln for ln in r.text.splitlines() if ln.startswith("超出预算 ¥80,000"))
    each = load_catalog().gpu("rtx-pro-6000-blackwell-ws").price
    assert each is not None and each.usd is not None
    n = next(c.arguments["gpus"] for c in ok_calls(r, "size_inference")
             if c.arguments["gpu"] == "rtx-pro-6000-blackwell-ws")
    assert f"¥{round(n * each.usd * 7.2):,}" in line


def test_a_pasted_document_is_the_prompt() -> None:
    assert parse("要是丢一个32k的长文档进去prefill得等多久").prompt_tokens == 32768
    assert parse("一次贴进去大概3万字的合同").prompt_tokens == 30_000


# ----------------------------------------------------------------------------- batch ab's classes


def test_office_hours_are_nine_hours_on_weekdays() -> None:
    """9 h × 5 days / 7 = 6.43 h a day on average."""
    assert parse("rent a cloud GPU instead, if we only use it during office hours?").hours_per_day == 6.43
    assert parse("只在上班时间用").hours_per_day == 6.43


def test_pages_are_read_as_the_prompt_they_make() -> None:
    r = parse("Contracts can be long, like 80 pages. Does that change anything?")
    assert (r.prompt_tokens, r.context_tokens) == (80 * 650, 80 * 650)
    assert parse("page 3 of the report").prompt_tokens is None


def test_traffic_per_month_is_replies_at_once_in_the_busiest_hour(adv: Advisor) -> None:
    """3,000,000 / 30.4 days × 300 output tokens = 29.6M tokens a day = 342 tokens/s; × 3 at the peak = 1,027; at
    20 tokens/s a reply, 52 at once. A chat's conversations are no training set."""
    s, (r,) = talk(adv, "We run a customer-support chatbot, ~3M conversations/month, avg 1,500 input + 300 output "
                        "tokens each. Would self-hosting Llama 3.1 8B be cheaper?")
    assert s.profile.use_case == "inference" and s.profile.dataset_samples is None
    assert s.profile.concurrency == 52 and "1,027 tokens/s" in r.text


@pytest.mark.parametrize(("text", "daily"), [("日均大概输出2000万tokens", 2e7), ("about 5M output tokens per day", 5e6),
                                             ("train on 5M tokens", None)])
def test_output_tokens_per_day_are_traffic(text: str, daily: float | None) -> None:
    assert parse(text).daily_output_tokens == daily


def test_the_turns_of_a_conversation_are_no_epochs() -> None:
    assert parse("我们每天大概3000个对话，每个对话平均10轮").epochs is None
    assert parse("LoRA 微调，数据 5 万条，3 个 epoch").epochs == 3


def test_two_of_them_after_a_server_are_two_servers(adv: Advisor) -> None:
    """A DGX B200 draws up to 14.3 kW (NVIDIA): a 20 kW rack holds one, two need two racks."""
    _, (_, r) = talk(adv, "we're getting a DGX B200 8-gpu box. can our air cooled rack (20kW) take it?",
                     "what if we get two of them in the same rack")
    assert "holds **1** of the 8× B200 SXM 180GB machines" in r.text and "2 nodes need **2** racks" in r.text


def test_wall_power_is_the_draw_not_an_outlet() -> None:
    assert parse("wall power for 2 nodes with 8 A100s each?").mains is None


def test_one_person_s_own_machine_is_not_sized_on_the_service_stand_in(adv: Advisor) -> None:
    s, _ = talk(adv, "给我推荐一张卡 跑ollama本地 自己一个人用 预算一万五")
    assert s.profile.model is None and not s.profile.service_model


def test_a_card_the_code_has_no_gpu_build_for_never_wins(adv: Advisor) -> None:
    """VASP's GPU port is CUDA only (knowledge/data/codes): the MI210's 45.3 TFLOPS of FP64 cannot run it."""
    _, (r,) = talk(adv, "For VASP, is an MI210 or a V100 32GB the better use of a small equipment grant?")
    assert r.text.startswith("**Of these, only V100 SXM2 32GB runs VASP's GPU build")


def test_a_vendor_ruled_out_beside_only_is_not_the_only_vendor(adv: Advisor) -> None:
    r = parse("requirement is domestic accelerators only (no NVIDIA). Need to serve Qwen2.5-72B")
    assert (r.only_vendors, r.excluded_vendors, r.domestic) == (None, ["nvidia"], True)
    _, (reply,) = talk(adv, "Tender for a state-owned enterprise, domestic accelerators only (no NVIDIA). Serve "
                            "Qwen2.5-72B for ~100 internal users. Which cards qualify and how many?")
    options = ok_calls(reply, "recommend")[0].result["options"]
    assert options and all(load_catalog().gpu(o["gpu_id"]).domestic for o in options)


def test_buy_or_rent_with_a_budget_buys_what_the_budget_buys_first(adv: Advisor) -> None:
    """No card named: the purchase weighed against renting is the recommender's first pick for the job (a company
    buys new cards under warranty first)."""
    from tools.recommend import RecommendInput, recommend

    _, (r,) = talk(adv, "公司5个人用Qwen2.5-7B做内部问答，预算5万，买卡还是租云服务器划算？")
    bought = ok_calls(r, "rent_vs_buy")[0].arguments
    top = recommend(RecommendInput(workload="inference", model="qwen2.5-7b", concurrency=5, context=8192,
                                   budget_cny=50_000, region="cn", min_tokens_per_s_per_user=5.0,
                                   new_cards_first=True)).options[0]
    assert (bought["gpu"], bought["count"]) == (top.gpu_id, top.count)
