"""The setup a buyer describes is the one answered: clusters past eight nodes, cards added to the ones owned,
the owned variant of a card, a server named by its model, the user's own prices and usage pattern, and the
configuration the conversation arrived at for a follow-up that names no card."""

from __future__ import annotations

import math

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse
from knowledge import load_catalog


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


# ----------------------------------------------------------------------------- clusters and training runs


def test_sixteen_nodes_of_eight_are_sized_and_timed_on_all_128_gpus(adv: Advisor) -> None:
    """6·N·D by hand: 6 × 70.55e9 × 2e12 = 8.5e23 FLOPs over 128 GPUs; at 32 nodes the time halves."""
    _, (r16, r32) = talk(adv, "Planning 16 nodes of 8x H200 for pretraining a 70B dense model on 2T tokens. "
                               "Roughly how long, what IB fabric, and what's total power in MW?",
                          "What if we double to 32 nodes?")
    t16, t32 = ok_calls(r16, "training_time")[0], ok_calls(r32, "training_time")[0]
    assert (t16.arguments["count"], t32.arguments["count"]) == (128, 256)
    assert t16.result["flops"] == pytest.approx(6 * 70.55e9 * 2e12, rel=0.01)
    assert t32.result["hours"] == pytest.approx(t16.result["hours"] / 2, rel=0.01)
    assert r16.text.startswith("**About") and "days to train" in r16.text.splitlines()[0]
    net = ok_calls(r16, "plan_network")[0].result
    assert net["topology"] == "leaf-spine" and net["switches"] == 6  # 128 ports: 4 leaves of 32 down + 2 spines
    assert "kW at the wall" in r16.text  # the power asked for, for the whole cluster


def test_a_run_that_fits_only_checkpointed_is_timed_with_the_recompute(adv: Advisor) -> None:
    """Full fine-tuning of a 72B on 32 H800 needs checkpointing to fit: the time counts 8·N·D, not 6·N·D."""
    _, (r, again) = talk(adv, "我们有 4 台 8 卡 H800 服务器，准备做 Qwen2.5-72B 全参微调，数据大概 5B tokens，跑 1 个 "
                               "epoch，大概要多久？节点间 IB 要上什么规格？", "如果跑 3 个 epoch 呢？")
    timed = ok_calls(r, "training_time")[0]
    assert timed.arguments["recompute"] == "full" and timed.result["flops"] == pytest.approx(8 * 72.7e9 * 5e9,
                                                                                             rel=0.01)
    assert r.text.startswith("**32 张 H800 SXM 80GB 训练") and "梯度检查点" in r.text.splitlines()[0]
    assert r.text.index("约需") < r.text.index("InfiniBand")  # asked first, answered first
    assert again.tool_calls and ok_calls(again, "training_time")[0].arguments["tokens"] == pytest.approx(15e9)
    assert "size_inference" not in {c.name for c in again.tool_calls}  # '跑 3 个 epoch' is still training


def test_cards_for_a_deadline_are_counted_per_card_and_a_shorter_deadline_doubles_them(adv: Advisor) -> None:
    _, (r60, r30) = talk(adv, "We're a subsidiary of a Chinese SOE so NVIDIA and AMD are off the table. Need to "
                               "pretrain a 7B model from scratch on 100B tokens, must finish within 60 days. Ascend "
                               "910B or Cambricon MLU590 — and how many cards?",
                          "What if the deadline is cut to 30 days?")
    for r, days in ((r60, 60), (r30, 30)):
        hours = {c.arguments["gpu"]: c.result["gpu_hours"] for c in r.tool_calls
                 if c.name == "training_time" and c.ok}
        assert set(hours) == {"ascend-910b", "mlu590"}
        for line, gpu in zip(r.text.splitlines()[:2], ("ascend-910b", "mlu590"), strict=True):
            n = int(line.split("**")[1].split("×")[0])  # '**16× Ascend 910B** finish within …'
            need = math.ceil(hours[gpu] / (days * 24))  # by hand: the GPU-hours spread over the deadline
            assert n >= need and n in (1, 2, 4, 8, 16, 32, 64, 128, 256) and (n // 2 < need or n <= 4)
    assert "None of these holds" not in r60.text  # no one-card verdict beside the counts


def test_renting_for_the_run_costs_its_gpu_hours_at_the_rate_said(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "Full fine-tune of Llama-3.1-8B on ~20k samples, avg 1.5k tokens each, 2 epochs, on "
                           "4x A100 40GB.",
                      "And if I rent a single H100 at $2.99/h to do a LoRA instead, what's the cost?")
    timed = ok_calls(r, "training_time")[0]
    assert timed.arguments["tokens"] == pytest.approx(20_000 * 1_500 * 2)  # samples × tokens each × epochs
    assert timed.result["cost_usd"] == pytest.approx(timed.result["gpu_hours"] * 2.99, rel=0.01)
    assert r.text.startswith("**Renting 1× H100")


def test_lora_on_a_base_larger_than_one_card_is_sharded(adv: Advisor) -> None:
    """70.55e9 × 2 B = 141 GB of frozen base cannot sit whole on an 80 GB card: FSDP / ZeRO-3 splits it."""
    _, (r,) = talk(adv, "我们有 8 张 H100，用 LoRA 微调 Llama 3.1 70B，200M tokens 2 epochs 要多久")
    size = ok_calls(r, "size_training")[0]
    assert size.arguments["zero_stage"] == 3 and size.result["fits"]
    assert r.text.startswith("**8 张 H100 SXM 80GB 训练") and "ZeRO-3 / FSDP" in r.text


# ----------------------------------------------------------------------------- the hardware said


def test_a_card_added_to_the_ones_owned_is_checked_with_them(adv: Advisor) -> None:
    _, (first, second) = talk(adv, "I game on a 4090 (i9-14900K, 1000W PSU, regular ATX mid tower). Thinking of "
                                    "adding a second 4090 for local LLMs — will it physically fit, can I NVLink them, "
                                    "and what PSU do I need? Goal is 70B at Q4.",
                               "What about a 5090 as the second card instead?")
    assert ok_calls(first, "check_build")[0].arguments["gpus"] == [{"gpu": "rtx-4090", "count": 2}]
    assert "NVLink" in first.text
    built = {g["gpu"]: g["count"] for g in ok_calls(second, "check_build")[0].arguments["gpus"]}
    assert built == {"rtx-4090": 1, "rtx-5090": 1}
    # by hand: 450 W + 575 W of cards is past a 1,000 W PSU with its CPU and platform
    assert "1,000 W" in second.text and "1,025 W" in second.text


def test_adding_a_different_card_to_an_owned_one_pools_them(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "想在家用 ollama 跑 qwen2.5 32b 的 Q4_K_M，显卡是 4070 super 12G，CPU 是锐龙 9 7950X",
                      "那我再加一张 3060 12G 呢，两张卡能一起用吗？电源 750W 够不够？")
    cards = {g["gpu"] for g in ok_calls(r, "check_build")[0].arguments["gpus"]}
    assert cards == {"rtx-4070-super", "rtx-3060-12gb"}
    assert ok_calls(r, "pooled_fit")


def test_a_family_name_keeps_the_variant_owned(adv: Advisor) -> None:
    s, _ = talk(adv, "Dept has one node with 4x A100 40GB for a full fine-tune of Llama-3.1-8B.",
                 "What if we do LoRA instead on just one of those A100s?")
    assert (s.profile.gpu, s.profile.gpu_count) == ("a100-pcie-40gb", 1)


def test_a_stated_memory_and_form_factor_pick_that_variant() -> None:
    assert parse("Found a lot of 4x V100 16GB PCIe for $600 total.").gpus[0].gpu == "v100-pcie-16gb"
    v100 = load_catalog().gpu("v100-pcie-16gb")  # NVIDIA datasheet: 7 / 14 / 112 TFLOPS, 900 GB/s, 250 W
    assert (v100.bandwidth_gbs, v100.tdp_w, v100.throughput.fp16) == (900, 250, 112)


def test_a_server_named_by_its_model_is_checked_as_a_server(adv: Advisor) -> None:
    quote = ("供应商刚给的报价，帮我看看：\n浪潮 NF5468M7，8×L40S 48GB，2×至强 8480+，1TB 内存，"
             "4TB NVMe，含三年质保，总价 185 万。\n我们要跑 Qwen2.5-72B 推理，部门大概 300 人，"
             "高峰同时 50 个人用。这配置够不够？价格贵不贵？")
    _, (r, fp8) = talk(adv, quote, "如果用 FP8 量化跑呢？最多能撑多少人同时用？")
    parsed = parse("浪潮 NF5468M7，8×L40S 48GB，1TB 内存，4TB NVMe，含三年质保")
    assert parsed.form_factor == "server" and parsed.deadline_days is None and parsed.problem_size_gb is None
    assert "ATX" not in r.text and r.text.startswith("**Qwen2.5-72B")  # the fit asked first, not the RAM
    assert "比目录估算高" in r.text
    serving = ok_calls(fp8, "perf_serving")[0]
    assert fp8.text.startswith("**最多同时多少人") and f"{serving.result['max_concurrency']:,.0f}" in fp8.text


def test_numbers_inside_product_names_are_no_quantities() -> None:
    p = parse("Quote A – Dell PowerEdge XE9680, 8x H100 SXM5 80GB, 2x Xeon Platinum 8468, 2TB DDR5, "
              "8x ConnectX-7 400G — $385,000")
    assert p.context_tokens is None and p.gpus[0].count == 8


# ----------------------------------------------------------------------------- prices and usage said


def test_rent_or_buy_uses_the_purchase_price_and_rate_said_and_follows_what_ifs(adv: Advisor) -> None:
    first = ("我们创业公司，用 8 卡 4090 服务器做推理。云上租 4090 一张一小时 2.5 块，"
             "买一台 8 卡 4090 服务器大概 25 万。每天用 16 个小时，多久能回本？")
    _, replies = talk(adv, first, "如果是 24 小时满负荷呢？", "那如果云上价格涨到 4 块一小时呢？")
    for r, hours, rate in zip(replies, (16, 24, 24), (2.5, 2.5, 4.0), strict=True):
        res = ok_calls(r, "rent_vs_buy")[0].result
        assert res["purchase"] == pytest.approx(250_000)
        rent = 8 * rate * hours * 365 / 12  # by hand: cards × rate × hours a day × days a month
        assert res["rent_per_month"] == pytest.approx(rent, rel=0.01)
        assert res["break_even_months"] == pytest.approx(250_000 / (rent - res["energy_per_month"]), rel=0.02)
        assert r.text.startswith(f"**按每天 {hours} 小时算")


@pytest.mark.parametrize(("text", "hours"), [
    ("9 hours a day on weekdays, $0.15/kWh", 9 * 5 / 7), ("电价 1 块钱一度，工作日每天开 10 个小时", 10 * 5 / 7),
    ("we fine-tune maybe 3 days a month", 24 * 3 / (365 / 12)), ("如果是 24 小时满负荷呢？", 24.0),
])
def test_the_days_used_average_the_hours_a_day(text: str, hours: float) -> None:
    p = parse(text)
    assert p.hours_per_day == pytest.approx(hours, abs=0.01) and p.deadline_days is None


def test_a_used_price_and_a_rental_rate_make_a_break_even_question() -> None:
    p = parse("grad student here. runpod 4090 is $0.34/hr, a used 4090 is ~$1800. I use it about 20 hrs a week. "
              "electricity $0.25/kWh. when does buying pay off?")
    assert p.kind.value == "rent_vs_buy" and p.purchase_price == (1800.0, "USD") and p.budget is None


# ----------------------------------------------------------------------------- who and what


def test_head_count_and_peak_users_split_at_but() -> None:
    p = parse("School district, ~2,000 staff but realistically 60 concurrent at peak. We want an on-prem "
              "Llama-3.1-8B and need to stay under 3 kW total. What GPUs and how many?")
    assert (p.concurrency, p.head_count) == (60, 2000)


def test_a_build_question_without_a_card_gets_a_recommendation_and_its_cost(adv: Advisor) -> None:
    _, (r, cost) = talk(adv, "School district, 60 concurrent at peak. We want an on-prem Llama-3.1-70B, under 3 kW. "
                              "What GPUs and how many?", "cost for that 70B setup?")
    top = ok_calls(r, "recommend")[0].result["options"][0]
    machine = ok_calls(cost, "machine_cost")[0]
    assert (machine.arguments["gpu"], machine.arguments["count"]) == (top["gpu_id"], top["count"])
    assert cost.text.startswith("**Whole build:**")


def test_the_first_model_is_the_subject_unless_the_message_switches() -> None:
    assert parse("got a 3060 12gb, wanna run llama 3.1 8b Q5_K_M in ollama. also is mistral 7b a better pick?"
                 ).model == "llama-3.1-8b"
    assert parse("把模型从 Llama 3.1 8B 换成 Qwen2.5-14B").model == "qwen2.5-14b"
    assert parse("Qwen2.5-14B instead of Llama 3.1 8B").model == "qwen2.5-14b"


def test_the_model_wanted_is_the_subject_not_the_one_run_today() -> None:
    assert parse("I use ollama (qwen2.5:32b q4) and ComfyUI. I want to run Llama 3.3 70B at a decent speed. "
                 "Add a second 3090?").model == "llama-3.3-70b"
    assert parse("现在用 ollama 跑 qwen2.5:14b 感觉有点慢。想跑 Qwen3-32B 的 q4，是不是得换卡？").model == "qwen3-32b"
    assert parse("Currently on Llama 3.1 8B. Can a 4090 run Qwen2.5-32B?").model == "qwen2.5-32b"


def test_a_follow_up_that_runs_something_keeps_the_training(adv: Advisor) -> None:
    s, _ = talk(adv, "Planning 16 nodes of 8x H200 for pretraining a 70B dense model on 2T tokens.",
                 "Electricity cost for that run at $0.08/kWh?")
    assert s.profile.use_case == "training"


def test_a_service_for_several_users_leaves_out_unreadably_slow_options(adv: Advisor) -> None:
    _, (r,) = talk(adv, "我们是事业单位，要求信创。部署 DeepSeek-R1 671B 满血版给 20 个人同时用，预算 130 万")
    for call in ok_calls(r, "recommend"):
        for o in call.result["options"]:
            assert o["decode_tokens_per_s"] is None or o["decode_tokens_per_s"] / 20 >= 5  # reading speed


def test_a_rack_limit_is_answered_when_said_not_on_every_later_turn(adv: Advisor) -> None:
    _, (said, later) = talk(adv, "We run 2 nodes of 8x H100 SXM. Our racks are 17 kW: how many nodes per rack?",
                             "and with SGLang instead of vLLM?")
    assert "Rack" in said.text and "Rack" not in later.text


# ----------------------------------------------------------------------------- a second round, from batch e


def test_a_purchase_composed_of_cards_each_and_a_host_is_added_up() -> None:
    p = parse("Right now we rent 2x H100 80GB at $2.20/GPU-hr, 14 hours a day on weekdays. An 8x H100 server is "
              "~$280k, way too much. Would buying 2x H100 PCIe (~$25k each) plus a server (~$15k) pay off vs renting?")
    assert p.purchase_price == (2 * 25_000 + 15_000, "USD") and p.rental_rate == (2.2, "USD")
    assert p.budget is None  # a price said of another option is no budget


def test_a_card_sold_leaves_and_a_card_added_next_to_an_owned_one_joins_it(adv: Advisor) -> None:
    s, (first, _) = talk(adv, "I've got a 3060 12GB running ollama. Want to run qwen2.5:32b. Thinking of adding a "
                               "used 3090 next to the 3060. PSU is 750W. Would that work and what speeds?",
                          "what if I sell the 3060 and get two 3090s instead?")
    assert ok_calls(first, "pooled_fit") and ok_calls(first, "check_build")[0].arguments["precision"] == "Q4_K_M"
    assert (s.profile.gpu, s.profile.gpu_count) == ("rtx-3090", 2)
    assert not any(e.gpu == "rtx-3060-12gb" for e in s.profile.existing or [])


def test_cards_ruled_out_in_a_list_or_by_vendor_are_not_planned_on() -> None:
    p = parse("We can't get H100/H200 and management wants domestic hardware, no NVIDIA. Qwen2.5-72B for 20 users")
    assert p.gpus == [] and p.excluded_vendors == ["nvidia"]
    assert [g.gpu for g in parse("Replacing old V100 nodes. Shortlist: H100 PCIe, MI300X").gpus] == ["h100-pcie",
                                                                                                  "mi300x"]


def test_daily_users_are_not_users_at_once() -> None:
    p = parse("1500人里其实每天真正会用的也就300人左右，按这个是不是可以买小一点？")
    assert p.concurrency == 30 and p.readback[0][0] == "nlu.readback.peak_assumed"  # a tenth of 300 at peak


def test_a_head_count_with_no_peak_is_sized_at_about_a_tenth_at_once_and_said_back() -> None:
    for text, users, head in (("我们要拿来跑Qwen2.5-72B，全公司大概200人用。这个配置能跑吗？", 30, 200),
                              ("想本地部署DeepSeek-R1满血版给全单位3000人用，昇腾910B的服务器要几台？", 300, 3000),
                              ("公司300来号人，想在内网搭个问答机器人，IT就我一个人", 30, 300),
                              ("hosting Llama 3.3 70B for 1,200 staff", 120, 1200),
                              ("serve Llama 70B to our 12 analysts", 12, 12)):
        p = parse(text)
        assert (p.concurrency, p.head_count) == (users, head), text
    assert parse("全公司三百人，高峰同时四十来个").concurrency == 40


def test_a_load_share_scales_the_energy_hours() -> None:
    assert parse("yearly electricity at $0.14/kWh if it runs 24/7 at roughly 60% load?").hours_per_day == \
        pytest.approx(24 * 0.6)


def test_a_budget_is_counted_in_each_card_named(adv: Advisor) -> None:
    _, (r,) = talk(adv, "For GROMACS: how many L40S vs RTX 4090 would $80k get us?")
    counted = {o["gpu"] for c in ok_calls(r, "affordable") for o in c.result["options"]}
    assert counted == {"l40s", "rtx-4090"}
    assert "$80,000 buys" in r.text and "L40S" in r.text and "RTX 4090" in r.text


def test_a_rack_counts_the_nodes_with_their_cpus(adv: Advisor) -> None:
    _, (r,) = talk(adv, "4-node cluster, each node 4x L40S and 2x EPYC 9354. Our racks are limited to 10 kW each. "
                         "Fits in one rack?")
    wall = ok_calls(r, "check_build")[0].result["totals"]["wall_draw_w"]
    machine = ok_calls(r, "machine_cost")[0].result
    assert machine["node_wall_w"] == pytest.approx(wall, rel=0.01)
    assert machine["nodes_per_rack"] == math.floor(10_000 / wall) and r.text.startswith("**Rack")


def test_a_budget_for_a_card_in_ones_own_desktop_lists_cards_it_takes(adv: Advisor) -> None:
    _, (r,) = talk(adv, "I already picked an i9-14900K and 64GB RAM. My budget for the GPU is about $2,000. "
                         "Which GPU should I get?")
    cat = load_catalog()
    for o in ok_calls(r, "affordable")[0].result["options"]:
        g = cat.gpu(o["gpu"])
        assert o["count"] <= 2 and g.form_factor == "pcie" and g.cooling.value != "passive"


def test_product_names_and_dimms_are_not_counts_or_samples() -> None:
    p = parse("纠结是再收一张二手3090还是买张新的4060ti 16g？我的配置：7800X3D + B650M 主板")
    assert "gpu_count" not in p.unusable and not p.unknown_gpus
    q = parse("EPYC 9654 + 768G DDR5（12条64G）+ 一张4090，用 llama.cpp 跑 DeepSeek-R1 Q4，能跑起来吗？")
    assert q.dataset_samples is None and q.use_case == "inference"


def test_a_bare_size_that_names_the_model_keeps_it(adv: Advisor) -> None:
    s, _ = talk(adv, "4 台 8 卡 H800 做继续预训练，底座 Qwen2.5-14B，数据量 200B token，要训多久？",
                 "14B 用 4 台那个方案，每张卡 80G 显存够吗？")
    assert s.profile.model == "qwen2.5-14b"


# ----------------------------------------------------------------------------- a third round, from batch f


def test_the_purpose_said_first_is_the_workload() -> None:
    assert parse("Use: host Llama 3.3 70B for our analysts, ~40 using it at the same time, maybe fine-tune an 8B "
                 "model later. Is this enough?").use_case == "inference"
    assert parse("LoRA fine-tune Llama 3.1 70B and then serve it internally").use_case == "training"


def test_boxes_of_a_baseboard_count_nodes_and_the_cards_each_count_per_node() -> None:
    p = parse("We have 4x HGX H100 nodes (8x H100 SXM each, 8x 400G NDR InfiniBand per node). Plan: continued "
              "pretraining of Llama 3.1 70B on 300B tokens. Roughly how long will it take?")
    assert p.nodes == 4 and p.existing[0].count == 8
    assert p.asks == ["training_time"]  # the fabric described is no question about it


def test_two_purchase_options_are_not_added_and_a_break_even_makes_rent_or_buy() -> None:
    p = parse("We rent 2x H100 at $2.20/GPU-hour. Thinking of buying either a used 8x H100 server for $180k or a "
              "new 4x RTX PRO 6000 box for $45k. When does buying pay off?")
    assert p.kind.value == "rent_vs_buy" and p.purchase_price == (180_000.0, "USD")


def test_prices_pictures_and_modded_memory_are_read_as_they_are_meant() -> None:
    p = parse("闲鱼上看了几种卡：Tesla P40 24G 800块，V100 16G PCIe 1500，2080ti 魔改22G 2600")
    assert {g.gpu: g.count for g in p.gpus} == {"tesla-p40": 1, "v100-pcie-16gb": 1, "rtx-2080-ti-22gb": 1}
    assert parse("Flux 的 LoRA 在 24G 上能训吗？30 张图、2000 步大概要多久？").gpu_count is None


def test_numbers_beside_network_cards_decimals_and_gpu_hours_are_no_gpu_counts() -> None:
    assert parse("每台加4张200G的IB卡，大概要多少钱").gpu_count is None
    p = parse("一天开8小时，一度电0.6块，一年多少钱")
    assert p.gpu_count is None and p.kwh_price == 0.6 and p.hours_per_day == 8
    p = parse("what if our usage grows to 3000 GPU-hours a month?")
    assert "gpu_count" not in p.unusable and p.gpu_hours_month == 3000


def test_a_cluster_total_with_its_node_count_is_split_per_node() -> None:
    p = parse("Looking at renting or buying 64x H100 (8 nodes) to pretrain a 13B model")
    assert (p.gpus[0].count, p.nodes) == (8, 8)  # 64 in all: more than any one server holds


def test_gpu_hours_a_month_set_the_rented_hours_and_a_late_break_even_says_keep_renting(adv: Advisor) -> None:
    _, (r,) = talk(adv, "Roughly 300 GPU-hours/month on H100s, renting at ~$2.50/hr. Would buying an 8x H100 "
                        "server pay off?")
    call = ok_calls(r, "rent_vs_buy")[0]
    assert call.arguments["hours_per_day"] == pytest.approx(300 / (365 / 12) / 8, abs=0.01)
    assert call.result["rent_per_month"] == pytest.approx(300 * 2.5, rel=0.01)  # the hours used, at their rate
    assert r.text.startswith("**Keep renting")  # $750 a month never repays ~$260,000 within five years


def test_a_per_machine_power_cap_is_checked_and_a_swapped_card_keeps_the_count(adv: Advisor) -> None:
    _, (r, swap) = talk(adv, "机房每台服务器限3000W以内，8张4090的机器行吗？", "那如果换成5090呢？")
    report = ok_calls(r, "check_build")[0].result
    cap = next(f for f in report["findings"] if f["id"] == "power-machine-cap")
    # 8 × 450 W + CPUs and platform, at 90 % efficiency, is far over 3,000 W at the wall
    assert cap["severity"] == "error" and report["totals"]["wall_draw_w"] > 8 * 450 / 0.9
    assert ok_calls(swap, "check_build")[0].arguments["gpus"][0] == {"gpu": "rtx-5090", "count": 8}


def test_an_assumed_precision_that_does_not_fit_leads_with_the_quantisation_that_does(adv: Advisor) -> None:
    _, (r,) = talk(adv, "两张L40S能跑Qwen2.5-72B吗？速度多少？")
    head = r.text.splitlines()[0]
    # 72B in BF16 is ~145 GB of weights: two 48 GB cards do not hold it; FP8/INT4 (~73/~40 GB) do
    assert head.startswith("**结论：能跑，要量化") and "bf16" in head


def test_consumer_cards_for_one_user_are_sized_as_ollama_runs_them(adv: Advisor) -> None:
    _, (r,) = talk(adv, "两张3090能跑70B吗？速度多少？")
    head = "\n".join(r.text.splitlines()[:2])  # the speed asked, then the fit
    # 70B at Q4_K_M ≈ 42 GB of weights: two 24 GB cards hold it with llama.cpp, as a home user runs it
    assert ok_calls(r, "size_inference")[0].arguments["precision"] == "Q4_K_M"
    assert "tokens/s" in head and "Q4_K_M" in head and "放不下" not in head


def test_a_home_psu_is_no_gate_but_the_top_pick_says_it_needs_a_bigger_one(adv: Advisor) -> None:
    _, (r,) = talk(adv, "想在家里跑 Qwen3-32B，预算一万五，现在电脑 650W 电源，该买啥卡？")
    top = ok_calls(r, "recommend")[0].result["options"][0]
    assert top["gpu_id"] == "rtx-3090"  # 24 GB holds 32B at Q4_K_M (~20 GB); a used one is the value pick
    assert "650 W 电源带不动第一名" in r.text


def test_both_options_are_answered_each_on_its_own_configuration(adv: Advisor) -> None:
    _, (_, _, r) = talk(adv, "8张L20 48G的服务器跑Qwen2.5-72B", "如果换成8张H20呢？",
                        "要上报预算，给我两套方案的总价和一年电费，电价按0.8元/度")
    costed = {(c.arguments["gpu"], c.arguments["count"]) for c in ok_calls(r, "machine_cost")}
    assert costed == {("l20", 8), ("h20", 8)}
    assert "【8 张 L20 48GB】" in r.text and "【8 张 H20 96GB (HGX)】" in r.text and "推荐配置" not in r.text


def test_a_baseboard_node_draws_the_same_in_the_build_check_and_its_running_cost() -> None:
    from tools.compat import check_build
    from tools.compat_rules.types import BuildInput, GPUCount
    from tools.ownership import MachineCostInput, machine_cost

    wall = check_build(BuildInput(gpus=[GPUCount(gpu="h100-sxm", count=8)])).totals.wall_draw_w
    assert wall == pytest.approx(10_200, rel=0.12)  # DGX H100 datasheet: 10.2 kW maximum system power
    assert machine_cost(MachineCostInput(gpu="h100-sxm", count=8)).node_wall_w == pytest.approx(wall)


def test_the_network_the_nodes_have_is_judged_by_one_gradient_exchange(adv: Advisor) -> None:
    _, (full, lora) = talk(adv, "我们要做Qwen2.5-72B的全参SFT，数据20亿token。手上有4台8卡A800 80G，"
                                "节点之间只有25G以太网。够不够？", "如果改成LoRA呢？网络还是25G。")
    net = ok_calls(full, "plan_network")[0]
    # 72.7B × 2 bytes: ZeRO-3 across 4 nodes moves 3 × 3/4 × 145.4 GB ≈ 327 GB per micro-batch; 25 Gb/s is 3.125 GB/s
    assert net.arguments["have_gbps_per_node"] == 25 and net.arguments["sharded_across_nodes"]
    assert net.result["sync_s_have"] == pytest.approx(3 * 0.75 * 72.7e9 * 2 / 3.125e9, rel=0.01)
    assert "25 Gb/s 网络不够" in full.text
    assert "25 Gb/s 网络够用" in lora.text and "需要购买" not in lora.text  # adapters: well under a GB a step


def test_cards_ruled_out_are_never_recommended_and_how_many_with_speed_answers_on_the_count_that_fits(
        adv: Advisor) -> None:
    _, (first, count) = talk(adv, "Startup in Shenzhen, DeepSeek-R1 (the full 671B) for ~20 concurrent users. We can't "
                                  "legally buy H100/H200 here. Budget is about 2 million RMB.",
                             "if we go with Huawei 910B, how many cards to run it at INT8? And roughly what token "
                             "speed per user?")
    for call in ok_calls(first, "recommend"):
        assert not {o["gpu_id"] for o in call.result["options"]} & {"h100-sxm", "h200-sxm"}
    # 671B at INT8 ≈ 671 GB of weights + KV for 20 users: 8 × 64 GB (512 GB) is short, 16 (1 TB) holds it
    assert count.text.startswith("**You need at least 16× Ascend 910B")
    speed = next(c for c in ok_calls(count, "perf_decode") if c.arguments["count"] == 16)
    assert speed.arguments["precision"] == "int8" and "**Speed:** on 16× Ascend 910B" in count.text
    assert not ok_calls(count, "affordable")  # no budget in this message: the count it needs, not what ¥2M buys


def test_people_named_in_a_follow_up_fewer_than_everyone_are_people_at_once(adv: Advisor) -> None:
    s, _ = talk(adv, "公司1200人，高峰大概80人同时用，4张L20跑Qwen2.5-32B够吗", "如果高峰涨到150人同时用呢？",
                "那要是换成 Qwen3-30B-A3B 呢，4卡L20能扛150人吗？")
    assert s.profile.concurrency == 150 and s.profile.head_count == 1200  # 150 of 1,200 is no head count


def test_cards_compared_with_no_count_are_each_sized_at_the_least_count_that_holds_the_model(adv: Advisor) -> None:
    _, (r,) = talk(adv, "Company in Shenzhen, full DeepSeek-R1 671B for around 30 engineers. H20 or Huawei 910B?")
    sized = {c.arguments["gpu"]: c for c in ok_calls(r, "size_inference")}
    # FP8 R1 is ~690 GB of weights: one 96 GB or 64 GB card cannot hold it, so each is sized at a count that does
    for gpu in ("h20", "ascend-910b"):
        assert sized[gpu].arguments["gpus"] >= 8 and sized[gpu].result["fits"]


def test_home_cards_compared_with_no_precision_are_sized_at_what_ollama_runs(adv: Advisor) -> None:
    _, (r,) = talk(adv, "家里想跑 Qwen3-32B，买4090还是两张二手3090？速度大概多少token/s？")
    assert {c.arguments.get("precision") for c in ok_calls(r, "size_inference")} == {"Q4_K_M"}
    assert r.text.startswith("**两者都放得下 Qwen3-32B（Q4_K_M）")  # ~20 GB: one 24 GB card holds it


def test_a_follow_up_that_changes_the_node_count_keeps_the_gpus_per_node(adv: Advisor) -> None:
    _, (_, more) = talk(adv, "We have 4 nodes of 8x H100 SXM. Continued pretraining Llama 3.1 70B on 300B tokens, "
                             "how long?", "what if we went with 8 nodes instead?")
    assert ok_calls(more, "training_time")[0].arguments["count"] == 64  # eight nodes of eight, not eight GPUs


def test_a_how_to_question_is_answered_from_the_guide_not_with_a_sizing(adv: Advisor) -> None:
    for text, section in (("怎么验卡？拿到手要测哪些东西？", "used-cards/zh/what-to-check"),
                          ("how do I test a used card before paying?", "used-cards/en/what-to-check")):
        _, (r,) = talk(adv, text)
        assert r.mode == "concept" and section in r.text and not ok_calls(r, "recommend")


def test_an_image_model_is_sized_by_its_weights_and_never_given_a_token_speed(adv: Advisor) -> None:
    _, (r,) = talk(adv, "我还想玩 ComfyUI 跑 Flux.1 dev 出图，3060 12G 和 4090 能跑吗？")
    assert r.mode == "generative" and "tokens/s" not in r.text and not ok_calls(r, "perf_decode")
    bf16 = next(c for c in ok_calls(r, "size_inference")
                if c.arguments["gpu"] == "rtx-3060-12gb" and c.arguments["precision"] == "bf16")
    assert bf16.result["weights_total_bytes"] == pytest.approx(12.0e9 * 2, rel=0.01)  # 12B parameters × 2 bytes
    assert not bf16.result["fits"]  # 24 GB of weights on a 12 GB card
    q4 = next(c for c in ok_calls(r, "size_inference")
              if c.arguments["gpu"] == "rtx-3060-12gb" and c.arguments["precision"] == "Q4_K_M")
    assert q4.result["fits"]


def test_a_video_model_is_not_read_as_a_language_model_of_the_same_size() -> None:
    assert parse("Wan2.1 14B 生成 720P 5秒的视频，4090 大概要多久？").model == "wan2.1-t2v-14b"


def test_spoken_prices_list_bullets_and_chip_counts_are_read_as_written() -> None:
    assert parse("电费1块2一度，一年多少").kwh_price == 1.2  # 1 块 2 (毛) is ¥1.20
    assert parse("电价6毛一度").kwh_price == 0.6  # 6 毛 is ¥0.60
    quote = parse("Quote:\n- 8x H100 SXM server\n- $289,500 total")
    assert quote.budget is not None and quote.budget.amount == 289_500 and "budget" not in quote.unusable
    assert parse("预算 -5 万").unusable["budget"] == -50_000  # a minus sign is still said back
    assert parse("服务器配2颗8468，内存1T").gpu_count is None  # two CPUs


def test_a_what_if_that_scales_a_value_scales_the_one_under_discussion(adv: Advisor) -> None:
    s, _ = talk(adv, "serve Llama 3.1 8B to 40 users at once on 2x L40S, enough?", "what if traffic grows 5x?")
    assert s.profile.concurrency == 200
    s, _ = talk(adv, "训练Qwen2.5-7B全参，数据100亿token，8张H100要多久", "如果数据量翻倍呢", "预算50万",
                "那预算翻倍呢")
    assert s.profile.dataset_tokens == 20e9 and s.profile.budget is not None and s.profile.budget.amount == 1e6
    assert parse("we have 8x H100 nodes").scaled is None and parse("2x 3090").scaled is None  # counts, not factors


def test_a_bare_count_in_a_what_if_is_the_cards_and_an_unread_what_if_says_so(adv: Advisor) -> None:
    s, (_, fewer, odd) = talk(adv, "serve Llama 3.1 70B FP8 to 30 users on 4x L40S, enough?",
                              "what if we only buy 2 now?", "what if the moon was cheese?")
    assert ok_calls(fewer, "size_inference")[0].arguments["gpus"] == 2 and s.profile.gpu_count == 2
    assert "could not tell what this what-if changes" in odd.text


def test_a_gpu_count_past_one_server_in_a_follow_up_is_the_clusters_total(adv: Advisor) -> None:
    _, (_, more) = talk(adv, "We have 8 nodes of 8x H100. Pretraining a 7B model on 1T tokens, how long?",
                        "What if we get 128 GPUs?")
    assert ok_calls(more, "training_time")[0].arguments["count"] == 128  # not 128 per node


def test_psus_written_per_unit_and_a_cards_power_limit_are_no_machine_cap(adv: Advisor) -> None:
    assert parse("4x 3000W PSU, 8x H100").power_limit_w is None
    _, (r,) = talk(adv, "两张4090，限功耗到300W，850W电源够吗？")
    assert "max_wall_w" not in ok_calls(r, "check_build")[0].arguments  # 300 W limits each card


def test_a_comparison_shards_lora_over_two_cards_as_a_training_turn_does(adv: Advisor) -> None:
    _, (r,) = talk(adv, "双卡 4090 和单卡 RTX 6000 Ada 哪个更适合微调 14B？")
    pair = next(c for c in ok_calls(r, "size_training") if c.arguments["gpu"] == "rtx-4090")
    # the frozen 14.8B base in BF16 is ~29.5 GB, more than one 24 GB card: ZeRO-3 shards it over the two
    assert pair.arguments["zero_stage"] == 3 and pair.result["fits"]
