"""Precision table: block sizes from the formats' layouts, file sizes from llama.cpp's measurements."""

from __future__ import annotations

import gguf
import pytest

from tools.errors import ToolError
from tools.precision import (
    all_precisions,
    bytes_per_param,
    gguf_type_precision,
    kv_bytes_per_element,
    resolve_kv_dtype,
    resolve_precision,
)

GiB = 2**30


# ggml block layouts, in bytes, written out from the struct definitions (ggml-common.h):
# Q4_0: fp16 d + 16 B of nibbles per 32 weights; Q8_0: fp16 d + 32 int8;
# Q4_K: per 256 weights fp16 d + fp16 dmin + 12 B packed 6-bit scales/mins + 128 B nibbles;
# Q6_K: 128 B low nibbles + 64 B high 2-bit + 16 int8 scales + fp16 d;
# Q5_K: Q4_K + 32 B of high bits; Q3_K: 32 B hmask + 64 B 2-bit + 12 B scales + fp16 d;
# Q2_K: 16 B scales + 64 B 2-bit + 2 × fp16; IQ4_XS: fp16 d + u16 scales_h + 4 B scales_l + 128 B.
BLOCKS = {
    "Q4_0": (32, 2 + 16),
    "Q8_0": (32, 2 + 32),
    "Q4_K_M": (256, 2 + 2 + 12 + 128),
    "Q6_K": (256, 128 + 64 + 16 + 2),
    "Q5_K_M": (256, 2 + 2 + 12 + 32 + 128),
    "Q3_K_M": (256, 32 + 64 + 12 + 2),
    "Q2_K": (256, 16 + 64 + 2 + 2),
    "IQ4_XS": (256, 2 + 2 + 4 + 128),
}


@pytest.mark.parametrize("name", list(BLOCKS))
def test_gguf_base_bits_match_block_layout(name: str) -> None:
    weights, nbytes = BLOCKS[name]
    assert resolve_precision(name).base_bits_per_weight == pytest.approx(nbytes * 8 / weights, abs=1e-9)


def test_gguf_base_bits_match_gguf_package_table() -> None:
    # Second, independent source: the gguf package's GGML_QUANT_SIZES (block size, type size).
    q = gguf.GGMLQuantizationType
    pairs = {
        "Q4_0": q.Q4_0,
        "Q8_0": q.Q8_0,
        "Q4_K_M": q.Q4_K,
        "Q6_K": q.Q6_K,
        "Q5_K_M": q.Q5_K,
        "Q3_K_M": q.Q3_K,
        "Q2_K": q.Q2_K,
        "IQ4_XS": q.IQ4_XS,
    }
    for name, qt in pairs.items():
        block, size = gguf.GGML_QUANT_SIZES[qt]
        assert resolve_precision(name).base_bits_per_weight == pytest.approx(size * 8 / block)


def test_q4_k_m_file_size_of_llama2_7b_row1() -> None:
    # measurements.md row 1: Llama-2-7B (6.74 B) Q4_K_M = 3.80 GiB, 4.84 BPW. Our file bpw comes from the
    # Llama-3-8B size (row 2), so this is an out-of-sample check. Tolerance 2 %: Llama-2's 32k vocabulary
    # gives its (Q6_K) output head a smaller share than Llama-3's 128k one, so its file bpw is lower.
    spec = resolve_precision("Q4_K_M")
    size_gib = 6.74e9 * spec.bits_per_weight / 8 / GiB
    assert size_gib == pytest.approx(3.80, rel=0.02)
    assert spec.bits_per_weight == pytest.approx(4.84, rel=0.02)


def test_llama3_8b_sizes_row2_transcribed() -> None:
    # measurements.md row 2 (llama.cpp QUANT_OPTIONS, "G" = GiB, 8.03 B params). The table is built from these
    # numbers, so this checks the transcription; 0.5 % covers rounding of the published two decimals.
    published = {"Q4_0": 4.34, "Q4_K_S": 4.37, "Q4_K_M": 4.58, "Q5_K_M": 5.33, "Q6_K": 6.14, "Q8_0": 7.96}
    for name, gib in published.items():
        assert 8.03e9 * resolve_precision(name).bits_per_weight / 8 / GiB == pytest.approx(gib, rel=0.005)
    assert resolve_precision("Q4_K_M").bits_per_weight == pytest.approx(4.89, abs=0.02)


def test_file_mixes_are_larger_than_their_base_type() -> None:
    for name in ("Q4_K_M", "Q4_K_S", "Q5_K_M", "Q3_K_M", "Q2_K", "Q4_0"):
        spec = resolve_precision(name)
        assert spec.bits_per_weight > spec.base_bits_per_weight, name
    assert resolve_precision("Q4_K_M").bits_per_weight > resolve_precision("Q4_K_S").bits_per_weight


def test_float_and_int_bytes_per_param() -> None:
    assert bytes_per_param("fp32") == 4
    assert bytes_per_param("bf16") == bytes_per_param("fp16") == bytes_per_param("half") == 2
    assert bytes_per_param("fp8") == bytes_per_param("int8") == 1


def test_int4_group_scales_and_nf4_double_quant() -> None:
    # AWQ/GPTQ group 128: 4 bits + one fp16 scale (16 bits) + one packed 4-bit zero per 128 weights.
    assert resolve_precision("awq").bits_per_weight == pytest.approx(4 + (16 + 4) / 128)
    assert resolve_precision("gptq").name == resolve_precision("4bit").name == "int4"
    # QLoRA NF4: block 64 with an 8-bit constant, constants re-quantised with fp32 per 256 blocks.
    assert resolve_precision("nf4").bits_per_weight == pytest.approx(4 + 8 / 64 + 32 / (64 * 256), abs=1e-3)


def test_compute_precision_of_weight_only_formats() -> None:
    assert resolve_precision("int4").compute_precision == "fp16"
    assert resolve_precision("int4").weight_only
    assert resolve_precision("Q4_K_M").weight_only
    assert resolve_precision("fp8").compute_precision == "fp8"
    assert not resolve_precision("fp8").weight_only


def test_kv_dtypes() -> None:
    assert kv_bytes_per_element("fp16") == kv_bytes_per_element("bf16") == 2
    assert kv_bytes_per_element("fp8") == 1
    assert kv_bytes_per_element("q8_0") == pytest.approx(34 / 32)  # 32 int8 + fp16 scale
    assert kv_bytes_per_element("q4_0") == pytest.approx(18 / 32)  # 16 B nibbles + fp16 scale
    assert "llamacpp" in resolve_kv_dtype("q8_0").engines
    assert "vllm" not in resolve_kv_dtype("q8_0").engines


def test_unknown_precision_suggests_close_names() -> None:
    with pytest.raises(ToolError) as exc:
        resolve_precision("Q4_K_N")
    assert "Q4_K_M" in exc.value.suggestions
    with pytest.raises(ToolError):
        resolve_kv_dtype("fp7")


def test_names_are_case_and_dash_insensitive() -> None:
    assert resolve_precision("q4-k-m").name == "Q4_K_M"
    assert resolve_precision("BFloat16").name == "bf16"
    assert gguf_type_precision("MOSTLY_Q4_K_M").name == "Q4_K_M"  # type: ignore[union-attr]


def test_every_alias_resolves_to_its_own_entry() -> None:
    for spec in all_precisions():
        for alias in spec.aliases:
            assert resolve_precision(alias).name == spec.name, alias
