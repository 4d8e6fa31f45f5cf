"""Helpers for multi-turn dialogue tests: run a turn, pick tool calls, check the reply quotes the tools."""

from __future__ import annotations

from typing import Any

from advisor.engine import Advisor, Reply
from advisor.grounding import check, evidence_from
from advisor.session import Session, ToolCall
from advisor.toolspec import run_tool

GB, GiB = 1e9, 2**30


def calls(reply: Reply, name: str) -> list[ToolCall]:
    return [c for c in reply.tool_calls if c.name == name]


def alternatives(reply: Reply, name: str) -> list[ToolCall]:
    """Calls the planner added beside the requested configuration (other precisions, engines, counts)."""
    return [c for c in calls(reply, name) if c.call_id.startswith("alt_")]


def one(reply: Reply, name: str) -> ToolCall:
    """The one call of ``name`` for the requested configuration (alternatives beside it not counted)."""
    found = [c for c in calls(reply, name) if not c.call_id.startswith("alt_")]
    assert len(found) == 1, f"expected one {name} call, got {[c.name for c in reply.tool_calls]}"
    assert found[0].ok, found[0].error
    return found[0]


def recompute(call: ToolCall) -> dict[str, Any]:
    """The same tool run again, directly, with the arguments the engine used."""
    fresh = run_tool(call.name, call.arguments)
    assert fresh.ok, fresh.error
    return fresh.result


def gb(n: float) -> str:
    return f"{n / GB:,.1f} GB"


def gib(n: float) -> str:
    return f"{n / GiB:,.1f} GiB"


def assert_grounded(reply: Reply, session: Session) -> None:
    """Every number in the reply matches a tool result, the profile, a passage or the user's words."""
    items: list[Any] = []
    earlier = [c for t in session.history for c in t.tool_calls]
    for c in [*reply.tool_calls, *session.last_results.values(), *earlier]:
        if c.ok:
            items += [(c.name, c.result), c.arguments]
    items.append(session.profile.model_dump(mode="json"))
    texts = [f"{c.title} {c.text}" for c in reply.citations] + [t.text for t in session.history if t.role == "user"]
    body = reply.text.replace(reply.question, "") if reply.question else reply.text  # examples in questions
    report = check(body, evidence_from(items, texts))
    assert report.ok, f"ungrounded numbers: {report.bad_numbers}"


def turn(adv: Advisor, session: Session, text: str, **kw: Any) -> Reply:
    reply = adv.reply(text, session, **kw)
    assert reply.text.strip()
    return reply


def talk(adv: Advisor, *messages: str) -> tuple[Session, list[Reply]]:
    """A new conversation of ``messages``, one turn each: the session and every reply."""
    session = adv.new_session()
    return session, [adv.reply(m, session) for m in messages]


def ok_calls(reply: Reply, name: str) -> list[ToolCall]:
    """The calls of a tool that succeeded this turn."""
    return [c for c in reply.tool_calls if c.name == name and c.ok]
