"""Grounding check: planted wrong numbers and unit slips fail, correct paraphrases pass."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel

from advisor.grounding import (
    card_counts,
    check,
    evidence_from,
    extract,
    mask_identifiers,
    repair,
    verdict_conflict,
)
from advisor.toolspec import run_tool
from tools.units import Unit

GB, GiB, MB, MiB = 1e9, 2**30, 1e6, 2**20

SIZE_ARGS = {"model": "llama-3.1-8b", "precision": "fp16", "context": 8192, "batch": 10, "gpus": 1,
             "gpu": "RTX 4090"}
PERF_ARGS = {"model": "llama-3.1-8b", "gpu": "RTX 4090", "precision": "int4", "context": 8192}
TIME_ARGS = {"model": "llama-3.1-8b", "tokens": 1e9, "gpu": "H100", "count": 8}
PASSAGE = "A typical LLaMA 70B model needs about 140GB of VRAM in FP16; even 4-bit needs about 35GB."


@pytest.fixture(scope="module")
def results() -> dict:
    out = {}
    for name, args in (("size_inference", SIZE_ARGS), ("perf_decode", PERF_ARGS), ("training_time", TIME_ARGS)):
        call = run_tool(name, args)
        assert call.ok, call.error
        out[name] = call
    return out


@pytest.fixture(scope="module")
def evidence(results):
    items = []
    for c in results.values():
        items += [c.result, c.arguments]
    items.append({"budget": {"amount": 100_000, "currency": "CNY"}, "budget_cny": 100_000})
    return evidence_from(items, texts=[PASSAGE])


def _paraphrases(b: float) -> list[str]:
    return [f"{b / GB:.1f} GB", f"{b / GiB:.1f} GiB", f"{b / MB:,.0f} MB", f"{b / MiB:,.0f} MiB",
            f"{b / GB:.2f}GB", f"约 {b / GB:.1f} GB 显存"]


def test_correct_paraphrases_in_any_unit_pass(results, evidence) -> None:
    r = results["size_inference"].result
    for b in (r["per_gpu_bytes"], r["breakdown"]["weights"], r["breakdown"]["kv_cache"]):
        for text in _paraphrases(b):
            report = check(f"It needs {text} per GPU.", evidence)
            assert report.ok, (text, report.bad_numbers)


def test_gib_number_labelled_gb_is_caught(results, evidence) -> None:
    b = results["size_inference"].result["per_gpu_bytes"]
    slip = f"It needs {b / GiB:.1f} GB per GPU."  # 7.4 % too low: the GiB figure with a GB label
    report = check(slip, evidence)
    assert not report.ok and report.bad_numbers == [f"{b / GiB:.1f} GB"]
    other_way = f"It needs {b / GB:.1f} GiB per GPU."
    assert not check(other_way, evidence).ok


@pytest.mark.parametrize("factor", [0.5, 0.85, 1.15, 1.3, 2.0])
def test_planted_wrong_memory_figures_fail(results, evidence, factor: float) -> None:
    b = results["size_inference"].result["per_gpu_bytes"] * factor
    assert not check(f"每卡需要 {b / GB:.1f} GB。", evidence).ok


def test_speed_time_and_money(results, evidence) -> None:
    tps = results["perf_decode"].result["tokens_per_s"]
    hours = results["training_time"].result["hours"]
    assert check(f"about {tps:.0f} tokens/s", evidence).ok
    assert check(f"约 {tps:.1f} tok/s", evidence).ok
    assert not check(f"about {tps * 2:.0f} tokens/s", evidence).ok
    assert check(f"roughly {hours:.1f} hours or {hours * 60:.0f} minutes or {hours / 24:.2f} days", evidence).ok
    assert not check(f"roughly {hours * 3:.1f} hours", evidence).ok
    assert check("预算 ¥100,000，也就是 10万元", evidence).ok
    assert not check("budget $14,000", evidence).ok


def test_passage_numbers_ground_only_when_cited(results) -> None:
    with_passage = evidence_from([results["size_inference"].result], texts=[PASSAGE])
    without = evidence_from([results["size_inference"].result])
    claim = "In FP16 a 70B model needs about 140 GB; at 4-bit about 35 GB."
    assert check(claim, with_passage).ok
    assert not check(claim, without).ok


def test_identifiers_are_not_quantities() -> None:
    text = ("RTX 4090, A100 80GB, H100 SXM, FP16, BF16, Q4_K_M, 4-bit, Llama-3.1-8B, Qwen2.5-7B, PCIe 4.0 x16, "
            "CUDA 12.4, [vram/en/kv-cache], MI300X, 2024-06-01, 24/7")
    masked = mask_identifiers(text)
    assert len(masked) == len(text)
    assert [m.text for m in extract(text) if m.dim != "plain" or m.value > 10] == []


def test_units_are_read_correctly() -> None:
    by_text = {m.text.strip(): m for m in extract("70B params, 128k tokens, 1.6 kW, 3.35 TB/s, 85%, ¥54,000, $8k")}
    assert by_text["70B params"].dim == "params" and by_text["70B params"].value == 70e9
    assert by_text["128k tokens"].value == 128_000
    assert by_text["1.6 kW"].dim == "W" and by_text["1.6 kW"].value == 1600
    assert by_text["3.35 TB/s"].dim == "bytes/s" and by_text["3.35 TB/s"].value == pytest.approx(3.35e12)
    assert by_text["85%"].dim == "ratio" and by_text["85%"].value == pytest.approx(0.85)
    assert by_text["¥54,000"].dim == "CNY" and by_text["$8k"].value == 8000


def test_small_counts_and_list_markers_are_not_claims(evidence) -> None:
    assert check("1. First point\n2. Second point: use two steps", evidence).ok


def test_fit_verdict_must_agree_with_the_tool() -> None:
    assert verdict_conflict("Good news: it fits comfortably.", fits=False)
    assert verdict_conflict("两张 4090 完全放得下。", fits=False)
    assert verdict_conflict("Here are the numbers.", fits=False)  # silence about a no-fit is not allowed
    assert verdict_conflict("It does not fit: short by 1 GB.", fits=False) is None
    assert verdict_conflict("放不下，还差 1.0 GB。", fits=False) is None
    assert verdict_conflict("It won't fit.", fits=True)
    assert verdict_conflict("It fits, with room to spare.", fits=True) is None
    assert verdict_conflict("anything", fits=None) is None


def test_repair_drops_only_the_bad_sentences(results, evidence) -> None:
    b = results["size_inference"].result["per_gpu_bytes"]
    good1 = f"It needs {b / GB:.1f} GB per GPU."
    good2 = f"That is {b / GiB:.1f} GiB."
    bad = "Speed will be around 999 tokens/s."
    text = f"{good1} {bad} {good2}"
    report = check(text, evidence)
    assert report.bad_numbers == ["999 tokens/s"]
    fixed = repair(text, report)
    assert fixed is not None and "999" not in fixed and good1 in fixed and good2 in fixed
    assert check(fixed, evidence).ok
    mostly_bad = "It needs 3 TB. Speed 999 tokens/s. Costs $1."
    assert repair(mostly_bad, check(mostly_bad, evidence)) is None


def test_a_bracketed_figure_is_a_figure_and_a_citation_is_not() -> None:
    found = [m.text.strip() for m in extract("It needs [77 GB] (or 71.7 GiB) 【24 GB】 [vram/en/kv-cache] [fake-id]")]
    assert found == ["77 GB", "71.7 GiB", "24 GB"]
    assert mask_identifiers("[fake-id] [kb03]").strip() == ""


def test_a_texts_role_gives_way_to_a_fields() -> None:
    """A tool's own sentence 'vLLM may use 23.2 GB of it' read as a need would ground 'it needs 23.2 GB'; the field
    names the figure a capacity, and the field wins."""
    ev = evidence_from([{"reserved_bytes": 23.2e9, "per_gpu_bytes": 74.9e9,
                         "finding": "It needs 74.9 GB per GPU and vLLM may use 23.2 GB of it."}])
    assert check("It needs 74.9 GB per GPU; vLLM can use 23.2 GB.", ev).ok
    assert not check("It needs 23.2 GB per GPU.", ev).ok
    assert not check("The card offers 74.9 GB.", ev).ok


def test_card_counts_are_held_to_the_counts_sized_and_the_least_that_fits() -> None:
    """Qwen2.5-32B in FP8: one RTX 4090 does not fit, two do (sized beside the plan); a GGUF alternative on one
    fits too, but it is another setup: it says nothing of how many cards the plan needs."""
    plan = {"model": "qwen2.5-32b", "precision": "fp8", "context": 8192, "gpu": "RTX 4090"}
    one, two = run_tool("size_inference", {**plan, "gpus": 1}), run_tool("size_inference", {**plan, "gpus": 2})
    gguf = run_tool("size_inference", {**plan, "gpus": 1, "precision": "Q4_K_M", "engine": "llamacpp"})
    assert (one.result["fits"], two.result["fits"], gguf.result["fits"]) == (False, True, True)
    ev = evidence_from([one.result, two.result]).merge(card_counts([one], [two, gguf]))
    assert check("One RTX 4090 is not enough; two RTX 4090s would be enough.", ev).ok
    assert check("一张 4090 不够，两张 4090 就够了。", ev).ok
    for wrong in ("One RTX 4090 would be enough.", "单卡就够了。", "Four RTX 4090s would be enough.",
                  "It fits on 8× RTX 4090.", "Two H100s would be enough.", "three would be enough"):
        report = check(wrong, ev)
        assert not report.ok and report.ungrounded[0].dim == "cards", wrong
    assert check("Four cards would be enough.", evidence_from([{"gpus": 4}])).ok  # no card facts: a number


# ----------------------------------------------------------------------------- units from the result schema

Footprint = Annotated[int, Unit("B", "bytes")]
Secs = Annotated[float, Unit("s", "s")]
Hrs = Annotated[float, Unit("h", "s", 3600)]
Kilowatts = Annotated[float, Unit("kW", "W", 1e3)]


class _Part(BaseModel):
    footprint: Footprint
    latency_ms: Secs  # the name says milliseconds; the schema says seconds
    spare_bytes: int  # no marker: the name's guess stands


class _Result(BaseModel):
    part: _Part | None = None
    parts: list[_Part] = []
    draw: list[Kilowatts] = []
    window: tuple[Secs, Hrs] | None = None
    by_gpu: dict[str, Footprint] = {}


def test_a_field_whose_name_says_nothing_is_read_with_its_declared_unit() -> None:
    data = {"part": {"footprint": 16_060_000_000, "latency_ms": 2.5, "spare_bytes": 3_000_000_000}}
    claim = "It needs 16.1 GB."
    assert not check(claim, evidence_from([data])).ok  # 'footprint' names no unit: a bare number
    typed = evidence_from([(_Result, data)])
    assert check(claim, typed).ok
    assert check("It needs 14.96 GiB.", typed).ok
    assert check(claim, evidence_from([_Result.model_validate(data)])).ok  # a model instance reads the same
    assert check("3.0 GB spare", typed).ok  # an unmarked field keeps the name guess


def test_a_declared_unit_wins_over_the_name_guess() -> None:
    data = {"part": {"footprint": 1, "latency_ms": 2.5, "spare_bytes": 0}}
    assert check("a 2.5 ms step", evidence_from([data])).ok
    assert not check("a 2.5 s step", evidence_from([data])).ok
    typed = evidence_from([(_Result, data)])
    assert check("a 2.5 s step", typed).ok and check("2,500 ms", typed).ok
    assert not check("a 2.5 ms step", typed).ok


def test_units_are_found_in_lists_tuples_optionals_and_mappings() -> None:
    data = {"parts": [{"footprint": 8_000_000_000, "latency_ms": 0.5, "spare_bytes": 0},
                      {"footprint": 24_000_000_000, "latency_ms": 1.5, "spare_bytes": 0}],
            "draw": [1.6, 2.4], "window": [90.0, 2.0], "by_gpu": {"h100": 80_000_000_000}, "part": None}
    ev = evidence_from([(_Result, data)])
    for claim in ("8 GB", "24 GB", "1.5 s", "500 ms", "1,600 W", "2.4 kW", "90 seconds", "2 hours", "120 minutes",
                  "80 GB"):
        assert check(f"about {claim}", ev).ok, claim
    assert not check("about 2.0 seconds", ev).ok  # the tuple's second item is in hours
    assert not check("about 1,600 kW", ev).ok


def test_tool_results_by_name_read_their_output_schema(results) -> None:
    r = results["perf_decode"].result
    b = r["bytes_per_step_per_gpu"]  # 'per_step' once looked like a rate ('per_s') to the name guess
    assert check(f"Each step reads {b / GB:.2f} GB per GPU.", evidence_from([("perf_decode", r)])).ok
    assert check(f"about {r['tokens_per_s']:.0f} tokens/s", evidence_from([("perf_decode", r)])).ok
    # a pair that names no tool is ordinary JSON, walked as before
    assert check("2.5 GB", evidence_from([("not a tool", {"x_gb": 2.5})])).ok
