"""The side panel shows what the tools used: a field the user left open carries the value the reply assumed
(LoRA for a fine-tune, the model a bare size stands for, the context and concurrency of a sizing), marked as
assumed in the summary; what the user said is never replaced."""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisor.engine import Advisor
from advisor.ui import profile
from advisor.ui.layout import build_blocks
from advisor.ui.state import AdvisorPool


@pytest.fixture(scope="module")
def handlers() -> dict[str, Any]:
    demo = build_blocks(AdvisorPool(Advisor.from_settings))
    fns = demo.fns.values() if isinstance(demo.fns, dict) else demo.fns
    return {getattr(f.fn, "__name__", None): f.fn for f in fns}


def _panel(handlers: dict[str, Any], lang: str, turns: list[str]) -> tuple[dict[str, Any], str]:
    """The panel's fields and summary as the page receives them after the last turn."""
    st = handlers["on_load"](lang)[0]
    n = len(profile.PROFILE_FIELDS) + 1
    shown: list[Any] = [None] * n  # each view as the page last set it (a skipped update leaves it as it was)
    for seq, text in enumerate(turns, start=1):
        handlers["take"](json.dumps([[seq, text]], ensure_ascii=False), st, None)
        for out in handlers["drain"](st):
            for i, value in enumerate(out[3:3 + n]):
                if not (isinstance(value, dict) and value.get("__type__") == "update"):
                    shown[i] = value
    return dict(zip(profile.PROFILE_FIELDS, shown, strict=False)), str(shown[-1])

def test_a_fine_tune_shows_the_method_and_model_the_sizing_used(handlers: dict[str, Any]) -> None:
    fields, summary = _panel(handlers, "en", ["I want to fine-tune Llama-3-8B"])
    assert fields["method"] == "lora" and fields["model"] == "llama-3-8b"
    assert "(assumed)" in summary and "Meta-Llama-3-8B" in summary


def test_a_bare_size_shows_the_model_it_stands_for_and_the_sizing_s_context(handlers: dict[str, Any]) -> None:
    fields, summary = _panel(handlers, "zh", ["70b 模型 4bit 跑推理 两张4090够不够"])
    assert fields["params_b"] == 70 and fields["gpu"] == "rtx-4090" and fields["gpu_count"] == 2  # said
    assert fields["model"] == "llama-3.1-70b" and fields["context_tokens"] == 8192 and fields["concurrency"] == 1
    assert summary.count("（假设）") >= 3


def test_new_conversation_can_be_undone_until_the_new_one_starts(handlers: dict[str, Any]) -> None:
    from types import SimpleNamespace

    st = handlers["on_load"]("zh")[0]
    handlers["take"](json.dumps([[1, "70b 模型 4bit 跑推理 两张4090够不够"]], ensure_ascii=False), st, None)
    for _ in handlers["drain"](st):
        pass
    new = handlers["on_new"](st)[0]
    chips = [o["value"] for o in new.messages[-1].options]
    assert "↩️ 恢复刚才的对话" in chips and "推理服务" in chips  # the opening question's answers stay
    back = handlers["on_option"](new, SimpleNamespace(value="↩️ 恢复刚才的对话"), None)[1]
    assert back is st and [m.content for m in back.messages if m.role == "user"][-1].startswith("70b")
    outs = list(handlers["drain"](back))
    fields = outs[-1][3:3 + len(profile.PROFILE_FIELDS)]
    assert dict(zip(profile.PROFILE_FIELDS, fields, strict=True))["gpu"] == "rtx-4090"  # its panel too
    again = handlers["on_new"](back)[0]  # once the new conversation has a message, there is no way back
    handlers["take"](json.dumps([[3, "什么是 KV cache"]], ensure_ascii=False), again, None)
    for _ in handlers["drain"](again):
        pass
    assert again.previous is None


def _run(handlers: dict[str, Any], st: Any, *texts: str) -> None:
    for text in texts:
        handlers["take"](json.dumps([[st.last_sent + 1, text]], ensure_ascii=False), st, None)
        for _ in handlers["drain"](st):
            pass


def test_a_question_edited_in_place_is_asked_again_from_where_it_stood(handlers: dict[str, Any]) -> None:
    from types import SimpleNamespace

    st = handlers["on_load"]("zh")[0]
    _run(handlers, st, "70b 模型 4bit 跑推理 两张4090够不够", "上下文 32k 呢")
    first = next(i for i, m in enumerate(st.messages) if m.role == "user")
    handlers["on_edit"](st, SimpleNamespace(index=first, value="70b 模型 4bit 跑推理 两张3090够不够"))
    for _ in handlers["drain"](st):
        pass
    users = [str(m.content) for m in st.messages if m.role == "user"]
    assert users == ["70b 模型 4bit 跑推理 两张3090够不够"]  # the later turn went with the old question
    assert "3090" in str(st.messages[-len(st.messages) + first + 1].content)
    assert st.session.profile.context_tokens is None  # the session is as it was before, plus the new question
    assert sum(1 for turn in st.session.history if turn.role == "user") == 1


def test_regenerate_asks_the_last_question_again(handlers: dict[str, Any]) -> None:
    from types import SimpleNamespace

    st = handlers["on_load"]("en")[0]
    _run(handlers, st, "70b at 4 bit on two 4090s?", "what about 32k context?")
    before = [_no_tokens(m.content) for m in st.messages]
    handlers["on_retry"](st, SimpleNamespace(index=len(st.messages) - 1, value=""))
    for _ in handlers["drain"](st):
        pass
    assert [str(m.content) for m in st.messages if m.role == "user"] == [
        "70b at 4 bit on two 4090s?", "what about 32k context?"]
    assert sum(1 for turn in st.session.history if turn.role == "user") == 2
    assert [_no_tokens(m.content) for m in st.messages] == before  # the same turn, computed again


def _no_tokens(content: Any) -> str:
    """A message without its links' one-time tokens (each rendering links its results anew)."""
    import re

    return re.sub(r"gpu-advisor/result/[0-9a-f]{32}", "gpu-advisor/result/…", str(content))


def test_every_view_of_the_panel_comes_from_the_same_reply(handlers: dict[str, Any]) -> None:
    """A build check of the cards asked about earlier is not shown beside a later reply that compared others."""
    from advisor.ui.i18n import t

    st = handlers["on_load"]("zh")[0]
    chart = 3 + len(profile.PROFILE_FIELDS) + 1  # after the fields: summary, chart, comparison, notes, checklist
    shown: list[Any] = []
    charts: list[str] = []
    for text in ("两张4090，1300W电源，跑70b 4bit 够吗", "对比 H100 和 H200"):
        handlers["take"](json.dumps([[st.last_sent + 1, text]], ensure_ascii=False), st, None)
        for out in handlers["drain"](st):
            for i, into in ((chart + 3, shown), (chart, charts)):
                if not (isinstance(out[i], dict) and out[i].get("__type__") == "update"):
                    into.append(str(out[i]))
    assert "4090" in shown[0]  # the first reply checked the two 4090s
    assert shown[-1] == t("checklist_empty", "zh")  # the comparison ran no build check: none is shown
    assert "H100" in charts[-1]  # and its chart is one of the compared cards', not empty
