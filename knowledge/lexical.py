"""Lexical channel: BM25 over tokens that keep product names and numbers whole.

Latin text is folded (NFKC, lower case, thousands separators dropped) and cut into tokens that keep
``l40s``, ``910b``, ``900gb/s``, ``h100-sxm`` or ``12v-2x6`` intact; the parts of compound tokens and
joined neighbours (``RTX 4090`` → ``rtx4090``, ``900 GB/s`` → ``900gb/s``) are added so either spelling
matches. Chinese runs of passages are segmented with jieba (search mode) using a private dictionary
that knows the domain words; Chinese runs of queries are cut into the words of the index's own
vocabulary, so a query needs no jieba dictionary. Query words missing from the vocabulary are corrected
to a vocabulary word one edit away (``bandwith`` → ``bandwidth``).
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[a-z0-9]+(?:[.\-/+_][a-z0-9]+)*|[{_CJK}]+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ALPHA_NUM = re.compile(r"^([a-z]{3,})(\d[a-z0-9]*)$")
_NUM_UNIT = re.compile(r"^(\d+(?:\.\d+)?)([a-z][a-z/]*)$")
_UNITS = frozenset(
    {
        "gb",
        "gib",
        "tb",
        "tib",
        "mb",
        "mib",
        "w",
        "kw",
        "mm",
        "gb/s",
        "tb/s",
        "gbs",
        "tbs",
        "ms",
        "tflops",
        "tops",
        "pflops",
        "bit",
        "slot",
        "slots",
        "nm",
        "gt/s",
        "gbps",
    }
)
_SEP = re.compile(r"[.\-/+_]")

EN_STOP = frozenset(
    (
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "of",
        "for",
        "to",
        "in",
        "on",
        "at",
        "by",
        "with",
        "and",
        "or",
        "not",
        "no",
        "do",
        "does",
        "did",
        "how",
        "what",
        "which",
        "who",
        "whom",
        "why",
        "when",
        "where",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "than",
        "then",
        "so",
        "if",
        "as",
        "from",
        "into",
        "about",
        "any",
        "some",
        "much",
        "many",
        "very",
        "more",
        "most",
    )
)
ZH_STOP = frozenset(
    (
        "的",
        "了",
        "吗",
        "呢",
        "吧",
        "啊",
        "呀",
        "是",
        "在",
        "和",
        "与",
        "及",
        "或",
        "有",
        "我",
        "你",
        "他",
        "她",
        "它",
        "我们",
        "你们",
        "要",
        "想",
        "么",
        "什么",
        "怎么",
        "怎样",
        "如何",
        "多少",
        "哪些",
        "哪个",
        "哪",
        "这",
        "那",
        "这个",
        "那个",
        "一个",
        "个",
        "就",
        "都",
        "也",
        "还",
        "又",
        "对",
        "把",
        "被",
        "让",
        "给",
        "很",
        "会",
        "能",
        "可以",
        "吗？",
        "请问",
        "一下",
        "是否",
        "不",
        "没",
        "没有",
    )
)

# Domain words jieba's general dictionary cuts apart.
_DOMAIN_WORDS = (
    "显存",
    "显存带宽",
    "显存容量",
    "张量核心",
    "双精度",
    "单精度",
    "半精度",
    "稠密算力",
    "稀疏算力",
    "算力",
    "信创",
    "国产化",
    "昇腾",
    "寒武纪",
    "海光",
    "摩尔线程",
    "壁仞",
    "天数智芯",
    "沐曦",
    "被动散热",
    "涡轮",
    "鼓风",
    "开放式散热",
    "槽宽",
    "供电接口",
    "拆分",
    "多卡",
    "互联",
    "功耗",
    "电源",
    "机箱",
    "主板",
    "通道数",
    "微调",
    "推理",
    "训练",
    "量化",
    "大模型",
    "工作站",
    "服务器",
    "数据中心",
    "消费级",
    "二手",
    "矿卡",
    "租用",
    "云端",
    "整机",
    "墙插",
    "空气开关",
    "系统内存",
    "内存条",
    "风道",
    "散热",
    "英伟达",
    "华为",
    "国产卡",
    "特供",
    "出口管制",
    "框架",
    "生态",
    "驱动",
    "科学计算",
    "性价比",
)


@cache
def tokenizer_fingerprint() -> str:
    """Cached token lists are only valid for the same tokenizer: this module's code and jieba's version."""
    try:
        jieba_version = metadata.version("jieba")
    except metadata.PackageNotFoundError:  # pragma: no cover
        jieba_version = "unknown"
    return hashlib.sha1(Path(__file__).read_bytes() + jieba_version.encode()).hexdigest()[:12]


_jieba_lock = threading.Lock()
_jieba: Any = None


def _segmenter() -> Any:
    """A private jieba tokenizer (the global one is left untouched), initialised once per process."""
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                tok = jieba.Tokenizer()
                tok.initialize()
                for w in _DOMAIN_WORDS:
                    tok.add_word(w, freq=20000)
                _jieba = tok
    return _jieba


def normalize(text: str) -> str:
    """NFKC, lower case, no thousands separators."""
    return _THOUSANDS.sub("", unicodedata.normalize("NFKC", text).lower())


def _stem(tok: str) -> str:
    """Crude plural folding for English words: gpus → gpu, cards → card (same on both sides)."""
    if len(tok) > 3 and tok.isalpha() and tok.endswith("s") and not tok.endswith("ss"):
        return tok[:-1]
    return tok


def _expand_latin(tok: str) -> list[str]:
    tok = _stem(tok)
    out = [tok]
    if _SEP.search(tok):
        out += [p for p in _SEP.split(tok) if len(p) >= 2]
        joined = _SEP.sub("", tok)
        if joined != tok:
            out.append(joined)
    m = _ALPHA_NUM.match(tok)
    if m:
        out += [m.group(1), m.group(2)]
    m = _NUM_UNIT.match(tok)
    if m and m.group(2) in _UNITS:
        out += [m.group(1), m.group(2)]
    return [t for t in out if len(t) >= 2 or t.isdigit()]


def _joinable(a: str, b: str) -> bool:
    if a.isalpha() and b[:1].isdigit():  # rtx 4090, mi 325x, qwen 3
        return len(a) <= 5
    return bool(re.fullmatch(r"\d+(?:\.\d+)?", a)) and b in _UNITS  # 900 gb/s, 96 gb


def _jieba_words(run: str) -> list[str]:
    return list(_segmenter().cut_for_search(run))


def tokenize(text: str, *, stop: bool = True, segment: Callable[[str], list[str]] | None = None) -> list[str]:
    """Index/query tokens of ``text`` (see the module docstring).

    ``segment`` cuts a run of Chinese characters into words; the default is jieba's search mode.
    """
    norm = normalize(text)
    cut = segment or _jieba_words
    out: list[str] = []
    prev: tuple[str, int] | None = None  # previous latin token and where it ended
    for m in _TOKEN.finditer(norm):
        tok = m.group(0)
        if tok[0] >= "\u3400":
            prev = None
            for w in cut(tok):
                if w.strip() and not (stop and w in ZH_STOP):
                    out.append(w)
            continue
        if (
            prev is not None
            and norm[prev[1] : m.start()].strip() == ""
            and prev[0] not in EN_STOP
            and _joinable(prev[0], tok)
        ):
            out.append(prev[0] + tok)
        prev = (tok, m.end())
        if stop and tok in EN_STOP:
            continue
        out += _expand_latin(tok)
    return out


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class _BM25:
    """Okapi BM25 over one field."""

    def __init__(self, ids: list[str], tokens: dict[str, list[str]], k1: float, b: float):
        self.k1, self.b = k1, b
        self.lens = [len(tokens.get(i, ())) for i in ids]
        self.avg = (sum(self.lens) / len(self.lens)) if self.lens and sum(self.lens) else 1.0
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for n, doc_id in enumerate(ids):
            for term, tf in Counter(tokens.get(doc_id, ())).items():
                self.postings[term].append((n, tf))
        total = len(ids)
        self.idf = {t: math.log(1 + (total - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()}

    def add_scores(self, terms: Counter[str], scores: dict[int, float], weight: float) -> None:
        k1, b, avg, lens = self.k1, self.b, self.avg, self.lens
        for term, qtf in terms.items():
            idf = self.idf.get(term)
            if idf is None:
                continue
            for n_doc, tf in self.postings[term]:
                denom = tf + k1 * (1 - b + b * lens[n_doc] / avg)
                scores[n_doc] += weight * qtf * idf * tf * (k1 + 1) / denom


class LexicalIndex:
    """In-memory BM25F-style index: a body field (title + text) plus a title field with its own weight."""

    def __init__(
        self,
        docs: Sequence[tuple[str, str, str]] | None = None,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        title_weight: float = 1.0,
        tokens: dict[str, list[str]] | None = None,
        title_tokens: dict[str, list[str]] | None = None,
    ):
        """``docs`` are (id, title, text); or pass precomputed ``tokens``/``title_tokens`` by id."""
        if tokens is None:
            docs = list(docs or [])
            tokens = {doc_id: tokenize(f"{title}\n{text}") for doc_id, title, text in docs}
            title_tokens = {doc_id: tokenize(title) for doc_id, title, _ in docs}
        self.tokens = tokens
        self.title_tokens = title_tokens or {}
        self.title_weight = title_weight
        self.ids = list(tokens)
        self._body = _BM25(self.ids, tokens, k1, b)
        self._title = _BM25(self.ids, self.title_tokens, k1, 0.3)
        self._postings = self._body.postings
        self._max_cjk = max((len(t) for t in self._postings if t[:1] >= "\u3400"), default=1)
        self._fuzzy: dict[str, list[str]] | None = None

    # -- typo tolerance ------------------------------------------------------------------------
    def _fuzzy_table(self) -> dict[str, list[str]]:
        if self._fuzzy is None:
            table: dict[str, list[str]] = defaultdict(list)
            for term in self._postings:
                if len(term) >= 4 and term.isascii() and term.isalpha():
                    table[term].append(term)
                    for d in _deletes(term):
                        table[d].append(term)
            self._fuzzy = dict(table)
        return self._fuzzy

    def correct(self, term: str) -> str | None:
        """A vocabulary word within one edit (insert, delete, substitute, swap) of ``term``, or None."""
        if term in self._postings or len(term) < 4 or not (term.isascii() and term.isalpha()):
            return None
        table = self._fuzzy_table()
        cands: set[str] = set(table.get(term, ()))
        for d in _deletes(term):
            cands.update(w for w in table.get(d, ()) if abs(len(w) - len(term)) <= 1)
        if not cands:
            return None
        return max(sorted(cands), key=lambda w: len(self._postings[w]))

    def _vocab_words(self, run: str) -> list[str]:
        """Cut a Chinese run of a *query* into the index's own words (every vocabulary word it contains,
        like jieba's search mode; uncovered characters alone) — the same terms jieba produced for the
        passages, without loading jieba's 350k-word dictionary for each new process."""
        words: list[str] = []
        covered = [False] * len(run)
        vocab = self._postings
        for i in range(len(run)):
            for j in range(i + 2, min(i + self._max_cjk, len(run)) + 1):
                w = run[i:j]
                if w in vocab:
                    words.append(w)
                    for x in range(i, j):
                        covered[x] = True
        words += [ch for ch, c in zip(run, covered, strict=True) if not c]
        return words

    def query_terms(self, query: str) -> list[str]:
        """Query tokens known to the index, misspelt words replaced by their correction."""
        terms = []
        for t in tokenize(query, segment=self._vocab_words):
            if t in self._postings:
                terms.append(t)
            elif (fixed := self.correct(t)) is not None:
                terms.append(fixed)
        return terms

    # -- ranking -------------------------------------------------------------------------------
    def search(self, query: str, n: int = 20, allowed: Iterable[str] | None = None) -> list[tuple[str, float]]:
        """Top ``n`` (id, score) for ``query``; ``allowed`` restricts the candidate ids."""
        terms = Counter(self.query_terms(query))
        if not terms:
            return []
        allow = None if allowed is None else set(allowed)
        scores: dict[int, float] = defaultdict(float)
        self._body.add_scores(terms, scores, 1.0)
        if self.title_weight:
            self._title.add_scores(terms, scores, self.title_weight)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], self.ids[kv[0]]))
        out = []
        for n_doc, score in ranked:
            doc_id = self.ids[n_doc]
            if allow is None or doc_id in allow:
                out.append((doc_id, score))
                if len(out) >= n:
                    break
        return out


_RUN = re.compile(rf"[a-z0-9]+|[{_CJK}]+")


def name_key(name: str) -> str:
    """A name folded for exact matching: 'GeForce RTX-4090' → 'geforcertx4090'."""
    return "".join(_RUN.findall(normalize(name)))


class NameMatcher:
    """Finds catalog names (ids, names, aliases) written in a query, whatever the spacing/punctuation.

    A name matches when its folded key equals the concatenation of consecutive runs of the query, so
    'H20' matches 'h20 显存' but not 'H200', and 'Llama 3.1 8B' matches the alias 'Llama-3.1-8B'.
    """

    MAX_RUNS = 6

    def __init__(self, names: dict[str, Iterable[str]]):
        self._by_key: dict[str, set[str]] = defaultdict(set)
        for doc_id, doc_names in names.items():
            for name in doc_names:
                key = name_key(name)
                if (len(key) >= 2 and not key.isalpha()) or len(key) >= 4:
                    self._by_key[key].add(doc_id)

    def __bool__(self) -> bool:
        return bool(self._by_key)

    def match(self, query: str) -> list[tuple[str, int]]:
        """(doc id, matched key length) for every name found, longest (most specific) first."""
        runs = _RUN.findall(normalize(query))
        found: dict[str, int] = {}
        for i in range(len(runs)):
            key = ""
            for j in range(i, min(i + self.MAX_RUNS, len(runs))):
                key += runs[j]
                for doc_id in self._by_key.get(key, ()):
                    found[doc_id] = max(found.get(doc_id, 0), len(key))
        return sorted(found.items(), key=lambda kv: (-kv[1], kv[0]))
