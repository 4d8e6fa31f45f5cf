"""Double-precision (FP64) scientific computing: memory and time for the user's problem size.

* dense LU factorisation of an N×N matrix (HPL-style): 8·N² bytes, 2/3·N³ FLOPs;
* dense matrix multiply C = A·B: three N×N matrices, 24·N² bytes, 2·N³ FLOPs;
* grid / stencil codes: cells × variables × 8 B × time levels; each step reads and writes the
  state (bandwidth-bound), optionally with a FLOP count per cell and step.

Distributed over ``count`` GPUs the data are split evenly (block-cyclic for LU, domain
decomposition for grids); communication is not modelled. FP64 peak is the best the catalog
records (tensor-core FP64 where it exists); consumer GPUs run FP64 at 1/64 of FP32.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowledge.schema import GPU
from tools.efficiency import FP64_EFFICIENCY
from tools.errors import ToolError
from tools.gpu_memory import engine_visible_bytes
from tools.inputs import ToolInput
from tools.result import Note, Term, note
from tools.units import TFLOPS, Bytes, Seconds

Problem = Literal["dense-lu", "dense-gemm", "grid"]


class ScientificInput(ToolInput):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    gpu: GPU
    count: int = Field(1, ge=1, le=100_000)
    problem: Problem
    n: int | None = Field(None, ge=1, le=100_000_000, description="matrix order N (dense problems)")
    cells: float | None = Field(None, ge=1, le=1e15, description="grid cells")
    variables: int = Field(1, ge=1, le=10_000, description="doubles per cell")
    time_levels: int = Field(2, ge=1, le=16)
    steps: int = Field(1, ge=1, le=10**12)
    flops_per_cell_step: float | None = Field(None, ge=0, le=1e9)  # real stencils take tens to thousands
    efficiency: float | None = Field(None, gt=0, le=1, description="share of FP64 peak (grid: of bandwidth)")

    @model_validator(mode="after")
    def _check(self) -> ScientificInput:
        if self.problem.startswith("dense") and self.n is None:
            raise ToolError(note("error.fp64.needs_n", problem=self.problem))
        if self.problem == "grid" and self.cells is None:
            raise ToolError(note("error.fp64.needs_cells"))
        return self


class ScientificResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["fp64"] = "fp64"
    problem: Problem
    memory_bytes: Bytes
    per_gpu_bytes: Bytes
    gpus: int
    fits: bool
    flops: float
    seconds: Seconds | None
    fp64_tflops: TFLOPS | None
    efficiency: float
    bound: Literal["compute", "memory", "unknown"]
    ecc: bool | None
    terms: list[Term]
    assumptions: list[Note | str] = Field(description="this tool's notes and the engine-visible memory note")
    warnings: list[Note]


def estimate_fp64(inp: ScientificInput) -> ScientificResult:
    """Memory, FLOPs and time of an FP64 problem on ``count`` GPUs."""
    gpu, c = inp.gpu, inp.count
    warnings: list[Note] = []
    eff = inp.efficiency or FP64_EFFICIENCY[inp.problem]
    mem: float  # bytes (an int for the dense problems)
    flops: float
    if inp.problem == "dense-lu":
        n = inp.n or 0
        mem, flops = 8 * n**2, 2 / 3 * n**3
        mem_f, flops_f = note("perf.formula.fp64_memory_lu", n=n), note("perf.formula.fp64_flops_lu")
        bytes_moved = 0.0
    elif inp.problem == "dense-gemm":
        n = inp.n or 0
        mem, flops = 3 * 8 * n**2, 2 * n**3
        mem_f, flops_f = note("perf.formula.fp64_memory_gemm", n=n), note("perf.formula.fp64_flops_gemm")
        bytes_moved = 0.0
    else:
        cells = inp.cells or 0
        state = cells * inp.variables * 8
        mem = state * inp.time_levels
        flops = (inp.flops_per_cell_step or 0) * cells * inp.steps
        mem_f = note("perf.formula.fp64_memory_grid", cells=cells, variables=inp.variables, levels=inp.time_levels)
        flops_f = note("perf.formula.fp64_flops_grid", flops_per_cell=inp.flops_per_cell_step or 0, steps=inp.steps)
        bytes_moved = mem * inp.steps  # every step reads the old levels and writes the new one
    per_gpu = mem / c
    visible, visible_note = engine_visible_bytes(gpu)
    fits = per_gpu <= visible
    fp64 = gpu.throughput.fp64
    seconds: float | None = None
    bound: Literal["compute", "memory", "unknown"] = "unknown"
    terms = [
        Term(
            name="memory",
            value=mem,
            unit="bytes",
            formula=mem_f,
            explain=note("perf.explain.fp64_memory"),
        ),
        Term(
            name="per GPU",
            value=per_gpu,
            unit="bytes",
            formula=note("perf.formula.fp64_per_gpu", count=c),
            explain=note("perf.explain.fp64_per_gpu"),
        ),
        Term(
            name="FLOPs",
            value=flops,
            unit="FLOP",
            formula=flops_f,
            explain=note("perf.explain.fp64_flops"),
        ),
    ]
    if inp.problem == "grid":
        t_mem = bytes_moved / (c * gpu.bandwidth_gbs * 1e9 * eff)
        t_cmp = flops / (c * fp64 * 1e12 * FP64_EFFICIENCY["dense-gemm"]) if (fp64 and flops) else 0.0
        seconds = max(t_mem, t_cmp)
        bound = "memory" if t_mem >= t_cmp else "compute"
        terms.append(
            Term(
                name="time",
                value=seconds,
                unit="s",
                formula=note("perf.formula.fp64_time_grid", count=c, bandwidth=gpu.bandwidth_gbs, efficiency=eff),
                explain=note("perf.explain.fp64_time_grid"),
            )
        )
    elif fp64:
        seconds = flops / (c * fp64 * 1e12 * eff)
        bound = "compute"
        terms.append(
            Term(
                name="time",
                value=seconds,
                unit="s",
                formula=note("perf.formula.fp64_time_dense", count=c, fp64=fp64, efficiency=eff),
                explain=note("perf.explain.fp64_time_dense"),
            )
        )
    if not fp64:
        warnings.append(
            note("perf.fp64.no_figure" if inp.problem != "grid" else "perf.fp64.no_figure_grid", gpu=gpu.name)
        )
    else:
        fp32 = gpu.throughput.fp32
        if (fp32 and fp64 <= fp32 / 16) or (not fp32 and fp64 < 2):
            warnings.append(
                note("perf.fp64.weak_ratio", gpu=gpu.name, ratio=fp32 / fp64)
                if fp32
                else note("perf.fp64.weak", gpu=gpu.name)
            )
    if gpu.ecc is False:
        warnings.append(note("perf.fp64.no_ecc", gpu=gpu.name))
    if not fits:
        warnings.append(note("perf.fp64.too_big", need_gib=per_gpu / 2**30, gpu=gpu.name, offer_gib=visible / 2**30))
    assumptions: list[Note | str] = [
        note(f"perf.fp64.efficiency_{'bandwidth' if inp.problem == 'grid' else 'peak'}", efficiency=eff),
        note("perf.fp64.peak"),
        visible_note,
        note("perf.fp64.ecc_yes" if gpu.ecc else "perf.fp64.ecc_no" if gpu.ecc is False else "perf.fp64.ecc_unknown"),
    ]
    if c > 1:
        assumptions.append(note("perf.fp64.split"))
    return ScientificResult(
        problem=inp.problem,
        memory_bytes=round(mem),
        per_gpu_bytes=min(round(per_gpu), round(mem)),  # float rounding near 2**56 must not give more than the whole
        gpus=c,
        fits=fits,
        flops=flops,
        seconds=seconds,
        fp64_tflops=fp64,
        efficiency=eff,
        bound=bound,
        ecc=gpu.ecc,
        terms=terms,
        assumptions=assumptions,
        warnings=warnings,
    )
