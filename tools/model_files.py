"""Exact model sizes from the user's own files, offline: GGUF headers and Hugging Face checkpoints.

* GGUF: the header is walked with ``struct`` (tensor data is never read), with ggml type sizes
  from the ``gguf`` package. Tensor bytes are exact; architecture numbers come from the
  ``{arch}.*`` keys.
* Hugging Face: ``config.json`` for the architecture; weight bytes from
  ``model.safetensors.index.json`` (``metadata.total_size``) and, when the shards are present,
  from their headers (8-byte little-endian length + JSON with dtype and shape of each tensor).
"""

from __future__ import annotations

import logging
import re
import struct
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from knowledge.bounded import BoundsError, parse, read
from knowledge.paths import expand_user, regular_file
from knowledge.schema import AttentionKind
from tools.errors import ToolError
from tools.modelspec import SPEC_LIMITS, ModelSpec, arch_number, estimate_params
from tools.precision import gguf_type_precision
from tools.result import Note, note

log = logging.getLogger(__name__)

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
            path = path / "config.json"
        elif ggufs:
            path = ggufs[0]
        else:
            raise ToolError(note("error.files.empty_folder", path=str(path)))
    if path.suffix.lower() not in (".gguf", ".json"):
        raise ToolError(note("error.files.unexpected_file", file=path.name))
    try:
        regular_file(path)  # a named pipe or a device would block or never end
    except OSError as exc:
        raise ToolError(note("error.files.not_regular", file=path.name)) from exc
    try:
        return spec_from_gguf(path) if path.suffix.lower() == ".gguf" else spec_from_hf(path)
    except ToolError:
        raise
    except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError, RecursionError, MemoryError) as exc:
        # a crafted file the checks below did not foresee: one line naming the file, never a traceback
        log.debug("unusable model file %s", path, exc_info=True)
        raise ToolError(note("error.files.unusable", file=path.name, detail=type(exc).__name__)) from None


def _spec(file: str, **fields: Any) -> ModelSpec:
    """ModelSpec(**fields); a number outside its range names the file and the field."""
    try:
        return ModelSpec(**fields)
    except ValidationError as exc:
        bad = next((e for e in exc.errors() if e["type"] in _RANGE_ERRORS and e["loc"]), None)
        if bad is None:
            raise
        field = str(bad["loc"][0])
        raise ToolError(note("error.spec.arch_number", name=f"{file}: {field}", minimum=0,
                             maximum=SPEC_LIMITS.get(field, SPEC_LIMITS["params"]),
                             value=repr(bad.get("input"))[:40])) from None


_RANGE_ERRORS = {"less_than_equal", "greater_than_equal", "greater_than", "less_than"}
_MAX_NESTING = 8  # GGUF arrays of arrays: real files nest one level
MAX_JSON_BYTES = 64_000_000  # the largest index.json (a 1T-parameter MoE's ~140k tensors) is ~15 MB


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
        except (struct.error, UnicodeDecodeError, IndexError, OverflowError, MemoryError) as exc:
            raise ToolError(note("error.files.gguf_corrupt", file=path.name, detail=str(exc)[:200])) from exc
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

    def _value(self, vtype: int, depth: int = 0) -> Any:
        buf = self._buf
        if depth > _MAX_NESTING:
            raise struct.error(f"arrays nested more than {_MAX_NESTING} deep")
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
            if count > self._MAX_ARRAY:
                raise struct.error(f"a nested array of {count} entries")
            return [self._value(etype, depth + 1) for _ in range(count)]  # nested arrays (rare)
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

    def num(key: str, field: str) -> int | None:
        """``{arch}.{key}`` (a per-layer array: its largest entry) as a whole number within its limit."""
        return arch_number(field, _scalar(hp(key)), 0, label=f"{path.name}: {arch}.{key}")

    if layer_bytes:
        arch_number("layers", max(layer_bytes) + 1, label=f"{path.name}: blk.{max(layer_bytes)} tensors")
    layers = num("block_count", "layers") or (max(layer_bytes) + 1 if layer_bytes else 1)
    hidden = num("embedding_length", "hidden_size") or 1
    heads = num("attention.head_count", "num_heads") or 1
    kv_raw = hp("attention.head_count_kv")
    kv = num("attention.head_count_kv", "num_kv_heads") or heads
    key_len = num("attention.key_length", "head_dim")
    val_len = num("attention.value_length", "v_head_dim")
    head_dim = key_len or (hidden // heads if heads else 1)
    vocab = num("vocab_size", "vocab_size")
    if vocab is None:
        tokens = meta.get("tokenizer.ggml.tokens")
        vocab = int(tokens) if isinstance(tokens, _ArrayLen) else (len(tokens) if isinstance(tokens, list) else None)
    if vocab is None and emb_rows:
        vocab = emb_rows // max(1, hidden)
    vocab = arch_number("vocab_size", vocab, 0, label=f"{path.name}: vocabulary")
    ctx = num("context_length", "max_context")
    n_exp = num("expert_count", "num_experts")
    k_exp = num("expert_used_count", "experts_per_token")
    window = num("attention.sliding_window", "sliding_window")
    kv_lora = num("attention.kv_lora_rank", "kv_lora_rank")
    rope_dim = num("rope.dimension_count", "qk_rope_head_dim")

    kind = AttentionKind.mha if kv == heads else (AttentionKind.mqa if kv == 1 else AttentionKind.gqa)
    full_layers = None
    extra: dict[str, Any] = {}
    if kv_lora:
        kind = AttentionKind.mla
        extra = {"kv_lora_rank": kv_lora, "qk_rope_head_dim": rope_dim or 64}
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
        extra = {"sliding_window": window}
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
        except (ValueError, TypeError, OverflowError):
            precision = None
    active = total_params
    if n_exp and k_exp and expert_params:
        active = total_params - round(expert_params * (1 - min(k_exp, n_exp) / n_exp))
    name = meta.get("general.name") or path.stem
    bpw = total_bytes * 8 / total_params
    notes.append(note("inference.files.gguf_bits", params_b=total_params / 1e9, bytes=total_bytes, bpw=bpw))
    return _spec(
        path.name,
        name=str(name),
        source="gguf",
        params=total_params,
        active_params=active,
        layers=layers,
        hidden_size=hidden,
        intermediate_size=num("feed_forward_length", "intermediate_size") or None,
        vocab_size=vocab or 1,
        max_context=ctx or None,
        attention=kind,
        num_heads=heads,
        num_kv_heads=kv if heads % kv == 0 else heads,
        head_dim=head_dim,
        v_head_dim=val_len if val_len and val_len != head_dim else None,
        num_experts=n_exp if n_exp and n_exp >= 2 else None,
        experts_per_token=k_exp if n_exp and k_exp else None,
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
            header = parse(fh.read(n).decode("utf-8"), "json", path.name)
        except (BoundsError, UnicodeDecodeError) as exc:
            detail = exc.problem if isinstance(exc, BoundsError) else str(exc)[:200]
            raise ToolError(note("error.files.safetensors_bad_json", file=path.name, detail=detail)) from exc
    if not isinstance(header, dict):
        raise ToolError(note("error.files.json_not_object", file=path.name))
    return header


def _load_json(path: Path) -> dict[str, Any]:
    """A config.json or index file: a JSON object within ``MAX_JSON_BYTES`` and the nesting bound."""
    try:
        data = read(path, "json", MAX_JSON_BYTES)
    except BoundsError as exc:
        raise ToolError(note("error.files.json_unreadable", file=path.name, detail=exc.problem)) from None
    if not isinstance(data, dict):
        raise ToolError(note("error.files.json_not_object", file=path.name))
    return data


def _section(data: dict[str, Any], key: str, file: str) -> dict[str, Any]:
    """``data[key]`` when it is a JSON object ({} when absent); ToolError when it is something else."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ToolError(note("error.files.json_field_type", file=file, field=key))
    return value


def _count(cfg: dict[str, Any], field: str, *keys: str, file: str) -> int | None:
    """The first of ``keys`` present in ``cfg`` as a whole number within ``SPEC_LIMITS[field]``."""
    for key in keys:
        if cfg.get(key) is not None:
            return arch_number(field, cfg[key], 0, label=f"{file}: {key}")
    return None


def _first(cfg: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return None


def _precision_of(cfg: dict[str, Any], dtype_bytes: Counter[str], file: str) -> str:
    q = _section(cfg, "quantization_config", file)
    method = str(q.get("quant_method", "")).lower()
    if method in ("awq", "gptq", "marlin", "awq_marlin", "gptq_marlin") and q.get("bits", 4) == 4:
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


def _hf_attention(cfg: dict[str, Any], layers: int, notes: list[Note], file: str) -> dict[str, Any]:
    """Attention kind and its extra numbers from config.json keys."""
    model_type = str(cfg.get("model_type", ""))
    if cfg.get("kv_lora_rank"):
        return {
            "attention": AttentionKind.mla,
            "kv_lora_rank": _count(cfg, "kv_lora_rank", "kv_lora_rank", file=file),
            "qk_rope_head_dim": _count(cfg, "qk_rope_head_dim", "qk_rope_head_dim", file=file) or 64,
        }
    layer_types = cfg.get("layer_types")
    window = (_count(cfg, "sliding_window", "sliding_window", file=file)
              if cfg.get("use_sliding_window", True) is not False else None)
    if isinstance(layer_types, list) and layer_types:
        full = sum(1 for t in layer_types if str(t) in ("full_attention", "attention", "global"))
        sliding = sum(1 for t in layer_types if "sliding" in str(t) or "local" in str(t))
        linear = len(layer_types) - full - sliding
        if linear > 0:
            state = _linear_state_bytes(cfg, linear, file)
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
                "sliding_window": window,
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
            "sliding_window": window,
            "full_attention_layers": full,
        }
    return {}


def _linear_state_bytes(cfg: dict[str, Any], linear_layers: int, file: str) -> int | None:
    """Gated-DeltaNet style state (Qwen3-Next): heads_v × d_k × d_v + conv state, bf16, per layer."""
    vh, kd, vd = (
        _count(cfg, "num_heads", "linear_num_value_heads", file=file),
        _count(cfg, "head_dim", "linear_key_head_dim", file=file),
        _count(cfg, "head_dim", "linear_value_head_dim", file=file),
    )
    kh = _count(cfg, "num_heads", "linear_num_key_heads", file=file)
    conv = _count(cfg, "head_dim", "linear_conv_kernel_dim", file=file)
    if not (vh and kd and vd):
        return None
    recurrent = vh * kd * vd
    conv_state = (conv - 1) * (2 * (kh or vh) * kd + vh * vd) if conv else 0
    return int(linear_layers * (recurrent + conv_state) * 2)


def _tensor_size(info: dict[str, Any], label: str) -> tuple[int, int]:
    """(elements, bytes) of one safetensors header entry, each number checked."""
    shape, offsets = info.get("shape", []), info.get("data_offsets", [0, 0])
    if not isinstance(shape, list) or not (isinstance(offsets, list) and len(offsets) == 2):
        raise ToolError(note("error.files.json_field_type", file=label, field="shape / data_offsets"))
    n = 1
    for d in shape:
        n *= arch_number("params", d, 0, label=f"{label} shape") or 0
    start, end = (arch_number("weight_bytes", x, 0, label=f"{label} data_offsets") or 0 for x in offsets)
    return arch_number("params", n, 0, label=f"{label} elements") or 0, max(end - start, 0)


def spec_from_hf(config_path: Path) -> ModelSpec:
    """Architecture from config.json; exact weight bytes from safetensors index/headers beside it."""
    config_path = Path(config_path)
    root = config_path.parent
    file = config_path.name
    full_cfg = _load_json(config_path)
    cfg = _section(full_cfg, "text_config", file) or _section(full_cfg, "llm_config", file) or full_cfg
    if cfg is not full_cfg:
        for k in ("quantization_config", "torch_dtype", "tie_word_embeddings"):
            cfg.setdefault(k, full_cfg.get(k))
    notes: list[Note] = [note("inference.files.hf_config", file=config_path.name)]
    layers = _count(cfg, "layers", "num_hidden_layers", "n_layer", "num_layers", "n_layers", file=file)
    hidden = _count(cfg, "hidden_size", "hidden_size", "n_embd", "d_model", "dim", file=file)
    heads = _count(cfg, "num_heads", "num_attention_heads", "n_head", "n_heads", "num_heads", file=file)
    if not (layers and hidden and heads):
        raise ToolError(note("error.files.config_incomplete", file=file))
    kv = _count(cfg, "num_kv_heads", "num_key_value_heads", "n_head_kv", "num_kv_heads", file=file)
    if kv is None and cfg.get("multi_query"):
        kv = 1
    kv = kv or heads
    head_dim = _count(cfg, "head_dim", "head_dim", file=file) or hidden // heads or 1
    vocab = _count(cfg, "vocab_size", "vocab_size", "padded_vocab_size", file=file) or 32000
    inter = _count(cfg, "intermediate_size", "intermediate_size", "ffn_dim", "n_inner", file=file)
    n_exp = _count(cfg, "num_experts", "num_local_experts", "n_routed_experts", "num_experts", file=file)
    k_exp = _count(cfg, "experts_per_token", "num_experts_per_tok", "moe_topk", "top_k", file=file)
    tie = bool(cfg.get("tie_word_embeddings", False))
    attn = _hf_attention(cfg, layers, notes, file)
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
        total = _count(_section(index, "metadata", index_path.name), "weight_bytes", "total_size",
                       file=index_path.name)
        if total:
            weight_bytes = total
            notes.append(note("inference.files.hf_index_total", bytes=weight_bytes, file=index_path.name))
        shard_names = sorted(set(_section(index, "weight_map", index_path.name).values()))
        for shard_name in shard_names:  # the files beside the index, nothing elsewhere
            if not isinstance(shard_name, str) or Path(shard_name).name != shard_name or shard_name in ("", ".", ".."):
                raise ToolError(note("error.files.bad_shard_name", file=index_path.name, name=repr(shard_name)[:60]))
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
                n, size = _tensor_size(info, f"{shard.name}: {name}")
                header_bytes += size
                dtype_bytes[str(info.get("dtype"))] += size
                dtype_counts[str(info.get("dtype"))] += 1
                numel_total += n
                if ".experts." in name:
                    expert_params += n
                if name.endswith("embed_tokens.weight") or name.endswith("wte.weight"):
                    emb_bytes = size
                elif name.endswith("lm_head.weight"):
                    out_bytes = size
        weight_bytes = header_bytes
        params = numel_total
        notes.append(note("inference.files.hf_headers", bytes=header_bytes, shards=len(shards)))
    elif shard_names:
        notes.append(note("inference.files.hf_shards_missing", found=len(shards), total=len(shard_names)))

    precision = _precision_of(cfg, dtype_bytes, file)
    quantised = precision in ("int4", "nf4", "mxfp4") or bool(cfg.get("quantization_config"))
    est_total, est_active = estimate_params(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        intermediate=inter or 4 * hidden,
        vocab=vocab,
        tie_embeddings=tie,
        num_experts=n_exp or None,
        experts_per_token=k_exp or None,
        moe_intermediate=_count(cfg, "intermediate_size", "moe_intermediate_size", file=file),
        shared_experts=_count(cfg, "num_experts", "n_shared_experts", file=file) or 0,
    )
    if params is None or quantised:
        # Packed int4 tensors count 8 weights per int32 element: the header numel undercounts.
        params = est_total
        notes.append(note("inference.files.hf_params_estimated", params_b=est_total / 1e9))
    active = params
    if n_exp and k_exp:
        if expert_params and not quantised:
            active = params - round(expert_params * (1 - min(k_exp, n_exp) / n_exp))
        else:
            active = round(params * est_active / est_total)
    ctx = _count(cfg, "max_context", "max_position_embeddings", "n_positions", "max_seq_len", "seq_length", file=file)
    return _spec(
        file,
        name=str(full_cfg.get("_name_or_path") or root.name or "local model"),
        source="hf",
        params=params,
        active_params=min(active, params),
        layers=layers,
        hidden_size=hidden,
        intermediate_size=int(inter) if inter else None,
        vocab_size=vocab,
        max_context=ctx or None,
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        v_head_dim=None if cfg.get("kv_lora_rank") else _count(cfg, "v_head_dim", "v_head_dim", file=file) or None,
        num_experts=n_exp if n_exp and n_exp >= 2 else None,
        experts_per_token=k_exp if n_exp and k_exp else None,
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
