"""Files the app reads from its user — GPU files, sessions, model configs, a GPU tool's output — parsed within size
and nesting bounds: a hostile file is one line naming it and the problem, never a traceback, and the rest (the
built-in catalog, a file's valid entries) carries on."""

from __future__ import annotations

import json
import logging
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge import UnknownNameError, load_catalog
from knowledge.bounded import BoundsError, data_depth, parse, read, text_depth
from tools.perf import DecodeResult
from tools.result import Note

ROOT = Path(__file__).resolve().parents[1]
DEEP_TOML = '[[gpu]]\nname = "x"\nmemory_gib = ' + "[" * 900 + "]" * 900 + "\n"  # the red team's 1.8 kB file
CARD = """
[[gpu]]
name = "{name}"
memory_gib = {memory}
bandwidth_gbs = 224
bf16_tflops = {tflops}
tdp_w = 130
"""


def _card(name: str = "RTX 3050", memory: float = 8, tflops: float = 18.2) -> str:
    """A GPU file entry; by default an RTX 3050 8GB (224 GB/s, 130 W), a card the catalog lacks."""
    return CARD.format(name=name, memory=memory, tflops=tflops)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "GPU_ADVISOR_GPUS" in r.getMessage()]


def _cli(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "advisor.cli", *argv], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "ADVISOR_LLM": "none", **env}, cwd=ROOT,
                          timeout=300)


# --------------------------------------------------------------------------- the shared reader


@pytest.mark.parametrize(("text", "fmt", "depth"), [
    ('{"a": [1, {"b": 2}]}', "json", 3),
    ('{"a": "[[[[{{{{", "b": "\\"[[[["}', "json", 1),  # brackets in strings (escaped quotes too) do not nest
    ('[[gpu]]\nname = "[[[[" # [[[[[[\nx = \'{{{{\'\ny = """\n[[[[\n"""\n', "toml", 2),
    ("a = [[1], [2]]\n", "toml", 2),
])
def test_nesting_is_counted_outside_strings_and_comments(text: str, fmt: str, depth: int) -> None:
    assert text_depth(text, fmt) == depth  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "fmt"), [
    ("[" * 200_000 + "]" * 200_000, "json"),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, "json"),
    (DEEP_TOML, "toml"),
    ("x = " + "{a = " * 500 + "1" + "}" * 500, "toml"),
    (".".join(["a"] * 500) + " = 1\n", "toml"),  # dotted keys nest without a bracket: caught once parsed
    ("[" + ".".join(["a"] * 500) + "]\n", "toml"),
])
def test_deep_nesting_is_one_line_naming_the_file(text: str, fmt: str) -> None:
    with pytest.raises(BoundsError) as info:
        parse(text, fmt, "hostile.txt")  # type: ignore[arg-type]
    assert str(info.value) == "hostile.txt: nested too deeply: more than 64 levels"


def test_an_unterminated_string_is_scanned_once() -> None:
    # every quote opens a string that never closes: a scanner that retried each one would take ~10^10 steps
    text = '"' + '\\"[' * 300_000
    assert text_depth(text, "json") == 0
    with pytest.raises(BoundsError, match=r"^s\.json: not valid JSON: Unterminated string"):
        parse(text, "json", "s.json")


def test_reading_a_file_checks_its_size_encoding_and_kind(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_text("x = 1\n" * 1000, encoding="utf-8")
    with pytest.raises(BoundsError, match=r"^big.toml: larger than 100 bytes$"):
        read(big, "toml", 100)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(BoundsError, match=r"^latin.json: not UTF-8 text \(byte 13\)$"):
        read(latin, "json", 1000)
    with pytest.raises(BoundsError, match=r"^missing.json: cannot be read: No such file"):
        read(tmp_path / "missing.json", "json", 1000)
    with pytest.raises(BoundsError, match=r"^tmp: cannot be read: not a regular file$"):
        read(tmp_path, "json", 1000, where="tmp")
    fine = tmp_path / "fine.json"
    fine.write_text('{"a": [1, {"b": []}]}', encoding="utf-8")
    assert data_depth(read(fine, "json", 100)) == 4 == text_depth(fine.read_text(), "json")


# --------------------------------------------------------------------------- GPU files


def test_the_red_team_gpu_file_leaves_every_command_working(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(DEEP_TOML, encoding="utf-8")
    env = {"GPU_ADVISOR_GPUS": str(path), "ADVISOR_SEARCH_K": "0"}
    for argv in (["size", "--model", "llama3.1:8b", "--gpu", "4090"], ["gpus"],
                 ["perf", "--model", "llama3.1:8b", "--gpu", "4090", "--precision", "Q4_K_M"],
                 ["ask", "RTX 4090 能跑 Llama 3.1 8B 吗", "--lang", "zh"]):
        done = _cli(*argv, env=env)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (argv, done.stderr)
        assert done.stderr.strip().splitlines() == [
            "GPU_ADVISOR_GPUS: deep.toml: nested too deeply: more than 64 levels; nothing taken from it"]
        assert "4090" in done.stdout  # the built-in catalog answered
    assert "24 GB" in _cli("gpus", env=env).stdout


def test_the_web_app_builds_with_a_hostile_gpu_file(gpu_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    from advisor.serve import build_app

    gpu_file.write_text(DEEP_TOML, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="knowledge.catalog"):
        app = build_app(warm=False)
    assert app is not None and load_catalog().gpu("RTX 4090").id == "rtx-4090"
    assert _warnings(caplog) == [
        "GPU_ADVISOR_GPUS: gpus.toml: nested too deeply: more than 64 levels; nothing taken from it"]


@pytest.mark.parametrize(("text", "said"), [
    ("x = 1\n" * 200_000, "gpus.toml: larger than 1,000,000 bytes"),
    ("[[gpu]\n", "gpus.toml: not valid TOML: Expected ']]' at the end of an array declaration (at line 1, column 6)"),
    ("x = " + "9" * 5_000 + "\n", "gpus.toml: not valid TOML"),  # past int()'s digit limit: a ValueError
])
def test_a_whole_file_problem_is_one_line_and_the_catalog_alone(gpu_file: Path, text: str, said: str,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    gpu_file.write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="knowledge.catalog"):
        cat = load_catalog()
    [line] = _warnings(caplog)
    assert line.startswith(f"GPU_ADVISOR_GPUS: {said}") and line.endswith("; nothing taken from it")
    assert cat.gpu("RTX 4090").id == "rtx-4090" and not [g for g in cat.gpus if g.id.startswith("user-")]


def test_each_bad_entry_is_one_line_and_the_valid_ones_load(gpu_file: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    text = (_card() + _card("Broken", memory=-1) + _card("GTX 1660 Ti", memory=6)
            + '[[gpu]]\nname = "No figures"\n' + "[[measured]]\ngpu = 5\n" + "[[gpus]]\nx = 1\n")
    gpu_file.write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="knowledge.catalog"):
        cat = load_catalog()
    lines = _warnings(caplog)
    assert lines == [
        "GPU_ADVISOR_GPUS: gpus.toml: gpu 2 ('Broken'): memory_gib: Input should be greater than or equal to 1; "
        "left out",
        "GPU_ADVISOR_GPUS: gpus.toml: gpu 4 ('No figures'): memory_gib: Field required; left out",
        "GPU_ADVISOR_GPUS: gpus.toml: measured 1: gpu: Input should be a valid string; left out",
        "GPU_ADVISOR_GPUS: gpus.toml: gpus: not read (a GPU file holds [[gpu]] and [[measured]] tables)",
    ]
    assert cat.gpu("RTX 3050").memory_gb == 8 and cat.gpu("GTX 1660 Ti").memory_gb == 6
    assert cat.gpu("RTX 4090").id == "rtx-4090"
    with pytest.raises(UnknownNameError):
        cat.gpu("Broken")


def test_entries_past_the_limit_are_said_to_be_left_out(gpu_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    gpu_file.write_text("".join(_card(f"Card {n}") for n in range(1, 104)), encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="knowledge.catalog"):
        cat = load_catalog()
    assert _warnings(caplog) == ["GPU_ADVISOR_GPUS: gpus.toml: 3 [[gpu]] tables after the first 100 left out"]
    assert cat.gpu("Card 100").name == "Card 100"
    with pytest.raises(UnknownNameError):
        cat.gpu("Card 101")


def test_look_alike_names_do_not_become_extra_cards(gpu_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    gpu_file.write_text(
        _card("RTX\u200b4090")  # a zero-width space: the catalog's RTX 4090
        + _card("\u041d100")  # a Cyrillic 'Н': mimics the catalog's H100
        + _card("R\u0422X 5000X")  # a Cyrillic 'Т' inside a Latin word
        + _card("ＲＴＸ 3050")  # full-width letters read as NFKC: an RTX 3050 like any other
        + _card("RTX 3050\u2060"),  # the same card again, behind a word joiner
        encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="knowledge.catalog"):
        cat = load_catalog()
    lines = _warnings(caplog)
    assert lines == [
        "GPU_ADVISOR_GPUS: gpus.toml: gpu 3 ('R\u0422X 5000X'): name: Value error, 'R\u0422X' mixes Cyrillic and "
        "Latin letters, which look alike; left out",
        "GPU_ADVISOR_GPUS: gpus.toml: RTX 3050: described twice; the first description is used",
        "GPU_ADVISOR_GPUS: RTX4090 is already in the catalog; its catalog figures are used",
        "GPU_ADVISOR_GPUS: \u041d100 looks like the catalog's H100 (look-alike letters); left out",
    ]
    assert [g.name for g in cat.gpus if g.id.startswith("user-")] == ["RTX 3050"]
    assert cat.gpu("RTX 4090").memory_gb == 24  # the catalog's figures, not the file's


def test_a_tiny_card_is_refused_with_a_line_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "tiny.toml"
    path.write_text(_card("Tiny", memory=0.01) + _card("Slow", tflops=1e-300), encoding="utf-8")
    done = _cli("perf", "--train", "--model", "llama3.1:8b", "--gpu", "Slow", "--tokens", "1T",
                env={"GPU_ADVISOR_GPUS": str(path)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "GPU_ADVISOR_GPUS: tiny.toml: gpu 1 ('Tiny'): memory_gib: Input should be greater than or equal to 1; "
        "left out",
        "GPU_ADVISOR_GPUS: tiny.toml: gpu 2 ('Slow'): bf16_tflops: Input should be greater than or equal to 0.01; "
        "left out",
        done.stderr.splitlines()[-1]]
    assert done.stderr.splitlines()[-1].startswith("gpu-advisor: unknown GPU 'Slow'")


# --------------------------------------------------------------------------- measured speeds


MEASURED = """
[[measured]]
gpu = "RTX 4090"
model = "llama-3.1-8b"
precision = "Q4_K_M"
decode_tokens_per_s = 150
"""


def _decode(model: str, gpu: str = "RTX 4090") -> DecodeResult:
    from tools.modelspec import load_model_spec
    from tools.perf import DecodeInput, estimate_decode

    return estimate_decode(DecodeInput(model=load_model_spec(model), gpu=load_catalog().gpu(gpu),
                                       precision="Q4_K_M", context=4096))


def _ids(result: DecodeResult) -> list[str]:
    return [getattr(a, "id", "") for a in result.assumptions]


def test_a_measured_speed_calibrates_its_own_model_only(gpu_file: Path) -> None:
    plain_same, plain_sibling, plain_other = _decode("llama-3.1-8b"), _decode("llama-3-8b"), _decode("qwen2.5-14b")
    gpu_file.write_text(MEASURED, encoding="utf-8")
    load_catalog.cache_clear()
    same, sibling, other = _decode("llama-3.1-8b"), _decode("llama-3-8b"), _decode("qwen2.5-14b")
    factor = same.tokens_per_s / plain_same.tokens_per_s
    assert factor != pytest.approx(1) and "perf.decode.calibrated" in _ids(same)
    # Llama-3-8B has Llama-3.1-8B's architecture and size: the measurement holds for it too
    assert sibling.tokens_per_s == pytest.approx(plain_sibling.tokens_per_s * factor)
    # Qwen2.5-14B is another model: its prediction stands, and says why it is not calibrated
    assert other.tokens_per_s == pytest.approx(plain_other.tokens_per_s)
    assert "perf.decode.calibrated" not in _ids(other) and "perf.decode.not_calibrated" in _ids(other)
    from knowledge.messages import render

    [said] = [a for a in other.assumptions if isinstance(a, Note) and a.id == "perf.decode.not_calibrated"]
    assert render(said, "en") == ("not calibrated: your measurement on this GPU is of Llama-3.1-8B, so the speed of "
                                  "Qwen2.5-14B here is the uncalibrated prediction")


def test_the_chat_says_which_speeds_are_calibrated(gpu_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from advisor import Advisor

    monkeypatch.setenv("ADVISOR_LLM", "none")
    gpu_file.write_text(MEASURED, encoding="utf-8")
    adv = Advisor(search_k=0)
    other = adv.reply("how fast is Qwen2.5-14B Q4_K_M on one RTX 4090?", adv.new_session()).text
    assert ("Your measurement on this card (Llama-3.1-8B) calibrates that model only: this speed of Qwen2.5-14B is "
            "the uncalibrated prediction.") in other
    same = adv.reply("how fast is Llama 3.1 8B Q4_K_M on one RTX 4090?", adv.new_session()).text
    assert "Speed calibrated to your own measurement on this card (Llama-3.1-8B, Q4_K_M: 150 tokens/s" in same


# --------------------------------------------------------------------------- sessions and model files


def test_a_session_file_is_bounded_in_size_and_depth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from advisor import session as session_module
    from advisor.session import Session, SessionError

    saved = Session()
    saved.history.append(session_module.Turn(role="user", text="[[[[ {{{{ " * 40))  # brackets in text: no nesting
    path = saved.save(tmp_path / "s.json")
    assert Session.load(path).history[0].text == "[[[[ {{{{ " * 40
    monkeypatch.setattr(session_module, "MAX_SESSION_BYTES", 100)
    with pytest.raises(SessionError, match=r"^session file s.json: larger than 100 bytes; the file was left unchanged"):
        Session.load(path)


def test_a_deep_session_file_is_one_line_from_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    text = '{"kind": "gpu-advisor-session", "version": 1, "profile": ' + "[" * 900 + "]" * 900 + "}"
    path.write_text(text, encoding="utf-8")
    done = _cli("ask", "hi", "--session", str(path), env={"ADVISOR_SEARCH_K": "0"})
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "deep.json is nested too deeply: more than 64 levels" in done.stderr
    assert path.read_text(encoding="utf-8") == text


def test_model_files_are_bounded_in_size_and_depth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tools import model_files
    from tools.errors import ToolError
    from tools.model_files import read_safetensors_header, spec_from_path

    deep = tmp_path / "deep"
    deep.mkdir()
    (deep / "config.json").write_text('{"a": ' * 900 + "1" + "}" * 900, encoding="utf-8")
    with pytest.raises(ToolError, match=r"config.json: cannot read JSON \(nested too deeply: more than 64 levels\)"):
        spec_from_path(deep)
    header = b"[" * 900 + b"]" * 900
    (tmp_path / "w.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(ToolError, match=r"w.safetensors: .*nested too deeply: more than 64 levels"):
        read_safetensors_header(tmp_path / "w.safetensors")
    big = tmp_path / "big"
    big.mkdir()
    (big / "config.json").write_text(json.dumps({"hidden_size": 4096, "pad": "x" * 2000}), encoding="utf-8")
    monkeypatch.setattr(model_files, "MAX_JSON_BYTES", 1000)
    with pytest.raises(ToolError, match=r"config.json: cannot read JSON \(larger than 1,000 bytes\)"):
        spec_from_path(big)


# --------------------------------------------------------------------------- a GPU tool's output


def test_a_tools_output_is_read_up_to_a_bound(tmp_path: Path) -> None:
    from advisor.detect import parse_query, run_bounded

    endless = run_bounded(["sh", "-c", "exec yes '0, NVIDIA GeForce RTX 4090, 24564'"], limit=10_000)
    assert endless.returncode == 0 and len(endless.stdout) <= 10_000 and endless.stdout.endswith("\n")
    assert parse_query(endless.stdout)[0] == (0, "NVIDIA GeForce RTX 4090", 24564)
    failed = run_bounded(["sh", "-c", "printf 'bad \\377 byte' >&2; exit 3"])
    assert (failed.returncode, failed.stderr) == (3, "bad \ufffd byte")


def test_detect_keeps_the_rows_around_a_bad_byte_and_survives_endless_output(tmp_path: Path) -> None:
    smi = tmp_path / "nvidia-smi"
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "GPU_ADVISOR_SYSFS_DRM": str(tmp_path / "no-drm")}
    smi.write_text("#!/bin/sh\nprintf '0, NVIDIA GeForce RTX 4090, 24564\\n1, NVIDIA \\377GPU, 8192\\n"
                   "2, NVIDIA L40S, 46068\\n'\n", encoding="utf-8")
    smi.chmod(0o755)
    done = _cli("detect", "--json", env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    gpus = json.loads(done.stdout)["gpus"]
    assert [(g["index"], g["catalog_id"]) for g in gpus] == [(0, "rtx-4090"), (1, None), (2, "l40s")]
    assert gpus[1]["name"] == "NVIDIA \ufffdGPU"
    smi.write_text("#!/bin/sh\nexec yes '0, NVIDIA GeForce RTX 4090, 24564'\n", encoding="utf-8")  # 1 MB, then more
    done = _cli("detect", "--json", env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert [g["catalog_id"] for g in json.loads(done.stdout)["gpus"]] == ["rtx-4090"] * 64
