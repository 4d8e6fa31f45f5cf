"""Our estimates against every published measurement we can reproduce (measurements.md).

Run: ``.venv/bin/python bench/accuracy.py`` (add ``--json`` for machine-readable output).
Prints one table — row number, quantity, published value, our estimate, error — and writes
nothing. Rows marked "fit" are the data a constant was fitted or derived from (in-sample);
the others are independent checks.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knowledge import load_catalog
from tools.deepspeed_estimator import DeepSpeedEstimateInput, deepspeed_model_states
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.kv_cache import kv_bytes_per_token
from tools.modelspec import ModelSpec
from tools.perf import DecodeInput, estimate_decode
from tools.precision import resolve_precision
from tools.training_memory import TrainingMemoryInput, estimate_training_memory
from tools.training_time import TrainingTimeInput, estimate_training_time, implied_mfu
from tools.units import GB, GiB, MiB


@dataclass
class Row:
    row: str
    what: str
    unit: str
    published: float
    ours: float
    note: str = ""

    @property
    def error(self) -> float:
        return self.ours / self.published - 1 if self.published else float("nan")


def _gguf_rows() -> list[Row]:
    cat = load_catalog()
    l2 = ModelSpec.from_model(cat.model("llama-2-7b"))
    l3 = ModelSpec.from_model(cat.model("llama-3-8b"))
    out = [
        Row(
            "1",
            "Llama-2-7B Q4_K_M file",
            "GiB",
            3.80,
            l2.weight_bytes_at("Q4_K_M") / GiB,
            "bpw taken from Llama-3-8B sizes",
        )
    ]
    for q, gib in (
        ("Q4_0", 4.34),
        ("Q4_K_S", 4.37),
        ("Q4_K_M", 4.58),
        ("Q5_K_M", 5.33),
        ("Q6_K", 6.14),
        ("Q8_0", 7.96),
    ):
        out.append(Row("2", f"Llama-3-8B {q} file", "GiB", gib, l3.weight_bytes_at(q) / GiB, "fit (bpw source)"))
    out.append(
        Row(
            "1",
            "Q4_K_M bits/weight on Llama-3-8B",
            "bpw",
            4.89,
            resolve_precision("Q4_K_M").bits_per_weight,
            "fit",
        )
    )
    return out


def _llamacpp_rows() -> list[Row]:
    out = []
    for row, model, n_ctx, seqs, kv, comp, gpu_w, cpu_w in (
        ("3", "llama-2-7b", 2048, 1, 1024.00, 164.01, 3820.94, 70.31),
        ("4", "llama-3.1-8b", 2048, 4, 1024.00, 560.00, 4403.49, 281.81),
    ):
        r = estimate_inference_memory(
            InferenceMemoryInput(
                model=model,
                precision="Q4_K_M",
                kv_dtype="fp16",
                context=n_ctx,
                batch=seqs,
                engine="llamacpp",
                n_ubatch=512,
                flash_attention=False,
            )
        )
        name = "Llama-2-7B" if row == "3" else "Llama-3.1-8B"
        out += [
            Row(row, f"{name} llama.cpp KV (n_ctx {n_ctx * seqs})", "MiB", kv, r.breakdown.kv_cache / MiB),
            Row(row, f"{name} llama.cpp compute buffer", "MiB", comp, r.breakdown.activations / MiB),
            Row(row, f"{name} Q4_K_M weights on GPU", "MiB", gpu_w, r.breakdown.weights / MiB),
            Row(row, f"{name} Q4_K_M weights on CPU (token_embd)", "MiB", cpu_w, r.cpu_bytes / MiB),
        ]
    return out


def _kv_vllm_rows() -> list[Row]:
    spec = ModelSpec.from_catalog("llama-3.1-8b")
    out = [Row("5", "Llama-3.1-8B KV bytes/token (bf16)", "B", 131072, kv_bytes_per_token(spec, "bf16"))]
    r = estimate_inference_memory(
        InferenceMemoryInput(
            model="Meta-Llama-3-8B",
            precision="bf16",
            context=8192,
            engine="vllm",
            gpu_memory_bytes=int(39.50 * GiB),
            gpu_memory_utilization=0.90,
            profile_logits_all_tokens=True,
        )
    )
    out += [
        Row("8", "vLLM A100-40GB weights", "GiB", 14.96, r.breakdown.weights / GiB),
        Row("8", "vLLM activation peak", "GiB", 9.37, r.breakdown.activations / GiB, "fit (calibration log)"),
        Row("8", "vLLM KV budget", "GiB", 11.12, (r.kv_budget_bytes or 0) / GiB),
        Row("8", "vLLM KV blocks", "blocks", 5691, r.kv_blocks or 0),
        Row("8", "vLLM max concurrency @ 8192", "×", 11.12, r.max_concurrency or 0),
    ]
    return out


# t5-3b: d_model 1024, d_ff 16384, 32 heads × 128, 24 + 24 layers, vocab 32128 (shared embedding).
T5_3B_PARAMS = 2_851_598_336
T5_3B_LARGEST = 32128 * 1024


def _deepspeed_rows() -> list[Row]:
    def ds(stage: int, **kw: bool | str) -> tuple[float, float]:
        e = deepspeed_model_states(
            DeepSpeedEstimateInput(
                total_params=T5_3B_PARAMS,
                largest_layer_params=T5_3B_LARGEST,
                stage=stage,
                gpus_per_node=8,
                nodes=1,
                **kw,
            )
        )
        return e.gpu_bytes / GiB, e.cpu_bytes / GiB

    out = []
    g, c = ds(2, offload_optimizer=True)
    out += [
        Row("11", "t5-3b ZeRO-2 offload GPU", "GB*", 5.31, g),
        Row("11", "t5-3b ZeRO-2 offload CPU", "GB*", 127.48, c),
    ]
    out.append(Row("11", "t5-3b ZeRO-2 no offload GPU (pre-#5099)", "GB*", 15.93, ds(2, formula="pre-5099")[0]))
    out.append(Row("11", "t5-3b ZeRO-2 no offload GPU (current)", "GiB", 11.28, ds(2)[0], "re-derived value"))
    for label, kw, gpu, cpu in (
        ("offload params+opt", dict(offload_params=True, offload_optimizer=True), 0.12, 71.71),
        ("offload opt", dict(offload_optimizer=True), 0.79, 63.74),
        ("no offload", {}, 6.10, 1.47),
    ):
        g, c = ds(3, **kw)
        out += [
            Row("12", f"t5-3b ZeRO-3 {label} GPU", "GB*", gpu, g),
            Row("12", f"t5-3b ZeRO-3 {label} CPU", "GB*", cpu, c),
        ]
    # The same rows through the general training estimator (model states only: no activations).
    spec = ModelSpec(
        name="t5-3b (as decoder)",
        source="custom",
        params=T5_3B_PARAMS,
        active_params=T5_3B_PARAMS,
        layers=48,
        hidden_size=1024,
        intermediate_size=16384,
        vocab_size=32128,
        attention="mha",
        num_heads=32,
        num_kv_heads=32,
        head_dim=128,
        tie_word_embeddings=True,
    )
    r = estimate_training_memory(TrainingMemoryInput(model=spec, zero_stage=3, gpus=8, offload_optimizer=True))
    states = r.breakdown.weights + r.breakdown.gradients + r.breakdown.optimizer
    out.append(Row("12", "t5-3b ZeRO-3 offload opt, training estimator: model states/GPU", "GB*", 0.79, states / GiB))
    out.append(Row("12", "t5-3b ZeRO-3 offload opt, training estimator: host RAM", "GB*", 63.74, r.cpu_bytes / GiB))
    return out


def _decode_rows() -> list[Row]:
    cat = load_catalog()
    spec = ModelSpec.from_model(cat.model("llama-3-8b"))
    out = []
    for gpu_name, q4, f16 in (("rtx-3090", 111.74, 46.51), ("rtx-4090", 127.74, 54.34)):
        gpu = cat.gpu(gpu_name)
        for prec, meas in (("Q4_K_M", q4), ("F16", f16)):
            d = estimate_decode(DecodeInput(model=spec, gpu=gpu, precision=prec, context=512))
            out.append(Row("14", f"decode {spec.name} {prec} {gpu.name}", "tok/s", meas, d.tokens_per_s, "fit"))
    gpu = cat.gpu("rtx-4090")
    for n, meas in ((1, 127.74), (2, 122.56), (4, 117.61), (8, 116.13)):
        d = estimate_decode(
            DecodeInput(model=spec, gpu=gpu, precision="Q4_K_M", context=512, count=n, parallel="layer")
        )
        out.append(
            Row(
                "16",
                f"decode Q4_K_M layer split {n}× RTX 4090",
                "tok/s",
                meas,
                d.tokens_per_s,
                "fit (hand-off cost)" if n > 1 else "fit",
            )
        )
    return out


LLAMA1 = (
    ("7B", 6.7e9, 1.0e12, 82_432),
    ("13B", 13.0e9, 1.0e12, 135_168),
    ("33B", 32.5e9, 1.4e12, 530_432),
    ("65B", 65.2e9, 1.4e12, 1_022_362),
)


def _training_time_rows() -> list[Row]:
    gpu = load_catalog().gpu("a100-sxm-80gb")
    peak = (gpu.throughput.bf16 or 0) * 1e12
    mfu65 = implied_mfu(65.2e9, 380, peak)
    out = [Row("22", "LLaMA-65B implied MFU (380 tok/s/GPU)", "MFU", mfu65, mfu65, "derived")]
    for name, n, d, gpu_h in LLAMA1:
        r_default = estimate_training_time(TrainingTimeInput(params=n, tokens=d, gpu=gpu, count=2048))
        r_implied = estimate_training_time(TrainingTimeInput(params=n, tokens=d, gpu=gpu, count=2048, mfu=mfu65))
        out.append(
            Row(
                "22",
                f"LLaMA-{name} GPU-hours @ default MFU {r_default.mfu:g}",
                "GPU·h",
                gpu_h,
                r_default.gpu_hours,
            )
        )
        out.append(
            Row(
                "22",
                f"LLaMA-{name} GPU-hours @ 65B-implied MFU {mfu65:.3f}",
                "GPU·h",
                gpu_h,
                r_implied.gpu_hours,
                "fit: MFU from this row" if name == "65B" else "MFU from 65B",
            )
        )
    return out


def _unsloth_rows() -> list[Row]:
    cat = load_catalog()
    out = []
    for model, q_ref, l_ref in (("llama-3.1-8b", 6, 22), ("llama-3.1-70b", 41, 164)):
        spec = ModelSpec.from_model(cat.model(model))
        for method, ref in (("qlora", q_ref), ("lora", l_ref)):
            r = estimate_training_memory(
                TrainingMemoryInput(
                    model=spec, method=method, seq=512, micro_batch=1, recompute="full", fused_loss=True
                )
            )
            out.append(
                Row(
                    "24",
                    f"{spec.name} {method} minimum (seq 512, batch 1)",
                    "GB",
                    ref,
                    r.per_gpu_bytes / GB,
                    "'absolute minimum', config unstated",
                )
            )
    return out


SECTIONS: tuple[tuple[str, Callable[[], list[Row]]], ...] = (
    ("weights (GGUF)", _gguf_rows),
    ("llama.cpp buffers", _llamacpp_rows),
    ("KV / vLLM budget", _kv_vllm_rows),
    ("DeepSpeed ZeRO estimator", _deepspeed_rows),
    ("decode speed", _decode_rows),
    ("training time", _training_time_rows),
    ("fine-tuning memory", _unsloth_rows),
)


def collect() -> list[Row]:
    rows: list[Row] = []
    for _, fn in SECTIONS:
        rows += fn()
    return rows


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    rows = collect()
    if "--json" in argv:
        print(json.dumps([{**asdict(r), "error": r.error} for r in rows], ensure_ascii=False, indent=2))
        return 0
    print(f"{'row':<4} {'quantity':<62} {'unit':<7} {'published':>12} {'ours':>12} {'error':>8}  note")
    print("-" * 120)
    for r in rows:
        print(
            f"{r.row:<4} {r.what[:62]:<62} {r.unit:<7} {r.published:>12,.2f} {r.ours:>12,.2f} "
            f"{r.error:>+8.1%}  {r.note}"
        )
    indep = [abs(r.error) for r in rows if not r.note.startswith(("fit", "derived"))]
    print("-" * 120)
    print(
        f"{len(rows)} comparisons; independent ones: {len(indep)}, median |error| "
        f"{sorted(indep)[len(indep) // 2]:.1%}, max {max(indep):.1%}"
    )
    print("GB* = DeepSpeed prints 'GB' but divides by 2**30 (GiB); our value is in GiB too.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
