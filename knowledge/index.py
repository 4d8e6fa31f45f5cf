"""The vector index of the corpus in chromadb, plus the lexical index next to it.

Where it lives:

* default: an embedded ``chromadb.PersistentClient`` under ``$GPU_ADVISOR_DATA/index`` (or the user
  data directory, ``~/.local/share/gpu-advisor`` on Linux);
* team deployment: a chromadb server when ``GPU_ADVISOR_CHROMA_URL`` is set (``http://host:port``).

The collection is named after the corpus content hash, so it is built on first use and rebuilt only
when the corpus changes. Our embedding function is passed on every create/get, so chromadb never loads
its own (downloading) default model. Telemetry is off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel

from knowledge.bounded import read
from knowledge.cachefile import write_atomic
from knowledge.corpus import Passage, corpus_hash, load_corpus
from knowledge.lexical import LexicalIndex, NameMatcher, tokenize, tokenizer_fingerprint
from knowledge.paths import expand_user

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

COLLECTION_PREFIX = "gpu_advisor_"
INDEX_SCHEMA = 4  # part of the collection key, with the embedded texts themselves
# HNSW settings. chromadb writes the graph to disk only every `sync_threshold` vectors (default 1000,
# more than this corpus has), so with the default each reopen replays every vector from its log
# (0.13-0.16 s here); syncing every 100 makes the reopened graph load from disk (0.03 s).
HNSW = {"space": "cosine", "ef_construction": 200, "ef_search": 200, "batch_size": 100, "sync_threshold": 100}
APP_NAME = "gpu-advisor"
VIEW_CHARS = 800  # article sections longer than this get one vector per paragraph group
CARD_VIEW_CHARS = 360  # opening of a generated document that is embedded
TITLE_WEIGHT = 2.0  # extra BM25 weight of words in a passage's title
BM25_B = 0.5  # length normalisation: long tables and cards are not punished too hard
RETRY_S = 30.0  # seconds between attempts to reach a vector store that failed
MAX_CACHE_BYTES = 256_000_000  # the lexical token cache (~1.5 MB for the shipped corpus) is rebuilt past this


class DenseUnavailable(RuntimeError):
    """The vector store cannot be reached or read; callers fall back to the lexical channel."""


class BuildReport(BaseModel):
    """What :meth:`KnowledgeIndex.open` did."""

    action: Literal["built", "rebuilt", "up-to-date", "lexical-only"]
    reason: str
    passages: int
    vectors: int
    seconds: float
    location: str
    corpus_hash: str


_SEGMENT_DIR = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def user_data_dir() -> Path:
    """``$GPU_ADVISOR_DATA`` or the platform's per-user data directory for gpu-advisor."""
    env = os.environ.get("GPU_ADVISOR_DATA")
    if env:
        return expand_user(env)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / APP_NAME


def _chroma_settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def _pieces(text: str) -> list[str]:
    """Paragraphs; an over-long paragraph (a table, a list) is cut at line breaks."""
    out: list[str] = []
    for para in (x.strip() for x in text.split("\n\n")):
        if len(para) <= VIEW_CHARS:
            out += [para] if para else []
        else:
            out += [line for line in para.split("\n") if line.strip()]
    return out


def views(p: Passage) -> list[str]:
    """Texts embedded for one passage (each becomes one vector; a passage scores by its best one).

    The encoder averages over tokens, so one vector for a long section blurs it: an article section
    gets a vector for its title alone (short questions match headings well, also across languages)
    and one per group of paragraphs up to ``VIEW_CHARS``, each headed by the title. Generated documents
    are identified by their opening lines (name, kind, key figures), so only those are embedded; their
    exact numbers are the lexical channel's job.
    """
    if p.kind != "article":
        return [f"{p.title}\n{p.text[:CARD_VIEW_CHARS]}"]
    if len(p.text) <= VIEW_CHARS:
        return [p.title, f"{p.title}\n{p.text}"]
    groups: list[str] = []
    group = ""
    for piece in _pieces(p.text):
        if group and len(group) + len(piece) > VIEW_CHARS:
            groups.append(group)
            group = ""
        group = f"{group}\n{piece}" if group else piece
    if group:
        groups.append(group)
    return [p.title] + [f"{p.title}\n{g}" for g in groups]


def _forget_local_system(path: Path) -> None:
    """Stop and forget chromadb's cached system for one local store, leaving other stores alone."""
    from chromadb.api.client import SharedSystemClient

    systems = getattr(SharedSystemClient, "_identifier_to_system", None)
    if not isinstance(systems, dict):  # chromadb internals changed: fall back to the public reset
        SharedSystemClient.clear_system_cache()
        return
    system = systems.pop(str(path), None)
    refcounts = getattr(SharedSystemClient, "_identifier_to_refcount", None)
    if isinstance(refcounts, dict):
        refcounts.pop(str(path), None)
    if system is not None:
        try:
            system.stop()
        except Exception as exc:
            log.debug("stopping chromadb system for %s: %s", path, exc)


def _progress(total: int, enabled: bool | None) -> Any:
    show = sys.stderr.isatty() if enabled is None else enabled
    try:
        from tqdm import tqdm

        return tqdm(
            total=total, desc="Indexing knowledge base", unit="vec", disable=not show, file=sys.stderr, leave=False
        )
    except ImportError:  # pragma: no cover - tqdm ships with chromadb
        return None


class KnowledgeIndex:
    """Passages + chromadb collection + lexical index. Create, then :meth:`open` (idempotent)."""

    def __init__(
        self,
        passages: Sequence[Passage] | None = None,
        *,
        data_dir: Path | str | None = None,
        chroma_url: str | None = None,
        progress: bool | None = None,
    ):
        self._given = list(passages) if passages is not None else None
        self.data_dir = Path(data_dir) if data_dir is not None else user_data_dir()
        env_url = os.environ.get("GPU_ADVISOR_CHROMA_URL") or None
        self.chroma_url = chroma_url if chroma_url is not None else env_url
        self.progress = progress
        self.passages: dict[str, Passage] = {}
        self.translations: dict[str, dict[str, str]] = {}
        self.hash = ""
        self.lexical: LexicalIndex | None = None
        self.names = NameMatcher({})
        self.report: BuildReport | None = None
        self.dense_error: str | None = None
        self._client: Any = None
        self._collection: Any = None
        self._lock = threading.RLock()
        self._last_retry = float("-inf")
        self._damaged = False  # the last check found graph files a search would crash on
        from knowledge import encoder_cache
        from knowledge.embedding import UseEmbeddingFunction

        self._ef = UseEmbeddingFunction()
        encoder_cache.configure(self.index_dir)

    # -- locations -----------------------------------------------------------------------------
    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def chroma_dir(self) -> Path:
        return self.index_dir / "chroma"

    @property
    def location(self) -> str:
        return self.chroma_url or str(self.chroma_dir)

    @property
    def collection_name(self) -> str:
        return f"{COLLECTION_PREFIX}{self.hash[:24]}"

    # -- opening -------------------------------------------------------------------------------
    def _load_passages(self) -> None:
        # always from the package, never from a file in the data folder that anyone could have edited
        passages = self._given if self._given is not None else load_corpus()
        self.passages = {p.id: p for p in passages}
        self.translations = {}  # doc key -> {lang: passage id}
        for p in passages:
            if p.doc:
                self.translations.setdefault(p.doc, {})[p.lang] = p.id
        # the collection key covers the corpus and exactly what gets embedded, so changing views()
        # or the encoder rebuilds the index
        from knowledge.embedding import EMBEDDER_NAME, encoder_version

        h = hashlib.sha256(f"{corpus_hash(passages)}:{INDEX_SCHEMA}:{EMBEDDER_NAME}:{encoder_version()}".encode())
        for p in sorted(passages, key=lambda p: p.id):
            for v in views(p):
                h.update(v.encode("utf-8"))
                h.update(b"\x1e")
        self.hash = h.hexdigest()

    def _connect(self) -> Any:
        import chromadb

        if self.chroma_url:
            u = urlparse(self.chroma_url if "://" in self.chroma_url else f"http://{self.chroma_url}")
            port = u.port or (443 if u.scheme == "https" else 8000)
            client = chromadb.HttpClient(
                host=u.hostname or "127.0.0.1", port=port, ssl=u.scheme == "https", settings=_chroma_settings()
            )
            client.heartbeat()
            return client
        self.chroma_dir.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(self.chroma_dir), settings=_chroma_settings())

    def _existing_ok(self) -> Any:
        """The current collection when it is complete, else None."""
        from chromadb.errors import NotFoundError

        try:
            col = self._client.get_collection(self.collection_name, embedding_function=self._ef)
        except (NotFoundError, ValueError):
            return None
        meta = col.metadata or {}
        # "complete" is written only after the last vector was added, so a half-built index fails this;
        # the count catches a store that lost vectors afterwards
        if meta.get("complete") is not True or meta.get("corpus_hash") != self.hash:
            return None
        if not self.chroma_url:  # damaged graph files crash the first read (even a count): tested in a child first
            from knowledge.index_check import searchable

            if not searchable(self.chroma_dir, self.collection_name, self.index_dir / "graph-checked.json"):
                self._damaged = True
                return None
        return col if meta.get("vectors") == col.count() else None

    def open(self, rebuild: bool = False) -> BuildReport:
        """Load passages, connect, and build the vector collection unless an identical one exists."""
        with self._lock:
            return self._open(rebuild)

    def _open(self, rebuild: bool) -> BuildReport:
        t0 = time.perf_counter()
        self._load_passages()
        self._load_lexical()
        self.dense_error = None
        try:
            with self._build_lock():
                self._client = self._connect()
                self._damaged = False
                col = None if rebuild else self._existing_ok()
                if col is not None:
                    self._collection = col
                    action, reason = "up-to-date", "corpus hash unchanged"
                elif self._damaged:  # never touched again by this process: the whole store starts afresh
                    self._collection = self._recreate_local()
                    action, reason = "rebuilt", "index files were damaged; rebuilt from scratch"
                else:
                    had_any = self._has_our_collections()
                    self._collection = self._build()
                    action = "rebuilt" if (rebuild or had_any) else "built"
                    reason = (
                        "rebuild requested"
                        if rebuild
                        else "corpus changed since the last build"
                        if had_any
                        else "no index yet"
                    )
        except Exception as exc:
            if self.chroma_url:
                self._client = self._collection = None
                self._last_retry = time.monotonic()
                self.dense_error = f"chromadb server at {self.chroma_url} unavailable ({type(exc).__name__}: {exc})"
                log.warning("%s; using the lexical channel only", self.dense_error)
                self.report = self._report("lexical-only", self.dense_error, t0)
                return self.report
            # the local store cannot be read or written: it is ours, so start it afresh (once)
            log.warning("local index at %s unreadable (%s); rebuilding", self.chroma_dir, exc)
            try:
                with self._build_lock():
                    self._collection = self._recreate_local()
            except OSError as again:  # a read-only or missing data folder: keyword search still works
                self._client = self._collection = None
                self.dense_error = (f"the index folder {self.index_dir} cannot be written ({again.strerror or again}); "
                                    "keyword search only — set GPU_ADVISOR_DATA to a writable folder")
                log.warning("%s", self.dense_error)
                self.report = self._report("lexical-only", self.dense_error, t0)
                return self.report
            action, reason = "rebuilt", f"index was unreadable ({type(exc).__name__}); rebuilt from scratch"
        self.report = self._report(action, reason, t0)
        return self.report

    @contextlib.contextmanager
    def _build_lock(self) -> Iterator[None]:
        """Serialise opening/building between processes sharing the local store (POSIX file lock)."""
        if self.chroma_url:
            yield
            return
        try:
            import fcntl
        except ImportError:  # Windows: no cross-process lock
            yield
            return
        self.index_dir.mkdir(parents=True, exist_ok=True)
        with open(self.index_dir / ".lock", "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _report(self, action: str, reason: str, t0: float) -> BuildReport:
        vectors = (self._collection.metadata or {}).get("vectors", 0) if self._collection is not None else 0
        return BuildReport(
            action=action,
            reason=reason,
            passages=len(self.passages),
            vectors=int(vectors),  # type: ignore[arg-type]
            seconds=round(time.perf_counter() - t0, 3),
            location=self.location,
            corpus_hash=self.hash,
        )

    def _has_our_collections(self) -> bool:
        return any(c.startswith(COLLECTION_PREFIX) for c in self._collection_names())

    def _collection_names(self) -> list[str]:
        return [c if isinstance(c, str) else c.name for c in self._client.list_collections()]

    def close(self) -> None:
        """Drop the connection; for the local store also chromadb's per-path system (file handles)."""
        self._collection = None
        self._client = None
        if not self.chroma_url:
            _forget_local_system(self.chroma_dir)

    def _reopen_local(self) -> Any:
        """The local collection again: reconnect, else rebuild it, else start the store afresh."""
        try:
            self.close()
            self._client = self._connect()
            self._damaged = False
            col = self._existing_ok()
            if col is None and self._damaged:
                return self._recreate_local()
            return col or self._build()
        except Exception as exc:
            log.warning("local index at %s unusable (%s); recreating it", self.chroma_dir, exc)
            return self._recreate_local()

    def _recreate_local(self) -> Any:
        self.close()
        shutil.rmtree(self.chroma_dir, ignore_errors=True)
        self._client = self._connect()
        return self._build()

    # -- building ------------------------------------------------------------------------------
    def _build(self) -> Any:
        name = self.collection_name
        if name in self._collection_names():
            self._client.delete_collection(name)
        records: list[tuple[str, str, dict[str, Any]]] = []
        for p in self.passages.values():
            for i, text in enumerate(views(p)):
                records.append((f"{p.id}#{i}", text, {"pid": p.id, "lang": p.lang, "kind": p.kind}))
        col = self._client.create_collection(
            name,
            embedding_function=self._ef,
            configuration={"hnsw": dict(HNSW)},
            metadata={
                "corpus_hash": self.hash,
                "complete": False,
                "vectors": len(records),
                "embedder": self._ef.name(),
                "schema": INDEX_SCHEMA,
            },
        )
        bar = _progress(len(records), self.progress)
        try:
            vecs = self._embed_cached([r[1] for r in records], bar)
        finally:
            if bar is not None:
                bar.close()
        batch = 256
        for i in range(0, len(records), batch):
            chunk = records[i : i + batch]
            col.add(
                ids=[r[0] for r in chunk],
                embeddings=vecs[i : i + batch],
                documents=[r[1] for r in chunk],
                metadatas=[r[2] for r in chunk],
            )
        col.modify(
            metadata={
                "corpus_hash": self.hash,
                "complete": True,
                "vectors": len(records),
                "embedder": self._ef.name(),
                "schema": INDEX_SCHEMA,
            }
        )
        self._drop_stale(keep=name)
        self._prune_orphans()
        return col

    def _embedding_cache(self) -> Path:
        from knowledge.embedding import EMBEDDER_NAME, encoder_version

        return self.index_dir / f"{EMBEDDER_NAME}-{encoder_version()}-cache.npz"

    def _embed_cached(self, texts: list[str], bar: Any) -> np.ndarray:
        """Embeddings of ``texts``, reusing those of unchanged texts from the last build."""
        import numpy as np

        from knowledge.embedding import DIMENSIONS, embed

        path = self._embedding_cache()
        keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        cached: dict[str, np.ndarray] = {}
        try:
            with np.load(path, allow_pickle=False) as z:
                cached = dict(zip(z["keys"].tolist(), z["vecs"], strict=True))
        except (OSError, ValueError, KeyError):
            pass
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        todo = []
        for i, key in enumerate(keys):
            vec = cached.get(key)
            if vec is not None and vec.shape == (DIMENSIONS,):
                out[i] = vec
            else:
                todo.append(i)
        if bar is not None:
            bar.update(len(texts) - len(todo))
        step = 32
        for start in range(0, len(todo), step):
            part = todo[start : start + step]
            out[part] = embed([texts[i] for i in part])
            if bar is not None:
                bar.update(len(part))
        if todo:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f"{path.stem}.tmp{os.getpid()}.npz")
                np.savez(tmp, keys=np.array(keys), vecs=out)
                os.replace(tmp, path)
            except OSError as exc:
                log.info("cannot cache embeddings at %s: %s", path, exc)
        return out

    def _drop_stale(self, keep: str) -> None:
        """Delete collections of older corpus versions (local store only: a shared server may serve
        other versions of the advisor)."""
        if self.chroma_url:
            return
        for c in self._collection_names():
            if c.startswith(COLLECTION_PREFIX) and c != keep:
                self._client.delete_collection(c)

    def _prune_orphans(self) -> None:
        """Remove what no collection uses any more: chromadb leaves a deleted collection's segment folder
        behind (~30 MB per rebuild), and older versions kept a corpus cache here."""
        if self.chroma_url:
            return
        for old in self.index_dir.glob("corpus-*.json"):
            old.unlink(missing_ok=True)
        try:
            with contextlib.closing(sqlite3.connect(f"file:{self.chroma_dir / 'chroma.sqlite3'}?mode=ro",
                                                    uri=True)) as db:
                live = {str(row[0]) for row in db.execute("SELECT id FROM segments")}
        except sqlite3.Error as exc:  # another chromadb layout: leave its folders alone
            log.info("cannot list the index's segments: %s", exc)
            return
        for entry in self.chroma_dir.iterdir():
            if entry.is_dir() and _SEGMENT_DIR.fullmatch(entry.name) and entry.name not in live:
                shutil.rmtree(entry, ignore_errors=True)

    # -- lexical -------------------------------------------------------------------------------
    def _lexical_file(self) -> Path:
        return self.index_dir / f"lexical-tokens-{tokenizer_fingerprint()}.json"

    def _load_lexical(self) -> None:
        """BM25 index over title + text; token lists of unchanged passages come from the cache file."""
        path = self._lexical_file()
        try:
            cache = read(path, "json", MAX_CACHE_BYTES)  # a BoundsError (a ValueError) too
            if not isinstance(cache, dict):
                cache = {}
        except (OSError, ValueError):
            cache = {}
        body: dict[str, list[str]] = {}
        titles: dict[str, list[str]] = {}
        keep: dict[str, list[list[str]]] = {}
        fresh = 0
        for p in self.passages.values():
            key = hashlib.sha1(f"{p.title}\x1f{p.text}".encode()).hexdigest()
            entry = cache.get(key)
            if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, list) for x in entry)):
                entry = [tokenize(f"{p.title}\n{p.text}"), tokenize(p.title)]
                fresh += 1
            body[p.id], titles[p.id] = entry
            keep[key] = entry
        self.lexical = LexicalIndex(tokens=body, title_tokens=titles, title_weight=TITLE_WEIGHT, b=BM25_B)
        self.names = NameMatcher({p.id: p.names for p in self.passages.values() if p.names})
        if fresh or len(keep) != len(cache):
            try:
                write_atomic(path, json.dumps(keep, ensure_ascii=False).encode("utf-8"))
            except OSError as exc:  # read-only data dir: keep the in-memory index
                log.info("cannot cache the lexical tokens at %s: %s", path, exc)

    # -- querying ------------------------------------------------------------------------------
    def _recover(self) -> bool:
        """Try to get the vector store back after a failure; True when it is usable again.

        Server: reconnect (at most every ``RETRY_S`` seconds) and reuse the collection if it is there.
        Local store: reopen, which rebuilds a missing or unreadable index.
        """
        now = time.monotonic()
        if now - self._last_retry < RETRY_S:
            return False
        self._last_retry = now
        with self._lock:
            try:
                if self.chroma_url:
                    self._client = self._connect()
                    self._collection = self._existing_ok()
                    if self._collection is None:
                        self.dense_error = f"no index for this corpus on {self.chroma_url}; run `gpu-advisor index`"
                        return False
                else:
                    with self._build_lock():
                        self._collection = self._reopen_local()
            except Exception as exc:
                self._collection = None
                self.dense_error = f"vector store unavailable ({type(exc).__name__}: {exc})"
                return False
        self.dense_error = None
        return True

    def _query_vectors(self, vec: Any, n_vec: int, where: dict[str, str] | None) -> dict[str, Any]:
        if self._collection is None and not self._recover():
            raise DenseUnavailable(self.dense_error or "vector index not open")
        try:
            # ids only (no metadata fetch: it costs more than the search); a vector id is "{pid}#{n}"
            return self._collection.query(query_embeddings=[vec], n_results=n_vec, where=where, include=["distances"])
        except Exception as exc:
            self.dense_error = f"vector query failed ({type(exc).__name__}: {exc})"
            log.warning("%s", self.dense_error)
        self._collection = None
        if not self._recover():
            raise DenseUnavailable(self.dense_error or "vector index unavailable")
        try:
            return self._collection.query(query_embeddings=[vec], n_results=n_vec, where=where, include=["distances"])
        except Exception as exc:
            self._collection = None
            self.dense_error = f"vector query failed ({type(exc).__name__}: {exc})"
            raise DenseUnavailable(self.dense_error) from exc

    def dense_search(self, query: str, n: int = 30, lang: str | None = None) -> list[tuple[str, float]]:
        """Top ``n`` passages by cosine similarity (best vector per passage); raises DenseUnavailable."""
        from knowledge.embedding import embed_one

        if self._collection is None and not self._recover():
            raise DenseUnavailable(self.dense_error or "vector index not open")
        vec = embed_one(query)
        res = self._query_vectors(vec, min(max(n * 3, 10), 300), {"lang": lang} if lang else None)
        best: dict[str, float] = {}
        for vid, dist in zip(res["ids"][0], res["distances"][0], strict=True):
            pid = vid.rsplit("#", 1)[0]
            sim = 1.0 - float(dist)
            if pid in self.passages and sim > best.get(pid, -2.0):
                best[pid] = sim
        return sorted(best.items(), key=lambda kv: -kv[1])[:n]

    def name_search(self, query: str, lang: str | None = None) -> list[tuple[str, float]]:
        """Passages whose subject is named in the query (catalog cards), most specific name first."""
        return [
            (pid, float(n)) for pid, n in self.names.match(query) if lang is None or self.passages[pid].lang == lang
        ]

    def lexical_search(self, query: str, n: int = 30, lang: str | None = None) -> list[tuple[str, float]]:
        """Top ``n`` passages by BM25."""
        assert self.lexical is not None
        allowed = None if lang is None else [pid for pid, p in self.passages.items() if p.lang == lang]
        return self.lexical.search(query, n=n, allowed=allowed)


_default: KnowledgeIndex | None = None
_default_lock = threading.Lock()


def get_index(rebuild: bool = False) -> KnowledgeIndex:
    """The process-wide index over the packaged corpus, opened (and built if needed) on first use."""
    global _default
    with _default_lock:
        if _default is None:
            idx = KnowledgeIndex()
            idx.open(rebuild=rebuild)
            _default = idx
        elif rebuild:
            _default.open(rebuild=True)
        return _default


def reset_default_index() -> None:
    """Forget the process-wide index (the next :func:`get_index` reopens it)."""
    global _default
    with _default_lock:
        _default = None
