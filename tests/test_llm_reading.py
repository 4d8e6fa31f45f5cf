"""The optional LLM reading of every message (advisor/nlu/llm_fill.py), reconciled with the rules' reading.

The model must fill the typed schema (sent as ``response_format``); only fields the parser left empty are
taken, a number only if the message writes it, a name only if it is copied from the message and the catalog
knows it, a use only with the words that show it; where both read a value and differ, the rules' value stands
and the difference is said back. Without an LLM nothing is asked.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisor import Advisor
from advisor.nlu import llm_fill, parse
from advisor.nlu.llm_fill import Understanding

try:
    from fakes.chat_server import FakeChatServer, FakeReply
except ImportError:  # tests/ collected as a package
    from tests.fakes.chat_server import FakeChatServer, FakeReply

VAGUE_ZH = "帮我看看弄个什么设备合适，二十来口子天天跟它唠嗑"  # colloquial: the rules miss the use and the 20
READING = {"use_case": "inference", "use_case_words": "唠嗑", "model": "Qwen2.5-72B", "gpu": "",
           "gpu_count": 0, "budget": 50000, "currency": "CNY", "context_tokens": 0, "users": 20}


def _model(reading: dict[str, Any] | str) -> Any:
    """A fake model: answers a schema-constrained request with ``reading``, anything else with a plain
    explanation."""
    def script(body: dict[str, Any]) -> FakeReply:
        if "response_format" in body:
            return FakeReply(content=reading if isinstance(reading, str) else json.dumps(reading, ensure_ascii=False))
        return FakeReply(content="[fake-llm] 这是计算结果的解释。")
    return script


@pytest.fixture
def server():
    with FakeChatServer() as srv:
        yield srv


def _advisor(srv: FakeChatServer, read_all: bool = False) -> Advisor:
    return Advisor(llm="openai", openai_base_url=srv.base_url, openai_model="fake-model", llm_timeout_s=5,
                   search_k=0, llm_read_all=read_all)


def test_by_default_a_message_the_rules_place_is_not_sent_for_reading(server: FakeChatServer) -> None:
    server.script = _model(READING)
    adv = _advisor(server)
    r = adv.reply("llama 3.1 8b fp16 on one RTX 4090, 8k context, 10 users — enough?", adv.new_session())
    assert not any("response_format" in b for b in server.requests) and r.read_by_llm == []


def test_the_rules_leave_this_message_unplaced() -> None:
    parsed = parse(VAGUE_ZH, context=False)
    assert llm_fill.unplaced(parsed) and parsed.concurrency is None and parsed.use_case is None


def test_the_model_fills_what_the_parser_left_empty_and_only_what_the_message_says(server: FakeChatServer) -> None:
    server.script = _model(READING)
    adv = _advisor(server)
    s = adv.new_session()
    r = adv.reply(VAGUE_ZH, s)
    sent = next(b for b in server.requests if "response_format" in b)
    schema = sent["response_format"]["json_schema"]["schema"]
    assert sorted(schema["required"]) == sorted(llm_fill.FILL_FIELDS) and schema["additionalProperties"] is False
    assert r.read_by_llm == ["use_case", "concurrency"]  # the model's 72B and ¥50,000 are not in the message
    assert s.profile.use_case == "inference" and s.profile.concurrency == 20
    assert s.profile.model != "qwen2.5-72b" and s.profile.budget is None  # the stand-in model, said as assumed
    assert s.profile.service_model and "没说用哪个模型" in r.text
    assert any("语言模型" in n for n in r.notices) and r.to_json()["read_by_llm"] == ["use_case", "concurrency"]


def test_every_message_is_read_and_a_disagreement_is_said_back_with_the_rules_value_kept(
        server: FakeChatServer) -> None:
    text = "llama 3.1 8b fp16 on one RTX 4090, 8k context, 10 users at once out of 40 staff — enough?"
    # the model takes the head count for the users at once; both numbers are written, so both pass the span check
    server.script = _model({**READING, "use_case": "unknown", "model": "", "budget": 0, "currency": "unknown",
                            "users": 40})
    adv = _advisor(server, read_all=True)
    s = adv.new_session()
    r = adv.reply(text, s)
    assert any("response_format" in b for b in server.requests)
    assert s.profile.concurrency == 10  # the rules' reading stands
    assert any("10" in n and "40" in n and "language model" in n for n in r.notices), r.notices


def test_agreeing_readings_say_nothing_more(server: FakeChatServer) -> None:
    server.script = _model({**READING, "use_case": "unknown", "model": "", "budget": 0, "currency": "unknown",
                            "users": 10})
    adv = _advisor(server, read_all=True)
    r = adv.reply("llama 3.1 8b fp16 on one RTX 4090, 8k context, 10 users — enough?", adv.new_session())
    assert r.read_by_llm == [] and not any("language model read" in n for n in r.notices)


@pytest.mark.parametrize("garbage", ["not json", "[1, 2]", '{"users": "many"}', "{" * 50_000])
def test_a_broken_reading_changes_nothing(server: FakeChatServer, garbage: str) -> None:
    server.script = _model(garbage)
    adv = _advisor(server)
    s = adv.new_session()
    r = adv.reply(VAGUE_ZH, s)
    assert r.read_by_llm == [] and s.profile.concurrency is None and r.mode != "error"


def test_without_an_llm_nothing_is_read() -> None:
    adv = Advisor(search_k=0)
    r = adv.reply(VAGUE_ZH, adv.new_session())
    assert r.read_by_llm == []


def _fill(text: str, **reading: Any) -> tuple[Any, list[str]]:
    return llm_fill.fill(parse(text, context=False), Understanding(**reading), context=False)


def test_numbers_are_taken_only_as_written() -> None:
    text = "a box for our chat assistant, about twenty people at once with 32k of context, ten grand to spend"
    written = llm_fill.statement(Understanding(users=20, context_tokens=32768, budget=10000, currency="USD"), text)
    assert written == "budget: 10000 USD; context 32768 tokens; 20 users at once"  # '32k' also reads as 32,768
    invented = llm_fill.statement(Understanding(users=25, context_tokens=8192, budget=12000, currency="USD",
                                                gpu_count=4), text)
    assert invented == ""
    assert llm_fill.statement(Understanding(budget=10000), text) == ""  # no currency: not a budget


def test_names_must_be_copied_and_known() -> None:
    text = "thinking of running deepseek r1 distill qwen 32b on the company box"
    _, names = _fill(text, model="Llama-3.1-70B")  # not in the message
    assert "model" not in names
    _, names = _fill("嗯那个显卡 H300 可以不", gpu="H300")  # copied, but no such GPU
    assert "gpus" not in names


def test_a_use_needs_the_words_that_show_it() -> None:
    text = "公司里大概二十来个人，帮我看看弄个什么设备合适"
    _, names = _fill(text, use_case="training", use_case_words="")
    assert "use_case" not in names
    _, names = _fill(text, use_case="training", use_case_words="训练模型")  # not in the message
    assert "use_case" not in names
