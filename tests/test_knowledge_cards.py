"""knowledge.cards: GPU/model cards, tier tables and rule documents generated from the catalog.

Reference numbers are written here by hand from the vendor datasheets (via
/work/shared/reference/gpu_specs_reference.csv) and from first principles, not read from the catalog.
"""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from knowledge import load_catalog
from knowledge.cards import generate_documents, load_rules, model_card, tier_table
from knowledge.corpus import Passage
from knowledge.schema import Tier


@pytest.fixture(scope="module")
def docs() -> dict[str, Passage]:
    return {p.id: p for p in generate_documents()}


# (catalog id, memory GB, bandwidth GB/s, board power W) — datasheet values
DATASHEET = [
    ("h20", "96 GB", "4000 GB/s", "400 W"),  # NVIDIA H20 (HGX): 96 GB HBM3, 4.0 TB/s, 400 W
    ("mi325x", "256 GB", "6000 GB/s", "1000 W"),  # AMD Instinct MI325X: 256 GB HBM3E, 6 TB/s, 1000 W
    ("h100-sxm", "80 GB", "3350 GB/s", "700 W"),  # NVIDIA H100 SXM: 80 GB HBM3, 3.35 TB/s, 700 W
]


@pytest.mark.parametrize(("gpu_id", "memory", "bandwidth", "power"), DATASHEET)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gpu_card_states_the_datasheet_numbers(
    docs: dict[str, Passage], gpu_id: str, memory: str, bandwidth: str, power: str, lang: str
) -> None:
    card = docs[f"gpu/{gpu_id}/{lang}"]
    assert card.kind == "gpu-card" and card.lang == lang
    for fact in (memory, bandwidth, power):
        assert fact in card.text, (gpu_id, lang, fact)
    if lang == "zh":
        assert f"显存：{memory}" in card.text and "显存带宽" in card.text
    else:
        assert f"Memory (VRAM): {memory}" in card.text and "memory bandwidth" in card.text


def test_gpu_card_has_link_sources_and_names(docs: dict[str, Passage]) -> None:
    h100 = docs["gpu/h100-sxm/en"]
    assert "900 GB/s" in h100.text  # NVLink 4: 18 links × 50 GB/s
    assert "no hardware support for FP4" in h100.text  # Hopper has no FP4 path
    assert "S-NV-H100DS" in h100.source and "h100-sxm" in h100.source
    assert "H100" in h100.names
    assert "中国特供" in docs["gpu/h20/zh"].text  # export-control variant flagged


def test_every_catalog_entry_has_a_card_in_both_languages(docs: dict[str, Passage]) -> None:
    cat = load_catalog()
    for g in cat.gpus:
        assert {f"gpu/{g.id}/en", f"gpu/{g.id}/zh"} <= docs.keys()
    for m in cat.models:
        assert {f"model/{m.id}/en", f"model/{m.id}/zh"} <= docs.keys()


def test_model_card_weight_and_kv_figures_follow_from_first_principles() -> None:
    m = load_catalog().model("llama-3.1-8b")
    card = model_card(m, "en")
    # weights at BF16: 8.03e9 parameters × 2 bytes = 16.06e9 B ≈ 16.1 GB
    assert "BF16/FP16 about 16.1 GB" in card.text
    # GQA KV cache: 2 (K and V) × 32 layers × 8 KV heads × 128 dims × 2 bytes = 131,072 B/token
    assert "131.1 KB per token" in card.text
    # one 131,072-token sequence: 131,072 × 131,072 B = 17.18e9 B
    assert "17.2 GB for one sequence" in card.text
    assert "约 16.1 GB" in model_card(m, "zh").text


@pytest.mark.parametrize("tier", list(Tier))
def test_tier_table_lists_exactly_the_catalog_gpus_of_its_tier(tier: Tier) -> None:
    cat = load_catalog()
    for lang in ("en", "zh"):
        table = tier_table(cat, tier, lang)
        rows = [line for line in table.text.splitlines() if line.startswith("| ") and "---" not in line][1:]
        names_in_rows = {row.split(" | ")[0].removeprefix("| ") for row in rows}
        expected = [g for g in cat.gpus if g.tier == tier]
        assert len(rows) == len(expected)
        for g in expected:
            assert any(name.startswith(g.name) for name in names_in_rows), (tier, g.name)
            row = next(r for r in rows if r.removeprefix("| ").startswith(g.name))
            assert f"{g.memory_gb:g} GB" in row
        others = [g for g in cat.gpus if g.tier != tier]
        for g in others:
            assert not any(name.split("（")[0].split(" (")[0] == g.name for name in names_in_rows)


def test_tier_tables_carry_the_columns_the_guide_asks_for(docs: dict[str, Passage]) -> None:
    en = docs["tier/datacenter/en"].text
    for column in ("memory", "bandwidth (GB/s)", "dense BF16 (TFLOPS)", "FP64 (TFLOPS)", "power (W)", "price"):
        assert column in en
    zh = docs["tier/consumer/zh"].text
    for column in ("显存", "带宽", "稠密 BF16", "FP64", "功耗", "参考价格"):
        assert column in zh
    # the H100 SXM row shows its datasheet numbers
    row = next(line for line in en.splitlines() if line.startswith("| H100 SXM"))
    assert "| 80 GB HBM3 | 3350 | 989.4 | 67 | 700 |" in row


def test_rules_file_ids_are_unique_and_have_both_languages() -> None:
    raw = tomllib.loads(resources.files("knowledge.data").joinpath("rules.toml").read_text("utf-8"))
    rules = raw["rule"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)) >= 20
    for r in rules:
        for key in ("title_en", "title_zh", "text_en", "text_zh", "source", "category"):
            assert r[key].strip(), (r["id"], key)
        assert any("\u4e00" <= ch <= "\u9fff" for ch in r["text_zh"]), r["id"]


# the compatibility checker refers to these ids: they must not disappear
STABLE_RULE_IDS = [
    "power-psu-headroom",
    "power-wall-circuit",
    "power-vendor-minimum",
    "power-connector-12v-2x6",
    "power-connector-eps",
    "pcie-lanes",
    "pcie-m2-lane-sharing",
    "pcie-bifurcation",
    "cooling-passive-in-tower",
    "cooling-open-air-stacking",
    "slots-width-count",
    "form-sxm-oam-baseboard",
    "p2p-geforce",
    "nvlink-bridge",
    "precision-bf16-ampere",
    "precision-fp8-ada-hopper",
    "precision-fp4-blackwell",
    "cuda-cc-vllm",
    "rocm-support",
    "system-ram",
    "display-no-outputs",
]


@pytest.mark.parametrize("rule_id", STABLE_RULE_IDS)
def test_stable_rule_ids_exist_as_documents(docs: dict[str, Passage], rule_id: str) -> None:
    assert rule_id in {r["id"] for r in load_rules()}
    for lang in ("en", "zh"):
        doc = docs[f"rule/{rule_id}/{lang}"]
        assert doc.kind == "rule" and doc.lang == lang and doc.text


def test_wall_circuit_rule_numbers_follow_from_p_equals_v_times_i(docs: dict[str, Passage]) -> None:
    text = docs["rule/power-wall-circuit/en"].text
    assert "1,440 W" in text  # 120 V × 15 A × 0.8
    assert "1,920 W" in text  # 120 V × 20 A × 0.8
    assert "1,760 W" in text  # 220 V × 10 A × 0.8
