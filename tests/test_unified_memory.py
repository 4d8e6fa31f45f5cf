"""Unified-memory systems (DGX Spark, Strix Halo): bought as a whole computer, memory shared with the OS.

Reasoning the tests hold the tools to:
- a DGX Spark has 128 GB of LPDDR5X at 273 GB/s shared by CPU and GPU; users keep vLLM's memory share at
  0.85–0.87 of it, about 119 GiB for the GPU. Strix Halo (Ryzen AI Max+ 395) gives the GPU about 108 GB
  under Linux, 256 GB/s (sources in knowledge/data/sources/reference.toml, S-SYS-*);
- decoding reads every weight once per token, so Llama-3.1-70B at Q4_K_M (about 42.5 GB of weights) cannot
  exceed 273 / 42.5 ≈ 6.4 tokens/s on a Spark; real kernels reach roughly 60–90 % of the bandwidth;
- the price of the box is the whole machine: no host is added, and a second box is a second machine.
"""

from __future__ import annotations

import pytest

from advisor.engine import Advisor
from knowledge import load_catalog
from tests.fakes.script import one, turn
from tools.compat import BuildInput, GPUCount, check_build
from tools.gpu_memory import engine_visible_bytes
from tools.modelspec import load_model_spec
from tools.perf import DecodeInput, estimate_decode
from tools.recommend import RecommendInput, recommend

GiB = 2**30


@pytest.mark.parametrize(("gpu", "assignable_gib"), [("dgx-spark", 119), ("strix-halo-128gb", 108)])
def test_the_gpu_sees_what_the_os_leaves_of_the_shared_memory(gpu: str, assignable_gib: int) -> None:
    visible, _ = engine_visible_bytes(load_catalog().gpu(gpu))
    assert visible == int(assignable_gib * GiB - GiB / 2)


def test_decode_on_a_spark_stays_under_the_bandwidth_bound() -> None:
    spark = load_catalog().gpu("dgx-spark")
    d = estimate_decode(DecodeInput(model=load_model_spec("llama-3.1-70b"), gpu=spark, precision="Q4_K_M"))
    ceiling = 273e9 / 42.5e9
    assert 0.6 * ceiling <= d.tokens_per_s <= ceiling


def test_a_system_is_priced_whole_and_never_doubled() -> None:
    rec = recommend(RecommendInput(workload="inference", model="llama-3.1-70b", precision="Q4_K_M",
                                   budget_usd=5000, region="global"))
    boxes = {o.gpu_id: o for o in rec.options if o.gpu_id in ("dgx-spark", "strix-halo-128gb")}
    assert set(boxes) == {"dgx-spark", "strix-halo-128gb"}
    assert boxes["dgx-spark"].total_price_usd == 4699 and boxes["strix-halo-128gb"].total_price_usd == 1999
    assert all(o.count == 1 and o.host_price_usd == 0 and o.wall_draw_w == load_catalog().gpu(o.gpu_id).tdp_w
               for o in boxes.values())


def test_two_systems_are_not_one_build() -> None:
    one_box = check_build(BuildInput(gpus=[GPUCount(gpu="DGX Spark", count=1)]))
    two = check_build(BuildInput(gpus=[GPUCount(gpu="DGX Spark", count=2)]))
    assert one_box.ok and not {f.category for f in one_box.findings} & {"power", "pcie", "physical", "cooling"}
    assert not two.ok and two.errors[0].id == "system-alone"


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize("text", ["Can a DGX Spark run Llama-3.1-70B at Q4_K_M?",
                                  "DGX Spark 能跑 Llama-3.1-70B Q4_K_M 吗？"])
def test_the_chat_sizes_a_spark_as_one_box(adv: Advisor, text: str) -> None:
    r = turn(adv, adv.new_session(), text)
    size = one(r, "size_inference")
    assert size.arguments["gpu"] == "dgx-spark" and size.result["fits"]
    assert "DGX Spark" in r.text
