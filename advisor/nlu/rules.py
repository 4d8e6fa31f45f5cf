"""Rule-based slot reading of one user message (Chinese, English, mixed, colloquial, typos).

``parse(text)`` returns a :class:`Parsed` record of everything the message states: the use
case, intents (compare / why / export / what-if / reset), the model and its size, precision,
GPUs and counts, budget, context, concurrency, training method and data, deadline, FP64 and
problem size, ecosystem constraints, existing hardware, form factor and power. Nothing here
computes advice; the planner decides what to do with it.
"""

from __future__ import annotations

import itertools
import math
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from advisor import ascii_re as re
from advisor.nlu import extractors, vocab
from advisor.nlu.kinds import Features, Kind, classify, is_question
from advisor.nlu.providers import named_providers
from advisor.nlu.quantities import A_LENGTH, Quantity, read_quantities
from advisor.nlu.unknown_model import unknown_model
from advisor.numbers import CN_NUMERAL_CHARS, EN_WORDS, NUMBER_RE, find_amounts, find_money, parse_number, scaled
from knowledge import AmbiguousNameError, load_catalog
from knowledge.catalog import Catalog
from knowledge.names import EngineHint, Lang
from knowledge.offers import system_resolver, systems
from knowledge.resolve import normalize
from tools.scale_out import NODE_GPUS

UseCase = Literal["training", "inference", "scientific"]
Method = Literal["pretrain", "full", "lora", "qlora"]
FormFactorPref = Literal["workstation", "server", "laptop"]


class Intent(StrEnum):
    compare = "compare"
    why = "why"
    export = "export"
    whatif = "whatif"
    recommend = "recommend"
    reset = "reset"
    injection = "injection"
    yes = "yes"
    no = "no"
    unsure = "unsure"


class Money(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)  # a session file's 'Infinity' budget is refused by name

    amount: float = Field(gt=0)
    currency: Literal["CNY", "USD", "EUR", "GBP"]


class Workload(BaseModel):
    """One training job of several a message names ('8B 全参微调，偶尔 QLoRA 70B'): a model or a size, and a method."""

    model: str | None = None
    params_b: float | None = Field(None, gt=0, le=10_000)
    method: Method


class GpuCount(BaseModel):
    gpu: str = Field(description="catalog GPU id")
    count: int = Field(1, ge=1, le=1024)
    stated: bool = Field(True, description="the count was written, not defaulted to 1")


class LabeledOption(BaseModel):
    """One of several options a message lists under labels ('A. 8×H20 整机 128万', 'B 家 4×L40S 52万')."""

    label: str = Field(pattern=r"^[A-D]$")
    gpu: str
    count: int = Field(1, ge=1, le=1024)
    price: tuple[float, str] | None = None


class Parsed(BaseModel):
    """What one message says. ``None`` = not mentioned."""

    text: str = ""
    lang: Lang | None = None
    use_case: UseCase | None = None
    sold: list[str] = Field(default_factory=list, description="cards the user gives up (sells, replaces, retires)")
    use_case_weak: bool = Field(False, description="the use case rests only on 'runs'/'跑': a follow-up keeps the "
                                                   "session's")
    finetune: bool = False
    intents: list[Intent] = Field(default_factory=list)
    model: str | None = Field(None, description="catalog model id")
    model_guess: bool = Field(False, description="model picked from family + size, not named exactly")
    params_b: float | None = None
    precision: str | None = None
    kv_dtype: str | None = None
    gpus: list[GpuCount] = Field(default_factory=list, description="GPUs named, in order")
    gpu_count: int | None = Field(None, description="a card count with no GPU named ('two cards')")
    ambiguous: dict[str, list[str]] = Field(default_factory=dict, description="name -> candidate ids")
    unknown_gpus: dict[str, list[str]] = Field(default_factory=dict, description="GPU-like name -> suggestions")
    bad_counts: dict[str, int] = Field(
        default_factory=dict,
        description="GPU id ('' for cards with no GPU named) -> a count that cannot be planned with, as written")
    budget: Money | None = None
    budget_unlimited: bool = False
    context_tokens: int | None = None
    served_model: str | None = None  # the model a message serves beside the one it trains
    side_training: Workload | None = None  # a training job on the side of the serving that leads
    side_media: str | None = None  # an image model checked beside the language model sized
    unknown_model: str | None = Field(None, description="a model name said that no catalog knows")
    ups_va: float | None = None  # a UPS's rating said, VA
    ups_minutes: float | None = None  # the battery runtime a UPS must give ('后备15分钟'), minutes
    circuit_load_w: float | None = None  # other equipment already on the machine's circuit, W
    options: list[LabeledOption] = Field(default_factory=list, description="labelled options listed (A, B, C)")
    option_ref: str | None = Field(None, description="the label of a listed option the message picks ('选 B')")
    alternatives: bool = False  # different cards offered as options ('add two 4090s, or two L20s?')
    prompt_tokens: int | None = None  # a prompt's length said beside an answer's ('prompts 2k, answers 300')
    answer_tokens: int | None = None  # an answer's length ('每次补全大概输出200 token', '300-token replies')
    concurrency: int | None = None
    method: Method | None = None
    dataset_tokens: float | None = None
    daily_output_tokens: float | None = Field(None, description="tokens a service generates a day ('日均输出 2000 万 "
                                                                "tokens', '5M output tokens per day')")
    daily_requests: float | None = Field(None, description="requests or conversations a service answers a day ('3M "
                                                           "conversations/month')")
    daily_input_tokens: float | None = Field(None, description="prompt tokens a service reads a day ('30M input tokens "
                                                               "a day')")
    requests_per_user: float | None = Field(None, description="requests each user sends a day ('每人每天问10个问题')")
    daily_tokens: float | None = Field(None, description="tokens a service handles a day, input and output together "
                                                         "('每天调用 2000 万 token', '40M tokens a day')")
    output_share: float | None = Field(None, description="the share of that traffic that is output ('~10% output')")
    daily_volume: float | None = Field(None, description="a volume a day with no unit ('grows to 500M/day'): the "
                                                         "traffic under discussion, in tokens when that is tokens")
    api_model: str | None = Field(None, description="the hosted API model the buyer uses or weighs (api_prices id)")
    api_quoted_per_m: Money | None = Field(None, description="an API's price per 1M tokens the buyer quotes ('~$0.9 "
                                                            "per million tokens', '每百万 token 2 元')")
    api_monthly_spend: Money | None = Field(None, description="what the buyer pays for an API a month ('每月 API 费用 "
                                                              "5000 元', '$3k/month on GPT-4o')")
    dataset_samples: float | None = None
    epochs: float | None = None
    deadline_days: float | None = None
    fp64: bool | None = None
    problem_size_gb: float | None = None
    sequence_tokens: int | None = Field(None, description="residues a structure prediction holds ('5000 个残基')")
    cuda_required: bool | None = None
    domestic: bool | None = None
    existing: list[GpuCount] | None = Field(None, description="hardware already owned; [] = none")
    form_factor: FormFactorPref | None = None
    power_limit_w: float | None = None
    power_limit_at_wall: bool | None = Field(None, description="the power limit is the whole machine's, at the wall "
                                                               "('under 600W at the wall', '整机 800W 以内')")
    psu_w: float | None = Field(None, description="PSU rating, W")
    system_ram_gb: float | None = Field(None, description="system RAM of the host, GB")
    sci_code: str | None = Field(None, description="a scientific code named (knowledge/data/codes): 'gromacs'")
    card_memory_gb: float | None = Field(None, description="a card named only by its memory ('a 32 GB GPU'), GB")
    memory_variants: list[float] | None = Field(None, description="memory sizes of one product weighed ('256GB or "
                                                                  "512GB version?'), GB")
    build_topic: str | None = Field(None, description="what a build question asks about: ram, slots, lanes, wall, "
                                                      "psu, cooling, link")
    cpu: str | None = Field(None, description="catalog CPU platform id")
    cpu_name: str | None = Field(None, description="a CPU named that the platform catalog does not know")
    nodes: int | None = Field(None, description="machines ('two servers', '2 nodes')")
    systems: list[str] = Field(default_factory=list, description="complete servers or rack systems named (ids)")
    providers: list[str] = Field(default_factory=list, description="rental providers named")
    currency_wanted: Literal["CNY", "USD", "EUR", "GBP"] | None = Field(None, description="prices asked in ('in "
                                                                                        "yuan', '美元多少', 'in EUR')")
    asks_where_rent: bool = Field(False, description="where (or from whom) to rent is asked")
    sharding: Literal["zero1", "zero2", "zero3", "fsdp"] | None = None
    grad_checkpointing: bool | None = None
    has_host: bool | None = Field(None, description="a computer to put the cards in is already owned")
    budget_scope: Literal["gpu_only", "system"] | None = None
    region: Literal["cn", "global"] | None = Field(None, description="where the cards are bought")
    home: bool | None = Field(None, description="the machine is for home or personal use")
    organisation: bool | None = Field(None, description="a company, lab, school or agency buys (new cards with a "
                                                        "warranty before used or grey-market ones)")
    pue: float | None = Field(None, description="the facility's PUE ('PUE 1.5')")
    racks: int | None = Field(None, description="racks the buyer has to fill ('20 个这样的柜子', '20 racks')")
    memory_bound: bool | None = Field(None, description="the code is limited by memory bandwidth ('memory bw bound')")
    supply: tuple[float, int] | None = Field(None, description="the supply's voltage and phases ('208V 3 phase')")
    excluded_vendors: list[str] | None = None
    only_vendors: list[str] | None = Field(None, description="vendors the choice is restricted to ('only NVIDIA')")
    allowed_gpus: list[str] | None = None
    ruled_out_gpus: list[str] = Field(default_factory=list, description="cards the buyer cannot get ('can't legally "
                                                                        "buy H100/H200', 'H100 买不到')")
    asked_attribute: str | None = Field(None, description="the fact a spec question asks for (memory, price …)")
    more_attributes: list[str] | None = Field(None, description="further facts asked in the same message")
    about_precision: str | None = Field(None, description="a precision asked about, not chosen ('supports FP8?')")
    about_memory_gb: float | None = Field(None, description="a memory size asked about ('cards with 48 GB')")
    catalog_filter: bool = Field(False, description="asks which catalog GPUs have a property")
    wants_detail: bool = Field(False, description="asks for the full derivation ('详细', 'in detail')")
    asks_per_memory: bool = Field(False, description="asks for the cost per GB of memory ('cheapest per GB of VRAM')")
    asks_best: bool = Field(False, description="asks for the best or cheapest card ('best GPU for …', '最好的卡')")
    asks_cheapest: bool = Field(False, description="wants the cheapest way ('cheapest way to run 70B', '最省钱')")
    asks_daily: bool = Field(False, description="asks what renting costs per day ('租一天多少钱')")
    asks_monthly: bool = Field(False, description="asks what renting costs a month ('monthly cost', '一个月多少钱')")
    asks_hourly: bool = Field(False, description="asks what renting costs per hour ('租一小时多少钱')")
    asks_value: bool = Field(False, description="asks about value for money ('哪个性价比高', 'better value per "
                                                "dollar')")
    asks_ram: bool = Field(False, description="asks whether the system RAM is enough ('64G 内存够吗')")
    asks_count: bool = Field(False, description="asks how many GPUs are needed ('要几张', 'how many H100s')")
    unusable: dict[str, float | str] = Field(default_factory=dict, description="values given that no plan can use "
                                                                             "(out of range, unreadable), by slot")
    unreadable_numbers: list[str] = Field(default_factory=list,
                                          description="'inf', 'nan', '1e400', '1e30' as written: read as no number")
    mains: str | None = Field(None, description="wall circuit, e.g. '220v-10a'")
    circuits: int | None = Field(None, description="wall circuits of that kind ('2x 32A circuits')")
    redundant_feeds: bool | None = Field(None, description="the circuits are redundant feeds ('双路供电'): each alone "
                                                           "must carry the load")
    engine_hint: EngineHint | None = Field(
        None, description="the engine the user runs: Ollama / llama.cpp (GGUF files), SGLang or vLLM")
    gpu_power_limit_w: float | None = Field(None, description="per-card power limit, W")
    hours_per_day: float | None = Field(None, description="hours a day the GPUs are busy (a daily average once the "
                                                          "days they run are counted)")
    node_link_gbps: float | None = Field(None, description="the network between the nodes now, Gb/s per node "
                                                           "('节点之间只有25G以太网', '2x 200G RoCE per node')")
    gpu_hours_month: float | None = Field(None, description="GPU-hours used a month across all GPUs ('300 GPU-hours/"
                                                            "month')")
    gpu_hours_total: float | None = Field(None, description="GPU-hours needed in all, no period ('500 GPU hrs')")
    runs_per_month: float | None = Field(None, description="how often a job is run, a month ('once a month', "
                                                           "'每季度训一次': 1/3)")
    site_kw: float | None = Field(None, description="a site's power, kW ('1MW of IT power')")
    by_the_month: bool | None = Field(None, description="rented by the month ('包月', 'monthly plan'); None: not said")
    card_position: int | None = Field(None, description="the place a named card takes ('as the second card': 2)")
    days_used_share: float | None = Field(None, description="share of days the GPUs run (weekdays: 5/7)")
    load_share: float | None = Field(None, description="share of full power drawn while running ('60% load')")
    kwh_price: float | None = Field(None, description="electricity price per kWh, in the user's currency")
    kwh_currency: Literal["CNY", "USD", "EUR", "GBP"] | None = Field(None, description="the currency the kWh price "
                                                                                      "is written in, when marked")
    host_bandwidth_gbs: float | None = Field(
        None, gt=0, le=2000, description="system RAM bandwidth, GB/s, from its type and channels")
    rental_rate: tuple[float, str] | None = Field(None, description="quoted rent per GPU-hour and its currency")
    added_cards: int | None = Field(None, description="cards added to the configuration under discussion ('再加一张')")
    added_unlike: bool = Field(False, description="the cards added are of another kind, described, not named "
                                                  "('3张4090加1张大显存的卡')")
    scaled: tuple[str, float] | None = Field(None, description="a slot a what-if scales and the factor ('traffic grows "
                                                                "5x': users × 5, '预算翻倍': budget × 2)")
    budget_added: float | None = Field(None, description="money added to the budget under discussion "
                                                         "('预算再加 5 万'), in its currency")
    purchase_price: tuple[float, str] | None = Field(None, description="what buying costs as quoted, and its currency "
                                                                       "('自己买一台 8 卡服务器大概 20 万')")
    people_share: float | None = Field(None, description="the share of everyone using it at once ('half of them at "
                                                         "the same time', '一半人同时用'), applied to the head count")
    head_count: int | None = Field(None, description="people who will use it in all ('全公司三百人'); concurrency "
                                                     "holds those at once")
    tokens_per_s_target: float | None = Field(None, description="decode tokens/s wanted per user ('≥ 20 tokens/s')")
    ttft_target_s: float | None = Field(None, description="time to first token wanted, s ('首字 2 秒内')")
    rack_kw: float | None = Field(None, description="power per rack, kW ('每柜 15 kW')")
    years: float | None = Field(None, description="horizon of a running-cost question, years ('3 年电费')")
    mfu: float | None = Field(None, description="model FLOPs utilisation the user states, 0–1 ('30% MFU')")
    tokens_per_sample: float | None = Field(None, description="average tokens per training sample ('平均 800 token')")
    micro_batch: int | None = Field(None, description="sequences per training step on one GPU ('batch 4', 'bs=8')")
    workloads: list[Workload] = Field(default_factory=list, description="the training jobs, when a message names "
                                                                       "two or more ('8B 全参，偶尔 QLoRA 70B')")
    card_rates: dict[str, Money] = Field(default_factory=dict, description="GPU id → the rent per GPU-hour said "
                                                                         "beside the card ('4090 是 2 元/卡时')")
    rented_gpu: str | None = Field(None, description="the card rented when another is bought ('买一张5090…租4090')")
    rented_count: int | None = Field(None, description="how many of the rented card ('rent 2x H100 or buy 4x L40S')")
    card_prices: dict[str, Money] = Field(default_factory=dict, description="GPU id → the unit price said beside "
                                                                           "the card ('P40 24GB ~$300', '3090 4500块')")
    quoted_price: tuple[float, str] | None = Field(None, description="a seller's price for the build and its currency "
                                                                     "('整机报价 ¥268,000'), to judge; not a budget")
    pooled: bool = Field(False, description="cards named to be used together ('两张一起', 'across both')")
    both_schemes: bool = Field(False, description="asks about every option on the table ('两个方案', 'both setups')")
    asks: list[str] = Field(default_factory=list, description="what the message asks, in the order asked "
                                                             "(advisor/nlu/data/cues.toml [ask.*])")
    readback: list[tuple[str, dict[str, float]]] = Field(
        default_factory=list, description="readings to say back in one line: (message id, values)")
    kind: Kind | None = Field(None, description="the answer the message asks for")
    kind_by: str = Field("", description="how the kind was decided: rules, examples or default")

    def has(self, intent: Intent) -> bool:
        return intent in self.intents


# ----------------------------------------------------------------------------- cleaning

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff\ud800-\udfff]")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


_DIGIT_CHARS = str.maketrans("零〇一二三四五六七八九", "00123456789")
_SPOKEN_DIGITS = re.compile(r"[零〇一二三四五六七八九]{4}(?![\u3400-\u9fff])|"
                            r"[零〇一二三四五六七八九]{4}(?=和|跟|与|跑|的|还是|或|d)")
_GLUED_COUNT = re.compile(r"\b(\d{1,2})x([a-z]{0,3}\d{2,4}[a-z]{0,2})\b", re.IGNORECASE)  # 3x3090, 8xH100


_LIST_MARKS = re.compile(r"[\u2460-\u2473\u2474-\u2487\u2776-\u277f\u2780-\u2793]")  # ①–⑳, ⑴–⒇, ❶–❿, ➀–➓


def clean(text: str) -> str:
    """NFKC-fold (full-width → ASCII), traditional Chinese to simplified (顯存 → 显存, so one vocabulary reads
    both), drop control and bidi characters, collapse runs of spaces."""
    text = _LIST_MARKS.sub(" • ", text or "")  # '① RTX 3090 …；② …': list marks, which NFKC would make counts
    text = unicodedata.normalize("NFKC", text)
    if _CJK.search(text):
        text = _to_simplified().convert(text).replace("升腾", "昇腾")  # OpenCC folds 昇 into 升; Ascend keeps 昇
        text = _SPOKEN_DIGITS.sub(lambda m: m.group(0).translate(_DIGIT_CHARS), text)  # 三零九零 is 3090
    text = _GLUED_COUNT.sub(r"\1x \2", text)  # 3x3090 is three 3090s
    text = _CONTROL.sub(" ", text.replace("\r\n", "\n"))
    return re.sub(r"[ \t]+", " ", text).strip()


@cache
def _to_simplified() -> Any:
    from opencc import OpenCC  # opencc-python-reimplemented: OpenCC's dictionaries in pure Python

    return OpenCC("t2s")


_ENGLISH_WORDS = re.compile(
    r"\b(the|a|an|is|are|to|for|on|with|and|or|what|how|why|which|can|could|should|i|we|my|our|want|need|about|"
    r"of|in|please|run|serve|use|it|does|do|enough|fit|fits|will|would|instead|if|than|vs|compare|budget|users?|"
    r"context|concurrent|training|inference|yes|no|not|hello|hi|thanks|export|start|over)\b", re.IGNORECASE)


def has_english_words(text: str) -> bool:
    """Whether the text has English words beyond names and units ('llama 3.1 8b, fp16' has none)."""
    return bool(_ENGLISH_WORDS.search(text))


def detect_lang(text: str) -> Lang | None:
    """'zh' when the text has Chinese characters (mixed text counts as Chinese), 'en' for Latin, else None."""
    cjk = len(_CJK.findall(text))
    latin_words = len(re.findall(r"[A-Za-z][A-Za-z0-9]+", text))
    if cjk >= 8 or (cjk and cjk >= latin_words):
        return "zh"
    if latin_words:
        return "en"
    return None


# ----------------------------------------------------------------------------- patterns

_I = re.IGNORECASE
N = NUMBER_RE
_NEG_BEFORE = re.compile(
    r"(不(?![少错仅但同断过])|没|无(?!论)|非(?!常)|免|(?<![特区级类识分性])别(?![的人家处])|"
    r"no|not|don'?t|doesn'?t|without|never|isn'?t|aren'?t)[\s\w]{0,6}$", _I)  # '别的' is 'other', '非常' 'very'
_NEG_AFTER = re.compile(
    r"^[\s\w,，]{0,6}?(不是必须|不需要|不必|不重要|无所谓|not required|not needed|isn'?t required|optional|"
    r"not a must|not necessary|不是硬性)", _I)


def _negated(text: str, start: int, end: int) -> bool:
    before = text[max(0, start - 12):start]
    after = text[end:end + 16]
    return bool(_NEG_BEFORE.search(before) or _NEG_AFTER.search(after))


_USE_CASE_PATTERNS: list[tuple[UseCase, re.Pattern[str]]] = [
    (uc, vocab.required("slot", f"use_case_{uc}")) for uc in ("scientific", "training", "inference")]
_INFERENCE_WORDS = dict(_USE_CASE_PATTERNS)["inference"]
_RUNS = vocab.required("slot", "use_case_inference_weak")
_OOM = re.compile(r"out of memory|\boom\b|爆显存|显存不够了|显存溢出", re.IGNORECASE)  # the fine-tune itself ran
_ENOUGH = re.compile(r"\b(?:enough|fit|fits)\b|够|放得下|装得下", re.IGNORECASE)  # 'one gpu enough?' of a model
_FINETUNE = vocab.required("slot", "finetune")
_PRETRAIN = vocab.required("slot", "pretrain")
_METHODS: list[tuple[Method, re.Pattern[str]]] = [
    (m, vocab.required("slot", f"method_{m}")) for m in ("qlora", "lora", "full")]

_INTENT_PATTERNS: list[tuple[Intent, re.Pattern[str]]] = [
    (intent, vocab.required("intent", intent.value))
    for intent in (Intent.compare, Intent.why, Intent.export, Intent.whatif, Intent.recommend, Intent.reset,
                   Intent.injection)]
_YES = vocab.required("slot", "yes")
_NO = vocab.required("slot", "no")
_UNSURE = vocab.required("slot", "unsure")

# precision tokens
_GGUF = re.compile(r"(?<![A-Za-z0-9])(i?q[1-8]_[a-z0-9]{1,2}(?:_[a-z0-9]{1,2})?)(?![A-Za-z0-9])", _I)
_GGUF_SHORT = re.compile(r"(?<![A-Za-z0-9_])(?<!\bby )(?<!\bof )(?<!until )(?<!before )(?<!\bend )"
                         r"(?<!after )(?<!\bfor )(?<!\bnext )(?<!\blast )(?<!\bthis )(?<!during )(?<!\bfy)"
                         r"q([234568])(?![_A-Za-z0-9])(?!\s*(?:'?\d{2}\b|20\d\d|fy|财年|季度|前|底|末|之前))", _I)
# 'by Q3', 'Q4 2027', '明年Q3前' are quarters of a year, not 3- or 4-bit GGUF weights
# "can't get H100s", "H100 买不到": a card ruled out by the market, not the one to plan on
_UNOBTAINABLE_BEFORE = re.compile(
    r"(can\W?t|cannot|can not|unable to|no way to|no access to|not allowed to|banned from|barred from"
    r"|(?:are|is|am)(?:n\W?t| not) (?:allowed|able|permitted) to)"
    r"\s+(?:\w+ly\s+)?(get|buy|buying|obtain|import|source|access|purchase)"
    r"\s*(any\s+)?$"
    r"|(买不到|买不了|没法买|拿不到|搞不到|无法购买|进不来|不能买|不让买|禁止(?:购买|进口|采购)|无法采购)\s*$", _I)
_UNOBTAINABLE_AFTER = re.compile(
    r"^\s*(s\b)?\s*(买不到|买不了|拿不到|搞不到|进不来|are(n\W?t| not) (available|sold))", _I)
_NOT_PRECISION = re.compile(r"(\bno|\bnot|without|不支持|没有|不用|不要)\s*$", _I)
_FLOATS = re.compile(r"(?<![A-Za-z0-9])(fp|bf|int|f|e4m|mxfp|nvfp|nf)(4|8|16|32)(?![0-9])", _I)
_BITS = re.compile(r"(?<![0-9.])(2|3|4|5|6|8|16|32)\s*-?\s*(bits?|位|比特)", _I)
_PREC_WORDS: list[tuple[str, re.Pattern[str]]] = [
    ("fp16", re.compile(r"半精度|half[- ]precision", _I)),
    ("fp32", re.compile(r"单精度|single[- ]precision|full[- ]precision", _I)),
    # ASCII edges, not \b: 'awq做客服' glues the format to Chinese (CJK characters are word characters)
    ("int4", re.compile(r"(?<![a-z0-9])(?:awq|gptq|w4a16)(?![a-z0-9])", _I)),
    ("nf4", re.compile(r"(?<![a-z0-9])bnb(?![a-z0-9])|bitsandbytes", _I)),
    ("int8", re.compile(r"(?<![a-z0-9])(?:w8a8|w8a16|smoothquant)(?![a-z0-9])", _I)),  # Ascend's and vLLM's 8-bit
]
_KV_FP8 = re.compile(r"(fp8|int8|q8_0|q4_0)\s*(的)?\s*kv|"
                     r"kv[\s-]*(cache|缓存)?\s*(也|都|再)?\s*(用|=|:|in|dtype|换成|改成|改用|换用|设为|设成|压成|压到|量化成|量化到|at)?\s*"
                     r"(fp8|int8|q8_0|q4_0)", _I)

# sizes and quantities
_PARAMS = re.compile(rf"(?<![A-Za-z0-9.])({N})\s*(b|B|billion|bn)(?![A-Za-z])(?!\s*(tokens?|token|个?词元))"
                     rf"|({N})\s*亿\s*(参数|参|的?模型)", _I)
_CONTEXT_AFTER = re.compile(
    rf"({N})\s*(k|K|m|M|万)?\s*(的)?\s*(长|长的)?\s*(上下文|conte?xt|ctx|tokens? (of )?context|token 上下文|长度上下文|"
    rf"窗口|prompts?|-token prompt|token prompt|输入|seq(uence)?[ _]?len(gth)?|序列|window|"
    rf"tokens? (each|per (sample|request|chat|prompt)))", _I)
# '16k conversations', '8k 的对话', 'a 32k-token document': a thousands-of-tokens size before a word for a chat
# or for a text sent whole is its length
# '32 requests of 4k tokens': the size of each request is its context
_CONTEXT_OF_REQUESTS = re.compile(rf"(?:requests?|conversations?|chats?|prompts?) of ({N})\s*(k|K)?\s*-?\s*tokens?",
                                  _I)
_SENT_WHOLE = (r"(?:documents?|docs?|files?|texts?|pdfs?|reports?|papers?|contracts?|transcripts?|codebases?|prompts?|"
               r"文档|文件|文本|报告|论文|合同|提示词)")
# 'the doc is only 32k tokens', '文档只有 10k token': the length of a text sent whole is the context
_CONTEXT_OF_DOC = re.compile(rf"{_SENT_WHOLE}\W{{0,3}}(?:[a-z\u4e00-\u9fff]+\W{{0,2}}){{0,3}}?({N})\s*(k|K|万)?\s*"
                             rf"-?\s*tokens?(?![a-z])", _I)
_CONTEXT_OF_CHATS = re.compile(rf"({N})\s*(k|K)\s*(?:-?\s*tokens?)?\s*(?:的)?\s*"
                               rf"(conversations?|chats?|sessions?|requests?|对话|会话|请求|"
                               rf"documents?|docs?|files?|texts?|pdfs?|reports?|papers?|contracts?|transcripts?|"
                               rf"codebases?|文档|文件|文本|报告|论文|合同)", _I)
_CONTEXT_BEFORE = re.compile(
    rf"(上下文|(?<![a-z])conte?xt|(?<![a-z])ctx|序列长度|(?<![a-z])seq(uence)?(?:[ _]?len(gth)?)?(?![a-z])|"
    rf"max[-_ ]model[-_ ]len|窗口|"
    rf"单次对话|每次对话|单轮对话|"
    rf"prompts? (?:stay |are |kept )?(?:under|below|up to))"
    rf"(?:一点|一些|[^\d{CN_NUMERAL_CHARS}]){{0,16}}"
    rf"({N})\s*(k|K|m|M|万)?(?![A-Za-z])", _I)
_CONCURRENCY_AFTER = re.compile(
    rf"({N})\s*(个|路|位|名)?\s*(并发|同时在线|同时|用户|人同时|concurrent|simultaneous|parallel|users?|"
    rf"requests? at once|sessions|streams|seats|"
    rf"(?:conversations?|chats?|requests?) (?:at once|at the same time|in parallel|concurrently|simultaneously)|"
    rf"requests? of (?=\d[\d.,]*\s*[kK]?\s*-?\s*tokens?))", _I)
_CONCURRENCY_BEFORE = re.compile(
    rf"(并发(数|量)?|concurrency( of)?|batch( size)?|同时服务)[^\d{CN_NUMERAL_CHARS}]{{0,8}}({N})\s*(k|K)?", _I)
_STAFF_ZH = r"(?:人|同事|员工|用户|开发者|开发|程序员|工程师|学生|医生|研究员|客服|坐席|律师|老师|分析师)"
_PEOPLE = re.compile(rf"({N})\s*(?:来)?\s*(?:个|位|名|号)?\s*(?:人|同事|员工|用户)\s*"
                     rf"(?:用|使用|在用|要用|会用|要使用|同时|访问|一起用|共用|问|左右|在线)|"
                     rf"(?:team|group|office|staff) of (?:about |around |roughly |approximately |~\s*)?({N}|\w+)\b|"
                     rf"(?:是|改成|改为|换成|变成|到)\s*({N})\s*(?:来)?\s*(?:个|位|名)?\s*人(?![民工])|"
                     rf"^\W*({N})\s*(?:来)?\s*(?:个|位|名)?\s*人\s*[。.!！]?\s*$|"
                     rf"\b({N})\s+(?:\w+\s+)?(?:staff|people|users|students|employees|colleagues|clinicians|doctors|"
                     rf"engineers|developers|devs|agents|analysts|lawyers|of us)\b(?=.{{0,30}}\b(?:at once|at the same "
                     rf"time|simultaneously|concurrently|using it|will hit|hitting|might use)\b)|"
                     rf"给\s*(?:大概|大约|约|差不多|将近|至少)?\s*({N})\s*(?:来)?\s*(?:个|位|名)?\s*{_STAFF_ZH}|"
                     rf"同时在线\s*({N})|(?:for|to|like) (?:approx\.?|approximately|about|around|roughly|~)?\s*"
                     rf"({N})\s*(?:\w+\s+)?(?:staff|employees|people|colleagues|users|students|researchers|analysts|"
                     rf"artists|agents|engineers|developers|devs|clinicians|doctors|nurses|lawyers|attorneys|"
                     rf"accountants|teammates|programmers|coders|scientists|members|seats|folks)\b|({N})[- ]seat\b|"
                     rf"({N})\s+(?:\w+\s+)?(?:artists|analysts|agents|people|users) hitting", _I)
_SINGLE_USER = vocab.required("slot", "single_user")
_BUDGET_UNLIMITED = vocab.required("slot", "budget_unlimited")
# tokens trained on; not a context ('8k tokens of context') nor a text sent whole ('100k token的文档', '32k-token doc')
_DATASET_TOKENS = re.compile(rf"({N})\s*(k|K|m|M|b|B|t|T|万|亿|million|billion|trillion)?\s*(个)?\s*"
                             rf"(?:(?:output|input|generated|输出|输入)\s*)?(tokens?(?![a-z])|词元)(?!\s*(of\s+)?(context|上下文|ctx|窗口|/\s*s|per\s+s|每秒))"
                             rf"(?!\s*(?:的)?\s*{_SENT_WHOLE})", _I)
# a corpus said by its size alone ('数据2T', 'dataset of 500B'): tokens in trillions or billions, never bytes
_CORPUS_SIZE = re.compile(rf"(?:数据|语料|训练集|data(?:set)?|corpus|(?<![a-z])tokens?(?![a-z]))\s*"
                          rf"(?:量|规模|大小|数|count|budget)?\s*"
                          rf"(?:有|是|of|约|大概|about|~|≈|加到|增加到|扩到|扩充到|降到|减到|减少到|缩到|砍到|变成|改成|换成|到|"
                          rf"to|grows? to|(?:is )?(?:cut|reduced|dropped|lowered|down) to|drops? to)?\s*"
                          rf"(?:约|大概|about|~|≈)?\s*({N})\s*(t|T|b|B|万亿|亿|trillion|billion)(?![a-zA-Z])", _I)
_STORAGE_WORD = re.compile(r"硬盘|存储|空间|磁盘|\bdisks?\b|\bstorage\b|\bssd\b|\bnvme\b|\bbytes?\b", _I)
_ASKED_EACH = re.compile(rf"(?:每人|每个人|每个用户|人均)\s*(?:每天|一天|每日)?\s*(?:大概|约|平均)?\s*"
                         rf"(?:问|提问|发|用|调用)?\s*({N})\s*(?:个|次|条)?\s*(?:问题|请求|次|条|轮)|"
                         rf"({N})\s*(?:questions?|requests?|queries|prompts|chats|messages)\s*(?:a|per|each)\s*"
                         rf"(?:user|person|head)\s*(?:a|per|each)?\s*day", _I)
# requests are traffic only when counted over a period ('2M requests a month'); '100 requests' alone are at once
_SERVED_REQUESTS = re.compile(rf"({N})\s*(k|K|m|M|万|千|million|thousand)?\s*(?:api\s+)?(?:requests|calls|queries|"
                              rf"chats|messages|conversations|tickets|次请求|次调用|次对话|次问答|次|个请求|"
                              rf"个咨询|条咨询|个对话|通对话|个会话|个工单|单咨询)", _I)
# '每个对话平均来回 6 轮', '6 turns per chat': each conversation is that many requests
_TURNS_EACH = re.compile(rf"(?:每个|每条|每次|每通)?\s*(?:对话|会话|咨询)\s*(?:平均|大概|约)?\s*(?:来回)?\s*({N})\s*"
                         rf"(?:轮|个回合|回合)|"
                         rf"({N})\s*(?:turns|rounds|exchanges)\s*(?:per|each|a)\s*(?:chat|conversation|session|ticket)",
                         _I)
_DATASET_SAMPLES = re.compile(rf"({N})\s*(k|K|m|M|万|千|million|thousand)?\s*(?:(?:instruction|training|chat|labeled|"
                              rf"labelled|qa|sft|dialogue|preference|high-quality|clean)\s+)?"
                              rf"(条|个样本|样本|samples|examples|"
                              rf"instructions|conversations|对话|rows|records)", _I)
_EPOCHS = re.compile(rf"({N})\s*(个)?\s*(epochs?)|(?<![算跑再过])({N})\s*(个)?\s*(轮|遍)|"  # '跑3个epoch' is 3
                     rf"epochs?\s*(?:should (?:read|be)|=|:|is|are|to)\s*({N})", _I)
_DEADLINE = re.compile(rf"(?<![A-Za-z])({N}|半|a|an|one)\s*(个)?\s*"
                       rf"(小时|hours?|hrs?|天|days?|周|星期|weeks?|个月|月|months?|年|years?)", _I)
DAYS_PER_MONTH = extractors.DAYS_PER_MONTH
_PRICE_PER_TIME = re.compile(r"\s*(的话)?\s*(大概|大约|要|得)?\s*(多少钱|几块|多少|什么价|啥价|how much|costs?)", _I)
_PER_DAY_BEFORE = re.compile(r"(每天|每日|一天|天天|日均)\s*(用|跑|开|开机|工作|运行)?\s*(大概|大约|约|差不多)?\s*$")
_PER_DAY_AFTER = re.compile(r"\s*(a|per|each|every|/)\s*day\b|\s*/\s*(天|日)|\s*每天", _I)
_DEADLINE_CTX = vocab.required("slot", "deadline_context")
_GB = re.compile(rf"({N})\s*(GB|G|GiB|TB|TiB|T)(?![A-Za-z])", _I)
_PROBLEM_CTX = vocab.required("slot", "problem_context")
_WATTS = re.compile(rf"({N})\s*(kW|KW|kw|W|w|瓦|千瓦)(?![A-Za-z])")
_POWER_CTX = vocab.required("slot", "power_context")
_LIMIT_CTX = vocab.required("slot", "limit_context")
_CUDA = vocab.required("slot", "cuda")
_CUDA_NEED = vocab.required("slot", "cuda_need")
_DOMESTIC = vocab.required("slot", "domestic")
_MINE = vocab.required("slot", "mine")
_OWNED_AFTER = vocab.required("slot", "owned_after")
_OWNED_BEFORE = re.compile(r"我(们)?(这|那)(台|边|里)[^，,。？?想要]{0,8}?(有|装了|插着|插了)\s*"
                           r"(\d+|[一二两三四五六七八九十])?\s*(张|块)?\s*$")
_EXISTING = vocab.required("slot", "existing")
_NOT_OWNED = vocab.required("slot", "not_owned")
_NO_EXISTING = vocab.required("slot", "no_existing")
_FORM: list[tuple[FormFactorPref, re.Pattern[str]]] = [
    (f, vocab.required("slot", f"form_{f}")) for f in ("laptop", "server", "workstation")]
_FP64_NEED = vocab.required("slot", "fp64_need")
_FP64_NO = vocab.required("slot", "fp64_no")

# GPU counts next to a GPU name
_COUNT_WORDS = "|".join(sorted(EN_WORDS, key=len, reverse=True))
_COUNT_BEFORE = re.compile(
    rf"(?:(?<![a-z0-9.])(\d+)(?:-(?=(?:gpus?|cards?|way)\b))?\s*(?:x|×|\*|张|块|片|台|个|卡|颗|路|pcs|numbers? of|"
    rf"of(?: the)?)?|"  # '8-GPU H200 nodes', '8-way H100'

    rf"([{CN_NUMERAL_CHARS}]+|双|单|四|八)\s*(?:张|块|片|卡|个|颗|路)|(俩|双)|"
    rf"\b({_COUNT_WORDS})\b(?:\s+(?:of(?:\s+(?:those|these|the|our|my|them|its|their))?|x))?)"
    rf"(?:\s*(?:used|new|refurb\w*|second[- ]hand|blower|passive|二手|全新|gpus?|cards?|way)\b|"
    rf"(?:(?!时)[\u4e00-\u9fff]){{1,6}}的|"  # '两张新的 4090'; not '2000 卡时的 A100' (card-hours)
    rf"\s*(?:昇腾|华为|英伟达|寒武纪|海光|摩尔线程|沐曦|天数|nvidia|amd|intel|radeon|geforce|rtx|huawei|cambricon|hygon|"
    rf"moore threads|iluvatar(?: corex)?|metax|biren|modded))?"
    rf"\s*(?:[的]|of\s+)?\s*$", _I)
_COUNT_AFTER = re.compile(r"^\s*(?:s\b)?\s*(?:x|×|\*)\s*(\d+)|^\s*(双)\s*卡|"
                          r"^\s*(?:s\b)?\s*(?:的)?\s*(?:一台|单机|每台)?\s*(\d+|[两一二三四五六七八九十]+)\s*"
                          r"(张|块|卡|片|颗)|"
                          r"^\s*(\d)[- ]?gpus?\s+(?=servers?|nodes?|boxes|machines|systems|baseboards?)", _I)
# what a '张/块/cards' count can be of that is no GPU: network cards, disks, memory, images, GPU-hours
_NOT_GPU_NOUN = re.compile(r"^[^，,。.;；!?？！\n]{0,12}?(?:网卡|ib\s*卡|nic|hca|网口|光模块|交换机|硬盘|固态|ssd|nvme|"
                           r"内存条?|电源|psu|dimm|ram\b)|^\s*-?\s*(?:hours?|hrs?|h\b|小时|卡时|时(?![候间]))", _I)
# ('颗' counts chips: '2颗8468' are two CPUs)
_CARDS_ONLY = re.compile(
    rf"(?:(?<![\d.])(\d+)|([{CN_NUMERAL_CHARS}]+|双|单)|\b({_COUNT_WORDS})\b)(?:\s*|-)(?:x\s*)?"
    rf"(张|块|片|卡|gpus?|cards?|graphics cards?|accelerators?|个\s*gpu|个\s*显卡|张卡|块卡|of them|of those)"
    rf"(?![A-Za-z])(?!\s*(?:图|照片|图片|画|纸|表|票|单据|脸|海报|样张))", _I)
# a count of cards said apart from the card's name: units that only count cards (not '块' money, not GPU-hours)
_APART_COUNT = re.compile(rf"(?:(?<![\d.\-−])(\d+)|([{CN_NUMERAL_CHARS}]+|双))\s*(张卡|块卡|张|卡|gpus?|cards?)"
                          rf"(?![A-Za-z\-·]|\s*(?:hours?|hrs?|小时|时))", _I)
_GPU_LIKE = re.compile(r"(?<![A-Za-z0-9])(?:(?:rtx|gtx|rx|arc|tesla|quadro)\s*[a-z]?\d{3,4}\s*(?:ti|xt|xtx|super|d)?|"
                       r"(?:a|h|b|l|t|v|mi|gb)\d{2,3}[a-z]?|昇腾\s*\d{3}[a-z]?|[pmk](?:4|10|100|40|80)\b|"
                       r"(?:20[6-8]0|30[5-8]0|40[6-8]0|50[6-7]0)(?:\s*ti)?)(?![A-Za-z0-9])", re.IGNORECASE)
_POW2 = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
# a follow-up that is a context size alone: 'and 32k?', 'what about 128k', '那 16k 呢', 'ok and with 16k'
_BARE_CONTEXT = re.compile(r"^\W*(?:(?:and|ok(?:ay)?|so|then|what about|how about|what if|with|那|那么|换成|改成|要是|"
                           r"如果|用|到)\W*)*(\d+)\s*k\W*(?:呢|的呢|tokens?|了呢)?\W*$", _I)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_\-]*|[\u3400-\u9fff]+")
_MODEL_FAMILY = re.compile(
    r"(llama|lamma|llma|lama|qwen|qwne|qwem|deepseek|deepseak|deepsek|mistral|mistal|mixtral|gemma|phi|glm|"
    r"chatglm|yi|baichuan|internlm|gpt-?oss|kimi|minimax|command-?r|falcon|千问|通义|羊驼)\s*-?\s*(\d+(?:\.\d+)?)?",
    _I)
_FAMILY_ALIASES = {"千问": "qwen", "通义": "qwen", "羊驼": "llama", "chatglm": "glm", "lamma": "llama", "llma": "llama",
                   "lama": "llama", "qwne": "qwen", "qwem": "qwen", "deepseak": "deepseek", "deepsek": "deepseek",
                   "mistal": "mistral"}
# Widely used dense models, preferred when a family and a size match several entries ("llama 70b").
CANONICAL = ("llama-3.2-1b", "llama-3.2-3b", "qwen2.5-7b", "llama-3.1-8b", "qwen2.5-14b", "qwen2.5-32b",
             "llama-3.1-70b", "qwen2.5-72b", "llama-3.1-405b")
SPECIALISED = ("distill", "coder", "math", "vl", "qwq", "guard", "embed")


# ----------------------------------------------------------------------------- helpers


def _first_number(match: re.Match[str], group: int, mult_group: int | None = None) -> float | None:
    num = match.group(group)
    mult = match.group(mult_group) if mult_group else None
    return scaled(num, mult) if num else None


def _find_precision(text: str) -> str | None:
    from tools.precision import resolve_precision  # tools sit below advisor

    hits: list[tuple[int, str]] = []
    for m in _GGUF.finditer(text):
        hits.append((m.start(), m.group(1).upper()))
    for m in _GGUF_SHORT.finditer(text):  # 'q4' as Ollama users write it: the default Q4_K_M
        hits.append((m.start(), {"2": "Q2_K", "3": "Q3_K_M", "4": "Q4_K_M", "5": "Q5_K_M", "6": "Q6_K",
                                 "8": "Q8_0"}[m.group(1)]))
    for m in _FLOATS.finditer(text):
        prefix, bits = m.group(1).lower(), m.group(2)
        if prefix == "fp" and bits == "64":
            continue
        name = {"f": "fp", "e4m": "fp", "nf": "nf"}.get(prefix, prefix) + bits
        if prefix == "f" and bits in ("16", "32"):
            name = "fp" + bits
        hits.append((m.start(), name))
    for m in _BITS.finditer(text):
        bits = m.group(1)
        hits.append((m.start(), {"16": "fp16", "32": "fp32", "8": "int8", "4": "int4"}.get(bits, f"{bits}bit")))
    for name, pat in _PREC_WORDS:
        for m in pat.finditer(text):
            hits.append((m.start(), name))
    hits = [h for h in hits if not _NOT_PRECISION.search(text[max(0, h[0] - 14):h[0]])]
    for _, name in sorted(hits, key=lambda h: -h[0]):  # the last mention wins ("not fp16, int4")
        try:
            return resolve_precision(name).name
        except ValueError:
            continue
    return None


_PER_NODE_COUNT = re.compile(
    rf"({N})\s*(?:x\s*)?(?:gpus?|cards?|张卡?|块卡?|卡)?\s*(?:each|apiece|per (?:node|server|box|machine))\b|"
    rf"(?:每台|每个节点|每节点|单台)\s*({N})\s*(?:张|块|卡)|"
    rf"\b(\d+)[\s-]*gpu\s+(?:\S+\s+){{0,2}}(?:servers|nodes|boxes|machines)\b", _I)
_BASEBOARD_NODE = re.compile(r"\b[dh]gx\b(?!\s*spark)", _I)  # a DGX / HGX box holds 8 GPUs (a DGX Spark is one)
MAX_NODE_GPUS = 10  # the most GPUs one server holds (8-GPU baseboards, 10-slot PCIe servers): more is a cluster
MAX_DGX_NODES = 8  # 'two DGX H100' counts boxes; past a handful the number is more likely GPUs
_ACROSS_NODES = re.compile(r"\b(?:across|over|in|on|spread (?:over|across)|split (?:over|across))\s+\S+\s*"
                           r"(?:nodes|servers|machines|boxes)\b|"
                           r"(?:分布在|分到|分摊到|分在)\s*\S{1,3}\s*(?:台|个节点|节点)", _I)


# 'on 2 servers of 8x H100', '4 nodes with 8x A100': what each machine holds
_NODES_OF_CARDS = re.compile(r"(?:nodes?|servers?|machines?|boxes)\s+(?:of|with)\s+\d+\s*[x×]", _I)


def _per_node(text: str, gpu: GpuCount, nodes: int, module: bool = False, boxes: bool = False) -> GpuCount:
    """The labels' multi-node convention, GPUs per node: '8 GPUs each' fills the count; '16x H200 across 2
    nodes' is 8 per node; 'two DGX H100' (or two servers of a baseboard ``module`` card) is 8 per node; a count
    that ``boxes`` says counts machines ('这4台4090机器') leaves the count per node unsaid."""
    m = _PER_NODE_COUNT.search(text)
    if _BASEBOARD_NODE.search(text) and (not gpu.stated or gpu.count == nodes):
        return GpuCount(gpu=gpu.gpu, count=NODE_GPUS, stated=True)  # a DGX / HGX box holds eight
    if gpu.stated and gpu.count == nodes and module:
        return GpuCount(gpu=gpu.gpu, count=NODE_GPUS, stated=True)  # 'two DGX H100', '4 台 H800 服务器': machines
    if gpu.stated and gpu.count == nodes and boxes:
        # '这4台4090机器': the number counts machines; how many cards each holds is not said (the plan's own, or a
        # server's eight)
        return GpuCount(gpu=gpu.gpu, count=NODE_GPUS, stated=False)
    if not gpu.stated and m:
        value = parse_number(m.group(1) or m.group(2) or m.group(3))
        if value and 1 <= value <= MAX_CARDS:
            return GpuCount(gpu=gpu.gpu, count=int(value), stated=True)
    if gpu.stated and gpu.count > nodes and gpu.count % nodes == 0 and not _NODES_OF_CARDS.search(text) \
            and (_ACROSS_NODES.search(text) or gpu.count > MAX_NODE_GPUS):
        return GpuCount(gpu=gpu.gpu, count=gpu.count // nodes, stated=True)  # '64x H100 (8 nodes)' is the total
    return gpu


def _module(catalog: Catalog, gpu_id: str) -> bool:
    """A card sold only on 8-GPU baseboards (SXM, OAM, modules): a 'server' of it holds eight."""
    return catalog.gpu(gpu_id).on_baseboard


# what a question asks or changes, not what it states
_NOT_REQUIREMENTS = ("asked_attribute", "build_topic", "more_attributes", "added_cards", "added_unlike",
                     "daily_volume", "budget_added", "purchase_price", "quoted_price", "organisation")
_MEDIA_LENGTH = re.compile(r"\s*(?:of|的)\s*(?:audio|video|speech|recordings?|footage|音频|视频|录音|语音)", _I)
_NEGATED = re.compile(
    r"(?:\bnot\b|\bno\b|\bwithout\b|\binstead of\b|\brather than\b|(?<![要想])不(?:做|用|要|需要|搞|考虑|打算|是)?|"
    r"而不是|无需|不再)\s*(?:an?\s+|the\s+|doing\s+)?"
    r"(qlora|lora|训练|微调|推理|全参|全量|(?:full[- ])?(?:training|fine[- ]?tun\w*|inference))", re.IGNORECASE)


# digits that are never a quantity of cards: CPU product codes ('Ryzen 9 7950X', 'EPYC 9654', 'i9-14900K',
# 'Threadripper 7980X', a bare '7800X3D') and years after a word of time ('in 2024', '2024 年')
_PRODUCT_CODE = re.compile(
    r"(?<![a-z0-9])(?:(?:ryzen|threadripper|epyc|xeon|core|ultra|锐龙|线程撕裂者|霄龙|至强)"
    r"(?:\s*(?:pro|platinum|gold|silver|[3579]))*[\s-]*\d{3,5}[a-z0-9+]*|i[3579][- ]?\d{4,5}[a-z]{0,2}|\d{4}x3d|"
    r"[3-9][6-9][05]0x|1[0-4]\d{3}k[fs]?|"  # a bare Ryzen (7950X, 5900X) or Core (14900K) code
    # network parts and server models: 'ConnectX-7', 'QM9700', 'PowerEdge XE9680', 'R760xa', 'NF5468M7', 'SYS-821GE'
    r"connectx[- ]?\d+|bluefield[- ]?\d+|quantum[- ]?\d+|qm\d{4}|xe\d{4}[a-z]*|r\d{3}xa|[a-z]{2}\d{4}m\d|"
    r"sys-[a-z0-9-]+|as-[a-z0-9-]+)"
    r"(?![a-z0-9])", _I)
_YEAR = re.compile(r"(?:\b(?:in|since|during|until|by|from|before|after)\s+|(?<![\d.]))((?:19|20)\d\d)"
                   r"(?:\s*年(?!\s*的?\s*[张块卡])|(?<=\d)(?=\s*(?:[,，.。]|$)))|"
                   r"\b(?:in|since|during|until|by|from|before|after)\s+((?:19|20)\d\d)\b", _I)


# a matrix or grid size: 'N×N', 'N x N x N' (the same N), or 'A×B' beside a word for matrices and grids
_GRID = re.compile(r"(?<![\d.])(\d{2,7})\s*[×xX*]\s*\1(?:\s*[×xX*]\s*\1)?(?![\d.])|"
                   r"(?:矩阵|网格|grid|matrix|mesh|lattice)\D{0,6}\d{2,7}\s*[×xX*]\s*\d{2,7}"
                   r"(?:\s*[×xX*]\s*\d{2,7})?", _I)


# motherboard chipsets people name beside their cards ('B650 board', 'Z790'): never a GPU or a count
_CHIPSET = re.compile(r"(?<![a-z0-9])(?:[bx](?:360|450|460|550|560|650|660|760|850|860|570|670|870)[em]?|"
                      r"z(?:390|490|590|690|790|890)|h(?:410|510|570|610|670|770)|"
                      r"a(?:520|620)|tre.compile(?:40|50)|wre.compile(?:80|90))(?:m|i|-[a-z]+)?(?![a-z0-9])", _I)


# a quote's storage and warranty: '4TB NVMe', '含三年质保', '3-year warranty' — never a data size or a deadline
_STORAGE_OR_WARRANTY = re.compile(
    r"[\d.]+\s*(?:tb|gb|t|g)\s*(?:的)?\s*(?:nvme|ssd|hdd|硬盘|固态|存储|storage|disk|drive|内存|系统内存|ddr\d?|"
    r"ram|system memory)|"
    r"(?:[\d一二三四五六七八九十两]+)\s*(?:-|个)?\s*(?:年|years?|yr)\s*(?:的)?\s*(?:质保|保修|维保|原厂保|warranty|support)|"
    r"(?:质保|保修|维保|warranty)\s*(?:期)?\s*(?:[\d一二三四五六七八九十两]+)\s*(?:年|years?)|"
    r"\d+\s*(?:条|根|x|×)\s*\d+\s*(?:g|gb)\b", _I)  # '12条64G' DIMMs


def _names(text: str) -> list[tuple[int, int]]:
    """Product codes, storage and warranties: spans no reader takes a number from ('ConnectX-7', '4TB NVMe')."""
    return [m.span() for pat in (_PRODUCT_CODE, _STORAGE_OR_WARRANTY) for m in pat.finditer(text)]


def _not_quantities(text: str) -> list[tuple[int, int]]:
    """Spans whose numbers are names, dates, storage, warranties or sizes of a matrix or grid, never a count:
    masked before any quantity is read."""
    spans = [m.span() for m in _PRODUCT_CODE.finditer(text)]
    spans += [m.span() for m in _STORAGE_OR_WARRANTY.finditer(text)]
    spans += [m.span() for m in _GRID.finditer(text)]
    spans += [m.span() for m in _CHIPSET.finditer(text)]
    spans += [m.span(1) if m.group(1) else m.span(2) for m in _YEAR.finditer(text)]
    return spans


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            chars[i] = " "
    return "".join(chars)


def _distinct(mentions: list[GpuCount]) -> list[GpuCount]:
    """One entry per GPU id, in first-mention order; a written count beats a defaulted one.

    "…on one 4090. The 4090 has…" names one card twice: that is one GPU, not a comparison."""
    out: dict[str, GpuCount] = {}
    for m in mentions:
        seen = out.get(m.gpu)
        if seen is None or (m.stated and not seen.stated):
            out[m.gpu] = m
    return list(out.values())


_CACHE_LEVEL = re.compile(r"\s*(cache|缓存|高速缓存)", re.IGNORECASE)


_SIZE_SAID_AFTER = re.compile(r"^[^，,。.;；!?！？\n]{0,16}?(?<![\d.])(\d{2,3})\s*(?:gb|g|gib)(?![a-z])", re.IGNORECASE)


def _sized_variant(resolver: Any, name: str, found: str, after: str) -> str:
    """The memory size said just after a name picks that size of the product ('Mac Studio M3 Ultra with 512GB',
    'MI50，32G 的'): the catalog entry named with that size, when there is one; else the name's own entry."""
    m = _SIZE_SAID_AFTER.match(after)
    if not m:
        return found
    for label in (f"{name} {m.group(1)}GB", f"{name} {m.group(1)}G"):
        try:
            hit = resolver.find(label)
        except AmbiguousNameError:
            continue
        if hit is not None:
            return str(hit.id)
    return found


class _Mention(BaseModel):
    start: int
    end: int
    ids: list[str]
    text: str


def _scan_names(text: str, resolver, entries, max_window: int = 6) -> list[_Mention]:
    """Catalog names in free text: longest token windows first, left to right."""
    by_label = {e.name: e.id for e in entries}
    tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(text)]
    out: list[_Mention] = []
    i = 0
    while i < len(tokens):
        found: _Mention | None = None
        for width in range(min(max_window, len(tokens) - i), 0, -1):
            window = tokens[i:i + width]
            start, end = window[0][0], window[-1][1]
            phrase = text[start:end]
            if len(phrase) > 60 or re.fullmatch(r"\d{1,2}", phrase):
                continue
            candidates = [(start, phrase)]
            first = window[0][2]
            if _CJK.match(first) and len(first) > 2:  # '我想用昇腾' + '910B': try the CJK tail
                candidates += [(window[0][1] - k, text[window[0][1] - k:end]) for k in (4, 3, 2) if k < len(first)]
            plural = re.search(r"\d([sS])[.,;:!?]*$", phrase) or re.search(r"\s[A-Za-z]{2,6}(s)[.,;:!?]*$", phrase)
            if plural:  # plural: 'A100s', '4090s', 'two L4s.', 'two 1080 Tis', '3060 Supers'
                candidates.append((start, phrase[:plural.start(1)]))
            for cstart, cand in candidates:
                try:
                    hit = resolver.find(cand)
                except AmbiguousNameError as exc:
                    sized = _sized_variant(resolver, cand, "", text[end:])  # 'MI50，32G 的': the size picks one
                    ids = [sized] if sized else [by_label[c] for c in exc.candidates if c in by_label]
                    found = _Mention(start=cstart, end=end, ids=ids, text=cand)
                    break
                if hit is not None and not _CACHE_LEVEL.match(text[end:]):  # 'L2 cache' is no L2 card
                    found = _Mention(start=cstart, end=end, ids=[_sized_variant(resolver, cand, hit.id,
                                                                                text[end:])], text=cand)
                    break
            if found:
                break
        if found:
            out.append(found)
            i += width
        else:
            i += 1
    return out


MONEY_NOT_CARDS = 100  # '块' after a number this large is yuan ('三万块'), never a card count


def _cards_count(masked: str) -> float | None:
    """A number of cards said on its own ('8 卡', 'two GPUs', '-2 cards' as a negative), else None."""
    m = _CARDS_ONLY.search(masked)
    if m and (m.group(3) or "").lower() in ("a", "an"):
        return None  # "a card" names no count
    rate_before = re.search(r"(?:每|一|/)\s*(?:个)?\s*(?:小时|天|度|月|卡时)\s*(?:大概|约|要|是|按)?\s*$",
                            masked[max(0, m.start() - 10):m.start()]) if m else None
    if m and m.group(4) == "块" and (rate_before or re.match(
            r"\s*(钱|以内|左右|预算|的预算)|\s*(?:钱)?\s*(?:一|每|/)\s*(?:个)?\s*(?:小时|天|度|月|卡时)",
            masked[m.end():])):
        return None  # '5千块以内' is money; '4 块一小时', '每卡每小时18块' a rate
    if not m or _NOT_GPU_NOUN.match(masked[m.end():]):
        return None  # '4 张 200G 的 IB 卡' counts network cards
    raw = m.group(1) or m.group(2) or m.group(3)
    value = {"双": 2.0, "单": 1.0}.get(raw) or parse_number(raw)
    if m.group(4) == "块" and value is not None and value >= MONEY_NOT_CARDS:
        return None  # '三万块' with no card word after it is money, not 30,000 cards
    if value is not None and re.search(r"[-−]$", masked[:m.start()]):  # '- 2 cards' in a list is a bullet
        value = -value  # '-2 GPUs'
    return value


def _count_near(text: str, start: int, end: int) -> int | None:
    """A card count written next to a GPU name: '两张4090', '2x 4090', 'four A100s', '4090 x2'."""
    found = _count_match(text, start, end)
    return None if found is None else found[0]


def _count_match(text: str, start: int, end: int) -> tuple[int, int, int] | None:
    """``_count_near``'s count with the span it covers, the name included: (count, start, end)."""
    base = max(0, start - 24)  # '3 Moore Threads MTT S4000': a vendor's words between the count and the name
    window = text[base:start]
    before = _COUNT_BEFORE.search(window)
    if before:
        raw = before.group(1) or before.group(2) or before.group(3) or before.group(4)
        value = {"双": 2.0, "单": 1.0, "俩": 2.0}.get(raw) or parse_number(raw)
        if before.group(1) and (value == 0 or re.search(r"[-−]$|负\s*$", window[:before.start(1)])):
            return -int(value or 0), base + before.start(), end  # '-3 H100', '0 GPUs': said back to the user
        if raw.lower() in ("a", "an", "one") and _A_MACHINE.match(text[end:end + 16]):
            return None  # 'an H20 setup', 'a 4090 box': a machine of that card, its count not said
        if value and value > 0:  # '2000 H100' too: a count past MAX_CARDS is said back as well
            return int(value), base + before.start(), end
    after = _COUNT_AFTER.search(text[end:end + 20])
    if after:
        value = 2.0 if after.group(2) else parse_number(after.group(1) or after.group(3) or after.group(5))
        if value and after.group(4) == "块" and value > 16:
            return None  # 'Tesla P40 24G 800块': a price in yuan, not 800 cards
        if value and value > 0:
            return int(value), start, end + after.end()
    return None


_A_MACHINE = re.compile(r"s?\s*(?:-based\s+)?(?:setup|server|box|node|cluster|system|machine|rig|build|config\w*|"
                        r"solution|deployment)s?\b", _I)


class CardCountMention(BaseModel):
    """A number of cards written in a text: 'two RTX 4090s', '2× 4090', '两张 4090', '双卡', 'four GPUs'."""

    start: int
    end: int
    count: int
    gpus: list[str] = Field(default_factory=list, description="catalog ids the counted card's name may be (an "
                                                              "ambiguous 'H100' is several); empty: no card named")


def card_count_mentions(text: str) -> list[CardCountMention]:
    """Every card count in ``text`` (not only the first), read as a message's counts are read, with its span."""
    cat = load_catalog()
    names = _scan_names(text, cat.gpu_resolver, cat.gpus)
    out: list[CardCountMention] = []
    for mention in names:
        found = _count_match(text, mention.start, mention.end)
        if found is not None and found[0] > 0:
            out.append(CardCountMention(start=found[1], end=found[2], count=found[0], gpus=mention.ids))
    masked = _mask(text, [(m.start, m.end) for m in names])
    for m in _CARDS_ONLY.finditer(masked):
        value = _cards_count(masked[m.start():m.end() + 12])
        if value is not None and value.is_integer() and value > 0 and not any(c.start < m.end() and m.start() < c.end
                                                                              for c in out):
            out.append(CardCountMention(start=m.start(), end=m.end(), count=int(value)))
    return sorted(out, key=lambda c: c.start)


def card_names(text: str) -> list[tuple[int, int, list[str]]]:
    """Every GPU name in ``text`` as (start, end, catalog ids it may be), left to right."""
    cat = load_catalog()
    return [(m.start, m.end, m.ids) for m in _scan_names(text, cat.gpu_resolver, cat.gpus)]


# 'full version (not distill)', '不要蒸馏版', '满血': the 671B model itself
_NOT_DISTILL = re.compile(r"\b(?:not|no|non|never|without|rather than|instead of)[\s-]*(?:the\s+|a\s+|any\s+)?distill|"
                          r"(?:不要|不是|非|别用?|而非|不用|不需要|不能是|不考虑)\s*(?:用\s*)?蒸馏|满血", re.IGNORECASE)
_DISTILL = re.compile(r"distill|蒸馏", _I)
R1_DISTILL_DEFAULT_B = 32  # the distill people mean by 'R1 蒸馏版' alone: the largest Qwen base, a 24–32 GB card's


def _r1_distill(text: str, params_b: float, catalog: Catalog) -> str | None:
    """The DeepSeek-R1 distill of the size named: Llama bases for 8B and 70B (or when Llama is said), Qwen else."""
    family = "llama" if re.search(r"llama|拉玛", text, _I) or params_b in (8, 70) else "qwen"
    wanted = f"deepseek-r1-distill-{family}-{params_b:g}b"
    return next((m.id for m in catalog.models if m.id == wanted), None)


_RANGE = re.compile(r"\d{1,3}\s*[-–~～到至]\s*\d{1,3}")
_BRAND_BEFORE = re.compile(r"(?:rtx|gtx|geforce|radeon|rx|arc)\s*$", _I)


def _a_range(text: str, mention: _Mention) -> bool:
    """'like 50-80 pages', '30-90 users': two numbers with a dash between are a range, never an RTX 5080 or 3090
    (unless a brand is written before them: 'RTX 50-90')."""
    return bool(_RANGE.fullmatch(mention.text.strip())) and not _BRAND_BEFORE.search(text[:mention.start])


# an edition said apart from the name ('the Max-Q version of the pro 6000', 'H100, the PCIe one'): word → id part
_EDITION_WORD = re.compile(r"max[\s-]?q|\bpcie\b|\bsxm\d?\b|\bnvl\b", _I)
_EDITION_PART = {"maxq": "max-q", "pcie": "pcie", "sxm": "sxm", "nvl": "nvl"}
_EDITION_REACH = 32  # characters either side of the name
_SIZE_IN_NAME = re.compile(r"\d+\s*(?:gb?|g)\b", _I)
_NOT_FAMILY = re.compile(r"^(?:sxm\d?|pcie|nvl|ws|max|q|server|workstation|\d+gb)$")


def _with_variant(catalog: Catalog, text: str, mention: _Mention) -> _Mention:
    """A name resolved to one edition when another edition of it is said beside it, in the same clause ('Max-Q
    version of the pro 6000' is the Max-Q card): that edition; else the mention as found."""
    if len(mention.ids) != 1:
        return mention
    before = re.split(r"[，,。.;；!?！？\n]", text[max(0, mention.start - _EDITION_REACH):mention.start])[-1]
    after = re.split(r"[，,。.;；!?！？\n]", text[mention.end:mention.end + _EDITION_REACH])[0]
    word = _EDITION_WORD.search(before + " " + after)
    if word is None:
        return mention
    part = _EDITION_PART[re.sub(r"[\s-]|\d", "", word.group(0).lower())]
    own = catalog.gpu(mention.ids[0])
    family = [x for x in own.id.split("-") if not _NOT_FAMILY.match(x)]
    memory = round(own.memory_gb)
    found = sorted((g for g in catalog.gpus if part in g.id and g.id != own.id
                    and [x for x in g.id.split("-") if not _NOT_FAMILY.match(x)] == family),
                   key=lambda g: round(g.memory_gb) != memory)
    if part in own.id or not found or (round(found[0].memory_gb) != memory and _SIZE_IN_NAME.search(mention.text)):
        return mention  # 'V100 16G SXM2 转 PCIe': the 16 GB card said, on an adapter, not the 32 GB SXM2 module
    return mention.model_copy(update={"ids": [found[0].id]})


def _pick(catalog: Catalog, ids: list[str]) -> str:
    """For an ambiguous GPU name, the variant with the most memory (what people usually mean now)."""
    return max(ids, key=lambda i: catalog.gpu(i).memory_gb)


def _guess_model(text: str, params_b: float | None, catalog: Catalog) -> str | None:
    """A catalog model from a family word and a size: 'llama3 70b' → Llama-3.x-70B."""
    fam = _MODEL_FAMILY.search(text)
    if not fam or params_b is None:
        return None
    family = _FAMILY_ALIASES.get(fam.group(1).lower(), fam.group(1).lower()).replace("-", "")
    version = fam.group(2)
    best: tuple[float, str] | None = None
    for m in catalog.models:
        key = normalize(m.name) + " " + normalize(m.family)
        if family not in key:
            continue
        if abs(m.params_b - params_b) / params_b > 0.15:
            continue
        score = abs(m.params_b - params_b) / params_b + (0.0 if m.id in CANONICAL else 0.2)
        score += 0.1 if any(w in m.id for w in SPECIALISED) else 0.0
        if version and version.replace(".", "") not in normalize(m.name).replace(".", ""):
            score += 1
        if best is None or score < best[0]:
            best = (score, m.id)
    return best[1] if best else None


# ----------------------------------------------------------------------------- parse


_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:[eE]|\s*[x×*]\s*10\s*\^\s*)([-+]?\d{1,5})(?![\w.])|"
                         r"(?<![\w.])10\s*\^\s*(\d{1,5})(?![\w.])")
_NOT_FINITE = re.compile(r"(?<![\w.])(?:[-+]?(?:inf(?:inity)?|nan)|∞)(?![\w.])", _I)
MAX_PLAIN_NUMBER = 10**15  # written out beyond this, a number stands for nothing this advisor plans


def _plain_numbers(text: str) -> tuple[str, list[str]]:
    """``text`` with scientific notation written out ('1e12', '2.5e9', '10^6' → digits) for the extractors,
    and the numbers no plan can use ('inf', 'nan', '∞', '1e400', '1e30') blanked and returned as written.
    Values below 1 ('lr 1e-4') are left as they are: nothing here reads them."""
    odd: list[str] = []

    def plain(m: re.Match[str]) -> str:
        try:
            value = Decimal(m.group(1)) * Decimal(10) ** int(m.group(2)) if m.group(1) else Decimal(10) ** int(
                m.group(3))
        except (ArithmeticError, ValueError):
            value = Decimal("Infinity")
        if value < 1:
            return m.group(0)
        if value <= MAX_PLAIN_NUMBER and value == value.to_integral_value():
            return str(int(value))
        odd.append(m.group(0))
        return " " * len(m.group(0))

    def blank(m: re.Match[str]) -> str:
        odd.append(m.group(0))
        return " " * len(m.group(0))

    text = _SCIENTIFIC.sub(plain, text)
    return _NOT_FINITE.sub(blank, text), odd[:3]


def _usable_count(out: Parsed, gid: str, value: float | None) -> int | None:
    """A written card count a plan can use (1 … MAX_CARDS), else None; one that cannot be is kept in ``out`` to be
    said back, never replaced silently: '0 GPUs', '-2 cards' in ``bad_counts`` (by GPU id, '' for no GPU named),
    '2000 H100' in ``unusable['gpu_count']``."""
    if value is None:
        return None
    if 0 < value <= MAX_CARDS:
        return int(value)
    if value <= 0:
        out.bad_counts[gid] = int(value)
    else:
        out.unusable["gpu_count"] = float(value)
    return None


@dataclass
class _Reading:
    """One message being read: the record filled so far and the views of the text the steps share.

    ``text`` is the cleaned message with rejected values blanked and numbers written out; ``masked`` the same
    with catalog names (and, after the use-case step, negated activities) blanked; ``counted`` with names and
    dates blanked (where card counts are read); ``scan`` is ``masked`` with data-set sizes blanked (where the
    remaining quantities are read). Offsets are the same in all of them."""

    out: Parsed
    cat: Catalog
    text: str
    shown: str
    context: bool
    gpu_mentions: list[_Mention] = field(default_factory=list)
    system_mentions: list[_Mention] = field(default_factory=list)
    model_mentions: list[_Mention] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # cards the message swaps out
    masked: str = ""
    said: str = ""
    names_and_dates: list[tuple[int, int]] = field(default_factory=list)
    counted: str = ""
    scan: str = ""
    claimed: list[tuple[int, int]] = field(default_factory=list)


# Chinese shorthand for 万 ('预算100w', '报价 35w 一台'): 'w' after an amount, beside a money word, written as 万
# (one character for one, so every offset holds)
_WAN = re.compile(r"((?:预算|报价|价格|售价|总价|成本|卖|大概|差不多|约|整机)[\s:：约大概才只]{0,3}"
                  r"\d+(?:\.\d+)?)\s?[wW](?![a-zA-Z])(?!\s*(?:的)?\s*(?:电源|功耗|供电|psu|瓦))|(\d+(?:\.\d+)?)[wW](?=\s*(?:块|元|rmb|的预算|预算|一台|一套))",
                  re.IGNORECASE)


def _wan_shorthand(text: str) -> str:
    """'预算100w' → '预算100万' in Chinese text; watts ('1600W 电源') keep their W."""
    if not re.search(r"[\u4e00-\u9fff]", text):
        return text
    return _WAN.sub(lambda m: (m.group(1) or m.group(2)) + ("万" if m.group(0)[-1] in "wW" else m.group(0)[-1]), text)


def parse(text: str, catalog: Catalog | None = None, context: bool = True) -> Parsed:
    """Everything a single message states; unknown things stay None. ``context``: an earlier answer exists,
    so "那 FP16 呢" is a what-if on it (without one, the same words are read as a question of their own)."""
    cat = catalog or load_catalog()
    text = clean(text)
    out = Parsed(text=text, lang=detect_lang(text))
    if not text:
        return out
    shown = text
    text = _drop_rejected(text)  # "8 GPUs, not 4": the value the user took back is not read
    text, out.unreadable_numbers = _plain_numbers(text)  # '1e12' → '1000000000000'; 'inf', '1e400' set aside
    text = _wan_shorthand(text)  # '预算100w' is ¥1,000,000, not 100 watts
    r = _Reading(out=out, cat=cat, text=text, shown=shown, context=context)
    for step in _STEPS:
        step(r)
    out.text = shown
    return out


def _read_intents(r: _Reading) -> None:
    for intent, pat in _INTENT_PATTERNS:
        if pat.search(r.text):
            r.out.intents.append(intent)
    for intent, pat in ((Intent.yes, _YES), (Intent.no, _NO)):
        if pat.match(r.text):
            r.out.intents.append(intent)
    if _UNSURE.search(r.text):
        r.out.intents.append(Intent.unsure)


# 'one card' inside a unit price ('几百块一张', '一张 4500 块', '$300 each'): a price per card, not a count
_UNIT_PRICE = re.compile(r"(?:块|元|块钱|刀|美元|万)\s*((?:一|每)\s*(?:张|块|片))|"
                         r"((?:一|每)\s*(?:张|块|片))\s*(?:要|才|只要|大概|约)?\s*(?=[\d.,]+\s*(?:块|元|刀|美元|k\b|千|万)|几)")


def _unit_prices(text: str) -> list[tuple[int, int]]:
    """The 'one card' spans of unit prices in ``text`` ('几百块一张' is a price, not a count)."""
    return [m.span(1) if m.group(1) else m.span(2) for m in _UNIT_PRICE.finditer(text)]


def _read_names(r: _Reading) -> None:
    """Catalog names first, so model numbers (4090, A100) are masked before quantities are read."""
    r.system_mentions = _scan_names(r.text, system_resolver(), systems())  # 'DGX B200' is a server, not a card
    spans = [(m.start, m.end) for m in r.system_mentions]
    r.gpu_mentions = [_with_variant(r.cat, r.text, g) for g in _scan_names(r.text, r.cat.gpu_resolver, r.cat.gpus)
                      if not any(a < g.end and g.start < b for a, b in spans) and not _a_range(r.text, g)]
    r.model_mentions = [m for m in _scan_names(r.text, r.cat.model_resolver, r.cat.models)
                        if not any(g.start <= m.start < g.end for g in r.gpu_mentions)]
    r.masked = _mask(r.text, [(m.start, m.end) for m in r.gpu_mentions + r.model_mentions + r.system_mentions])
    r.masked = _mask(r.masked, [m.span() for m in _CHIPSET.finditer(r.masked)])  # 'B650 board' is no GPU
    for m in _GPU_LIKE.finditer(r.masked):
        name = m.group(0).strip()
        if len(r.out.unknown_gpus) < 3:
            r.out.unknown_gpus[name] = r.cat.gpu_resolver.suggest(name)
    r.names_and_dates = _not_quantities(r.text)
    r.counted = _mask(r.text, r.names_and_dates)  # the message as quantities are read from it, positions kept
    r.counted = _mask(r.counted, _unit_prices(r.counted))
    if r.model_mentions:
        r.out.model = _subject_model(r.text, r.model_mentions)
    r.out.alternatives = _options_offered(r.text, r.gpu_mentions)
    r.replaced = _replaced_cards(r.text, r.gpu_mentions)


# 'swap the 4x L40S for 4x H100 NVL', 'replace the A100s with H100s', '把 4090 换成 5090', 'H200 instead of H100'
_SWAP_BEFORE = re.compile(r"(?:\bswap(?:ping)?|\breplac\w*|\btrad\w*|\bexchang\w*|把|将)\s*(?:out\s+)?"
                          r"(?:the\s+|our\s+)?(?:\d+\s*[x×]?\s*)?$", _I)
_SWAP_BETWEEN = re.compile(r"^[\s\w.,-]{0,12}?(?:\bfor\b|\bwith\b|\bto\b|\bby\b|换成|改成|换为|替换成|换)\s*"
                           r"(?:\d+\s*[x×]?\s*)?$", _I)
_INSTEAD_OF = re.compile(r"^[\s\d×x]{0,6}\binstead of\b\s*(?:the\s+|our\s+)?(?:\d+\s*[x×]?\s*)?$", _I)


_LABEL = re.compile(r"(?:(?<![A-Za-z0-9])([A-D])\s*(?:家|方案|[.:：、)）]|是(?=\S))|"
                    r"(?:方案|选项|报价|option|quote|plan)\s*([A-D1-4一二三四])(?![A-Za-z0-9]))", _I)
_ORDINAL_LABEL = {"1": "A", "2": "B", "3": "C", "4": "D", "一": "A", "二": "B", "三": "C", "四": "D"}
_PICK = re.compile(r"(?:选|用|买|要|按|回到|就|定|pick|choose|go with|take|with|option|quote|plan|方案)\s*"
                   r"([A-D1-4一二三四])(?![A-Za-z0-9])(?!\s*[x×卡张])|"
                   r"(?<![A-Za-z0-9])([A-D])\s*(?:家|方案|那台|那套|的方案|的报价|那个)|"
                   r"第\s*([一二三四1-4])\s*(?:个|家)?\s*(?:方案|报价|选项|家)|"
                   r"\bthe (first|second|third|fourth) (?:one|option|quote|box|server)\b", _I)
_ORDINAL_WORDS = {"first": "A", "second": "B", "third": "C", "fourth": "D"}


def _label_of(raw: str) -> str:
    low = raw.lower()
    return _ORDINAL_WORDS.get(low) or _ORDINAL_LABEL.get(raw) or raw.upper()


def _read_options(r: _Reading) -> None:
    """Options listed under labels, each with its cards and its price; a later 'B' picks one."""
    found = [(m.start(), m.end(), _label_of(m.group(1) or m.group(2))) for m in _LABEL.finditer(r.text)]
    stops = [*(f[0] for f in found[1:]), len(r.text)]  # each option runs to the next label
    firsts = [i for i, f in enumerate(found) if f[2] not in {g[2] for g in found[:i]}]  # each label once
    options = [o for i in firsts if (o := _option_in(r, found[i][2], found[i][1], stops[i])) is not None]
    if len(options) >= 2:
        r.out.options = options
    elif (pick := _PICK.search(r.text)) is not None:
        r.out.option_ref = _label_of(next(g for g in pick.groups() if g))


def _option_in(r: _Reading, label: str, start: int, stop: int) -> LabeledOption | None:
    """The first card (with its count) and price written between a label and the next one."""
    card = next((m for m in r.gpu_mentions if start <= m.start < stop), None)
    if card is None:
        return None
    count = _count_near(r.counted, card.start, card.end) or 1
    span = r.text[card.end:stop]
    money = [x for x in find_money(span) if x.amount >= 1000]
    wan = [a for a in find_amounts(span) if "万" in a.text and a.value >= 10_000]
    price = (money[0].amount, money[0].currency or "USD") if money else (wan[0].value, "CNY") if wan else None
    gid = card.ids[0] if len(card.ids) == 1 else _pick(r.cat, card.ids)
    return LabeledOption(label=label, gpu=gid, count=min(max(count, 1), 1024), price=price)


def _replaced_cards(text: str, mentions: list[_Mention]) -> list[str]:
    """Cards a message swaps out for another it names: planned on the new one only, never as a pool."""
    cards = sorted(mentions, key=lambda m: m.start)
    out: list[str] = []
    for a, b in itertools.pairwise(cards):
        if a.ids[:1] == b.ids[:1]:
            continue
        between = text[a.end:b.start]
        if _SWAP_BEFORE.search(text[max(0, a.start - 24):a.start]) and _SWAP_BETWEEN.match(between):
            out.append(a.ids[0])  # 'swap A for B': A goes
        elif _INSTEAD_OF.match(between):
            out.append(b.ids[0])  # 'B instead of A': A goes
    return out


_OR = re.compile(r"\bor\b|还是|或者|或是|\bvs\.?(?![a-z])|\bversus\b|抑或|\b(?:what|how) about\b|\band for\b|"
                 r"\binstead of\b", _I)


def _options_offered(text: str, mentions: list[_Mention]) -> bool:
    """Different cards joined by 'or' / '还是' (not 'and'): options weighed against each other, not one machine."""
    cards = sorted(mentions, key=lambda m: m.start)
    return any(a.ids[:1] != b.ids[:1] and _OR.search(text[a.end:b.start]) for a, b in itertools.pairwise(cards))


_REPLACED_BY = re.compile(r"换成|改成|换为|改用|换用|切换到|switch(?:ing)? to|swap(?:ping)? (?:it )?for|"
                          r"replace\w* (?:it |that |this )?with|go with|move to", _I)
_REPLACES = re.compile(r"\binstead\b|rather than|而不是|来代替|代替", _I)  # 'Qwen instead (of Llama)': the one before


def _subject_model(text: str, mentions: list[_Mention]) -> str:
    """The model a message is about: the one named after its last 'switch to' ('从 Llama 换成 Qwen'), else the
    first named ('Llama 3.1 8B … also, is Mistral Nemo a better pick?' asks about Llama first)."""
    before = [m.start() for m in _REPLACES.finditer(text)]
    if before:
        earlier = [m for m in mentions if m.end <= before[0]]
        if earlier:
            return earlier[-1].ids[0]
    cues = [m.end() for m in _REPLACED_BY.finditer(text)]
    if cues:
        after = [m for m in mentions if m.start >= cues[-1]]
        if after:
            return after[0].ids[0]
    return max(mentions, key=lambda m: _wanted_score(text, m)).ids[0]  # ties: the first named


_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|[。！？；\n]")  # not the dot inside 'qwen2.5'


_CLAUSE_END = re.compile(r"[.!?;,](?=\s|$)|[。！？；，、\n]|\bbut\b|但是?|不过|可是")


def _wanted_score(text: str, mention: _Mention) -> int:
    """+1 when the mention's sentence says the user wants to run it, -1 when it says what they run today; its
    own clause counts double ('现在跑 32B 还行，但想上 72B': the 72B is wanted)."""
    def around(ends: re.Pattern[str]) -> str:
        starts = [m.end() for m in ends.finditer(text, 0, mention.start)]
        end_match = ends.search(text, mention.end)
        return text[starts[-1] if starts else 0:end_match.start() if end_match else len(text)]

    def score(part: str) -> int:
        return bool(vocab.matches("slot", "model_wanted", part)) - bool(vocab.matches("slot", "model_current", part))

    return 2 * score(around(_CLAUSE_END)) + score(around(_SENTENCE_END))


# 'Home PC: Ryzen 7 5800X, 32GB, RTX 3060 12GB.', '我现在的配置：…': a list of the parts the user has
_PARTS_LIST = re.compile(r"(?:\b(?:home|my|our|current|existing|gaming|present)\s+(?:pc|rig|machine|computer|setup|"
                         r"build|box|desktop|workstation|server|specs?)|我的(?:电脑|主机|配置|机器)|现在的(?:电脑|主机|配置)|"
                         r"(?:目前|现有|当前)(?:的)?(?:电脑|主机|配置|机器))\s*(?:is|是)?\s*[:：=\-–(（]", _I)


def _in_parts_list(text: str, mention: _Mention) -> bool:
    """The card is named in the sentence that lists the parts the user has."""
    sentence_start = max((m.end() for m in _SENTENCE_END.finditer(text, 0, mention.start)), default=0)
    return bool(_PARTS_LIST.search(text, sentence_start, mention.start))


def _owned(text: str, mention: _Mention, marker: re.Match[str] | None) -> bool:
    """Whether the card named at ``mention`` is one the user already has ('我有两张 3090', 'my 4090', a card in the
    list of their PC's parts)."""
    if _in_parts_list(text, mention):
        return True
    after_marker = (marker is not None and marker.end() <= mention.start
                    and not _NOT_OWNED.search(text[marker.end():mention.start])
                    and mention.start - marker.end() <= 14)
    return after_marker or bool(_MINE.search(text[max(0, mention.start - 10):mention.start])) \
        or bool(_OWNED_AFTER.match(text[mention.end:mention.end + 16])) \
        or bool(_OWNED_BEFORE.search(text[max(0, mention.start - 16):mention.start]))


_LET_GO_BEFORE = re.compile(r"(?:\bsell(?:ing)?|\bget(?:ting)? rid of|\bditch(?:ing)?|\bdump(?:ing)?|\breplac(?:e|ing)|"
                            r"\bretir(?:e|ing)|\bphas(?:e|ing) out|替换掉?|淘汰掉?|换掉|卖掉|出掉)\s*(?:the|my|our|old|"
                            r"existing|旧的|老的|现有的|\s)*$", _I)
_LET_GO_AFTER = re.compile(r"^\s*(?:卡)?\s*(?:卖了|卖掉|出了|出掉|换掉|淘汰)|"
                           # 'our old 4x 1080 Ti box is dying', '那台 V100 服务器坏了': a machine to replace
                           r"^\s*(?:\w+\s+){0,3}?(?:is|are|was|were|has|have)\s+(?:\w+\s+)?(?:dying|dead|died|broken|"
                           r"failing|failed|end[- ]of[- ]life|eol|being retired|retiring)\b|^\s*(?:\w+\s+){0,2}?"
                           r"(?:died|broke|failed)\b|^\s*\S{0,6}?(?:坏了|挂了|快不行了|不行了|要退役|退役了|报废|寿终正寝)",
                           _I)


def _let_go(text: str, mention: _Mention) -> bool:
    """A card the user gives up ('sell the 3060', '把 3090 卖了', 'replacing old V100 nodes'): not planned on."""
    return bool(_LET_GO_BEFORE.search(text[max(0, mention.start - 24):mention.start])
                or _LET_GO_AFTER.match(text[mention.end:mention.end + 40]))


_OWNED_LIST = re.compile(r"^\s*(?:\d{1,3}\s*(?:gb|g)(?![a-z])\s*(?:的)?)?"
                         r"(?:\s|,|，|、|and|plus|\+|和|及|与|还有|另外|跟)+"
                         r"(?:also\s+)?(?:an?|my|one|two|\d+\s*(?:x|×)?|一张|两张|一块|\d+\s*张|张|块)?\s*"
                         r"(?:old|older|used|spare|旧的?|老的?)?\s*$", _I)
_LIST_JOIN = re.compile(r"^\s*(?:/|、|,|，|or|and|nor|和|或|或者|及|与)\s*$", _I)


_MEMORY_AFTER = re.compile(r"^\s*(?:魔改版?|改版?|modded|mod)?\s*(\d{2,3})\s*(?:g|gb)\b", _I)


def _memory_variant(cat: Catalog, gid: str, after: str) -> str:
    """'2080ti 魔改22G', '4090D 48G': the catalog variant with the memory written after the name, when there is
    one ('rtx-2080-ti' → 'rtx-2080-ti-22gb')."""
    m = _MEMORY_AFTER.match(after)
    if not m or float(m.group(1)) == cat.gpu(gid).memory_gb:
        return gid
    base = re.sub(r"-\d+gb$", "", gid)
    ids = {g.id for g in cat.gpus}
    for candidate in (f"{gid}-{m.group(1)}gb", f"{base}-{m.group(1)}gb"):
        if candidate in ids:
            return candidate
    return gid


def _unobtainable(text: str, mention: _Mention) -> bool:
    """"can't get H100s", "H100 买不到": the card ruled out, not the one to plan on."""
    return bool(_UNOBTAINABLE_BEFORE.search(text[max(0, mention.start - 24):mention.start])
                or _UNOBTAINABLE_AFTER.match(text[mention.end:mention.end + 24]))


def _read_cards(r: _Reading) -> None:
    """The GPUs named with their counts, split into cards to plan on and cards already owned."""
    out, text = r.out, r.text
    marker = _EXISTING.search(text)
    gpus: list[GpuCount] = []
    existing: list[GpuCount] = []
    ruled_out_end = owned_end = -1
    for mention in r.gpu_mentions:
        gid = mention.ids[0] if len(mention.ids) == 1 else _pick(r.cat, mention.ids)
        if len(mention.ids) > 1:
            out.ambiguous[mention.text] = mention.ids
        listed = ruled_out_end >= 0 and _LIST_JOIN.match(text[ruled_out_end:mention.start])
        if listed or _unobtainable(text, mention):  # "can't get H100/H200": the whole list is ruled out
            ruled_out_end = mention.end
            out.ruled_out_gpus.append(gid)
            continue
        if _let_go(text, mention) or gid in r.replaced:  # 'sell the 3060 and get two 3090s', 'swap A for B'
            out.sold.append(gid)
            continue
        gid = _memory_variant(r.cat, gid, text[mention.end:mention.end + 12])
        others = [(m.start, m.end) for m in r.gpu_mentions if m is not mention]  # '3090还是买张新的 4060ti': no count
        count = _usable_count(out, gid, _count_near(_mask(r.counted, others), mention.start, mention.end))
        entry = GpuCount(gpu=gid, count=count or 1, stated=count is not None)
        # 'I have an A5000 and an old 2070 SUPER': a card listed right after an owned one is owned too
        owned = _owned(text, mention, marker) or (owned_end >= 0 and bool(_OWNED_LIST.match(text[owned_end:
                                                                                              mention.start])))
        (existing if owned else gpus).append(entry)
        owned_end = mention.end if owned else -1
    out.gpus = _distinct(gpus)
    if existing:
        out.existing = _distinct(existing)
    elif _NO_EXISTING.search(text):
        out.existing = []
    _read_count_apart(r, bool(existing))
    _read_systems(r, marker)


def _read_systems(r: _Reading, marker: re.Match[str] | None) -> None:
    """Servers and rack systems named: recorded, and with no card named beside them, their cards stand for the
    hardware ('DGX B200 能跑 DeepSeek-V3 吗' plans 8 × B200; '我们有一台 Atlas 800T A2' owns 8 × 910B)."""
    out = r.out
    for mention in r.system_mentions:
        system = system_resolver().get(mention.ids[0])
        out.systems.append(system.id)
        if system.gpu is None or out.gpus or out.existing:
            continue
        units = _count_near(r.counted, mention.start, mention.end) if system.form == "server" else None
        plural = r.text[mention.end - 1:mention.end] == "s" or bool(
            re.match(r"s\b|\s*(?:servers|boxes|nodes|systems)\b", r.text[mention.end:mention.end + 10], _I))
        # 'two DGX H100': two boxes of 8; 'the DGX B200s': as many as said before; 'a DGX B200': one
        units = int(units) if units and 1 <= units <= MAX_DGX_NODES else (None if plural else 1)
        entry = GpuCount(gpu=system.gpu, count=min(system.gpu_count, MAX_CARDS), stated=True)
        out.nodes = units if system.form == "server" else out.nodes
        if _owned(r.text, mention, marker):
            out.existing = [entry]
        else:
            out.gpus = [entry]
    out.systems = list(dict.fromkeys(out.systems))


_OF_THOSE = re.compile(rf"(?:(?<![\d.\-−])(\d{{1,3}})|\b({_COUNT_WORDS}))\s+of\s+"
                       r"(?:those|them|these|the cards|the gpus)\b", _I)  # '4090 48GB cards … could 2 of those do it?'


def _read_count_apart(r: _Reading, owned: bool) -> None:
    """A card count with no card beside it: 'two cards' with no GPU named, or 'A100 80G 训练 7B，8 卡'."""
    out = r.out
    if not r.gpu_mentions:
        out.gpu_count = _usable_count(out, "", _cards_count(_mask(r.masked, r.names_and_dates)))
        return
    if len(out.gpus) > 1 and not owned and not any(g.stated for g in out.gpus):  # 'L40S or H100? budget for ~8
        out.gpu_count = _usable_count(out, "", _cards_count(_mask(r.masked, r.names_and_dates)))  # GPUs': each
        return
    if len(out.gpus) != 1 or out.gpus[0].stated or owned or out.gpus[0].gpu in out.bad_counts:
        return
    blanked = _mask(_mask(r.masked, [(m.start, m.end) for m in r.gpu_mentions]),
                    _unit_prices(r.masked))
    apart = _APART_COUNT.search(blanked) or _OF_THOSE.search(blanked)
    value = parse_number(apart.group(1) or apart.group(2)) if apart else None
    if value and 1 < value <= MAX_CARDS:
        out.gpus = [GpuCount(gpu=out.gpus[0].gpu, count=int(value), stated=True)]


def _first_use_case(text: str) -> UseCase | None:
    """Scientific when said; else training or inference, whichever the message states first — the purpose
    comes before the extras ('host Llama 70B for analysts, maybe fine-tune an 8B later' serves a model;
    'LoRA fine-tune it and then serve it' trains one)."""
    found: list[tuple[int, UseCase]] = [(m.start(), use_case) for use_case, pat in _USE_CASE_PATTERNS
                                         if (m := pat.search(text))]
    if any(use_case == "scientific" for _, use_case in found):
        return "scientific"
    return min(found)[1] if found else None


def _first_method(text: str) -> Method | None:
    """The method the message names first: the job asked for comes before the ones weighed beside it
    ('full fine-tune Llama 8B … also LoRA vs full FT quick opinion' is a full fine-tune)."""
    found = [(m.start(), rank, method) for rank, (method, pat) in enumerate(_METHODS) if (m := pat.search(text))]
    return min(found)[2] if found else None


def _read_use_case(r: _Reading) -> None:
    """Use case and method, with the ones the user rules out ('不训练', 'not LoRA') blanked first."""
    out, text = r.out, r.text
    negated = [(m.start(), m.end()) for m in _NEGATED.finditer(text)]
    done = vocab.cue("slot", "done_training")
    done_spans = [m.span() for m in done.finditer(text)] if done is not None else []
    if done_spans and not _OOM.search(text) and (_INFERENCE_WORDS.search(text) or _RUNS.search(text)
                                                 or _ENOUGH.search(text)):
        negated += done_spans  # 'I fine-tuned Llama 70B … serve it': the model's past, not the job
    else:
        done_spans = []
    r.masked, r.said = _mask(r.masked, negated), _mask(text, negated)
    out.use_case = _first_use_case(r.masked)
    if out.use_case is None and (_RUNS.search(r.masked) or done_spans):  # '跑', 'runs', a model already fine-tuned:
        out.use_case, out.use_case_weak = "inference", True  # inference unless the session knows better
    out.finetune = bool(_FINETUNE.search(r.said))
    out.method = _first_method(r.said)
    if out.method is None and _PRETRAIN.search(text):
        out.method = "pretrain"
    if out.use_case != "scientific" or _FP64_NEED.search(text):
        return
    if out.finetune or out.method:
        out.use_case = "training"
    elif out.model and _INFERENCE_WORDS.search(r.masked):
        out.use_case = "inference"  # 'serve a model on our HPC cluster': the cluster is where, not what


def _read_precision(r: _Reading) -> None:
    """Precision (QLoRA's NF4 base is implied by the method, not stated) and the KV cache's."""
    kv = _KV_FP8.search(r.masked)
    r.out.precision = _find_precision(_mask(r.masked, [kv.span()]) if kv else r.masked) or _named_checkpoint(r)
    if r.out.precision is None and vocab.matches("slot", "unquantized", r.masked):  # '不量化能跑吗': 16-bit weights
        r.out.precision = "bf16"
    if kv:
        r.out.kv_dtype = (kv.group(1) or kv.group(6)).lower()


def _named_checkpoint(r: _Reading) -> str | None:
    """The weight precision a checkpoint name in the message states ('Qwen2.5-72B-Instruct-AWQ' is 4-bit,
    'GLM-5-FP8' FP8), read as the CLI and the tools read it (tools.modelspec.checkpoint_precision)."""
    from tools.modelspec import checkpoint_precision  # tools sit below advisor

    for m in r.model_mentions:
        if len(m.ids) == 1 and (found := checkpoint_precision(m.text, r.cat.model(m.ids[0]))):
            return found
        rest = re.split(r"[,\s]", m.text, maxsplit=1)[1:]  # 'Qwen3-235B-A22B，FP8' read as one name: its tail
        if rest and (found := _find_precision(rest[0])):
            return found
    return None


def _read_dataset_tokens(r: _Reading) -> None:
    """A training set in tokens; its span is blanked from ``scan`` so '1B tokens' is not a model size."""
    spans: list[tuple[int, int]] = []
    for m in _DATASET_TOKENS.finditer(r.masked):
        value = scaled(m.group(1), m.group(2))
        if re.search(rf"上下文|context|ctx|每秒|窗口|window|{_SENT_WHOLE}", r.masked[max(0, m.start() - 14):m.start()],
                     _I):
            continue
        if (days := _per_period(r.masked, m.start(), m.end())) is not None:
            spans.append((m.start(), m.end()))  # '日均 2000 万 token', '50M tokens a day': traffic served, no data set
            if value:
                _read_traffic(r, value / days, m.start(), m.end())
            continue
        if value and value >= 1e5:
            r.out.dataset_tokens = value
            spans.append((m.start(), m.end()))
    bare = _BARE_VOLUME.search(_mask(r.masked, spans))
    if bare and r.out.daily_tokens is None and r.out.daily_input_tokens is None and r.out.daily_output_tokens is None \
            and not _MONEY_NEAR.search(r.masked[max(0, bare.start() - 8):bare.end() + 4]):
        value = scaled(bare.group("pre") or bare.group("num"), bare.group("pre_unit") or bare.group("unit"))
        monthly = re.search(r"月|month|mo\b", bare.group("period") or "", _I)
        if value:
            r.out.daily_volume = value / (DAYS_PER_MONTH if monthly else 1.0)
            spans.append(bare.span())
    corpus = _CORPUS_SIZE.search(r.masked) if r.out.dataset_tokens is None else None
    if corpus is not None and not _STORAGE_WORD.search(r.masked[corpus.end():corpus.end() + 12]):
        value = scaled(corpus.group(1), corpus.group(2))
        if value and value >= 1e8:
            r.out.dataset_tokens = value
            spans.append((corpus.start(1), corpus.end()))
    r.scan = _mask(_mask(r.masked, _names(r.text)), spans)


def _read_traffic(r: _Reading, per_day: float, start: int, end: int) -> None:
    """A day's tokens: output ('5M output tokens a day'), input, or both together ('每天调用 2000 万 token'); a
    split said beside them ('（输入占80%）', '主要是输入，约 85:15') shares the total out, it is no input total."""
    splits = [m.span() for share in (_OUTPUT_SHARE, _INPUT_SHARE, _IO_RATIO, _MOSTLY) for m in share.finditer(r.masked)]
    near = _mask(r.masked, splits)[max(0, start - 12):end + 12]
    said_output, said_input = _OUTPUT_WORD.search(near), _INPUT_WORD.search(near)
    if said_output and not said_input:
        r.out.daily_output_tokens = per_day
    elif said_input and not said_output:
        r.out.daily_input_tokens = per_day
    else:
        r.out.daily_tokens = per_day


def _read_api(r: _Reading) -> None:
    """The hosted API the buyer uses or weighs ('through GPT-4o-mini', '调用 DeepSeek API'), and the share of the
    traffic that is output ('~10% output', '输出占两成')."""
    from knowledge.api_prices import api_mentions

    named = api_mentions(r.text)
    if named and (_API_WORD.search(r.text) or not r.out.model):  # 'DeepSeek' alone is the open model
        r.out.api_model = named[0]
    if (m := _OUTPUT_SHARE.search(r.text)) and 0 < (pct := float(m.group(1) or m.group(2))) < 100:
        r.out.output_share = pct / 100
    elif (m := _INPUT_SHARE.search(r.text)) and 0 < (pct := float(m.group(1) or m.group(2))) < 100:
        r.out.output_share = round(1 - pct / 100, 4)
    elif share := _io_ratio_share(r.text):
        r.out.output_share = share
    elif _TINY_OUTPUT.search(r.text):  # 'outputs are a few tokens', '只输出一个标签': a label per request
        r.out.output_share = TINY_OUTPUT_SHARE
    for money in find_money(r.text):  # '$0.9 per million tokens', '每百万token 2元', '2元/百万token'
        if _PER_MILLION_AFTER.match(r.text[money.end:money.end + 24]) or \
                _PER_MILLION_BEFORE.search(r.text[max(0, money.start - 14):money.start]):
            r.out.api_quoted_per_m = Money(amount=money.amount, currency=money.currency or
                                           _default_currency(r.text, r.out.lang))
            r.claimed.append((money.start, money.end))
            break


_PER_MILLION_AFTER = re.compile(r"\s*(?:/|per|a|an|for|每)\s*(?:1\s*)?(?:m\b|mtok|million|百万|1m)\s*"
                                r"(?:input\s+|output\s+)?(?:tokens?|toks?|token|词元)?|\s*/\s*(?:1\s*)?m\b", _I)
_PER_MILLION_BEFORE = re.compile(r"(?:每|per)\s*(?:1\s*)?(?:百万|million|m)\s*(?:个\s*)?(?:tokens?|词元)?\s*"
                                 r"(?:约|大概|要|是|:|：)?\s*$", _I)


_CHAT_TURNS = re.compile(r"对话|会话|聊天|问答|客服|每次|每个人")
_OUTPUT_WORD = re.compile(r"output|generat|输出|生成", re.IGNORECASE)
_INPUT_WORD = re.compile(r"input|prompt|输入|提示词", re.IGNORECASE)
_API_WORD = re.compile(r"(?<![a-z])api(?![a-z])|接口|调用|through|via|openai", re.IGNORECASE)
_OUTPUT_SHARE = re.compile(r"(?<![\d.])(\d{1,2}(?:\.\d)?)\s*%\s*(?:is\s+|are\s+|of\s+(?:it|that|them)\s+)?"
                           r"(?:output|generat|输出|生成)"
                           r"|(?:output|输出|生成)\s*(?:share|is|are|占|约|大约|~|about|only)?\s*(?:约|~|about)?\s*"
                           r"(\d{1,2}(?:\.\d)?)\s*%", re.IGNORECASE)


_INPUT_SHARE = re.compile(r"(?<![\d.])(\d{1,2}(?:\.\d)?)\s*%\s*(?:is\s+|are\s+|of\s+(?:it|that|them)\s+)?"
                          r"(?:input|prompt|输入|提示)"
                          r"|(?:input|prompts?|输入|提示词)\s*(?:share|is|are|占|约|大约|~|about)?\s*(?:约|~|about)?\s*"
                          r"(\d{1,2}(?:\.\d)?)\s*%", re.IGNORECASE)
_RATIO = r"(\d{1,3}(?:\.\d+)?)\s*(?::|：|比|to|/)\s*(\d{1,3}(?:\.\d+)?)"
_IN_OUT = r"(?:input|in|prompts?|输入)\s*(?::|：|/|比|和|与|to|vs\.?)?\s*(?:output|out|completions?|输出)"
_IO_RATIO = re.compile(rf"{_IN_OUT}\s*(?:tokens?\s*)?(?:比例?|ratio|split)?\s*(?:是|为|of|is|=|约|大约|about|~|:|：)?"
                       rf"\s*(?:约|大约|about|~)?\s*{_RATIO}|{_RATIO}\s*(?:的\s*)?(?:{_IN_OUT})", re.IGNORECASE)


# replies of a label or a few tokens (classification, tagging): output is a sliver of the traffic
_TINY_OUTPUT = re.compile(r"(?:outputs?|answers?|replies|responses?|completions?)\s+(?:are|is)\s+(?:just\s+|only\s+)?"
                          r"(?:a few|a couple of|one or two|1-2|tiny|negligible|minimal|a single|one)\s*"
                          r"(?:tokens?|words?|labels?|class(?:es)?)?|"
                          r"输出(?:只有|就|只是|仅)?\s*(?:几个|一两个|一个|极少|很少)\s*(?:token|词元|词|标签|字)?|输出(?:很少|可以忽略)",
                          re.IGNORECASE)
TINY_OUTPUT_SHARE = 0.01  # a one-to-five-token label after a few hundred tokens of input
_MOSTLY = re.compile(rf"(?:mostly|mainly|largely|主要是|大部分是|多数是)\s*(input|prompts?|output|输入|输出|生成)"
                     rf"\W{{0,3}}(?:\w+\W+){{0,2}}?(?:约|大概|大约)?\s*{_RATIO}", re.IGNORECASE)


def _io_ratio_share(text: str) -> float | None:
    """'输入输出比 3:1', 'input:output 4:1', '5 to 1 prompt to completion', 'mostly input, maybe 90/10': the share
    of the tokens that is output."""
    if m := _IO_RATIO.search(text):
        given, taken = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    elif m := _MOSTLY.search(text):  # the larger part is the one said to dominate
        high, low = sorted((m.group(2), m.group(3)), key=float, reverse=True)
        given, taken = (low, high) if _OUTPUT_WORD.match(m.group(1)) else (high, low)
    else:
        return None
    tokens_in, tokens_out = float(given), float(taken)
    if tokens_in <= 0 or tokens_out <= 0:
        return None
    return round(tokens_out / (tokens_in + tokens_out), 4)


def _per_period(text: str, start: int, end: int) -> float | None:
    """The days of the period a quantity is counted over ('日均' 1, '/month' 30.4, 'an hour' 1/24), when it is one
    ('3M conversations/month'); None for a plain count."""
    before, after = re.split(r"[，,。；;！!？?\n]", text[max(0, start - 30):start])[-1], text[end:end + 14]
    if not (_SERVING_VOLUME.search(before) or _SERVING_VOLUME_AFTER.match(after)):
        return None
    said = f"{before} {after}".lower()
    if re.search(r"月|month|/\s*mo\b", said):
        return DAYS_PER_MONTH
    if re.search(r"小时|hour|/\s*h(?:r)?\b", said):
        return 1 / 24
    return 1.0


# a volume per period with no unit ('grows to 500M/day', '涨到每天 5 亿'): the traffic under discussion, in its unit
_BARE_VOLUME = re.compile(rf"(?:每天|每日|日均|一天)\s*(?:要?处理|跑|调用|涨到|增加到|到)?\s*"
                          rf"(?P<pre>{N})\s*(?P<pre_unit>万|亿)(?![元块钱])|"
                          rf"(?P<num>{N})\s*(?P<unit>k|m|b|万|亿|million|billion)(?![a-z])\s*"
                          r"(?P<period>/\s*(?:day|天|日|month|月|mo)\b|(?:a|per|each|every)\s+(?:day|month)\b|每天|每日|"
                          r"一天|每月|daily)", _I)
_MONEY_NEAR = re.compile(r"花|费|元|块|钱|预算|spend|cost|pay|bill|[$¥€£]", _I)
# a token count per period is the traffic a service handles, not a training set
_SERVING_VOLUME = re.compile(r"日均|每天|每日|一天|天均|每个?月|一个月|月均|每小时|daily|monthly|"
                             r"(?:per|a|each|every)\s+(?:day|month|hour)", _I)
_SERVING_VOLUME_AFTER = re.compile(r"\s*(?:每天|每日|一天|每月|/\s*(?:天|日|月|day|month|mo|hr|hour|h)\b|"
                                   r"(?:a|per|each|every)\s+(?:day|month|hour)|daily)", _I)


def _read_params(r: _Reading) -> None:
    for m in _PARAMS.finditer(r.scan):
        r.claimed.append(m.span())  # '7B 那个方案要花多少钱': a model's size, never ¥7bn
        if m.group(1):
            value = parse_number(m.group(1))
        else:
            base = parse_number(m.group(4))
            value = base / 10 if base else None  # 700亿 = 70B
        if value and 0.01 <= value <= 10_000:
            r.out.params_b = value


_FROM_SCRATCH = re.compile(r"pre-?train|from scratch|预训练|从头(?:训|开始)", _I)


_WEIGHTS_SIZE = re.compile(rf"(?:checkpoint|weights?|weight files?|model files?|safetensors|权重(?:文件)?|模型文件)"
                           rf"[^\d\n]{{0,10}}?({NUMBER_RE})\s*(?:多)?\s*(?:g|gb|gib)(?![a-z])|"
                           rf"({NUMBER_RE})\s*(?:多)?\s*(?:g|gb|gib)\s*(?:的)?\s*"
                           rf"(?:checkpoint|weights?|权重|模型文件)", _I)
_BYTES_PER_PARAM = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "fp8": 1.0, "int8": 1.0, "int4": 0.55, "awq": 0.55,
                    "gptq": 0.55, "nf4": 0.55}


def _read_weights_size(r: _Reading) -> None:
    """'checkpoint 62GB in bf16', '权重文件大概68G', '60多G的权重': with no size said, the parameters the weights
    hold at their precision (16-bit when none is said), said back."""
    out = r.out
    m = _WEIGHTS_SIZE.search(r.text)
    if out.params_b is not None or out.model is not None or m is None:
        return
    gb = parse_number(m.group(1) or m.group(2))
    per = _BYTES_PER_PARAM.get((out.precision or "bf16").lower(), 2.0)
    if gb and 0.1 <= gb <= 5000:
        out.params_b = round(gb / per, 1)
        out.readback.append(("nlu.readback.params_from_weights", {"gb": gb, "params": out.params_b,
                                                                   "bytes": per}))


def _read_unknown_model(r: _Reading) -> None:
    """A model name the catalog lacks ('run Foobar-Large on a 3090'), when no catalog model was read."""
    if r.out.model is None:
        taken = [(m.start, m.end) for m in r.gpu_mentions + r.model_mentions]
        taken += [m.span() for m in _GPU_LIKE.finditer(r.text)]
        r.out.unknown_model = unknown_model(r.text, taken, r.cat)


_LLM_WORD = re.compile(r"\bllms?\b|\bollama\b|llama\.cpp|\blm studio\b|大模型|语言模型|\bchatbots?\b|聊天模型|"
                       r"tokens?\s*/\s*s\b|每秒.{0,4}(?:字|token)", _I)


def _read_media_beside(r: _Reading) -> None:
    """An image model named beside a language model ('跑 R1 32B 蒸馏版和画图（flux）'): the language model is sized
    and compared, the image model checked on the same cards (``side_media``)."""
    out = r.out
    media = [m.ids[0] for m in r.model_mentions if r.cat.model(m.ids[0]).kind == "diffusion"]
    if out.model is None or not media:
        return
    if r.cat.model(out.model).kind != "diffusion":  # the language model leads already: the image model beside it
        out.side_media = media[0]
        return
    others = [m for m in r.model_mentions if all(r.cat.model(i).kind != "diffusion" for i in m.ids)]
    own_size = r.cat.model(out.model).params_b
    llm_said = _LLM_WORD.search(r.text) is not None  # 'local LLMs … but want to try flux too': no LLM named
    if not others and (out.params_b is None or out.params_b == own_size) and not llm_said:
        return
    out.side_media = out.model
    out.model = (others[0].ids[0] if len(others[0].ids) == 1 else _pick(r.cat, others[0].ids)) if others else None


_DISMISSED = re.compile(r"\b(?:forget|drop|skip|scrap|ditch|never ?mind|no more)\s+(?:about\s+)?(?:the\s+)?"
                        r"([a-z][\w.\-]{0,30})|(?:不要|不用|别用|不考虑|不跑)\s*([a-z][\w.\-]{0,30})|"
                        r"(?<![\w.\-])([a-z][\w.\-]{0,30})\s*(?:算了|不要了|不考虑了|先不考虑)", _I)  # bounded


def _read_model(r: _Reading) -> None:
    """The catalog model: named, or guessed from a family word and a size; its size then comes from it."""
    out, text = r.out, r.text
    if out.model is None and not _FROM_SCRATCH.search(text):  # a model pre-trained from scratch is the buyer's own
        dismissed = [m.span(m.lastindex or 0) for m in _DISMISSED.finditer(r.scan)]  # 'forget deepseek': not it
        guess = _guess_model(_mask(r.scan, dismissed), out.params_b, r.cat)
        if guess:
            out.model, out.model_guess = guess, True
    elif out.model == "deepseek-r1" and _DISTILL.search(text) and not _NOT_DISTILL.search(text):
        # 'r1 蒸馏 32b' is the Qwen-32B distill; 'R1 蒸馏版' with no size the largest Qwen one (said as a guess)
        out.model_guess = out.params_b is None
        out.model = _r1_distill(text, out.params_b or R1_DISTILL_DEFAULT_B, r.cat) or out.model
    out.model = _full_deepseek(text, out.model, out.params_b, r.context)
    if out.model:
        out.params_b = r.cat.model(out.model).params_b


WORKLOAD_REACH = 40  # characters between a training method and the model or size it is said of

_SERVE_WORD = re.compile(r"\bserv(?:e|es|ing)\b|\binferenc\w*|\bdeploy\w*|\bhost(?:ing)?\b|\brun(?:s|ning)?\b|"
                         r"\bchat\w*|推理|部署|上线|跑(?!训|一下训|微调)|聊天|问答|对话|给.{0,12}用", _I)
_TRAIN_WORD = re.compile(r"pre-?train\w*|\btrain\w*|fine[- ]?tun\w*|from scratch|\blora\b|\bqlora\b|训练|微调|预训练|"
                         r"全参|从头", _I)


def _job_verbs(said: str) -> list[tuple[int, int, str]]:
    """Where the message serves and where it trains: (start, end, 'serve' | 'train') for each verb."""
    return [(m.start(), m.end(), "serve") for m in _SERVE_WORD.finditer(said)] + \
        [(m.start(), m.end(), "train") for m in _TRAIN_WORD.finditer(said)]


def _use_near(verbs: list[tuple[int, int, str]], start: int, end: int) -> str | None:
    """The job of the verb nearest a span (a model or a size), when one is within reach."""
    gap, use = min(((max(vs - end, start - ve, 0), use) for vs, ve, use in verbs), key=lambda x: x[0])
    return use if gap <= WORKLOAD_REACH else None


def _read_trained_model(r: _Reading) -> None:
    """A training job and a serving job in one message ('full fine-tune 7B-13B and run inference on Qwen2.5-32B',
    'continue-pretrain a 30B and later serve DeepSeek-V3'): the training is sized on the model or size said with
    the training, not on the one said with the serving (the serving one is kept as ``served_model``)."""
    out = r.out
    if out.use_case != "training" or out.model is None:
        return
    verbs = _job_verbs(r.said)
    if not any(v[2] == "serve" for v in verbs) or not any(v[2] == "train" for v in verbs):
        return

    def use_of(start: int, end: int) -> str | None:
        return _use_near(verbs, start, end)

    named = [m for m in r.model_mentions if out.model in m.ids]
    if not named or any(use_of(m.start, m.end) != "serve" for m in named):
        return
    sizes = [(m.start(), m.end(), parse_number(m.group(1))) for m in _PARAMS.finditer(r.scan) if m.group(1)]
    trained = [v for s0, e0, v in sizes if v and use_of(s0, e0) == "train" and 0.1 <= v <= 10_000]
    models = [m for m in r.model_mentions if use_of(m.start, m.end) == "train" and out.model not in m.ids]
    if not (trained or models):
        return
    out.served_model = out.model
    if models:
        out.model = models[0].ids[0] if len(models[0].ids) == 1 else _pick(r.cat, models[0].ids)
        out.params_b = r.cat.model(out.model).params_b
    else:  # '7B-13B': the largest size said is the one the hardware must hold
        out.model, out.params_b = None, max(trained)
    if _serving_leads(r.said, verbs):
        _serve_first(r)


def _read_sized_jobs(r: _Reading) -> None:
    """'serving 70B-class models to ~100 students + some fine tuning of 7B models': two sizes, one said with the
    serving and one with the training — the served size is sized, the training kept as the side job."""
    out = r.out
    if out.use_case != "inference" or out.model is not None or out.side_training is not None:
        return
    verbs = _job_verbs(r.said)
    sizes = [(m.start(), m.end(), parse_number(m.group(1))) for m in _PARAMS.finditer(r.scan) if m.group(1)]
    if not verbs or len(sizes) < 2:
        return
    served = [v for a, b, v in sizes if v and _use_near(verbs, a, b) == "serve"]
    trained = [v for a, b, v in sizes if v and _use_near(verbs, a, b) == "train"]
    if served and trained:
        out.params_b = max(served)
        out.side_training = Workload(model=None, params_b=max(trained), method=out.method or "lora")
        out.finetune, out.method = False, None


_PRIMARY = re.compile(r"主要|主力|首先|\bmain(?:ly)?\b|\bmostly\b|\bprimar(?:y|ily)\b", _I)
_SECONDARY = re.compile(r"顺便|顺带|另外|偶尔|也想|还想|以后|之后|后面|\bon the side\b|\balso\b|\boccasional\w*|"
                        r"\bsometimes\b|\blater\b|\bmaybe\b|\bplus\b", _I)
MARKER_REACH = 12  # characters between 'mainly' / '顺便' and the verb it weighs


def _serving_leads(said: str, verbs: list[tuple[int, int, str]]) -> bool:
    """'主要想跑 72B 给组里用，顺便做 7B 的 LoRA': the serving is the main job, the training the side one."""
    def marked(pattern: re.Pattern[str], use: str) -> bool:
        return any(m.end() <= start and start - m.end() <= MARKER_REACH
                   for m in pattern.finditer(said) for start, _, kind in verbs if kind == use)
    return (marked(_SECONDARY, "train") or marked(_PRIMARY, "serve")) and not marked(_PRIMARY, "train")


def _serve_first(r: _Reading) -> None:
    """The served model becomes the one sized (inference); the training job is kept to check on the same machine."""
    out = r.out
    method = out.method or ("full" if out.finetune and out.method is None else "lora")
    out.side_training = Workload(model=out.model, params_b=None if out.model else out.params_b, method=method)
    out.model, out.served_model = out.served_model, None
    out.params_b = r.cat.model(out.model).params_b if out.model else None
    out.use_case, out.method, out.finetune = "inference", None, False


def _read_workloads(r: _Reading) -> None:
    """Several training jobs in one message ('主要做 8B 全参微调，偶尔 QLoRA 70B', 'LoRA on 7B-13B, sometimes a full
    fine-tune of a 7B'): each method said goes with the model or size nearest to it; two or more different jobs
    are kept (the plan sizes the hardest and says the others fit)."""
    subjects: list[tuple[int, int, str | None, float | None]] = [
        (m.start, m.end, m.ids[0] if len(m.ids) == 1 else _pick(r.cat, m.ids), None) for m in r.model_mentions]
    for m in _PARAMS.finditer(r.scan):
        value = parse_number(m.group(1)) if m.group(1) else None
        if value and 0.1 <= value <= 10_000:
            subjects.append((m.start(), m.end(), None, value))
    methods = [(m.start(), m.end(), method) for method, pat in _METHODS for m in pat.finditer(r.said)]
    if len(methods) < 2 or not subjects:
        return
    jobs: list[Workload] = []
    for start, end, method in sorted(methods):
        gap, _, model, size = min(((max(s - end, start - e, 0), s, model, size) for s, e, model, size in subjects),
                                  key=lambda x: (x[0], x[1]))
        if gap > WORKLOAD_REACH:
            continue
        job = Workload(model=model, params_b=None if model else size, method=method)
        if job not in jobs:
            jobs.append(job)
    if len(jobs) >= 2:
        r.out.workloads = jobs


def _full_deepseek(text: str, model: str | None, params_b: float | None, context: bool = False) -> str | None:
    """'671b 满血版' is how people name the full DeepSeek-R1 ('满血 V3' the full V3); in a follow-up ('能跑 FP8 满血版
    吗') a bare '满血版' is the model already talked about."""
    if "满血" not in text:
        return model
    v3 = re.search(r"\bv3\b", text, _I)
    named = params_b == 671 or (params_b is None and (not context or re.search(r"deepseek|\br1\b|深度求索", text, _I)))
    if not re.search(r"v3", text, _I) and (model == "deepseek-v3" or (model is None and named)):
        return "deepseek-r1"  # '能跑 FP8 满血版吗' alone in a follow-up is the model already talked about
    if model is None and v3:
        return "deepseek-v3"
    return model


_CONTEXT_PATTERNS = ((_CONTEXT_AFTER, 1, 2), (_CONTEXT_BEFORE, 4, 5), (_CONTEXT_OF_CHATS, 1, 2),
                     (_CONTEXT_OF_REQUESTS, 1, 2), (_CONTEXT_OF_DOC, 1, 2))


def _context_value(m: re.Match[str], g_num: int, g_mult: int) -> float | None:
    """The tokens a context match says: '32k' is 32,768; a bare '32' next to 'context' means 32k; '1M' 1,048,576."""
    base = parse_number(m.group(g_num))
    if base is None:
        return None
    unit = (m.group(g_mult) or "").lower()
    if unit == "k" or (not unit and base < 1000 and re.search(r"\d", m.group(g_num))):
        return base * (1024 if base in _POW2 else 1000)
    if unit == "m":  # Llama 4 and Qwen long-context models
        return base * (1024**2 if base in _POW2 else 1e6)
    return scaled(m.group(g_num), unit or None) or base


_PER_SAMPLE = re.compile(r"^\s*(?:each(?!\s*(?:user|person|request|chat|session))|apiece|"
                         r"per (?:sample|example|row|item|record|conversation|doc\w*)|"
                         r"/\s*(?:sample|example)|左右\s*(?:一条|每条)|每条)", _I)
_PER_SAMPLE_BEFORE = re.compile(r"(?:avg|average|平均|每条|每个样本|each sample|per sample)\D{0,12}$", _I)


def _read_context(r: _Reading) -> None:
    out = r.out
    for pat, g_num, g_mult in _CONTEXT_PATTERNS:
        m = pat.search(r.scan)
        if m and (_PER_SAMPLE.match(r.scan[m.end():]) or _PER_SAMPLE_BEFORE.search(r.scan[:m.start()])):
            continue  # '20k samples, avg 1.5k tokens each': a sample's length, read as tokens per sample
        value = _context_value(m, g_num, g_mult) if m else None
        if value is None:
            continue
        if 16 <= value <= 20_000_000:
            out.context_tokens = round(value)
            break
        if value > 20_000_000:
            out.unusable["context_tokens"] = value
    bare = _BARE_CONTEXT.match(r.text) if r.context and out.context_tokens is None else None
    # '$32k' is money; a bare power-of-two 'k' after an answer is its context
    if bare and int(bare.group(1)) in _POW2[1:] and not re.search(r"[$¥￥€£]", r.text):
        out.context_tokens = int(bare.group(1)) * 1024


# a request's two halves, each a token count beside its word: 'avg prompt 2k tokens, answers 300 tokens',
# '输入 2000 token，输出 500 token', '2k-token prompts and 300-token replies'
_TOKENS = rf"({N})\s*(k|K)?\s*(?:-?\s*tokens?|个?\s*token|字)?"
_PROMPT_WORD = r"(?:prompts?|inputs?|questions?|queries|输入|提问|问题|提示词)"
_ANSWER_WORD = r"(?:answers?|outputs?|repl(?:y|ies)|responses?|completions?|generations?|输出|回答|回复|生成|补全)"
_IN_OUT_PAIR = re.compile(rf"({N})\s*(k|K)?\s*(?:tokens?\s+)?in\b[^.;!?\n]{{0,16}}?({N})\s*(k|K)?\s*"
                          rf"(?:tokens?\s+)?out\b", _I)
_FILLER = r"(?:\s|avg|average|around|about|of|is|are|~|≈|:|：|长度|大约|大概|平均|约|在|为|是|左右|each|typically)*"


TOKENS_PER_PAGE = 650  # a page of prose is about 500 words; English runs about 0.75 words a token
_PAGES = re.compile(rf"({N})\s*(?:-?\s*pages?\b|页)(?=[^，,。.;；!?？\n]{{0,24}}(?:contract|document|pdf|report|paper|"
                    rf"book|file|合同|文档|论文|报告|文件|资料|材料|书))|(?<=long)[^.;!?\n]{{0,12}}?({N})\s*pages?\b|"
                    rf"(?:contract|document|pdf|report|paper|file|book|合同|文档|论文|报告|文件)[^，,。;；!?？\n]{{0,24}}?"
                    rf"({N})\s*(?:pages?\b|页)", _I)
_PASTED = re.compile(rf"(?:\bpast(?:e|es|ed|ing)|\bfeed(?:s|ing)?|\bdump(?:s|ing)?|\bdrop(?:s|ping)? in|粘贴|贴进?去?|"
                     rf"丢进?去?|塞进?去?|喂)(?:\s*(?:in|into it|like|about|around|maybe|up to|a|an|~|大概|大约|约|"
                     rf"一个|个|了)\s*)*\s*({N})\s*(k|K)?\s*(?:-?\s*tokens?|个?\s*token|字|(?:的)?\s*(?:长)?\s*"
                     rf"(?:文档|文本|合同|代码|文件|prompt)|-?\s*(?:token\s+)?(?:document|doc|file|contract|prompt)s?)",
                     _I)


def _length_beside(word: str, text: str) -> float | None:
    """The token count said right after ``word`` ('answers 300 tokens') or right before it ('300-token answers')."""
    for m in re.finditer(rf"{word}{_FILLER}{_TOKENS}|{_TOKENS}\s*(?:的)?\s*{word}", text, _I):
        num, mult = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        value = parse_number(num)
        if value is None:
            continue
        value *= 1000 if (mult or "").lower() == "k" else 1
        if 16 <= value <= 2_000_000:
            return value
    return None


def _read_turn_lengths(r: _Reading) -> None:
    """A prompt's and an answer's length said together: the context is their sum, the prompt is what the first
    token waits for."""
    prompt, answer = _length_beside(_PROMPT_WORD, r.scan), _length_beside(_ANSWER_WORD, r.scan)
    if answer is not None:
        r.out.answer_tokens = round(answer)
    pages = _PAGES.search(r.scan)
    if pages and answer is None and prompt is None and not _PASTED.search(r.scan):
        count = parse_number(next(g for g in pages.groups() if g))  # '80-page contracts': ~650 tokens a page
        if count and 1 <= count <= 2000 and r.out.context_tokens is None:
            r.out.prompt_tokens = r.out.context_tokens = round(count * TOKENS_PER_PAGE)
            r.out.readback.append(("nlu.readback.pages", {"pages": count, "tokens": r.out.prompt_tokens}))
        elif count and 1 <= count <= 2000:  # '80 pages … 32k context open': the context said is the one sized
            r.out.prompt_tokens = min(round(count * TOKENS_PER_PAGE), r.out.context_tokens or 0)
        return
    pasted = _PASTED.search(r.scan)
    if pasted and answer is None:  # 'I paste like 20k tokens of code at once': the prompt the first token waits for
        value = parse_number(pasted.group(1))
        if value is not None and pasted.group(2):  # '32k' is 32,768 as context lengths are counted, '20k' 20,000
            value *= 1024 if value in _POW2 else 1000
        if value is not None and 16 <= value <= 2_000_000:
            r.out.prompt_tokens = round(value)
            r.out.context_tokens = max(r.out.context_tokens or 0, round(value))
        return
    if (prompt is None or answer is None) and (pair := _IN_OUT_PAIR.search(r.scan)):  # '1500 tokens in, 300 out'
        prompt, answer = (scaled(pair.group(i), pair.group(i + 1)) for i in (1, 3))
    if prompt is None or answer is None:
        return
    r.out.prompt_tokens = round(prompt)
    if r.out.context_tokens is None or r.out.context_tokens in (round(prompt), round(prompt * 1.024)):
        r.out.context_tokens = round(prompt + answer)


_MICRO_BATCH = re.compile(rf"(?:micro[-_ ]?batch(?:[-_ ]?size)?|batch[-_ ]?size|(?<![a-z])m?bs|(?<![a-z])batch|"
                          rf"批次?大小|批大小)\s*(?:=|:|：|of|is|还是|改成|改为|设为|设成|为|是|到|拉到|开到)?\s*({N})"
                          rf"(?!\s*(?:k|K|万|tokens?|gb|GB))", _I)


def _read_micro_batch(r: _Reading) -> None:
    """'batch 4', 'bs=8', 'micro-batch 2': the sequences a training step holds on one GPU (a plan for serving reads
    the same words as concurrent sequences)."""
    m = _MICRO_BATCH.search(r.scan)
    value = parse_number(m.group(1)) if m else None
    if value and 1 <= value <= 4096 and value == int(value):
        r.out.micro_batch = int(value)


def _read_concurrency(r: _Reading) -> None:
    out = r.out
    if _SINGLE_USER.search(r.text):
        out.concurrency = 1
    people = _PEOPLE.search(r.scan)
    if people:
        value = parse_number(next(g for g in people.groups() if g))
        if value and 1 <= value <= 1_000_000:
            out.concurrency = int(value)
    training = bool(out.finetune or out.method or out.use_case == "training")
    for pat, g_num, g_opt_mult in ((_CONCURRENCY_AFTER, 1, None), (_CONCURRENCY_BEFORE, 5, 6)):
        m = pat.search(r.scan)
        if m is None or (pat is _CONCURRENCY_BEFORE and training and "batch" in m.group(0).lower()):
            continue  # a training batch is a micro-batch, not users
        if pat is _CONCURRENCY_BEFORE and A_LENGTH.match(r.scan, m.end()):
            continue  # '并发 32k 上下文': a number of tokens is a context
        value = _first_number(m, g_num, g_opt_mult)
        too_many_users = pat is _CONCURRENCY_AFTER and m.group(3).lower() in ("users", "user") and value \
            and value > 100_000
        if value and 1 <= value <= 1_000_000 and not too_many_users:
            out.concurrency = int(value)
            break
        if value and value > 1_000_000:
            out.unusable["concurrency"] = value


# 'N users' (用户, seats) counts a service's users at once, as serving people say it; 'N 人', staff, students
# count people, of whom some use it at once
_USERS_WORD = re.compile(r"^[kK]?\s*(?:个|位|名)?\s*(?:users?|用户|seats)\b", _I)
SMALL_GROUP = 30  # up to this many people are sized as all using it at once
# a day's users of a service (DAU) use it a few minutes each: about 2 % at once in the busiest hour (assumed, said
# back), never fewer than a handful
DAILY_PEAK_SHARE = 0.02
DAILY_FLOOR = 5
_DAU = re.compile(r"\bdau\b|日活|daily active", re.IGNORECASE)
PEAK_SHARE = 0.1  # of a larger group, about one in ten at once at peak (said back, the user corrects it)


def peak_users(people: float) -> int:
    """Users at once at peak among ``people`` who use a service: all of a small group, else about a tenth (not
    fewer than a small group's worth)."""
    return int(people) if people <= SMALL_GROUP else max(SMALL_GROUP, math.ceil(people * PEAK_SHARE))


def _read_people(out: Parsed, found: dict[tuple[str, str | None], float], quantities: list[Quantity]) -> None:
    """Everyone who may use it and how many at once, said back when they differ or only the first is known: a
    head count or a day's users with no peak said is sized at :func:`peak_users`."""
    head, at_once = found.get(("people", "head_count")), found.get(("people", "simultaneous"))
    daily = found.get(("people", "daily"))
    unmarked = [q.value for q in quantities if q.unit == "people" and q.role is None]
    if head is None and at_once is not None:  # '2,000 staff but 60 concurrent': the larger, unmarked one is all
        head = max((v for v in unmarked if v > at_once), default=None)
    if at_once and 1 <= at_once <= 1_000_000:
        if head and 1 <= head <= 10_000_000:
            out.head_count = int(head)
        out.concurrency = int(at_once)
        if out.head_count and out.head_count > at_once:
            out.readback.append(("nlu.readback.simultaneous", {"users": at_once, "head_count": out.head_count}))
        return
    if head is None and daily and 1 <= daily <= 100_000_000 and _DAU.search(out.text):  # an app's users, not staff
        out.head_count = int(daily)
        out.concurrency = max(math.ceil(daily * DAILY_PEAK_SHARE), min(int(daily), DAILY_FLOOR))
        out.readback.append(("nlu.readback.daily_peak", {"users": out.concurrency, "daily": daily,
                                                         "share": DAILY_PEAK_SHARE * 100}))
        return
    total = head or daily or max(unmarked, default=None)
    if total and 1 <= total <= 10_000_000:
        out.head_count = int(total)
        out.concurrency = peak_users(total)
        if out.concurrency < total:
            out.readback.append(("nlu.readback.peak_assumed", {"users": out.concurrency, "head_count": total,
                                                               "share": PEAK_SHARE * 100, "floor": SMALL_GROUP}))
        elif total > 1:  # a team sized as all at once: the most it can load, said back
            out.readback.append(("nlu.readback.all_at_once", {"users": out.concurrency}))


def _read_quantities(r: _Reading) -> None:
    """Quantities with units as typed spans (:mod:`advisor.nlu.quantities`): simultaneous users beside a head
    count, per-user speed and first-token targets, a rack's power, a cost horizon. Names and dates are blanked
    first, so 'EPYC 9654' or '2024 年' is never a quantity."""
    out = r.out
    names = r.names_and_dates + [(m.start, m.end) for m in r.gpu_mentions + r.model_mentions]
    quantities = read_quantities(r.text, names)
    r.claimed += [(q.start, q.end) for q in quantities]  # people, kW, atoms …: never read again as money
    found = {(q.unit, q.role): q.value for q in reversed(quantities)}
    _read_people(out, {k: v for k, v in found.items() if k != ("people", None)},
                 [q for q in quantities if not _USERS_WORD.match(r.text[q.end:q.end + 12])])
    share = _SHARE_AT_ONCE.search(r.scan)
    if share and out.concurrency is None and _AT_ONCE.search(r.scan):  # 'half of them at the same time'
        word = next(g for g in share.groups() if g).lower()
        out.people_share = float(word) / 100 if word.isdigit() else _SHARES.get(word)
    out.tokens_per_s_target = found.get(("tokens_per_s", "per_user"))
    out.ttft_target_s = found.get(("seconds", "ttft"))
    out.rack_kw = found.get(("kilowatts", "rack"))
    out.years = found.get(("years", "horizon"))
    mfu = found.get(("mfu_percent", None))
    out.mfu = mfu / 100 if mfu and 1 <= mfu <= 100 else None
    per_sample = next((q for q in quantities if q.unit == "tokens_per_sample"), None)
    if per_sample and 1 <= per_sample.value <= 1_000_000:
        out.tokens_per_sample = per_sample.value
        if out.context_tokens in (round(per_sample.value), round(per_sample.value * 1.024)):
            out.context_tokens = None  # '~1k tokens per sample' is the samples' length, not a context


_SHARES = {"half": 0.5, "a third": 1 / 3, "one third": 1 / 3, "a quarter": 0.25, "one quarter": 0.25,
           "a fifth": 0.2, "一半": 0.5, "半数": 0.5, "三分之一": 1 / 3, "四分之一": 0.25, "五分之一": 0.2}
_SHARE_AT_ONCE = re.compile(r"\b(half|a third|one third|a quarter|one quarter|a fifth)\s+(?:of\s+)?"
                            r"(?:them|us|the\s+\w+|our\s+\w+|everyone|staff|people)|"
                            r"(?:人|员工|用户|同事|学生|大家)(?:里|中|当中)?(?:有|的)?\s*(一半|半数|三分之一|四分之一|五分之一)|"
                            r"(一半|半数|三分之一|四分之一|五分之一)(?=\s*(?:的)?\s*(?:人|员工|用户|同事|学生))|"
                            r"(?<![\d.])(\d{1,2})\s*%\s*(?:of\s+(?:them|us|the\s+\w+|staff|people)|的人)", _I)
_AT_ONCE = re.compile(r"same time|at once|concurrent|simultaneous|同时|并发|一起", _I)


# what may stand between a card's name and its price: memory, a variant, a verb or word of price, an 'about'
_PRICE_GAP = re.compile(
    r"^(?:[\s\-–—:：(（)）~≈@/]|\d{1,3}\s*(?:gb|g)\b|\d{1,3}\s*(?:gb|g)(?=[\s\u3400-\u9fff])|pcie\d?|sxm\d?|nvl|版|的|"
    r"cards?|gpus?|modded|used|second-?hand|refurb\w*|mined|blower|turbo|\bis\b|\bare\b|go(?:es)? for|sells? for|"
    r"locally|local|nearby|here|listed|offered|asking|on (?:ebay|craigslist|marketplace|facebook marketplace)|"
    r"costs?|\bfor\b|\bat\b|about|around|roughly|approx\w*|only|just|each|apiece|now|rn|instead|under|less than|"
    r"魔改|改|矿卡|二手|全新|涡轮|约|大概|大约|差不多|要|卖|才|只要|一张|每张|一块|每块|单卡|报价|价格|售价|价钱|现在|在|是|为|"
    r"租金?|租价|云上|带转接板|转接板|带散热|转|闲鱼|淘宝|收)*$",
    _I)
# '15 元/卡时', '$2.5 per GPU-hour', '0.6 元一度': a rate, never a price or a budget
_RATE_AFTER = re.compile(r"^\s*(?:钱)?\s*(?:/|per\b|an?\s+(?:hour|month)|一小时|每小时|每月|一个月|一度|每度|每卡时|"
                         r"一卡时)", _I)
_HOURLY = re.compile(r"^\s*(?:钱)?\s*(?:/\s*(?:gpu[-\s·]*)?(?:h|hr|hour)\b|per\s+(?:gpu[-\s]*)?hour|an?\s+hour|"
                     r"一小时|每小时|/\s*(?:卡)?(?:小)?时|每卡时|一卡时)", _I)
UNIT_PRICE_REACH = 32  # characters from a card's name to the price said for it ('Tesla P40 24GB ~$300')


def _read_card_prices(r: _Reading) -> None:
    """A price written right after a card's name, before the next name or clause ('P40 24GB ~$300, 3090 ~$750',
    '矿卡3090 24G 4500块', '4090 48GB cards for about 23,000 RMB each') is that card's unit price: never a budget.
    A server's or a total's price, a rent rate and a price per kWh are not."""
    names: list[tuple[int, int, str | None]] = [(m.start, m.end, m.ids[0] if len(m.ids) == 1 else _pick(r.cat, m.ids))
                                                for m in r.gpu_mentions]
    names += [(m.start(), m.end(), None) for m in _GPU_LIKE.finditer(r.masked)]  # 'MI50 ~$150': not a budget either
    names.sort()
    for i, (_, end, gid) in enumerate(names):
        window = r.text[end:min([end + UNIT_PRICE_REACH, len(r.text)] + [n[0] for n in names[i + 1:i + 2]])]
        cut = re.search(r"[。；;!?！？\n]|\.\s", window)
        window = window[:cut.start()] if cut else window
        money = _unit_price(window, r.out.lang)
        if money is None or not _PRICE_GAP.match(window[:money[0]]):
            continue
        after = r.text[end + money[1]:end + money[1] + 12]
        hourly = bool(_HOURLY.match(after))
        if not hourly and (_RATE_AFTER.match(after) or money[2].amount < 20):
            continue  # a price per kWh or per month; a bare small number
        gid = _memory_variant(r.cat, gid, r.text[end:end + 12]) if gid is not None else None  # '2080 Ti 魔改 22G'
        if gid is not None and hourly:  # 'A100 8 元/卡时，4090 是 2 元/卡时': each card's rent
            r.out.card_rates.setdefault(gid, money[2])
        elif gid is not None:
            r.out.card_prices.setdefault(gid, money[2])
        r.claimed.append((end + money[0], end + money[1]))
    _read_price_said_after(r, names)


_THEY_COST = re.compile(r"(?:they'?re|theyre|they are|those are|it'?s|each (?:is|goes for|costs)|(?:they )?go(?:es)? "
                        r"for|selling for|asking)\s*(?:like|about|around|roughly|~|only|just)?\s*", _I)


def _read_price_said_after(r: _Reading, names: list[tuple[int, int, str | None]]) -> None:
    """'MI50 32gb instead? theyre like $120 on ebay': a price said of the one card named, in the next sentence."""
    cards = {gid for _, _, gid in names if gid}
    if len(cards) != 1 or r.out.card_prices:
        return
    for m in _THEY_COST.finditer(r.text):
        money = _unit_price(r.text[m.end():m.end() + 16], r.out.lang)
        if money is not None and money[0] == 0 and money[2].amount >= 20:
            r.out.card_prices[next(iter(cards))] = money[2]
            r.claimed.append((m.end() + money[0], m.end() + money[1]))
            return


def _unit_price(window: str, lang: Lang | None) -> tuple[int, int, Money] | None:
    """The first amount of money in ``window`` (with a currency, or in 万): its span and value."""
    found = [(x.start, x.end, Money(amount=x.amount, currency=x.currency or _default_currency(window, lang)))
             for x in find_money(window) if x.amount > 0]
    found += [(a.start, a.end, Money(amount=a.value, currency="CNY")) for a in find_amounts(window)
              if ("万" in a.text and a.value >= 1000) or (lang == "zh" and "千" in a.text and a.value >= 100)]
    found += [(m.start(1), m.end(1), Money(amount=float(m.group(1)), currency=_default_currency(window, lang)))
              for m in _BARE_PRICE.finditer(window) if lang == "zh" and float(m.group(1)) >= 100]  # '400 多一张'
    return min(found, key=lambda f: f[0]) if found else None


# a bare number said as a price in Chinese: hundreds to tens of thousands, then a price word or the clause's end
_BARE_PRICE = re.compile(r"(?<![\d.])(\d{3,6})"
                         r"(?!\s*(?:[kKgGwW]|tb|TB|万|亿|\d|[.]\d|个|张卡|人|小时|天|年|月|度|瓦|tokens?))"
                         r"(?=\s*(?:多|左右|上下|一张|每张|一块|块|元|出头|$|[，,、；;。）)]))")


def _read_budget(r: _Reading) -> None:
    out = r.out
    out.budget, negative_budget = _find_budget(_mask(r.scan, r.claimed), out.lang)
    if out.budget is not None and _MONTHLY_BUDGET.search(r.scan):  # '每月预算 3000': a cap a month, not a price
        out.readback.append(("nlu.readback.monthly_budget", {"amount": out.budget.amount}))
        out.budget = None
    if (out.api_model or _API_WORD.search(r.text)) and (spend := _monthly_spend(r.scan, out.lang)) is not None:
        out.api_monthly_spend = spend  # '每月 API 预算 5000 元': what the API costs, not what a machine may cost
        if out.budget is not None and out.budget.amount == spend.amount:
            out.budget = None
    if negative_budget is not None:
        out.unusable["budget"] = negative_budget
    out.budget_unlimited = bool(_BUDGET_UNLIMITED.search(r.text))


_MONTHLY = re.compile(r"每月|每个月|一个月|月均|月费|/\s*月|a month|per month|/\s*mo(?:nth)?\b|monthly|month(?:ly)? "
                      r"(?:bill|spend|cost)", _I)


def _monthly_spend(text: str, lang: Lang | None) -> Money | None:
    """An amount said per month ('$3k a month', '每月 5000 元'): with an API named, what the API costs."""
    found = [(m.start, m.end, m.amount, m.currency) for m in find_money(text)]
    found += [(a.start, a.end, a.value, "CNY") for a in find_amounts(text) if "万" in a.text and a.value >= 1000
              and not any(f[0] <= a.start < f[1] for f in found)]  # 'API一个月三万'
    for start, end, amount, currency in sorted(found):
        near = text[max(0, start - 24):end + 16]
        clause = re.split(r"[。！？!?；;\n]", text[max(0, start - 24):start])[-1]
        if _MONTHLY.search(near) and amount >= 1 and not _BUDGET_OF_ALL.search(clause):
            return Money(amount=amount, currency=currency or _default_currency(near, lang))
    return None


_MONTHLY_BUDGET = re.compile(r"(?:每月|每个月|一个月|月)\s*(?:的)?\s*预算|预算\s*(?:每月|每个月|一个月)|"
                             r"\b(?:monthly budget|budget (?:of\s+)?(?:[$€£¥]?\s*[\d.,]+k?\s*)?(?:a|per) month)\b",
                             re.IGNORECASE)
# '买卡、租云还是调 API？每月预算大概 3000 块': a budget a month for whichever is chosen, not what the API costs
_BUDGET_OF_ALL = re.compile(r"^(?:(?!api|接口|token).)*(?:预算|budget)", re.IGNORECASE)


def _read_training_data(r: _Reading) -> None:
    m = _DATASET_SAMPLES.search(r.scan)
    days = _per_period(r.scan, m.start(), m.end()) if m else None
    if m and days is not None:  # '3M conversations/month' is traffic served, not a data set
        r.out.daily_requests = (scaled(m.group(1), m.group(2)) or 0) / days or None
    elif m:
        r.out.dataset_samples = scaled(m.group(1), m.group(2))
    for served in _SERVED_REQUESTS.finditer(r.scan):  # '2 million requests a month', '每天 5 万次调用'
        if r.out.daily_requests is None and (days := _per_period(r.scan, served.start(), served.end())) is not None:
            r.out.daily_requests = (scaled(served.group(1), served.group(2)) or 0) / days or None
    turns = _TURNS_EACH.search(r.scan)
    per_chat = parse_number(turns.group(1) or turns.group(2)) if turns else None
    if r.out.daily_requests and per_chat and 1 < per_chat <= 100:
        r.out.daily_requests *= per_chat  # '每天 5000 个咨询，每个对话来回 6 轮': 30,000 requests a day
    if (each := _ASKED_EACH.search(r.scan)) is not None:  # '每人每天问10个问题', '10 questions per user a day'
        r.out.requests_per_user = parse_number(each.group(1) or each.group(2))
    m = _EPOCHS.search(r.scan)
    if m and not (m.group(6) == "轮" and _CHAT_TURNS.search(r.scan[max(0, m.start() - 12):m.start()])):
        r.out.epochs = parse_number(m.group(1) or m.group(4) or m.group(7))  # '每个对话平均 10 轮': a chat's turns
    out = r.out
    if out.use_case == "inference" and (out.epochs or out.dataset_tokens or (out.dataset_samples or 0) >= 100):
        out.use_case, out.use_case_weak = "training", False  # epochs, a data set: '跑 3 个 epoch' trains


_DEADLINE_FACTORS = ((("小时", "hour", "hr"), 1 / 24), (("周", "星期", "week"), 7),
                     (("月", "个月", "month"), DAYS_PER_MONTH), (("年", "year"), 12 * DAYS_PER_MONTH))


_PRICE_BEFORE = re.compile(r"(?:块钱?|元|美元|美金|刀|毛)\s*(?:钱)?\s*$|[$¥￥€]\s*[\d.,]+\s*(?:per|an?|/|一)?\s*$", _I)


# '一小时 2.5 块' is a rate's unit, '24 小时满负荷' a duty cycle: a duration followed by a price or by how it runs
_RATE_OR_DUTY_AFTER = re.compile(r"\s*(要|是|收)?\s*[$¥￥]?\s*\d+(\.\d+)?\s*(块|元|美元|刀|毛|usd|dollars?)|"
                                 rf"\s*{extractors.DUTY}|"
                                 r"\s*(用|跑|开|上班|工作)?\s*\d{1,2}\s*(个)?\s*(天|日|days?)(?!\s*(内|之内|以内))", _I)
# '一个月22天', 'a week, 5 days': days used in each period, not a deadline


def _not_a_deadline(scan: str, m: re.Match[str]) -> bool:
    """'an hour of audio' is the input's length, '每天 8 小时' a duty cycle, '$2/hour' a price: no deadline."""
    window = scan[max(0, m.start() - 14):m.end() + 8]
    if re.search(r"deadline|截止|期限", scan[max(0, m.start() - 32):m.start()], _I):
        window += " deadline"  # 'the deadline is cut to 30 days': the word further back still says so
    before = scan[max(0, m.start() - 8):m.start()]
    return (not _DEADLINE_CTX.search(window) or bool(_MEDIA_LENGTH.match(scan[m.end():]))
            or bool(_PRICE_BEFORE.search(before))
            or bool(_PER_DAY_BEFORE.search(before)) or bool(_PER_DAY_AFTER.match(scan[m.end():]))
            or bool(re.search(r"(hours?|hrs?|h|小时)\s*$", before, _I))
            or bool(re.search(r"(一个月|每个?月|一周|每周|a month|per month|a week|per week)[\s,，]*$", before, _I))
            or bool(re.search(r"(每天|每日|一天|日均)[^。；;,，?？]{0,14}$", scan[max(0, m.start() - 20):m.start()]))
            or bool(_PRICE_PER_TIME.match(scan[m.end():])) or bool(_RATE_OR_DUTY_AFTER.match(scan[m.end():])))


def _read_deadline(r: _Reading) -> None:
    for m in _DEADLINE.finditer(r.scan):
        if _not_a_deadline(r.scan, m):
            continue
        raw = m.group(1).lower()
        value = 0.5 if raw == "半" else 1.0 if raw in ("a", "an", "one") else parse_number(raw)
        if not value:
            continue
        unit = m.group(3).lower()
        factor = next((f for prefixes, f in _DEADLINE_FACTORS if unit.startswith(prefixes)), 1)
        r.out.deadline_days = value * factor
        return


def _read_fp64(r: _Reading) -> None:
    if _FP64_NO.search(r.text):
        r.out.fp64 = False
    elif (m := _FP64_NEED.search(r.text)) and not _ASKS_WHETHER.match(r.text[m.end():m.end() + 12]) \
            and not _HEARSAY.search(r.text[max(0, m.start() - 12):m.start()]) \
            and not re.match(r"[^。.!！;；\n]{0,12}[?？]", r.text[m.end():]):
        r.out.fp64 = True  # not 'FP64 重要吗', '听说双精度很重要？', 'does FP64 matter?': asked, the code decides


_HEARSAY = re.compile(r"听说|据说|听人说|有人说|网上说|是不是|是否|\bheard\b|\bis it true\b|\bsupposedly\b|"
                      r"\bpeople say\b|\bdo (?:i|we) (?:really )?need\b", _I)
_ASKS_WHETHER = re.compile(r"\s*(?:的)?\s*(?:重要吗|重不重要|要吗|要不要|需要吗|需不需要|有用吗|有必要吗|吗|的吧|吧|"
                           r"\?|？|(?:really\s+)?(?:matters?|important|needed|necessary)\s*\?)", _I)


_RESIDUES = re.compile(rf"({N})\s*(k|K|千)?\s*(?:个)?\s*-?\s*(?:残基|氨基酸|residues?\b|aa\b|amino[- ]acids)", _I)


def _read_residues(r: _Reading) -> None:
    """'大蛋白复合物 5000 个残基', 'a 3k-residue complex': the input a structure-prediction run must hold."""
    m = _RESIDUES.search(r.scan)
    if m:
        value = scaled(m.group(1), "k" if m.group(2) else None)
        if value and 10 <= value <= 1_000_000:
            r.out.sequence_tokens = int(value)


def _read_problem_size(r: _Reading) -> None:
    """A scientific problem's memory ('20 GB per job'); 'cards with 80 GB' or '24G 显存' is a card's size."""
    scan = r.scan
    for m in _GB.finditer("" if _CATALOG_FILTER.search(r.text) else scan):
        window = scan[max(0, m.start() - 16):m.end() + 10]
        just_before = scan[max(0, m.start() - 4):m.start()]
        vram = re.search(r"显存\s*$|vram\s*$|gpu memory\s*$", just_before, _I) or re.match(
            r"\s*\+?\s*(的)?\s*(显存|vram|gpu|card|卡)", scan[m.end():m.end() + 8], _I)
        if vram or not (_PROBLEM_CTX.search(window) or r.out.use_case == "scientific"):
            continue
        value = parse_number(m.group(1))
        if value:
            unit = m.group(2).lower()
            r.out.problem_size_gb = value * (1000 if unit.startswith("t") else 1) * (1.073741824 if "i" in unit
                                                                                     else 1)


def _read_ecosystem(r: _Reading) -> None:
    text = r.text
    cuda = _CUDA.search(text)
    if cuda and _CUDA_NEED.search(text[max(0, cuda.start() - 16):cuda.end() + 16]):
        r.out.cuda_required = not _negated(text, cuda.start(), cuda.end())
    dom = _DOMESTIC.search(text)
    if dom:
        r.out.domestic = not _negated(text, dom.start(), dom.end())


def _read_form_factor(r: _Reading) -> None:
    r.out.form_factor = next((form for form, pat in _FORM if pat.search(r.text)), None)


def _watts(m: re.Match[str]) -> float | None:
    """The watts a match says ('2 kW' → 2000); '1.5w' is 1.5万 (money), not watts."""
    value = parse_number(m.group(1))
    unit = m.group(2)
    if not value or (unit == "w" and value < 100):
        return None
    return value * 1000 if unit.lower() in ("kw", "千瓦") else value


def _read_power_limit(r: _Reading) -> None:
    for m in _WATTS.finditer(r.scan):
        value = _watts(m)
        if value is None:
            continue
        window = r.scan[max(0, m.start() - 12):m.end() + 10]
        if extractors.CARD_POWER_AFTER.match(r.scan[m.end():m.end() + 12]):
            continue  # 'a 450W card': the card's power, no limit on the machine
        if 100 <= value <= 100_000 and _LIMIT_CTX.search(window) and (
                _POWER_CTX.search(window) or m.group(2) in ("W", "瓦", "kW", "KW", "千瓦")):
            r.out.power_limit_w = value
            r.out.power_limit_at_wall = bool(_AT_WALL.search(r.scan[max(0, m.start() - 24):m.end() + 24]))


_AT_WALL = re.compile(r"at the wall|from the wall|wall draw|whole (?:machine|system|box|rig|pc)|total draw|"
                      r"墙插|插座|整机|总功耗|整台", _I)


def _read_running(r: _Reading) -> None:
    """'runs 70B', '运行 Qwen': a model to run is inference when nothing else says otherwise."""
    out = r.out
    if out.use_case is None and (out.model or out.params_b) and re.search(r"运行|\bruns?\b|\bload\b",
                                                                          r.text.lower()):
        out.use_case, out.use_case_weak = "inference", True


def _read_currency_wanted(r: _Reading) -> None:
    """'whats the price in yuan', '折合人民币多少': the currency prices are asked in."""
    for currency in ("CNY", "USD", "EUR", "GBP"):
        if vocab.matches("slot", f"currency_wanted_{currency.lower()}", r.text):
            r.out.currency_wanted = currency  # type: ignore[assignment]
            return


def _read_rental(r: _Reading) -> None:
    """Rental providers named, 'where to rent' asked, a monthly plan ('包月'): a rental question, answered with the
    offers first."""
    if vocab.matches("slot", "by_the_month", r.text):
        r.out.by_the_month = True
    r.out.providers = named_providers(r.text)
    r.out.asks_where_rent = bool(vocab.matches("slot", "where_rent", r.text)) or len(r.out.providers) >= 2


# a rent word right before a card's name ('租4090', 'keep renting a 4090', 'rent 2x H100')
_RENT_BEFORE = re.compile(r"(?:租(?:用|个|一下)?|rent(?:ing|ed)?|leas(?:e|ing))\s*"
                          r"(?:an?|one|the|\d{1,3}\s*(?:x|×|张|块|台)?|[一两二三四五六七八]\s*[张块台])?\s*$", _I)


def _read_rented_card(r: _Reading) -> None:
    """The card rented when another is bought ('买一张5090…租4090每小时2块', 'buy a 5090 or keep renting a 4090'):
    named right after a rent word or with an hourly rate beside it; none when every card named is rented."""
    rented = [gid for m in r.gpu_mentions
              if (gid := m.ids[0] if len(m.ids) == 1 else _pick(r.cat, m.ids)) in r.out.card_rates
              or _RENT_BEFORE.search(r.text[max(0, m.start - 14):m.start])]
    if rented and {g.gpu for g in r.out.gpus} - set(rented):
        r.out.rented_gpu = rented[0]
        r.out.rented_count = next((g.count for g in r.out.gpus if g.gpu == rented[0]), 1)


def _read_rest(r: _Reading) -> None:
    _apply_extractors(r.out, r.text, r.masked, r.cat, r.gpu_mentions, r.shown, r.context)
    if r.out.redundant_feeds:
        r.out.readback.append(("nlu.readback.redundant_feeds", {}))
    if r.out.asks_where_rent and "where_rent" not in r.out.asks:  # a what-if later asks it again ('and H200?')
        r.out.asks.append("where_rent")


# the reading, in order: names before quantities, the data set before model sizes, the kind last
_STEPS = (_read_intents, _read_names, _read_cards, _read_options, _read_use_case, _read_precision,
          _read_dataset_tokens,
          _read_params, _read_media_beside, _read_model, _read_weights_size, _read_unknown_model, _read_api,
          _read_trained_model, _read_sized_jobs,
          _read_workloads,
          _read_context, _read_turn_lengths,
          _read_concurrency, _read_micro_batch,
          _read_quantities,
          _read_card_prices, _read_budget,
          _read_training_data, _read_deadline, _read_fp64, _read_problem_size, _read_residues, _read_ecosystem,
          _read_form_factor,
          _read_power_limit, _read_running, _read_rental, _read_rented_card, _read_currency_wanted, _read_rest)

_REJECTED = re.compile(
    r"[,，]?\s*(?:而)?不是\s*(?:那?[张块个])?\s*[A-Za-z0-9.\-_]*\d[A-Za-z0-9.\-_]*\s*(?:张|块|个|卡|b|B)?(?=\s*[,，。.;；!！?？]|\s*(?:是|而是)|$)"
    r"|[,，]?\s*\b(?:not|rather than|instead of)\s+(?:the\s+|an?\s+)?[A-Za-z0-9.\-_]*\d[A-Za-z0-9.\-_]*"
    r"(?:\s+(?:gpus?|cards?|users?|people))?(?=\s*[,.;!?]|$)", _I)
_CATALOG_FILTER = vocab.required("slot", "catalog_filter")


MAX_CARDS = 1024
_VERB_COUNT = re.compile(r"(?:\b(?:rent(?:ing)?|buy(?:ing)?|get(?:ting)?|lease|need|qty|quantity)|数量|卡数)[\s:：]*"
                         r"(\d{1,4})\b(?!\s*(?:months?|hours?|days?|weeks?|years?|gb|k\b|tokens?))", _I)
_MANY_CARDS = re.compile(r"(\d{1,3}(?:,\d{3})+|\d{4,})\s*(?:张|块(?=\s*(?:显?卡|gpu))|片|卡(?!\s*(?:时|小时|·时))|"
                         r"x\b|×|gpus?\b|cards?\b)",
                         _I)  # '5000 块' alone is money
_HOW_MANY = vocab.required("slot", "how_many")
_DETAIL = vocab.required("slot", "detail")


def _drop_rejected(text: str) -> str:
    """Blank out values the user rejects in the same breath ('not 4', '不是 32B'), keeping offsets."""
    return _REJECTED.sub(lambda m: " " * len(m.group(0)), text)


def _apply_extractors(out: Parsed, text: str, masked: str, cat: Catalog, gpu_mentions: list[_Mention],
                      shown: str, context: bool = True) -> None:
    """The named extractors' slots, then the answer kind (read from the message as written, ``shown``)."""
    spans = tuple((m.start, m.end, m.ids[0] if len(m.ids) == 1 else _pick(cat, m.ids)) for m in gpu_mentions)
    found = extractors.extract(extractors.Context(text=text, masked=masked, catalog=cat, gpu_spans=spans))
    for slot, value in found.items():
        setattr(out, slot, value)
    _settle_power(out)
    _settle_usage(out)
    if out.budget_added is not None and out.budget is not None and out.budget.amount == out.budget_added:
        out.budget = None  # '预算再加 5 万' adds to the budget; it is not a budget of 5 万
    _settle_verb_count(out, masked)
    _settle_nodes(out, text, masked, cat)
    _settle_vendor_choice(out, cat)
    _settle_ranges(out, text)
    _settle_rate_unit(out, text)
    _settle_restrictions(out, masked)
    catalog_filter = _read_catalog_filter(out, text)
    _read_asks(out, text)
    _settle_follow_up_asks(out, text, context)
    out.kind, out.kind_by = classify(shown, _features(out, text, found, catalog_filter, context))
    _kind_from_asks(out, context)
    _settle_kind(out)
    _settle_purchase(out)
    _data_stays_in(out)


def _settle_follow_up_asks(out: Parsed, text: str, context: bool) -> None:
    """After an answer: a scientific code named with a question asks whether it runs on the cards at hand, first
    ('他用 Fluent，能用这批卡吗'); a speed question with a quant or a context is a serving one ('70B 的 Q4 每秒几个字，
    上下文 32k 行不行' after a LoRA)."""
    if context and out.sci_code and is_question(text):
        out.asks.insert(0, "code_fit")
    elif out.sci_code and out.use_case in ("inference", "training") and is_question(text):  # '跑 R1，顺便跑 wrf，
        out.asks.append("code_fit")  # 靠谱吗': the code on the same machine, after the main question
    if out.use_case == "inference" and out.use_case_weak and not (out.finetune or out.method) \
            and ("speed" in out.asks or "ttft" in out.asks) and (out.precision or out.context_tokens):
        out.use_case_weak = False


def _settle_usage(out: Parsed) -> None:
    """'9 h a day on weekdays', '3 days a month': the hours a day, averaged over every day, said back once."""
    share = out.days_used_share
    if share is not None:
        said = out.hours_per_day or 24.0
        out.hours_per_day = round(said * share, 2)
        out.readback.append(("nlu.readback.usage", {"hours": said, "days_pct": share * 100,
                                                    "average": out.hours_per_day}))
    if out.load_share is not None:  # energy at 60 % load over 24 h is energy at full load over 14.4 h
        said = out.hours_per_day or 24.0
        out.hours_per_day = round(said * out.load_share, 2)
        out.readback.append(("nlu.readback.load", {"hours": said, "load_pct": out.load_share * 100,
                                                   "full": out.hours_per_day}))


def _settle_power(out: Parsed) -> None:
    if out.gpu_power_limit_w is not None and out.power_limit_w == out.gpu_power_limit_w:
        out.power_limit_w = None  # "限功耗到 250W" limits each card, not the wall
    if out.psu_w is not None and out.power_limit_w and out.psu_w % out.power_limit_w == 0:
        out.power_limit_w = None  # "1000W 电源", '4x 3000W PSU': the PSUs' rating, not a wall limit


def _settle_verb_count(out: Parsed, masked: str) -> None:
    """A count said by a verb: 'renting 8 for 3 months … per H100'."""
    if len(out.gpus) == 1 and not out.gpus[0].stated:
        verb_count = _VERB_COUNT.search(masked)
        if verb_count and 1 < int(verb_count.group(1)) <= MAX_CARDS:
            out.gpus = [GpuCount(gpu=out.gpus[0].gpu, count=int(verb_count.group(1)), stated=True)]


def _settle_restrictions(out: Parsed, text: str) -> None:
    """A card ruled in by a restriction ('only L40S or H100') is not a card to compare; a count past what any
    plan holds ('2000 张') is said back (``text`` has the card names blanked: '收一张二手3090还是买张' counts
    no 3,090 cards)."""
    if out.allowed_gpus:
        out.gpus = [g for g in out.gpus if g.gpu not in out.allowed_gpus or g.stated]
    if out.excluded_vendors:  # 'no NVIDIA … we looked at the H200': a card of a vendor ruled out is not planned on
        cat = load_catalog()
        out.gpus = [g for g in out.gpus if cat.gpu(g.gpu).vendor.lower() not in out.excluded_vendors]
    many = _MANY_CARDS.search(_mask(text, _not_quantities(text)))
    value = parse_number(many.group(1)) if many and not _NOT_GPU_NOUN.match(text[many.end():]) else None
    if value and value > MAX_CARDS:
        out.unusable["gpu_count"] = value


_BOXES_COUNTED = re.compile(rf"(?:(?<![a-z0-9.\-])(?:{N})|{_COUNT_WORDS}|[两二三四五六七八])\s*(?:x\s*|×\s*)?"
                            rf"(?:台|个)?\s*"
                            rf"(?:nvidia\s+)?[dh]gx\b(?!\s*spark)|"
                            rf"(?:(?<![a-z0-9.\-])\d{{1,3}}|[两二三四五六七八])\s*台\s*(?=[a-z]{{0,8}}\s*[a-z]?\d)", _I)
# '4台H100': 台 counts machines, so the number before a card is how many of its servers


# 'buying 2-4 HGX H100 servers', '2 到 4 台': a range of counts is a question, not a count
_COUNT_RANGE = re.compile(r"(?<![\d.])(\d{1,4})\s*(?:-|–|~|～|到|至|\bto\b|\bor\b)\s*(\d{1,4})(?![\d.%])\s*(?:x\s*)?"
                          r"(?=(?:个|台|张|块)?\s*(?:[a-z]{0,5}\s*)?(?:hgx|dgx|nodes?|servers?|boxes|machines|gpus?|cards?|"
                          r"节点|服务器|机器|[a-z]\d|rtx|h\d|a\d|l\d))", _I)


# '一张卡一小时多少钱', 'per GPU per hour', 'an H100 per GPU-hour': one card is the unit a rental price is quoted in
_RATE_UNIT = re.compile(r"(?:一|每|单)\s*(?:张|块)?\s*(?:卡)?\s*(?:一|每)\s*(?:个)?\s*(?:小时|钟头)|"
                        r"(?:一|每|单)\s*(?:张|块)\s*(?:卡)?\s*(?:[a-z0-9][\w-]*\s*)?(?:一|每)\s*(?:个)?\s*(?:小时|钟头)|"
                        r"\bper\s+(?:gpu|card)(?:[-\s]+(?:hour|hr|h)\b|\s+per\s+hour)|\b(?:one|a|an|1)\s+(?:gpu|card)\s+"
                        r"(?:per|an|a|for\s+an?)\s+hour\b|\bgpu[-\s]?hours?\b", _I)


def _settle_rate_unit(out: Parsed, text: str) -> None:
    """'租H800一张卡一小时多少钱': the one card is the unit the rent is quoted in, not the count to plan with (aq qz06
    sized a 7B pre-training on a single H800)."""
    if _RATE_UNIT.search(text):
        out.gpus = [g.model_copy(update={"stated": False}) if g.stated and g.count == 1 else g for g in out.gpus]


def _settle_ranges(out: Parsed, text: str) -> None:
    """A count said as a range ('2-4 servers'): neither end is the count; the plan works out how many, and the
    range is said back."""
    m = _COUNT_RANGE.search(text)
    if m is None:
        return
    low, high = int(m.group(1)), int(m.group(2))
    if not 1 <= low < high:
        return
    ends = {low, high}
    out.gpus = [g.model_copy(update={"count": 1, "stated": False}) if g.stated and g.count in ends else g
                for g in out.gpus]
    if out.nodes in ends:
        out.nodes = None
    if out.gpu_count in ends:
        out.gpu_count = None
    out.readback.append(("nlu.readback.count_range", {"low": low, "high": high}))


_MACHINES_OF_THOSE = re.compile(r"\b(?:of|of the|of our)\s+(?:those|these|them|the|our)?\s*"
                                r"(?:servers?|machines?|nodes?|boxes|systems?)\b|台|节点", _I)


def _settle_vendor_choice(out: Parsed, cat: Catalog) -> None:
    """'选哪个：昇腾、海光DCU、寒武纪': makers weighed against each other; a card a maker's product line stands
    for ('海光DCU') is one of the choices, not the configuration asked about."""
    makers = {v.lower() for v in out.only_vendors or []}
    if len(makers) >= 2 and out.gpus and all(not g.stated and cat.gpu(g.gpu).vendor.lower() in makers
                                             for g in out.gpus):
        out.gpus = []


def _settle_nodes(out: Parsed, text: str, masked: str, cat: Catalog) -> None:
    """Machines and GPUs per machine: 'two DGX H100' counts boxes; counts are kept per node."""
    named = next(iter(out.gpus or out.existing or []), None)
    boxes = masked if not _BASEBOARD_NODE.search(text) or _BASEBOARD_NODE.search(masked) else masked + " dgx"
    if out.nodes is None and named is not None and named.stated and 1 < named.count <= MAX_DGX_NODES \
            and _BOXES_COUNTED.search(text):  # 'two DGX H100': the number counts boxes; '8x H100 (HGX)' GPUs
        out.nodes = named.count
    if out.nodes and out.gpu_count == out.nodes and not any(g.stated for g in out.gpus) \
            and _MACHINES_OF_THOSE.search(text):
        out.gpu_count = None  # 'two of those servers': the number counts the machines, not cards
    counted = bool(_BOXES_COUNTED.search(text))
    if out.nodes and len(out.gpus) == 1:
        out.gpus = [_per_node(boxes, out.gpus[0], out.nodes, _module(cat, out.gpus[0].gpu), counted)]
    if out.nodes and out.existing and len(out.existing) == 1:  # owned machines follow the same convention
        out.existing = [_per_node(boxes, out.existing[0], out.nodes, _module(cat, out.existing[0].gpu), counted)]


def _read_catalog_filter(out: Parsed, text: str) -> bool:
    """"which GPUs support FP8?" asks about FP8; it does not choose it."""
    catalog_filter = bool(_CATALOG_FILTER.search(text)) and not out.model
    if catalog_filter or (out.asked_attribute == "support" and out.gpus and not out.model):
        out.about_precision, out.precision = out.precision, None
    out.catalog_filter = catalog_filter
    if catalog_filter:
        size = re.search(r"(\d+(?:\.\d+)?)\s*(?:gb|g|gib)\b|(\d+(?:\.\d+)?)\s*(?:gb|g)(?=显存|的|\s|$)", text, _I)
        if size:
            out.about_memory_gb = float(size.group(1) or size.group(2))
    return catalog_filter


# what a message asks for, by the cue group in data/cues.toml that recognises it
_ASK_FLAGS = (("asks_ram", "ram_question"), ("asks_value", "value_question"), ("asks_hourly", "hourly_question"),
              ("asks_daily", "daily_question"), ("asks_monthly", "monthly_question"), ("asks_best", "best_card"),
              ("asks_cheapest", "cheapest"),
              ("asks_per_memory", "per_memory"))


def _read_asks(out: Parsed, text: str) -> None:
    out.asks = asks_in(text)
    if _HOW_MANY.search(text) and "how_many" not in out.asks:  # '用多少台能在一个月内训完': a count asked is an ask
        out.asks.append("how_many")
    out.both_schemes = bool(vocab.matches("slot", "both_schemes", text[:MAX_ASK_TEXT]))
    if out.both_schemes and not out.gpus:  # '两个方案的总价': the options on the table, not a request for a plan
        out.asks = [a for a in out.asks if a != "recommend"]
        out.intents = [i for i in out.intents if i is not Intent.recommend]
    if out.served_model is not None:
        out.asks.append("served")  # whether the machine also serves it is asked by saying it
    if out.side_training is not None:
        out.asks.append("side_training")  # whether the machine also trains it, likewise
    if out.side_media is not None:
        out.asks.append("side_media")  # and the image model beside the language model
    racked = out.rack_kw is not None or bool(out.racks)
    if racked and "how_many" in out.asks and (_MACHINES_ASKED.search(text) or out.racks) \
            and not _FOR_THE_BUDGET.search(text):
        # 'how many 8-GPU servers can we put in (our 15 kW racks)?': the rack's answer, in the ask's place ('how
        # many nodes for the budget' stays a count the budget buys)
        out.asks = list(dict.fromkeys("rack" if a == "how_many" else a for a in out.asks))
    if out.rack_kw is not None and "rack" not in out.asks:
        out.asks.append("rack")  # 'our racks are 17 kW': whether the nodes fit it is asked by saying it
    if "box_count" in out.asks and "energy_cost" in out.asks and not _BILL_WORD.search(text):
        out.asks.remove("energy_cost")  # 'how many fit in one box and what's total power': the box's answer says it
    out.pooled = bool(vocab.matches("slot", "pooled", text))
    out.wants_detail = bool(_DETAIL.search(text))
    for flag, cue in _ASK_FLAGS:
        setattr(out, flag, bool(vocab.matches("slot", cue, text)))
    out.asks_count = bool(_HOW_MANY.search(text))
    targets = {"ttft": out.ttft_target_s, "speed": out.tokens_per_s_target}
    stated = [a for a in out.asks if targets.get(a) is not None]  # '首token延迟≤2s，请给出型号': a requirement
    if stated and len(out.asks) > len(stated):  # stated beside a question: checked after what is asked
        out.asks = [a for a in out.asks if a not in stated] + stated


_FOR_THE_BUDGET = re.compile(r"\b(?:for|with|within|on) (?:the|our|this|that|a) budget\b|"
                             r"\b(?:the|our|this|that|my) budget (?:would |will |could |can )?"
                             r"(?:get|buy|cover|afford|pay)|"
                             r"预算(?:内|里|能|可以|够)", _I)
_BILL_WORD = re.compile(r"electricity|\bbill\b|kwh|\bcost|电费|度电|千瓦时|费用", _I)
_MACHINES_ASKED = re.compile(r"\bhow many\b.{0,48}\b(?:servers?|nodes?|boxes|machines|systems|dgx|hgx)\b|"
                             r"(?:几|多少)\s*台", _I)
MAX_ASK_TEXT = 4000  # asks are read in a message's first part; a pasted document after them asks nothing


def asks_in(text: str) -> list[str]:
    """What ``text`` asks, by the [ask.*] cues, in the order the asks first appear."""
    text = text[:MAX_ASK_TEXT]
    found = []  # each cue within one sentence: 'with IB. Is that enough memory?' asks the fit, not the network
    for s in _SENTENCE.finditer(text):
        part = s.group(0)
        found += [(s.start() + m.start(), s.start() + m.end(), name) for name in vocab.names("ask")
                  if (m := vocab.matches("ask", name, part))]
    found = [f for f in found if not any(g[2] == f[2] and g[0] < f[0] for g in found)]  # each ask where first said
    # a cue inside another ask's longer cue is part of that ask ('多久' in '多久能回本' asks the break-even)
    kept = [f for f in found if not any(o is not f and o[0] <= f[0] and f[1] <= o[1] and o[1] - o[0] > f[1] - f[0]
                                        for o in found)]
    # 'how long until the first token', '首字要等多久': a bare duration asks the latency named beside it
    if any(name in _OWN_DURATION for _, _, name in kept) and not _TRAINING_WORD.search(text):
        kept = [f for f in kept if f[2] != "training_time"]
    return [name for _, _, name in sorted(kept)]


_SENTENCE = re.compile(r"(?:[^.?!。？！；;\n]|\.(?=\S))+[.?!。？！；;\n]*")  # '2.5B' stays in its sentence
_OWN_DURATION = {"ttft"}  # asks that are durations themselves
_TRAINING_WORD = re.compile(r"train|fine[- ]?tun|epoch|训|微调|gpu[- ]?hours?|卡时", _I)


def _slot_count(out: Parsed, found: dict[str, Any]) -> int:
    """How many requirement slots the message states (what a question asks is not counted)."""
    stated = (out.use_case, out.model, out.params_b, out.precision, out.budget, out.context_tokens, out.concurrency,
              out.method, out.cuda_required, out.domestic, out.fp64, out.problem_size_gb, out.dataset_tokens,
              out.dataset_samples, out.deadline_days, out.form_factor, out.power_limit_w, out.gpu_count,
              out.head_count, out.tokens_per_s_target, out.ttft_target_s, out.rack_kw, out.mfu, out.tokens_per_sample,
              *(v for k, v in found.items() if k not in _NOT_REQUIREMENTS))
    return (out.existing is not None) + sum(v is not None and v != [] for v in stated) + len(out.gpus)


def _requirements(out: Parsed) -> int:
    """Requirements stated; 'mi250x fp64 tflops' looks FP64 up, 'CFD in double precision, 20 GB per job' needs it."""
    lookup = out.asked_attribute is not None and bool(out.gpus) and not (out.problem_size_gb or out.model
                                                                           or out.budget)
    stated = (None if lookup else out.use_case, None if lookup else out.fp64, out.problem_size_gb, out.budget,
              out.concurrency, out.context_tokens, out.method)
    return sum(v is not None for v in stated)


def _hardware_words(out: Parsed) -> bool:
    """The message talks about the machine around the cards (PSU, RAM, CPU, wall or card power)."""
    return any((out.psu_w, out.asks_ram, out.cpu, out.cpu_name, out.power_limit_w, out.mains, out.gpu_power_limit_w))


def _features(out: Parsed, text: str, found: dict[str, Any], catalog_filter: bool, context: bool) -> Features:
    short_answer = out.has(Intent.yes) or out.has(Intent.no) or (out.has(Intent.unsure) and len(text) < 24)
    gpus = len({g.gpu for g in out.gpus}) + len(out.existing or []) + bool(out.gpu_count) + len(out.unknown_gpus)
    return Features(
        gpus=gpus, models=1 if out.model else 0, sized=bool(out.model or out.params_b),
        budget=out.budget is not None, slots=_slot_count(out, found),
        training_words=bool(out.finetune or out.method or out.use_case == "training"),
        compare_words=out.has(Intent.compare), catalog_filter=catalog_filter, hardware=_hardware_words(out),
        short_answer=short_answer, attribute=out.asked_attribute is not None, deadline=out.deadline_days is not None,
        counted=any(g.stated and g.count > 1 for g in out.gpus), question=is_question(text),
        requirements=_requirements(out),
        platform_only=bool(out.cpu or out.cpu_name) and not (out.gpus or out.gpu_count or out.existing),
        need=bool(out.use_case or out.model or out.params_b or out.domestic), context=context,
        rental=bool(out.providers or out.asks_where_rent or out.rental_rate),
        reruns=context and out.has(Intent.whatif) and out.precision is not None)


def _topic_asked(out: Parsed) -> str | None:
    """A pasted quote lists every part (RAM, chassis, PSU): the build topic is the one its questions name."""
    asked = " ".join(s for s in re.split(r"(?<=[.!?。！？\n])", out.text) if is_question(s))
    return extractors.build_topic(extractors.Context(text=asked, masked=asked, catalog=load_catalog(),
                                                     gpu_spans=()))


def _settle_purchase(out: Parsed) -> None:
    """In a rent-or-buy question the price quoted for buying is that price, not a budget for buying; a seller's
    quote is a price to judge, not a budget either, and its list of parts asks about none of them."""
    if (out.quoted_price is not None or _PARTS_LIST.search(out.text)) and out.build_topic is not None:
        out.build_topic = _topic_asked(out)
        if out.kind == Kind.build and out.build_topic is None and "recommend" in out.asks:
            out.kind = Kind.recommend  # 'Home PC: …, RM650 (650W), RTX 3060. £900: what should I buy?'
    if out.quoted_price is not None and out.budget is not None and out.budget.amount == out.quoted_price[0]:
        out.budget = None
    if out.budget is not None and any(o.price and o.price[0] == out.budget.amount for o in out.options) \
            and not re.search(r"预算|经费|budget", out.text, _I):
        out.budget = None  # 'B. 4×L40S 推理服务器，52万': an option's price, not a budget
    if out.kind == Kind.rent_vs_buy and out.purchase_price is None and out.quoted_price is not None:
        out.purchase_price = out.quoted_price  # 'a vendor quoted us a 4x H100 server for $140k. Should we buy?'
    if out.kind == Kind.rent_vs_buy and out.budget is not None and not re.search(r"预算|经费|budget", out.text, _I):
        out.budget = None  # 'an 8x H100 server is ~$280k, way too much': a price said, not a budget
    if out.purchase_price is None:
        return
    if out.kind != Kind.rent_vs_buy:
        out.purchase_price = None
    elif out.budget is not None and out.budget.amount == out.purchase_price[0]:
        out.budget = None


_ON_THE_PLAN = re.compile(r"呢|\bwhat if\b|\bhow about\b|\binstead\b|换成|改用|\bswitch(?:ing)? to\b", _I)
_ABOUT_IDEAS = re.compile(r"\bwhat(?:'s| is) the difference\b|\bdifference between\b|什么区别|区别是什么|是什么|"
                          r"\bwhat is\b", _I)
_GENERIC_KINDS = (None, Kind.inform, Kind.whatif, Kind.concept, Kind.spec, Kind.compare)


# asks that are answered by sizing a configuration, not by looking a card up, when the message runs a model
_SIZING_ASKS = {"how_many", "fits", "capacity", "training_time"}
_RUNS_A_MODEL = re.compile(r"\b(run|serve|host|deploy|load)\b|跑|部署|带得动|装得下|放得下", _I)


_PRICE_ASKED = re.compile(r"多少钱|什么价|啥价|价格(?:是)?多少|贵不贵|\bhow much\b|"
                          r"\bwhat(?:'s| is| would| does)\b.{0,24}\b(?:price|cost)\b|\bprice\?", _I)
# asks about a configuration, not a card: a card named with one of them is the plan on that card
_PLAN_ASKS = {"energy_cost", "build_cost", "rack", "heat", "capacity", "run_cost", "break_even"}
_SWAP = re.compile(r"换成|改成|换为|改用|换用|\binstead\b|\bswitch(?:ing)? to\b|\bgo(?:ing)? with\b|如果|要是|假如|"
                   r"\bwhat if\b|\bwhat about\b|\bhow about\b", _I)


def says_swap(text: str) -> bool:
    """The message swaps something for what was discussed ('换成13B', 'what if we switch to a 70B')."""
    return bool(_SWAP.search(text))


def _readback_fact(out: Parsed, context: bool) -> Kind | None:
    """'每天真正会用的也就 300 人': a fact about the plan, said back."""
    return Kind.whatif if out.kind == Kind.chitchat and out.readback else None


def _rent_total(out: Parsed, context: bool) -> Kind | None:
    """'按租卡每卡每小时 18 块算，总共多少钱': the total asked at a rental rate is the rent, not a machine's price."""
    if out.rental_rate and "build_cost" in out.asks:
        out.asks = list(dict.fromkeys("run_cost" if a == "build_cost" else a for a in out.asks))
    return None


def _break_even(out: Parsed, context: bool) -> Kind | None:
    """A break-even with a rental rate or a purchase price is rent-or-buy."""
    priced = out.rental_rate or out.purchase_price
    return Kind.rent_vs_buy if out.kind in _GENERIC_KINDS and "break_even" in out.asks and priced else None


def _cards_together(out: Parsed, context: bool) -> Kind | None:
    """The power of several cards, or whether they need a bridge: how they are built together."""
    if out.kind in (Kind.spec, Kind.concept) and out.gpus and out.gpus[0].count > 1 and (
            out.asked_attribute == "power" or "nvlink" in out.asks):
        out.build_topic = out.build_topic or ("psu" if out.asked_attribute == "power" else "link")
        return Kind.build
    return None


def _engine_on_the_plan(out: Parsed, context: bool) -> Kind | None:
    """An engine named in a follow-up ('用 SGLang 部署呢？'): a what-if on the plan, not a question about an idea."""
    on_plan = out.engine_hint and _ON_THE_PLAN.search(out.text) and not _ABOUT_IDEAS.search(out.text)
    return Kind.whatif if out.kind == Kind.concept and on_plan else None


def _plan_on_card(out: Parsed, context: bool) -> Kind | None:
    """A card named with a sizing ask and a model to run ('with the 910B, how many cards to run it at INT8?'),
    with a count or a sizing ask in a what-if ('换成 8×H200 呢，能撑多少并发？'), or with an ask about a whole
    configuration (its cost, power bill, rack): the plan on that card; a price asked of it is the build's."""
    if out.kind != Kind.spec or out.catalog_filter or not out.gpus:
        return None
    sizing = bool(set(out.asks) & _SIZING_ASKS)
    swapped = context and bool(_SWAP.search(out.text)) and (any(g.stated for g in out.gpus) or sizing)
    if not ((sizing and _RUNS_A_MODEL.search(out.text)) or swapped or (context and set(out.asks) & _PLAN_ASKS)):
        return None
    if context and _PRICE_ASKED.search(out.text) and "build_cost" not in out.asks:
        out.asks.append("build_cost")
    return Kind.whatif


def _data_stays_in(out: Parsed) -> None:
    """'数据不能出公司', 'strictly on-prem because of GDPR': an API and rented cloud GPUs both take the data outside;
    said back where the message weighs renting."""
    if vocab.matches("slot", "on_prem", out.text) and (out.asks_where_rent or {"break_even", "rent"} & set(out.asks)):
        out.readback.append(("nlu.readback.on_prem", {}))


def _api_versus_own(out: Parsed, context: bool) -> Kind | None:
    """'40M tokens a day on GPT-4o-mini — would our own GPUs be cheaper?': the API's bill against a machine that
    serves the traffic; that machine is recommended (or the cards named are sized), never a rental or a quote."""
    if "api_cost" not in out.asks and (out.api_monthly_spend is not None or (
            _api_context(out) and _COST_OR_OWN.search(out.text))):
        out.asks = [*out.asks, "api_cost"]  # an API named beside a cost or an own machine: the API against it
    if "api_cost" not in out.asks:
        return None
    out.asks = [a for a in out.asks if a not in _API_ANSWERS]
    out.asks_value = False
    out.use_case, out.use_case_weak = "inference", False
    if out.gpus or out.kind in (Kind.whatif, Kind.correct):
        return Kind.whatif if out.kind in (Kind.spec, Kind.concept, Kind.build, Kind.speed) else None
    return Kind.recommend


def _api_context(out: Parsed) -> bool:
    """An API the buyer pays for is in the message: one named, or the word outside 'OpenAI-compatible API' — and
    not ruled out ('数据不能出公司，API排除了': an API the buyer cannot use is no API weighed)."""
    mentions = [m for m in _API_MENTION.finditer(out.text)
                if not _SERVED_API.search(out.text[max(0, m.start() - 16):m.start()])]
    if any(_ruled_out(out.text, m.start(), m.end()) for m in mentions):
        return False
    return bool(out.api_model) or bool(mentions)


_RULED_OUT_AFTER = re.compile(r"^\W{0,2}\s*(?:也|就|是)?\s*(?:被)?(?:排除|不能用|不用|不考虑|不行|不可以|禁止|用不了|"
                              r"is out\b|are out\b|is ruled out|ruled out|not an option|is not an option|off the "
                              r"table|excluded)", _I)
_RULED_OUT_BEFORE = re.compile(r"(?:不能用|不用|不考虑|排除|禁止|\bno\b|can'?t use|cannot use|without( an?)?)\s*$",
                               _I)


def _ruled_out(text: str, start: int, end: int) -> bool:
    return bool(_RULED_OUT_AFTER.match(text[end:end + 16]) or _RULED_OUT_BEFORE.search(text[max(0, start - 12):start]))


_API_MENTION = re.compile(r"(?<![a-z])apis?(?![a-z])|openai(?![\s-]*compatible)|接口调用|调用量|调用费", _I)
_SERVED_API = re.compile(r"compatible|兼容|提供|expose|serve|serving|对外|封装|做成", _I)
_COST_OR_OWN = re.compile(r"cheaper|\bcosts?\b|\bbill|\bspend|\bsave|\bworth|pays? (?:for )?itself|break[- ]?even|"
                          r"\broi\b|self[- ]?host|\bown (?:server|gpus?|hardware|machine|box|cards?)|on[- ]?prem|"
                          r"in[- ]house|划算|合算|便宜|省钱|值不值|值得|回本|费用|花费|成本|多少钱|自建|自己部署|"
                          r"本地部署|私有化|买卡|自购", _I)
# the API answer says each of these ('还是继续用 API' compares the two ways)
_API_ANSWERS = {"run_cost", "break_even", "price_check", "energy_cost", "compare"}

# the first rule that settles a kind wins
_KIND_BY_ASKS = (_readback_fact, _rent_total, _api_versus_own, _break_even, _cards_together, _engine_on_the_plan,
                 _plan_on_card)


def _kind_from_asks(out: Parsed, context: bool = True) -> None:
    """What the message asks settles a kind the wording left generic (:data:`_KIND_BY_ASKS`)."""
    for rule in _KIND_BY_ASKS:
        kind = rule(out, context)
        if kind is not None:
            out.kind = kind
            return


def _settle_kind(out: Parsed) -> None:
    """What the answer kind says about the slots: a lookup or an idea chooses nothing; cards offered as options
    are compared, whatever else the message asks of them."""
    if out.alternatives and out.kind in (Kind.build, Kind.whatif, Kind.size_inference, Kind.size_training,
                                         Kind.speed, Kind.inform, Kind.recommend):
        out.kind = Kind.compare
        out.pooled = False
    if out.kind == Kind.concept and out.has(Intent.whatif) and any(g.stated for g in out.gpus):
        out.kind = Kind.whatif  # 'what if we swap the 4x L40S for 4x H100 NVL — what do we gain?': a plan change
    if out.kind in (Kind.spec, Kind.concept):
        out.fp64 = None  # 'V100 的双精度算力' asks about FP64; it states no need for it
    if out.kind == Kind.spec:  # "T4 有没有 bf16" asks about BF16
        out.about_precision = out.about_precision or out.precision
        out.precision = out.power_limit_w = out.use_case = None
    if out.kind == Kind.concept:  # "what is FSDP?" asks about FSDP; it states no requirement
        keep = {"text", "lang", "intents", "kind", "kind_by", "asked_attribute", "wants_detail", "systems"}
        for name, fld in Parsed.model_fields.items():
            if name not in keep:
                setattr(out, name, fld.get_default(call_default_factory=True))

_MONEY_CUE = re.compile(r"预算|budget|经费|资金|花|spend|afford|以内|左右|不超过|up to|under|搞定|能买|买得起|"
                        r"块|元|yuan|rmb|renminbi|for (a|the|one) (gpu|card)|for gpus?|出头|来万|pay|price", _I)
_NOT_MONEY_AFTER = re.compile(r"^\s*(个|条|字|次|人|行|样本|词|张|块卡|卡|tokens?|token|词元|小时|天|参数|context|"
                              r"上下文|users?|people|requests?|steps?|samples?|rows?|w\b|瓦|ms\b|毫秒|秒|seconds?\b|"
                              r"b\b|billion\b)", _I)
_NOT_MONEY_BEFORE = re.compile(r"(上下文|窗口|序列|context|ctx|prompts?|window|seq(uence)? len\w*)[^\d]{0,12}$", _I)
_WATTS_LIKE = re.compile(r"^\s*\d{3,}(\.\d+)?\s*[wW]\s*$")
_DOLLAR_WORDS = ("美元", "美金", "刀", "dollar", "dollars", "usd", "bucks", "$")


_MINUS_BEFORE = re.compile(r"[-−负]\s*[$¥￥€£]?\s*$")
_MINUS_INSIDE = re.compile(r"^[$¥￥€£]\s*[-−]")
_SIGNED_CURRENCY = re.compile(r"[$¥￥€£]\s*[-−]\s*$")  # '$-1000': a currency mark, then the sign


_BULLET = re.compile(r"(?:^|\n)[ \t]*[-−•*][ \t]+[$¥￥€£]?\s*$")  # '- $289,500' in a pasted list is a bullet


def _negative(text: str, start: int, end: int) -> bool:
    """Whether the amount at ``start:end`` is written with a minus sign ('-5 万', '$-1000', '负 3 万'), not a list
    bullet ('- $289,500' on a line of a quote)."""
    if _BULLET.search(text[max(0, start - 8):start]):
        return False
    return bool(_MINUS_BEFORE.search(text[max(0, start - 3):start]) or _MINUS_INSIDE.match(text[start:end]))


_PART_PRICE = re.compile(r"(?:bridge|psu|power supply|cable|riser|motherboard|board|cpu|ram|ssd|nvme|switch|nic|"
                         r"桥接器?|电源|主板|内存|硬盘|交换机|网卡)\w*\s*(?:is|are|costs?|for|at|worth|卖|要|大概|约)?\s*"
                         r"(?:about|around|~|only|used|二手)?\s*(?:used)?\s*[$¥￥€£]?\s*$", _I)


def _find_budget(text: str, lang: Lang | None) -> tuple[Money | None, float | None]:
    """The budget: an amount with a currency mark, else one next to a money word, else a Chinese 万 amount
    (in this domain '十来万' and '一万五' are money unless a unit such as tokens or samples follows); second, an
    amount written negative, which no plan can use (said back, never read as positive)."""
    for m in find_money(text):
        currency = m.currency or _default_currency(text[m.start:m.end + 10], lang)  # '10000 yuan': the word after
        if _WATTS_LIKE.match(text[m.start:m.end]):
            continue  # '1500W' is watts; '1.5w' is 1.5万
        if _RATE_AFTER.match(text[m.end:m.end + 12]) or _PART_PRICE.search(text[max(0, m.start - 28):m.start]):
            continue  # '15 元/卡时': a rent rate; 'an NVLink bridge worth $150': a part's price
        if m.amount >= 10 and _negative(text, m.start, m.end):
            return None, -m.amount
        if m.amount >= 10:
            return Money(amount=m.amount, currency=currency), None
    for a in find_amounts(text):
        if _WATTS_LIKE.match(a.text):
            continue
        around = text[max(0, a.start - 10):a.end + 8]
        after = text[a.end:a.end + 8]
        if _NOT_MONEY_AFTER.match(after) or _NOT_MONEY_BEFORE.search(text[max(0, a.start - 14):a.start]) \
                or a.value < 100:
            continue
        chinese_wan = bool(re.search(r"[万w]", a.text, _I)) and a.value >= 1000
        money = _MONEY_CUE.search(around) or chinese_wan or _SIGNED_CURRENCY.search(text[max(0, a.start - 3):a.start])
        if money and _negative(text, a.start, a.end):
            return None, -a.value
        if money:
            return Money(amount=a.value, currency=_default_currency(a.text + around, lang)), None
    return None, None


def _default_currency(text: str, lang: Lang | None) -> Literal["CNY", "USD", "EUR", "GBP"]:
    low = text.lower()
    if "£" in text or "gbp" in low or "英镑" in text or re.search(r"\b(pounds?|quid)\b", low):
        return "GBP"
    if "€" in text or "eur" in low or "欧" in text:
        return "EUR"
    if any(w in low for w in _DOLLAR_WORDS):
        return "USD"
    if re.search(f"[{CN_NUMERAL_CHARS}]|元|块|人民币|rmb|cny|¥|￥|\\b(?:yuan|renminbi|kuai)\\b", text, _I) \
            or lang == "zh":
        return "CNY"
    return "USD"
