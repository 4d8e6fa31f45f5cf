"""GPUs added from section 1 of the December 2026 catalog audit, each checked against the figure its source gives.

Sources (keys in knowledge/data/sources/reference.toml):

* Tesla P40 — NVIDIA datasheet figures (S-NV-P40-DS): 24 GB GDDR5, 346-347 GB/s (TechPowerUp 347.1), FP32 11.76,
  INT8 47 TOPS, 250 W, CC 6.1; FP16 at 1/64 of FP32 (no usable FP16). Used at about $150 (S-PRICE-GPUDOJO-P40-2026).
* Tesla P100 PCIe 16GB — NVIDIA datasheet (S-NV-P100-DS): 16 GB HBM2, 732 GB/s, FP64 4.7, FP32 9.3, FP16 18.7,
  250 W, CC 6.0. Used at about $60 (S-PRICE-GPUDOJO-P100-2026, low confidence: another table says $170).
* GeForce RTX 5060 — 30 SMs, 8 GB GDDR7, 448 GB/s, 145 W, PCIe 5.0 x8, 614 AI TOPS (FP4 sparse), $299
  (S-ZHIKUAI-RTX5060, S-RTX5060-LAUNCH).
* Radeon RX 9070 XT — gfx1201, 64 CUs at 2,970 MHz, 16 GB GDDR6, 304 W, FP32 48.7, INT8 779 TOPS with sparsity,
  $599 (S-PUREPC-RX9070, S-MULTIPLAYER-RX9070).
* RTX 4090 / 4090 D 48 GB — modded China grey-market boards: ¥24,599 / ¥21,999 (S-PRICE-WOTER-2025).
* RTX PRO 5000 Blackwell 72GB — 1,344 GB/s, 300 W, FP32 65, 2,064 AI TOPS (S-PEPELAC-PRO5000-72).
* RTX PRO 4000 Blackwell SFF — 24 GB, 432 GB/s, 70 W, 766.69 AI TOPS (S-HMCTECH-PRO4000SFF).
* RTX PRO 2000 Blackwell — 16 GB, 288 GB/s, 70 W, PCIe 5.0 x8, 4,352 cores at 1,950 MHz (S-CPUTRONIC-PRO2000).

Left out: RTX PRO 6000D (no throughput figure exists), Ascend 950PR / 950DT (no power figure; the shipped Atlas 350
differs from the keynote chip), Arc Pro B60 Dual (two GPUs on one board: one catalog entry would overstate the memory
one GPU sees).
"""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from knowledge import load_catalog
from knowledge.catalog_text import gpu_notes, gpu_price_note
from knowledge.markets import availability, load_markets

CAT = load_catalog()
NEW = ("tesla-p40", "tesla-p100-16gb", "rtx-5060", "rx-9070-xt", "rtx-4090-48gb", "rtx-4090d-48gb",
       "rtx-pro-5000-blackwell-72gb", "rtx-pro-4000-blackwell-sff", "rtx-pro-2000-blackwell")


def _sources() -> dict[str, dict]:
    path = resources.files("knowledge.data").joinpath("sources", "reference.toml")
    return tomllib.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("gpu_id", NEW)
def test_every_new_entry_cites_known_sources_and_has_notes_in_both_languages(gpu_id: str) -> None:
    g = CAT.gpu(gpu_id)
    keys = _sources()
    cited = [*g.sources, *(g.price.sources if g.price else [])]
    assert cited and all(k in keys for k in cited), gpu_id
    assert str(g.as_of) == "2026-12-04"
    assert gpu_notes(gpu_id, "en") and gpu_notes(gpu_id, "zh") != gpu_notes(gpu_id, "en")
    if g.price:
        assert gpu_price_note(gpu_id, "en") and gpu_price_note(gpu_id, "zh")


def test_p40_has_24gb_at_347_and_no_fp16() -> None:
    p40 = CAT.gpu("Tesla P40")
    # S-NV-P40-DS: 24 GB GDDR5, 347.1 GB/s (TechPowerUp; NVIDIA rounds to 346, Epoch's 694.3 is wrong), 250 W
    assert (p40.memory_gb, p40.memory_type, p40.bandwidth_gbs, p40.tdp_w) == (24, "GDDR5", 347, 250)
    # FP16 runs at 1:64 of FP32 (TechPowerUp/Epoch: 183.7 GFLOPS): no usable FP16; BF16/TF32/FP8/FP4 absent
    assert p40.throughput.fp16 == pytest.approx(11.76 / 64, rel=0.03) and p40.throughput.fp16 < 0.2
    assert p40.throughput.bf16 is None and p40.sparse_throughput is None
    assert all(p40.supports(p) is False for p in ("bf16", "tf32", "fp8", "fp4"))
    # S-NV-P40-DS: FP32 11.76 TFLOPS, INT8 47 TOPS (DP4A); CC 6.1 (Pascal GP102)
    assert (p40.throughput.fp32, p40.throughput.int8, p40.compute_capability) == (11.76, 47, "6.1")


def test_p100_has_hbm2_at_732_and_fp16_at_twice_fp32() -> None:
    p100 = CAT.gpu("P100")
    # S-NV-P100-DS (PCIe 16 GB column): 732 GB/s HBM2, FP64 4.7, FP32 9.3, FP16 18.7, 250 W; CC 6.0
    assert (p100.memory_gb, p100.memory_type, p100.bandwidth_gbs, p100.tdp_w) == (16, "HBM2", 732, 250)
    assert (p100.throughput.fp64, p100.throughput.fp32, p100.throughput.fp16) == (4.7, 9.3, 18.7)
    assert p100.compute_capability == "6.0" and p100.supports("bf16") is False
    assert p100.throughput.int8 is None  # GP100 has no DP4A: unknown, not invented


def test_pascal_used_prices_follow_the_audit() -> None:
    # S-PRICE-GPUDOJO-P40-2026: ~$150 used; S-PRICE-GPUDOJO-P100-2026: ~$60 used (conflicting $170 elsewhere: L)
    p40, p100 = CAT.gpu("tesla-p40").price, CAT.gpu("tesla-p100-16gb").price
    assert p40 is not None and (p40.usd, p40.kind, p40.confidence) == (150, "used", "M")
    assert p100 is not None and (p100.usd, p100.kind, p100.confidence) == (60, "used", "L")


def test_rtx_5060_dense_is_half_of_614_ai_tops() -> None:
    g = CAT.gpu("RTX 5060")
    # S-ZHIKUAI-RTX5060: 30 SMs, 8 GB GDDR7 on 128-bit at 28 Gbps = 448 GB/s, 145 W; PCIe 5.0 x8
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w, g.pcie_gen, g.pcie_lanes) == (8, 448, 145, 5, 8)
    # S-RTX5060-LAUNCH: 614 AI TOPS, FP4 with 2:4 sparsity -> 307 dense
    assert g.sparse_throughput is not None and g.sparse_throughput.fp4 == 614
    assert g.throughput.fp4 == pytest.approx(614 / 2)
    assert g.throughput.fp4 == pytest.approx(30 * 2.497 * 4096 / 1000, rel=0.01)  # SMs x boost x FP4/clk/SM
    assert g.price is not None and (g.price.usd, g.price.kind) == (299, "list")
    # the bare '5060 Ti' still means the 16 GB card, '5060' this one
    assert CAT.gpu("5060").id == "rtx-5060" and CAT.gpu("5060 Ti").id == "rtx-5060-ti-16gb"


def test_rx_9070_xt_is_gfx1201_with_rdna4_rates() -> None:
    g = CAT.gpu("RX 9070 XT")
    assert g.isa_target == "gfx1201" and g.isa_target == CAT.gpu("R9700").isa_target
    # S-PUREPC-RX9070: FP32 48.7 TFLOPS; INT8 779 TOPS with sparsity -> 389.5 dense; 16 GB; 304 W
    assert (g.memory_gb, g.tdp_w, g.throughput.fp32) == (16, 304, 48.7)
    assert g.throughput.int8 == pytest.approx(779 / 2)
    assert g.throughput.bf16 == pytest.approx(64 * 2.97 * 1024 / 1000, rel=0.01)  # CU x boost x FP16 WMMA/clk
    assert g.supports("fp4") is False and g.throughput.fp64 is None  # FP64 not published
    assert g.price is not None and (g.price.usd, g.price.kind) == (599, "list")


@pytest.mark.parametrize(("name", "base", "cny"),
                         [("4090 48G", "rtx-4090", 24_599), ("4090D 48G", "rtx-4090d", 21_999)])
def test_48gb_4090s_are_china_market_mods_of_their_base_card(name: str, base: str, cny: float) -> None:
    g, b = CAT.gpu(name), CAT.gpu(base)
    assert g.id != b.id and g.memory_gb == 48 == 2 * b.memory_gb
    assert (g.throughput, g.bandwidth_gbs, g.tdp_w) == (b.throughput, b.bandwidth_gbs, b.tdp_w)
    assert g.china_market and not g.domestic
    assert availability(g.id, "cn").status == "restricted"  # offered with the grey-market caveat
    assert availability(g.id, "cn").rule.id == "cn-modded"  # type: ignore[union-attr]
    where = availability(g.id, "global")
    assert where.status == "unavailable" and where.rule is not None and where.rule.id == "cn-modded"
    # S-PRICE-WOTER-2025: ¥24,599 (4090 48G) / ¥21,999 (4090D 48G)
    assert g.price is not None and (g.price.cny, g.price.kind) == (cny, "street")
    assert "warranty" in gpu_notes(g.id, "en") and "保修" in gpu_notes(g.id, "zh")


def test_the_bare_4090_names_keep_the_24gb_cards() -> None:
    assert CAT.gpu("4090").id == "rtx-4090" and CAT.gpu("4090D").id == "rtx-4090d"


def test_rtx_pro_5000_72gb_is_the_48gb_card_with_more_memory() -> None:
    g, small = CAT.gpu("RTX PRO 5000 72GB"), CAT.gpu("RTX PRO 5000")
    assert small.id == "rtx-pro-5000-blackwell" and g.id == "rtx-pro-5000-blackwell-72gb"
    # S-PEPELAC-PRO5000-72: 1,344 GB/s, 300 W, FP32 65 TFLOPS, 2,064 AI TOPS (FP4 sparse)
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w, g.throughput.fp32) == (72, small.bandwidth_gbs, 300, 65)
    assert g.sparse_throughput is not None and g.sparse_throughput.fp4 == 2064
    assert g.throughput.fp4 == pytest.approx(2064 / 2)
    assert availability(g.id, "cn").status == "available"  # TPP 1,032 x 4 = 4,128 < 4,800


def test_rtx_pro_4000_sff_is_not_the_140w_card() -> None:
    g, full = CAT.gpu("RTX PRO 4000 SFF"), CAT.gpu("RTX PRO 4000")
    assert full.id == "rtx-pro-4000-blackwell" and g.id == "rtx-pro-4000-blackwell-sff"
    # S-HMCTECH-PRO4000SFF: 24 GB, 432 GB/s (18 Gbps x 192-bit), 70 W, 766.69 AI TOPS FP4 sparse
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w) == (24, 432, 70) and 192 * 18 / 8 == 432
    assert g.throughput.fp4 == pytest.approx(766.69 / 2, rel=2e-3)
    assert g.power_connectors == []  # slot-powered


def test_rtx_pro_2000_is_a_slot_powered_x8_card() -> None:
    g = CAT.gpu("RTX PRO 2000")
    # S-CPUTRONIC-PRO2000: 16 GB GDDR7, 288 GB/s, PCIe 5.0 x8; 4,352 cores = 34 SMs at 1,950 MHz; 70 W
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w, g.pcie_lanes, g.power_connectors) == (16, 288, 70, 8, [])
    assert g.throughput.fp4 == pytest.approx(4352 / 128 * 1.95 * 4096 / 1000, rel=0.01)
    assert g.sparse_throughput is None  # no AI TOPS figure found: none invented


def test_no_rack_systems_or_unverified_cards_were_added() -> None:
    ids = {g.id for g in CAT.gpus}
    assert not {i for i in ids if i.startswith(("gb200", "gb300", "vr200", "rubin", "helios", "mi455"))}
    assert not {g.id for g in CAT.gpus if "b60-dual" in g.id or "950" in g.id or "6000d" in g.id}
    listed = {gpu for entry in load_markets().entries for gpu in entry.gpus}
    assert {"rtx-4090-48gb", "rtx-4090d-48gb"} <= listed
