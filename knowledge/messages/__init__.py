"""Prose as data: one TOML message file per language, ``msg(lang, id, **params)`` to render.

Every sentence a user reads — chat replies, CLI text, the web UI, exported reports and the notes tools
attach to their results — lives in ``<lang>.toml`` next to this module. A message id missing in a
language falls back to English, so a new language can start with a few messages. Parameters are
``str.format`` fields (format specs such as ``{tokens:,}`` allowed); a missing parameter is a bug and
raises KeyError. A spec starting with ``|`` picks a word by the number, for languages that inflect:
``{count:|error|errors}`` is 'error' when count is 1, else 'errors'. Tools emit notes as
``{"id": ..., "params": {...}}`` and ``render`` turns them into text.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

FALLBACK = "en"


@cache
def catalog(lang: str) -> dict[str, str]:
    """All messages of ``lang`` (flattened: table ``[spec]`` key ``memory`` is id ``spec.memory``)."""
    path = resources.files("knowledge.messages") / f"{lang}.toml"
    out: dict[str, str] = {}

    def walk(prefix: str, table: dict[str, Any]) -> None:
        for key, value in table.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(name, value)
            else:
                out[name] = str(value)

    if path.is_file():
        walk("", tomllib.loads(path.read_text(encoding="utf-8")))
    return out


class _Formatter(string.Formatter):
    """``str.format`` plus the ``{n:|one|other}`` plural spec."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec.startswith("|"):
            one, _, other = format_spec[1:].partition("|")
            return one if value == 1 else other
        return super().format_field(value, format_spec)


_FORMAT = _Formatter()


def msg(lang: str | None, key: str, **params: object) -> str:
    """The message ``key`` in ``lang`` (English when that language lacks it), formatted with ``params``.

    A parameter that is itself a note (``{"id": ..., "params": ...}``) is rendered in the same language."""
    text = catalog(lang or FALLBACK).get(key)
    if text is None:
        text = catalog(FALLBACK)[key]
    if not params:
        return text
    return _FORMAT.vformat(text, (), {k: render(v, lang) if _is_note(v) else v for k, v in params.items()})


def _is_note(item: object) -> bool:
    return (isinstance(item, Mapping) and "id" in item) or (hasattr(item, "id") and hasattr(item, "params"))


def render(item: object, lang: str | None) -> str:
    """A tool note in ``lang``: a plain string as is, a note (mapping or object with ``id``/``params``) via ``msg``."""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        return msg(lang, str(item["id"]), **dict(item.get("params") or {}))
    return msg(lang, item.id, **dict(item.params))  # type: ignore[attr-defined]


def has(lang: str, key: str) -> bool:
    return key in catalog(lang)
