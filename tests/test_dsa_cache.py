"""DeepSeek-V3.2's cache as the engines lay it out (issue 36, defect 2 and item 5).

By hand (DeepSeek-V3.2 config: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64, index_head_dim 128):
- The sparse-attention kernels' FP8 latent: 512 FP8 bytes + one fp32 scale per 128 of them (16 B) + 64 RoPE
  values in bf16 (128 B) = 656 B a layer (vLLM's fp8_ds_mla layout); the lightning indexer adds 128 + 4 = 132 B.
  (656 + 132) × 61 = 48,068 B a token; the plain FP8 latent (576 B) would be 8 % short.
- SGLang caches this model in FP8 by default: bf16 would be (1,152 + 132) × 61 = 78,324 B, +63 % on the log.
- The knowledge card's KV per token is the sizing's, indexer included.
"""

from __future__ import annotations

from knowledge import load_catalog
from knowledge.cards import _kv_at
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.kv_cache import kv_bytes_per_token
from tools.modelspec import ModelSpec

V32 = ModelSpec.from_catalog("deepseek-v3.2")


def test_the_fp8_latent_keeps_its_scales_and_a_bf16_rope_part() -> None:
    assert kv_bytes_per_token(V32, "fp8") == (512 + 16 + 128 + 132) * 61 == 48_068
    assert kv_bytes_per_token(ModelSpec.from_catalog("deepseek-r1"), "fp8") == (512 + 64) * 61  # no DSA: plain FP8


def test_sglang_caches_a_dsa_model_in_fp8_by_default() -> None:
    r = estimate_inference_memory(InferenceMemoryInput(model="deepseek-v3.2", engine="sglang", gpus=8,
                                                       gpu="h200-sxm", context=32768))
    assert r.kv_dtype.startswith("fp8")
    assert r.kv_bytes_per_token == 48_068
    vllm = estimate_inference_memory(InferenceMemoryInput(model="deepseek-v3.2", engine="vllm", gpus=8,
                                                          gpu="h200-sxm", context=32768))
    assert kv_bytes_per_token(V32, vllm.kv_dtype) == vllm.kv_bytes_per_token


def test_the_model_card_counts_the_indexer_like_the_sizing() -> None:
    assert _kv_at(load_catalog().model("deepseek-v3.2"), 1) == kv_bytes_per_token(V32, "bf16") == 78_324
