"""Deterministic dialogue planning: which follow-up to ask next, and which tool calls a turn needs.

Each path (inference / training / scientific) has ordered groups of profile slots. The next
question asks the first one or two slots that are neither known nor already asked — a slot is
asked at most once (except the model, without which nothing can be computed). Tools run as
soon as the path's core slots are known (or were asked and left open, in which case a stated
default is used), or at once when the user asks about a concrete GPU configuration.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from advisor.config_at_hand import current_config, node_size
from advisor.fmt import default_currency
from advisor.nlu import CANONICAL, DAYS_PER_MONTH, SPECIALISED, GpuCount, Intent, Kind, Parsed, UseCase, Workload, vocab
from advisor.nlu.kinds import is_question
from advisor.nlu.rules import MAX_NODE_GPUS
from advisor.session import Profile, Session
from advisor.toolspec import run_tool
from knowledge import load_catalog
from knowledge.api_prices import api_prices
from knowledge.codes import ScientificCode, scientific_code
from knowledge.names import VENDORS
from knowledge.offers import system_resolver
from knowledge.stack_support import engine_runs
from tools.errors import ToolError
from tools.gpu_memory import card_visible_bytes
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.lora import lora_trainable_params
from tools.modelspec import load_model_spec
from tools.perf import MAX_TIMED_GPUS
from tools.pricing import to_usd
from tools.recommend import candidate_counts, native_stand_in
from tools.scale_out import MAX_NODES, NODE_GPUS, even_nodes, nodes_for
from tools.systems import system_for
from tools.training_memory import TrainingMemoryInput, default_zero_stage, estimate_training_memory

DEFAULT_CONTEXT = 8192
# Many users at once rarely all hold a full 8k window: a service's requests are sized at 4k each (said in the
# reply), which the paged KV cache pools across them; one or a few users keep the full default.
SERVICE_CONTEXT = 4096
SERVICE_USERS = 8


def default_context(concurrency: int) -> int:
    """The context a request is sized at when none is said: the full default for one or a few users, less for a
    service (chat, CLI and API alike)."""
    return SERVICE_CONTEXT if concurrency >= SERVICE_USERS else DEFAULT_CONTEXT


def context_for(p: Profile) -> int:
    """The context a request is sized at: the one said, else :func:`default_context`."""
    return p.context_tokens or default_context(p.concurrency or 1)
DEFAULT_CONCURRENCY = 1
DEFAULT_TRAIN_SEQ = 2048


def train_seq(p: Profile) -> int:
    """The sequence length a training step holds: the one said; else the samples' length said ('avg 512 tokens'),
    up to the next power of two as trainers pad or pack to; else 2,048."""
    if p.context_tokens:
        return p.context_tokens
    if p.tokens_per_sample:
        return max(256, 1 << max(int(p.tokens_per_sample) - 1, 1).bit_length())
    return DEFAULT_TRAIN_SEQ
TOKENS_PER_SAMPLE = 512
MAX_QUESTION_SLOTS = 2

GROUPS: dict[str, list[tuple[str, ...]]] = {
    "inference": [("model", "precision"), ("context_tokens", "concurrency"), ("budget",),
                  ("cuda_required", "domestic"), ("existing",), ("form_factor", "power_limit_w")],
    "training": [("model", "method"), ("dataset_tokens", "deadline_days"), ("budget",),
                 ("cuda_required", "domestic"), ("existing",), ("form_factor", "power_limit_w")],
    "scientific": [("fp64", "problem_size_gb"), ("budget",), ("cuda_required", "domestic"), ("existing",),
                   ("form_factor", "power_limit_w")],
}
CORE: dict[str, tuple[str, ...]] = {
    "inference": ("model", "precision"),
    "training": ("model", "method"),
    "scientific": ("fp64", "problem_size_gb"),
}
Mode = Literal["opening", "ask", "answer", "compare", "why", "export", "reset", "empty", "spec", "concept", "build",
               "rent", "afford", "value", "generative"]
DEFAULT_RENT_HOURS = 24.0
# Below this a budget cannot buy a desktop host ($2,500) and a useful pair of 24 GB cards ($1,600) together, so
# an unqualified budget is read as money for the cards (the reply says so and how to change it).
CARD_ONLY_BELOW_USD = 4500.0
def _vendor_args(p: Profile) -> list[str] | None:
    """The vendors a recommendation may use (knowledge.names.VENDORS, the one spelling): the ones named as the
    only choice, else all but the ones ruled out; None when neither was said."""
    if p.only_vendors:
        only = {v.lower() for v in p.only_vendors}
        return [v for v in VENDORS if v.lower() in only]
    if p.excluded_vendors:
        out = {v.lower() for v in p.excluded_vendors}
        return [v for v in VENDORS if v.lower() not in out]
    return None


class PlannedCall(BaseModel):
    name: str
    arguments: dict[str, Any]
    purpose: Literal["size", "perf", "time", "check", "recommend", "info", "search", "value"]
    needs_fit: bool = Field(False, description="skip when this turn's sizing says it does not fit")
    only_if_no_fit: bool = Field(False, description="run only when this turn's sizing says it does not fit")
    takes_sizing: bool = Field(False, description="fill each option's fit and decode speed from this turn's "
                                                   "sizings and estimates (value for money)")
    gpu: str | None = None
    alt: str | None = Field(None, description="label of an alternative to the requested configuration "
                                              "('int4', 'fp8', 'gguf', 'more_gpus'); never changes the verdict")
    when: Literal["always", "no_fit", "native_failed"] = Field(
        "always", description="alternatives: always; only when the sizing says no fit; or also when the "
                              "recommendation finds no option")


class Plan(BaseModel):
    mode: Mode
    calls: list[PlannedCall] = Field(default_factory=list)
    question_slots: list[str] = Field(default_factory=list)
    assumed: dict[str, Any] = Field(default_factory=dict, description="slot -> default used this turn")
    model_assumed: str | None = Field(None, description="catalog model picked for a bare size ('70b')")
    alt_calls: dict[str, str] = Field(default_factory=dict, description="call id -> alternative label (engine)")


# ----------------------------------------------------------------------------- questions


def next_question_slots(session: Session) -> list[str]:
    """The unknown, never-asked slots of the first group that has any (one or two slots)."""
    p = session.profile
    if p.use_case is None:
        return [] if "use_case" in session.asked else ["use_case"]
    out: list[str] = []
    for group in GROUPS[p.use_case]:
        for slot in group:
            if p.known(slot) or slot in session.asked:
                continue
            if slot == "precision" and p.method == "qlora":
                continue
            if slot == "power_limit_w" and p.form_factor == "server":
                continue
            if slot == "domestic" and (session.lang == "en" or session.region_guess == "global"):
                continue  # a Chinese-procurement (信创) rule: English speakers and buyers abroad who have it say so
            if slot in ("cuda_required", "domestic") and _vendor_settled(p):
                continue  # NVIDIA ruled out or the vendors named: CUDA and 信创 are answered already
            out.append(slot)
        if out:  # one group at a time: its slots belong together in one question
            break
    if not out and p.use_case in ("inference", "training") and not p.known("model"):
        out = ["model"]  # nothing can be computed without it
    return out[:MAX_QUESTION_SLOTS]


def _vendor_settled(p: Profile) -> bool:
    """The buyer said which vendors they can buy (or that they must buy domestic)."""
    return bool(p.domestic or "nvidia" in p.excluded_vendors or p.only_vendors)


def ready(session: Session, parsed: Parsed | None = None) -> bool:
    """Enough is known to compute: a model for the AI paths (the rest has stated defaults); for scientific
    work the core slots known or already asked, or a concrete GPU question."""
    return _ready_as(session.profile.use_case, session, parsed)


def _ready_as(use_case: UseCase | None, session: Session, parsed: Parsed | None = None) -> bool:
    """:func:`ready`, for the use case given (the one a question implies, before it is set on the profile)."""
    p = session.profile
    if use_case is None:
        return False
    if use_case in ("inference", "training"):
        return p.known("model")
    if p.gpu or p.existing or p.budget or p.fp64 is not None or p.problem_size_gb:
        return True
    if parsed is not None and (parsed.has(Intent.recommend) or parsed.has(Intent.whatif)):
        return True
    return all(p.known(s) or s in session.asked for s in CORE[use_case])


# ----------------------------------------------------------------------------- helpers




def representative_model(params_b: float) -> str | None:
    """The catalog LLM closest in size (a widely used dense one preferred), within 15 %; else None."""
    best: tuple[float, str] | None = None
    for m in load_catalog().models:
        if m.kind != "llm":
            continue
        diff = abs(m.params_b - params_b) / params_b
        if diff > 0.15 or (m.is_moe and m.id not in CANONICAL):  # a size alone says nothing of its experts
            continue
        score = diff + (0.0 if m.id in CANONICAL else 0.2) + (0.1 if m.is_moe else 0.0)
        score += 0.1 if any(w in m.id for w in SPECIALISED) else 0.0
        if best is None or score < best[0]:
            best = (score, m.id)
    return best[1] if best else None


def size_stand_in(p: Profile) -> str | None:
    """The model under discussion, or the catalog model that stands for a size said alone ('32B'); none when
    pre-training from scratch, which trains the buyer's own architecture of that size."""
    if p.model or not p.params_b or p.method == "pretrain":
        return p.model
    return representative_model(p.params_b)


def model_args(p: Profile) -> dict[str, Any]:
    """The model as tools take it: a catalog name (or its stand-in), else the size said."""
    model = size_stand_in(p)
    return {"model": model} if model else ({"params_b": p.params_b} if p.params_b else {})


def _budget_args(p: Profile) -> dict[str, Any]:
    if p.budget is None:
        return {}
    if p.budget.currency in ("EUR", "GBP"):
        return {"budget_usd": round(to_usd(p.budget.amount, p.budget.currency), 2), "price_currency": p.budget.currency}
    return {"budget_cny": p.budget.amount} if p.budget.currency == "CNY" else {"budget_usd": p.budget.amount}


def _chassis(p: Profile) -> str | None:
    """The chassis the user's words imply: a workstation or a machine at home is a tower, a server a rack; owning
    only consumer or workstation cards, or a budget that buys a card and no computer, means a desktop tower."""
    owned_desk = bool(p.existing) and all(_desk_card(e.gpu) for e in p.existing or [])
    if p.form_factor is None and (p.nodes or 1) > 1:
        return "rack"  # nodes of a cluster are rack servers
    if p.form_factor is None and (p.home or owned_desk or _card_only(p)):
        return "tower"
    return {"workstation": "tower", "server": "rack"}.get(p.form_factor or "")


def chassis_for(p: Profile, gpu: str) -> str:
    """The chassis a machine of ``gpu`` goes in: what the user's words imply, else a tower for a card with fans and
    a rack server for a passive one."""
    said = _chassis(p)
    if said is not None:
        return said
    return "tower" if load_catalog().gpu(gpu).cooling.value != "passive" else "rack"


def _desk_card(gpu_id: str) -> bool:
    try:
        return load_catalog().gpu(gpu_id).tier.value in ("consumer", "workstation")
    except LookupError:
        return False


def _machine_check(check: dict[str, Any], p: Profile) -> dict[str, Any]:
    """A build check's arguments with what the user said about the machine, each card at the power limit said
    ('功耗每张限到300W': every check this session makes, beside a speed answer too)."""
    out = {**check, **_machine_args(p)}
    if p.gpu_power_limit_w:
        out["gpus"] = [{**g, "power_limit_w": p.gpu_power_limit_w} for g in out["gpus"]]
    return out


def _machine_args(p: Profile) -> dict[str, Any]:
    """What the user said about the machine around the GPUs (wall circuit, PSU, RAM, CPU, chassis), for every
    build check — the one a build question asks for and the one beside a sizing answer."""
    args: dict[str, Any] = {}
    if p.mains:
        args["mains"] = p.mains
        if p.circuit_load_w:  # '600W already on that circuit': what is left for the machine
            args["other_load_w"] = p.circuit_load_w
        if p.circuits and p.circuits > 1:
            args["circuits"] = p.circuits
        if (p.nodes or 1) > 1:  # '30 workstations on 2x 32A': all of them on those circuits
            args["machines"] = p.nodes
    if p.psu_w:
        args["psu_w"] = p.psu_w
    if p.power_limit_w and _machine_cap(p) and (p.nodes or 1) == 1:  # '每台服务器限 3000W'
        args["max_wall_w"] = p.power_limit_w
    if p.system_ram_gb:
        args["system_ram_gb"] = p.system_ram_gb
    if p.cpu:
        args["platform"] = p.cpu
    if _chassis(p):
        args["chassis"] = _chassis(p)
    return args


_GGUF_FOR = ((4.5, "Q4_K_M"), (8.5, "Q8_0"))  # a quantised weight format as the GGUF file of the same bits


def engine_precision(precision: str, engine: str) -> str:
    """The precision as ``engine`` runs it: on llama.cpp a 4- or 8-bit server format (AWQ, GPTQ, INT8, FP8) is
    the GGUF file of the same bits (Q4_K_M, Q8_0); 16-bit, GGUF names and MXFP4 (gpt-oss's GGUF type) stay."""
    bits, family = _precision_bits(precision)
    if engine != "llamacpp" or family == "gguf" or bits >= 16 or precision.lower() == "mxfp4":  # a GGUF type too
        return precision
    return next((gguf for limit, gguf in _GGUF_FOR if bits <= limit), precision)


def _run_precision(p: Profile, model: dict[str, Any], engine: str) -> str | None:
    """The precision a sizing and its speed use: the one asked, as ``engine`` runs it; on llama.cpp with none
    asked, the model's own weights as a file of the same bits (a Mac sized at BF16 and timed at BF16 alike)."""
    if p.precision:
        return engine_precision(p.precision, engine)
    if engine != "llamacpp" or "model" not in model:
        return None
    try:
        native = load_catalog().model(model["model"]).native_dtype
    except Exception:
        return None
    return engine_precision(native, engine)


def _engine(p: Profile) -> str:
    """The engine the sizing follows: llama.cpp for GGUF files or a machine the servers do not run on (a Mac),
    else the server the user named (SGLang or vLLM), else vLLM."""
    server = p.engine_hint if p.engine_hint in ("sglang", "vllm") else "vllm"
    machine = [p.gpu] if p.gpu else [e.gpu for e in p.existing or []]  # the card named, else the ones owned
    if machine and not all(engine_runs(g, server) for g in machine):
        return "llamacpp"
    if p.precision:
        from tools.precision import resolve_precision

        try:
            if resolve_precision(p.precision).family == "gguf":
                return "llamacpp"
        except ValueError:
            pass
    return server


PRETRAIN_TOKENS = 1e11  # a dataset this large is pre-training: fine-tuning sets run from millions to a few billion


def training_method(p: Profile) -> str:
    """The method sized: the one named; full for pre-training (named, or implied by ≥ 100B tokens); else LoRA."""
    if p.method in ("lora", "qlora", "full"):
        return p.method
    if p.method == "pretrain" or (p.method is None and (dataset_tokens(p) or 0) >= PRETRAIN_TOKENS):
        return "full"
    return "lora"


def dataset_tokens(p: Profile) -> float | None:
    """The tokens trained on in all: the data set's tokens (or samples × a typical length) × the epochs."""
    if p.dataset_tokens:
        return p.dataset_tokens * (p.epochs or 1)
    if p.dataset_samples:
        return p.dataset_samples * (p.tokens_per_sample or TOKENS_PER_SAMPLE) * (p.epochs or 1)
    return None


def _config(p: Profile) -> tuple[str | None, int]:
    """The GPU configuration under discussion: the named one, else the hardware already owned; over several
    machines, every machine's GPUs together."""
    if p.gpu:  # no count said: one card, or the node a baseboard card comes in ('HGX H200 boxes': eight)
        return p.gpu, all_nodes(p, p.gpu_count or node_size(p.gpu))
    if p.existing:
        first = p.existing[0]
        return first.gpu, all_nodes(p, p.gpu_count or first.count)
    return None, all_nodes(p, p.gpu_count or 1)


def one_node(count: int) -> int:
    """The GPUs of one machine: a build check looks at one node of a cluster (they are identical)."""
    return count // nodes_for(count)


def all_nodes(p: Profile, per_node: int) -> int:
    """GPUs in all the machines said ('two servers of 8 H100' → 16; '16 nodes of 8x H200' → 128); a count equal
    to the machines counted them ('two L40S servers'); past a two-tier fabric (2,048 GPUs) one node is looked at."""
    nodes = p.nodes or 1
    machines_counted = per_node == nodes and per_node <= MACHINES_COUNTED_MAX and not _on_baseboard(p)
    if per_node > MAX_NODE_GPUS:  # '128 GPUs' is the cluster's total: no server holds that many
        return per_node
    if nodes > 1 and not machines_counted and per_node * nodes <= MAX_NODES * NODE_GPUS:
        return per_node * nodes
    return per_node


MACHINES_COUNTED_MAX = 4  # 'two L40S servers' counts machines; eight nodes of eight GPUs are 64 GPUs


def keep_count(p: Profile, gpu: str, total: int) -> None:
    """The count an answer worked out ('至少要 16 张', '32 张能按期训完') becomes the configuration the follow-ups
    talk about: GPUs per node and nodes."""
    nodes = nodes_for(total)
    p.gpu, p.gpu_count = gpu, total // nodes
    if nodes > 1:
        p.nodes = nodes


def _on_baseboard(p: Profile) -> bool:
    """The card under discussion comes only on 8-GPU baseboards (SXM, OAM, modules)."""
    gid = p.gpu or (p.existing[0].gpu if p.existing else None)
    return gid is not None and load_catalog().gpu(gid).on_baseboard


def _search_query(p: Profile, mode: str, lang: str) -> str:
    zh = lang == "zh"
    if mode == "why":
        return ("显存 权重 KV cache 开销 为什么" if zh else "why memory weights KV cache overhead explained")
    if p.use_case == "scientific":
        return "科学计算 FP64 双精度 ECC 显存" if zh else "scientific computing FP64 double precision ECC memory"
    if p.use_case == "training":
        method = training_method(p)
        return (f"训练 显存 {method} 优化器状态 激活" if zh else
                f"training memory {method} optimizer states activations")
    if is_generic_4bit(p.precision):  # the guide's '4-bit ≈ 35 GB' is weights alone: cite the weights passage
        return ("4-bit 量化 权重 35 GB KV 缓存 显存" if zh else "4-bit quantised weights 35 GB KV cache memory")
    words = ["KV cache", p.precision or "", "显存 推理 并发 上下文" if zh else "inference memory context concurrency"]
    return " ".join(w for w in words if w)


# ----------------------------------------------------------------------------- planning


@dataclass
class PlanContext:
    """What a route looks at: the (already updated) session, this turn's parse and what follows from them — the
    kind (a follow-up continues the last answer's), the GPUs named and the use case the question implies."""

    session: Session
    parsed: Parsed
    lang: str
    search_k: int

    @property
    def profile(self) -> Profile:
        return self.session.profile

    @cached_property
    def kind(self) -> Kind | None:
        return continued_kind(self.session, self.parsed)

    @cached_property
    def named(self) -> list[str]:
        """The GPUs this message names, each once."""
        return list(dict.fromkeys(g.gpu for g in self.parsed.gpus))

    @cached_property
    def implied(self) -> UseCase | None:
        """The use case the question implies when none was said (:func:`implied_use_case`)."""
        return None if self.profile.use_case else implied_use_case(self.profile, self.parsed)

    @property
    def use_case(self) -> UseCase | None:
        """The use case said, else the one implied (set on the profile by the plan that computes on it)."""
        return self.implied or self.profile.use_case


class Route(NamedTuple):
    """One mode of a turn: taken when ``when`` holds and no route before it does; ``build`` makes its plan."""

    name: str
    when: Callable[[PlanContext], bool]
    build: Callable[[PlanContext], Plan]


def plan_turn(session: Session, parsed: Parsed, lang: str, search_k: int = 3) -> Plan:
    """Decide this turn's mode, tool calls and follow-up question from the (already updated) session: the first
    of :data:`_ROUTES` whose condition holds builds the plan (the last one, the answer, always does)."""
    ctx = PlanContext(session, parsed, lang, search_k)
    _assume_service_model(ctx)
    for route in _ROUTES:
        if route.when(ctx):
            return route.build(ctx)
    raise AssertionError("the last route always matches")


# a service to people (a knowledge base, a chat assistant) with no model named is sized on the open model such
# services most often run: a 32B instruct model in 4-bit AWQ, on one or two 24-48 GB cards; said in the reply
SERVICE_MODEL, SERVICE_PRECISION = "qwen2.5-32b", "int4"


def api_peer(api: str) -> str:
    """The open model a buyer would serve in place of ``api`` (knowledge/data/api_prices.toml)."""
    return next((r.self_host_peer for r in api_prices() if r.id == api), SERVICE_MODEL)


def _assume_service_model(ctx: PlanContext) -> None:
    """An inference service for several people, with no model named: the stand-in model, said back, so the buyer
    gets cards, speeds and prices rather than a question (naming a model replaces it). One person's own machine
    is not sized on it: what a budget buys answers them better."""
    p = ctx.profile
    people = max(p.concurrency or 0, p.head_count or 0)
    replaces_api = bool(p.api_model or p.api_monthly_spend)  # a machine weighed against an API serves its peer
    if p.use_case != "inference" or p.known("model") or p.model_said or (people < 2 and not replaces_api) \
            or ctx.kind in (*_LOOKUP_KINDS, Kind.compare) or (ctx.named and not replaces_api):
        return
    model = api_peer(p.api_model) if p.api_model else SERVICE_MODEL
    p.model, p.params_b = model, load_catalog().model(model).params_b
    p.precision = p.precision or SERVICE_PRECISION
    p.service_model = True


# ----------------------------------------------------------------------------- routes: when


def _kind_is(kind: Kind) -> Callable[[PlanContext], bool]:
    def when(ctx: PlanContext) -> bool:
        return ctx.kind == kind

    return when


def _always(ctx: PlanContext) -> bool:
    return True


def _asks_reset(ctx: PlanContext) -> bool:
    return ctx.parsed.has(Intent.reset)


def _asks_export(ctx: PlanContext) -> bool:
    return ctx.parsed.has(Intent.export) and not ctx.parsed.gpus


def _is_empty(ctx: PlanContext) -> bool:
    return not ctx.parsed.text.strip()


def _checks_a_build(ctx: PlanContext) -> bool:
    """A build check — when there is a machine to check: cards named or held, a count or a platform, or the
    configuration the conversation arrived at. 'Stay under 3 kW: what GPUs and how many?' names none: the
    recommendation answers it (with the power limit as a gate)."""
    if ctx.kind != Kind.build:
        return False
    p, parsed = ctx.profile, ctx.parsed
    if (parsed.model or parsed.context_tokens) and parsed.has(Intent.whatif) and (p.gpu or p.existing) \
            and p.use_case in ("inference", "training"):
        return False  # 'what if 32k context with qwen coder 32b, and my psu is 850w?': sized, the build beside it
    has_machine = bool(ctx.parsed.gpus or p.gpu or p.existing or p.gpu_count or p.cpu
                       or current_config(ctx.session, []) is not None)
    return has_machine or not (p.model or p.params_b or p.use_case)


def _rents_a_machine(ctx: PlanContext) -> bool:
    """Renting against buying — unless the message asks what renting costs for the training run under discussion
    ('renting 8x H100 for that fine-tune at $2.50/GPU-h'): that is the run's time at the rate said (the answer)."""
    if ctx.kind != Kind.rent_vs_buy:
        return False
    p, parsed = ctx.profile, ctx.parsed
    one_run = p.use_case == "training" and bool(dataset_tokens(p)) and not (parsed.hours_per_day or parsed.years) \
        and "break_even" not in parsed.asks
    return not one_run


def _compare_partner(ctx: PlanContext) -> tuple[str, int | None] | None:
    """'跟 H100 比呢', 'on that rig vs renting 8xH100': one card named in a comparison is compared against the
    configuration the conversation arrived at a turn earlier, with its count (or the card a lookup was about),
    not against an older comparison's cards."""
    asked = ctx.kind == Kind.compare or ctx.parsed.has(Intent.compare)
    if not asked or len(ctx.named) != 1:
        return None
    if ctx.named[0] in ctx.profile.compare and (ctx.kind != Kind.compare or len(ctx.profile.compare) >= 2):
        return None  # the card joined the cards compared ('what about the MI210 instead?'): the list is compared
    at_hand = current_config(ctx.session, [])
    if at_hand is not None and at_hand.gpu != ctx.named[0] and at_hand.nodes == 1:
        return at_hand.gpu, at_hand.count
    card = next((g for g in [*ctx.session.focus, ctx.profile.gpu] if g and g != ctx.named[0]), None)
    return (card, None) if card else None


def _compares(ctx: PlanContext) -> bool:
    """Two or more cards named, or a comparison asked of the cards already compared (or of one named and the card
    under discussion)."""
    asked = ctx.parsed.has(Intent.compare) or ctx.kind == Kind.compare
    each = ctx.parsed.both_schemes and not ctx.named  # 'how long … with each one?': the cards compared, again
    return bool(_compare_partner(ctx)) or (len(ctx.profile.compare) >= 2 and (asked or each)) or len(ctx.named) >= 2


def _explains_last(ctx: PlanContext) -> bool:
    """'Why?' about the last answer, with nothing new said."""
    asked = ctx.kind == Kind.why or ctx.parsed.has(Intent.why)
    return asked and bool(ctx.session.last_results) and not _has_new_facts(ctx.parsed)


def _why_unanswered(ctx: PlanContext) -> bool:
    """'Why is the 3090 the value king?': nothing of ours to explain."""
    return ctx.kind == Kind.why and not ctx.session.last_results


def _why_value(ctx: PlanContext) -> bool:
    """The same about value for money, with no model or budget to compute for: the value ranking."""
    p = ctx.profile
    return _why_unanswered(ctx) and ctx.parsed.asks_value and not (p.budget or p.known("model"))


def _buying(ctx: PlanContext) -> bool:
    """A buying question, or a follow-up to a recommendation."""
    follows = ctx.kind in (Kind.inform, Kind.whatif, Kind.correct) and ctx.session.last_kind == Kind.recommend
    return ctx.kind == Kind.recommend or follows


def _affords(ctx: PlanContext) -> bool:
    p = ctx.profile
    return _buying(ctx) and bool(p.budget) and not p.known("model") and p.use_case != "scientific"


def _asks_best_value(ctx: PlanContext) -> bool:
    p, parsed = ctx.profile, ctx.parsed
    asks = parsed.asks_value or parsed.asks_best
    return ctx.kind == Kind.recommend and not (p.budget or p.known("model")) and asks


def _filters_vendors(ctx: PlanContext) -> bool:
    p = ctx.profile
    vendors = bool(p.domestic or p.excluded_vendors)
    return ctx.kind == Kind.recommend and not p.known("model") and vendors and not p.budget


def _no_use_case(ctx: PlanContext) -> bool:
    return ctx.use_case is None


def _asks_what_to_rent(ctx: PlanContext) -> bool:
    """'which gpu should i rent and how long will it take': a rental asked for a job, whatever else it asks."""
    p, parsed = ctx.profile, ctx.parsed
    # '那租卡做一次全参要多少钱？2 亿 token，3 个 epoch': no card named, a run to price: what to rent for it
    job_to_rent = ctx.kind == Kind.rent_vs_buy and p.use_case == "training" and bool(dataset_tokens(p)) \
        and not p.gpu and "break_even" not in parsed.asks
    return (parsed.asks_where_rent or job_to_rent) and not parsed.gpus and bool(size_stand_in(p)) \
        and p.use_case in ("inference", "training")


def _asks_mid_conversation(ctx: PlanContext) -> bool:
    """A question with no use case after an earlier answer ('warranty on these?', 'any issue reselling to China?'):
    answered from the knowledge base, never with the opening greeting again."""
    greeting = ctx.parsed.kind == Kind.chitchat and ctx.parsed.kind_by == "rules"  # 'hi', 'thanks'
    return ctx.use_case is None and ctx.session.last_kind is not None and not greeting \
        and bool(ctx.parsed.text.strip())


def _asks_a_card_fact(ctx: PlanContext) -> bool:
    """'what about mi355x, is it out and price?': a fact asked of a card named, with no use case to plan on."""
    parsed = ctx.parsed
    return ctx.use_case is None and bool(parsed.gpus) and parsed.asked_attribute is not None and ctx.kind in (
        Kind.whatif, Kind.inform, Kind.chitchat)


def _not_ready(ctx: PlanContext) -> bool:
    return not _ready_as(ctx.use_case, ctx.session, ctx.parsed)


# ----------------------------------------------------------------------------- routes: plans


def _reset_plan(ctx: PlanContext) -> Plan:
    return Plan(mode="reset", question_slots=["use_case"])


def _export_plan(ctx: PlanContext) -> Plan:
    return Plan(mode="export")


def _empty_plan(ctx: PlanContext) -> Plan:
    return Plan(mode="empty", question_slots=next_question_slots(ctx.session))


def _concept_plan(ctx: PlanContext) -> Plan:
    return knowledge_plan(ctx.parsed.text, ctx.lang, ctx.search_k)


def knowledge_plan(text: str, lang: str, k: int) -> Plan:
    """The knowledge base's answer to the message itself."""
    return Plan(mode="concept", calls=_search_text(text, lang, k))


def _compare_plan(ctx: PlanContext) -> Plan:
    p = ctx.profile
    partner = _compare_partner(ctx)
    if partner:
        gpu, count = partner
        p.compare = [gpu, ctx.named[0]]
        if count is not None:
            p.compare_counts[gpu] = count
        said = next((g.count for g in ctx.parsed.gpus if g.gpu == ctx.named[0] and g.stated), None)
        if said is not None:  # 'why not just 4x 5090?' against the pick: four of them
            p.compare_counts[ctx.named[0]] = said
    plan = Plan(mode="compare", calls=_compare_calls(p, ctx.lang))
    plan.calls += _search(p, "compare", ctx.lang, ctx.search_k)
    plan.question_slots = next_question_slots(ctx.session)
    return plan


def _why_plan(ctx: PlanContext) -> Plan:
    query = _WHY_QUERIES.get(ctx.session.last_kind or "")
    if query:
        return Plan(mode="why", calls=_search_text(query[0 if ctx.lang == "zh" else 1], ctx.lang, ctx.search_k))
    return Plan(mode="why", calls=_search(ctx.profile, "why", ctx.lang, ctx.search_k))


def _opening_plan(ctx: PlanContext) -> Plan:
    return Plan(mode="opening", question_slots=["use_case"])


def _assume_use_case(ctx: PlanContext) -> UseCase | None:
    """Put the implied use case on the profile, and return it (None when the user said theirs)."""
    implied = ctx.implied
    if implied:
        ctx.profile.use_case = implied  # computed on a stated assumption, said in the reply; one word changes it
    return implied


def _ask_plan(ctx: PlanContext) -> Plan:
    _assume_use_case(ctx)
    return Plan(mode="ask", question_slots=next_question_slots(ctx.session))


def _answer_plan(ctx: PlanContext) -> Plan:
    """The path's tool calls, the citations, the next question and every default the reply must name."""
    implied = _assume_use_case(ctx)
    p = ctx.profile
    assert p.use_case is not None  # a turn without one takes the opening route
    plan = Plan(mode="answer")
    _answer_assumptions(p, plan)
    builders = {"inference": _inference_calls, "training": _training_calls, "scientific": _scientific_calls}
    plan.calls = builders[p.use_case](p, ctx.parsed, plan)
    _price_where_bought(ctx, plan)
    plan.calls += _search(p, "answer", ctx.lang, ctx.search_k)
    plan.question_slots = _answer_questions(ctx.session)
    _note_defaults(p, p.use_case, plan, implied)
    return plan


def _runs_gguf(p: Profile) -> bool:
    """No precision said, and the model runs in llama.cpp / Ollama: the engine named, or a home machine for a
    few users (what home users run) — a home said, a consumer card under discussion or owned, or a budget that
    buys a card and no computer."""
    mine = [g for g in [p.gpu, *(e.gpu for e in p.existing or [])] if g]
    at_home = bool(p.home) or _home_cards(mine) or _card_only(p)
    home = at_home and p.engine_hint is None and (p.concurrency or 1) <= GGUF_MAX_USERS
    return p.use_case == "inference" and p.precision is None and (p.engine_hint == "llamacpp" or home)


def _answer_assumptions(p: Profile, plan: Plan) -> None:
    """What is assumed before the calls are planned: GGUF's usual quantisation for llama.cpp, a small budget
    as money for the card, a catalog model for a bare size."""
    if _runs_gguf(p):
        p.precision = GGUF_DEFAULT  # what Ollama pulls by default; said in the reply
        plan.assumed["precision_gguf"] = GGUF_DEFAULT
    if _card_only(p):
        plan.assumed["card_only"] = True
    if p.model is None and p.params_b and p.use_case in ("inference", "training"):
        plan.model_assumed = size_stand_in(p)


def _price_where_bought(ctx: PlanContext, plan: Plan) -> None:
    """Recommendations: only cards the buyer can get where they buy, and without a budget, prices in the reader's
    currency."""
    p = ctx.profile
    region, stated = session_region(ctx.session, ctx.lang)
    for call in plan.calls:
        if call.name != "recommend":
            continue
        if p.budget is None or p.currency_wanted:  # the money asked for, else the writer's, whatever market
            call.arguments["display_currency"] = user_currency(p, ctx.lang, ("USD", "CNY"))
        if p.budget is None and p.currency_wanted in ("EUR", "GBP"):  # 'roughly what does it cost in EUR?'
            call.arguments["price_currency"] = p.currency_wanted
        call.arguments["region"] = region
        if not stated:
            plan.assumed["region"] = region


def _answer_code(p: Profile) -> ScientificCode | None:
    """The scientific code the answer is for, if one was named."""
    return scientific_code(p.sci_code) if p.use_case == "scientific" and p.sci_code else None


def _answer_questions(session: Session) -> list[str]:
    slots = next_question_slots(session)
    code = _answer_code(session.profile)
    if code and code.cuda_only:
        slots = [s for s in slots if s != "cuda_required"]  # the code answers it
    return slots


def _note_defaults(p: Profile, use_case: UseCase, plan: Plan, implied: UseCase | None) -> None:
    """The core slots left open (each computed on its default), the use case implied and the code's needs."""
    for slot in CORE[use_case]:
        if not p.known(slot):
            plan.assumed.setdefault(slot, True)  # keeps a default already named ('method': 'lora')
    if implied:
        plan.assumed["use_case"] = implied
    code = _answer_code(p)
    if code and p.fp64 == code.fp64:
        plan.assumed["sci_code"] = code.id  # FP64 (and CUDA) as the code's GPU build needs; said in the reply


_WHY_QUERIES = {"rent_vs_buy": ("买还是租 回本 租用 GPU 电费", "rent or buy GPUs break-even electricity"),
                "build": ("电源 功耗 余量 PCIe 通道 兼容性", "power supply headroom PCIe lanes build compatibility")}
_TRAINING_KINDS = (Kind.size_training,)
_INFERENCE_KINDS = (Kind.size_inference, Kind.speed, Kind.recommend, Kind.whatif, Kind.correct, Kind.compare)


_CONTINUED = (Kind.build, Kind.rent_vs_buy, Kind.spec, Kind.compare)


def continued_kind(session: Session, parsed: Parsed) -> Kind | None:
    """A follow-up that only changes a value ('那换成 1300W 的电源呢', 'what about two cards?', '它带宽呢')
    continues the last answer's kind; anything else keeps its own."""
    kind = parsed.kind
    last_kind = session.last_kind
    last = Kind(last_kind) if last_kind is not None and last_kind in Kind.__members__ else None
    if kind in (Kind.whatif, Kind.correct, Kind.inform) and last in _CONTINUED:
        if last == Kind.spec and not (parsed.asked_attribute or parsed.gpus):
            return kind
        if new_workload(parsed) and (last != Kind.compare or len({g.gpu for g in parsed.gpus}) == 1):
            return kind  # '全参微调 70B，8 张 4090 够吗？' after a rent-or-buy: a sizing question of its own
        named = {g.gpu for g in parsed.gpus}
        if last == Kind.compare and len(named) == 1 and not named & set(session.profile.compare):
            return kind  # 'could 2 modded 4090s do it instead?': that option on its own, not the same comparison
        return last
    return kind


def new_workload(parsed: Parsed) -> bool:
    """The message states a workload of its own: a model, a size, a training method, a scientific code or a use."""
    return bool(parsed.model or parsed.params_b or parsed.method or parsed.sci_code
                or (parsed.use_case and not parsed.use_case_weak))


def implied_use_case(p: Profile, parsed: Parsed) -> UseCase | None:
    """The use case a question implies when the user has not said it: a model with a sizing, speed or
    buying question is inference unless training words appear; FP64 or a problem size is scientific."""
    if parsed.kind in _TRAINING_KINDS or p.method:
        return "training" if p.known("model") else None
    if p.fp64 or p.problem_size_gb:
        return "scientific"
    if p.known("model") and parsed.kind not in _LOOKUP_KINDS:  # a model people use: serving it, unless training
        return "inference"  # was said (the reply says what it assumed; 'we fine-tune it' changes it)
    return None


_LOOKUP_KINDS = (Kind.spec, Kind.concept, Kind.chitchat, Kind.reset, Kind.export)


def _search_text(text: str, lang: str, k: int) -> list[PlannedCall]:
    if k <= 0:
        return []
    return [PlannedCall(name="search_knowledge", purpose="search", arguments={"query": text[:500], "k": k,
                                                                              "lang": lang})]


_FEATURES = {"link": "nvlink", "ecc": "ecc"}


def _priced_server(parsed: Parsed, currency: str) -> list[str]:
    """'8卡 H200 服务器多少钱', 'how much is an 8x H200 server?': the price of a server of those cards is the
    catalogued complete server's, when one is."""
    whole = parsed.form_factor == "server" or parsed.budget_scope == "system"
    if parsed.asked_attribute != "price" or not whole or len(parsed.gpus) != 1:
        return []
    found = system_for(parsed.gpus[0].gpu, parsed.gpus[0].count, "CNY" if currency == "CNY" else "USD")
    return [found.id] if found else []


RENT_MAX_GPUS = 1024  # what rent-vs-buy takes

_PLANS_ON_HARDWARE = (Kind.rent_vs_buy, Kind.size_inference, Kind.size_training, Kind.speed)
_SYSTEM_FIGURES = ("price", "power", "cooling", "china", "memory", "bandwidth")  # what a system's answer says


def _asks_about_a_system(ctx: PlanContext) -> bool:
    """'Atlas 800 A3 配置', 'GB200 NVL72 price', 'vs DGX B200?': a system named with nothing to plan on it is asked
    about; so is the system of the last answer when a follow-up names no hardware ('how much power per rack?')."""
    parsed, session = ctx.parsed, ctx.session
    if parsed.model or parsed.params_b or parsed.use_case or parsed.existing or ctx.kind in _PLANS_ON_HARDWARE[:1]:
        return False
    if parsed.systems:  # nothing to size on it ('够吗' of a budget): the system, unless renting is weighed
        return ctx.kind != Kind.rent_vs_buy
    if _priced_server(parsed, user_currency(session.profile, ctx.lang, ("USD", "CNY"))):
        return True  # '8卡H20服务器整机多少钱，预算100w够不够': the catalogued server of those cards
    asks_its_figures = parsed.asked_attribute in _SYSTEM_FIGURES or parsed.build_topic in ("psu", "wall", "cooling") \
        or parsed.rack_kw is not None or parsed.site_kw is not None
    units = parsed.gpu_count if parsed.rack_kw is None else None  # 'can we fit two of those' in a rack: boxes
    return bool(session.focus_systems) and session.last_kind == str(Kind.spec) and asks_its_figures and not (
        parsed.gpus or units or parsed.cpu or parsed.budget) and ctx.kind not in (
        Kind.reset, Kind.export, Kind.recommend, *_PLANS_ON_HARDWARE[1:])


def _system_calls(ctx: PlanContext, currency: str) -> tuple[list[str], list[PlannedCall]]:
    """The servers or racks a lookup is about (named, the catalogued server of the cards priced, the one compared
    with, or the last answer's) and their calls: each system, and its cards and host when it has no price."""
    session, parsed = ctx.session, ctx.parsed
    named = list(parsed.systems) or _priced_server(parsed, currency)
    if parsed.systems and (parsed.has(Intent.compare) or ctx.kind in (Kind.compare, Kind.whatif)):
        named = [*[s for s in session.focus_systems if s not in named], *named]  # 'vs DGX B200?': both
    elif not named and not parsed.gpus and _asks_about_a_system(ctx):
        named = list(session.focus_systems)  # 'how much power per rack?' after a rack's answer
    calls: list[PlannedCall] = []
    own = {system_resolver().get(sid).gpu for sid in parsed.systems}
    card = parsed.gpus[0].gpu if len(parsed.gpus) == 1 and parsed.systems and parsed.gpus[0].gpu not in own \
        else None  # 'XE9680 with 8 H200': a card named apart from the systems' own
    for sid in named[:3]:
        system = system_resolver().get(sid)
        fixed = (system.gpu or "?").split("-")[0] in system.name.lower().replace(" ", "") \
            and "/" not in system.name  # 'DGX B200' holds its own card; 'XE9680 (8 × H100 / H200 / …)' takes several
        configured = card if card and system.gpu and card != system.gpu and not fixed else None
        calls.append(PlannedCall(name="system_info", arguments={
            "name": sid, "currency": currency, **({"gpu": configured} if configured else {})}, purpose="info"))
        if (system.price is None or configured) and system.gpu and system.form == "server":  # its cards and host
            calls.append(PlannedCall(name="machine_cost", arguments={
                "gpu": configured or system.gpu, "count": system.gpu_count, "currency": currency,
                "include_host": True}, purpose="value"))
    return named, calls


def _spec_plan(ctx: PlanContext) -> Plan:
    """Catalog lookups: the GPUs and model named (or the one under discussion), or a catalog filter."""
    session, parsed = ctx.session, ctx.parsed
    calls: list[PlannedCall] = []
    if parsed.catalog_filter:
        args: dict[str, Any] = {}
        if parsed.about_precision:
            args["supports"] = tensor_precision(parsed.about_precision) or "fp16"
        elif parsed.asked_attribute in _FEATURES:
            args["feature"] = _FEATURES[parsed.asked_attribute]
        elif parsed.fp64:
            args["feature"] = "fp64"
        elif parsed.about_memory_gb:
            args["min_memory_gb"] = parsed.about_memory_gb
        if parsed.domestic:
            args["domestic"] = True
        if args:
            calls.append(PlannedCall(name="find_gpus", arguments=args, purpose="info"))
    currency = user_currency(session.profile, ctx.lang, ("USD", "CNY"))
    named, system_calls = _system_calls(ctx, currency)
    calls += system_calls
    gpus = [] if named else list(dict.fromkeys(g.gpu for g in parsed.gpus))
    several = parsed.gpus[0] if len(parsed.gpus) == 1 and parsed.gpus[0].count > 1 else None
    if several and not named and parsed.asked_attribute == "price":  # '8卡H200整机多少钱': the machine, not one card
        calls.append(PlannedCall(name="machine_cost", arguments={
            "gpu": several.gpu, "count": several.count, "currency": currency,
            "include_host": (parsed.budget_scope == "system" or parsed.form_factor == "server")
            and not session.profile.has_host}, purpose="value"))
    if not gpus and not parsed.model and not calls:
        gpus = list(session.focus) or ([session.profile.gpu] if session.profile.gpu else [])
    for gid in gpus[:4]:
        calls.append(PlannedCall(name="gpu_info", arguments={"name": gid}, purpose="info", gpu=gid))
    if parsed.model:
        calls.append(PlannedCall(name="model_info", arguments={"name": parsed.model}, purpose="info"))
    if parsed.cpu and not gpus:
        calls.append(PlannedCall(name="platform_info", arguments={"name": parsed.cpu}, purpose="info"))
    return Plan(mode="spec", calls=calls)


_WEIGHT_TO_TENSOR = {"int4": "int8", "nf4": "int8", "mxfp4": "fp4", "nvfp4": "fp4"}
TENSOR_PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")


def tensor_precision(name: str) -> str | None:
    """The catalog's tensor precision a weight format asks about ('int4' → the int8 path, 'nvfp4' → fp4);
    None for formats with no tensor path of their own (GGUF)."""
    base = _WEIGHT_TO_TENSOR.get(name.lower(), name.lower())
    return base if base in TENSOR_PRECISIONS else None


def _gpus_under_discussion(session: Session, parsed: Parsed) -> list[dict[str, Any]]:
    """The cards named in the message, else (or when it adds a card to them) the session's: every kind owned
    when there are several, else the card under discussion."""
    p = session.profile
    if parsed.gpus and not parsed.added_cards:  # '换成 5090 呢' after eight 4090s: eight 5090s
        keep = len(parsed.gpus) == 1 and not parsed.gpus[0].stated and p.gpu_count
        return [{"gpu": g.gpu, "count": one_build(p.gpu_count if keep and p.gpu_count else g.count)}
                for g in parsed.gpus]
    if p.gpu is None and p.existing and len(p.existing) > 1:
        return [{"gpu": e.gpu, "count": one_build(e.count)} for e in p.existing]
    gpu, count = _config(p)
    if gpu is None and (at_hand := current_config(session, [])) is not None:
        gpu, count = at_hand.gpu, parsed.gpu_count or at_hand.count  # the recommendation's pick; 'those 4 GPUs'
    return [{"gpu": gpu, "count": one_build(count)}] if gpu else []


def _unsaid_count(g: GpuCount) -> int:
    """A card's count as a machine holds it: as said, else one — or a node of eight of a baseboard (SXM, OAM)
    card, which is never sold alone ('how many H200 nodes …, power per rack?')."""
    if g.stated or not load_catalog().gpu(g.gpu).on_baseboard:
        return g.count
    return min(NODE_GPUS, load_catalog().gpu(g.gpu).interconnect.max_gpus or NODE_GPUS)


def one_build(count: int) -> int:
    """The cards one build check looks at: all of them, unless one server does not hold that many (then one node
    of the cluster, as :func:`one_node`: 64 H100 are eight nodes of 8, each checked alike)."""
    return count if count <= MAX_NODE_GPUS else one_node(count)


MEDIA_PRECISIONS = (("bf16", "transformers"), ("fp8", "transformers"), ("Q8_0", "llamacpp"), ("Q4_K_M", "llamacpp"))
MEDIA_CARDS = ("rtx-3090", "rtx-4090", "rtx-5090")  # the cards image and video tools are run on, when none is named
MAX_MEDIA_CARDS = 3


def _generates_media(ctx: PlanContext) -> bool:
    """An image or video model (a diffusion model) to run: its weights are sized and the cards' compute compared,
    never a token speed or a KV cache."""
    p = ctx.profile
    if not p.model or p.use_case == "training" or ctx.kind in (Kind.spec, Kind.concept, Kind.rent_vs_buy):
        return False
    return load_catalog().model(p.model).kind == "diffusion"


def _generative_plan(ctx: PlanContext) -> Plan:
    """The model's weights at each precision the image tools load, on each card under discussion, and the cards'
    dense BF16 compute (diffusion steps are compute-bound)."""
    p = ctx.profile
    named = [g["gpu"] for g in _gpus_under_discussion(ctx.session, ctx.parsed)] + list(p.compare)
    calls: list[PlannedCall] = []
    if not ctx.parsed.gpus and p.budget is not None and p.model:  # '预算三万跑 SDXL', '预算砍一半呢': what it buys
        rec = {"workload": "inference", "model": p.model, "context": DIFFUSION_TEXT_TOKENS, "concurrency": 1,
               **_common_rec(p), "region": session_region(ctx.session, ctx.lang)[0]}
        done = run_tool("recommend", rec)
        named = [o["gpu_id"] for o in (done.result or {}).get("options", []) if o.get("total_price_usd") is not None] \
            if done.ok else []
        calls.append(PlannedCall(name="recommend", arguments=rec, purpose="recommend"))
    cards = list(dict.fromkeys(named))[:MAX_MEDIA_CARDS] or list(MEDIA_CARDS)
    for gpu in cards:
        calls.append(PlannedCall(name="gpu_info", arguments={"name": gpu}, purpose="info", gpu=gpu))
        for precision, engine in MEDIA_PRECISIONS:
            calls.append(PlannedCall(name="size_inference", purpose="size", gpu=gpu, arguments={
                "model": p.model, "gpu": gpu, "gpus": 1, "precision": precision, "engine": engine,
                "context": DIFFUSION_TEXT_TOKENS, "batch": 1}))
    return Plan(mode="generative", calls=calls, question_slots=[])


DIFFUSION_TEXT_TOKENS = 512  # a prompt's text-encoder length; a diffusion model keeps no KV cache


def _build_gpus(ctx: PlanContext, plan: Plan) -> list[dict[str, Any]]:
    """The cards a build check looks at: those named or held, else the configuration the conversation arrived
    at ('power and cooling for that setup?'), else a typical card for a count or platform said (assumed)."""
    session, parsed, p = ctx.session, ctx.parsed, ctx.profile
    gpus = _gpus_under_discussion(session, parsed)
    if parsed.gpus and not p.gpu_count:  # a baseboard card named alone is checked as the node it comes in
        unsaid = {g.gpu: _unsaid_count(g) for g in parsed.gpus}
        gpus = [{**g, "count": max(g["count"], unsaid.get(g["gpu"], 1))} for g in gpus]
    if parsed.pooled and not parsed.gpus and p.gpu and p.existing:  # 'both cards in one box': the owned ones too
        owned = [{"gpu": e.gpu, "count": e.count} for e in p.existing if e.gpu != p.gpu]
        return [{"gpu": p.gpu, "count": p.gpu_count or 1}, *owned]
    at_hand = None if gpus else current_config(session, [])
    if at_hand is not None:
        return [{"gpu": at_hand.gpu, "count": one_build(parsed.gpu_count or at_hand.count)}]
    if not gpus and (p.gpu_count or p.cpu):
        card = _typical_card(p.cpu)
        plan.assumed["gpu"] = card
        return [{"gpu": card, "count": one_build(p.gpu_count or 1)}]
    return gpus


def _box_cards(p: Profile, gpu: str, count: int) -> list[dict[str, Any]]:
    """The cards one build check holds: every kind of a box of several owned kinds ('3张4090加1张大显存的卡'),
    else ``count`` of ``gpu`` (one node's)."""
    if p.gpu is None and p.existing and len(p.existing) > 1 and gpu in {e.gpu for e in p.existing}:
        return [{"gpu": e.gpu, "count": e.count} for e in p.existing]
    return [{"gpu": gpu, "count": one_node(count)}]


def _build_workload(p: Profile) -> dict[str, Any]:
    """What the machine is checked running: the model, with its context and users or training method."""
    args: dict[str, Any] = {"workload": p.use_case} if p.use_case else {}
    several = (p.nodes or 1) > 1  # one node of a cluster is checked; whether the model fits is the cluster's matter
    if p.model and p.use_case in ("inference", "training") and not several:
        args["model"] = p.model
        if p.use_case == "inference":
            args.update(context=context_for(p), concurrency=p.concurrency or DEFAULT_CONCURRENCY)
            if p.precision:
                args["precision"] = p.precision
        else:
            args["method"] = training_method(p)
    if p.cuda_required:
        args["cuda_required"] = True
    return args


def _build_plan(ctx: PlanContext) -> Plan:
    """A compatibility check of the machine described so far (the memory fit too when a model is known)."""
    session, parsed = ctx.session, ctx.parsed
    p = session.profile
    plan = Plan(mode="build")
    if _runs_gguf(p):
        p.precision = GGUF_DEFAULT  # what Ollama pulls by default, as the sizing assumes; said in the reply
        plan.assumed["precision_gguf"] = GGUF_DEFAULT
    gpus = _build_gpus(ctx, plan)
    if not gpus and is_question(parsed.text):  # 'one x16 slot: how many cards?' with no card: what the guide says
        return Plan(mode="concept", calls=_search_text(parsed.text, ctx.lang, ctx.search_k))
    if not gpus:
        return plan
    args = _machine_check({"gpus": gpus, **_build_workload(p)}, p)
    plan.calls = [PlannedCall(name="check_build", arguments=args, purpose="check")]
    nodes = p.nodes or 1
    if 1 < nodes <= MAX_NODES and len(gpus) == 1 and parsed.build_topic in ("network", "link"):
        plan.calls.append(_network_call(p, gpus[0]["gpu"], min(gpus[0]["count"], NODE_GPUS), nodes))
    return plan


def _network_asked(p: Profile, parsed: Parsed, gpu: str | None, count: int) -> list[PlannedCall]:
    """The network between the machines, when a plan over several of them asks about it."""
    if gpu and count > NODE_GPUS and parsed.build_topic in ("network", "link"):
        return [_network_call(p, gpu, one_node(count), nodes_for(count))]
    return []


def _network_call(p: Profile, gpu: str, per_node: int, nodes: int) -> PlannedCall:
    """The network between ``nodes`` machines of ``per_node`` × ``gpu`` for the session's workload (training
    unless inference or scientific was said); baseboard nodes come with their NICs."""
    card = load_catalog().gpu(gpu)
    args: dict[str, Any] = {"gpu": card.id, "nodes": nodes, "gpus_per_node": per_node,
                            "workload": p.use_case or "training", "nic_included": card.form_factor.value != "pcie"}
    if p.use_case == "inference" and p.model:
        args["hidden_size"] = load_catalog().model(p.model).hidden_size
    if args["workload"] == "training" and p.model:  # what crosses the network each step, and on the user's links
        spec = load_model_spec(p.model)
        method = training_method(p)
        args["trainable_params_b"] = round((spec.params if method == "full" else
                                            lora_trainable_params(spec, LORA_RANK)) / 1e9, 4)
        args["sharded_across_nodes"] = method == "full" and \
            spec.params * FULL_STATE_BYTES > per_node * card.memory_bytes
        if p.node_link_gbps:
            args["have_gbps_per_node"] = p.node_link_gbps
    return PlannedCall(name="plan_network", arguments=args, purpose="check")


MIN_MACHINE_CAP_W = 1000  # a limit under this is a card's ('限功耗到300W'), not a machine's at the wall


def _machine_cap(p: Profile) -> bool:
    """Whether the power limit said is the machine's: said at the wall, or too large for one card."""
    return bool(p.power_limit_w) and (bool(p.power_limit_at_wall) or (p.power_limit_w or 0) >= MIN_MACHINE_CAP_W)


LORA_RANK: int = TrainingMemoryInput.model_fields["lora_rank"].default  # the training sizing's own default
FULL_STATE_BYTES = 18  # mixed-precision AdamW model states per parameter, as tools/training_memory.py counts them


def _typical_card(platform: str | None) -> str:
    """The card a build question most likely means when only a count is given: an RTX 4090 on desktop and
    workstation platforms, an L40S in servers (said in the reply as an assumption)."""
    server = platform is not None and load_catalog().platform(platform).segment == "server"
    return "l40s" if server else "rtx-4090"


def _filter_plan(ctx: PlanContext) -> Plan:
    """A vendor constraint and nothing to size yet: the cards that meet it, then the question that narrows it."""
    p = ctx.profile
    args: dict[str, Any] = {"domestic": True} if p.domestic else {"exclude_vendors": list(p.excluded_vendors)}
    return Plan(mode="spec", calls=[PlannedCall(name="find_gpus", arguments=args, purpose="info")],
                question_slots=["use_case"] if p.use_case is None else ["model"])


def _best_value_plan(ctx: PlanContext) -> Plan:
    """'Best bang for the buck GPU?' with no model or budget yet: the cards giving the most per price, ranked
    (by memory when the question is per GB), among those sold where the buyer buys."""
    session, lang, parsed = ctx.session, ctx.lang, ctx.parsed
    p = session.profile
    metric = {"training": "bf16_tflops", "scientific": "fp64_tflops"}.get(p.use_case or "", "bandwidth_gbs")
    if parsed.asks_per_memory:
        metric = "memory_gb"
    tiers = ["consumer", "workstation", "datacenter"] if p.use_case == "scientific" or p.form_factor == "server" \
        else ["consumer", "workstation"]
    args: dict[str, Any] = {"metric": metric, "tiers": tiers, "currency": user_currency(p, lang), "min_memory_gb": 16}
    if p.use_case == "training" and not p.excluded_vendors:
        args["vendors"] = ["NVIDIA"]  # training stacks (PEFT, DeepSpeed, Unsloth) assume CUDA; said in the reply
    args["region"] = session_region(session, lang)[0]
    return Plan(mode="value", calls=[PlannedCall(name="best_value", arguments=args, purpose="info")],
                question_slots=["model"] if p.use_case in (None, "inference", "training") else [])


def _afford_plan(ctx: PlanContext) -> Plan:
    """A budget and no model yet: what the money buys where the buyer buys, most memory first; then the question
    that narrows it."""
    session, lang = ctx.session, ctx.lang
    p = session.profile
    plan = Plan(mode="afford")
    if _card_only(p):
        plan.assumed["card_only"] = True
    host = not (p.has_host or p.budget_scope == "gpu_only" or _card_only(p))
    args: dict[str, Any] = {"budget_usd": round(_budget_usd(p) or 0.0, 2), "include_host": host,
                            "currency": p.budget.currency if p.budget else "USD"}
    if p.domestic:
        args["domestic_only"] = True
    vendors = _vendor_args(p)
    if vendors is not None:
        args["vendors"] = vendors
    args["region"] = session_region(session, lang)[0]
    args.update(said_prices(p))
    if p.cpu and not host:  # the cards go into the buyer's own machine: only what it takes
        args["platform"] = p.cpu
    slots = ["use_case"] if p.use_case is None else ["model"]
    plan.calls = [PlannedCall(name="affordable", arguments=args, purpose="recommend")]
    plan.question_slots = [s for s in slots if s not in session.asked] or slots
    return plan


def _rent_job(p: Profile, model: str, currency: str) -> dict[str, Any]:
    """The job a 'which GPU should I rent' question prices: the workload, model and what sizes it."""
    job: dict[str, Any] = {"workload": p.use_case, "model": model, "currency": currency,
                           "context": context_for(p), "concurrency": p.concurrency or 1}
    if p.use_case == "training":
        job["method"] = p.method if p.method in ("full", "lora", "qlora") else "lora"
        if dataset_tokens(p):
            job["dataset_tokens"] = dataset_tokens(p)
    elif p.precision:
        job["precision"] = p.precision
    if p.region:
        job["market"] = p.region
    return job


def _rent_plan(ctx: PlanContext) -> Plan:
    """Buying the configuration under discussion vs renting it for the project's length."""
    session, parsed, lang = ctx.session, ctx.parsed, ctx.lang
    p = session.profile
    gpus = _gpus_under_discussion(session, parsed)
    if p.gpu is None and p.existing and not parsed.gpus:  # '我的 3060 不够，租卡一天多少钱': not the card owned
        gpus = []
    if not parsed.gpus and vocab.matches("slot", "which_to_rent", parsed.text):  # '租什么卡': the cards that run it
        gpus = []
    if not gpus and p.compare:  # a what-if after 'we rent X … would buying Y pay off': Y is the one bought
        gpus = [{"gpu": p.compare[-1], "count": p.compare_counts.get(p.compare[-1], 1)}]
    currency = user_currency(p, lang, ("USD", "CNY"))
    model = size_stand_in(p)
    if not gpus and model and p.budget and p.use_case == "inference" and (pick := _budget_pick(ctx, model)):
        gpus = [pick]  # '预算 5 万买啥卡，还是租划算': the card the budget buys first, against renting it
    if not gpus and model and p.use_case in ("inference", "training"):  # '租啥卡合适': which GPU to rent for the job
        return Plan(mode="rent", calls=[PlannedCall(name="rent_choices", arguments=_rent_job(p, model, currency),
                                                    purpose="info")])
    if not gpus:  # no configuration yet: the guidance on renting vs buying, and which cards to price
        return Plan(mode="rent", calls=_search_text(parsed.text, lang, 3), question_slots=[])
    bought = dict(gpus[-1])  # 'we rent 2x H100 SXM … would buying 2x H100 PCIe pay off': the card named last
    rented = _rented_other(p, gpus)
    if rented is not None:  # '买一张5090…租4090': the card not rented is the one bought
        bought = dict(next(g for g in reversed(gpus) if g["gpu"] != rented["gpu"]))
    bought["count"] = _rented_or_bought_count(p, parsed, bought)
    hours, plan_notes = _hours_in_use(p, bought)
    args: dict[str, Any] = {"gpu": bought["gpu"], "count": bought["count"], "currency": currency,
                            "hours_per_day": hours, "include_host": not p.has_host}
    if p.kwh_price and (p.budget is None or p.budget.currency == currency):
        args["kwh_price"] = p.kwh_price
    if p.purchase_price and p.purchase_price[1] == currency:  # the buyer's own quote for buying
        args["purchase_price"] = p.purchase_price[0]
    args.update(said_prices(p))
    if p.years:  # '3 年下来哪个划算', 'for 2 more years': the horizon the buyer weighs renting against buying over
        args["months"] = round(min(120.0, p.years * 12), 2)
    elif p.deadline_days:
        args["months"] = round(min(120.0, max(p.deadline_days / DAYS_PER_MONTH, 0.1)), 2)
    args.update(_rent_side(p, rented, bought["gpu"]))
    offers: dict[str, Any] = {"gpu": args.get("rented_gpu", bought["gpu"]), "currency": currency}  # where it rents
    if p.providers:
        offers["providers"] = list(p.providers)
    if p.region:  # where the buyer rents decides which providers' prices count first
        args["market"] = offers["market"] = p.region
    return Plan(mode="rent", calls=[PlannedCall(name="rent_vs_buy", arguments=args, purpose="info"),
                                    PlannedCall(name="rental_prices", arguments=offers, purpose="info")],
                assumed=plan_notes)


def _hours_in_use(p: Profile, bought: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """The hours a day the cards bought are busy — said, or from the GPU-hours a month (said, or a training run
    done so many times a month) — and the note on runs for the reply; a load too big for the cards bought raises
    their count when none was said."""
    hours = p.hours_per_day or DEFAULT_RENT_HOURS
    notes: dict[str, Any] = {}
    monthly = p.gpu_hours_month
    if monthly is None and p.runs_per_month and (run := _run_gpu_hours(p, bought)) is not None:
        monthly = run * p.runs_per_month  # 'once a month': the cards are busy for those runs alone
        notes["runs"] = {"runs": p.runs_per_month, "gpu_hours": run, "count": bought["count"]}
    if monthly:  # '300 GPU-hours a month': the bought cards run that many hours between them
        busy = monthly / DAYS_PER_MONTH / 24  # GPUs busy around the clock: buying fewer cannot do it
        if not p.gpu_count and busy > bought["count"]:  # '20k GPU-hours a year' with no count said: 3 cards
            bought["count"] = min(RENT_MAX_GPUS, math.ceil(busy))
        hours = min(24.0, round(monthly / DAYS_PER_MONTH / bought["count"], 2))
    return hours, notes


def _run_gpu_hours(p: Profile, bought: dict[str, Any]) -> float | None:
    """The GPU-hours of one training run on the cards bought (run here, as :func:`least_count` runs its
    sizings); None when there is no run to time."""
    model, tokens = model_args(p), dataset_tokens(p)
    if p.use_case != "training" or not model or not tokens:
        return None
    done = run_tool("training_time", {**model, "gpu": bought["gpu"], "count": bought["count"], "tokens": tokens,
                                      **training_rates(p)})
    return float(done.result["gpu_hours"]) if done.ok and done.result else None


def _rented_or_bought_count(p: Profile, parsed: Parsed, bought: dict[str, Any]) -> int:
    """The cards priced both ways: every node's ('rent that' after 2 nodes of 8: all 16), or the count that
    finishes a training run in time when the message asks how many ('需要多少张 H100？租还是买？')."""
    count = int(bought["count"])
    if (p.nodes or 1) > 1 and not parsed.gpus:
        count *= p.nodes or 1
    if parsed.asks_count and p.use_case == "training" and dataset_tokens(p) and not _count_said(parsed) \
            and (counted := _planned_train_count(p, model_args(p), bought["gpu"])):
        count = counted
    elif p.use_case == "inference" and p.gpu_count is None and not _count_said(parsed) and (model := model_args(p)):
        # 'monthly cost for that on rented H100' for a 70B and 200 users: the cards that serve it, not one
        size: dict[str, Any] = {**model, "context": context_for(p), "batch": p.concurrency or DEFAULT_CONCURRENCY,
                                "gpus": count, "gpu": bought["gpu"], "engine": _engine(p)}
        if p.precision:
            size["precision"] = p.precision
        count = max(count, least_count(size))
    return min(RENT_MAX_GPUS, count)


def _rent_side(p: Profile, rented: dict[str, Any] | None, bought: str) -> dict[str, Any]:
    """rent_vs_buy's renting arguments: another card rented ('租4090'), the rate said for the card rented (else the
    one said alone), the one provider named (its price, kept for the session) and a monthly plan ('包月')."""
    args: dict[str, Any] = {}
    if rented is not None:
        args.update(rented_gpu=rented["gpu"], rented_count=rented["count"])
    rent_card = rented["gpu"] if rented is not None else bought
    said_rate = p.card_rates.get(rent_card)  # 'A100 8 元/卡时，4090 2 元/卡时': the rent of the card rented
    if said_rate is not None:
        args["rental_usd_per_gpu_hour"] = round(to_usd(said_rate.amount, said_rate.currency), 4)
    elif p.rental_rate:
        rate, cur = p.rental_rate
        args["rental_usd_per_gpu_hour"] = round(to_usd(rate, cur), 4)
    if len(p.providers) == 1 and "rental_usd_per_gpu_hour" not in args:  # 'rent that on runpod': its price, kept
        args["provider"] = p.providers[0]
    if p.by_the_month:  # '包月': the month is paid in full
        args["by_the_month"] = True
    return args


def _rented_other(p: Profile, gpus: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The card rented, with its count, when the buyer weighs buying another card against it; None when the card
    rented is the one bought or no other card is under discussion."""
    if p.rented_gpu is None or all(g["gpu"] == p.rented_gpu for g in gpus):
        return None
    named = next((g for g in gpus if g["gpu"] == p.rented_gpu), None)
    return {"gpu": p.rented_gpu, "count": named["count"] if named else p.rented_count or gpus[-1]["count"]}


def _budget_pick(ctx: PlanContext, model: str) -> dict[str, Any] | None:
    """The configuration the recommender ranks first for this inference job within the budget (run here, as
    :func:`least_count` runs its sizings), as rent-vs-buy's purchase; None when nothing priced fits."""
    p = ctx.profile
    rec = _inference_recommend(p, model, context_for(p), p.concurrency or DEFAULT_CONCURRENCY)
    rec["region"] = session_region(ctx.session, ctx.lang)[0]
    done = run_tool("recommend", rec)
    options = [o for o in (done.result or {}).get("options", []) if o.get("total_price_usd") is not None] \
        if done.ok else []
    if not options or int(options[0].get("nodes", 1)) > 1:
        return None
    return {"gpu": options[0]["gpu_id"], "count": int(options[0]["count"])}


def _has_new_facts(parsed: Parsed) -> bool:
    return bool(parsed.gpus or parsed.precision or parsed.model or parsed.params_b or parsed.context_tokens
                or parsed.concurrency or parsed.gpu_count or parsed.budget or new_workload(parsed))


# The modes of a turn, in the order they are tried (first match wins).
_ROUTES: tuple[Route, ...] = (
    Route("reset", _asks_reset, _reset_plan),
    Route("export", _asks_export, _export_plan),
    Route("empty", _is_empty, _empty_plan),
    Route("system", _asks_about_a_system, _spec_plan),
    Route("spec", lambda ctx: ctx.kind == Kind.spec and _compare_partner(ctx) is None, _spec_plan),
    Route("concept", _kind_is(Kind.concept), _concept_plan),
    Route("build", _checks_a_build, _build_plan),
    Route("generative", _generates_media, _generative_plan),
    Route("rent", _rents_a_machine, _rent_plan),
    Route("what to rent", _asks_what_to_rent, _rent_plan),
    Route("compare", _compares, _compare_plan),
    Route("why", _explains_last, _why_plan),
    Route("why value", _why_value, _best_value_plan),
    Route("why concept", _why_unanswered, _concept_plan),
    Route("afford", _affords, _afford_plan),
    Route("best value", _asks_best_value, _best_value_plan),
    Route("filter", _filters_vendors, _filter_plan),
    Route("card fact", _asks_a_card_fact, _spec_plan),
    Route("knowledge", _asks_mid_conversation, _concept_plan),
    Route("opening", _no_use_case, _opening_plan),
    Route("ask", _not_ready, _ask_plan),
    Route("answer", _always, _answer_plan),
)


def _search(p: Profile, mode: str, lang: str, k: int) -> list[PlannedCall]:
    """The retrieval call for citations; none when ``k`` is 0 (retrieval switched off)."""
    if k <= 0:
        return []
    return [PlannedCall(name="search_knowledge", purpose="search",
                        arguments={"query": _search_query(p, mode, lang), "k": k, "lang": lang})]


def _model_args(p: Profile, plan: Plan) -> dict[str, Any]:
    if p.model:
        return {"model": p.model}
    if plan.model_assumed:
        return {"model": plan.model_assumed}
    return {"params_b": p.params_b}


# what a question asks of the card it names ('how long on the 3090?', 'does it need NVLink?'): its answer, not a
# shopping list beside it
_ASKED_OF_A_CARD = frozenset({"training_time", "speed", "ttft", "fits", "max_context", "capacity", "nvlink"})


def _wants_recommendation(p: Profile, parsed: Parsed, gpu: str | int | None) -> bool:
    # "how much memory does X need?" asks for a figure, not a shopping list; a turn that only states the
    # model (answering the advisor's question) still gets configurations to consider
    sizing_only = parsed.kind in (Kind.size_inference, Kind.size_training, Kind.speed) and bool(parsed.asked_attribute)
    of_the_card = bool(parsed.gpus) and bool(parsed.asks) and set(parsed.asks) <= _ASKED_OF_A_CARD \
        and not (parsed.has(Intent.recommend) or parsed.kind == Kind.recommend)
    if of_the_card:
        return False
    return (p.budget is not None or p.budget_unlimited or parsed.has(Intent.recommend) or "alternatives" in parsed.asks
            or "recommend" in parsed.asks or parsed.asks_count
            or parsed.kind == Kind.recommend or (gpu is None and not sizing_only) or p.domestic is True)


def _budget_usd(p: Profile) -> float | None:
    return None if p.budget is None else to_usd(p.budget.amount, p.budget.currency)


def _card_only(p: Profile) -> bool:
    """A budget too small to also buy a computer is money for the card (said in the reply, changeable); only
    when the user has not said what the budget covers."""
    usd = _budget_usd(p)
    return usd is not None and usd < CARD_ONLY_BELOW_USD and p.budget_scope is None and not p.has_host


def training_rates(p: Profile) -> dict[str, Any]:
    """What a training run's time rests on beyond model and data: a frozen base (LoRA, QLoRA) and what the user
    stated, their MFU and their GPU-hour rate."""
    out: dict[str, Any] = {}
    if training_method(p) in ("lora", "qlora"):
        out["frozen_base"] = True  # no weight gradients for the base: two thirds of a full step's FLOPs
    if p.region and not p.rental_rate:
        out["market"] = p.region  # '按国内行情': rented where the buyer is, at that market's provider prices
    if p.mfu:
        out["mfu"] = p.mfu
    if p.rental_rate:
        rate, cur = p.rental_rate
        out["price_per_gpu_hour"] = round(to_usd(rate, cur), 4)
    return out


def said_prices(p: Profile) -> dict[str, Any]:
    """The unit prices the user said, as the pricing tools take them (none: no argument at all)."""
    if not p.card_prices:
        return {}
    return {"said_prices": {gid: price.model_dump() for gid, price in p.card_prices.items()}}


def _common_rec(p: Profile) -> dict[str, Any]:
    args: dict[str, Any] = {**_budget_args(p), **said_prices(p)}
    if p.cuda_required:
        args["cuda_required"] = True
    if p.domestic:
        args["domestic_only"] = True
    if p.power_limit_w and _machine_cap(p):  # under it, a card's limit, not a machine's
        args["power_limit_w"] = p.power_limit_w
    if _chassis(p):
        args["chassis"] = _chassis(p)
    if p.existing:
        args["existing_gpus"] = [{"gpu": e.gpu, "count": all_nodes(p, e.count) if len(p.existing) == 1 else e.count}
                                 for e in p.existing]
    vendors = _vendor_args(p)  # "只能买华为的卡", "only NVIDIA", "no NVIDIA"
    if vendors is not None:
        args["vendors"] = vendors
    if p.gpu_count and not p.gpu and not p.existing:  # 'what if we use 4 GPUs?': options of four cards
        args["gpu_count"] = p.gpu_count
    if p.allowed_gpus:  # "we can only buy L40S or H100"
        args["only_gpus"] = list(p.allowed_gpus)
    if p.ruled_out_gpus:  # "we can't legally buy H100/H200"
        args["exclude_gpus"] = list(p.ruled_out_gpus)
    if p.has_host or p.budget_scope == "gpu_only" or _card_only(p):
        args["include_host_cost"] = False  # the same rule as the budget listing (_afford_plan)
    if p.organisation and not p.home:
        args["new_cards_first"] = True
    return args  # a PSU is no gate: a bigger one costs little, and the build check beside the answer says so


def _inference_calls(p: Profile, parsed: Parsed, plan: Plan) -> list[PlannedCall]:
    model = _model_args(p, plan)
    gpu, count = _config(p)
    context, batch = _inference_load(p, plan)
    card_bytes = card_visible_bytes(p.card_memory_gb) if p.card_memory_gb and not gpu else None
    size = _inference_size(p, model, gpu, count, context, batch, card_bytes)
    if "quant_fit" in parsed.asks and "model" in model and (gpu or card_bytes) \
            and (fitting := largest_fitting_quant(size)) is not None:
        p.precision = fitting  # 'can I still run it at a lower quant?': the plan is on the one that fits
        size = _inference_size(p, model, gpu, count, context, batch, card_bytes)
    # '要几张？', or a baseboard card named with no count for a model one of it cannot hold ('compare to an H20
    # setup'): the answer's configuration is the least count that holds it, and the one the follow-ups talk about;
    # a PCIe card asked about alone ('T4 能跑 13B 吗') stays one card, its quantised routes beside it
    unsaid = gpu in {g.gpu for g in parsed.gpus} and (p.gpu_count or 1) == 1 \
        and load_catalog().gpu(gpu).on_baseboard
    if gpu and (parsed.asks_count or unsaid) and not _count_said(parsed) and "model" in model and p.nodes is None:
        count = least_count(size)
        size = _at_count(size, count)
        keep_count(p, gpu, count)
    calls = [PlannedCall(name="size_inference", arguments=size, purpose="size", gpu=gpu)]
    calls += _network_asked(p, parsed, gpu, count)
    if gpu:
        calls += _inference_on_card(p, model, gpu, count, context, batch, size["engine"])
    if "model" in model:
        rec = _inference_recommend(p, model["model"], context, batch)
        calls.append(PlannedCall(name="recommend", arguments=rec, purpose="recommend",
                                 only_if_no_fit=not _wants_recommendation(p, parsed, gpu or card_bytes)))
        calls += _inference_alternatives(p, model["model"], gpu, count, context, batch, rec, card_bytes,
                                         cheapest=parsed.asks_cheapest)
    if gpu and parsed.asks_count:  # 'how many?' of a catalog model or of a size said alone ('284B')
        calls += _count_calls("size_inference", size, count)
    return calls


GGUF_LADDER = ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "Q2_K", "IQ2_XXS", "IQ1_S")
SERVER_LADDER = ("bf16", "fp8", "int8", "int4")


def quant_ladder(engine: str) -> tuple[str, ...]:
    """The precisions tried for 'which quant fits', best first: GGUF files on llama.cpp, else a server's."""
    return GGUF_LADDER if engine == "llamacpp" else SERVER_LADDER


def largest_fitting_quant(size: dict[str, Any]) -> str | None:
    """The highest precision of the engine's ladder at which the sizing ``size`` fits (run here, as
    :func:`least_count` runs its sizings); None when none does."""
    for quant in quant_ladder(size["engine"]):
        done = run_tool("size_inference", {**size, "precision": quant})
        if done.ok and (done.result or {}).get("fits"):
            return quant
    return None


def _count_said(parsed: Parsed) -> bool:
    """Whether the message itself says how many cards ('4 张 910B', 'with 8 of them')."""
    return parsed.gpu_count is not None or any(g.stated for g in parsed.gpus)


def _inference_load(p: Profile, plan: Plan) -> tuple[int, int]:
    """The context and the concurrent users sized, noting each default used."""
    if p.context_tokens is None:
        plan.assumed["context_tokens"] = context_for(p)
    if p.concurrency is None:
        plan.assumed["concurrency"] = DEFAULT_CONCURRENCY
    return context_for(p), p.concurrency or DEFAULT_CONCURRENCY


def _stand_in(gpu: str, model: str) -> str | None:
    """What a card with no FP8 runs an FP8-native model at (W8A8 INT8 on Ascend and MLU), as the recommender
    sizes it: the answer on that card says the same precision."""
    try:
        return native_stand_in(load_catalog().gpu(gpu), load_model_spec(model))
    except (ToolError, ValueError, KeyError):
        return None


def _inference_size(p: Profile, model: dict[str, Any], gpu: str | None, count: int, context: int, batch: int,
                    card_bytes: int | None) -> dict[str, Any]:
    """The sizing's arguments: the request on the card named, on a card known by its memory, or on none."""
    size: dict[str, Any] = {**model, "context": context, "batch": batch, "gpus": count, "engine": _engine(p)}
    if count > NODE_GPUS and size["engine"] == "vllm" and not ("model" in model and _parallel_for(model["model"],
                                                                                              one_node(count))):
        size["pipeline_stages"] = even_nodes(count)  # across machines: tensor parallel inside, layers between them
    run = _run_precision(p, model, size["engine"]) or (_stand_in(gpu, model["model"]) if gpu and "model" in model
                                                        else None)
    if run:
        size["precision"] = run
    if p.kv_dtype:
        size["kv_dtype"] = p.kv_dtype
    if gpu:
        size["gpu"] = gpu
    elif card_bytes:
        size["gpu_memory_bytes"] = card_bytes  # a card known only by its memory: sized against that
    return size


def _inference_on_card(p: Profile, model: dict[str, Any], gpu: str, count: int, context: int, batch: int,
                       engine: str) -> list[PlannedCall]:
    """On the card named: the decode speed (when it fits) and the build check of one machine."""
    # across nodes each token passes every node in turn: per token, one node's tensor-parallel group
    perf = {**model, "gpu": gpu, "count": one_node(count), "context": context, "batch": batch,
            "engine": engine, **_host_ram(p)}
    run = _run_precision(p, model, engine)
    if run:
        perf["precision"] = run
    if p.kv_dtype:
        perf["kv_dtype"] = p.kv_dtype
    check: dict[str, Any] = {"gpus": _box_cards(p, gpu, count), "workload": "inference",
                             "context": context, "concurrency": batch}
    if "model" in model:
        check["model"] = model["model"]
    if run:  # as the engine runs it: a Mac's '8-bit' is the Q8_0 file, which needs no INT8 units
        check["precision"] = run
    if p.cuda_required:
        check["cuda_required"] = True
    check = _machine_check(check, p)
    return [PlannedCall(name="perf_decode", arguments=perf, purpose="perf", needs_fit=True, gpu=gpu),
            PlannedCall(name="check_build", arguments=check, purpose="check", gpu=gpu)]


def _inference_recommend(p: Profile, model: str, context: int, batch: int) -> dict[str, Any]:
    rec: dict[str, Any] = {"workload": "inference", "model": model, "context": context, "concurrency": batch,
                           **_common_rec(p)}
    if p.tokens_per_s_target:  # 'at least 20 tokens/s per user': a gate on every option, for all users at once
        rec["target_tokens_per_s"] = p.tokens_per_s_target * batch
    elif batch > 1:  # a service for several people: nothing slower than they read
        rec["min_tokens_per_s_per_user"] = MIN_TOKENS_PER_S_PER_USER
    if p.ttft_target_s:  # 'time to first token under 1 s': a gate too, with the users sending over time
        rec["max_ttft_s"] = p.ttft_target_s
        rec["prompt_tokens"] = p.prompt_tokens or min(context, 2048)
    if p.precision:
        rec["precision"] = p.precision
    return rec


MIN_TOKENS_PER_S_PER_USER = 5.0  # about reading speed: a shared chat slower than this for each user is unusable
ALT_PRECISIONS = (("fp8", 8.0), ("int4", 4.5))  # common deployment precisions, with the bits they save below
GGUF_DEFAULT = "Q4_K_M"
KV_HEAVY_USERS = 8  # from this many sequences at once, the KV cache is the larger part of a 4-bit model's memory
GGUF_MAX_USERS = 4  # llama.cpp serves one or a few users; beyond that the GGUF route is not offered
MAX_ALT_GPUS = 8


def _precision_bits(precision: str | None) -> tuple[float, str]:
    """(bits per weight, family) of the requested precision; a missing one counts as native 16-bit."""
    if not precision:
        return 16.0, "float"
    from tools.precision import resolve_precision

    try:
        spec = resolve_precision(precision)
    except ValueError:
        return 16.0, "float"
    return float(spec.bits_per_weight), spec.family


def is_generic_4bit(precision: str | None) -> bool:
    """'4bit', 'int4', 'AWQ', 'GPTQ': a 4-bit request that home users often mean as GGUF / Ollama."""
    bits, family = _precision_bits(precision)
    return bool(precision) and family not in ("gguf", "float") and bits <= 4.5


def _host_ram(p: Profile) -> dict[str, float]:
    """The system RAM bandwidth the user described, for speeds of layers that run from RAM."""
    return {"host_bandwidth_gbs": p.host_bandwidth_gbs} if p.host_bandwidth_gbs else {}


def _home_cards(gpus: list[str]) -> bool:
    """Any consumer card or desk computer (a Mac, a DGX Spark) among ``gpus``: a '4-bit' question about them means
    GGUF (Ollama / llama.cpp)."""
    try:
        return any(load_catalog().gpu(g).tier.value == "consumer" or load_catalog().gpu(g).form_factor.value ==
                   "system" for g in gpus)
    except Exception:
        return False


def _gpu_supports(gpu: str, precision: str) -> bool:
    try:
        return load_catalog().gpu(gpu).supports(precision) is not False
    except Exception:
        return True


def _parallel_for(model: str, count: int) -> str | None:
    """Tensor parallel needs the attention heads to divide evenly; otherwise split layers (pipeline)."""
    try:
        heads = load_catalog().model(model).attention.num_heads
    except Exception:
        return None
    return None if heads % count == 0 else "pp"


def _inference_alternatives(p: Profile, model: str, gpu: str | None, count: int, context: int, batch: int,
                            rec: dict[str, Any], card_bytes: int | None = None,
                            cheapest: bool = False) -> list[PlannedCall]:
    """Nearby configurations the tools also size, so a 'no' comes with what would work instead.

    With a GPU: lower precisions on the same machine (vLLM FP8 where the card has it, INT4/AWQ), the
    llama.cpp GGUF Q4_K_M budget (with partial CPU offload when VRAM is short) and one more GPU — all
    only when the requested configuration does not fit, except that a generic "4-bit" always gets the
    llama.cpp figure beside it. A card known only by its memory (``card_bytes``) gets INT4 and GGUF. Without
    a GPU: the common deployment precisions through sizing and the recommender, when the requested (or
    native) precision finds no configuration.
    """
    bits, family = _precision_bits(p.precision)
    base: dict[str, Any] = {"model": model, "context": context, "batch": batch}
    if p.kv_dtype:
        base["kv_dtype"] = p.kv_dtype
    lower = [q for q, b in ALT_PRECISIONS if family != "gguf" and bits > b]
    if gpu and not engine_runs(gpu, "vllm"):  # a Mac: llama.cpp only, whose 4-bit is the GGUF route below
        lower = []
    if gpu or card_bytes:
        cfg = {**base, "gpus": count, **({"gpu": gpu} if gpu else {"gpu_memory_bytes": card_bytes})}
        out = _lower_on_card(p, cfg, gpu, lower)
        as_run = engine_precision(p.precision, _engine(p)) if p.precision else None
        run_bits, run_family = _precision_bits(as_run)
        if family != "gguf" and (run_family != "gguf" or run_bits > _precision_bits(GGUF_DEFAULT)[0]):
            # the GGUF Q4_K_M route, unless what runs is already that file (a Mac's '4-bit')
            out += _gguf_on_card(p, base, cfg, gpu, count)
        if gpu and count < MAX_ALT_GPUS and load_catalog().gpu(gpu).form_factor.value != "system":  # one box
            out.append(_one_more_gpu(p, cfg, model, gpu, count))
        return out
    kv_fp8 = family != "gguf" and not p.kv_dtype and batch >= KV_HEAVY_USERS and ("int4" in lower or bits <= 4.5)
    return _alternatives_to_buy(base, rec, lower, family != "gguf" and batch <= GGUF_MAX_USERS, cheapest, kv_fp8)


def _lower_on_card(p: Profile, cfg: dict[str, Any], gpu: str | None, lower: list[str]) -> list[PlannedCall]:
    """The lower precisions on the same card (FP8 only where it has it), and the KV cache in FP8."""
    out: list[PlannedCall] = []
    for q in lower:
        if q == "fp8" and not (gpu and _gpu_supports(gpu, "fp8")):
            continue
        out.append(PlannedCall(name="size_inference", purpose="size", gpu=gpu, alt=q, when="no_fit",
                               arguments={**cfg, "precision": q, "engine": _engine(p)}))
    if gpu and not p.kv_dtype and _gpu_supports(gpu, "fp8") and _engine(p) == "vllm":
        # the KV cache in FP8 halves it and keeps the weights as they are: the fix for long contexts and many users
        kv: dict[str, Any] = {**cfg, "kv_dtype": "fp8", "engine": "vllm"}
        if p.precision:
            kv["precision"] = p.precision
        out.append(PlannedCall(name="size_inference", purpose="size", gpu=gpu, alt="kv_fp8", when="no_fit",
                               arguments=kv))
    return out


def _gguf_on_card(p: Profile, base: dict[str, Any], cfg: dict[str, Any], gpu: str | None,
                  count: int) -> list[PlannedCall]:
    """llama.cpp's GGUF Q4_K_M on the same card, and its speed."""
    # a generic '4-bit' also gets the llama.cpp figure, unless the user named the server they run
    when = "always" if is_generic_4bit(p.precision) and p.engine_hint is None else "no_fit"
    out = [PlannedCall(name="size_inference", purpose="size", gpu=gpu, alt="gguf", when=when,
                       arguments={**cfg, "precision": GGUF_DEFAULT, "engine": "llamacpp"})]
    if gpu:  # its speed, shown when the GGUF sizing fits or runs with layers in system RAM
        out.append(PlannedCall(name="perf_decode", purpose="perf", gpu=gpu, alt="gguf_speed", when=when,
                               arguments={**base, "gpu": gpu, "count": one_node(count), "precision": GGUF_DEFAULT,
                                          **_host_ram(p)}))
    return out


def _one_more_gpu(p: Profile, cfg: dict[str, Any], model: str, gpu: str, count: int) -> PlannedCall:
    more: dict[str, Any] = {**cfg, "gpus": count + 1, "engine": _engine(p)}
    if p.precision:
        more["precision"] = p.precision
    if more["engine"] == "vllm" and _parallel_for(model, count + 1):
        more["parallel"] = "pp"
    return PlannedCall(name="size_inference", purpose="size", gpu=gpu, alt="more_gpus", when="no_fit",
                       arguments=more)


def _alternatives_to_buy(base: dict[str, Any], rec: dict[str, Any], lower: list[str], gguf: bool,
                         cheapest: bool, kv_fp8: bool = False) -> list[PlannedCall]:
    """Without a card: each lower precision (and GGUF, for one or a few users) sized and recommended."""
    when = "always" if cheapest else "native_failed"  # 'the cheapest way': the quantised routes, whatever fits
    out: list[PlannedCall] = []
    for q in lower:
        out.append(PlannedCall(name="size_inference", purpose="size", alt=q, when=when,
                               arguments={**base, "gpus": 1, "precision": q, "engine": "vllm"}))
        out.append(PlannedCall(name="recommend", purpose="recommend", alt=q, when=when,
                               arguments={**rec, "precision": q}))
    if kv_fp8:  # many users: the KV cache outweighs 4-bit weights, and FP8 halves it
        out.append(PlannedCall(name="size_inference", purpose="size", alt="int4_kv_fp8", when=when,
                               arguments={**base, "gpus": 1, "precision": "int4", "kv_dtype": "fp8",
                                          "engine": "vllm"}))
        out.append(PlannedCall(name="recommend", purpose="recommend", alt="int4_kv_fp8", when=when,
                               arguments={**rec, "precision": "int4", "kv_dtype": "fp8"}))
    if gguf:  # llama.cpp: the home route, for one or a few users
        out.append(PlannedCall(name="size_inference", purpose="size", alt="gguf", when=when,
                               arguments={**base, "gpus": 1, "precision": GGUF_DEFAULT, "engine": "llamacpp"}))
        out.append(PlannedCall(name="recommend", purpose="recommend", alt="gguf", when=when,
                               arguments={**rec, "precision": GGUF_DEFAULT}))
    return out


COUNTS = (1, 2, 4, 8)


def _count_calls(tool: str, size: dict[str, Any], count: int) -> list[PlannedCall]:
    """'How many do I need?': the same request sized on 1, 2, 4 and 8 of the card, and on 2, 4 and 8 nodes of 8
    for a datacenter card the recommender would cluster (the answer is the least that fits; layers split by
    pipeline where the heads do not divide)."""
    out = []
    gpu = size.get("gpu")
    clusters = tuple(c for c in candidate_counts(load_catalog().gpu(gpu)) if c > COUNTS[-1]) if gpu else ()
    for n in (*COUNTS, *clusters):
        if n != count:
            out.append(PlannedCall(name=tool, purpose="size", gpu=size.get("gpu"), alt="count",
                                   arguments=_at_count(size, n)))
    return out


def _job_model(job: Workload) -> str | None:
    return job.model or (representative_model(job.params_b) if job.params_b and job.method != "pretrain" else None)


def _hardest_job(p: Profile, plan: Plan) -> list[PlannedCall]:
    """Several training jobs named: the plan is made for the one needing the most memory on one GPU (set on the
    profile, said in the reply); the others are sized beside it, so the reply says whether they fit too."""
    seq = train_seq(p)
    sized: list[tuple[float, Workload, str]] = []
    for job in p.workloads:
        model = _job_model(job)
        if model is None:
            continue
        try:
            need = estimate_training_memory(TrainingMemoryInput(model=load_model_spec(model), method=job.method,
                                                                gpus=1, seq=seq))
        except (ValueError, ToolError):
            continue
        sized.append((need.per_gpu_bytes, job, model))
    if len(sized) < 2:
        return []
    _, hardest, model = max(sized, key=lambda s: s[0])
    p.model, p.params_b, p.method = model, load_catalog().model(model).params_b, hardest.method
    plan.model_assumed = None
    return [PlannedCall(name="size_training", purpose="size", alt="workload",
                        arguments={"model": other, "method": job.method, "gpus": 1, "seq": seq})
            for _, job, other in sized if job is not hardest]


# GPUs a training plan is sized on: a node, then whole nodes (up to 256 nodes, the largest network planned)
TRAIN_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


_COUNTED_SETTINGS = {"recompute": "full"}  # how a training count is sized (ZeRO-3 past one card, checkpointed)


def train_count_calls(p: Profile, model: dict[str, Any], gpu: str) -> list[PlannedCall]:
    """'How many to train it?': the run's GPU-hours on one card, and the memory sharded (ZeRO-3, checkpointed)
    over each count of cards (``model``: :func:`model_args`)."""
    calls = [PlannedCall(name="training_time", purpose="time", arguments={
        **model, "gpu": gpu, "count": 1, "tokens": dataset_tokens(p), **training_rates(p)})]
    return calls + [PlannedCall(name="size_training", purpose="size", arguments={
        **model, "gpu": gpu, "gpus": n, "method": training_method(p), **_COUNTED_SETTINGS,
        "zero_stage": 3 if n > 1 else 0, "seq": train_seq(p)}) for n in TRAIN_COUNTS]


DEFAULT_TRAIN_DAYS = 30  # 'how many to train it?' with no deadline: the fewest cards that finish within a month


def train_count(p: Profile, timed: dict[str, Any] | None, fitting: list[int]) -> tuple[int | None, int]:
    """The fewest cards (of :data:`TRAIN_COUNTS`) that hold the run and, with a deadline, finish it in time, from
    the one-card time and the counts that fit; and the least count that fits memory alone."""
    if timed is None or not fitting:
        return None, 0
    need = memory = min(fitting)
    deadline = p.deadline_days or DEFAULT_TRAIN_DAYS  # no deadline said: a run done within about a month
    need = max(need, int(-(-float(timed["gpu_hours"]) // (deadline * 24))))
    if need > NODE_GPUS:  # past one node, whole nodes of eight (more cards than the fewest that fit also fit)
        whole = -(-need // NODE_GPUS) * NODE_GPUS
        return (whole if whole <= TRAIN_COUNTS[-1] else None), memory
    return next((k for k in TRAIN_COUNTS if k >= need), None), memory


def _rents(parsed: Parsed) -> bool:
    """The message is about renting (a rent's price or a run's rent), not buying a machine."""
    return parsed.kind == Kind.rent_vs_buy or "run_cost" in parsed.asks


def _least_train_count(p: Profile, model: dict[str, Any], gpu: str) -> int | None:
    """With no data to time, the fewest cards that hold the run (sharded and checkpointed, as a count is sized),
    so the plan's verdict is on the count the answer names."""
    for call in train_count_calls(p, model, gpu)[1:]:  # the sizings at 1, 2, 4, 8, … cards
        done = run_tool(call.name, call.arguments)
        if done.ok and (done.result or {}).get("fits"):
            return int(call.arguments["gpus"])
    return None


def _planned_train_count(p: Profile, model: dict[str, Any], gpu: str) -> int | None:
    """The count :func:`train_count` settles, worked out while planning (the tools run here, as for
    :func:`least_count`), so the answer is sized on the cards it recommends."""
    done = [run_tool(c.name, c.arguments) for c in train_count_calls(p, model, gpu)]
    timed = next((c.result for c in done if c.ok and c.name == "training_time"), None)
    fitting = [c.arguments["gpus"] for c in done if c.ok and c.name == "size_training" and (c.result or {}).get("fits")]
    return train_count(p, timed, fitting)[0]


def _training_calls(p: Profile, parsed: Parsed, plan: Plan) -> list[PlannedCall]:
    others = _hardest_job(p, plan) if len(p.workloads) >= 2 else []
    model = _model_args(p, plan)
    gpu, count = _config(p)
    counted_here = False
    if gpu and parsed.asks_count and not _count_said(parsed) and model and p.nodes is None \
            and (counted := _planned_train_count(p, model, gpu) if dataset_tokens(p) else _least_train_count(p, model,
                                                                                                           gpu)):
        count, counted_here = counted, True  # '需要多少张 H800？': the plan is on the count it needs
        keep_count(p, gpu, count)
    elif gpu and model and _rents(parsed) and p.gpu_count is None and not _count_said(parsed) and _on_baseboard(p):
        count = _least_train_count(p, model, gpu) or 1  # '租 a100 一小时多少钱': rented by the GPU, not the node
    method = training_method(p)
    if p.method is None:  # said in the reply: LoRA by default, pre-training when the dataset says so
        plan.assumed["method"] = "pretrain" if method == "full" else method
    seq = train_seq(p)
    size = _training_size(p, model, method, gpu, count, seq)
    if counted_here and p.grad_checkpointing is not False and not p.sharding:  # sized as the count was chosen
        size = {**size, **_COUNTED_SETTINGS, "zero_stage": 3 if count > 1 else 0}  # so the verdicts agree
    calls = [PlannedCall(name="size_training", arguments=size, purpose="size", gpu=gpu)]
    calls += _network_asked(p, parsed, gpu, count)
    if gpu:
        calls += _training_fallbacks(p, size, method, gpu, count)
    tokens = dataset_tokens(p)
    if gpu and parsed.asks_count and not tokens:  # with the data said, the count that holds the run (and
        calls += _training_counts(p, size, method, count)  # finishes it in time) is the answer (asks: train_count)
    if gpu and tokens:
        calls.append(PlannedCall(name="training_time", purpose="time", gpu=gpu, needs_fit=True,
                                 arguments={**model, "tokens": tokens, "gpu": gpu, "count": count,
                                            **training_rates(p)}))
    if gpu:
        calls.append(_training_check(p, model, method, gpu, count, seq))
    if "model" in model:
        calls.append(_training_recommend(p, parsed, model["model"], method, seq, tokens, gpu))
    if gpu and tokens:  # each other job named is timed on the same cards and data ('how long would the 7B take?')
        calls += [PlannedCall(name="training_time", purpose="time", gpu=gpu, alt="workload_time",
                              arguments={"model": o.arguments["model"], "tokens": tokens, "gpu": gpu, "count": count,
                                         **training_rates(p),
                                         "frozen_base": o.arguments.get("method") in ("lora", "qlora")})
                  for o in others]
    return calls + others


def _shards_by_default(p: Profile, model: dict[str, Any], method: str, gpu: str | None, count: int) -> bool:
    """ZeRO-3 when none was said (:func:`tools.training_memory.default_zero_stage`, the build check's rule too)."""
    if p.sharding or count <= 1:
        return False
    if method == "full" or gpu is None:
        return method == "full"
    cat = load_catalog()
    params_b = cat.model(model["model"]).params_b if "model" in model else model.get("params_b") or 0.0
    return default_zero_stage(method, params_b * 1e9, cat.gpu(gpu).memory_bytes, count) == 3


def _training_size(p: Profile, model: dict[str, Any], method: str, gpu: str | None, count: int,
                   seq: int) -> dict[str, Any]:
    """The sizing's arguments: the method, the sharding said (ZeRO-3 for full fine-tuning on several GPUs when
    none was) and activation checkpointing when said."""
    size: dict[str, Any] = {**model, "method": method, "gpus": count, "seq": seq}
    if p.micro_batch:
        size["micro_batch"] = p.micro_batch
    if gpu:
        size["gpu"] = gpu
    if p.sharding == "fsdp":
        size["fsdp"] = True
    elif p.sharding:
        size["zero_stage"] = int(p.sharding[-1])
    elif _shards_by_default(p, model, method, gpu, count):
        size["zero_stage"] = 3  # LoRA on a base larger than one card shards the frozen weights too (FSDP)
    if p.grad_checkpointing is not None:
        size["recompute"] = "full" if p.grad_checkpointing else "none"
    return size


def _training_fallbacks(p: Profile, size: dict[str, Any], method: str, gpu: str, count: int) -> list[PlannedCall]:
    """What is sized on the card named in case the request does not fit: lighter methods, checkpointing,
    sharding or offloading the optimizer."""
    calls = _lighter_methods(p, size, method, gpu)
    if method == "full" and p.grad_checkpointing is None:  # checkpointing: the usual first step for full
        calls.append(PlannedCall(name="size_training", purpose="size", gpu=gpu, alt="checkpointing", when="no_fit",
                                 arguments={**size, "recompute": "full"}))
    if count > 1 and not p.sharding:  # on the GPUs named: sharding first, then offloading the optimizer
        if "zero_stage" not in size:
            calls.append(PlannedCall(name="size_training", purpose="size", gpu=gpu, alt="zero3", when="no_fit",
                                     arguments={**size, "zero_stage": 3}))
        elif method == "full":
            calls.append(PlannedCall(name="size_training", purpose="size", gpu=gpu, alt="offload", when="no_fit",
                                     arguments={**size, "offload_optimizer": True}))
    return calls


def _lighter_methods(p: Profile, size: dict[str, Any], method: str, gpu: str) -> list[PlannedCall]:
    if p.method not in (None, "lora", "full") or method == "qlora":
        return []
    # the lighter methods, if this one fails: sized as a turn asking for that method would size it; the ZeRO-3
    # assumed for full fine-tuning on several GPUs is not carried over (a lighter method runs data-parallel unless
    # the user shards it)
    # — except where the frozen base outgrows one card, which a LoRA turn shards too (:func:`_training_size`)
    light = {k: v for k, v in size.items() if k != "zero_stage" or p.sharding}
    count = int(size.get("gpus") or 1)
    return [PlannedCall(name="size_training", purpose="size", gpu=gpu, alt=lighter, when="no_fit",
                        arguments={**light, "method": lighter,
                                   **({"zero_stage": 3} if _shards_by_default(p, size, lighter, gpu, count) else {})})
            for lighter in ("lora", "qlora")[1 if method == "lora" else 0:]]


def _training_counts(p: Profile, size: dict[str, Any], method: str, count: int) -> list[PlannedCall]:
    """'How many do I need?' for training."""
    sharded = {**size, "zero_stage": 3} if method == "full" and not p.sharding else size
    if method == "full" and p.grad_checkpointing is None:  # and checkpoints, as the recommender plans it
        sharded["recompute"] = "full"
    return _count_calls("size_training", sharded, count)  # full fine-tuning over several GPUs shards


def _training_check(p: Profile, model: dict[str, Any], method: str, gpu: str, count: int, seq: int) -> PlannedCall:
    check: dict[str, Any] = {"gpus": _box_cards(p, gpu, count), "workload": "training",
                             "method": method, "context": seq}
    if "model" in model:
        check["model"] = model["model"]
    if p.cuda_required:
        check["cuda_required"] = True
    check = _machine_check(check, p)
    return PlannedCall(name="check_build", arguments=check, purpose="check", gpu=gpu)


def _training_recommend(p: Profile, parsed: Parsed, model: str, method: str, seq: int, tokens: float | None,
                        gpu: str | None) -> PlannedCall:
    rec: dict[str, Any] = {"workload": "training", "model": model, "method": method, "context": seq,
                           **_common_rec(p)}
    if tokens:
        rec["dataset_tokens"] = tokens
    if p.deadline_days:
        rec["deadline_hours"] = p.deadline_days * 24
    return PlannedCall(name="recommend", arguments=rec, purpose="recommend",
                       only_if_no_fit=not _wants_recommendation(p, parsed, gpu))


def _scientific_calls(p: Profile, parsed: Parsed, plan: Plan) -> list[PlannedCall]:
    gpu, count = _config(p)
    problem_bytes = round(p.problem_size_gb * 1e9) if p.problem_size_gb else None
    calls: list[PlannedCall] = []
    if gpu:
        calls.append(PlannedCall(name="gpu_info", arguments={"name": gpu}, purpose="info", gpu=gpu))
        if problem_bytes:
            calls.append(PlannedCall(name="scientific_fp64", purpose="size", gpu=gpu, arguments={
                "gpu": gpu, "count": count, "problem": "grid", "cells": problem_bytes / 8, "time_levels": 1}))
        check: dict[str, Any] = {"gpus": _box_cards(p, gpu, count), "workload": "scientific"}
        if p.fp64 is not False:
            check["precision"] = "fp64"
        if problem_bytes:
            check["problem_bytes"] = problem_bytes
        if p.cuda_required:
            check["cuda_required"] = True
        check = _machine_check(check, p)
        calls.append(PlannedCall(name="check_build", arguments=check, purpose="check", gpu=gpu))
    rec: dict[str, Any] = {"workload": "scientific", "fp64_required": p.fp64 is not False, **_common_rec(p)}
    if p.sci_code:  # only cards whose software stack has a build of the code (VASP: CUDA; GROMACS: CUDA, ROCm, SYCL)
        rec["code"] = p.sci_code
    if p.sci_code and scientific_code(p.sci_code).cuda_only:
        rec["cuda_required"] = True  # the code's GPU build runs on NVIDIA only
    if p.sci_code and scientific_code(p.sci_code).fp64_kind:
        rec["fp64_kind"] = scientific_code(p.sci_code).fp64_kind  # CFD: vector FP64; VASP: tensor-core FP64
    if problem_bytes:
        rec["problem_bytes"] = problem_bytes
    if p.sci_code and scientific_code(p.sci_code).one_gpu_per_job:
        rec["problem_per_gpu"] = True
    calls.append(PlannedCall(name="recommend", arguments=rec, purpose="recommend",
                             only_if_no_fit=not _wants_recommendation(p, parsed, gpu)))
    return calls


def session_region(session: Session, lang: str) -> tuple[Literal["cn", "global"], bool]:
    """:func:`buyer_region`, with the first guess kept for the session: switching the UI language later does not
    move the buyer to another market."""
    region, stated = buyer_region(session.profile, lang)
    if not stated:
        region = session.region_guess or region
        session.region_guess = region
    return region, stated


def _domestic_vendor(vendor: str) -> bool:
    """A vendor ('huawei') whose catalog cards are all Chinese domestic accelerators."""
    cards = [g for g in load_catalog().gpus if g.vendor.lower() == vendor.lower()]
    return bool(cards) and all(g.domestic for g in cards)


def buyer_region(p: Profile, lang: str) -> tuple[Literal["cn", "global"], bool]:
    """Where the cards are bought, and whether the user said so: what they said, a domestic-only requirement
    (mainland China), the budget's currency (yuan: China; euro or pound: elsewhere), else their language."""
    if p.region:
        return p.region, True
    if p.domestic or (p.only_vendors and all(_domestic_vendor(v) for v in p.only_vendors)):
        return "cn", True  # Chinese accelerators are sold in mainland China
    if p.budget and p.budget.currency in ("CNY", "EUR", "GBP"):
        return ("cn" if p.budget.currency == "CNY" else "global"), False
    return ("cn" if lang == "zh" else "global"), False


def user_currency(p: Profile, lang: str, allowed: tuple[str, ...] = ("USD", "CNY", "EUR", "GBP")) -> str:
    """The currency the user asked prices in ('in RMB'), else their budget's when we can price in it, else their
    language's."""
    if p.currency_wanted and p.currency_wanted in allowed:
        return p.currency_wanted
    if p.budget and p.budget.currency in allowed:
        return p.budget.currency
    return default_currency(lang)


COMPARED_CARDS = 6  # the most cards one comparison sets side by side (the rest are said to be left out)



def _compare_calls(p: Profile, lang: str) -> list[PlannedCall]:
    calls: list[PlannedCall] = []
    options: list[dict[str, Any]] = []
    model = model_args(p)  # a size said alone stands for a catalog model, unless pre-trained from scratch
    singles = _one_each(p)
    for gid in p.compare[:COMPARED_CARDS]:
        # a count said with one card is that card's ('what if 8 P40 instead?'); one said with none, everyone's
        said = p.compare_counts.get(gid) or (p.gpu_count if p.gpu in (None, gid) else None) \
            or sum(e.count for e in p.existing or [] if e.gpu == gid) or (1 if singles else None)
        count = said or 1
        calls.append(PlannedCall(name="gpu_info", arguments={"name": gid}, purpose="info", gpu=gid))
        if model and p.use_case in (None, "inference"):
            context = context_for(p)
            batch = p.concurrency or DEFAULT_CONCURRENCY
            precision, engine = _compare_precision(p)
            if not engine_runs(gid, engine):  # a Mac among the cards: llama.cpp
                engine = "llamacpp"
            if engine == "llamacpp":  # at the GGUF file of the same bits
                precision = engine_precision(precision, engine) if precision else _run_precision(p, model, engine)
            size = {**model, "context": context, "batch": batch, "gpus": count, "gpu": gid, "engine": engine}
            if precision:
                size["precision"] = precision
            if not said and load_catalog().gpu(gid).form_factor.value != "system":  # a computer is one box
                count = least_count(size)  # 'H20 or 910B for R1?': each card at the least count that holds it
                size = _at_count(size, count)
            elif said and p.precision is None and engine == "vllm":  # 'one 5090 or a 4090 48G for a 32B?': each
                # card at the highest precision it holds the model in
                precision = fitting_precision(size) or precision
                if precision:
                    size["precision"] = precision
            # as for one configuration: per token, one node's tensor-parallel group — unless the model needs more
            # nodes than one (layers split between them; one node would be timed with weights in system RAM)
            perf = {**model, "gpu": gid, "count": count if NODE_GPUS < count <= MAX_TIMED_GPUS else one_node(count),
                    "context": context, "batch": batch, "engine": engine}
            if precision:
                perf["precision"] = precision
            calls.append(PlannedCall(name="size_inference", arguments=size, purpose="size", gpu=gid))
            calls.append(PlannedCall(name="perf_decode", arguments=perf, purpose="perf", needs_fit=True, gpu=gid))
        elif model and p.use_case == "training":  # sharded as a training turn shards it
            size = _training_size(p, model, training_method(p), gid, count, train_seq(p))
            calls.append(PlannedCall(name="size_training", arguments=size, purpose="size", gpu=gid))
            if tokens := dataset_tokens(p):  # the run's length on each configuration decides between them
                calls.append(PlannedCall(name="training_time", purpose="time", gpu=gid,  # shown where it fits
                                         arguments={**model, "tokens": tokens, "gpu": gid, "count": count,
                                                    **training_rates(p)}))
        options.append({"gpu": gid, "count": count})
    calls.append(PlannedCall(name="value_for_money", purpose="value", takes_sizing=True,
                             arguments={"options": options, "currency": user_currency(p, lang), **said_prices(p)}))
    return calls


def _compare_precision(p: Profile) -> tuple[str | None, str]:
    """The precision and engine cards are compared at: as said; GGUF Q4_K_M where home users run Ollama (a
    '4-bit' on consumer cards, a home machine, or consumer cards for a few users with no precision said)."""
    precision, engine = p.precision, _engine(p)
    few = (p.concurrency or 1) <= GGUF_MAX_USERS and p.engine_hint is None
    home_cards = few and _home_cards(p.compare)
    if (is_generic_4bit(precision) and home_cards) or (precision is None and (_runs_gguf(p) or home_cards)):
        return GGUF_DEFAULT, "llamacpp"
    return precision, engine


def _at_count(size: dict[str, Any], n: int) -> dict[str, Any]:
    """A sizing's arguments at ``n`` GPUs: across nodes, tensor parallel inside and layers between (vLLM); layers
    split by pipeline where the heads do not divide."""
    args = {**size, "gpus": n}
    if n > NODE_GPUS and args.get("engine") == "vllm":
        args["pipeline_stages"] = even_nodes(n)
    if n > 1 and "model" in args and args.get("engine") == "vllm" and _parallel_for(args["model"], one_node(n)):
        args["parallel"] = "pp"
        args.pop("pipeline_stages", None)
    return args


SERVING_LADDER = ("fp8", "int4")  # below a model's own precision, what a vLLM server loads next


def fitting_precision(size: dict[str, Any]) -> str | None:
    """The highest precision that holds the sizing at its count — the model's own (None), else FP8, else 4-bit —;
    4-bit, the nearest to fitting, when none does."""
    for precision in (None, *SERVING_LADDER):
        args = {**size, "precision": precision} if precision else {k: v for k, v in size.items() if k != "precision"}
        try:
            if estimate_inference_memory(InferenceMemoryInput(**args)).fits:
                return precision
        except (ValueError, ToolError):
            continue
    return SERVING_LADDER[-1]


def _one_each(p: Profile) -> bool:
    """'买一张5090够么？还是买4090 48G魔改版': one card said for one of the cards compared, none for the others —
    one of each is weighed."""
    said = [p.compare_counts[g] for g in p.compare if g in p.compare_counts]
    return bool(said) and set(said) == {1} and len(said) < len(p.compare)


def least_count(size: dict[str, Any]) -> int:
    """The fewest of the card (1, 2, 4, 8, then nodes of 8 the recommender would build) that hold the sizing,
    found with the sizing tool itself; 1 when none does or the sizing cannot run."""
    gpu = load_catalog().gpu(size["gpu"])
    for n in (*COUNTS, *(c for c in candidate_counts(gpu) if c > COUNTS[-1])):
        try:
            if estimate_inference_memory(InferenceMemoryInput(**_at_count(size, n))).fits:
                return n
        except (ValueError, ToolError):
            continue
    return 1
