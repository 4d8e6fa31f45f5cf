"""Numbers as people write them: '1,000', '1.5万', '十万', 'two', '8k', '1.5w'."""

from __future__ import annotations

import re

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "两": 2, "贰": 2, "三": 3, "叁": 3, "四": 4,
              "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9}
_CN_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CN_BIG = {"万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8}
CN_NUMERAL_CHARS = "".join([*_CN_DIGITS, *_CN_UNITS, *_CN_BIG])

EN_WORDS = {
    "one": 1, "single": 1, "a": 1, "an": 1, "two": 2, "dual": 2, "pair": 2, "three": 3, "four": 4, "quad": 4,
    "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100,
}

MULTIPLIERS = {
    "k": 1e3, "K": 1e3, "千": 1e3, "thousand": 1e3, "w": 1e4, "W": 1e4, "万": 1e4, "萬": 1e4,
    "m": 1e6, "M": 1e6, "million": 1e6, "百万": 1e6, "b": 1e9, "B": 1e9, "billion": 1e9, "亿": 1e8,
    "t": 1e12, "T": 1e12, "trillion": 1e12,
}


def cn_numeral(text: str) -> float | None:
    """Value of a Chinese numeral such as '十万', '两', '二十', '一百五十', '三千万'; None if not one."""
    if not text or any(ch not in CN_NUMERAL_CHARS for ch in text):
        return None
    yi = wan = section = 0
    digit: int | None = None
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            section += (1 if digit is None else digit) * _CN_UNITS[ch]
            digit = None
        elif _CN_BIG[ch] == 10**4:
            wan = ((section + (digit or 0)) or 1) * 10**4
            section, digit = 0, None
        else:
            yi = ((wan + section + (digit or 0)) or 1) * 10**8
            wan = section = 0
            digit = None
    return float(yi + wan + section + (digit or 0))


def parse_number(text: str) -> float | None:
    """A plain number: Arabic ('1,000', '1.5'), Chinese ('十万', '两'), English ('four'); else None."""
    t = text.strip()
    if not t:
        return None
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", t):
        return float(t.replace(",", ""))
    if re.fullmatch(r"\d+(?:\.\d+)?", t):
        return float(t)
    if t.lower() in EN_WORDS:
        return float(EN_WORDS[t.lower()])
    return cn_numeral(t)


NUMBER_RE = rf"(?:\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|[{CN_NUMERAL_CHARS}]+)"


def scaled(number: str, multiplier: str | None) -> float | None:
    """``number`` times a written multiplier ('k', '万', 'w', 'M', '亿', …)."""
    base = parse_number(number)
    if base is None:
        return None
    if not multiplier:
        return base
    return base * MULTIPLIERS.get(multiplier, MULTIPLIERS.get(multiplier.lower(), 1.0))
