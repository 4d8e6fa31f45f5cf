"""The configuration a follow-up is about: the cards this turn computed, else the ones a turn earlier computed
(a sizing, a build check, the recommendation's first option), else the card or hardware in the profile.

"What does that cost to run?", "how many of them fit a rack?", "is the power enough?" all mean the machine the
conversation has arrived at, not only a card the user typed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from advisor.session import MAX_SCHEME_GPUS, MAX_SCHEME_NODES, MAX_SCHEMES, Scheme, Session, ToolCall
from knowledge import load_catalog
from tools.scale_out import nodes_for


@dataclass(frozen=True)
class Config:
    """The configuration an ask is answered on: GPUs per node, nodes, and the model it runs."""

    gpu: str
    count: int
    nodes: int = 1
    model: str | None = None
    precision: str | None = None
    price_usd: float | None = None  # the whole machine as the recommender priced it (its host included)
    price_cny: float | None = None


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
                      precision=args.get("precision"), price_usd=top.get("total_price_usd"),
                      price_cny=top.get("total_price_cny"))
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
    counted = least_fitting_count(calls)
    if counted is not None:  # 'how many to run it?': the count that fits is the configuration talked about
        return counted
    earlier = [] if named else by_recency(session)
    for source, alts in ((list(calls), False), (earlier, False), (list(calls), True), (earlier, True)):
        for call in source:  # the plan's own calls first; an alternative's (the FP8 route …) only when none
            if call.alternative != alts or not call.ok:
                continue
            found = _from_call(call)
            if found is not None:
                if found.nodes > 1:
                    return found
                whole = call.name in _CONFIG_TOOLS  # sizings and times count every GPU; a build check one node's
                per_node = found.count // nodes if whole and nodes > 1 and found.count % nodes == 0 else found.count
                return Config(found.gpu, per_node, nodes, found.model, found.precision)
    if p.gpu:
        return Config(gpu=p.gpu, count=p.gpu_count or node_size(p.gpu), nodes=nodes, model=p.model,
                      precision=p.precision)
    if p.existing:
        return Config(gpu=p.existing[0].gpu, count=p.existing[0].count, nodes=nodes, model=p.model)
    pick = session.compare_pick
    if pick and pick in p.compare:  # 'power per node for the 8-GPU option?' after a comparison: the card it picked
        return Config(gpu=pick, count=p.gpu_count or p.compare_counts.get(pick) or node_size(pick), nodes=nodes,
                      model=p.model)
    return None


def node_size(gpu: str) -> int:
    """The cards a node of ``gpu`` holds when no count is said: a baseboard's (SXM, OAM, a module: 8 in an HGX,
    OAM or Atlas server; 'an H100 SXM server' is eight of them), else one card."""
    card = load_catalog().gpu(gpu)
    if card.on_baseboard and card.interconnect.max_gpus:
        return int(card.interconnect.max_gpus)
    return 1


def by_recency(session: Session) -> list[ToolCall]:
    """The session's kept results, the latest turn's first (each turn's in the order it ran them): the
    configuration a follow-up means is the one the conversation arrived at last, not an older comparison's."""
    order: dict[str, tuple[int, int]] = {}
    assistant = [t for t in reversed(session.history) if t.role == "assistant"]
    for age, turn in enumerate(assistant):
        for position, call in enumerate(turn.tool_calls):
            order.setdefault(call.call_id, (age, position))
    last = (len(assistant), 0)
    return sorted(session.last_results.values(), key=lambda c: order.get(c.call_id, last))


def remember_scheme(session: Session, calls: Iterable[ToolCall]) -> None:
    """This turn's configuration (its own calls only) into the session's list of schemes, when it is new."""
    first = next(((call, c) for call, c in ((call, _from_call(call)) for call in calls
                                            if call.ok and not call.alternative) if c is not None), None)
    if first is None:
        return
    call, found = first
    nodes = found.nodes if found.nodes > 1 else (session.profile.nodes or 1)
    whole = call.name in _CONFIG_TOOLS  # sizings and times count every GPU; a build check one node's
    count = found.count // nodes if whole and found.nodes == 1 and nodes > 1 and found.count % nodes == 0 \
        else found.count
    if not (1 <= count <= MAX_SCHEME_GPUS and nodes <= MAX_SCHEME_NODES):
        return  # past what one plan sizes: nothing to come back to
    _push_scheme(session, Scheme(gpu=found.gpu, count=count, nodes=nodes, model=found.model,
                                 precision=found.precision))


def _push_scheme(session: Session, scheme: Scheme) -> None:
    """``scheme`` as the latest of the session's schemes, an earlier one of the same cards replaced."""
    same = [s for s in session.schemes if (s.gpu, s.count, s.nodes) == (scheme.gpu, scheme.count, scheme.nodes)]
    session.schemes = [*[s for s in session.schemes if s not in same][-(MAX_SCHEMES - 1):], scheme]


def remember_count(session: Session, gpu: str, total: int) -> None:
    """A count an answer worked out for one card of several ('H100：128 张能在 61 天内训完'), as a scheme a later
    message naming that card alone comes back to."""
    nodes = nodes_for(total)
    if total % nodes or total // nodes > MAX_SCHEME_GPUS or nodes > MAX_SCHEME_NODES:
        return
    _push_scheme(session, Scheme(gpu=gpu, count=total // nodes, nodes=nodes))


def both_schemes(session: Session) -> list[Config]:
    """The last two different configurations computed: what 'both options' / '两个方案' mean."""
    return [Config(gpu=s.gpu, count=s.count, nodes=s.nodes, model=s.model, precision=s.precision)
            for s in session.schemes[-2:]] if len(session.schemes) >= 2 else []


def least_fitting_count(calls: Iterable[ToolCall]) -> Config | None:
    """When this turn's sizing does not fit the cards named but a larger count tried for 'how many?' does, that
    least count (as per-node count and nodes), else None."""
    calls = list(calls)
    main = next((c for c in calls if c.ok and c.name in ("size_inference", "size_training")
                 and not c.alternative), None)
    if main is None or (main.result or {}).get("fits") is not False:
        return None
    fitting = [c for c in calls if c.ok and c.name == main.name and c.alternative
               and (c.result or {}).get("fits") and _same_but_count(c.arguments, main.arguments)
               and _tried_count(int(c.arguments.get("gpus") or 1))]
    if not fitting:
        return None
    best = min(fitting, key=lambda c: int(c.arguments.get("gpus") or 1))
    total = int(best.arguments.get("gpus") or 1)
    nodes = nodes_for(total)
    return Config(gpu=best.arguments["gpu"], count=total // nodes, nodes=nodes, model=best.arguments.get("model"),
                  precision=best.arguments.get("precision"))


_COUNT_ARGS = {"gpus", "pipeline_stages", "parallel"}


def _same_but_count(a: dict[str, object], b: dict[str, object]) -> bool:
    """Two sizings of the same request that differ only in how many GPUs (a 'how many?' trial)."""
    keys = (set(a) | set(b)) - _COUNT_ARGS
    return a.get("gpus") != b.get("gpus") and all(a.get(k) == b.get(k) for k in keys)


def _tried_count(n: int) -> bool:
    """A count 'how many?' tries (1, 2, 4, 8 or whole nodes of 8), not the 'one more GPU' alternative."""
    return n & (n - 1) == 0 or n % 8 == 0
