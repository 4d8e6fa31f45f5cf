"""Decode speed against published llama.cpp measurements that no constant was fitted to (bench/accuracy.py).

Issue 22's targets: on held-out figures the median error is at most 10 % and the worst at most 30 %, for
every memory class (GDDR cards, HBM datacenter parts, unified memory) and for layer splits.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import accuracy as A  # bench/ is put on the path just above


@pytest.fixture(scope="module")
def rows() -> list[A.Row]:
    return A._decode_rows()


def _held_out(rows: list[A.Row], category: str | None = None) -> list[A.Row]:
    return [r for r in rows if r.note.startswith("held out") and "vLLM" not in r.category
            and (category is None or r.category == category)]


def test_held_out_llamacpp_decode_meets_the_targets(rows: list[A.Row]) -> None:
    errors = [abs(r.error) for r in _held_out(rows)]
    assert len(errors) >= 40
    assert statistics.median(errors) <= 0.10
    assert max(errors) <= 0.30


@pytest.mark.parametrize("category", ["decode, GDDR cards", "decode, HBM datacenter", "decode, unified memory",
                                      "decode, layer split"])
def test_every_memory_class_has_held_out_checks_within_30_percent(rows: list[A.Row], category: str) -> None:
    group = _held_out(rows, category)
    assert len(group) >= 5
    assert max(abs(r.error) for r in group) <= 0.30, [(r.what, f"{r.error:+.0%}") for r in group]


def test_the_stated_range_covers_nearly_every_held_out_figure(rows: list[A.Row]) -> None:
    group = _held_out(rows)
    inside = [r for r in group if r.band and r.band[0] <= r.published <= r.band[1]]
    assert len(inside) >= 0.95 * len(group)


def test_hbm_cards_are_no_longer_overestimated(rows: list[A.Row]) -> None:
    """Before the per-class fit an A100 F16 decode came out +59 % and an H100 PCIe Q4_K_M +23 %."""
    by_name = {r.what: r for r in rows}
    assert abs(by_name["decode Meta-Llama-3-8B F16 A100 SXM 80GB"].error) <= 0.20
    assert abs(by_name["decode Meta-Llama-3-8B Q4_K_M H100 PCIe 80GB"].error) <= 0.10


def test_a_pascal_card_decodes_at_its_fp32_rate_not_its_crippled_fp16(rows: list[A.Row]) -> None:
    """The P40's fp16 runs at 1/64 rate; llama.cpp multiplies in fp32 there instead."""
    p40 = next(r for r in rows if "P40" in r.what)
    assert abs(p40.error) <= 0.25


def test_each_gpu_takes_the_fit_of_its_memory_class() -> None:
    from knowledge import load_catalog
    from tools.efficiency import decode_fit, memory_class

    cat = load_catalog()
    assert [memory_class(cat.gpu(g)) for g in ("rtx-4090", "l40s", "h100-sxm", "mi300x", "dgx-spark")] == [
        "gddr", "gddr", "hbm", "hbm", "unified"]
    gddr, hbm = decode_fit("gddr"), decode_fit("hbm")
    assert hbm.eta_stream < gddr.eta_stream  # HBM parts reach a smaller share of their bandwidth in llama.cpp
    for kind in ("gddr", "hbm", "unified"):
        assert max(abs(r) for r in decode_fit(kind).residuals) < 0.08


# XiongjieDai/GPU-Benchmarks-on-LLM-Inference (llama.cpp, 2024-05), Apple rows not in the fit: other chips of the
# same table (the fit uses the M2 Ultra's). M1 Max Q4_K_M is a known miss (+45 %, +77 %: the M1's GPU is too
# slow to dequantize K-quants at its bandwidth), left out of the assertion and said in the notes.
_APPLE_HELD_OUT = (("M3 Max 40-core", 400, "llama-3-8b", "Q4_K_M", 50.74), ("M3 Max 40-core", 400, "llama-3-8b", "F16",
                   22.39), ("M3 Max 40-core", 400, "llama-3-70b", "Q4_K_M", 7.53),
                   ("M1 Max 32-core", 400, "llama-3-8b", "F16", 18.43))


def test_apple_silicon_decode_holds_on_chips_left_out_of_its_fit() -> None:
    from knowledge import load_catalog
    from tools.efficiency import DecodeCalibrationPoint, calibration_bytes, decode_fit, memory_class

    assert memory_class(load_catalog().gpu("mac-studio-m2-ultra-192gb")) == "apple"
    fit = decode_fit("apple")
    assert max(abs(r) for r in fit.residuals) < 0.08
    for chip, bandwidth, model, precision, measured in _APPLE_HELD_OUT:
        point = DecodeCalibrationPoint(gpu=chip, bandwidth_gbs=bandwidth, model=model, precision=precision,
                                       measured_tokens_per_s=measured, mean_context=512, source="held out")
        read, layers = calibration_bytes(point)
        assert abs(fit.tokens_per_s(read, bandwidth, layers) / measured - 1) <= 0.15, (chip, model, precision)
