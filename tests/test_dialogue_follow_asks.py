"""Follow-ups answered as asked (blind batch o's classes): an ask that changes nothing gets its answer alone, on
the configuration the conversation arrived at (the recommendation's pick); bans and counts said in a follow-up
gate the next recommendation and the reply says what they changed; options weighed against each other stay
options; a prompt's and an answer's length make the context; the model a buyer wants is the one they move to."""

from __future__ import annotations

import re

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse
from knowledge import load_catalog


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


HPC = ("Our HPC group runs GROMACS, LAMMPS and OpenFOAM, plus an in-house FP64 CFD code. Budget around $200k. "
       "Which GPUs should we buy?")


@pytest.mark.parametrize("text", ["What if we can't buy NVIDIA at all?", "禁用英伟达", "英伟达的卡不能用",
                                  "NVIDIA is not allowed here", "不能买英伟达的卡"])
def test_a_vendor_ban_is_read_in_its_common_phrasings(text: str) -> None:
    assert parse(text, context=True).excluded_vendors == ["nvidia"]


@pytest.mark.parametrize("text", ["I can't afford NVIDIA's H100, so maybe an A100", "not only NVIDIA but also AMD"])
def test_a_vendor_named_near_a_negation_is_not_always_banned(text: str) -> None:
    assert not parse(text, context=True).excluded_vendors


def test_bans_add_up_and_the_reply_says_what_they_changed(adv: Advisor) -> None:
    session, (_, no_nvidia, no_amd) = talk(adv, HPC, "What if we can't buy NVIDIA at all?",
                                           "and no AMD either")
    assert no_nvidia.text.startswith("**With NVIDIA ruled out, the top pick")
    assert set(session.profile.excluded_vendors) == {"nvidia", "amd"}
    cat = load_catalog()
    for call in ok_calls(no_amd, "recommend"):
        assert not {cat.gpu(o["gpu_id"]).vendor for o in call.result["options"]} & {"NVIDIA", "AMD"}


def test_a_question_about_the_pick_gets_its_answer_alone(adv: Advisor) -> None:
    """'How much total FP64 would that give us?': the pick's count × its card's FP64 (vector units, as the
    recommendation ranks), and its power — not the ranking again."""
    _, (first, asked) = talk(adv, HPC, "How much total FP64 throughput would that give us, and what's the power draw?")
    top = ok_calls(first, "recommend")[0].result["options"][0]
    per_card = load_catalog().gpu(top["gpu_id"]).throughput.fp64_vector
    lines = asked.text.split("\n\n")
    assert lines[0].startswith("**Compute:**") and lines[1].startswith("**Electricity:**")
    total = float(re.search(r"about \*\*([\d,.]+) TFLOPS of FP64", lines[0]).group(1).replace(",", ""))
    assert total == pytest.approx(per_card * top["count"], abs=0.6)
    assert "Recommended configurations" not in asked.text


def test_training_time_is_answered_on_the_recommended_box(adv: Advisor) -> None:
    lab = ("We're a university NLP lab with a $150k grant. We need to fine-tune models up to 70B with LoRA. What "
           "should we buy?")
    _, (first, asked) = talk(adv, lab, "With that box, roughly how long would a QLoRA fine-tune of Llama-3.1-70B "
                                       "on 50M tokens take?")
    top = ok_calls(first, "recommend")[0].result["options"][0]
    timed = ok_calls(asked, "training_time")[0]
    assert (timed.arguments["gpu"], timed.arguments["count"], timed.arguments["tokens"]) == \
        (top["gpu_id"], top["count"], 50e6)
    assert asked.text.startswith("**Training time:**") and "50M tokens" in asked.text.split("\n")[0]


def test_a_count_said_alone_gates_the_options_and_renting_those_prices_them(adv: Advisor) -> None:
    """Four GPUs rented at $2.50 per GPU-hour, 24 h a day: 4 × 2.50 × 730 h ≈ $7,300 a month."""
    ask = ("Startup here, serving a chatbot on Llama-3.1-70B to ~200 concurrent users. Avg prompt 2k tokens, "
           "answers 300 tokens. What hardware?")
    _, (first, four, rent) = talk(adv, ask, "What if we use 4 GPUs instead of 8?",
                                  "Cost per month renting those 4 GPUs in the cloud at $2.50/GPU-hour vs buying?")
    assert ok_calls(first, "size_inference")[0].arguments["context"] == 2300
    options = ok_calls(four, "recommend")[0].result["options"]
    assert options and {o["count"] for o in options} == {4}
    assert four.text.startswith("**With 4 GPUs, the top pick")
    call = ok_calls(rent, "rent_vs_buy")[0]
    assert (call.arguments["gpu"], call.arguments["count"]) == (options[0]["gpu_id"], 4)
    assert "$7,300 a month" in rent.text


def test_prompt_and_answer_lengths_make_the_context() -> None:
    for text, context, prompt in (("Avg prompt 2k tokens, answers 300 tokens.", 2300, 2000),
                                  ("输入2000 token，输出500 token", 2500, 2000),
                                  ("2k-token prompts and 300-token replies", 2300, 2000)):
        parsed = parse(text)
        assert (parsed.context_tokens, parsed.prompt_tokens) == (context, prompt), text


UPGRADE = "我现在有两张RTX 4090，跑Qwen2.5-32B的AWQ还行，但想上Qwen2.5-72B。是再加两张4090，还是换成两张L20 48G？"


def test_options_weighed_against_each_other_stay_options(adv: Advisor) -> None:
    """Adding two 4090s to the two owned makes four; the other option is two L20s — compared for the 72B the
    buyer wants, never pooled into one machine of four different cards."""
    assert parse(UPGRADE).model == "qwen2.5-72b"
    session, (r,) = talk(adv, UPGRADE)
    assert session.profile.compare_counts == {"rtx-4090": 4, "l20": 2}
    assert not ok_calls(r, "pooled_fit")
    assert "4 张 GeForce RTX 4090" in r.text.split("\n")[0] or "4 张 GeForce RTX 4090" in r.text.split("\n")[1]
    session, _ = talk(adv, UPGRADE, "如果加两张4090，变成4张，跑72B的FP8能行吗？")
    assert (session.profile.gpu, session.profile.gpu_count) == ("rtx-4090", 4)


def test_which_card_is_enough_names_one(adv: Advisor) -> None:
    _, (r,) = talk(adv, "电商客服机器人，用GLM-4-9B，高峰同时30人，上下文4K。一张什么卡够用？")
    assert ok_calls(r, "recommend") and "首选 1×" in r.text.split("\n")[0]


def test_a_training_answer_names_what_to_buy_first(adv: Advisor) -> None:
    _, (r,) = talk(adv, "Office IT here: a quiet desk workstation, standard 120V 15A outlet, budget $20k, to run "
                        "Qwen2.5-32B and do some fine-tuning.")
    top = ok_calls(r, "recommend")[0].result["options"][0]
    assert "top pick within $20,000" in r.text.split("\n")[0] and top["gpu"] in r.text.split("\n")[0]


def test_a_power_question_beside_a_sizing_leads_with_the_power_check(adv: Advisor) -> None:
    """Four 450 W cards + a 250 W CPU + 150 W platform ≈ 2,200 W sustained: a 1,600 W supply is short."""
    _, (_, r) = talk(adv, "我有4张4090，想跑Qwen2.5-72B的FP8", "那4张4090整机功耗多少？我的1600W电源带得动吗？")
    first = r.text.split("\n")[0]
    assert "1,600 W" in first and "2,200 W" in first


def test_a_model_served_beside_the_one_trained_is_not_the_one_trained(adv: Advisor) -> None:
    """DeepSeek-V3 in FP8 is ~671 GB of weights: 32 H100s (≈ 2.7 TB) hold it for serving; the pre-training is of
    the 30B said with it, not of the 671B."""
    text = ("We're planning to continue-pretrain a 30B model and later serve DeepSeek-V3. Thinking 4 servers of 8x "
            "H100 with InfiniBand. Is that right-sized?")
    parsed = parse(text)
    assert (parsed.model, parsed.params_b, parsed.served_model) == (None, 30.0, "deepseek-v3")
    lab = parse("We need to full fine-tune 7B-13B models and also run inference on Qwen2.5-32B. What should we buy?")
    assert (lab.params_b, lab.served_model, lab.method) == (13.0, "qwen2.5-32b", "full")
    _, (r,) = talk(adv, text)
    served = next(c for c in ok_calls(r, "size_inference") if c.arguments.get("model") == "deepseek-v3")
    assert served.arguments["gpus"] == 32 and served.result["fits"]
    assert "**Serving DeepSeek-V3" in r.text and "it fits" in r.text


@pytest.mark.parametrize(("text", "per_node", "nodes"), [
    ("We want to serve DeepSeek-V3 on 2 servers of 8x H100. Does it fit?", 8, 2),
    ("How many of the 8-GPU boxes fit in one rack?", 8, None),
    ("16x H200 across 2 nodes", 8, 2),
])
def test_machines_and_cards_per_machine_are_told_apart(text: str, per_node: int, nodes: int | None) -> None:
    parsed = parse(text)
    count = parsed.gpus[0].count if parsed.gpus else parsed.gpu_count
    assert (count, parsed.nodes, parsed.scaled) == (per_node, nodes, None)


def test_swapping_the_card_keeps_the_cluster(adv: Advisor) -> None:
    session, (_, swapped) = talk(adv, "We want to serve DeepSeek-V3 on 2 servers of 8x H100. Does it fit?",
                                 "And if we swap to H200 for the 2 nodes, what changes for DeepSeek-V3 serving?")
    assert (session.profile.gpu, session.profile.gpu_count, session.profile.nodes) == ("h200-sxm", 8, 2)
    assert ok_calls(swapped, "size_inference")[0].arguments["gpus"] == 16


@pytest.mark.parametrize(("text", "added"), [("what if i add a 3rd and 4th 3090 later?", 2),
                                             ("加第三张和第四张3090", 2), ("adding a second 4090", 1)])
def test_cards_added_by_their_place_are_counted(text: str, added: int) -> None:
    assert parse(text, context=True).added_cards == added


def test_a_team_sized_as_all_at_once_is_said_back() -> None:
    parsed = parse("Need to run something like Qwen2.5-32B for ~20 staff. Suggestions?")
    assert parsed.concurrency == 20 and ("nlu.readback.all_at_once", {"users": 20}) in parsed.readback


def test_cards_offered_with_or_are_compared_not_pooled() -> None:
    parsed = parse("I have 4x RTX 3090 (1600W PSU) running Llama-3.1-70B at 4-bit. Upgrade to 2x RTX 5090, "
                   "1x RTX Pro 6000 (96GB), or keep the 3090s and add more?")
    assert parsed.alternatives and not parsed.pooled and parsed.kind.value == "compare"
    assert not parse("I have a 3090 and want to add a 4090 next to it, will they work together?").alternatives


def test_second_hand_prices_said_bare_are_each_cards_price_not_a_budget() -> None:
    parsed = parse("闲鱼上 P40 24G 400 多一张，V100 16G SXM2 转 PCIe 的 1000 左右，2080 Ti 22G 魔改 2500。"
                   "我想跑 Qwen2.5-14B 推理，买哪个？")
    assert parsed.budget is None
    assert {g: m.amount for g, m in parsed.card_prices.items()} == \
        {"tesla-p40": 400, "v100-pcie-16gb": 1000, "rtx-2080-ti-22gb": 2500}
    assert not parse("4090 000 多一张").card_prices  # no price of zero (was a crash)


def test_r1_distill_with_no_size_is_the_32b_distill_said_as_a_guess() -> None:
    parsed = parse("个人玩家，想在家跑 DeepSeek-R1 蒸馏版，5090 还是 4090？")
    assert (parsed.model, parsed.model_guess) == ("deepseek-r1-distill-qwen-32b", True)


def test_a_comparison_weighs_every_layer_when_llama_cpp_would_offload(adv: Advisor) -> None:
    """Full DeepSeek-R1 at Q4_K_M is ~400 GB: the verdict quotes that, not the part one GPU keeps."""
    _, (r,) = talk(adv, "满血 DeepSeek-R1 用 Q4_K_M，5090 还是 4090？")
    first = r.text.split("\n")[0]
    need = [float(x.replace(",", "")) for x in re.findall(r"需要 ([\d,.]+) GB", first)]
    assert need and min(need) > 300


def test_how_many_at_once_on_a_new_setup_is_the_answer_and_no_cuda_question_follows_a_ban(adv: Advisor) -> None:
    """4 × 64 GB Ascend 910B, Qwen2.5-72B in INT8 (~75 GB of weights); its KV cache is 80 layers × 8 heads × 128
    × 2 × 2 bytes ≈ 0.33 MB per token, ≈ 10.7 GB per 32k request: about 14–16 requests fit what remains."""
    _, (_, r) = talk(adv, "我们是事业单位，有信创要求，不能用英伟达。要部署 Qwen2.5-72B 给内部 200 人做公文写作，"
                          "预算 150 万以内，推荐什么配置？",
                     "那用 4 张 910B 跑 INT8 的 72B，32K 上下文，能同时支持多少并发？")
    first = r.text.split("\n")[0]
    users = int(re.search(r"容纳 (\d+) 个", first).group(1))
    assert first.startswith("**最多同时多少人**") and 12 <= users <= 18
    assert "放不下" not in r.text and "CUDA" not in (r.question or "")


QUOTE = ("Vendor quote below, please sanity-check it:\n\nDell PowerEdge XE9680, 8x H100 SXM5 80GB, 2x Xeon 8468, "
         "2TB DDR5, 8x 3.84TB NVMe, $295k\n\nUse case: LoRA fine-tuning of Llama-3.1-70B. Is the price fair?")


def test_a_pasted_quote_is_judged_first_and_its_price_is_no_budget(adv: Advisor) -> None:
    parsed = parse(QUOTE)
    assert parsed.quoted_price == (295000.0, "USD") and parsed.budget is None
    _, (r,) = talk(adv, QUOTE)
    assert r.text.startswith("**The quote of $295,000 is")


def test_a_longer_horizon_said_on_top_of_the_project_adds_to_it(adv: Advisor) -> None:
    """6 months, then 2 more years: 30 months weighed; renting 8 GPUs at $2.99 for 9.6 h a day ≈ $6,985 a month."""
    session, (_, r) = talk(adv, "Rent vs buy: we need about 8 H100s for ~6 months of fine-tuning work. Cloud quotes "
                                "are $2.99/GPU-hr. Buying a server is ~$280k. Which makes sense?",
                           "What if usage after the 6 months is actually ~40% utilization ongoing for 2 more years?")
    assert session.profile.years == 2.5
    assert ok_calls(r, "rent_vs_buy")[0].arguments["months"] == 30 and "30 months" in r.text.split("\n")[0]


def test_a_ups_is_sized_for_the_machine_and_the_one_said_is_checked(adv: Advisor) -> None:
    """2× RTX 4090 draw ~1,444 W at the wall; a 1,500 VA UPS gives 1,500 × 0.6–0.9 × 0.8 = 720–1,080 W (a desktop
    APC Back-UPS Pro 1500 is rated 900 W): it cannot carry them; online sizing 1,444 ÷ 0.9 ÷ 0.8 ≈ 2,000 VA."""
    _, (r,) = talk(adv, "Office IT here. Only a normal 120V 15A outlet, and we have a 1500VA UPS. We want to run "
                        "Qwen2.5-32B on 2x RTX 4090 for ~10 staff. Will the UPS hold it?")
    first = r.text.split("\n")[0]
    assert first.startswith("**UPS:** a 1,500 VA UPS cannot carry") and "720–1,080 W" in first
    va = int(re.search(r"about \*\*([\d,]+) VA\*\*", first).group(1).replace(",", ""))
    wall = ok_calls(r, "machine_cost")[0].result["node_wall_w"]
    assert va == pytest.approx(wall / 0.9 / 0.8, abs=10)


def test_a_high_voltage_circuit_is_not_told_to_move_to_high_voltage(adv: Advisor) -> None:
    _, (r,) = talk(adv, "办公室单相220V 16A插座，想放8张L40S，可行吗？")
    assert "改用 220–240 V" not in r.text and "专用回路" in r.text


def test_cards_written_before_a_link_or_a_part_multiply_it() -> None:
    assert parse("手上有 2 台 8×A800 80GB 服务器，每台 4 张 200G IB 网卡。能做吗？").node_link_gbps == 800
    assert parse("内存 4 条 64G DDR5").system_ram_gb == 256


def test_owned_cards_named_first_then_added_make_that_options_count(adv: Advisor) -> None:
    session, _ = talk(adv, "我现在有台工作站，2 张 3090 24G，跑 Qwen2.5-32B-AWQ 还行，但想上 Qwen2.5-72B。"
                           "是再加两张 3090，还是卖掉换一张 RTX 6000 Ada 48G？")
    assert session.profile.compare_counts == {"rtx-3090": 4, "rtx-6000-ada": 1}


def test_noise_is_answered_from_the_office_placement_passage(adv: Advisor) -> None:
    _, (r,) = talk(adv, "公司IT这边要在办公室放一台AI服务器，单相220V 16A插座。想放4张L40S，可行吗？噪音大不大？")
    assert r.text.startswith("**没问题") and "**噪音**" in r.text and "[power-cooling/zh/office-noise-ups]" in r.text
    assert parse("is it quiet enough for an office?").asks[:1] == ["noise"]
    assert "noise" not in parse("it has to be quiet; we use Cloudflare").asks  # a requirement, not a question


def test_a_model_used_by_people_is_served_without_asking_the_use_case(adv: Advisor) -> None:
    """A ~30B model for 10 people at once on one 96 GB workstation card: bf16 weights ~65 GB plus ~2 GB of KV per
    8k request fit; a 120 V 15 A circuit with 600 W already on it leaves 1,440 − 600 = 840 W."""
    session, (first, shared) = talk(
        adv, "Need a GPU workstation for the office. Has to plug into a normal 120V 15A outlet, sits under a desk, "
             "can't be loud. 5-10 people internally want to use a ~30B LLM. Budget $15k.",
        "What if the outlet is shared with other stuff — say 600W already on that circuit?")
    assert session.profile.use_case == "inference" and first.mode == "answer" and ok_calls(first, "recommend")
    assert ok_calls(shared, "check_build")[0].arguments["other_load_w"] == 600
    assert "840 W" in shared.text.split("\n")[0]


def test_a_range_of_counts_is_no_count() -> None:
    parsed = parse("Looking at buying 2-4 HGX H100 8-GPU servers with InfiniBand. How many nodes do we need?")
    assert parsed.nodes is None and not any(g.stated for g in parsed.gpus)
    assert ("nlu.readback.count_range", {"low": 2, "high": 4}) in parsed.readback


@pytest.mark.parametrize(("text", "slot", "value"), [
    ("用sglang呢", "engine_hint", "sglang"), ("改用vllm部署", "engine_hint", "vllm"),
    ("如果把每张卡功耗限制到300W呢", "gpu_power_limit_w", 300.0), ("要不要上ups", "asks", ["ups"]),
])
def test_latin_words_glued_to_chinese_are_read(text: str, slot: str, value: object) -> None:
    """Python's \\b sees a CJK character as part of a word; the NLU's boundaries are ASCII ones."""
    assert getattr(parse(text, context=True), slot) == value


def test_an_fp8_model_on_a_card_without_fp8_units_is_sized_at_int8() -> None:
    """DeepSeek-R1 (FP8) on Ascend: its stack serves W8A8 INT8, the same weight bytes, ~700 GB on 16 × 64 GB."""
    from tools.recommend import RecommendInput, recommend
    r = recommend(RecommendInput(workload="inference", model="deepseek-r1", concurrency=30, vendors=["Huawei"],
                                 region="cn"))
    assert any(o.gpu_id == "ascend-910b" and o.count == 16 for o in r.options)


def test_a_card_swapped_out_for_another_is_replaced_not_pooled(adv: Advisor) -> None:
    """4 × H100 NVL at the catalog's ~$28,000 each plus a $15,000 server: about $127,000."""
    parsed = parse("What if we swap the 4x L40S for 4x H100 NVL? Roughly what does the quote become?", context=True)
    assert [(g.gpu, g.count) for g in parsed.gpus] == [("h100-nvl", 4)] and parsed.sold == ["l40s"]
    assert parsed.kind.value != "concept" and "build_cost" in parsed.asks
    session, (_, r) = talk(adv, "Vendor quote: Lenovo ThinkSystem SR675 V3, 4x L40S, 2x EPYC 9354, 512GB RAM, $98k. "
                                "We want to serve Llama-3.1-70B to ~50 users. Is the price fair?",
                           "What if we swap the 4x L40S for 4x H100 NVL? Roughly what does the quote become and "
                           "what do we actually gain?")
    assert (session.profile.gpu, session.profile.gpu_count) == ("h100-nvl", 4)
    assert r.text.startswith("**Whole build:** 4× H100 NVL") and "L40S" not in r.text.split("\n")[0]


QUOTES = ("我是公司采购，供应商给了三个报价，麻烦帮看下哪个划算。用途：内部部署 Qwen2.5-72B 做问答，全公司50人用。\n"
          "A. 浪潮 NF5688M7，8×H20 96G 整机，128万\nB. 超微 4×L40S 48G 推理服务器，52万\n"
          "C. 4×RTX 4090 24G 工作站，16万")


def test_labelled_options_are_kept_and_a_later_pick_is_planned_on(adv: Advisor) -> None:
    parsed = parse(QUOTES)
    assert [(o.label, o.gpu, o.count, o.price) for o in parsed.options] == [
        ("A", "h20", 8, (1280000.0, "CNY")), ("B", "l40s", 4, (520000.0, "CNY")),
        ("C", "rtx-4090", 4, (160000.0, "CNY"))]
    assert parsed.budget is None  # the options' prices are no budget
    session, (_, b, a) = talk(adv, QUOTES, "如果选B，上线后大概能撑多少并发？", "那A方案那台整机满载功耗多少？")
    assert ok_calls(b, "perf_serving")[0].arguments["gpu"] == "l40s"
    assert b.text.startswith("**最多同时多少人**：4 张 L40S")
    assert (session.profile.gpu, session.profile.gpu_count, session.profile.quoted_price) == \
        ("h20", 8, (1280000.0, "CNY"))
    assert ok_calls(a, "check_build")[0].arguments["gpus"][0] == {"gpu": "h20", "count": 8}


def test_a_first_token_target_is_judged_on_users_sending_over_time(adv: Advisor) -> None:
    _, (r,) = talk(adv, "Startup here, serving a chatbot on Llama-3.1-70B. Expect ~200 concurrent users at peak, need "
                        "time-to-first-token under 1s. Avg prompt 2k tokens, answers 300 tokens. What hardware?")
    load = ok_calls(r, "ttft_under_load")[0]
    assert (load.arguments["users"], load.arguments["answer_tokens"]) == (200, 300)
    first, ttft = r.text.split("\n")[0], next(ln for ln in r.text.splitlines() if "Time to first token" in ln)
    assert first.startswith("**Answer: Llama-3.1-70B") and "best value under these constraints" in first  # asked
    assert "on average with 200 users" in ttft and "within your 1.00 s" in ttft and "worst case" in ttft


def test_wall_time_is_no_wall_socket() -> None:
    assert parse("pretraining a 1B model on 20B tokens with 8 H100s - rough wall time?").build_topic is None
    assert parse("is the wall outlet enough?").build_topic == "wall"


def test_an_inference_card_with_dense_only_int8_gets_no_stand_in_for_an_fp8_moe() -> None:
    """Atlas 300I Duo (310P) runs Ascend's W8A8 for dense models only: never a pick for DeepSeek-R1 at FP8."""
    from tools.recommend import RecommendInput, recommend
    r = recommend(RecommendInput(workload="inference", model="deepseek-r1", concurrency=30, vendors=["Huawei"],
                                 region="cn"))
    assert "atlas-300i-duo" not in {o.gpu_id for o in r.options}


def test_a_build_question_with_no_card_is_answered_from_the_guide(adv: Advisor) -> None:
    _, (r,) = talk(adv, "我的机箱只有一个 PCIe x16 插槽，能装几张卡？")
    assert r.mode == "concept" and "[interconnect/zh/pcie-lanes]" in r.text
