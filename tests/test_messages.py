"""Message catalogs: every id in every language with the same placeholders; fallback for a new language."""

from __future__ import annotations

import string
from importlib import resources

import pytest

from knowledge import messages
from knowledge.messages import catalog, msg, render
from tools.result import note

LANGS = sorted(p.name.removesuffix(".toml") for p in resources.files("knowledge.messages").iterdir()
               if p.name.endswith(".toml"))


def _fields(text: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(text) if name}


def test_both_product_languages_are_there() -> None:
    assert {"en", "zh"} <= set(LANGS)


@pytest.mark.parametrize("lang", ["zh"])
def test_every_id_exists_in_every_product_language_with_the_same_placeholders(lang: str) -> None:
    en, other = catalog("en"), catalog(lang)
    assert sorted(en.keys() - other.keys()) == [], f"missing in {lang}"
    assert sorted(other.keys() - en.keys()) == [], f"only in {lang}"
    differ = [k for k in en if _fields(en[k]) != _fields(other[k])]
    assert differ == []


def test_a_new_language_needs_only_its_message_file_and_falls_back_to_english(tmp_path, monkeypatch) -> None:
    (tmp_path / "en.toml").write_text(resources.files("knowledge.messages").joinpath("en.toml")
                                      .read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "xx.toml").write_text('[cli]\ncontext_not_given = "ctx? -> {tokens:,}"\n'
                                      'engine_not_given = "engine? -> {engine}"\n'
                                      'seq_not_given = "seq? -> {tokens}"\n', encoding="utf-8")
    monkeypatch.setattr(messages, "resources", _Files(tmp_path))
    catalog.cache_clear()
    try:
        assert msg("xx", "cli.context_not_given", tokens=8192) == "ctx? -> 8,192"
        assert msg("xx", "cli.seq_not_given", tokens=4096) == "seq? -> 4096"
        assert msg("xx", "cli.precision_not_given", precision="fp8").startswith("precision not given: fp8")
    finally:
        catalog.cache_clear()


class _Files:
    """Stands in for importlib.resources, serving message files from a folder."""

    def __init__(self, folder) -> None:
        self.folder = folder

    def files(self, _package: str):
        return self.folder


def test_a_note_renders_in_each_language_and_keeps_english_text_for_json() -> None:
    n = note("cli.context_not_given", tokens=8192)
    assert n.text == "context not given: 8,192 tokens assumed (--context N)"
    assert render(n, "zh") == "未指定上下文：按 8,192 tokens 计（--context N）"
    assert render(n.model_dump(), "zh") == render(n, "zh")
    assert render("plain text", "zh") == "plain text"


def test_english_words_follow_the_number_and_chinese_needs_no_plural() -> None:
    assert msg("en", "present.check.errors", count=1) == "✗ Build has 1 error"
    assert msg("en", "present.check.errors", count=3) == "✗ Build has 3 errors"
    assert msg("en", "present.check.title", count=1) == "Build check · 1 GPU"
    # no 'error(s)' left for a reader to decode (catalog prose is data: 'the graphics slot(s)' of a platform)
    assert "(s)" not in "".join(v for k, v in catalog("en").items() if not k.startswith("catalog_text."))
    assert msg("zh", "present.check.errors", count=3) == msg("zh", "present.check.errors", count=1).replace("1", "3")


@pytest.mark.parametrize("lang", LANGS)
def test_no_message_shows_a_user_the_projects_own_file_paths(lang: str) -> None:
    """A reply names sources by title, never by where the project keeps them ('knowledge/data/fabric.toml' reached
    a buyer)."""
    leaks = [k for k, text in catalog(lang).items() if "knowledge/" in text or ".toml" in text or ".py" in text]
    assert leaks == []
