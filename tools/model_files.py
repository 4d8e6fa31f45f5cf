"""Exact model sizes from the user's own files, offline: GGUF headers and Hugging Face checkpoints.

* GGUF: the header is walked with ``struct`` (tensor data is never read), with ggml type sizes
  from the ``gguf`` package. Tensor bytes are exact; architecture numbers come from the
  ``{arch}.*`` keys.
* Hugging Face: ``config.json`` for the architecture; weight bytes from
  ``model.safetensors.index.json`` (``metadata.total_size``) and, when the shards are present,
  from their headers (8-byte little-endian length + JSON with dtype and shape of each tensor).
"""

from __future__ import annotations

import json
import re
import struct
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from knowledge.paths import expand_user, regular_file
from knowledge.schema import AttentionKind
from tools.errors import ToolError
from tools.modelspec import ModelSpec, estimate_params
from tools.precision import gguf_type_precision
from tools.result import Note, note

# Architectures whose GGUF files do not store the sliding-window layer pattern; llama.cpp
# hard-codes it (src/llama-model.cpp): one global layer every N.
_SWA_PERIOD = {"gemma2": 2, "gemma3": 6, "gemma3n": 5, "cohere2": 4, "gpt-oss": 2, "llama4": 4}

_ST_DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "U16": 2,
    "U32": 4,
    "U64": 8,
}
_ST_DTYPE_NAME = {
    "F32": "fp32",
    "F16": "fp16",
    "BF16": "bf16",
    "F8_E4M3": "fp8",
    "F8_E5M2": "fp8",
    "I8": "int8",
}


def spec_from_path(path: Path) -> ModelSpec:
    """ModelSpec from a .gguf file, a config.json, or a folder holding either."""
    path = expand_user(path)
    if not path.exists():
        raise ToolError(note("error.files.no_such_path", path=str(path)),
                        suggestions=[note("error.hint.catalog_name")])
    if path.is_dir():
        ggufs = sorted(path.glob("*.gguf"))
        if (path / "config.json").exists():
            return spec_from_hf(path / "config.json")
        if ggufs:
            return spec_from_gguf(ggufs[0])
        raise ToolError(note("error.files.empty_folder", path=str(path)))
    if path.suffix.lower() not in (".gguf", ".json"):
        raise ToolError(note("error.files.unexpected_file", file=path.name))
    try:
        regular_file(path)  # a named pipe or a device would block or never end
    except OSError as exc:
        raise ToolError(note("error.files.not_regular", file=path.name)) from exc
    return spec_from_gguf(path) if path.suffix.lower() == ".gguf" else spec_from_hf(path)


# --- GGUF ----------------------------------------------------------------------------------


class _GGUFHeader:
    """Metadata and tensor table of one GGUF file, read without touching tensor data.

    The ``gguf`` package's ``GGUFReader`` materialises every array (a 262k-token vocabulary
    takes over a minute), so the header is walked here with ``struct``; type sizes and enums
    still come from the ``gguf`` package. Big arrays keep only their length.
    """

    _SCALARS: ClassVar[dict[int, str]] = {
        0: "<B",
        1: "<b",
        2: "<H",
        3: "<h",
        4: "<I",
        5: "<i",
        6: "<f",
        7: "<?",
        10: "<Q",
        11: "<q",
        12: "<d",
    }
    _MAX_ARRAY = 65_536  # numeric arrays longer than this keep only their length

    def __init__(self, path: Path):
        import mmap

        self.kv: dict[str, Any] = {}
        self.tensors: list[tuple[str, str, int, int]] = []  # name, type, numel, bytes
        with open(path, "rb") as fh:
            try:
                self._buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError as exc:  # empty file
                raise ToolError(note("error.files.gguf_empty", file=path.name)) from exc
        try:
            self._parse(path)
        except (struct.error, UnicodeDecodeError, IndexError) as exc:
            raise ToolError(note("error.files.gguf_corrupt", file=path.name, detail=str(exc))) from exc
        finally:
            self._buf.close()

    def _parse(self, path: Path) -> None:
        from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

        buf = self._buf
        if buf[:4] != b"GGUF":
            raise ToolError(note("error.files.gguf_bad_magic", file=path.name))
        (version,) = struct.unpack_from("<I", buf, 4)
        if version not in (2, 3):
            raise ToolError(note("error.files.gguf_version", file=path.name, version=version))
        n_tensors, n_kv = struct.unpack_from("<QQ", buf, 8)
        self.pos = 24
        for _ in range(n_kv):
            key = self._string()
            (vtype,) = struct.unpack_from("<I", buf, self.pos)
            self.pos += 4
            self.kv[key] = self._value(vtype)
        for _ in range(n_tensors):
            name = self._string()
            (n_dims,) = struct.unpack_from("<I", buf, self.pos)
            dims = struct.unpack_from(f"<{n_dims}Q", buf, self.pos + 4)
            ttype, _offset = struct.unpack_from("<IQ", buf, self.pos + 4 + 8 * n_dims)
            self.pos += 4 + 8 * n_dims + 12
            numel = 1
            for d in dims:
                numel *= int(d)
            try:
                qt = GGMLQuantizationType(ttype)
                block, size = GGML_QUANT_SIZES[qt]
            except (ValueError, KeyError) as exc:
                raise ToolError(note("error.files.gguf_tensor_type", file=path.name, tensor=name, type=ttype)) from exc
            self.tensors.append((name, qt.name, numel, numel // block * size))

    def _string(self) -> str:
        (n,) = struct.unpack_from("<Q", self._buf, self.pos)
        text = self._buf[self.pos + 8 : self.pos + 8 + n].decode("utf-8", errors="replace")
        self.pos += 8 + n
        return text

    def _value(self, vtype: int) -> Any:
        buf = self._buf
        if vtype == 8:
            return self._string()
        if vtype in self._SCALARS:
            fmt = self._SCALARS[vtype]
            (v,) = struct.unpack_from(fmt, buf, self.pos)
            self.pos += struct.calcsize(fmt)
            return v
        if vtype == 9:
            etype, count = struct.unpack_from("<IQ", buf, self.pos)
            self.pos += 12
            if etype == 8:  # strings: walk the lengths, keep the count
                for _ in range(count):
                    (n,) = struct.unpack_from("<Q", buf, self.pos)
                    self.pos += 8 + n
                return _ArrayLen(count)
            if etype in self._SCALARS:
                fmt = self._SCALARS[etype]
                width = struct.calcsize(fmt)
                if count > self._MAX_ARRAY:
                    self.pos += width * count
                    return _ArrayLen(count)
                values = list(struct.unpack_from(f"<{count}{fmt[1]}", buf, self.pos))
                self.pos += width * count
                return values
            return [self._value(etype) for _ in range(count)]  # nested arrays (rare)
        raise ToolError(note("error.files.gguf_value_type", type=vtype))


class _ArrayLen(int):
    """Stands for a long array of which only the length was kept."""


def _scalar(value: Any) -> Any:
    """Per-layer arrays (e.g. head_count_kv) → their maximum; scalars unchanged."""
    if isinstance(value, list):
        nums = [v for v in value if isinstance(v, int | float)]
        return max(nums) if nums else None
    if isinstance(value, _ArrayLen):
        return None
    return value


def _split_siblings(path: Path) -> list[Path]:
    m = re.match(r"^(.*)-(\d{5})-of-(\d{5})\.gguf$", path.name)
    if not m:
        return [path]
    stem, count = m.group(1), int(m.group(3))
    return [path.with_name(f"{stem}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1)]


def spec_from_gguf(path: Path) -> ModelSpec:
    """Exact tensor sizes and architecture from a GGUF header (all shards of a split file)."""
    path = Path(path)
    try:
        header = _GGUFHeader(path)
    except OSError as exc:
        raise ToolError(note("error.files.cannot_read", file=path.name, detail=str(exc))) from exc
    meta = header.kv
    arch = str(meta.get("general.architecture") or "llama")
    notes: list[Note] = [note("inference.files.gguf_header", file=path.name)]
    headers = [header]
    siblings = _split_siblings(path)
    if len(siblings) > 1:
        present = [p for p in siblings if p.exists() and p != path]
        headers += [_GGUFHeader(p) for p in present]
        if len(present) + 1 < len(siblings):
            notes.append(note("inference.files.gguf_split_partial", found=len(present) + 1, total=len(siblings)))

    def hp(key: str) -> Any:
        return meta.get(f"{arch}.{key}")

    total_bytes = 0
    total_params = 0
    expert_params = 0
    types: Counter[str] = Counter()
    layer_bytes: dict[int, int] = {}
    emb_bytes = out_bytes = None
    emb_rows = None
    for h in headers:
        for t_name, t_type, n_el, n_bytes in h.tensors:
            total_bytes += n_bytes
            total_params += n_el
            types[t_type] += 1
            if "_exps" in t_name:
                expert_params += n_el
            m = re.match(r"^blk\.(\d+)\.", t_name)
            if m:
                layer_bytes[int(m.group(1))] = layer_bytes.get(int(m.group(1)), 0) + n_bytes
            elif t_name == "token_embd.weight":
                emb_bytes = n_bytes
                emb_rows = n_el
            elif t_name == "output.weight":
                out_bytes = n_bytes
    if total_params == 0:
        raise ToolError(note("error.files.gguf_no_tensors", file=path.name))

    layers = int(_scalar(hp("block_count")) or (max(layer_bytes) + 1 if layer_bytes else 1))
    hidden = int(_scalar(hp("embedding_length")) or 1)
    head_count = hp("attention.head_count")
    heads = int(_scalar(head_count) or 1)
    kv_raw = hp("attention.head_count_kv")
    kv = int(_scalar(kv_raw) or heads)
    key_len = _scalar(hp("attention.key_length"))
    val_len = _scalar(hp("attention.value_length"))
    head_dim = int(key_len or (hidden // heads if heads else 1))
    vocab = _scalar(hp("vocab_size"))
    if vocab is None:
        tokens = meta.get("tokenizer.ggml.tokens")
        vocab = int(tokens) if isinstance(tokens, _ArrayLen) else (len(tokens) if tokens else None)
    if vocab is None and emb_rows:
        vocab = emb_rows // max(1, int(_scalar(hp("embedding_length")) or 1))
    ctx = _scalar(hp("context_length"))
    n_exp = _scalar(hp("expert_count"))
    k_exp = _scalar(hp("expert_used_count"))
    window = _scalar(hp("attention.sliding_window"))
    kv_lora = _scalar(hp("attention.kv_lora_rank"))
    rope_dim = _scalar(hp("rope.dimension_count"))

    kind = AttentionKind.mha if kv == heads else (AttentionKind.mqa if kv == 1 else AttentionKind.gqa)
    full_layers = None
    extra: dict[str, Any] = {}
    if kv_lora:
        kind = AttentionKind.mla
        extra = {"kv_lora_rank": int(kv_lora), "qk_rope_head_dim": int(rope_dim or 64)}
    elif isinstance(kv_raw, list) and any(v == 0 for v in kv_raw):
        kind = AttentionKind.hybrid  # layers with no KV heads are recurrent / SSM layers
        full_layers = sum(1 for v in kv_raw if v)
        notes.append(note("inference.files.gguf_recurrent", recurrent=layers - full_layers, layers=layers))
    elif window:
        pattern = hp("attention.sliding_window_pattern")
        if isinstance(pattern, list) and pattern:
            full_layers = sum(1 for v in pattern if not v)
        elif arch in _SWA_PERIOD:
            full_layers = layers // _SWA_PERIOD[arch]
            notes.append(note("inference.files.gguf_swa_pattern", arch=arch, period=_SWA_PERIOD[arch]))
        else:
            full_layers = 0
        kind = AttentionKind.sliding
        extra = {"sliding_window": int(window)}
    if kind in (AttentionKind.sliding, AttentionKind.hybrid):
        extra["full_attention_layers"] = full_layers

    ftype = meta.get("general.file_type")
    precision = None
    if ftype is not None:
        try:
            from gguf import LlamaFileType

            ft_name = LlamaFileType(int(ftype)).name
            spec = gguf_type_precision(ft_name)
            precision = spec.name if spec else ft_name.removeprefix("MOSTLY_")
        except ValueError:
            precision = None
    active = total_params
    if n_exp and k_exp and expert_params:
        active = total_params - round(expert_params * (1 - int(k_exp) / int(n_exp)))
    name = meta.get("general.name") or path.stem
    bpw = total_bytes * 8 / total_params
    notes.append(note("inference.files.gguf_bits", params_b=total_params / 1e9, bytes=total_bytes, bpw=bpw))
    return ModelSpec(
        name=str(name),
        source="gguf",
        params=total_params,
        active_params=active,
        layers=layers,
        hidden_size=hidden,
        intermediate_size=int(_scalar(hp("feed_forward_length")) or 0) or None,
        vocab_size=int(vocab or 1),
        max_context=int(ctx) if ctx else None,
        attention=kind,
        num_heads=heads,
        num_kv_heads=kv if heads % kv == 0 else heads,
        head_dim=head_dim,
        v_head_dim=int(val_len) if val_len and int(val_len) != head_dim else None,
        num_experts=int(n_exp) if n_exp and int(n_exp) >= 2 else None,
        experts_per_token=int(k_exp) if n_exp and k_exp else None,
        tie_word_embeddings=out_bytes is None,
        native_dtype="fp16",
        weight_bytes=total_bytes,
        weight_precision=precision,
        embedding_bytes=emb_bytes,
        output_bytes=out_bytes,
        layer_bytes=tuple(layer_bytes.get(i, 0) for i in range(layers)) if layer_bytes else None,
        tensor_types=dict(types),
        notes=tuple(notes),
        **extra,
    )


# --- Hugging Face config.json + safetensors ----------------------------------------------


def read_safetensors_header(path: Path) -> dict[str, Any]:
    """The JSON header of a .safetensors file: {tensor name: {dtype, shape, data_offsets}, __metadata__}."""
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            raise ToolError(note("error.files.safetensors_short", file=path.name))
        (n,) = struct.unpack("<Q", raw)
        if n <= 0 or n > 100_000_000:
            raise ToolError(note("error.files.safetensors_header_length", file=path.name, length=n))
        try:
            return json.loads(fh.read(n))
        except json.JSONDecodeError as exc:
            raise ToolError(note("error.files.safetensors_bad_json", file=path.name, detail=str(exc))) from exc


def _load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ToolError(note("error.files.json_unreadable", file=path.name, detail=str(exc))) from exc
    if not isinstance(data, dict):
        raise ToolError(note("error.files.json_not_object", file=path.name))
    return data


def _first(cfg: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return None


def _precision_of(cfg: dict[str, Any], dtype_bytes: Counter[str]) -> str:
    q = cfg.get("quantization_config") or {}
    method = str(q.get("quant_method", "")).lower()
    if method in ("awq", "gptq", "marlin", "awq_marlin", "gptq_marlin") and int(q.get("bits", 4)) == 4:
        return "int4"
    if method == "bitsandbytes":
        return "nf4" if q.get("load_in_4bit") else "int8"
    if method in ("fp8", "fbgemm_fp8"):
        return "fp8"
    if method == "mxfp4":
        return "mxfp4"
    if dtype_bytes:
        top = dtype_bytes.most_common(1)[0][0]
        if top in _ST_DTYPE_NAME:
            return _ST_DTYPE_NAME[top]
    dtype = str(_first(cfg, "torch_dtype", "dtype") or "bfloat16")
    return {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}.get(dtype, "bf16")


def _hf_attention(cfg: dict[str, Any], layers: int, notes: list[Note]) -> dict[str, Any]:
    """Attention kind and its extra numbers from config.json keys."""
    model_type = str(cfg.get("model_type", ""))
    if cfg.get("kv_lora_rank"):
        return {
            "attention": AttentionKind.mla,
            "kv_lora_rank": int(cfg["kv_lora_rank"]),
            "qk_rope_head_dim": int(cfg.get("qk_rope_head_dim") or 64),
        }
    layer_types = cfg.get("layer_types")
    window = cfg.get("sliding_window") if cfg.get("use_sliding_window", True) is not False else None
    if isinstance(layer_types, list) and layer_types:
        full = sum(1 for t in layer_types if str(t) in ("full_attention", "attention", "global"))
        sliding = sum(1 for t in layer_types if "sliding" in str(t) or "local" in str(t))
        linear = len(layer_types) - full - sliding
        if linear > 0:
            state = _linear_state_bytes(cfg, linear)
            if state is None:
                notes.append(note("inference.files.hf_linear_state", linear=linear))
            return {
                "attention": AttentionKind.hybrid,
                "full_attention_layers": full,
                "linear_state_bytes_per_seq": state,
            }
        if sliding and window:
            return {
                "attention": AttentionKind.sliding,
                "sliding_window": int(window),
                "full_attention_layers": full,
            }
    if window:
        period = cfg.get("sliding_window_pattern")
        if isinstance(period, int) and period > 0:
            full = layers // period
        elif model_type in ("gemma2",):
            full = layers // 2
        elif model_type.startswith("gemma3"):
            full = layers // 6
        else:
            full = 0  # Mistral-7B-v0.1 style: every layer slides
        return {
            "attention": AttentionKind.sliding,
            "sliding_window": int(window),
            "full_attention_layers": full,
        }
    return {}


def _linear_state_bytes(cfg: dict[str, Any], linear_layers: int) -> int | None:
    """Gated-DeltaNet style state (Qwen3-Next): heads_v × d_k × d_v + conv state, bf16, per layer."""
    vh, kd, vd = (
        cfg.get("linear_num_value_heads"),
        cfg.get("linear_key_head_dim"),
        cfg.get("linear_value_head_dim"),
    )
    kh, conv = cfg.get("linear_num_key_heads"), cfg.get("linear_conv_kernel_dim")
    if not (vh and kd and vd):
        return None
    recurrent = vh * kd * vd
    conv_state = (conv - 1) * (2 * (kh or vh) * kd + vh * vd) if conv else 0
    return int(linear_layers * (recurrent + conv_state) * 2)


def spec_from_hf(config_path: Path) -> ModelSpec:
    """Architecture from config.json; exact weight bytes from safetensors index/headers beside it."""
    config_path = Path(config_path)
    root = config_path.parent
    full_cfg = _load_json(config_path)
    cfg = full_cfg.get("text_config") or full_cfg.get("llm_config") or full_cfg
    if cfg is not full_cfg:
        for k in ("quantization_config", "torch_dtype", "tie_word_embeddings"):
            cfg.setdefault(k, full_cfg.get(k))
    notes: list[Note] = [note("inference.files.hf_config", file=config_path.name)]
    layers = _first(cfg, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    hidden = _first(cfg, "hidden_size", "n_embd", "d_model", "dim")
    heads = _first(cfg, "num_attention_heads", "n_head", "n_heads", "num_heads")
    if not (layers and hidden and heads):
        raise ToolError(note("error.files.config_incomplete", file=config_path.name))
    layers, hidden, heads = int(layers), int(hidden), int(heads)
    kv = _first(cfg, "num_key_value_heads", "n_head_kv", "num_kv_heads")
    if kv is None and cfg.get("multi_query"):
        kv = 1
    kv = int(kv or heads)
    head_dim = int(cfg.get("head_dim") or hidden // heads)
    vocab = int(_first(cfg, "vocab_size", "padded_vocab_size") or 32000)
    inter = _first(cfg, "intermediate_size", "ffn_dim", "n_inner")
    n_exp = _first(cfg, "num_local_experts", "n_routed_experts", "num_experts")
    k_exp = _first(cfg, "num_experts_per_tok", "moe_topk", "top_k")
    tie = bool(cfg.get("tie_word_embeddings", False))
    attn = _hf_attention(cfg, layers, notes)
    if not attn:
        attn = {
            "attention": AttentionKind.mha if kv == heads else (AttentionKind.mqa if kv == 1 else AttentionKind.gqa)
        }

    # Exact bytes: shard headers beat the index total, which beats an estimate from the config.
    dtype_bytes: Counter[str] = Counter()
    dtype_counts: Counter[str] = Counter()
    weight_bytes = None
    params = None
    expert_params = 0
    emb_bytes = out_bytes = None
    index_path = root / "model.safetensors.index.json"
    shard_names: list[str] = []
    if index_path.exists():
        index = _load_json(index_path)
        total = (index.get("metadata") or {}).get("total_size")
        if total:
            weight_bytes = int(total)
            notes.append(note("inference.files.hf_index_total", bytes=weight_bytes, file=index_path.name))
        shard_names = sorted(set((index.get("weight_map") or {}).values()))
    elif (root / "model.safetensors").exists():
        shard_names = ["model.safetensors"]
    shards = [root / s for s in shard_names if (root / s).exists()]
    if shards and len(shards) == len(shard_names):
        numel_total = 0
        header_bytes = 0
        for shard in shards:
            for name, info in read_safetensors_header(shard).items():
                if name == "__metadata__" or not isinstance(info, dict):
                    continue
                n = 1
                for d in info.get("shape", []):
                    n *= int(d)
                start, end = info.get("data_offsets", [0, 0])
                header_bytes += int(end) - int(start)
                dtype_bytes[str(info.get("dtype"))] += int(end) - int(start)
                dtype_counts[str(info.get("dtype"))] += 1
                numel_total += n
                if ".experts." in name:
                    expert_params += n
                if name.endswith("embed_tokens.weight") or name.endswith("wte.weight"):
                    emb_bytes = int(end) - int(start)
                elif name.endswith("lm_head.weight"):
                    out_bytes = int(end) - int(start)
        weight_bytes = header_bytes
        params = numel_total
        notes.append(note("inference.files.hf_headers", bytes=header_bytes, shards=len(shards)))
    elif shard_names:
        notes.append(note("inference.files.hf_shards_missing", found=len(shards), total=len(shard_names)))

    precision = _precision_of(cfg, dtype_bytes)
    quantised = precision in ("int4", "nf4", "mxfp4") or bool(cfg.get("quantization_config"))
    est_total, est_active = estimate_params(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        intermediate=int(inter or 4 * hidden),
        vocab=vocab,
        tie_embeddings=tie,
        num_experts=int(n_exp) if n_exp else None,
        experts_per_token=int(k_exp) if k_exp else None,
        moe_intermediate=cfg.get("moe_intermediate_size"),
        shared_experts=int(cfg.get("n_shared_experts") or 0),
    )
    if params is None or quantised:
        # Packed int4 tensors count 8 weights per int32 element: the header numel undercounts.
        params = est_total
        notes.append(note("inference.files.hf_params_estimated", params_b=est_total / 1e9))
    active = params
    if n_exp and k_exp:
        if expert_params and not quantised:
            active = params - round(expert_params * (1 - int(k_exp) / int(n_exp)))
        else:
            active = round(params * est_active / est_total)
    ctx = _first(cfg, "max_position_embeddings", "n_positions", "max_seq_len", "seq_length")
    return ModelSpec(
        name=str(full_cfg.get("_name_or_path") or root.name or "local model"),
        source="hf",
        params=int(params),
        active_params=int(min(active, params)),
        layers=layers,
        hidden_size=hidden,
        intermediate_size=int(inter) if inter else None,
        vocab_size=vocab,
        max_context=int(ctx) if ctx else None,
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        v_head_dim=int(cfg["v_head_dim"]) if cfg.get("v_head_dim") and not cfg.get("kv_lora_rank") else None,
        num_experts=int(n_exp) if n_exp and int(n_exp) >= 2 else None,
        experts_per_token=int(k_exp) if n_exp and k_exp else None,
        tie_word_embeddings=tie,
        native_dtype=precision if precision in ("fp32", "bf16", "fp16", "fp8") else "bf16",
        weight_bytes=weight_bytes,
        weight_precision=precision,
        embedding_bytes=emb_bytes,
        output_bytes=out_bytes,
        tensor_types=dict(dtype_counts),
        notes=tuple(notes),
        **attn,
    )
