"""Load and validate the catalogs once; look entries up by name."""

from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from pydantic import ValidationError

from knowledge.checkpoints import base_name
from knowledge.resolve import AmbiguousNameError, Resolver, UnknownNameError
from knowledge.schema import GPU, DecodeMeasurement, Model, Platform
from knowledge.user_gpus import Measured, load_user_gpus, skeleton

log = logging.getLogger(__name__)

DATA_PACKAGE = "knowledge.data"


M = TypeVar("M", GPU, Model, Platform)  # each catalog entry type has an ``id``


class CatalogError(ValueError):
    """A data file failed validation; names the file and the entry."""


def _read_tables(folder: str, table: str) -> list[tuple[str, dict[str, Any]]]:
    root = resources.files(DATA_PACKAGE).joinpath(folder)
    rows: list[tuple[str, dict[str, Any]]] = []
    files = sorted((p for p in root.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name)
    for path in files:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise CatalogError(f"{folder}/{path.name}: {exc}") from exc
        rows += [(f"{folder}/{path.name}", row) for row in data.get(table, [])]
    return rows


def _validate(cls: type[M], folder: str, table: str) -> tuple[M, ...]:
    out: list[M] = []
    seen: set[str] = set()
    for where, row in _read_tables(folder, table):
        try:
            entry = cls.model_validate(row)
        except ValidationError as exc:
            raise CatalogError(f"{where}: entry {row.get('id', '?')!r}: {exc}") from exc
        if entry.id in seen:
            raise CatalogError(f"{where}: duplicate id {entry.id!r}")
        seen.add(entry.id)
        out.append(entry)
    return tuple(out)


@dataclass(frozen=True)
class Catalog:
    gpus: tuple[GPU, ...]
    models: tuple[Model, ...]
    platforms: tuple[Platform, ...]
    gpu_resolver: Resolver[GPU]
    model_resolver: Resolver[Model]
    platform_resolver: Resolver[Platform]

    def gpu(self, name: str) -> GPU:
        """GPU by id, name or alias; raises UnknownNameError with suggestions."""
        return self.gpu_resolver.get(name)

    def model(self, name: str) -> Model:
        return self.model_resolver.get(name)

    def platform(self, name: str) -> Platform:
        return self.platform_resolver.get(name)


def _gpu_resolver(gpus: tuple[GPU, ...]) -> Resolver[GPU]:
    return Resolver("GPU", gpus, lambda g: [g.id, g.name, *g.aliases], lambda g: g.name)


def _finds(resolver: Resolver[GPU], name: str) -> bool:
    try:
        return resolver.find(name) is not None
    except AmbiguousNameError:
        return True


def _with_measurements(gpus: tuple[GPU, ...], measured: list[Measured]) -> tuple[GPU, ...]:
    """``gpus`` with each measured decode speed and training MFU attached to the GPU it names (an unknown name: a
    warning)."""
    resolver = _gpu_resolver(gpus)
    found: dict[str, list[DecodeMeasurement]] = {}
    mfu: dict[str, float] = {}
    for m in measured:
        try:
            gpu = resolver.get(m.gpu)
        except (UnknownNameError, AmbiguousNameError) as exc:
            log.warning("GPU_ADVISOR_GPUS: a measurement names %s; not used", exc)
            continue
        if m.training_mfu is not None:
            mfu[gpu.id] = m.training_mfu  # the last one written wins
            continue
        found.setdefault(gpu.id, []).append(DecodeMeasurement(
            model=m.model or "", precision=m.precision or "", tokens_per_s=m.decode_tokens_per_s or 0,
            source=f"measured by the user ({m.gpu}, {m.model}, {m.precision})"))
    update = {g.id: {**({"measured_decode": tuple(found[g.id])} if g.id in found else {}),
                     **({"measured_training_mfu": mfu[g.id]} if g.id in mfu else {})} for g in gpus}
    return tuple(g.model_copy(update=update[g.id]) if update[g.id] else g for g in gpus)


def _described(gpus: tuple[GPU, ...], mine: list[GPU]) -> tuple[GPU, ...]:
    """The described cards ``mine`` that neither are nor mimic a catalog GPU (each one left out: a warning). A
    described card never shadows a catalog one: the catalog's figures are sourced."""
    ours, ids = _gpu_resolver(gpus), {c.id for c in gpus}
    out: list[GPU] = []
    for g in mine:
        if g.id in ids or _finds(ours, g.name):
            log.warning("GPU_ADVISOR_GPUS: %s is already in the catalog; its catalog figures are used", g.name)
        elif skeleton(g.name) != g.name and _finds(ours, skeleton(g.name)):
            log.warning("GPU_ADVISOR_GPUS: %s looks like the catalog's %s (look-alike letters); left out", g.name,
                        skeleton(g.name))
        else:
            out.append(g)
    return tuple(out)


@cache
def load_catalog() -> Catalog:
    """The validated catalog, loaded once per process, with the GPUs of ``$GPU_ADVISOR_GPUS`` if set."""
    gpus = _validate(GPU, "gpus", "gpu")
    mine, measured, problems = load_user_gpus()
    for problem in problems:
        log.warning("%s", problem)
    if mine:
        gpus += _described(gpus, mine)
    if measured:
        gpus = _with_measurements(gpus, measured)
    models = _validate(Model, "models", "model")
    platforms = _validate(Platform, "platforms", "platform")
    return Catalog(
        gpus=gpus,
        models=models,
        platforms=platforms,
        gpu_resolver=_gpu_resolver(gpus),
        model_resolver=Resolver("model", models, lambda m: [m.id, m.name, *m.aliases], lambda m: m.name,
                                fallback=base_name),
        platform_resolver=Resolver(
            "CPU platform", platforms, lambda p: [p.id, p.name, *p.aliases], lambda p: p.name
        ),
    )
