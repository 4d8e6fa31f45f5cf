"""What a changed gate did to a recommendation: the changes said in words, for the line that says whether the
top pick stayed or moved ('with NVIDIA ruled out, the top pick stays …')."""

from __future__ import annotations

from typing import Any

from advisor.fmt import money, num
from knowledge import load_catalog
from knowledge.messages import msg
from knowledge.names import VENDORS

_BUDGET_ARGS = ("budget_usd", "budget_cny")
# the recommend arguments that gate which options qualify, each described by rec_diff.change.<name>
# (the chassis and region the planner infers are left out: the user did not change them)
GATES = ("vendors", "only_gpus", "exclude_gpus", "cuda_required", "domestic_only", "power_limit_w", "gpu_count",
         "min_tokens_per_s_per_user", "target_tokens_per_s")


# the workload itself: when it changed, the pick moved for that reason too and no gate is to thank
_WORKLOAD = ("workload", "model", "precision", "context", "concurrency", "method", "dataset_tokens", "code")


def changed(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether the budget or a gate, and nothing of the workload, differs between two recommend calls' arguments."""
    return any(before.get(k) != after.get(k) for k in (*_BUDGET_ARGS, *GATES)) \
        and all(before.get(k) == after.get(k) for k in _WORKLOAD)


def describe(before: dict[str, Any], after: dict[str, Any], budget: tuple[float, str] | None,
             lang: str) -> str:
    """The changes as one phrase ('the budget at $75,000 and NVIDIA ruled out'); a generic phrase for a change
    no message describes."""
    parts: list[str] = []
    if budget is not None and any(before.get(k) != after.get(k) for k in _BUDGET_ARGS):
        parts.append(msg(lang, "rec_diff.change.budget", budget=money(*budget)))
    for gate in GATES:
        old, new = before.get(gate), after.get(gate)
        if old == new:
            continue
        phrase = _gate_phrase(gate, old, new, lang)
        if phrase:
            parts.append(phrase)
    return msg(lang, "rec_diff.change.join").join(parts) if parts else msg(lang, "rec_diff.change.other")


def _gate_phrase(gate: str, old: Any, new: Any, lang: str) -> str | None:
    if gate == "vendors":
        was = set(old or VENDORS)
        now = set(new or VENDORS)
        gone = [v for v in VENDORS if v in was and v not in now]
        if gone and now != set(VENDORS):
            return msg(lang, "rec_diff.change.vendors_out", vendors="/".join(gone))
        return msg(lang, "rec_diff.change.vendors_only", vendors="/".join(v for v in VENDORS if v in now)) \
            if new else msg(lang, "rec_diff.change.vendors_any")
    if gate in ("only_gpus", "exclude_gpus"):
        names = [load_catalog().gpu(g).name for g in new or []]  # the cards by name, never their catalog ids
        return msg(lang, f"rec_diff.change.{gate}", gpus=", ".join(names)) if new else None
    if gate in ("cuda_required", "domestic_only"):
        return msg(lang, f"rec_diff.change.{gate}") if new else None
    if gate in ("power_limit_w",) and new:
        return msg(lang, "rec_diff.change.power_limit_w", watts=num(float(new), 0))
    if gate in ("min_tokens_per_s_per_user", "target_tokens_per_s") and new:
        return msg(lang, f"rec_diff.change.{gate}", tps=num(float(new), 1))
    if gate == "gpu_count" and new:
        return msg(lang, "rec_diff.change.gpu_count", count=new)
    return None
