"""The classes blind batch ap found, each fixed by mechanism (issue 35)."""

from __future__ import annotations

import pytest
from fakes.script import talk

from advisor.engine import Advisor
from advisor.nlu import parse


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_a_count_of_machines_is_not_their_cards(adv: Advisor) -> None:
    """'这4台4090机器' counts four machines: each keeps the eight cards the turn before gave its servers (ap pz08 t3
    had them as four 4-card nodes, 16 ports instead of 32)."""
    said = parse("这4台4090机器要一起训练，中间用什么网络？")
    assert said.nodes == 4 and not said.gpus[0].stated  # how many cards each machine holds is not said here
    session, _ = talk(adv, "准备上4台8卡H800服务器，每个机柜供电12kW，每柜能放几台？",
                      "那要是换成8卡4090的服务器呢？同样12kW一柜",
                      "这4台4090机器要一起训练，中间用什么网络？")
    assert (session.profile.gpu, session.profile.gpu_count, session.profile.nodes) == ("rtx-4090", 8, 4)
    assert parse("2台4卡4090工作站够不够跑70B").gpus[0].count == 4  # a count per machine said is kept
