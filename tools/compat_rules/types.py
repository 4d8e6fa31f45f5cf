"""Input, output and working context of the compatibility checker.

``BuildInput`` describes a planned machine (GPUs, CPU platform, PSU, chassis, wall circuit,
workload and software); ``BuildReport`` lists the findings, each with its category, severity,
message (a note: message id and parameters, rendered in the reader's language), the numbers behind
it and a concrete fix (a note too). Rules live in one module per category and read a resolved
``BuildContext``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from knowledge.schema import GPU, Platform
from tools.errors import ToolError, shown
from tools.inference_memory import MAX_CONTEXT_SEARCH
from tools.inputs import ToolInput
from tools.result import Note, note
from tools.units import Bytes, Watts

Category = Literal[
    "power", "pcie", "physical", "cooling", "display", "interconnect", "precision", "software",
    "memory", "platform",
]
Severity = Literal["error", "warning", "info"]
Chassis = Literal["tower", "rack", "open-frame"]
Workload = Literal["training", "inference", "scientific"]
Pitfall = Literal[
    "ignoring-memory", "chasing-peak-tflops", "underrating-interconnect", "mixing-server-consumer",
]

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}

PITFALLS: tuple[str, ...] = ("ignoring-memory", "chasing-peak-tflops", "underrating-interconnect",
                             "mixing-server-consumer")


def pitfall_text(pitfall_id: str) -> Note:
    """The source guide's sentence for a pitfall, as message ``pitfall.<id>``."""
    return note(f"pitfall.{pitfall_id}")


MAX_GPUS_OF_ONE = 64  # cards of one GPU model in one build


class GPUCount(ToolInput):
    """One GPU model in the build and how many of it."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(min_length=1, description="catalog name or alias, e.g. 'RTX 4090'")
    count: int = Field(1, ge=1, le=MAX_GPUS_OF_ONE)
    power_limit_w: float | None = Field(None, gt=0, description="per-card power limit set with nvidia-smi "
                                                                "-pl")


class SlotLayout(ToolInput):
    """The motherboard's x16-class slots, when known."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(ge=1, le=16, description="x16-length slots wired for GPUs")
    spacing: int = Field(2, ge=1, le=4, description="slot positions from one x16 slot to the next")


class Mains(ToolInput):
    """A wall circuit: nominal voltage and breaker current."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    volts: float = Field(gt=0)
    amps: float = Field(gt=0)
    phases: Literal[1, 3] = Field(1, description="3: a three-phase feed, volts line to line (power = √3 · V · A)")

    @property
    def label(self) -> str:
        return f"{self.volts:g} V / {self.amps:g} A" + (" 3φ" if self.phases == 3 else "")

    @property
    def peak_w(self) -> float:
        return self.volts * self.amps * (math.sqrt(3) if self.phases == 3 else 1.0)

    @property
    def continuous_limit_w(self) -> float:
        """80 % rule for continuous loads (NEC 210.19/210.20; same practice on 220–230 V outlets)."""
        return round(self.peak_w * 0.8, 1)


_MAINS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*v?\s*[-/,x×\s]*\s*(\d+(?:\.\d+)?)\s*a\s*"
                       r"(?:[-\s,]*(3p|3-phase|three-phase|三相))?\s*$", re.IGNORECASE)


def parse_mains(text: str) -> Mains:
    """'120v-15a', '230V 16A', '220 V / 10 A' → Mains; ToolError with examples otherwise."""
    m = _MAINS_RE.match(text.replace("伏", "v").replace("安", "a"))
    if not m:
        raise ToolError(
            f"cannot read the wall circuit {shown(text)}",
            suggestions=["120v-15a", "120v-20a", "220v-10a", "230v-16a"],
        )
    volts, amps = float(m.group(1)), float(m.group(2))
    if not (90 <= volts <= 480) or not (1 <= amps <= 100):
        raise ToolError(f"implausible wall circuit {shown(text)} ({volts:g} V, {amps:g} A)",
                        suggestions=["120v-15a", "230v-16a"])
    return Mains(volts=volts, amps=amps, phases=3 if m.group(3) else 1)


class BuildInput(ToolInput):
    """A planned machine. Unknown items are None and the checker says what it assumed."""

    model_config = ConfigDict(extra="forbid")

    gpus: list[GPUCount] = Field(min_length=1)
    platform: str | None = Field(None, description="CPU / platform name from the platform catalog")
    slots: SlotLayout | None = None
    psu_w: float | None = Field(None, gt=0, description="total PSU rating, all PSUs together")
    psu_efficiency: float = Field(0.9, gt=0.5, le=1.0, description="at load; 0.9 ≈ 80 Plus Gold/Platinum")
    max_wall_w: float | None = Field(None, gt=0, le=200_000, description="a cap on one machine's draw at the wall, "
                                                                          "W (the room's per-server limit)")
    chassis: Chassis | None = None
    case_max_gpu_length_mm: float | None = Field(None, gt=0)
    other_load_w: float = Field(0.0, ge=0, le=100_000, description="other equipment already on the same wall "
                                                                 "circuit, W (what is left for the machine)")
    mains: str | None = Field(None, description="'120v-15a', '120v-20a', '220v-10a', '230v-16a', '230V 16A' "
                                                "…")
    machines: int = Field(1, ge=1, le=4096, description="identical machines sharing the wall circuits (a lab's "
                                                        "30 workstations)")
    circuits: int = Field(1, ge=1, le=256, description="wall circuits of `mains` the machines share")
    workload: Workload | None = None
    precision: str | None = Field(None, description="bf16, fp16, fp8, fp4/nvfp4, int8, int4/awq, Q4_K_M, "
                                                    "fp64 …")
    framework: str | None = Field(None, description="PyTorch, vLLM, TensorRT-LLM, SGLang, llama.cpp, "
                                                    "DeepSpeed, MindIE …")
    cuda_required: bool = Field(False, description="the code base depends on CUDA (custom kernels, CUDA-only "
                                                   "libs)")
    os: Literal["linux", "windows", "macos"] | None = None
    model: str | None = Field(None, description="catalog model, for the memory fit")
    context: int = Field(8192, ge=1, le=MAX_CONTEXT_SEARCH,
                         description="tokens per sequence for the inference memory fit")
    concurrency: int = Field(1, ge=1, le=1_000_000, description="concurrent sequences for the inference memory fit "
                                                                "(the sizing's own limit)")
    method: Literal["full", "lora", "qlora"] = Field("full", description="training method for the memory fit")
    problem_bytes: int | None = Field(None, gt=0, description="scientific: working-set bytes of the problem")
    nvme_drives: int | None = Field(None, ge=0, le=32)
    system_ram_gb: float | None = Field(None, gt=0)
    parallelism: Literal["tensor", "data", "pipeline"] | None = Field(
        None, description="how the GPUs share the work; default: tensor for inference, data for training"
    )

    @field_validator("mains")
    @classmethod
    def _mains_readable(cls, v: str | None) -> str | None:
        if v is not None:
            parse_mains(v)
        return v


class Finding(BaseModel):
    """One thing a knowledgeable builder would point out (frozen: the recommender shares the findings of a
    build it has already checked)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="stable rule id, shared with knowledge/data/rules.toml where a rule matches")
    category: Category
    severity: Severity
    message: Note = Field(description="what is wrong or worth knowing (message id compat.<category>.*)")
    numbers: dict[str, float | int | str | bool | None] = Field(
        default_factory=dict, description="the figures behind the finding; units in the key names"
    )
    fix: Note | None = Field(None, description="what to do (message id compat.fix.*)")
    pitfall: Pitfall | None = Field(None, description="the source guide's pitfall this finding is an "
                                                      "instance of")
    sources: list[str] = Field(default_factory=list, description="reference keys (hardware_rules.md)")

class Totals(BaseModel):
    """Whole-build figures the findings are computed from."""

    model_config = ConfigDict(extra="forbid")

    gpu_count: int
    gpu_power_w: Watts = Field(description="Σ board power (or set power limit) of all GPUs")
    cpu_power_w: Watts = Field(description="sustained CPU package power, all sockets")
    platform_overhead_w: Watts = Field(description="board, RAM, drives, fans")
    system_power_w: Watts = Field(description="gpu + cpu + overhead: sustained DC load")
    recommended_psu_w: Watts = Field(description="max(system × 1.25, vendor minimum)")
    transient_peak_w: Watts | None = Field(None, description="millisecond excursions, where measured")
    wall_draw_w: Watts = Field(description="system power / PSU efficiency, drawn from the outlet")
    continuous_limit_w: Watts | None = Field(None, description="80 % of the circuits' V × A (all circuits)")
    machines: int = Field(1, description="identical machines on those circuits")
    machines_wall_w: Watts = Field(0.0, description="all the machines at the wall")
    lanes_needed: int
    lanes_available: int | None
    gpu_slot_lanes: int | None
    link_widths: list[int] = Field(description="PCIe link width of each slot-mounted GPU, in build order")
    chipset_attached: int = Field(0, description="GPUs that would hang off the chipset (x4, shared uplink)")
    slots_needed: int | None = Field(None, description="slot positions the PCIe cards occupy")
    slots_available: int | None = None
    total_vram_bytes: Bytes = Field(description="physical bytes (vendors' GB of DRAM/HBM are GiB)")
    total_vram_label_gb: float = Field(description="Σ of the vendors' memory labels in GB")
    largest_vram_bytes: Bytes
    per_gpu_bytes: Bytes | None = Field(None, description="from the sizing engine when a model is given")
    recommended_system_ram_gb: float = Field(description="2 × total VRAM (Puget's rule)")
    min_system_ram_gb: float = Field(description="largest card's VRAM (Dettmers' minimum)")
    cpu_cores_needed: int = Field(description="max(16, 4 × GPUs) (Puget)")


class BuildReport(BaseModel):
    """The checker's answer: ok is True when no finding is an error."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    findings: list[Finding]
    totals: Totals
    assumptions: list[Note]
    formula: list[Note] = Field(default_factory=list, description="how the totals were computed")

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    def by_id(self, rule_id: str) -> list[Finding]:
        return [f for f in self.findings if f.id == rule_id]


@dataclass(frozen=True)
class Card:
    """A resolved GPU entry of the build."""

    gpu: GPU
    count: int
    power_w: float  # per card: power limit if set, else board power


@dataclass
class BuildContext:
    """Everything the rules read: the input, resolved entries, and computed totals."""

    inp: BuildInput
    cards: list[Card]
    platform: Platform | None
    mains: Mains | None
    precision_name: str | None
    framework: str | None  # canonical key, see software.FRAMEWORKS
    assumptions: list[Note] = field(default_factory=list)
    totals: Totals | None = None
    per_gpu_bytes: int | None = None
    memory_result: object | None = None  # sizing-engine result, kept for the memory rule

    @property
    def gpu_count(self) -> int:
        return sum(c.count for c in self.cards)

    @property
    def multi_gpu(self) -> bool:
        return self.gpu_count > 1

    @property
    def parallelism(self) -> str | None:
        if self.inp.parallelism:
            return self.inp.parallelism
        if not self.multi_gpu:
            return None
        return "data" if self.inp.workload == "training" else "tensor"

    def assume(self, item: Note) -> None:
        """Record an assumption once (a note equal in id and parameters is not repeated)."""
        if item not in self.assumptions:
            self.assumptions.append(item)


def finding(
    rule_id: str,
    category: Category,
    severity: Severity,
    message: Note,
    fix: Note | None,
    numbers: Mapping[str, float | int | str | bool | None] | None = None,
    pitfall: Pitfall | None = None,
    sources: list[str] | None = None,
) -> Finding:
    """Build a Finding; float numbers are rounded to 3 decimals."""
    clean = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in (numbers or {}).items()}
    return Finding(
        id=rule_id, category=category, severity=severity, message=message, numbers=clean, fix=fix,
        pitfall=pitfall, sources=sources or [],
    )


def joined(items: Sequence[str | Note], sep: str = "comma") -> str | Note:
    """Items as one phrase, joined in the reader's language: ``sep`` 'comma' gives 'a, b' / 'a、b',
    'clause' gives 'a, b' / 'a，b' (message ``compat.list.<sep>``, nested one item at a time)."""
    if not items:
        return ""
    head, *rest = items
    if not rest:
        return head
    return note(f"compat.list.{sep}", head=head, tail=joined(rest, sep))
