"""Weight precisions, quantisation formats and KV-cache dtypes, at their real storage cost.

Two numbers matter for a quantised format:

* ``base_bits_per_weight`` — the bits one block of the base type costs (ggml block size, or
  4 bits + group scales for AWQ/GPTQ);
* ``bits_per_weight`` — the bits per parameter of a *whole model file*. For llama.cpp's
  ``_S``/``_M``/``_L`` mixes some tensors (``output.weight``, half of ``attn_v``/``ffn_down``)
  are kept at a larger type, so the file is bigger than the base type suggests. We use the
  sizes llama.cpp itself publishes for Llama-3-8B (8.03 B params) in ``QUANT_OPTIONS`` of
  ``tools/quantize/quantize.cpp`` ("4.58G" = GiB, i.e. 4.58·2³⁰·8 / 8.03e9 = 4.90 bpw for
  Q4_K_M; measurements.md rows 1–2). Models with a smaller share of embeddings come out a
  little lower (Llama-2-7B Q4_K_M: 4.84 bpw).

``compute_precision`` names the catalog throughput column (``knowledge.schema.Precision``)
that matrix multiplies run at: weight-only formats (AWQ, GPTQ, NF4, GGUF) dequantise to
fp16/bf16 and compute there; W8A8 int8 and fp8 use their own tensor paths.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from tools.errors import ToolError
from tools.result import note

GiB = 2**30
_LLAMA3_8B_PARAMS = 8.03e9  # parameters of the model llama.cpp quotes its file sizes for
_QUANTIZE_SRC = "llama.cpp tools/quantize/quantize.cpp QUANT_OPTIONS (sizes @ Llama-3-8B)"
_GGML_SRC = "ggml block sizes (gguf-py GGML_QUANT_SIZES)"


def _file_bpw(gib: float) -> float:
    """Whole-file bits per weight from a llama.cpp-published Llama-3-8B file size in GiB."""
    return round(gib * GiB * 8 / _LLAMA3_8B_PARAMS, 3)


class PrecisionSpec(BaseModel):
    """One weight storage format."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="canonical name, e.g. 'bf16', 'int4', 'Q4_K_M'")
    family: Literal["float", "int", "gguf"]
    bits_per_weight: float = Field(gt=0, description="effective bits per parameter of a whole model")
    base_bits_per_weight: float = Field(gt=0, description="bits per weight of the base block type")
    embedding_bits_per_weight: float | None = Field(
        None, gt=0, description="GGUF: type of token_embd.weight (stays in host RAM under llama.cpp)"
    )
    compute_precision: Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"]
    weight_only: bool = Field(description="weights are dequantised and multiplied at compute_precision")
    quantizes_embeddings: bool = Field(
        True,
        description="False when checkpoints keep embed_tokens/lm_head in 16-bit (AWQ, GPTQ, NF4, FP8, int8)",
    )
    aliases: tuple[str, ...] = ()
    note: str = ""
    source: str = ""

    @property
    def bytes_per_param(self) -> float:
        return self.bits_per_weight / 8


class KVDtypeSpec(BaseModel):
    """One KV-cache element type."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    bytes_per_element: float = Field(gt=0)
    aliases: tuple[str, ...] = ()
    engines: tuple[str, ...] = Field(description="engines that offer this cache type")
    note: str = ""


def _f(
    name: str, bits: float, compute: str, aliases: tuple[str, ...], note: str = "", quant_emb: bool = True
) -> PrecisionSpec:
    return PrecisionSpec(
        name=name,
        family="float",
        bits_per_weight=bits,
        base_bits_per_weight=bits,
        compute_precision=compute,
        weight_only=False,
        quantizes_embeddings=quant_emb,
        aliases=aliases,
        note=note,
        source="IEEE/OCP format widths",
    )


def _g(
    name: str,
    base: float,
    file_bpw: float | None,
    embd: float,
    aliases: tuple[str, ...] = (),
    note: str = "",
    source: str = _GGML_SRC,
) -> PrecisionSpec:
    return PrecisionSpec(
        name=name,
        family="gguf",
        bits_per_weight=file_bpw or base,
        base_bits_per_weight=base,
        embedding_bits_per_weight=embd,
        compute_precision="fp16",
        weight_only=True,
        aliases=aliases,
        note=note,
        source=source,
    )


_PRECISIONS: tuple[PrecisionSpec, ...] = (
    _f("fp32", 32, "fp32", ("float32", "f32", "32bit", "full")),
    _f("bf16", 16, "bf16", ("bfloat16",)),
    _f("fp16", 16, "fp16", ("float16", "f16", "half", "16bit")),
    _f(
        "fp8",
        8,
        "fp8",
        ("float8", "e4m3", "fp8_e4m3", "f8", "w8a8-fp8"),
        note="W8A8 FP8 (per-tensor/channel scales negligible); needs FP8 tensor cores (Hopper, Ada, "
        "Blackwell, MI300) for the FP8 speed, otherwise vLLM runs it weight-only (Marlin); "
        "embeddings and lm_head stay 16-bit",
        quant_emb=False,
    ),
    PrecisionSpec(
        name="int8",
        quantizes_embeddings=False,
        family="int",
        bits_per_weight=8.0,
        base_bits_per_weight=8.0,
        compute_precision="int8",
        weight_only=False,
        aliases=("8bit", "w8a8", "int8-w8a8", "llm.int8", "bnb8", "smoothquant"),
        note="8-bit weights with per-channel scales (negligible). W8A8 runs on int8 tensor cores; "
        "bitsandbytes LLM.int8() is weight-only and computes in fp16",
        source="per-channel int8 (SmoothQuant / LLM.int8())",
    ),
    PrecisionSpec(
        name="int4",
        quantizes_embeddings=False,
        family="int",
        bits_per_weight=4.15625,
        base_bits_per_weight=4.0,
        compute_precision="fp16",
        weight_only=True,
        aliases=("4bit", "awq", "gptq", "w4a16", "int4-awq", "int4-gptq", "marlin"),
        note="4-bit weights + per group of 128 one fp16 scale and one packed 4-bit zero point = "
        "4 + 20/128 = 4.156 bits/weight incl. scales (often rounded to 4.25); embed_tokens and "
        "lm_head stay fp16, so whole checkpoints are larger. Weight-only: matmuls run in fp16/bf16",
        source="AWQ/GPTQ group_size=128 layout",
    ),
    # Symmetric 4-bit integers in groups of 32, each group with one bf16 scale and no zero point:
    # 4 + 16/32 = 4.5 bits/weight incl. scales. The native format of Kimi K2-Thinking, K2.5 and K2.6
    # (compressed-tensors pack-quantized, routed experts only; attention, the shared expert and the dense
    # layer stay bf16 — about 1% of the parameters, counted at 4.5 bits here as mxfp4 does for gpt-oss).
    # Weight-only (Marlin W4A16): matmuls run in bf16. No `note`: a note needs its message in both
    # languages under [inference.precision_note].
    PrecisionSpec(
        name="int4-g32",
        quantizes_embeddings=False,
        family="int",
        bits_per_weight=4.5,
        base_bits_per_weight=4.0,
        compute_precision="fp16",
        weight_only=True,
        aliases=("int4-group32", "w4a16-g32", "compressed-tensors-int4", "int4-qat"),
        source="moonshotai Kimi-K2.5 config.json quantization_config (num_bits 4, group_size 32, symmetric)",
    ),
    PrecisionSpec(
        name="nf4",
        quantizes_embeddings=False,
        family="int",
        bits_per_weight=4.127,
        base_bits_per_weight=4.0,
        compute_precision="bf16",
        weight_only=True,
        aliases=("bnb4", "bnb-nf4", "qlora", "4bit-nf4", "fp4-bnb"),
        note="bitsandbytes NF4, block 64 with double-quantised constants: 4 + 8/64 + 32/(64·256) "
        "= 4.127 bits/weight (QLoRA paper); computes in bf16",
        source="QLoRA, arXiv 2305.14314 §2",
    ),
    PrecisionSpec(
        name="mxfp4",
        quantizes_embeddings=False,
        family="float",
        bits_per_weight=4.25,
        base_bits_per_weight=4.25,
        compute_precision="fp4",
        weight_only=False,
        aliases=("mx-fp4", "fp4-mx"),
        note="OCP MX FP4: 32 E2M1 values + one 8-bit E8M0 scale = 4.25 bits/weight (gpt-oss experts); "
        "FP4 tensor cores on Blackwell, weight-only elsewhere",
        source="OCP Microscaling spec v1.0",
    ),
    PrecisionSpec(
        name="nvfp4",
        quantizes_embeddings=False,
        family="float",
        bits_per_weight=4.5,
        base_bits_per_weight=4.5,
        compute_precision="fp4",
        weight_only=False,
        aliases=("nv-fp4", "fp4"),
        note="NVIDIA NVFP4: 16 E2M1 values + one FP8 E4M3 scale = 4.5 bits/weight; Blackwell FP4 cores",
        source="NVIDIA NVFP4 format description",
    ),
    # GGUF: pure base types (file bpw from llama.cpp sizes where it publishes one).
    _g("F16", 16, None, 16, ("gguf-f16",)),
    _g("BF16", 16, None, 16, ("gguf-bf16",)),
    _g("Q8_0", 8.5, _file_bpw(7.96), 8.5, ("q8",), source=_QUANTIZE_SRC),
    _g("Q6_K", 6.5625, _file_bpw(6.14), 6.5625, ("q6",), source=_QUANTIZE_SRC),
    _g(
        "Q5_K_M",
        5.5,
        _file_bpw(5.33),
        5.5,
        ("Q5_K", "q5_k_m", "q5"),
        note="Q5_K mix: attn_v/ffn_down partly Q6_K, output Q6_K",
        source=_QUANTIZE_SRC,
    ),
    _g("Q5_K_S", 5.5, _file_bpw(5.21), 5.5, source=_QUANTIZE_SRC),
    _g("Q5_1", 6.0, _file_bpw(5.65), 6.0, source=_QUANTIZE_SRC),
    _g("Q5_0", 5.5, _file_bpw(5.21), 5.5, source=_QUANTIZE_SRC),
    _g(
        "Q4_K_M",
        4.5,
        _file_bpw(4.58),
        4.5,
        ("Q4_K", "q4", "q4km"),
        note="Q4_K mix: half of attn_v/ffn_down and output.weight in Q6_K; measured 4.84 bpw on "
        "Llama-2-7B (3.80 GiB) and 4.89–4.90 on Llama-3.1-8B (4.58 GiB)",
        source=_QUANTIZE_SRC,
    ),
    _g("Q4_K_S", 4.5, _file_bpw(4.37), 4.5, source=_QUANTIZE_SRC),
    _g("Q4_1", 5.0, _file_bpw(4.78), 5.0, source=_QUANTIZE_SRC),
    _g(
        "Q4_0",
        4.5,
        _file_bpw(4.34),
        4.5,
        note="base block 4.5 bpw; files are larger because output.weight stays Q6_K",
        source=_QUANTIZE_SRC,
    ),
    _g("IQ4_NL", 4.5, None, 4.5),
    _g("IQ4_XS", 4.25, None, 4.25),
    _g("Q3_K_L", 3.4375, _file_bpw(4.03), 3.4375, source=_QUANTIZE_SRC),
    _g("Q3_K_M", 3.4375, _file_bpw(3.74), 3.4375, ("Q3_K", "q3"), source=_QUANTIZE_SRC),
    _g("Q3_K_S", 3.4375, _file_bpw(3.41), 3.4375, source=_QUANTIZE_SRC),
    _g("IQ3_M", 3.4375, 3.66, 3.4375, note="llama.cpp quotes 3.66 bpw for the mix"),
    _g("IQ3_XXS", 3.0625, None, 3.0625),
    _g("Q2_K", 2.625, _file_bpw(2.96), 2.625, ("q2",), source=_QUANTIZE_SRC),
    _g("IQ2_M", 2.5625, 2.7, 2.5625, note="llama.cpp quotes 2.7 bpw for the mix"),
    _g("IQ2_XS", 2.3125, None, 2.3125),
    _g("IQ2_XXS", 2.0625, None, 2.0625),
    _g("IQ1_S", 1.5625, None, 1.5625),
)

_KV_DTYPES: tuple[KVDtypeSpec, ...] = (
    KVDtypeSpec(name="fp32", bytes_per_element=4, aliases=("float32", "f32"), engines=("transformers", "llamacpp")),
    KVDtypeSpec(
        name="fp16",
        bytes_per_element=2,
        aliases=("float16", "f16", "half"),
        engines=("vllm", "sglang", "llamacpp", "transformers"),
    ),
    KVDtypeSpec(name="bf16", bytes_per_element=2, aliases=("bfloat16",),
                engines=("vllm", "sglang", "llamacpp", "transformers")),
    KVDtypeSpec(
        name="fp8",
        bytes_per_element=1,
        aliases=("fp8_e4m3", "fp8_e5m2", "e4m3", "e5m2", "float8"),
        engines=("vllm", "sglang"),
        note="vLLM / SGLang --kv-cache-dtype fp8; scales per tensor are negligible",
    ),
    KVDtypeSpec(
        name="q8_0",
        bytes_per_element=34 / 32,
        aliases=("q8",),
        engines=("llamacpp",),
        note="llama.cpp -ctk/-ctv q8_0: 32 int8 values + one fp16 scale = 34 B per 32",
    ),
    KVDtypeSpec(name="q5_1", bytes_per_element=24 / 32, engines=("llamacpp",)),
    KVDtypeSpec(name="q5_0", bytes_per_element=22 / 32, engines=("llamacpp",)),
    KVDtypeSpec(name="q4_1", bytes_per_element=20 / 32, engines=("llamacpp",)),
    KVDtypeSpec(
        name="q4_0",
        bytes_per_element=18 / 32,
        aliases=("q4",),
        engines=("llamacpp",),
        note="llama.cpp q4_0 cache: 32 4-bit values + one fp16 scale = 18 B per 32 (V needs flash attention)",
    ),
    KVDtypeSpec(name="iq4_nl", bytes_per_element=18 / 32, engines=("llamacpp",)),
)


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "")


class _Named(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...


_Spec = TypeVar("_Spec", bound=_Named)


def _index(entries: tuple[_Spec, ...]) -> dict[str, _Spec]:
    out: dict[str, _Spec] = {}
    for e in entries:
        for n in (e.name, *e.aliases):
            out.setdefault(_key(n), e)
    return out


_P_INDEX = _index(_PRECISIONS)
_KV_INDEX = _index(_KV_DTYPES)


def _unknown(kind: str, name: str, index: Mapping[str, _Named], canonical: list[str]) -> ToolError:
    close = difflib.get_close_matches(_key(name[:200]), list(index), n=4, cutoff=0.5)
    names = list(dict.fromkeys(index[c].name for c in close))
    shown = name if len(name) <= 60 else name[:57] + "…"  # a 10 KB name is not echoed whole
    return ToolError(note("error.unknown_known", kind=note(f"error.kind.{kind}"), name=repr(shown),
                          known=", ".join(canonical)), suggestions=names)


def resolve_precision(name: str) -> PrecisionSpec:
    """Precision by name or alias (case-insensitive, '-' = '_'); ToolError with suggestions if unknown."""
    spec = _P_INDEX.get(_key(name))
    if spec is None:
        raise _unknown("precision", name, _P_INDEX, [p.name for p in _PRECISIONS])
    return spec


# Catalog ``native_dtype`` values that name a family rather than one storage layout: the layout the
# published checkpoints really use (knowledge.schema.Model.native_dtype).
_NATIVE_LAYOUT = {"int4": "int4-g32"}


def native_precision(native_dtype: str) -> str:
    """The precision name a catalog ``native_dtype`` is stored in ('int4' → 'int4-g32'; others unchanged)."""
    return _NATIVE_LAYOUT.get(native_dtype, native_dtype)


def bytes_per_param(precision: str) -> float:
    """Effective bytes per parameter of a whole model stored in ``precision``."""
    return resolve_precision(precision).bytes_per_param


def resolve_kv_dtype(name: str) -> KVDtypeSpec:
    """KV-cache dtype by name or alias; ToolError with suggestions if unknown."""
    spec = _KV_INDEX.get(_key(name))
    if spec is None:
        raise _unknown("kv_dtype", name, _KV_INDEX, [k.name for k in _KV_DTYPES])
    return spec


def kv_bytes_per_element(kv_dtype: str) -> float:
    """Bytes one cached K or V element costs in ``kv_dtype`` (q8_0 = 34/32, q4_0 = 18/32)."""
    return resolve_kv_dtype(kv_dtype).bytes_per_element


def all_precisions() -> tuple[PrecisionSpec, ...]:
    """Every known weight precision, in table order."""
    return _PRECISIONS


def all_kv_dtypes() -> tuple[KVDtypeSpec, ...]:
    return _KV_DTYPES


def gguf_type_precision(ftype_name: str) -> PrecisionSpec | None:
    """Our spec for a GGUF ``general.file_type`` name such as 'MOSTLY_Q4_K_M'; None if not tabled."""
    name = ftype_name.upper().removeprefix("MOSTLY_").removeprefix("ALL_")
    spec = _P_INDEX.get(_key(name))
    return spec if spec is not None and spec.family == "gguf" else None
