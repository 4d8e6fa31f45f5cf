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
