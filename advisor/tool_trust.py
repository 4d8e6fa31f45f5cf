"""Whether a tool call a language model makes computes the plan's own setup.

A model may call the turn's tools with settings of its own — by mistake, or because a message told it to. Such a
call's result describes another setup (another model, card, count, precision, context …): it is shown as the model's
own call and never replaces the plan's results, feeds the export or the side panel, or grounds the turn's
explanation. A call matches the plan when every setting it fixes, and the core ones it leaves to their defaults,
equal the plan's: those of the planner's call of the same tool when there is one, else those the plan's calls used.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticUndefined

from knowledge import AmbiguousNameError, load_catalog

OWN_CALL_PREFIX = "own_"  # call ids of a model's calls for a setup other than the plan's
# one setting under the names different tools give it
_SAME_KEY = {"gpus": "count", "seq": "context", "concurrency": "batch"}
_NAMED = {"gpu_info": "gpu", "model_info": "model"}  # a lookup's 'name' is the card or the model
# compared whether said or not: what decides a sizing, a speed or a ranking
_CORE = ("model", "params_b", "gpu", "count", "precision", "context", "batch", "method", "workload")
# tools whose precision left unsaid means the model's own (its files' or its native dtype)
_NATIVE_PRECISION = frozenset({"size_inference", "perf_decode", "perf_prefill", "perf_serving", "recommend"})
_UNSET = object()


def is_own(call: Any) -> bool:
    """A model's call for a setup other than the plan's."""
    return str(getattr(call, "call_id", "")).startswith(OWN_CALL_PREFIX)


def _catalog_id(kind: str, value: Any) -> Any:
    try:
        cat = load_catalog()
        return (cat.gpu(value) if kind == "gpu" else cat.model(value)).id
    except (LookupError, AmbiguousNameError, TypeError):
        return str(value).strip().lower()


def _norm(key: str, value: Any) -> Any:
    """One setting in a comparable form: catalog ids, lower-case words, floats."""
    if value is None:
        return None
    if key in ("gpu", "model"):
        return _catalog_id(key, value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return value.strip().lower()
    return json.dumps(value, sort_keys=True, default=str)


def _key(tool: str, field: str) -> str:
    return _NAMED.get(tool, field) if field == "name" else _SAME_KEY.get(field, field)


def setup(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The settings ``arguments`` state, under one name per setting, normalised (a build's list of cards is read
    by ``_plan_settings``). A checkpoint name states its precision: 'GLM-5-FP8' is model glm-5 at fp8."""
    out = {_key(tool, k): _norm(_key(tool, k), v) for k, v in arguments.items()
           if v is not None and not (k == "gpus" and isinstance(v, list))}
    if "precision" not in out and (precision := _checkpoint(arguments.get("model"))) is not None:
        out["precision"] = precision
    return out


def _checkpoint(name: Any) -> Any:
    """The weight precision a checkpoint name states (tools.modelspec.checkpoint_precision), normalised; None for
    a plain model name or anything else."""
    from tools.modelspec import checkpoint_precision  # heavy-ish; only for a model named in a call

    if not isinstance(name, str):
        return None
    try:
        precision = checkpoint_precision(name, load_catalog().model(name))
    except (LookupError, AmbiguousNameError):
        return None
    return _norm("precision", precision)


def _native(settings: dict[str, Any]) -> Any:
    from tools.modelspec import ModelSpec  # heavy-ish; only when a precision was left unsaid

    try:
        spec = (ModelSpec.from_catalog(settings["model"]) if settings.get("model")
                else ModelSpec.custom(float(settings.get("params_b") or 0) or 1.0))
    except (LookupError, ValueError, TypeError):
        return None
    return _norm("precision", spec.weight_precision or spec.native_dtype)


def _default(tool: str, key: str, settings: dict[str, Any]) -> Any:
    """What ``tool`` uses for ``key`` when it is not said (``_UNSET`` when the tool requires it or has no such
    setting)."""
    from advisor.toolspec import TOOLS  # the registry imports every tool

    if key == "precision" and tool in _NATIVE_PRECISION:
        return _native(settings)
    for field, info in TOOLS[tool].input_model.model_fields.items():
        if _key(tool, field) == key:
            default = info.get_default(call_default_factory=True)
            return _UNSET if default is PydanticUndefined else _norm(key, default)
    return _UNSET


def _has(tool: str, key: str) -> bool:
    from advisor.toolspec import TOOLS

    return any(_key(tool, f) == key for f in TOOLS[tool].input_model.model_fields)


def _effective(tool: str, settings: dict[str, Any], key: str) -> Any:
    return settings[key] if key in settings else _default(tool, key, settings)


def _plan_settings(planned: list[Any]) -> dict[str, Any]:
    """The settings the plan's calls used (the first call that states one decides it)."""
    out: dict[str, Any] = {}
    for call in planned:
        for key, value in setup(call.name, call.arguments).items():
            out.setdefault(key, value)
        for item in call.arguments.get("gpus") if isinstance(call.arguments.get("gpus"), list) else []:
            if isinstance(item, dict) and len(call.arguments["gpus"]) == 1:  # check_build: one kind of card
                out.setdefault("gpu", _norm("gpu", item.get("gpu")))
                out.setdefault("count", _norm("count", item.get("count")))
    return out


def _agrees(tool: str, mine: dict[str, Any], plan: dict[str, Any], key: str) -> bool:
    """The model's value of ``key`` (said or default) is the plan's; where the plan has none, the tool's default."""
    if key in plan:
        return bool(_effective(tool, mine, key) == plan[key])
    default = _default(tool, key, mine)
    return default is not _UNSET and _effective(tool, mine, key) == default


def matches_plan(tool: str, arguments: dict[str, Any], planned: list[Any]) -> bool:
    """Whether a model's call of ``tool`` with ``arguments`` computes the setup of the plan's calls ``planned``."""
    mine = setup(tool, arguments)
    keys = set(mine) | {k for k in _CORE if _has(tool, k)}
    same = [setup(tool, c.arguments) for c in planned if c.name == tool]
    if same:
        return any(all(_effective(tool, mine, k) == _effective(tool, theirs, k) for k in keys | set(theirs))
                   for theirs in same)
    plan = _plan_settings(planned)
    if "precision" not in plan and (plan.get("model") or plan.get("params_b")):
        plan["precision"] = _native(plan)
    return all(_agrees(tool, mine, plan, k) for k in keys)


def _show(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def differences(tool: str, arguments: dict[str, Any], planned: list[Any]) -> str:
    """The settings of a model's call that differ from the plan's ('gpu rtx-4090 → h100-sxm'), for the notice."""
    mine = setup(tool, arguments)
    same = [c for c in planned if c.name == tool]
    plan = setup(tool, same[0].arguments) if same else _plan_settings(planned)
    changed = []
    for key in dict.fromkeys(k for k in (*mine, *_CORE) if k in plan and _has(tool, k)):
        value = _effective(tool, mine, key)
        if value is not _UNSET and value != plan[key]:
            changed.append(f"{key} {_show(plan[key])} → {_show(value)}")
    return ", ".join(changed[:4])
