"""One running web app per test process, shared by the UI API and browser tests.

``running_app()`` launches the real app (``advisor.serve.launch_app``: queue, MCP, limits) on a
free 127.0.0.1 port in the background, deterministic backend, no login; it is closed at exit.
"""

from __future__ import annotations

import atexit
import functools
import os
import socket
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


@dataclass(frozen=True)
class App:
    url: str
    port: int
    demo: Any


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def launch(auth: str = "") -> App:
    """A fresh app on its own port (the caller closes ``app.demo``)."""
    from advisor.serve import launch_app
    from advisor.settings import Settings

    port = free_port()
    demo = launch_app("127.0.0.1", port, auth=auth, block=False, quiet=True, settings=Settings(llm="none"))
    return App(url=f"http://127.0.0.1:{port}/", port=port, demo=demo)


@functools.cache
def running_app() -> App:
    app = launch()
    atexit.register(app.demo.close)
    return app
