"""Prose as data: one TOML message file per language, ``msg(lang, id, **params)`` to render.

A message id missing in a language falls back to English, so a new language can start with a few
messages. Parameters are ``str.format`` fields; a missing parameter is a bug and raises KeyError.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources

FALLBACK = "en"


@cache
def catalog(lang: str) -> dict[str, str]:
    """All messages of ``lang`` (flattened: table ``[spec]`` key ``memory`` is id ``spec.memory``)."""
    path = resources.files("advisor.messages").joinpath(f"{lang}.toml")
    if not path.is_file():
        return {}
    out: dict[str, str] = {}

    def walk(prefix: str, table: dict) -> None:
        for key, value in table.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(name, value)
            else:
                out[name] = str(value)

    walk("", tomllib.loads(path.read_text(encoding="utf-8")))
    return out


def msg(lang: str | None, key: str, **params: object) -> str:
    """The message ``key`` in ``lang`` (English when that language lacks it), formatted with ``params``."""
    text = catalog(lang or FALLBACK).get(key)
    if text is None:
        text = catalog(FALLBACK)[key]
    return text.format(**params) if params else text


def has(lang: str, key: str) -> bool:
    return key in catalog(lang)
