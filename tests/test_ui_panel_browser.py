"""The side panel in a real headless Chromium, on a desktop and a phone (issue 20, items 4 and 5): after a buying
question the candidate table lists the options the reply names, no figure in it breaks across lines, and every
word of the memory chart is at least 12 px on screen.

Debian's ``chromium`` through Playwright for Python, as in ``test_ui_browser.py``: a missing browser skips outside
CI and fails in it. Screenshots: ``tests/artifacts/ui-panel-desktop.png`` and ``ui-panel-phone.png`` (git-ignored).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ui_browser import ARGS, ARTIFACTS, CHROMIUM, TIMEOUT_MS, _unavailable

QUESTION = "我想本地部署 Qwen2.5-72B 做推理，预算 10 万，买什么卡？"
VIEWPORTS = {"desktop": (1440, 900), "phone": (390, 844)}

# every figure of the table on one line: one client rect per number span, no taller than one line
_WRAPPED = """() => Array.from(document.querySelectorAll('#comparison td .num')).filter(e => {
  const lh = parseFloat(getComputedStyle(e).lineHeight) || parseFloat(getComputedStyle(e).fontSize) * 1.6;
  return e.getClientRects().length !== 1 || e.getBoundingClientRect().height > lh * 1.5;
}).map(e => e.textContent)"""
# a table wider than the panel (a phone) scrolls sideways inside it rather than being cut off
_CUT_OFF = """() => {
  const box = document.querySelector('#comparison'), table = box.querySelector('table');
  if (table.getBoundingClientRect().width <= box.getBoundingClientRect().width + 1) return false;
  for (let e = table.parentElement; e && e !== box.parentElement; e = e.parentElement) {
    const o = getComputedStyle(e).overflowX;
    if ((o === 'auto' || o === 'scroll') && e.scrollWidth > e.clientWidth) return false;
  }
  return true;
}"""
# the size each piece of the chart's text is drawn at: CSS px for HTML, scaled user units for any SVG text
_CHART_TEXT = """() => {
  const out = [];
  for (const e of document.querySelectorAll('#mem-chart *')) {
    const own = Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || e.closest('title')) continue;
    let px = parseFloat(getComputedStyle(e).fontSize);
    const svg = e.closest('svg');
    if (svg) px *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    out.push([e.textContent.trim().slice(0, 30), px]);
  }
  return out;
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[tuple[Any, str]]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright; never `playwright install`)")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium fonts-noto-cjk fonts-noto-color-emoji)")
    from ui_harness import running_app

    app = running_app()
    ARTIFACTS.mkdir(exist_ok=True)
    profile = tempfile.mkdtemp(prefix="gpu-advisor-chromium-")
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=ARGS,
                                                   locale="zh-CN", viewport={"width": 1440, "height": 900})
        yield ctx, app.url
        ctx.close()
    shutil.rmtree(profile, ignore_errors=True)


def _ask(ctx: Any, url: str, size: tuple[int, int]) -> Any:
    """A fresh page at ``size`` that has asked the buying question and shows the whole answer."""
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(url, wait_until="load")
    page.locator("#chatbot").get_by_text("你好").first.wait_for()
    page.fill("#msg textarea", QUESTION)
    page.press("#msg textarea", "Enter")
    page.locator("#chatbot").get_by_text("如果量化").first.wait_for()
    page.wait_for_function("() => !document.querySelector('#chatbot .pending')", timeout=TIMEOUT_MS)
    page.locator("#comparison table tr").nth(1).wait_for()
    page.locator("#mem-chart svg .seg-weights").wait_for()
    return page


def _reply_options(page: Any) -> list[tuple[str, str, str]]:
    """(configuration, price, tokens/s) of each option the reply names under 'if you quantise'."""
    text = page.locator("#chatbot").inner_text()
    block = text.split("如果量化", 1)[1].split("FP8 几乎不损失质量", 1)[0]
    return [(f"{n}× {gpu}", price, speed)
            for n, gpu, price, speed in re.findall(r"(\d+)× (.+?)（(¥[\d,]+)，约 ([\d.,]+) tokens/s）", block)]


def _panel_options(page: Any) -> list[tuple[str, str, str]]:
    heads = [h.strip() for h in page.locator("#comparison th").all_inner_texts()]
    col = {name: heads.index(name) for name in ("配置", "价格（CNY）", "预估 tokens/s")}
    rows = []
    for tr in page.locator("#comparison tbody tr").all():
        cells = [c.strip() for c in tr.locator("td").all_inner_texts()]
        rows.append((cells[col["配置"]], cells[col["价格（CNY）"]], cells[col["预估 tokens/s"]]))
    return rows


@pytest.mark.parametrize("name", list(VIEWPORTS))
def test_panel_matches_the_reply_and_stays_readable(browser: tuple[Any, str], name: str) -> None:
    ctx, url = browser
    page = _ask(ctx, url, VIEWPORTS[name])
    try:
        said = _reply_options(page)
        assert len(said) == 9, said  # INT4, FP8 and GGUF: three each
        assert _panel_options(page) == said
        assert page.locator("#comparison td .num").count() >= 9 * 5  # need/usable, speed, power, price, value
        assert page.evaluate(_WRAPPED) == []
        assert page.evaluate(_CUT_OFF) is False
        sizes = page.evaluate(_CHART_TEXT)
        assert sizes and all(px >= 12 for _, px in sizes), [s for s in sizes if s[1] < 12]
        table_px = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('#comparison td'))"
                                 ".fontSize)")
        assert table_px >= 12
        page.locator("#comparison").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"ui-panel-{name}.png"), full_page=True)
    finally:
        page.close()
