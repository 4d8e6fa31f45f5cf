"""Number, byte, speed, money and duration formatting: the one place every renderer takes them from.

Bytes are shown in decimal GB with binary GiB beside them; money carries its currency symbol; a missing
value is an em dash. Words come from the message catalogs, so each function takes the output language
where its text has any.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from knowledge.markets import markets_as_of
from knowledge.messages import msg
from tools.pricing import CNY_PER_USD, SYMBOLS, USD_PER_FOREIGN, VALUE_UNIT
from tools.rentals import STALE_AFTER_DAYS  # a price over about six months old when the catalog was checked
from tools.units import GB, GiB


def count_short(n: float, lang: str) -> str:
    """A large count as people say it: '98.6M', '1.2B' in English, '9,863 万', '9.9 亿' in Chinese."""
    if lang == "zh":
        if n >= 1e8:
            return f"{n / 1e8:,.1f} 亿".replace(".0 ", " ")
        return f"{n / 1e4:,.0f} 万" if n >= 1e4 else f"{n:,.0f}"
    for size, mark in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:,.1f}".removesuffix(".0") + mark
    return f"{n:,.0f}"


def num(x: float | None, digits: int = 1) -> str:
    """1234.5 → '1,234.5'; integers without decimals; small values keep two significant digits."""
    if x is None:
        return "—"
    if abs(x - round(x)) < 1e-9 and abs(x) >= 1:
        return f"{round(x):,}"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) < 1:
        return f"{x:.2g}"
    return f"{x:,.{digits}f}"


def gb(n_bytes: float | None) -> str:
    """'39.6 GB (36.9 GiB)' — decimal first, binary beside it, both labelled."""
    if n_bytes is None:
        return "—"
    return f"{n_bytes / GB:,.1f} GB ({n_bytes / GiB:,.1f} GiB)"


def gb_short(n_bytes: float | None) -> str:
    """'39.6 GB' — decimal only, for tables and short lines."""
    return "—" if n_bytes is None else f"{n_bytes / GB:,.1f} GB"


def tps(x: float | None) -> str:
    """Tokens per second: one decimal below 100, none above."""
    if x is None:
        return "—"
    return f"{x:,.1f} tokens/s" if x < 100 else f"{x:,.0f} tokens/s"




def money(amount: float | None, currency: str) -> str:
    """'¥79,200', '$2,750', '€435': whole units with the currency's symbol."""
    if amount is None:
        return "—"
    return SYMBOLS.get(currency, "$") + f"{amount:,.0f}"


def _field(obj: Any, name: str) -> Any:
    """A field of a result given as a model or as its JSON mapping."""
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def option_price(o: Any, currency: str) -> float | None:
    """A recommended option's total in ``currency`` as the tool computed it (None where it has no such total:
    euro and pound totals exist only when the request asked for them)."""
    field = {"USD": "total_price_usd", "CNY": "total_price_cny"}.get(currency, "total_price_local")
    value = _field(o, field)
    return float(value) if isinstance(value, int | float) else None


def option_total(o: Any, currency: str) -> str:
    """A recommended option's total in the currency shown (yuan, dollars, or the euro / pound budget's)."""
    if currency == "CNY" or option_price(o, currency) is not None:
        return money(option_price(o, currency), currency)
    return money(option_price(o, "USD"), "USD")


def value_per_price(o: Any, currency: str) -> float | None:
    """The option's performance per $1k (its ``perf_per_price``) re-based to per ¥10k, €1k or £1k, from the
    option's own two totals."""
    ppp, usd, local = _field(o, "perf_per_price"), option_price(o, "USD"), option_price(o, currency)
    if not isinstance(ppp, int | float) or not usd or not local:
        return None
    return float(ppp) * (usd / 1000) / (local / VALUE_UNIT.get(currency, 1000.0))


def usd_in(usd: float, currency: str, rate: float = CNY_PER_USD) -> str:
    """A dollar amount (a host estimate) in ``currency`` at the stated rates: yuan at ``rate``, euro or pound at
    theirs, dollars as they are."""
    if currency == "CNY":
        return money(usd * rate, "CNY")
    if currency in USD_PER_FOREIGN:
        return money(usd / USD_PER_FOREIGN[currency], currency)
    return money(usd, "USD")


def money_in(usd: float | None, cny: float | None, currency: str, lang: str, rate: float = CNY_PER_USD) -> str:
    """An amount a tool gives in dollars and yuan (converted at ``rate``), in ``currency``: yuan with the dollar
    figure and the rate, else dollars."""
    if usd is None:
        return "—"
    if currency == "CNY" and cny is not None:
        return msg(lang, "fmt.converted", price=money(cny, "CNY"), original=money(usd, "USD"), rate=f"{rate:g}")
    return money(usd, "USD")


def money_in_exact(usd: float, cny: float, currency: str, lang: str, rate: float = CNY_PER_USD) -> str:
    """Like :func:`money_in` for small amounts that keep their cents ('¥20.88（按 $2.90、汇率 7.2 换算）')."""
    if currency == "CNY":
        return msg(lang, "fmt.converted", price=money_exact(cny, "CNY"), original=money_exact(usd, "USD"),
                   rate=f"{rate:g}")
    return money_exact(usd, "USD")


def money_exact(amount: float, currency: str) -> str:
    """Small amounts keep their cents ('$0.90', '¥6.48'); larger ones are rounded like ``money``."""
    if amount >= 100:
        return money(amount, currency)
    return SYMBOLS.get(currency, "$") + f"{amount:,.2f}"


def gpu_price_text(g: Any, lang: str, currency: str | None = None) -> tuple[str, str] | None:
    """(price in the user's currency — ``currency`` when they asked for one, else their language's —, as-of
    date) of a catalog GPU (model or JSON); a converted price shows its rate."""
    price, price_both = _field(g, "price"), _field(g, "price_both")
    p = price.model_dump() if hasattr(price, "model_dump") else (price or {})
    both = price_both.model_dump() if hasattr(price_both, "model_dump") else (price_both or {})
    if p.get("usd") is None and p.get("cny") is None:
        return None
    own = (currency if currency in ("USD", "CNY") else default_currency(lang)).lower()
    other = "usd" if own == "cny" else "cny"
    if p.get(own) is not None:
        text = money(p[own], own.upper())
    elif both.get(own):
        text = msg(lang, "fmt.converted", price=money(both[own], own.upper()), original=money(p[other], other.upper()),
                   rate=f"{CNY_PER_USD:g}")
    else:
        text = money(p[other], other.upper())
    return text, str(p.get("as_of", ""))




def price_basis(g: Any, lang: str, currency: str | None = None) -> str:
    """What the price :func:`gpu_price_text` shows is and when: 'China channel price, as of 2026-01-10', with
    'over six months old' when it predates the catalog's last check by more than six months."""
    price = _field(g, "price")
    p = price.model_dump() if hasattr(price, "model_dump") else (price or {})
    shows_cny = (currency or default_currency(lang)) == "CNY" and p.get("cny") is not None
    kind = (p.get("cny_kind") if shows_cny else None) or p.get("kind") or "derived"
    if not p.get("as_of"):
        return msg(lang, f"spec.kind.{kind}")
    as_of = dt.date.fromisoformat(str(p.get("as_of")))
    stale = (markets_as_of() - as_of).days > STALE_AFTER_DAYS
    return msg(lang, "spec.basis", kind=msg(lang, f"spec.kind.{kind}"), as_of=as_of.isoformat(),
               stale=msg(lang, "spec.stale") if stale else "")


def duration(hours: float | None, lang: str) -> str:
    """Hours below two days, days above, in ``lang``."""
    if hours is None:
        return "—"
    if hours < 48:
        return msg(lang, "compose.duration.hours", hours=num(hours))
    return msg(lang, "compose.duration.days", hours=num(hours / 24))


def card_by_memory(memory_gb: float, lang: str) -> str:
    """'a 32 GB card' for a GPU known only by its memory."""
    return msg(lang, "label.card_by_memory", memory=num(memory_gb))


def gib(n_bytes: float | None, digits: int = 1) -> str:
    """'36.9 GiB' — binary only, for what an engine or driver reports."""
    return "—" if n_bytes is None else f"{n_bytes / GiB:,.{digits}f} GiB"


def gb_fixed(n_bytes: float | None, digits: int = 2) -> str:
    """'39.62 GB' with a fixed number of decimals, for figures compared against a table column."""
    return "—" if n_bytes is None else f"{n_bytes / GB:,.{digits}f} GB"


def seconds(s: float | None) -> str:
    """'312 ms' below a second, '6.11 s' above, '48.3 s' past ten, '4,840 s (~81 min)' past two minutes: no more
    digits than an estimate holds."""
    if s is None:
        return "—"
    if s < 1:
        return f"{s * 1e3:,.2f} ms" if s < 0.01 else f"{s * 1e3:,.1f} ms"
    if s < 10:
        return f"{s:,.2f} s"
    if s < 120:
        return f"{s:,.1f} s"
    return f"{round(s, -1):,.0f} s (~{s / 60:,.0f} min)"


def flops(x: float | None, unit: str = "FLOP") -> str:
    """'6.18e+14 FLOP'; FLOP/s as TFLOPS when large."""
    if x is None:
        return "—"
    if unit == "FLOP/s" and x >= 1e12:
        return f"{num(x / 1e12)} TFLOPS"
    return f"{x:.3g} {unit}"


def unit_value(value: float | None, unit: str, lang: str = "en") -> str:
    """A figure in its unit: bytes in GB, seconds in ms or s, FLOP in scientific notation, money with its symbol;
    a unit word (sequences, tokens) from the message catalog where it has one."""
    if value is None:
        return "—"
    if unit == "bytes":
        return gb_fixed(value, 2 if abs(value) < 10 * GB else 1)
    if unit == "s":
        return seconds(value)
    if unit in ("FLOP", "FLOP/s"):
        return flops(value, unit)
    if unit == "tokens/s":
        return tps(value)
    if unit in SYMBOLS:
        return money_exact(value, unit)
    if unit == "h":
        return f"{num(value)} h"
    from knowledge.messages import has  # the unit words are messages of advisor.present

    key = f"present.unit.{unit}"
    word = msg(lang, key) if has("en", key) else unit
    return f"{num(value)} {word}".strip()


def usable_bytes(result: Any) -> int | None:
    """The memory a sizing result's fit verdict is measured against, per GPU: vLLM's reservation
    (``gpu_memory_utilization`` × what the engine sees) where there is one, else the engine-visible bytes.

    Sizing answers, the build check, the web UI's chart and the recommender all quote this one figure,
    so "needs X, usable Y" always agrees with "fits / does not fit"."""
    get = result.get if isinstance(result, dict) else (lambda k: getattr(result, k, None))
    value = get("reserved_bytes") or get("gpu_memory_bytes")
    return int(value) if isinstance(value, int | float) and value > 0 else None


def needed_bytes(result: Any) -> int | None:
    """What a sizing result's fit verdict weighs per GPU: every layer on the GPU for a llama.cpp plan that
    offloads (the verdict says whether the model fits without offload), else the per-GPU need."""
    get = result.get if isinstance(result, dict) else (lambda k: getattr(result, k, None))
    value = get("all_layers_bytes") or get("per_gpu_bytes")
    return int(value) if isinstance(value, int | float) else None


def punct(lang: str, mark: str) -> str:
    """The language's punctuation: ``comma`` (', ' / '，'), ``list`` (', ' / '、'), ``semicolon``, ``stop``."""
    return msg(lang, f"fmt.{mark}")


def default_currency(lang: str | None) -> str:
    """The currency of ``lang``'s readers when they named none (yuan for Chinese, dollars for English)."""
    return msg(lang, "fmt.currency")
