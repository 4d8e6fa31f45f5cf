"""Web server start-up: host/port/auth handling shared by `app.py` and `gpu-advisor serve`.

* Binds to 127.0.0.1:7860 unless told otherwise (``--host``/``GRADIO_SERVER_NAME``,
  ``--port``/``GRADIO_SERVER_PORT``); never creates a share link; Gradio analytics off.
* ``--auth user:pass`` (or ``GPU_ADVISOR_AUTH="alice:pw1,bob:pw2"``) turns on Gradio's login.
  Binding beyond loopback without auth prints a warning.
* The LLM backend settings in the UI are read-only unless ``GPU_ADVISOR_LOCK_SETTINGS=0`` (a web user
  must not point the server at arbitrary model paths or URLs); even then a change arriving through a
  reverse proxy (forwarding headers) is refused and logged. The first proxied request prints a one-time
  notice of what that means here (no login? settings unlocked?).
* An idle conversation is parked compressed (after 10 min, or 1 min under memory pressure) and forgotten
  after ``GPU_ADVISOR_SESSION_IDLE_S`` seconds (default 4 h); at most ``GPU_ADVISOR_MAX_SESSIONS`` (default
  256) are kept live (see ``advisor/ui/expiry.py``).
* Request guards (see :func:`middleware`): body size, header and body deadlines, one login throttle keyed on
  the peer (forwarding headers only from ``GPU_ADVISOR_TRUSTED_PROXIES``), a cached compressed ``/config``.
* The deterministic tools are served as API endpoints, and as MCP tools when the ``mcp`` package
  is installed (``GPU_ADVISOR_MCP=0`` turns that off).
"""

from __future__ import annotations

import argparse
import importlib.util
import ipaddress
import logging
import os
import socket
import sys
import threading
import warnings
from collections.abc import Sequence
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860
MAX_UPLOAD = "2mb"
SWITCH_INTERVAL_S = 0.001
MAX_BODY_BYTES = 2_500_000  # the 2 MB upload and its multipart framing; a chat message is a few KB


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", DEFAULT_HOST))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", DEFAULT_PORT)))
    parser.add_argument(
        "--auth",
        default=None,
        metavar="USER:PASS",
        help="require a login (comma-separate several); default: $GPU_ADVISOR_AUTH",
    )


def parse_auth(text: str | None) -> list[tuple[str, str]] | None:
    """'alice:pw1,bob:pw2' → [('alice', 'pw1'), ('bob', 'pw2')]; None/empty → None.

    Raises ValueError (without echoing the password) for an entry that is not user:password.
    """
    if not text or not text.strip():
        return None
    pairs: list[tuple[str, str]] = []
    for n, item in enumerate(text.split(","), start=1):
        user, sep, password = item.strip().partition(":")
        if not sep or not user.strip() or not password:
            raise ValueError(f"auth entry {n} is not USER:PASSWORD")
        pairs.append((user.strip(), password))
    return pairs


def is_loopback(host: str) -> bool:
    """True for localhost / 127.x / ::1 — addresses other machines cannot reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings_locked(host: str) -> bool:
    """Whether the UI's backend settings are read-only for this server: always, unless
    ``GPU_ADVISOR_LOCK_SETTINGS=0`` unlocks them (``host`` is kept for callers). Behind a reverse proxy every
    user arrives from 127.0.0.1, and unlocked settings would let any of them make the server call a URL or
    load a server-side file of their choice; even unlocked, a change that came through a proxy is refused."""
    value = os.environ.get("GPU_ADVISOR_LOCK_SETTINGS", "").strip().lower()
    return value not in ("0", "false", "no", "off")


def bind_warning(host: str, port: int, auth: list[tuple[str, str]] | None) -> str | None:
    """The warning to print when the server is reachable from other machines without a login."""
    if is_loopback(host) or auth:
        return None
    return (
        f"warning: serving on {host}:{port} without authentication — anyone who can reach this address "
        "can use the app; add --auth USER:PASS (or GPU_ADVISOR_AUTH) or put it behind an authenticating "
        "reverse proxy"
    )


def check_bindable(host: str, port: int) -> None:
    """Raise OSError (with the system's reason) when ``host:port`` cannot be listened on — checked before the
    app is built, so the user gets one clear line instead of the web server's log and retry messages."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise OSError(f"unknown host {host!r} ({exc.strerror or exc})") from None
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)


def mcp_available() -> bool:
    if os.environ.get("GPU_ADVISOR_MCP", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return importlib.util.find_spec("mcp") is not None


def warm_up() -> threading.Thread:
    """Load the catalog and open the knowledge index in the background, so the first chat is quick."""

    def run() -> None:
        try:
            from knowledge import load_catalog
            from knowledge.search import search

            load_catalog()
            search("GPU memory", k=1)
        except Exception:  # warm-up is an optimisation; the first turn reports problems
            log.warning("warm-up failed", exc_info=True)

    thread = threading.Thread(target=run, name="gpu-advisor-warm-up", daemon=True)
    thread.start()
    return thread


def build_app(*, lock_settings: bool = False, warm: bool = True, settings: Any = None) -> Any:
    """The Gradio app (a ``gr.Blocks``; gradio is imported lazily, it is slow to import)."""
    from advisor.engine import Advisor
    from advisor.ui.layout import build_blocks
    from advisor.ui.state import AdvisorPool

    if warm:
        warm_up()
    return build_blocks(AdvisorPool(Advisor.from_settings, settings), lock_settings=lock_settings)


def middleware(*, auth: bool, settings_locked: bool, body_timeout_s: float) -> list[Any]:
    """The web server's request guards, outermost first."""
    from starlette.middleware import Middleware
    from starlette.middleware.gzip import GZipMiddleware

    from advisor.body_limit import BodyLimit
    from advisor.config_cache import ConfigCache
    from advisor.login_throttle import LoginThrottle
    from advisor.proxy_notice import ProxyNotice
    from advisor.slow_requests import BodyDeadline
    from advisor.stream_gzip import StreamGzip

    return [
        # every body (a chat message, an API call, an upload) is refused above this before it is parsed
        Middleware(BodyLimit, max_bytes=MAX_BODY_BYTES),
        Middleware(BodyDeadline, timeout_s=body_timeout_s),
        Middleware(LoginThrottle),
        Middleware(ProxyNotice, auth=auth, settings_locked=settings_locked),
        *([] if auth else [Middleware(ConfigCache)]),  # with a login, the config names the user: built each time
        Middleware(GZipMiddleware, minimum_size=1024),  # pages and replies; it leaves event streams alone
        Middleware(StreamGzip),  # the chat's event streams, each event flushed as it is sent
    ]


def launch_app(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    auth: str | None = None,
    *,
    block: bool = True,
    quiet: bool = False,
    settings: Any = None,
) -> Any:
    """Build and launch; returns the Blocks (already serving when ``block`` is False).

    ``auth``: 'user:pass[,user2:pass2]'; None reads ``GPU_ADVISOR_AUTH``, '' means no login.
    ``settings``: the engine's ``advisor.settings.Settings`` (default: from the environment).
    """
    pairs = parse_auth(auth if auth is not None else os.environ.get("GPU_ADVISOR_AUTH"))
    warning = bind_warning(host, port, pairs)
    if warning:
        sys.stderr.write(warning + "\n")
    check_bindable(host, port)
    from advisor.login_throttle import trust_proxies
    from advisor.slow_requests import deadlines
    from advisor.slow_requests import install as guard_slow_requests
    from advisor.ui.expiry import SessionSweeper, limit_malloc_arenas, limits
    from advisor.ui.layout import launch_options  # gradio: slow to import, so only once the port is known good
    from advisor.ui.results import routes as result_routes

    limit_malloc_arenas()  # before the server's threads start
    # the web server's event loop shares the interpreter lock with the chat turns' threads: a shorter switch
    # interval hands it back sooner, so requests are taken while turns compute (default 5 ms)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    sessions = limits()  # a bad GPU_ADVISOR_SESSION_IDLE_S / GPU_ADVISOR_MAX_SESSIONS: one line, before building
    trust_proxies()  # forwarding headers believed only from GPU_ADVISOR_TRUSTED_PROXIES (default: none)
    slow = deadlines()
    guard_slow_requests(slow.header_s)  # request headers must arrive within a deadline
    locked = settings_locked(host)
    demo = build_app(lock_settings=locked, warm=False, settings=settings)
    # /chat keeps per-connection state; over MCP each call starts fresh unless `session` is passed back
    warnings.filterwarnings("ignore", message="This MCP server includes a tool that has a gr.State input")
    demo.launch(
        server_name=host,
        server_port=port,
        share=False,
        auth=pairs,
        prevent_thread_lock=True,
        quiet=quiet,
        mcp_server=mcp_available() and not pairs,  # MCP clients cannot pass the login: off when it is on
        max_file_size=MAX_UPLOAD,
        show_error=False,
        state_session_capacity=sessions.max_sessions,  # beyond it, the least recently used session is dropped
        app_kwargs={"middleware": middleware(auth=bool(pairs), settings_locked=locked,
                                                 body_timeout_s=slow.body_s),
                    "routes": result_routes(),  # a chat step's full result, fetched when it is opened
                    # with a login, the API's description is not served to whoever asks either
                    **({"openapi_url": None, "docs_url": None, "redoc_url": None} if pairs else {})},
        **launch_options(),
    )
    SessionSweeper(demo, sessions.idle_s).start()
    warm_up()  # after the server is up: it must not slow the start
    if block:
        demo.block_thread()
    return demo


def serve(host: str, port: int, auth: str | None = None) -> int:
    """Run the web UI until interrupted; a bad option or an address that cannot be bound is one line, exit 2."""
    try:
        launch_app(host, port, auth)
    except ValueError as exc:
        sys.stderr.write(f"gpu-advisor: {exc}\n")
        return 2
    except OSError as exc:  # port in use, address not on this machine, no permission for a low port
        text = exc.strerror or str(exc) or type(exc).__name__
        detail = text.splitlines()[0]
        sys.stderr.write(f"gpu-advisor: cannot listen on {host}:{port}: {detail} — choose another --host or "
                         "--port\n")
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="app.py", description="Start the GPU Advisor web UI.")
    add_serve_arguments(parser)
    args = parser.parse_args(argv)
    return serve(args.host, args.port, args.auth)
