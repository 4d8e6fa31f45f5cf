"""'How many fit in one box?': the most cards of one kind a single machine takes, by the build check at each count
(slots and cooling decide; a PSU is bought to suit), and what that machine draws."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.compose import gpu_name
from advisor.fmt import num
from advisor.planner import PlannedCall, chassis_for
from advisor.session import ToolCall
from knowledge import load_catalog
from knowledge.messages import msg
from tools.scale_out import NODE_GPUS

if TYPE_CHECKING:
    from advisor.asks import AskContext

# the build check's findings that no part bought separately fixes: the cards do not go in, or cannot be cooled there
_BLOCKING = ("physical", "cooling")


def box_card(c: AskContext) -> str | None:
    """The card asked about: the one this message names last, else the configuration's."""
    return c.named[-1] if c.named else c.config.gpu if c.config is not None else None


def box_needed(c: AskContext) -> bool:
    return "box_count" in c.asks and box_card(c) is not None


def box_calls(c: AskContext) -> list[PlannedCall]:
    """The build check of one machine at each count up to a server's eight, in the chassis the buyer implies (a
    tower for cards with fans, a rack server for passive ones)."""
    gpu = box_card(c)
    assert gpu is not None
    chassis = chassis_for(c.session.profile, gpu)
    return [PlannedCall(name="check_build", purpose="check", arguments={
        "gpus": [{"gpu": gpu, "count": n}], "chassis": chassis}) for n in range(1, NODE_GPUS + 1)]


def say_box(c: AskContext, done: list[ToolCall]) -> str | None:
    gpu = box_card(c)
    checks = sorted((x for x in done if x.name == "check_build" and x.ok and x.result
                     and x.arguments["gpus"][0]["gpu"] == gpu), key=lambda x: x.arguments["gpus"][0]["count"])
    if gpu is None or not checks:
        return None
    chassis = checks[0].arguments["chassis"]
    fitting = [x for x in checks if not any(f["severity"] == "error" and f["category"] in _BLOCKING
                                            for f in (x.result or {}).get("findings", []))]
    where = msg(c.lang, f"asks.box.{chassis}")
    if not fitting:
        return msg(c.lang, "asks.box_none", gpu=gpu_name(gpu), where=where)
    best = fitting[-1]
    n = best.arguments["gpus"][0]["count"]
    totals = (best.result or {})["totals"]
    key = "asks.box_server" if chassis == "rack" and n == NODE_GPUS else "asks.box_count"
    return msg(c.lang, key, n=n, gpu=gpu_name(gpu), where=where, watts=num(totals["system_power_w"], 0),
               wall=num(totals["wall_draw_w"], 0), psu=num(totals["recommended_psu_w"], 0),
               each=num(load_catalog().gpu(gpu).tdp_w, 0))
