"""knowledge.corpus: parsing articles into passages (fixtures in tmp dirs) and the packaged corpus."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from knowledge.corpus import (
    CorpusError,
    Passage,
    corpus_hash,
    load_articles,
    load_corpus,
    parse_article,
)

ARTICLE = """---
id: cooling
title: Cooling basics
lang: en
source: reference/hardware_rules.md §5 A3
as_of: 2026-11-01
---
A short lead paragraph before any section.

## Passive cards {#passive}
Passive cards have no fan.

### A sub-heading stays inside the section
More text.

```
## not a heading inside a code block
```

## Blowers {#blower}
Blower cards exhaust out of the case.
"""


def write(root: Path, lang: str, name: str, text: str) -> Path:
    folder = root / lang
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_sections_become_passages_with_ids_and_metadata() -> None:
    passages = parse_article(ARTICLE, "en/cooling.md")
    assert [p.id for p in passages] == ["cooling/en/passive", "cooling/en/blower"]
    first, second = passages
    assert first.title == "Cooling basics — Passive cards"
    assert first.lang == "en" and first.kind == "article" and first.doc == "cooling#passive"
    assert first.as_of == dt.date(2026, 11, 1)
    assert "hardware_rules.md §5 A3" in first.source and "cooling#passive" in first.source
    # the lead paragraph joins the first section; sub-headings and code blocks stay inside it
    assert first.text.startswith("A short lead paragraph")
    assert "Passive cards have no fan." in first.text
    assert "### A sub-heading stays inside the section" in first.text
    assert "## not a heading inside a code block" in first.text
    assert second.text == "Blower cards exhaust out of the case."


def test_heading_without_slug_gets_one_and_crlf_is_accepted() -> None:
    text = ARTICLE.replace("{#blower}", "").replace("\n", "\r\n")
    ids = [p.id for p in parse_article(text)]
    assert ids == ["cooling/en/passive", "cooling/en/blowers"]


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (ARTICLE.replace("---\nid", "id", 1), "front matter"),
        (ARTICLE.replace("lang: en\n", ""), "lacks lang"),
        (ARTICLE.replace("lang: en", "lang: fr"), "lang must be"),
        (ARTICLE.replace("as_of: 2026-11-01", "as_of: soon"), "as_of"),
        (ARTICLE.replace("id: cooling", "id: Cooling Basics"), "slug"),
        (ARTICLE.replace("{#blower}", "{#passive}"), "duplicate section slug"),
        (ARTICLE.replace("Blower cards exhaust out of the case.\n", ""), "is empty"),
        (ARTICLE.replace("as_of: 2026-11-01\n---", "as_of: 2026-11-01"), "closing '---'"),
    ],
)
def test_malformed_articles_raise_corpus_error_naming_the_file(broken: str, message: str) -> None:
    with pytest.raises(CorpusError, match=message) as info:
        parse_article(broken, "en/cooling.md")
    assert "en/cooling.md" in str(info.value)


def test_load_articles_reads_both_language_folders(tmp_path: Path) -> None:
    write(tmp_path, "en", "cooling.md", ARTICLE)
    write(
        tmp_path,
        "zh",
        "cooling.md",
        ARTICLE.replace("lang: en", "lang: zh").replace("Passive cards have no fan.", "被动散热的卡没有风扇。"),
    )
    passages = load_articles(tmp_path)
    assert [p.id for p in passages] == sorted(p.id for p in passages)
    assert {p.id for p in passages} == {
        "cooling/en/passive",
        "cooling/en/blower",
        "cooling/zh/passive",
        "cooling/zh/blower",
    }
    zh = next(p for p in passages if p.id == "cooling/zh/passive")
    assert "被动散热" in zh.text and zh.doc == "cooling#passive"


def test_file_in_the_wrong_language_folder_is_rejected(tmp_path: Path) -> None:
    write(tmp_path, "zh", "cooling.md", ARTICLE)  # says lang: en
    with pytest.raises(CorpusError, match="does not match its folder"):
        load_articles(tmp_path)


def test_same_id_in_two_files_is_rejected(tmp_path: Path) -> None:
    write(tmp_path, "en", "a.md", ARTICLE)
    write(tmp_path, "en", "b.md", ARTICLE)
    with pytest.raises(CorpusError, match="already defined"):
        load_articles(tmp_path)


def test_corpus_hash_tracks_content_not_order() -> None:
    passages = parse_article(ARTICLE)
    assert corpus_hash(passages) == corpus_hash(list(reversed(passages)))
    changed = [passages[0].model_copy(update={"text": passages[0].text + " Edited."}), passages[1]]
    assert corpus_hash(changed) != corpus_hash(passages)


def test_public_fields_are_the_cli_contract() -> None:
    p = Passage(id="x/en/y", title="T", text="body", lang="en", source="s", as_of=dt.date(2026, 1, 1), score=0.123456)
    assert p.public() == {"id": "x/en/y", "title": "T", "text": "body", "source": "s", "lang": "en", "score": 0.1235}


def test_packaged_corpus_loads_with_unique_well_formed_ids() -> None:
    passages = load_corpus()
    ids = [p.id for p in passages]
    assert len(ids) == len(set(ids))
    kinds = {p.kind for p in passages}
    assert kinds == {"article", "gpu-card", "model-card", "rule", "tier-table"}
    article_id = re.compile(r"^[a-z0-9-]+/(en|zh)/[a-z0-9-]+$")
    for p in passages:
        assert p.text.strip() and p.title.strip() and p.source.strip()
        if p.kind == "article":
            assert article_id.match(p.id), p.id
            assert p.id.split("/")[1] == p.lang
        else:
            assert p.id.endswith(f"/{p.lang}"), p.id
    assert {p.lang for p in passages} == {"en", "zh"}
