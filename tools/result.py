"""Pieces shared by tool results: notes as message ids, explained terms, memory breakdowns."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from knowledge.messages import msg

NoteParam = str | int | float | bool | None | dict[str, Any]


class Note(BaseModel):
    """A sentence a tool says about its result (an assumption, a warning, a reason), as a message id.

    ``params`` fill the message's placeholders; a parameter may itself be a note (``{"id", "params"}``).
    ``text`` is the English rendering, kept so JSON read by scripts or an LLM stays readable; readers
    show ``knowledge.messages.render(note, lang)`` in the user's language instead."""

    model_config = ConfigDict(extra="forbid")

    id: str
    params: dict[str, NoteParam] = Field(default_factory=dict)
    text: str = ""

    def __str__(self) -> str:
        return self.text


def note(message_id: str, **params: NoteParam | Note) -> Note:
    """A note for message ``message_id`` (which must exist in ``knowledge/messages/en.toml``)."""
    plain = {k: v.model_dump() if isinstance(v, Note) else v for k, v in params.items()}
    return Note(id=message_id, params=plain, text=msg("en", message_id, **plain))


class Term(BaseModel):
    """One term of a computed figure, with its formula and a one-line explanation, both notes
    (``<area>.formula.*`` and ``<area>.explain.<name>`` messages; readers show ``render(term.formula, lang)``
    and ``render(term.explain, lang)``; ``term.formula.text`` is the English formula).

    Frozen: results may share a term that does not change between calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    value: float = Field(description="in the unit named by `unit`")
    unit: str = Field(description="'bytes', 'tokens/s', 's', 'W', …")
    formula: Note = Field(description="how the value is computed: symbols and numbers, words in the note's language")
    explain: Note = Field(description="what the term is, in plain words")

class MemoryBreakdown(BaseModel):
    """Bytes per category; 0 where a category does not apply."""

    model_config = ConfigDict(extra="forbid")

    weights: int = Field(0, ge=0)
    kv_cache: int = Field(0, ge=0)
    activations: int = Field(0, ge=0)
    gradients: int = Field(0, ge=0)
    optimizer: int = Field(0, ge=0)
    overhead: int = Field(0, ge=0)

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.activations + self.gradients + self.optimizer + self.overhead
