"""Quantities with units as typed spans: every number is attached to the unit beside it, once.

The units and the role words come from ``data/quantities.toml``. Each unit's patterns propose candidate
spans; conflicts (two units claiming one number) are settled by one rule — a longer, role-backed match
wins — and a number's span is used once. Spans the caller blanks (product codes such as 'EPYC 9654',
years, catalog names) are never read. What a quantity is for (simultaneous users or head count, a
per-user speed target, a time-to-first-token limit, a rack's power, a cost horizon) is its role, read from
the words of its own clause.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from advisor import ascii_re as re
from advisor.numbers import EN_NUMBER_RE, NUMBER_RE, parse_number

_NUM = rf"(?P<num>{NUMBER_RE}|{EN_NUMBER_RE})"
_THOUSANDS = r"(?P<k>[kK](?![A-Za-z]))?"  # '1k tokens per sample'
# clauses end at punctuation and at a turn ('2,000 staff but 60 concurrent at peak': the peak is the 60's)
_CLAUSE_END = re.compile(r"[，,。;；!?！？\n]|\.(?!\d)|\b(?:but|however|while|whereas|of which|of whom)\b|"
                         r"但是?|不过|其中|其实", re.IGNORECASE)
_EACH = re.compile(r"\beach\b|\bapiece\b|\bper (?:one|unit)\b|各|每个|每台|每一个", re.IGNORECASE)
A_LENGTH = re.compile(r"\s*(?:-?\s*tokens?\b|ctx\b|context\b|conte?xt window|上下文|长度)", re.IGNORECASE)
_AGO = re.compile(r"^\s*(?:前|ago\b|old\b|了|买的|入手|以前)", re.IGNORECASE)
MAX_YEARS = 30  # a horizon longer than this is a date ('2021 年')
MAX_TEXT = 20_000  # longer messages are read in their first part (the caller bounds them further)


@dataclass(frozen=True)
class Quantity:
    """One number with its unit and what it is for, with its span in the text."""

    unit: str
    value: float
    role: str | None
    start: int
    end: int


@cache
def _table() -> dict[str, dict[str, dict[str, list[str]]]]:
    text = resources.files("advisor.nlu").joinpath("data/quantities.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def _unit_patterns() -> tuple[tuple[str, re.Pattern[str], bool], ...]:
    """(unit, pattern, unit-after) for every unit fragment, the number named ``num``."""
    out: list[tuple[str, re.Pattern[str], bool]] = []
    for unit, entry in _table()["unit"].items():
        for frag in entry.get("after", []):
            out.append((unit, re.compile(rf"(?<![A-Za-z0-9.]){_NUM}{_THOUSANDS}(?:{frag})", re.IGNORECASE), True))
        for frag in entry.get("before", []):
            tail = entry.get("then", [""])[0]
            out.append((unit, re.compile(rf"(?:{frag}){_NUM}{_THOUSANDS}(?![A-Za-z0-9.])(?:{tail})",
                                         re.IGNORECASE), False))
    return tuple(out)


@cache
def _roles() -> tuple[tuple[str, frozenset[str], re.Pattern[str]], ...]:
    return tuple((name, frozenset(entry["units"]), re.compile("|".join(f"(?:{f})" for f in entry["near"]),
                                                               re.IGNORECASE))
                 for name, entry in _table()["role"].items())


@cache
def _millis() -> re.Pattern[str]:
    return re.compile("|".join(_table()["unit"]["seconds"]["scale_ms"]), re.IGNORECASE)


def _clause(text: str, start: int, end: int) -> str:
    """The clause holding ``start:end``: from the last clause mark before it to the next one after it."""
    head = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    tail = _CLAUSE_END.search(text, end)
    return text[head:tail.start() if tail else len(text)]


def _role(unit: str, clause: str, number: tuple[int, int], clause_start: int) -> str | None:
    """The first role whose words appear in the clause (outside the number itself) and that fits the unit."""
    a, b = number[0] - clause_start, number[1] - clause_start
    words = clause[:a] + " " * (b - a) + clause[b:]
    for name, units, pattern in _roles():
        if unit in units and name != "target" and pattern.search(words):
            return name
    return None


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(max(0, a), min(len(chars), b)):
            chars[i] = " "
    return "".join(chars)


def _candidates(text: str) -> list[tuple[float, Quantity]]:
    found: list[tuple[float, Quantity]] = []
    for unit, pattern, after in _unit_patterns():
        for m in pattern.finditer(text):
            value = parse_number(m.group("num").strip())
            if value is None or value <= 0:
                continue
            if m.group("k"):
                value *= 1000
            if unit == "seconds" and _millis().match(text, m.end("num")):
                value /= 1000
            if unit == "years" and (value > MAX_YEARS or _AGO.match(text, m.end())):
                continue  # '2021 年', '3 年前买的', 'two years old': a date or an age, not a horizon
            start, end = m.span("num")[0], m.end("k") if m.group("k") else m.end("num")
            if unit == "people" and A_LENGTH.match(text, end):
                continue  # 'users at 32k ctx': a number of tokens is a context, never people
            head = max((c.end() for c in _CLAUSE_END.finditer(text, 0, start)), default=0)
            clause = _clause(text, start, end)
            role = _role(unit, clause, (start, end), head)
            if role is None and _EACH.search(clause) and head:  # '4 racks, 15 kW each': the noun before the comma
                before = max((c.end() for c in _CLAUSE_END.finditer(text, 0, head - 1)), default=0)
                role = _role(unit, text[before:head] + clause, (start - before, end - before), 0)
            score = (m.end() - m.start()) / 100 + (1.0 if role else 0.0) + (0.5 if after else 0.0)
            found.append((score, Quantity(unit=unit, value=value, role=role, start=start, end=end)))
    return found


def read_quantities(text: str, blanked: list[tuple[int, int]] | None = None) -> list[Quantity]:
    """Every quantity with a unit in ``text``, in text order; ``blanked`` spans (names, dates) are not read."""
    text = _blank(text[:MAX_TEXT], blanked or [])
    taken: list[Quantity] = []
    for _, q in sorted(_candidates(text), key=lambda c: -c[0]):
        if not any(q.start < t.end and t.start < q.end for t in taken):
            taken.append(q)
    return sorted(taken, key=lambda q: q.start)


def is_target(text: str, q: Quantity) -> bool:
    """Whether the clause of ``q`` states it as a requirement ('至少 20 tokens/s', 'TTFT under 2 s')."""
    pattern = next(p for name, _, p in _roles() if name == "target")
    return bool(pattern.search(_clause(text, q.start, q.end)))
