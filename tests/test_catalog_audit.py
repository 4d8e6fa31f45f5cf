"""Corrections from the December 2026 catalog audit, each checked against the source it names.

* HGX B300: 2.3 TB of HBM3e and 64 TB/s per 8 GPUs → 288 GB and 8,000 GB/s per GPU (AceCloud, Lockwood).
* Ascend 910C: Huawei's own keynote gives 800 TFLOPS FP16 (Epoch's 752 is the conservative end).
* "Atlas 800I A2" ships with 32 GB 910B4 or 64 GB parts, so it must not silently mean the 64 GB 910B3.
* GLM-4.6 has a 200K context, GLM-4.5 131K: one is not an alias of the other.
"""

from __future__ import annotations

import pytest

from knowledge import load_catalog

CAT = load_catalog()


def test_b300_memory_and_bandwidth_per_gpu() -> None:
    b300 = CAT.gpu("b300")
    assert b300.memory_gb == 288  # 2.3 TB over 8 GPUs, NVIDIA's rounded per-GPU figure
    assert b300.bandwidth_gbs == 64_000 / 8


def test_ascend_910c_fp16_is_huaweis_figure() -> None:
    assert CAT.gpu("ascend-910c").throughput.fp16 == 800


@pytest.mark.parametrize(("name", "wrong"), [("Atlas 800I A2", "ascend-910b")])
def test_a_server_with_two_memory_sizes_is_not_one_gpu(name: str, wrong: str) -> None:
    try:
        found = CAT.gpu(name).id
    except LookupError:
        found = None
    assert found != wrong


def test_glm_4_6_is_not_glm_4_5() -> None:
    try:
        found = CAT.model("GLM-4.6").id
    except LookupError:
        found = None
    assert found != "glm-4.5"


def test_minimax_m2_and_glm_4_6_are_sized_from_their_own_configs() -> None:
    """MiniMax-M2: 62 layers × 8 KV heads × 128 × 2 (K and V) × 2 B = 253,952 B of KV per token at 16 bit;
    230B parameters published in FP8 ≈ 230 GB of weights. GLM-4.6: the GLM-4.5 shape with 202,752 positions."""
    from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory

    m2 = estimate_inference_memory(InferenceMemoryInput(model="MiniMax-M2", context=8192))
    assert m2.kv_bytes_per_token == 62 * 8 * 128 * 2 * 2
    assert m2.weights_total_bytes == pytest.approx(230e9, rel=0.02)
    assert CAT.model("GLM-4.6").max_context == 202_752 and CAT.model("GLM-4.6").layers == CAT.model("glm-4.5").layers
