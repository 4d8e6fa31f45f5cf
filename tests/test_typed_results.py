"""Typed results end to end: every tool's stored JSON re-validates into its declared output model."""

from __future__ import annotations

import pytest

from advisor.toolspec import TOOLS, run_tool, typed
from tools.inference_memory import InferenceMemoryResult

CALLS = {
    "size_inference": {"model": "llama-3.1-8b", "gpu": "RTX 4090", "context": 8192},
    "size_training": {"model": "llama-3.1-8b", "method": "lora", "gpu": "RTX 4090"},
    "perf_decode": {"model": "llama-3.1-8b", "gpu": "H100"},
    "perf_prefill": {"model": "llama-3.1-8b", "gpu": "H100"},
    "perf_serving": {"model": "llama-3.1-8b", "gpu": "H100"},
    "training_time": {"model": "llama-3.1-8b", "gpu": "H100", "tokens": 1e9},
    "scientific_fp64": {"gpu": "A100", "problem": "dense-lu", "n": 20000},
    "check_build": {"gpus": [{"gpu": "RTX 4090", "count": 2}]},
    "recommend": {"workload": "inference", "model": "llama-3.1-8b", "budget_usd": 5000},
    "gpu_info": {"name": "H100"},
    "model_info": {"name": "qwen2.5-72b"},
    "platform_info": {"name": "TRX50"},
    "find_gpus": {"supports": "fp8"},
    "affordable": {"budget_usd": 10000},
    "value_for_money": {"options": [{"gpu": "H100"}, {"gpu": "H200"}]},
    "best_value": {},
    "rent_vs_buy": {"gpu": "H100", "count": 8},
    "machine_cost": {"gpu": "RTX 4090", "count": 2, "hours_per_day": 8, "years": 3},
    "api_cost": {"api": "gpt-4o-mini", "daily_input_tokens": 3e7, "daily_output_tokens": 5e6,
                 "machine": {"gpu": "RTX 4090", "count": 2, "hours_per_day": 12}},
    "ttft_under_load": {"model": "llama-3.1-8b", "gpu": "H100", "users": 50},
    "pooled_fit": {"model": "qwen2.5-14b", "cards": [{"gpu": "RTX 3090", "count": 1}, {"gpu": "RTX 4080"}]},
    "plan_network": {"gpu": "H100", "nodes": 2, "workload": "training", "nic_included": True},
    "rental_prices": {"gpu": "H100 SXM", "currency": "CNY", "providers": ["RunPod"]},
    "system_info": {"name": "DGX B200", "currency": "CNY"},
    "rent_choices": {"workload": "training", "model": "qwen2.5-7b", "method": "lora", "dataset_tokens": 1e8},
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_stored_result_revalidates_into_the_declared_model(name: str) -> None:
    call = run_tool(name, CALLS[name])
    assert call.ok, call.error
    spec = TOOLS[name]
    out = typed(call, spec.output_model)
    assert isinstance(out, spec.output_model)
    # the typed value is the stored JSON, nothing added or lost
    assert out.model_dump(mode="json", exclude_unset=False) == spec.output_model.model_validate(call.result).model_dump(
        mode="json")


def test_every_registered_tool_but_search_declares_an_output_model() -> None:
    assert sorted(n for n in TOOLS if n != "search_knowledge") == sorted(CALLS)


def test_typed_access_reads_fields_not_keys() -> None:
    call = run_tool("size_inference", {"model": "llama-3.1-8b", "gpu": "RTX 4090", "context": 8192})
    r = typed(call, InferenceMemoryResult)
    assert r.per_gpu_bytes == call.result["per_gpu_bytes"] and r.fits is True
    assert typed(call, InferenceMemoryResult) is r  # validated once per call
