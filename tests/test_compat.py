"""Compatibility checker scenarios, each asserting what a knowledgeable builder would point out.

Expected figures are computed here from the rules in shared/reference/hardware_rules.md (§3.5, §5):
PSU ≥ (Σ board power + CPU + 150 W) × 1.25; vendor minimums 850 W (4090) / 1,000 W (5090);
continuous circuit load = 80 % of V × A, divided by PSU efficiency at the wall; desktop CPUs give
16 lanes to the GPU slots; a tower offers 8 slot positions. Board powers and slot widths come from
the vendor datasheets (RTX 4090 450 W 3-slot, RTX 3090 350 W 3-slot, RTX 5090 575 W, L40S 350 W
passive), checked against the catalog first so a data change cannot silently pass a test.
"""

from __future__ import annotations

import re

import pytest

from knowledge import UnknownNameError, load_catalog
from knowledge.messages import render
from tools.compat import (
    BuildInput,
    BuildReport,
    Finding,
    GPUCount,
    Mains,
    check_build,
    parse_gpu_arg,
    parse_mains,
)
from tools.errors import ToolError
from tools.result import Note
from tools.units import GB

CAT = load_catalog()
CJK = re.compile(r"[\u4e00-\u9fff]")

# Datasheet figures (NVIDIA product pages / AMD spec pages), the basis of the hand computations.
RTX4090_W, RTX3090_W, RTX5090_W, L40S_W = 450, 350, 575, 350
RYZEN_9950X_PPT_W = 230  # AMD: 170 W TDP, 230 W PPT
PLATFORM_W = 150
HEADROOM = 1.25


def build(**kw: object) -> BuildReport:
    gpus = kw.pop("gpus")
    items = [g if isinstance(g, GPUCount) else parse_gpu_arg(g) for g in gpus]  # type: ignore[union-attr]
    return check_build(BuildInput(gpus=items, **kw))  # type: ignore[arg-type]


def ids(report: BuildReport, severity: str | None = None) -> set[str]:
    return {f.id for f in report.findings if severity is None or f.severity == severity}


def one(report: BuildReport, rule_id: str) -> Finding:
    found = report.by_id(rule_id)
    assert found, f"{rule_id} missing; got {sorted(ids(report))}"
    return found[0]


def test_catalog_matches_the_datasheet_figures_used_here() -> None:
    assert CAT.gpu("RTX 4090").tdp_w == RTX4090_W and CAT.gpu("RTX 4090").slot_width == 3
    assert CAT.gpu("RTX 3090").tdp_w == RTX3090_W and CAT.gpu("RTX 3090").slot_width == 3
    assert CAT.gpu("RTX 5090").tdp_w == RTX5090_W
    assert CAT.gpu("L40S").tdp_w == L40S_W and CAT.gpu("L40S").cooling.value == "passive"
    p = CAT.platform("Ryzen 9 9950X")
    assert p.typical_cpu_power_w == RYZEN_9950X_PPT_W and p.gpu_slot_lanes == 16 and p.cpu_pcie_lanes == 24


# ------------------------------------------------------------------ four 3-slot consumer cards


@pytest.fixture(scope="module")
def quad_4090() -> BuildReport:
    return build(gpus=["RTX 4090x4"], platform="Ryzen 9 9950X", psu_w=1200, chassis="tower", mains="120v-15a",
                 workload="training")


def test_quad_4090_psu_error_with_hand_computed_numbers(quad_4090: BuildReport) -> None:
    system = 4 * RTX4090_W + RYZEN_9950X_PPT_W + PLATFORM_W  # 2,180 W
    f = one(quad_4090, "power-psu-headroom")
    assert f.severity == "error" and f.category == "power"
    assert f.numbers["psu_w"] == 1200
    assert f.numbers["system_power_w"] == system
    assert f.numbers["required_w"] == pytest.approx(system * HEADROOM)  # 2,725 W
    assert "2,725" in f.message.text and "2,725" in render(f.message, "zh")


def test_quad_4090_wall_circuit_error(quad_4090: BuildReport) -> None:
    system = 4 * RTX4090_W + RYZEN_9950X_PPT_W + PLATFORM_W
    f = one(quad_4090, "power-wall-circuit")
    assert f.severity == "error"
    assert f.numbers["continuous_limit_w"] == 120 * 15 * 0.8 == 1440
    assert f.numbers["wall_draw_w"] == pytest.approx(system / 0.9, abs=0.1)  # ~2,422 W
    assert quad_4090.totals.wall_draw_w > 1440


def test_quad_4090_slot_error_lanes_and_cooling_warnings(quad_4090: BuildReport) -> None:
    slots = one(quad_4090, "slots-width-count")
    assert slots.severity == "error" and slots.category == "physical"
    assert slots.numbers["slots_needed"] == 4 * 3 and slots.numbers["slots_available"] == 8
    lanes = one(quad_4090, "pcie-lanes")
    assert lanes.severity == "warning" and lanes.category == "pcie"
    assert lanes.numbers["lanes_needed"] == 4 * 16 and lanes.numbers["lanes_available"] == 24
    # 16 GPU-slot lanes on a desktop board: two CPU slots at x8, the other two cards on chipset x4
    assert quad_4090.totals.link_widths == [8, 8, 4, 4]
    assert one(quad_4090, "cooling-open-air-stacking").severity == "warning"
    assert one(quad_4090, "p2p-geforce").category == "interconnect"
    assert not quad_4090.ok


def test_quad_4090_recommends_more_than_one_psu(quad_4090: BuildReport) -> None:
    assert one(quad_4090, "power-multi-psu").numbers["required_w"] > 1600


# ------------------------------------------------------------------ cooling, form factor, display


def test_passive_l40s_in_a_tower_is_an_error_but_fine_in_a_rack() -> None:
    tower = build(gpus=["L40S"], chassis="tower")
    f = one(tower, "cooling-passive-in-tower")
    assert f.severity == "error" and f.category == "cooling" and f.pitfall == "mixing-server-consumer"
    assert not tower.ok
    rack = build(gpus=["L40S"], chassis="rack")
    assert one(rack, "cooling-passive-in-tower").severity == "info"
    assert "error" not in {f.severity for f in rack.findings}
    # L40S has four DisplayPort outputs, so no display finding either way
    assert "display-no-outputs" not in ids(tower)


def test_sxm_module_in_a_tower_needs_a_baseboard() -> None:
    r = build(gpus=["H100 SXM"], chassis="tower")
    f = one(r, "form-sxm-oam-baseboard")
    assert f.severity == "error" and f.category == "physical"
    assert "HGX" in f.message.text
    rack8 = build(gpus=["H100 SXMx8"], chassis="rack")
    assert one(rack8, "form-sxm-oam-baseboard").severity == "info"
    assert "form-sxm-oam-count" not in ids(rack8)
    assert one(build(gpus=["H100 SXMx2"], chassis="rack"), "form-sxm-oam-count").severity == "warning"


def test_headless_datacenter_card_needs_another_display() -> None:
    f = one(build(gpus=["A100 PCIe 80GB"], chassis="tower"), "display-no-outputs")
    assert f.severity == "warning" and f.category == "display"
    assert one(build(gpus=["A100 PCIe 80GB"], chassis="rack"), "display-no-outputs").severity == "info"
    # a card with outputs next to it solves it
    mixed = build(gpus=["A100 PCIe 80GB", "RTX 4090"], chassis="tower")
    assert one(mixed, "display-no-outputs").severity == "info"


def test_slot_layout_with_narrow_spacing_blocks_the_second_card() -> None:
    r = check_build(BuildInput(gpus=[parse_gpu_arg("RTX 3090x2")], slots={"count": 2, "spacing": 2}))
    f = one(r, "slots-width-count")
    assert f.severity == "error" and f.numbers["cards_that_fit"] == 1


def test_card_longer_than_the_case() -> None:
    length = CAT.gpu("RTX 3090").length_mm
    assert length == 313  # Lambda: RTX 3090 FE is 313 mm
    f = one(build(gpus=["RTX 3090"], case_max_gpu_length_mm=300), "fit-gpu-length")
    assert f.severity == "error" and f.numbers["card_length_mm"] == 313


# ------------------------------------------------------------------ power


def test_rtx_5090_on_an_850w_psu() -> None:
    r = build(gpus=["RTX 5090"], psu_w=850)
    vmin = one(r, "power-vendor-minimum")
    assert vmin.severity == "error" and vmin.numbers["vendor_min_psu_w"] == 1000
    head = one(r, "power-psu-headroom")
    desktop_cpu = 250  # assumed when no CPU is named (Core i9 PL2 253 W / Ryzen 9 PPT 230 W)
    assert head.severity == "error"
    assert head.numbers["system_power_w"] == RTX5090_W + desktop_cpu + PLATFORM_W  # 975 W > 850 W
    assert any(a.id == "compat.assume.cpu_desktop" and a.params["cpu_w"] == desktop_cpu for a in r.assumptions)
    ok = build(gpus=["RTX 5090"], psu_w=1300)
    assert not {"power-vendor-minimum", "power-psu-headroom"} & ids(ok, "error")


def test_transient_spikes_of_two_4090s() -> None:
    r = build(gpus=["RTX 4090x2"], platform="Ryzen 9 9950X", psu_w=1700)
    spike = 2 * 600 + RYZEN_9950X_PPT_W + PLATFORM_W  # 4090 spikes above 600 W (hardware_rules §3.5)
    assert r.totals.transient_peak_w == spike
    assert "power-transient-spikes" not in ids(r)
    low = build(gpus=["RTX 4090x2"], platform="Ryzen 9 9950X", psu_w=1500)
    assert one(low, "power-transient-spikes").numbers["transient_peak_w"] == spike


def test_puget_four_3090_power_limited_does_not_suit_a_15a_circuit() -> None:
    """Puget measured 1,717 W at the wall for 4 × 3090 at 300 W: over the 1,440 W a 15 A circuit carries."""
    measured_wall_w = 1717
    assert measured_wall_w > 120 * 15 * 0.8
    r = check_build(BuildInput(gpus=[GPUCount(gpu="RTX 3090", count=4, power_limit_w=300)],
                               platform="Threadripper PRO 7000WX", psu_w=1600, psu_efficiency=0.92,
                               mains="120v-15a"))
    f = one(r, "power-wall-circuit")
    assert f.severity == "error"
    tr_pro_w = CAT.platform("Threadripper PRO 7000WX").typical_cpu_power_w
    assert f.numbers["wall_draw_w"] == pytest.approx((4 * 300 + tr_pro_w + PLATFORM_W) / 0.92, abs=0.1)


@pytest.mark.parametrize(("text", "limit"), [
    ("120v-15a", 1440), ("120v-20a", 1920), ("220v-10a", 1760), ("230v-16a", 2944), ("230V 16A", 2944),
    ("220 V / 10 A", 1760),
])
def test_wall_circuit_continuous_limits(text: str, limit: float) -> None:
    m = parse_mains(text)
    assert m.continuous_limit_w == limit == pytest.approx(m.volts * m.amps * 0.8)


def test_unreadable_mains_is_a_domain_error() -> None:
    with pytest.raises(ToolError, match="120v-15a"):
        parse_mains("wall socket")
    assert Mains(volts=230, amps=16).label == "230 V / 16 A"


def test_connectors_12v_2x6_and_eps() -> None:
    r = build(gpus=["RTX 4090x2"], psu_w=1700)
    assert one(r, "power-connector-12v-2x6").numbers["connectors_12v_2x6"] == 2
    eps = one(build(gpus=["RTX A6000"], chassis="tower"), "power-connector-eps")
    assert eps.severity == "warning" and "EPS" in eps.message.text


# ------------------------------------------------------------------ interconnect


def test_supported_3090_nvlink_pair_is_info_not_error() -> None:
    system = 2 * RTX3090_W + RYZEN_9950X_PPT_W + PLATFORM_W  # 1,080 W → 1,350 W PSU
    r = build(gpus=["RTX 3090x2"], platform="Ryzen 9 9950X", psu_w=1600, workload="training", chassis="tower")
    f = one(r, "nvlink-bridge")
    assert f.severity == "info" and f.numbers["link_bandwidth_gbs"] == 112.5
    assert r.totals.recommended_psu_w == system * HEADROOM
    assert r.ok and "p2p-geforce" not in ids(r)
    assert not [x for x in r.findings if x.category == "interconnect" and x.severity != "info"]


def test_two_4090s_for_tensor_parallel_have_no_p2p() -> None:
    f = one(build(gpus=["RTX 4090x2"], workload="inference"), "p2p-geforce")
    assert f.severity == "warning" and f.numbers["p2p"] is False and f.pitfall == "underrating-interconnect"


def test_mixed_gpus_from_the_cli_syntax() -> None:
    r = build(gpus=[GPUCount(gpu="RTX 4090", count=2), GPUCount(gpu="RTX 3090", count=1)], workload="training")
    assert r.totals.gpu_count == 3
    assert one(r, "mixed-gpu-types").severity == "warning"


# ------------------------------------------------------------------ precision


def test_bf16_training_on_a_t4() -> None:
    f = one(build(gpus=["T4"], workload="training", precision="bf16", chassis="rack"), "precision-bf16-ampere")
    assert f.severity == "error" and f.numbers["compute_capability"] == "7.5"
    assert f.fix and "FP16" in f.fix.text and "GradScaler" in f.fix.text
    fp16 = build(gpus=["T4"], workload="training", precision="fp16", chassis="rack")
    assert not [x for x in fp16.findings if x.category == "precision"]


def test_fp8_on_an_a100() -> None:
    r = build(gpus=["A100 PCIe 80GB"], workload="training", precision="fp8", chassis="rack")
    f = one(r, "precision-fp8-ada-hopper")
    assert f.severity == "error" and f.numbers["compute_capability"] == "8.0"
    assert one(r, "precision-fp8-unavailable-requant").severity == "info"
    served = build(gpus=["A100 PCIe 80GB"], workload="inference", precision="fp8", framework="vLLM", chassis="rack")
    assert one(served, "precision-fp8-ada-hopper").severity == "warning"  # Marlin weight-only fallback
    for ok_gpu in ("H100 PCIe", "L40S"):  # Hopper CC 9.0, Ada CC 8.9
        assert "precision-fp8-ada-hopper" not in ids(build(gpus=[ok_gpu], precision="fp8", chassis="rack"))


def test_fp8_on_ascend_910b_needs_requantisation() -> None:
    r = build(gpus=["Ascend 910Bx8"], workload="inference", precision="fp8", chassis="rack")
    assert one(r, "precision-fp8-ada-hopper").severity == "error"
    assert "W4A16" in one(r, "precision-fp8-unavailable-requant").message.text


def test_fp4_needs_blackwell() -> None:
    assert one(build(gpus=["H100 PCIe"], precision="nvfp4", workload="training", chassis="rack"),
               "precision-fp4-blackwell").severity == "error"
    assert "precision-fp4-blackwell" not in ids(build(gpus=["RTX 5090"], precision="nvfp4"))


def test_fp64_scientific_on_geforce_is_flagged() -> None:
    g = CAT.gpu("RTX 4090")
    f = one(build(gpus=["RTX 4090"], workload="scientific"), "precision-fp64-consumer")
    assert f.severity == "warning" and f.pitfall == "chasing-peak-tflops"
    assert f.numbers["fp64_tflops"] == g.throughput.fp64 < g.throughput.fp32 / 8
    assert "precision-fp64-consumer" not in ids(build(gpus=["H100 PCIe"], workload="scientific", chassis="rack"))


def test_unknown_precision_is_a_domain_error() -> None:
    with pytest.raises(ToolError):
        build(gpus=["RTX 4090"], precision="fp3")


# ------------------------------------------------------------------ software


def test_tensorrt_llm_on_amd_mi300x() -> None:
    r = build(gpus=["MI300Xx8"], framework="TensorRT-LLM", chassis="rack", workload="inference")
    f = one(r, "software-trtllm-nvidia-only")
    assert f.severity == "error" and f.category == "software"
    assert f.fix and "vLLM" in f.fix.text
    vllm = build(gpus=["MI300Xx8"], framework="vLLM", chassis="rack", workload="inference")
    assert vllm.ok and one(vllm, "rocm-support").severity == "info"


def test_cuda_only_code_on_ascend_910b() -> None:
    r = build(gpus=["Ascend 910Bx8"], cuda_required=True, chassis="rack", workload="training")
    f = one(r, "software-cuda-required")
    assert f.severity == "error" and "torch_npu" in f.message.text and "Ascend C" in f.message.text
    assert "software-xinchuang" in ids(r)
    assert "software-cuda-required" not in ids(build(gpus=["H100 PCIe"], cuda_required=True, chassis="rack"))


def test_vllm_compute_capability_floor() -> None:
    assert one(build(gpus=["V100"], framework="vllm", chassis="rack"), "cuda-cc-vllm").severity == "error"
    assert "cuda-cc-vllm" not in ids(build(gpus=["T4"], framework="vllm", chassis="rack"))  # CC 7.5


def test_sglang_on_rdna_is_a_warning_and_mindie_off_ascend_an_error() -> None:
    r = build(gpus=["RX 7900 XTX"], framework="SGLang", workload="inference")
    assert one(r, "rocm-support").severity == "warning" and r.ok
    assert one(build(gpus=["RTX 4090"], framework="MindIE"), "software-mindie-ascend-only").severity == "error"


def test_vllm_on_ascend_goes_through_the_plugin() -> None:
    f = one(build(gpus=["Ascend 910Bx8"], framework="vllm", chassis="rack"), "domestic-software-stack")
    assert "vllm-ascend" in f.message.text


def test_vllm_has_no_awq_kernels_on_amd() -> None:
    f = one(build(gpus=["RX 7900 XTX"], framework="vllm", precision="int4", workload="inference"),
            "vllm-quant-hardware")
    assert f.severity == "warning" and f.fix and "GGUF" in f.fix.text


def test_linux_only_serving_on_windows() -> None:
    assert one(build(gpus=["RTX 4090"], framework="vllm", os="windows"), "os-linux-serving").severity == "warning"


def test_unknown_framework_is_a_domain_error() -> None:
    with pytest.raises(ToolError, match="vLLM"):
        build(gpus=["RTX 4090"], framework="Caffe9")


# ------------------------------------------------------------------ memory


def test_70b_int4_does_not_fit_one_24gb_card() -> None:
    r = build(gpus=["RTX 4090"], workload="inference", model="Llama-3.1-70B", precision="int4")
    f = one(r, "memory-fit")
    assert f.severity == "error" and f.pitfall == "ignoring-memory"
    params = CAT.model("Llama-3.1-70B").params_b * 1e9
    assert f.numbers["per_gpu_bytes"] > params * 4 / 8  # at least 4 bits per weight: 35 GB > 24 GB
    assert f.numbers["shortfall_bytes"] == f.numbers["per_gpu_bytes"] - f.numbers["gpu_memory_bytes"]


def test_8b_bf16_fits_an_h100() -> None:
    r = build(gpus=["H100 PCIe"], workload="inference", model="Llama-3.1-8B", precision="bf16", chassis="rack")
    f = one(r, "memory-fit")
    params = CAT.model("Llama-3.1-8B").params_b * 1e9
    assert f.severity == "info" and f.numbers["weights_bytes"] >= params * 2 * 0.99


def test_full_finetune_of_8b_does_not_fit_one_24gb_card() -> None:
    f = one(build(gpus=["RTX 4090"], workload="training", model="Llama-3.1-8B", method="full"), "memory-fit")
    assert f.severity == "error"
    assert f.numbers["per_gpu_bytes"] > 16 * 8.03e9  # ≥ 16 B/param of model states (ZeRO paper)


def test_system_ram_rules() -> None:
    r = build(gpus=["RTX 6000 Adax4"], system_ram_gb=32, platform="Threadripper PRO 7000WX")
    f = one(r, "system-ram")
    assert f.severity == "warning"
    assert f.numbers["recommended_ram_gb"] == 2 * 4 * 48  # 384 GB (Puget)
    assert f.numbers["min_ram_gb"] == 48  # the largest card (Dettmers)
    assert one(build(gpus=["RTX 6000 Adax4"], system_ram_gb=256), "system-ram").severity == "info"
    enough = one(build(gpus=["RTX 6000 Adax4"], system_ram_gb=512), "system-ram")  # 512 ≥ 384: said, no warning
    assert enough.severity == "info" and "enough" in enough.message.text


def test_ecc_for_scientific_runs() -> None:
    assert one(build(gpus=["RTX 4090"], workload="scientific"), "memory-ecc").severity == "warning"
    assert "memory-ecc" not in ids(build(gpus=["H100 PCIe"], workload="scientific", chassis="rack"))


def test_scientific_problem_larger_than_all_vram() -> None:
    r = build(gpus=["RTX 4090x2"], workload="scientific", problem_bytes=int(60 * GB))
    assert one(r, "memory-fit").severity == "error"  # 60 GB > 0.9 × 2 × 24 GiB (51.5 GB) of VRAM


# ------------------------------------------------------------------ platform


def test_cpu_cores_per_gpu() -> None:
    f = one(build(gpus=["RTX 4090x8"], platform="Ryzen 9 9950X", chassis="open-frame"), "cpu-cores-per-gpu")
    assert f.severity == "warning" and f.numbers["cpu_cores_needed"] == 4 * 8 and f.numbers["cpu_cores_max"] == 16


def test_geforce_in_a_rack_server_licence() -> None:
    f = one(build(gpus=["RTX 4090x2"], chassis="rack"), "geforce-datacenter-licence")
    assert f.severity == "warning" and f.pitfall == "mixing-server-consumer"


def test_mixing_server_and_consumer_cards() -> None:
    assert one(build(gpus=["L40S", "RTX 4090"]), "server-consumer-mix").pitfall == "mixing-server-consumer"


# ------------------------------------------------------------------ contract


SCENARIOS = [
    dict(gpus=["RTX 4090x4"], platform="Ryzen 9 9950X", psu_w=1200, chassis="tower", mains="120v-15a"),
    dict(gpus=["L40S"], chassis="tower"),
    dict(gpus=["T4"], workload="training", precision="bf16"),
    dict(gpus=["A100 PCIe 80GB"], precision="fp8", workload="training"),
    dict(gpus=["MI300Xx8"], framework="TensorRT-LLM", chassis="rack"),
    dict(gpus=["Ascend 910Bx8"], cuda_required=True, chassis="rack", framework="vllm"),
    dict(gpus=["RTX 5090"], psu_w=850),
    dict(gpus=["RTX 3090x2"], workload="training", psu_w=1600),
    dict(gpus=["RTX 4090"], workload="inference", model="Llama-3.1-70B", precision="int4"),
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s["gpus"][0])
def test_every_finding_is_bilingual_quantified_and_fixable(scenario: dict) -> None:
    r = build(**dict(scenario))
    assert r.ok == (not r.errors)
    for f in r.findings:
        assert f.message.text and CJK.search(render(f.message, "zh")), f.id
        assert f.fix and f.fix.text and CJK.search(render(f.fix, "zh")), f.id
        assert render(f.message, "en") == f.message.text and render(f.fix, "en") == f.fix.text, f.id
        assert f.category in {"power", "pcie", "physical", "cooling", "display", "interconnect", "precision",
                              "software", "memory", "platform"}
        if f.severity != "info":
            assert f.numbers, f"{f.id} has no numbers"
    order = [{"error": 0, "warning": 1, "info": 2}[f.severity] for f in r.findings]
    assert order == sorted(order)


def test_rule_ids_match_the_knowledge_base_where_they_exist() -> None:
    import tomllib
    from importlib import resources

    text = resources.files("knowledge.data").joinpath("rules.toml").read_text(encoding="utf-8")
    kb_ids = {r["id"] for r in tomllib.loads(text)["rule"]}
    used = set().union(*(ids(build(**dict(s))) for s in SCENARIOS))
    shared = {"power-psu-headroom", "power-wall-circuit", "pcie-lanes", "cooling-passive-in-tower",
              "precision-bf16-ampere", "slots-width-count", "power-vendor-minimum", "nvlink-bridge"}
    assert shared <= kb_ids and shared <= used


def test_gpu_argument_syntax() -> None:
    assert parse_gpu_arg("4090x2") == GPUCount(gpu="4090", count=2)
    assert parse_gpu_arg("2x RTX 4090") == GPUCount(gpu="RTX 4090", count=2)
    assert parse_gpu_arg("MLU370-X8").count == 1  # a name that ends in x8 stays one card
    assert parse_gpu_arg("H100", 4).count == 4
    with pytest.raises(UnknownNameError):
        parse_gpu_arg("RTX 9999x2")


def test_one_atx_psu_limit_follows_the_mains_voltage_and_names_no_internal_ids() -> None:
    # Two RTX 5090 + a 9950X: (2 × 575 + 230 + 150) × 1.25 = 1,912.5 W recommended. Above the 1,600 W that
    # common (115 V) ATX units reach, but within the 2,000 W class that 200–240 V mains allow.
    need = (2 * RTX5090_W + RYZEN_9950X_PPT_W + PLATFORM_W) * HEADROOM
    unknown = build(gpus=["2x RTX 5090"], platform="Ryzen 9 9950X")
    assert unknown.totals.recommended_psu_w == pytest.approx(need)
    assert "power-multi-psu" in ids(unknown)
    assert "power-multi-psu" not in ids(build(gpus=["2x RTX 5090"], platform="Ryzen 9 9950X", mains="230V 16A"))
    assert "power-multi-psu" in ids(build(gpus=["2x RTX 5090"], platform="Ryzen 9 9950X", mains="120V 20A"))
    texts = [render(n, lang) for f in unknown.findings for n in (f.message, f.fix) if n for lang in ("en", "zh")]
    assert not any("power-multi-psu" in x or "--mains" in x or "115 V" in x for x in texts)


# ------------------------------------------------------------------ notes: message ids, English kept, Chinese shown

# three or more English words in a row (a word starts with a letter; digits, '/', '.', '-' inside it)
ENGLISH_RUN = re.compile(r"[A-Za-z][\w'./-]*(?:[ ,;:]+[A-Za-z][\w'./-]*){2,}")
NOTE_BUILDS: list[dict[str, object]] = [
    {"gpus": ["RTX 4090"]},
    {"gpus": [GPUCount(gpu="RTX 4090", count=3, power_limit_w=350)], "model": "llama-3.1-70b", "precision": "int4"},
    {"gpus": ["8x H100 SXM"], "workload": "training", "model": "llama-3.1-8b", "method": "full"},
    {"gpus": ["2x RTX 3090"], "model": "llama-3.1-8b", "precision": "Q4_K_M", "psu_efficiency": 0.92},
    {"gpus": ["6x RTX 4090"], "model": "qwen2.5-7b", "framework": "PyTorch"},
]


@pytest.fixture(scope="module")
def noted() -> list[BuildReport]:
    return [build(**dict(kw)) for kw in NOTE_BUILDS]


def test_assumptions_and_formulas_are_compat_notes_rendered_in_chinese(noted: list[BuildReport]) -> None:
    for r in noted:
        for a in [*r.assumptions, *r.formula]:
            assert isinstance(a, Note) and a.id.startswith("compat.") and a.text
            zh = render(a, "zh")
            for name in (a.params.get("gpu"), a.params.get("model")):  # names are the same in every language
                zh = zh.replace(str(name), "") if name else zh
            assert zh != a.text and CJK.search(zh), a.id
            assert not ENGLISH_RUN.search(zh), (a.id, zh)


def test_assumption_english_text_is_unchanged(noted: list[BuildReport]) -> None:
    """Copied from the output before the notes became message ids."""
    texts = [[a.text for a in r.assumptions] for r in noted]
    assert texts[0] == [
        "PSU efficiency 0.9 at load (80 Plus Gold/Platinum); platform overhead 150 W.",
        "Chassis not given: cooling and slot rules assume a tower unless noted.",
        "No CPU given: assumed a high-end desktop CPU at 250 W (PL2/PPT).",
    ]
    assert "GeForce RTX 4090 power-limited to 350 W (board power 450 W)." in texts[1]
    assert ("Tensor parallel over 3 GPUs is not possible (tensor parallel 3 does not divide the 64 attention heads "
            "of Llama-3.1-70B — try: use tp=2, 4, 8, 16; or split layers across GPUs (pipeline parallel)); sized "
            "as a layer split instead.") in texts[1]
    assert "Memory fit from the sizing engine (vLLM-style accounting), on the card with the least memory." in texts[1]
    assert texts[2][2:] == [
        "Multi-GPU work assumed to be data parallel (training default).",
        "Full fine-tuning on 8 GPUs sized with ZeRO-3 sharding of the model states.",
        "Memory fit from the sizing engine (training accounting), on the card with the least memory.",
        "No CPU given: assumed a dual-socket server, 700 W of CPU power.",
    ]
    assert noted[0].formula[0].text == ("system_power_w = Σ GPU board power (or set power limit) + CPU package power "
                                        "+ 150 W platform")
    split = next(a for a in noted[1].assumptions if a.id == "compat.assume.tp_layer_split")
    assert split.params["gpus"] == 3 and split.params["reason"]["id"] == "compat.tp_reason.heads"  # type: ignore[index]


@pytest.mark.parametrize("field", ["system_ram_gb", "psu_w", "case_max_gpu_length_mm"])
@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_an_infinite_or_nan_figure_is_an_input_error_not_a_verdict(field: str, value: float) -> None:
    """'inf GB of RAM is enough' was once the answer: a figure that is not a number is refused by name."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=f"{field}[\\s\\S]*finite number"):
        BuildInput(gpus=[GPUCount(gpu="RTX 4090", count=2)], **{field: value})


def test_every_tool_input_refuses_infinite_figures() -> None:
    """One shared rule (tools.inputs.ToolInput), not a check per field: each tool's input model and the
    models nested in it refuse inf and NaN ('inf FLOPs × cells' and 'inf GB of RAM' were once computed)."""
    from pydantic import BaseModel

    from advisor.toolspec import TOOLS
    from tools.inputs import ToolInput

    def models(model: type[BaseModel]) -> set[type[BaseModel]]:
        found = {model}
        for f in model.model_fields.values():
            for arg in (f.annotation, *getattr(f.annotation, "__args__", ())):
                for inner in (arg, *getattr(arg, "__args__", ())):
                    if isinstance(inner, type) and issubclass(inner, BaseModel) and inner not in found:
                        found |= models(inner)
        return found

    for spec in TOOLS.values():
        for model in models(spec.input_model):
            assert issubclass(model, ToolInput), f"{spec.name}: {model.__name__} accepts inf"


@pytest.mark.parametrize("machines", [1, 3])
def test_a_circuit_already_overloaded_leaves_nothing_not_a_negative_limit(machines: int) -> None:
    """10 kW of other equipment on one 120 V / 15 A circuit (1,440 W continuous): nothing is left for the build —
    the limit left is 0 W (never −8,560 W) and the verdict is that the breaker trips."""
    r = check_build(BuildInput(gpus=[GPUCount(gpu="RTX 4090", count=1)], mains="120v-15a", other_load_w=10_000,
                               machines=machines))
    f = one(r, "power-wall-circuit")
    assert f.severity == "error"
    assert f.numbers["continuous_limit_w"] == 0
    assert r.totals.continuous_limit_w == 0
    assert "-" not in render(f.message, "en").replace("-8pin", "")
