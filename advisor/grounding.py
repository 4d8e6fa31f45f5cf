"""Grounding check: every number in an LLM reply must come from a tool result or a cited passage.

Numbers are read with their units and converted to base quantities (bytes, bytes/s, W,
tokens/s, seconds, FLOP/s, parameters, tokens, money per currency, ratios). A number matches
the evidence when it equals an evidence quantity of the same kind within the rounding its
written form implies (``140 GB`` covers 135–145 GB but at most ±5 %) — so a GB↔GiB slip
(7.4 %) or an invented figure fails, while a correct paraphrase in other units passes.
Identifiers that contain digits (RTX 4090, FP16, Q4_K_M, PCIe 4.0, Llama-3.1-8B, [kb-03]) are
masked first. A reply that contradicts the tool's fit verdict fails regardless of numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, MutableMapping, MutableSequence, Sequence
from collections.abc import Set as AbstractSet
from functools import cache
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Field

from advisor import card_claims
from advisor.card_claims import CardFact
from advisor.facets import field_labels, text_labels
from knowledge import load_catalog
from knowledge.schema import GPU, Model
from tools.units import GB, TB, GiB, MiB, Unit

KiB = 2**10
TiB = 2**40

# unit text → (dimension, factor to the base unit)
_UNITS: dict[str, tuple[str, float]] = {
    "b": ("bytes", 1), "bytes": ("bytes", 1), "byte": ("bytes", 1), "字节": ("bytes", 1),
    "kb": ("bytes", 1e3), "kib": ("bytes", KiB), "mb": ("bytes", 1e6), "mib": ("bytes", MiB),
    "gb": ("bytes", GB), "gib": ("bytes", GiB), "g": ("bytes", GB), "tb": ("bytes", TB), "tib": ("bytes", TiB),
    "gb/s": ("bytes/s", GB), "gib/s": ("bytes/s", GiB), "tb/s": ("bytes/s", TB), "mb/s": ("bytes/s", 1e6),
    "gbps": ("bytes/s", GB),
    "w": ("W", 1), "瓦": ("W", 1), "kw": ("W", 1e3), "千瓦": ("W", 1e3),
    "tokens/s": ("tokens/s", 1), "token/s": ("tokens/s", 1), "tok/s": ("tokens/s", 1), "t/s": ("tokens/s", 1),
    "tps": ("tokens/s", 1), "tokens/sec": ("tokens/s", 1), "tokens per second": ("tokens/s", 1),
    "ms": ("s", 1e-3), "s": ("s", 1), "sec": ("s", 1), "seconds": ("s", 1), "second": ("s", 1), "秒": ("s", 1),
    "min": ("s", 60), "minutes": ("s", 60), "minute": ("s", 60), "分钟": ("s", 60),
    "h": ("s", 3600), "hours": ("s", 3600), "hour": ("s", 3600), "hrs": ("s", 3600), "小时": ("s", 3600),
    "days": ("s", 86400), "day": ("s", 86400), "天": ("s", 86400), "weeks": ("s", 604800), "周": ("s", 604800),
    "tflops": ("flops", 1e12), "tops": ("flops", 1e12), "pflops": ("flops", 1e15), "gflops": ("flops", 1e9),
    "%": ("ratio", 0.01), "b/param": ("bytes/param", 1), "bytes/param": ("bytes/param", 1),
    "bytes per parameter": ("bytes/param", 1), "字节/参数": ("bytes/param", 1), "percent": ("ratio", 0.01),
    "tokens": ("tokens", 1), "token": ("tokens", 1), "词元": ("tokens", 1),
    "params": ("params", 1), "parameters": ("params", 1), "参数": ("params", 1),
    "张": ("count", 1), "块": ("count", 1), "卡": ("count", 1), "gpus": ("count", 1), "gpu": ("count", 1),
    "gpu-hours": ("s", 3600), "gpu hours": ("s", 3600), "gpu·小时": ("s", 3600), "gpu-h": ("s", 3600),
    "cards": ("count", 1), "card": ("count", 1), "个并发": ("count", 1), "users": ("count", 1),
    "并发": ("count", 1), "concurrent": ("count", 1), "×": ("count", 1), "x": ("count", 1),
}
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_MENTION = re.compile(
    rf"(?P<cur>[$¥￥]|US\$|USD\s|CNY\s|RMB\s)?\s*(?P<num>{_NUM})\s*(?P<mult>万|亿|千|[kKMB](?![A-Za-z/])|"
    rf"billion|million|thousand)?\s*(?P<unit>{_UNIT_ALT}|元|美元|dollars|人民币)?(?![A-Za-z])",
    re.IGNORECASE)
_MULT = {"万": 1e4, "亿": 1e8, "千": 1e3, "k": 1e3, "m": 1e6, "b": 1e9, "billion": 1e9, "million": 1e6,
         "thousand": 1e3}

# a citation: an id in square brackets, no spaces, starting with a letter
CITATION = re.compile(r"\[[A-Za-z][A-Za-z0-9_\-./#:]{0,79}\]")
_MASKS = [
    CITATION,  # '[vram/en/kv-cache]'; a bracketed figure ('[77 GB]') is read like any other
    re.compile(r"https?://\S+"),
    # versions and product numbers after a name ('PCIe 4.0', 'CUDA 12.4', 'Llama 3.1', 'RTX 4090'), but not a
    # size that follows a family name ('Llama 70B' keeps its 70B)
    re.compile(r"(?i)\b(pcie|gen|cuda|rocm|nvlink|version|ver|v|llama|qwen|gemma|deepseek|mistral|phi|python|vllm|"
               r"sglang|tensorrt-llm|cann|cc|compute capability|sm_?|ddr|gddr|hbm|x|ubuntu|driver|opset|"
               r"rtx|gtx|tesla|mi|gaudi|arc|ascend|昇腾|atlas|mlu|mtt|br|bi)\s*-?\s*(?=\d)(?![\d.]+\s*[bB]\b)"
               r"\d+(\.\d+)*[a-z]*\b"),
    re.compile(r"(?i)\b[a-z]+[-_]?\d+(?:[._-]?[a-z0-9]+)*\b"),  # A100, fp16, Q4_K_M, gfx942, H100-80GB
    re.compile(r"(?i)\b\d+[-_]?(bit|bits|位|比特)\b"),
    re.compile(r"(?i)\b\d+(?:\.\d+)?[a-z]*_[a-z0-9_]+\b"),
    re.compile(r"\b\d+/\d+\b"),  # 24/7, 2:4 style ratios
    # years and dates — but not '2000 W' or '2048 tokens', which are quantities
    re.compile(rf"(?i)\b(19|20)\d{{2}}(-\d{{2}}){{0,2}}\b(?!\s*(?:{_UNIT_ALT}|元|美元)(?![a-z]))"),
    re.compile(r"(?m)^\s*\d+[.)、]\s"),  # list markers
]


_LETTER_DIGIT = next(p for p in _MASKS if p.pattern.startswith(r"(?i)\b[a-z]+[-_]?\d+"))  # A100, H100-80GB
_GLUED = re.compile(r"(?i)[-_](\d+(?:\.\d+)?(?:gb|gib|tb|mb|g|w))$")


class Mention(BaseModel):
    text: str
    start: int
    end: int
    number: float = Field(description="the numeral as written, after 万/k multipliers")
    dim: str = Field(description="quantity kind, 'plain' when no unit")
    value: float = Field(description="in the base unit of `dim`")
    tolerance: float = Field(description="in the base unit of `dim`")


_OPPOSITE = {"need": "capacity", "capacity": "need"}


class Evidence(BaseModel):
    """Quantities a reply may quote, by dimension (base units); memory figures also by role: what a configuration
    needs ("need") and what a GPU has or offers ("capacity"); and the card counts of the turn."""

    values: dict[str, list[float]] = Field(default_factory=dict)
    roles: dict[str, list[float]] = Field(default_factory=dict, description="from result fields and the catalog")
    text_roles: dict[str, list[float]] = Field(default_factory=dict, description="from the words of a text")
    cards: list[CardFact] = Field(default_factory=list, description="configurations sized, priced or stated")
    plan_gpus: list[str] = Field(default_factory=list, description="the cards the plan sized")
    counts_known: bool = Field(False, description="the turn's card counts are known (``card_counts``): a count of "
                                                  "cards is held to them, not checked as a bare number")

    def add_role(self, role: str, value: float) -> None:
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            self.roles.setdefault(role, []).append(float(value))

    def add_text_role(self, role: str, value: float) -> None:
        if math.isfinite(value):
            self.text_roles.setdefault(role, []).append(float(value))

    def add(self, dim: str, value: float) -> None:
        if value is None or isinstance(value, bool) or not math.isfinite(value):
            return
        self.values.setdefault(dim, []).append(float(value))

    def role_values(self, label: str) -> list[float]:
        """The figures of ``label``: those a result field gives it, and those a text's words give it unless a field
        gives the same figure the opposite role ('vLLM may use 23.2 GB of it' is a capacity, not a need)."""
        fields = self.roles.get(label, [])
        opposite = self.roles.get(_OPPOSITE.get(label, ""), [])
        said = [v for v in self.text_roles.get(label, []) if not any(abs(v - o) <= 0.01 * abs(o) for o in opposite)]
        return fields + said

    @property
    def has_roles(self) -> bool:
        return bool(self.roles or self.text_roles)

    def merge(self, other: Evidence) -> Evidence:
        for dim, vals in other.values.items():
            self.values.setdefault(dim, []).extend(vals)
        for role, vals in other.roles.items():
            self.roles.setdefault(role, []).extend(vals)
        for role, vals in other.text_roles.items():
            self.text_roles.setdefault(role, []).extend(vals)
        self.cards += other.cards
        self.counts_known = self.counts_known or other.counts_known
        self.plan_gpus += [g for g in other.plan_gpus if g not in self.plan_gpus]
        return self


class GroundingReport(BaseModel):
    ok: bool
    checked: list[Mention] = Field(default_factory=list)
    ungrounded: list[Mention] = Field(default_factory=list)
    verdict_conflict: str | None = None

    @property
    def bad_numbers(self) -> list[str]:
        return [m.text.strip() for m in self.ungrounded]


# ----------------------------------------------------------------------------- extraction


@cache
def _name_mask() -> re.Pattern[str] | None:
    """Every catalog GPU/model name and alias, longest first (their digits are not quantities)."""
    try:
        cat = load_catalog()
    except Exception:  # a broken catalog must not break grounding
        return None
    names: set[str] = set()
    entries: list[GPU | Model] = [*cat.gpus, *cat.models]
    for e in entries:
        for n in (e.name, *e.aliases, e.id):
            if re.search(r"\d", n) and len(n) >= 2:
                names.add(n)
    if not names:
        return None
    alt = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alt})(?![A-Za-z0-9])", re.IGNORECASE)


def mask_identifiers(text: str) -> str:
    """Blank out names and codes whose digits are not quantities (same length, so offsets hold)."""
    spans: list[tuple[int, int]] = []
    names = _name_mask()
    if names is not None:
        spans += [(m.start(), m.end()) for m in names.finditer(text)]
    for pat in _MASKS:
        for m in pat.finditer(text):
            # keep unit-bearing numbers like '80GB', '35tok/s', '1.5kW' that the letter+digit rule catches
            if pat is _LETTER_DIGIT and re.fullmatch(rf"(?i)\d+(\.\d+)?({_UNIT_ALT})", m.group(0)):
                continue
            glued = _GLUED.search(m.group(0)) if pat is _LETTER_DIGIT else None
            # a size glued to a name ('H100-500GB') is still a claim: only the name part is masked
            spans.append((m.start(), m.start() + glued.start() + 1 if glued else m.end()))
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _decimals_tolerance(num: str) -> float:
    """Half a unit in the last written place; a trailing-zero integer counts its last non-zero digit."""
    clean = num.replace(",", "")
    if "." in clean:
        return 0.5 * 10 ** -len(clean.split(".")[1])
    stripped = clean.rstrip("0")
    zeros = len(clean) - len(stripped) if stripped else 0
    return 0.5 * 10**zeros


_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_EN_WORDS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                         "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                         "seventeen", "eighteen", "nineteen"])}
_EN_TENS = {w: 10 * (i + 2) for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                                   "ninety"])}
_WORD_UNITS = {"gb": "gb", "g": "gb", "gib": "gib", "tb": "tb", "w": "w", "瓦": "w", "gigabytes": "gb",
               "terabytes": "tb", "watts": "w", "张": "张", "块": "块", "卡": "卡", "cards": "cards", "gpus": "gpus"}
_CN_NUMBER = re.compile(r"([零〇一二两三四五六七八九十百千万]+)\s*(GB|GiB|TB|G|W|瓦|张|块|卡)(?![A-Za-z])",
                        re.IGNORECASE)
_EN_WORD = "|".join([*_EN_WORDS, *_EN_TENS])
_EN_NUMBER = re.compile(rf"(?i)\b((?:{_EN_WORD})(?:[\s-]+(?:{_EN_WORD}|hundred|thousand|and))*)\s+"
                        r"(gigabytes|terabytes|watts|gb|gib|tb|w|cards|gpus)\b")


def _cn_value(word: str) -> float | None:
    """'二十四' → 24, '一百二十八' → 128, '两万' → 20000 (up to 万)."""
    total, section, digit = 0, 0, None
    for ch in word:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            section += (digit if digit is not None else 1) * _CN_UNITS[ch]
            digit = None
        elif ch == "万":
            total += (section + (digit or 0)) * 10_000
            section, digit = 0, None
    value = total + section + (digit or 0)
    return float(value) if value or "零" in word or "〇" in word else None


def _en_value(words: str) -> float | None:
    """'twenty-four' → 24, 'one hundred twenty eight' → 128."""
    total, current = 0, 0
    for w in re.split(r"[\s-]+", words.lower()):
        if w in _EN_WORDS:
            current += _EN_WORDS[w]
        elif w in _EN_TENS:
            current += _EN_TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w == "thousand":
            total += max(current, 1) * 1000
            current = 0
    return float(total + current)


def _word_numbers(text: str, masked: str) -> list[Mention]:
    """Quantities written in words ('二十四 GB', 'twenty-four gigabytes'): checked like digits."""
    out = []
    for pattern, parse in ((_CN_NUMBER, _cn_value), (_EN_NUMBER, _en_value)):
        for m in pattern.finditer(text):
            if masked[m.start():m.end()].strip() == "":
                continue  # inside a name or a citation
            value = parse(m.group(1))
            if value is None:
                continue
            unit = _WORD_UNITS[m.group(2).lower()]
            dim, factor = _UNITS[unit]
            out.append(Mention(text=m.group(0), start=m.start(), end=m.end(), number=value, dim=dim,
                               value=value * factor, tolerance=0.5 * factor))
    return out


# the least slack of a figure rounded for display, by kind (base units): half a tenth of a GB, half a watt …
_DISPLAY_SLACK = {"bytes": 0.05 * GB, "bytes/s": 0.05 * GB, "W": 0.5, "tokens/s": 0.5, "s": 0.5, "USD": 0.5,
                  "CNY": 0.5}


def extract(text: str) -> list[Mention]:
    """Numbers in ``text`` with their units, identifiers masked; quantities written in words included."""
    masked = mask_identifiers(text)
    code = [(c.start(), c.end()) for c in re.finditer(r"`[^`\n]*`", text)]  # formulas: only unit-bearing figures
    out: list[Mention] = _word_numbers(text, masked)
    for m in _MENTION.finditer(masked):
        num = m.group("num")
        base = float(num.replace(",", ""))
        mult_txt = (m.group("mult") or "").strip()
        unit_txt = (m.group("unit") or "").strip().lower()
        cur = (m.group("cur") or "").strip().upper()
        mult = _MULT.get(mult_txt.lower(), 1.0) if mult_txt else 1.0
        tol_written = _decimals_tolerance(num)
        number = base * mult
        tail = masked[m.end():m.end() + 2]
        bare = not unit_txt and not mult_txt and not cur
        if re.match(r"\s*年", tail) or (bare and re.match(r"\s*(年|月|日|号)", tail)):
            continue
        if cur or unit_txt in ("元", "美元", "dollars", "人民币"):
            dim = "USD" if ("$" in cur or "USD" in cur or unit_txt in ("美元", "dollars")) else "CNY"
            factor = 1.0
        elif unit_txt:
            dim, factor = _UNITS[unit_txt]
        elif mult_txt.upper() == "B":
            dim, factor = "params", 1.0  # '70B' alone is a parameter count
        else:
            dim, factor = "plain", 1.0
        if dim == "bytes" and unit_txt == "b" and not mult_txt:
            dim = "plain"  # a bare 'b' after a number is not trustworthy as bytes
        value = number * factor
        last_digit = 0.5 * (10 ** -len(num.split(".")[1]) if "." in num else 1)
        # a coarse figure ('about 0.1 TB' for 74.9 GB) is held to 10 % where its last digit alone would allow 50 %
        # and more than the least a display rounds away ('0.2 GB' of a 0.24 GB overhead is a fair rounding)
        floor = _DISPLAY_SLACK.get(dim)
        written = last_digit * mult * factor
        if floor is not None:
            written = min(written, max(0.1 * abs(value), floor))
        tolerance = max(min(tol_written, 0.05 * abs(base)) * mult * factor, written)
        if dim in ("plain", "count") and any(a <= m.start() < b for a, b in code):
            continue
        out.append(Mention(text=m.group(0), start=m.start(), end=m.end(), number=number, dim=dim, value=value,
                           tolerance=tolerance))
    return sorted(out, key=lambda mention: mention.start)


# ----------------------------------------------------------------------------- evidence


def _key_dim(key: str, parent: str) -> tuple[str, float]:
    k = key.lower()
    p = parent.lower()
    if "per_param" in k:
        return "bytes/param", 1
    if k.endswith("_bytes") or (k in ("bytes", "weights", "kv_cache", "activations", "gradients", "optimizer",
                                     "overhead", "total") and ("breakdown" in p or k == "bytes" or "memory" in p)):
        return "bytes", 1
    if "bytes" in k and "per_s" not in k:
        return "bytes", 1
    if k.endswith(("_gbs", "bandwidth_gbs")) or k == "bandwidth_gbs":
        return "bytes/s", GB
    if k.endswith("_gib"):
        return "bytes", GiB
    if k.endswith("_gb") or k == "memory_gb":
        return "bytes", GB
    if k.endswith("_tb"):
        return "bytes", TB
    if k.endswith("_mib"):
        return "bytes", MiB
    if k.endswith(("_w", "watts")) or k in ("tdp", "power", "psu"):
        return "W", 1
    if "tokens_per_s" in k or k.endswith(("_tps", "tok_s")) or "tok_per_s" in k:
        return "tokens/s", 1
    if k.endswith(("_ms",)):
        return "s", 1e-3
    if k.endswith(("_s", "seconds")) or k == "s":
        return "s", 1
    if k.endswith("_hours"):
        return "s", 3600
    if k.endswith("_days") or k == "days":
        return "s", 86400
    if "usd" in k:
        return "USD", 1
    if "cny" in k or "rmb" in k:
        return "CNY", 1
    if k.endswith(("_pct", "percent")):
        return "ratio", 0.01
    if k.endswith("tflops") or p.endswith("throughput") or k.endswith("_tops"):
        return "flops", 1e12
    if k.endswith("flops"):
        return "flops", 1
    if k.endswith("params_b") or k == "active_b":
        return "params", 1e9
    if k.endswith("params") or k == "parameters":
        return "params", 1
    if "token" in k or "context" in k or k in ("seq", "n_ctx", "max_model_len"):
        return "tokens", 1
    if k in ("gpus", "count", "gpu_count", "n_gpus", "tp", "data_parallel", "concurrency", "sequences", "users",
             "batch", "micro_batch", "cards"):
        return "count", 1
    if any(w in k for w in ("util", "fraction", "ratio", "efficiency", "mfu", "eta", "share", "headroom_frac")):
        return "ratio", 1
    return "plain", 1


# -- the unit a result schema declares -----------------------------------------------------------
#
# A typed walk carries, next to each JSON value, the annotation that describes it in the tool's output model
# (``None`` once the schema says nothing more). A number read under a ``tools.units.Unit`` marker takes that
# unit; any other number falls back to the field-name guess of ``_key_dim``.

_SEQUENCES = (list, tuple, set, frozenset, Sequence, MutableSequence, AbstractSet)
_MAPPINGS = (dict, Mapping, MutableMapping)


def _units_in(metadata: Iterable[Any]) -> Unit | None:
    return next((m for m in metadata if isinstance(m, Unit)), None)


def _bare(ann: Any) -> Any:
    """``ann`` without its ``Annotated`` layers."""
    while get_origin(ann) is Annotated:
        ann = get_args(ann)[0]
    return ann


def _model_class(ann: Any) -> type[BaseModel] | None:
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _arm_score(arm: Any, obj: Any) -> int:
    """How well one arm of a union describes the JSON value ``obj`` (0: not at all)."""
    base = _bare(arm)
    origin = get_origin(base)
    model = _model_class(base)
    if isinstance(obj, dict):
        if model is not None:
            fields = {*model.model_fields, *model.model_computed_fields}
            return 2 + len(fields & set(obj))
        return 1 if origin in _MAPPINGS or base in (dict, Any) else 0
    if isinstance(obj, list | tuple):
        return 1 if origin in _SEQUENCES or base in (list, tuple, Any) else 0
    if isinstance(obj, bool) or obj is None:
        return 0
    if isinstance(obj, int | float):
        return 2 if base in (int, float) else 1 if base is Any else 0
    return 0


def _unwrap(ann: Any, obj: Any) -> tuple[Any, Unit | None]:
    """The annotation's arm that describes ``obj`` (``Annotated`` and ``X | None`` layers removed) and the
    ``Unit`` declared on the way; ``(None, None)`` when the schema does not describe ``obj``."""
    unit: Unit | None = None
    while ann is not None:
        origin = get_origin(ann)
        if origin is Annotated:
            args = get_args(ann)
            unit = unit or _units_in(args[1:])
            ann = args[0]
        elif origin in (Union, UnionType):
            arms = [a for a in get_args(ann) if a is not type(None)]
            scored = [(score, i) for i, a in enumerate(arms) if (score := _arm_score(a, obj)) > 0]
            ann = arms[max(scored, key=lambda si: (si[0], -si[1]))[1]] if scored else None
        else:
            break
    return ann, unit


def _field_annotation(model: type[BaseModel], key: str) -> tuple[Any, Unit | None]:
    """The annotation of ``model``'s field (or computed field) ``key`` and the ``Unit`` in its ``Field``
    metadata (pydantic moves a field's outer ``Annotated`` markers there)."""
    info = model.model_fields.get(key)
    if info is None:
        info = next((f for f in model.model_fields.values() if f.alias == key), None)
    if info is not None:
        return info.annotation, _units_in(info.metadata)
    computed = model.model_computed_fields.get(key)
    return (computed.return_type, None) if computed is not None else (None, None)


def _item_annotations(ann: Any, n: int) -> list[Any]:
    """The annotation of each of ``n`` items of a sequence annotated ``ann``."""
    args = get_args(ann)
    if not args:
        return [None] * n
    if get_origin(ann) is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return list(args) if len(args) == n else [None] * n  # tuple[X, Y]: by position
    return [args[0]] * n


def _walk(obj: Any, ev: Evidence, key: str = "", parent: str = "", texts: list[str] | None = None,
          ann: Any = None, unit: Unit | None = None) -> None:
    """Quantities in the JSON value ``obj`` (under field ``key`` of ``parent``), with their units from the
    annotation ``ann`` where the schema declares one (``unit``: one declared further up, on a list)."""
    ann, declared = _unwrap(ann, obj)
    unit = declared or unit
    if isinstance(obj, dict):
        model = _model_class(ann)
        values = get_args(ann)[1] if model is None and get_origin(ann) in _MAPPINGS and get_args(ann) else None
        text_unit = obj.get("unit") if isinstance(obj.get("unit"), str) else None
        for k, v in obj.items():
            # a model's field declares its own unit; a mapping's values share the mapping's
            child, child_unit = _field_annotation(model, str(k)) if model is not None else (values, unit)
            if k == "value" and text_unit and isinstance(v, int | float) \
                    and (child_unit or _unwrap(child, v)[1]) is None:
                dim, factor = _UNITS.get(text_unit.lower(), ("plain", 1.0))
                ev.add(dim, v * factor)
                name = obj.get("name")  # a term names its quantity ('Weights read per step')
                for label in field_labels(re.sub(r"\W+", "_", name) if isinstance(name, str) else "", key, dim):
                    ev.add_role(label, v * factor)
                continue
            _walk(v, ev, str(k), key or parent, texts, child, child_unit)
    elif isinstance(obj, list | tuple):
        items = _item_annotations(ann, len(obj)) if get_origin(ann) in _SEQUENCES else [None] * len(obj)
        for v, item in zip(obj, items, strict=True):
            _walk(v, ev, key, parent, texts, item, unit)
    elif isinstance(obj, bool) or obj is None:
        return
    elif isinstance(obj, int | float):
        dim, factor = (unit.dim, unit.factor) if unit is not None else _key_dim(key, parent)
        ev.add(dim, obj * factor)
        ev.add("plain", obj)
        for label in field_labels(key, parent, dim):
            ev.add_role(label, obj * factor)
    elif isinstance(obj, str) and texts is not None and re.search(r"\d", obj):
        texts.append(obj)


def _schema(item: Any) -> tuple[Any, type[BaseModel] | None] | None:
    """``(json, output model)`` for an item that names its schema, else None (an untyped JSON item)."""
    if isinstance(item, BaseModel):
        return item.model_dump(mode="json"), type(item)
    if not (isinstance(item, tuple) and len(item) == 2):
        return None
    source, result = item
    if _model_class(source) is not None:
        return result, source
    if isinstance(source, str):
        from advisor.toolspec import UnknownToolError, output_model  # not at import time: it loads every tool

        try:
            return result, output_model(source)
        except UnknownToolError:
            return None  # not a tool's name: an ordinary pair of JSON values
    return None


def evidence_from(results: Iterable[Any] = (), texts: Iterable[str] = ()) -> Evidence:
    """Evidence from tool results and from free texts (passages, formulas, the user's words).

    Each item of ``results`` is JSON (units guessed from the field names), a ``(tool name, JSON result)``
    or ``(output model, JSON)`` pair, or a pydantic model instance: those three read each field's unit from
    the schema's ``tools.units.Unit`` markers, falling back to the name guess for fields without one."""
    ev = Evidence()
    strings: list[str] = []
    for r in results:
        typed = _schema(r)
        if typed is None:
            _walk(r, ev, texts=strings)
        else:
            _walk(typed[0], ev, texts=strings, ann=typed[1])
    for t in dict.fromkeys([*strings, *texts]):  # each distinct text once
        previous = 0
        for m in extract(t):
            ev.add(m.dim, m.value)
            ev.add("plain", m.number)
            role = text_labels(t, m, previous).get("role")  # need or capacity, as its own words say; the finer
            if role is not None:  # facets come from the results' field names only (a text's words are looser)
                ev.add_text_role(role, m.value)
            previous = m.end
        ev.cards += card_claims.facts_from_text(t)
    return ev


def card_capacities(calls: Iterable[Any]) -> Evidence:
    """The memory of every catalog GPU a call of the turn names, as a capacity ('the 4090's 24 GB'), in GB and in
    the GiB the label really means."""
    ev = Evidence()
    names: list[str] = []
    for c in calls:
        args = getattr(c, "arguments", None) or {}
        if isinstance(args.get("gpu"), str):
            names.append(args["gpu"])
        listed = args.get("gpus")  # check_build: a list of {gpu, count}; the sizing tools: a count
        if isinstance(listed, list):
            names += [g["gpu"] for g in listed if isinstance(g, dict) and isinstance(g.get("gpu"), str)]
    catalog = load_catalog()
    for name in dict.fromkeys(names):
        try:
            gpu = catalog.gpu(name)
        except LookupError:
            continue
        for value in (gpu.memory_gb * GB, gpu.memory_gb * GiB):
            ev.add("bytes", value)
            ev.add_role("capacity", value)
            ev.add_role("per_gpu", value)  # '每张 48 GB': a card's memory is a per-card figure
    return ev


def card_counts(plan: Iterable[Any], alternatives: Iterable[Any] = ()) -> Evidence:
    """The card counts of the plan's calls, with their fit verdicts, and of the alternatives sized beside it (a
    turn whose calls hold no configuration of cards, a concept or a lookup, leaves counts to the number check)."""
    facts, gpus = card_claims.facts_from_calls(plan, alternatives)
    return Evidence(cards=facts, plan_gpus=gpus, counts_known=bool(facts))


# ----------------------------------------------------------------------------- matching

_DISPLAY: dict[str, tuple[float, ...]] = {
    "bytes": (GB, GiB, 1e6, MiB, TB, TiB, 1),
    "bytes/s": (GB, TB, GiB),
    "s": (1, 60, 3600, 86400),
    "ratio": (0.01, 1),
    "flops": (1e12, 1e15, 1),
    "params": (1e9, 1e6, 1),
    "tokens": (1, 1000, 1024),
    "USD": (1, 1000, 1e4),
    "CNY": (1, 1e4, 1000),
}


def _matches(m: Mention, ev: Evidence) -> bool:
    if m.dim != "plain":
        for v in ev.values.get(m.dim, []):
            if abs(v - m.value) <= m.tolerance + 1e-9 * max(1.0, abs(v)):
                return True
        if m.dim == "count":
            return any(abs(v - m.value) < 1e-9 for v in ev.values.get("plain", []))
        if m.dim in ("tokens",):
            return any(abs(v - m.value) <= m.tolerance for v in ev.values.get("plain", []))
        return False
    # a bare number: equal to some evidence figure in one of its usual display units
    for dim, vals in ev.values.items():
        scales = _DISPLAY.get(dim, (1,))
        for v in vals:
            for s in scales:
                if abs(v / s - m.value) <= m.tolerance + 1e-9 * max(1.0, abs(v / s)):
                    return True
    return False


def _exempt(m: Mention) -> bool:
    """Small bare integers (1–10: 'two steps', '1 个') carry no claim worth checking."""
    return m.dim == "plain" and m.value.is_integer() and 0 <= m.value <= 10


_POSITIVE = re.compile(r"够用|足够|够了|能跑|可以跑|跑得动|跑得起来|放得下|装得下|能装下|可以装下|没问题|完全可以|"
                       r"\bfits?\b|will fit|is enough|are enough|plenty|can run|will run|"
                       r"runs? ((it|this|them) )?(fine|comfortably|easily)|no problem|\bworks\b", re.IGNORECASE)
_NEGATIVE = re.compile(r"can(?:no|')t fit|can not fit|"
                       r"不够|不足|放不下|装不下|跑不动|跑不了|不能|无法|不行|超出|超过了?显存|爆显存|\bOOM\b|"
                       r"out of memory|does(n't| not) fit|won'?t fit|will not fit|not enough|insufficient|cannot|"
                       r"can'?t|too (large|big)|exceeds?|short by|falls short|not fit|"
                       r"\b(neither|none of)\b[^.。]{0,40}?\bfits?\b", re.IGNORECASE)


def fit_claim(text: str) -> bool | None:
    """What ``text`` says of fitting: True (fits), False (does not), None (nothing, or both)."""
    neg = bool(_NEGATIVE.search(text))
    pos = bool(_POSITIVE.search(_NEGATIVE.sub(" ", text)))
    return None if neg == pos else pos


def verdict_conflict(text: str, fits: bool | None) -> str | None:
    """How the text's fit claim contradicts the tool's verdict ('unsaid_no_fit', 'says_both', 'says_no_fit'; the
    engine's messages word them), else None."""
    if fits is None:
        return None
    neg = bool(_NEGATIVE.search(text))
    pos = bool(_POSITIVE.search(_NEGATIVE.sub(" ", text)))  # 'won't fit' / '不够用' are not positive claims
    if fits is False and not neg:
        return "unsaid_no_fit"
    if fits is False and pos:  # 'it does not fit on one — but it fits': when unsure, reject
        return "says_both"
    if fits is True and neg and not pos:
        return "says_no_fit"
    return None


def _matches_role(m: Mention, values: list[float]) -> bool:
    return any(abs(v - m.value) <= m.tolerance + 1e-9 * max(1.0, abs(v)) for v in values)


def _card_mention(claim: card_claims.CardClaim) -> Mention:
    return Mention(text=claim.text, start=claim.start, end=claim.end, number=claim.count, dim="cards",
                   value=claim.count, tolerance=0.0)


def _card_claims(text: str, evidence: Evidence) -> tuple[list[Mention], list[Mention]]:
    """The card counts ``text`` writes and those the evidence does not support (none read unless the turn's counts
    are known: then a count is checked as a number)."""
    if not evidence.counts_known:
        return [], []
    said = card_claims.claims(text)
    bad = [c for c in said if not card_claims.supported(c, evidence.cards, evidence.plan_gpus)]
    return [_card_mention(c) for c in said], [_card_mention(c) for c in bad]


def check(text: str, evidence: Evidence, fits: bool | None = None) -> GroundingReport:
    """Every number in ``text`` against ``evidence``, a memory figure against the facts of its role ('needs 21.9
    GB' must be a need, '只有 16 GB' a capacity), a card count against the turn's counts ('two RTX 4090s would be
    enough' only where two fit); plus the fit verdict when the tools gave one."""
    cards, bad = _card_claims(text, evidence)
    mentions = [m for m in extract(text) if not _exempt(m)
                and not any(c.start < m.end and m.start < c.end for c in cards)]
    previous = 0
    for m in mentions:
        labels = text_labels(text, m, previous) if evidence.has_roles else {}
        previous = m.end
        if labels.get("role") == "capacity":
            labels.pop("scope", None)  # a card's memory is per GPU whatever the words say of the need
        checked = [(axis, values) for axis, label in labels.items() if (values := evidence.role_values(label))]
        if any(not _matches_role(m, values) for _, values in checked):
            bad.append(m)  # 'needs 56.7 GB per GPU' when 56.7 GB is both GPUs together
        elif not any(axis == "role" for axis, _ in checked) and not _matches(m, evidence):
            bad.append(m)
    conflict = verdict_conflict(text, fits)
    checked_all = sorted([*mentions, *cards], key=lambda mention: mention.start)
    return GroundingReport(ok=not bad and conflict is None, checked=checked_all,
                           ungrounded=sorted(bad, key=lambda mention: mention.start), verdict_conflict=conflict)


# a sentence ends at 。！？!? or a newline, or at '.' followed by a space (not a decimal point)
_SENTENCE = re.compile(r"(?:[^。！？!?\n.]|\.(?!\s|$))+(?:[。！？!?]+|\.(?=\s|$)|\n|$)|[。！？!?.\n]")


def sentences(text: str) -> list[str]:
    """``text`` cut into its sentences (each keeps its own end mark and spacing; joined they give ``text``)."""
    return [s.group(0) for s in _SENTENCE.finditer(text)]


def repair(text: str, report: GroundingReport) -> str | None:
    """Drop the sentences holding ungrounded numbers; None when too little would be left to be useful."""
    if report.verdict_conflict or not report.ungrounded:
        return None if report.verdict_conflict else text
    bad_spans = [(m.start, m.end) for m in report.ungrounded]
    kept, dropped = [], 0
    for s in _SENTENCE.finditer(text):
        if any(s.start() <= a < s.end() for a, _ in bad_spans):
            dropped += 1
            continue
        kept.append(s.group(0))
    total = dropped + len([k for k in kept if k.strip()])
    remaining = "".join(kept).strip()
    if not remaining or dropped * 2 > total or not re.search(r"\d", remaining):
        return None
    return remaining
