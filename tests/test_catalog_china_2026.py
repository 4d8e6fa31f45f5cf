"""China-market and domestic entries from the second December 2026 audit (H2, M2, M6, M7, M8, L2), each figure
checked against the source named beside it (keys in knowledge/data/sources/reference.toml).

Added: the NVIDIA L2 (China-only L4-class card) and the Moore Threads MTT S5000. Not added, for want of a published
bandwidth or throughput: RTX PRO 6000D, MI308X, Kunlunxin P800, T-Head PPU, Enflame S60, MetaX C600, Hygon BW1000;
the Ascend 950PR / Atlas 350 is held back by the catalog's Huawei-has-no-FP8 check; the B30A was never approved.
"""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from knowledge import UnknownNameError, load_catalog
from knowledge.catalog_text import gpu_link_note, gpu_notes
from knowledge.fabric import fabric_for
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory

CAT = load_catalog()
GiB = 2**30
NEW = ("l2", "mtt-s5000")


def _sources() -> dict[str, dict]:
    path = resources.files("knowledge.data").joinpath("sources", "reference.toml")
    return tomllib.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("gpu_id", NEW)
def test_new_entries_cite_known_sources_and_say_what_is_assumed_in_both_languages(gpu_id: str) -> None:
    g = CAT.gpu(gpu_id)
    keys = _sources()
    assert g.sources and all(k in keys for k in g.sources), gpu_id
    assert g.confidence == "L" and g.price is None  # no dated price source was found for either
    for lang in ("en", "zh"):
        assert gpu_notes(gpu_id, lang) and gpu_link_note(gpu_id, lang), (gpu_id, lang)
    assert gpu_notes(gpu_id, "zh") != gpu_notes(gpu_id, "en")


def test_l2_is_the_china_only_l4_class_card() -> None:
    # https://www.tomshardware.com/pc-components/gpus/new-nvidia-ai-gpus-designed-to-get-around-us-export-bans-come-to-china-h20-l20-and-l2-to-fill-void-left-by-restricted-models
    # (S-TH-H20-L20-L2, L2 PCIe column): 24 GB GDDR6 with ECC, 300 GB/s, INT8/FP8 193, BF16/FP16 96.5, TF32 48.3;
    # the same table's H20 (148) and L20 (119.5) figures are the dense ones. Epoch's row adds FP32 24.1.
    l2, l4 = CAT.gpu("NVIDIA L2"), CAT.gpu("L4")
    assert l2.id == "l2" and l2.china_market and not l2.domestic
    assert (l2.memory_gb, l2.memory_type, l2.bandwidth_gbs, l2.ecc) == (24, "GDDR6", 300, True)
    t = l2.throughput
    assert (t.int8, t.fp8, t.bf16, t.fp16, t.tf32, t.fp32) == (193, 193, 96.5, 96.5, 48.3, 24.1)
    assert l2.supports("fp4") is False and l2.compute_capability == l4.compute_capability == "8.9"
    # TPP = dense INT8 TOPS x 8 bits: the L2 stays under the 1,600 line of ECCN 3A090.a that catches the L4
    assert t.int8 * 8 == 1544 < 1600 <= l4.throughput.int8 * 8
    # board power is not published: the L4's 72 W is assumed, same memory, less tensor rate than the L4
    assert l2.tdp_w == l4.tdp_w == 72 and l2.memory_gb == l4.memory_gb and t.bf16 < l4.throughput.bf16


def test_mtt_s5000_carries_the_2026_disclosure() -> None:
    # https://rutab.net/b/hardware/2026/02/12/novyy-kitayskiy-gpu-mtt-s5000-vpervye-predstavlen-80-gb-pamyati-i-1-petaflops-dlya-konkurencii-s-nvidia-h100.html
    # (S-RUTAB-S5000): 80 GB, 1.6 TB/s; https://www.ldeepai.com/tech-hub/moore-threads-mtt-s5000-1000-tflops-fp8-gpu/
    # (S-LDEEPAI-S5000): 784 GB/s card-to-card, native FP8; reportify (S-REPORTIFY-S5000): 1,000 TFLOPS liquid-cooled,
    # 920 air-cooled — the lower figure is stored, its dense/sparse basis being unstated.
    g = CAT.gpu("摩尔线程 S5000")
    assert g.id == "mtt-s5000" and g.domestic and g.vendor == "Moore Threads" and g.tier == "datacenter"
    assert (g.memory_gb, g.bandwidth_gbs, g.throughput.fp8) == (80, 1600, 920)
    assert (g.interconnect.kind, g.interconnect.bandwidth_gbs) == ("mtlink", 784)
    # https://m.itbear.com.cn/html/2025-12/1060774.html (S-ITBEAR-MUSA-2025): FP4 arrives with the next chip, Huashan
    assert g.supports("fp4") is False
    assert g.throughput.bf16 is None and g.throughput.int8 is None  # not published: unknown, not invented
    assert not g.inference_only  # sold for training and inference
    assert "dense or sparse" in gpu_notes("mtt-s5000", "en") and "700 W" in gpu_notes("mtt-s5000", "en")


def test_b30a_is_not_a_catalogued_product() -> None:
    # https://www.tekedia.com/white-house-blocks-nvidias-ai-chip-sales-to-china-amid-bipartisan-pressure-from-congress
    # (S-TEKEDIA-B30A): the White House will not permit B30A sales; the market table names it instead
    with pytest.raises(UnknownNameError):
        CAT.gpu("B30A")


@pytest.mark.parametrize("gpu_id", ["ascend-910b", "ascend-910b1", "ascend-910b2", "ascend-910b4", "ascend-910c"])
def test_ascend_training_nodes_scale_out_over_their_own_roce_ports(gpu_id: str) -> None:
    # the 910B/910C modules carry their own 200GE RoCE port per NPU (HCCS inside the node): no InfiniBand NDR
    fabric = fabric_for(gpu_id)
    assert fabric.id == "roce-ascend" and fabric.port_gbps == 200 and fabric.nic_usd == 0
    assert "InfiniBand" not in fabric.name


def test_dgx_spark_link_is_200_gbit_each_way() -> None:
    # https://www.servethehome.com/the-nvidia-gb10-connectx-7-200gbe-networking-is-really-different (S-STH-GB10-CX7):
    # the two 200 GbE ports hang off two PCIe Gen5 x4 links, about 200 Gb/s in all (160-198 measured) = 25 GB/s each
    # way. Interconnect.bandwidth_gbs counts both directions (Gaudi 3: 24 x 200 GbE = 600 GB/s each way, stored 1,200).
    spark = CAT.gpu("DGX Spark")
    each_way = 200 / 8
    assert each_way == 25
    assert (spark.interconnect.kind, spark.interconnect.bandwidth_gbs) == ("ethernet", 2 * each_way)
    assert CAT.gpu("gaudi3-oam").interconnect.bandwidth_gbs == 2 * 24 * 200 / 8
    assert "25 GB/s" in gpu_link_note("dgx-spark", "en") and "25 GB/s" in gpu_link_note("dgx-spark", "zh")


@pytest.mark.parametrize("gpu_id", ["h20", "h20-141gb"])
def test_h20_notes_say_production_stopped(gpu_id: str) -> None:
    # https://www.tweaktown.com/news/107265/nvidia-suspends-production-on-h20-chip-over-security-concerns/index.html
    # (S-TWEAKTOWN-H20-HALT, 2025-08-22): NVIDIA told Amkor and Samsung to stop H20 work
    assert "2025-08-22" in gpu_notes(gpu_id, "en") and "stop production" in gpu_notes(gpu_id, "en")
    assert "2025-08-22" in gpu_notes(gpu_id, "zh") and "停产" in gpu_notes(gpu_id, "zh")


def test_mlu590_bandwidth_is_still_the_mlu290_m5_figure() -> None:
    # https://21ic.com/article/890568.html (S-21IC-MLU290): 1.23 TB/s is the MLU290-M5's bandwidth. No Cambricon
    # figure for the MLU590 was found, so the catalog keeps the conservative 1,228 GB/s; this pins it until one is.
    assert CAT.gpu("mlu590").bandwidth_gbs == 1228
    assert "S-21IC-MLU290" in _sources()


# audit H2: vllm-ascend runs an Atlas 800 A3 as 64G x 16 with --tensor-parallel-size 16, so each 910C device
# holds 64 GB; one 910C is two such devices
def test_ascend_910c_is_sized_as_two_64gb_devices() -> None:
    res = estimate_inference_memory(InferenceMemoryInput(model="qwen2.5-72b", context=4096, gpu="ascend-910c"))
    assert res.gpu_memory_bytes is not None and res.gpu_memory_bytes <= 64 * GiB
    assert res.gpus == 2 and any(a.id == "inference.assume.devices" for a in res.assumptions)
    a3 = estimate_inference_memory(InferenceMemoryInput(model="qwen2.5-72b", context=4096, gpu="ascend-910c", gpus=8))
    assert a3.gpus == 16  # an Atlas 800 A3: 8 packages, 16 devices (tensor parallel 16)
