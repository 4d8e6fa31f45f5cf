"""Suite-wide test environment: nothing is written outside a temporary data directory, no LLM, no telemetry."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Set before any test module imports our packages, so the default knowledge index (built once per
# session and shared by the tests that use it) lives in a throw-away folder, not the user's data dir.
_DATA_DIR = tempfile.mkdtemp(prefix="gpu-advisor-tests-")
os.environ["GPU_ADVISOR_DATA"] = _DATA_DIR
os.environ["ADVISOR_LLM"] = "none"
os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["ANONYMIZED_TELEMETRY"] = "False"
for _var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ADVISOR_OPENAI_MODEL", "ADVISOR_LLAMA_MODEL",
             "GPU_ADVISOR_CHROMA_URL"):
    os.environ.pop(_var, None)


def pytest_sessionfinish(session: object, exitstatus: int) -> None:
    shutil.rmtree(_DATA_DIR, ignore_errors=True)


@pytest.fixture
def gpu_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A GPU file named by GPU_ADVISOR_GPUS (the test writes it), with the catalog reloaded around the test."""
    from knowledge import load_catalog

    path = tmp_path / "gpus.toml"
    monkeypatch.setenv("GPU_ADVISOR_GPUS", str(path))
    load_catalog.cache_clear()
    yield path
    monkeypatch.delenv("GPU_ADVISOR_GPUS")
    load_catalog.cache_clear()
