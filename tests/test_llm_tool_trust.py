"""What a language model's tool calls and explanation may and may not change, against a real chat server.

The model is the fake OpenAI-compatible server on 127.0.0.1 (tests/fakes/chat_server.py); the web app is the real
one (its MCP server included). Each test is a finding that once held:

- a model's tool call for another setup (an injected or simply wrong argument) replaced the plan's stored result,
  so the exported report showed 'Llama-3.1-8B … fits' under a 70B plan: now it is the model's own call — labelled,
  said in a notice, never stored, never in the report or the panel, never evidence for its own explanation;
- wrong explanations passed the number check: a bracketed figure ('[77 GB]'), need and capacity swapped, a card
  count ('two RTX 4090s would be enough' when each card needs 74.9 GB);
- a citation of an id without '/' ('[fake-id]') that is none of the turn's passages was kept;
- the MCP ``chat`` tool failed on every call ('pop index out of range').
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from typing import Any

import pytest

from advisor import Advisor
from advisor.engine import Reply
from advisor.session import Session
from advisor.toolspec import run_tool
from advisor.ui import render
from advisor.ui.i18n import t
from knowledge.messages import msg

try:
    from fakes.chat_server import FakeChatServer, FakeReply
except ImportError:  # tests/ collected as a package
    from tests.fakes.chat_server import FakeChatServer, FakeReply

GB = 1e9
QUESTION = "Can two RTX 4090s run Llama-3.1-70B in FP16 with 8k context?"
QUESTION_ZH = "两张 RTX 4090 能跑 FP16 的 Llama-3.1-70B 吗？8k 上下文"
PLAN = {"model": "llama-3.1-70b", "gpu": "rtx-4090", "gpus": 2, "precision": "fp16", "context": 8192}
MODEL_ARGS = {"model": "llama-3.1-70b", "gpu": "RTX 4090", "gpus": 2, "precision": "fp16", "context": 8192}
OWN_NOTICE = msg("en", "engine.llm.own_call", tool="{tool}", changes="{changes}").split("{changes}")[1]


@pytest.fixture
def server():
    with FakeChatServer() as srv:
        yield srv


def _advisor(srv: FakeChatServer, **kw: Any) -> Advisor:
    return Advisor(llm="openai", openai_base_url=srv.base_url, openai_model="fake-model", llm_timeout_s=5,
                   llm_tool_calls=True, search_k=0, **kw)


def _planned(reply: Reply) -> dict[str, Any]:
    call = next(c for c in reply.tool_calls if c.name == "size_inference" and c.by == "planner")
    assert call.ok and not call.result["fits"]
    return call.result


def _calling(arguments: dict[str, Any], explain: Any) -> Any:
    """A fake model: one ``size_inference`` call with ``arguments``, then ``explain(its result)`` as the text."""
    def script(body: dict[str, Any]) -> FakeReply:
        mine = [m for m in body["messages"] if m.get("role") == "tool" and m.get("tool_call_id") == "call_0"]
        if not mine:
            return FakeReply(tool_calls=[("size_inference", json.dumps(arguments))])
        return FakeReply(content=explain(json.loads(mine[-1]["content"])))
    return script


# ----------------------------------------------------------------------------- a model's own tool calls

INJECTED = [  # (what the model changed, the field of its result it then quotes: a figure only its call has)
    ({"model": "llama-3.1-8b"}, "per_gpu_bytes"),
    ({"gpu": "A100 80GB"}, "reserved_bytes"),
    ({"gpus": 4}, "per_gpu_bytes"),
    ({"context": 131072}, "per_gpu_bytes"),
    ({"precision": "bf16"}, None),  # the same sizes under another name: its own call all the same
]


@pytest.mark.parametrize(("change", "field"), INJECTED)
def test_a_model_call_for_another_setup_never_replaces_the_plan(server: FakeChatServer, change: dict[str, Any],
                                                                field: str | None) -> None:
    def explain(result: dict[str, Any]) -> str:
        inner = result.get("result", result)
        quoted = f" With those settings the figure is {inner[field] / GB:.1f} GB." if field else ""
        return "(fake-llm) It does not fit on the two cards in FP16." + quoted

    server.script = _calling({**MODEL_ARGS, **change}, explain)
    adv = _advisor(server)
    session = adv.new_session()
    reply = adv.reply(QUESTION, session)

    own = [c for c in reply.tool_calls if c.by == "llm"]
    assert len(own) == 1 and own[0].call_id.startswith("own_") and own[0].ok
    assert reply.to_json()["tool_calls"][reply.tool_calls.index(own[0])]["own_call"] is True
    # the plan's result stays the session's: the report, the side panel and a later 'why?' read it
    stored = session.last_results["size_inference"]
    assert stored.by == "planner" and {k: stored.arguments[k] for k in PLAN} == PLAN
    assert all(c.by == "planner" for c in session.last_results.values())
    report = adv.export(session)
    assert "Llama-3.1-70B" in report and f"{stored.result['per_gpu_bytes'] / GB:.1f} GB" in report
    assert "Llama-3.1-8B" not in report  # the red team's report: 'Llama-3.1-8B … fits' under the 70B plan
    # said, labelled in the steps, and marked for the model itself
    assert any(OWN_NOTICE in n for n in reply.notices), reply.notices
    step = render.tool_step_message(own[0], "en")
    assert t("own_call", "en") in step.metadata["title"]
    fed_back = [m for m in server.requests[-1]["messages"] if m.get("role") == "tool" and m["tool_call_id"] == "call_0"]
    assert json.loads(fed_back[0]["content"])["own_call_not_the_plan"] is True
    # never evidence: a figure only the model's own call has is not kept
    if field:
        figure = f"{own[0].result[field] / GB:.1f} GB"
        assert figure not in reply.text and reply.grounded is False
        assert "(fake-llm) It does not fit on the two cards in FP16." in reply.text  # the rest is kept


def test_a_model_call_for_the_plans_own_setup_is_evidence_but_does_not_replace_it(server: FakeChatServer) -> None:
    """The plan's setup in other spellings ('Llama-3.1-70B', 'FP16') is the plan's: its figures may be quoted."""
    spelled = {"model": "Llama-3.1-70B", "gpu": "RTX 4090", "gpus": 2, "precision": "FP16", "context": 8192,
               "batch": 1}
    server.script = _calling(spelled, lambda r: f"(fake-llm) It does not fit: it needs {r['per_gpu_bytes'] / GB:.1f} "
                                                f"GB per GPU.")
    adv = _advisor(server)
    session = adv.new_session()
    reply = adv.reply(QUESTION, session)
    mine = next(c for c in reply.tool_calls if c.by == "llm")
    assert not mine.call_id.startswith("own_") and reply.grounded is True and reply.notices == []
    assert session.last_results["size_inference"].by == "planner"  # the plan had this tool's result already


def test_the_model_cannot_move_a_follow_up_onto_its_own_setup(server: FakeChatServer) -> None:
    """After an injected call, the next turn continues the user's plan, not the model's."""
    server.script = _calling({**MODEL_ARGS, "model": "llama-3.1-8b"}, lambda r: "(fake-llm) It does not fit.")
    adv = _advisor(server)
    session = adv.new_session()
    adv.reply(QUESTION, session)
    server.script = [FakeReply(content="(fake-llm) It still does not fit.")]
    follow = adv.reply("and with 16k context?", session)
    size = next(c for c in follow.tool_calls if c.name == "size_inference" and c.by == "planner")
    assert size.arguments["model"] == "llama-3.1-70b" and size.arguments["context"] == 16384


# ----------------------------------------------------------------------------- the number check


def _explained(server: FakeChatServer, text: Any) -> tuple[Reply, dict[str, Any]]:
    """The turn explained by ``text``; asked in Chinese when the explanation is Chinese (a reply must be in the
    user's language)."""
    server.script = lambda body: FakeReply(content=text(_size_fed_back(body)))
    chinese = re.search(r"[\u4e00-\u9fff]", text({"per_gpu_bytes": 1, "reserved_bytes": 1}))
    reply = _advisor(server).reply(QUESTION_ZH if chinese else QUESTION, Session())
    return reply, _planned(reply)


def _size_fed_back(body: dict[str, Any]) -> dict[str, Any]:
    return next(json.loads(m["content"]) for m in body["messages"] if m.get("role") == "tool"
                and m["name"] == "size_inference")


def _need(r: dict[str, Any]) -> str:
    return f"{r['per_gpu_bytes'] / GB:.1f} GB"


def _usable(r: dict[str, Any]) -> str:
    return f"{r['reserved_bytes'] / GB:.1f} GB"


WRONG = [  # each a second sentence after a right first one: it must go (the sentence, or the whole explanation)
    lambda r: "It needs [77 GB] per GPU.",  # a bracketed figure is a figure
    lambda r: f"Each card offers {_need(r)}, while the model requires {_usable(r)}.",  # need and capacity swapped
    lambda r: f"The card provides {_need(r)} but the model would use {_usable(r)}.",
    lambda r: f"显存为 {_need(r)}，模型需要 {_usable(r)}。",
    lambda r: "Two RTX 4090s would be enough for it.",  # two do not fit: each needs 74.9 GB
    lambda r: "With 2× RTX 4090 it would be enough anyway.",
    lambda r: "Four RTX 4090s would be enough.",  # no tool sized four
    lambda r: "两张 4090 其实就够了。",  # also a 'fits' claim against the verdict: the whole explanation goes
    lambda r: "双卡足够。",
]


@pytest.mark.parametrize("wrong", WRONG)
def test_wrong_brackets_roles_and_card_counts_are_removed(server: FakeChatServer, wrong: Any) -> None:
    reply, size = _explained(server, lambda r: f"(fake-llm) It does not fit: it needs {_need(r)} per GPU. {wrong(r)}")
    assert wrong(size) not in reply.text and reply.grounded is False
    if not reply.replaced:  # the right sentence stays, and the user is told one went
        assert f"(fake-llm) It does not fit: it needs {_need(size)} per GPU." in reply.text
        assert any("sentences were removed" in n for n in reply.notices), reply.notices


RIGHT = [
    lambda r: f"(fake-llm) It does not fit: it needs [{_need(r)}] per GPU but vLLM can use only [{_usable(r)}].",
    lambda r: f"(fake-llm) It does not fit: the model requires {_need(r)} per GPU (the card offers {_usable(r)}).",
    lambda r: f"(fake-llm) 放不下：每卡需要 {_need(r)}，可用显存为 {_usable(r)}。",
    lambda r: f"(fake-llm) It does not fit on two RTX 4090s: each needs {_need(r)} and offers {_usable(r)}.",
    lambda r: f"(fake-llm) 两张 4090 放不下：每卡需要 {_need(r)}。",
]


@pytest.mark.parametrize("right", RIGHT)
def test_right_brackets_roles_and_card_counts_are_kept(server: FakeChatServer, right: Any) -> None:
    reply, size = _explained(server, right)
    assert right(size) in reply.text and reply.grounded is True, reply.notices


# ----------------------------------------------------------------------------- citations


@pytest.mark.parametrize("cite", ["[fake-id]", "[kb03]", "[1]", "[made-up/en/source]"])
def test_citations_of_passages_the_turn_does_not_have_are_removed(server: FakeChatServer, cite: str) -> None:
    reply, size = _explained(server, lambda r: f"(fake-llm) It does not fit: it needs {_need(r)} per GPU {cite}.")
    assert cite not in reply.text and f"it needs {_need(size)} per GPU." in reply.text
    assert any("do not exist" in n and cite.strip("[]") in n for n in reply.notices), reply.notices


# ----------------------------------------------------------------------------- MCP


async def _mcp_chat(url: str, arguments: dict[str, Any]) -> dict[str, Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url + "gradio_api/mcp/") as (read, write, _), ClientSession(read, write) as mcp:
        await mcp.initialize()
        result = await mcp.call_tool("chat", arguments)
    assert not result.isError, result.content
    payload = ast.literal_eval(result.content[0].text)  # Gradio sends the dict as its Python text
    assert isinstance(payload, dict)
    return payload


def test_the_mcp_chat_tool_answers_over_http_and_keeps_no_conversation_between_clients() -> None:
    pytest.importorskip("mcp")
    from ui_harness import running_app

    app = running_app()
    first = asyncio.run(_mcp_chat(app.url, {"message": "Can one RTX 4090 run Llama-3.1-8B in FP16 at 8k context?"}))
    size = next(c for c in first["tool_calls"] if c["name"] == "size_inference")
    direct = run_tool("size_inference", size["arguments"])
    assert size["result"]["per_gpu_bytes"] == direct.result["per_gpu_bytes"]
    assert f"{direct.result['per_gpu_bytes'] / GB:,.1f} GB" in first["reply"]
    # another MCP call (another client, same loopback inside Gradio) starts fresh …
    other = asyncio.run(_mcp_chat(app.url, {"message": "and with two cards?"}))
    assert not any(c["name"] == "size_inference" and c["arguments"].get("model") == "llama-3.1-8b"
                   for c in other["tool_calls"])
    # … and one that passes the session back continues it
    follow = asyncio.run(_mcp_chat(app.url, {"message": "and with two cards?", "session": first["session"]}))
    size2 = next(c for c in follow["tool_calls"] if c["name"] == "size_inference" and c["by"] == "planner")
    assert size2["arguments"]["model"] == "llama-3.1-8b" and size2["arguments"]["gpus"] == 2
