"""The profile panel: the editable fields of what the user told us, their edits, and a one-line summary."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from advisor import fmt
from advisor.present import gpu_name, model_name
from advisor.ui.i18n import label, t
from advisor.ui.render import _get, safe_markdown

PROFILE_FIELDS = (
    "use_case",
    "model",
    "params_b",
    "precision",
    "context_tokens",
    "concurrency",
    "method",
    "gpu",
    "gpu_count",
)


def profile_values(profile: Any) -> dict[str, Any]:
    """The editable profile fields as plain values (None when unknown) for the side-panel inputs."""
    out: dict[str, Any] = {}
    for key in PROFILE_FIELDS:
        value = _get(profile, key) if profile is not None else None
        out[key] = getattr(value, "value", value)
    return out


# where each field's value is read from the sizing the last reply used, when the user left the field open
_USED = {"size_inference": {"model": "model", "precision": "precision", "context_tokens": "context",
                            "concurrency": "batch", "gpu": "gpu", "gpu_count": "gpus"},
         "size_training": {"model": "model", "method": "method", "gpu": "gpu", "gpu_count": "gpus"}}


def used_values(profile: Any, results: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The fields as the tools used them: what the user said, and where they said nothing, the value the last
    reply's sizing assumed. Returns the values and the names of the assumed ones."""
    values = profile_values(profile)
    assumed: set[str] = set()
    for tool, fields in _USED.items():
        call = results.get(tool)
        result = _get(call, "result") if call is not None and _get(call, "ok", True) else None
        if not isinstance(result, Mapping):
            continue
        for key, source in fields.items():
            if key == "gpu_count" and not result.get("gpu"):
                continue  # a sizing with no card named is not a count of cards
            used = result.get(source)
            if key == "model" and isinstance(used, str):
                used = _model_id(used)
            if values[key] is None and used not in (None, "", 0):
                values[key] = getattr(used, "value", used)
                assumed.add(key)
    return values, assumed


def _model_id(name: str) -> str:
    """A catalog model's id from any of its names (the panel's list holds ids); else the name as given."""
    from knowledge import load_catalog

    found = load_catalog().model_resolver.find(name)
    return found.id if found is not None else name


def profile_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """Fields the user edited in the panel: {field: new value}, blanks meaning "not set"."""
    changes: dict[str, Any] = {}
    for key in PROFILE_FIELDS:
        new = _blank_to_none(after.get(key))
        old = _blank_to_none(before.get(key))
        if isinstance(new, float) and key in ("context_tokens", "concurrency", "gpu_count") and math.isfinite(new) \
                and new.is_integer():
            new = int(new)  # anything else (1e400, 2.5) stays as typed and is refused with a message
        if new != old:
            changes[key] = new
    return changes


def _blank_to_none(value: Any) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, float) and value != value:  # NaN from an emptied number box
        return None
    return value


def field_text(key: str, value: Any, lang: str) -> str:
    """A profile field's value as users read it: labels for use case and method, names for catalog ids,
    grouped digits for numbers."""
    if value is None:
        return t("unset", lang)
    if key == "use_case":
        return label("use_case", value, lang)
    if key == "method":
        return label("method", value, lang)
    if key in ("gpu", "model"):
        return gpu_name(value) if key == "gpu" else model_name(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fmt.num(value)
    return str(value)


def profile_markdown(profile: Any, lang: str, results: Mapping[str, Any] | None = None) -> str:
    """A compact read-only summary of everything known so far (budget, constraints included); values the last
    reply assumed (``results``: its calls) are marked as assumed."""
    if profile is None:
        return ""
    rows: list[str] = []
    vals, assumed = used_values(profile, results or {})
    for key in PROFILE_FIELDS:
        if vals[key] is None:
            continue
        mark = f" {t('assumed_mark', lang)}" if key in assumed else ""
        rows.append(f"{t(key, lang)}: **{safe_markdown(field_text(key, vals[key], lang))}**{mark}")
    budget = _get(profile, "budget")
    if budget is not None:
        amount = _get(budget, "amount")
        currency = str(getattr(_get(budget, "currency"), "value", _get(budget, "currency")) or "USD")
        rows.append(f"{t('budget', lang)}: **{fmt.money(amount, currency)}**")
    return " · ".join(rows)


def budget_currency(profile: Any) -> str | None:
    """The currency of the session's budget, when it has one."""
    budget = _get(profile, "budget") if profile is not None else None
    cur = _get(budget, "currency") if budget is not None else None
    cur = getattr(cur, "value", cur)
    return str(cur) if cur else None
