"""Rental providers a message names ('runpod vs vast', '阿里云和 lambda 哪个便宜'), from the providers the rental
data knows. Several provider names are ordinary words ('vast', 'lambda', 'amazon'), so a name counts only in a
message about renting or clouds, or beside another provider."""

from __future__ import annotations

import re
from functools import cache

from advisor.ascii_re import ascii_bounded
from advisor.nlu import vocab
from knowledge.offers import providers


@cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    def bounded(alias: str) -> str:
        return re.escape(alias) if not alias.isascii() else ascii_bounded(rf"\b{re.escape(alias)}\b")

    return tuple((p.name, re.compile("|".join(bounded(a) for a in p.aliases), re.IGNORECASE)) for p in providers())


def named_providers(text: str) -> list[str]:
    """The providers ``text`` names, in the order written, when it is about renting (or names two of them)."""
    found = sorted((m.start(), name) for name, pattern in _patterns() if (m := pattern.search(text)))
    names = list(dict.fromkeys(name for _, name in found))
    if len(names) >= 2 or (names and vocab.matches("slot", "rent_context", text)):
        return names
    return []
