"""The classes blind batch ad found (bench/blind/batch-ad), each fixed by mechanism: a PSU stated beside a CPU is a
build question, a negated distill is the full model, the money asked for holds for the rest of the conversation, and
a machine named by its card ('an H20 setup') is sized at the count that holds the model."""

from __future__ import annotations

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_a_psu_and_a_cpu_said_with_a_question_check_the_build() -> None:
    assert parse("我现在电源是850w金牌，cpu是13700k，能不能凑合？要不要降功耗").kind == "build"
    assert parse("how many PCIe lanes does a Ryzen 9 9950X have").kind == "spec"  # a platform fact stays one


@pytest.mark.parametrize("text", [
    "Need to deploy DeepSeek-R1 671B full version (not distill) for internal use",
    "部署满血版DeepSeek-R1，不要蒸馏版",
])
def test_a_distill_ruled_out_is_the_full_model(text: str) -> None:
    p = parse(text)
    assert p.model == "deepseek-r1" and p.params_b == 671


def test_a_distill_asked_for_stays_the_distill() -> None:
    assert parse("DeepSeek R1 distill 14B").model == "deepseek-r1-distill-qwen-14b"


@pytest.mark.parametrize("text, stated", [("how does it compare to an H20 setup?", False),
                                          ("a 4090 box for home", False),
                                          ("one H100 card for the lab", True)])
def test_a_machine_named_by_its_card_has_no_count(text: str, stated: bool) -> None:
    (g,) = parse(text).gpus
    assert g.count == 1 and g.stated is stated


def test_the_money_asked_for_holds_and_the_card_is_sized_at_the_count_that_holds_the_model(adv: Advisor) -> None:
    """DeepSeek-R1 at FP8 is 672.9 GB of weights: 84 GB a card on 8 H20 plus the MLA cache every rank keeps
    (14.4 GB for 50 × 4k) is more than the 94.3 GB vLLM leaves; 16 hold it."""
    _, (_, r) = talk(adv, "State-owned company in China, xinchuang so no nvidia. Deploy DeepSeek-R1 671B full "
                          "version (not distill), ~50 concurrent users. Which domestic accelerators and how many?",
                     "what would that cost roughly in RMB, and how does it compare to an H20 setup if we were "
                     "allowed?")
    sized = [c for c in ok_calls(r, "size_inference") if c.arguments.get("gpu") == "h20" and not
             c.call_id.startswith("alt_")]
    assert sized and sized[0].arguments["gpus"] == 16
    head = "\n".join(r.text.splitlines()[:3])
    assert "¥" in head and "$" not in head
    assert all(c.arguments["display_currency"] == "CNY" for c in r.tool_calls if c.name == "recommend")


@pytest.mark.parametrize("text, mains, circuits, machines", [
    ("the lab is on 2x 32A single phase circuits", "230v-32a", 2, None),
    ("机房有两路32A回路，放10台工作站", "220v-32a", 2, 10),
    ("we have 30 workstations", None, None, 30),
])
def test_circuits_and_machines_are_counted(text: str, mains: str | None, circuits: int | None,
                                           machines: int | None) -> None:
    p = parse(text)
    assert (p.mains, p.circuits, p.nodes) == (mains, circuits, machines)


def test_thirty_machines_on_two_circuits_are_checked_together() -> None:
    """One machine with two 350 W cards draws W at the wall; 30 of them against 2 × 230 V × 32 A × 0.8 = 11,776 W."""
    from tools.compat import check_build
    from tools.compat_rules.types import BuildInput, GPUCount

    one = check_build(BuildInput(gpus=[GPUCount(gpu="rtx-3090", count=2)], mains="230v-32a", chassis="tower"))
    many = check_build(BuildInput(gpus=[GPUCount(gpu="rtx-3090", count=2)], mains="230v-32a", chassis="tower",
                                  machines=30, circuits=2))
    each = one.totals.wall_draw_w
    assert many.totals.continuous_limit_w == pytest.approx(2 * 230 * 32 * 0.8)
    (wall,) = [f for f in many.findings if f.id == "power-wall-circuit"]
    assert wall.severity == "error"
    assert wall.numbers["machines_wall_w"] == pytest.approx(30 * each)
    assert wall.numbers["circuits_needed"] == -(-30 * each // (230 * 32 * 0.8))


@pytest.mark.parametrize("text, at_once", [("日活2万的写作类应用", 400), ("we have 2,000 DAU on our app", 40),
                                           ("每天 300 人在线用", 30)])
def test_an_apps_daily_users_are_not_a_staff(text: str, at_once: int) -> None:
    """An app's daily users use it a few minutes each: 2 % at once (20,000 → 400); 300 people using an internal tool
    every day stay a head count (10 %, at least 30)."""
    assert parse(text).concurrency == at_once


@pytest.mark.parametrize("text", ["实验室现在还有两张3090，能不能一起塞进去用上？", "我们还有两张3090"])
def test_cards_the_lab_still_has_are_owned(text: str) -> None:
    p = parse(text)
    assert not p.gpus and p.existing and p.existing[0].gpu == "rtx-3090" and p.existing[0].count == 2


def test_a_server_to_configure_with_owned_cards_leads_with_what_to_buy(adv: Advisor) -> None:
    _, (r,) = talk(adv, "老板让我配一台训练服务器，预算40w左右（含税），主要做qwen2.5-32b的lora微调。"
                        "实验室现在还有两张3090，"
                        "能不能一起塞进去用上？")
    assert r.text.lstrip().startswith("**推荐配置**")
    assert "2 张 GeForce RTX 3090 放不下" in r.text  # the owned cards' verdict still said


def test_renting_for_a_run_with_no_card_named_prices_what_to_rent(adv: Advisor) -> None:
    """32B full fine-tune, 200M tokens × 3 epochs = 600M tokens: the rentable configurations that hold it, each
    priced for the whole job."""
    _, (_, r) = talk(adv, "做qwen2.5-32b微调，实验室有两张3090。",
                     "那租卡做一次全参大概要多少钱？数据差不多2亿token，训3个epoch")
    assert ok_calls(r, "rent_choices")
    assert r.text.startswith("**租来跑 Qwen2.5-32B 最省钱的是")


def test_a_service_is_sized_at_four_thousand_tokens_a_request_unless_told(adv: Advisor) -> None:
    """100 users × 4,096 tokens × 262,144 B a token (Qwen2.5-32B: 64 layers × 8 KV heads × 128 × 2 × 2 B) =
    107.4 GB of KV at 16 bits, half of it in FP8: the FP8-cache route is offered beside the INT4 stand-in."""
    _, (r,) = talk(adv, "公司30来人，内部知识库问答+客服机器人，高峰100并发，要求首字延迟2秒以内，预算20w，买什么卡")
    (size,) = [c for c in ok_calls(r, "size_inference") if not c.call_id.startswith("alt_")]
    assert size.arguments["context"] == 4096 and size.arguments["batch"] == 100
    assert size.result["kv_bytes_per_token"] == 262_144
    assert size.result["breakdown"]["kv_cache"] == pytest.approx(100 * 4096 * 262_144, rel=0.01)
    assert "每个请求按 4,096 tokens 上下文" in r.text and "INT4 权重 + FP8 KV 缓存" in r.text
    _, (said,) = talk(adv, "内部知识库，高峰100并发，每个请求 8k 上下文，预算20w，买什么卡")
    assert ok_calls(said, "size_inference")[0].arguments["context"] == 8192


def test_alphafold_input_is_held_by_memory_as_documented(adv: Advisor) -> None:
    """AlphaFold 3 documents 5,120 tokens on an 80 GB A100/H100 (64 a GB): 5,000 residues need about 78 GB, more
    than a 32 GB RTX 5090 holds (about 2,048); a one-GPU job is never split across cards to fit."""
    p = parse("5090 32g够不够跑alphafold3？大蛋白复合物5000个残基那种")
    assert p.sequence_tokens == 5000 and p.sci_code == "alphafold"
    _, (r,) = talk(adv, "如果只能买一张卡，5090 32g够不够跑alphafold3？大蛋白复合物5000个残基那种")
    first = r.text.splitlines()[0]
    assert first.startswith("**不够") and "2,048" in first and "78 GB" in first
    rec = [c for c in r.tool_calls if c.name == "recommend" and c.ok]
    assert rec and rec[0].arguments["problem_per_gpu"] is True
    assert all(o["count"] == 1 or o["per_gpu_bytes"] >= 78e9 for o in rec[0].result["options"])


def test_the_option_a_comparison_picked_is_the_one_a_follow_up_means(adv: Advisor) -> None:
    """H200 runs VASP's CUDA build at 67 TFLOPS of FP64 (MI300X has no VASP build); the 8-GPU option's node is
    then an HGX H200 (DGX H200 class, over 10 kW): one per 15 kW rack, never a guessed RTX 4090."""
    _, (r1, _, r3) = talk(adv, "Research computing here. GPU-native FP64 CFD solver plus VASP and some GROMACS. "
                               "~$400k. FP64 is non-negotiable. Is L40S / RTX PRO 6000 class any good or do we need "
                               "H100/H200/MI300X?",
                          "what about B200 or B300, should we wait for those instead?",
                          "ok how much power and cooling per node for the 8-gpu option? our racks are 15kW air cooled")
    assert "MI300X" in r1.text and "H200 SXM 141GB is fastest" in r1.text.splitlines()[0]
    (cost,) = ok_calls(r3, "machine_cost")
    assert cost.arguments["gpu"] == "h200-sxm" and cost.arguments["count"] == 8
    assert cost.result["nodes_per_rack"] == 1


def test_a_comparison_of_clusters_times_the_whole_cluster_and_counts_what_holds_the_model(adv: Advisor) -> None:
    """DeepSeek-R1 at FP8 (672.9 GB) does not fit eight 64 GB 910B: timed on one node its weights would sit in
    system RAM (5 tokens/s); on the 16 that hold it, it runs at hundreds. 'How many of each' with a model is the
    count that holds it, not what the budget buys."""
    _, (r,) = talk(adv, "我们是国企，要采购推理服务器部署deepseek-R1满血版（671B），并发大概50人左右，要求国产化优先，"
                        "预算500w以内。昇腾910B和H20怎么选？各要几台")
    perf = {c.arguments["gpu"]: c for c in ok_calls(r, "perf_decode")}
    assert perf["ascend-910b"].arguments["count"] == 16 and perf["ascend-910b"].result["tokens_per_s"] > 100
    assert not ok_calls(r, "affordable")
    assert r.text.startswith("**两者都放得下 DeepSeek-R1")


@pytest.mark.parametrize("text, fp64", [("做分子动力学，主要gromacs和amber，听说双精度很重要？", None),
                                        ("do we need FP64 for LAMMPS?", None),
                                        ("我们的 CFD 代码必须双精度", True)])
def test_fp64_asked_about_or_heard_of_is_no_requirement(text: str, fp64: bool | None) -> None:
    assert parse(text).fp64 is fp64


def test_the_cards_owned_join_a_comparison_made_against_them(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "做分子动力学，主要gromacs和amber，现在是两张V100，想升级，预算15w，4090、A100、H100怎么选？",
                     "要是换成4张4090，能比现在两张V100快多少")
    sized = {c.arguments["name"] for c in ok_calls(r, "gpu_info")}
    assert {"rtx-4090", "v100-sxm2-32gb"} <= sized
    first = r.text.splitlines()[0]
    assert "4 张 GeForce RTX 4090" in first and "2 张 V100" in first


def test_alternatives_after_a_count_are_counted_and_a_rate_totals_the_rent(adv: Advisor) -> None:
    """'How many H100 to pre-train 7B on 2T tokens in a month?', then 'H800 or A800?' counts both; '每卡每小时 18 块'
    is a rate (never 18 cards): the run's GPU-hours × ¥18."""
    _, (_, r2, r3) = talk(adv, "我们要从头预训练一个7B模型，数据2T tokens，能租到H100 80G，希望一个月内训完，"
                               "大概要多少张卡？", "如果换成H800或者A800呢", "按租卡每卡每小时18块算，总共大概多少钱")
    lines = r2.text.splitlines()
    assert lines[0].startswith("**H800 SXM 80GB：") and lines[1].startswith("**A800 SXM 80GB：")
    assert parse("按租卡每卡每小时18块算，总共大概多少钱").gpu_count is None
    (time,) = [c for c in ok_calls(r3, "training_time") if not c.call_id.startswith("alt_")][:1]
    gpu_hours = time.result["gpu_hours"]
    assert f"¥{round(gpu_hours * 18):,}" in r3.text.splitlines()[0]


@pytest.mark.parametrize("text, only", [("what if procurement says no NVIDIA datacenter cards, AMD only?", ["amd"]),
                                        ("AMD cards only", ["amd"]), ("NVIDIA-only shop", ["nvidia"])])
def test_a_vendor_named_before_only_restricts_the_choice(text: str, only: list[str]) -> None:
    assert parse(text).only_vendors == only


def test_a_vendor_rule_takes_the_cards_it_leaves_out_off_the_comparison(adv: Advisor) -> None:
    """AMD only: of 4× H100, 4× RTX 6000 Ada and 4× MI210 the MI210s remain; the group's own CUDA code does not run
    on them without a HIP port, and the first line says so instead of 'yes'."""
    s, (_, r) = talk(adv, "Our group runs OpenFOAM, an in-house FP64 CUDA code (sparse solvers), and GROMACS. "
                          "Looking at 4x H100 vs 4x RTX 6000 Ada vs 4x MI210. Budget ~$150k USD incl server. Which?",
                     "what if procurement says no NVIDIA datacenter cards, AMD only?")
    assert s.profile.gpu == "mi210" and s.profile.gpu_count == 4 and not s.profile.compare
    assert r.text.startswith("**Not as things stand: Instinct MI210") and "HIP" in r.text.splitlines()[0]


def test_servers_offered_side_by_side_are_fitted_to_the_racks_first(adv: Advisor) -> None:
    """HGX H200 and B200 8-GPU servers at their makers' ratings (DGX H200 10.2 kW, DGX B200 14.3 kW): one of each
    per 15 kW rack, so the 4 racks said hold 4 of either; 'air cooling only. How many …' never restricts the cards
    to the H200."""
    p = parse("We have 4 racks, 15 kW each, air cooling only. How many HGX H200 8-GPU servers can we put in? And what "
              "about B200?")
    assert p.rack_kw == 15 and p.alternatives and not p.allowed_gpus and p.asks[0] == "rack"
    _, (r,) = talk(adv, "Facilities question. We have a colo cage with 4 racks, 15 kW each, air cooling only. How many "
                        "HGX H200 8-GPU servers can we put in? And what about B200?")
    lines = [line for line in r.text.splitlines() if line.strip()]
    assert lines[0].startswith("[8× H200 SXM 141GB] **Racks:**") and "10.2 kW" in lines[0]
    assert "4 racks hold **4 nodes, 32 cards**" in lines[0]
    assert lines[1].startswith("[8× B200 SXM 180GB] **Racks:**") and "14.3 kW" in lines[1]


@pytest.mark.parametrize("text, card, price", [
    ("is it dumb to buy 4x used tesla P40 (24gb) at ~$200 each to run 70b models? vs just 2x 3090", "tesla-p40", 200),
    ("what about MI50 32gb instead? theyre like $120 on ebay", "mi50-32gb", 120),
])
def test_a_cards_price_is_never_a_budget(text: str, card: str, price: float) -> None:
    p = parse(text)
    assert p.budget is None and p.card_prices[card].amount == price


@pytest.mark.parametrize("text, method", [("what about doing a full fine-tune instead of LoRA?", "full"),
                                          ("QLoRA rather than full fine-tuning", "qlora"),
                                          ("LoRA 而不是全参", "lora")])
def test_the_method_replaced_is_not_the_method_asked(text: str, method: str) -> None:
    assert parse(text).method == method


def test_memory_versions_of_one_product_are_weighed_against_each_other(adv: Advisor) -> None:
    """DeepSeek-R1 at Q4_K_M is about 406 GB: the 512 GB Mac Studio (384 GiB for the GPU) holds it, the 256 GB one
    (192 GiB) does not; a Mac is sized as Ollama sizes it (Q4_K_M), never at FP8's Q8_0."""
    p = parse("Mac Studio M3 Ultra for DeepSeek R1 671B. 256GB or 512GB version?")
    assert p.memory_variants == [256, 512]
    _, (r,) = talk(adv, "Thinking of a Mac Studio M3 Ultra to run DeepSeek R1 (the full 671B one) locally. 256GB or "
                        "512GB version? money is not a huge issue but I dont want to waste it")
    assert r.text.startswith("**Mac Studio M3 Ultra 512GB holds DeepSeek-R1 (Q4_K_M)")


@pytest.mark.parametrize("text, hours", [("每天大概用GPU 4个小时，买一张5090", 4.0), ("每天用 8 小时", 8.0),
                                         ("每天 300 人在线用，响应 2 秒", None)])
def test_hours_a_day_with_words_between(text: str, hours: float | None) -> None:
    assert parse(text).hours_per_day == hours


@pytest.mark.parametrize("text, amount", [("budget 15.000 EUR", 15_000), ("250.000 EUR incl. VAT", 250_000),
                                          ("€2.50 per hour", 2.5)])
def test_a_euro_writers_thousands_dot(text: str, amount: float) -> None:
    from advisor.numbers import find_money

    assert find_money(text)[0].amount == amount


def test_users_said_with_an_estimate_word_are_users_not_money() -> None:
    p = parse("全集团2000人用，并发估计100左右。大概需要几台？")
    assert p.budget is None and p.concurrency == 100 and p.head_count == 2000


@pytest.mark.parametrize("text, limit", [("如果把H100限功率到500W，一台整机能压到多少", 500),
                                         ("what if we power cap the GPUs at 500W each?", 500)])
def test_a_power_cap_on_the_card_named(text: str, limit: float) -> None:
    assert parse(text).gpu_power_limit_w == limit


def test_an_mfu_to_assume_is_read() -> None:
    assert parse("从头预训练一个7B模型，数据1T token，64张H800，大概要训多久？MFU按40%算").mfu == 0.4


def test_ppl_are_people() -> None:
    p = parse("we're a 25-person law firm. Maybe 8 ppl using it at the same time. Budget around 15.000 EUR all-in.")
    assert (p.head_count, p.concurrency, p.budget.amount if p.budget else None) == (25, 8, 15_000)


def test_a_pcie_card_asked_about_alone_stays_one_card(adv: Advisor) -> None:
    """'T4 能跑 13B 吗' is one 16 GB T4: Qwen2.5-14B at BF16 is 29.5 GB of weights, so not at 16 bits; at 4-bit
    it fits — never answered on four T4s nobody mentioned."""
    _, (r,) = talk(adv, "T4 能跑 13B 模型吗？")
    sized = [c for c in ok_calls(r, "size_inference") if not c.call_id.startswith("alt_")]
    assert sized[0].arguments["gpus"] == 1 and "一张 T4 16GB" in r.text.splitlines()[0]
