"""The guidance corpus: articles in ``knowledge/corpus/{en,zh}/*.md`` cut into passages.

Article format::

    ---
    id: vram
    title: VRAM comes first
    lang: en
    source: our own words; facts from S-DETTMERS, S-PUGET-ML-QUOTE
    as_of: 2026-11-01
    ---
    Optional lead paragraph (joins the first section).

    ## Capacity decides the model size {#capacity}
    ...

Each ``## Heading {#slug}`` section is one passage with id ``{id}/{lang}/{slug}``.
Generated documents (catalog cards, tier tables, rules) come from :mod:`knowledge.cards`;
:func:`load_corpus` returns both.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)

Lang = Literal["en", "zh"]
Kind = Literal["article", "gpu-card", "model-card", "rule", "tier-table"]
LANGS: tuple[Lang, ...] = ("en", "zh")

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_HEADING = re.compile(r"^##\s+(?P<title>.*?)\s*(?:\{#(?P<slug>[^}\s]+)\})?\s*$")
_REQUIRED = ("id", "title", "lang", "source", "as_of")


class CorpusError(ValueError):
    """An article file is malformed; the message names the file and line."""


class Passage(BaseModel):
    """One retrievable chunk: an article section or a generated document."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    text: str
    lang: Lang
    source: str = Field(description="where it comes from: article section or catalog entry, with sources")
    as_of: dt.date
    kind: Kind = "article"
    doc: str = Field("", description="language-independent key shared by translations, e.g. 'vram#capacity'")
    names: tuple[str, ...] = Field((), description="names of the passage's subject (catalog id, name, aliases)")
    score: float = 0.0

    def public(self) -> dict[str, object]:
        """The fields the CLI and the advisor show: id, title, text, source, lang, score."""
        return {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "source": self.source,
            "lang": self.lang,
            "score": round(self.score, 4),
        }


def default_corpus_dir() -> Path:
    """``knowledge/corpus`` inside the installed package."""
    return Path(str(resources.files("knowledge").joinpath("corpus")))


def _front_matter(lines: list[str], where: str) -> tuple[dict[str, str], int]:
    if not lines or lines[0].strip() != "---":
        raise CorpusError(f"{where}:1: expected front matter starting with '---'")
    meta: dict[str, str] = {}
    for n, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return meta, n
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise CorpusError(
                f"{where}:{n}: expected 'key: value' in front matter, got {line.strip()[:40]!r}"
                " (is the closing '---' missing?)"
            )
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        meta[key.strip()] = value
    raise CorpusError(f"{where}: front matter has no closing '---'")


def _slugify(text: str, fallback: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or fallback


def _clean(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def parse_article(text: str, where: str = "<article>", expect_lang: str | None = None) -> list[Passage]:
    """Cut one article into passages; raises :class:`CorpusError` on malformed input."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").split("\n")
    meta, body_start = _front_matter(lines, where)
    missing = [k for k in _REQUIRED if not meta.get(k)]
    if missing:
        raise CorpusError(f"{where}: front matter lacks {', '.join(missing)}")
    doc_id, lang = meta["id"], meta["lang"]
    if not _SLUG.match(doc_id):
        raise CorpusError(f"{where}: id {doc_id!r} must be a lowercase slug (a-z, 0-9, '-')")
    if lang not in LANGS:
        raise CorpusError(f"{where}: lang must be 'en' or 'zh', got {lang!r}")
    if expect_lang and lang != expect_lang:
        raise CorpusError(f"{where}: lang {lang!r} does not match its folder {expect_lang!r}")
    try:
        as_of = dt.date.fromisoformat(meta["as_of"])
    except ValueError as exc:
        raise CorpusError(f"{where}: as_of must be YYYY-MM-DD, got {meta['as_of']!r}") from exc

    lead: list[str] = []
    sections: list[tuple[str, str, list[str], int]] = []  # (heading, slug, lines, line number)
    in_code = False
    for n, line in enumerate(lines[body_start:], start=body_start + 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        m = None if in_code else _HEADING.match(line)
        if m and line.startswith("## "):
            heading = m.group("title").strip()
            slug = m.group("slug") or _slugify(heading, f"s{len(sections) + 1}")
            if not _SLUG.match(slug):
                raise CorpusError(f"{where}:{n}: section slug {slug!r} must be a lowercase slug")
            if any(s[1] == slug for s in sections):
                raise CorpusError(f"{where}:{n}: duplicate section slug {slug!r}")
            sections.append((heading, slug, [], n))
        elif sections:
            sections[-1][2].append(line)
        else:
            lead.append(line)
    lead_text = _clean("\n".join(x for x in lead if not x.startswith("# ")))
    if not sections:
        if not lead_text:
            raise CorpusError(f"{where}: article has no text")
        sections = [(meta["title"], "intro", lead, body_start + 1)]
        lead_text = ""

    out: list[Passage] = []
    for i, (heading, slug, body, n) in enumerate(sections):
        content = _clean("\n".join(body))
        if i == 0 and lead_text:
            content = f"{lead_text}\n\n{content}".strip()
        if not content:
            raise CorpusError(f"{where}:{n}: section {slug!r} is empty")
        title = meta["title"] if heading == meta["title"] else f"{meta['title']} — {heading}"
        out.append(
            Passage(
                id=f"{doc_id}/{lang}/{slug}",
                title=title,
                text=content,
                lang=lang,  # type: ignore[arg-type]
                source=f"article {doc_id}#{slug} ({lang}); {meta['source']}",
                as_of=as_of,
                kind="article",
                doc=f"{doc_id}#{slug}",
            )
        )
    return out


def load_articles(root: Path | str | None = None) -> list[Passage]:
    """All article passages under ``root/{en,zh}/*.md`` (default: the packaged corpus), sorted by id."""
    base = Path(root) if root is not None else default_corpus_dir()
    passages: list[Passage] = []
    seen: dict[str, str] = {}
    for lang in LANGS:
        folder = base / lang
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            where = f"{lang}/{path.name}"
            for p in parse_article(path.read_text(encoding="utf-8"), where, expect_lang=lang):
                if p.id in seen:
                    raise CorpusError(f"{where}: passage id {p.id!r} already defined in {seen[p.id]}")
                seen[p.id] = where
                passages.append(p)
    return sorted(passages, key=lambda p: p.id)


def load_corpus(root: Path | str | None = None, *, include_generated: bool = True) -> list[Passage]:
    """Articles plus the generated catalog cards, tier tables and rule documents."""
    passages = load_articles(root)
    if include_generated:
        from knowledge.cards import generate_documents  # cards imports Passage from here

        passages += generate_documents()
    ids = [p.id for p in passages]
    if len(ids) != len(set(ids)):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise CorpusError(f"duplicate passage ids: {', '.join(dup[:5])}")
    return passages


def corpus_hash(passages: Iterable[Passage]) -> str:
    """SHA-256 over every field that is indexed; changes whenever any passage changes."""
    h = hashlib.sha256()
    for p in sorted(passages, key=lambda p: p.id):
        for part in (p.id, p.title, p.text, p.lang, p.source, p.as_of.isoformat(), p.kind, p.doc, *p.names):
            h.update(part.encode("utf-8"))
            h.update(b"\x1f")
        h.update(b"\x1e")
    return h.hexdigest()
