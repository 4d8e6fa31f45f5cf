"""Value for money (tools.value) and the comparison that leads with it when asked.

Hand derivations from the catalog's dated street prices (2026) and datasheet dense figures:
* RTX 4090: $2,400, 165.2 dense BF16 TFLOPS (FP32 accumulate), 24 GB → 68.8 TFLOPS and 10 GB per $1,000.
* RTX 5090: $3,200, 209.5 TFLOPS, 32 GB → 65.5 TFLOPS and 10 GB per $1,000.
* H100 SXM: $25,000 × 7.2 = ¥180,000 (street; no sourced yuan price), 989.4 TFLOPS → 55.0 TFLOPS per ¥10,000;
  A100 SXM 80GB: $12,000 × 7.2 = ¥86,400, 312 TFLOPS, 80 GB → 36.1 TFLOPS and 9.26 GB per ¥10,000.
* Two RTX 4090s in CNY: 2 × $2,400 × 7.2 = ¥34,560 for 48 GB → 13.9 GB per ¥10,000.
"""

from __future__ import annotations

import re

import pytest

from advisor import Advisor
from knowledge import load_catalog
from knowledge.messages import render
from tools.catalog_query import AffordableInput, FindGPUsInput, affordable, find_gpus
from tools.pricing import USD_PER_EUR
from tools.rent import RentVsBuyInput, rent_vs_buy
from tools.value import BestValueInput, ValueInput, ValueOption, best_value, value_for_money

try:
    from fakes.script import calls, turn
except ImportError:  # tests/ collected as a package
    from tests.fakes.script import calls, turn


def gpu(name: str):
    return load_catalog().gpu(name)


def test_per_thousand_dollars_from_street_price_and_dense_throughput() -> None:
    r = value_for_money(ValueInput(options=[ValueOption(gpu=gpu("rtx-4090")), ValueOption(gpu=gpu("rtx-5090"))]))
    by = {o.gpu: o for o in r.options}
    assert by["rtx-4090"].per_unit["bf16_tflops"] == pytest.approx(68.8, abs=0.05)
    assert by["rtx-4090"].per_unit["memory_gb"] == pytest.approx(10.0)
    assert by["rtx-5090"].per_unit["bf16_tflops"] == pytest.approx(65.5, abs=0.05)
    assert by["rtx-5090"].per_unit["memory_gb"] == pytest.approx(10.0)
    assert r.leaders["bf16_tflops"] == "rtx-4090" and r.unit == 1000 and r.currency == "USD"


def test_sparse_marketing_figures_are_never_priced() -> None:
    h100 = gpu("h100-sxm")
    assert h100.sparse_throughput is not None and h100.sparse_throughput.bf16 == pytest.approx(2 * 989.4, rel=0.01)
    r = value_for_money(ValueInput(options=[ValueOption(gpu=h100)], currency="CNY"))
    assert r.options[0].totals["bf16_tflops"] == pytest.approx(989.4)
    assert r.options[0].per_unit["bf16_tflops"] == pytest.approx(989.4 / 18, abs=0.05)


def test_counts_multiply_price_and_capacity_and_cny_uses_the_stated_rate() -> None:
    r = value_for_money(ValueInput(options=[ValueOption(gpu=gpu("rtx-4090"), count=2)], currency="CNY"))
    o = r.options[0]
    assert o.price == pytest.approx(34_560) and o.totals["memory_gb"] == 48
    assert o.per_unit["memory_gb"] == pytest.approx(13.89, abs=0.01) and r.unit == 10_000
    assert "7.2 CNY/USD" in o.price_note.text and o.price_note.params["rate"] == 7.2


def test_euro_prices_convert_from_dollars() -> None:
    r = value_for_money(ValueInput(options=[ValueOption(gpu=gpu("rtx-4090"))], currency="EUR"))
    assert r.options[0].price == pytest.approx(2400 / USD_PER_EUR)


def test_a_configuration_that_does_not_hold_the_workload_never_leads() -> None:
    cheap = ValueOption(gpu=gpu("rtx-4090"), fits=False, tokens_per_s=100)
    dear = ValueOption(gpu=gpu("h100-sxm"), fits=True, tokens_per_s=50)
    other = ValueOption(gpu=gpu("a100-sxm-80gb"), fits=True, tokens_per_s=30)
    r = value_for_money(ValueInput(options=[cheap, dear, other]))
    # per $1k: 4090 50 tok/s (but does not fit); H100 2.0; A100 2.5
    assert r.leaders["tokens_per_s"] == "a100-sxm-80gb" and "rtx-4090" not in r.leaders.values()


def test_cards_without_a_price_are_listed_not_ranked() -> None:
    r = value_for_money(ValueInput(options=[ValueOption(gpu=gpu("biren-br104")), ValueOption(gpu=gpu("h100-sxm"))]))
    assert r.unpriced == ["biren-br104"] and r.leaders == {}


# ----------------------------------------------------------------------------- in the conversation


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_a_value_question_leads_with_the_value_verdict_in_yuan(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "H100 和 A100 哪个性价比高？")
    head = r.text.strip().splitlines()[0]
    assert r.mode == "compare" and "H100" in head and "性价比" in head and "55.0 TFLOPS" in head
    assert "36.1 TFLOPS" in head and "每万元" in head
    assert "9.3 GB" in r.text  # the A100 gives more memory per yuan


def test_value_follows_the_sized_model_and_ignores_a_card_that_cannot_hold_it(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "Compare the RTX 4090 and the H100 for serving Llama 3.1 70B in FP16 - which is better value?")
    # 141 GB of FP16 weights fit on neither single card: each is compared at the least count that holds them —
    # eight 24 GB cards (~17.6 GB of weights each), two 80 GB ones
    counts = {c.arguments["gpu"]: (c.arguments["gpus"], c.result["fits"]) for c in calls(r, "size_inference")}
    assert counts == {"rtx-4090": (8, True), "h100-sxm": (2, True)}
    value = calls(r, "value_for_money")[0].result
    assert {o["gpu"]: o["count"] for o in value["options"]} == {"rtx-4090": 8, "h100-sxm": 2}
    r = turn(adv, s, "and at int4?")  # ≈ 40 GB of weights: one H100 holds it, 4090s go in a pair
    counts = {c.arguments["gpu"]: c.arguments["gpus"] for c in calls(r, "size_inference")}
    assert counts == {"rtx-4090": 2, "h100-sxm": 1}


def test_lora_on_an_8b_fits_a_24_gb_card_with_the_recipes_checkpointing(adv: Advisor) -> None:
    """LLaMA-Factory lists ~16 GB for LoRA on a 7B in 16-bit; with gradient checkpointing (on in LoRA recipes)
    an 8B at 2,048 tokens stays under a 4090's 24 GB, so both cards hold it and the value line decides."""
    s = adv.new_session()
    r = turn(adv, s, "fine-tune llama 3 8b with lora: 4090 or 5090, which is better bang for the buck?")
    sizes = calls(r, "size_training")
    assert all(c.result["fits"] and c.result["recompute"] == "full" for c in sizes)
    head = r.text.strip().splitlines()[0]
    assert "RTX 4090" in head and "68.8 TFLOPS" in head and "65.5 TFLOPS" in head


def test_for_inference_without_a_model_value_follows_bandwidth(adv: Advisor) -> None:
    # 1,792 GB/s for $3,200 = 560 GB/s per $1k; 1,008 GB/s for $2,400 = 420 (datasheets; catalog prices)
    r = turn(adv, adv.new_session(), "is the 5090 worth it over 4090 for inference")
    head = r.text.strip().splitlines()[0]
    assert "RTX 5090" in head and "560 GB/s" in head and "420 GB/s" in head


def test_serving_value_counts_the_requests_each_card_holds(adv: Advisor) -> None:
    """Llama-3.1-70B at FP8: ≈ 72.7 GB of weights. Its KV cache is 2 × 80 layers × 8 KV heads × 128 × 2 B =
    327,680 B per token, 2.68 GB per 8,192-token request. An H200 (141 GB) keeps ≈ 60 GB for it, ≈ 22 requests;
    an H100 (80 GB) about one. Decode speed per dollar is close ($32k vs $25k for 4,800 vs 3,350 GB/s: the H200 has
    12 % more bandwidth per dollar, less after the fixed per-layer cost), with the H200 slightly ahead."""
    r = turn(adv, adv.new_session(), "H100 vs H200 which is better value for serving llama 3.1 70b in fp8")
    value = calls(r, "value_for_money")[0].result
    held = {o["gpu"]: o["totals"]["concurrent_requests"] for o in value["options"]}
    assert 15 <= held["h200-sxm"] <= 30 and held["h100-sxm"] < 3
    lines = r.text.strip().splitlines()
    assert lines[0].startswith("**At catalog prices, H200 SXM 141GB gives more decode speed for the money")
    assert lines[1].startswith("To serve many users, H200")


def test_a_pound_budget_gets_its_recommendations_priced_in_pounds(adv: Advisor) -> None:
    # 2 × RTX 3090 at $750 (used) = $1,500 = £1,128 at 1.33 USD/GBP (cards only: £1,500 buys no computer too)
    r = turn(adv, adv.new_session(), "budget £1500 for mixtral 8x7b")
    head = r.text.strip().splitlines()[0]
    assert "£1,128" in head and "$" not in head


@pytest.mark.parametrize(("text", "top", "shown"), [
    # 936 GB/s for $750 (used) = 1,248 GB/s per $1k, the most of any consumer or workstation card with ≥ 16 GB
    ("best bang for buck gpu for local llms rn?", "GeForce RTX 3090", "1,248 GB/s"),
    ("跑本地大模型性价比最高的显卡是哪张", "GeForce RTX 3090", "1,733 GB/s"),  # ¥5,400 at 7.2 CNY/USD
])
def test_best_value_without_a_model_ranks_cards_instead_of_asking(adv: Advisor, text: str, top: str,
                                                                  shown: str) -> None:
    r = turn(adv, adv.new_session(), text)
    head = r.text.strip().splitlines()[0]
    assert r.mode == "value" and top in head and shown in head


def test_best_value_for_training_ranks_cuda_cards_by_dense_bf16() -> None:
    from tools.value import BestValueInput, best_value

    r = best_value(BestValueInput(metric="bf16_tflops", vendors=["NVIDIA"]))
    assert r.ranked and all(load_catalog().gpu(o.gpu).vendor == "NVIDIA" for o in r.ranked)
    per = [o.per_unit["bf16_tflops"] for o in r.ranked]
    assert per == sorted(per, reverse=True)
    # a used RTX 4080: 97.5 dense BF16 TFLOPS (Ada whitepaper, FP32 accumulate) for $775 (S-PRICE-GROKTECH-2026:
    # $700-850 used / clearance, May 2026) → 125.8 per $1k, ahead of the new RTX 5060 Ti 16GB's 47.4 for $430 → 110.2
    # (both 16 GB); the used 3090 ($750, 71 → 94.7) stays behind both
    top, second = r.ranked[:2]
    assert top.gpu == "rtx-4080" and top.per_unit["bf16_tflops"] == pytest.approx(97.5 / 775 * 1000)
    assert second.gpu == "rtx-5060-ti-16gb" and second.per_unit["bf16_tflops"] == pytest.approx(
        load_catalog().gpu("rtx-5060-ti-16gb").throughput.bf16 / 430 * 1000)


@pytest.mark.parametrize(("text", "top", "shown"), [
    ("which gpu is cheapest per GB of VRAM?", "Arc Pro B60 24GB", "48 GB"),  # 24 GB for $500
    ("为什么大家都说 3090 是性价比之王", "GeForce RTX 3090", "1,733 GB/s"),  # a why with nothing of ours to explain
])
def test_value_rankings_follow_the_question(adv: Advisor, text: str, top: str, shown: str) -> None:
    r = turn(adv, adv.new_session(), text)
    head = r.text.strip().splitlines()[0]
    assert r.mode == "value" and top in head and shown in head


# ---- notes: message ids, English kept byte-identical, Chinese without English sentences --------------

def _english_runs(text: str, names: tuple[str, ...]) -> list[str]:
    """Runs of 3+ English words left after removing GPU and platform names a Chinese note may quote."""
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, "")
    return re.findall(r"[A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z][A-Za-z'-]*){2,}", text)


def test_price_and_value_notes_render_in_chinese_without_english_sentences() -> None:
    cat = load_catalog()
    names = tuple(g.name for g in cat.gpus) + tuple(p.name for p in cat.platforms)
    results = [
        value_for_money(ValueInput(options=[ValueOption(gpu=gpu("rtx-4090")), ValueOption(gpu=gpu("rtx-5090"))],
                                   currency="EUR")),
        value_for_money(ValueInput(options=[ValueOption(gpu=gpu("a100-sxm-80gb"))], currency="CNY")),
        best_value(BestValueInput(tiers=["datacenter", "workstation", "consumer"], vendors=["NVIDIA"])),
        rent_vs_buy(RentVsBuyInput(gpu="h100-sxm", count=2, months=6, hours_per_day=8)),
        rent_vs_buy(RentVsBuyInput(gpu="rtx-4090", currency="CNY", include_host=False,
                                   rental_usd_per_gpu_hour=0.01)),
        affordable(AffordableInput(budget_usd=20_000, currency="GBP")),
        affordable(AffordableInput(budget_usd=20_000, currency="CNY", include_host=False)),
        find_gpus(FindGPUsInput(supports="fp8")),
    ]
    notes = [n for r in results for n in r.assumptions]
    notes += [o.price_note for r in results for o in getattr(r, "options", []) + getattr(r, "ranked", [])
              if hasattr(o, "price_note")]
    ids = {n.id for n in notes}
    assert {"perf.value.price_fx", "perf.value.one_card_vendors", "perf.rent.host_share", "perf.cost.no_break_even",
            "perf.afford.prices_foreign", "perf.find.dense"} <= ids
    for n in notes:
        assert n.id.startswith("perf."), n.id
        zh = render(n, "zh")
        assert zh != n.text and _english_runs(zh, names) == [], (n.id, zh)


def test_price_and_value_notes_keep_their_english_text() -> None:
    """Copied from the output before the notes became message ids."""
    r = rent_vs_buy(RentVsBuyInput(gpu="h100-sxm", count=2, months=6, hours_per_day=8, kwh_price=0.5,
                                   rental_usd_per_gpu_hour=3.5))
    assert [a.text for a in r.assumptions] == [
        "electricity 0.5 USD/kWh (given)",
        "duty cycle 0.333333 (8 h/day at full load)",
        "7.2 CNY per USD (as of 2026-06-01)",
        "host baseboard (Intel Xeon 6900P Granite Rapids-AP (LGA7529, 2 sockets)): $15,000 (2 of 8 GPUs' share of an "
        "HGX/OAM node)",
        "no resale value counted; rental at the quoted $3.5 per GPU-hour"]
    b = best_value(BestValueInput(tiers=["datacenter", "workstation"], vendors=["NVIDIA", "AMD"], min_memory_gb=24.5,
                                  currency="EUR"))
    assert [a.text for a in b.assumptions] == [
        "one card each; tiers datacenter, workstation; at least 24.5 GB; vendors NVIDIA, AMD",
        "catalog street prices (as-of date per entry); used and discounted cards are cheaper",
        "dense throughput only; GPU price only (no host)"]
    assert render(b.assumptions[0], "zh") == ("每种卡各一张；档次：数据中心级、工作站级；显存至少 24.5 GB；"
                                              "厂商：NVIDIA, AMD")
