"""The engine protocol (tools/engines): one object per engine, and SGLang as the proof that adding one is one
module. SGLang's figures are checked against its own source rules and a published start-up log."""

from __future__ import annotations

import pytest

from tools.engines import ENGINES, InferenceEngine, get_engine
from tools.engines.sglang import default_mem_fraction_static
from tools.errors import ToolError
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.units import GiB, MiB


def test_every_engine_is_one_object_behind_the_same_protocol() -> None:
    assert set(ENGINES) == {"vllm", "llamacpp", "transformers", "sglang"}
    assert all(isinstance(e, InferenceEngine) for e in ENGINES.values())
    assert get_engine("generic") is ENGINES["transformers"]
    assert [ENGINES[n].label for n in ("vllm", "llamacpp", "sglang")] == ["vLLM", "llama.cpp", "SGLang"]


@pytest.mark.parametrize(("mib", "tp", "fraction"), [
    # sglang/srt/server_args.py: reserved = 512 + 1.5·max(chunk, 2048) + 2·graph_bs + 1024·tp/8 MiB,
    # at least 10 GiB above 60 GiB; fraction = (memory − reserved) / memory
    (24 * 1024, 1, round((24576 - (512 + 3072 + 48 + 128)) / 24576, 3)),     # 24 GB: chunk 2048, graphs 24
    (80 * 1024, 1, round((81920 - (512 + 12288 + 512 + 128)) / 81920, 3)),   # 80 GB: chunk 8192, graphs 256
    (80 * 1024, 8, round((81920 - (512 + 12288 + 1024 + 1024)) / 81920, 3)),  # tp 8: graphs 512
    (141 * 1024, 1, round((144384 - (512 + 12288 + 512 + 128)) / 144384, 3)),
    (16 * 1024, 1, round((16384 - (512 + 3072 + 16 + 128)) / 16384, 3)),     # under 20 GB: graphs 8
])
def test_sglang_default_fraction_follows_its_source(mib: int, tp: int, fraction: float) -> None:
    assert default_mem_fraction_static(mib * MiB, tp)[0] == fraction


def _qwq_tp4(**kw: object) -> object:
    # the log's GPUs: 21.63 GiB free after NCCL set-up (0.13 GiB), mem_fraction_static 0.85 (that release's
    # default at tp 4)
    return estimate_inference_memory(InferenceMemoryInput(
        model="qwq-32b", precision="bf16", context=4096, engine="sglang", gpus=4,
        gpu_memory_bytes=int(21.76 * GiB), mem_fraction_static=0.85, **kw))


def test_sglang_reproduces_a_published_start_up_log() -> None:
    """QwQ-32B, tensor parallel 4 (SGLang, 2025-03; the log in didier-durand/llms-in-clouds): weights 15.54 GB
    per rank, "KV Cache is allocated. #tokens: 46611", 65,536 B per token per rank (64 layers × 2 KV heads ×
    128 × 2 × 2 B)."""
    r = _qwq_tp4()
    assert r.kv_bytes_per_token == 64 * 2 * 128 * 2 * 2
    assert abs(r.kv_capacity_tokens / 46611 - 1) < 0.12  # our weights are 0.28 GiB under the logged 15.54
    pool = int((21.76 * GiB - 0.13 * GiB) * 0.85)
    assert r.reserved_bytes == pool
    # with the log's own weights the pool arithmetic lands on its token count
    assert abs((pool - 15.54 * GiB) / r.kv_bytes_per_token / 46611 - 1) < 0.01


def test_sglang_pages_single_tokens_and_keeps_activations_outside_the_pool() -> None:
    r = _qwq_tp4(batch=3)
    assert r.kv_blocks is None
    assert r.kv_capacity_tokens == r.kv_budget_bytes // r.kv_bytes_per_token
    assert r.breakdown.activations == 0
    assert r.max_context_tokens is not None and r.max_context_tokens % 16 != 0  # no 16-token blocks


def test_sglang_takes_the_kv_dtypes_it_offers() -> None:
    fp8 = _qwq_tp4(kv_dtype="fp8")
    assert fp8.kv_bytes_per_token == 64 * 2 * 128 * 2
    with pytest.raises(ToolError, match="q8_0"):
        _qwq_tp4(kv_dtype="q8_0")


def test_sglang_and_vllm_budget_the_same_card_by_their_own_rules() -> None:
    """Same card, same model: vLLM subtracts a profiled activation peak inside 92 %, SGLang keeps its
    activations in the 15 % outside its pool; both must say whether the request fits."""
    kw = dict(model="llama-3.1-8b", precision="bf16", context=8192, gpu="RTX 4090")
    v = estimate_inference_memory(InferenceMemoryInput(engine="vllm", **kw))
    s = estimate_inference_memory(InferenceMemoryInput(engine="sglang", **kw))
    assert v.fits and s.fits
    assert s.reserved_bytes < v.reserved_bytes  # 0.847 of the card against 0.92
    assert [t.name for t in s.terms if t.name.endswith("_reservation")] == ["sglang_reservation"]


@pytest.mark.parametrize(("text", "said"), [
    ("我用 SGLang 部署 Qwen2.5-72B 的 AWQ，4 张 L40S 能放下吗？并发 16，上下文 8k", "按 SGLang 的显存分配"),
    ("Serving Llama-3.1-70B FP8 with SGLang on 2x H100 — how many concurrent 8k requests fit?",
     "memory follows SGLang's accounting"),
])
def test_a_user_who_names_sglang_is_sized_by_its_rules(text: str, said: str) -> None:
    from advisor import Advisor

    adv = Advisor(search_k=0)
    reply = adv.reply(text, adv.new_session())
    sized = [c for c in reply.tool_calls if c.name == "size_inference" and c.ok]
    assert sized and sized[0].arguments["engine"] == "sglang"
    assert said in reply.text and "vLLM" not in reply.text.split("\n\n")[0]
