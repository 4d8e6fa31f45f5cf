"""The advisor's limits are explicit, documented and enforced with a message — never a crash.

| limit | setting (environment) | default |
|---|---|---|
| characters read from one message | ``max_message_chars`` (``ADVISOR_MAX_MESSAGE_CHARS``) | 8,000 |
| turns kept in a session's history | ``max_turns_kept`` (``ADVISOR_MAX_TURNS_KEPT``) | 50 |
| LLM tool-call rounds per turn | ``max_tool_steps`` (``ADVISOR_MAX_TOOL_STEPS``) | 4 |
| seconds one LLM request / one whole turn may take | ``llm_timeout_s`` / ``turn_timeout_s`` | 30 / 90 |
| knowledge-search query length / results | ``knowledge.search.MAX_QUERY_CHARS`` / ``MAX_K`` | 1,000 / 50 |
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

import advisor.settings as settings_module
from advisor import Advisor
from advisor.cli import main as cli_main
from advisor.session import Session
from advisor.settings import Settings
from knowledge.search import MAX_K, MAX_QUERY_CHARS, search

try:
    from fakes.chat_server import FakeChatServer, FakeReply
except ImportError:  # tests/ collected as a package
    from tests.fakes.chat_server import FakeChatServer, FakeReply

ENV = {
    "max_message_chars": "ADVISOR_MAX_MESSAGE_CHARS",
    "max_turns_kept": "ADVISOR_MAX_TURNS_KEPT",
    "max_tool_steps": "ADVISOR_MAX_TOOL_STEPS",
    "llm_timeout_s": "ADVISOR_LLM_TIMEOUT_S",
    "turn_timeout_s": "ADVISOR_TURN_TIMEOUT_S",
}


def test_every_limit_is_documented_with_its_real_default() -> None:
    """The table in advisor/settings.py names each limit's variable and the default the code uses."""
    doc = settings_module.__doc__ or ""
    defaults = Settings.model_fields
    for field, var in ENV.items():
        row = next((line for line in doc.splitlines() if var in line), None)
        assert row, f"{var} is not documented in advisor/settings.py"
        default = defaults[field].default
        shown = re.sub(r"[,\s]", "", row.rsplit("|", 2)[-2])
        assert f"{default:g}" in shown.split("/") or f"{default:g}" == shown, (var, default, row)


def test_the_limits_can_be_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var, value in (("ADVISOR_MAX_MESSAGE_CHARS", "1234"), ("ADVISOR_MAX_TURNS_KEPT", "7"),
                       ("ADVISOR_MAX_TOOL_STEPS", "2")):
        monkeypatch.setenv(var, value)
    s = Settings()
    assert (s.max_message_chars, s.max_turns_kept, s.max_tool_steps) == (1234, 7, 2)


# ------------------------------------------------------------------------------------------- message length
def test_a_message_over_the_limit_is_cut_with_a_notice_naming_the_limit() -> None:
    adv = Advisor(max_message_chars=200)
    session = adv.new_session()
    text = "Llama 3.1 8B inference on one RTX 4090. " + "z" * 400
    reply = adv.reply(text, session)
    assert any("200" in n for n in reply.notices), reply.notices
    assert len(session.history[0].text) <= 200
    assert any(c.name == "size_inference" for c in reply.tool_calls), "the part that was read is answered"


def test_a_message_at_the_limit_is_read_whole_without_a_notice() -> None:
    adv = Advisor(max_message_chars=200)
    text = ("Llama 3.1 8B inference on one RTX 4090" + " " * 200)[:200]
    reply = adv.reply(text, adv.new_session())
    assert not any("200" in n for n in reply.notices)


# ------------------------------------------------------------------------------------------- turns kept
def test_history_is_capped_and_the_profile_survives() -> None:
    adv = Advisor(max_turns_kept=6)
    session = adv.new_session()
    adv.reply("Llama 3.1 70B int4 inference on two RTX 4090, 8k context, 2 users", session)
    for text in ("what about FP16?", "what about int4?", "why?", "what about 4 users?", "换成 A100 呢",
                 "what about FP8?"):
        reply = adv.reply(text, session)
        assert reply.mode != "error"
        assert len(session.history) <= 6
    assert session.dropped_turns == 14 - 6
    assert session.profile.model and "70b" in session.profile.model
    again = Session.from_json(session.to_json())
    assert again.dropped_turns == session.dropped_turns and len(again.history) <= 6


def test_dropping_history_is_announced_once() -> None:
    """When the first turns fall out of the history the user is told (the profile and results stay)."""
    adv = Advisor(max_turns_kept=4)
    session = adv.new_session()
    notices = []
    for text in ("Llama 3.1 8B inference on one RTX 4090", "what about FP16?", "what about int4?",
                 "what about 4 users?"):
        notices.append(adv.reply(text, session).notices)
    dropped_at = [i for i, n in enumerate(notices) if any(re.search(r"turn|轮|history|历史", x, re.I) for x in n)]
    assert len(dropped_at) == 1, f"expected one notice when turns were first dropped, got {notices}"


# ------------------------------------------------------------------------------------------- tool steps
def test_tool_rounds_per_turn_are_capped_with_a_notice() -> None:
    """A model that asks for another tool call every time: after max_tool_steps rounds the turn stops,
    falls back to the computed answer and says why."""
    with FakeChatServer() as srv:
        srv.script = lambda body: FakeReply(tool_calls=[(
            "perf_decode", json.dumps({"model": "llama-3.1-8b",
                                       "gpu": "RTX 4090" if len(srv.requests) % 2 else "A100 80GB"}))])
        adv = Advisor(llm="openai", openai_base_url=srv.base_url, openai_model="fake", max_tool_steps=2,
                      llm_timeout_s=5, turn_timeout_s=20)
        t0 = time.perf_counter()
        reply = adv.reply("Llama 3.1 8B inference on one RTX 4090, 8k context", adv.new_session())
        elapsed = time.perf_counter() - t0
        requests = len(srv.requests)
    assert requests == 3, f"max_tool_steps=2 allows 2 tool rounds + 1 final request, saw {requests}"
    assert elapsed < 10
    assert reply.replaced and any("tool" in n.lower() for n in reply.notices), reply.notices
    assert "fits on" in reply.text


def test_tool_arguments_and_names_from_an_llm_are_bounded() -> None:
    """Search queries and names the LLM sends are length-checked by the tool schemas."""
    from advisor.toolspec import run_tool

    long_query = run_tool("search_knowledge", {"query": "q" * 5000}, by="llm")
    assert not long_query.ok and "query" in (long_query.error or "")
    long_name = run_tool("gpu_info", {"name": "x" * 10_000}, by="llm")
    assert not long_name.ok and len(long_name.error or "") < 500
    too_many = run_tool("search_knowledge", {"query": "NVLink", "k": 1000}, by="llm")
    assert not too_many.ok and "k" in (too_many.error or "")


# ------------------------------------------------------------------------------------------- retrieval
def test_search_caps_query_length_and_result_count_with_notices() -> None:
    results = search("NVLink bandwidth " * 500, k=MAX_K * 10)
    assert len(results.query) <= MAX_QUERY_CHARS
    assert len(results) <= MAX_K
    text = " ".join(results.notices)
    assert "truncated" in text and f"{MAX_K}" in text


# ------------------------------------------------------------------------------------------- bad limits
@pytest.mark.parametrize("var,value", [("ADVISOR_MAX_TOOL_STEPS", "0"), ("ADVISOR_MAX_MESSAGE_CHARS", "ten"),
                                       ("ADVISOR_LLM", "bogus")])
def test_a_bad_limit_in_the_environment_is_a_one_line_message(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                              var: str, value: str) -> None:
    monkeypatch.setenv(var, value)
    try:
        code = cli_main(["ask", "hello", "--session", str(tmp_path / "s.json")])
    except Exception as exc:  # the point: nothing may escape to the user as a traceback
        pytest.fail(f"{var}={value} crashed `gpu-advisor ask` with {type(exc).__name__}: {str(exc)[:200]}")
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("gpu-advisor: ") and err.count("\n") == 1
    assert var.removeprefix("ADVISOR_").lower() in err.lower()


@pytest.mark.parametrize("argv", [
    ["size", "--model", "llama-3.1-8b", "--gpu-memory-gib", "inf"],
    ["size", "--model", "llama-3.1-8b", "--gpu-memory-gib", "1e300"],  # finite, but inf once in bytes
    ["size", "--model", "llama-3.1-8b", "--gpu-memory-gib", "nan"],
    ["recommend", "--workload", "scientific", "--problem-gb", "inf"],
    ["recommend", "--workload", "scientific", "--problem-gb", "1e400"],
    ["check", "--gpu", "rtx-4090", "--count", "2", "--psu-w=-inf"],
])
def test_every_number_flag_refuses_infinite_and_absurd_values_by_name(argv: list[str],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli_main(argv)
    err = capsys.readouterr().err
    flag = argv[-1].split("=")[0] if "=" in argv[-1] else argv[-2]
    assert stop.value.code == 2 and flag in err and "Traceback" not in err
    assert "finite" in err or "out of range" in err


def test_no_command_takes_a_plain_float_flag() -> None:
    """Every number flag goes through the one checked type (a new flag cannot skip it by accident)."""
    import advisor.commands as commands

    for path in Path(commands.__file__).parent.glob("*.py"):
        assert "type=float" not in path.read_text(encoding="utf-8"), path.name
