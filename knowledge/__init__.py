"""Catalogs (GPUs, models, CPU platforms), guidance corpus and retrieval."""

from knowledge.catalog import Catalog, CatalogError, load_catalog
from knowledge.resolve import AmbiguousNameError, UnknownNameError
from knowledge.search import search as search

__all__ = ["AmbiguousNameError", "Catalog", "CatalogError", "UnknownNameError", "load_catalog"]
