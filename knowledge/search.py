"""``search(query, k, lang)``: fused dense + lexical retrieval over the knowledge base.

Dense (multilingual sentence embeddings in chromadb) finds paraphrases and the other language;
lexical (BM25 with name/number-preserving tokens) nails exact names and numbers. The two ranked
lists are merged by reciprocal-rank fusion; translations of the same passage are collapsed to the
one in the query's language. Bad input never raises: the result list carries ``reason`` (why it is
empty) and ``notices`` (what was adjusted, e.g. a truncated query or a fallback to lexical only).

Quick start (:func:`prefer_quick_start`, used by the one-shot ``gpu-advisor ask``): opening the vector
store costs about 2 s per process (chromadb import, collection check, encoder load) against a few
milliseconds per query, so a process that answers one question searches with the keyword channels
(BM25 + catalog names) instead — recall@3 0.928 against 0.986 fused on the bench/retrieval.py eval.
The fused search still runs when the vector index is already open in the process, when a chromadb
server is configured, or when no local vector store exists yet (the first run builds it). Everything
else (web UI, chat, the API) uses the fused search.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import unicodedata
from pathlib import Path
from typing import Any, Literal

from knowledge import index as _index_module
from knowledge.corpus import Passage, load_corpus
from knowledge.index import DenseUnavailable, KnowledgeIndex, get_index, user_data_dir
from knowledge.lexical import NameMatcher

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 1000
MAX_K = 50
CANDIDATES = 40
RRF_K = 10  # small: the top of each channel matters most for a corpus this size
DENSE_WEIGHT = 0.5  # the dense channel alone is the weaker one (bench/retrieval.py)
LEXICAL_WEIGHT = 1.0
NAME_WEIGHT = 1.0  # catalog names written in the query point at their cards

Channels = Literal["fused", "dense", "lexical", "keyword"]  # keyword = lexical + catalog names, no vectors

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
        channels: Channels = "fused",
    ):
        super().__init__(items or [])
        self.reason = reason
        self.notices = notices or []
        self.degraded = degraded
        self.query = query
        self.channels = channels

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
        if self.channels != "fused":
            out["channels"] = self.channels
        return out


# an absolute POSIX or Windows path, optionally quoted (as OSError and friends print them)
_ABS_PATH = re.compile(r"""(?<![\w:/.\\])(['"]?)(?:/|[A-Za-z]:\\)[^\s'"]*\1""")


def strip_paths(text: str) -> str:
    """``text`` with absolute local paths reduced to their last component (no local layout in messages)."""

    def short(m: re.Match[str]) -> str:
        raw = m.group(0).strip("'\"").rstrip("/\\")
        name = re.split(r"[/\\]", raw)[-1] if raw else ""
        return f"'{name}'" if name else "a local path"

    return _ABS_PATH.sub(short, text)


def describe_error(exc: BaseException) -> str:
    """One short line for an exception, without absolute paths: ``Type: message``."""
    if isinstance(exc, OSError) and exc.strerror:
        message = exc.strerror
    else:
        message = strip_paths(str(exc)).strip() or "no detail"
    return f"{type(exc).__name__}: {message[:200]}"


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
    index: KnowledgeIndex, text: str, k: int, lang: str | None, mode: Channels = "fused"
) -> tuple[list[Passage], bool]:
    """Top-k passages for a clean query; returns (passages, degraded)."""
    degraded = False
    n_cand = max(CANDIDATES, 2 * k)
    dense: list[tuple[str, float]] = []
    if mode in ("fused", "dense"):
        try:
            dense = index.dense_search(text, n=n_cand, lang=lang)
        except DenseUnavailable as exc:
            log.warning("dense retrieval unavailable: %s", strip_paths(str(exc)))
            degraded = True
    lexical = index.lexical_search(text, n=n_cand, lang=lang) if mode != "dense" else []
    names = index.name_search(text, lang=lang) if mode in ("fused", "keyword") else []
    scores = fuse((DENSE_WEIGHT, dense), (LEXICAL_WEIGHT, lexical), (NAME_WEIGHT, names))
    dense_part = DENSE_WEIGHT if mode != "keyword" else 0.0  # keyword scores stay on the fused scale's 0–1
    best_possible = (dense_part + LEXICAL_WEIGHT + (NAME_WEIGHT if names else 0.0)) / (RRF_K + 1)
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


# ------------------------------------------------------------------------------------------- quick start
class KeywordIndex(KnowledgeIndex):
    """Passages, BM25 and catalog names of the packaged corpus — no vector store, so opening it imports
    neither chromadb nor the encoder (≈ 0.3 s instead of ≈ 2.5 s). Shares the lexical token cache."""

    def __init__(self, data_dir: Path | str | None = None):  # no super().__init__: that loads the encoder
        self._given = None
        self.data_dir = Path(data_dir) if data_dir is not None else user_data_dir()
        self.chroma_url = None
        self.progress = False
        self.hash = ""
        self.lexical = None
        self.names = NameMatcher({})
        self.report = None
        self.dense_error = None
        self._client = self._collection = None
        self._lock = threading.RLock()
        self._last_retry = float("-inf")
        passages = load_corpus()
        self.passages = {p.id: p for p in passages}
        self.translations = {}
        for p in passages:
            if p.doc:
                self.translations.setdefault(p.doc, {})[p.lang] = p.id
        self._load_lexical()

    def dense_search(self, query: str, n: int = 30, lang: str | None = None) -> list[tuple[str, float]]:
        raise DenseUnavailable("this index has no vector channel")


_quick = False
_keyword: KeywordIndex | None = None
_keyword_lock = threading.Lock()


def prefer_quick_start(on: bool = True) -> None:
    """Let :func:`search` (without an explicit ``index``) use the keyword channels in this process while
    the vector index is not open yet — for one-shot processes such as ``gpu-advisor ask``."""
    global _quick
    _quick = on


def _quick_channels_apply() -> bool:
    """Quick start is on and the fused search would have to open the vector store first."""
    if not _quick or getattr(_index_module, "_default", None) is not None:
        return False
    if os.environ.get("GPU_ADVISOR_CHROMA_URL"):
        return False  # a configured server is a deliberate choice, and cheap to reach
    return (user_data_dir() / "index" / "chroma").is_dir()  # none yet: the fused path builds it


def _keyword_index() -> KeywordIndex:
    global _keyword
    with _keyword_lock:
        if _keyword is None:
            _keyword = KeywordIndex()
        return _keyword


def search(query: str, k: int = 5, lang: str | None = None, *, index: KnowledgeIndex | None = None) -> SearchResults:
    """The ``k`` passages that best answer ``query`` (either language unless ``lang`` is 'zh'/'en').

    Never raises on bad input: an empty result has ``.reason``; adjustments are in ``.notices``;
    ``.degraded`` is True when the vector store was unreachable and only the lexical channel ran;
    ``.channels`` is 'keyword' when quick start chose the keyword channels (see the module docstring).
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
    mode: Channels = "fused"
    idx: KnowledgeIndex
    try:
        if index is None and _quick_channels_apply():
            idx, mode = _keyword_index(), "keyword"
        else:
            idx = index or get_index()
    except Exception as exc:
        # a warning, not a traceback: the CLI's stderr is for the user; the detail is debug-level
        log.warning("knowledge index unavailable: %s", describe_error(exc))
        log.debug("knowledge index failure", exc_info=True)
        return SearchResults(
            reason=f"knowledge index unavailable: {describe_error(exc)}", notices=notices, query=text
        )
    try:
        results, degraded = rank(idx, text, k_value, lang_value, mode)
    except Exception as exc:
        log.warning("search failed for %r: %s", text[:80], describe_error(exc))
        log.debug("search failure", exc_info=True)
        return SearchResults(reason=f"search failed: {describe_error(exc)}", notices=notices, query=text)
    if degraded or idx.dense_error:
        degraded = True
        notices.append(
            "vector search unavailable; results come from the lexical (keyword) channel only"
            + (f" — {strip_paths(idx.dense_error)}" if idx.dense_error else "")
        )
    reason = None if results else "no passage matches the query"
    return SearchResults(results, reason=reason, notices=notices, degraded=degraded, query=text, channels=mode)
