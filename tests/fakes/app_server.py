"""The real web app (``python app.py``) in a child process on a free loopback port, for tests and benchmarks.

``with AppServer(env={...}, args=[...]) as app: app.url`` starts it, waits until ``GET /`` answers (or
the process dies), and on exit stops it and collects its output in ``app.stdout`` / ``app.stderr``.
Nothing listens beyond 127.0.0.1 unless a test passes ``--host`` itself.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AppNotReady(RuntimeError):
    pass


class AppServer:
    def __init__(self, args: list[str] | None = None, env: dict[str, str] | None = None, port: int | None = None,
                 timeout_s: float = 90.0, cwd: Path | None = None):
        self.port = port or free_port()
        self.args = args or []
        self.env = env or {}
        self.timeout_s = timeout_s
        self.cwd = cwd or ROOT
        self.url = f"http://127.0.0.1:{self.port}/"
        self.stdout = ""
        self.stderr = ""
        self.ready_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: Any = None
        self._err: Any = None

    def start(self) -> AppServer:
        base = {k: v for k, v in os.environ.items() if k not in ("GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT")}
        env = {**base, "GRADIO_ANALYTICS_ENABLED": "False", "ANONYMIZED_TELEMETRY": "False",
               "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **self.env}
        # kept open while the child runs (it writes there); closed in stop()
        self._out = tempfile.TemporaryFile()  # noqa: SIM115
        self._err = tempfile.TemporaryFile()  # noqa: SIM115
        t0 = time.perf_counter()
        self._proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(self.port), *self.args],
                                      cwd=self.cwd, env=env, stdout=self._out, stderr=self._err,
                                      start_new_session=True)
        deadline = t0 + self.timeout_s
        while time.perf_counter() < deadline:
            if self._proc.poll() is not None:
                self.stop()
                raise AppNotReady(f"app exited with {self._proc.returncode}: {self.stderr[-2000:]}")
            try:
                with urllib.request.urlopen(self.url, timeout=2) as resp:
                    if resp.status in (200, 401):
                        self.ready_s = time.perf_counter() - t0
                        return self
            except urllib.error.HTTPError as exc:  # auth on: the login page answers 401/403/...
                if exc.code < 500:
                    self.ready_s = time.perf_counter() - t0
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.1)
        self.stop()
        raise AppNotReady(f"app not ready after {self.timeout_s:.0f} s: {self.stderr[-2000:]}")

    def _collect(self) -> None:
        for name, fh in (("stdout", self._out), ("stderr", self._err)):
            if fh is not None:
                fh.seek(0)
                setattr(self, name, fh.read().decode("utf-8", errors="replace"))

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait(timeout=5)
        self._collect()
        for fh in (self._out, self._err):
            if fh is not None:
                fh.close()
        self._out = self._err = None

    def output(self) -> str:
        """Everything the app printed so far (stdout + stderr)."""
        self._collect()
        return self.stdout + self.stderr

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def __enter__(self) -> AppServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
