"""Whether a local chromadb store's vector graph can be searched without crashing the process.

chromadb reads its HNSW graph files with native code: random bytes in ``data_level0.bin`` of the right size
make the first vector search end the process with a segmentation fault, which no ``except`` can catch. So the
graph files are fingerprinted once a child process has searched them safely; while the fingerprint holds,
opening costs a hash of a few MB. When it does not (first open after a build, or the files changed), a child
process searches the collection first and the store is rebuilt if the child dies.
"""

from __future__ import annotations

import hashlib
import json
import logging
import subprocess
import sys
from pathlib import Path

from knowledge.bounded import read
from knowledge.cachefile import write_atomic

log = logging.getLogger(__name__)

# the graph files whose damage crashes a search; length.bin is rewritten on some reads, so only its size counts
GRAPH_FILES = ("data_level0.bin", "header.bin", "link_lists.bin")
PROBE_TIMEOUT_S = 120
# a few stored vectors must each find themselves (distance ~0): a graph that no longer crashes but answers
# wrongly (an emptied data_level0.bin) fails too
_PROBE = """
import sys
import chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
col = client.get_collection(sys.argv[2], embedding_function=None)
n = col.count()
stored = col.get(limit=3, offset=max(0, n // 2 - 1), include=["embeddings"])
found = col.query(query_embeddings=[list(v) for v in stored["embeddings"]], n_results=1)
sys.exit(0 if all(d and d[0] < 1e-3 for d in found["distances"]) else 2)
"""


def fingerprint(chroma_dir: Path) -> dict[str, list[int | str]]:
    """Size and SHA-256 of every graph file under ``chroma_dir`` (size only for the other .bin files)."""
    out: dict[str, list[int | str]] = {}
    for path in sorted(chroma_dir.glob("*/*.bin")):
        rel = path.relative_to(chroma_dir).as_posix()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.name in GRAPH_FILES else ""
        out[rel] = [path.stat().st_size, digest]
    return out


def searchable(chroma_dir: Path, collection: str, manifest: Path) -> bool:
    """True when ``collection`` can be searched: its graph files are those a child process searched before,
    or a child process searches them now, finding stored vectors where they are, without dying (then the
    files are recorded in ``manifest``)."""
    try:
        now = fingerprint(chroma_dir)
    except OSError as exc:
        log.warning("cannot read the vector index files (%s)", exc)
        return False
    try:
        known = read(manifest, "json", 1_000_000)  # a BoundsError (a ValueError) too
    except (OSError, ValueError):
        known = {}
    if isinstance(known, dict) and known.get(collection) == now:
        return True
    try:
        probe = subprocess.run([sys.executable, "-c", _PROBE, str(chroma_dir), collection],
                               capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("could not test the vector index (%s)", exc)
        return False
    if probe.returncode != 0:
        tail = probe.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:]
        log.warning("the vector index at %s is damaged (a test search exited with %s%s)", chroma_dir,
                    probe.returncode, f": {tail[0]}" if tail else "")
        return False
    try:
        write_atomic(manifest, json.dumps({collection: now}).encode("utf-8"))
    except OSError as exc:  # a read-only data dir: searched safely now, tested again next time
        log.info("cannot record the index fingerprint at %s: %s", manifest, exc)
    return True
