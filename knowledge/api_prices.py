"""What hosted LLM APIs charge per 1M tokens (``data/api_prices.toml``): one row per model and currency, each with
its date and source, and the open model a buyer would self-host in its place."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from knowledge.catalog import CatalogError, load_catalog
from knowledge.resolve import Resolver


class ApiPrice(BaseModel):
    """One API model's price per 1M tokens in one currency (peak price where the provider bills peak hours)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    provider: str = Field(min_length=1)
    aliases: tuple[str, ...] = ()
    currency: Literal["USD", "CNY"]
    input: float = Field(gt=0, lt=1000, description="uncached input, per 1M tokens")
    cached: float = Field(ge=0, lt=1000, description="input served from the prompt cache, per 1M tokens")
    output: float = Field(gt=0, lt=1000, description="generated tokens, per 1M tokens")
    off_peak_share: float | None = Field(None, gt=0, lt=1, description="off-peak price as a share of peak")
    as_of: dt.date
    source: str = Field(pattern=r"^https?://")
    confidence: Literal["H", "M", "L"]
    note: str = ""
    self_host_peer: str = Field(description="catalog model a buyer would self-host in its place")


@cache
def api_prices() -> tuple[ApiPrice, ...]:
    """Every API price row, validated; each peer is a catalog model."""
    text = resources.files("knowledge").joinpath("data/api_prices.toml").read_text(encoding="utf-8")
    out: list[ApiPrice] = []
    for i, row in enumerate(tomllib.loads(text).get("api", [])):
        try:
            price = ApiPrice.model_validate(row)
        except ValidationError as exc:
            raise CatalogError(f"api_prices.toml: api {i + 1}: {exc}") from exc
        load_catalog().model(price.self_host_peer)  # raises for an unknown peer
        out.append(price)
    return tuple(out)


@cache
def _resolver() -> Resolver[str]:
    names: dict[str, set[str]] = {}
    for row in api_prices():
        names.setdefault(row.id, {row.id, row.name}).update(row.aliases)
    return Resolver("API model", list(names), lambda i: names[i], lambda i: i)


def api_model(name: str) -> str:
    """The API model id for ``name`` ('4o-mini' → 'gpt-4o-mini'); raises UnknownNameError with suggestions."""
    return _resolver().get(name)


def api_price(model_id: str, currency: str) -> ApiPrice:
    """The row of ``model_id`` in ``currency``, else its row in the other currency (converted by the caller)."""
    rows = [r for r in api_prices() if r.id == model_id]
    if not rows:
        raise CatalogError(f"no API price for {model_id!r}")
    return next((r for r in rows if r.currency == currency), rows[0])


@cache
def _mention_pattern() -> re.Pattern[str]:
    names = {n for row in api_prices() for n in (row.id, row.name, *row.aliases)}
    alternatives = sorted((re.escape(n).replace(r"\ ", r"[\s-]?").replace(r"\-", r"[\s-]?") for n in names),
                          key=len, reverse=True)
    return re.compile(r"(?<![A-Za-z0-9.-])(?:" + "|".join(alternatives) + r")(?![A-Za-z0-9-]|\.\d)", re.IGNORECASE)


def api_mentions(text: str) -> list[str]:
    """The API models ``text`` names, in order, each once (longest name first at each place)."""
    found: list[str] = []
    for m in _mention_pattern().finditer(text):
        hit = _resolver().find(m.group(0))
        if hit and hit not in found:
            found.append(hit)
    return found


def api_name(model_id: str) -> str:
    """The API model's display name ('GPT-4o mini'), or the id when the table lacks it."""
    return next((r.name for r in api_prices() if r.id == model_id), model_id)
