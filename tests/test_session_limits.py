"""Bounded memory per conversation and per server: old tool results are dropped, idle sessions removed,
and only so many sessions kept (issue 21: RSS grew 325 → 777 MB over 480 turns and never came back)."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from advisor.session import FULL_RESULTS_KEPT, Session, ToolCall, Turn
from advisor.ui import render
from advisor.ui.expiry import SessionSweeper, limits
from advisor.ui.state import UIState

# a conversation that sizes something on every turn (each sizing turn stores ~200 kB of tool results)
TURNS = [
    "I need GPUs for inference serving",
    "Llama 3.1 70B, 8192 tokens of context, 16 concurrent users",
    "budget $60000",
    "no CUDA requirement, nothing domestic, no existing hardware",
    "on two H100 SXM",
    "what about FP8?",
    "what about int4?",
    "what about four cards?",
    "and with 16k context?",
    "what about 32 users?",
    "what about A100 80GB?",
    "what about FP16?",
]


def _answer(*results: dict) -> Turn:
    return Turn(role="assistant", text="answer",
                tool_calls=[ToolCall(name="size_inference", arguments={"context": 8192}, result=r) for r in results])


def test_older_answers_keep_their_inputs_but_not_their_results() -> None:
    s = Session()
    for i in range(4):
        s.history += [Turn(role="user", text=f"q{i}"), _answer({"per_gpu_bytes": i})]
    s.last_results["size_inference"] = latest = s.history[-1].tool_calls[0]
    s.trim(50)
    answers = [t for t in s.history if t.role == "assistant"]
    assert FULL_RESULTS_KEPT == 2  # the latest answer may compare with the one before it
    for turn in answers[:-2]:
        call = turn.tool_calls[0]
        assert call.result is None and call.result_dropped and call.arguments == {"context": 8192}
    assert [a.tool_calls[0].result for a in answers[-2:]] == [{"per_gpu_bytes": 2}, {"per_gpu_bytes": 3}]
    assert s.result("size_inference") == {"per_gpu_bytes": 3} and latest.result is not None
    back = Session.from_json(s.to_json())  # a trimmed session saves and loads
    assert back.history[1].tool_calls[0].result_dropped


def test_a_long_conversation_stays_about_as_large_as_a_short_one() -> None:
    from advisor import Advisor

    adv = Advisor()
    s = adv.new_session()
    sizes = []
    for text in TURNS:
        adv.reply(text, s)
        sizes.append(len(s.to_json()))
    # one sizing turn's full results is the unit: before, every turn added one (12 turns: ~2.5 MB)
    assert max(sizes[6:]) < 1.6 * max(sizes[1:3]), sizes
    # what-ifs still compare with the previous answer, whose result the session keeps
    reply = adv.reply("what about FP8?", s)
    assert "FP8" in reply.text or "fp8" in reply.text


def test_a_resumed_session_says_where_results_were_not_kept() -> None:
    s = Session()
    for i in range(3):
        s.history += [Turn(role="user", text=f"q{i}"), _answer({"per_gpu_bytes": i})]
    s.trim(50)
    text = json.dumps([m.content for m in render.history_messages(s, "zh")], ensure_ascii=False)
    assert render.t("tool_result_dropped", "zh") in text
    assert text.count(render.t("tool_result_dropped", "zh")) == 1  # the last two answers' steps are whole


def test_the_chat_on_the_page_links_each_raw_result_instead_of_carrying_it() -> None:
    from advisor.toolspec import run_tool
    from advisor.ui.results import PATH_PREFIX, STORE

    messages: list = []
    raw = 0
    for i in range(3):
        sized = run_tool("size_inference", {"model": "llama-3.1-70b", "context": 4096 * (i + 1)}).result
        assert sized is not None
        raw += len(json.dumps(sized))
        messages.append(render.user_message(f"q{i}"))
        messages += render.reply_messages(_answer(sized), "en")
    steps = [m for m in messages if "parent_id" in (m.metadata or {})]
    assert [m.content.count("```json") for m in steps] == [1, 1, 1]  # the inputs only
    links = [re.search(PATH_PREFIX + r"([0-9a-f]{32})", m.content) for m in steps]
    assert all(links)
    served = json.loads(STORE.get(links[-1].group(1)) or b"null")  # what the link serves: the whole result
    assert served["context"] == 3 * 4096 and served["per_gpu_bytes"] > 70e9
    assert sum(len(m.content) for m in steps) < 0.3 * raw  # the raw JSON was most of a turn


# ------------------------------------------------------------------ the server's sessions


def _holder_with(sessions: dict[str, tuple[object, float]]):
    """A real Gradio StateHolder with one State per session, last used ``age`` seconds ago."""
    import gradio as gr
    from gradio.state_holder import StateHolder

    with gr.Blocks() as demo:
        state = gr.State(None)
    holder = StateHolder()
    holder.set_blocks(demo)
    now = dt.datetime.now()
    for sid, (value, age) in sessions.items():
        holder[sid][state._id] = value
        holder.time_last_used[sid] = now - dt.timedelta(seconds=age)
    return demo, holder


def test_idle_sessions_are_removed_but_not_recent_or_running_ones() -> None:
    idle, recent, running = (UIState(session=Session()) for _ in range(3))
    running.busy = True
    demo, holder = _holder_with({"idle": (idle, 7200), "recent": (recent, 60), "running": (running, 7200),
                                 "api": (Session(), 7200)})
    assert SessionSweeper(demo, idle_s=3600).sweep() == 2
    assert set(holder.session_data) == {"recent", "running"} == set(holder.time_last_used)
    assert idle.closed and not recent.closed  # a late event of the removed tab shows nothing


def test_session_limits_from_the_environment() -> None:
    assert limits({}) == limits({"GPU_ADVISOR_SESSION_IDLE_S": " "})
    assert limits({}).idle_s == 4 * 3600 and limits({}).max_sessions == 256
    got = limits({"GPU_ADVISOR_SESSION_IDLE_S": "90", "GPU_ADVISOR_MAX_SESSIONS": "8"})
    assert (got.idle_s, got.max_sessions) == (90, 8)
    for name, value in [("GPU_ADVISOR_SESSION_IDLE_S", "5"), ("GPU_ADVISOR_SESSION_IDLE_S", "nan"),
                        ("GPU_ADVISOR_SESSION_IDLE_S", "inf"), ("GPU_ADVISOR_MAX_SESSIONS", "0"),
                        ("GPU_ADVISOR_MAX_SESSIONS", "2.5"), ("GPU_ADVISOR_MAX_SESSIONS", "lots")]:
        with pytest.raises(ValueError, match=name):
            limits({name: value})


def test_a_bad_session_limit_stops_the_server_with_one_line(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from ui_harness import free_port

    from advisor import serve

    monkeypatch.setenv("GPU_ADVISOR_MAX_SESSIONS", "-1")
    assert serve.serve("127.0.0.1", free_port(), "") == 2
    err = capsys.readouterr().err
    assert "GPU_ADVISOR_MAX_SESSIONS" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_beyond_the_session_bound_the_least_recent_conversation_starts_over(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("gradio_client")
    from gradio_client import Client
    from ui_harness import launch

    monkeypatch.setenv("GPU_ADVISOR_MAX_SESSIONS", "2")
    app = launch()
    try:
        first, second, third = (Client(app.url, verbose=False, download_files=False) for _ in range(3))
        first.predict("I need GPUs for inference serving", api_name="/chat")
        out = first.predict("Llama 3.1 8B on one RTX 4090", api_name="/chat")
        assert sum(t["role"] == "user" for t in json.loads(out["session"])["history"]) == 2
        second.predict("I need GPUs for inference serving", api_name="/chat")
        out = second.predict("Llama 3.1 8B on one RTX 4090", api_name="/chat")
        assert sum(t["role"] == "user" for t in json.loads(out["session"])["history"]) == 2
        third.predict("hello", api_name="/chat")  # a third session: the least recently used one goes
        out = second.predict("what about FP8?", api_name="/chat")  # the other one is still whole
        assert sum(t["role"] == "user" for t in json.loads(out["session"])["history"]) == 3
        out = first.predict("what about FP8?", api_name="/chat")
        assert sum(t["role"] == "user" for t in json.loads(out["session"])["history"]) == 1
    finally:
        app.demo.close()


def test_the_tool_result_cache_is_bounded_by_size(monkeypatch: pytest.MonkeyPatch) -> None:
    from advisor import toolspec

    monkeypatch.setattr(toolspec, "_CACHE", type(toolspec._CACHE)())
    monkeypatch.setattr(toolspec, "_cache_chars", 0)
    monkeypatch.setattr(toolspec, "_CACHE_CHARS", 20_000)
    sizes = []
    for context in range(4096, 4096 + 12 * 512, 512):  # twelve different calls, ~4 k characters each
        call = toolspec.run_tool("size_inference", {"model": "llama-3.1-70b", "context": context})
        sizes.append(len(json.dumps(call.result, ensure_ascii=False)))
    held = sum(len(text) for text in toolspec._CACHE.values())
    assert held <= 20_000 < sum(sizes) and held == toolspec._cache_chars
    again = toolspec.run_tool("size_inference", {"model": "llama-3.1-70b", "context": 4096 + 11 * 512})
    assert again.result == call.result  # the newest is still served from the cache, equal to a fresh run


def _talked(text: str = "Llama 3.1 8B inference on one RTX 4090") -> Session:
    from advisor import Advisor

    session = Session()
    Advisor().reply(text, session)
    return session


def test_under_memory_pressure_idle_conversations_are_parked_and_come_back_whole() -> None:
    from advisor.ui.parking import Parking

    idle, recent, running = (UIState(session=_talked(), lang="en", last_sent=3) for _ in range(3))
    running.busy = True
    box = {"session": _talked("RTX 4090 vs A100 for 70B")}
    demo, holder = _holder_with({"idle": (idle, 120), "recent": (recent, 10), "running": (running, 120),
                                 "api": (box, 120)})
    parking = Parking(max_age_s=3600)
    sweeper = SessionSweeper(demo, idle_s=3600, parking=parking)
    assert sweeper.sweep(pressure=False) == 0  # two minutes idle is not enough without pressure
    assert sweeper.sweep(pressure=True) == 2
    assert set(holder.session_data) == {"recent", "running"}
    back = parking.take("idle")
    assert back is not None and (back.lang, back.last_sent) == ("en", 3)
    assert back.session.to_json() == idle.session.to_json()
    api = parking.take("api")
    assert api is not None and api.session.history[0].text == "RTX 4090 vs A100 for 70B"
    assert parking.take("idle") is None and len(parking) == 0  # taken once


def test_memory_pressure_is_measured_against_the_lowest_use_seen() -> None:
    demo, _ = _holder_with({})
    sweeper = SessionSweeper(demo, idle_s=3600)
    assert not sweeper.under_pressure()  # the first reading is the floor
    assert sweeper.floor_mb is not None
    sweeper.floor_mb /= 2  # as if the server had once used half of what it uses now
    assert sweeper.under_pressure()


def test_parked_conversations_expire_and_are_bounded() -> None:
    from advisor.ui.parking import Parking

    parking = Parking(max_age_s=600, max_items=2)
    session = _talked()
    parking.park("old", session, idle_s=700)  # idle longer than the age limit already
    assert parking.take("old") is None
    for key in ("a", "b", "c"):
        parking.park(key, session)
    assert parking.take("a") is None and parking.take("c") is not None


def test_an_api_conversation_taken_out_of_memory_goes_on_where_it_was() -> None:
    pytest.importorskip("gradio_client")
    from gradio_client import Client
    from ui_harness import launch

    app = launch()
    try:
        client = Client(app.url, verbose=False, download_files=False)
        client.predict("I need GPUs for inference serving", api_name="/chat")
        client.predict("Llama 3.1 8B on one RTX 4090", api_name="/chat")
        later = dt.datetime.now() + dt.timedelta(seconds=120)
        assert SessionSweeper(app.demo, idle_s=3600).sweep(now=later, pressure=True) >= 1
        assert not app.demo.state_holder.session_data  # nothing of it left in Gradio's sessions
        out = client.predict("what about FP8?", api_name="/chat")
        history = json.loads(out["session"])["history"]
        assert sum(t["role"] == "user" for t in history) == 3
        assert history[0]["text"] == "I need GPUs for inference serving"
    finally:
        app.demo.close()
