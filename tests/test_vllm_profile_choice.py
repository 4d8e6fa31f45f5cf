"""Which vLLM start-up accounting is the default, decided on published logs (issue 22).

Row 8 (vLLM 0.7-era V1, A100-40GB) logged 11.12 concurrent 8k sequences; it is reproduced only when the profile
run puts the LM head over every profiled token. A V0 log (vllm #10517, RTX 3090, Llama-3.1-8B bf16, 23.58 GiB ×
0.90) logged a 3.81 GiB KV cache at max_model_len 20,000: under the every-token accounting the logits alone
(20,000 × 128,256 × 8.5 B ≈ 20 GiB) would leave nothing, so that vLLM did not do it. The default follows the
sampler-only accounting; the CLI keeps the other for 0.7-era versions.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.units import GiB


def _v0_3090(all_tokens: bool) -> float:
    r = estimate_inference_memory(InferenceMemoryInput(
        model="llama-3.1-8b", precision="bf16", context=20000, engine="vllm", gpu_memory_bytes=int(23.58 * GiB),
        gpu_memory_utilization=0.90, max_num_batched_tokens=20000, profile_logits_all_tokens=all_tokens))
    return (r.kv_budget_bytes or 0) / GiB


def test_the_default_accounting_matches_the_v0_log_and_the_other_cannot() -> None:
    assert abs(_v0_3090(False) / 3.81 - 1) < 0.15
    assert _v0_3090(True) < 0  # would not even start: contradicted by the log


def _cli(*extra: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "size", "--model", "Meta-Llama-3-8B", "--precision", "bf16",
         "--context", "8192", "--engine", "vllm", "--gpu-memory-gib", "39.5", "--gpu-memory-utilization", "0.9",
         "--json", *extra], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_cli_reproduces_row_8_with_the_all_tokens_profile() -> None:
    assert abs(_cli("--vllm-profile", "all-tokens")["max_concurrency"] / 11.12 - 1) < 0.01
    assert _cli()["max_concurrency"] > 15  # the sampler-only default leaves more for the KV cache
