"""Catalogs (GPUs, models, CPU platforms), guidance corpus and retrieval.

The catalog loads its module on first use, so opening the index does not pay for building the
catalog schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knowledge.resolve import AmbiguousNameError, UnknownNameError
from knowledge.search import search as search  # binds the function over the submodule's name

if TYPE_CHECKING:
    from knowledge.catalog import Catalog, CatalogError, load_catalog

__all__ = ["AmbiguousNameError", "Catalog", "CatalogError", "UnknownNameError", "load_catalog", "search"]


def __getattr__(name: str) -> Any:
    if name in ("Catalog", "CatalogError", "load_catalog"):
        from knowledge import catalog

        return getattr(catalog, name)
    raise AttributeError(f"module 'knowledge' has no attribute {name!r}")
