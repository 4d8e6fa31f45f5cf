"""What a model's explanation may say besides numbers: each claim held to the turn's facts, or the text refused.

Numbers are checked by :mod:`advisor.grounding`. Before that, here:

- :func:`strip_reasoning`: a reasoning block (``<think>…</think>``) is never shown;
- :func:`refusal`: the whole reply is refused when it carries a link, an image, HTML or a command to run (a model
  never sends the user to a download), or when it is not in the user's language;
- :func:`false_claims`: sentence by sentence, the claims that have an answer in the turn's facts — which of two
  cards is faster, cheaper, larger or hungrier; a ratio ('three times faster'); a price said of one card; a card
  recommended that does not fit or that the computed answer did not pick; NVLink on a card that has none, or
  said to pool the cards' memory; a technology credited to another maker; a card said to fit (or not) against its
  own verdict, option by option. A sentence with a false claim goes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from advisor import grounding
from advisor.card_claims import CLAUSE_BREAK, clause_of
from advisor.nlu.extractors import vendors_in
from advisor.nlu.rules import card_count_mentions, card_names
from advisor.numbers import parse_number
from knowledge import load_catalog
from knowledge.names import TECHNOLOGY_MAKERS

_I = re.IGNORECASE

# ----------------------------------------------------------------------------- whole-reply checks

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.IGNORECASE | re.DOTALL)
_REASONING_END = re.compile(r"^.*</(think|thinking|reasoning)>", re.IGNORECASE | re.DOTALL)
_LINK = re.compile(r"(?i)\b(https?|ftp|file)://|\bdata:[a-z]+/[a-z0-9.+-]+[;,]|\bjavascript:|\bwww\.|!\[|\]\(|"
                   r"\b[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|net|org|io|sh|ru|cn|xyz|top|example|dev|app|ai)(/|\b)")
_MARKUP = re.compile(r"<\s*/?\s*[a-z!][^>]*>", _I)
_COMMAND = re.compile(r"(?i)\b(sudo|curl|wget|chmod|chown|powershell|invoke-webrequest|iex)\b|\brm\s+-[rf]|"
                      r"\b(pip3?|apt(-get)?|yum|dnf|brew|npm|conda)\s+install\b|\|\s*(ba|z)?sh\b|"
                      r"\b(ba|z)?sh\s+\S+\.sh\b|\bas (root|administrator|admin)\b|以\s*root|管理员(身份|权限)")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


def strip_reasoning(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks (an unclosed one runs to the end; a lone closing tag ends one
    that began before the reply)."""
    text = _REASONING.sub(" ", text)
    return _REASONING_END.sub(" ", text).strip()


def _in_language(text: str, lang: str) -> bool:
    """Whether ``text`` is written in ``lang`` (names, units and ids aside)."""
    plain = grounding.mask_identifiers(grounding.CITATION.sub(" ", text))
    cjk, latin = len(_CJK.findall(plain)), len(_LATIN.findall(plain))
    if cjk + latin == 0:
        return True
    share = cjk / (cjk + latin)
    return share >= 0.3 if lang == "zh" else share <= 0.05


def refusal(text: str, lang: str) -> str | None:
    """Why the whole reply may not be shown ('link', 'markup', 'command', 'language'), or None."""
    if _LINK.search(text):
        return "link"
    if _MARKUP.search(text):
        return "markup"
    if _COMMAND.search(text):
        return "command"
    if not _in_language(text, lang):
        return "language"
    return None


# ----------------------------------------------------------------------------- the turn's facts


class CardSpec(BaseModel):
    """One card's figures a claim may compare (per card; ``speed``: its configuration's tokens/s this turn)."""

    vendor: str
    nvlink: bool
    memory: float
    bandwidth: float
    compute: float
    power: float
    price: dict[str, list[float]] = Field(default_factory=dict, description="one card's price by currency")
    speed: float | None = None
    fits: list[bool] = Field(default_factory=list, description="fit verdicts of its configurations for the plan")


class TurnFacts(BaseModel):
    """What the turn's tools found, in the form the claim checks read."""

    cards: dict[str, CardSpec] = Field(default_factory=dict)
    picks: list[str] = Field(default_factory=list, description="cards the computed answer's verdict names as fit")
    plan_cards: list[str] = Field(default_factory=list, description="the cards the plan itself sized or compared")
    sizes: list[float] = Field(default_factory=list, description="the plan's headline memory figures, bytes")
    speeds: list[float] = Field(default_factory=list, description="the turn's decode speeds, tokens/s")
    verdict: bool | None = Field(None, description="the one fit verdict of every configuration the plan sized, where "
                                                   "the engine does not hold the whole text to it already")


def _spec(gpu_id: str) -> CardSpec | None:
    try:
        g = load_catalog().gpu(gpu_id)
    except Exception:  # an id the catalog lacks (a card the user described) has no figures to compare
        return None
    price = {cur: [v] for cur, v in (("USD", g.price.usd), ("CNY", g.price.cny)) if v} if g.price else {}
    return CardSpec(vendor=g.vendor, nvlink=g.interconnect.kind in ("nvlink", "nvlink-bridge"),
                    memory=g.memory_gb, bandwidth=g.bandwidth_gbs or 0.0, compute=g.throughput.bf16 or 0.0,
                    power=g.tdp_w or 0.0, price=price)


def _gpu_of(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return load_catalog().gpu(value).id
    except Exception:
        return None


def _turn_configs(calls: Iterable[Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    """(card id, a dict that describes its configuration) for each configuration in the calls' results."""
    for c in calls:
        result = c.result if isinstance(c.result, dict) else {}
        gpu = _gpu_of(c.arguments.get("gpu")) if isinstance(c.arguments, dict) else None
        if gpu and not c.alternative:
            yield gpu, {"call": c.name, **result}
        for option in result.get("options") or []:
            if isinstance(option, dict) and (gid := _gpu_of(option.get("gpu_id") or option.get("gpu"))):
                yield gid, {"call": c.name, "currency": result.get("currency"), **option}


def turn_facts(calls: Sequence[Any], computed: str, evidence: grounding.Evidence,
               verdict_held: bool = False) -> TurnFacts:
    """The facts of a turn: the cards its calls used (catalog figures, this turn's prices, speeds and fit
    verdicts), the cards its verdict line picks, the figures a ratio may be taken from, and (unless
    ``verdict_held``: the engine checks the text against it) the fit verdict all its sized configurations share."""
    cards = _card_specs(calls, evidence)
    headline = computed.strip().split("\n", 1)[0]
    picks = [i for _, _, found in card_names(headline) for i in found
             if i in cards and False not in cards[i].fits]
    speeds = [float(c.result["tokens_per_s"]) for c in calls if c.name == "perf_decode" and isinstance(c.result, dict)
              and isinstance(c.result.get("tokens_per_s"), int | float)]
    plan = [g for g in dict.fromkeys([*evidence.plan_gpus, *(_gpu_of(c.arguments.get("gpu")) for c in calls
                                                             if c.name == "perf_decode")]) if g in cards]
    verdicts = {v for g in plan for v in cards[g].fits}
    return TurnFacts(cards=cards, picks=list(dict.fromkeys(picks)), plan_cards=plan, sizes=_sizes(calls),
                     speeds=speeds, verdict=verdicts.pop() if len(verdicts) == 1 and not verdict_held else None)


def _card_specs(calls: Sequence[Any], evidence: grounding.Evidence) -> dict[str, CardSpec]:
    """Every card of the turn with its catalog figures, then this turn's speeds, prices and fit verdicts."""
    ids = [*evidence.plan_gpus, *(f.gpu for f in evidence.cards if f.gpu), *(g for g, _ in _turn_configs(calls))]
    cards = {gid: spec for gid in dict.fromkeys(ids) if (spec := _spec(gid)) is not None}
    for gid, config in _turn_configs(calls):
        if gid in cards:
            _take_config(cards[gid], config)
    for fact in evidence.cards:
        if fact.gpu in cards and fact.fits is not None:
            cards[fact.gpu].fits.append(fact.fits)
    return cards


def _take_config(spec: CardSpec, config: dict[str, Any]) -> None:
    """A configuration's decode speed and its price per card into ``spec``."""
    count, speed, price = config.get("count"), config.get("tokens_per_s"), config.get("price")
    count = count if isinstance(count, int) and count > 0 else 1
    if config["call"] == "perf_decode" and isinstance(speed, int | float):
        spec.speed = spec.speed or float(speed)
    totals = config.get("totals")
    if isinstance(totals, dict) and isinstance(totals.get("tokens_per_s"), int | float):
        spec.speed = float(totals["tokens_per_s"])
    if isinstance(price, int | float) and price > 0:
        spec.price.setdefault(str(config.get("currency") or "USD"), []).append(float(price) / count)


def _ratios(facts: TurnFacts, named: list[str]) -> dict[str, list[float]]:
    """Ratios (≥ 1) between figures of one kind: of the cards named with the plan's own, its sizes and speeds."""
    specs = [facts.cards[g] for g in dict.fromkeys([*named, *facts.plan_cards]) if g in facts.cards]
    groups: dict[str, list[float]] = {f: [getattr(s, f) for s in specs] for f in ("bandwidth", "compute", "power")}
    groups["memory"] = [*(s.memory * 1e9 for s in specs), *facts.sizes]
    groups["speed"] = [*(s.speed for s in specs if s.speed), *facts.speeds]
    groups["price"] = [v for s in specs for v in s.price.get("USD", [])]
    return {kind: sorted({max(a, b) / min(a, b) for a in g for b in g if a > 0 and b > 0 and a != b})
            for kind, g in groups.items()}


_SIZE_FIELDS = ("per_gpu_bytes", "total_bytes", "weights_total_bytes", "gpu_memory_bytes", "reserved_bytes")


def _sizes(calls: Iterable[Any]) -> list[float]:
    """The headline memory figures of the plan's sizings (need per GPU and in all, the card's memory and what the
    engine may use): a ratio of a need to a capacity is quoted from these, not from the parts of a breakdown."""
    out = []
    for c in calls:
        result = c.result if isinstance(c.result, dict) else {}
        if c.name.startswith("size_") and not c.alternative:
            out += [float(result[f]) for f in _SIZE_FIELDS if isinstance(result.get(f), int | float)]
    return out


# ----------------------------------------------------------------------------- sentence claims

_NEGATION = re.compile(r"(?i)\bnot?\b|n't\b|\bnever\b|\bcannot\b|\bwithout\b|\blacks?\b|\bunlike\b|\bneither\b|"
                       r"不|没|无|非|并非")
_CONDITION = re.compile(r"(?i)\b(if|when|unless|only for|for (training|long|larger|bigger)|should you)\b|"
                        r"如果|若|假如|要是|的话|对于")

# comparative words: (pattern, figure, sign) — sign +1: the subject's figure is the larger
_COMPARATIVES: list[tuple[re.Pattern[str], str, int]] = [
    (re.compile(r"(?i)\b(faster|quicker|more tokens|higher throughput)\b|更?快"), "speed", 1),
    (re.compile(r"(?i)\bslower\b|更?慢"), "speed", -1),
    (re.compile(r"(?i)\b(cheaper|less expensive|costs? less|lower[- ]priced)\b|更?便宜|更?省钱"), "price", -1),
    (re.compile(r"(?i)\b(more expensive|pricier|costs? more|dearer|higher[- ]priced)\b|更?贵"), "price", 1),
    (re.compile(r"(?i)\b(more|larger|bigger) (memory|vram|capacity)\b|显存更?(大|多)"), "memory", 1),
    (re.compile(r"(?i)\b(less|smaller) (memory|vram)\b|显存更?(小|少)"), "memory", -1),
    (re.compile(r"(?i)\b(more|higher|greater) (memory )?bandwidth\b|带宽更?(高|大)"), "bandwidth", 1),
    (re.compile(r"(?i)\b(more|higher) power\b|\bdraws more\b|\bhungrier\b|\bpower-hungrier\b|功耗更?(高|大)"),
     "power", 1),
    (re.compile(r"(?i)\b(less|lower) power\b|\bdraws less\b|功耗更?(低|小)|更?省电"), "power", -1),
]
_THAN = re.compile(r"(?i)\bthan\b|比")
_QUANTISED = re.compile(r"(?i)gguf|\bq\d|\d-?bit|int[48]|awq|gptq|fp8|fp4|quant|llama\.?cpp|ollama|量化|精度")


_RATIO = re.compile(r"(?i)(?P<n>\d+(?:\.\d+)?|two|three|four|five|six|seven|eight|nine|ten)\s*(?:times\b|倍)|"
                    r"(?P<n2>\d+(?:\.\d+)?)\s*[x×]\s*(?=(as |the |more |faster|slower|cheaper|larger|higher))|"
                    r"\b(?P<twice>twice|double)\b|(?P<half>\bhalf (as|the)\b|一半)|"
                    r"(?P<cn>[一二两三四五六七八九十]+)\s*倍")
# what a ratio is of, by the words of its clause; a ratio whose clause names none is held to every kind
_RATIO_KINDS = (("speed", r"fast|slow|speed|throughput|tokens|速度|吞吐|快|慢"),
                ("memory", r"memory|vram|\bgb\b|larger|bigger|smaller|capacity|显存|内存|容量"),
                ("price", r"cheap|expensive|price|cost|dollar|yuan|贵|便宜|价格|价钱|成本|元"),
                ("power", r"power|watt|draw|功耗|耗电|电"),
                ("bandwidth", r"bandwidth|带宽"),
                ("compute", r"compute|tflops|flops|算力"))
_WORD_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

_NVLINK = re.compile(r"(?i)nv-?link|nvswitch|\bsli\b|\bbridge\b|桥接")
_POOLING = re.compile(r"(?i)\bpool(s|ed|ing)?\b|\bcombin(e|es|ed|ing)\b|\bmerg(e|es|ed|ing)\b|\bunif(y|ies|ied)\b|"
                      r"\bsingle (memory|pool|space|card|gpu)\b|\bone (big|large|single) (memory|pool|card|gpu)\b|"
                      r"\bshar(e|es|ed|ing) (their |the |its )?memory\b|\badd(s|ing)? up (their|the) memory\b|"
                      r"合并|合成|叠加|池化|共享显存|显存共享|统一显存|变成一张")
_RECOMMEND = re.compile(r"(?i)\b(recommend(ed)?|go (with|for)|opt for|(should|would|i'?d) (buy|get|choose|pick))\b|"
                        r"推荐|建议(买|选|用|购|上)|首选")
_RECOMMEND_AFTER = re.compile(r"(?i)\b(is|are) (the )?(better|best|right|smarter) (choice|option|pick|buy)\b|"
                              r"更合适|更适合|更划算|是更好的选择|最合适")
_PRICE_WORDS = re.compile(r"(?i)\b(costs?|priced|price|sells? for|goes for|retails?)\b|售价|价格|价钱|要价|卖")
_TOTAL_WORDS = re.compile(r"(?i)\b(total|whole|build|system|server|machine|host|in all|together|altogether|"
                          r"combined|each|per)\b|整机|总价|总共|合计|一共|主机|服务器|每张|每卡|单卡")


class FalseClaim(BaseModel):
    sentence: str
    kind: str = Field(description="comparison, ratio, price, recommendation, nvlink, maker")


def _cards_in(text: str) -> list[tuple[int, int, str]]:
    """The known cards named in ``text``: (start, end, id); an ambiguous name counts as its first reading."""
    return [(a, b, ids[0]) for a, b, ids in card_names(text) if ids]


def _figure(facts: TurnFacts, gpu: str, figure: str, count: int) -> float | None:
    spec = facts.cards.get(gpu)
    if spec is None:
        return None
    if figure == "speed":
        return spec.speed
    if figure == "price":
        usd = spec.price.get("USD")
        return usd[0] * count if usd else None
    value = float(getattr(spec, figure))
    return value * count if value else None


def _count_at(counts: list[Any], start: int, end: int) -> int:
    return next((c.count for c in counts if c.start <= start <= c.end + 2 or c.start <= end <= c.end), 1)


def _comparison(sentence: str, facts: TurnFacts) -> bool:
    """Whether the sentence says card A is faster/cheaper/larger/hungrier than card B and the facts say otherwise."""
    than = _THAN.search(sentence)
    cards = _cards_in(sentence)
    if than is None or len(cards) < 2 or _NEGATION.search(sentence):  # 'not faster than': no claim read
        return False
    before = [c for c in cards if c[1] <= than.start()]
    after = [c for c in cards if c[0] >= than.end()]
    if not before or not after or before[-1][2] == after[0][2]:
        return False
    (sa, sb, subject), (oa, ob, obj) = before[-1], after[0]
    counts = card_count_mentions(sentence)
    words = sentence[sb:oa] if than.group(0).lower() == "than" else sentence[ob:ob + 24]
    for pattern, figure, sign in _COMPARATIVES:
        if not pattern.search(words):
            continue
        mine = _figure(facts, subject, figure, _count_at(counts, sa, sb))
        theirs = _figure(facts, obj, figure, _count_at(counts, oa, ob))
        if mine is None or theirs is None:
            return False
        return not (mine > theirs * 1.02 if sign > 0 else mine < theirs * 0.98)
    return False


def _ratio(sentence: str, facts: TurnFacts) -> bool:
    """Whether the sentence states a ratio ('three times faster', '2 倍') that no pair of the turn's figures has."""
    for m in _RATIO.finditer(sentence):
        if m.group("twice") or m.group("half"):
            said = 2.0
        else:
            word = m.group("n") or m.group("n2") or m.group("cn") or ""
            said = float(_WORD_NUMBERS.get(word.lower()) or parse_number(word) or 0)
        if said <= 0:
            continue
        said = max(said, 1 / said)
        if said == 1:
            continue
        clause = clause_of(sentence, m.start(), m.start())
        kinds = [k for k, words in _RATIO_KINDS if re.search(words, clause, _I)] or [k for k, _ in _RATIO_KINDS]
        ratios = _ratios(facts, [g for _, _, g in _cards_in(sentence)])
        held = [r for kind in kinds for r in ratios.get(kind, [])]
        if not any(abs(r / said - 1) <= 0.1 for r in held):
            return True
    return False


def _price(sentence: str, facts: TurnFacts) -> bool:
    """Whether the sentence gives one card a price that is not that card's (another card's, or a build's)."""
    cards = {c[2] for c in _cards_in(sentence)}
    if len(cards) != 1 or not _PRICE_WORDS.search(sentence) or _TOTAL_WORDS.search(sentence):
        return False
    gpu = cards.pop()
    spec = facts.cards.get(gpu)
    counts = [c.count for c in card_count_mentions(sentence)] or [1]
    if spec is None or max(counts) > 1:
        return False
    for m in grounding.extract(sentence):
        own = spec.price.get(m.dim)
        if m.dim in ("USD", "CNY") and own and not any(abs(v - m.value) <= max(m.tolerance, 0.03 * v) for v in own):
            return True
    return False


def _recommendation(sentence: str, facts: TurnFacts) -> bool:
    """Whether the sentence recommends a card the tools found not to fit, or one the computed verdict did not
    pick when it picked another."""
    cards = _cards_in(sentence)
    chosen: str | None = None
    verb = _RECOMMEND.search(sentence) or _RECOMMEND_AFTER.search(sentence)
    if verb is None:
        return False
    clause = clause_of(sentence, verb.start(), verb.start())
    if _NEGATION.search(clause) or _CONDITION.search(sentence):
        return False
    if verb.re is _RECOMMEND:
        chosen = next((c[2] for c in cards if c[0] >= verb.end()), None)
    else:
        chosen = next((c[2] for c in reversed(cards) if c[1] <= verb.start()), None)
    if chosen is None or chosen not in facts.cards:
        return False
    fits = facts.cards[chosen].fits
    if fits and not any(fits) and not _QUANTISED.search(sentence):  # the same card at another precision may fit
        return True
    return bool(facts.picks) and chosen not in facts.picks


def _nvlink(sentence: str, facts: TurnFacts) -> bool:
    """Whether the sentence says NVLink pools the cards' memory, or puts NVLink on a card that has none."""
    for found in _NVLINK.finditer(sentence):
        clause = clause_of(sentence, found.start(), found.start())
        if _NEGATION.search(clause):
            continue
        if _POOLING.search(clause):
            return True
        for _, _, gpu in _cards_in(clause):
            spec = facts.cards.get(gpu) or _spec(gpu)
            if spec is not None and not spec.nvlink:
                return True
    return False


def _maker(sentence: str) -> bool:
    """Whether a clause credits a technology to a maker other than its own ('NVLink is AMD's')."""
    for clause in CLAUSE_BREAK.split(sentence):
        if not clause or _NEGATION.search(clause):
            continue
        makers = {v.lower() for v in vendors_in(clause)}
        makers |= {s.vendor.lower() for _, _, g in _cards_in(clause) if (s := _spec(g)) is not None}
        if not makers:
            continue
        for own, words in TECHNOLOGY_MAKERS.values():
            if re.search(words, clause, _I) and own.lower() not in makers:
                return True
    return False


def _fit(sentence: str, facts: TurnFacts) -> bool:
    """Whether the sentence says a card's configuration fits (or not) against its verdict; with no card named,
    against the verdict every configuration shares ('两种配置都放不下' when both fit)."""
    claim = grounding.fit_claim(sentence)
    if claim is None:
        return False
    named = [g for _, _, g in _cards_in(sentence) if facts.cards.get(g) and facts.cards[g].fits]
    if not named:
        return facts.verdict is not None and claim != facts.verdict
    return any(claim not in facts.cards[g].fits for g in named)


_CHECKS = (("fit", _fit), ("comparison", _comparison), ("ratio", _ratio), ("price", _price),
           ("recommendation", _recommendation), ("nvlink", _nvlink))


def false_claims(text: str, facts: TurnFacts) -> list[FalseClaim]:
    """The sentences of ``text`` that make a claim the turn's facts contradict, each with the kind of claim."""
    out: list[FalseClaim] = []
    for sentence in grounding.sentences(text):
        kind = "maker" if _maker(sentence) else next((k for k, check in _CHECKS if check(sentence, facts)), None)
        if kind is not None:
            out.append(FalseClaim(sentence=sentence, kind=kind))
    return out


def without(text: str, claims: list[FalseClaim]) -> str:
    """``text`` with the sentences of ``claims`` removed."""
    gone = {c.sentence for c in claims}
    return "".join(s for s in grounding.sentences(text) if s not in gone).strip()
