"""Plans the way a buyer states them: several training jobs are planned for the hardest; training picks exclude
cards that cannot train; a budget changed says what it changed; a seller's quote next to a server model is the
quote; a card swapped in with its count keeps the plan and answers the price and users asked; a card named again
brings back its configuration."""

from __future__ import annotations

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


LAB = "老师让我用课题经费20万配一台服务器，主要做 Llama-3.1-8B 全参微调，偶尔 QLoRA 微调 70B。买什么卡合适？"


def test_several_training_jobs_are_planned_for_the_hardest(adv: Advisor) -> None:
    """Full fine-tuning with Adam keeps ~16 bytes per parameter (8B → ~128 GB before activations); QLoRA keeps
    the 70B base at ~0.5 bytes per parameter (~35–40 GB): the full fine-tune of the small model is the harder."""
    jobs = parse(LAB).workloads
    assert [(j.model, j.params_b, j.method) for j in jobs] == [("llama-3.1-8b", None, "full"), (None, 70.0, "qlora")]
    _, (r,) = talk(adv, LAB)
    main = next(c for c in ok_calls(r, "size_training") if not c.call_id.startswith("alt_"))
    other = next(c for c in ok_calls(r, "size_training") if c.call_id.startswith("alt_"))
    assert (main.arguments["model"], main.arguments["method"]) == ("llama-3.1-8b", "full")
    assert (other.arguments["model"], other.arguments["method"]) == ("llama-3.1-70b", "qlora")
    assert main.result["per_gpu_bytes"] > 128e9 > other.result["per_gpu_bytes"] > 35e9
    assert "最吃显存" in r.text and "Llama-3.1-70B (QLoRA)" in r.text


def test_training_picks_leave_out_cards_that_cannot_train(adv: Advisor) -> None:
    """The Ascend 310P is inference silicon; a Tesla P40 does 16-bit math at 0.18 TFLOPS."""
    _, (r,) = talk(adv, LAB)
    rec = ok_calls(r, "recommend")[0].result
    picked = {o["gpu_id"] for o in rec["options"]}
    assert not picked & {"atlas-300i-duo", "tesla-p40"}
    gates = {g["gpu_id"]: g["stage"] for g in rec["rejected"] if g["gpu_id"] in ("atlas-300i-duo", "tesla-p40")}
    assert gates == {"atlas-300i-duo": "constraint", "tesla-p40": "constraint"}


def test_a_budget_cut_says_what_it_changed(adv: Advisor) -> None:
    _, (_, r) = talk(adv, LAB, "如果经费砍到10万呢？")
    assert r.text.startswith("**预算改为 ¥100,000 后")


def test_a_quote_beside_a_server_model_is_the_quote_not_the_model_number(adv: Advisor) -> None:
    """¥1,350,000 against 8 × ¥135,000 (the catalog's China channel price of an H20, what a buyer in China pays)
    + ¥432,000 host = ¥1,512,000: 11 % below."""
    text = ("我是公司采购，供应商给了个报价：浪潮 NF5688M7，8×H20 96GB，2×至强8480+，2TB内存，含税135万。"
            "业务那边说要本地跑 DeepSeek-R1 671B 满血版，这配置够不够？价格贵不贵？")
    said = parse(text)
    assert said.quoted_price == (1_350_000, "CNY") and said.budget is None
    _, (r,) = talk(adv, text)
    assert "报价 ¥1,350,000 比目录估算低 11%" in r.text


def test_a_card_swapped_in_answers_price_and_users_and_a_card_named_again_returns(adv: Advisor) -> None:
    s, (_, swap, back) = talk(
        adv, "供应商报价：8×H20 96GB 整机含税135万，要本地跑 DeepSeek-R1 671B 满血版，够不够？",
        "如果换成 8×H200 141GB 的呢，大概多少钱？能多撑多少并发？",
        "那回到H20那台，整机满载功耗多少，电费一年多少？我们电价1块一度。")
    assert swap.mode == "answer" and ok_calls(swap, "machine_cost")[0].arguments["gpu"] == "h200-sxm"
    serving = ok_calls(swap, "perf_serving")[0]
    sized = next(c for c in ok_calls(swap, "size_inference") if not c.call_id.startswith("alt_"))
    # the users at once are counted at the context and precision the fit was computed at: one figure, not two
    assert serving.arguments["context"] == sized.result["context"]
    assert serving.arguments["precision"] == sized.result["precision"]
    cost = ok_calls(back, "machine_cost")[0].arguments
    assert (cost["gpu"], cost["count"], cost["kwh_price"]) == ("h20", 8, 1.0)
    assert s.profile.kwh_price == 1.0


@pytest.mark.parametrize(("card", "code", "lead"), [
    # VASP's GPU build is CUDA (OpenACC) only: a Hygon DCU (DTK) cannot run it
    ("海光DCU", "VASP", "**不行：VASP 没有能在 Hygon DCU K100_AI"),
    # GROMACS runs in mixed precision: the 4090's 82.6 TFLOPS FP32 is what counts
    ("4090", "GROMACS", "**可以：GeForce RTX 4090 适合 GROMACS"),
    # VASP in double precision on a 1.3 TFLOPS-FP64 card: it runs, slowly
    ("4090", "VASP", "**GeForce RTX 4090 能跑 VASP，但会很慢"),
])
def test_a_card_asked_about_for_a_code_gets_a_verdict_first(adv: Advisor, card: str, code: str, lead: str) -> None:
    _, (r,) = talk(adv, f"我们跑 {code}，{card} 行不行？")
    assert r.text.startswith(lead)


def test_a_cluster_node_is_checked_as_one_rack_server(adv: Advisor) -> None:
    """8 H100 NVL over 2 nodes: 4 a node, 4 × 400 W = 1.6 kW of GPUs in a rack server, not an ATX tower."""
    _, (_, r) = talk(adv, "We run VASP and GROMACS on our cluster, looking to add GPU nodes, ~$150k budget.",
                     "what if we went with 8 H100 NVL instead, across 2 nodes? power per node?")
    check = ok_calls(r, "check_build")[0]
    assert check.arguments["gpus"] == [{"gpu": "h100-nvl", "count": 4}] and check.arguments["chassis"] == "rack"
    assert "ATX" not in r.text
    _, (_, big) = talk(adv, "64 张 H100 SXM 做预训练，8 台 8 卡", "节点之间网络要什么配置？")
    assert all(g["count"] == 8 for c in ok_calls(big, "check_build") for g in c.arguments["gpus"])


def test_a_new_card_offered_during_a_comparison_is_sized_on_its_own(adv: Advisor) -> None:
    """72B INT8 is ~75 GB of weights; 200 users × 8k context of KV is far more: two 48 GB cards do not hold it."""
    said = parse("A reseller offers modded RTX 4090 48GB cards for about 23,000 RMB each. Could 2 of those do the "
                 "INT8 version instead?")
    assert [(g.gpu, g.count, g.stated) for g in said.gpus] == [("rtx-4090-48gb", 2, True)]
    _, (_, r) = talk(adv, "Need to serve Qwen2.5-72B-Instruct for 200 users at once. NVIDIA H20 (96GB) or Huawei "
                          "Ascend 910B (64GB)? How many cards of each?", said.text)
    main = next(c for c in ok_calls(r, "size_inference") if not c.call_id.startswith("alt_"))
    assert (main.arguments["gpu"], main.arguments["gpus"], main.arguments["precision"]) == ("rtx-4090-48gb", 2, "int8")
    assert main.result["fits"] is False and "does not fit on 2× Modded RTX 4090 48GB" in r.text


def test_internal_users_are_everyone_not_everyone_at_once() -> None:
    said = parse("Need to serve Qwen2.5-72B-Instruct for ~200 internal users.")
    assert (said.head_count, said.concurrency) == (200, 30)  # the peak share said back, not 200 at once
    assert parse("for 200 users").concurrency == 200


def test_a_count_of_other_things_and_a_rate_are_never_a_budget() -> None:
    said = parse("people paste whole contracts, up to ~50 pages (so ~32k tokens context). Hardware budget $40,000.")
    assert said.budget is not None and said.budget.amount == 40_000
    rent = parse("如果改成租云上的 H800，按 15 元/卡时算，总共要花多少？和买 4 台比呢？")
    assert rent.budget is None and rent.rental_rate == (15.0, "CNY")
    assert {"run_cost", "break_even"} <= set(rent.asks)


def test_servers_counted_in_a_follow_up_are_nodes_of_their_gpus() -> None:
    said = parse("Can we put two of the H100 servers in one rack? And the yearly electricity for one server?")
    assert said.nodes == 2 and [(g.gpu, g.count) for g in said.gpus] == [("h100-sxm", 8)]


def test_an_electricity_price_in_another_currency_bills_in_that_currency(adv: Advisor) -> None:
    """8 H20 at the wall × 8,760 h × ¥0.8: a yuan bill, not 0.8 dollars a kWh."""
    _, (_, r) = talk(adv, "We need 8x H20 96GB in one server for DeepSeek-R1 671B, 50 users.",
                     "And the power bill running 24/7 at CNY 0.8/kWh?")
    cost = ok_calls(r, "machine_cost")[0]
    assert cost.arguments["currency"] == "CNY" and cost.arguments["kwh_price"] == 0.8
    assert "¥" in r.text.splitlines()[0]


def test_how_many_to_train_in_time_is_the_plan_and_the_follow_ups_keep_it(adv: Advisor) -> None:
    """Pre-training one's own 7B model (its size, not a catalog model near it): 6 × 7e9 × 1e12 FLOPs at MFU 0.2422
    (the median of published whole runs on H100-class GPUs: Phi-4's and Phi-3-mini's) of 989.4 TFLOPS is ~48.6k
    GPU-hours; in 61 days that is 33.3 cards, so five whole nodes of eight (40) finish in ~51 days."""
    s, (first, network) = talk(adv, "要从头预训练一个 7B 模型，数据 1T tokens，想在 2 个月内训完。需要多少张 H800？",
                               "多机之间用什么网络？我们现在只有 25G 以太网，够不够？")
    main = next(c for c in ok_calls(first, "size_training") if not c.call_id.startswith("alt_"))
    assert main.arguments["gpus"] == 40 and main.result["fits"] and "放不下" not in first.text
    assert (s.profile.gpu_count, s.profile.nodes) == (8, 5)
    assert ok_calls(network, "check_build")[0].arguments["gpus"][0]["count"] == 8 and "5 台 8 卡" in network.text


def test_a_lab_budget_buys_the_most_performance_and_a_home_budget_the_best_value(adv: Advisor) -> None:
    """$150k for VASP nodes: four H100 NVL (4 × 60 TFLOPS FP64) beat one; a £1,500 home card budget still ranks
    by value."""
    _, (lab,) = talk(adv, "We run VASP on our cluster, looking to add GPU nodes, ~$150k budget. What should we buy?")
    top = ok_calls(lab, "recommend")[0].result["options"][0]
    assert top["count"] >= 4 and top["total_price_usd"] <= 150_000 and top["score_basis"] == "performance-only"
    assert "the most performance within your budget first" in lab.text
    _, (home,) = talk(adv, "budget £1500 for mixtral 8x7b")
    priced = [o for o in ok_calls(home, "recommend")[0].result["options"] if o["total_price_usd"] is not None]
    assert priced and all(o["score_basis"] == "per-price" for o in priced)


QUOTE = ("Got this quote from our reseller, pasting it as-is: \"Supermicro SYS-821GE-TNHR, 8x NVIDIA H100 SXM5 80GB "
         "(HGX), 2x Intel Xeon Platinum 8480+, 2TB DDR5-4800, 4x 3000W Titanium PSU. Unit price: USD 289,500.\" "
         "Engineering wants to LoRA fine-tune and serve Llama 3.1 70B for about 200 internal users. Is this price "
         "fair, and is this box overkill for that?")


def test_a_pasted_quote_is_judged_first_and_its_parts_list_asks_about_none_of_them(adv: Advisor) -> None:
    """One HGX box of eight H100 (not eight boxes); $289,500 against 8 × $25k + $60k host = $260k: 11 % above."""
    said = parse(QUOTE)
    assert said.nodes is None and [(g.gpu, g.count) for g in said.gpus] == [("h100-sxm", 8)]
    assert said.quoted_price == (289_500, "USD") and said.budget is None and said.build_topic is None
    _, (r,) = talk(adv, QUOTE)
    assert r.text.startswith("**The quote of $289,500 is 11 % above the catalog estimate")
    # LoRA on a 141 GB frozen base over 8 × 80 GB: sharded (ZeRO-3), as the training sizing does — it fits
    check = ok_calls(r, "check_build")[0]
    assert "does not fit" not in r.text and check.result["findings"] is not None


HOME_PC = ("Hiya. Home PC: Ryzen 7 5800X, 32GB DDR4, B550 board, Corsair RM650 (650W), RTX 3060 12GB. I've got £900 "
           "for a GPU upgrade. I want to run local LLMs (Qwen2.5-32B, maybe Llama 3.3 70B) with llama.cpp/Ollama. "
           "What should I buy?")


def test_a_card_in_the_list_of_ones_pc_is_owned_and_what_to_buy_leads(adv: Advisor) -> None:
    said = parse(HOME_PC)
    assert [e.gpu for e in said.existing or []] == ["rtx-3060-12gb"] and not said.gpus
    assert said.kind == "recommend" and said.build_topic is None  # the PSU listed is a part, not the question
    _, (r,) = talk(adv, HOME_PC)
    assert r.text.startswith("**Recommended configurations**")


def test_a_card_kept_next_to_a_new_one_is_pooled_with_it_and_the_bill_is_in_pounds(adv: Advisor) -> None:
    """Llama 70B at Q4_K_M needs ~46 GB with its context; a 3060 (12 GB) beside a 3090 (24 GB) gives ~37.6 usable."""
    _, (_, r, bill) = talk(adv, HOME_PC, "What if I keep the 3060 in the second slot next to the 3090? Could I run "
                                         "Llama 70B then?", "And electricity? 4 hours a day at £0.25/kWh.")
    pooled = ok_calls(r, "pooled_fit")[0]
    assert {c["gpu"] for c in pooled.arguments["cards"]} == {"rtx-3060-12gb", "rtx-3090"}
    assert not ok_calls(r, "value_for_money") or "8×" not in r.text
    cost = ok_calls(bill, "machine_cost")[0].arguments
    assert (cost["currency"], cost["kwh_price"]) == ("GBP", 0.25) and "£" in bill.text.splitlines()[0]


def test_machines_of_n_cards_are_nodes_and_a_model_size_is_never_money() -> None:
    said = parse("手上有 4 台 8×H800 80GB 服务器，节点间是 RoCE 2×200G。大概要训练多少天？")
    assert said.nodes == 4 and [(e.gpu, e.count) for e in said.existing or []] == [("h800-sxm", 8)]
    follow = parse("假设改租云上的 H800，30 元/卡时，7B 那个方案要花多少钱？", context=True)
    assert follow.budget is None and follow.rental_rate == (30.0, "CNY") and "recommend" not in follow.asks


def test_each_cards_rent_and_a_vendors_quote_go_into_rent_or_buy(adv: Advisor) -> None:
    """8 × ¥2 a card-hour × 10 h × 30.4 days ≈ ¥4,867 a month of rent against ¥250,000: over five years to pay
    back — keep renting; the A100's ¥8 is not the 4090's rent."""
    text = ("云上 A100 80GB 报价 8 元/卡时，4090 是 2 元/卡时；自己买一台 8 卡 4090 服务器大概 25 万。"
            "我们平均每天用 8 张卡、10 个小时。算一下租还是买划算？")
    said = parse(text)
    assert {g: m.amount for g, m in said.card_rates.items()} == {"a100-sxm-80gb": 8, "rtx-4090": 2}
    assert said.hours_per_day == 10 and said.deadline_days is None
    _, (r,) = talk(adv, text)
    rent = ok_calls(r, "rent_vs_buy")[0].arguments
    assert rent["rental_usd_per_gpu_hour"] * 7.2 == pytest.approx(2.0, rel=0.01) and rent["hours_per_day"] == 10
    assert r.text.startswith("**继续租更划算")
    quote = parse("Right now we rent 4x H100 at $2.99/GPU-hr, 24/7. A vendor quoted us a 4x H100 PCIe server for "
                  "$140k. Should we buy? Break-even?")
    assert quote.purchase_price == (140_000, "USD")
    used = parse("RTX 3090 for $750, Tesla V100 32GB SXM2 for $500. I have $2,000 total for GPUs.")
    assert used.budget is not None and used.budget.amount == 2_000 and used.card_prices["v100-sxm2-32gb"].amount == 500


def test_list_marks_board_chipsets_and_card_hours_are_never_cards() -> None:
    listed = parse("闲鱼上看到几张卡：① RTX 3090 24G 5200 元；② Tesla V100 32G SXM2 带转接板 2800 元；③ Tesla P40 24G "
                   "900 元；④ 2080 Ti 魔改 22G 2600 元。选哪张？")
    assert all(not g.stated for g in listed.gpus) and listed.card_prices["rtx-2080-ti-22gb"].amount == 2600
    assert listed.card_prices["v100-sxm2-32gb"].amount == 2800
    assert "B660M" not in parse("我现在的电脑：i5-12400F，B660M 主板，RTX 3060 12G").unknown_gpus
    hours = parse("如果业务涨 3 倍（推理 12 卡常驻，微调 1500 卡时/月）呢？")
    assert hours.gpu_count == 12 and "gpu_count" not in hours.unusable and hours.gpu_hours_month == 1500


def test_a_single_precision_code_is_valued_on_fp32(adv: Advisor) -> None:
    """GROMACS runs in mixed precision: 82.6 TFLOPS FP32 for ¥17,280 (4090) against 19.5 for ¥86,400 (A100)."""
    _, (r,) = talk(adv, "我们跑 GROMACS 分子动力学，A100 和 4090 哪个更划算？")
    assert "每万元 FP32 算力约 47.8 TFLOPS" in r.text and "FP64 算力" not in r.text.split("\n\n")[0]
