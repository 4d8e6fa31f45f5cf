"""Optional: a configured LLM reads every message into the same typed understanding as the rules.

The model is asked with a JSON schema its output must follow (llama.cpp turns the schema into a grammar;
OpenAI-compatible servers take it as ``response_format``), and the two readings are reconciled field by field:
a field the rules left empty takes the model's value when the message writes it; where both read a value and
they differ, the rules' value (read from its span in the message) stands and the disagreement is said back.
What the model returns is trusted no further than the rules would be:

- a name counts only if it is copied from the message and the catalog knows it, a use only with the words
  that show it (copied too); precision and method are left to the rules (a model that invents them cannot
  be caught);
- a number counts only if the message writes it (digits, 万/k, Chinese or English numerals);
- the values are written out as a plain statement and read by the same parser, so units, catalog ids and
  the answer kind come from the rules, and only fields the parser left empty are filled.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from advisor import prompt_fit
from advisor.backends.base import Backend, BackendError
from advisor.nlu.rules import Parsed, parse
from advisor.numbers import find_amounts

# the fields a small model can fill reliably; 0 / "" / "unknown" = not said
FILL_FIELDS = ("use_case", "use_case_words", "model", "gpu", "gpu_count", "budget", "currency", "context_tokens",
               "users")
FILLED_SLOTS = ("use_case", "model", "gpus", "gpu_count", "budget", "context_tokens", "concurrency")


class Understanding(BaseModel):
    """What the model read from one message (the JSON schema it must follow)."""

    use_case: Literal["training", "inference", "scientific", "unknown"] = Field(
        "unknown", description="training or fine-tuning, running a model (inference), or scientific computing")
    use_case_words: str = Field("", max_length=40, description="the words of the message that show the use, copied")
    model: str = Field("", max_length=80, description="the AI model named, copied exactly from the message")
    gpu: str = Field("", max_length=80, description="the GPU named, copied exactly from the message")
    gpu_count: int = Field(0, ge=0, le=1024, description="how many GPUs, if the message says")
    budget: float = Field(0, ge=0, le=1e12, description="the budget amount, if the message says")
    currency: Literal["CNY", "USD", "unknown"] = "unknown"
    context_tokens: int = Field(0, ge=0, le=10_000_000, description="context length in tokens, if the message says")
    users: int = Field(0, ge=0, le=100_000, description="concurrent users or requests, if the message says")


def _plain_schema() -> dict[str, Any]:
    """The JSON schema of ``Understanding`` in the subset every backend constrains by: types, enums and
    descriptions, every field required, nothing else allowed."""
    full = Understanding.model_json_schema()
    props = {name: {k: v for k, v in spec.items() if k in ("type", "enum", "description")}
             for name, spec in full["properties"].items()}
    return {"type": "object", "properties": props, "required": list(FILL_FIELDS), "additionalProperties": False}


SCHEMA: dict[str, Any] = _plain_schema()
INSTRUCTIONS = (
    "Read the user's message about GPUs and AI and fill in the JSON fields. Copy model and GPU names exactly as "
    "written. Use 0, \"\" or \"unknown\" for anything the message does not say. Never guess a number.")
MAX_CHARS = 1_000  # of the message sent to the model
READING_TOKENS = 700  # the reply limit a reading gets where the context allows (a full reading is far shorter)


def wants_reading(parsed: Parsed) -> bool:
    """Every message with words in it is read by the model too (a bare 'ok' or 'yes' is not)."""
    return len(parsed.text.strip()) >= 6


def unplaced(parsed: Parsed) -> bool:
    """The rules did not recognise this message: its kind came from the nearest example or the default."""
    return parsed.kind_by in ("examples", "default")


def _written(value: float, text: str) -> bool:
    """``value`` is a number the message writes ('32k' also reads as 32,768 tokens)."""
    for a in find_amounts(text):
        candidates = {a.value, a.low} | ({a.value * 1.024} if re.search(r"[kK]\s*$", a.text) else set())
        if any(c is not None and abs(c - value) <= 1e-9 * max(1.0, value) for c in candidates):
            return True
    return False


def _copied(name: str, text: str) -> bool:
    """``name`` is written in the message (spaces, dashes and case aside)."""
    squash = re.compile(r"[\s\-_]+")
    return len(name.strip()) >= 2 and squash.sub("", name.lower()) in squash.sub("", text.lower())


def statement(u: Understanding, text: str) -> str:
    """The values the message really contains, as a plain statement the parser reads."""
    parts: list[str] = []
    if u.use_case != "unknown" and len(u.use_case_words.strip()) >= 2 and _copied(u.use_case_words, text):
        parts.append("scientific computing" if u.use_case == "scientific" else u.use_case)
    if u.model and _copied(u.model, text):
        parts.append(f"model: {u.model}")
    count = u.gpu_count if u.gpu_count and _written(u.gpu_count, text) else 0
    if u.gpu and _copied(u.gpu, text):
        parts.append(f"GPU: {count or 1} × {u.gpu}")
    elif count:
        parts.append(f"{count} GPUs")
    if u.budget and u.currency != "unknown" and _written(u.budget, text):
        parts.append(f"budget: {u.budget:.0f} {u.currency}")
    if u.context_tokens and _written(u.context_tokens, text):
        parts.append(f"context {u.context_tokens} tokens")
    if u.users and _written(u.users, text):
        parts.append(f"{u.users} users at once")
    return "; ".join(parts)


def read_with_llm(backend: Backend, parsed: Parsed, deadline: float) -> Understanding | None:
    """The model's reading of ``parsed.text`` under the schema, or None when it gives none that validates."""
    messages = [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": parsed.text[:MAX_CHARS]}]
    room = prompt_fit.measure(backend, messages, None, READING_TOKENS)
    if not room.fits:  # a context too small for the reading: the rules' reading stands alone
        return None
    try:
        response = backend.complete(messages, None, deadline, json_schema=SCHEMA, max_tokens=room.reply_tokens)
        data = json.loads(response.content)
    except (BackendError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or response.finish_reason == "length":
        return None
    try:
        return Understanding.model_validate(data)
    except ValidationError as exc:  # a field out of range ('users': 10^15) is dropped, the rest still counts
        bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
        try:
            return Understanding.model_validate({k: v for k, v in data.items() if k not in bad})
        except ValidationError:
            return None


def _shown(slot: str, value: Any) -> str:
    if slot == "gpus":
        return ", ".join(f"{g.count}× {g.gpu}" for g in value)
    if slot == "budget":
        return f"{value.amount:,.0f} {value.currency}"
    return f"{value:,}" if isinstance(value, int | float) else str(value)


def disagreements(parsed: Parsed, understanding: Understanding, context: bool) -> list[tuple[str, str, str]]:
    """(slot, the rules' value, the model's value) where both read a value the message writes and they differ:
    the rules' value stands, and the difference is said back."""
    said = statement(understanding, parsed.text)
    if not said:
        return []
    extra = parse(said, context=context)
    out = []
    for name in FILLED_SLOTS:
        mine, theirs = getattr(parsed, name), getattr(extra, name)
        if mine in (None, []) or theirs in (None, []):
            continue
        if name == "gpus":
            mine_set, theirs_set = {(g.gpu, g.count) for g in mine}, {(g.gpu, g.count) for g in theirs}
            if mine_set == theirs_set:
                continue
        elif mine == theirs:
            continue
        out.append((name, _shown(name, mine), _shown(name, theirs)))
    return out


def fill(parsed: Parsed, understanding: Understanding, context: bool) -> tuple[Parsed, list[str]]:
    """``parsed`` with the fields it left empty taken from what the model read (and the message writes); the
    names of the fields filled. The answer kind is re-read when neither rules nor examples had decided it."""
    said = statement(understanding, parsed.text)
    if not said:
        return parsed, []
    extra = parse(said, context=context)
    out = parsed.model_copy(deep=True)
    filled = []
    for name in FILLED_SLOTS:
        value = getattr(extra, name)
        if value not in (None, []) and getattr(out, name) in (None, []):
            setattr(out, name, value)
            filled.append(name)
    if filled and parsed.kind_by == "default" and extra.kind_by == "rules":
        out.kind, out.kind_by = extra.kind, "llm"
    return out, filled
