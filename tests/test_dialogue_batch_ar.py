"""The classes blind batch ar found, each fixed by mechanism (issue 35)."""

from __future__ import annotations

import re

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize(("text", "epochs"), [("跑3个epoch", 3), ("训2轮", 2), ("3 epochs", 3),
                                              ("每个对话平均 10 轮", None), ("10万条样本跑一遍", None)])
def test_epochs_said_after_a_run_verb_count(text: str, epochs: int | None) -> None:
    """'…跑3个epoch' (ar rz01 t3 timed one epoch, 3× too short): the number before 'epoch' is the epochs whatever
    verb precedes it; '轮' after a chat's turns and '跑一遍' are not epochs."""
    assert parse(text, context=True).epochs == epochs


def test_three_epochs_of_fifty_thousand_samples_are_timed_whole(adv: Advisor) -> None:
    """5万条 × 1000 token × 3 epochs = 1.5e8 tokens."""
    _, (_, r) = talk(adv, "课题组想做qwen2.5-14b的lora微调，两张卡够吗",
                     "lora微调14b的话就用这两张卡要多久？数据大概5万条，每条平均1000 token左右，跑3个epoch")
    (timed,) = ok_calls(r, "training_time")
    assert timed.arguments["tokens"] == pytest.approx(1.5e8)


def test_a_baseboard_card_rented_by_the_hour_is_one_gpu_not_a_node(adv: Advisor) -> None:
    """'租a100 80g一小时多少钱？lora跑一遍10万条样本要几小时' (ar rz09 t3 timed eight A100s): clouds rent an A100 SXM by
    the GPU; an 8B LoRA fits one, so the run is timed and priced on one."""
    _, (_, r) = talk(adv, "要微调llama3.1 8b然后上线服务",
                     "租a100 80g一小时多少钱？lora跑一遍10万条样本大概要几小时、花多少钱")
    (timed,) = ok_calls(r, "training_time")
    assert timed.arguments["count"] == 1
    assert timed.result["gpu_hours"] == pytest.approx(timed.result["hours"])  # type: ignore[index]


def test_back_to_the_earlier_job_is_its_model_and_machine(adv: Advisor) -> None:
    """'算了还是说回代码助手，如果组里变成10个人同时用，mac还撑得住吗' after a DeepSeek-R1 detour (ar rz10 t3 went on
    sizing R1): the coder model and the Mac it was weighed on, now for ten users."""
    session, (_, _, r) = talk(adv, "想本地跑代码助手qwen2.5-coder 32b，纠结mac studio m4max 128g还是自己装双4090？",
                              "那m3 ultra 256g能跑deepseek r1吗",
                              "算了还是说回代码助手，如果组里变成10个人同时用，mac还撑得住吗，要换啥")
    assert session.profile.model == "qwen2.5-coder-32b" and session.profile.concurrency == 10
    assert "DeepSeek" not in r.text.split("\n")[0] and "Qwen2.5-Coder-32B" in r.text.split("\n")[0]


@pytest.mark.parametrize("text", ["ok and power - our machine room row has 30 kW left. how many nodes of each kind fit",
                                  "机房还剩30kW，能放几台"])
def test_power_left_in_a_row_or_room_counts_machines_like_a_racks(text: str) -> None:
    """(ar re03 t3 checked one card's PSU instead): the kW left is the budget the machines are counted against."""
    said = parse(text, context=True)
    assert said.rack_kw == 30 and "rack" in said.asks


def test_which_of_two_machines_is_quieter_and_faster(adv: Advisor) -> None:
    """'vs a mac mini m4 pro 64gb? which is quieter and which is faster' (ar re08 t3: 'm4 is not a GPU in the
    catalog'): the Mac mini is catalogued (273 GB/s, Apple's specs); a 3090 box draws several times its 155 W, so the
    Mac is the quieter and the 3090 (936 GB/s) the faster."""
    _, (_, r) = talk(adv, "i don't have a PC. what would a full build with a used 3090 look like and how fast would "
                          "qwen 32b coder run", "vs a mac mini m4 pro 64gb? which is quieter and which is faster")
    assert "not a GPU in the catalog" not in r.text
    assert "3090 is faster" in r.text.split("\n")[0]
    assert "**Quietest: one Mac mini M4 Pro 64GB**" in r.text


def test_cards_rented_to_supplement_those_owned_are_counted_beside_them(adv: Advisor) -> None:
    """'手上有64张H800 … 去租H100来补 … 一个月内要再租多少张' (ar rz07 t3 counted 248 H100s alone): the H800 has the
    H100's 989 TFLOPS of dense BF16 (NVIDIA's datasheets), so 248 needed less the 64 owned is 184 — whole nodes of 8 —
    if one job spans both; 248 otherwise, also said."""
    _, (_, _, r) = talk(adv, "我们团队准备从头预训练一个7B模型，数据1T token，手上有64张H800，大概要训多久",
                        "那换成13B、2T token呢",
                        "如果去租H100来补，每卡每小时大概多少钱？想把时间压到一个月内要再租多少张")
    first = r.text.split("\n")[0]
    needed = int(_count(r"相当于 (\d+) 张", first))
    assert f"再租约 {needed - 64} 张 H100" in first and (needed - 64) % 8 == 0


def _count(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    assert m, text
    return m.group(1)


def test_a_months_rent_for_a_served_model_prices_the_cards_that_serve_it(adv: Advisor) -> None:
    """'rough monthly cost for that on rented H100 vs buying' after a 70B for 200 users (ar re04 t3 repeated the
    tables): 'rented' is renting; Llama-3.3-70B's BF16 weights alone are 141 GB, so one 80 GB H100 cannot be the
    machine priced."""
    assert parse("rough monthly cost for that on rented H100 vs buying", context=True).kind.value == "rent_vs_buy"
    _, (_, _, r) = talk(adv, "we serve llama 3.1 8b for a chat product, ~200 concurrent users at peak",
                        "what if we switch the model to llama 3.3 70b at same traffic",
                        "rough monthly cost for that on rented H100 vs buying")
    (priced,) = ok_calls(r, "rent_vs_buy")
    assert priced.arguments["count"] * 80 > 141
    assert r.text.startswith("**Renting")


def test_one_card_asked_for_is_never_a_lone_sxm_module() -> None:
    """'does it fit on one card?' (ar re02 t3 answered '1× B200 SXM 180GB'): SXM and OAM modules come on 4- or 8-GPU
    baseboards, so a single one is rejected, with that reason."""
    from tools.recommend import RecommendInput, recommend
    r = recommend(RecommendInput(workload="inference", model="qwen2.5-32b", gpu_count=1, concurrency=4, context=8192))
    assert r.options and all(not o.gpu_id.startswith(("b200", "h100-sxm", "h200-sxm", "mi300x")) for o in r.options)
    assert any(x.gpu_id == "b200" and x.reason.id == "recommend.reject.board_count" for x in r.rejected)
