"""DeepSpeed's ZeRO "model states" estimators, reproduced formula for formula.

DeepSpeed ships ``estimate_zero2_model_states_mem_needs`` (``runtime/zero/stage_1_and_2.py``)
and ``estimate_zero3_model_states_mem_needs`` (``runtime/zero/stage3.py``). They count fp16
parameters, gradients and optimizer states only — no activations, buffers or fragmentation —
and multiply host-side figures by a 1.5 "buffer factor". DeepSpeed *prints* the results as
"GB" but divides by 2**30, so its "GB" are GiB; we return bytes and let callers label them.

Symbols: P = total parameters, LL = parameters of the largest single module (``recurse=False``,
usually the token embedding), N = total GPUs, gpn = GPUs per node, nodes = number of nodes.

* ZeRO-2, optimizer offloaded to CPU: GPU = 2P; CPU = P·max(4N, 16)·1.5
* ZeRO-2, no offload (current code, since PR #5099, April 2024): GPU = 2P + 18P/N
  (2 fp16 params; 18 = 2 fp16 grads + 4 fp32 grads + 4 fp32 params + 8 Adam states, sharded);
  before PR #5099: GPU = 4P + 16P/N. CPU = 4P·gpn·1.5 (every rank loads the fp32 model).
* ZeRO-3 (LLmem = 4·LL: the gathered fp16 params and fp16 grads of the largest layer):
  offload params + optimizer: GPU = LLmem; CPU = 18P/nodes·1.5 (zero_init) else P·max(4·gpn, 18/nodes)·1.5
  offload optimizer only:     GPU = LLmem + 2P/N; CPU = 16P/nodes·1.5 or P·max(4·gpn, 16/nodes)·1.5
  no offload:                 GPU = LLmem + 18P/N; CPU = LL·4·gpn·1.5 or 4P·gpn·1.5
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.errors import ToolError
from tools.inputs import ToolInput
from tools.units import Bytes

DEFAULT_BUFFER_FACTOR = 1.5


class DeepSpeedEstimateInput(ToolInput):
    """Inputs of DeepSpeed's estimator functions (parameter counts, not bytes)."""

    model_config = ConfigDict(extra="forbid")

    total_params: int = Field(gt=0)
    largest_layer_params: int = Field(0, ge=0, description="needed by ZeRO-3 only")
    stage: Literal[2, 3]
    gpus_per_node: int = Field(1, ge=1)
    nodes: int = Field(1, ge=1)
    offload_optimizer: bool = False
    offload_params: bool = Field(False, description="ZeRO-3 only")
    zero_init: bool = Field(True, description="ZeRO-3: build the model already partitioned")
    buffer_factor: float = Field(DEFAULT_BUFFER_FACTOR, ge=1.0)
    formula: Literal["current", "pre-5099"] = Field(
        "current", description="ZeRO-2 no-offload GPU formula before/after DeepSpeed PR #5099"
    )

    @model_validator(mode="after")
    def _check(self) -> DeepSpeedEstimateInput:
        if self.stage == 2 and self.offload_params:
            raise ValueError("parameter offload needs ZeRO stage 3")
        if self.stage == 3 and self.largest_layer_params <= 0:
            raise ValueError("ZeRO-3 needs largest_layer_params")
        return self


class DeepSpeedEstimate(BaseModel):
    """Per-GPU and per-node CPU bytes, as DeepSpeed's estimator computes them."""

    model_config = ConfigDict(extra="forbid")

    gpu_bytes: Bytes
    cpu_bytes: Bytes
    gpu_formula: str
    cpu_formula: str


def deepspeed_model_states(inp: DeepSpeedEstimateInput) -> DeepSpeedEstimate:
    """Model-state memory per GPU and CPU RAM per node, exactly as DeepSpeed's estimator."""
    p, ll, gpn, nodes, bf = (
        inp.total_params,
        inp.largest_layer_params,
        inp.gpus_per_node,
        inp.nodes,
        inp.buffer_factor,
    )
    n = gpn * nodes
    gpu: float
    cpu: float
    if inp.stage == 2:
        if inp.offload_optimizer:
            gpu, gf = 2 * p, "2·P"
            cpu, cf = p * max(4 * n, 16) * bf, "P·max(4·N, 16)·buffer"
        else:
            if inp.formula == "current":
                gpu, gf = 2 * p + 18 * p / n, "2·P + 18·P/N"
            else:
                gpu, gf = 4 * p + 16 * p / n, "4·P + 16·P/N (before DeepSpeed PR #5099)"
            cpu, cf = 4 * p * gpn * bf, "4·P·gpus_per_node·buffer"
        return DeepSpeedEstimate(gpu_bytes=round(gpu), cpu_bytes=round(cpu), gpu_formula=gf, cpu_formula=cf)

    ll_mem = 4 * ll
    if inp.offload_params and inp.offload_optimizer:
        gpu, gf = ll_mem, "4·LL"
        if inp.zero_init:
            cpu, cf = 18 * p / nodes * bf, "18·P/nodes·buffer"
        else:
            cpu, cf = p * max(4 * gpn, 18 / nodes) * bf, "P·max(4·gpus_per_node, 18/nodes)·buffer"
    elif inp.offload_optimizer:
        gpu, gf = ll_mem + 2 * p / n, "4·LL + 2·P/N"
        if inp.zero_init:
            cpu, cf = 16 * p / nodes * bf, "16·P/nodes·buffer"
        else:
            cpu, cf = p * max(4 * gpn, 16 / nodes) * bf, "P·max(4·gpus_per_node, 16/nodes)·buffer"
    elif inp.offload_params:
        raise ToolError("DeepSpeed's estimator has no params-only offload row; offload the optimizer too")
    else:
        gpu, gf = ll_mem + 18 * p / n, "4·LL + 18·P/N"
        if inp.zero_init:
            cpu, cf = ll * 4 * gpn * bf, "LL·4·gpus_per_node·buffer"
        else:
            cpu, cf = 4 * p * gpn * bf, "4·P·gpus_per_node·buffer"
    return DeepSpeedEstimate(gpu_bytes=round(gpu), cpu_bytes=round(cpu), gpu_formula=gf, cpu_formula=cf)
