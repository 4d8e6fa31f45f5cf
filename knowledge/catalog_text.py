"""Catalog prose in the reader's language.

The catalog files (``knowledge/data``) hold figures, sources and dates; the sentences about an entry are
messages ``catalog_text.<kind>.<id>`` in ``knowledge/messages/<lang>.toml``, so a Chinese reader gets them
in Chinese. The kinds: a GPU's notes (``gpu_notes``), how its price was sourced (``gpu_price``) and what
its multi-GPU link is (``gpu_link``); a model's notes (``model_notes``); a platform's notes
(``platform_notes``) and lane layout (``platform_chipset``); a scientific code's build precision
(``code_note``). An entry without such a sentence gives "".
"""

from __future__ import annotations

from typing import Any, Literal

from knowledge.messages import FALLBACK, has, msg
from knowledge.schema import GPU, Model, Platform

Kind = Literal["gpu_notes", "gpu_price", "gpu_link", "model_notes", "platform_notes", "platform_chipset", "code_note"]
KINDS: tuple[Kind, ...] = (
    "gpu_notes", "gpu_price", "gpu_link", "model_notes", "platform_notes", "platform_chipset", "code_note",
)


def text_id(kind: Kind, entry_id: str) -> str:
    """The message id of ``kind`` for the entry ``entry_id`` ('catalog_text.model_notes.qwen2.5-72b')."""
    return f"catalog_text.{kind}.{entry_id}"


def catalog_text(kind: Kind, entry_id: str, lang: str | None) -> str:
    """The sentence of ``kind`` about ``entry_id`` in ``lang`` (English where that language lacks it); "" if none."""
    key = text_id(kind, entry_id)
    return msg(lang, key) if has(FALLBACK, key) else ""


def gpu_notes(gpu_id: str, lang: str | None) -> str:
    """What is uncertain or chosen about a GPU's figures, its software and caveats."""
    return catalog_text("gpu_notes", gpu_id, lang)


def gpu_price_note(gpu_id: str, lang: str | None) -> str:
    """Where a GPU's catalog price and rental rate come from."""
    return catalog_text("gpu_price", gpu_id, lang)


def gpu_link_note(gpu_id: str, lang: str | None) -> str:
    """A GPU's multi-GPU link in words (links, bridge, switch, peer-to-peer)."""
    return catalog_text("gpu_link", gpu_id, lang)


def model_notes(model_id: str, lang: str | None) -> str:
    """A model's architecture details, context and caveats."""
    return catalog_text("model_notes", model_id, lang)


def platform_notes(platform_id: str, lang: str | None) -> str:
    """A CPU platform's cores, power, memory and caveats."""
    return catalog_text("platform_notes", platform_id, lang)


def platform_chipset_note(platform_id: str, lang: str | None) -> str:
    """How a CPU platform's PCIe lanes are split between slots, M.2 and the chipset."""
    return catalog_text("platform_chipset", platform_id, lang)


def code_note(code_id: str, lang: str | None) -> str:
    """The precision a scientific code's GPU build computes in, in words."""
    return catalog_text("code_note", code_id, lang)


def entry_json(entry: GPU | Model | Platform, lang: str | None = FALLBACK) -> dict[str, Any]:
    """``entry`` as JSON with its prose back in the fields it had before the prose became messages
    (``notes``; a GPU's ``price.note`` and ``interconnect.note``; a platform's ``chipset_lanes_note``),
    in ``lang`` — English by default, as JSON for scripts keeps it."""
    data = entry.model_dump(mode="json")
    if isinstance(entry, GPU):
        data["interconnect"]["note"] = gpu_link_note(entry.id, lang)
        if data.get("price") is not None:
            price = data["price"]
            sources = price.pop("sources")
            price["note"] = gpu_price_note(entry.id, lang)
            price["sources"] = sources
        data["notes"] = gpu_notes(entry.id, lang)
    elif isinstance(entry, Model):
        data["notes"] = model_notes(entry.id, lang)
    else:
        chipset = platform_chipset_note(entry.id, lang)
        ordered: dict[str, Any] = {}
        for key, value in data.items():
            ordered[key] = value
            if key == "gpu_slot_lanes":
                ordered["chipset_lanes_note"] = chipset
        data = ordered
        data["notes"] = platform_notes(entry.id, lang)
    return data
