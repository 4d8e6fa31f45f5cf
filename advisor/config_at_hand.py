"""The configuration a follow-up is about: the cards this turn computed, else the ones a turn earlier computed
(a sizing, a build check, the recommendation's first option), else the card or hardware in the profile.

"What does that cost to run?", "how many of them fit a rack?", "is the power enough?" all mean the machine the
conversation has arrived at, not only a card the user typed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from advisor.session import Session, ToolCall
from tools.recommend import nodes_for


@dataclass(frozen=True)
class Config:
    """The configuration an ask is answered on: GPUs per node, nodes, and the model it runs."""

    gpu: str
    count: int
    nodes: int = 1
    model: str | None = None
    precision: str | None = None


_CONFIG_TOOLS = {"perf_decode": "count", "size_inference": "gpus", "size_training": "gpus", "training_time": "count"}


def _from_call(call: ToolCall) -> Config | None:
    args = call.arguments
    if call.name in _CONFIG_TOOLS and args.get("gpu"):
        return Config(gpu=args["gpu"], count=int(args.get(_CONFIG_TOOLS[call.name]) or 1), model=args.get("model"),
                      precision=args.get("precision"))
    if call.name == "check_build" and args.get("gpus"):
        first = args["gpus"][0]
        return Config(gpu=first["gpu"], count=int(first.get("count", 1)), model=args.get("model"))
    if call.name == "recommend" and call.ok and (call.result or {}).get("options"):
        top = call.result["options"][0]  # type: ignore[index]
        nodes = int(top.get("nodes", 1))
        return Config(gpu=top["gpu_id"], count=int(top["count"]) // nodes, nodes=nodes, model=args.get("model"),
                      precision=args.get("precision"))
    if call.name == "affordable" and call.ok and len(args.get("only_gpus") or []) == 1 \
            and (call.result or {}).get("options"):  # what a budget buys of one card named: that many of it
        top = call.result["options"][0]  # type: ignore[index]
        count = int(top["count"])
        nodes = nodes_for(count)
        return Config(gpu=top["gpu"], count=count // nodes, nodes=nodes)
    return None


def current_config(session: Session, calls: Iterable[ToolCall], named: bool = False) -> Config | None:
    """This turn's configuration, else (unless this message ``named`` a card, which the profile now holds) the
    one computed a turn earlier, else the profile's card."""
    p = session.profile
    nodes = p.nodes or 1
    earlier = [] if named else list(session.last_results.values())
    for source, alts in ((list(calls), False), (earlier, False), (list(calls), True), (earlier, True)):
        for call in source:  # the plan's own calls first; an alternative's (the FP8 route …) only when none
            if call.call_id.startswith("alt_") != alts or not call.ok:
                continue
            found = _from_call(call)
            if found is not None:
                if found.nodes > 1:
                    return found
                whole = call.name in _CONFIG_TOOLS  # sizings and times count every GPU; a build check one node's
                per_node = found.count // nodes if whole and nodes > 1 and found.count % nodes == 0 else found.count
                return Config(found.gpu, per_node, nodes, found.model, found.precision)
    if p.gpu:
        return Config(gpu=p.gpu, count=p.gpu_count or 1, nodes=nodes, model=p.model, precision=p.precision)
    if p.existing:
        return Config(gpu=p.existing[0].gpu, count=p.existing[0].count, nodes=nodes, model=p.model)
    return None


