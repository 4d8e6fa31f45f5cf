"""Property-based tests: every tool input model and the catalog name resolvers, fed random and extreme values.

The guarantee under test: whatever a user (or an LLM) types into a calculator, the answer is either
a clear domain error — pydantic ``ValidationError``, ``tools.errors.ToolError``,
``knowledge.UnknownNameError`` / ``AmbiguousNameError`` with a human message — or a result whose every
number (walked recursively through ``model_dump``) is finite and, except for the few fields that are
signed by definition (headroom, which is negative when short), not negative.

Profiles (``GPU_ADVISOR_HYPOTHESIS``): ``ci`` (default when ``CI=true``: derandomized, so CI is
reproducible), ``dev`` (the default elsewhere: random, with Hypothesis's example database) and
``thorough`` (ten times the examples, for a local soak).
"""

from __future__ import annotations

import math
import os
import re
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, currently_in_test_context, given, settings
from hypothesis import event as _hypothesis_event
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from knowledge import AmbiguousNameError, UnknownNameError, load_catalog
from knowledge.messages import render
from knowledge.schema import GPU
from tools.compat import BuildInput, check_build
from tools.errors import ToolError
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.modelspec import ModelSpec
from tools.perf import (
    DecodeInput,
    PrefillInput,
    ServingInput,
    estimate_decode,
    estimate_prefill,
    estimate_serving,
)
from tools.precision import all_kv_dtypes, all_precisions
from tools.recommend import RecommendInput, recommend
from tools.scientific import ScientificInput, estimate_fp64
from tools.training_memory import TrainingMemoryInput, estimate_training_memory
from tools.training_time import TrainingTimeInput, estimate_training_time

# ---------------------------------------------------------------------------------------------- profiles
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("gpu-advisor-ci", derandomize=True, database=None, print_blob=True, **_COMMON)
settings.register_profile("gpu-advisor-dev", **_COMMON)
settings.register_profile("gpu-advisor-thorough", **_COMMON)
_PROFILE = os.environ.get("GPU_ADVISOR_HYPOTHESIS") or ("ci" if os.environ.get("CI") else "dev")
_SCALE = 10 if _PROFILE == "thorough" else 1


def event(label: str) -> None:
    """Record a Hypothesis event (shown with --hypothesis-show-statistics); a no-op in plain tests."""
    if currently_in_test_context():
        _hypothesis_event(label)


def examples(n: int) -> settings:
    """Settings for one property: the chosen profile with ``n`` examples (× 10 when thorough)."""
    return settings(settings.get_profile(f"gpu-advisor-{_PROFILE}"), max_examples=n * _SCALE)


# ---------------------------------------------------------------------------------------------- checks
DOMAIN_ERRORS = (ValidationError, ToolError, UnknownNameError, AmbiguousNameError)
TOOL_ERRORS = (ToolError, UnknownNameError, AmbiguousNameError)
# Models a tool builds straight from the user's numbers (a custom model's heads and KV heads): their
# ValidationError is about the user's input. Any other model failing inside a tool is an internal bug.
USER_BUILT_MODELS = {"ModelSpec"}

# Leaf fields that are signed by definition: headroom ("negative when short") and the KV budget (what is
# left for the KV cache after weights and activations: negative when those alone do not fit).
SIGNED_FIELDS = {"headroom_bytes", "kv_budget_bytes"}
_NUMBER_WORD = re.compile(r"(?<![\w.])(nan|[-+]?inf)(?![\w])", re.IGNORECASE)


def bad_numbers(obj: Any, path: str = "result") -> list[str]:
    """Every NaN, infinite or (outside SIGNED_FIELDS) negative number in a dumped result, by path."""
    found: list[str] = []
    if isinstance(obj, bool) or obj is None:
        return found
    if isinstance(obj, int | float):
        leaf = path.rsplit(".", 1)[-1].split("[", 1)[0]
        if (isinstance(obj, float) and not math.isfinite(obj)) or (obj < 0 and leaf not in SIGNED_FIELDS):
            found.append(f"{path} = {obj}")
    elif isinstance(obj, str):
        if _NUMBER_WORD.search(obj):
            found.append(f"{path} contains {_NUMBER_WORD.search(obj).group(0)!r}: {obj[:120]!r}")
    elif isinstance(obj, dict):
        for key, value in obj.items():
            found += bad_numbers(value, f"{path}.{key}")
    elif isinstance(obj, list | tuple):
        for i, value in enumerate(obj):
            found += bad_numbers(value, f"{path}[{i}]")
    return found


def assert_human_error(exc: BaseException) -> None:
    """A domain error a person can read: a short, non-empty message without a traceback."""
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        assert errors, "ValidationError without errors"
        for err in errors:
            assert str(err.get("msg", "")).strip(), f"validation error without a message: {err}"
        return
    message = str(exc)
    assert message.strip(), f"{type(exc).__name__} with an empty message"
    assert "Traceback" not in message
    assert len(message) < 2000, f"{type(exc).__name__} message is {len(message)} characters long"


def _why(exc: BaseException) -> str:
    detail = exc.errors()[0]["loc"] if isinstance(exc, ValidationError) else str(exc)[:60]
    return f"{type(exc).__name__}: {detail}" if os.environ.get("GPU_ADVISOR_HYPOTHESIS_WHY") else type(exc).__name__


def outcome(call: Any, allowed: tuple[type[BaseException], ...] = DOMAIN_ERRORS) -> BaseModel | None:
    """Run ``call``; a domain error is fine (checked for a readable message), anything else fails the test."""
    try:
        result = call()
    except allowed as exc:
        assert_human_error(exc)
        event(f"rejected: {_why(exc)}")
        return None
    event("result")
    assert isinstance(result, BaseModel)
    problems = bad_numbers(result.model_dump(mode="python"))
    assert not problems, "bad numbers in the result:\n" + "\n".join(problems[:10])
    return result


# ---------------------------------------------------------------------------------------------- strategies
NAN, INF = float("nan"), float("inf")
EXTREME_NUMBERS = [0, -1, -0.0, 1, 1e-300, 1e30, -1e30, NAN, INF, -INF, 2**31, 2**63, 10**30, 0.5, 1.5]

junk_text = st.one_of(
    st.sampled_from(["", "   \t\n", "x" * 10_240, "模" * 3000, "😀🚀" * 500, "\u202egpu\u200b\x00\x1b[31m",
                     "<script>alert(1)</script>", "../../../../etc/passwd", "NaN", "-1", "1e999"]),
    st.text(max_size=40),
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=300),
)
extreme_number = st.one_of(
    st.sampled_from(EXTREME_NUMBERS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
)
junk_value = st.one_of(extreme_number, junk_text, st.none(), st.booleans(), st.just([1, 2]), st.just({"a": 1}))


def log_int(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Integers over orders of magnitude, ends included (1, 7, 300, 2**20, hi), rather than clustered."""
    powers = st.integers(0, max(0, int(math.log2(hi)))).map(lambda e: min(hi, max(lo, 2**e)))
    return st.one_of(st.integers(lo, hi), powers, st.sampled_from([lo, hi]))


def log_float(lo: float, hi: float) -> st.SearchStrategy[float]:
    lo_e, hi_e = math.log10(lo), math.log10(hi)
    return st.one_of(st.floats(lo_e, hi_e).map(lambda e: min(hi, max(lo, 10**e))), st.sampled_from([lo, hi]))


class F:
    """One input field: plausible values (edges of the valid range included) and the junk to try instead."""

    def __init__(self, valid: st.SearchStrategy[Any], junk: st.SearchStrategy[Any] = extreme_number,
                 required: bool = False):
        self.valid, self.junk, self.required = valid, st.one_of(junk, junk_value), required


_OMIT = object()  # field left out: the model's default applies


def draw_fields(data: st.DataObject, fields: dict[str, F]) -> dict[str, Any]:
    """Keyword arguments for an input model, in one of three modes (reported as Hypothesis events):

    * ``valid`` — every field plausible (or left out): most examples reach the tool and its result is checked;
    * ``one-bad`` — one field junk (0, negative, NaN, inf, 1e30, 10 KB text, wrong type), the rest valid;
    * ``chaos`` — any field may be junk.
    """
    mode = data.draw(st.sampled_from(["valid", "valid", "one-bad", "chaos"]), label="mode")
    bad = data.draw(st.sampled_from(sorted(fields)), label="bad field") if mode == "one-bad" else None
    event(f"mode: {mode}")
    out: dict[str, Any] = {}
    for name, f in fields.items():
        if name == bad:
            choice = f.junk
        elif mode == "chaos":
            choice = st.one_of(f.valid, f.junk)
        else:
            choice = f.valid
        if not f.required and name != bad:
            choice = st.one_of(choice, choice, choice, st.just(_OMIT))
        value = data.draw(choice, label=name)
        if value is not _OMIT:
            out[name] = value
    return out


def build_and_run(model: type[BaseModel], fields: dict[str, Any], tool: Any) -> BaseModel | None:
    """Validate ``fields`` into ``model`` (a ValidationError is the user's answer) and run ``tool`` on it.

    Inside the tool only ToolError / UnknownNameError count as domain errors: a ValidationError raised
    there means the tool built an invalid intermediate or result (a negative byte count, say) — a bug."""
    try:
        inp = model(**fields)
    except ValidationError as exc:
        assert_human_error(exc)
        event(f"rejected: {_why(exc)}")
        return None
    try:
        return outcome(lambda: tool(inp), TOOL_ERRORS)
    except ValidationError as exc:
        if exc.title in USER_BUILT_MODELS:
            assert_human_error(exc)
            event(f"rejected: {_why(exc)}")
            return None
        pytest.fail(f"{tool.__name__} raised a ValidationError on valid input (an internal model rejected a "
                    f"computed value): {exc}")


@cache
def _catalog_names() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    cat = load_catalog()
    gpus = tuple(n for g in cat.gpus for n in (g.id, g.name, *g.aliases[:1]))
    models = tuple(n for m in cat.models for n in (m.id, *m.aliases[:1]))
    platforms = tuple(n for p in cat.platforms for n in (p.id, p.name))
    return gpus, models, platforms


GPU_NAMES, MODEL_NAMES, PLATFORM_NAMES = _catalog_names()
PRECISIONS = [p.name for p in all_precisions()]
KV_DTYPES = [k.name for k in all_kv_dtypes()]
UNKNOWN_PRECISIONS = ["fp3", "int1", "Q9_K", "bf17", "FP16 ", "fp-16", "4bit", "半精度", "none", "auto", ""]
unknown_precision = st.one_of(st.sampled_from(UNKNOWN_PRECISIONS), junk_text)


def choice(*values: Any, junk: st.SearchStrategy[Any] = junk_text) -> F:
    return F(st.sampled_from(values), junk)


def flag() -> F:
    return F(st.booleans(), junk_value)


@cache
def _gpu(name: str) -> GPU:
    return load_catalog().gpu(name)


@cache
def _spec(name: str) -> ModelSpec:
    return ModelSpec.from_catalog(name)


catalog_gpu = st.sampled_from([g.id for g in load_catalog().gpus]).map(_gpu)
catalog_spec = st.sampled_from([m.id for m in load_catalog().models]).map(_spec)

ARCH_LIMITS = (("layers", 512), ("hidden_size", 65_536), ("num_heads", 256), ("num_kv_heads", 64),
               ("head_dim", 512), ("vocab_size", 1_000_000))


@st.composite
def custom_spec(draw: st.DrawFn, junk: bool = False) -> ModelSpec | None:
    """A user-described model (size plus maybe a few architecture numbers), or None when it is (readably)
    rejected. With ``junk`` the size may be 0/NaN/inf/1e30 and the architecture numbers 0 or negative."""
    size = log_float(0.001, 99_999)
    params_b = draw(st.one_of(size, st.sampled_from([0, -1, NAN, INF, 1e30])) if junk else size)
    kwargs: dict[str, Any] = {}
    for key, hi in ARCH_LIMITS:
        if draw(st.booleans()):
            value = log_int(1, hi)
            kwargs[key] = draw(st.one_of(value, st.sampled_from([0, -3])) if junk else value)
    try:
        return ModelSpec.custom(params_b, **kwargs)
    except DOMAIN_ERRORS as exc:
        assert_human_error(exc)
        return None


model_spec = st.one_of(catalog_spec, catalog_spec, custom_spec().filter(lambda s: s is not None))


@examples(100)
@given(spec=custom_spec(junk=True))
def test_custom_model_spec_rejects_impossible_shapes_readably(spec: ModelSpec | None) -> None:
    """``ModelSpec.custom`` with zero or negative head/layer counts: a ToolError/ValidationError, not a crash."""
    if spec is not None:
        assert spec.params > 0 and spec.num_heads >= 1 and spec.num_kv_heads >= 1 and spec.layers >= 1


# ---------------------------------------------------------------------------------------------- resolvers
@examples(150)
@given(kind=st.sampled_from(["gpu", "model", "platform"]),
       name=st.one_of(junk_text, st.sampled_from(GPU_NAMES + MODEL_NAMES + PLATFORM_NAMES),
                      st.sampled_from(GPU_NAMES + MODEL_NAMES).map(lambda n: f"  {n.upper()}-xx ")))
def test_resolvers_return_an_entry_or_a_readable_unknown_name(kind: str, name: str) -> None:
    cat = load_catalog()
    try:
        entry = getattr(cat, kind)(name)
    except (UnknownNameError, AmbiguousNameError) as exc:
        assert_human_error(exc)
        message = str(exc)
        assert message.startswith(("unknown", "GPU", "model", "CPU platform")), message
        if isinstance(exc, UnknownNameError):
            assert all(isinstance(s, str) and s for s in exc.suggestions)
            assert len(exc.suggestions) <= 3
        return
    assert entry.id and entry.name


@examples(40)
@given(kind=st.sampled_from(["gpu", "model", "platform"]), junk=st.sampled_from([None, 7, 3.5, b"h100", ["h100"]]))
def test_resolvers_reject_non_strings_with_a_readable_error(kind: str, junk: Any) -> None:
    try:
        getattr(load_catalog(), kind)(junk)
    except (UnknownNameError, AmbiguousNameError) as exc:
        assert_human_error(exc)
    else:
        pytest.fail(f"{kind}({junk!r}) returned an entry")


def test_every_catalog_id_resolves_to_itself() -> None:
    """The resolver's fixed points, from the catalog's own ids (no property can find these by chance)."""
    cat = load_catalog()
    for entries, lookup in ((cat.gpus, cat.gpu), (cat.models, cat.model), (cat.platforms, cat.platform)):
        for entry in entries:
            assert lookup(entry.id).id == entry.id


# ---------------------------------------------------------------------------------------------- inference memory
INFERENCE_FIELDS = {
    "context": F(log_int(1, 1 << 24), required=True),
    "batch": F(log_int(1, 1_000_000)),
    "gpus": F(st.one_of(st.sampled_from([1, 2, 4, 8]), log_int(1, 4096))),
    "precision": F(st.sampled_from(PRECISIONS), unknown_precision),
    "kv_dtype": F(st.sampled_from(KV_DTYPES), unknown_precision),
    "engine": choice("vllm", "llamacpp", "transformers"),
    "parallel": choice("tp", "pp", None),
    "gpu": F(st.sampled_from(GPU_NAMES), junk_text),
    "gpu_memory_bytes": F(log_int(1, 10 * 2**40)),
    "gpu_memory_utilization": F(st.floats(0.01, 1.0)),
    "max_num_batched_tokens": F(log_int(1, 10_000_000)),
    "max_num_seqs": F(log_int(1, 100_000)),
    "n_ubatch": F(log_int(1, 1_000_000)),
    "n_gpu_layers": F(log_int(0, 100_000)),
    "flash_attention": flag(),
}
CUSTOM_MODEL_FIELDS = {
    "params_b": F(log_float(0.001, 100_000), required=True),
    "layers": F(log_int(1, 10_000)),
    "hidden_size": F(log_int(1, 1_000_000)),
    "num_heads": F(log_int(1, 10_000)),
    "num_kv_heads": F(log_int(1, 10_000)),
    "head_dim": F(log_int(1, 100_000)),
    "vocab_size": F(log_int(1, 100_000_000)),
}


@examples(150)
@given(data=st.data())
def test_inference_memory_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    which = data.draw(st.sampled_from(["model"] * 4 + ["custom"] * 2 + ["spec"] * 2 + ["model+custom", "nothing"]))
    fields = INFERENCE_FIELDS.copy()
    if "model" in which:
        fields["model"] = F(st.sampled_from(MODEL_NAMES), junk_text, required=True)
    if "custom" in which:
        fields |= CUSTOM_MODEL_FIELDS
    if which == "spec":
        fields["spec"] = F(model_spec, junk_value, required=True)
    kwargs = draw_fields(data, fields)
    result = build_and_run(InferenceMemoryInput, kwargs, estimate_inference_memory)
    if result is not None:  # a field drawn as None is absent: count the sources actually given
        given = [kwargs.get(k) is not None for k in ("model", "params_b", "spec")]
        assert sum(given) == 1, f"exactly one model source must be required, got {given}"
        assert result.per_gpu_bytes >= result.breakdown.weights
        if result.fits is not None:
            assert result.headroom_bytes is not None


@examples(60)
@given(name=st.one_of(st.just("x" * 10_240), st.just("a/" * 3000), st.just("名" * 5000), junk_text),
       context=log_int(1, 1 << 20))
def test_inference_memory_model_names_of_any_length(name: str, context: int) -> None:
    """Long names must not reach the file system as a path the OS refuses (ENAMETOOLONG)."""
    outcome(lambda: estimate_inference_memory(InferenceMemoryInput(model=name, context=context)))


@pytest.mark.parametrize("name", ["~0", "~0.gguf", "~nobody-here/config.json", "~nobody-here/model", "0/", "/"])
def test_inference_memory_odd_path_like_names(name: str) -> None:
    """Names the test above found: '~name' where no user is called name (pathlib raises RuntimeError on
    expanding it) and a repo-id-like '0/' with nothing after the slash; each must get the usual
    unknown-model / no-such-file message."""
    outcome(lambda: estimate_inference_memory(InferenceMemoryInput(model=name, context=1)))


def test_inference_memory_rejects_nan_and_infinity_everywhere() -> None:
    """Each numeric field given NaN / ±inf: a validation error naming the field, never a result."""
    for name in ["params_b", "context", "batch", "gpus", "gpu_memory_bytes", "gpu_memory_utilization",
                 "max_num_batched_tokens", "max_num_seqs", "n_ubatch", "n_gpu_layers"]:
        for bad in (NAN, INF, -INF):
            fields: dict[str, Any] = {"context": 4096, "params_b": 8.0} if name != "params_b" else {"context": 4096}
            fields[name] = bad
            with pytest.raises(ValidationError) as info:
                InferenceMemoryInput(**fields)
            assert any(name in ".".join(map(str, e["loc"])) for e in info.value.errors()), (name, bad)


def test_inference_memory_for_a_huge_context_is_finite_and_says_it_does_not_fit() -> None:
    """16 M tokens of Llama-3.1-70B KV cache on one H100: a finite figure and fits=False, not an overflow.

    Hand-derived: 80 layers × 8 KV heads × 128 dims × 2 (K and V) × 2 bytes = 327,680 bytes per token."""
    r = estimate_inference_memory(InferenceMemoryInput(model="llama-3.1-70b", context=1 << 24, gpu="H100 SXM",
                                                       engine="transformers"))
    assert r.kv_bytes_per_token == 80 * 8 * 128 * 2 * 2
    assert r.breakdown.kv_cache >= 327_680 * (1 << 24) * 0.99
    assert r.fits is False and not bad_numbers(r.model_dump())


# ---------------------------------------------------------------------------------------------- training memory
TRAINING_FIELDS = {
    "model": F(model_spec, junk_value, required=True),
    "method": choice("full", "lora", "qlora"),
    "regime": choice("mixed", "bf16", "fp32"),
    "grad_accounting": choice("fp32", "half"),
    "optimizer": choice("adamw", "adamw8bit", "sgd", "sgd-momentum"),
    "paged_optimizer": F(st.sampled_from([None, True, False]), junk_value),
    "base_precision": F(st.sampled_from([None, *PRECISIONS]), unknown_precision),
    "lora_rank": F(log_int(1, 4096)),
    "zero_stage": F(st.integers(0, 3)),
    "fsdp": flag(),
    "offload_optimizer": flag(),
    "offload_params": flag(),
    "gpus": F(log_int(1, 100_000)),
    "gpus_per_node": F(log_int(1, 64)),
    "tp": F(st.sampled_from([1, 2, 4, 8, 3, 16])),
    "sequence_parallel": flag(),
    "seq": F(log_int(1, 10_000_000)),
    "micro_batch": F(log_int(1, 100_000)),
    "recompute": choice("none", "selective", "full", None),
    "flash_attention": flag(),
    "fused_loss": flag(),
    "gpu": F(st.one_of(catalog_gpu, st.none()), junk_value),
    "cuda_context_bytes": F(log_int(0, 2**34)),
    "fragmentation": F(st.floats(0, 1)),
    "buffer_factor": F(st.floats(1, 3)),
}


@examples(120)
@given(data=st.data())
def test_training_memory_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    result = build_and_run(TrainingMemoryInput, draw_fields(data, TRAINING_FIELDS), estimate_training_memory)
    if result is not None:
        assert result.per_gpu_bytes >= result.breakdown.weights


# ---------------------------------------------------------------------------------------------- speed
PERF_FIELDS = {
    "model": F(model_spec, junk_value, required=True),
    "gpu": F(catalog_gpu, junk_value, required=True),
    "count": F(st.sampled_from([1, 2, 3, 4, 8, 16, 64])),
    "precision": F(st.sampled_from(PRECISIONS), unknown_precision),
    "mfu": F(st.floats(0.01, 1.0)),
}


@examples(120)
@given(data=st.data())
def test_decode_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    fields = PERF_FIELDS | {
        "parallel": choice("tensor", "layer", "pipeline", None),
        "kv_dtype": F(st.sampled_from(KV_DTYPES), unknown_precision),
        "context": F(log_int(1, 10_000_000)),
        "batch": F(log_int(1, 100_000)),
    }
    result = build_and_run(DecodeInput, draw_fields(data, fields), estimate_decode)
    if result is not None:
        lo, hi = result.tokens_per_s_range
        assert lo <= result.tokens_per_s <= hi
        assert result.step_time_s > 0


@examples(100)
@given(data=st.data())
def test_prefill_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    fields = PERF_FIELDS | {
        "parallel": choice("tensor", "layer", "pipeline", None),
        "prompt_tokens": F(log_int(1, 10_000_000)),
        "batch": F(log_int(1, 100_000)),
    }
    result = build_and_run(PrefillInput, draw_fields(data, fields), estimate_prefill)
    if result is not None:
        assert result.ttft_s > 0


@examples(80)
@given(data=st.data())
def test_serving_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    fields = PERF_FIELDS | {
        "kv_dtype": F(st.sampled_from([None, *KV_DTYPES]), unknown_precision),
        "context": F(log_int(1, 10_000_000)),
        "gpu_memory_utilization": F(st.floats(0.01, 1.0)),
        "max_num_seqs": F(log_int(1, 100_000)),
    }
    kwargs = draw_fields(data, fields)
    result = build_and_run(ServingInput, kwargs, estimate_serving)
    if result is not None:
        assert result.max_batch <= ServingInput(**kwargs).max_num_seqs
        assert result.max_batch <= max(0, math.floor(result.max_concurrency))


# ---------------------------------------------------------------------------------------------- training time, FP64
@examples(100)
@given(data=st.data())
def test_training_time_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    fields = {
        "params": F(log_float(1e6, 1e15), required=True),
        "tokens": F(log_float(1e6, 1e17), required=True),
        "gpu": F(catalog_gpu, junk_value, required=True),
        "count": F(log_int(1, 1_000_000)),
        "mfu": F(st.floats(0.01, 0.8)),
        "recompute": choice("none", "selective", "full"),
        "precision": F(st.sampled_from(PRECISIONS), unknown_precision),
        "price_per_gpu_hour": F(st.one_of(st.none(), log_float(0.01, 1000))),
        "model_name": F(st.one_of(st.none(), st.sampled_from(MODEL_NAMES)), junk_text),
    }
    result = build_and_run(TrainingTimeInput, draw_fields(data, fields), estimate_training_time)
    if result is not None:
        assert result.hours > 0
        assert result.gpu_hours == pytest.approx(result.hours * result.count, rel=1e-6)


@examples(100)
@given(data=st.data())
def test_fp64_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    problem = data.draw(st.sampled_from(["dense-lu", "dense-gemm", "grid"]))
    fields = {
        "gpu": F(catalog_gpu, junk_value, required=True),
        "count": F(log_int(1, 100_000)),
        "problem": F(st.just(problem), junk_text, required=True),
        "n": F(log_int(1, 100_000_000), required=problem != "grid"),
        "cells": F(log_float(1, 1e15), required=problem == "grid"),
        "variables": F(log_int(1, 10_000)),
        "time_levels": F(st.integers(1, 16)),
        "steps": F(log_int(1, 10**12)),
        "flops_per_cell_step": F(st.one_of(st.none(), st.just(0.0), log_float(1e-3, 1e6))),
        "efficiency": F(st.one_of(st.none(), st.floats(0.01, 1.0))),
    }
    result = build_and_run(ScientificInput, draw_fields(data, fields), estimate_fp64)
    if result is not None:
        assert result.per_gpu_bytes <= result.memory_bytes


# ---------------------------------------------------------------------------------------------- build check
gpu_entry = st.fixed_dictionaries(
    {"gpu": st.sampled_from(GPU_NAMES), "count": st.sampled_from([1, 2, 4, 8, 3, 64])},
    optional={"power_limit_w": log_float(10, 2000)},
)
junk_gpu_entry = st.fixed_dictionaries(
    {"gpu": st.one_of(st.sampled_from(GPU_NAMES), junk_text), "count": st.one_of(st.integers(1, 8), extreme_number)},
    optional={"power_limit_w": extreme_number},
)
gpu_list = st.lists(gpu_entry, min_size=1, max_size=4)
junk_gpu_list = st.one_of(st.just([]), st.lists(junk_gpu_entry, min_size=1, max_size=3))
MAINS = ["120v-15a", "120v-20a", "220v-10a", "230v-16a", "230V 16A"]
BAD_MAINS = ["110v", "999v-999a", "", "16A", "0v-0a", "-120v-15a"]
FRAMEWORKS = ["PyTorch", "vLLM", "TensorRT-LLM", "SGLang", "llama.cpp", "DeepSpeed", "MindIE"]
BAD_FRAMEWORKS = ["jax?", "paddle", "tensorflow 1.x", ""]


@examples(120)
@given(data=st.data())
def test_build_check_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    fields = {
        "gpus": F(gpu_list, st.one_of(junk_gpu_list, junk_value), required=True),
        "platform": F(st.sampled_from(PLATFORM_NAMES), junk_text),
        "psu_w": F(log_float(100, 20_000)),
        "psu_efficiency": F(st.floats(0.51, 1.0)),
        "chassis": choice("tower", "rack", "open-frame", None),
        "case_max_gpu_length_mm": F(log_float(50, 800)),
        "mains": F(st.sampled_from(MAINS), st.one_of(st.sampled_from(BAD_MAINS), junk_text)),
        "workload": choice("training", "inference", "scientific", None),
        "precision": F(st.sampled_from(PRECISIONS), unknown_precision),
        "framework": F(st.sampled_from(FRAMEWORKS), st.one_of(st.sampled_from(BAD_FRAMEWORKS), junk_text)),
        "cuda_required": flag(),
        "os": choice("linux", "windows", "macos", None),
        "model": F(st.one_of(st.none(), st.sampled_from(MODEL_NAMES)), junk_text),
        "context": F(log_int(1, 1 << 24)),
        "concurrency": F(log_int(1, 100_000)),
        "method": choice("full", "lora", "qlora"),
        "problem_bytes": F(log_int(1, 10**15)),
        "nvme_drives": F(st.integers(0, 32)),
        "system_ram_gb": F(log_float(1, 10_000)),
        "parallelism": choice("tensor", "data", "pipeline", None),
    }
    result = build_and_run(BuildInput, draw_fields(data, fields), check_build)
    if result is not None:
        assert result.ok == (not any(f.severity == "error" for f in result.findings))
        for f in result.findings:
            assert f.message.text.strip() and render(f.message, "zh").strip() and f.fix and f.fix.text.strip()


# ---------------------------------------------------------------------------------------------- recommend
@examples(60)
@given(data=st.data())
def test_recommend_never_crashes_and_never_returns_bad_numbers(data: st.DataObject) -> None:
    workload = data.draw(st.sampled_from(["inference", "training", "scientific"]))
    fields = {
        "workload": F(st.just(workload), junk_text, required=True),
        "model": F(st.sampled_from(MODEL_NAMES), junk_text, required=workload != "scientific"),
        "precision": F(st.sampled_from([None, "bf16", "fp8", "int4", "Q4_K_M", "fp16"]), unknown_precision),
        "context": F(log_int(1, 1 << 20)),
        "concurrency": F(log_int(1, 10_000)),
        "target_tokens_per_s": F(st.one_of(st.none(), log_float(1, 1e6))),
        "method": choice("full", "lora", "qlora", None),
        "dataset_tokens": F(st.one_of(st.none(), log_float(1e6, 1e13))),
        "deadline_hours": F(st.one_of(st.none(), log_float(0.1, 10_000))),
        "fp64_required": flag(),
        "problem_bytes": F(st.one_of(st.none(), log_int(1, 10**15))),
        "matrix_n": F(st.one_of(st.none(), log_int(1, 10**6))),
        "budget_usd": F(st.one_of(st.none(), log_float(100, 1e8))),
        "cny_per_usd": F(st.floats(1, 10)),
        "vendors": F(st.lists(st.sampled_from(["nvidia", "amd", "intel", "huawei"]), max_size=2), junk_value),
        "cuda_required": flag(),
        "domestic_only": flag(),
        "framework": F(st.one_of(st.none(), st.sampled_from(FRAMEWORKS)), junk_text),
        "form_factor": choice("pcie", "sxm", "oam", "module", None),
        "power_limit_w": F(st.one_of(st.none(), log_float(100, 100_000))),
        "mains": F(st.one_of(st.none(), st.sampled_from(MAINS)), st.one_of(st.sampled_from(BAD_MAINS), junk_text)),
        "existing_gpus": F(st.lists(gpu_entry, max_size=2), junk_gpu_list),
        "existing_platform": F(st.one_of(st.none(), st.sampled_from(PLATFORM_NAMES)), junk_text),
        "kwh_price": F(st.one_of(st.none(), log_float(0.01, 5))),
        "duty_cycle": F(st.floats(0.01, 1.0)),
    }
    if data.draw(st.booleans(), label="budget in CNY"):
        del fields["budget_usd"]
        fields["budget_cny"] = F(st.one_of(st.none(), log_float(1000, 1e9)))
    kwargs = draw_fields(data, fields)
    result = build_and_run(RecommendInput, kwargs, recommend)
    if result is not None:
        inp = RecommendInput(**kwargs)
        assert [o.rank for o in result.options] == list(range(1, len(result.options) + 1))
        unpriced = [o.total_price_usd is None for o in result.options]
        assert unpriced == sorted(unpriced), "options without a price rank after every priced one"
        for option in result.options:
            assert option.fits, f"{option.gpu} ×{option.count} is offered but does not fit"
            if option.total_price_usd is None:  # kept, marked 'ask a vendor'; the budget could not be checked
                continue
            if inp.budget_usd is not None:
                assert option.total_price_usd <= inp.budget_usd * (1 + 1e-9)
            if inp.budget_cny is not None:
                assert option.total_price_cny is not None and option.total_price_cny <= inp.budget_cny * (1 + 1e-9)


# ---------------------------------------------------------------------------------------------- LLM tool calls
NAME_FIELDS = {"gpu": GPU_NAMES, "model": MODEL_NAMES, "name": GPU_NAMES + MODEL_NAMES, "platform": PLATFORM_NAMES,
               "precision": tuple(PRECISIONS), "kv_dtype": tuple(KV_DTYPES)}


def from_schema(prop: dict[str, Any], defs: dict[str, Any], name: str = "") -> st.SearchStrategy[Any]:
    """Plausible values for one JSON-schema property (what a model reads from the tool's schema)."""
    if "$ref" in prop:
        return from_schema(defs[prop["$ref"].rsplit("/", 1)[-1]], defs, name)
    if "anyOf" in prop:
        options = [o for o in prop["anyOf"] if o.get("type") != "null"]
        return st.one_of(*(from_schema(o, defs, name) for o in options)) if options else st.none()
    if "enum" in prop or "const" in prop:
        return st.sampled_from(prop.get("enum") or [prop["const"]])
    kind = prop.get("type")
    if name in NAME_FIELDS and kind in ("string", None):
        return st.sampled_from(NAME_FIELDS[name])
    if kind == "integer":
        lo = int(prop.get("minimum", prop.get("exclusiveMinimum", 0) + 1 if "exclusiveMinimum" in prop else 1))
        return log_int(lo, int(min(prop.get("maximum", 1 << 20), 1 << 40)))
    if kind == "number":
        lo = float(prop.get("minimum", prop.get("exclusiveMinimum", 0.0)))
        hi = float(min(prop.get("maximum", 1e6), 1e15))
        return log_float(max(lo, 1e-3), hi) if hi > max(lo, 1e-3) else st.just(hi)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        return st.sampled_from(["bf16", "linux", "vLLM", "230v-16a", "hello"])
    if kind == "array":
        return st.lists(from_schema(prop.get("items", {}), defs, name), min_size=1, max_size=3)
    if kind == "object" and "properties" in prop:
        required = set(prop.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v, defs, k) for k, v in prop["properties"].items() if k in required},
            optional={k: from_schema(v, defs, k) for k, v in prop["properties"].items() if k not in required})
    return junk_value


@st.composite
def tool_arguments(draw: st.DrawFn, tool_name: str) -> dict[str, Any]:
    """Arguments as a language model might write them from the tool's JSON schema: mostly plausible values
    (enums, ranges, catalog names), often junk, sometimes a field the tool does not have."""
    from advisor.toolspec import TOOLS

    schema = TOOLS[tool_name].input_model.model_json_schema()
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    junk_rate = draw(st.sampled_from([0, 0, 0.1, 0.5]), label="junk rate")
    for name, prop in schema.get("properties", {}).items():
        if name not in required and name not in ("model", "gpu") and not draw(st.booleans()):
            continue
        bad = junk_rate and draw(st.floats(0, 1)) < junk_rate
        out[name] = draw(junk_value if bad else from_schema(prop, defs, name), label=name)
    if draw(st.integers(0, 9)) == 0:
        out[draw(st.text(min_size=1, max_size=10))] = draw(junk_value)
    return out


@examples(100)
@given(data=st.data())
def test_every_llm_callable_tool_returns_a_result_or_a_readable_error(data: st.DataObject) -> None:
    """``advisor.toolspec.run_tool`` is what an LLM's function call reaches: whatever the arguments, it
    returns a ToolCall holding either a clean result or a one-line error — it never raises."""
    from advisor.toolspec import TOOLS, run_tool

    name = data.draw(st.sampled_from(sorted(TOOLS)), label="tool")
    arguments = data.draw(tool_arguments(name), label="arguments")
    call = run_tool(name, arguments, by="llm")
    if call.ok:
        event("result")
        problems = bad_numbers(call.result)
        assert not problems, "bad numbers in the result:\n" + "\n".join(problems[:10])
    else:
        event("error")
        assert call.error and call.error.strip() and len(call.error) < 2000 and "Traceback" not in call.error


# ---------------------------------------------------------------------------------------------- found by the properties
# Cases the thorough profile found, pinned here so every run checks them.
def test_an_unknown_10_kb_precision_gets_a_short_message() -> None:
    outcome(lambda: estimate_inference_memory(InferenceMemoryInput(model="llama-3.1-8b", context=4096,
                                                                   precision="x" * 10_240)))


def test_recommend_for_a_scientific_problem_of_a_few_bytes() -> None:
    """problem_bytes=1 is valid input (gt=0); the recommender must answer, not fail on an internal model."""
    build_and_run(RecommendInput, {"workload": "scientific", "problem_bytes": 1}, recommend)


@pytest.mark.parametrize("engine", ["vllm", "llamacpp", "transformers"])
def test_a_catalog_model_without_attention_on_a_gpu(engine: str) -> None:
    """SDXL (attention 'none': no KV cache at all) with a fit check — "SDXL on a 4090" in the chat."""
    outcome(lambda: estimate_inference_memory(InferenceMemoryInput(model="sdxl-base-1.0", context=4096,
                                                                   gpu="RTX 4090", engine=engine)))


@pytest.mark.parametrize("method", ["full", "lora", "qlora"])
def test_fsdp_training_of_a_tiny_custom_model(method: str) -> None:
    """A 0.1 B custom model (default 2048-wide, 128k-vocabulary shape: its embedding alone is 263 M parameters)
    under FSDP: the per-block working set must not go negative."""
    spec = ModelSpec.custom(0.1, layers=1)
    build_and_run(TrainingMemoryInput, {"model": spec, "method": method, "fsdp": True}, estimate_training_memory)


def test_serving_with_an_unknown_10_kb_precision() -> None:
    outcome(lambda: estimate_serving(ServingInput(model=_spec("llama-3.1-8b"), gpu=_gpu("rtx-4090"),
                                                  precision="q" * 10_240)))


# ---------------------------------------------------------------------------------------------- self-test
def test_bad_numbers_walker_finds_what_it_should() -> None:
    """The checker itself: NaN, inf, negatives (outside signed fields) and 'nan' in text are all caught."""
    dumped = {"a": 1, "b": [0.5, {"c": -2}], "headroom_bytes": -5, "d": NAN, "e": "total nan GB", "f": True,
              "g": "Infinity Fabric, inference", "h": (INF,)}
    found = bad_numbers(dumped)
    assert sorted(p.split(" ")[0] for p in found) == ["result.b[1].c", "result.d", "result.e", "result.h[0]"]


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(st.integers(min_value=0, max_value=1_000), min_size=1, max_size=60),
    limit=st.integers(min_value=-10, max_value=40_000),
    known_at=st.integers(min_value=0, max_value=70),
)
def test_limit_search_matches_a_linear_scan(steps: list[int], limit: int, known_at: int) -> None:
    """The interpolated search behind max_context/max_concurrency/offload finds the same boundary as
    scanning every value, for any non-decreasing step function (flat runs and jumps included), with or
    without the request's own point given (inside or outside the range), and never evaluates that point again."""
    from tools.inference_memory import _largest_within

    values = [sum(steps[: i + 1]) for i in range(len(steps))]  # f(n) for n = 1..len, non-decreasing
    expected = max((n for n, v in enumerate(values, start=1) if v <= limit), default=0)
    assert _largest_within(lambda n: values[n - 1], limit, 1, len(values)) == expected
    inside = 1 <= known_at <= len(values)
    asked: list[int] = []

    def f(n: int) -> int:
        asked.append(n)
        return values[n - 1]

    known = (known_at, values[known_at - 1]) if inside else (known_at, 0)  # outside [lo, hi]: ignored
    assert _largest_within(f, limit, 1, len(values), known=known) == expected
    if inside:
        assert known_at not in asked


@settings(max_examples=300, deadline=None)
@given(
    unit=st.sampled_from([16, 256, 7]),
    seqs=st.integers(min_value=1, max_value=300),
    steps=st.lists(st.integers(min_value=0, max_value=1_000), min_size=1, max_size=40),
    cap=st.integers(min_value=1, max_value=400),
    limit=st.integers(min_value=-10, max_value=30_000),
    known_at=st.integers(min_value=1, max_value=450),
)
def test_stepped_context_search_matches_a_linear_scan(
    unit: int, seqs: int, steps: list[int], cap: int, limit: int, known_at: int
) -> None:
    """Cache memory that grows in whole blocks (vLLM: 16 tokens per sequence) or padded cells (llama.cpp:
    256 cells for all slots) is flat between steps; searching over the steps finds the same longest context
    as scanning every context up to the cap, for step widths above and below one token."""
    from tools.inference_memory import _longest_context

    def g(q: int) -> int:  # non-decreasing in the step index q, flat beyond the listed steps
        return sum(steps[: min(q, len(steps))])

    def f(context: int) -> int:
        return g(-(-context * seqs // unit))

    expected = max((c for c in range(1, cap + 1) if f(c) <= limit), default=0)
    assert _longest_context(f, limit, cap, None, (unit, seqs)) == expected
    assert _longest_context(f, limit, cap, (known_at, f(known_at)), (unit, seqs)) == expected


@settings(max_examples=200, deadline=None)
@given(
    model=st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "gemma-3-27b", "deepseek-v3", "qwen3-next-80b-a3b",
                           "gpt-oss-20b", "mistral-7b-v0.1"]),
    engine=st.sampled_from(["vllm", "llamacpp", "transformers"]),
    gpus=st.sampled_from([1, 2, 4]),
    parallel=st.sampled_from([None, "pp"]),
    context=log_int(1, 1 << 20),
    seqs=log_int(1, 4096),
    ngl=st.one_of(st.none(), st.integers(min_value=0, max_value=200)),
)
def test_search_sizer_adds_up_to_the_reported_need(model: str, engine: str, gpus: int, parallel: str | None,
                                                   context: int, seqs: int, ngl: int | None) -> None:
    """The limit searches evaluate a numbers-only sizer; at any point it must equal the need the result reports
    (weights + KV + activations + overhead on the largest GPU), and its cache must be the public KV-cache
    figure of that engine (its stage's share under a layer split)."""
    from tools.inference_memory import _need, _plan, _resolve_spec, _sizer
    from tools.kv_cache import kv_cache_size

    inp = InferenceMemoryInput(model=model, engine=engine, gpus=gpus, parallel=parallel, context=context,
                               batch=seqs, n_gpu_layers=ngl if engine == "llamacpp" else None)
    try:
        plan = _plan(_resolve_spec(inp), inp)
    except TOOL_ERRORS:
        return  # a split this model cannot take (tensor parallel over heads, more stages than layers)
    cfg = plan.cfg
    layers = inp.n_gpu_layers
    need = _need(cfg, inp, context, seqs, layers)
    assert _sizer(cfg, inp, layers).total(context, seqs) == need.breakdown.total
    tp = gpus if cfg.parallel == "tp" else 1
    public = kv_cache_size(cfg.spec, context, seqs, cfg.kv_dtype, tp, "generic" if engine == "transformers" else engine)
    assert need.kv.bytes == public.bytes
    share = need.kv_layers / cfg.spec.layers
    assert need.breakdown.kv_cache == round(public.bytes * share)
