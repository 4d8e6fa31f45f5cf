"""`gpu-advisor detect`: the machine's GPUs from nvidia-smi (a fake one on PATH here), matched to the catalog,
and what fits on them; a clear line when there is no nvidia-smi or it fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.detect import match_catalog, parse_query

ROOT = Path(__file__).resolve().parents[1]
MiB = 2**20


def _fake_smi(folder: Path, body: str, tool_name: str = "nvidia-smi") -> dict[str, str]:
    """An executable ``nvidia-smi`` (or ``tool_name``) in ``folder`` running ``body`` (sh); the env that puts it
    first on PATH."""
    tool = folder / tool_name
    tool.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    tool.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}:/usr/bin:/bin", "PYTHONPATH": str(ROOT)}


def _detect(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "advisor.cli", "detect", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


def test_a_machine_with_a_4090_and_a_2060_12gb(tmp_path: Path) -> None:
    env = _fake_smi(tmp_path, "printf '0, NVIDIA GeForce RTX 4090, 24564\\n1, NVIDIA GeForce RTX 2060, 12288\\n'")
    done = _detect(env, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [(g["index"], g["catalog_id"], g["memory_bytes"]) for g in out["gpus"]] == [
        (0, "rtx-4090", 24564 * MiB), (1, "rtx-2060-12gb", 12288 * MiB)]  # matched by name and memory (12 GB)
    by_gpu = {p["catalog_id"] or p["name"]: {(r["model"], r["precision"]): r for r in p["fits"]}
              for p in out["plans"]}
    # Llama-3.1-8B at 16 bits is 8.03e9 parameters × 2 bytes = 16.06 GB of weights: it fits the 4090's ~23 GB
    # vLLM uses, never the 2060's 12 GiB; at 4 bits (~5 GB of weights) it fits both
    assert by_gpu["rtx-4090"][("llama-3.1-8b", "bf16")]["fits"] is True
    small = by_gpu["rtx-2060-12gb"]
    assert small[("llama-3.1-8b", "bf16")]["fits"] is False
    assert small[("llama-3.1-8b", "bf16")]["per_gpu_bytes"] > 8.03e9 * 2 > small[("llama-3.1-8b", "bf16")][
        "usable_bytes"]
    assert small[("llama-3.1-8b", "int4")]["fits"] is True
    assert small[("llama-3.1-8b", "int4")]["usable_bytes"] < 12288 * MiB  # vLLM keeps 8 % back
    text = _detect(env, "--lang", "zh").stdout
    assert "本机有 2 张 GPU" in text and "✅" in text and "❌" in text


def test_a_card_the_catalog_lacks_is_sized_by_its_memory(tmp_path: Path) -> None:
    env = _fake_smi(tmp_path, "printf '0, NVIDIA GeForce RTX 3050, 8192\\n'")
    done = _detect(env, "--json")
    assert done.returncode == 0, done.stderr
    assert [(g["catalog_id"], g["memory_bytes"]) for g in json.loads(done.stdout)["gpus"]] == [(None, 8192 * MiB)]
    assert "不在型号库中：按它的显存估算" in _detect(env, "--lang", "zh").stdout


@pytest.mark.parametrize(("body", "said"), [
    (None, "nvidia-smi 和 rocm-smi 都未安装"),
    ("echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\" >&2; exit 9",
     "couldn't communicate with the NVIDIA driver"),
    ("exit 0", "没有列出任何 GPU"),
])
def test_no_gpu_is_one_clear_line(tmp_path: Path, body: str | None, said: str) -> None:
    env = _fake_smi(tmp_path, body) if body else {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env["GPU_ADVISOR_SYSFS_DRM"] = str(tmp_path / "no-drm")  # this test machine's own cards stay out of it
    done = subprocess.run([sys.executable, "-m", "advisor.cli", "detect", "--lang", "zh"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 1 and said in done.stdout and "Traceback" not in done.stderr
    assert len(done.stdout.strip().splitlines()) == 1


@pytest.mark.parametrize(("name", "mib", "gpu"), [  # names as nvidia-smi prints them
    ("NVIDIA H100 80GB HBM3", 81559, "h100-sxm"), ("NVIDIA H100 PCIe", 81559, "h100-pcie"),
    ("NVIDIA H100 NVL", 95830, "h100-nvl"), ("NVIDIA A100-SXM4-80GB", 81920, "a100-sxm-80gb"),
    ("NVIDIA A100-PCIE-40GB", 40960, "a100-pcie-40gb"), ("Tesla V100-SXM2-32GB", 32768, "v100-sxm2-32gb"),
    ("NVIDIA L40S", 46068, "l40s"), ("NVIDIA RTX A6000", 49140, "rtx-a6000"),
    ("NVIDIA GeForce RTX 4060 Ti", 16380, "rtx-4060-ti-16gb"), ("NVIDIA GeForce RTX 3050", 8192, None),
    # one driver name, two cards: the memory tells the 10 GB and 12 GB RTX 3080 (and the 12 GB and 8 GB 3060) apart
    ("NVIDIA GeForce RTX 3080", 10240, "rtx-3080-10gb"), ("NVIDIA GeForce RTX 3080", 12288, "rtx-3080-12gb"),
    ("NVIDIA GeForce RTX 3060", 8192, "rtx-3060-8gb"),
    ("NVIDIA GeForce RTX 4090", 8192, None),  # the memory does not match the name: not trusted
])
def test_driver_names_match_the_catalog(name: str, mib: int, gpu: str | None) -> None:
    assert match_catalog(name, mib * MiB) == gpu


def test_lines_nvidia_smi_may_print_that_are_not_gpus_are_skipped() -> None:
    text = "0, NVIDIA L4, 23034\n1, NVIDIA L4, [N/A]\nNo devices were found\n2, x, 99999999999999\n"
    assert parse_query(text) == [(0, "NVIDIA L4", 23034)]


ROCM_JSON = ('{"card0": {"Card Series": "AMD Instinct MI300X", "Card Vendor": "Advanced Micro Devices, Inc.", '
             '"VRAM Total Memory (B)": "206158430208", "VRAM Total Used Memory (B)": "295088128"}, '
             '"card1": {"Card series": "Radeon RX 6800", "VRAM Total Memory (B)": "17163091968"}, '
             '"system": {"Driver version": "6.8.5"}}')


def test_an_amd_machine_through_rocm_smi(tmp_path: Path) -> None:
    env = _fake_smi(tmp_path, f"echo '{ROCM_JSON}'", "rocm-smi")  # no nvidia-smi on this PATH
    done = _detect(env, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [(g["index"], g["name"], g["catalog_id"]) for g in out["gpus"]] == [
        (0, "AMD Instinct MI300X", "mi300x"), (1, "Radeon RX 6800", "rx-6800")]
    mi300x = {(r["model"], r["precision"]): r for r in out["plans"][0]["fits"]}
    # 70B at 16 bits is 70.6e9 × 2 B = 141 GB of weights: it fits the MI300X's 192 GB
    assert mi300x[("llama-3.1-70b", "bf16")]["fits"] is True


def _sysfs_card(root: Path, n: int, vendor: str, vram: int | None, product: str | None = None,
                device: str = "0x744c") -> None:
    folder = root / f"card{n}" / "device"
    folder.mkdir(parents=True)
    (folder / "vendor").write_text(vendor + "\n")
    (folder / "device").write_text(device + "\n")
    if vram is not None:
        (folder / "mem_info_vram_total").write_text(f"{vram}\n")
    if product:
        (folder / "product_name").write_text(product + "\n")
    (root / f"card{n}-DP-1").mkdir()  # connectors sit beside the cards and are not cards


def test_without_smi_tools_sysfs_still_finds_an_amd_card(tmp_path: Path) -> None:
    drm = tmp_path / "drm"
    _sysfs_card(drm, 0, "0x1002", 24 * 2**30)  # an RX 7900 XTX (24 GiB), no product name from its driver
    _sysfs_card(drm, 1, "0x1002", 512 * MiB, device="0x15bf")  # an APU's carve-out: not a card to run models on
    _sysfs_card(drm, 2, "0x10de", None, device="0x2684")  # NVIDIA's driver reports no memory here
    env = {**os.environ, "PATH": str(tmp_path / "bin"), "PYTHONPATH": str(ROOT), "GPU_ADVISOR_SYSFS_DRM": str(drm)}
    done = _detect(env, "--json")
    assert done.returncode == 0, done.stderr
    gpus = json.loads(done.stdout)["gpus"]
    assert [(g["index"], g["name"], g["memory_bytes"]) for g in gpus] == [
        (0, "AMD GPU (PCI device 0x744c)", 24 * 2**30)]
    plan = json.loads(done.stdout)["plans"][0]
    assert {(r["model"], r["precision"]): r["fits"] for r in plan["fits"]}[("llama-3.1-8b", "bf16")] is True


def test_a_sysfs_product_name_is_matched_to_the_catalog(tmp_path: Path) -> None:
    from advisor.detect import detect_gpus

    drm = tmp_path / "drm"
    _sysfs_card(drm, 0, "0x1002", 192 * 2**30, "AMD Instinct MI300X")
    found = detect_gpus(which=lambda _: None, sysfs=drm)
    assert [(g.name, g.catalog_id) for g in found.gpus] == [("AMD Instinct MI300X", "mi300x")]
