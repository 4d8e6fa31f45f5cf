"""A model the catalog lacks: named back to the user, its size asked (not its name), and once the size is known
sized under its own name with one line saying it is not catalogued (issue 37, item 7)."""

from __future__ import annotations

import pytest
from fakes.script import one, talk

from advisor.engine import Advisor
from advisor.nlu.rules import parse
from knowledge import load_catalog

GB = 1e9


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize(("text", "name"), [
    ("Can I run Foobar-Large on a 3090?", "Foobar-Large"),
    ("我想本地跑 Zephyr-Orion-30B 做推理，一张4090够吗？", "Zephyr-Orion-30B"),
    ("部署 MyBot-7B 模型要几张卡", "MyBot-7B"),
    ("We want to serve our in-house model AcmeChat-v2 to 20 users", "AcmeChat-v2"),
    ("model is foo_13b-chat, will it fit an L40S?", "foo_13b-chat"),
    ("the Orion 30B model on two A100s?", "Orion 30B"),
    ("I want to fine-tune Mistral-Nemo-12B with LoRA", "Mistral-Nemo-12B"),
    ("想微调 Baize-Med-13B，用什么卡", "Baize-Med-13B"),
])
def test_a_model_name_the_catalog_lacks_is_read(text: str, name: str) -> None:
    assert parse(text, load_catalog()).unknown_model == name


@pytest.mark.parametrize("text", [
    "run Qwen2.5-72B on 2x A100",  # catalogued
    "Run 30B on a 4090",  # a size alone
    "use vLLM with AWQ on two L40S",  # an engine and a precision
    "ZeRO-3 with DeepSpeed on 8 GPUs",  # a training method and a framework
    "run Q4_K_M on a 4090 with Gen5 x16",  # a quantisation and a bus
    "how long to pretrain a 7B llama-style model on 2T tokens?",  # an English compound
    "my boss wants us to run DeepSeek on our own computer",  # a family, not an unknown model
    "If I run the two-card setup 4 hours a day, what does it cost?",
    "300 GPU-hours a month of fine-tuning on H100s",
    "跑 Qwen3.5 用4090行吗",
    "两颗 EPYC 9654 加 8 张 H100",  # a CPU
])
def test_words_that_only_look_like_models_are_not_read_as_one(text: str) -> None:
    assert parse(text, load_catalog()).unknown_model is None


def test_the_size_is_asked_by_the_models_name_and_then_sized_under_it(adv: Advisor) -> None:
    _, (first, second) = talk(adv, "Can I run Foobar-Large on a 3090?", "it has 13B parameters")
    assert first.mode == "ask"
    assert "Foobar-Large is not in my model catalog" in (first.question or "")
    assert "Which model" not in first.text + (first.question or "")
    verdict = second.text.splitlines()[0]
    assert "Foobar-Large" in verdict and "Qwen2.5" not in verdict
    assert "Foobar-Large is not in my model catalog, so it is sized as a 13B model" in second.text
    size = one(second, "size_inference").result
    # a 13B model at Q4_K_M (about 4.8 bits a weight, llama.cpp's K-quant mix) is 7-9 GB of weights, whatever
    # stand-in layout is borrowed: within 15 % of 13e9 * 4.85 / 8
    assert abs(size["weights_total_bytes"] - 13e9 * 4.85 / 8) / (13e9 * 4.85 / 8) < 0.15


def test_a_sized_name_is_answered_at_once_in_chinese(adv: Advisor) -> None:
    _, (reply,) = talk(adv, "我想本地跑 Zephyr-Orion-30B 做推理，一张4090够吗？")
    assert reply.mode == "answer"
    assert "Zephyr-Orion-30B" in reply.text.splitlines()[0]
    assert "Zephyr-Orion-30B 不在我的模型目录里，按 30B 参数" in reply.text


def test_a_catalog_model_named_later_replaces_the_uncatalogued_one(adv: Advisor) -> None:
    session, (_, second) = talk(adv, "Can I run Foobar-Large on a 3090?", "ok then Qwen2.5-14B instead")
    assert session.profile.model_said is None and session.profile.model == "qwen2.5-14b"
    assert "not in my model catalog" not in second.text


@pytest.mark.parametrize(("text", "name"), [
    ("our internal model 'helix-core' — will it run on 2x a100 40gb?", "helix-core"),
    ("ok what about the new 'Orion-X 2' model that dropped last week", "Orion-X 2"),
    ("公司内部有个模型叫“天枢”，不知道多大，想估一下部署要啥卡", "天枢"),
])
def test_a_quoted_model_name_is_read_however_it_is_written(text: str, name: str) -> None:
    assert parse(text, load_catalog()).unknown_model == name


@pytest.mark.parametrize("text", [
    "I fine-tuned llama 3.1 70b on our support tickets (full weights, bf16). what do i need to serve it?",
    "我们自己基于qwen2.5-72b微调了个客服模型，想本地部署推理，要几张卡？",
])
def test_a_fine_tune_already_done_is_the_model_to_serve(text: str) -> None:
    p = parse(text, load_catalog())
    assert p.use_case == "inference" and p.method is None


def test_a_fine_tune_still_to_do_is_training() -> None:
    assert parse("I fine-tuned llama 8b on a 4090 and it ran out of memory, how do I fit it",
                 load_catalog()).use_case == "training"
