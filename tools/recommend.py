"""Recommender: what should I buy for this workload, budget and constraints?

``recommend(RecommendInput) -> Recommendation`` walks every catalog GPU at the counts a real build
uses (1/2/4 for desktop and workstation cards, 1/2/4/8 for datacenter PCIe cards, 4/8 for
SXM/OAM/module parts that only come on baseboards), and for each GPU keeps the *smallest* count
that passes every gate, in this order:

1. constraints — vendor, CUDA required, domestic only, form factor / chassis;
2. memory — the sizing engine (inference: per-GPU weights + KV + activations with tensor parallel;
   training: model states + activations, ZeRO-3 for full fine-tuning on several GPUs; scientific:
   the FP64 problem split over the GPUs); a miss moves on to the next count;
3. interconnect — tensor-parallel inference over 4+ GPUs without P2P is ruled out;
4. performance targets — decode tokens/s (inference) or the deadline (training);
5. compatibility — the checker on a sensible default build (platform, chassis, PSU sized by the
   rule); any error rules the configuration out;
6. power limit and budget (GPUs + an approximate host).

Survivors are ranked by a workload-specific score, deterministic with ties broken by GPU id:
inference → decode tokens/s per $1k (memory fit is a gate, so memory comes first);
training → training tokens/s per $1k, with a multi-GPU scaling factor for the interconnect;
scientific → FP64 TFLOPS per $1k (never FP16), halved without ECC.
Every rejection is kept with its reason, and every option with why it was chosen, as notes (message ids
``recommend.reject.*`` and ``recommend.why.*``) that render in the reader's language.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowledge import load_catalog
from knowledge.codes import ScientificCode, find_code, scientific_code, scientific_codes
from knowledge.markets import Region, Status, availability, markets_as_of
from knowledge.schema import GPU, FormFactor, Platform, Tier
from knowledge.stack_support import unsupported
from tools.compat import BuildInput, BuildReport, Finding, GPUCount, check_build
from tools.compat_rules.software import STACK_NAMES, resolve_framework, stack_family
from tools.compat_rules.types import MAX_GPUS_OF_ONE, Chassis, Pitfall, parse_mains, pitfall_text
from tools.errors import ToolError
from tools.gpu_memory import engine_visible_bytes
from tools.inference_memory import InferenceMemoryInput, InferenceMemoryResult, estimate_inference_memory
from tools.inputs import ToolInput
from tools.latency import LoadInput, ttft_under_load
from tools.modelspec import ModelSpec, load_model_spec
from tools.perf import DecodeInput, estimate_decode
from tools.precision import resolve_precision
from tools.pricing import (
    CNY_PER_USD,
    FX_AS_OF,
    HOST_COST_USD,
    KWH_PRICE,
    MAX_CNY_PER_USD,
    SYMBOLS,
    USD_PER_FOREIGN,
    VALUE_UNIT,
    CostInput,
    Currency,
    SaidPrice,
    cost_of_ownership,
    gpu_price,
)
from tools.rates import media_tflops
from tools.result import Note, NoteParam, note
from tools.scale_out import NODE_GPUS, ScaleOutInput, ScaleOutPlan, nodes_for, plan_scale_out
from tools.scientific import ScientificInput, estimate_fp64
from tools.training_memory import TrainingMemoryInput, estimate_training_memory
from tools.training_time import MAX_TOKENS, TrainingTimeInput, estimate_training_time
from tools.units import CNY, GB, TFLOPS, USD, Bytes, Hours, TokensPerS, Watts

RejectFn = Callable[..., None]
Stage = Literal["constraint", "market", "memory", "interconnect", "target", "compat", "power", "budget", "data"]

MAX_CLUSTER_NODES = 8  # the largest cluster a recommendation proposes (one switch of 64 ports)
CLUSTER_COUNTS = tuple(NODE_GPUS * n for n in (2, 4, MAX_CLUSTER_NODES))  # datacenter cards only: 2, 4, 8 nodes
MODULE_COUNTS = (4, 8, *CLUSTER_COUNTS)
PCIE_DC_COUNTS = (1, 2, 4, 8, *CLUSTER_COUNTS)
DESKTOP_COUNTS = (1, 2, 4)
CLUSTER_MIN_GB = 40  # 8 nodes of 16–24 GB inference cards is never the build to buy: bigger cards cost less
# Multi-GPU training scaling beyond the MFU: engineering judgement from Dettmers' lane/P2P notes; across nodes
# on one 400G rail per GPU, the same judgement as PCIe peer-to-peer inside a node.
SCALING = {"fabric": 1.0, "pcie-p2p": 0.9, "no-p2p": 0.8, "multi-node": 0.9}
NO_ECC_FACTOR = 0.5
# Software-ecosystem readiness (the seed's pitfall 2: "生态就绪度比硬件峰值性能更重要"), engineering judgement
# from the support matrices in hardware_rules.md §4: CUDA runs everything first; CDNA has official vLLM/SGLang;
# Gaudi, Ascend and RDNA rely on plugins or partial support; the other domestic stacks on vendor forks.
ECOSYSTEM = {"cuda": 1.0, "rocm-cdna": 0.9, "gaudi": 0.8, "rocm-rdna": 0.75, "ascend": 0.75, "xpu": 0.7,
             "dtk": 0.7, "mlu": 0.7, "maca": 0.7, "musa": 0.6, "corex": 0.6, "supa": 0.6, "metal": 0.7,
             "vendor": 0.5}
# Training leans harder on CUDA-first libraries (FlashAttention, bitsandbytes for QLoRA, DeepSpeed fused ops,
# Megatron), and the seed names A100/H100 the first choice for training: a steeper factor for training.
ECOSYSTEM_TRAINING = {"cuda": 1.0, "rocm-cdna": 0.85, "gaudi": 0.75, "ascend": 0.7, "rocm-rdna": 0.6, "xpu": 0.5,
                      "dtk": 0.6, "mlu": 0.6, "maca": 0.6, "musa": 0.5, "corex": 0.5, "supa": 0.5, "metal": 0.4,
                      "vendor": 0.4}


# the stack group a code's GPU build names (knowledge/data/codes): ROCm covers Instinct and Radeon alike, and Hygon's
# DTK, which compiles and runs HIP code (STACK_NAMES: 'HIP-compatible'), takes the codes' HIP builds
CODE_STACK = {"cuda": "cuda", "rocm-cdna": "rocm", "rocm-rdna": "rocm", "dtk": "rocm", "xpu": "xpu"}


def has_gpu_build(code: ScientificCode, gpu: GPU) -> bool:
    """Whether ``code`` has a GPU build for the software stack ``gpu`` runs (VASP: CUDA only, so no MI210)."""
    return CODE_STACK.get(stack_family(gpu)) in code.stacks


# Image and video generation (ComfyUI and its custom nodes, diffusers, xformers / SageAttention kernels) is written
# for CUDA first, and the other stacks' peak matrix figures are far from what those tools reach on them (engineering
# judgement, as above): off CUDA a card must offer much more compute to lead.
ECOSYSTEM_MEDIA = {**{family: 0.3 for family in ECOSYSTEM}, "cuda": 1.0, "rocm-cdna": 0.5, "rocm-rdna": 0.4,
                   "xpu": 0.35, "metal": 0.4}


def ecosystem_factor(gpu: GPU, workload: str, media: bool = False) -> float:
    """Software-readiness weight of a GPU's stack for a workload (1.0 = CUDA); ``media``: an image or video
    model (:data:`ECOSYSTEM_MEDIA`)."""
    table = ECOSYSTEM_MEDIA if media else ECOSYSTEM_TRAINING if workload == "training" else ECOSYSTEM
    return table[stack_family(gpu)]
HEADROOM_PITFALL = 0.10
NOMINAL_TOKENS = 1e9  # training throughput is the same for any dataset size; used when none is given
WEAK_FP64_SHARE = 1 / 8  # FP64 below an eighth of FP32 (L40S, A10, GeForce: 1/32–1/64): slow double precision
MIN_TRAINING_TFLOPS = 15.0  # dense FP16/BF16 below this (Pascal P40 0.18, P4) trains at a crawl: no training pick


class RecommendInput(ToolInput):
    """Workload, budget and constraints."""

    model_config = ConfigDict(extra="forbid")

    workload: Literal["inference", "training", "scientific"]
    model: str | None = Field(None, description="catalog model (inference and training)")
    precision: str | None = Field(None, description="weights (inference) or compute precision (training)")
    context: int = Field(8192, ge=1, description="tokens per sequence")
    concurrency: int = Field(1, ge=1, le=1_000_000, description="concurrent sequences (the sizing's own limit)")
    kv_dtype: Literal["fp8"] | None = Field(None, description="inference: the KV cache in FP8 (vLLM "
                                                             "--kv-cache-dtype fp8), on cards with FP8 only")
    price_currency: Literal["EUR", "GBP"] | None = Field(None, description="also price each option in this "
                                                                           "currency (a euro or pound budget)")
    display_currency: Literal["USD", "CNY"] | None = Field(None, description="the currency prices are shown in "
                                                                           "when no budget names one")
    target_tokens_per_s: float | None = Field(None, gt=0, description="aggregate decode tokens/s wanted")
    max_ttft_s: float | None = Field(None, gt=0, le=3600, description="inference: leave out options whose mean time "
                                                                      "to first token, users sending over time, is "
                                                                      "longer (tools.latency)")
    prompt_tokens: int | None = Field(None, ge=1, le=10_000_000, description="the prompt a first-token target is "
                                                                             "about; default: the context")
    min_tokens_per_s_per_user: float | None = Field(
        None, gt=0, le=1000, description="inference for several users: leave out options slower than this for each "
                                         "of the concurrent users (a reading-speed floor; a stated target is stricter)")
    method: Literal["full", "lora", "qlora"] | None = Field(None, description="training; default lora")
    dataset_tokens: float | None = Field(None, gt=0, le=MAX_TOKENS, description="training tokens (all epochs)")
    deadline_hours: float | None = Field(None, gt=0)
    fp64_required: bool = True
    fp64_kind: Literal["vector", "matrix"] | None = Field(
        None, description="which FP64 rate the code sees: the vector units (CFD, FEM, stencils, FFT) or tensor/matrix "
                          "cores (dense linear algebra); default: matrix for matrix_n, else vector")
    code: str | None = Field(None, description="scientific code (knowledge/data/codes: 'gromacs', 'VASP' …): only "
                                               "cards on a software stack it has GPU builds for; its FP64 need and "
                                               "FP64 kind unless given")
    problem_bytes: int | None = Field(None, gt=0, le=8 * 10**15, description="scientific working set, bytes")
    problem_per_gpu: bool = Field(False, description="the working set must fit each GPU (a code that runs one job "
                                                     "per GPU: AlphaFold)")
    matrix_n: int | None = Field(None, ge=1, le=100_000_000, description="scientific dense N×N double LU")
    budget_usd: float | None = Field(None, gt=0)
    budget_cny: float | None = Field(None, gt=0)
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD, allow_inf_nan=False,
                               description=f"exchange rate (default as of {FX_AS_OF})")
    vendors: list[str] = Field(default_factory=list, description="allowed vendors; empty = any")
    only_gpus: list[str] = Field(default_factory=list, description="the GPUs the buyer can consider ('only L40S or "
                                                                   "H100'), catalog names or ids; empty = any")
    exclude_gpus: list[str] = Field(default_factory=list, description="GPUs the buyer cannot get, catalog names or "
                                                                     "ids")
    said_prices: dict[str, SaidPrice] = Field(default_factory=dict, max_length=16,
                                              description="GPU id → the unit price the buyer said (replaces the "
                                                          "catalog's)")
    cuda_required: bool = False
    domestic_only: bool = False
    region: Region | None = Field(None, description="where the cards are bought: 'cn' (mainland China) or 'global'; "
                                                    "cards not sold there are ruled out; None: every market")
    framework: str | None = None
    chassis: Chassis | None = None
    form_factor: Literal["pcie", "sxm", "oam", "module"] | None = None
    power_limit_w: float | None = Field(None, gt=0, description="maximum wall draw of the machine")
    mains: str | None = None
    existing_gpus: list[GPUCount] = Field(default_factory=list, description="cards already owned (free)")
    gpu_count: int | None = Field(None, ge=1, le=4096, description="only configurations of exactly this many GPUs "
                                                                   "(a count the buyer said, no card named)")
    existing_platform: str | None = None
    new_cards_first: bool = Field(False, description="an organisation buys: new cards under warranty rank before "
                                                     "used and grey-market ones")
    include_host_cost: bool = True
    kwh_price: float | None = Field(None, gt=0, description="default 0.8 CNY or 0.15 USD per kWh")
    duty_cycle: float = Field(1.0, gt=0, le=1)

    @model_validator(mode="after")
    def _check(self) -> RecommendInput:
        if self.budget_usd is not None and self.budget_cny is not None:
            raise ValueError("give the budget in USD or in CNY, not both")
        if self.domestic_only and self.region == "global":
            raise ValueError("Chinese domestic accelerators are sold in mainland China only: use region 'cn'")
        if self.workload in ("inference", "training") and not self.model:
            raise ValueError(f"{self.workload} needs a model (e.g. model='llama-3.1-70b')")
        if self.code is not None:
            code = find_code(self.code)
            if code is None:
                names = ", ".join(c.name for c in scientific_codes())
                raise ToolError(f"unknown scientific code {self.code!r}", suggestions=[f"one of: {names}"])
            self.code = code.id
            if "fp64_required" not in self.model_fields_set:
                self.fp64_required = code.fp64
            if self.fp64_kind is None and code.fp64_kind:
                self.fp64_kind = code.fp64_kind
        if self.mains is not None and not self.mains.strip():
            self.mains = None  # a blank circuit is no circuit (the build checks would reject '')
        if self.mains:
            parse_mains(self.mains)
        return self

    @property
    def currency(self) -> Currency:
        if self.budget_cny is not None or self.budget_usd is not None:
            return "CNY" if self.budget_cny is not None else "USD"
        return self.display_currency or ("CNY" if self.domestic_only else "USD")


class Option(BaseModel):
    """One configuration that passes every gate."""

    model_config = ConfigDict(extra="forbid")

    rank: int
    gpu: str
    gpu_id: str
    count: int = Field(description="GPUs in all nodes together")
    nodes: int = Field(1, description="machines the GPUs are spread over (8 GPUs each past one node)")
    network: ScaleOutPlan | None = Field(None, description="the network between the nodes, when nodes > 1")
    vendor: str
    tier: str
    fits: bool
    per_gpu_bytes: Bytes | None
    gpu_memory_bytes: Bytes = Field(description="per GPU, as the engine sees it")
    headroom_bytes: Bytes | None
    price_usd: USD | None = Field(description="the GPUs to buy")
    price_cny: CNY | None
    host_price_usd: USD = Field(description="every node's host")
    total_price_usd: USD | None
    total_price_cny: CNY | None
    total_price_local: float | None = Field(None, description="the total in `price_currency`, when asked")
    decode_tokens_per_s: TokensPerS | None = None
    decode_tokens_per_s_range: tuple[TokensPerS, TokensPerS] | None = None
    training_tokens_per_s: TokensPerS | None = None
    training_hours: Hours | None = None
    fp64_tflops: TFLOPS | None = None
    fp32_tflops: TFLOPS | None = Field(None, description="scientific without FP64: FP32 TFLOPS of the configuration")
    precision: str | None = Field(None, description="inference: the weight precision sized on this card (an FP8 model "
                                                    "runs as W8A8 INT8 where the card has no FP8)")
    media_tflops: TFLOPS | None = Field(None, description="an image or video model: one card's dense FP16 TFLOPS as "
                                                         "image tools run (tools.rates.media_tflops)")
    perf_metric: str
    perf_per_price: float | None = Field(description="perf_metric per 1,000 USD of total price")
    power_w: Watts = Field(description="sustained system power (DC), all nodes")
    wall_draw_w: Watts = Field(description="from the wall, all nodes")
    yearly_energy_kwh: float
    yearly_energy_cost: float
    energy_currency: Currency
    yearly_energy_cost_usd: USD
    rental_usd_per_hour: float | None = Field(description="all GPUs together")
    break_even_months: float | None
    score: float = Field(description="perf per $1k × ecosystem factor; performance only when unpriced")
    score_basis: Literal["per-price", "performance-only"]
    ecosystem_factor: float = Field(description="software readiness weight of the GPU's stack (1.0 = CUDA)")
    platform: str
    chassis: str
    recommended_psu_w: Watts = Field(description="per node")
    software_stack: str
    market: Status = Field("available", description="availability in the request's region")
    market_rule: str | None = Field(None, description="the rule behind a restricted market (knowledge/data/markets)")
    why: Note = Field(description="why this option: memory, speed, price in the buyer's currency, stack, what to watch")
    findings: list[Finding]
    pitfalls: list[Pitfall]

class Rejected(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str
    gpu_id: str
    count: int | None
    stage: Stage
    reason: Note
    host_decides: bool = Field(False, description="over budget only because of the host: the cards alone fit")

class Recommendation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workload: str
    currency: Currency
    price_currency: str | None = Field(None, description="currency of each option's total_price_local")
    options: list[Option]
    rejected: list[Rejected]
    pitfalls: dict[str, Note] = Field(description="text of each pitfall flagged in the options")
    assumptions: list[Note]


# ---------------------------------------------------------------------------------------- helpers


def _gb(n: float) -> float:
    """Bytes as decimal GB, for a message's ``{…_gb:.1f} GB``."""
    return n / GB


def _chain(message_id: str, items: list[NoteParam | Note]) -> NoteParam | Note:
    """One parameter for a list: ``message_id`` ('{first}; {rest}') nests the items with the language's
    separator."""
    out = items[-1]
    for item in reversed(items[:-1]):
        out = note(message_id, first=item, rest=out)
    return out


def _money(amount: float, currency: str) -> Note:
    """An amount with its currency: renders '¥79,200', '$2,750'."""
    return note("recommend.money", amount=amount, currency=currency, symbol=SYMBOLS[currency])


def _whole_nodes(count: int) -> int:
    """A count past one node, rounded up to nodes of equal size (nine owned GPUs: two nodes of eight)."""
    nodes = nodes_for(count)
    return count if count % nodes == 0 else nodes * NODE_GPUS


def candidate_counts(gpu: GPU) -> tuple[int, ...]:
    """GPU counts a real build uses; clusters of several nodes only for datacenter cards of 40 GB or more."""
    if gpu.form_factor == FormFactor.system:
        return (1,)  # a complete computer: a second one is a second machine
    counts = (MODULE_COUNTS if gpu.form_factor != FormFactor.pcie else
              PCIE_DC_COUNTS if gpu.tier == Tier.datacenter else DESKTOP_COUNTS)
    if gpu.memory_gb < CLUSTER_MIN_GB:
        counts = tuple(c for c in counts if c <= NODE_GPUS)
    return counts


def _pick_platform(segments: tuple[str, ...], domestic: bool, two_socket: bool | None) -> Platform:
    plats = [p for p in load_catalog().platforms if p.segment in segments]
    if domestic and any(p.domestic for p in plats):
        plats = [p for p in plats if p.domestic]
    elif not domestic:
        plats = [p for p in plats if not p.domestic] or plats
    if two_socket is not None and any((p.sockets > 1) == two_socket for p in plats):
        plats = [p for p in plats if (p.sockets > 1) == two_socket]
    return sorted(plats, key=lambda p: (-p.gpu_slot_lanes, -p.cpu_pcie_lanes, p.id))[0]


def default_build(gpu: GPU, count: int, inp: RecommendInput) -> tuple[Platform, str, str]:
    """(platform, chassis, host class) a builder would pair with ``count`` × ``gpu``."""
    return host_for(gpu, count, inp.existing_platform, inp.chassis)


ENTRY_DESKTOP_MAX_W = 450  # a card up to a 4090's power runs from an ordinary 1 kW desktop PSU


def host_for(gpu: GPU, count: int, existing_platform: str | None = None,
             chassis: Chassis | None = None) -> tuple[Platform, str, str]:
    """(platform, chassis, host class) a builder would pair with ``count`` × ``gpu``; the one rule the
    recommender, the budget listing and buy-vs-rent all price a machine by."""
    catalog = load_catalog()
    if gpu.form_factor == FormFactor.system:  # the box is the computer: no host to add
        return _pick_platform(("desktop",), gpu.domestic, None), "system", "system"
    module = gpu.form_factor != FormFactor.pcie
    server_card = gpu.tier == Tier.datacenter or gpu.cooling.value == "passive"
    if existing_platform:
        plat = catalog.platform(existing_platform)
    elif module:
        plat = _pick_platform(("server",), gpu.domestic, True)
    elif server_card or chassis == "rack":  # a rack chassis is a server, whatever the card
        plat = _pick_platform(("server",), gpu.domestic, count > 4)
    elif count <= 2:
        plat = _pick_platform(("desktop",), gpu.domestic, None)
    else:
        plat = _pick_platform(("workstation",), gpu.domestic, None)
    box = chassis or ("rack" if (module or server_card) else "tower")
    host = "baseboard" if module else {"desktop": "desktop", "hedt": "workstation",
                                       "workstation": "workstation", "server": "server"}[plat.segment]
    if host == "server" and count <= 2 and chassis == "rack" and not existing_platform:
        host = "server_small"  # a server asked for, for one or two PCIe cards: a small single-socket one
    if host == "desktop" and count == 1 and gpu.tier == Tier.consumer and gpu.tdp_w <= ENTRY_DESKTOP_MAX_W:
        host = "desktop_entry"  # one gaming-class card: an ordinary desktop around it, not a 128 GB Ryzen 9 build
    return plat, box, host


def _scaling(gpu: GPU, count: int) -> tuple[float, str]:
    if count == 1:
        return 1.0, "single GPU"
    if nodes_for(count) > 1:
        return SCALING["multi-node"], "one network rail per GPU between nodes"
    link = gpu.interconnect
    if link.kind not in ("pcie", "none") and count <= max(link.max_gpus, 1):
        return SCALING["fabric"], f"{link.kind} {link.bandwidth_gbs:g} GB/s"
    if link.p2p is False:
        return SCALING["no-p2p"], "PCIe without P2P (through host memory)"
    return SCALING["pcie-p2p"], "PCIe peer-to-peer"


class _Eval(BaseModel):
    """What the gates computed for one configuration."""

    model_config = ConfigDict(extra="forbid")

    fits: bool
    per_gpu_bytes: int | None
    usable_bytes: int
    reason: Note | None = None
    decode: float | None = None
    decode_range: tuple[float, float] | None = None
    train_tps: float | None = None
    train_hours: float | None = None
    fp64: float | None = None
    fp32: float | None = None
    media: float | None = Field(None, description="image and video models: one card's dense FP16 TFLOPS as they run")
    metric: float = 0.0
    metric_label: str = ""
    sharded: bool = Field(False, description="training: ZeRO-3 / FSDP shards the model states over the GPUs")
    precision: str | None = Field(None, description="inference: the weight precision the sizing resolved")
    recompute: bool = Field(False, description="full fine-tuning: activation checkpointing was needed to fit")


# ---------------------------------------------------------------------------------------- gates


def _constraint(gpu: GPU, inp: RecommendInput) -> Note | None:
    if inp.only_gpus and gpu.id not in {load_catalog().gpu(g).id for g in inp.only_gpus}:
        return note("recommend.reject.not_listed", gpus=_chain("recommend.list", [load_catalog().gpu(g).name
                                                                                  for g in inp.only_gpus]))
    if inp.exclude_gpus and gpu.id in {load_catalog().gpu(g).id for g in inp.exclude_gpus}:
        return note("recommend.reject.ruled_out")
    if inp.vendors and gpu.vendor.lower() not in {v.lower() for v in inp.vendors}:
        return note("recommend.reject.vendor", vendor=gpu.vendor, vendors=_chain("recommend.list", [*inp.vendors]))
    if inp.domestic_only and not gpu.domestic:
        return note("recommend.reject.not_domestic")
    if inp.cuda_required and gpu.vendor != "NVIDIA":
        return note("recommend.reject.needs_cuda", vendor=gpu.vendor, stack=STACK_NAMES[stack_family(gpu)])
    if inp.code is not None:  # the code's GPU builds decide which software stacks can run it
        code = scientific_code(inp.code)
        if not has_gpu_build(code, gpu):
            return note("recommend.reject.no_code_build", code=code.name, stack=STACK_NAMES[stack_family(gpu)],
                        builds=_chain("recommend.list", [note(f"recommend.code_stack.{s}") for s in code.stacks]))
    if inp.form_factor and gpu.form_factor.value != inp.form_factor:
        return note("recommend.reject.form_factor", form_factor=gpu.form_factor.value, wanted=inp.form_factor)
    # a module needs its baseboard server: not in a tower, nor in the PC a cards-only budget puts the cards in
    own_pc = not inp.include_host_cost and not any(load_catalog().gpu(e.gpu).id == gpu.id for e in inp.existing_gpus)
    if (inp.chassis in ("tower", "open-frame") or own_pc) and gpu.form_factor not in (FormFactor.pcie,
                                                                                      FormFactor.system):
        return note("recommend.reject.module_chassis", form_factor=gpu.form_factor.value.upper(),
                    chassis=note(f"recommend.chassis.{inp.chassis or 'pc'}"))
    if inp.workload == "scientific" and inp.fp64_required and not gpu.throughput.fp64:
        return note("recommend.reject.no_fp64")
    if inp.workload == "training" and gpu.inference_only:
        return note("recommend.reject.inference_only")
    half = gpu.throughput.bf16 if gpu.throughput.bf16 is not None else gpu.throughput.fp16
    if inp.workload == "training" and (half or 0.0) < MIN_TRAINING_TFLOPS:
        return note("recommend.reject.no_fast_half", tflops=half or 0.0)
    return None


def _stack_limit(gpu: GPU, inp: RecommendInput, spec: ModelSpec | None, engine: str) -> Note | None:
    """Why the card's software stack cannot serve this model at the planned precision (stack_support.toml)."""
    if inp.workload != "inference" or spec is None:
        return None
    precision = inp.precision or native_stand_in(gpu, spec) or spec.weight_precision or spec.native_dtype
    limit = unsupported(gpu.id, engine, spec.num_experts is not None, spec.attention, precision)
    if limit is None:
        return None
    if not limit.runs:
        return note("recommend.reject.no_engine", engine=note(f"recommend.engine.{engine}"))
    return note("recommend.reject.stack", engine=note(f"recommend.engine.{engine}"),
                architectures=_chain("recommend.list", [note(f"recommend.arch.{a}") for a in limit.architectures]),
                precisions="/".join(p.upper() for p in limit.precisions))


def native_stand_in(gpu: GPU, spec: ModelSpec) -> str | None:
    """The precision a card runs an FP8-native model (or an FP8 checkpoint) at when none was asked and it has no
    FP8 path: INT8 W8A8 on accelerators without FP8 units (Ascend 910B, MLU: how their stacks ship DeepSeek), same
    weight bytes.
    NVIDIA cards without FP8 keep FP8 weights (vLLM's weight-only Marlin kernels); inference cards (Atlas 300I
    Duo: Ascend's W8A8 for dense models only) get no stand-in."""
    if (spec.weight_precision or spec.native_dtype) != "fp8" or gpu.supports("fp8") is not False \
            or gpu.vendor == "NVIDIA" or gpu.inference_only:
        return None
    return "int8" if gpu.supports("int8") is not False else None


def _inference_eval(gpu: GPU, count: int, inp: RecommendInput, spec: ModelSpec, engine: str) -> _Eval:
    precision = inp.precision or native_stand_in(gpu, spec)
    base = dict(model=inp.model, precision=precision, context=inp.context, batch=inp.concurrency,
                gpu=gpu.id, engine=engine)
    if inp.kv_dtype:
        if gpu.supports("fp8") is False:
            return _Eval(fits=False, per_gpu_bytes=None, usable_bytes=gpu.memory_bytes,
                         reason=note("recommend.reject.no_fp8_kv", gpu=gpu.name))
        base["kv_dtype"] = inp.kv_dtype
    stages = nodes_for(count) if engine == "vllm" else 1  # across nodes: tensor parallel inside, layers between
    try:
        res: InferenceMemoryResult = estimate_inference_memory(
            InferenceMemoryInput(**base, gpus=count, pipeline_stages=stages), limits=False)
    except ToolError as exc:
        if count == 1:
            raise
        try:
            res = estimate_inference_memory(InferenceMemoryInput(**base, gpus=count, parallel="pp"), limits=False)
        except ToolError:
            return _Eval(fits=False, per_gpu_bytes=None, usable_bytes=gpu.memory_bytes,
                         reason=note("recommend.reject.cannot_split", count=count, error=str(exc)))
    usable = res.reserved_bytes or res.gpu_memory_bytes or gpu.memory_bytes
    ev = _Eval(fits=bool(res.fits), per_gpu_bytes=res.per_gpu_bytes, usable_bytes=usable, precision=res.precision)
    if not res.fits:
        need = res.all_layers_bytes or res.per_gpu_bytes  # every layer on the GPUs: what 'fits' weighs
        ev.reason = note("recommend.reject.inference_memory", need_gb=_gb(need), usable_gb=_gb(usable),
                         card_gb=gpu.memory_gb)
        return ev
    if spec.attention == "none":  # an image or video model: its denoising steps are compute-bound, no tokens;
        # one image is not split over cards, so a configuration is as fast as one of its cards
        ev.media = media_tflops(gpu)
        ev.metric, ev.metric_label = ev.media, "FP16 TFLOPS"
        return ev
    parallel = "tensor" if res.parallel == "tp" else "layer"
    # across nodes the layers are split between them and each token passes every node in turn
    d = estimate_decode(DecodeInput(model=spec, gpu=gpu, count=count, nodes=nodes_for(count), parallel=parallel,
                                    precision=res.precision, engine=engine,
                                    kv_dtype=res.kv_dtype, context=inp.context, batch=inp.concurrency))
    ev.decode, ev.decode_range = d.tokens_per_s, d.tokens_per_s_range
    ev.metric, ev.metric_label = d.tokens_per_s, "decode tokens/s"
    return ev


def _training_eval(gpu: GPU, count: int, inp: RecommendInput, spec: ModelSpec) -> _Eval:
    method = inp.method or "lora"
    zero = 3 if (method == "full" and count > 1) else 0
    res = estimate_training_memory(TrainingMemoryInput(model=spec, method=method, gpus=count, zero_stage=zero,
                                                       gpu=gpu), limits=False)  # only the verdict is used
    if not res.fits and count > 1 and zero == 0:  # LoRA / QLoRA: plain data parallel first, then FSDP / ZeRO-3
        zero = 3  # shards the frozen base weights too, the norm for large-model LoRA over several GPUs
        res = estimate_training_memory(TrainingMemoryInput(model=spec, method=method, gpus=count, zero_stage=zero,
                                                           gpu=gpu), limits=False)
    recompute = False
    if not res.fits and method == "full" and count > 1:  # sharded full fine-tuning: activation checkpointing next,
        recompute = True  # the norm for large models (LoRA / QLoRA already recompute by default)
        res = estimate_training_memory(TrainingMemoryInput(model=spec, method=method, gpus=count, zero_stage=zero,
                                                           gpu=gpu, recompute="full"), limits=False)
    usable = res.gpu_memory_bytes or gpu.memory_bytes  # what the training verdict weighed: the engine-visible bytes
    ev = _Eval(fits=bool(res.fits), per_gpu_bytes=res.per_gpu_bytes, usable_bytes=usable, sharded=zero == 3,
               recompute=recompute)
    if not res.fits:
        ev.reason = note("recommend.reject.training_memory_zero3" if zero else "recommend.reject.training_memory",
                         method=note(f"method.{method}"), need_gb=_gb(res.per_gpu_bytes), have_gb=_gb(usable))
        return ev
    prec = inp.precision if inp.precision in ("bf16", "fp16", "fp8", "tf32", "fp32") else "bf16"
    tokens = inp.dataset_tokens or NOMINAL_TOKENS
    tt = estimate_training_time(TrainingTimeInput(params=spec.active_params, tokens=tokens, gpu=gpu, count=count,
                                                  precision=prec, model_name=spec.name,
                                                  recompute="full" if recompute else "none"))
    scale, _ = _scaling(gpu, count)
    ev.train_tps = tt.tokens_per_s_per_gpu * count * scale
    ev.train_hours = (tt.hours / scale) if inp.dataset_tokens else None
    ev.metric, ev.metric_label = ev.train_tps, "training tokens/s"
    return ev


class WorkloadFit(BaseModel):
    """Whether a count of one GPU runs a workload, and how fast."""

    model_config = ConfigDict(extra="forbid")

    fits: bool
    tokens_per_s: float | None = Field(None, description="decode (inference) or training tokens/s, all GPUs")
    hours: float | None = Field(None, description="training: hours for the data set, when one was given")


def workload_fit(gpu: GPU, count: int, inp: RecommendInput) -> WorkloadFit:
    """The recommender's own verdict for ``count`` × ``gpu`` on an inference or training workload (same memory
    gates and speed models), for callers that rank configurations by something other than price."""
    spec = load_model_spec(inp.model or "")
    weights = inp.precision or spec.weight_precision
    engine = "llamacpp" if weights and resolve_precision(weights).family == "gguf" else "vllm"
    ev = _inference_eval(gpu, count, inp, spec, engine) if inp.workload == "inference" else \
        _training_eval(gpu, count, inp, spec)
    return WorkloadFit(fits=ev.fits, tokens_per_s=ev.decode if inp.workload == "inference" else ev.train_tps,
                       hours=ev.train_hours)


def fp64_kind(inp: RecommendInput) -> Literal["vector", "matrix"]:
    """The FP64 rate a scientific request is rated on: dense LU (``matrix_n``) uses tensor/matrix cores."""
    return inp.fp64_kind or ("matrix" if inp.matrix_n else "vector")


# a card whose FP64 runs at under 1/16 of its FP32 (GeForce and RTX PRO: 1/64) is built for single precision: for a
# double-precision code it ranks after every card with real FP64 (A100/H100 run FP64 at 1/2, MI210/MI300 at 1/1)
FP64_SLOW_RATIO = 16


def _fp64_slow(gpu: GPU, inp: RecommendInput) -> bool:
    fp64, fp32 = gpu.throughput.fp64, gpu.throughput.fp32
    return inp.workload == "scientific" and inp.fp64_required and bool(fp64 and fp32) \
        and (fp64 or 0) * FP64_SLOW_RATIO < (fp32 or 0)


def _fp64_rate(gpu: GPU, inp: RecommendInput) -> float | None:
    t = gpu.throughput
    return t.fp64_vector or t.fp64 if fp64_kind(inp) == "vector" else t.fp64


def _scientific_eval(gpu: GPU, count: int, inp: RecommendInput) -> _Eval:
    visible, _ = engine_visible_bytes(gpu)
    if inp.fp64_required:
        fp64 = (_fp64_rate(gpu, inp) or 0) * count
        ev = _Eval(fits=True, per_gpu_bytes=None, usable_bytes=visible, fp64=fp64,
                   metric=fp64 * (1.0 if gpu.ecc else NO_ECC_FACTOR), metric_label="FP64 TFLOPS (ECC-weighted)")
    else:  # single/mixed-precision codes (GROMACS, AlphaFold): FP32 throughput decides, ECC is not required
        rate = gpu.throughput.fp32  # None: no sourced FP32 figure — shown as unknown, ranked last
        ev = _Eval(fits=True, per_gpu_bytes=None, usable_bytes=visible, fp32=rate * count if rate else None,
                   metric=(rate or 0) * count, metric_label="FP32 TFLOPS")
    sci = None
    if inp.matrix_n:
        sci = estimate_fp64(ScientificInput(gpu=gpu, count=count, problem="dense-lu", n=inp.matrix_n))
    elif inp.problem_bytes:
        # a state of fewer than 8 bytes is still one cell (ScientificInput needs cells ≥ 1)
        sci = estimate_fp64(ScientificInput(gpu=gpu, count=1 if inp.problem_per_gpu else count, problem="grid",
                                            cells=max(1.0, inp.problem_bytes / 8), time_levels=1))
    if sci is not None:
        ev.per_gpu_bytes, ev.fits = sci.per_gpu_bytes, sci.fits
        if not sci.fits:
            ev.reason = note("recommend.reject.problem_memory", need_gb=_gb(sci.per_gpu_bytes), have_gb=_gb(visible))
    return ev


# ---------------------------------------------------------------------------------------- main


def recommend(inp: RecommendInput) -> Recommendation:
    """Ranked GPU configurations for a workload, with the ruled-out ones and why."""
    catalog = load_catalog()
    spec = load_model_spec(inp.model) if inp.model else None
    framework = resolve_framework(inp.framework) if inp.framework else None
    engine = "vllm"
    weights = inp.precision or (spec.weight_precision if spec else None)  # said, or the checkpoint's ('…-Q4_K_M')
    if weights and inp.workload == "inference" and resolve_precision(weights).family == "gguf":
        engine = "llamacpp"
    if framework == "llama.cpp":
        engine = "llamacpp"
    currency = inp.currency
    owned: dict[str, int] = {}
    for item in inp.existing_gpus:
        g = catalog.gpu(item.gpu)
        owned[g.id] = owned.get(g.id, 0) + item.count
        if owned[g.id] > MAX_GPUS_OF_ONE:
            raise ToolError(
                f"existing GPUs list {owned[g.id]} × {g.name}; a build holds at most {MAX_GPUS_OF_ONE} of one GPU",
                suggestions=[f"list at most {MAX_GPUS_OF_ONE} {g.name} in total", "plan a cluster node by node"],
            )
    options: list[Option] = []
    rejected: list[Rejected] = []
    media = spec is not None and spec.attention == "none"  # an image or video model runs on one card

    def reject(g: GPU, count: int | None, stage: Stage, reason: Note, host_decides: bool = False) -> None:
        rejected.append(Rejected(gpu=g.name, gpu_id=g.id, count=count, stage=stage, reason=reason,
                                 host_decides=host_decides))

    for gpu in sorted(catalog.gpus, key=lambda x: x.id):
        why = _constraint(gpu, inp)
        if why:
            reject(gpu, None, "constraint", why)
            continue
        market = availability(gpu.id, inp.region) if inp.region else None
        if market is not None and market.status == "unavailable" and market.rule is not None:
            reject(gpu, None, "market", note("recommend.reject.market", region=note(f"market.region.{inp.region}"),
                                             rule=note(f"market.rule.{market.rule.id}")))
            continue
        stack = _stack_limit(gpu, inp, spec, engine)
        if stack is not None:
            reject(gpu, None, "constraint", stack)
            continue
        counts = [_whole_nodes(inp.gpu_count)] if inp.gpu_count else [1] if media else \
            sorted(set(candidate_counts(gpu)) | ({_whole_nodes(owned[gpu.id])} if gpu.id in owned else set()))
        if inp.gpu_count and gpu.on_baseboard and counts[0] not in MODULE_COUNTS:  # 'one card': no SXM module alone
            reject(gpu, counts[0], "constraint", note("recommend.reject.board_count", form_factor=gpu.form_factor.value
                                                      .upper(), count=counts[0]))
            continue
        for count in counts:
            if count < owned.get(gpu.id, 0):
                continue
            try:
                opt = _evaluate(gpu, count, inp, spec, engine, framework, owned.get(gpu.id, 0), reject)
            except ToolError as exc:  # a card whose catalog entry lacks a figure this estimate needs
                reject(gpu, count, "data", note("recommend.reject.missing_figure", error=exc.reason))
                break
            if isinstance(opt, str):  # 'next': try a larger count
                continue
            if opt is not None:
                options.append(_what_the_budget_buys(opt, gpu, [c for c in counts if c > count], inp, spec, engine,
                                                     framework, owned.get(gpu.id, 0)))
            break
    # a lab's or cluster's budget, or any organisation, buys new cards under warranty first; second-hand and
    # grey-market ones follow
    new_first = _fills_budget(inp) or inp.new_cards_first
    second_hand = {g.id for g in catalog.gpus if new_first and g.price is not None and g.price.kind == "used"}
    # grey-market boards (no warranty) follow too for an organisation, and for an image model, which gains nothing
    # from their doubled memory
    grey = {o.gpu_id for o in options if (inp.new_cards_first or media) and o.market_rule == GREY_MARKET_RULE}
    slow = {g.id for g in catalog.gpus if _fp64_slow(g, inp)}
    options.sort(key=lambda o: (o.total_price_usd is None, o.gpu_id in slow, o.gpu_id in second_hand | grey, -o.score,
                                o.gpu_id, o.count))
    for i, o in enumerate(options, 1):
        o.rank = i
    flagged = sorted({p for o in options for p in o.pitfalls})
    clusters = [o.network for o in options if o.network is not None]
    return Recommendation(
        workload=inp.workload, currency=currency, price_currency=inp.price_currency, options=options,
        rejected=rejected, pitfalls={p: pitfall_text(p) for p in flagged},
        assumptions=_assumptions(inp, engine, currency, inp.price_currency or currency)
        + (clusters[0].assumptions[:1] if clusters else []),  # how a job spreads over nodes, once
    )


def _what_the_budget_buys(least: Option, gpu: GPU, larger: list[int], inp: RecommendInput, spec: ModelSpec | None,
                          engine: str, framework: str | None, owned: int) -> Option:
    """Training and scientific work go faster on more GPUs: with a budget, the most of this card it buys (the
    least count that fits when no budget is said, or for inference, where more cards than fit add nothing for
    the users said)."""
    if not _fills_budget(inp):
        return least
    best = least
    for count in larger:
        more = _evaluate(gpu, count, inp, spec, engine, framework, owned, _ignore)
        if isinstance(more, str):
            continue
        if more is None:  # over the budget (or past what the build holds): the last one that fit it stays
            break
        best = more
    return best


GREY_MARKET_RULE = "cn-modded"  # knowledge/data/markets.toml: boards reworked in China, sold without a warranty


def _fills_budget(inp: RecommendInput) -> bool:
    """A lab's or a cluster's budget for training or science (machines bought whole, not a card for one's own
    tower): ranked by what the budget buys (performance), not per price."""
    budget = inp.budget_usd is not None or inp.budget_cny is not None
    # a lab's workstations are bought whole too; a person's tower, or cards for a host they own, are not
    own_desk = (inp.chassis in ("tower", "open-frame") or not inp.include_host_cost) and not inp.new_cards_first
    return inp.workload != "inference" and budget and not own_desk


def _ignore(g: GPU, count: int | None, stage: Stage, reason: Note, host_decides: bool = False) -> None:
    """A larger count tried for what a budget buys: its refusal is no reason to report."""


def _evaluate(gpu: GPU, count: int, inp: RecommendInput, spec: ModelSpec | None, engine: str,
              framework: str | None, owned: int, reject: RejectFn) -> Option | str | None:
    """An Option, 'next' to try a larger count, or None to stop with this GPU (rejection recorded)."""
    if inp.workload == "inference":
        assert spec is not None
        ev = _inference_eval(gpu, count, inp, spec, engine)
    elif inp.workload == "training":
        assert spec is not None
        ev = _training_eval(gpu, count, inp, spec)
    else:
        ev = _scientific_eval(gpu, count, inp)
    if not ev.fits:
        assert ev.reason is not None
        reject(gpu, count, "memory", ev.reason)
        return "next"
    p2p_off = gpu.interconnect.p2p is False and gpu.interconnect.kind in ("pcie", "none")
    nodes = nodes_for(count)
    per_node = count // nodes
    if inp.workload == "inference" and per_node >= 4 and p2p_off:
        reject(gpu, count, "interconnect", note("recommend.reject.no_p2p", count=count, gpu=gpu.name))
        return None
    missed = _target_missed(gpu, count, inp, ev)
    if missed is not None:  # a stated target: a larger count may meet it
        reject(gpu, count, "target", missed)
        return "next"
    plat, chassis, host = default_build(gpu, per_node, inp)
    system = host == "system"
    build = BuildInput(  # one node: a cluster is that many identical nodes
        gpus=[GPUCount(gpu=gpu.id, count=per_node)], platform=None if system else plat.id,
        chassis=None if system else chassis, mains=inp.mains,
        workload=inp.workload, precision=(ev.precision or inp.precision) if inp.workload != "scientific" else None,
        framework=framework, cuda_required=inp.cuda_required,
    )
    report = _checked_build(build)
    if not report.ok:
        first = report.errors[0]
        reject(gpu, count, "compat", note("recommend.reject.compat", count=per_node, gpu=gpu.name,
                                          finding=first.message))
        return None
    gap = next((f for f in report.findings if f.id == "vllm-quant-hardware"), None)
    vllm_plan = inp.workload == "inference" and framework in (None, "vllm") and not (
        inp.precision and resolve_precision(inp.precision).family == "gguf")  # the memory fit assumed vLLM
    if gap is not None and vllm_plan:  # and vLLM cannot load this precision on this card
        reject(gpu, count, "compat", note("recommend.reject.compat", count=count, gpu=gpu.name, finding=gap.message))
        return None
    t = report.totals
    if inp.power_limit_w and t.wall_draw_w * nodes > inp.power_limit_w:
        reject(gpu, count, "power", note("recommend.reject.power", wall_w=t.wall_draw_w * nodes,
                                         limit_w=inp.power_limit_w))
        return None
    return _option(gpu, count, inp, ev, report, plat, chassis, host, owned, reject)


def _target_missed(gpu: GPU, count: int, inp: RecommendInput, ev: _Eval) -> Note | None:
    """The first stated target this option misses (total speed, each user's speed, first token, a training
    deadline), as the reason; None when it meets them all."""
    if inp.workload == "inference":
        if inp.target_tokens_per_s and (ev.decode or 0) < inp.target_tokens_per_s:
            return note("recommend.reject.too_slow_decode", tokens_per_s=ev.decode or 0.0,
                        target=inp.target_tokens_per_s)
        floor = inp.min_tokens_per_s_per_user
        if floor and (ev.decode or 0) / inp.concurrency < floor:
            return note("recommend.reject.too_slow_per_user", users=inp.concurrency,
                        each=(ev.decode or 0.0) / inp.concurrency, floor=floor)
        return _ttft_gate(gpu, count, inp, ev) if inp.max_ttft_s else None
    if inp.workload == "training" and inp.deadline_hours and ev.train_hours and ev.train_hours > inp.deadline_hours:
        return note("recommend.reject.too_slow_training", hours=ev.train_hours, deadline=inp.deadline_hours)
    return None


def _ttft_gate(gpu: GPU, count: int, inp: RecommendInput, ev: _Eval) -> Note | None:
    """Why an option misses the first-token target (users sending prompts over time), else None."""
    assert inp.model is not None and inp.max_ttft_s is not None
    try:
        load = ttft_under_load(LoadInput(model=load_model_spec(inp.model), gpu=gpu, count=count,
                                         precision=ev.precision or inp.precision or "bf16",
                                         prompt_tokens=inp.prompt_tokens or inp.context, users=inp.concurrency))
    except ToolError:
        return None
    if load.ttft_s is not None and load.ttft_s <= inp.max_ttft_s:
        return None
    if load.ttft_s is None:
        return note("recommend.reject.ttft_saturated", users=inp.concurrency)
    return note("recommend.reject.too_slow_ttft", users=inp.concurrency, target=inp.max_ttft_s, ttft=load.ttft_s)


_BUILDS: dict[str, tuple[object, BuildReport]] = {}
_BUILDS_MAX = 1024


def _checked_build(build: BuildInput) -> BuildReport:
    """check_build, remembered per build (and catalog object): the builds the recommender checks carry no
    model, so a what-if on context, users or budget asks about the same ones again. Read-only to callers."""
    catalog = load_catalog()
    key = build.model_dump_json()
    hit = _BUILDS.get(key)
    if hit is not None and hit[0] is catalog:
        return hit[1]
    report = check_build(build)
    if len(_BUILDS) >= _BUILDS_MAX:
        _BUILDS.clear()
    _BUILDS[key] = (catalog, report)
    return report


def _option(gpu: GPU, count: int, inp: RecommendInput, ev: _Eval, report: BuildReport, plat: Platform,
            chassis: str, host: str, owned: int, reject: RejectFn) -> Option | None:
    t = report.totals
    price = gpu_price(gpu, inp.cny_per_usd, inp.said_prices.get(gpu.id))
    buy = count - owned
    nodes = nodes_for(count)
    # owned cards sit in machines already: a host is priced per node whose cards are bought
    new_nodes = -(-buy // (count // nodes)) if buy > 0 else 0
    host_usd = (HOST_COST_USD[host] * new_nodes
                if inp.include_host_cost and not inp.existing_platform and buy > 0 else 0.0)
    network = None
    if nodes > 1:
        network = plan_scale_out(ScaleOutInput(
            gpu=gpu.id, nodes=nodes, gpus_per_node=count // nodes, workload=inp.workload,
            nic_included=host == "baseboard", hidden_size=load_model_spec(inp.model).hidden_size if inp.model
            else None))
    net_usd = network.cost_usd if network is not None and new_nodes else 0.0
    gpus_usd = price.usd * buy if price.usd is not None else None
    gpus_cny = price.cny * buy if price.cny is not None else None
    total_usd = gpus_usd + host_usd + net_usd if gpus_usd is not None else None
    total_cny = gpus_cny + (host_usd + net_usd) * inp.cny_per_usd if gpus_cny is not None else None
    budget = inp.budget_cny if inp.budget_cny is not None else inp.budget_usd
    if budget is not None:
        total = total_cny if inp.budget_cny is not None else total_usd
        cur = "CNY" if inp.budget_cny is not None else "USD"
        host_part = _host(host_usd + net_usd, inp)
        # a euro / pound budget is checked in dollars and said in its own currency
        per = 1 / USD_PER_FOREIGN[inp.price_currency] if inp.price_currency and cur == "USD" else 1.0
        said_in = inp.price_currency if per != 1.0 and inp.price_currency else cur
        if total is None:  # unpriced: kept unless even the cheapest comparable card would break the budget
            ref = comparable_price(gpu, inp.cny_per_usd)
            each = (ref[1] if cur == "USD" else ref[2]) if ref else 0.0
            floor = each * buy + host_part
            if floor > budget:
                reason = (note("recommend.reject.floor_over_budget", ref=ref[0], each=_money(each * per, said_in),
                               count=buy, total=_money(floor * per, said_in), budget=_money(budget * per, said_in))
                          if ref else note("recommend.reject.host_over_budget", host=_money(host_part * per, said_in),
                                           budget=_money(budget * per, said_in)))
                reject(gpu, count, "budget", reason)
                return None
        if total is not None and total > budget:  # an unpriced option stays, marked 'ask a vendor', after the priced
            reject(gpu, count, "budget", note(
                "recommend.reject.over_budget" if host_part else "recommend.reject.over_budget_cards",
                total=_money(total * per, said_in),
                gpus=_money((total - host_part) * per, said_in), host=_money(host_part * per, said_in),
                budget=_money(budget * per, said_in)), host_decides=host_part > 0 and total - host_part <= budget)
            return None
    currency = inp.currency
    rent = price.rental_usd_per_hour * count if price.rental_usd_per_hour else None
    cost = cost_of_ownership(CostInput(purchase_usd=total_usd, power_w=t.wall_draw_w * nodes, rental_usd_per_hour=rent,
                                       kwh_price=inp.kwh_price, currency=currency, duty_cycle=inp.duty_cycle,
                                       cny_per_usd=inp.cny_per_usd))
    # value per dollar of what this buyer pays: a yuan budget pays the yuan price (a China channel price where the
    # catalog has one, e.g. H20 or H200), counted in dollars at the stated rate
    paid_usd = total_cny / inp.cny_per_usd if inp.currency == "CNY" and total_cny is not None else total_usd
    ppp = ev.metric / (paid_usd / 1000) if paid_usd else None
    eco = ecosystem_factor(gpu, inp.workload, ev.media is not None)
    # with a budget for training or science, or for image generation (compute-bound: every TFLOPS is a faster image),
    # the fastest it buys leads, not the thriftiest
    within = _fills_budget(inp) or (ev.media is not None and (inp.budget_usd is not None or inp.budget_cny is not None))
    score = round((ppp if ppp is not None and not within else ev.metric) * eco, 6)
    pitfalls = _pitfalls(gpu, count, inp, ev, report)
    headroom = ev.usable_bytes - ev.per_gpu_bytes if ev.per_gpu_bytes is not None else None
    stack = STACK_NAMES[stack_family(gpu)]
    total_local = (round(total_usd / USD_PER_FOREIGN[inp.price_currency], 2)
                   if inp.price_currency and total_usd is not None else None)
    # the buyer's money: the euro or pound budget's, else yuan or dollars (the presenters' choice too)
    cur = inp.price_currency or currency
    per_usd = inp.cny_per_usd if cur == "CNY" else 1 / USD_PER_FOREIGN[cur] if cur in USD_PER_FOREIGN else 1.0
    shown = total_cny if cur == "CNY" else total_local if cur in USD_PER_FOREIGN else total_usd
    host_shown = host_usd * per_usd
    market = availability(gpu.id, inp.region) if inp.region else None
    restricted = market.rule.id if market is not None and market.status == "restricted" and market.rule else None
    why = _why(gpu, count, ev, headroom, (shown, host_shown, cur), stack, report, restricted,
               (network, net_usd * per_usd) if network is not None else None)
    return Option(
        rank=0, gpu=gpu.name, gpu_id=gpu.id, count=count, nodes=nodes, network=network, vendor=gpu.vendor,
        tier=gpu.tier.value, fits=True,
        per_gpu_bytes=ev.per_gpu_bytes, gpu_memory_bytes=ev.usable_bytes, headroom_bytes=headroom,
        price_usd=gpus_usd, price_cny=gpus_cny, host_price_usd=host_usd, total_price_usd=total_usd,
        total_price_cny=total_cny, total_price_local=total_local,
        decode_tokens_per_s=ev.decode, decode_tokens_per_s_range=ev.decode_range,
        training_tokens_per_s=ev.train_tps, training_hours=ev.train_hours, fp64_tflops=ev.fp64,
        fp32_tflops=ev.fp32, precision=ev.precision, media_tflops=round(ev.media, 1) if ev.media is not None else None,
        perf_metric=ev.metric_label, perf_per_price=round(ppp, 4) if ppp is not None else None,
        power_w=t.system_power_w * nodes, wall_draw_w=t.wall_draw_w * nodes, yearly_energy_kwh=cost.yearly_energy_kwh,
        yearly_energy_cost=cost.yearly_energy_cost, energy_currency=cost.currency,
        yearly_energy_cost_usd=cost.yearly_energy_cost_usd, rental_usd_per_hour=rent,
        break_even_months=cost.break_even_months, score=score,
        score_basis="per-price" if ppp is not None and not within else "performance-only", ecosystem_factor=eco,
        platform=gpu.name if host == "system" else plat.name, chassis=chassis,
        recommended_psu_w=t.recommended_psu_w, software_stack=stack, why=why,
        market="restricted" if restricted else "available", market_rule=restricted,
        findings=[f for f in report.findings if f.severity != "info" or f.category in ("software", "interconnect")],
        pitfalls=pitfalls,
    )


def comparable_price(gpu: GPU, cny_per_usd: float = CNY_PER_USD) -> tuple[str, float, float] | None:
    """(name, USD, CNY) of the cheapest priced card of ``gpu``'s tier with at least its memory — a lower bound
    to hold an unpriced card against a budget; None when no priced card of the tier is that large."""
    priced = [(g, gpu_price(g, cny_per_usd)) for g in load_catalog().gpus
              if g.tier == gpu.tier and g.memory_gb >= gpu.memory_gb and g.id != gpu.id]
    # new-card prices only: a used V100 says nothing about what a new accelerator of the tier costs
    priced = [(g, p) for g, p in priced if p.usd is not None and p.cny is not None
              and g.price is not None and g.price.kind not in ("used", "rental")]
    if not priced:
        return None
    g, p = min(priced, key=lambda gp: (gp[1].usd or 0.0, gp[0].id))
    return g.name, float(p.usd or 0.0), float(p.cny or 0.0)


def _host(host_usd: float, inp: RecommendInput) -> float:
    return host_usd * inp.cny_per_usd if inp.budget_cny is not None else host_usd


def _pitfalls(gpu: GPU, count: int, inp: RecommendInput, ev: _Eval, report: BuildReport) -> list[Pitfall]:
    out: set[Pitfall] = {f.pitfall for f in report.findings if f.pitfall and f.severity != "info"}
    if ev.per_gpu_bytes is not None and ev.usable_bytes - ev.per_gpu_bytes < HEADROOM_PITFALL * ev.usable_bytes:
        out.add("ignoring-memory")
    if count > 1 and gpu.interconnect.kind in ("pcie", "none"):
        out.add("underrating-interconnect")
    t = gpu.throughput
    if inp.workload == "scientific" and t.fp64 and t.fp32 and t.fp64 < t.fp32 / 8:
        out.add("chasing-peak-tflops")
    if ecosystem_factor(gpu, inp.workload) <= 0.75:
        out.add("chasing-peak-tflops")
    return sorted(out)


def _why(gpu: GPU, count: int, ev: _Eval, headroom: int | None, price: tuple[float | None, float, str],
         stack: str, report: BuildReport, restricted: str | None = None,
         network: tuple[ScaleOutPlan, float] | None = None) -> Note:
    """Why this option, one note: '2× RTX 4090 (consumer): 20.1 GB of 23.6 GB per GPU, …; $4,100 → 11.2 per $1k'.

    ``price``: (total, host share, currency) in the buyer's currency; the value figure is per $1k (€1k, £1k)
    or per ¥10k of that total."""
    parts: list[NoteParam | Note] = []
    if ev.per_gpu_bytes is not None and headroom is not None:
        parts.append(note("recommend.why.memory", need_gb=_gb(ev.per_gpu_bytes), usable_gb=_gb(ev.usable_bytes),
                          spare_gb=_gb(headroom)))
    if ev.decode is not None:
        parts.append(note("recommend.why.decode", tokens_per_s=ev.decode))
    if ev.sharded and ev.train_tps is not None:
        parts.append(note("recommend.why.sharded"))
    if ev.recompute:
        parts.append(note("recommend.why.recompute"))
    if ev.train_tps is not None:
        parts.append(note("recommend.why.training_hours", tokens_per_s=ev.train_tps, hours=ev.train_hours)
                     if ev.train_hours else note("recommend.why.training", tokens_per_s=ev.train_tps))
    if ev.fp64 is not None:
        parts.append(note("recommend.why.fp64", tflops=ev.fp64,
                          ecc=note("recommend.why.ecc" if gpu.ecc else "recommend.why.no_ecc")))
    if ev.fp32 is not None:
        parts.append(note("recommend.why.fp32", tflops=ev.fp32))
    total, host, cur = price
    if total == 0:  # every card already owned, in its own machine
        parts.append(note("recommend.why.owned"))
    elif total is not None:
        priced = (note("recommend.why.price_host", total=_money(total, cur), host=_money(host, cur)) if host
                  else note("recommend.why.price", total=_money(total, cur)))
        if total > 0:  # value: the ranking metric per 1,000 (10,000 yuan) of the total
            slug = re.sub(r"[^a-z0-9]+", "_", ev.metric_label.lower()).strip("_")
            priced = note("recommend.why.value", price=priced, value=ev.metric / (total / VALUE_UNIT[cur]),
                          unit=note(f"recommend.why.per.{cur}"), metric=note(f"present.metric.{slug}"))
        parts.append(priced)
    else:
        parts.append(note("recommend.why.no_price"))
    if network is not None:  # the nodes and the network between them, its cost in the buyer's currency
        plan, cost = network
        parts.append(note("recommend.why.network", nodes=plan.nodes, fabric=plan.fabric, ports=plan.ports_per_node,
                          gbps=plan.port_gbps,
                          cost=_money(cost, cur), topology=note(f"recommend.why.topology.{plan.topology}"),
                          unpriced=note("recommend.why.network_unpriced") if plan.unpriced else ""))
    if stack_family(gpu) != "cuda":
        parts.append(note("recommend.why.software", stack=stack))
    if restricted:  # sold in the buyer's region only under a licence or to approved buyers
        parts.append(note("recommend.why.restricted", rule=note(f"market.rule.{restricted}")))
    # what the build check warns about, as topics (power, cooling …): the rule ids are not for readers
    watch = dict.fromkeys(f.category for f in report.findings if f.severity == "warning")
    if watch:
        parts.append(note("recommend.why.watch", topics=_chain(
            "recommend.list", [note(f"recommend.watch_category.{c}") for c in watch])))
    head = (note("recommend.why.head_nodes", nodes=network[0].nodes, per_node=count // network[0].nodes,
                 gpu=gpu.name, tier=note(f"recommend.tier.{gpu.tier.value}")) if network is not None else
            note("recommend.why.head", count=count, gpu=gpu.name, tier=note(f"recommend.tier.{gpu.tier.value}")))
    return note("recommend.why.option", head=head, parts=_chain("recommend.why.and", parts))


def _assumptions(inp: RecommendInput, engine: str, currency: Currency, shown: str) -> list[Note]:
    """What the ranking assumed; amounts in ``shown``, the currency the options' prices are given in."""
    kwh = inp.kwh_price if inp.kwh_price is not None else KWH_PRICE[currency]
    per_local = inp.cny_per_usd if shown == "CNY" else 1 / USD_PER_FOREIGN[shown] if shown in USD_PER_FOREIGN else 1.0
    host = {k: _money(v * per_local, shown) for k, v in HOST_COST_USD.items()}
    unit = _money(VALUE_UNIT[shown], shown)
    out = [
        note("recommend.assume.smallest_count"),
        note("recommend.assume.one_node"),
        note("recommend.assume.prices", rate=inp.cny_per_usd, as_of=FX_AS_OF.isoformat(),
             foreign=note("recommend.assume.foreign_rate", currency=shown, usd=USD_PER_FOREIGN[shown])
             if shown in USD_PER_FOREIGN else ""),
        note("recommend.assume.host_cost" if inp.include_host_cost else "recommend.assume.host_cost_excluded",
             **host),
        note("recommend.assume.electricity", kwh=round(kwh / USD_PER_FOREIGN[shown], 3), currency=shown,
             duty=inp.duty_cycle) if shown in USD_PER_FOREIGN and currency == "USD" else
        note("recommend.assume.electricity", kwh=kwh, currency=currency, duty=inp.duty_cycle),
        note("recommend.assume.ecosystem", inference=_factors(ECOSYSTEM), training=_factors(ECOSYSTEM_TRAINING)),
        note("recommend.assume.unpriced_last"),
        *([note(f"recommend.assume.fp64_{fp64_kind(inp)}")] if inp.workload == "scientific" and inp.fp64_required
          else []),
        *([note("recommend.assume.region", region=note(f"market.region.{inp.region}"),
                as_of=markets_as_of().isoformat())] if inp.region else []),
    ]
    if inp.workload == "inference":
        out.append(note("recommend.assume.inference_memory", engine="vLLM" if engine == "vllm" else "llama.cpp",
                        context=inp.context, concurrency=inp.concurrency))
        media = inp.model is not None and load_model_spec(inp.model).attention == "none"
        out.append(note("recommend.assume.media_score" if media else "recommend.assume.inference_score", unit=unit))
    elif inp.workload == "training":
        key = "training_method" if inp.method else "training_method_default"
        out.append(note(f"recommend.assume.{key}", method=note(f"method.{inp.method or 'lora'}")))
        out.append(note("recommend.assume.training_score", fabric=SCALING["fabric"], pcie_p2p=SCALING["pcie-p2p"],
                        no_p2p=SCALING["no-p2p"], unit=unit))
        if inp.deadline_hours and not inp.dataset_tokens:
            out.append(note("recommend.assume.deadline_ignored"))
    else:
        out.append(note("recommend.assume.scientific_score", no_ecc=NO_ECC_FACTOR, unit=unit))
    return out


def _factors(table: dict[str, float]) -> str:
    """'cuda 1, rocm-cdna 0.9, …': software-stack ids with their weights (language-neutral)."""
    return ", ".join(f"{k} {v:g}" for k, v in table.items())
