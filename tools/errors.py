"""Domain errors raised by the tools: a clear message plus suggestions, never a traceback for users.

Each error carries a note (a message id of ``knowledge/messages/<lang>.toml`` with its parameters), so a
reply renders it in the user's language; ``str(exc)`` stays the English text, for logs, the CLI and scripts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from knowledge.errors import AdvisorError
from knowledge.messages import has
from knowledge.resolve import shown_name
from tools.result import Note, note


class ToolError(AdvisorError, ValueError):
    """Input that is valid in type but wrong in the domain (tp that does not divide heads, …).

    ``message`` is a note (``note("error.tp.heads", tp=3, ...)``) or, for a message not yet in the
    catalogs, plain English text. ``suggestions`` are code-like snippets (``model='llama-3.1-8b'``) kept
    as they are, or notes for the ones in words. ``exc.note`` is the whole error (message and suggestions)
    as one note; ``exc.suggestions`` the suggestions as English text."""

    def __init__(self, message: str | Note, suggestions: Sequence[str | Note] | None = None):
        self.reason = message if isinstance(message, Note) else note("error.plain", text=message)
        self.suggestion_notes: list[str | Note] = list(suggestions or [])
        self.suggestions = [str(s) for s in self.suggestion_notes]
        self.note = (note("error.try", error=self.reason, suggestions=joined(self.suggestion_notes, "error.join"))
                     if self.suggestion_notes else self.reason)
        super().__init__(self.note.text)


def joined(items: Sequence[str | Note], join_id: str) -> str | Note:
    """Items as one note joined by message ``join_id`` (``{first}; {rest}``), rendered in any language."""
    if len(items) == 1:
        return items[0]
    return note(join_id, first=items[0], rest=joined(items[1:], join_id))


def shown(text: str, limit: int = 60) -> str:
    """User input quoted in an error message, cut to ``limit`` characters (a pasted essay is not echoed back),
    control and direction characters escaped as names are quoted (:func:`knowledge.resolve.shown_name`), every
    other character as written."""
    return f"'{shown_name(text if len(text) <= limit else text[:limit - 1] + '…')}'"


# ------------------------------------------------------------------------------ any error as a note
def error_note(exc: BaseException, prefix: str = "error.validation.arguments") -> Note:
    """The error ``exc`` as a note whose English text is what the tools have always said:

    a ToolError or an unknown/ambiguous name its own note; a pydantic ValidationError a summary of its first
    three problems under message ``prefix`` ('invalid arguments — …' for tools, ``error.validation.input``
    'invalid input — …' for the CLI); anything else its first line, untranslated."""
    own = getattr(exc, "note", None)
    if isinstance(own, Note):
        return own
    if isinstance(exc, ValidationError):
        problems = [_problem(err) for err in exc.errors()[:3]]
        return note(prefix, problems=joined(problems, "error.join"))
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return note("error.plain", text=text)


# Pydantic error types with a message of ours; their English must read as pydantic's own ``msg``.
_VALIDATION_TYPES = ("greater_than_equal", "less_than_equal", "greater_than", "less_than", "missing",
                     "literal_error", "int_parsing", "float_parsing", "int_from_float", "int_type", "float_type",
                     "bool_parsing", "string_type", "extra_forbidden", "value_error", "value_error_input")
_LIMITS = {"greater_than_equal": "ge", "less_than_equal": "le", "greater_than": "gt", "less_than": "lt"}


def _problem(err: Any) -> Note:
    """One pydantic error as ``<field>: <what is wrong>``; pydantic's English ``msg`` where we have no message."""
    loc = tuple(err.get("loc", ()))
    name = ".".join(str(x) for x in loc) or "input"
    field: Note | str = note(f"field.{name}") if has("en", f"field.{name}") else name  # named in the reader's words
    entry = [x for x in loc if isinstance(x, int)]
    shape = ".".join("n" if isinstance(x, int) else str(x) for x in loc)  # 'gpus.0.count' → 'gpus.n.count'
    if len(entry) == 1 and has("en", f"field.{shape}"):
        field = note(f"field.{shape}", n=entry[0] + 1)  # an entry of a list, counted from 1
    detail = str(err.get("msg", "invalid"))
    english = f"{field.text if isinstance(field, Note) else name}: {detail}"
    kind, ctx = err.get("type", ""), err.get("ctx") or {}
    params: dict[str, Any] = {}
    if kind in _LIMITS and _LIMITS[kind] in ctx:
        params["limit"] = detail.rsplit(" ", 1)[-1]  # the bound as pydantic writes it ('0', not '0.0')
    elif kind == "literal_error" and "expected" in ctx:
        choices, _, last = str(ctx["expected"]).rpartition(" or ")
        params["expected"] = note("error.validation.one_of", choices=choices, last=last) if choices else last
    elif kind == "value_error":
        cause = ctx.get("error")
        params["error"] = cause.note if isinstance(cause, ToolError) else str(cause)
        if not err.get("loc"):  # a check of the whole input: no field to name
            kind = "value_error_input"
    if kind in _VALIDATION_TYPES:
        try:
            candidate = note(f"error.validation.{kind}", field=field, **params)
        except (KeyError, IndexError, ValueError):
            candidate = None
        if candidate is not None and candidate.text == english:
            return candidate
    return note("error.validation.other", field=field, detail=detail)
