"""Prices say what they are: a kind on every price (no default), shown with its date in every answer, a price over
six months older than the catalog's last check marked as such, and no price without a source (issue 37, item 5)."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from advisor.engine import Advisor
from advisor.fmt import price_basis
from knowledge import load_catalog
from knowledge.markets import markets_as_of
from knowledge.messages import has, msg
from knowledge.schema import Price

CAT = load_catalog()


def test_a_price_without_its_kind_is_refused() -> None:
    with pytest.raises(ValidationError, match="kind"):
        Price(usd=1000, as_of=dt.date(2026, 1, 1), sources=["S-TPU"])


def test_every_price_has_a_source_and_no_note_denies_it() -> None:
    for g in CAT.gpus:
        if g.price is None:
            continue
        assert g.price.sources, g.id
        for lang in ("en", "zh"):
            key = f"catalog_text.gpu_note.{g.id}"
            note = msg(lang, key) if has(lang, key) else ""
            assert "No price basis recorded." not in note and "未记录价格依据" not in note, g.id


def test_the_yuan_channel_price_is_called_so_and_the_dollar_one_by_its_own_kind() -> None:
    """H200: ¥182,000 China channel price (cnyes, Jan 2026) beside a dollar per-GPU share of an HGX system."""
    h200 = CAT.gpu("h200-sxm")
    assert "国内渠道价" in price_basis(h200, "zh") and "官方价" not in price_basis(h200, "zh")
    assert "derived estimate" in price_basis(h200, "en")


def test_a_price_over_six_months_old_is_marked() -> None:
    """The catalog was last checked on its market table's date (2026-12-06): 2026-06-01 is 188 days earlier."""
    assert markets_as_of() == dt.date(2026, 12, 6)
    old = CAT.gpu("rtx-a6000")  # launch MSRP dated 2026-06-01
    new = CAT.gpu("rtx-5080")  # street price dated 2026-01-24 … check by date, not by name
    assert old.price is not None and old.price.as_of == dt.date(2026, 6, 1)
    assert "over six months old" in price_basis(old, "en") and "已超过半年" in price_basis(old, "zh")
    recent = [g for g in CAT.gpus if g.price and (markets_as_of() - g.price.as_of).days <= 183]
    assert recent and all("over six months" not in price_basis(g, "en") for g in recent)
    assert new.price is not None and ("over six months" in price_basis(new, "en")) == (
        (markets_as_of() - new.price.as_of).days > 183)


def test_a_price_answer_and_a_recommendation_say_the_kind_and_date() -> None:
    adv = Advisor(search_k=0)
    r = adv.reply("我们是上海的一家中小企业，现在能买到 H200 吗？大概多少钱？", adv.new_session())
    assert "国内渠道价，截至 2026-01-10" in r.text and "官方价" not in r.text
    r = adv.reply("预算 50 万，部署 Qwen2.5-72B 推理，10 个并发，买什么卡", adv.new_session())
    line = next(ln for ln in r.text.splitlines() if ln.startswith("卡价依据"))
    assert line.count("截至") >= 2 and "#1" in line


def test_gpus_json_shows_each_prices_kind_and_date(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from advisor.cli import main

    assert main(["gpus", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["gpus"]
    priced = [r for r in rows if r["price"]]
    assert len(priced) >= 70
    assert all(r["price"]["kind"] and r["price"]["as_of"] and r["price"]["sources"] for r in priced)


def test_a_recommendation_with_a_price_the_buyer_gave_for_an_unpriced_card_shows_its_basis() -> None:
    """The 22 GB 2080 Ti has no catalog price; '2500 一张' is the buyer's: its row's basis says so (a crash
    before: the price basis read a date the card does not have)."""
    from tests.fakes.script import turn

    adv = Advisor(search_k=0)
    s = adv.new_session()
    turn(adv, s, "闲鱼上2080ti魔改22g的现在2500一张左右，买两张跑qwen3 32b靠谱不？有没有坑")
    r = turn(adv, s, "那要是不买两张22g，直接上一张全新4090D 24g呢，现在大概一万四左右，哪个划算")
    assert "出错" not in r.text and "ValueError" not in r.text


@pytest.mark.parametrize(("text", "lead"), [
    ("Found a used 3090 locally for $650, ex-gaming, no mining. Fair price?",
     "**$650 for GeForce RTX 3090 is 13 % below the catalog**"),  # 650 / 750 − 1 = −13 %
    ("H100 一张 22 万，贵不贵", "**H100 SXM 80GB 报 ¥220,000，比目录价高 22%**"),  # 220,000 / (25,000 × 7.2) − 1
])
def test_a_single_cards_price_is_judged_against_the_catalog(text: str, lead: str) -> None:
    adv = Advisor(search_k=0)
    assert adv.reply(text, adv.new_session()).text.startswith(lead)
