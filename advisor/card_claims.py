"""Card counts in an explanation, held to the counts the turn's tools used or computed.

A count the text writes ('two RTX 4090s', '两张 4090', '2× 4090', '双卡', 'four GPUs') must be a count of that card
(with no card named: of any card) that this turn's tools sized, priced or checked, or that their texts state. A count
said to be enough ('would be enough', '够了', '足够', 'it fits on …') must not be below the least count the tools
found to fit the plan's setup, nor one they found too few. One card is a claim only when said to be enough ('one
card', '单卡' also just describe a card).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from advisor.nlu.rules import card_count_mentions
from advisor.numbers import parse_number
from knowledge import AmbiguousNameError, load_catalog

SIZING = ("size_inference", "size_training")
_NOT_SETUP = frozenset({"gpu", "gpus", "count", "parallel", "pipeline_stages", "gpu_memory_bytes"})
CLAUSE_BREAK = re.compile(r"[,;:，；：。！？!?\n]|\bbut\b|\bwhile\b|\bwhereas\b|\bthough\b|但是?|而|不过",
                          re.IGNORECASE)
_ENOUGH = re.compile(r"(?i)enough|sufficient|suffices?|plenty|\bfits?\b|will fit|would fit|can (run|hold|serve|load)|"
                     r"\bruns?\b|够|足够|就行|能跑|可以跑|跑得动|跑得起来|放得下|装得下|能装下|可以装下|能放下|没问题")
# a count said enough with the cards left unsaid: 'four would be enough', '三张就够了' is read by the rules already
_BARE_ENOUGH = re.compile(r"(?i)\b(two|three|four|five|six|seven|eight|nine|ten|twelve|sixteen|\d{1,2})\s+"
                          r"(would|will|should|could|might)\s+(be enough|suffice|do|work|fit)\b")
_NOT = re.compile(r"(?i)\bnot\b|n't\b|\bno\b|\bnever\b|\bcannot\b|\bshort\b|\btoo few\b|不|没|无法|难以|差")


class CardFact(BaseModel):
    """A configuration of the turn: a card and how many; ``fits`` when it was sized for the plan's setup."""

    gpu: str = Field("", description="catalog id; '' for a count a text states without naming the card")
    count: int
    fits: bool | None = None


class CardClaim(BaseModel):
    """A card count an explanation writes."""

    text: str
    start: int
    end: int
    count: int
    gpus: list[str] = Field(default_factory=list, description="the card named (several ids when ambiguous)")
    enough: bool = Field(False, description="said to be enough ('two cards would be enough', '双卡就够了')")


# ----------------------------------------------------------------------------- from a text


def clause_of(text: str, start: int, end: int) -> str:
    """The clause holding ``text[start:end]``."""
    head = CLAUSE_BREAK.split(text[:start])[-1]
    tail = CLAUSE_BREAK.split(text[end:])[0]
    return head + text[start:end] + tail


def claims(text: str) -> list[CardClaim]:
    """The card counts ``text`` writes, each with whether its clause says that count is enough."""
    out = []
    for m in card_count_mentions(text):
        said = text[m.start:m.end].rstrip(".,;:!?")  # 'four RTX 4090s.': the name's window takes the stop
        end = m.start + len(said)
        clause = clause_of(text, m.start, end)
        enough = bool(_ENOUGH.search(clause)) and not _NOT.search(clause)
        out.append(CardClaim(text=said, start=m.start, end=end, count=m.count, gpus=m.gpus, enough=enough))
    for b in _BARE_ENOUGH.finditer(text):
        count = parse_number(b.group(1))
        if count and not any(c.start < b.end() and b.start() < c.end for c in out) \
                and not _NOT.search(clause_of(text, b.start(), b.end())):
            out.append(CardClaim(text=b.group(0), start=b.start(), end=b.end(), count=int(count), enough=True))
    return sorted(out, key=lambda c: c.start)


def facts_from_text(text: str) -> list[CardFact]:
    """The card counts a tool's or passage's text states (no fit verdict)."""
    return [CardFact(gpu=gpu, count=m.count) for m in card_count_mentions(text) for gpu in (m.gpus or [""])]


# ----------------------------------------------------------------------------- from the tool calls


def _gpu_id(name: Any) -> str:
    if not isinstance(name, str) or not name:
        return ""
    try:
        return load_catalog().gpu(name).id
    except (LookupError, AmbiguousNameError):
        return name


def _setup(call: Any) -> str:
    """What a sizing computes apart from the card and its count (model, precision, context, users …)."""
    rest = {k: v for k, v in call.arguments.items() if k not in _NOT_SETUP}
    return f"{call.name}:" + json.dumps(rest, sort_keys=True, default=str)


def _configs(call: Any) -> list[tuple[str, int, bool | None]]:
    """(card, count, fits) of every configuration one call sized, timed, checked or ranked."""
    args, result = call.arguments, call.result if isinstance(call.result, dict) else {}
    out: list[tuple[str, int, bool | None]] = []
    if call.name in SIZING and args.get("gpu"):
        out.append((_gpu_id(args["gpu"]), int(args.get("gpus") or 1), result.get("fits")))
    elif args.get("gpu") and isinstance(args.get("count", 1), int):
        out.append((_gpu_id(args["gpu"]), int(args.get("count", 1)), None))
    for item in args.get("gpus") if isinstance(args.get("gpus"), list) else []:  # check_build: [{gpu, count}]
        if isinstance(item, dict) and isinstance(item.get("count"), int):
            out.append((_gpu_id(item.get("gpu")), item["count"], None))
    for option in result.get("options") or []:  # recommend, affordable, value: the configurations ranked
        if isinstance(option, dict) and option.get("gpu") and isinstance(option.get("count"), int):
            out.append((_gpu_id(option.get("gpu_id") or option["gpu"]), option["count"], option.get("fits")))
    return out


def facts_from_calls(plan: Iterable[Any], alternatives: Iterable[Any] = ()) -> tuple[list[CardFact], list[str]]:
    """The configurations of the plan's calls (with their fit verdicts) and of the alternatives beside it (a fit
    verdict only where the alternative differs from the plan in the card count alone); and the plan's cards."""
    planned = [c for c in plan if c.ok]
    setups = {_setup(c) for c in planned if c.name in SIZING}
    facts: list[CardFact] = []
    for c in [*planned, *(a for a in alternatives if a.ok)]:
        same = any(c is p for p in planned) or (c.name in SIZING and _setup(c) in setups)
        facts += [CardFact(gpu=g, count=n, fits=fits if same else None) for g, n, fits in _configs(c) if n > 0]
    cards = [_gpu_id(c.arguments.get("gpu")) for c in planned if c.name in SIZING and c.arguments.get("gpu")]
    return facts, list(dict.fromkeys(cards))


# ----------------------------------------------------------------------------- the check


def _least_fitting(facts: list[CardFact], gpu: str) -> int | None:
    fitting = [f.count for f in facts if f.gpu == gpu and f.fits is True]
    return min(fitting) if fitting else None


def _enough_holds(claim: CardClaim, facts: list[CardFact], plan_gpus: list[str]) -> bool:
    """Whether 'N cards are enough' agrees with the fit verdicts (True when no verdict speaks to it)."""
    gpus = claim.gpus or plan_gpus or list(dict.fromkeys(f.gpu for f in facts if f.gpu))
    judged = [g for g in gpus if any(f.gpu == g and f.fits is not None for f in facts)]
    if not judged:
        return True
    for gpu in judged:
        least = _least_fitting(facts, gpu)
        too_few = any(f.gpu == gpu and f.count == claim.count and f.fits is False for f in facts)
        if least is not None and least <= claim.count and not too_few:
            return True
    return False


def supported(claim: CardClaim, facts: list[CardFact], plan_gpus: list[str]) -> bool:
    """Whether the evidence has the claim's count (of its card, when it names one) and agrees it is enough."""
    if claim.count > 1:
        counts = {f.count for f in facts if not claim.gpus or f.gpu in claim.gpus}
        if claim.count not in counts:
            return False
    return not claim.enough or _enough_holds(claim, facts, plan_gpus)
