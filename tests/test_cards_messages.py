"""knowledge.cards writes no prose of its own: every sentence and label of the generated cards comes
from the ``cards.*`` messages, so an English card has no Chinese words of ours and every card exists in
both languages.

The H100 SXM figures below are written by hand from the NVIDIA H100 datasheet (80 GB HBM3, 3.35 TB/s,
700 W) as the catalog spells them (plain GB/s without thousands separators), not read from the catalog.
"""

from __future__ import annotations

import re
from importlib import resources

import pytest

from knowledge import load_catalog
from knowledge.cards import generate_documents, gpu_card, model_card, tier_table
from knowledge.corpus import Passage
from knowledge.messages import catalog
from knowledge.schema import Tier

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.fixture(scope="module")
def docs() -> dict[str, Passage]:
    return {p.id: p for p in generate_documents()}


def test_the_module_has_no_chinese_and_no_language_branch() -> None:
    source = resources.files("knowledge").joinpath("cards.py").read_text(encoding="utf-8")
    assert not CJK.search(source)
    assert '== "zh"' not in source and "zh: bool" not in source


def test_english_cards_have_no_chinese_of_ours() -> None:
    """Chinese aliases are catalog data (英伟达H100); without them an English card is all English."""
    cat = load_catalog()
    texts = [gpu_card(g.model_copy(update={"aliases": []}), "en") for g in cat.gpus]
    texts += [model_card(m.model_copy(update={"aliases": []}), "en") for m in cat.models]
    texts += [tier_table(cat, tier, "en") for tier in Tier]
    leaks = [(p.id, line) for p in texts for line in (p.title, *p.text.splitlines()) if CJK.search(line)]
    assert leaks == []


def test_chinese_cards_are_chinese(docs: dict[str, Passage]) -> None:
    for p in docs.values():
        if p.lang == "zh" and p.kind in ("gpu-card", "model-card", "tier-table"):
            assert CJK.search(p.title) and CJK.search(p.text), p.id


def test_every_card_exists_in_both_languages(docs: dict[str, Passage]) -> None:
    stems = {(pid.rsplit("/", 1)[0], pid.rsplit("/", 1)[1]) for pid in docs}
    en = {stem for stem, lang in stems if lang == "en"}
    zh = {stem for stem, lang in stems if lang == "zh"}
    assert en == zh and len(en) * 2 == len(docs)
    for stem in en:
        a, b = docs[f"{stem}/en"], docs[f"{stem}/zh"]
        assert (a.kind, a.doc, a.as_of, a.names) == (b.kind, b.doc, b.as_of, b.names)
        if a.kind != "rule":
            assert a.text != b.text and a.title != b.title, stem


def test_card_messages_exist_in_both_languages_and_cover_every_label(docs: dict[str, Passage]) -> None:
    en = {k for k in catalog("en") if k.startswith("cards.")}
    assert en and en == {k for k in catalog("zh") if k.startswith("cards.")}
    # every label of the twin tables is there: forms, coolings, tier names and intros
    cat = load_catalog()
    for g in cat.gpus:
        assert {f"cards.form.{g.form_factor.value}", f"cards.cooling.{g.cooling.value}"} <= en
    assert {f"cards.tier_name.{t.value}" for t in Tier} | {f"cards.tier_intro.{t.value}" for t in Tier} <= en


def test_h100_sxm_english_card_by_hand(docs: dict[str, Passage]) -> None:
    card = docs["gpu/h100-sxm/en"]
    assert card.title == "H100 SXM 80GB spec card (NVIDIA)"
    assert "Memory (VRAM): 80 GB HBM3; memory bandwidth 3350 GB/s (3.35 TB/s); ECC: yes." in card.text
    assert "Board power (TDP) 700 W; SXM module (HGX baseboard); cooling: passive (no fan; needs server airflow)" in (
        card.text
    )
    assert "BF16 989.4 TFLOPS" in card.text  # datasheet 1979 with sparsity, half of it dense


def test_h100_sxm_chinese_card_by_hand(docs: dict[str, Passage]) -> None:
    card = docs["gpu/h100-sxm/zh"]
    assert card.title == "H100 SXM 80GB 规格卡（NVIDIA）"
    assert "显存：80 GB HBM3，显存容量 80 GB；显存带宽 3350 GB/s（3.35 TB/s）；ECC：是。" in card.text
    assert "功耗（板卡功耗/TDP）700 W；形态：SXM 模组（HGX 基板）；散热：被动散热（无风扇，需要服务器风道）" in (
        card.text
    )
    assert "多卡互联：nvlink，每卡 900 GB/s（双向），最多 8 卡互联，P2P：是" in card.text
