"""A model's context window is read and respected: llama.cpp's server started with -c 2048 (older builds'
default), a vLLM server started with a short --max-model-len, and the in-process model's n_ctx. Requests are sized
to the window before they are sent; one that cannot fit is not sent, and the fix is said once a session."""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisor import Advisor
from advisor.backends.context import (
    context_size_for,
    estimate_tokens,
    probe_window,
    window_from_models,
    window_from_props,
)
from advisor.backends.openai_compat import OpenAICompatBackend

try:
    from fakes.chat_server import FakeChatServer, FakeReply
except ImportError:  # tests/ collected as a package
    from tests.fakes.chat_server import FakeChatServer, FakeReply

QUESTION = "llama 3.1 8b fp16 on one RTX 4090, 8k context, 10 users — enough?"
QUESTION_ZH = "两张 4090 跑 Qwen2.5-72B 4bit，32k 上下文，够吗？"


@pytest.fixture
def server():
    with FakeChatServer() as srv:
        srv.script = [FakeReply(content="(fake-llm) It does not fit on one card.")]
        yield srv


def _advisor(srv: FakeChatServer, **kw: Any) -> Advisor:
    return Advisor(llm="openai", openai_base_url=srv.base_url, openai_model="fake-model", llm_timeout_s=3,
                   search_k=0, **kw)


def _chat_posts(srv: FakeChatServer) -> list[dict[str, Any]]:
    return [b for b in srv.requests if "messages" in b]


def _least_prompt_tokens(body: dict[str, Any]) -> int:
    """Fewer tokens than any common tokenizer gives for the request's texts: one per six characters."""
    texts = [str(m.get("content") or "") for m in body["messages"]] + [json.dumps(body.get("tools") or [])]
    return sum(len(t) for t in texts) // 6


# ------------------------------------------------------------------ the window as servers report it
def test_windows_are_read_from_the_shapes_servers_publish() -> None:
    # llama-server b8681 /props (mvysny.github.io/llama-server-endpoints): the slot's context under
    # default_generation_settings
    assert window_from_props({"default_generation_settings": {"n_ctx": 65536}, "total_slots": 4}) == 65536
    # vLLM /v1/models: each model card carries max_model_len
    vllm = {"object": "list", "data": [{"id": "Qwen/Qwen2.5-7B-Instruct", "max_model_len": 32768}]}
    assert window_from_models(vllm, "Qwen/Qwen2.5-7B-Instruct") == 32768
    assert window_from_models(vllm, "another-name") == 32768  # the only model served is the one asked for
    two = {"data": [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 8192}]}
    assert window_from_models(two, "b") == 8192 and window_from_models(two, "c") is None
    for junk in (None, [], "x", {"data": "x"}, {"data": [{"id": "m", "max_model_len": True}]},
                 {"default_generation_settings": {"n_ctx": -1}}, {"data": [{"id": "m", "max_model_len": 0}]}):
        assert window_from_props(junk) is None and window_from_models(junk, "m") is None


def test_a_server_that_says_nothing_has_no_window(server: FakeChatServer) -> None:
    assert probe_window(server.base_url, "fake-model", None) is None
    assert probe_window("http://127.0.0.1:9/v1", "m", None, timeout_s=0.5) is None  # nothing listens: no error


def test_the_backend_asks_once(server: FakeChatServer) -> None:
    server.props = {"default_generation_settings": {"n_ctx": 2048}}
    backend = OpenAICompatBackend(server.base_url, "fake-model")
    assert backend.context_window() == 2048 and backend.context_window() == 2048
    assert server.gets == ["/props"]
    assert OpenAICompatBackend(None, "gpt-4o-mini").context_window() is None  # the hosted API: never probed


def test_estimates_err_on_the_high_side() -> None:
    # Qwen2.5 and Llama 3 tokenizers give about 4 English characters and 1.3–1.5 Chinese characters per token;
    # an estimate below either would overflow a small context
    english = "Two RTX 4090 cards hold a 4-bit 70B model with room for a 32k context for one user."
    chinese = "两张4090跑70B四比特量化模型，单用户32k上下文够用。"
    assert estimate_tokens(english) >= len(english) / 4
    assert estimate_tokens(chinese) >= len(chinese) / 1.3
    assert context_size_for(2100) == 4096 and context_size_for(5000) == 8192 and context_size_for(8192) == 8192


# ------------------------------------------------------------------ requests sized to the window
def test_at_a_2048_token_llama_server_the_tool_path_gives_way_to_the_fact_card(server: FakeChatServer) -> None:
    """llama.cpp's server at -c 2048: the tool path's results (thousands of tokens) do not fit, the
    fact card does, and the reply limit is cut to the room left."""
    server.props = {"default_generation_settings": {"n_ctx": 2048}}
    adv = _advisor(server, llm_tool_calls=True)
    r = adv.reply(QUESTION, adv.new_session())
    posts = _chat_posts(server)
    assert len(posts) == 1 and "tools" not in posts[0]
    assert not any("context" in n for n in r.notices)
    assert "(fake-llm)" in r.text


def test_the_reply_limit_is_cut_to_the_room_left(server: FakeChatServer) -> None:
    server.model_fields = {"max_model_len": 1000}
    adv = _advisor(server)  # max_tokens 700 by default
    adv.reply(QUESTION, adv.new_session())
    (post,) = _chat_posts(server)
    assert 120 <= post["max_tokens"] < 700
    assert post["max_tokens"] + _least_prompt_tokens(post) <= 1000


def test_without_a_window_the_request_is_unchanged(server: FakeChatServer) -> None:
    adv = _advisor(server, max_tokens=300)
    adv.reply(QUESTION, adv.new_session())
    assert _chat_posts(server)[0]["max_tokens"] == 300


@pytest.mark.parametrize(("lang", "question", "fix"), [
    ("en", QUESTION, "--max-model-len 4096"),
    ("zh", QUESTION_ZH, "--max-model-len 4096"),
])
def test_a_window_too_small_for_any_prompt_sends_nothing_and_says_so_once(server: FakeChatServer, lang: str,
                                                                          question: str, fix: str) -> None:
    server.model_fields = {"max_model_len": 256}  # vllm serve … --max-model-len 256
    adv = _advisor(server)
    s = adv.new_session()
    first = adv.reply(question, s)
    assert _chat_posts(server) == []  # nothing sent that could not fit
    said = [n for n in first.notices if "256" in n]
    assert len(said) == 1 and fix in said[0], first.notices
    assert ("上下文" in said[0]) == (lang == "zh")
    computed = Advisor(search_k=0).reply(question, Advisor().new_session())
    assert first.text == computed.text and first.replaced and not first.grounded
    second = adv.reply("and with 16k context?" if lang == "en" else "那 16k 上下文呢？", s)
    assert not any("256" in n for n in second.notices)  # said once a session
    assert _chat_posts(server) == [] and s.said_once == ["context"]
    assert len(s.history) == 4  # nothing lost
    assert any("256" in n for n in adv.reply(question, adv.new_session()).notices)  # a new session hears it


def test_the_model_reading_is_skipped_when_it_cannot_fit(server: FakeChatServer) -> None:
    server.model_fields = {"max_model_len": 128}
    adv = _advisor(server, llm_read_all=True)
    r = adv.reply(QUESTION, adv.new_session())
    assert _chat_posts(server) == [] and r.text
