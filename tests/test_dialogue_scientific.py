"""Scientific-computing path: FP64 and problem size first, FP64 (never FP16) figures in the answer."""

from __future__ import annotations

import pytest

from advisor import Advisor
from knowledge import load_catalog

try:
    from fakes.script import assert_grounded, calls, gb, one, recompute, turn
except ImportError:  # tests/ collected as a package
    from tests.fakes.script import assert_grounded, calls, gb, one, recompute, turn


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_chinese_scientific_script(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "主要用于科学计算")
    assert r.mode == "ask" and s.profile.use_case == "scientific"
    assert "FP64" in r.question and "内存" in r.question
    assert "模型" not in r.question  # model / precision questions belong to the AI paths

    r = turn(adv, s, "需要双精度，问题规模大约 200GB")
    rec = one(r, "recommend")
    assert rec.arguments["workload"] == "scientific" and rec.arguments["fp64_required"] is True
    assert rec.arguments["problem_bytes"] == 200_000_000_000
    result = recompute(rec)
    assert result["options"], "some datacenter configuration holds a 200 GB FP64 problem"
    top = result["options"][0]
    fp64 = top["fp64_tflops"]
    assert top["gpu"] in r.text
    assert f"FP64 {fp64:,.0f} TFLOPS" in r.text or f"FP64 {fp64:,.1f} TFLOPS" in r.text
    assert "预算" in r.question
    assert_grounded(r, s)

    r = turn(adv, s, "预算 50 万")
    rec = one(r, "recommend")
    assert rec.arguments["budget_cny"] == 500_000
    assert_grounded(r, s)


def test_english_fp64_on_a_consumer_card_is_flagged(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "We run CFD simulations in double precision, about 20 GB per job. Is an RTX 4090 OK?")
    assert r.lang == "en" and s.profile.fp64 is True and s.profile.problem_size_gb == 20
    info = one(r, "gpu_info")
    g = load_catalog().gpu("RTX 4090")
    assert info.result["throughput"]["fp64"] == g.throughput.fp64
    # the datasheet ratio: FP64 is a small fraction of FP32 on GeForce
    assert g.throughput.fp64 < g.throughput.fp32 / 8
    assert f"FP64 {g.throughput.fp64:.1f} TFLOPS" in r.text and "double-precision codes run slowly" in r.text
    sci = one(r, "scientific_fp64")
    fresh = recompute(sci)
    assert fresh["memory_bytes"] == 20_000_000_000  # 20 GB as stated, in bytes
    assert gb(fresh["memory_bytes"]) in r.text
    assert calls(r, "check_build")
    assert_grounded(r, s)


def test_scientific_does_not_ask_for_a_model(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "molecular dynamics with GROMACS, single precision is enough, 10 GB, budget $20k")
    assert s.profile.use_case == "scientific" and s.profile.fp64 is False
    rec = one(r, "recommend")
    assert rec.arguments["fp64_required"] is False and rec.arguments["budget_usd"] == 20_000
    assert "model" not in (r.question or "").lower()
