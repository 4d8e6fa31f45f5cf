"""Catalog prose lives in the message files, in every product language: a GPU's notes, price note and
link note, a model's and a platform's notes, a platform's lane layout and a scientific code's note
(``catalog_text.<kind>.<id>``). The data files keep figures, sources and dates; the Chinese CLI and cards
show the Chinese text, with the same numbers as the English."""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from importlib import resources

import pytest

from advisor.cli import main
from knowledge import load_catalog
from knowledge.cards import gpu_card, model_card
from knowledge.catalog_text import (
    KINDS,
    catalog_text,
    code_note,
    gpu_link_note,
    gpu_notes,
    gpu_price_note,
    model_notes,
    platform_chipset_note,
    platform_notes,
)
from knowledge.codes import scientific_codes
from knowledge.messages import catalog, msg

try:
    from test_language_leaks import _english_runs
except ImportError:  # tests/ collected as a package
    from tests.test_language_leaks import _english_runs

CATALOG = load_catalog()
CJK = re.compile(r"[\u3400-\u9fff]")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# product names of several English words that the Chinese text keeps as they are
NAMES = ("Infinity Fabric Link", "Pro WS WRX90E-SAGE SE", "ASRock Rack ALTRAD8UD")
# a month written the Chinese way: 'May 2025' is '2025 年 5 月', one number more than the English
MONTHS = {("model_notes", "deepseek-r1-0528-qwen3-8b"): "5", ("gpu_price", "h100-sxm"): "5"}


def _entries() -> dict[str, set[str]]:
    """Entry ids by kind that a text may belong to."""
    gpus = {g.id for g in CATALOG.gpus}
    return {"gpu_notes": gpus, "gpu_price": {g.id for g in CATALOG.gpus if g.price}, "gpu_link": gpus,
            "model_notes": {m.id for m in CATALOG.models}, "platform_notes": {p.id for p in CATALOG.platforms},
            "platform_chipset": {p.id for p in CATALOG.platforms}, "code_note": {c.id for c in scientific_codes()}}


def _texts(lang: str) -> dict[tuple[str, str], str]:
    """(kind, entry id) → text, every catalog text of ``lang``."""
    out = {}
    for key, text in catalog(lang).items():
        if key.startswith("catalog_text."):
            kind, _, entry = key.removeprefix("catalog_text.").partition(".")
            out[(kind, entry)] = text
    return out


def test_every_text_belongs_to_an_entry() -> None:
    entries = _entries()
    texts = _texts("en")
    assert {kind for kind, _ in texts} == set(KINDS)
    orphans = [(kind, entry) for kind, entry in texts if entry not in entries[kind]]
    assert orphans == []
    # the entries that had prose in the data files when it moved here: every GPU (notes, link), every priced
    # GPU (price note), every model, platform (notes, lanes) and code
    assert len(texts) >= 281


def test_each_text_is_in_both_languages_and_translated() -> None:
    en, zh = _texts("en"), _texts("zh")
    assert en.keys() == zh.keys()
    for key, text in zh.items():
        # in Chinese words, unless there is nothing to translate ('PCIe Gen4 x16')
        assert text.strip() and (CJK.search(text) or (text == en[key] and not _english_runs(text))), key


def test_the_numbers_are_the_same_in_both_languages() -> None:
    en, zh = _texts("en"), _texts("zh")
    differ = {}
    for key, text in en.items():
        extra = Counter(NUMBER.findall(zh[key])) - Counter(NUMBER.findall(text))
        missing = Counter(NUMBER.findall(text)) - Counter(NUMBER.findall(zh[key]))
        if key in MONTHS:
            extra -= Counter([MONTHS[key]])
        if extra or missing:
            differ[key] = (dict(missing), dict(extra))
    assert differ == {}


def test_chinese_texts_have_no_english_sentences() -> None:
    leaks = {}
    for key, text in _texts("zh").items():
        for name in NAMES:
            text = text.replace(name, " ")
        if runs := _english_runs(text):
            leaks[key] = runs
    assert leaks == {}
    assert _english_runs("FP16 速率未公布（not published by the vendor）")  # the check does catch English


def test_the_message_file_renders_the_texts_as_written() -> None:
    """No placeholders: a text with braces would be formatted; plain ids look up with dots and dashes."""
    for lang in ("en", "zh"):
        for (kind, entry), text in _texts(lang).items():
            assert "{" not in text and "}" not in text, (lang, kind, entry)
    assert model_notes("qwen2.5-72b", "en").startswith("Card: 72.7B total")
    assert model_notes("qwen2.5-72b", "zh").startswith("模型卡：总参数 72.7B")
    assert code_note("openfoam", "zh") == "默认以双精度构建（WM_PRECISION_OPTION=DP）。"
    assert catalog_text("gpu_price", "biren-br104", "zh") == "" == gpu_price_note("biren-br104", "en")  # no price


def test_the_data_files_hold_no_prose() -> None:
    data = resources.files("knowledge.data")
    for folder in ("gpus", "models", "platforms", "codes"):
        for f in data.joinpath(folder).iterdir():
            if not f.name.endswith(".toml"):
                continue
            for table in tomllib.loads(f.read_text(encoding="utf-8")).values():
                for row in table if isinstance(table, list) else []:
                    prose = {"notes", "note", "chipset_lanes_note"} & set(row)
                    prose |= {f"{k}.note" for k in ("price", "interconnect") if "note" in row.get(k, {})}
                    assert not prose, (f.name, row["id"], prose)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _prose_lines(out: str, lang: str) -> list[str]:
    """The lines of a `show` view in sentences: not the head row (names) nor the source and software lists."""
    lists = tuple(f"  {msg(lang, f'catalog.{k}')}:" for k in ("sources", "software"))
    return [line for line in out.splitlines()[1:] if not line.startswith(lists)]


@pytest.mark.parametrize("gpu", ["mi300x", "h100-sxm", "ascend-910b", "hygon-k100-ai", "rtx-4090d"])
def test_gpus_show_in_chinese_has_chinese_notes(capsys: pytest.CaptureFixture[str], gpu: str) -> None:
    out = _cli(capsys, "gpus", "show", gpu, "--lang", "zh")
    assert f"  {msg('zh', 'catalog.notes')}: {gpu_notes(gpu, 'zh')}" in out.splitlines()
    assert gpu_notes(gpu, "en") not in out
    assert [(line, _english_runs(line)) for line in _prose_lines(out, "zh") if _english_runs(line)] == []
    en = _cli(capsys, "gpus", "show", gpu, "--lang", "en")
    assert f"  Notes: {gpu_notes(gpu, 'en')}" in en.splitlines()


@pytest.mark.parametrize("platform", [p.id for p in CATALOG.platforms])
def test_platforms_show_in_chinese_has_chinese_lanes_and_notes(capsys: pytest.CaptureFixture[str],
                                                                platform: str) -> None:
    out = _cli(capsys, "platforms", "show", platform, "--lang", "zh")
    text = out
    for name in NAMES:
        text = text.replace(name, " ")
    lines = _prose_lines(text, "zh")
    assert [(line, _english_runs(line)) for line in lines if _english_runs(line)] == []
    assert platform_chipset_note(platform, "zh") in out and platform_notes(platform, "zh") in out
    assert platform_notes(platform, "en") not in out


def test_json_keeps_the_english_prose_in_its_fields(capsys: pytest.CaptureFixture[str]) -> None:
    """Scripts reading `--json` get the fields they had, in English whatever the language."""
    gpu = json.loads(_cli(capsys, "gpus", "show", "mi300x", "--json", "--lang", "zh"))
    assert gpu["notes"] == gpu_notes("mi300x", "en")
    assert gpu["price"]["note"] == gpu_price_note("mi300x", "en")
    assert list(gpu["price"])[-2:] == ["note", "sources"]
    assert gpu["interconnect"]["note"] == gpu_link_note("mi300x", "en")
    platform = json.loads(_cli(capsys, "platforms", "show", "EPYC 9654", "--json"))
    keys = list(platform)
    assert keys[keys.index("gpu_slot_lanes") + 1] == "chipset_lanes_note" and keys[-1] == "notes"
    assert platform["chipset_lanes_note"] == platform_chipset_note(platform["id"], "en")
    listed = json.loads(_cli(capsys, "models", "--json"))["models"]
    assert all(m["notes"] == model_notes(m["id"], "en") for m in listed)


def test_cards_carry_the_texts_of_their_language() -> None:
    for g in CATALOG.gpus:
        for lang in ("en", "zh"):
            card = gpu_card(g, lang).text
            assert gpu_notes(g.id, lang) in card and gpu_link_note(g.id, lang) in card, (g.id, lang)
            if g.price:
                assert gpu_price_note(g.id, lang) in card, (g.id, lang)
        assert gpu_notes(g.id, "en") not in gpu_card(g, "zh").text
    for m in CATALOG.models:
        assert model_notes(m.id, "zh") in model_card(m, "zh").text
        assert model_notes(m.id, "en") in model_card(m, "en").text
