"""Presenters: each result type renders in both languages from real tool results, words from the catalogs.

English text has no CJK; Chinese text has no run of three or more English words outside names (models,
GPUs, software stacks), units, flags and the tools' formulas; the key figures of each result appear."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from advisor.fmt import gb, gb_fixed, money, num, tps
from advisor.present import (
    Section,
    present_check,
    present_decode,
    present_fp64,
    present_inference,
    present_prefill,
    present_recommend,
    present_serving,
    present_training,
    present_training_time,
)
from knowledge import load_catalog
from tools.compat import BuildInput, GPUCount, check_build
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.modelspec import ModelSpec
from tools.perf import DecodeInput, PrefillInput, ServingInput, estimate_decode, estimate_prefill, estimate_serving
from tools.recommend import RecommendInput, recommend
from tools.scientific import ScientificInput, estimate_fp64
from tools.training_memory import TrainingMemoryInput, estimate_training_memory
from tools.training_time import TrainingTimeInput, estimate_training_time

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
ENGLISH_RUN = re.compile(r"(?<![\w/.-])[A-Za-z][a-z]+(?:[ -]+[A-Za-z][a-z]+){2,}")


def _gpu(name: str):  # type: ignore[no-untyped-def]
    return load_catalog().gpu(name)


def _spec(name: str) -> ModelSpec:
    return ModelSpec.from_catalog(name)


def _names() -> list[str]:
    """Catalog names (GPUs, models) and software stacks: English by nature, allowed anywhere."""
    cat = load_catalog()
    return sorted({g.name for g in cat.gpus} | {m.name for m in cat.models}, key=len, reverse=True)


def english_runs(section: Section, result: object) -> list[str]:
    """Runs of 3+ English words in ``section``'s text, formulas and names removed, and the notes a tool passes as
    plain text rather than as a message id (e.g. the engine-visible memory note of the FP64 tool)."""
    text = section.text()
    for plain in getattr(result, "assumptions", []):
        if isinstance(plain, str):
            text = text.replace(plain, "")
    for t in section.terms:
        text = text.replace(t.formula, "")
    for name in _names():
        text = text.replace(name, "")
    return ENGLISH_RUN.findall(text)


def _inference():  # type: ignore[no-untyped-def]
    return estimate_inference_memory(InferenceMemoryInput(model="qwen2.5-72b", precision="fp8", context=4096,
                                                          gpus=2, gpu="H100"))


def _training():  # type: ignore[no-untyped-def]
    return estimate_training_memory(TrainingMemoryInput(model=_spec("llama-3.1-8b"), method="lora", seq=2048,
                                                        gpu=_gpu("RTX 4090")))


def _decode():  # type: ignore[no-untyped-def]
    return estimate_decode(DecodeInput(model=_spec("llama-3.1-8b"), gpu=_gpu("H100"), precision="bf16",
                                       context=4096))


def _prefill():  # type: ignore[no-untyped-def]
    return estimate_prefill(PrefillInput(model=_spec("llama-3.1-8b"), gpu=_gpu("H100"), precision="bf16",
                                         prompt_tokens=4096))


def _serving():  # type: ignore[no-untyped-def]
    return estimate_serving(ServingInput(model=_spec("qwen2.5-72b"), gpu=_gpu("H100"), count=2, precision="fp8",
                                         context=4096))


def _training_time():  # type: ignore[no-untyped-def]
    return estimate_training_time(TrainingTimeInput(params=8.03e9, tokens=1e9, gpu=_gpu("H100"), count=8,
                                                    model_name="Llama-3.1-8B"))


def _fp64():  # type: ignore[no-untyped-def]
    return estimate_fp64(ScientificInput(gpu=_gpu("A100"), problem="dense-lu", n=50_000))


def _check():  # type: ignore[no-untyped-def]
    return check_build(BuildInput(gpus=[GPUCount(gpu="RTX 4090", count=4)], chassis="tower"))


def _recommend_cny():  # type: ignore[no-untyped-def]
    return recommend(RecommendInput(workload="inference", model="qwen2.5-72b", budget_cny=400_000))


def _recommend_usd():  # type: ignore[no-untyped-def]
    return recommend(RecommendInput(workload="scientific", budget_usd=50_000))


CASES: dict[str, tuple[Callable[[], object], Callable[[object, str], Section], Callable[[object], list[str]]]] = {
    "inference": (_inference, lambda r, lang: present_inference(r, lang),  # type: ignore[arg-type]
                  lambda r: [gb(r.per_gpu_bytes), f"{r.breakdown.weights / 1e9:,.2f}",  # type: ignore[attr-defined]
                             f"{r.kv_capacity_tokens:,}"]),  # type: ignore[attr-defined]
    "training": (_training, lambda r, lang: present_training(r, lang),  # type: ignore[arg-type]
                 lambda r: [gb(r.per_gpu_bytes), f"{r.trainable_params:,}",  # type: ignore[attr-defined]
                            f"{r.cpu_bytes / 1e9:,.2f}"]),  # type: ignore[attr-defined]
    "decode": (_decode, lambda r, lang: present_decode(r, lang),  # type: ignore[arg-type]
               lambda r: [tps(r.tokens_per_s), num(r.tokens_per_s_range[0])]),  # type: ignore[attr-defined]
    "prefill": (_prefill, lambda r, lang: present_prefill(r, lang, prompt_tokens=4096),  # type: ignore[arg-type]
                lambda r: [tps(r.tokens_per_s), "4,096"]),  # type: ignore[attr-defined]
    "serving": (_serving, lambda r, lang: present_serving(r, lang, context=4096),  # type: ignore[arg-type]
                lambda r: [f"{r.kv_capacity_tokens:,}", num(r.max_concurrency),  # type: ignore[attr-defined]
                           tps(r.points[-1].tokens_per_s)]),  # type: ignore[attr-defined]
    "training_time": (_training_time,
                      lambda r, lang: present_training_time(r, lang, model="Llama-3.1-8B", tokens=1e9),  # type: ignore[arg-type]
                      lambda r: [f"{num(r.hours)} h", f"{num(r.gpu_hours)} GPU·h"]),  # type: ignore[attr-defined]
    "fp64": (_fp64, lambda r, lang: present_fp64(r, lang, gpu="A100 SXM 80GB"),  # type: ignore[arg-type]
             lambda r: [gb_fixed(r.memory_bytes), "6.11 s"]),  # type: ignore[attr-defined]
    "check": (_check, lambda r, lang: present_check(r, lang),  # type: ignore[arg-type]
              lambda r: [f"{num(r.totals.system_power_w)} W", f"{num(r.totals.recommended_psu_w)} W"]),  # type: ignore[attr-defined]
    "recommend_cny": (_recommend_cny, lambda r, lang: present_recommend(r, lang),  # type: ignore[arg-type]
                      lambda r: [money(r.options[0].total_price_cny, "CNY")]),  # type: ignore[attr-defined]
    "recommend_usd": (_recommend_usd, lambda r, lang: present_recommend(r, lang),  # type: ignore[arg-type]
                      lambda r: [money(r.options[0].total_price_usd, "USD")]),  # type: ignore[attr-defined]
}


@pytest.fixture(scope="module")
def results() -> dict[str, object]:
    return {name: make() for name, (make, _, _) in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_english_has_no_cjk_and_shows_the_figures(results: dict[str, object], name: str) -> None:
    _, present, figures = CASES[name]
    section = present(results[name], "en")
    text = section.text()
    assert not CJK.search(text), CJK.findall(text)[:5]
    for fig in figures(results[name]):
        assert fig in text, fig
    assert section.markdown().startswith("## ")


@pytest.mark.parametrize("name", sorted(CASES))
def test_chinese_has_no_english_prose_and_shows_the_figures(results: dict[str, object], name: str) -> None:
    _, present, figures = CASES[name]
    section = present(results[name], "zh")
    text = section.text()
    assert CJK.search(text)
    assert english_runs(section, results[name]) == []
    for fig in figures(results[name]):
        assert fig in text, fig


@pytest.mark.parametrize("name", ["check", "recommend_usd"])
def test_rule_ids_are_not_shown(results: dict[str, object], name: str) -> None:
    _, present, _ = CASES[name]
    r = results[name]
    findings = getattr(r, "findings", None) or [f for o in r.options for f in o.findings]  # type: ignore[attr-defined]
    ids = {f.id for f in findings}
    assert ids
    for lang in ("en", "zh"):
        text = present(r, lang).text()
        assert [i for i in ids if i in text] == []


def test_recommend_money_is_in_the_budget_currency(results: dict[str, object]) -> None:
    for lang in ("en", "zh"):
        cny = present_recommend(results["recommend_cny"], lang)  # type: ignore[arg-type]
        assert cny.table is not None and all(row[-1].startswith("¥") for row in cny.table.rows)
        assert "$" not in "\n".join(item.text for lst in cny.lists[:1] for item in lst.items)
        usd = present_recommend(results["recommend_usd"], lang)  # type: ignore[arg-type]
        assert usd.table is not None and all(row[-1].startswith("$") for row in usd.table.rows)


def test_markdown_escapes_pipes_in_formulas(results: dict[str, object]) -> None:
    md = present_inference(results["inference"], "zh").markdown("显存估算")  # type: ignore[arg-type]
    assert md.startswith("## 显存估算") and "| 项 | 数值 | 公式 | 含义 |" in md
    assert "**假设**" in md
