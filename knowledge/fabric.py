"""Scale-out network families between GPU nodes, with prices and sources (knowledge/data/fabric.toml)."""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Fabric(BaseModel):
    """One network family: port speed, adapter, switch and what each costs (None: price unknown)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    port_gbps: float = Field(gt=0)
    nic: str
    nic_usd: float | None = Field(None, ge=0)
    link_usd: float | None = Field(None, ge=0)
    switch: str
    switch_ports: int = Field(gt=0)
    switch_usd: float | None = Field(None, ge=0)
    price_kind: Literal["list", "street", "derived"]
    confidence: Literal["H", "M", "L"]
    gpus: list[str]
    sources: list[str] = Field(min_length=1)
    note: str
    as_of: dt.date


@functools.cache
def load_fabrics() -> tuple[Fabric, ...]:
    """Every fabric family; exactly one is the default (no ``gpus`` listed) and no GPU is in two."""
    raw = tomllib.loads(resources.files("knowledge.data").joinpath("fabric.toml").read_text(encoding="utf-8"))
    fabrics = tuple(Fabric.model_validate({**f, "as_of": raw["as_of"]}) for f in raw["fabric"])
    if sum(not f.gpus for f in fabrics) != 1:
        raise ValueError("fabric.toml: exactly one fabric must be the default (gpus = [])")
    listed = [g for f in fabrics for g in f.gpus]
    if len(listed) != len(set(listed)):
        raise ValueError("fabric.toml: a GPU is listed under two fabrics")
    return fabrics


def fabric_for(gpu_id: str) -> Fabric:
    """The network a cluster of ``gpu_id`` nodes is built with."""
    fabrics = load_fabrics()
    return next((f for f in fabrics if gpu_id in f.gpus), next(f for f in fabrics if not f.gpus))
