"""The conversation state: requirement profile so far, last tool results, history — typed and serialisable.

A session is plain pydantic, saved as JSON with a ``version`` field. ``Session.load`` never
repairs or replaces a file silently: a corrupt, truncated, foreign or newer-version file
raises :class:`SessionError` with a message saying what is wrong and what to do.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from advisor.nlu import FormFactorPref, GpuCount, LabeledOption, Lang, Method, Money, UseCase, Workload
from knowledge import load_catalog
from knowledge.bounded import BoundsError, data_depth, nested_too_deeply, read_text, text_depth
from knowledge.codes import scientific_codes
from knowledge.messages import msg, render
from knowledge.names import EngineHint
from tools.catalog_query import AffordableInput
from tools.compat import parse_mains
from tools.compat_rules.types import MAX_GPUS_OF_ONE
from tools.inference_memory import MAX_CONTEXT_SEARCH
from tools.inputs import upper_bound
from tools.pricing import to_usd
from tools.result import Note
from tools.training_time import MAX_TOKENS

SESSION_VERSION = 1
SESSION_KIND: Final = "gpu-advisor-session"
SESSION_ID_PATTERN: Final = r"^[A-Za-z0-9_-]{1,64}$"
MAX_SESSION_DEPTH: Final = 64  # a real session nests ~12 levels (tool results inside turns inside the history)
MAX_SESSION_BYTES: Final = 64_000_000  # a trimmed session is well under 1 MB; 10,000 kept turns stay under this
MAX_BUDGET_USD: Final = upper_bound(AffordableInput, "budget_usd") or 1e9
FULL_RESULTS_KEPT: Final = 2  # answers whose tool results stay in full: the latest may compare with the one before

# Profile slots, in the order the planner considers them.
SLOTS = (
    "use_case", "model", "precision", "context_tokens", "concurrency", "method", "dataset_tokens",
    "deadline_days", "fp64", "problem_size_gb", "budget", "cuda_required", "domestic", "existing",
    "form_factor", "power_limit_w",
)


@contextlib.contextmanager
def session_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the session file's lock (``<file>.lock``, POSIX ``flock``) for a load–turn–save: a second process
    on the same file waits, then loads the first one's turn and adds its own, so no turn is lost."""
    try:
        import fcntl
    except ImportError:  # Windows: no cross-process lock
        yield
        return
    target, lock = Path(path), f"{os.fspath(path)}.lock"
    try:
        if target.exists() and not target.is_file():  # '/dev/zero', a pipe: no lock file beside it; load says why
            raise OSError("not a regular file")
        # never through a symbolic link: one planted as the lock would have us create or lock a file elsewhere
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SessionError(f"the lock file {Path(lock).name} is a symbolic link, which is not followed; remove "
                               "it (the session was left unchanged)") from None
        yield  # no place for a lock (nor, then, for the session): the load or the save reports it
        return
    with os.fdopen(fd, "r+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def catalog_ids(kind: Literal["gpu", "model", "platform"], value: str | list[str] | None) -> Any:
    """``value`` (one id or a list), every id an entry of the catalog as loaded now; ValueError naming the one that
    is not (a card of a GPU file no longer set, a hand-edited id), so a session never plans with it."""
    cat = load_catalog()
    entries: tuple[Any, ...] = cat.gpus if kind == "gpu" else cat.models if kind == "model" else cat.platforms
    known = {e.id for e in entries}
    for item in [value] if isinstance(value, str) else value or []:
        if item not in known:
            hint = " (a card described in a GPU file needs GPU_ADVISOR_GPUS set to it)" if kind == "gpu" else ""
            word = {"gpu": "GPU", "model": "model", "platform": "CPU platform"}[kind]
            raise ValueError(f"{item[:40]!r} is not a {word} of the catalog{hint}")
    return value


class SessionError(ValueError):
    """A session file that cannot be used as it is; the message says why and what to do. ``problems``: the
    fields that do not fit the format, as (field, kind, limit), for a reader in another language."""

    def __init__(self, message: str, problems: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


# pydantic's error types, in the words of the session's own problem kinds (``session.field.<kind>`` messages)
_PROBLEM_KIND = {"string_pattern_mismatch": "pattern", "less_than_equal": "at_most", "less_than": "at_most",
                 "greater_than": "at_least", "greater_than_equal": "at_least", "finite_number": "finite",
                 "missing": "missing", "extra_forbidden": "unknown", "literal_error": "not_allowed",
                 "enum": "not_allowed", "string_too_long": "too_long"}


def problem_text(problems: list[tuple[str, str, str]], lang: str) -> str:
    """Each field that does not fit the session format, in ``lang`` (``session.field.<kind>`` messages)."""
    return msg(lang, "session.field.sep").join(msg(lang, f"session.field.{kind}", field=field, limit=limit)
                                               for field, kind, limit in problems)


def _problem(error: Any) -> tuple[str, str, str]:
    """One validation error as (field, kind, limit)."""
    field = ".".join(str(p) for p in error.get("loc", ())) or "session"
    kind = _PROBLEM_KIND.get(str(error.get("type", "")))
    if kind is None:
        kind = "type" if str(error.get("type", "")).endswith(("_type", "_parsing")) else "invalid"
    ctx = error.get("ctx") or {}
    limit = next((ctx[k] for k in ("le", "lt", "ge", "gt", "max_length") if k in ctx), "")
    return field, kind, f"{limit:,}" if isinstance(limit, int | float) else str(limit)


MAX_CARD_PRICE = 1e8  # a card's unit price, in any currency: beyond it, no price anyone pays (the tools' own bound)


def _card_price(price: Money) -> Money:
    if price.amount > MAX_CARD_PRICE:
        raise ValueError(f"a card price above {MAX_CARD_PRICE:,.0f} is no price")
    return price


class Profile(BaseModel):
    """What we know about the user's requirement. ``None`` = not known yet."""

    # every number bounded by what the tools take (a session holding 10**30 tokens of context is refused by name
    # on load, and a message saying it is told so: engine.apply_parsed), and finite
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    use_case: UseCase | None = None
    model: str | None = Field(None, description="catalog model id")
    params_b: float | None = Field(None, gt=0, le=100_000, description="model size in billions of parameters")
    providers: list[str] = Field(default_factory=list, max_length=8, description="rental providers named")
    model_said: str | None = Field(None, max_length=60, description="a model named that the catalog lacks; it is "
                                                                  "sized from params_b")
    precision: str | None = Field(None, description="weight precision, tools.precision canonical name")
    service_model: bool = Field(False, description="model and precision are the stand-in assumed for a service to "
                                                   "people with no model named (said in every answer on them)")
    kv_dtype: str | None = None
    # what every tool the planner feeds takes: speed estimates to 10,000,000 tokens and a batch of 100,000
    context_tokens: int | None = Field(None, ge=1, le=min(MAX_CONTEXT_SEARCH, 10_000_000))
    concurrency: int | None = Field(None, ge=1, le=100_000)
    prompt_tokens: int | None = Field(None, ge=1, le=10_000_000, description="a prompt's length, said with an answer's")
    answer_tokens: int | None = Field(None, ge=1, le=2_000_000, description="an answer's length, when said")
    served_model: str | None = Field(None, description="catalog model id served beside the one trained")
    side_training: Workload | None = Field(None, description="a training job run on the side of the serving sized")
    side_media: str | None = Field(None, description="catalog id of an image model run beside the language model")
    ups_va: float | None = Field(None, gt=0, le=1_000_000, description="a UPS the buyer has or plans, VA")
    ups_minutes: float | None = Field(None, gt=0, le=600, description="battery runtime the UPS must give, minutes")
    circuit_load_w: float | None = Field(None, ge=0, le=100_000, description="other load on the machine's circuit, W")
    method: Method | None = None
    dataset_tokens: float | None = Field(None, gt=0, le=MAX_TOKENS)
    daily_output_tokens: float | None = Field(None, gt=0, le=1e15, description="tokens the service generates a day")
    daily_requests: float | None = Field(None, gt=0, le=1e12, description="requests the service answers a day")
    daily_input_tokens: float | None = Field(None, ge=0, le=1e15, description="prompt tokens the service reads a day")
    api_monthly_spend: Money | None = Field(None, description="what the buyer pays for the API a month")
    currency_wanted: Literal["USD", "CNY", "EUR", "GBP"] | None = Field(
        None, description="the money the buyer asked prices in ('in RMB'), over their language's")
    api_quoted_per_m: Money | None = Field(None, description="an API price per 1M tokens the buyer quoted")
    api_model: str | None = Field(None, max_length=40, description="hosted API the buyer uses or weighs (api_prices "
                                                                   "id)")
    dataset_samples: float | None = Field(None, gt=0, le=1e11)  # × 512 tokens × 1,000 epochs stays within MAX_TOKENS
    epochs: float | None = Field(None, gt=0, le=1000)
    deadline_days: float | None = Field(None, gt=0, le=36_500)
    fp64: bool | None = None
    sequence_tokens: int | None = Field(None, ge=1, le=1_000_000, description="residues a structure prediction holds")
    problem_size_gb: float | None = Field(None, gt=0, le=8_000_000, description="memory one scientific job needs, GB "
                                                                                "(1e9 B)")
    budget: Money | None = None
    budget_unlimited: bool = False
    cuda_required: bool | None = None
    domestic: bool | None = None
    existing: list[GpuCount] | None = Field(None, description="hardware already owned; [] = none")
    form_factor: FormFactorPref | None = None
    power_limit_w: float | None = Field(None, gt=0, le=100_000)
    power_limit_at_wall: bool | None = Field(None, description="power_limit_w is the whole machine's at the wall, "
                                                               "whatever its size")
    gpu: str | None = Field(None, description="catalog GPU id of the configuration under discussion")
    gpu_count: int | None = Field(None, ge=1, le=1024)
    compare: list[str] = Field(default_factory=list, description="GPU ids the user asked to compare")
    compare_counts: dict[str, Annotated[int, Field(ge=1, le=1024)]] = Field(
        default_factory=dict, description="cards per compared GPU when said ('双卡 4090 和单卡 6000 Ada')")
    options: list[LabeledOption] = Field(default_factory=list, max_length=4,
                                         description="labelled options the buyer listed (A, B, C), for '选 B'")
    workloads: list[Workload] = Field(default_factory=list, max_length=8,
                                      description="the training jobs when several were named; the plan sizes the "
                                                  "hardest")
    card_rates: dict[str, Annotated[Money, AfterValidator(_card_price)]] = Field(
        default_factory=dict, max_length=16, description="GPU id → rent per GPU-hour said")
    rented_gpu: str | None = Field(None, max_length=64, description="the card rented when another is bought")
    rented_count: int | None = Field(None, ge=1, le=1024, description="how many of the rented card")
    card_prices: dict[str, Annotated[Money, AfterValidator(_card_price)]] = Field(default_factory=dict, max_length=16,
                                          description="GPU id → the unit price the user said ('P40 ~$300')")
    psu_w: float | None = Field(None, gt=0, le=100_000, description="PSU rating of the user's machine, W")
    system_ram_gb: float | None = Field(None, gt=0, le=65_536, description="system RAM of the user's machine, GB")
    sci_code: str | None = Field(None, description="the scientific code the user runs (knowledge/data/codes)")
    card_memory_gb: float | None = Field(None, ge=2, le=1024, description="a card known only by its memory "
                                                                           "('a 32 GB GPU'), vendor GB")
    cpu: str | None = Field(None, description="catalog CPU platform id")
    cpu_name: str | None = Field(None, max_length=60, description="a CPU the platform catalog does not know")
    nodes: int | None = Field(None, ge=1, le=4096)
    sharding: Literal["zero1", "zero2", "zero3", "fsdp"] | None = None
    grad_checkpointing: bool | None = None
    has_host: bool | None = Field(None, description="a computer for the cards is already owned")
    home: bool | None = Field(None, description="a machine for home or personal use (a desktop tower)")
    organisation: bool | None = Field(None, description="a company, lab, school or agency buys: new cards under "
                                                        "warranty lead, used and grey-market ones follow")
    pue: float | None = Field(None, ge=1.0, le=3.0, description="the facility's PUE: the bill counts cooling too")
    racks: int | None = Field(None, ge=1, le=10_000, description="racks to fill, with the power per rack")
    memory_bound: bool | None = Field(None, description="the code is limited by memory bandwidth: it ranks cards")
    supply: tuple[float, int] | None = Field(None, description="the supply's voltage (V) and phases (1 or 3)")
    region: Literal["cn", "global"] | None = Field(None, description="where the cards are bought (mainland China or "
                                                                     "elsewhere), when said")
    budget_scope: Literal["gpu_only", "system"] | None = None
    excluded_vendors: list[str] = Field(default_factory=list)
    only_vendors: list[str] = Field(default_factory=list, description="vendors the choice is restricted to")
    allowed_gpus: list[str] = Field(default_factory=list)
    ruled_out_gpus: list[str] = Field(default_factory=list, description="cards the buyer cannot get")
    mains: str | None = Field(None, max_length=20, description="wall circuit, e.g. '220v-10a'")
    circuits: int | None = Field(None, ge=1, le=256, description="wall circuits of that kind the machines share")
    engine_hint: EngineHint | None = Field(
        None, description="the engine the user runs: Ollama / llama.cpp (GGUF files), SGLang or vLLM")
    gpu_power_limit_w: float | None = Field(None, gt=0, le=2000, description="per-card power limit, W")
    hours_per_day: float | None = Field(None, gt=0, le=24)
    kwh_price: float | None = Field(None, gt=0, lt=10, description="electricity per kWh, user's currency")
    kwh_currency: Literal["CNY", "USD", "EUR", "GBP"] | None = Field(None, description="the kWh price's currency")
    by_the_month: bool | None = Field(None, description="rents by the month (包月)")
    gpu_hours_total: float | None = Field(None, gt=0, le=100_000_000, description="GPU-hours needed in all")
    runs_per_month: float | None = Field(None, gt=0, le=31, description="how often the job is run, a month")
    gpu_hours_month: float | None = Field(None, gt=0, le=800_000, description="GPU-hours used a month, all GPUs")
    node_link_gbps: float | None = Field(None, gt=0, le=12_800, description="the network between the nodes now, "
                                                                          "Gb/s per node")
    host_bandwidth_gbs: float | None = Field(
        None, gt=0, le=2000, description="system RAM bandwidth, GB/s, from its type and channels")
    rental_rate: tuple[Annotated[float, Field(gt=0, le=1e6)], Literal["USD", "CNY", "EUR"]] | None = Field(
        None, description="quoted rent per GPU-hour")
    purchase_price: tuple[Annotated[float, Field(gt=0, le=1e9)], Literal["USD", "CNY", "EUR"]] | None = Field(
        None, description="what buying costs as the user quoted it (cards and host)")
    quoted_price: tuple[Annotated[float, Field(gt=0, le=1e10)], Literal["USD", "CNY", "EUR"]] | None = Field(
        None, description="a seller's price for the build, to judge against the catalog")
    head_count: int | None = Field(None, ge=1, le=10_000_000, description="people who use it in all; "
                                                                     "concurrency holds those at once")
    tokens_per_s_target: float | None = Field(None, gt=0, le=100_000, description="decode tokens/s wanted per user")
    ttft_target_s: float | None = Field(None, gt=0, le=3600, description="time to first token wanted, s")
    rack_kw: float | None = Field(None, gt=0, le=1000, description="power per rack, kW")
    years: float | None = Field(None, gt=0, le=30, description="horizon of running costs, years")
    mfu: float | None = Field(None, ge=0.01, le=1, description="model FLOPs utilisation the user states")
    tokens_per_sample: float | None = Field(None, ge=1, le=1_000_000, description="average tokens per sample")
    micro_batch: int | None = Field(None, ge=1, le=4096, description="sequences per training step on one GPU")

    @classmethod
    def most(cls, slot: str) -> float | None:
        """The most ``slot`` may hold (its schema's ``le``; the budget's in USD); None where nothing bounds it."""
        return {"budget": MAX_BUDGET_USD, "existing": MAX_GPUS_OF_ONE}.get(slot) or upper_bound(cls, slot)

    @field_validator("budget")
    @classmethod
    def _plannable_budget(cls, value: Money | None) -> Money | None:
        """A budget the tools can price against (what a budget buys stops at MAX_BUDGET_USD)."""
        if value is not None and to_usd(value.amount, value.currency) > MAX_BUDGET_USD:
            raise ValueError(f"a budget above {MAX_BUDGET_USD:,.0f} USD is beyond what is planned here")
        return value

    @field_validator("gpu", "compare", "allowed_gpus", "ruled_out_gpus")
    @classmethod
    def _catalog_gpus(cls, value: Any) -> Any:
        return catalog_ids("gpu", value)

    @field_validator("model")
    @classmethod
    def _catalog_model(cls, value: str | None) -> str | None:
        return catalog_ids("model", value)  # type: ignore[no-any-return]

    @field_validator("cpu")
    @classmethod
    def _catalog_platform(cls, value: str | None) -> str | None:
        return catalog_ids("platform", value)  # type: ignore[no-any-return]

    @field_validator("existing")
    @classmethod
    def _plannable_existing(cls, value: list[GpuCount] | None) -> list[GpuCount] | None:
        """Cards already owned, at most what one build holds of a model (the recommender counts them in)."""
        catalog_ids("gpu", [g.gpu for g in value or []])
        if value and max(g.count for g in value) > MAX_GPUS_OF_ONE:
            raise ValueError(f"more than {MAX_GPUS_OF_ONE} owned cards of one model are beyond what is planned here")
        return value

    @field_validator("sci_code")
    @classmethod
    def _known_code(cls, value: str | None) -> str | None:
        """A scientific code of knowledge/data/codes (the planner looks it up by id)."""
        if value is not None and value not in {c.id for c in scientific_codes()}:
            raise ValueError(f"unknown scientific code {value[:40]!r}")
        return value

    @field_validator("mains")
    @classmethod
    def _readable_mains(cls, value: str | None) -> str | None:
        """A wall circuit the build check can read ('230v-16a'): a session never hands it one it refuses."""
        if value is not None:
            parse_mains(value)  # ToolError (a ValueError) naming the circuit, with examples
        return value

    def known(self, slot: str) -> bool:
        """Whether ``slot`` has a value (a model size counts for 'model'; 'unlimited' for 'budget')."""
        if slot == "model":
            return self.model is not None or self.params_b is not None
        if slot == "budget":
            return self.budget is not None or self.budget_unlimited
        if slot == "dataset_tokens":
            return self.dataset_tokens is not None or self.dataset_samples is not None
        if slot == "domestic":
            return self.domestic is not None
        return getattr(self, slot, None) is not None


ALT_CALL_PREFIX = "alt_"  # call ids of alternatives the planner sized beside the requested configuration


class ToolCall(BaseModel):
    """One tool run: what was asked, what came back (or the domain error)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: dict[str, Any] | None = Field(
        None, description="the tool's output as a JSON object; a saved session with anything else is rejected")
    error: str | None = None
    error_note: Note | None = Field(None, description="the error as a message id (render it in the reader's language)")
    error_kind: Literal["validation", "domain"] | None = None
    by: Literal["planner", "llm"] = "planner"
    call_id: str = Field(default_factory=lambda: "call_" + uuid.uuid4().hex[:12])
    duration_ms: float = 0.0
    result_dropped: bool = Field(False, description="the result was dropped to bound the session's size (the "
                                                    "turns before the last few keep only their inputs)")
    _typed: BaseModel | None = PrivateAttr(None)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def alternative(self) -> bool:
        """An alternative the planner sized beside the requested configuration, not the configuration itself."""
        return self.call_id.startswith(ALT_CALL_PREFIX)

    def error_in(self, lang: str | None) -> str:
        """The error in ``lang`` (the English text for calls saved before errors carried a message id)."""
        return render(self.error_note, lang) if self.error_note is not None else (self.error or "")

    def typed_result(self) -> BaseModel | None:
        """The result as its tool's output model, once ``advisor.toolspec.typed`` has validated it."""
        return self._typed

    def keep_typed(self, value: BaseModel | None) -> None:
        """Remember the typed result (None forgets it: a session between turns keeps only the JSON)."""
        self._typed = value


class Citation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str = ""
    source: str = ""
    text: str = Field("", description="the passage text (for the UI to show, and for grounding)")
    lang: str = ""


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    text: str
    lang: Lang | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    citations: list[str] = Field(default_factory=list)
    question: str | None = None
    notices: list[str] = Field(default_factory=list)
    backend: str = "deterministic"
    at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))


MAX_SCHEME_GPUS, MAX_SCHEME_NODES = 1024, 256  # the largest plan sized: a two-tier fabric's nodes


class Scheme(BaseModel):
    """One configuration the conversation computed (a sizing, a build check, a recommendation's first option):
    'both options' means the last two of them."""

    model_config = ConfigDict(extra="forbid")

    gpu: str
    count: int = Field(ge=1, le=MAX_SCHEME_GPUS)
    nodes: int = Field(1, ge=1, le=MAX_SCHEME_NODES)
    model: str | None = None
    precision: str | None = None


MAX_SCHEMES = 6


class Session(BaseModel):
    """One conversation. Mutated in place by ``Advisor.reply``; safe to save between turns."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["gpu-advisor-session"] = SESSION_KIND
    version: int = SESSION_VERSION
    id: str = Field(default_factory=lambda: uuid.uuid4().hex, pattern=SESSION_ID_PATTERN,
                    description="letters, digits, '-' and '_' only: never a path")
    created: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))
    lang: Lang | None = None
    profile: Profile = Field(default_factory=Profile)
    asked: list[str] = Field(default_factory=list, description="slots already asked (never asked twice)")
    pending: list[str] = Field(default_factory=list, description="slots the last question asked about")
    assumed: list[str] = Field(default_factory=list, description="slots filled by a stated default")
    history: list[Turn] = Field(default_factory=list)
    last_results: dict[str, ToolCall] = Field(default_factory=dict, description="latest call per tool")
    schemes: list[Scheme] = Field(default_factory=list, max_length=MAX_SCHEMES,
                                  description="the configurations computed so far, the latest last")
    citations: dict[str, Citation] = Field(default_factory=dict, description="passages cited so far, by id")
    dropped_turns: int = Field(0, ge=0, le=10**9, description="turns removed to respect the history limit")
    last_kind: str | None = Field(None, description="the answer kind of the last turn that answered (follow-ups "
                                                    "such as 'and with a 1600W PSU?' continue it)")
    focus: list[str] = Field(default_factory=list, description="GPU ids the last spec question was about ('它')")
    compare_pick: str | None = Field(None, max_length=64, description="the card the last comparison's verdict "
                                                                      "named ('power per node for that option?')")
    focus_systems: list[str] = Field(default_factory=list, max_length=3,
                                     description="servers or racks the last answer was about ('its power?')")
    last_asks: list[Annotated[str, Field(max_length=32)]] = Field(
        default_factory=list, max_length=16, description="what the last message that asked anything asked ('how_many', "
                                                         "'build_cost' …): a what-if follow-up asks it again")
    focus_attribute: str | None = Field(None, description="the fact the last spec question asked ('and the A100?')")
    said_once: list[Annotated[str, Field(max_length=32)]] = Field(
        default_factory=list, max_length=16, description="notices said once a session ('context': the model's "
                                                         "context cannot hold a turn)")
    region_guess: Literal["cn", "global"] | None = Field(None, description="the buying region first assumed (from "
                                                                           "language or currency), kept for the "
                                                                           "session until the user says one")

    @field_validator("focus")
    @classmethod
    def _catalog_focus(cls, value: list[str]) -> list[str]:
        return catalog_ids("gpu", value)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ helpers
    def result(self, tool: str) -> Any:
        """The latest successful result of ``tool`` (a JSON-like dict), or None."""
        call = self.last_results.get(tool)
        return call.result if call and call.ok else None

    def trim(self, max_turns: int, full_results: int = FULL_RESULTS_KEPT) -> None:
        """Keep at most ``max_turns`` turns of history (oldest dropped first), and the tool results of only
        the last ``full_results`` answers: older answers keep their calls' inputs, so a session's size stays
        bounded (a sizing turn's results are ~200 kB of JSON; ``last_results`` keeps the latest of each)."""
        extra = len(self.history) - max_turns
        if extra > 0:
            del self.history[:extra]
            self.dropped_turns += extra
        answers = [turn for turn in self.history if turn.role == "assistant" and turn.tool_calls]
        for turn in answers[:max(len(answers) - full_results, 0)]:
            if any(call.result is not None for call in turn.tool_calls):
                # copies: the latest calls are shared with last_results, which keeps them whole
                turn.tool_calls = [ToolCall(**{**call.model_dump(exclude={"result"}), "result_dropped": True})
                                   if call.result is not None else call for call in turn.tool_calls]

    @property
    def turns(self) -> int:
        return sum(1 for t in self.history if t.role == "user") + self.dropped_turns // 2

    # ------------------------------------------------------------------ persistence
    def to_json(self) -> str:
        return self.model_dump_json(indent=1)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write atomically (temp file + rename), so a crash never leaves half a session."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".session-", suffix=".json", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(self.to_json())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    @classmethod
    def from_json(cls, text: str, where: str = "session") -> Session:
        """Parse and validate; SessionError (never a silent reset) when the data is unusable."""
        if text_depth(text, "json", MAX_SESSION_DEPTH) > MAX_SESSION_DEPTH:  # refused before the parser recurses
            raise _too_deep(where)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            # cut short: the parser failed on the text's last line ('"providers": nu'), or in an open string
            cut = "\n" not in text[exc.pos:].rstrip() or exc.msg.startswith("Unterminated string")
            hint = " (the file looks truncated)" if cut else ""
            raise SessionError(f"{where} is not valid JSON{hint}: {exc.msg} at line {exc.lineno} column "
                               f"{exc.colno}; the file was left unchanged — fix it, delete it, or use another "
                               f"session file") from exc
        except RecursionError:  # past the parser's depth, should the scan above ever misjudge a text
            raise _too_deep(where) from None
        except ValueError:  # a 5,000-digit number
            raise SessionError(f"{where} holds a number far too long to be a session; the file was left unchanged "
                               "— delete it or use another session file") from None
        if data_depth(data, MAX_SESSION_DEPTH) > MAX_SESSION_DEPTH:  # it would load, then fail every later save
            raise _too_deep(where)
        return cls.from_data(data, where)

    @classmethod
    def from_data(cls, data: Any, where: str = "session") -> Session:
        if not isinstance(data, dict) or data.get("kind", SESSION_KIND) != SESSION_KIND:
            raise SessionError(f"{where} is not a gpu-advisor session (no 'kind': '{SESSION_KIND}' object); "
                               "the file was left unchanged")
        version = data.get("version")
        if not isinstance(version, int):
            raise SessionError(f"{where} has no valid 'version' field; the file was left unchanged")
        if version > SESSION_VERSION:
            raise SessionError(f"{where} was written by a newer GPU Advisor (session version {version}, this one "
                               f"reads up to {SESSION_VERSION}); upgrade, or start a new session")
        data = migrate(data, where)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = [_problem(e) for e in exc.errors()[:5]]
            said = problem_text(problems, "en")
            raise SessionError(f"{where} does not match the session format ({said}); the file was left "
                               "unchanged — delete it or use another session file", problems) from exc

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Session:
        """Read a saved session. Missing file → SessionError too (callers decide to start fresh)."""
        p = Path(path)
        try:
            text = read_text(p, MAX_SESSION_BYTES, where=f"session file {p.name}")
        except BoundsError as exc:
            raise SessionError(f"{exc}; the file was left unchanged — delete it or use another session file") from None
        except FileNotFoundError as exc:
            raise SessionError(f"session file {p.name} does not exist") from exc
        except UnicodeDecodeError as exc:  # cut inside a multi-byte character: the end of the file is missing
            hint = " (the file looks truncated)" if exc.reason == "unexpected end of data" else ""
            raise SessionError(f"session file {p.name} cannot be read{hint}: {exc}; the file was left unchanged "
                               "— delete it or use another session file") from exc
        except OSError as exc:
            raise SessionError(f"session file {p.name} cannot be read: {exc}") from exc
        return cls.from_json(text, where=f"session file {p.name}")


def _too_deep(where: str) -> SessionError:
    return SessionError(f"{where} is {nested_too_deeply(MAX_SESSION_DEPTH)}, which no session is; the file was "
                        "left unchanged — delete it or use another session file")


def migrate(data: dict[str, Any], where: str = "session") -> dict[str, Any]:
    """Bring an older session dict up to ``SESSION_VERSION``. Version 1 is the first format."""
    version = data["version"]
    if version < 1:
        raise SessionError(f"{where} has session version {version}, older than any this GPU Advisor can read; "
                           "start a new session (the file was left unchanged)")
    return data
