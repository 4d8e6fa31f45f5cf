"""Prices and variants added from the December 2026 catalog audit, each checked against the figure its source gives.

Prices (``price`` of a GPU entry; the source keys live in knowledge/data/sources/reference.toml):

* MI250X — about $14,500, a launch-era estimate (The Next Platform, 2021-12-06; Epoch's release price).
* MI210 — JPY 2,087,800 in Japanese retail at launch, about $16,486 (WCCFTech / TweakTown, 2022-03).
* V100 SXM2 32GB — $200-450 each on the used market in early 2026 (a user-written V100 homelab guide).
* RTX PRO 6000 Blackwell Server Edition — $13,399.99 at Newegg, read on 2026-06-23.
* RTX PRO 5000 Blackwell 48GB — $6,298 at Amazon (2026-08) and $6,490 from a Newegg seller (2026-07-14).
* RTX PRO 4500 Blackwell — $3,445.99 and RTX PRO 4000 Blackwell — $2,211.80, Newegg, 2026-07-14.

Variants:

* Ascend 910B sub-models (CSET via Epoch's rows): 910B1 64 GB, 1.6 TB/s, FP16 400; 910B2 64 GB, 1.6 TB/s,
  FP16 376; 910B3 64 GB, 1.6 TB/s, FP16 313 (the existing ``ascend-910b``); 910B4 32 GB, 800 GB/s, FP16 280,
  FP32 72.
* H20 141GB: NVIDIA lists "HGX H20 141GB HBM3e 8-GPU"; NVIDIA publishes no bandwidth for it — 4.0 TB/s (a 2026
  spec compilation, same as the 96 GB card) and 4.8 TB/s (a third-party table) are reported, the lower is kept.
"""

from __future__ import annotations

import datetime as dt
import tomllib
import typing
from importlib import resources

import pytest

from knowledge import load_catalog
from knowledge.markets import availability
from knowledge.schema import Price, PriceKind

CAT = load_catalog()
TODAY = dt.date(2026, 12, 31)


def _sources() -> dict[str, dict]:
    path = resources.files("knowledge.data").joinpath("sources", "reference.toml")
    return tomllib.loads(path.read_text(encoding="utf-8"))


SOURCES = _sources()


def _price(gpu_id: str) -> Price:
    price = CAT.gpu(gpu_id).price
    assert price is not None, gpu_id
    return price


# ---------------------------------------------------------------- every price says what it is


@pytest.mark.parametrize("gpu", [g for g in CAT.gpus if g.price is not None], ids=lambda g: g.id)
def test_every_price_has_a_kind_a_date_and_a_source(gpu) -> None:
    price = gpu.price
    assert price.kind in typing.get_args(PriceKind)
    assert dt.date(2017, 1, 1) <= price.as_of <= TODAY
    assert price.sources, f"{gpu.id}: a price without a source"
    for key in price.sources:
        if not key.startswith(("http://", "https://")):
            assert key in SOURCES, f"{gpu.id}: {key} not in reference.toml"
    if price.kind == "rental":  # a rate only: no purchase figure may hide behind it
        assert price.usd is None and price.cny is None and price.rental_usd_per_hour is not None, gpu.id
    else:
        assert price.usd is not None or price.cny is not None, gpu.id
    if price.cny_kind is not None:
        assert price.cny is not None and price.usd is not None, gpu.id


# ---------------------------------------------------------------- the new prices match their sources

# gpu id -> (usd figure printed in the source, kind, source key whose note carries that figure, as of)
NEW_PRICES = {
    "mi250x": (14_500, "list", "S-PRICE-NEXTPLATFORM-MI200", dt.date(2021, 12, 6)),
    "mi210": (16_486, "street", "S-PRICE-WCCF-MI210", dt.date(2022, 3, 31)),
    "rtx-pro-6000-blackwell-server": (13_399.99, "street", "S-PRICE-NEWEGG-PRO6000SE-2026", dt.date(2026, 6, 23)),
    "rtx-pro-5000-blackwell": (6_298, "street", "S-PRICE-AMAZON-PRO5000-2026", dt.date(2026, 8, 1)),
    "rtx-pro-4500-blackwell": (3_445.99, "street", "S-PRICE-NEWEGG-PRO4500-2026", dt.date(2026, 7, 14)),
    "rtx-pro-4000-blackwell": (2_211.80, "street", "S-PRICE-NEWEGG-PRO4000-2026", dt.date(2026, 7, 14)),
}


@pytest.mark.parametrize("gpu_id", sorted(NEW_PRICES))
def test_new_prices_are_the_figures_their_sources_print(gpu_id: str) -> None:
    usd, kind, key, as_of = NEW_PRICES[gpu_id]
    price = _price(gpu_id)
    assert price.usd == pytest.approx(usd, rel=0.01)  # the catalog rounds to whole dollars
    assert (price.kind, price.as_of) == (kind, as_of)
    assert key in price.sources
    assert f"{usd:,.2f}".removesuffix(".00") in SOURCES[key]["note"]  # the source record carries the figure


def test_mi210_yen_listing_converts_to_the_recorded_dollars() -> None:
    # S-PRICE-WCCF-MI210: JPY 2,087,800 ≈ $16,486 in March 2022 (about 126.6 yen per dollar)
    assert "2,087,800" in SOURCES["S-PRICE-WCCF-MI210"]["note"]
    assert 2_087_800 / _price("mi210").usd == pytest.approx(126.6, rel=0.01)


def test_rtx_pro_5000_street_price_lies_between_its_two_listings() -> None:
    # S-PRICE-AMAZON-PRO5000-2026 $6,298 (2026-08); S-PRICE-NEWEGG-PRO5000-2026 $6,490 (2026-07-14)
    assert 6_298 <= _price("rtx-pro-5000-blackwell").usd <= 6_490
    assert "6,490" in SOURCES["S-PRICE-NEWEGG-PRO5000-2026"]["note"]


def test_used_v100_price_sits_in_the_reported_band_and_is_marked_used() -> None:
    # S-PRICE-V100-HOMELAB-2026: V100 SXM2 32GB about $200-450 each, early 2026 (user-generated, so confidence L)
    price = _price("v100-sxm2-32gb")
    assert 200 <= price.usd <= 450
    assert (price.kind, price.confidence) == ("used", "L")
    assert "$200-450" in SOURCES["S-PRICE-V100-HOMELAB-2026"]["note"]


def test_stale_launch_era_amd_prices_are_low_confidence() -> None:
    # both are 2021-22 launch figures for retired parts, not 2026 quotes
    assert _price("mi250x").confidence == _price("mi210").confidence == "L"


# ---------------------------------------------------------------- Ascend 910B sub-models

# id -> (memory GB, bandwidth GB/s, dense FP16 TFLOPS) from CSET via Epoch's 910B1 (v1) / 910B2 / 910B3 / 910B4 rows
ASCEND_910B = {
    "ascend-910b1": (64, 1600, 400),
    "ascend-910b2": (64, 1600, 376),
    "ascend-910b": (64, 1600, 313),
    "ascend-910b4": (32, 800, 280),
}


@pytest.mark.parametrize("gpu_id", sorted(ASCEND_910B))
def test_ascend_910b_sub_models_follow_cset(gpu_id: str) -> None:
    memory, bandwidth, fp16 = ASCEND_910B[gpu_id]
    g = CAT.gpu(gpu_id)
    assert (g.memory_gb, g.bandwidth_gbs, g.throughput.fp16) == (memory, bandwidth, fp16)
    assert g.throughput.bf16 == g.throughput.fp16  # the 910B convention; both are dense figures
    assert g.sparse_throughput is None
    assert g.supports("fp8") is False and g.supports("fp64") is False
    assert g.domestic and g.vendor == "Huawei"


def test_910b4_has_half_the_memory_and_bandwidth_and_its_own_fp32() -> None:
    # Epoch "Huawei Ascend 910B4" (CSET): 32 GB, 800 GB/s, FP16 280, FP32 72
    b4, b3 = CAT.gpu("910B4"), CAT.gpu("910B3")
    assert b4.id == "ascend-910b4" and b3.id == "ascend-910b"
    assert (b4.memory_gb, b4.bandwidth_gbs) == (b3.memory_gb / 2, b3.bandwidth_gbs / 2) == (32, 800)
    assert b4.throughput.fp32 == 72
    assert b4.memory_bytes == 32 * 2**30


@pytest.mark.parametrize(("name", "gpu_id"), [
    ("Ascend 910B", "ascend-910b"), ("昇腾910B", "ascend-910b"), ("910B3", "ascend-910b"),
    ("Atlas 800T A2", "ascend-910b"), ("910B1", "ascend-910b1"), ("昇腾 910B2", "ascend-910b2"),
    ("昇腾910B4", "ascend-910b4"), ("Ascend 910B4", "ascend-910b4"),
])
def test_910b_names_resolve_to_the_right_sub_model(name: str, gpu_id: str) -> None:
    assert CAT.gpu(name).id == gpu_id


@pytest.mark.parametrize("gpu_id", ["ascend-910b1", "ascend-910b2", "ascend-910b4"])
def test_new_domestic_entries_are_china_only(gpu_id: str) -> None:
    outside = availability(gpu_id, "global")
    assert outside.status == "unavailable" and outside.rule is not None and outside.rule.id == "cn-domestic"
    assert availability(gpu_id, "cn").status == "available"


# ---------------------------------------------------------------- H20 141GB


def test_h20_141gb_is_its_own_entry_with_hbm3e() -> None:
    # S-NV-SECURE-AI-MATRIX: "NVIDIA HGX H20 141GB HBM3e 8-GPU"; machines report 'NVIDIA H20-3e', 141 GiB
    g = CAT.gpu("H20 141GB")
    assert g.id == "h20-141gb" and CAT.gpu("H20-3e").id == "h20-141gb"
    assert (g.memory_gb, g.memory_type) == (141, "HBM3e")
    assert g.memory_bytes == 141 * 2**30
    assert CAT.gpu("H20").id == "h20" and CAT.gpu("H20").memory_gb == 96  # the bare name keeps the 96 GB card


def test_h20_141gb_bandwidth_is_the_conservative_of_the_reported_figures() -> None:
    # NVIDIA prints none; reported: 4.0 TB/s (2026 spec compilation, as the 96 GB card) and 4.8 TB/s
    # (S-LLMPROF-H20); the lower is kept so decode estimates are not optimistic
    g, h20 = CAT.gpu("h20-141gb"), CAT.gpu("h20")
    assert g.bandwidth_gbs == min(4_000, 4_800) == h20.bandwidth_gbs
    assert "4,800" in SOURCES["S-LLMPROF-H20"]["note"]


def test_h20_141gb_keeps_the_h20_dense_compute_and_no_sparse_figures() -> None:
    # same die and limits as the H20: dense BF16 148, FP8/INT8 296, FP32 44, FP64 1; 400 W; NVLink 900 GB/s
    g, h20 = CAT.gpu("h20-141gb"), CAT.gpu("h20")
    assert g.throughput == h20.throughput
    assert (g.throughput.bf16, g.throughput.fp8) == (148, 296)
    assert g.sparse_throughput is None and h20.sparse_throughput is None
    assert (g.tdp_w, g.interconnect.bandwidth_gbs) == (400, 900)


def test_h20_141gb_follows_the_h20_rule() -> None:
    """Licence since April 2025 and production stopped in August 2025: leftover stock, not offered new."""
    g = CAT.gpu("h20-141gb")
    assert g.china_market and not g.domestic
    in_china = availability("h20-141gb", "cn")
    assert in_china.status == "unavailable" and in_china.rule is not None and in_china.rule.id == "nv-h20-eol"
    outside = availability("h20-141gb", "global")
    assert outside.status == "unavailable" and outside.rule is not None and outside.rule.id == "cn-variant"
