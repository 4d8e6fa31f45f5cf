"""Faults: a broken LLM backend or knowledge index never costs the user an answer or the session.

LLM side, against a real HTTP server on 127.0.0.1 speaking the chat-completions protocol
(``tests/fakes/chat_server.py``), beyond what tests/test_backend_openai.py covers (connection refused,
slow server, HTTP 500/429, garbage and truncated streams, empty reply, cut-off tool JSON, an unknown
tool, out-of-range arguments, a repeated tool loop): a turn deadline shorter than the request timeout,
HTTP 502/503/401/404, tool arguments that are not JSON / not an object / of the wrong type, odd tool
names (empty, 300 characters, near misses), a tool not offered on the current path, and a session that
carries on after a failed turn. Each turn must fall back to the deterministic reply — the same verdict
and numbers as the offline advisor — with a notice, within a bounded time, and keep everything in the
session. The web app must stay responsive while its LLM hangs, and a restarted server resumes a
conversation from the session JSON it handed out.

Knowledge side (tests/test_knowledge_index.py covers a garbled database file and an unreachable server
at the index level): a partially written collection (a build that was killed), a collection that lost
vectors, corrupted segment files, an emptied database, the data directory vanishing under a running
index; and, end to end through ``gpu-advisor ask``, a corrupted store, a chromadb server that is down,
and a data directory that cannot be used at all: the answer still comes, retrieval rebuilds or degrades
to the lexical channel and the user is told; an empty result always carries a reason.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from advisor import Advisor
from advisor.session import Session
from knowledge.corpus import Passage
from knowledge.index import KnowledgeIndex, user_data_dir
from knowledge.search import search

try:
    from fakes.chat_server import FakeChatServer, FakeReply
except ImportError:  # tests/ collected as a package
    from tests.fakes.chat_server import FakeChatServer, FakeReply

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Llama 3.1 8B inference on one RTX 4090, 8k context, 2 users"
LLM_TIMEOUT_S = 2.0
BOUND_S = LLM_TIMEOUT_S + 4.0  # request timeout + the deterministic turn + slack on a loaded 2-core box


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def offline() -> dict[str, Any]:
    """The offline advisor's answer to QUESTION: the reference every fallback must reproduce."""
    reply = Advisor().reply(QUESTION, Session())
    size = next(c for c in reply.tool_calls if c.name == "size_inference")
    return {"verdict": reply.text.splitlines()[0], "size": size.result, "tools": [c.name for c in reply.tool_calls]}


@pytest.fixture
def server() -> Any:
    with FakeChatServer() as srv:
        yield srv


def llm_advisor(base_url: str, **kw: Any) -> Advisor:
    opts = {"llm_timeout_s": LLM_TIMEOUT_S, "turn_timeout_s": 20.0} | kw
    return Advisor(llm="openai", openai_base_url=base_url, openai_model="fake", **opts)


def assert_fallback(adv: Advisor, offline: dict[str, Any], expect: str) -> Any:
    """One turn against the broken backend: computed answer, a notice naming the failure, nothing lost."""
    session = Session()
    t0 = time.perf_counter()
    reply = adv.reply(QUESTION, session)
    elapsed = time.perf_counter() - t0
    assert elapsed < BOUND_S, f"fallback took {elapsed:.1f} s"
    assert reply.text.splitlines()[0] == offline["verdict"]
    size = next(c for c in reply.tool_calls if c.name == "size_inference")
    assert size.result["per_gpu_bytes"] == offline["size"]["per_gpu_bytes"]
    assert reply.replaced is True and reply.grounded is False
    notice = " ".join(reply.notices).lower()
    assert expect.lower() in notice, f"expected {expect!r} in the notices: {reply.notices}"
    # nothing lost: both turns recorded, profile filled, and the session saves and continues
    assert [t.role for t in session.history] == ["user", "assistant"]
    assert session.profile.model and session.profile.gpu
    again = Session.from_json(session.to_json())
    assert again.history[-1].text == reply.text
    return reply


# ------------------------------------------------------------------------------------------- transport
def test_turn_deadline_shorter_than_the_request_timeout(server: FakeChatServer, offline: dict[str, Any]) -> None:
    """turn_timeout_s bounds the whole turn even when one request would be allowed longer."""
    server.script = [FakeReply(content="too late", delay_s=60)]
    adv = llm_advisor(server.base_url, llm_timeout_s=30.0, turn_timeout_s=1.5)
    assert_fallback(adv, offline, "timeout")


@pytest.mark.parametrize("status,expect", [(502, "502"), (503, "503"), (401, "401"), (404, "404")])
def test_http_errors(server: FakeChatServer, offline: dict[str, Any], status: int, expect: str) -> None:
    server.script = [FakeReply(status=status)]
    assert_fallback(llm_advisor(server.base_url), offline, expect)
    assert len(server.requests) == 1, "no retries: a failed turn falls back at once"


# ------------------------------------------------------------------------------------------- tool calls
@pytest.mark.parametrize("arguments,expect", [
    ("name=RTX 4090", "malformed"),  # not JSON at all
    ('["RTX 4090"]', "malformed"),  # JSON, but not an object
    ('{"model": "llama-3.1-8b", "context": "lots"}', "invalid"),  # wrong type for a field
    ('{"model": ' + "[" * 5_000 + "]" * 5_000 + "}", "malformed"),  # deep, short: once a RecursionError
    ('{"model": "' + "x" * 200_000 + '"}', "malformed"),  # far longer than any real call
])
def test_bad_tool_arguments(server: FakeChatServer, offline: dict[str, Any], arguments: str, expect: str) -> None:
    tool = "perf_decode" if "name" in arguments else "size_inference"
    server.script = [FakeReply(tool_calls=[(tool, arguments)]), FakeReply(content="done")]
    assert_fallback(llm_advisor(server.base_url), offline, expect)


@pytest.mark.parametrize("name", ["", "size_inference; drop table", "x" * 300, "scientific_fp64_"])
def test_unknown_tool(server: FakeChatServer, offline: dict[str, Any], name: str) -> None:
    server.script = [FakeReply(tool_calls=[(name, "{}")]), FakeReply(content="done")]
    reply = assert_fallback(llm_advisor(server.base_url), offline, "tool")
    assert all(len(n) < 400 for n in reply.notices), "a 300-character tool name must not flood the notice"


def test_tool_not_allowed_on_this_path(server: FakeChatServer, offline: dict[str, Any]) -> None:
    """An inference conversation does not offer the training-time tool; calling it is refused."""
    server.script = [FakeReply(tool_calls=[("size_training", '{"model": "llama-3.1-8b"}')]),
                     FakeReply(content="done")]
    assert_fallback(llm_advisor(server.base_url), offline, "tool")


def test_llm_tool_results_reach_the_model_and_a_good_reply_is_kept(server: FakeChatServer,
                                                                     offline: dict[str, Any]) -> None:
    """Control case: a well-behaved model (one tool call, then an answer quoting only real numbers) is kept."""
    size = offline["size"]
    gb = f"{size['per_gpu_bytes'] / 1e9:.1f} GB"
    server.script = [FakeReply(tool_calls=[("perf_decode", '{"model": "llama-3.1-8b", "gpu": "RTX 4090"}')]),
                     FakeReply(content=f"Yes — Llama 3.1 8B fits on one RTX 4090; it needs about {gb} per GPU.")]
    reply = llm_advisor(server.base_url, llm_tool_calls=True).reply(QUESTION, Session())
    assert reply.grounded is True and not reply.replaced, reply.notices
    assert gb in reply.text
    tool_message = [m for m in server.requests[-1]["messages"] if m.get("role") == "tool"]
    assert any("RTX 4090" in (m.get("content") or "") for m in tool_message)


def test_a_failed_turn_then_a_working_one(server: FakeChatServer, offline: dict[str, Any]) -> None:
    """The session goes on after a failure: the next turn (server healthy again) builds on the same profile."""
    size = offline["size"]
    gb = f"{size['per_gpu_bytes'] / 1e9:.1f} GB"
    server.script = [FakeReply(status=500),
                     FakeReply(content=f"It fits on one RTX 4090 with {gb} per GPU.")]
    adv = llm_advisor(server.base_url)
    session = Session()
    first = adv.reply(QUESTION, session)
    assert first.replaced
    second = adv.reply("and again?", session)
    assert len(session.history) == 4
    assert session.profile.model == "llama-3.1-8b" or "8b" in (session.profile.model or "")
    assert second.text.strip()


# ------------------------------------------------------------------------------------------- knowledge index
def _p(pid: str, lang: str, title: str, text: str) -> Passage:
    return Passage(id=pid, title=title, text=text, lang=lang, source="fault test", as_of=dt.date(2025, 1, 1))


FIXTURE = [
    _p("t/en/nvlink", "en", "NVLink bandwidth",
       "NVLink 4 gives each H100 SXM 900 GB/s of bidirectional bandwidth through NVSwitch."),
    _p("t/en/psu", "en", "Sizing the power supply",
       "Add the board power of every GPU, the CPU and 150 W, then multiply by 1.25."),
    _p("t/zh/ram", "zh", "系统内存", "系统内存至少应为全部显卡显存之和的两倍，否则加载模型时会频繁换页。"),
    _p("t/en/cool", "en", "Passive cooling",
       "Datacenter cards without fans need the front-to-back airflow of a rack server."),
]


def open_index(data_dir: Path, url: str = "") -> KnowledgeIndex:
    from chromadb.api.client import SharedSystemClient

    SharedSystemClient.clear_system_cache()  # as a new process would see the store
    idx = KnowledgeIndex(FIXTURE, data_dir=data_dir, chroma_url=url, progress=False)
    idx.open()
    return idx


def test_partially_written_collection_is_rebuilt(tmp_path: Path) -> None:
    """A build killed half-way leaves a collection marked complete=False with some vectors: rebuilt."""
    idx = open_index(tmp_path)
    col = idx._client.get_collection(idx.collection_name)
    ids = col.get()["ids"]
    col.delete(ids=ids[: len(ids) // 2])
    col.modify(metadata={**(col.metadata or {}), "complete": False})
    again = open_index(tmp_path)
    assert again.report is not None and again.report.action == "rebuilt"
    assert again.report.vectors == len(ids)
    assert search("NVLink bandwidth", k=1, index=again)[0].id == "t/en/nvlink"


def test_collection_with_missing_vectors_is_rebuilt(tmp_path: Path) -> None:
    """complete=True but fewer vectors than its metadata promises (a store that lost data): rebuilt, not
    trusted — otherwise the lost passages silently vanish from the dense channel."""
    idx = open_index(tmp_path)
    col = idx._client.get_collection(idx.collection_name)
    col.delete(ids=col.get()["ids"][:1])
    again = open_index(tmp_path)
    assert again.report is not None and again.report.action == "rebuilt"


@pytest.mark.parametrize("damage", ["segments", "segments-and-db", "empty-db"])
def test_corrupted_chroma_files_rebuild_or_degrade_with_a_notice(tmp_path: Path, damage: str) -> None:
    open_index(tmp_path)
    chroma = tmp_path / "index" / "chroma"
    segment_files = [p for p in chroma.rglob("*") if p.is_file() and p.name != "chroma.sqlite3"]
    if damage.startswith("segments"):
        assert segment_files, "expected HNSW segment files to damage"
        for p in segment_files:
            p.write_bytes(b"\x00\xffnot an hnsw index" * 7)
    if damage.endswith("db"):
        (chroma / "chroma.sqlite3").write_bytes(b"" if damage == "empty-db" else b"garbage" * 1000)
    idx = open_index(tmp_path)
    results = search("NVLink 900 GB/s", k=2, index=idx)
    assert results and results[0].id == "t/en/nvlink"
    if results.degraded:
        assert results.notices and "lexical" in " ".join(results.notices)
    else:
        # an emptied database reads as a fresh store ("built"); damaged files are detected ("rebuilt"), or
        # chromadb still serves the collection from what it could read ("up-to-date") — then it must work
        assert idx.report is not None and idx.report.action in ("built", "rebuilt", "up-to-date")
        dense = idx.dense_search("NVLink 900 GB/s", n=2)
        assert dense and dense[0][0] == "t/en/nvlink"


def test_data_directory_removed_under_a_running_index(tmp_path: Path) -> None:
    idx = open_index(tmp_path)
    shutil.rmtree(tmp_path / "index")
    results = search("power supply 150 W", k=2, index=idx)
    assert results, results.reason
    assert results[0].id == "t/en/psu"
    assert not results.degraded or results.notices


def test_empty_results_always_say_why(tmp_path: Path) -> None:
    idx = open_index(tmp_path)
    for query in ("", "   ", "!!! ??? ...", "zzqxj vprtk"):
        results = search(query, k=3, index=idx)
        if not results:
            assert results.reason, f"empty result for {query!r} without a reason"


# ------------------------------------------------------------------------------------------- the advisor, end to end
@pytest.fixture(scope="module")
def data_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private data directory for subprocess runs, seeded with the caches of the default index (embeddings,
    lexical tokens) so that a rebuild there takes seconds; the user's own directory is never touched."""
    from knowledge.index import get_index

    get_index()  # make sure the default caches exist
    src = Path(os.environ.get("GPU_ADVISOR_DATA") or user_data_dir()) / "index"
    dst = tmp_path_factory.mktemp("advisor-data")
    (dst / "index").mkdir()
    for p in src.iterdir():
        if p.is_file() and p.name != ".lock":
            shutil.copy2(p, dst / "index" / p.name)
    return dst


def ask(data_dir: Path, *, chroma_url: str = "", message: str = QUESTION) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPU_ADVISOR_DATA": str(data_dir), "ADVISOR_LLM": "none",
           "GPU_ADVISOR_CHROMA_URL": chroma_url}
    proc = subprocess.run([sys.executable, "-m", "advisor", "ask", message, "--json", "--lang", "en"],
                          capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def _search_call(out: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in out["tool_calls"] if c["name"] == "search_knowledge")


def test_advisor_with_a_corrupted_index_still_answers_and_cites(data_copy: Path) -> None:
    chroma = data_copy / "index" / "chroma"
    if not chroma.exists():
        ask(data_copy)  # first run builds the store from the cached embeddings
    for p in chroma.rglob("*"):
        if p.is_file():
            p.write_bytes(b"corrupted by the fault test" * 3)
    out = ask(data_copy)
    assert out["reply"].splitlines()[0].startswith("**Answer:")
    search_result = _search_call(out)["result"]
    assert search_result["results"], search_result
    assert out["citations"], "the answer should still cite passages"
    if search_result.get("degraded"):
        assert any("lexical" in n for n in search_result.get("notices", []))


def test_advisor_with_a_dead_chroma_server_says_retrieval_is_degraded(data_copy: Path) -> None:
    out = ask(data_copy, chroma_url=f"http://127.0.0.1:{free_port()}")
    search_result = _search_call(out)["result"]
    assert search_result.get("degraded") is True and search_result["results"]
    assert out["reply"].splitlines()[0].startswith("**Answer:")
    assert any("lexical" in n.lower() or "vector" in n.lower() or "knowledge" in n.lower()
               for n in out["notices"]), f"the reply should tell the user retrieval is degraded: {out['notices']}"


def test_advisor_with_an_unusable_data_directory_still_answers_and_says_why(tmp_path: Path) -> None:
    """GPU_ADVISOR_DATA pointing at a file: no vector index can be written. The numbers still come, citations
    come from keyword search (they were all dropped once), and the reply says the search was keyword-only."""
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    out = ask(not_a_dir)
    assert out["reply"].splitlines()[0].startswith("**Answer:")
    call = _search_call(out)
    assert call["result"]["degraded"] is True and call["result"]["results"], call
    assert out["citations"]
    assert any("keyword" in n.lower() for n in out["notices"]), \
        f"the reply should say the search was keyword-only: {out['notices']}"


# ------------------------------------------------------------------------------------------- the web app
def _app_server() -> Any:
    try:
        from fakes.app_server import AppServer
    except ImportError:  # tests/ collected as a package
        from tests.fakes.app_server import AppServer
    return AppServer


def test_ui_stays_responsive_while_the_llm_hangs_and_a_restart_resumes_the_session() -> None:
    """With an LLM that never answers, a chat turn waits for its timeout and falls back — meanwhile the page
    and the calculator endpoints answer at once. Then the server process is restarted mid-conversation: the
    conversation continues from the session JSON the app returned, and a new client starts cleanly."""
    import threading

    from gradio_client import Client

    app_server = _app_server()
    with FakeChatServer() as srv:
        srv.script = [FakeReply(content="late", delay_s=60)]
        env = {"ADVISOR_LLM": "openai", "OPENAI_BASE_URL": srv.base_url, "ADVISOR_OPENAI_MODEL": "fake",
               "ADVISOR_LLM_TIMEOUT_S": "4", "GPU_ADVISOR_MCP": "0"}
        with app_server(env=env) as app:
            calc = Client(app.url, verbose=False)
            calc.predict("GPU memory", 1, api_name="/search")  # waits for the start-up warm-up (index, encoder)
            chat_done: dict[str, Any] = {}

            def slow_chat() -> None:
                t = time.perf_counter()
                chat_done["out"] = Client(app.url, verbose=False).predict(QUESTION, "", api_name="/chat")
                chat_done["s"] = time.perf_counter() - t

            worker = threading.Thread(target=slow_chat)
            worker.start()
            time.sleep(0.5)  # the chat is now waiting on the LLM
            t = time.perf_counter()
            sized = calc.predict("llama-3.1-8b", 8192, "bf16", "RTX 4090", api_name="/size")
            calc_s = time.perf_counter() - t
            t = time.perf_counter()
            with urllib.request.urlopen(app.url, timeout=10) as resp:
                assert resp.status == 200
            page_s = time.perf_counter() - t
            worker.join(timeout=60)
            assert not worker.is_alive()
            assert calc_s < 3 and page_s < 3, f"calculator {calc_s:.1f} s, page {page_s:.1f} s while the LLM hangs"
            assert sized["fits"] is True
            first = chat_done["out"]
            assert "fits on" in first["reply"]
            assert chat_done["s"] < 4 + 8, f"the turn took {chat_done['s']:.1f} s with a 4 s LLM timeout"
            assert any("timeout" in n.lower() for n in first["notices"]), first["notices"]
            saved = first["session"]
        # a new process: nothing of the old one survives except what the client kept
        with app_server(env={"ADVISOR_LLM": "none", "GPU_ADVISOR_MCP": "0"}) as app:
            client = Client(app.url, verbose=False)
            resumed = client.predict("what about FP16?", saved, api_name="/chat")
            size = next(c for c in resumed["tool_calls"] if c["name"] == "size_inference")
            assert size["arguments"]["model"].startswith("llama-3.1-8b") and size["result"]["precision"] == "fp16"
            assert len(json.loads(resumed["session"])["history"]) == len(json.loads(saved)["history"]) + 2
            fresh = Client(app.url, verbose=False).predict("what about FP16?", "", api_name="/chat")
            assert json.loads(fresh["session"])["profile"].get("model") is None
            assert not any(c["name"] == "size_inference" for c in fresh["tool_calls"])
            with pytest.raises(Exception) as info:
                client.predict("hello", saved[: len(saved) // 2], api_name="/chat")
            assert "truncated" in str(info.value) or "JSON" in str(info.value)
