"""A scientific code runs only where it has a GPU build (knowledge/data/codes, with the builds' sources):
VASP and Quantum ESPRESSO are NVIDIA-only (OpenACC / CUDA Fortran); AlphaFold 3 documents NVIDIA, OpenFold and
ColabFold run on PyTorch / JAX ROCm builds too; GROMACS, LAMMPS and RELION have CUDA,
HIP and SYCL builds (NVIDIA, AMD, Intel GPUs); CP2K and OpenFOAM's GPU solvers CUDA and HIP. No code documents
a build for Ascend, Cambricon or the other Chinese stacks; Hygon's DTK compiles HIP code, so DCUs take the HIP
builds."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from advisor.engine import Advisor
from knowledge import load_catalog
from tests.fakes.script import one, turn
from tools.compat_rules.software import stack_family
from tools.recommend import RecommendInput, recommend


def _stacks(code: str, **kw: object) -> set[str]:
    rec = recommend(RecommendInput(workload="scientific", code=code, **kw))  # type: ignore[arg-type]
    return {stack_family(load_catalog().gpu(o.gpu_id)) for o in rec.options}


def test_each_code_is_offered_only_on_stacks_it_has_builds_for() -> None:
    assert _stacks("vasp") == {"cuda"}
    assert _stacks("gromacs", region="global") >= {"cuda", "rocm-cdna", "rocm-rdna", "xpu"}
    assert "xpu" not in _stacks("cp2k", region="global")
    assert _stacks("lammps", domestic_only=True, region="cn") == {"dtk"}


def test_a_code_sets_its_own_fp64_need_and_kind() -> None:
    vasp = recommend(RecommendInput(workload="scientific", code="VASP", budget_usd=60_000))
    md = recommend(RecommendInput(workload="scientific", code="gromacs", budget_usd=20_000))
    assert {o.fp64_tflops is not None for o in vasp.options} == {True}  # FP64 on tensor cores (H100 PCIe: 51)
    # as many as $60k buys, each at its tensor-core FP64
    assert any(o.gpu_id == "h100-pcie" and (o.fp64_tflops or 0) / o.count == 51 for o in vasp.options)
    assert md.options and all(o.fp64_tflops is None for o in md.options)


def test_an_unknown_code_is_a_clear_error() -> None:
    with pytest.raises(ValidationError, match="unknown scientific code 'NAMDX' — try: one of: AlphaFold"):
        RecommendInput(workload="scientific", code="NAMDX")


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_the_chat_names_the_builds_and_passes_the_code(adv: Advisor) -> None:
    r = turn(adv, adv.new_session(), "信创要求，跑 LAMMPS，预算 50 万")
    rec = one(r, "recommend")
    assert rec.arguments["code"] == "lammps" and {o["vendor"] for o in rec.result["options"]} == {"Hygon"}
    assert "海光 DCU" in r.text and "ROCm / HIP（AMD）" in r.text
