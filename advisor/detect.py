"""The GPUs in this machine, for "what can I run here?": asked of ``nvidia-smi`` (or AMD's ``rocm-smi``, or
Linux's sysfs), matched to the catalog.

``detect_gpus()`` runs ``nvidia-smi --query-gpu=index,name,memory.total`` — or, without it,
``rocm-smi --showproductname --showmeminfo vram --json`` — (a few seconds at most) and returns each card
with its memory as the driver reports it and the catalog entry it matches (by the model number in its
name and a memory size within 10 %). A card the catalog does not know is kept with its memory, which is all
a fit check needs. No tool (or one that fails) is a message, never an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowledge import AmbiguousNameError, UnknownNameError, load_catalog

MiB = 2**20
QUERY = ["nvidia-smi", "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits"]
ROCM_QUERY = ["rocm-smi", "--showproductname", "--showmeminfo", "vram", "--json"]
_ROCM_NAME_KEYS = ("card series", "marketing name", "card model", "card sku")
TIMEOUT_S = 10.0
MAX_OUTPUT_BYTES = 1_000_000  # 64 GPUs' rows are ~5 kB (rocm-smi's JSON ~50 kB); more is not a GPU list
_MODEL_NUMBER = re.compile(r"(?<![A-Za-z0-9])([A-Z]{0,3}\d{2,4}[A-Z]?)(?![A-Za-z0-9])", re.I)
_FORMS = ("sxm", "pcie", "nvl", "hgx")
SYSFS_ENV = "GPU_ADVISOR_SYSFS_DRM"  # where sysfs's drm class is, when not /sys/class/drm (tests, containers)
_PCI_VENDORS = {"0x1002": "AMD", "0x10de": "NVIDIA", "0x8086": "Intel"}
MIN_SYSFS_VRAM = 2 * 2**30  # less is an integrated GPU's carve-out, not a card to run models on


@dataclass(frozen=True)
class DetectedGPU:
    index: int
    name: str  # as the driver reports it
    memory_bytes: int
    catalog_id: str | None  # the matching catalog entry, if any


@dataclass(frozen=True)
class Detection:
    gpus: list[DetectedGPU]
    problem: str | None = None  # why nothing was found, as a message id under cli.detect.*
    detail: str = ""


@dataclass(frozen=True)
class ToolOutput:
    returncode: int
    stdout: str
    stderr: str


def run_bounded(cmd: list[str], timeout: float = TIMEOUT_S, limit: int = MAX_OUTPUT_BYTES) -> ToolOutput:
    """``cmd``'s exit status and output, each stream read up to ``limit`` bytes and decoded with undecodable bytes
    replaced. A tool still writing past the bound is stopped, and what it wrote up to its last whole line within
    the bound is kept (as output of a tool that succeeded); subprocess.TimeoutExpired past ``timeout``."""
    with subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        got: dict[int, bytes] = {}
        readers = [threading.Thread(target=_read_into, args=(stream, limit + 1, got, n), daemon=True)
                   for n, stream in enumerate((proc.stdout, proc.stderr))]
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + timeout
        readers[0].join(timeout)
        over = len(got.get(0, b"")) > limit
        if over:  # enough read: the tool is stopped rather than waited for
            proc.kill()
        readers[1].join(max(deadline - time.monotonic(), 0.0))
        try:
            if any(reader.is_alive() for reader in readers):
                raise subprocess.TimeoutExpired(cmd, timeout)
            code = proc.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    out, err = (_text(got.get(n, b""), limit) for n in (0, 1))
    return ToolOutput(0 if over else code, out, err)


def _read_into(stream: Any, n: int, got: dict[int, bytes], key: int) -> None:
    with contextlib.suppress(OSError, ValueError):
        got[key] = stream.read(n)


def _text(raw: bytes, limit: int) -> str:
    """``raw`` as text (bad bytes replaced); past ``limit``, only its whole lines within it."""
    if len(raw) > limit:
        raw = raw[:raw.rfind(b"\n", 0, limit) + 1]
    return raw.decode("utf-8", errors="replace")


def detect_gpus(run: Callable[[list[str]], ToolOutput] = run_bounded,
                which: Callable[[str], str | None] = shutil.which, sysfs: Path | None = None) -> Detection:
    """The GPUs ``nvidia-smi`` lists, else those ``rocm-smi`` lists, else the cards Linux's sysfs shows with their
    memory (``run``/``which``/``sysfs`` replaceable for tests)."""
    for tool, query, parse in (("nvidia-smi", QUERY, parse_query), ("rocm-smi", ROCM_QUERY, parse_rocm)):
        if which(tool) is None:
            continue
        try:
            done = run(query)
        except (OSError, subprocess.SubprocessError) as exc:
            return Detection([], "tool_failed", f"{tool}: {type(exc).__name__}")
        if done.returncode != 0:
            return Detection([], "tool_failed", f"{tool}: " + (done.stderr or done.stdout or "").strip()[:200])
        rows = [(i, name, n * MiB) for i, name, n in parse(done.stdout)] if tool == "nvidia-smi" else parse(
            done.stdout)
        gpus = [DetectedGPU(i, name, size, match_catalog(name, size)) for i, name, size in rows]
        return Detection(gpus, None if gpus else "none_listed")
    rows = read_sysfs(sysfs or Path(os.environ.get(SYSFS_ENV) or "/sys/class/drm"))
    if rows:
        return Detection([DetectedGPU(i, name, size, match_catalog(name, size)) for i, name, size in rows])
    return Detection([], "no_tool")


def read_sysfs(root: Path) -> list[tuple[int, str, int]]:
    """Cards under ``/sys/class/drm/cardN/device`` whose driver reports its memory (amdgpu's
    ``mem_info_vram_total``, bytes), named by ``product_name`` when the driver gives one, else by vendor and PCI
    device id. NVIDIA's driver reports no memory there: those cards need nvidia-smi."""
    rows = []
    try:
        cards = sorted(p for p in root.iterdir() if re.fullmatch(r"card\d+", p.name))
    except OSError:
        return []
    for card in cards[:64]:
        device = card / "device"
        vendor = _read(device / "vendor").lower()
        size = _read(device / "mem_info_vram_total")
        if vendor not in _PCI_VENDORS or not size.isdigit() or not MIN_SYSFS_VRAM <= int(size) <= 16 * 2**40:
            continue
        name = _read(device / "product_name") or f"{_PCI_VENDORS[vendor]} GPU (PCI device {_read(device / 'device')})"
        rows.append((int(card.name[4:]), name[:100], int(size)))
    return rows


def _read(path: Path) -> str:
    """A short sysfs attribute, stripped; empty when absent or unreadable."""
    try:
        with path.open("rb") as fh:
            return fh.read(200).decode("ascii", errors="replace").strip()
    except OSError:
        return ""


def parse_query(text: str) -> list[tuple[int, str, int]]:
    """Rows of ``index, name, memory.total`` (MiB) from nvidia-smi's CSV; rows it cannot read are skipped."""
    rows = []
    for line in str(text).splitlines()[:64]:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0].isdigit() or not parts[2].isdigit():
            continue
        mib = int(parts[2])
        if 0 < mib <= 16 * 2**20:  # up to 16 TiB: anything above is not a GPU's memory
            rows.append((int(parts[0]), parts[1][:100], mib))
    return rows


def parse_rocm(text: str) -> list[tuple[int, str, int]]:
    """Rows of (index, name, memory bytes) from ``rocm-smi --json`` ({"card0": {"Card Series": …,
    "VRAM Total Memory (B)": "…"}}); cards it cannot read are skipped."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return []
    rows = []
    for card, info in (data.items() if isinstance(data, dict) else []):
        found = re.fullmatch(r"card(\d+)", str(card))
        if not found or not isinstance(info, dict):
            continue
        fields = {str(k).strip().lower(): str(v).strip() for k, v in info.items()}
        name = next((fields[k] for k in _ROCM_NAME_KEYS if fields.get(k)), "")
        size = fields.get("vram total memory (b)", "")
        if name and size.isdigit() and 0 < int(size) <= 16 * 2**40:
            rows.append((int(found.group(1)), name[:100], int(size)))
    return rows[:64]


def match_catalog(name: str, memory_bytes: int) -> str | None:
    """The catalog GPU a driver-reported name stands for, or None: an exact name first, else the catalog
    entries with the same model number ('H100', '3080', 'L40S') and a memory size within 10 %, preferring
    the one whose form factor (SXM, PCIe, NVL) the name states."""
    cat = load_catalog()
    for candidate in (name, re.sub(r"^(NVIDIA|Tesla)\s+", "", name, flags=re.I)):
        try:
            gpu = cat.gpu(candidate)
        except (UnknownNameError, AmbiguousNameError):
            continue
        if _close(gpu.memory_bytes, memory_bytes):
            return str(gpu.id)
    numbers = {m.lower() for m in _MODEL_NUMBER.findall(name) if not m.isdigit() or len(m) >= 3}
    said = {f for f in _FORMS if f in name.lower()}
    best: tuple[int, str] | None = None
    for gpu in cat.gpus:
        label = f"{gpu.name} {gpu.id}".lower()
        if not numbers or not any(re.search(rf"(?<![a-z0-9]){re.escape(n)}(?![a-z0-9])", label) for n in numbers):
            continue
        if not _close(gpu.memory_bytes, memory_bytes):
            continue
        score = sum(f in label for f in said) - sum(f in label for f in _FORMS if f not in said)
        if best is None or score > best[0]:
            best = (score, str(gpu.id))
    return best[1] if best else None


def _close(catalog_bytes: int, reported_bytes: int) -> bool:
    """Drivers report a little less than the physical size (memory the driver keeps): within 10 %."""
    return reported_bytes > 0 and abs(catalog_bytes - reported_bytes) <= 0.1 * catalog_bytes
