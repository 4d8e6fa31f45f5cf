"""The CI audit fallback (``.ci/audit_newest.py``) against a fake PyPI on 127.0.0.1.

The fake serves project pages the way pypi.org does (``info.version`` = the newest release and the
``vulnerabilities`` of that release, each listed once per id) and 404 for unknown projects.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "audit_newest.py"

ADVISORY = {
    "id": "GHSA-aaaa-bbbb-cccc",
    "aliases": ["CVE-2026-0001", "PYSEC-2026-1"],
    "summary": "remote code execution in the server",
    "fixed_in": ["2.0.1"],
    "withdrawn": None,
}
PROJECTS = {
    # newest release installed, one vulnerability listed under two of its ids, one withdrawn advisory
    "vulnpkg": {
        "info": {"version": "2.0.0"},
        "vulnerabilities": [
            ADVISORY,
            {**ADVISORY, "id": "PYSEC-2026-1", "aliases": ["CVE-2026-0001", "GHSA-aaaa-bbbb-cccc"]},
            {"id": "GHSA-zzzz", "aliases": [], "summary": "retracted", "withdrawn": "2026-05-01T00:00:00"},
        ],
    },
    "clean-pkg": {"info": {"version": "1.4"}, "vulnerabilities": []},
    # an older release is installed: the page says nothing about it
    "oldpkg": {"info": {"version": "3.0.0"}, "vulnerabilities": []},
}


@pytest.fixture(scope="module")
def fake_pypi() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            parts = self.path.strip("/").split("/")  # pypi/<name>/json
            page = PROJECTS.get(parts[1]) if len(parts) == 3 and parts[0] == "pypi" and parts[2] == "json" else None
            body = json.dumps(page or {"message": "Not Found"}).encode()
            self.send_response(200 if page else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/pypi"
    finally:
        server.shutdown()
        server.server_close()


def run_audit(tmp_path: Path, index: str, lock: str) -> tuple[str, dict]:
    (tmp_path / "lock.txt").write_text(lock)
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "lock.txt"), "--index", index, "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=60, check=True,
    )
    return out.stdout, json.loads((tmp_path / "r.json").read_text())


def test_findings_are_counted_once_per_vulnerability(tmp_path: Path, fake_pypi: str) -> None:
    stdout, report = run_audit(tmp_path, fake_pypi, "VulnPkg==2.0.0\nclean_pkg==1.4.0\n")
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("audit: FINDINGS — 1 known vulnerabilities in 1 packages"), stdout
    assert "CVE-2026-0001 / GHSA-aaaa-bbbb-cccc / PYSEC-2026-1 — fixed in 2.0.1" in stdout
    assert "retracted" not in stdout  # withdrawn advisories are not findings
    assert {p["name"]: p["status"] for p in report["packages"]} == {"VulnPkg": "audited", "clean_pkg": "audited"}


def test_older_and_unknown_packages_are_listed_as_not_audited(tmp_path: Path, fake_pypi: str) -> None:
    stdout, _ = run_audit(tmp_path, fake_pypi, "# pinned\nclean-pkg==1.4\noldpkg==2.9.1\nnot-on-pypi==0.1\n")
    assert "oldpkg 2.9.1 (newest 3.0.0)" in stdout
    assert "lookup failed: not-on-pypi" in stdout
    assert stdout.strip().splitlines()[-1].startswith("audit: PARTIAL — no known vulnerabilities in 1 of 3 packages")


def test_nothing_reachable_is_not_run_never_ok(tmp_path: Path) -> None:
    stdout, _ = run_audit(tmp_path, "http://127.0.0.1:9/pypi", "clean-pkg==1.4\n")  # port 9: nothing listens
    assert stdout.strip().splitlines()[-1].startswith("audit: NOT RUN")
