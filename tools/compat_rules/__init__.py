"""Compatibility rules, one module per category; ``RULES`` runs them in report order."""

from __future__ import annotations

from collections.abc import Callable

from tools.compat_rules.interconnect import check_interconnect
from tools.compat_rules.memory import check_memory
from tools.compat_rules.pcie import check_pcie
from tools.compat_rules.physical import check_cooling, check_display, check_physical
from tools.compat_rules.platform import check_platform
from tools.compat_rules.power import check_power
from tools.compat_rules.precision import check_precision
from tools.compat_rules.software import check_software
from tools.compat_rules.types import BuildContext, Finding

Rule = Callable[[BuildContext], list[Finding]]

RULES: tuple[Rule, ...] = (
    check_power, check_pcie, check_physical, check_cooling, check_display, check_interconnect,
    check_precision, check_software, check_memory, check_platform,
)

# a unified-memory system (DGX Spark, Strix Halo) is bought whole: only what runs on it is checked
SYSTEM_RULES: tuple[Rule, ...] = (check_precision, check_software, check_memory)

__all__ = ["RULES", "SYSTEM_RULES", "Rule"]
