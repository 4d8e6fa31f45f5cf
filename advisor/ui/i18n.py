"""Labels of the web UI, read from the message catalogs (``knowledge/messages/<lang>.toml``, ids ``ui.*``).

``t(key, lang)`` is the label ``ui.<key>``; an unknown key raises ``KeyError`` (a typo should fail a
test, not show a raw key to users). ``label(kind, value, lang)`` names a raw value a user would otherwise
see (a use case, tier, engine, severity …) from ``ui.value.<kind>.<value>``. ``lang`` is ``"zh"`` or
``"en"``; anything else means English.
"""

from __future__ import annotations

import re

from knowledge.messages import catalog, has, msg
from knowledge.names import Lang

LANGS: tuple[Lang, ...] = ("zh", "en")

# Values with a label in the catalog (ui.value.use_case.*, ui.value.method.*), in the order the UI offers them.
USE_CASES: tuple[str, ...] = ("training", "inference", "scientific")
METHODS: tuple[str, ...] = ("full", "lora", "qlora", "pretrain")

_FLAG_HINT = re.compile(r"\s*[（(]--([a-z][a-z0-9-]*)[)）]")
# 'invalid arguments — context_tokens: …': an argument's name where a sentence names the field that failed
_FIELD_NAME = re.compile(r"(?<=— |; )([a-z][a-z0-9]*_[a-z0-9_]+)(?=: )")


def norm_lang(lang: object) -> Lang:
    """'zh', 'zh-CN', 'zh_TW' → 'zh'; everything else → 'en'."""
    return "zh" if isinstance(lang, str) and lang.strip().lower().startswith("zh") else "en"


def t(key: str, lang: object, **params: object) -> str:
    """The label ``ui.<key>`` in ``lang`` (formatted with ``params`` when given)."""
    return msg(norm_lang(lang), f"ui.{key}", **params)


def label(kind: str, value: object, lang: object) -> str:
    """The display name of a raw ``value`` of ``kind`` (``use_case``, ``tier``, ``engine`` …); the value
    itself when the catalog has no name for it (a catalog name such as a GPU or a precision)."""
    key = f"ui.value.{kind}.{value}"
    return msg(norm_lang(lang), key) if has("en", key) else str(value)


def labels() -> list[str]:
    """Every top-level label key (``t(key, …)`` works for each)."""
    return [k[3:] for k in catalog("en") if k.startswith("ui.") and k.count(".") == 1]


def examples(lang: object) -> tuple[str, ...]:
    """The example questions of ``lang``, in order."""
    code = norm_lang(lang)
    keys = sorted((k for k in catalog("en") if k.startswith("ui.example.")), key=lambda k: int(k.rsplit(".", 1)[1]))
    return tuple(msg(code, k) for k in keys)


EXAMPLES: dict[Lang, tuple[str, ...]] = {code: examples(code) for code in LANGS}


def ui_text(text: str, lang: object) -> str:
    """A tool's sentence made fit for the web page: a command-line flag hint such as "(--cpu)" becomes the
    name of the form field that sets the same thing, or goes when there is none; an argument named as the
    one that failed ('— context_tokens: …') is called by its form label."""

    def field(m: re.Match[str]) -> str:
        key = f"ui.flag.{m.group(1)}"
        if not has("en", key):
            return ""
        return msg(norm_lang(lang), "ui.flag_hint", field=msg(norm_lang(lang), key))

    def form_label(m: re.Match[str]) -> str:
        key = f"ui.{m.group(1)}"  # the form field's own label ('Context length (tokens)'), when there is one
        return msg(norm_lang(lang), key) if has("en", key) else m.group(1)

    return _FIELD_NAME.sub(form_label, _FLAG_HINT.sub(field, text))
