"""Security of the web app and of everything the advisor writes out.

* Binding: 127.0.0.1 by default; a non-loopback address without auth prints a warning (tested with an
  address this machine does not have, so nothing ever listens beyond loopback); a bad ``--auth`` value
  is refused without echoing the password.
* Optional username/password (Gradio auth): without a login nothing — page, config, API, files, chat —
  is served; with it, ``gradio_client`` works.
* No file outside the app's own data can be read through Gradio's file routes: ``/file=``,
  ``/gradio_api/file=``, ``..`` traversal, absolute paths, URL-encoded and doubled forms, static routes.
* API keys (``OPENAI_API_KEY=sk-test-SECRET…``) never appear in logs, errors, replies, exports, the
  session file, the app's config or API description — even when the LLM server fails.
* Exported reports contain no local paths.

The app runs in a child process on a free 127.0.0.1 port (``tests/fakes/app_server.py``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from advisor import Advisor
from advisor.cli import main as cli_main
from advisor.session import Session

try:
    from fakes.app_server import ROOT, AppServer, free_port
    from fakes.chat_server import FakeChatServer, FakeReply
except ImportError:  # tests/ collected as a package
    from tests.fakes.app_server import ROOT, AppServer, free_port
    from tests.fakes.chat_server import FakeChatServer, FakeReply

SECRET = "sk-test-SECRET-7f3a9c2e1b"
MARKER = "GPU-ADVISOR-SECRET-FILE-MARKER"
QUESTION = "Llama 3.1 8B inference on one RTX 4090, 8k context, 2 users"


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def raw_get(port: int, path: str) -> tuple[int, bytes]:
    """GET with the path sent exactly as written (urllib would normalise ``..``)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


# ------------------------------------------------------------------------------------------- the running app
@pytest.fixture(scope="module")
def llm_server() -> Iterator[FakeChatServer]:
    with FakeChatServer() as srv:
        srv.script = [FakeReply(status=500)]  # every LLM call fails: errors are where keys leak
        yield srv


@pytest.fixture(scope="module")
def secret_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("outside")
    outside = base / "secret.txt"
    outside.write_text(MARKER)
    data = tmp_path_factory.mktemp("app-data")
    return {"outside": outside, "data": data}


@pytest.fixture(scope="module")
def app(llm_server: FakeChatServer, secret_files: dict[str, Path]) -> Iterator[AppServer]:
    env = {"ADVISOR_LLM": "openai", "OPENAI_BASE_URL": llm_server.base_url, "OPENAI_API_KEY": SECRET,
           "ADVISOR_LLM_TIMEOUT_S": "3", "GPU_ADVISOR_MCP": "1"}
    with AppServer(env=env) as server:
        yield server


def test_binds_to_loopback_only_by_default(app: AppServer) -> None:
    """The listening socket is 127.0.0.1:<port> (from /proc/net/tcp), not 0.0.0.0 or ::."""
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, port = local.rsplit(":", 1)
            if state == "0A" and int(port, 16) == app.port:
                listening.append(addr)
    assert listening, "nothing listens on the app's port"
    assert all(a in ("0100007F", "00000000000000000000000001000000") for a in listening), listening


@pytest.mark.parametrize("path", [
    "/file={outside}",
    "/gradio_api/file={outside}",
    "/gradio_api/file=/etc/passwd",
    "/gradio_api/file=%2Fetc%2Fpasswd",
    "/gradio_api/file=../../../../../../etc/passwd",
    "/gradio_api/file=..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/gradio_api/file=%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/gradio_api/file=%252e%252e%252f%252e%252e%252fetc%252fpasswd",
    "/gradio_api/file=//etc/passwd",
    "/gradio_api/file=file:///etc/passwd",
    "/gradio_api/file=/proc/self/environ",
    "/gradio_api/file={root}/pyproject.toml",
    "/gradio_api/file=pyproject.toml",
    "/gradio_api/file=./app.py",
    "/gradio_api/file={root}/advisor/../app.py",
    "/gradio_api/file={data}/../secret.txt",
    "/gradio_api/file={home}/.bash_history",
    "/static/../../../../etc/passwd",
    "/static/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/assets/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/gradio_api/file=%2Fproc%2Fself%2Fcwd%2Fpyproject.toml",
])
def test_no_file_outside_the_app_can_be_read(app: AppServer, secret_files: dict[str, Path], path: str) -> None:
    target = path.format(outside=secret_files["outside"], root=ROOT, data=secret_files["data"],
                         home=Path.home())
    status, body = raw_get(app.port, target)
    text = body.decode("utf-8", errors="replace")
    leaked = MARKER in text or "root:x:0:0" in text or "[project]" in text or "PATH=" in text \
        or "from advisor.serve import" in text
    assert not leaked, f"{target} returned file contents (HTTP {status})"
    assert status in (400, 401, 403, 404, 405), f"{target}: HTTP {status}"


def test_config_and_api_description_leak_no_key_and_no_local_path(app: AppServer) -> None:
    for route in ("/config", "/gradio_api/info", "/gradio_api/mcp/schema"):
        status, body = http_get(app.url.rstrip("/") + route)
        if status == 404:
            continue
        text = body.decode("utf-8", errors="replace")
        assert SECRET not in text, f"API key in {route}"
        assert str(ROOT) not in text, f"repository path in {route}"
        assert str(Path.home()) + "/" not in text or str(Path.home()) == "/", f"home directory in {route}"


def test_chat_with_a_failing_llm_leaks_no_key(app: AppServer, llm_server: FakeChatServer) -> None:
    from gradio_client import Client

    client = Client(app.url, verbose=False)
    first = client.predict(QUESTION, "", api_name="/chat")
    second = client.predict("导出方案", "", api_name="/chat")
    assert llm_server.requests, "the app should have tried the LLM"
    for payload in (first, second):
        text = json.dumps(payload, ensure_ascii=False)
        assert SECRET not in text
        assert "sk-test" not in text
    assert "fits on" in first["reply"] or "放得下" in first["reply"]
    assert any("500" in n or "language model" in n.lower() for n in first["notices"]), first["notices"]
    out = app.output()
    assert SECRET not in out, "API key in the server's output"
    assert "Traceback" not in out, out[-3000:]


# ------------------------------------------------------------------------------------------- auth
@pytest.fixture(scope="module")
def auth_app() -> Iterator[AppServer]:
    with AppServer(args=["--auth", "alice:wonderland-pw"], env={"GPU_ADVISOR_MCP": "0"}) as server:
        yield server


@pytest.mark.parametrize("route", ["/config", "/gradio_api/info", "/gradio_api/file=/etc/passwd",
                                   "/gradio_api/call/chat"])
def test_with_auth_nothing_is_served_before_login(auth_app: AppServer, route: str) -> None:
    status, body = http_get(auth_app.url.rstrip("/") + route)
    text = body.decode("utf-8", errors="replace")
    assert status in (401, 403, 404, 405), f"{route}: HTTP {status}"
    assert "named_endpoints" not in text and "root:x:0:0" not in text


def test_with_auth_the_page_shows_a_login_not_the_app(auth_app: AppServer) -> None:
    status, body = http_get(auth_app.url)
    text = body.decode("utf-8", errors="replace")
    assert status == 200
    config = http_get(auth_app.url.rstrip("/") + "/config")[0]
    assert config in (401, 403), "the app's config must not be served before login"
    assert "wonderland-pw" not in text


def test_with_auth_wrong_password_is_refused_and_right_one_works(auth_app: AppServer) -> None:
    from gradio_client import Client

    with pytest.raises(Exception) as info:
        Client(auth_app.url, auth=("alice", "wrong"), verbose=False)
    assert "wonderland-pw" not in str(info.value)
    with pytest.raises(Exception):  # noqa: B017 - gradio_client raises various types for a refused login
        Client(auth_app.url, verbose=False).predict(QUESTION, "", api_name="/chat")
    client = Client(auth_app.url, auth=("alice", "wonderland-pw"), verbose=False)
    reply = client.predict(QUESTION, "", api_name="/chat")
    assert "fits on" in reply["reply"]


def test_bad_auth_value_is_refused_without_echoing_it() -> None:
    from advisor.serve import parse_auth

    for bad in ("alice-wonderland-pw", "alice:", ":wonderland-pw", "alice:ok,bob"):
        with pytest.raises(ValueError) as info:
            parse_auth(bad)
        assert "USER:PASSWORD" in str(info.value) and "wonderland" not in str(info.value)
    assert parse_auth("alice:wonder:land, bob:pw2") == [("alice", "wonder:land"), ("bob", "pw2")]


def test_non_loopback_binding_warns_unless_auth_is_on_and_fails_in_one_line() -> None:
    """192.0.2.1 (TEST-NET-1) is not an address of this machine: the app prints its warning (only without
    auth) and then cannot bind — so nothing ever listens beyond loopback during the test — and says so in
    one line with exit status 2, not a traceback. Both runs go in parallel to halve the start-up cost."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPU_ADVISOR_MCP": "0"}
    runs = {}
    for auth in (None, "alice:wonderland-pw"):
        args = [sys.executable, str(ROOT / "app.py"), "--host", "192.0.2.1", "--port", str(free_port())]
        runs[auth] = subprocess.Popen([*args, *(["--auth", auth] if auth else [])], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    results = {auth: proc.communicate(timeout=180) for auth, proc in runs.items()}
    for auth, (_, err) in results.items():
        assert ("without authentication" in err) is (auth is None), err[-1500:]
        assert "wonderland" not in err
    for auth, (_, err) in results.items():
        assert runs[auth].returncode == 2, f"exit status {runs[auth].returncode}"
        assert "Traceback" not in err, f"a bind failure should be one line, got:\n{err[-1500:]}"


# ------------------------------------------------------------------------------------------- keys, in process
def _all_text(reply: Any, session: Session, adv: Advisor) -> str:
    return "\n".join([reply.text, *reply.notices, json.dumps(reply.to_json(), ensure_ascii=False),
                      session.to_json(), adv.export(session), adv.describe(), repr(adv.settings),
                      str(adv.settings.model_dump())])


@pytest.mark.parametrize("failure", [FakeReply(status=401), FakeReply(status=500), FakeReply(garbage=True),
                                     FakeReply(truncate=True, content="x" * 60),
                                     FakeReply(tool_calls=[("no_such_tool", "{}")])])
def test_api_key_never_in_logs_errors_exports_or_session(failure: FakeReply, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, openai and httpx included, at their most verbose
    with FakeChatServer() as srv:
        srv.script = [failure]
        adv = Advisor(llm="openai", openai_base_url=srv.base_url, openai_model="fake", openai_api_key=SECRET,
                      llm_timeout_s=3)
        session = adv.new_session()
        reply = adv.reply(QUESTION, session)
        session.save(tmp_path / "s.json")
    assert reply.replaced, "the failure should have been noticed"
    blob = _all_text(reply, session, adv) + (tmp_path / "s.json").read_text(encoding="utf-8")
    blob += "\n".join(r.getMessage() + " " + str(r.args) for r in caplog.records)
    assert SECRET not in blob
    assert SECRET[8:] not in blob, "a part of the key leaked"


def test_api_key_not_in_cli_output_when_the_server_is_down(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ADVISOR_LLM", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    session_file = tmp_path / "s.json"
    assert cli_main(["ask", QUESTION, "--session", str(session_file), "--json"]) == 0
    assert cli_main(["ask", "导出方案", "--session", str(session_file)]) == 0
    out, err = capsys.readouterr()
    assert SECRET not in out + err and SECRET not in session_file.read_text(encoding="utf-8")
    assert "connection" in out.lower()


# ------------------------------------------------------------------------------------------- exports
def test_exported_report_has_no_local_paths(tmp_path: Path) -> None:
    """Even when tool errors carry paths (an unusable data directory, a model file the user named), the
    exported report names no local path."""
    bad_data = tmp_path / "not-a-directory"
    bad_data.write_text("x")
    model_file = tmp_path / "private" / "models" / "my-llama.gguf"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPU_ADVISOR_DATA": str(bad_data), "ADVISOR_LLM": "none",
           "GPU_ADVISOR_CHROMA_URL": ""}
    session = tmp_path / "s.json"
    for message in (QUESTION, f"what about the model file {model_file}?", "导出方案"):
        proc = subprocess.run([sys.executable, "-m", "advisor", "ask", message, "--session", str(session), "--json"],
                              capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-1500:]
    report = json.loads(proc.stdout)["reply"]
    assert "#" in report, "expected a Markdown report"
    for path in (str(tmp_path), str(ROOT), str(Path.home()) + "/", "/tmp/", "/root/", "/home/"):
        assert path not in report, f"{path} appears in the exported report"
    assert not re.search(r"(?<![\w.])/(?:usr|etc|var|opt|work)/", report)


def test_password_guessing_is_throttled() -> None:
    """--auth once allowed ~480 guesses a second: after 5 failed logins in a minute, an address is refused
    (HTTP 429), even with the right password, until the minute has passed."""
    import httpx

    with AppServer(args=["--auth", "alice:wonderland-pw"], env={"GPU_ADVISOR_MCP": "0"}) as server:
        url = server.url.rstrip("/") + "/login"
        wrong = [httpx.post(url, data={"username": "alice", "password": f"guess{i}"}, timeout=30).status_code
                 for i in range(5)]
        assert all(400 <= code < 500 and code != 429 for code in wrong), wrong
        blocked = httpx.post(url, data={"username": "alice", "password": "wonderland-pw"}, timeout=30)
        assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) <= 61


def test_with_auth_on_mcp_and_the_api_description_are_not_served() -> None:
    """With a login, the MCP handshake, its tool list and /openapi.json were still served to anyone; MCP
    clients cannot pass the login, so MCP is off when it is on."""
    import httpx

    with AppServer(args=["--auth", "alice:wonderland-pw"]) as server:
        for route in ("openapi.json", "docs", "gradio_api/mcp/schema", "gradio_api/openapi.json"):
            r = httpx.get(server.url + route, timeout=30)
            assert r.status_code in (401, 403, 404), (route, r.status_code)
            assert "size_inference" not in r.text and "paths" not in r.text
        client = {"name": "t", "version": "1"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": client}}
        r = httpx.post(server.url + "gradio_api/mcp/", json=init, timeout=30,
                       headers={"accept": "application/json, text/event-stream"})
        assert r.status_code in (401, 403, 404) and "serverInfo" not in r.text
