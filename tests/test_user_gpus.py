"""GPUs described by their owner's figures ($GPU_ADVISOR_GPUS): sized, timed and asked about like catalog
GPUs; a file that cannot be used is one warning and changes nothing else."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from knowledge import UnknownNameError, load_catalog
from tools.perf import DecodeResult

# a card the catalog lacks, with its datasheet figures: GeForce RTX 3050 8GB (GA106, 20 SMs, boost 1,777 MHz;
# 8 GB GDDR6 on 128-bit at 14 Gbps = 224 GB/s; 130 W; PCIe 4.0 x8). Dense BF16 tensor with FP32 accumulate as the
# catalog's other GA10x cards: 20 × 1.777 GHz × 512 = 18.2 TFLOPS; FP64 1/64 of FP32 9.1 = 0.14
RTX_3050 = """
[[gpu]]
name = "RTX 3050"
memory_gib = 8
bandwidth_gbs = 224
bf16_tflops = 18.2
fp64_tflops = 0.14
tdp_w = 130
pcie_gen = 4
pcie_lanes = 8
"""


@pytest.fixture
def profile(gpu_file: Path) -> Path:
    """The GPU file these tests call a profile (``gpu_file`` in conftest.py)."""
    return gpu_file


def test_a_described_card_is_sized_timed_and_answered_about(profile: Path) -> None:
    from advisor import Advisor
    from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
    from tools.modelspec import load_model_spec
    from tools.perf import DecodeInput, estimate_decode

    profile.write_text(RTX_3050, encoding="utf-8")
    gpu = load_catalog().gpu("rtx 3050")
    assert gpu.memory_bytes == 8 * 2**30 and gpu.confidence == "L" and gpu.price is None
    assert "own figures" in gpu.sources[0]
    # 16-bit Llama-3.1-8B weights alone are 8.03e9 × 2 B = 16.1 GB: more than 8 GiB; 4-bit GGUF (~4.9 GB) fits
    size = estimate_inference_memory(InferenceMemoryInput(model="llama-3.1-8b", gpu="RTX 3050", context=4096))
    assert size.fits is False and size.breakdown.weights > 8 * 2**30
    assert estimate_inference_memory(InferenceMemoryInput(model="llama-3.1-8b", gpu="RTX 3050", context=4096,
                                                          precision="Q4_K_M")).fits is True
    # decoding reads every weight once per token: at most 224 GB/s ÷ the Q4_K_M weights (~4.9 GB) ≈ 46 tokens/s
    decode = estimate_decode(DecodeInput(model=load_model_spec("llama-3.1-8b"), gpu=gpu, precision="Q4_K_M"))
    assert 0 < decode.tokens_per_s < 224e9 / 4.5e9
    reply = Advisor(search_k=0).reply("RTX 3050 能跑 Qwen2.5-7B 吗", Advisor(search_k=0).new_session())
    head = reply.text.splitlines()[0]  # a consumer card for one user: sized as Ollama runs it, 4-bit GGUF
    assert "RTX 3050" in head and "放得下" in head and "Q4_K_M" in head


@pytest.mark.parametrize(("text", "said"), [
    (RTX_3050.replace("memory_gib = 8", "memory_gib = inf"), "memory_gib"),
    (RTX_3050.replace("tdp_w = 130\n", ""), "tdp_w"),
    (RTX_3050.replace("bandwidth_gbs = 224", "bandwidth_gbs = 'fast'"), "bandwidth_gbs"),
    ("[[gpu]\nname = ", "not valid TOML"),
    ('gpu = "RTX 3050"', "[[gpu]] tables"),
])
def test_a_profile_that_cannot_be_used_is_one_warning(profile: Path, text: str, said: str,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    profile.write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="knowledge.catalog"):
        cat = load_catalog()
    assert [r.getMessage() for r in caplog.records if said in r.getMessage() and "GPU_ADVISOR_GPUS" in
            r.getMessage()]
    assert cat.gpu("RTX 4090").id == "rtx-4090"  # the catalog itself is whole
    with pytest.raises(UnknownNameError, match="RTX 3050"):
        cat.gpu("RTX 3050")


def test_a_profile_cannot_replace_a_catalog_gpu(profile: Path) -> None:
    profile.write_text(RTX_3050.replace('name = "RTX 3050"', 'name = "RTX 4090"'), encoding="utf-8")
    cat = load_catalog()
    assert cat.gpu("RTX 4090").memory_gb == 24 and "user-rtx-4090" not in {g.id for g in cat.gpus}


def test_without_a_profile_the_chat_asks_for_the_cards_memory_and_sizes_from_it() -> None:
    from advisor import Advisor

    adv = Advisor(search_k=0)
    # the RTX 3050 is not in the catalog (the RTX 3080 these tests used to name now is)
    first = adv.reply("RTX 3050 能跑 Qwen2.5-7B 吗", adv.new_session())
    assert any("告诉我它的显存（例如“RTX 3050 " in n for n in first.notices), first.notices
    sized = adv.reply("Can my RTX 3050 8GB run Llama 3.1 8B?", adv.new_session())
    # 8.03e9 weights × 2 B = 16.1 GB at 16 bits: more than an 8 GB card holds; at ~4.9 bits (Q4_K_M) ≈ 4.9 GB it fits
    head = sized.text.splitlines()[0]
    assert "one 8 GB card" in head and "Q4_K_M" in head and "native bf16 it does not fit" in head
    assert not any("tell me its memory" in n for n in sized.notices)  # it was given


MEASURED_4090 = """
[[measured]]
gpu = "RTX 4090"
model = "llama-3.1-8b"
precision = "Q4_K_M"
decode_tokens_per_s = 150
"""


def _decode(model: str, gpu_name: str, precision: str, context: int) -> DecodeResult:
    from tools.modelspec import load_model_spec
    from tools.perf import DecodeInput, estimate_decode

    gpu = load_catalog().gpu(gpu_name)
    return estimate_decode(DecodeInput(model=load_model_spec(model), gpu=gpu, precision=precision, context=context))


def test_a_measured_speed_calibrates_that_models_decode_predictions_on_that_gpu(profile: Path) -> None:
    plain_same = _decode("llama-3.1-8b", "RTX 4090", "Q4_K_M", 512)
    plain_other = _decode("qwen2.5-14b", "RTX 4090", "Q4_K_M", 4096)
    profile.write_text(MEASURED_4090, encoding="utf-8")
    load_catalog.cache_clear()
    same = _decode("llama-3.1-8b", "RTX 4090", "Q4_K_M", 512)
    other = _decode("qwen2.5-14b", "RTX 4090", "Q4_K_M", 4096)
    assert same.tokens_per_s == pytest.approx(150)  # the measured run itself is reproduced
    factor = 150 / plain_same.tokens_per_s
    assert same.tokens_per_s_range[0] == pytest.approx(plain_same.tokens_per_s_range[0] * factor)
    [throughput] = [t for t in same.terms if t.name == "decode throughput"]
    assert throughput.value == pytest.approx(same.tokens_per_s)  # the derivation says the same number
    assert any(getattr(a, "id", "") == "perf.decode.calibrated" for a in same.assumptions)
    # a measurement says how this GPU runs that model: another model keeps its prediction, and says so
    assert other.tokens_per_s == pytest.approx(plain_other.tokens_per_s)
    assert [getattr(a, "id", "") for a in other.assumptions][-1] == "perf.decode.not_calibrated"
    untouched = _decode("qwen2.5-14b", "RTX 3090", "Q4_K_M", 4096)  # another GPU is not calibrated
    assert not any(getattr(a, "id", "") == "perf.decode.calibrated" for a in untouched.assumptions)


def test_a_measurement_of_an_unknown_gpu_is_a_warning(profile: Path, caplog: pytest.LogCaptureFixture) -> None:
    profile.write_text(MEASURED_4090.replace('gpu = "RTX 4090"', 'gpu = "RTX 9999"'), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="knowledge.catalog"):
        cat = load_catalog()
    assert any("RTX 9999" in r.getMessage() for r in caplog.records)
    assert all(not g.measured_decode for g in cat.gpus)


def test_the_chat_says_when_a_speed_is_calibrated_to_the_users_measurement(profile: Path) -> None:
    from advisor import Advisor

    profile.write_text(MEASURED_4090, encoding="utf-8")
    adv = Advisor(search_k=0)
    zh = adv.reply("RTX 4090 跑 Llama 3.1 8B Q4 每秒多少 token", adv.new_session())
    assert "速度已按你在这张卡上的实测校准（Llama-3.1-8B，Q4_K_M：实测 150 tokens/s" in zh.text
    en = adv.reply("how fast is Qwen2.5-14B Q4_K_M on one RTX 3090?", adv.new_session())
    assert "calibrated" not in en.text  # a GPU without a measurement says nothing of the kind


MFU_4090 = """
[[measured]]
gpu = "RTX 4090"
training_mfu = 0.30
"""


def test_a_measured_training_mfu_replaces_the_published_runs_default(profile: Path) -> None:
    from tools.training_time import TrainingTimeInput, estimate_training_time

    before = estimate_training_time(TrainingTimeInput(params=8e9, tokens=1e10, gpu=load_catalog().gpu("RTX 4090")))
    profile.write_text(MFU_4090, encoding="utf-8")
    load_catalog.cache_clear()
    gpu = load_catalog().gpu("RTX 4090")
    r = estimate_training_time(TrainingTimeInput(params=8e9, tokens=1e10, gpu=gpu))
    assert r.mfu == 0.30 and r.mfu_range == pytest.approx((0.27, 0.33))
    assert r.hours == pytest.approx(before.hours * before.mfu / 0.30)  # time scales inversely with MFU
    assert r.assumptions[0].id == "perf.train_time.mfu_measured"
    given = estimate_training_time(TrainingTimeInput(params=8e9, tokens=1e10, gpu=gpu, mfu=0.5))
    assert given.mfu == 0.5  # a figure given for one question still wins
    other = estimate_training_time(TrainingTimeInput(params=8e9, tokens=1e10, gpu=load_catalog().gpu("RTX 3090")))
    assert other.assumptions[0].id == "perf.train_time.mfu_fitted"


@pytest.mark.parametrize("text", [
    MFU_4090.replace("0.30", "0.95"),  # beyond any published run
    MFU_4090 + "decode_tokens_per_s = 100\n",  # two kinds in one table
    '[[measured]]\ngpu = "RTX 4090"\ndecode_tokens_per_s = 100\n',  # a speed without its model and precision
])
def test_a_measurement_that_cannot_be_used_is_one_warning(profile: Path, text: str,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    profile.write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="knowledge.catalog"):
        cat = load_catalog()
    assert any("GPU_ADVISOR_GPUS" in r.getMessage() and "measured 1" in r.getMessage() for r in caplog.records)
    assert cat.gpu("RTX 4090").measured_training_mfu is None
