"""Macs as the machines they are: unified memory of which macOS gives the GPU a share, llama.cpp (Metal) as the
engine — vLLM and SGLang have no macOS backend — and 4-bit meaning the GGUF file of that size.

References: Apple's tech specs (M2 Ultra: 192 GB at 800 GB/s; M3 Ultra: 512 GB at 819 GB/s); Metal's default
working set (recommendedMaxWorkingSetSize) of about three quarters of memory above 36 GB; vLLM's installation
page (GPU backends CUDA, ROCm, XPU; Apple silicon CPU-only)."""

from __future__ import annotations

import pytest

from advisor.engine import Advisor
from knowledge import load_catalog
from knowledge.stack_support import engine_runs
from tests.fakes.script import turn
from tools.recommend import RecommendInput, recommend

CAT = load_catalog()


def test_a_mac_is_a_unified_memory_system_with_a_gpu_share() -> None:
    m2 = CAT.gpu("Mac Studio M2 Ultra 192GB")
    assert (m2.vendor, m2.memory_gb, m2.bandwidth_gbs) == ("Apple", 192, 800)
    assert m2.gpu_assignable_gb is not None and m2.gpu_assignable_gb == pytest.approx(192 * 0.75, rel=0.02)
    assert not engine_runs(m2.id, "vllm") and not engine_runs(m2.id, "sglang") and engine_runs(m2.id, "llamacpp")


def test_owning_a_mac_sizes_on_llama_cpp_at_the_weights_asked(adv: Advisor) -> None:
    """70B at BF16 is 70.55e9 × 2 B = 141 GB of weights; on a Mac with no precision said, it is sized as it is,
    on llama.cpp, and never with a vLLM or AWQ route."""
    r = turn(adv, adv.new_session(), "我有一台 Mac Studio M2 Ultra 192G，能跑 Llama-3.1-70B 吗")
    sizes = [c for c in r.tool_calls if c.name == "size_inference"]
    assert sizes and all(c.arguments["engine"] == "llamacpp" for c in sizes)
    body = r.text.split("**参考资料**")[0]  # passage titles and the closing question are general
    assert "vLLM" not in body and "AWQ" not in body and "llama.cpp 的显存分配" in body


def test_four_bit_on_a_mac_is_the_gguf_file(adv: Advisor) -> None:
    r = turn(adv, adv.new_session(), "Mac Studio M3 Ultra 512GB can it run DeepSeek-R1 at 4-bit?")
    size = next(c for c in r.tool_calls if c.name == "size_inference")
    assert (size.arguments["engine"], size.arguments["precision"]) == ("llamacpp", "Q4_K_M")
    assert "AWQ" not in r.text and r.text.startswith("**Answer: DeepSeek-R1 (Q4_K_M")


def test_the_recommender_says_why_a_mac_is_not_a_vllm_server() -> None:
    rec = recommend(RecommendInput(workload="inference", model="qwen2.5-32b", budget_usd=20_000))
    why = next(r for r in rec.rejected if r.gpu_id == "mac-studio-m3-ultra-96gb")
    assert "vLLM does not run on this machine" in why.reason.text


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_a_mac_short_of_its_gpu_share_is_told_the_share_can_be_raised() -> None:
    """DeepSeek-R1 Q4_K_M for 20 users needs ~417 GB; the 512 GB Mac gives the GPU ~384 GiB by default."""
    from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory

    r = estimate_inference_memory(InferenceMemoryInput(model="deepseek-r1", precision="Q4_K_M", engine="llamacpp",
                                                       gpu="mac-studio-m3-ultra-512gb", context=8192, batch=20))
    assert r.fits is False
    assert any(w.id == "inference.warn.raise_gpu_share" and "512 GB" in w.text for w in r.warnings)


def test_a_mac_is_compared_as_one_machine_on_llama_cpp(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "I have a Mac Studio M3 Ultra 256GB. Can it run Qwen3-235B-A22B at 8-bit?")
    r = turn(adv, s, "My colleague has a Mac Studio M2 Ultra 192GB. How fast would Qwen3-235B run on that, and is the "
                     "M3 Ultra price you showed current?")
    sizes = {c.arguments["gpu"]: c.arguments for c in r.tool_calls if c.name == "size_inference"}
    assert set(sizes) == {"mac-studio-m2-ultra-192gb", "mac-studio-m3-ultra-256gb"}  # the 256 GB one said before
    assert all(a["gpus"] == 1 and a["engine"] == "llamacpp" and a["precision"] == "Q8_0" for a in sizes.values())
    assert "Speed:" not in r.text.split("\n")[0]  # neither holds it at 8-bit: no speed given as the answer
