"""Numbers and money as people write them in chat: '1,000', '1.5万', '一万五', '三四万', '3k', '$3k', 'ten grand'.

We write our own parser: cn2an (MIT, PyPI) converts formal numerals and some spoken forms, but pulls in ``proces``,
ships stray top-level packages, raises on bad input, and has no notion of approximate amounts ("十来万", "两万出头"),
ranges ("三四万", "2-3万"), Latin multipliers or currencies, which is what chat needs.

Public API: :func:`parse_number` (one token), :func:`parse_amount` (one token with a multiplier such as '3k'),
:data:`NUMBER_RE` / :data:`EN_NUMBER_RE` (regex fragments for embedding), :func:`scaled`, :func:`find_amounts`
(every quantity in free text) and :func:`find_money` (amounts with a currency mark or a money cue). All are pure,
never raise, and run in linear time on hostile input. Values are exact decimals converted to float at the end,
so '2.3万' is 23000.0, not 22999.999999999996.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from advisor import ascii_re as re

# ----------------------------------------------------------------------------- vocabulary

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "两": 2, "贰": 2, "三": 3, "叁": 3, "四": 4,
              "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9}
_CN_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CN_BIG = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}
CN_NUMERAL_CHARS = "".join([*_CN_DIGITS, *_CN_UNITS, *_CN_BIG])
_CN_ZEROS = "零〇"
_CN_TEN = "十拾"
_CN_ALL_UNITS = "".join([*_CN_UNITS, *_CN_BIG])

EN_WORDS = {
    "zero": 0, "one": 1, "single": 1, "a": 1, "an": 1, "two": 2, "dual": 2, "pair": 2, "couple": 2, "three": 3,
    "four": 4, "quad": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
    "twelve": 12, "dozen": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}
_EN_ONES = {w: EN_WORDS[w] for w in ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")}
_EN_TEENS = {w: v for w, v in EN_WORDS.items() if 10 <= v <= 19 and w != "dozen"}
_EN_TENS = {w: v for w, v in EN_WORDS.items() if v in (20, 30, 40, 50, 60, 70, 80, 90)}
_EN_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_EN_GRAMMAR_WORDS = [*_EN_ONES, *_EN_TEENS, *_EN_TENS, "hundred", "dozen", "couple", *_EN_SCALES]
_EN_AFTER_A = ("couple", "dozen", "hundred", *_EN_SCALES)

MULTIPLIERS = {
    "k": 1e3, "K": 1e3, "千": 1e3, "thousand": 1e3, "grand": 1e3, "w": 1e4, "W": 1e4, "万": 1e4, "萬": 1e4,
    "m": 1e6, "M": 1e6, "million": 1e6, "百万": 1e6, "b": 1e9, "B": 1e9, "bn": 1e9, "billion": 1e9, "亿": 1e8,
    "億": 1e8, "t": 1e12, "T": 1e12, "trillion": 1e12,
}

# Tokens longer than this are not everyday numbers; refusing them early keeps hostile input cheap.
MAX_TOKEN_CHARS = 40
# A chat message holds a handful of amounts; scanning stops after this many (or after MAX_CANDIDATES numeral-like
# matches), so huge input stays fast.
MAX_AMOUNTS = 500
MAX_CANDIDATES = 4 * MAX_AMOUNTS

# ----------------------------------------------------------------------------- regex fragments

_D = "".join(_CN_DIGITS)
_UB = _CN_ALL_UNITS
_ARABIC = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
# '3千', '1.5万', '10 万', '3万5', '2万5千'
# a trailing digit that is a count of what follows is not elided into the number: '35万一台' is 350,000 a unit
_ARABIC_MIXED = rf"{_ARABIC}(?:\s?[{_UB}]+(?:(?:\d+|[{_D}]+)[{_UB}]+)*(?:\d+|[{_D}](?![台张套块个片颗只件卡]))?)?"
# '一万五', '三四万', '零点五', '一点五万'; never starts inside another numeral run
_CN_NUM = rf"(?<![{CN_NUMERAL_CHARS}几])[{CN_NUMERAL_CHARS}]+(?:点[{_D}]+[{_CN_BIG}]*)?"
# '十来万', '二十多', '20多万', '两万出头'
_APPROX_IN = rf"(?:(?<=[\d{_UB}])[来多](?!少)[{_UB}]*|出头)"
_EN_WORD = "(?:" + "|".join(sorted(_EN_GRAMMAR_WORDS, key=len, reverse=True)) + r")\b"

NUMBER_RE = rf"(?:(?:(?<!\d){_ARABIC_MIXED}|{_CN_NUM}){_APPROX_IN}?)"
"""Arabic, Chinese and mixed numerals ('1,000', '1.5万', '一万五', '十来万'); no capturing groups. A match never
starts inside another numeral, which also keeps embedding patterns from going quadratic on long digit runs."""

EN_NUMBER_RE = (rf"\b(?:an?\s+(?=(?:{'|'.join(_EN_AFTER_A)})\b))?{_EN_WORD}(?:[\s-]{{1,3}}{_EN_WORD})*")
"""English number words ('four', 'twenty-five', 'a couple thousand'); kept apart from NUMBER_RE because number
words are ordinary words. Use with re.IGNORECASE."""

_ARABIC_FULL = re.compile(_ARABIC)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")
_CN_ITEM = re.compile(rf"\d+(?:\.\d+)?|[{CN_NUMERAL_CHARS}]")
_APPROX_STRIP = re.compile(rf"(?<=[\d{_UB}])[来多]|出头$")
_SPACE_BEFORE_UNIT = re.compile(rf"\s+(?=[{_UB}])")
_HALF = re.compile(r"(.+?)\s*(?:个半|and a half)", re.IGNORECASE)
_HALF_ALONE = {"半", "半个", "一半", "half", "a half"}


# ----------------------------------------------------------------------------- parsing one token


@dataclass(frozen=True)
class _Reading:
    value: Decimal
    low: Decimal | None = None
    approx: bool = False


def _finite(value: Decimal | None) -> float | None:
    if value is None:
        return None
    try:
        out = float(value)
    except (OverflowError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _cn_items(text: str) -> list[tuple[str, Decimal]] | None:
    """'3万五千' → [('num', 3), ('big', 10000), ('num', 5), ('small', 1000)]; None if anything else is there."""
    items: list[tuple[str, Decimal]] = []
    pos = 0
    for m in _CN_ITEM.finditer(text):
        if m.start() != pos:
            return None
        pos = m.end()
        tok = m.group()
        if tok in _CN_DIGITS:
            items.append(("zero" if tok in _CN_ZEROS else "num", Decimal(_CN_DIGITS[tok])))
        elif tok in _CN_UNITS:
            items.append(("small", Decimal(_CN_UNITS[tok])))
        elif tok in _CN_BIG:
            items.append(("big", Decimal(_CN_BIG[tok])))
        else:
            items.append(("num", Decimal(tok)))
    return items if pos == len(text) else None


def _cn_integer(text: str) -> Decimal | None:
    """Structured Chinese (or mixed) numeral with spoken elision: '一万五' = 15000, '一百五' = 150, '十万八千'."""
    items = _cn_items(text)
    if not items:
        return None
    total = section = Decimal(0)
    num: Decimal | None = None
    last_small: Decimal | None = None  # small units must fall within a section: 千 > 百 > 十
    last_big: Decimal | None = None
    top_big = Decimal(0)
    last_unit: Decimal | None = None  # the unit right before a trailing digit, for elision
    zero_gap = False
    for kind, v in items:
        if kind == "zero":
            if num is not None:
                return None
            zero_gap = True
        elif kind == "num":
            if num is not None:
                return None
            num = v
        elif kind == "small":
            if last_small is not None and v >= last_small:
                return None
            section += (Decimal(1) if num is None else num) * v
            num, last_small, last_unit, zero_gap = None, v, v, False
        else:
            group = section + (num or 0)
            if v > top_big:  # '万' alone is 10000, as old callers expect; '一万亿' is 10**12
                total, top_big = ((total + group) or 1) * v, v
            elif group and last_big is not None and v < last_big:
                total += group * v
            else:
                return None
            section, num, last_small, last_big, last_unit, zero_gap = Decimal(0), None, None, v, v, False
    if num is not None:
        elided = last_unit is not None and not zero_gap and num < 10 and num == num.to_integral_value()
        section += num * last_unit / 10 if elided and last_unit is not None else num
    return total + section


def _cn_decimal(text: str) -> Decimal | None:
    """'零点五' = 0.5, '三点一四' = 3.14, '一点五万' = 15000."""
    whole, _, frac = text.partition("点")
    bigs = Decimal(1)
    while frac and frac[-1] in _CN_BIG:
        bigs *= _CN_BIG[frac[-1]]
        frac = frac[:-1]
    if not frac or any(ch not in _CN_DIGITS for ch in frac):
        return None
    left = _cn_integer(whole) if whole else Decimal(0)
    if left is None:
        return None
    return (left + Decimal("0." + "".join(str(_CN_DIGITS[ch]) for ch in frac))) * bigs


def _cn_range(text: str) -> tuple[Decimal, Decimal] | Literal[False] | None:
    """'三四万' → (30000, 40000); False when the text is no range; None when it is malformed ('五八万')."""
    pairs = [i for i in range(len(text) - 1)
             if text[i] in _CN_DIGITS and text[i + 1] in _CN_DIGITS
             and text[i] not in _CN_ZEROS and text[i + 1] not in _CN_ZEROS]
    if not pairs:
        return False
    if len(pairs) > 1:
        return None
    i = pairs[0]
    if _CN_DIGITS[text[i + 1]] != _CN_DIGITS[text[i]] + 1:
        return None
    low, high = _cn_integer(text[:i + 1] + text[i + 2:]), _cn_integer(text[:i] + text[i + 1:])
    return (low, high) if low is not None and high is not None else None


def _read_numeral(token: str) -> _Reading | None:
    """Arabic, Chinese or mixed numeral, with approximate markers and ranges; None if not one."""
    t = _SPACE_BEFORE_UNIT.sub("", token.strip())
    if not t or len(t) > MAX_TOKEN_CHARS:
        return None
    if _ARABIC_FULL.fullmatch(t):
        return _Reading(Decimal(t.replace(",", "")))
    stripped = _APPROX_STRIP.sub("", t)
    approx = stripped != t
    t = _THOUSANDS.sub(lambda m: m.group().replace(",", ""), stripped)
    if not t:
        return None
    if "点" in t:
        value = _cn_decimal(t)
        return _Reading(value, approx=approx) if value is not None else None
    if not any(ch in _CN_ALL_UNITS for ch in t) and all(ch in _CN_DIGITS for ch in t):
        return _cn_digits_only(t, approx)
    span = _cn_range(t)
    if span is None:
        return None
    if span:
        return _Reading(span[1], low=span[0], approx=approx)
    value = _cn_integer(t)
    return _Reading(value, approx=approx) if value is not None else None


def _cn_digits_only(text: str, approx: bool) -> _Reading | None:
    """'五' = 5, '三四' = 3–4, '二〇二四' = 2024 (read digit by digit)."""
    if len(text) == 1:
        return _Reading(Decimal(_CN_DIGITS[text]), approx=approx)
    if len(text) == 2:
        span = _cn_range(text)
        return _Reading(span[1], low=span[0], approx=approx) if span else None
    if "两" in text:
        return None
    return _Reading(Decimal("".join(str(_CN_DIGITS[ch]) for ch in text)), approx=approx)


def _read_english(text: str) -> Decimal | None:
    """'twenty-five', 'a dozen', 'two hundred', 'a couple thousand'; None for 'two three' and the like."""
    words = text.lower().replace("-", " ").split()
    if not words:
        return None
    if words[0] in ("a", "an"):
        if len(words) == 1 or words[1] not in _EN_AFTER_A:
            return None
        words = words[1:]
    total = cur = 0
    last = ""
    last_scale = 10**15
    for w in words:
        if w in _EN_ONES or w == "couple":
            if last not in ("", "tens", "hundred", "scale") or (last == "tens" and w in ("zero", "couple")):
                return None
            cur += _EN_ONES.get(w, 2)
            last = "ones"
        elif w in _EN_TEENS or w in _EN_TENS:
            if last not in ("", "hundred", "scale"):
                return None
            cur += EN_WORDS[w]
            last = "tens" if w in _EN_TENS else "teens"
        elif w == "hundred":
            if last in ("hundred", "dozen") or cur >= 100:
                return None
            cur = (cur or 1) * 100
            last = "hundred"
        elif w == "dozen":
            if last not in ("", "ones"):
                return None
            cur = (cur or 1) * 12
            last = "dozen"
        elif w in _EN_SCALES:
            scale = _EN_SCALES[w]
            if scale >= last_scale:
                return None
            total += (cur or 1) * scale
            cur, last, last_scale = 0, "scale", scale
        else:
            return None
    return Decimal(total + cur)


def parse_number(text: str, *, half: bool = False) -> float | None:
    """A whole token: Arabic ('1,000', '1.5'), Chinese incl. colloquial ('一万五', '两千五', '十来万', '三四万' → upper
    end, '零点五', '1.5万', '3千'), English words ('four', 'twenty-five', 'a dozen', 'a couple'); else None
    ('几万', 'abc'). With ``half=True`` also '半' / 'half' (0.5) and '一个半' / 'one and a half' (1.5)."""
    reading = _read(text, half=half)
    return _finite(reading.value) if reading else None


def _read(text: str, *, half: bool = False) -> _Reading | None:
    if not isinstance(text, str):
        return None
    t = text.strip()
    if not t or len(t) > MAX_TOKEN_CHARS:
        return None
    if half:
        if t.lower() in _HALF_ALONE:
            return _Reading(Decimal("0.5"))
        m = _HALF.fullmatch(t)
        if m:
            base = _read(m.group(1))
            return _Reading(base.value + Decimal("0.5"), approx=base.approx) if base and base.low is None else None
    if t.lower() in EN_WORDS:
        return _Reading(Decimal(EN_WORDS[t.lower()]))
    if re.fullmatch(r"[A-Za-z][A-Za-z\s-]*", t):
        value = _read_english(t)
        return _Reading(value) if value is not None else None
    return _read_numeral(t)


def cn_numeral(text: str) -> float | None:
    """Value of a Chinese numeral such as '十万', '两', '二十', '一百五十', '一万五'; None if not one."""
    if not text or any(ch not in CN_NUMERAL_CHARS for ch in text):
        return None
    return parse_number(text)


def scaled(number: str, multiplier: str | None) -> float | None:
    """``number`` times a written multiplier ('k', '万', 'w', 'M', '亿', 'grand', …); unknown multipliers count 1."""
    base = parse_number(number)
    if base is None:
        return None
    if not multiplier:
        return base
    key = multiplier.strip()
    return base * MULTIPLIERS.get(key, MULTIPLIERS.get(key.lower(), 1.0))


# ----------------------------------------------------------------------------- amounts in free text


@dataclass(frozen=True)
class Amount:
    """A quantity in free text: ``value`` is the (upper) value with its multiplier applied; ``low``/``high`` are set
    for ranges ('三四万', '2-3万'); ``approx`` for '十来万', '两万出头', '约5万', '5k左右'."""

    value: float
    low: float | None
    high: float | None
    approx: bool
    start: int
    end: int
    text: str


_LATIN_MULT = r"(?:bn|[kmbtw])(?![a-z])|\s{0,3}(?:thousand|million|billion|trillion|grand)\b"
_SCAN = re.compile(
    rf"(?P<unknown>(?<![{CN_NUMERAL_CHARS}几])[{CN_NUMERAL_CHARS}]*几[{CN_NUMERAL_CHARS}几]*)"
    rf"|(?P<num>(?:(?<![a-z0-9_.]){_ARABIC_MIXED}|{_CN_NUM}){_APPROX_IN}?)(?P<mult>{_LATIN_MULT})?"
    rf"(?P<tail>(?<=[kw])\d(?![\d.,%a-z]))?"  # '1w7' is 1.7w, '2k5' is 2.5k (the digit after the multiplier)
    rf"|(?P<en>{EN_NUMBER_RE})(?P<enmult>\s{{1,3}}grand\b)?",
    re.IGNORECASE)
_RANGE_SEP = re.compile(r"\s{0,3}(?:[-–—~～〜到至]|to\b)\s{0,3}", re.IGNORECASE)
_APPROX_BEFORE = re.compile(r"(?:约|大约|大概|差不多|about|around|roughly|approximately|approx\.?|~|～|≈)\s{0,3}$",
                            re.IGNORECASE)
_APPROX_AFTER = re.compile(r"\s{0,3}(?:左右|上下(?!文)|or so\b|-?ish\b)", re.IGNORECASE)
# A lone one-character Chinese digit ('一', '三', '十') is a number only before a measure word: '一张卡', '三天',
# not '一起', '统一', '三星', '十分'.
_MEASURE_WORDS = set("个张台块片颗位人名条轮天周月年次倍层家种件只套组路卡元刀欧美小秒岁核节")
_LEADING_UNIT_NOISE = set("百佰千仟万萬亿億")  # '万一', '千万别', '百分之'
_ORDINAL = "第"
_SEARCH_WINDOW = 24


@dataclass(frozen=True)
class _Token:
    reading: _Reading
    scale: Decimal  # multiplier a bare left side of a range borrows: '2-3万' → 10000
    own_scale: bool
    latin_mult: str
    start: int
    end: int
    weak: bool = False  # a lone '三' before a non-measure word: kept only as the left side of a range ('三到五万')


def _is_cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff"


def _lone_cn_digit_ok(text: str, start: int, end: int) -> bool:
    after = text[end] if end < len(text) else ""
    before = text[start - 1] if start else ""
    if after in _MEASURE_WORDS:
        return True
    return not _is_cjk(after) and not _is_cjk(before)


def _lead_scale(num: str) -> tuple[Decimal, bool]:
    """The unit run a numeral ends with after its leading number: '3万' → 万, '三百万' → 百万, '十万' → 万."""
    t = _SPACE_BEFORE_UNIT.sub("", num)
    lead = re.match(rf"{_ARABIC}|[{_D}{_CN_TEN}]", t)
    if not lead:
        return Decimal(1), False
    rest = t[lead.end():]
    if not rest or any(ch not in _CN_ALL_UNITS for ch in rest):
        return Decimal(1), False
    scale = Decimal(1)
    for ch in rest:
        scale *= _CN_UNITS.get(ch) or _CN_BIG[ch]
    return scale, True


def _en_scale(words: str) -> tuple[Decimal, bool]:
    parts = words.lower().replace("-", " ").split()
    if parts and parts[0] in ("a", "an"):
        parts = parts[1:]
    rest = parts[1:]
    if not rest or any(w not in _EN_SCALES and w != "hundred" for w in rest):
        return Decimal(1), False
    scale = Decimal(1)
    for w in rest:
        scale *= _EN_SCALES.get(w, 100)
    return scale, True


def _token(text: str, m: re.Match[str]) -> _Token | None:
    if m.group("unknown") is not None:
        return None
    if m.group("en") is not None:
        reading = _read(m.group("en"))
        mult = (m.group("enmult") or "").strip()
        scale, own = _en_scale(m.group("en"))
    else:
        num = m.group("num")
        if num[0] in _LEADING_UNIT_NOISE or text[max(0, m.start() - 1):m.start()] == _ORDINAL:
            return None
        weak = len(num) == 1 and num in CN_NUMERAL_CHARS and not _lone_cn_digit_ok(text, m.start(), m.end())
        reading = _read_numeral(num)
        mult = (m.group("mult") or "").strip()
        scale, own = _lead_scale(num)
        if weak:
            return _Token(reading, scale, own, "", m.start(), m.end(), weak=True) if reading else None
    if reading is None:
        return None
    if mult:
        factor = Decimal(str(MULTIPLIERS.get(mult, MULTIPLIERS.get(mult.lower(), 1.0))))
        tail = m.group("tail") if m.group("en") is None and "." not in m.group("num") else None
        extra = Decimal(tail) * factor / 10 if tail else Decimal(0)
        reading = _Reading(reading.value * factor + extra, None if reading.low is None else reading.low * factor,
                           reading.approx)
        scale, own = scale * factor, True
    return _Token(reading, scale, own, mult.lower(), m.start(), m.end())


def _merge_range(text: str, left: _Token, right: _Token) -> _Token | None:
    """'2-3万', '2到3万', '20-30k', 'two to three thousand' → one token; None when they are no range."""
    if right.weak or left.reading.low is not None or right.reading.low is not None:
        return None
    if not _RANGE_SEP.fullmatch(text, left.end, right.start):
        return None
    low = left.reading.value if left.own_scale else left.reading.value * right.scale
    if low >= right.reading.value:
        return None
    reading = _Reading(right.reading.value, low=low, approx=left.reading.approx or right.reading.approx)
    return _Token(reading, right.scale, True, right.latin_mult, left.start, right.end)


def _amount(text: str, tok: _Token) -> Amount | None:
    value = _finite(tok.reading.value)
    if value is None:
        return None
    low = _finite(tok.reading.low)
    lo = max(0, tok.start - _SEARCH_WINDOW)
    approx = (tok.reading.approx or bool(_APPROX_BEFORE.search(text, lo, tok.start))
              or bool(_APPROX_AFTER.match(text, tok.end)))
    return Amount(value=value, low=low, high=value if low is not None else None, approx=approx,
                  start=tok.start, end=tok.end, text=text[tok.start:tok.end])


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    for seen, m in enumerate(_SCAN.finditer(text)):
        if len(out) >= MAX_AMOUNTS or seen >= MAX_CANDIDATES:
            break
        tok = _token(text, m)
        if tok is None:
            continue
        merged = _merge_range(text, out[-1], tok) if out else None
        if merged is not None:
            out[-1] = merged
        else:
            if out and out[-1].weak:
                out.pop()
            out.append(tok)
    if out and out[-1].weak:
        out.pop()
    return out


def find_amounts(text: str) -> list[Amount]:
    """Every quantity in ``text`` with its multiplier applied, in order and non-overlapping: '预算十来万' → 100000
    (approx), '三四万' → 40000 (low 30000), '2-3万' → 30000 (low 20000), '$3k' → 3000, '10 grand' → 10000.
    Numbers glued to letters ('H100', 'fp16'), ordinals ('第三') and '几万' are skipped. No currency here.
    At most MAX_AMOUNTS are returned."""
    if not isinstance(text, str):
        return []
    return [a for a in (_amount(text, tok) for tok in _tokens(text)) if a is not None]


def parse_amount(text: str) -> float | None:
    """A whole token with its multiplier: '3k' = 3000, '1.5w' = 15000, '1M' = 1e6, '10 grand' = 10000; else None."""
    if not isinstance(text, str):
        return None
    t = text.strip()
    if not t or len(t) > MAX_TOKEN_CHARS:
        return None
    found = find_amounts(t)
    return found[0].value if len(found) == 1 and found[0].start == 0 and found[0].end == len(t) else None


# ----------------------------------------------------------------------------- money

Currency = Literal["CNY", "USD", "EUR", "GBP"]


@dataclass(frozen=True)
class MoneyMention:
    """An amount of money: ``currency`` is None when only a money cue ('预算', 'budget', 'grand') marks it."""

    amount: float
    currency: Currency | None
    approx: bool
    low: float | None
    start: int
    end: int


_SYMBOLS: dict[str, Currency] = {"us$": "USD", "$": "USD", "usd": "USD", "¥": "CNY", "￥": "CNY", "rmb": "CNY",
                                 "cny": "CNY", "人民币": "CNY", "€": "EUR", "eur": "EUR",
                                 "£": "GBP", "gbp": "GBP"}
_SYMBOL_BEFORE = re.compile(r"(?:(?<![a-z])(?:us\$|usd|rmb|cny|eur|gbp)|(?<![a-z])\$|[¥￥€£]|人民币)\s{0,3}$",
                            re.IGNORECASE)
_WORDS_AFTER: dict[str, Currency] = {
    "块钱": "CNY", "块": "CNY", "元": "CNY", "人民币": "CNY", "美元": "USD", "美金": "USD", "刀": "USD",
    "欧元": "EUR", "欧": "EUR", "dollars": "USD", "dollar": "USD", "bucks": "USD", "buck": "USD", "usd": "USD",
    "euros": "EUR", "euro": "EUR", "eur": "EUR", "rmb": "CNY", "cny": "CNY",
    "英镑": "GBP", "pounds": "GBP", "pound": "GBP", "quid": "GBP", "gbp": "GBP",
}
_WORD_AFTER = re.compile(
    r"\s{0,3}(块钱|块(?!\s{0,3}[a-z0-9卡显])|元|人民币|美元|美金|刀|欧元|欧(?!洲)|英镑|"
    r"(?:dollars?|bucks?|euros?|usd|eur|rmb|cny|pounds?|quid|gbp)\b)", re.IGNORECASE)
# '块' alone is also the measure word for cards ('两块4090'); below this it is not read as yuan.
MIN_KUAI_AMOUNT = 100
_PRE_CUE = re.compile(
    r"(?:预算|经费|资金|花费?|不超过|最多|控制在|budget|spend|afford|under|up to)"
    r"(?:\s|[:：是为在有就约了个~～≈]|大概|大约|差不多|顶多|只有|\bof\b|\bis\b|\baround\b|\babout\b|\broughly\b|"
    r"\bmaybe\b|\bat most\b)*$", re.IGNORECASE)
_POST_CUE = re.compile(r"\s{0,3}(?:以内|之内|以下|左右|上下(?!文))")
# After a pre-cue, a unit means the number is no money: 'under 8 GPUs', '花3天', 'up to 80GB'.
_UNIT_AFTER = re.compile(
    r"[a-z]|\s{0,3}(?:[个张台块片颗位人名条轮天周月年次倍层核节小秒%％页]|(?:gpus?|cards?|gb|gib|tb|tokens?|users?|"
    r"people|hours?|days?|weeks?|months?|years?|nodes?|servers?|machines?|params?|parameters|models?|watts?|"
    r"percent|x)\b|"
    # any other word that counts something ('up to ~50 pages', 'under 20 documents'), but not one of money's own
    r"(?!(?:k|m|bn?|grand|dollars?|usd|bucks|euros?|eur|pounds?|gbp|quid|rmb|yuan|cny|kuai|thousand|million|"
    r"billion|total|tops|max(?:imum)?|or|ish|in|on|for|per|each|a|an|the|and|to|at|with|all|including|incl|"
    r"cash|budget|range|usd|us)\b)[a-z]{2,}\b)", re.IGNORECASE)
# Before a post-cue ('左右', '以内'), these mean the number is a size or a count, not money.
_NOT_MONEY_BEFORE = re.compile(r"上下文|context|tokens?|显存|内存|参数|并发|用户|users?|vram|memory",
                               re.IGNORECASE)
_NEVER_BARE_MONEY = ("b", "bn", "t", "billion", "trillion")  # '8B model', '2T tokens'


def _is_bare_money(text: str, tok: _Token, amount: Amount) -> bool:
    if tok.latin_mult == "grand":
        return True
    if tok.latin_mult in _NEVER_BARE_MONEY:
        return False
    pre = _PRE_CUE.search(text, max(0, amount.start - _SEARCH_WINDOW), amount.start)
    if pre and not _UNIT_AFTER.match(text, amount.end):
        return not (tok.latin_mult == "w" and re.search(r"[a-z]", pre.group(), re.IGNORECASE))
    if _POST_CUE.match(text, amount.end):
        return not _NOT_MONEY_BEFORE.search(text, max(0, amount.start - 12), amount.start)
    return False


_DOT_THOUSANDS = re.compile(r"\d{1,3}(?:\.\d{3})+")


def find_money(text: str) -> list[MoneyMention]:
    """Amounts marked as money: a symbol or code before ('$3k', 'US$', '¥', '€2,000', 'RMB', 'USD') or a word after
    ('5千块', '3万元', '200美元', '3k刀', '2,000 euros', 'a couple thousand bucks'); or, with ``currency`` None, a
    bare amount right next to a money cue ('预算十来万', 'budget 5k', '2万以内', '10 grand'). The caller picks the
    default currency. 'RTX 4090', '8B model', 'H100 80GB' hold no money."""
    if not isinstance(text, str):
        return []
    out: list[MoneyMention] = []
    for tok in _tokens(text):
        amount = _amount(text, tok)
        if amount is None:
            continue
        start, end = amount.start, amount.end
        currency: Currency | None = None
        sym = _SYMBOL_BEFORE.search(text, max(0, start - 8), start)
        if sym:
            currency = _SYMBOLS[sym.group().strip().lower()]
            start = sym.start()
        word = _WORD_AFTER.match(text, end)
        if word:
            unit = word.group(1).lower()
            if unit != "块" or amount.value >= MIN_KUAI_AMOUNT:
                currency = currency or _WORDS_AFTER[unit]
                end = word.end()
        if currency is None and not _is_bare_money(text, tok, amount):
            continue
        value = amount.value
        if currency == "EUR" and _DOT_THOUSANDS.fullmatch(amount.text.strip()):
            value = float(amount.text.strip().replace(".", ""))  # '15.000 EUR': a euro writer's thousands dot
        out.append(MoneyMention(amount=value, currency=currency, approx=amount.approx, low=amount.low,
                                start=start, end=end))
    return out
