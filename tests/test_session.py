"""The session: typed, serialisable, and never silently replaced when a file is bad."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.nlu import GpuCount, Money
from advisor.session import SESSION_VERSION, Profile, Session, SessionError, ToolCall, Turn


def _filled() -> Session:
    s = Session(lang="zh")
    s.profile.use_case = "inference"
    s.profile.model = "llama-3.1-70b"
    s.profile.budget = Money(amount=100_000, currency="CNY")
    s.profile.existing = [GpuCount(gpu="rtx-3090", count=2)]
    s.asked += ["use_case", "model"]
    s.history.append(Turn(role="user", text="70b 模型 4bit 跑推理 两张4090够不够", lang="zh"))
    s.last_results["size_inference"] = ToolCall(name="size_inference", arguments={"context": 8192},
                                                result={"per_gpu_bytes": 24_254_679_372, "fits": False})
    return s


def test_round_trip_keeps_everything(tmp_path: Path) -> None:
    s = _filled()
    path = s.save(tmp_path / "s.json")
    back = Session.load(path)
    assert back == s
    assert back.profile.budget == Money(amount=100_000, currency="CNY")
    assert back.result("size_inference") == {"per_gpu_bytes": 24_254_679_372, "fits": False}
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == SESSION_VERSION and data["kind"] == "gpu-advisor-session"
    assert "70b 模型" in path.read_text(encoding="utf-8")  # stored as readable UTF-8


def test_save_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    s = _filled()
    s.save(tmp_path / "s.json")
    s.save(tmp_path / "s.json")
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


@pytest.mark.parametrize(("content", "phrase"), [
    ('{"kind": "gpu-advisor-session", "version": 1, "profile": {', "truncated"),
    ("not json at all", "not valid JSON"),
    ('["a", "list"]', "not a gpu-advisor session"),
    ('{"kind": "something-else", "version": 1}', "not a gpu-advisor session"),
    ('{"kind": "gpu-advisor-session"}', "no valid 'version'"),
    ('{"kind": "gpu-advisor-session", "version": 99}', "newer GPU Advisor"),
    ('{"kind": "gpu-advisor-session", "version": 0}', "older than any"),
    ('{"kind": "gpu-advisor-session", "version": 1, "profile": {"use_case": "gaming", "concurrency": -3}}',
     "does not match the session format"),
    ('{"kind": "gpu-advisor-session", "version": 1, "history": [{"role": "robot", "text": 5}]}',
     "does not match the session format"),
])
def test_bad_files_are_reported_and_left_untouched(tmp_path: Path, content: str, phrase: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SessionError) as info:
        Session.load(path)
    assert phrase in str(info.value)
    assert "bad.json" in str(info.value)
    assert path.read_text(encoding="utf-8") == content  # never repaired or replaced silently


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="does not exist"):
        Session.load(tmp_path / "nope.json")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SessionError):
        Session.load(binary)


def test_history_limit_drops_oldest_turns() -> None:
    s = Session()
    for i in range(10):
        s.history.append(Turn(role="user", text=f"message {i}"))
    s.trim(4)
    assert [t.text for t in s.history] == ["message 6", "message 7", "message 8", "message 9"]
    assert s.dropped_turns == 6


def test_profile_known_slots_and_validation() -> None:
    p = Profile()
    assert not p.known("model")
    p.params_b = 70
    assert p.known("model")  # a bare size is enough to compute
    p.budget_unlimited = True
    assert p.known("budget")
    with pytest.raises(ValueError):
        p.concurrency = 0  # validated on assignment


_HEAD = '{"kind": "gpu-advisor-session", "version": 1, '


@pytest.mark.parametrize(("text", "said"), [
    (_HEAD + '"profile": ' + "[" * 200_000 + "]" * 200_000 + "}", "nested too deeply"),  # past the parser
    (_HEAD + '"dropped_turns": ' + "9" * 100_000 + "}", "number far too long"),  # past int()'s digit limit
    (_HEAD + '"dropped_turns": ' + "9" * 4_000 + "}", "dropped_turns"),  # parses, but no session drops that many
    # parses and validates, but could never be saved again (serialisation depth): refused on load
    (_HEAD + '"history": [{"role": "user", "text": "x", "tool_calls": [{"name": "size_inference", "arguments": '
     + '{"a": ' * 900 + "1" + "}" * 900 + "}]}]}", "nested too deeply: more than 64 levels"),
])
def test_hostile_session_text_is_refused_with_a_reason(text: str, said: str, tmp_path: Path) -> None:
    with pytest.raises(SessionError, match=said):
        Session.from_json(text, where="session file s.json")
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    from advisor.cli import main as cli_main

    assert cli_main(["ask", "hi", "--session", str(path)]) != 0
    assert path.read_text(encoding="utf-8") == text  # left as it was
