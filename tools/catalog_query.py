"""Catalog filters: "which GPUs support FP8 / have NVLink / have ECC / hold 48 GB or more?"

``find_gpus(FindGPUsInput) -> FindGPUsResult`` lists the catalog GPUs that meet every condition, largest
memory first, with the dense throughput of the precision asked about. Support is what the catalog
records: a dense figure means a hardware path; a precision in ``unsupported`` means none; neither
means unknown (listed separately, never counted as support).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from knowledge.schema import GPU, Precision

Feature = Literal["nvlink", "ecc", "fp64", "mig", "display"]
_LINKS = ("nvlink", "nvlink-bridge", "infinity-fabric", "hccs", "mlu-link", "mtlink", "metaxlink", "blink")
MAX_LISTED = 60


class FindGPUsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    supports: Precision | None = Field(None, description="a precision with a hardware path (fp8, fp4, bf16 …)")
    feature: Feature | None = Field(None, description="nvlink = any GPU-to-GPU link beyond PCIe")
    vendor: str | None = Field(None, description="NVIDIA, AMD, Intel, Huawei …")
    domestic: bool | None = None
    min_memory_gb: float | None = Field(None, gt=0, le=10_000, description="vendor GB as on the datasheet")


class GPUEntry(BaseModel):
    id: str
    name: str
    vendor: str
    tier: str
    memory_gb: float
    tflops: float | None = Field(None, description="dense TFLOPS of the precision asked about")
    as_of: str
    confidence: str


class FindGPUsResult(BaseModel):
    matches: list[GPUEntry]
    unknown: list[str] = Field(default_factory=list, description="names whose support the catalog does not record")
    total: int = Field(description="catalog GPUs considered")
    criteria: dict[str, str | float | bool]
    formula: str
    assumptions: list[str]


def _feature(g: GPU, feature: Feature) -> bool | None:
    if feature == "nvlink":
        return g.interconnect.kind in _LINKS
    if feature == "ecc":
        return g.ecc
    if feature == "fp64":
        value = g.throughput.get(Precision.fp64)
        return None if value is None else value >= 1.0
    if feature == "mig":
        return g.mig
    return (g.display_outputs or 0) > 0


def find_gpus(inp: FindGPUsInput) -> FindGPUsResult:
    """The catalog GPUs that meet every condition, largest memory first."""
    gpus = load_catalog().gpus
    matches: list[GPUEntry] = []
    unknown: list[str] = []
    for g in gpus:
        if inp.vendor and g.vendor.lower() != inp.vendor.lower():
            continue
        if inp.domestic is not None and g.domestic != inp.domestic:
            continue
        if inp.min_memory_gb and g.memory_gb < inp.min_memory_gb:
            continue
        verdicts = []
        if inp.supports is not None:
            verdicts.append(g.supports(inp.supports))
        if inp.feature is not None:
            verdicts.append(_feature(g, inp.feature))
        if False in verdicts:
            continue
        if None in verdicts:
            unknown.append(g.name)
            continue
        tflops = g.throughput.get(inp.supports) if inp.supports is not None else None
        matches.append(GPUEntry(id=g.id, name=g.name, vendor=g.vendor, tier=str(g.tier), memory_gb=g.memory_gb,
                                tflops=tflops, as_of=str(g.as_of), confidence=g.confidence))
    matches.sort(key=lambda e: (-e.memory_gb, -(e.tflops or 0), e.name))
    criteria: dict[str, str | float | bool] = {k: (str(v) if isinstance(v, Precision) else v)
                                               for k, v in inp.model_dump(exclude_none=True).items()}
    return FindGPUsResult(
        matches=matches[:MAX_LISTED], unknown=unknown, total=len(gpus), criteria=criteria,
        formula="supports(p) = the catalog has a dense figure for p and p is not marked unsupported",
        assumptions=["dense (non-sparse) throughput", "support as recorded in the catalog on its as-of dates"],
    )
