"""Recommender rankings against hand-reasoned expectations, and the money arithmetic.

Reasoning used below (not the code's output):
* Llama-3.1-70B at 4 bits holds ≥ 70.6e9 × 4 / 8 ≈ 35 GB of weights alone, more than a 24 GB card
  (24 GiB = 25.8e9 B physical), so no single 24 GB card can serve it; at a ~$10k workstation budget
  the fitting boxes are 2 × 32 GB consumer cards or one 48 GB pro card, never a datacenter server.
* A dense N×N double matrix needs 8·N² bytes; N = 60,000 → 28.8 GB. FP64 throughput, not FP16, decides
  a simulation: an A100's 19.5 FP64 TFLOPS is 15× an RTX 4090's 1.3, although the 4090's headline
  FP16 tensor figure (165) is 8× the A100's FP64 figure.
* Training time = 6·N·D / (GPUs × dense BF16 peak × MFU) (Megatron-LM / llm-analysis form).
"""

from __future__ import annotations

import re

import pytest

from knowledge import load_catalog
from knowledge.messages import render
from tools.compat import GPUCount
from tools.pricing import CostInput, cost_of_ownership, gpu_price, to_cny, to_usd
from tools.recommend import Recommendation, RecommendInput, recommend
from tools.result import Note

CAT = load_catalog()
DATACENTER_FP64_CLASS = {"mi300x", "mi325x", "mi355x", "mi250x", "mi210", "h100-sxm", "h100-pcie", "h100-nvl",
                         "h200-sxm", "h200-nvl", "a100-sxm-80gb", "a100-pcie-80gb", "a100-pcie-40gb"}
GEFORCE_TOP = {"rtx-4090", "rtx-5090"}


def rejected(rec: Recommendation, gpu_id: str, count: int | None = None) -> list:
    return [r for r in rec.rejected if r.gpu_id == gpu_id and (count is None or r.count == count)]


# ------------------------------------------------------------------ 70B 4-bit inference box, $10k


@pytest.fixture(scope="module")
def box_70b() -> Recommendation:
    return recommend(RecommendInput(workload="inference", model="Llama-3.1-70B", precision="int4",
                                    budget_usd=10_000))


def test_70b_top_options_fit_and_are_workstation_or_consumer(box_70b: Recommendation) -> None:
    assert len(box_70b.options) >= 3
    for o in box_70b.options[:3]:
        assert o.fits and o.per_gpu_bytes is not None and o.per_gpu_bytes <= o.gpu_memory_bytes
        assert o.tier in {"workstation", "consumer"}
        assert o.decode_tokens_per_s and o.decode_tokens_per_s > 0
    for o in box_70b.options:
        # a card with no catalog price (the RTX PRO 4000/4500/5000 Blackwell) is kept, marked unpriced
        assert o.total_price_usd is None or o.total_price_usd <= 10_000
        assert o.tier != "datacenter"
    priced = [o.total_price_usd is not None for o in box_70b.options]
    assert priced == sorted(priced, reverse=True)  # unpriced options come after every priced one


def test_70b_no_single_24gb_card(box_70b: Recommendation) -> None:
    weights_lower_bound = CAT.model("Llama-3.1-70B").params_b * 1e9 * 4 / 8
    assert weights_lower_bound > 24 * 2**30
    for o in box_70b.options:
        if o.count == 1:
            assert CAT.gpu(o.gpu_id).memory_gb * 2**30 > weights_lower_bound
    r = rejected(box_70b, "rtx-4090", 1)
    assert r and r[0].stage == "memory" and r[0].reason.id == "recommend.reject.inference_memory"
    assert "does not fit" in r[0].reason.text and "24 GB" in r[0].reason.text
    assert "显存不足" in render(r[0].reason, "zh")


def test_70b_four_4090s_are_ruled_out_for_missing_p2p(box_70b: Recommendation) -> None:
    r = rejected(box_70b, "rtx-4090", 4)
    assert r and r[0].stage == "interconnect" and "no P2P" in r[0].reason.text


def test_70b_ranking_is_by_score_and_deterministic(box_70b: Recommendation) -> None:
    # priced options by value, then the unpriced ones (scored on performance alone) by performance
    for priced in (True, False):
        scores = [o.score for o in box_70b.options if (o.total_price_usd is not None) is priced]
        assert scores == sorted(scores, reverse=True)
    assert [o.rank for o in box_70b.options] == list(range(1, len(box_70b.options) + 1))
    again = recommend(RecommendInput(workload="inference", model="Llama-3.1-70B", precision="int4",
                                     budget_usd=10_000))
    assert [(o.gpu_id, o.count) for o in again.options] == [(o.gpu_id, o.count) for o in box_70b.options]


def test_70b_budget_in_cny_uses_the_exchange_rate(box_70b: Recommendation) -> None:
    cny = recommend(RecommendInput(workload="inference", model="Llama-3.1-70B", precision="int4",
                                   budget_cny=72_000))
    assert cny.currency == "CNY"
    assert any(o.total_price_cny is not None for o in cny.options)
    for o in cny.options:
        assert o.total_price_cny is None or o.total_price_cny <= 72_000  # None: an unpriced card, ranked last
        assert o.energy_currency == "CNY"


def test_70b_options_flag_the_pitfalls(box_70b: Recommendation) -> None:
    multi = [o for o in box_70b.options if o.count > 1]
    assert multi and all("underrating-interconnect" in o.pitfalls for o in multi)
    assert "underrating-interconnect" in box_70b.pitfalls


# ------------------------------------------------------------------ FP64 simulation


@pytest.fixture(scope="module")
def fp64_sim() -> Recommendation:
    return recommend(RecommendInput(workload="scientific", matrix_n=60_000))


def test_fp64_ranks_datacenter_parts_above_geforce_despite_fp16(fp64_sim: Recommendation) -> None:
    a100, g4090 = CAT.gpu("A100 PCIe 80GB"), CAT.gpu("RTX 4090")
    assert g4090.throughput.fp16 > 8 * a100.throughput.fp64  # the headline number a TFLOPS-chaser sees
    assert a100.throughput.fp64 > 10 * g4090.throughput.fp64  # and loses FP64 by an order of magnitude
    ranks = {o.gpu_id: o.rank for o in fp64_sim.options}
    best_dc = min(r for g, r in ranks.items() if g in DATACENTER_FP64_CLASS)
    geforce = [r for g, r in ranks.items() if g in GEFORCE_TOP]
    assert geforce, "GeForce options should be listed (ranked low), not hidden"
    assert all(best_dc < r for r in geforce)
    for g in ("mi300x", "h100-pcie", "a100-pcie-80gb"):
        assert all(ranks[g] < r for r in geforce)
    top = fp64_sim.options[0]
    assert top.gpu_id in DATACENTER_FP64_CLASS and CAT.gpu(top.gpu_id).ecc
    assert "chasing-peak-tflops" in next(o for o in fp64_sim.options if o.gpu_id == "rtx-4090").pitfalls


def test_fp64_problem_memory_is_8_n_squared(fp64_sim: Recommendation) -> None:
    n = 60_000
    for o in fp64_sim.options:
        assert o.per_gpu_bytes == 8 * n * n // o.count
    r = rejected(fp64_sim, "rtx-4090", 1)  # 28.8 GB > ~25.2 GB a 24 GiB card shows
    assert r and r[0].stage == "memory"


# ------------------------------------------------------------------ domestic-only deployment


@pytest.fixture(scope="module")
def domestic() -> Recommendation:
    return recommend(RecommendInput(workload="inference", model="Qwen2.5-72B", precision="int8", domestic_only=True))


def test_domestic_only_returns_only_domestic_gpus(domestic: Recommendation) -> None:
    assert domestic.options
    for o in domestic.options:
        assert CAT.gpu(o.gpu_id).domestic
        assert o.software_stack != "CUDA" and "software:" in o.why.text and "软件栈" in render(o.why, "zh")
        assert {"software-xinchuang"} & {f.id for f in o.findings}
    assert any(r.gpu_id == "rtx-4090" and r.stage == "constraint" for r in domestic.rejected)


def test_domestic_options_note_the_ecosystem_pitfall(domestic: Recommendation) -> None:
    assert all(o.ecosystem_factor < 1 for o in domestic.options)
    assert "chasing-peak-tflops" in domestic.pitfalls


# ------------------------------------------------------------------ constraints


def test_cuda_required_keeps_only_nvidia() -> None:
    rec = recommend(RecommendInput(workload="inference", model="Llama-3.1-8B", precision="bf16", cuda_required=True,
                                   budget_usd=20_000))
    assert rec.options and all(o.vendor == "NVIDIA" for o in rec.options)
    mi = rejected(rec, "mi300x")
    assert mi and mi[0].stage == "constraint" and "CUDA" in mi[0].reason.text


def test_power_limit_and_tower_chassis() -> None:
    rec = recommend(RecommendInput(workload="inference", model="Llama-3.1-8B", precision="bf16", chassis="tower",
                                   power_limit_w=1000))
    assert rec.options
    for o in rec.options:
        assert o.wall_draw_w <= 1000 and o.chassis in ("tower", "system")  # a desk box (Strix Halo) needs none
        assert CAT.gpu(o.gpu_id).cooling.value != "passive"
    assert rejected(rec, "h100-sxm")[0].stage == "constraint"
    l40s = rejected(rec, "l40s")
    assert l40s and l40s[0].stage == "compat" and "fan" in l40s[0].reason.text
    # the build check's own sentence, nested: it renders in the reader's language with the rejection
    finding = l40s[0].reason.params["finding"]
    assert isinstance(finding, dict) and finding["id"].startswith("compat.")
    assert render(finding, "zh") in render(l40s[0].reason, "zh") and "被排除" in render(l40s[0].reason, "zh")


def test_training_deadline_with_hand_computed_hours() -> None:
    tokens, deadline = 1e9, 100.0
    rec = recommend(RecommendInput(workload="training", model="Llama-3.1-8B", method="qlora",
                                   dataset_tokens=tokens, deadline_hours=deadline))
    assert rec.options
    for o in rec.options:
        assert o.training_hours is not None and o.training_hours <= deadline
    spec_n = CAT.model("Llama-3.1-8B").params_b * 1e9
    bf16 = CAT.gpu("RTX 4090").throughput.bf16 * 1e12
    # MFU: the medians of the published whole training runs. A100 class: Llama 2 7B's
    # 6·7e9·2e12 / (184,320 h · 3600 · 312e12) = 0.4057; H100 class: the mean of Phi-4's and Phi-3-mini's
    # 6·14e9·9.8e12 / (967,680 h · 3600 · 989.4e12) = 0.2388 and 6·3.8e9·3.3e12 / (86,016 h · 3600 · 989.4e12) = 0.2456
    hours_one_4090 = 6 * spec_n * tokens / (bf16 * 0.4057) / 3600  # ≈ 200 h
    r = rejected(rec, "rtx-4090", 1)
    assert r and r[0].stage == "target"
    assert f"{hours_one_4090:,.0f} h" in r[0].reason.text
    h100 = next(o for o in rec.options if o.gpu_id == "h100-pcie")
    expected = 6 * spec_n * tokens / (h100.count * CAT.gpu("H100 PCIe").throughput.bf16 * 1e12 * 0.2422) / 3600
    assert h100.training_hours == pytest.approx(expected, rel=0.01)


def test_existing_cards_are_free() -> None:
    rec = recommend(RecommendInput(workload="inference", model="Llama-3.1-8B", precision="bf16",
                                   existing_gpus=[GPUCount(gpu="RTX 4090", count=1)]))
    mine = next(o for o in rec.options if o.gpu_id == "rtx-4090")
    # an owned card already sits in a computer: nothing to buy, not even a host
    assert mine.count == 1 and mine.price_usd == 0 and mine.host_price_usd == 0 and mine.total_price_usd == 0
    assert "nothing to buy" in mine.why.text and mine.rank == 1


def test_owned_gpus_are_planned_first_with_lora_sharded_over_them() -> None:
    """LoRA on a 70B: the frozen BF16 base alone is 70.6e9 × 2 B ≈ 141 GB, more than an 80 GB H100, so plain data
    parallel (a full copy per GPU) cannot fit; FSDP / ZeRO-3 over 8 GPUs puts ≈ 18 GB of it on each, so the eight
    H100s already owned do the job and nothing has to be bought."""
    rec = recommend(RecommendInput(workload="training", model="llama-3.1-70b", method="lora",
                                   existing_gpus=[GPUCount(gpu="h100-sxm", count=8)]))
    top = rec.options[0]
    assert (top.gpu_id, top.count, top.total_price_usd) == ("h100-sxm", 8, 0)
    assert top.per_gpu_bytes is not None and top.per_gpu_bytes < 40e9 and "ZeRO-3" in top.why.text


def test_owned_cards_of_one_gpu_over_a_builds_limit_are_a_clear_error() -> None:
    """Two entries naming one GPU (by alias and by name) add up: 1 + 64 MI300X is more than a build holds
    (found by the property tests as a ValidationError from inside the recommender)."""
    from tools.errors import ToolError

    owned = [GPUCount(gpu="mi300x", count=1), GPUCount(gpu="Instinct MI300X 192GB", count=64)]
    with pytest.raises(ToolError, match="65 × Instinct MI300X 192GB; a build holds at most 64"):
        recommend(RecommendInput(workload="training", model="qwen2.5-1.5b", existing_gpus=owned))


def test_both_budgets_is_an_error() -> None:
    with pytest.raises(ValueError, match="USD or in CNY"):
        RecommendInput(workload="scientific", budget_usd=1, budget_cny=1)
    with pytest.raises(ValueError, match="needs a model"):
        RecommendInput(workload="inference")


# ------------------------------------------------------------------ money


def test_electricity_and_break_even_by_hand() -> None:
    res = cost_of_ownership(CostInput(purchase_usd=10_000, power_w=1000, rental_usd_per_hour=2.0))
    assert res.yearly_energy_kwh == 8760  # 1 kW × 8,760 h
    assert res.yearly_energy_cost == pytest.approx(8760 * 0.15)  # USD default 0.15/kWh
    rent_month = 2.0 * 730
    assert res.rent_usd_per_month == rent_month
    assert res.break_even_months == pytest.approx(10_000 / (rent_month - 8760 * 0.15 / 12), abs=0.05)
    cny = cost_of_ownership(CostInput(power_w=1000, currency="CNY"))
    assert cny.yearly_energy_cost == pytest.approx(8760 * 0.8)  # CNY default 0.8/kWh
    assert cny.break_even_months is None
    half = cost_of_ownership(CostInput(power_w=500, duty_cycle=0.5, kwh_price=0.3))
    assert half.yearly_energy_cost == pytest.approx(0.5 * 8760 * 0.5 * 0.3)


def test_a_euro_budget_states_the_electricity_price_in_euros() -> None:
    rec = recommend(RecommendInput(workload="inference", model="llama-3.1-8b", budget_usd=3450, price_currency="EUR"))
    line = next(render(a, "en") for a in rec.assumptions if "kWh" in render(a, "en"))
    assert f"{0.15 / 1.15:.2f} EUR/kWh" in line and "USD/kWh" not in line  # 0.15 USD at 1.15 USD per euro


def test_renting_cheaper_than_power_never_breaks_even() -> None:
    res = cost_of_ownership(CostInput(purchase_usd=1000, power_w=3000, rental_usd_per_hour=0.1))
    assert res.break_even_months is None  # 73 USD rent/month < 328 USD of electricity


def test_currency_conversion() -> None:
    assert to_cny(100, "USD") == 720 and to_usd(720, "CNY") == 100
    assert to_usd(700, "CNY", cny_per_usd=7.0) == 100
    p = gpu_price(CAT.gpu("RTX 4090"))
    assert p.usd == CAT.gpu("RTX 4090").price.usd and p.cny == pytest.approx(p.usd * 7.2)


def test_remembered_build_checks_change_no_answer() -> None:
    """The recommender remembers compatibility reports per build: a what-if on context and users reuses
    them, and the answer equals one computed with nothing remembered."""
    from tools import recommend as rec_module

    ask = {"workload": "inference", "model": "llama-3.1-70b", "precision": "int4", "concurrency": 3}
    recommend(RecommendInput(**ask, context=4096))  # fills the memo
    warm = recommend(RecommendInput(**ask, context=6144)).model_dump()
    rec_module._BUILDS.clear()
    cold = recommend(RecommendInput(**ask, context=6144)).model_dump()
    assert warm == cold and warm["options"]


# ------------------------------------------------------------------ notes: message ids, English kept, Chinese shown

# three or more English words in a row (a word starts with a letter; digits, '/', '.', '-' inside it)
ENGLISH_RUN = re.compile(r"[A-Za-z][\w'./-]*(?:[ ,;:]+[A-Za-z][\w'./-]*){2,}")
NOTE_CASES = [
    {"workload": "inference", "model": "llama-3.1-70b"},
    {"workload": "inference", "model": "llama-3.1-8b", "precision": "Q4_K_M", "include_host_cost": False,
     "budget_cny": 30000},
    {"workload": "training", "model": "llama-3.1-8b", "deadline_hours": 10},
    {"workload": "training", "model": "llama-3.1-8b", "method": "full"},
    {"workload": "scientific", "kwh_price": 0.3, "duty_cycle": 0.5, "cny_per_usd": 7.1},
]


@pytest.fixture(scope="module")
def noted() -> list[Recommendation]:
    return [recommend(RecommendInput(**kw)) for kw in NOTE_CASES]  # type: ignore[arg-type]


def test_assumptions_are_recommend_notes_rendered_in_chinese(noted: list[Recommendation]) -> None:
    for rec in noted:
        for a in rec.assumptions:
            assert isinstance(a, Note) and a.id.startswith("recommend.") and a.text
            zh = render(a, "zh")
            assert zh != a.text and re.search(r"[\u4e00-\u9fff]", zh), a.id
            assert not ENGLISH_RUN.search(zh), (a.id, zh)


def test_assumption_english_text_is_unchanged(noted: list[Recommendation]) -> None:
    """Copied from the output before the notes became message ids; since then host costs are in the currency the
    prices are shown in (a yuan budget: $2,500 × 7.2 = ¥18,000 …) and the score names its money unit."""
    texts = [[a.text for a in rec.assumptions] for rec in noted]
    assert ("Host cost (approximate): desktop $2,500, workstation $7,000, small server (1–2 GPUs) $6,000, "
            "server $15,000, baseboard $60,000") \
        in texts[0]
    assert ("Memory fit from the sizing engine (vLLM accounting), 8,192 tokens × 1 sequence; tensor parallel "
            "across the GPUs.") in texts[0]
    assert ("Host cost (approximate): desktop ¥18,000, workstation ¥50,400, small server (1–2 GPUs) ¥43,200, "
            "server ¥108,000, baseboard ¥432,000 — excluded on request") in texts[1]
    assert "Electricity 0.8 CNY/kWh, duty cycle 1; break-even compares with the catalog rental price of the same " \
        "GPUs." in texts[1]
    assert texts[2][-3:] == [
        "Training method LoRA (default); full fine-tuning on several GPUs sized with ZeRO-3.",
        "Score: training tokens/s (6·N·D at the default MFU, × multi-GPU scaling fabric 1, pcie-p2p 0.9, no-p2p 0.8) "
        "per $1,000.",
        "A deadline without dataset tokens cannot be checked; it was ignored.",
    ]
    assert "Training method full; full fine-tuning on several GPUs sized with ZeRO-3." in texts[3]
    assert "Prices are the catalog's approximate street prices; CNY↔USD at 7.1 (as of 2026-06-01)." in texts[4]
    assert texts[4][-1] == ("Score: FP64 TFLOPS (tensor FP64 where it exists) per $1,000, × 0.5 without ECC; "
                            "FP16/BF16 figures are ignored.")
    prices = next(a for a in noted[4].assumptions if a.id == "recommend.assume.prices")
    assert prices.params == {"rate": 7.1, "as_of": "2026-06-01", "foreign": ""}  # no euro or pound budget


def test_reasons_and_whys_are_recommend_notes_in_both_languages(noted: list[Recommendation],
                                                                box_70b: Recommendation) -> None:
    for rec in [*noted, box_70b]:
        for r in rec.rejected:
            assert r.reason.id.startswith("recommend.reject.") and r.reason.text == render(r.reason, "en")
            assert re.search(r"[\u4e00-\u9fff]", render(r.reason, "zh")), r.reason.id
        for o in rec.options:
            assert o.why.id == "recommend.why.option" and o.why.text == render(o.why, "en")
            zh = render(o.why, "zh")
            assert zh.startswith(f"{o.count} 张 {o.gpu}（") and zh.endswith("。")


def test_why_text_is_unchanged_in_both_languages(box_70b: Recommendation) -> None:
    """Copied from the output before the reasons became message ids (the watch topics and the value's metric, now
    named, aside), with the 2026 street price of the RTX 5090 ($3,200: 2 × 3,200 + 2,500 host = $8,900)."""
    o = next(o for o in box_70b.options if o.gpu_id == "rtx-5090")
    assert o.why.text.startswith("2× GeForce RTX 5090 (consumer): 24.3 GB of 31.1 GB per GPU, 6.9 GB spare; ~36 "
                                 "tokens/s decode; $8,900 incl. ~$2,500 host → 4.01 decode tokens/s per $1k; watch: ")
    assert render(o.why, "zh").startswith("2 张 GeForce RTX 5090（消费级）：每卡 24.3 GB / 31.1 GB，余量 6.9 GB；"
                                          "解码约 36 tokens/s；约 $8,900（含主机约 $2,500），"
                                          "每千美元 4.01 解码 tokens/s；注意：")
    over = next(r for r in box_70b.rejected if r.stage == "budget")
    assert re.fullmatch(r"over budget: \$[\d,]+ \(GPUs \$[\d,]+ \+ host \$[\d,]+\) > \$10,000", over.reason.text)
    assert re.fullmatch(r"超出预算：\$[\d,]+（显卡 \$[\d,]+ \+ 主机 \$[\d,]+）> \$10,000", render(over.reason, "zh"))


def test_watch_names_topics_not_rule_ids(box_70b: Recommendation) -> None:
    """What the build check warns about is named by its topic (power, cooling …), once each; rule ids such as
    'power-multi-psu' are for the code, not the reader."""
    warned = [o for o in box_70b.options if any(f.severity == "warning" for f in o.findings)]
    assert warned
    for o in warned:
        en, zh = o.why.text, render(o.why, "zh")
        for f in o.findings:
            assert f.id not in en and f.id not in zh
        topics = dict.fromkeys(f.category for f in o.findings if f.severity == "warning")
        assert en.endswith("; watch: " + ", ".join(render({"id": f"recommend.watch_category.{c}"}, "en")
                                                    for c in topics) + ".")
        assert zh.endswith("；注意：" + "、".join(render({"id": f"recommend.watch_category.{c}"}, "zh")
                                              for c in topics) + "。")
    rtx5090 = next(o for o in warned if o.gpu_id == "rtx-5090")
    assert rtx5090.why.text.endswith("; watch: power, interconnect.")
    assert render(rtx5090.why, "zh").endswith("；注意：供电、互联。")


def test_why_prices_in_the_buyers_currency() -> None:
    """A yuan budget: the why line quotes yuan (the total as in total_price_cny) and value per ¥10k; a euro
    budget quotes euros."""
    ask = {"workload": "inference", "model": "Llama-3.1-70B", "precision": "int4"}
    cny = recommend(RecommendInput(**ask, budget_cny=100_000))  # type: ignore[arg-type]
    assert cny.options and cny.options[0].total_price_cny is not None
    for o in cny.options:
        en, zh = o.why.text, render(o.why, "zh")
        assert "$" not in en and "$" not in zh
        if o.total_price_cny is None:  # an unpriced card (RTX PRO Blackwell): no total, no value per ¥10k
            continue
        assert f"¥{o.total_price_cny:,.0f}" in en and f"约 ¥{o.total_price_cny:,.0f}" in zh
        assert " decode tokens/s per ¥10k" in en and "每万元" in zh
        assert o.perf_per_price is not None
        per_10k = o.perf_per_price * 10 * o.total_price_usd / o.total_price_cny  # type: ignore[operator]
        assert f"→ {per_10k:,.2f} decode tokens/s per ¥10k" in en
    eur = recommend(RecommendInput(**ask, budget_usd=10_000, price_currency="EUR"))  # type: ignore[arg-type]
    o = eur.options[0]
    assert o.total_price_local is not None and f"€{o.total_price_local:,.0f}" in o.why.text
    assert " per €1k" in o.why.text and "每千欧元" in render(o.why, "zh") and "$" not in o.why.text


def test_a_euro_budget_states_the_euro_rate() -> None:
    from tools.pricing import USD_PER_EUR

    rec = recommend(RecommendInput(workload="inference", model="llama-3.1-8b", budget_usd=5000,  # type: ignore[arg-type]
                                   price_currency="EUR"))
    prices = next(a for a in rec.assumptions if a.id == "recommend.assume.prices")
    assert f"1 EUR = {USD_PER_EUR:g} USD" in prices.text and f"1 EUR = {USD_PER_EUR:g} USD" in render(prices, "zh")


def test_an_int4_vllm_plan_does_not_recommend_cards_vllm_cannot_load_it_on() -> None:
    """vLLM has no AWQ/GPTQ kernels for Radeon (hardware_rules §4.1): an int4 plan sized for vLLM rules those cards
    out, saying why, instead of ranking them with a warning that the model will not load."""
    rec = recommend(RecommendInput(workload="inference", model="llama-3.1-70b", precision="int4",  # type: ignore[arg-type]
                                   budget_cny=100_000))
    assert rec.options and not any(f.id == "vllm-quant-hardware" for o in rec.options for f in o.findings)
    amd = [r for r in rec.rejected if r.stage == "compat" and "R9700" in r.gpu]
    assert amd and "AWQ" in amd[0].reason.text
    gguf = recommend(RecommendInput(workload="inference", model="llama-3.1-70b", precision="Q4_K_M",  # type: ignore[arg-type]
                                    budget_cny=100_000))
    assert not any(r.stage == "compat" and "AWQ" in r.reason.text for r in gguf.rejected)  # llama.cpp runs GGUF there


def test_owned_cards_past_one_node_are_planned_in_whole_nodes() -> None:
    """Nine owned MI300X (one loose, eight in a server) are no two equal nodes: the option is two nodes of eight,
    seven of them bought — never a sizing the tools refuse."""
    r = recommend(RecommendInput(workload="inference", model="deepseek-v3", context=1, concurrency=1,
                                 existing_gpus=[{"gpu": "mi300x", "count": 1}, {"gpu": "mi300x", "count": 8}]))
    mine = [o for o in r.options if o.gpu_id == "mi300x"]
    assert mine and all(o.count % 8 == 0 for o in mine)


def test_a_first_token_target_gates_the_options() -> None:
    """Every option left meets the target for its users sending over time (tools.latency), checked again."""
    from tools.latency import LoadInput, ttft_under_load
    from tools.modelspec import load_model_spec
    r = recommend(RecommendInput(workload="inference", model="llama-3.1-70b", context=2300, concurrency=200,
                                 max_ttft_s=1.0, prompt_tokens=2000))
    assert r.options
    for o in r.options[:3]:
        load = ttft_under_load(LoadInput(model=load_model_spec("llama-3.1-70b"), gpu=load_catalog().gpu(o.gpu_id),
                                         count=o.count, precision="bf16", prompt_tokens=2000, users=200))
        assert load.ttft_s is not None and load.ttft_s <= 1.0
    assert any(x.stage == "target" for x in r.rejected)
