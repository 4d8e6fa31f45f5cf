"""Catalog filters: "which GPUs support FP8 / have NVLink / have ECC / hold 48 GB or more?"

``find_gpus(FindGPUsInput) -> FindGPUsResult`` lists the catalog GPUs that meet every condition, largest
memory first, with the dense throughput of the precision asked about. Support is what the catalog
records: a dense figure means a hardware path; a precision in ``unsupported`` means none; neither
means unknown (listed separately, never counted as support).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from knowledge.markets import Region, sold_in
from knowledge.schema import GPU, Precision
from tools.inputs import ToolInput, VendorNames
from tools.precision import resolve_precision
from tools.pricing import CNY_PER_USD, FX_AS_OF, HOST_COST_USD, USD_PER_FOREIGN, SaidPrice, gpu_price
from tools.recommend import host_for
from tools.result import Note, note
from tools.units import CNY, TFLOPS, USD, GBps

Feature = Literal["nvlink", "ecc", "fp64", "mig", "display"]
_LINKS = ("nvlink", "nvlink-bridge", "infinity-fabric", "hccs", "mlu-link", "mtlink", "metaxlink", "blink")
MAX_LISTED = 60


class FindGPUsInput(ToolInput):
    model_config = ConfigDict(extra="forbid")

    supports: Precision | None = Field(None, description="a precision with a hardware path (fp8, fp4, bf16 …)")
    feature: Feature | None = Field(None, description="nvlink = any GPU-to-GPU link beyond PCIe")
    vendor: str | None = Field(None, description="NVIDIA, AMD, Intel, Huawei …")
    exclude_vendors: VendorNames = Field(default_factory=list, description="vendors ruled out ('no NVIDIA')")
    domestic: bool | None = None
    min_memory_gb: float | None = Field(None, gt=0, le=10_000, description="vendor GB as on the datasheet")


class GPUEntry(BaseModel):
    id: str
    name: str
    vendor: str
    tier: str
    memory_gb: float
    tflops: TFLOPS | None = Field(None, description="dense TFLOPS of the precision asked about")
    as_of: str
    confidence: str


class FindGPUsResult(BaseModel):
    matches: list[GPUEntry]
    unknown: list[str] = Field(default_factory=list, description="names whose support the catalog does not record")
    total: int = Field(description="catalog GPUs considered")
    criteria: dict[str, str | float | bool]
    formula: Note = Field(description="perf.formula.find.supports")
    assumptions: list[Note]


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
        if g.vendor.lower() in {v.lower() for v in inp.exclude_vendors}:
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
    criteria: dict[str, str | float | bool] = {k: (str(v) if isinstance(v, Precision) else
                                                   ", ".join(v) if isinstance(v, list) else v)
                                               for k, v in inp.model_dump(exclude_none=True).items() if v != []}
    return FindGPUsResult(
        matches=matches[:MAX_LISTED], unknown=unknown, total=len(gpus), criteria=criteria,
        formula=note("perf.formula.find.supports"),
        assumptions=[note("perf.find.dense"), note("perf.find.as_recorded")],
    )


# ----------------------------------------------------------------------------- what a budget buys

COUNTS_BY_TIER: dict[str, tuple[int, ...]] = {"consumer": (1, 2), "workstation": (1, 2, 4),
                                              "datacenter": (1, 2, 4, 8), "domestic": (1, 2, 4, 8)}
WEIGHT_SHARE = 0.8  # weights may take this share of the memory; the rest holds KV cache and runtime buffers
LOW_BIT, HIGH_BIT = "Q4_K_M", "bf16"  # the sizes reported: what Ollama pulls by default, and native 16-bit


class AffordableInput(ToolInput):
    model_config = ConfigDict(extra="forbid")

    budget_usd: float = Field(gt=0, le=1e9, allow_inf_nan=False)
    include_host: bool = Field(True, description="the budget also buys the computer the cards go in")
    domestic_only: bool = False
    vendors: VendorNames = Field(default_factory=list, description="allowed vendors; empty = any")
    region: Region | None = Field(None, description="only cards sold new there (knowledge/data/markets.toml)")
    limit: int = Field(5, ge=1, le=20)
    said_prices: dict[str, SaidPrice] = Field(default_factory=dict, max_length=16,
                                              description="GPU id → the unit price the buyer said (replaces the "
                                                          "catalog's)")
    currency: Literal["USD", "CNY", "EUR", "GBP"] = Field("USD", description="currency of the `price` column")
    only_gpus: list[str] = Field(default_factory=list, max_length=8, description="only these cards (catalog names), "
                                 "each at the largest count the budget buys: any count to a node of 8, then whole "
                                 "nodes to 64")
    platform: str | None = Field(None, description="the buyer's own computer (catalog CPU platform): only cards it "
                                                    "takes — PCIe cards with fans outside servers, as many as it holds")


class AffordableOption(BaseModel):
    gpu: str
    name: str
    count: int
    tier: str
    memory_gb: float = Field(description="all cards together, vendor GB")
    bandwidth_gbs: GBps = Field(description="per card, GB/s")
    price_usd: USD = Field(description="cards (+ host when included), USD")
    price_cny: CNY = Field(description="the same at the catalog's dated CNY/USD rate")
    price: float = Field(description="the same in the requested currency (dated rates)")
    host_usd: USD
    max_params_b_4bit: float = Field(description="largest dense model whose 4-bit weights fit, billions")
    max_params_b_16bit: float
    price_as_of: str


class AffordableResult(BaseModel):
    options: list[AffordableOption]
    budget_usd: USD
    currency: str
    weight_share: float = Field(description="share of the memory the weights may take in the model-size columns")
    unpriced: list[str] = Field(description="cards the catalog has no price for (not ranked)")
    formula: list[Note] = Field(description="perf.formula.afford.* notes")
    assumptions: list[Note]


ANY_COUNT = (*range(1, 9), 16, 24, 32, 40, 48, 56, 64)  # a named card: any count to a node, then whole nodes
BOARD_COUNTS = (4, *ANY_COUNT[7:])  # modules (SXM, OAM) come on 4- and 8-GPU baseboards, then whole 8-GPU nodes
CARDS_IN = {"desktop": 2, "hedt": 4, "workstation": 4, "server": 8}  # cards a platform's own machine holds


def _fits_machine(g: Any, platform: Any) -> bool:
    """Whether a card goes into the buyer's own machine: a PCIe card, with fans unless the machine is a server."""
    if g.form_factor != "pcie":
        return False
    return platform.segment == "server" or g.cooling.value != "passive"



def affordable(inp: AffordableInput) -> AffordableResult:
    """The configurations a budget buys, most total memory first (one row per GPU: its largest count that fits)."""
    options: list[AffordableOption] = []
    unpriced: list[str] = []
    low_bytes = resolve_precision(LOW_BIT).bits_per_weight / 8
    high_bytes = resolve_precision(HIGH_BIT).bits_per_weight / 8
    catalog = load_catalog()
    only = {catalog.gpu(name).id for name in inp.only_gpus}
    own = catalog.platform(inp.platform) if inp.platform else None
    for g in catalog.gpus:
        if only and g.id not in only:
            continue
        if inp.domestic_only and not g.domestic:
            continue
        if inp.vendors and g.vendor.lower() not in {v.lower() for v in inp.vendors}:
            continue
        if not sold_in(g.id, inp.region):
            continue
        if own is not None and not _fits_machine(g, own):
            continue
        price = gpu_price(g, said=inp.said_prices.get(g.id))
        if price.usd is None:
            unpriced.append(g.name)
            continue
        counts = ((8,) if g.on_baseboard else (1,) if g.form_factor == "system"
                  else COUNTS_BY_TIER.get(str(g.tier), (1, 2)))
        if only:
            counts = BOARD_COUNTS if g.on_baseboard else ANY_COUNT if g.form_factor != "system" else (1, 2, 4)
        if own is not None:
            counts = tuple(n for n in counts if n <= CARDS_IN[own.segment]) or (1,)
        best = None
        for n in counts:
            # a module is bought as a server, whatever the budget's scope: it has no PCIe card to buy alone
            host = HOST_COST_USD[host_for(g, min(n, 8))[2]] * -(-n // 8) \
                if inp.include_host or g.on_baseboard else 0.0
            total = price.usd * n + host
            if total <= inp.budget_usd:
                best = (n, total, host)
        if best is None:
            continue
        n, total, host = best
        memory_bytes = g.memory_bytes * n * WEIGHT_SHARE
        options.append(AffordableOption(
            gpu=g.id, name=g.name, count=n, tier=str(g.tier), memory_gb=g.memory_gb * n,
            bandwidth_gbs=g.bandwidth_gbs, price_usd=round(total, 2), price_cny=round(total * CNY_PER_USD, 2),
            price=round(total * CNY_PER_USD if inp.currency == "CNY"
                        else total / USD_PER_FOREIGN.get(inp.currency, 1.0), 2),
            host_usd=host, max_params_b_4bit=round(memory_bytes / low_bytes / 1e9, 1),
            max_params_b_16bit=round(memory_bytes / high_bytes / 1e9, 1),
            price_as_of=str(g.price.as_of) if g.price else ""))
    options.sort(key=lambda o: (-o.memory_gb, o.price_usd, -o.bandwidth_gbs))
    return AffordableResult(
        options=options[:inp.limit], budget_usd=inp.budget_usd, currency=inp.currency, weight_share=WEIGHT_SHARE,
        unpriced=unpriced,
        formula=[note("perf.formula.afford.largest_model", share=WEIGHT_SHARE, low_bytes=low_bytes, low=LOW_BIT,
                      high_bytes=high_bytes, high=HIGH_BIT),
                 note("perf.formula.afford.price")],
        assumptions=[note("perf.afford.share", share=WEIGHT_SHARE), note("perf.afford.street"),
                     note("perf.afford.host" if inp.include_host else "perf.afford.no_host"), _prices(inp.currency)])


def _prices(currency: str) -> Note:
    """The currency the prices are in, and the dated rate used."""
    as_of = str(FX_AS_OF)
    if currency == "USD":
        return note("perf.afford.prices", currency=currency, as_of=as_of)
    if currency == "CNY":
        return note("perf.afford.prices_cny", currency=currency, rate=CNY_PER_USD, as_of=as_of)
    return note("perf.afford.prices_foreign", currency=currency, rate=USD_PER_FOREIGN[currency], as_of=as_of)
