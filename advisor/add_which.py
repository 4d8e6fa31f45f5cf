"""'手上有张3090，再加一张，3090 还是 4090？', 'add another used 3090 or a 4090?': each card the buyer weighs adding
is sized together with the cards they own (llama.cpp splitting the layers), and the cheapest addition that holds
the model is the verdict, with what the dearer one buys in speed."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from advisor.compose import config_label, gpu_name
from advisor.fmt import gb, money, tps
from advisor.nlu import vocab
from advisor.nlu.rules import says_swap
from advisor.planner import PlannedCall, size_stand_in, user_currency
from advisor.session import ToolCall
from knowledge import load_catalog
from knowledge.messages import msg
from tools.pricing import BillCurrency, from_usd, gpu_price, to_usd

if TYPE_CHECKING:
    from advisor.asks import AskContext

MAX_CHOICES = 4  # cards weighed in one answer
SAME_SPEED = 0.05  # within 5 % the two additions are as fast


def add_which_needed(c: AskContext) -> bool:
    """Cards weighed as an addition to those owned — not when one of them replaces the owned ('or sell mine and get
    a 5090', '还是换成两张 L20': those are options of their own)."""
    p = c.session.profile
    replaces = says_swap(c.text) or bool(vocab.matches("slot", "gives_up_owned", c.text))
    return c.added > 0 and bool(p.existing) and len(_choices(c)) >= 2 and size_stand_in(p) is not None \
        and p.use_case in (None, "inference") and not replaces


def _choices(c: AskContext) -> list[str]:
    """The cards weighed as the addition (the owned card named again is 'another of it')."""
    return list(c.named)[:MAX_CHOICES]


def _box(c: AskContext, gpu: str) -> list[dict[str, Any]]:
    counts = {e.gpu: e.count for e in c.session.profile.existing or []}
    counts[gpu] = counts.get(gpu, 0) + c.added
    return [{"gpu": g, "count": n} for g, n in counts.items()]


def add_which_calls(c: AskContext) -> list[PlannedCall]:
    p = c.session.profile
    base: dict[str, Any] = {"model": size_stand_in(p), "context": p.context_tokens or 8192}
    if p.precision:
        base["precision"] = p.precision
    return [PlannedCall(name="pooled_fit", purpose="size", arguments={**base, "cards": _box(c, gpu)})
            for gpu in _choices(c)]


def _unit_price(c: AskContext, gpu: str, currency: str) -> float | None:
    """The price the buyer said for the card (this message or earlier), else the catalog's, in ``currency``."""
    said = dict(c.card_prices).get(gpu) or c.session.profile.card_prices.get(gpu)
    if said is not None and said.currency == currency:
        return float(said.amount)
    usd = to_usd(said.amount, said.currency) if said is not None else gpu_price(load_catalog().gpu(gpu)).usd
    return None if usd is None else from_usd(usd, cast(BillCurrency, currency))


def say_add_which(c: AskContext, done: list[ToolCall]) -> str | None:
    currency = user_currency(c.session.profile, c.lang)
    rows = []
    for gpu in _choices(c):
        box = _box(c, gpu)
        call = next((x for x in done if x.name == "pooled_fit" and x.ok and x.arguments.get("cards") == box), None)
        if call is not None and call.result:
            rows.append((gpu, call.result, _unit_price(c, gpu, currency)))
    if len(rows) < 2:
        return None
    owned = " + ".join(config_label(e.gpu, e.count, c.lang) for e in c.session.profile.existing or [])
    fitting = [r for r in rows if r[1]["fits"]]
    if not fitting:
        most = max(rows, key=lambda r: r[1]["usable_bytes"])[1]
        return msg(c.lang, "asks.add_which_none", owned=owned, model=most["model"], precision=most["precision"],
                   need=gb(most["need_bytes"]), usable=gb(most["usable_bytes"]))
    best = min(fitting, key=lambda r: (math.inf if r[2] is None else r[2], -r[1]["tokens_per_s"]))
    gpu, r, price = best
    lines = [msg(c.lang, "asks.add_which_best", card=gpu_name(gpu), price=_price(price, currency, c.lang),
                 owned=owned, model=r["model"], precision=r["precision"], need=gb(r["need_bytes"]),
                 usable=gb(r["usable_bytes"]), speed=tps(r["tokens_per_s"]))]
    for other, o, other_price in rows:
        if other == gpu:
            continue
        if not o["fits"]:
            lines.append(msg(c.lang, "asks.add_which_other_short", card=gpu_name(other),
                             price=_price(other_price, currency, c.lang), usable=gb(o["usable_bytes"])))
            continue
        gain = o["tokens_per_s"] / r["tokens_per_s"] - 1 if r["tokens_per_s"] else 0.0
        more = None if other_price is None or price is None else other_price - price
        key = "asks.add_which_other_same" if abs(gain) < SAME_SPEED else \
            "asks.add_which_other_faster" if gain > 0 else "asks.add_which_other_slower"
        lines.append(msg(c.lang, key, card=gpu_name(other), price=_price(other_price, currency, c.lang),
                         speed=tps(o["tokens_per_s"]), pct=f"{abs(gain) * 100:.0f}",
                         more=money(more, currency) if more is not None and more > 0 else "—",
                         slowest=o["slowest"]))
    return "\n".join(lines)


def _price(amount: float | None, currency: str, lang: str) -> str:
    return money(amount, currency) if amount is not None else msg(lang, "asks.add_which_no_price")
