"""Speed when a model does not fit the GPUs: the rest runs from system RAM, and the engine decides how.

Bounds are physical, independent of the code: a token cannot come faster than the bytes held in system RAM
can be read at the RAM's full bandwidth (llama.cpp computes those layers on the CPU) or cross PCIe (vLLM's
CPU offload streams them to the GPU each step).
"""

from __future__ import annotations

import pytest

from knowledge import load_catalog
from tools.efficiency import weight_read_bytes
from tools.modelspec import ModelSpec
from tools.perf import DecodeInput, PrefillInput, estimate_decode, estimate_prefill
from tools.units import GiB

CAT = load_catalog()
RTX4090, RTX3090 = CAT.gpu("rtx-4090"), CAT.gpu("rtx-3090")


def spec(model: str) -> ModelSpec:
    return ModelSpec.from_model(CAT.model(model))


def test_405b_q4_on_one_4090_runs_below_one_token_per_second() -> None:
    m = spec("llama-3.1-405b")
    d = estimate_decode(DecodeInput(model=m, gpu=RTX4090, precision="Q4_K_M", context=4096))
    host_bytes = weight_read_bytes(m, "Q4_K_M") - 24 * GiB  # at least this much stays in RAM
    ceiling = 89.6e9 / host_bytes  # RAM read at 100 % of dual-channel DDR5-5600
    assert d.tokens_per_s < ceiling < 1.0
    assert d.tokens_per_s > 0.5 * ceiling
    assert [w.id for w in d.warnings] == ["perf.decode.offload_cpu"]
    assert any(t.name == "system RAM time" for t in d.terms)


def test_faster_ram_speeds_up_an_offloaded_model_almost_in_proportion() -> None:
    m = spec("llama-3.1-405b")
    slow = estimate_decode(DecodeInput(model=m, gpu=RTX4090, precision="Q4_K_M", context=4096))
    fast = estimate_decode(DecodeInput(model=m, gpu=RTX4090, precision="Q4_K_M", context=4096,
                                       host_bandwidth_gbs=2 * 89.6))
    assert 1.8 < fast.tokens_per_s / slow.tokens_per_s < 2.0


def test_a_big_moe_on_two_3090s_reads_only_active_experts_from_ram_single_digit_speed() -> None:
    m = spec("qwen3-235b-a22b")
    d = estimate_decode(DecodeInput(model=m, gpu=RTX3090, count=2, precision="Q4_K_M", context=4096))
    # all experts would be > 140 GB per token; the routed 22B active parameters are ~13 GB
    assert 2 < d.tokens_per_s < 10
    assert d.warnings and d.warnings[0].id == "perf.decode.offload_cpu"


def test_vllm_cpu_offload_is_bound_by_pcie() -> None:
    m = spec("llama-3.1-70b")
    d = estimate_decode(DecodeInput(model=m, gpu=RTX4090, precision="fp8", context=4096, engine="vllm"))
    over_pcie = m.params * 1.0 - 24 * GiB  # fp8: one byte per weight, at least this much crosses PCIe
    assert d.tokens_per_s < 31.5e9 / over_pcie  # PCIe 4.0 x16, one direction, at 100 %
    assert [w.id for w in d.warnings] == ["perf.decode.offload_pcie"]


def test_a_model_that_fits_is_unchanged_by_naming_its_default_engine() -> None:
    m = spec("llama-3.1-8b")
    plain = estimate_decode(DecodeInput(model=m, gpu=RTX4090, precision="Q4_K_M", context=4096))
    named = estimate_decode(DecodeInput(model=m, gpu=RTX4090, precision="Q4_K_M", context=4096, engine="llamacpp"))
    assert plain == named
    assert not plain.warnings


@pytest.mark.parametrize(("engine", "parallel"), [("llamacpp", "layer"), ("vllm", "tensor"), ("sglang", "tensor")])
def test_the_engine_decides_the_default_split(engine: str, parallel: str) -> None:
    d = estimate_decode(DecodeInput(model=spec("llama-3.1-8b"), gpu=RTX3090, count=2, precision="bf16",
                                    engine=engine))
    assert d.parallel == parallel


def test_offloaded_prefill_pays_a_weight_copy_per_micro_batch() -> None:
    m = spec("llama-3.1-405b")
    p = estimate_prefill(PrefillInput(model=m, gpu=RTX4090, precision="Q4_K_M", prompt_tokens=4096))
    copies = 4096 // 512
    host_bytes = weight_read_bytes(m, "Q4_K_M", active=False) - 24 * GiB
    assert p.ttft_s > copies * host_bytes / 31.5e9  # PCIe 4.0 x16 at 100 % is the floor
    assert [w.id for w in p.warnings][-1] == "perf.prefill.offload"
