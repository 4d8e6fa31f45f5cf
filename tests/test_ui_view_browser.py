"""What the reader sees, in a real headless Chromium: each new question is pinned near the top of the chat
with its answer growing below it (after a send, an example and Recompute alike), the message box stays in
sight without scrolling the page (1440×900, 1366×768 and a 390×844 phone), and reply tables read — figures
on one line on a desk, one card per option on a phone. Screenshots go to ``tests/artifacts/``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_ui_chat_browser import ARTIFACTS, TIMEOUT_MS, _idle, _send, browser, open_tab  # noqa: F401  (fixture)

SIZES = {"desktop": (1440, 900), "laptop": (1366, 768), "phone": (390, 844)}
PIN_MAX_PX = 80  # the question's top edge: at most this far below the top of the chat's scroll box

# where the newest question sits in the chat's scroll box, whether its answer's first line is in view, and
# whether the message box is on screen with the page itself unscrolled
GEOMETRY_JS = """() => {
  const rows = document.querySelectorAll('#chatbot .message-row');
  const users = document.querySelectorAll('#chatbot .user-row');
  const q = users[users.length - 1];
  const box = document.querySelector('#chatbot .bubble-wrap').getBoundingClientRect();
  const after = q ? [...rows].slice([...rows].indexOf(q) + 1)[0] : null;
  const msg = document.querySelector('#msg textarea').getBoundingClientRect();
  return {q: q ? q.getBoundingClientRect().top - box.top : null,
          answer: after ? after.getBoundingClientRect().top < box.bottom - 20 : false,
          msgBottom: msg.bottom, height: innerHeight, scrollY: scrollY};
}"""


@pytest.fixture(params=list(SIZES))
def view(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:  # noqa: F811
    """A fresh tab at each size, or at the sizes a test names (``indirect`` parametrisation)."""
    ctx, tab = open_tab(browser, request.param, *SIZES[request.param])
    yield tab
    ctx.close()


def _in_view(page: Any, what: str) -> None:
    g = page.evaluate(GEOMETRY_JS)
    assert g["q"] is not None and 0 <= g["q"] <= PIN_MAX_PX, f"{what}: the question is not at the top ({g})"
    assert g["answer"], f"{what}: the answer's start is out of view ({g})"
    assert g["scrollY"] == 0 and g["msgBottom"] <= g["height"], f"{what}: the message box is off screen ({g})"


def test_each_new_question_is_pinned_with_its_answer_below_and_the_box_stays_in_sight(view: Any) -> None:
    page = view
    g = page.evaluate(GEOMETRY_JS)
    assert g["msgBottom"] <= g["height"] and g["scrollY"] == 0, "the message box is below the fold on opening"
    assert page.locator("#backend-badge").get_by_text("离线").is_visible()  # who answers, in sight
    _send(page, "我想本地部署 Qwen2.5-72B 做推理，预算 10 万，买什么卡？")
    _idle(page)
    _in_view(page, "first answer")
    _send(page, "上下文 32k 呢")  # a follow-up after a long answer: the old answer is above, out of the way
    _idle(page)
    _in_view(page, "follow-up")
    _send(page, "什么是 KV cache？")  # a short answer: the question still reaches the top
    _idle(page)
    _in_view(page, "short answer")
    if not page.locator("#f-concurrency input").is_visible():  # the profile opens itself once it has data
        page.locator("#profile").get_by_text("需求画像").first.click()
    page.fill("#f-concurrency input", "8")
    page.click("#recompute")
    page.locator("#chatbot .user-row").filter(has_text="✏️").last.wait_for()
    _idle(page)
    page.wait_for_timeout(300)  # the next animation frame re-pins
    _in_view(page, "Recompute")
    page.screenshot(path=str(ARTIFACTS / f"ui-view-recompute-{page.size_name}.png"))


@pytest.mark.parametrize("view", ["desktop"], indirect=True)
def test_a_reader_who_scrolls_up_is_left_where_they_are(view: Any) -> None:
    page = view
    _send(page, "我想本地部署 Qwen2.5-72B 做推理，预算 10 万，买什么卡？")
    _idle(page)
    box = page.locator("#chatbot .bubble-wrap")
    box.hover()
    page.mouse.wheel(0, 400)
    page.wait_for_timeout(300)
    top = page.evaluate("() => document.querySelector('#chatbot .bubble-wrap').scrollTop")
    page.evaluate("() => document.querySelector('#chatbot .message-row:last-child')"
                  "?.append(document.createElement('span'))")  # the chat changes under the reader
    page.wait_for_timeout(300)
    assert page.evaluate("() => document.querySelector('#chatbot .bubble-wrap').scrollTop") == top


def test_reply_tables_keep_figures_whole_and_turn_into_cards_on_a_phone(view: Any) -> None:
    page = view
    _send(page, "预算3万美元做CFD，需要FP64，买什么卡")  # a wide ranked table: name, tier, need, FP64, power, price
    _idle(page)
    _send(page, "预算20万，推理70B，推荐几张卡")  # a ranked table: #, configuration, tier, need, speed, power, price
    _idle(page)
    table = page.locator("#chatbot table").last
    table.wait_for()
    cells = page.evaluate(
        "() => { const t = [...document.querySelectorAll('#chatbot table')].pop();"
        " return [...t.querySelectorAll('tbody td')].map(td => [td.innerText.trim(), td.dataset.label || '',"
        " td.getBoundingClientRect().height, parseFloat(getComputedStyle(td).lineHeight) || 20,"
        " getComputedStyle(td).display]); }")
    figures = [c for c in cells if any(ch.isdigit() for ch in c[0]) and len(c[0]) <= 28]
    assert figures, "no figure in the ranked table"
    if page.size_name == "phone":
        assert all(display != "table-cell" for *_, display in cells), "the table is still a grid on a phone"
        labelled = [c for c in cells[2:] if c[1]]
        assert labelled, "the card's figures carry no column names"
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"] + 1
    else:
        for text, _, height, line, _ in figures:  # one line each: '¥180,000', '1,700 W', '16.2 tokens/s'
            assert height < 2 * line + 16, f"the figure {text!r} wraps ({height:.0f} px for a {line:.0f} px line)"
    # no column hidden off the side: a grid wider than its place is shown as cards
    hidden = page.evaluate("() => [...document.querySelectorAll('#chatbot table')].filter(t =>"
                           " t.scrollWidth > t.clientWidth + 4).length")
    assert hidden == 0
    table.screenshot(path=str(ARTIFACTS / f"ui-view-table-{page.size_name}.png"))


@pytest.mark.parametrize("view", ["desktop"], indirect=True)
def test_a_calculation_s_full_result_is_fetched_only_when_opened(view: Any) -> None:
    page = view
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "gpu-advisor/result/" in r.url else None)
    _send(page, "70b 模型 4bit 跑推理 两张4090够不够")
    _idle(page)
    chat = page.locator("#chatbot")
    assert '"per_gpu_bytes"' not in chat.inner_text()  # no raw JSON in the chat as it arrives
    chat.locator(".title[role=button]").filter(has_text="项计算").first.click()  # the calculations fold…
    chat.locator(".title[role=button]").filter(has_text="显存").first.click()  # …then one of its steps
    link = chat.locator('a[href*="gpu-advisor/result/"]').filter(has_text="完整结果").first
    link.wait_for()
    assert fetched == []  # nothing fetched until the reader opens it
    link.click()
    shown = chat.locator(".raw-result pre").first
    shown.wait_for()
    page.wait_for_function("() => document.querySelector('#chatbot .raw-result pre').textContent.length > 50")
    assert '"per_gpu_bytes"' in shown.inner_text() and len(fetched) == 1
    assert len(page.context.pages) == 1  # shown in place, not in a new tab
    page.screenshot(path=str(ARTIFACTS / "ui-view-raw-result-desktop.png"))


def test_the_result_route_serves_a_kept_result_and_nothing_else() -> None:
    import json
    import urllib.error
    import urllib.request

    from ui_harness import running_app

    from advisor.ui.results import PATH_PREFIX, STORE

    token = STORE.put({"per_gpu_bytes": 74_900_000_000, "gpu": "RTX 4090"})
    with urllib.request.urlopen(running_app().url + PATH_PREFIX + token, timeout=30) as res:
        assert res.headers["Content-Type"].startswith("application/json")
        assert json.loads(res.read()) == {"per_gpu_bytes": 74_900_000_000, "gpu": "RTX 4090"}
    for bad in ("0" * 32, "..%2F..%2Fetc%2Fpasswd", token.upper()):
        try:
            urllib.request.urlopen(running_app().url + PATH_PREFIX + bad, timeout=30)
            raise AssertionError(f"{bad!r} was served")
        except urllib.error.HTTPError as err:
            assert err.code == 404


@pytest.mark.parametrize("view", ["desktop", "phone"], indirect=True)  # the page's colours at both layouts
def test_every_text_on_the_page_reads_at_wcag_aa_contrast(view: Any) -> None:
    from pathlib import Path

    page = view
    _send(page, "70b 模型 4bit 跑推理 两张4090够不够")
    _idle(page)
    scan = (Path(__file__).parent / "js" / "contrast.js").read_text(encoding="utf-8")
    # Stop's colours too (the button exists only while a turn runs)
    page.evaluate("() => { const d = document.createElement('div'); d.textContent = '停止 Stop';"
                  " d.style.cssText = 'background: var(--button-cancel-background-fill);"
                  " color: var(--button-cancel-text-color)'; document.querySelector('#input-row').append(d); }")
    assert page.evaluate(scan) == []


@pytest.mark.parametrize(("browser_locale", "page_lang", "clear", "copy_all", "warning", "retry"), [
    ("en-US", "zh", "清空对话", "复制整段对话", "注意", "重新回答"),
    ("zh-CN", "en", "Clear the conversation", "Copy the whole conversation", "Warning", "Answer again"),
])
def test_gradio_s_own_words_follow_the_page_s_language(browser: Any, browser_locale: str, page_lang: str,  # noqa: F811
                                                       clear: str, copy_all: str, warning: str, retry: str) -> None:
    from ui_harness import running_app

    ctx = browser.new_context(locale=browser_locale, viewport={"width": 1440, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(running_app().url + f"?lang={page_lang}")
        page.locator("#chatbot .message-row").first.wait_for()
        page.locator(f"#chatbot button[aria-label='{clear}']").wait_for()
        assert page.locator(f"#chatbot button[aria-label='{copy_all}']").count() == 1
        _send(page, "70b 模型 4bit 跑推理 两张4090够不够")
        _idle(page)
        page.locator(f"#chatbot button[aria-label='{retry}']").first.wait_for(state="attached")
        if not page.locator("#f-context input").is_visible():
            page.locator("#profile .label-wrap").first.click()
        page.fill("#f-context input", "0")  # a value the profile cannot hold: a warning toast
        page.click("#recompute")
        page.locator(".toast-title").filter(has_text=warning).first.wait_for()
    finally:
        ctx.close()


@pytest.mark.parametrize("view", ["desktop"], indirect=True)
def test_quick_answer_chips_copy_and_feedback_on_each_reply(view: Any) -> None:
    import json

    from advisor.ui.feedback import feedback_file

    page = view
    _send(page, "I want to fine-tune Llama-3-8B")  # it asks which training method
    _idle(page)
    chip = page.locator("#chatbot button.option").filter(has_text="QLoRA")
    chip.wait_for()
    chip.click()  # a chip is sent as the answer
    page.locator("#chatbot .user-row").filter(has_text="QLoRA").wait_for()
    _idle(page)
    assert "QLoRA" in page.locator("#chatbot .bot-row").last.inner_text()
    assert page.locator("#chatbot button[aria-label='复制']").count() >= 3  # each message can be copied
    before = feedback_file().read_text(encoding="utf-8").count("\n") if feedback_file().exists() else 0
    page.locator("#chatbot button[aria-label='有用']").last.click()
    page.locator(".toast-body").filter(has_text="谢谢反馈").first.wait_for()
    rows = feedback_file().read_text(encoding="utf-8").splitlines()
    assert len(rows) == before + 1
    vote = json.loads(rows[-1])
    assert vote["vote"] == "up" and vote["question"] == "QLoRA" and "QLoRA" in vote["answer"]


@pytest.mark.parametrize("view", ["phone"], indirect=True)
def test_cited_passages_are_numbered_and_open_in_place_without_internal_keys(view: Any) -> None:
    page = view
    _send(page, "什么是 KV cache？")
    _idle(page)
    answer = page.locator("#chatbot .bot-row").last
    text = answer.inner_text()
    assert "[1]" in text and "[vram/" not in text and "/zh/" not in text  # numbers, not the corpus's keys
    answer.locator("a").filter(has_text="[1]").first.click()
    passage = answer.locator(".raw-result.passage").first
    passage.wait_for()
    page.wait_for_function("() => document.querySelector('#chatbot .raw-result.passage p')?.textContent.length > 40")
    shown = passage.inner_text()
    assert "KV" in shown and "[vram/" not in shown
    page.screenshot(path=str(ARTIFACTS / f"ui-view-passage-{page.size_name}.png"))
