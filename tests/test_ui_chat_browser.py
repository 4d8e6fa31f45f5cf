"""The chat people rely on, in a real headless Chromium, on a desk (1440×900) and on a phone (390×844).

Nothing typed is lost while a reply streams; rapid sends are all answered, in order; Send is disabled and
Stop offered while a turn runs; a bad panel value gives one friendly message and the page stays usable;
the answer comes first with its calculations folded after it, sources once; the trash starts over; the
page carries its language. Screenshots go to ``tests/artifacts/`` (git-ignored).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = os.environ.get("GPU_ADVISOR_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 45_000
SIZES = {"desktop": (1440, 900), "phone": (390, 844)}
QUESTION = "我想本地部署 Qwen2.5-72B 做推理，预算 10 万，买什么卡？"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser test cannot run in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright; never `playwright install`)")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium fonts-noto-cjk fonts-noto-color-emoji)")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        yield p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)


def open_tab(browser: Any, name: str, width: int, height: int) -> tuple[Any, Any]:
    """A fresh tab (its own session) of the shared app at ``width`` × ``height`` (a phone when ``name`` says
    so), the opening shown; returns (context, tab)."""
    from ui_harness import running_app

    phone = name == "phone"
    ctx = browser.new_context(locale="zh-CN", viewport={"width": width, "height": height}, is_mobile=phone,
                              has_touch=phone)
    tab = ctx.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    tab.goto(running_app().url, wait_until="load")
    tab.locator("#chatbot").get_by_text("你好").first.wait_for()
    tab.size_name = name
    return ctx, tab


@pytest.fixture(params=list(SIZES))
def page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    """A fresh tab (its own session) at one of the two sizes, the opening shown."""
    ctx, tab = open_tab(browser, request.param, *SIZES[request.param])
    yield tab
    ctx.close()


def _send(page: Any, text: str, wait: bool = True) -> None:
    """Type ``text`` and press Enter, as a person does: the box empties at once; ``wait``: until the chat
    shows the message too."""
    page.fill("#msg textarea", text)
    page.press("#msg textarea", "Enter")
    page.wait_for_function("() => document.querySelector('#msg textarea').value === ''", timeout=5_000)
    if wait:
        page.locator("#chatbot .user-row").filter(has_text=text).last.wait_for()


def _idle(page: Any) -> None:
    """Wait until no turn runs: Stop hidden, Send enabled, no spinner in the chat."""
    page.wait_for_function(
        "() => { const s = document.querySelector('#stop');"
        " const hidden = !s || s.offsetParent === null;"
        " const send = document.querySelector('#send');"
        " return hidden && send && !send.disabled && !document.querySelector('#chatbot .pending'); }",
        timeout=TIMEOUT_MS)


def _rows(page: Any) -> list[tuple[str, str]]:
    """The chat's rows in order: ('user' | 'bot', text)."""
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('#chatbot .message-row')).map(r =>"
        " [r.classList.contains('user-row') ? 'user' : 'bot', r.innerText.trim()])")


def _shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"ui-chat-{name}-{page.size_name}.png"), full_page=False)


def test_typing_while_a_reply_streams_loses_nothing(page: Any) -> None:
    page.evaluate(  # record every state the Send and Stop buttons pass through during the turn
        "() => { window.__seen = {disabled: false, stop: false}; new MutationObserver(() => {"
        " const s = document.querySelector('#send'); const t = document.querySelector('#stop');"
        " if (s && s.disabled) window.__seen.disabled = true;"
        " if (t && t.offsetParent !== null) window.__seen.stop = true;"
        " }).observe(document.body, {subtree: true, childList: true, attributes: true}); }")
    _send(page, QUESTION, wait=False)
    page.type("#msg textarea", "上下文要 32k", delay=15)  # typed while the reply comes in
    _idle(page)
    assert page.input_value("#msg textarea") == "上下文要 32k"
    seen = page.evaluate("window.__seen")
    assert seen == {"disabled": True, "stop": True}, "Send was not disabled or Stop not offered during the turn"
    _shot(page, "answer")


def test_five_rapid_sends_get_five_answers_in_order(page: Any) -> None:
    asks = ["70b 模型 4bit 跑推理 两张4090够不够", "那 FP16 呢？", "换成 A100 呢", "上下文 32k 呢", "并发 8 个呢"]
    for text in asks:
        _send(page, text, wait=False)
    page.wait_for_function("() => document.querySelectorAll('#chatbot .user-row').length >= 5")
    _idle(page)
    rows = _rows(page)
    users = [text for who, text in rows if who == "user"]
    assert users == asks
    after = [rows[i + 1][0] if i + 1 < len(rows) else None for i, (who, _) in enumerate(rows) if who == "user"]
    assert after == ["bot"] * 5  # each message is followed by its answer


def test_a_bad_panel_value_gives_one_friendly_message_and_the_page_stays_usable(page: Any) -> None:
    _send(page, "70b 模型 4bit 跑推理 两张4090够不够")
    _idle(page)
    page.fill("#f-context input", "0")
    page.click("#recompute")
    page.locator("#chatbot").get_by_text("无法使用").first.wait_for()
    toast = page.locator(".toast-body").filter(has_text="上下文长度")  # in sight on a phone too
    toast.first.wait_for()
    box = toast.first.bounding_box()
    assert box and 0 <= box["y"] <= page.viewport_size["height"] - box["height"]
    assert page.locator(".toast-body.error, .error-badge, .validation-error").count() == 0
    assert page.locator("#chatbot").get_by_text("ℹ️").count() == 0  # said once, not again in a notes fold
    assert "less than minimum" not in page.content()
    _send(page, "那 FP16 呢？")  # the page still answers
    _idle(page)
    assert _rows(page)[-1][0] == "bot" and "FP16" in _rows(page)[-2][1]
    _shot(page, "bad-value")


def test_the_answer_comes_first_and_its_calculations_fold_after_it(page: Any) -> None:
    _send(page, QUESTION)
    _idle(page)
    chat = page.locator("#chatbot")
    answer = chat.get_by_text("推荐配置").first
    group = chat.get_by_text("项计算").first
    answer.wait_for()
    assert answer.bounding_box()["y"] < group.bounding_box()["y"]  # the answer is above its calculations
    assert chat.get_by_text("选型推荐").count() == 0 or not chat.get_by_text("选型推荐").first.is_visible()
    assert chat.get_by_text("📚").count() == 0  # sources are listed once, in the reply
    _send(page, "70b 模型 4bit 跑推理 两张4090够不够")  # a reply with a table of other ways to run it
    _idle(page)
    tables = page.evaluate(  # per table in the replies: [header cells, cells per row…, tallest header px]
        "() => Array.from(document.querySelectorAll('#chatbot table')).map(t => ["
        " t.querySelectorAll('thead th').length, Array.from(t.querySelectorAll('tbody tr'))"
        ".map(r => r.children.length), Math.max(...Array.from(t.querySelectorAll('th')).map(h => h.offsetHeight))])")
    assert tables, "the reply's option table is not rendered as a table"
    for header, rows, tallest in tables:
        assert rows and all(n == header for n in rows), "a sentence after the table was read as a row"
        assert tallest < 64, "a header is broken into a column of single characters"
    # the new exchange starts at the top of the chat view: the user's message is in sight
    user = chat.locator(".user-row").last
    box = page.evaluate("() => document.querySelector('#chatbot').getBoundingClientRect().top")
    assert user.bounding_box()["y"] >= box - 2


@pytest.fixture(params=list(SIZES))
def slow_llm_page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    """A tab on an app whose language model never answers until the test ends (a real HTTP server that
    holds the reply): every turn runs until it is stopped."""
    from fakes.chat_server import FakeChatServer, FakeReply
    from ui_harness import free_port

    from advisor.serve import launch_app
    from advisor.settings import Settings

    with FakeChatServer() as srv:
        srv.script = [FakeReply(content="An explanation.", delay_s=120)]
        port = free_port()
        demo = launch_app("127.0.0.1", port, block=False, quiet=True,
                          settings=Settings(llm="openai", openai_base_url=srv.base_url, openai_model="fake",
                                            llm_understand=False, llm_timeout_s=600, llm_min_timeout_s=600,
                                            turn_timeout_s=3600))  # no deadline ends the turn before Stop does
        width, height = SIZES[request.param]
        ctx = browser.new_context(locale="zh-CN", viewport={"width": width, "height": height},
                                  is_mobile=request.param == "phone", has_touch=request.param == "phone")
        try:
            tab = ctx.new_page()
            tab.set_default_timeout(TIMEOUT_MS)
            tab.goto(f"http://127.0.0.1:{port}/", wait_until="load")
            tab.locator("#chatbot").get_by_text("你好").first.wait_for()
            tab.size_name = request.param
            yield tab
        finally:
            ctx.close()
            demo.close()


def test_stop_ends_a_turn_at_once_keeps_what_arrived_and_hands_waiting_messages_back(slow_llm_page: Any) -> None:
    """Stop (Esc on a desk, the button on a phone) ends the turn; the stream itself writes its last state."""
    page = slow_llm_page
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    first, waiting = "70b 模型 4bit 跑推理 两张4090够不够", ["那 FP16 呢？", "换成 A100 呢"]
    _send(page, first)
    page.locator("#chatbot").get_by_text("结论").first.wait_for()  # the computed answer is shown; the model is slow
    for text in waiting:
        _send(page, text)
    if page.size_name == "desktop":
        page.keyboard.press("Escape")  # Esc stops, wherever the focus is
    else:
        page.locator("#stop").click()
    stopped = page.locator("#chatbot").get_by_text("⏹ 已停止")
    stopped.first.wait_for(timeout=60_000)  # still half the model's 120 s; 5 s and 20 s flaked on a loaded 2-core run
    _idle(page)
    rows = _rows(page)
    assert [text for who, text in rows if who == "user"] == [first]
    who, text = rows[-1]  # the reply's messages share one row
    assert who == "bot" and text.startswith("结论")  # what had arrived of the answer stays
    assert text.endswith("⏹ 已停止。之前的内容都还在，随时可以接着问。") and "正在计算" not in text
    assert page.input_value("#msg textarea").split("\n") == waiting  # the waiting ones: back in the box
    page.wait_for_timeout(300)  # the next animation frame brings the notice into view
    notice, box = stopped.last.bounding_box(), page.locator("#chatbot .bubble-wrap").bounding_box()
    assert box["y"] <= notice["y"] and notice["y"] + notice["height"] <= box["y"] + box["height"] + 1, \
        "the stop notice is out of view"
    assert failed == []
    _shot(page, "stopped")


def test_the_trash_starts_a_new_conversation(page: Any) -> None:
    _send(page, "70b 模型 4bit 跑推理 两张4090够不够")
    _idle(page)
    page.locator("#chatbot button[aria-label='清空对话']").first.click()
    page.locator("#chatbot").get_by_text("你好").first.wait_for()
    _send(page, "换成 A100 呢")
    _idle(page)
    users = [text for who, text in _rows(page) if who == "user"]
    assert users == ["换成 A100 呢"]  # the old conversation does not come back


def test_the_page_carries_its_language_and_fits_a_phone(page: Any) -> None:
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    # bold Latin text has a real bold face (the package's semibold file is a small-caps-looking subset)
    page.evaluate("document.fonts.load(\"700 16px 'Source Sans Pro'\")")
    faces = page.evaluate("Array.from(document.fonts).filter(f => f.family.includes('Source Sans Pro'))"
                          ".map(f => [f.weight, f.status])")
    assert ["700", "loaded"] in faces and not any(w == "600" for w, _ in faces)
    assert page.evaluate("window.scrollY") == 0  # the title and tabs are in sight on load
    assert not page.locator("#profile").get_by_text("上下文长度").is_visible()  # collapsed until it has data
    width = page.viewport_size["width"]
    if page.size_name == "phone":
        box = page.locator("#msg textarea").bounding_box()
        assert box["width"] >= 0.8 * width, "the input is not full width on a phone"
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1  # no sideways scrolling
    _shot(page, "opening")
    page.locator("#lang").get_by_text("English").click()
    page.locator("#send").get_by_text("Send").wait_for()
    assert page.evaluate("document.documentElement.lang") == "en"


@pytest.mark.parametrize("via_proxy", [False, True])
def test_unlocked_settings_refuse_a_change_that_came_through_a_proxy(browser: Any, monkeypatch: pytest.MonkeyPatch,
                                                                     via_proxy: bool) -> None:
    """Behind a reverse proxy every user arrives from 127.0.0.1: a backend change carrying forwarding headers
    is refused even when an administrator unlocked the settings; from the machine's own browser it applies."""
    from ui_harness import free_port

    from advisor.serve import launch_app
    from advisor.settings import Settings

    monkeypatch.setenv("GPU_ADVISOR_LOCK_SETTINGS", "0")
    port = free_port()
    demo = launch_app("127.0.0.1", port, block=False, quiet=True, settings=Settings(llm="none"))
    headers = {"X-Forwarded-For": "203.0.113.9"} if via_proxy else {}
    ctx = browser.new_context(locale="zh-CN", viewport={"width": 1440, "height": 900}, extra_http_headers=headers)
    try:
        page = ctx.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"http://127.0.0.1:{port}/", wait_until="load")
        page.get_by_role("tab", name="设置").click()
        page.locator("#apply-backend").click()
        if via_proxy:
            page.locator(".toast-body").filter(has_text="反向代理").first.wait_for()
            assert "已启用" not in page.locator("#backend-status").inner_text()
        else:
            page.locator("#backend-status").get_by_text("已启用").first.wait_for()
    finally:
        ctx.close()
        demo.close()


def test_a_conversation_the_server_dropped_says_so_and_goes_on(browser: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond GPU_ADVISOR_MAX_SESSIONS (or after the idle expiry) the server no longer has a tab's conversation:
    the tab's next message is answered in a new one, under a line that says why the old one is gone."""
    from ui_harness import free_port

    from advisor.serve import launch_app
    from advisor.settings import Settings

    monkeypatch.setenv("GPU_ADVISOR_MAX_SESSIONS", "1")
    port = free_port()
    demo = launch_app("127.0.0.1", port, block=False, quiet=True, settings=Settings(llm="none"))
    contexts = [browser.new_context(locale="zh-CN", viewport={"width": 1440, "height": 900}) for _ in range(2)]
    try:
        first, second = (ctx.new_page() for ctx in contexts)
        for tab in (first, second):
            tab.set_default_timeout(TIMEOUT_MS)
        first.goto(f"http://127.0.0.1:{port}/", wait_until="load")
        first.locator("#chatbot").get_by_text("你好").first.wait_for()
        first.size_name = "desktop"
        _send(first, "70b 模型 4bit 跑推理 两张4090够不够")
        _idle(first)
        second.goto(f"http://127.0.0.1:{port}/", wait_until="load")  # a second session: the first one goes
        second.locator("#chatbot").get_by_text("你好").first.wait_for()
        _send(first, "那 FP16 呢？")
        first.locator("#chatbot").get_by_text("服务器已不再保存").first.wait_for()
        _idle(first)
        rows = _rows(first)
        assert [who for who, _ in rows][-2:] == ["user", "bot"] and "FP16" in rows[-2][1]
        assert not any("4090" in text for who, text in rows if who == "user")  # the old exchange is gone
        _shot(first, "session-dropped")
    finally:
        for ctx in contexts:
            ctx.close()
        demo.close()


def test_a_conversation_taken_out_of_memory_comes_back_whole(page: Any) -> None:
    """Idle tabs are parked (compressed) under memory pressure; the tab's next message finds its conversation as
    it was — earlier exchange on the page, follow-up read in its context, no 'starts over' line."""
    from ui_harness import running_app

    from advisor.ui.expiry import SessionSweeper

    _send(page, "70b 模型 4bit 跑推理 两张4090够不够")
    _idle(page)
    later = dt.datetime.now() + dt.timedelta(seconds=120)
    assert SessionSweeper(running_app().demo, idle_s=3600).sweep(now=later, pressure=True) >= 1
    _send(page, "那 FP16 呢？")
    _idle(page)
    rows = _rows(page)
    assert any("两张4090" in text for who, text in rows if who == "user"), "the earlier exchange must stay"
    assert not any("服务器已不再保存" in text for _, text in rows)
    assert "70B" in rows[-1][1] or "70b" in rows[-1][1].lower()  # the follow-up is about the same model
    _shot(page, "session-revived")


@pytest.mark.parametrize("hostile_id", ["../../../../gpu-advisor-escape-{n}", "/tmp/gpu-advisor-escape-{n}/x", ".."])
def test_an_uploaded_session_with_a_hostile_id_writes_nothing_and_says_why(page: Any, hostile_id: str,
                                                                           tmp_path: Path) -> None:
    """The uploaded session's id was once used as a folder name: the server wrote the report and the session
    anywhere it could. Now the upload is refused with a message naming the field, and nothing is written."""
    import json
    import uuid

    from advisor.session import Session

    target = hostile_id.format(n=uuid.uuid4().hex[:8])
    data = json.loads(Session().to_json())
    data["id"] = target
    data["history"] = [{"role": "user", "text": "hello"}]
    upload = tmp_path / "session.json"
    upload.write_text(json.dumps(data), encoding="utf-8")
    before = _rows(page)
    tabs = page.locator("button[role=tab]")
    tabs.nth(2).click()  # the settings tab, where sessions are exported and resumed
    page.locator("#import-session").wait_for()
    page.set_input_files("input[type=file][accept=\".json\"]", str(upload))
    toast = page.get_by_text("会话文件无法使用").first
    toast.wait_for()
    assert "id" in toast.inner_text()
    written = [Path(target), Path("/") / Path(target).name, Path(tempfile.gettempdir()) / Path(target).name]
    assert not any(p.exists() for p in written if p.name not in ("", ".."))
    tabs.nth(0).click()
    page.locator("#chatbot").wait_for()
    assert _rows(page) == before  # the conversation on the page is untouched
