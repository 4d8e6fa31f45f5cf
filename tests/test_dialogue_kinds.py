"""Every kind of question gets its answer on the first turn, in both languages (issue 16).

References are datasheet figures and hand derivations, not the tools' own output:
* L40S: 48 GB GDDR6, 864 GB/s; MI300X: 5.3 TB/s; RTX 4090: 24 GB, 1,008 GB/s, 450 W.
* Qwen2.5-32B at FP8: 31.2e9 non-embedding parameters × 1 B + 2 × 152,064 × 5,120 embedding and LM-head
  parameters × 2 B (kept 16-bit) = 31.2 + 3.1 ≈ 34.3 GB of weights.
* Llama-3.1-8B Q4_K_M on an RTX 4090: decode reads ≈ 4.9 GB of weights per token, so 1,008 GB/s / 4.9 GB
  ≈ 206 tokens/s is the bandwidth ceiling; real decode is below it.
* Training time, 7B on 1e9 tokens on 8 × H100 (989 dense BF16 TFLOPS each): 6 × 7e9 × 1e9 = 4.2e19 FLOPs;
  at an MFU between 0.25 and 0.6 that is 2.0–5.9 hours.
* Two RTX 4090s draw 2 × 450 W = 900 W before CPU and platform: a 1,000 W PSU has no 25 % headroom left.
"""

from __future__ import annotations

import re
import statistics
import tomllib
from pathlib import Path

import pytest

from advisor import Advisor
from advisor.session import Session

try:
    from fakes.script import calls, one, turn
except ImportError:  # tests/ collected as a package
    from tests.fakes.script import calls, one, turn

CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def first_line(text: str) -> str:
    return text.strip().splitlines()[0]


def numbers_with(text: str, unit: str) -> list[float]:
    return [float(m.replace(",", "")) for m in re.findall(rf"(\d[\d,]*(?:\.\d+)?)\s*{re.escape(unit)}", text)]


def ask(adv: Advisor, text: str) -> tuple[Session, object]:
    s = adv.new_session()
    return s, turn(adv, s, text)


# ----------------------------------------------------------------------------- spec lookups


@pytest.mark.parametrize(("text", "lang"), [("L40S 显存多大？", "zh"), ("how much vram does the L40S have", "en")])
def test_spec_lookup_answers_the_memory_first(adv: Advisor, text: str, lang: str) -> None:
    s, r = ask(adv, text)
    assert r.mode == "spec" and r.lang == lang and r.question is None
    assert "48 GB" in first_line(r.text) and "864 GB/s" in first_line(r.text)
    assert s.profile.gpu is None  # a lookup plans nothing
    assert lang == "zh" or not CJK.search(r.text)


@pytest.mark.parametrize("text", ["What's the bandwidth of an MI300X?", "MI300X 带宽多少"])
def test_spec_lookup_answers_the_bandwidth(adv: Advisor, text: str) -> None:
    _, r = ask(adv, text)
    assert r.mode == "spec" and "5,300 GB/s" in first_line(r.text)


@pytest.mark.parametrize(("text", "lang"), [("Which GPUs support FP8?", "en"), ("哪些卡支持 FP8？", "zh")])
def test_catalog_filter_lists_fp8_cards_and_chooses_nothing(adv: Advisor, text: str, lang: str) -> None:
    s, r = ask(adv, text)
    found = one(r, "find_gpus")
    assert found.arguments == {"supports": "fp8"}
    names = {m["name"] for m in found.result["matches"]}
    assert "H100 SXM 80GB" in names and "GeForce RTX 3090" not in names  # Hopper has FP8, Ampere has not
    assert r.mode == "spec" and s.profile.precision is None


@pytest.mark.parametrize(("text", "yes"), [("does the RTX 4090 support FP8?", True), ("A100 支持 FP8 吗", False)])
def test_support_question_is_a_yes_or_no(adv: Advisor, text: str, yes: bool) -> None:
    _, r = ask(adv, text)
    head = first_line(r.text)
    assert r.mode == "spec"
    assert head.startswith(("**Yes", "**支持")) if yes else head.startswith(("**No", "**不支持"))


def test_platform_lanes(adv: Advisor) -> None:
    _, r = ask(adv, "how many PCIe lanes does a Ryzen 9 9950X have")
    assert r.mode == "spec" and "24 usable PCIe 5.0 lanes" in first_line(r.text)  # AM5: 28 lanes, 4 to chipset


# ----------------------------------------------------------------------------- concepts


@pytest.mark.parametrize(("text", "lang", "article"), [
    ("HBM 和 GDDR 区别？", "zh", "bandwidth-hbm/zh/"),
    ("What does ECC protect against?", "en", "ecc/en/"),
])
def test_concept_quotes_the_passage_with_its_citation(adv: Advisor, text: str, lang: str, article: str) -> None:
    _, r = ask(adv, text)
    assert r.mode == "concept" and r.lang == lang and r.question is None
    best = r.citations[0]
    assert best.id.startswith(article)
    quoted = next(line for line in r.text.splitlines() if line.startswith("> "))
    assert f"[{best.id}]" in quoted
    sentence = quoted[2:].split("[")[0].strip()[:30]
    assert sentence and sentence in best.text  # the passage's own words, not a paraphrase


# ----------------------------------------------------------------------------- sizing without the closing question


def test_sizing_question_is_answered_on_an_implied_use_case(adv: Advisor) -> None:
    s, r = ask(adv, "Qwen2.5-32B 用 FP8 要多少显存？")
    size = one(r, "size_inference")
    assert size.arguments["model"] == "qwen2.5-32b" and size.arguments["precision"] == "fp8"
    assert r.mode == "answer" and first_line(r.text).startswith("**结论")
    weights = size.result["weights_total_bytes"]
    assert weights == pytest.approx(31.2e9 + 2 * 152_064 * 5_120 * 2, rel=0.02)
    assert "按推理计算" in r.text and s.profile.use_case == "inference"  # the assumption, said in one line
    assert not calls(r, "recommend")  # a figure was asked for, not a shopping list


def test_english_sizing_at_8_bit(adv: Advisor) -> None:
    _, r = ask(adv, "VRAM for Mixtral 8x7B at 8-bit?")
    size = one(r, "size_inference")
    assert size.arguments["precision"] == "int8"
    assert 46e9 <= size.result["weights_total_bytes"] <= 49e9  # 46.7e9 parameters at ~1 byte
    assert r.mode == "answer" and not CJK.search(r.text)


def test_fine_tuning_question_fits_with_qlora(adv: Advisor) -> None:
    _, r = ask(adv, "Can I fine-tune Llama-3-8B with QLoRA on one RTX 4090?")
    size = one(r, "size_training")
    assert size.arguments["method"] == "qlora" and size.result["fits"] is True
    assert "fits on one GeForce RTX 4090" in first_line(r.text)


def test_full_fine_tuning_memory_in_chinese(adv: Advisor) -> None:
    _, r = ask(adv, "全参微调 qwen2.5-7b 要多少显存")
    size = one(r, "size_training")
    assert size.arguments["method"] == "full"
    assert size.result["per_gpu_bytes"] >= 7.6e9 * 16  # mixed-precision Adam: ≥ 16 B per parameter
    assert first_line(r.text).startswith("**结论")


# ----------------------------------------------------------------------------- speed and time


def test_decode_speed_stays_under_the_bandwidth_ceiling(adv: Advisor) -> None:
    _, r = ask(adv, "4090 跑 llama 3.1 8b Q4_K_M 每秒多少 token")
    perf = one(r, "perf_decode")
    assert 40 < perf.result["tokens_per_s"] < 1008 / 4.9
    assert "tokens/s" in r.text


def test_training_time(adv: Advisor) -> None:
    _, r = ask(adv, "how long to train a 7B model on 1B tokens with 8 H100s")
    tt = one(r, "training_time")
    # LoRA (the method assumed and said): the frozen base gets no weight gradients, so 4 · N · 1e9 /
    # (8 × 989.4e12 × 0.2422) / 3600 for a 7–7.7 B model: 4.1–4.5 h (MFU: the median of published whole runs on
    # H100-class GPUs, Phi-4's 0.2388 and Phi-3-mini's 0.2456)
    assert 4.0 <= tt.result["hours"] <= 4.6 and "(LoRA)" in r.text
    assert "hours" in r.text and not CJK.search(r.text)


# ----------------------------------------------------------------------------- builds


def test_psu_question_gets_the_power_finding(adv: Advisor) -> None:
    _, r = ask(adv, "我的 1000W 电源带得动两张 4090 吗？")
    check = one(r, "check_build")
    assert check.arguments["psu_w"] == 1000 and check.arguments["gpus"] == [{"gpu": "rtx-4090", "count": 2}]
    # the asked topic (the PSU) leads: 2 × 450 W + CPU + platform = 1,300 W sustained, more than 1,000 W
    assert r.mode == "build" and first_line(r.text).startswith("**有问题——1,000 W")
    assert "900 W" in r.text and r.question is None


def test_english_build_question_with_a_desktop_cpu(adv: Advisor) -> None:
    _, r = ask(adv, "Is a 1600W PSU enough for one RTX 4090 with a 7950X?")
    check = one(r, "check_build")
    assert check.arguments["platform"] == "ryzen-9-7950x" and check.arguments["psu_w"] == 1600
    # the asked topic leads: 450 W GPU + CPU + platform, × 1.25 headroom, is under the 1,600 W PSU
    assert first_line(r.text).startswith("**OK — your 1,600 W PSU") and "450 W" in r.text


def test_build_with_only_a_count_states_the_card_it_assumed(adv: Advisor) -> None:
    _, r = ask(adv, "EPYC 9654 单路插 8 张卡，供电和通道有问题吗")
    check = one(r, "check_build")
    assert check.arguments["gpus"][0]["count"] == 8 and check.arguments["platform"] == "epyc-9004-1p"
    assert "没有说具体显卡" in r.text


# ----------------------------------------------------------------------------- buying


def test_budget_without_a_model_shows_what_it_buys(adv: Advisor) -> None:
    _, r = ask(adv, "5千块以内 能买到啥玩 AI 的卡")
    found = one(r, "affordable")
    assert found.arguments["budget_usd"] == pytest.approx(5000 / 7.2, rel=1e-3)
    assert r.mode == "afford" and found.result["options"]
    prices = [float(p.replace(",", "")) for p in re.findall(r"¥([\d,]+)", r.text)]
    assert prices and max(prices) <= 5000
    assert r.question  # then the closing question, which changes the advice here


def test_recommendation_with_model_and_colloquial_budget(adv: Advisor) -> None:
    _, r = ask(adv, "我想本地部署 Qwen2.5-72B 做推理，预算十来万，买什么卡？")
    rec = one(r, "recommend")
    assert rec.arguments["budget_cny"] == 100_000 and rec.arguments["model"] == "qwen2.5-72b"
    assert r.mode == "answer"


def test_gpu_only_budget_with_own_pc_drops_the_host(adv: Advisor) -> None:
    _, r = ask(adv, "I already own a PC, the budget is for the GPU only: $2,500 for running llama 3.1 8b")
    rec = one(r, "recommend")
    assert rec.arguments["include_host_cost"] is False and rec.arguments["budget_usd"] == 2500


@pytest.mark.parametrize(("text", "months"), [("8 张 H100 用三个月，租还是买划算？", 3),
                                              ("renting vs buying 8 H100s for a 3 month project?", 3)])
def test_buy_or_rent(adv: Advisor, text: str, months: int) -> None:
    _, r = ask(adv, text)
    rent = one(r, "rent_vs_buy")
    assert rent.arguments["months"] == pytest.approx(months, rel=0.05) and rent.arguments["count"] == 8
    assert r.mode == "rent" and first_line(r.text).startswith("**")
    assert rent.result["cheaper"] in first_line(r.text).lower() or ("租" in first_line(r.text))


def test_compare_two_cards(adv: Advisor) -> None:
    _, r = ask(adv, "A100 和 4090 哪个好")
    assert r.mode == "compare" and [c.arguments["name"] for c in calls(r, "gpu_info")] == ["a100-sxm-80gb",
                                                                                          "rtx-4090"]


# ----------------------------------------------------------------------------- follow-ups


def test_correction_changes_exactly_the_budget(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "预算一万，想跑 qwen2.5-32b，买啥卡")
    before = s.profile.model_dump()
    turn(adv, s, "不对，是一万五")
    after = s.profile.model_dump()
    assert s.profile.budget is not None and s.profile.budget.amount == 15_000
    assert {k for k in after if after[k] != before[k]} == {"budget"}


def test_english_correction_of_a_count(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "can 4 H100s serve llama 3.1 405b at fp8?")
    r = turn(adv, s, "I meant 8 GPUs, not 4")
    size = one(r, "size_inference")
    assert size.arguments["gpus"] == 8 and size.arguments["gpu"] == "h100-sxm"
    assert size.arguments["precision"] == "fp8" and size.arguments["model"] == "llama-3.1-405b"


def test_follow_up_continues_a_build_answer(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "我的 1000W 电源带得动两张 4090 吗？")
    r = turn(adv, s, "那换成 1600W 的电源呢")
    check = one(r, "check_build")
    assert r.mode == "build" and check.arguments["psu_w"] == 1600
    assert check.arguments["gpus"] == [{"gpu": "rtx-4090", "count": 2}]


def test_spec_follow_up_keeps_the_card(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "L40S 显存多大？")
    r = turn(adv, s, "它的功耗呢")
    assert r.mode == "spec" and "350 W" in first_line(r.text)


def test_why_explains_the_last_verdict_and_asks_nothing(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "Qwen2.5-32B 用 FP8 要多少显存？")
    r = turn(adv, s, "为什么？")
    assert r.mode == "why" and "`" in r.text and r.question is None


def test_a_reply_asks_at_most_one_question(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "两张 4090 跑 qwen2.5-72b int4 够吗")
    assert r.question and len(re.findall(r"[？?]", r.question)) == 1


def test_rent_follow_ups_recompute_hours_and_electricity(adv: Advisor) -> None:
    s = adv.new_session()
    first = one(turn(adv, s, "8 张 H100，租还是买划算？"), "rent_vs_buy")
    r = turn(adv, s, "我们大概每天跑 10 个小时")
    rent = one(r, "rent_vs_buy")
    assert rent.arguments["hours_per_day"] == 10 and r.mode == "rent"
    # renting 10 h instead of 24 h a day: the monthly rent scales by 10/24
    assert rent.result["rent_per_month"] == pytest.approx(first.result["rent_per_month"] * 10 / 24, rel=1e-3)
    r = turn(adv, s, "电费按 1 块钱一度算")
    assert one(r, "rent_vs_buy").arguments["kwh_price"] == 1
    assert "每天 10 小时" in first_line(r.text)


def test_build_follow_up_with_a_card_power_limit_and_an_outlet(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "两张 4090 配 1200W 电源行不行")
    r = turn(adv, s, "每张限功耗到 300W 呢")
    check = one(r, "check_build")
    assert check.arguments["gpus"] == [{"gpu": "rtx-4090", "count": 2, "power_limit_w": 300}]
    assert "600 W" in r.text  # 2 × 300 W
    r = turn(adv, s, "家里是普通 10A 插座")
    assert one(r, "check_build").arguments["mains"] == "220v-10a"


@pytest.mark.parametrize(("text", "least"), [
    # DeepSeek-R1 at FP8: 671e9 parameters ≈ 671 GB of weights alone; 4 × 96 GB < 671 GB, so 8 H20s
    ("deepseek-r1 用 FP8 部署要几张 H20", 8),
    # Llama-3.1-70B at FP16: 141 GB of weights; one 80 GB card cannot, two hold weights but little else
    ("how many H100s do I need to serve llama 3.1 70b at fp16?", 2),
])
def test_how_many_gpus_is_answered_with_a_count(adv: Advisor, text: str, least: int) -> None:
    _, r = ask(adv, text)
    head = first_line(r.text)
    n = int(re.search(r"(\d+)", head).group(1))
    assert n >= least and (head.startswith("**至少要") or head.startswith("**You need at least"))
    fitting = [c for c in r.tool_calls if c.name == "size_inference" and c.ok and c.result.get("fits")
               and c.arguments.get("gpu") == c.arguments.get("gpu")]
    assert min(c.result["gpus"] for c in fitting if c.arguments.get("precision") == one(r, "size_inference")
               .arguments.get("precision")) == n


def test_values_that_cannot_be_used_are_said(adv: Advisor) -> None:
    _, r = ask(adv, "llama 3.1 8b fp16 推理 1M 上下文 一张 H100")
    assert one(r, "size_inference").arguments["context"] == 1_048_576  # sized as asked, never a silent 8,192
    assert any("131,072" in n for n in r.notices)  # Llama-3.1-8B's max_position_embeddings (config.json)
    _, r = ask(adv, "10000 张 H100 训练 llama 3.1 405b 要多久")
    assert any("10,000" in n for n in r.notices)


def test_why_after_buy_or_rent_gives_its_formula_and_sources(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "8 张 H100，租还是买划算？")
    r = turn(adv, s, "为什么")
    assert r.mode == "why" and "`回本月数 = 购置费用 / (每月租金 − 每月电费)`" in r.text  # the formula in Chinese
    assert r.citations and all(c.id.startswith("rent-vs-buy/") for c in r.citations)


@pytest.mark.parametrize("text", ["三个月的项目，租 8 张 H100 一张一小时 2 美元，和买比哪个划算",
                                  "at $2/hr per H100, renting 8 for 3 months vs buying, which wins?"])
def test_a_quoted_rental_rate_is_used(adv: Advisor, text: str) -> None:
    _, r = ask(adv, text)
    rent = one(r, "rent_vs_buy")
    assert rent.arguments["count"] == 8 and rent.arguments["rental_usd_per_gpu_hour"] == 2
    # 8 GPUs × $2 × 730 h a month × 3 months = $35,040 (¥252,288 at 7.2)
    assert rent.result["project_rent"] == pytest.approx(35_040 * (7.2 if rent.arguments["currency"] == "CNY" else 1))
    assert rent.result["cheaper"] == "rent"


def test_a_rent_what_if_changes_the_project_length(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "8 H100s, rent or buy for a 3 month project?")
    r = turn(adv, s, "what if it's 12 months")
    rent = one(r, "rent_vs_buy")
    assert rent.arguments["months"] == 12
    # 12 months of renting 8 GPUs around the clock at the offers' median: rate × 8 × 730 h × 12
    assert rent.result["project_rent"] == pytest.approx(_offer_median("h100-sxm", "global") * 8 * 730 * 12, rel=0.01)
    winner = "Renting" if rent.result["cheaper"] == "rent" else "Buying"
    assert first_line(r.text).startswith(f"**{winner} is cheaper for 12 months")


def _offer_median(gpu: str, market: str) -> float:
    """The typical rental rate written out from the data file: the median provider-run offer in the market (a
    monthly rent over 730 h), else the hourly on-demand offers outside China; in the offer's own currency."""
    rows = tomllib.loads((Path(__file__).parents[1] / "knowledge/data/rentals.toml").read_text())["offer"]
    own = [o for o in rows if o["gpu"] == gpu and (o["region"] == "cn") == (market == "cn")
           and o["billing"] in ("on-demand", "monthly")]
    if not own:
        own = [o for o in rows if o["gpu"] == gpu and o["region"] != "cn" and o["billing"] == "on-demand"]
    return statistics.median(o.get("per_gpu_hour") or o["per_gpu_month"] / 730 for o in own)


@pytest.mark.parametrize(("text", "ram", "rec"), [
    # 2 × 24 GB = 48 GB of VRAM: Puget's 2 × VRAM is 96 GB; 64 GB covers the largest card (Dettmers' minimum)
    ("两张3090，内存64G够不够", 64, "96 GB"),
    ("Is 64 GB RAM enough for 2x 3090 running llama 70b q4?", 64, "96 GB"),
    # 4 × 24 GB = 96 GB of VRAM → 192 GB recommended; 256 GB is enough
    ("4 张 4090 配 256G 内存够吗", 256, "192 GB"),
])
def test_a_system_ram_question_is_answered_first(adv: Advisor, text: str, ram: float, rec: str) -> None:
    _, r = ask(adv, text)
    assert r.mode == "build" and one(r, "check_build").arguments["system_ram_gb"] == ram
    head = first_line(r.text)
    assert f"{ram} GB" in head and rec in head


@pytest.mark.parametrize(("text", "metric", "cuda"), [
    # AlphaFold (JAX, FP32/BF16) and GROMACS (mixed precision) do not need FP64; VASP's GPU port computes in
    # FP64 and is OpenACC on NVIDIA only
    ("蛋白质结构预测用什么卡，预算五万", "FP32", False),
    ("what GPU should our lab buy for GROMACS, budget $15k", "FP32", False),
    ("VASP 用什么卡，预算十万", "FP64", True),
])
def test_a_named_scientific_code_decides_fp64_and_cuda(adv: Advisor, text: str, metric: str, cuda: bool) -> None:
    _, r = ask(adv, text)
    rec = one(r, "recommend")
    assert rec.arguments["fp64_required"] is (metric == "FP64")
    assert rec.arguments.get("cuda_required", False) is cuda
    assert metric in first_line(r.text)
    speeds = [o.get("fp32_tflops" if metric == "FP32" else "fp64_tflops") for o in rec.result["options"]]
    assert speeds and all(s for s in speeds)
    if cuda:
        assert {o["vendor"] for o in rec.result["options"]} == {"NVIDIA"}


def test_a_concept_quote_never_cuts_a_number() -> None:
    from advisor.answers import quote

    text = "The KV cache takes about 85.9 GB here. Ampere has compute capability 8.0 and later. Unrelated."
    assert "85.9 GB" in quote(text, "kv cache", 60) and "8.0 and later" in quote(text, "compute capability", 60)


def test_a_card_named_by_its_memory_is_sized_against_that_memory(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "我有一张 16G 的卡，能跑 qwen2.5 14b 吗")
    size = one(r, "size_inference")
    # a '16 GB' card holds 16 GiB; the engine sees it less the 0.5 GiB driver reserve
    assert size.arguments["gpu_memory_bytes"] == 16 * 2**30 - 2**29
    # Qwen2.5-14B in BF16: 14.77e9 parameters × 2 B ≈ 29.5 GB of weights alone, more than 16 GB
    assert size.result["fits"] is False and "16 GB" in first_line(r.text) and "放不下" in first_line(r.text)
    # at 4-bit (≈ 4.9 bits a weight) the weights are ≈ 9 GB: the GGUF alternative fits on the same card
    gguf = [c for c in r.tool_calls if c.call_id.startswith("alt_") and c.arguments.get("engine") == "llamacpp"]
    assert gguf and gguf[0].result["fits"] and gguf[0].arguments["gpu_memory_bytes"] == 16 * 2**30 - 2**29
    r = turn(adv, s, "那 4090 呢")  # a catalog card replaces the size-only one
    assert one(r, "size_inference").arguments["gpu"] == "rtx-4090" and s.profile.card_memory_gb is None


def test_a_comparison_keeps_each_options_card_count_and_leads_with_the_verdict(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "双卡 4090 和单卡 RTX 6000 Ada 哪个更适合微调 14B？")
    sizes = {c.arguments["gpu"]: c for c in calls(r, "size_training")}
    assert sizes["rtx-4090"].arguments["gpus"] == 2 and sizes["rtx-6000-ada"].arguments["gpus"] == 1
    head = first_line(r.text)
    assert head.startswith("**") and "2 张 GeForce RTX 4090" in head and "RTX 6000 Ada" in head
    # QLoRA keeps the 14B base in 4-bit (≈ 14.77e9 × 0.5 B ≈ 7.4 GB plus NF4 scales): both fit now
    r = turn(adv, s, "用 QLoRA 呢")
    assert r.mode == "compare" and all(c.arguments["method"] == "qlora" for c in calls(r, "size_training"))
    assert all(c.result["fits"] for c in calls(r, "size_training")) and "都放得下" in first_line(r.text)
    r = turn(adv, s, "为什么")
    assert r.mode == "why" and "LoRA" in r.text and "还没有计算结果" not in r.text


@pytest.mark.parametrize("text", ["how fast is llama 3.1 70b q4 on 2x 3090?",
                                  "两张3090跑llama 3.1 70b q4 每秒多少token"])
def test_a_speed_question_opens_with_the_speed(adv: Advisor, text: str) -> None:
    _, r = ask(adv, text)
    head = first_line(r.text)
    speed = numbers_with(head, "tokens/s")[0]
    # the layers are split over the two cards, so each token still reads all ≈ 43 GB of Q4_K_M weights once at
    # 936 GB/s: a bandwidth ceiling of ≈ 21.7 tokens/s; a realistic estimate sits below it
    assert 0.4 * 21.7 <= speed <= 21.7
    assert speed == pytest.approx(one(r, "perf_decode").result["tokens_per_s"], rel=0.01)
    second = r.text.strip().splitlines()[1]
    assert "**" not in second and ("fits" in second or "放得下" in second)


def test_a_build_question_leads_with_the_topic_it_asks_about(adv: Advisor) -> None:
    # three cards at x16 need 48 lanes; an LGA1700 desktop gives 16 to the slots (Intel ARK), so the lanes lead
    _, r = ask(adv, "三张 3090 主板通道够吗，CPU 是 13900K")
    head = first_line(r.text)
    # the slots (9 positions for three 3-slot cards) block the rest, so the lanes are not called 'workable'
    assert head.startswith("**这一项要注意——") and "16 条" in head and "48 条" in head
    assert "9 个槽位" in r.text
    s = adv.new_session()
    turn(adv, s, "双路4090整机，1000w电源够吗？")
    r = turn(adv, s, "家里是普通插座 10A")
    # 1,300 W sustained / 0.9 PSU efficiency ≈ 1,444 W at the wall, under 220 V × 10 A × 0.8 = 1,760 W
    assert first_line(r.text).startswith("**没问题——墙端约 1,444 W") and "1,760 W" in first_line(r.text)


def test_a_speed_question_on_a_card_known_by_size_asks_for_the_model_of_card(adv: Advisor) -> None:
    _, r = ask(adv, "my 12gb card, how fast would llama 3.1 8b q4 run")
    assert not calls(r, "perf_decode") and "name the card" in r.text


def test_a_short_and_follow_up_changes_precision_and_card_and_keeps_the_model(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "how much vram for qwen2.5 32b inference?")
    r = turn(adv, s, "and fp8 on an H100?")
    size = one(r, "size_inference")
    assert size.arguments["model"] == "qwen2.5-32b" and size.arguments["precision"] == "fp8"
    assert size.arguments["gpu"] == "h100-sxm"
    # Qwen2.5-32B at FP8: ≈ 34.3 GB of weights (module docstring), well inside an 80 GB card
    assert size.result["weights_total_bytes"] == pytest.approx(34.3e9, rel=0.03)
    assert first_line(r.text).startswith("**Answer:") and "fits on one H100" in first_line(r.text)


@pytest.mark.parametrize(("text", "lang", "reassurance"), [
    ("4 张 4090 装一台机器，电源怎么配", "zh", "基本可以"),
    ("4x RTX 4090 in one box - what PSU do I need?", "en", "Workable"),
])
def test_a_power_warning_is_not_called_workable_when_the_slots_block_the_build(adv: Advisor, text: str, lang: str,
                                                                               reassurance: str) -> None:
    # 4 × 3-slot cards need 12 slot widths; an ATX board has 7: the build is blocked whatever the PSU
    _, r = ask(adv, text)
    assert r.mode == "build" and reassurance not in first_line(r.text)
    assert "power-multi-psu" not in r.text and "--mains" not in r.text


def test_buy_or_rent_reads_years_and_hours_a_day_and_prices_one_sxm_gpu_as_its_node_share(adv: Advisor) -> None:
    _, r = ask(adv, "H100买还是租划算？我们大概每天用8小时，用两年")
    args = one(r, "rent_vs_buy").arguments
    assert args["months"] == pytest.approx(24, abs=0.05) and args["hours_per_day"] == 8
    # an HGX node's host (~$60,000) is shared by its 8 GPUs: one H100 carries 1/8 of it (¥54,000 at 7.2)
    assert one(r, "rent_vs_buy").result["host"] == pytest.approx(60_000 / 8 * 7.2)
    assert first_line(r.text).startswith("**用 24 个月")


def test_a_correction_that_names_only_the_people_changes_the_concurrency(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "部署 qwen2.5-72b，100 人同时用，4 张 H100 够吗")
    r = turn(adv, s, "不对，是50人")
    assert s.profile.concurrency == 50 and s.profile.model == "qwen2.5-72b" and "50 个并发" in first_line(r.text)


@pytest.mark.parametrize(("text", "lead"), [("do 4090s support nvlink?", "**No"),
                                            ("4090 支持nvlink吗", "**没有")])
def test_a_feature_support_question_answers_yes_or_no(adv: Advisor, text: str, lead: str) -> None:
    _, r = ask(adv, text)
    assert r.mode == "spec" and first_line(r.text).startswith(lead) and "NVLink" in first_line(r.text)
    assert "P2P" in first_line(r.text) or "peer-to-peer" in first_line(r.text)  # RTX 40: no P2P either
    assert lead == "**No" or not re.search(r"[A-Za-z]{4,}", first_line(r.text).replace("NVLink", "").replace(
        "GeForce", "").replace("PCIe", ""))  # no English sentence in the Chinese answer


def test_english_sessions_are_not_asked_about_chinese_domestic_hardware(adv: Advisor) -> None:
    s = adv.new_session()
    said = ("I want to run llama 3.1 8b at home", "budget $2k", "just me", "no CUDA need")
    texts = [turn(adv, s, m).text for m in said]
    assert not any("信创" in x or "Chinese-made" in x for x in texts)


def test_a_4bit_speed_question_gets_the_llamacpp_speed_when_only_gguf_fits(adv: Advisor) -> None:
    # Q4_K_M Qwen2.5-72B is a 47.4 GB file (mradermacher's upload; its 29,568-wide ffn_down falls back to Q5_0 and
    # Q8_0), split over two cards but read once per token at 1,008 GB/s: a ceiling of ≈ 21.3 tokens/s. Two 24 GB
    # cards hold it only with a shorter context than the 8k assumed, and the reply says so beside the speed.
    _, r = ask(adv, "qwen2.5-72b int4 在两张 4090 上每秒能出多少 token")
    speed = numbers_with(r.text, "tokens/s")
    assert speed and 0.4 * 21.3 <= speed[0] <= 21.3 and "llama.cpp Q4_K_M" in r.text and "以下才放得下" in r.text


def test_renting_for_three_months_is_read_as_the_project_length(adv: Advisor) -> None:
    _, r = ask(adv, "租 4 张 A100 三个月和直接买哪个划算")
    assert one(r, "rent_vs_buy").arguments["months"] == pytest.approx(3, abs=0.05)
    assert first_line(r.text).startswith("**用 3 个月")


@pytest.mark.parametrize(("text", "budget_usd", "top"), [
    ("what's the cheapest way to run llama 3.3 70b at home, budget $5,000", 5000, "RTX 3090"),
    ("预算三万，在家跑 qwen2.5 72b 自己用，买什么卡", 30000 / 7.2, "48GB"),
])
def test_a_home_budget_for_a_70b_names_a_quantised_route_that_runs(adv: Advisor, text: str,
                                                                       budget_usd: float, top: str) -> None:
    # Llama 3.3 70B Q4_K_M is a 42.5 GB file: two 24 GB cards (2 × RTX 3090 at $800 + a $2,500 desktop = $4,100)
    # hold it. Qwen2.5-72B Q4_K_M is 47.4 GB (published): more than two 24 GB cards hold, so a 48 GB card leads
    _, r = ask(adv, text)
    head = first_line(r.text)
    # 'the cheapest way' leads with the cheapest route; otherwise the headline says which precision runs
    assert ("it runs" in head or "就能跑" in head or head.startswith("**Cheapest way:")) \
        and ("INT4" in head or "Q4_K_M" in head)
    gguf = [c for c in calls(r, "recommend") if c.arguments.get("precision") == "Q4_K_M"]
    assert gguf and top in gguf[0].result["options"][0]["gpu"]
    # at home means a desktop tower: no passive server card or SXM module is offered
    assert all(c.arguments.get("chassis") == "tower" for c in calls(r, "recommend"))
    offered = {o["gpu_id"] for c in calls(r, "recommend") for o in c.result["options"]}
    assert not offered & {"a10", "t4", "l4", "l40s", "atlas-300i-duo", "a100-pcie-40gb"}
    # an unpriced card (None: no catalog price) is listed after the priced ones, never counted within budget
    assert all(o["total_price_usd"] is None or o["total_price_usd"] <= budget_usd for o in gguf[0].result["options"])


@pytest.mark.parametrize(("text", "lead"), [("租一张 4090 一小时多少钱", "**租 1× GeForce RTX 4090 每小时约"),
                                            ("how much does an H100 cost per hour to rent?", "**Renting 1× H100")])
def test_an_hourly_rent_question_leads_with_the_hourly_rate(adv: Advisor, text: str, lead: str) -> None:
    _, r = ask(adv, text)
    rent = one(r, "rent_vs_buy")
    # the offers' median × GPUs: a Chinese buyer's 4090 from the China offers (in yuan), an H100 SXM from the
    # on-demand offers elsewhere (in dollars)
    rate = {"rtx-4090": _offer_median("rtx-4090", "cn"), "h100-sxm": _offer_median("h100-sxm", "global")}[
        rent.arguments["gpu"]]
    assert rent.result["rent_per_hour"] == pytest.approx(rate, rel=0.01) and first_line(r.text).startswith(lead)
    assert "Vast.ai" in r.text  # the offers are listed by provider
    assert "0.1 个月" not in r.text and "0.1 month" not in r.text  # 'an hour' is a price unit, not a deadline


def test_a_part_question_checks_the_machine_and_an_idea_question_is_explained(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "两张 4090 跑 qwen2.5 32b 够吗")
    r = turn(adv, s, "主板推荐啥，要pcie4.0 x16的")
    assert r.mode == "build" and one(r, "check_build").arguments["gpus"] == [{"gpu": "rtx-4090", "count": 2}]
    r = turn(adv, s, "那量化KV cache有用吗")
    kept = (s.profile.gpu, s.profile.gpu_count, s.profile.model)
    assert r.mode == "concept" and kept == ("rtx-4090", 2, "qwen2.5-32b")


def test_lora_that_does_not_fit_the_users_card_offers_qlora_on_it(adv: Advisor) -> None:
    # Qwen2.5-7B: LoRA keeps 15.2 GB of BF16 base weights (7.62e9 × 2 B) — too much for 16 GB with the rest;
    # QLoRA's 4-bit base (≈ 5 GB) fits
    _, r = ask(adv, "想用我的4060ti 16g微调一下qwen 7b")
    lighter = [c for c in calls(r, "size_training") if c.arguments["method"] == "qlora"]
    assert lighter and lighter[0].result["fits"] and "改用 QLoRA 就放得下" in r.text
    assert "TRUE" not in r.text and "按 LoRA 计" in r.text


def test_a_compared_cards_usable_memory_agrees_with_its_verdict(adv: Advisor) -> None:
    _, r = ask(adv, "h200和h100 跑70b 哪个划算")
    # 146.4 GB of BF16 needs against the H200's vLLM share (0.92 × 150.9 GB ≈ 138.8 GB): one falls short, so each
    # card is compared at the least count that holds it — two of each — and every sizing shown fits its usable share
    sized = {c.arguments["gpu"]: c.result for c in calls(r, "size_inference")}
    assert {g: (s["gpus"], s["fits"]) for g, s in sized.items()} == {"h200-sxm": (2, True), "h100-sxm": (2, True)}
    assert all(s["headroom_bytes"] >= 0 for s in sized.values())
    assert "2 张 H200 SXM 141GB" in first_line(r.text)
    assert "| 互联 | NVLink | NVLink |" in r.text


@pytest.mark.parametrize(("text", "kind"), [
    ("MoE是啥，为什么deepseek 671b 跑起来比70b还快", "concept"),
    ("explain ZeRO stage 1 2 3 like im 5, do i need it for 2x 3090", "concept"),
    ("what is the vram of an H100?", "spec"),
    ("does the rtx 4090 support fp8? what about ECC", "spec"),
    ("explain why H200 is better than H100 for inference", "compare"),  # two cards: the side-by-side answers it
])
def test_an_idea_asked_first_is_explained_first(adv: Advisor, text: str, kind: str) -> None:
    _, r = ask(adv, text)
    assert r.mode == kind
    if "fp8" in text:
        assert "FP8" in first_line(r.text)  # the precision asked first, not the ECC asked after it


@pytest.mark.parametrize(("text", "wanted"), [
    ("does the rtx 4090 support fp8? what about ECC", ["**Yes — GeForce RTX 4090 supports FP8", "no ECC"]),
    ("4090 显存多大？带宽和功耗呢", ["24 GB GDDR6X", "1,008 GB/s", "450 W"]),
    ("L40S 的价格和功耗", ["¥57,600", "350 W"]),  # $8,000 at 7.2; datasheet 350 W
])
def test_each_fact_asked_of_one_card_gets_its_line(adv: Advisor, text: str, wanted: list[str]) -> None:
    _, r = ask(adv, text)
    lead = r.text.split("\n\n")[0]
    assert r.mode == "spec" and all(w in lead for w in wanted)


@pytest.mark.parametrize(("text", "lead", "gpu", "market", "count"), [
    ("租一张 A100 一天大概多少钱", "**租 1× A100 SXM 80GB 一天（24 小时）约 ¥", "a100-sxm-80gb", "cn", 1),
    ("how much does it cost per day to rent 8 H100s?", "**Renting 8× H100 SXM 80GB around the clock", "h100-sxm",
     "global", 8),
])
def test_a_daily_rent_question_leads_with_the_daily_cost(adv: Advisor, text: str, lead: str, gpu: str, market: str,
                                                         count: int) -> None:
    daily = _offer_median(gpu, market) * 24 * count
    _, r = ask(adv, text)
    assert one(r, "rent_vs_buy").result["rent_per_day"] == pytest.approx(daily, rel=0.01)
    assert first_line(r.text).startswith(lead)
