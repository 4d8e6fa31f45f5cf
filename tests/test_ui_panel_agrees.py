"""The side panel agrees with the chat reply (issue 20, item 4): the candidate table lists the options the reply
names, with the same figures in the same currency, and the memory chart calls usable what the reply calls usable.

Each test holds a real conversation (``Advisor().reply``), reads the options and figures out of the reply text the
user reads, and compares them with what the panel renders through the functions ``panel_values`` uses
(``render.panel_comparison``, ``chart.memory_chart_svg``). Memory figures are also checked against hand-derived
values (a '24 GB' card is 24 GiB less ~0.5 GiB the driver keeps; vLLM reserves 0.92 of that).
"""

from __future__ import annotations

import functools
import re

import pytest

from advisor.engine import Advisor, Reply
from advisor.session import Session
from advisor.ui import calculators, chart, profile, render

GIB = 2**30
RTX_4090_VISIBLE = 24 * GIB - GIB // 2  # what the engine sees of a '24 GB' card
RTX_4090_VLLM = RTX_4090_VISIBLE * 0.92  # vLLM's reservation: gpu_memory_utilization 0.92


@functools.cache
def _advisor() -> Advisor:
    return Advisor()


@functools.cache
def _talk(text: str) -> tuple[Reply, Session]:
    session = _advisor().new_session()
    return _advisor().reply(text, session), session


def _panel(session: Session, page_lang: str) -> tuple[list[dict[str, str]], str]:
    """(table rows as {column: text}, notes) exactly as ``panel_values`` renders them."""
    table, notes = render.panel_comparison(session.last_results, page_lang,
                                           profile.budget_currency(session.profile), session.lang)
    return _rows(table), notes


def _rows(markdown: str) -> list[dict[str, str]]:
    lines = [ln for ln in markdown.splitlines() if ln.startswith("|")]
    if not lines:
        return []
    cells = [[re.sub(r"<[^>]+>", "", c).strip() for c in ln.strip("|").split(" | ")] for ln in lines]
    head, body = cells[0], cells[2:]
    return [dict(zip(head, row, strict=True)) for row in body]


def _chart_text(session: Session, lang: str) -> str:
    name = "size_training" if session.profile.use_case == "training" else "size_inference"
    html = chart.memory_chart_svg(chart.sizing_of(session.last_results.get(name)), lang)
    return re.sub(r"<title>.*?</title>", " ", html).replace("&lt;", "<")  # tooltips aside: the words on the page


def _gb(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:,.1f} GB"


# ------------------------------------------------------------------------------ the options


def test_yuan_budget_quantised_routes_are_the_panels_options() -> None:
    """The native precision finds nothing within ¥100,000; the reply offers three options for each of INT4, FP8
    and GGUF — the panel lists those nine, in that order, in yuan, with the reply's speeds."""
    reply, session = _talk("我想本地部署 Qwen2.5-72B 做推理，预算 10 万，买什么卡？")
    block = reply.text.split("**如果量化**", 1)[1].split("\n\n", 1)[0]
    said = re.findall(r"(\d+)× (.+?)（(¥[\d,]+)，约 ([\d.,]+) tokens/s）", block)
    assert len(said) == 9, block  # three routes × three options
    rows, notes = _panel(session, "zh")
    shown = [(r["配置"].split("× ", 1)[0], r["配置"].split("× ", 1)[1], r["价格（CNY）"], r["预估 tokens/s"])
             for r in rows]
    assert shown == said
    assert [r["精度"].split("（")[0] for r in rows] == ["INT4"] * 3 + ["FP8"] * 3 + ["GGUF Q4_K_M"] * 3
    assert all(r["放得下"] == "✅" for r in rows)
    assert "$" not in "".join(map(str, rows)) and "$" not in notes
    assert "**INT4（AWQ/GPTQ，vLLM）**" in notes  # the notes follow the same routes, under the reply's headings


def test_dollar_budget_panel_lists_the_replys_table_and_its_unpriced_option() -> None:
    """$6,000 for Qwen2.5-14B: the reply's table (3 rows) and its 'also, no known price' option, figure for figure."""
    reply, session = _talk("Which GPU for Qwen2.5-14B for 4 users, $6,000?")
    said = re.findall(r"^\| \d+\. \| (.+?) \| \w+ \| ([\d.]+ / [\d.]+) GB \| ([\d.,]+) tokens/s \| ([\d,]+) W \| "
                      r"(\$[\d,]+) \|$", reply.text, re.M)
    assert len(said) == 3, reply.text
    line = next(ln for ln in reply.text.splitlines() if "with no known price" in ln).split(": ", 1)[1]
    unpriced = re.findall(r"(?:^|; )(.+?) \(price unknown, about ([\d.,]+) tokens/s\)", line)
    rows, notes = _panel(session, "en")
    shown = [(r["Configuration"], r["Per GPU need / usable (GB)"], r["Est. tokens/s"], r["Power (W)"],
              r["Price (USD)"]) for r in rows]
    assert shown[:3] == said
    assert [(r["Configuration"], r["Est. tokens/s"], r["Price (USD)"]) for r in rows[3:]] == [
        (cfg, tps, "—") for cfg, tps in unpriced]
    assert len(rows) == 3 + len(unpriced)  # nothing the reply does not name
    assert "¥" not in notes and notes.startswith("1. 2× GeForce RTX 3090")


def test_reply_language_sets_the_currency_without_a_budget() -> None:
    """An English question on a Chinese page, no budget: the reply prices in dollars, and so does the panel."""
    reply, session = _talk("Which GPU should I buy to serve Qwen2.5-14B to 4 users?")
    first = re.search(r"^\| 1\. \| (.+?) \|.*\| (\$[\d,]+) \|$", reply.text, re.M)
    assert first, reply.text
    rows, _ = _panel(session, "zh")
    assert rows and (rows[0]["配置"], rows[0]["价格（USD）"]) == (first.group(1), first.group(2))


def test_own_cards_check_lists_no_purchase_the_reply_does_not_make() -> None:
    """'Are two 4090s enough for a 4-bit 70B?': the reply weighs the user's cards (GGUF fits) and names nothing to
    buy — the panel must not show candidates the reply never mentions."""
    reply, session = _talk("70b 模型 4bit 跑推理 两张4090够不够")
    assert "放得下" in reply.text and session.last_results.get("recommend") is not None
    rows, _ = _panel(session, "zh")
    assert rows == []


# ------------------------------------------------------------------------------ one usable figure


def test_no_fit_chart_calls_usable_what_the_reply_does() -> None:
    """vLLM INT4 on 2× 4090: the reply says 24.3 GB needed, 23.2 GB usable after vLLM's reservation, does not fit;
    the chart says the same two figures and the same verdict (never '25.2 GB usable')."""
    reply, session = _talk("70b 模型 4bit 跑推理 两张4090够不够")
    m = re.search(r"每卡需要 ([\d.]+ GB)，vLLM 预留后可用 ([\d.]+ GB)", reply.text)
    assert m, reply.text
    need, usable = m.groups()
    assert usable == _gb(RTX_4090_VLLM) == "23.2 GB"  # hand-derived: 0.92 × (24 GiB − 0.5 GiB)
    text = _chart_text(session, "zh")
    assert f"需要 {need}" in text and f"可用显存 {usable}" in text and "放不下" in text
    assert not re.search(r"可用显存 " + re.escape(_gb(RTX_4090_VISIBLE)), text)


def test_training_chart_usable_is_the_replys() -> None:
    """QLoRA on a 4090 (no vLLM reservation): the reply's '25.2 GB (23.5 GiB) usable' is the chart's."""
    reply, session = _talk("Can I fine-tune Llama-3-8B with QLoRA on one RTX 4090?")
    m = re.search(r"([\d.]+ GB) \([\d.]+ GiB\) usable", reply.text)
    assert m and m.group(1) == _gb(RTX_4090_VISIBLE) == "25.2 GB", reply.text
    assert f"Usable memory {m.group(1)}" in _chart_text(session, "en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_calculator_usable_is_the_chats(lang: str) -> None:
    """The Calculators tab's memory sizing quotes the chat's usable figure, rounded the same, in its chart and
    its summary line (and the engine-visible total only as the total)."""
    reply, _ = _talk("Can I run Llama-3.1-8B on one RTX 4090 with vLLM, 8k context?")
    said = re.search(r"([\d.]+ GB) \(([\d.]+ GiB)\) usable", reply.text)
    assert said and said.group(1) == _gb(RTX_4090_VLLM), reply.text
    html, md, _ = calculators.memory_calc("inference", "llama-3.1-8b", None, "bf16", 8192, 1, "rtx-4090", 1, "vllm",
                                          "lora", lang)
    word = "可用" if lang == "zh" else "usable"
    assert f"{said.group(1)} ({said.group(2)}) {word}" in md or f"{word} {said.group(1)}" in md, md
    chart_words = re.sub(r"<[^>]+>", " ", re.sub(r"<title>.*?</title>", " ", html))
    label = "可用显存" if lang == "zh" else "Usable memory"
    assert f"{label} {said.group(1)}" in chart_words
    assert f"{label} {_gb(RTX_4090_VISIBLE)}" not in chart_words


# ------------------------------------------------------------------------------ figures stay on one line


def test_table_figures_are_marked_to_stay_on_one_line() -> None:
    _, session = _talk("Which GPU for Qwen2.5-14B for 4 users, $6,000?")
    table, notes = render.panel_comparison(session.last_results, "en", "USD", "en")
    assert '<span class="num">$4,000</span>' in table and '<span class="num">20.0 / 23.2</span>' in table
    assert '<span class="num">1,100</span>' in table
    assert "1,625\u00a0W" in notes and "20.0\u00a0GB" in notes  # a figure and its unit: a no-break space
