"""What people say about the hardware they have or buy, read as they mean it (blind batch t, 2026-12-06):
a size said after a name picks that size of the product, 'N 块一张' is a price and not a count, a card listed
after an owned one is owned too, an owned card weighed against another keeps the count owned (plus the one
added), a Mac keeps no layers in 'system RAM' (it is the same memory), and an inference card does not train."""

from __future__ import annotations

import pytest

from advisor.engine import Advisor
from advisor.nlu import parse
from tests.fakes.script import turn
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory


@pytest.mark.parametrize(("text", "gpu"), [
    ("I'm thinking of buying a Mac Studio M3 Ultra with 512GB to run DeepSeek-R1", "mac-studio-m3-ultra-512gb"),
    ("my A100 with 40GB runs out of memory", "a100-pcie-40gb"),
    ("我有两张 MI50，32G 的", "mi50-32gb"),
])
def test_a_size_said_after_the_name_picks_that_product(text: str, gpu: str) -> None:
    p = parse(text)
    assert gpu in [g.gpu for g in p.gpus + (p.existing or [])]


@pytest.mark.parametrize(("text", "count"), [
    ("二手mi50 32g现在好便宜 几百块一张，买两张跑qwen2.5-72b q4行吗", 2),
    ("3090 一张 4500 块，买两张够吗", 2),
    ("一张4090要多少显存跑70B", 1),
])
def test_a_unit_price_is_no_count(text: str, count: int) -> None:
    assert [g.count for g in parse(text).gpus] == [count]


def test_a_card_listed_after_an_owned_one_is_owned() -> None:
    p = parse("I have an RTX A5000 and an old RTX 2070 SUPER in the same box. Can I run Qwen2.5-Coder-32B?")
    assert [(e.gpu, e.count) for e in p.existing or []] == [("rtx-a5000", 1), ("rtx-2070-super", 1)]
    assert not p.gpus
    p = parse("I have a 4090, should I buy an A6000 or a 5090?")  # a purchase after 'buy' is no owned card
    assert [e.gpu for e in p.existing or []] == ["rtx-4090"] and {g.gpu for g in p.gpus} == {"rtx-a6000", "rtx-5090"}


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor(search_k=0)


def test_adding_a_third_owned_card_is_weighed_as_three(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "I have two GTX 1080 Ti 11GB cards. Can they run Qwen2.5-32B at Q4?")
    r = turn(adv, s, "Is it worth adding a third 1080 Ti, or should I sell both and get a used 3090?")
    sized = {c.arguments["gpu"]: c.arguments["gpus"] for c in r.tool_calls if c.name == "size_inference"}
    assert sized["gtx-1080-ti"] == 3 and sized["rtx-3090"] == 1


def test_a_mac_never_spills_to_system_ram() -> None:
    """DeepSeek-R1 at Q8_0 is ~713 GB: on a 512 GB Mac it does not fit — there is no other RAM to run layers from."""
    r = estimate_inference_memory(InferenceMemoryInput(model="deepseek-r1", precision="q8_0", engine="llamacpp",
                                                       gpu="mac-studio-m3-ultra-512gb", context=8192))
    assert r.fits is False and not r.offload_layers


def test_an_inference_card_is_not_offered_for_training(adv: Advisor) -> None:
    r = turn(adv, adv.new_session(), "用 2 张 Atlas 300I Duo 做 Qwen2.5-72B 的 LoRA 微调可以吗")
    assert "推理卡" in r.text.split("\n")[0] and "不能用来训练" in r.text.split("\n")[0]


@pytest.mark.parametrize("text", ["My university has Huawei Ascend 910B cards. Can I run Qwen2.5-32B?",
                                  "My lab has a TITAN RTX."])
def test_an_institution_that_has_cards_owns_them(text: str) -> None:
    assert parse(text).existing


@pytest.mark.parametrize(("text", "gpu", "count"), [
    ("What if I run Qwen2.5-32B instead on the two 1080 Tis", "gtx-1080-ti", 2),
    ("two 4070 Supers for a 14B model", "rtx-4070-super", 2),
])
def test_plural_names_keep_their_suffix(text: str, gpu: str, count: int) -> None:
    assert [(g.gpu, g.count) for g in parse(text).gpus] == [(gpu, count)]


def test_an_8x_hgx_server_is_one_server_of_eight() -> None:
    """'an 8x H200 HGX server': the 200 of H200 is no box count (it was read as 8 nodes, 64 GPUs)."""
    p = parse("A reseller quoted us $289,000 for an 8x H200 HGX server. Is that a fair price?")
    assert [(g.gpu, g.count) for g in p.gpus] == [("h200-sxm", 8)] and p.nodes in (None, 1)


def test_a_second_card_listed_with_zhang_is_owned_too() -> None:
    p = parse("家里有张gtx1080 8g，还有张1660super 6g，能跑qwen3 8b吗")
    assert [e.gpu for e in p.existing or []] == ["gtx-1080", "gtx-1660-super"]


def test_5090d_is_the_card_on_sale() -> None:
    assert parse("5090D现在啥价？京东看到16999，这个价靠谱不").gpus[0].gpu == "rtx-5090-d-v2"
