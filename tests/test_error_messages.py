"""Tool errors in the user's language: each error carries a note whose English text is what the tools have
always said (logs, the CLI and English replies unchanged) and whose Chinese rendering has no English sentence.

Driven through real tool calls with bad inputs (``run_tool``), and the file readers with broken files."""

from __future__ import annotations

import re
import string
import struct
from pathlib import Path

import pytest
from pydantic import ValidationError

from advisor.commands.common import validation_message
from advisor.toolspec import error_text, run_tool
from knowledge import AmbiguousNameError, UnknownNameError, load_catalog
from knowledge.messages import catalog, msg, render
from tools.errors import ToolError, error_note
from tools.kv_cache import kv_heads_per_rank
from tools.lora import lora_trainable_params
from tools.model_files import spec_from_path
from tools.modelspec import ModelSpec, check_tensor_parallel, load_model_spec
from tools.perf import compute_rate
from tools.result import Note
from tools.training_memory import resolve_optimizer
from tools.training_time import parse_count

# Three English words in a row (acronyms such as GPU, KV, FSDP are not words here).
_ENGLISH_RUN = re.compile(r"[A-Za-z][a-z]+(?:[ -]+[A-Za-z][a-z]+){2,}")
_CLI_FLAG = re.compile(r"--[a-z][a-z-]*")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _strings(params: dict) -> list[str]:
    """The string parameters of a note and of its nested notes: names, paths, values the user gave."""
    out: list[str] = []
    for value in params.values():
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            out += _strings(value.get("params") or {})
    return out


def assert_chinese(n: Note) -> None:
    """``n`` in Chinese: some Chinese, and no English sentence once names and user input are left out."""
    text = render(n, "zh")
    assert _CJK.search(text), text
    for name in sorted(_strings(n.params), key=len, reverse=True):
        text = text.replace(name, " ")
    assert not _ENGLISH_RUN.search(_CLI_FLAG.sub(" ", text)), (n.id, render(n, "zh"))


# (tool, arguments, the English error as the tools said it before it became a note)
CALLS = [
    ("size_inference", {"model": "llama-3.1-8b", "context": 4096, "gpus": 3, "parallel": "tp"},
     "tensor parallel 3 does not divide the 32 attention heads of Llama-3.1-8B — try: use tp=2, 4, 8, 16; "
     "or split layers across GPUs (pipeline parallel)"),
    ("perf_decode", {"model": "llama-3.1-8b", "gpu": "H100", "count": 3, "context": 4096, "parallel": "tensor"},
     "tensor parallel 3 does not divide the 32 attention heads of Llama-3.1-8B — try: use tp=2, 4, 8, 16; "
     "or split layers across GPUs (pipeline parallel)"),
    ("size_inference", {"model": "llama-3.1-8b", "context": 4096, "gpu": "H300"}, None),  # unknown GPU
    ("gpu_info", {"name": "H300"}, None),
    ("model_info", {"name": "gpt-9"}, None),
    ("platform_info", {"name": "epyc 9999"}, None),
    ("size_inference", {"model": "org/none-such", "context": 4096}, "unknown model 'org/none-such'"),
    ("size_inference", {"model": "llama-3.1-8b", "context": -1},
     "invalid arguments — context: Input should be greater than or equal to 1"),
    ("size_inference", {"model": "llama-3.1-8b", "context": "abc", "engine": "foo", "batch": 1.5},
     "invalid arguments — context: Input should be a valid integer, unable to parse string as an integer; "
     "batch: Input should be a valid integer, got a number with a fractional part; "
     "engine: Input should be 'vllm', 'llamacpp', 'transformers' or 'sglang'"),
    ("size_inference", {"model": "llama-3.1-8b", "context": 4096, "bogus": 1},
     "invalid arguments — bogus: Extra inputs are not permitted"),
    ("size_inference", {"model": "llama-3.1-8b"}, "invalid arguments — context: Field required"),
    ("size_inference", {"model": "llama-3.1-8b", "context": 4096, "gpu_memory_utilization": 1.5},
     "invalid arguments — gpu_memory_utilization: Input should be less than or equal to 1"),
    ("training_time", {"model": "llama-3.1-8b", "gpu": "H100", "tokens": "-5"},
     "invalid arguments — tokens: Input should be greater than 0"),
    ("training_time", {"model": "llama-3.1-8b", "gpu": "H100", "tokens": "abc"},
     "invalid arguments — tokens: Input should be a valid number, unable to parse string as a number"),
    ("training_time", {"model": "llama-3.1-8b", "gpu": "H100", "tokens": 1e9, "mfu": 0.9},
     "invalid arguments — input: Value error, MFU 0.9 is beyond what any published training run reaches (≤ 0.8)"),
    ("size_inference", {"model": "llama-3.1-8b", "context": 4096, "precision": "fp7"}, None),
    ("size_inference", {"model": "llama-3.1-8b", "context": 4096, "kv_dtype": "fp7"},
     "unknown KV-cache dtype 'fp7'; known: fp32, fp16, bf16, fp8, q8_0, q5_1, q5_0, q4_1, q4_0, iq4_nl"
     " — try: fp8; fp32; fp16"),
    ("size_inference", {"model": "llama-3.1-8b", "context": 4096, "engine": "llamacpp", "kv_dtype": "fp8"},
     "llamacpp has no fp8 KV cache — try: use --kv-dtype fp32/fp16/bf16/q8_0/q5_1/q5_0/q4_1/q4_0/iq4_nl"),
    ("size_inference", {"model": "llama-3.1-8b", "context": 4096, "engine": "llamacpp", "gpus": 100},
     "100 pipeline stages for 32 layers — try: use at most 32 GPUs; or tensor parallel"),
    ("size_inference", {"params_b": 8, "context": 4096, "num_heads": 32, "num_kv_heads": 5},
     "invalid arguments — input: Value error, num_heads (32) must be a multiple of num_kv_heads (5)"),
    ("size_training", {"model": "llama-3.1-8b", "offload_optimizer": True},
     "CPU offload needs ZeRO stage 1–3 or FSDP — try: --zero 2 --offload"),
    ("size_training", {"model": "llama-3.1-8b", "offload_params": True, "zero_stage": 2},
     "parameter offload needs ZeRO stage 3 or FSDP — try: --zero 3 --offload-params"),
    ("size_training", {"model": "llama-3.1-8b", "fsdp": True, "zero_stage": 2},
     "choose either FSDP or a DeepSpeed ZeRO stage, not both"),
    ("size_training", {"model": "llama-3.1-8b", "gpus": 3, "tp": 2}, "gpus (3) must be a multiple of tp (2)"),
    ("size_training", {"model": "llama-3.1-8b", "method": "full", "base_precision": "nf4"},
     "a base precision applies to LoRA/QLoRA; full fine-tuning uses the regime"),
    ("size_training", {"model": "llama-3.1-8b", "method": "lora", "lora_targets": ["foo"]},
     "unknown LoRA target module 'foo' — try: all; attention; mlp; q_proj; k_proj; v_proj; o_proj; gate_proj; "
     "up_proj; down_proj"),
    ("size_training", {"model": "llama-3.1-8b", "method": "lora", "lora_targets": []},
     "lora_targets is empty: LoRA needs at least one target module — try: all"),
    ("size_training", {"model": "llama-3.1-8b", "optimizer": "adamx"},
     "invalid arguments — optimizer: Input should be 'adamw', 'adamw8bit', 'sgd' or 'sgd-momentum'"),
    ("scientific_fp64", {"gpu": "H100", "problem": "dense-lu"},
     "invalid arguments — input: Value error, dense-lu needs the matrix order n"),
    ("scientific_fp64", {"gpu": "H100", "problem": "grid"},
     "invalid arguments — input: Value error, grid needs the number of cells"),
    ("perf_decode", {"gpu": "H100", "context": 4096},
     "give a catalog model name or params_b — try: model='llama-3.1-8b'; params_b=70"),
]


@pytest.mark.parametrize(("tool", "args", "english"), CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_a_failed_tool_call_carries_its_error_as_a_note_in_both_languages(tool: str, args: dict,
                                                                          english: str | None) -> None:
    call = run_tool(tool, args)
    assert not call.ok and call.error_note is not None
    assert call.error == call.error_note.text  # the text is the note's English
    if english is not None:
        assert call.error == english
    assert_chinese(call.error_note)
    assert call.model_validate(call.model_dump(mode="json")).error_note == call.error_note  # saved sessions


def test_unknown_and_ambiguous_names_keep_their_english_and_translate_the_kind() -> None:
    cat = load_catalog()
    with pytest.raises(UnknownNameError) as unknown:
        cat.gpu("H300")
    assert str(unknown.value).startswith("unknown GPU 'H300' — did you mean ")
    assert unknown.value.note.text == str(unknown.value)
    assert render(unknown.value.note, "zh").startswith("目录里没有GPU“H300”——是不是指 ")
    with pytest.raises(UnknownNameError) as model:
        cat.model("gpt-9")
    assert "模型“gpt-9”" in render(model.value.note, "zh") and model.value.note.text == str(model.value)
    with pytest.raises(UnknownNameError) as platform:
        cat.platform("epyc 9999")
    assert "CPU 平台“epyc 9999”" in render(platform.value.note, "zh")
    ambiguous = AmbiguousNameError("GPU", "A100", ["A100 PCIe 40GB", "A100 SXM 80GB"])
    assert ambiguous.note.text == str(ambiguous)
    assert str(ambiguous) == "GPU 'A100' is ambiguous — which one: A100 PCIe 40GB, A100 SXM 80GB?"
    assert render(ambiguous.note, "zh") == "GPU“A100”对应多个条目——指的是哪一个：A100 PCIe 40GB, A100 SXM 80GB？"
    odd = UnknownNameError("widget", "x" * 80, [])  # a kind without a message, a long name cut
    assert odd.note.text == str(odd) == f"unknown widget '{'x' * 57}…'"


def _raises(fn, *args, **kwargs) -> ToolError:
    with pytest.raises(ToolError) as exc:
        fn(*args, **kwargs)
    return exc.value


def test_errors_of_functions_the_tools_share() -> None:
    spec = ModelSpec.from_catalog("llama-3.1-8b")  # 32 heads, 8 KV heads
    cases = [
        (_raises(check_tensor_parallel, spec, 0), "tensor-parallel size must be at least 1, got 0"),
        (_raises(kv_heads_per_rank, spec, 0), "tensor-parallel size must be at least 1, got 0"),
        (_raises(kv_heads_per_rank, spec, 3),
         "tensor parallel 3 does not divide the 8 KV heads of Llama-3.1-8B — try: use tp=1, 2, 4, 8"),
        (_raises(check_tensor_parallel, ModelSpec.custom(20, num_heads=48, num_kv_heads=8), 6),
         None),  # divides the heads, neither divides nor is a multiple of the KV heads
        (_raises(lora_trainable_params, spec, 0), "LoRA rank must be at least 1, got 0"),
        (_raises(resolve_optimizer, "adamx"), "unknown optimizer 'adamx' — try: adamw; adamw8bit; sgd; sgd-momentum"),
        (_raises(parse_count, "abc"), "cannot read 'abc' as a count — try: 1.4T; 300B; 2e12"),
        (_raises(parse_count, "0"), "count must be a positive number, got '0'"),
        (_raises(ModelSpec.custom, -1.0), "params must be a positive number of billions below 100000, got -1.0"),
        (_raises(ModelSpec.custom, 8, layers=0),
         "layers must be a whole number from 1 to 10,000, got 0 — try: give layers from the model's config.json, "
         "or leave it out to use a default"),
        (_raises(load_model_spec, "someorg/no-such-model-anywhere"),
         "'someorg/no-such-model-anywhere' is neither a local path nor a catalog model — try: check the path; "
         "or give a catalog name such as llama-3.1-8b"),
    ]
    h100 = load_catalog().gpu("H100")
    bare = h100.model_copy(update={"throughput": type(h100.throughput)()})  # no figure at any precision
    cases.append((_raises(compute_rate, bare, "bf16"),
                  "the catalog has no dense tensor throughput for H100 SXM 80GB at bf16 or a fallback — try: "
                  "pick a GPU with a bf16/fp16 figure; pass --mfu with a custom GPU"))
    for exc, english in cases:
        assert str(exc) == exc.note.text
        if english is not None:
            assert str(exc) == english
        assert_chinese(exc.note)
    uneven = cases[3][0]
    assert "neither divides the 8 KV heads" in str(uneven) and "既不能整除" in render(uneven.note, "zh")


def _gguf(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


def test_errors_of_the_model_file_readers(tmp_path: Path) -> None:
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "config.json").write_text('{"hidden_size": 4096}')
    header = b"GGUF" + struct.pack("<I", 3)
    cases = [
        (tmp_path / "missing.gguf", "no such file or folder: {p} — try: give a catalog model name instead"),
        (tmp_path / "empty-folder", "{p} holds neither a config.json nor a .gguf file"),
        (tmp_path / "notes.txt", "notes.txt: expected a .gguf file, a config.json or a model folder"),
        (_gguf(tmp_path, "empty.gguf", b""), "empty.gguf: not a GGUF file (empty)"),
        (_gguf(tmp_path, "magic.gguf", b"GGML" + bytes(40)), "magic.gguf: not a GGUF file (bad magic)"),
        (_gguf(tmp_path, "v9.gguf", b"GGUF" + struct.pack("<I", 9) + bytes(40)),
         "v9.gguf: GGUF version 9 not supported (2 or 3, little-endian)"),
        (_gguf(tmp_path, "cut.gguf", header + struct.pack("<QQ", 1, 3)), None),  # truncated: Python's words inside
        (_gguf(tmp_path, "none.gguf", header + struct.pack("<QQ", 0, 0)), "none.gguf: the GGUF file lists no tensors"),
        (tmp_path / "list.json", "list.json: expected a JSON object"),
        (tmp_path / "bad.json", None),
        (tmp_path / "config.json", "config.json: needs num_hidden_layers, hidden_size and num_attention_heads"),
    ]
    for path, english in cases:
        exc = _raises(spec_from_path, path)
        assert str(exc) == exc.note.text
        if english is not None:
            assert str(exc) == english.format(p=path)
        assert_chinese(exc.note)


def test_validation_summaries_for_the_cli_and_for_other_problems() -> None:
    from tools.inference_memory import InferenceMemoryInput

    with pytest.raises(ValidationError) as exc:
        InferenceMemoryInput(model="llama-3.1-8b", context=0, batch=0, gpus=0, n_ubatch=0)
    en, zh = validation_message(exc.value), validation_message(exc.value, "zh")
    assert en == ("invalid input — context: Input should be greater than or equal to 1; batch: Input should be "
                  "greater than or equal to 1; gpus: Input should be greater than or equal to 1")  # three at most
    assert zh == "输入无效——上下文长度：应大于或等于 1；并发数：应大于或等于 1；GPU 数量：应大于或等于 1"
    assert error_text(exc.value) == en.replace("invalid input", "invalid arguments")
    with pytest.raises(ValidationError) as other:  # an error type without a message: pydantic's words, kept
        InferenceMemoryInput(model=["a list"], context=4096)  # type: ignore[arg-type]
    note = error_note(other.value)
    assert note.text == "invalid arguments — model: Input should be a valid string"
    assert render(note, "zh") == "参数无效——模型：应为文本"
    assert error_note(ValueError("first line\nsecond")).text == "first line"
    assert error_text(ToolError("")) == "ToolError"


def test_unconverted_errors_still_read_in_english() -> None:
    """A ToolError given plain text (a message not yet in the catalogs) is shown as it is in any language."""
    exc = ToolError("something odd", suggestions=["--flag"])
    assert str(exc) == "something odd — try: --flag" and render(exc.note, "en") == str(exc)
    assert render(exc.note, "zh") == "something odd——可以试试：--flag"
    assert exc.suggestions == ["--flag"]


def test_every_error_message_reads_in_chinese() -> None:
    """Each error message, rendered in Chinese with numbers for its placeholders, has no English sentence;
    the pass-through messages (plain text, joins, a field and pydantic's words) aside."""
    passthrough = {"error.plain", "error.join", "error.validation.other", "error.validation.value_error_input"}
    zh = {k: v for k, v in catalog("zh").items() if k.startswith("error.") and k not in passthrough}
    assert len(zh) > 80
    assert _ENGLISH_RUN.search(msg("en", "error.tp.heads", tp=3, heads=32, model="M"))  # the check does catch English
    for key, template in zh.items():
        fields = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        text = _CLI_FLAG.sub(" ", template.format(**dict.fromkeys(fields, 1)))
        assert not _ENGLISH_RUN.search(text), (key, text)
        english = msg("en", key, **dict.fromkeys(fields, 1))
        assert text != english or key.startswith("error.kind."), key


def test_the_cli_says_its_one_line_error_in_the_users_language(capsys: pytest.CaptureFixture[str]) -> None:
    from types import SimpleNamespace

    from advisor.commands.common import EXIT_DOMAIN_ERROR, domain_errors

    @domain_errors
    def command(args: object) -> int:
        load_catalog().gpu("H300")
        return 0

    for lang, expected in (("en", "gpu-advisor: unknown GPU 'H300' — did you mean "),
                           ("zh", "gpu-advisor: 目录里没有GPU“H300”——是不是指 ")):
        assert command(SimpleNamespace(lang=lang)) == EXIT_DOMAIN_ERROR
        err = capsys.readouterr().err
        assert err.startswith(expected) and err.count("\n") == 1


def test_a_lora_with_no_target_module_names_the_field() -> None:
    """Found by the tool-call property test: an empty target list must say which field is empty."""
    call = run_tool("size_training", {"method": "qlora", "lora_targets": [], "params_b": 7}, by="llm")
    assert not call.ok and "lora_targets" in (call.error or "") and "all" in (call.error or "")
