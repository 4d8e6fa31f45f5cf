"""``search(query, k, lang)``: fused dense + lexical retrieval over the knowledge base.

Dense (multilingual sentence embeddings in chromadb) finds paraphrases and the other language;
lexical (BM25 with name/number-preserving tokens) nails exact names and numbers. The two ranked
lists are merged by reciprocal-rank fusion; translations of the same passage are collapsed to the
one in the query's language. Bad input never raises: the result list carries ``reason`` (why it is
empty) and ``notices`` (what was adjusted, e.g. a truncated query or a fallback to lexical only).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import Any, Literal

from knowledge.corpus import Passage
from knowledge.index import DenseUnavailable, KnowledgeIndex, get_index

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 1000
MAX_K = 50
CANDIDATES = 40
RRF_K = 10  # small: the top of each channel matters most for a corpus this size
DENSE_WEIGHT = 0.5  # the dense channel alone is the weaker one (bench/retrieval.py)
LEXICAL_WEIGHT = 1.0
NAME_WEIGHT = 1.0  # catalog names written in the query point at their cards

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class SearchResults(list[Passage]):
    """A ``list[Passage]`` with ``reason`` (why empty), ``notices`` and ``degraded`` (lexical only)."""

    def __init__(
        self,
        items: list[Passage] | None = None,
        *,
        reason: str | None = None,
        notices: list[str] | None = None,
        degraded: bool = False,
        query: str = "",
    ):
        super().__init__(items or [])
        self.reason = reason
        self.notices = notices or []
        self.degraded = degraded
        self.query = query

    @property
    def notice(self) -> str | None:
        """All notices in one line, or None."""
        return "; ".join(self.notices) or None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"results": [p.public() for p in self]}
        if self.reason:
            out["reason"] = self.reason
        if self.notices:
            out["notices"] = self.notices
        if self.degraded:
            out["degraded"] = True
        return out


def clean_query(query: object) -> tuple[str, list[str]]:
    """Text fit for both channels: control characters removed, whitespace collapsed, length capped."""
    notices: list[str] = []
    if query is None:
        return "", notices
    if isinstance(query, bytes):
        query = query.decode("utf-8", errors="replace")
    if not isinstance(query, str):
        query = str(query)
    if len(query) > MAX_QUERY_CHARS * 4:
        query = query[: MAX_QUERY_CHARS * 4]
    chars = []
    for ch in query:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn"):
            chars.append(" ")
        else:
            chars.append(ch)
    text = re.sub(r"\s+", " ", "".join(chars)).strip()
    if len(text) > MAX_QUERY_CHARS:
        cut = text[:MAX_QUERY_CHARS]
        text = cut[: cut.rfind(" ")] if " " in cut[MAX_QUERY_CHARS // 2 :] else cut
        notices.append(f"query truncated to its first {len(text)} characters")
    return text, notices


def query_language(text: str) -> Literal["en", "zh"]:
    """'zh' when the query contains Chinese characters, else 'en'."""
    return "zh" if _CJK.search(text) else "en"


def _norm_lang(lang: object, notices: list[str]) -> str | None:
    if lang is None or lang == "":
        return None
    value = str(lang).strip().lower().replace("_", "-")
    if value in ("zh", "cn", "zh-cn", "zh-hans", "zh-tw", "chinese", "中文"):
        return "zh"
    if value in ("en", "en-us", "en-gb", "english", "英文"):
        return "en"
    notices.append(f"unknown language {str(lang)[:20]!r} ignored (use 'zh' or 'en')")
    return None


def _norm_k(k: object, notices: list[str]) -> int:
    try:
        value = int(k)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        notices.append(f"k={str(k)[:20]!r} is not a number; using 5")
        return 5
    if value < 1 or value > MAX_K:
        clamped = min(max(value, 1), MAX_K)
        notices.append(f"k={value} out of range 1–{MAX_K}; using {clamped}")
        return clamped
    return value


def fuse(*channels: tuple[float, list[tuple[str, float]]]) -> dict[str, float]:
    """Weighted reciprocal-rank fusion of ranked (id, score) lists, given as (weight, ranking)."""
    scores: dict[str, float] = {}
    for weight, ranked in channels:
        for rank, (pid, _) in enumerate(ranked):
            scores[pid] = scores.get(pid, 0.0) + weight / (RRF_K + rank + 1)
    return scores


def rank(
    index: KnowledgeIndex, text: str, k: int, lang: str | None, mode: Literal["fused", "dense", "lexical"] = "fused"
) -> tuple[list[Passage], bool]:
    """Top-k passages for a clean query; returns (passages, degraded)."""
    degraded = False
    n_cand = max(CANDIDATES, 2 * k)
    dense: list[tuple[str, float]] = []
    if mode != "lexical":
        try:
            dense = index.dense_search(text, n=n_cand, lang=lang)
        except DenseUnavailable as exc:
            log.warning("dense retrieval unavailable: %s", exc)
            degraded = True
    lexical = index.lexical_search(text, n=n_cand, lang=lang) if mode != "dense" else []
    names = index.name_search(text, lang=lang) if mode == "fused" else []
    scores = fuse((DENSE_WEIGHT, dense), (LEXICAL_WEIGHT, lexical), (NAME_WEIGHT, names))
    best_possible = (DENSE_WEIGHT + LEXICAL_WEIGHT + (NAME_WEIGHT if names else 0.0)) / (RRF_K + 1)
    qlang = query_language(text)
    # collapse translations: keep one passage per document, in the query's language when it exists
    twins = index.translations
    picked: dict[str, tuple[str, float]] = {}
    for pid, score in scores.items():
        p = index.passages[pid]
        key = p.doc or pid
        if key not in picked or score > picked[key][1]:
            picked[key] = (pid, score)
    out: list[Passage] = []
    for key, (pid, score) in sorted(picked.items(), key=lambda kv: (-kv[1][1], kv[1][0])):
        if lang is None and index.passages[pid].lang != qlang:
            pid = twins.get(key, {}).get(qlang, pid)
        out.append(index.passages[pid].model_copy(update={"score": min(score / best_possible, 1.0)}))
        if len(out) >= k:
            break
    return out, degraded


def search(query: str, k: int = 5, lang: str | None = None, *, index: KnowledgeIndex | None = None) -> SearchResults:
    """The ``k`` passages that best answer ``query`` (either language unless ``lang`` is 'zh'/'en').

    Never raises on bad input: an empty result has ``.reason``; adjustments are in ``.notices``;
    ``.degraded`` is True when the vector store was unreachable and only the lexical channel ran.
    """
    notices: list[str] = []
    text, cleaning = clean_query(query)
    notices += cleaning
    k_value = _norm_k(k, notices)
    lang_value = _norm_lang(lang, notices)
    if not text:
        return SearchResults(
            reason="empty query: ask about GPUs, models, precision, power, …", notices=notices, query=text
        )
    if not any(unicodedata.category(ch)[0] in "LN" for ch in text):
        return SearchResults(reason="the query has no words or numbers to search for", notices=notices, query=text)
    try:
        idx = index or get_index()
    except Exception as exc:
        log.exception("knowledge index unavailable")
        return SearchResults(
            reason=f"knowledge index unavailable: {type(exc).__name__}: {exc}", notices=notices, query=text
        )
    try:
        results, degraded = rank(idx, text, k_value, lang_value)
    except Exception as exc:
        log.exception("search failed for %r", text[:80])
        return SearchResults(reason=f"search failed: {type(exc).__name__}: {exc}", notices=notices, query=text)
    if degraded or idx.dense_error:
        degraded = True
        notices.append(
            "vector search unavailable; results come from the lexical (keyword) channel only"
            + (f" — {idx.dense_error}" if idx.dense_error else "")
        )
    reason = None if results else "no passage matches the query"
    return SearchResults(results, reason=reason, notices=notices, degraded=degraded, query=text)
