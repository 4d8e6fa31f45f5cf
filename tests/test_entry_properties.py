"""Property-based tests over every entry point, their inputs generated from the entry points' own schemas.

* CLI flags — from ``advisor.cli``'s argparse parser: each subcommand's actions (flags, types, choices, nargs);
* API routes and MCP tools — from the signatures of ``advisor.ui.api.TOOL_ENDPOINTS`` (what Gradio exposes as
  both), called in-process, plus one small test over real HTTP;
* LLM tool calls — from each registered tool's pydantic input model (``advisor.toolspec.TOOLS``);
* session files — from ``advisor.session.Session``'s JSON schema, one field changed in a real session;
* GPU files — from ``knowledge.user_gpus``' ``GPUProfile`` / ``Measured`` schemas, written as TOML;
* chat text — free text through ``Advisor`` turns.

The properties: never a traceback (no uncaught exception; the CLI exits 0, 1 or 2, never with a Python
traceback in its output); an error is never ``null`` or empty and names the offending field or value; and
nothing already in a session is lost after a bad turn (its history and profile are kept).

Values are plausible (what the schema allows, its edges and orders of magnitude beyond any real input
included) or junk (wrong type, NaN, ±inf, 0, negative, 1e308, control characters, 10 kB of text).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import math
import os
import re
import sys
import tempfile
import typing
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_properties import (
    GPU_NAMES,
    KV_DTYPES,
    MODEL_NAMES,
    PLATFORM_NAMES,
    PRECISIONS,
    bad_numbers,
    event,
    examples,
    junk_text,
    log_float,
    log_int,
)

from advisor import Advisor
from advisor.session import SLOTS, Session, SessionError
from knowledge.resolve import shown_name

# ---------------------------------------------------------------------------------------------- values
# A field or flag named like one of these takes catalog names (or the vocabulary of that name).
NAMED: dict[str, tuple[str, ...]] = {
    "gpu": GPU_NAMES, "have": tuple(f"{g}x2" for g in GPU_NAMES[:40]), "model": MODEL_NAMES,
    "name": GPU_NAMES + MODEL_NAMES + PLATFORM_NAMES, "platform": PLATFORM_NAMES, "have_cpu": PLATFORM_NAMES,
    "precision": tuple(PRECISIONS), "kv_dtype": tuple(KV_DTYPES), "base_precision": tuple(PRECISIONS),
    "mains": ("120v-15a", "230v-16a", "220v-10a"), "framework": ("PyTorch", "vLLM", "llama.cpp", "SGLang"),
    "vendor": ("nvidia", "amd", "huawei"), "gpus": ("2x RTX 4090", "H100 SXM", "4 × L40S, 1x RTX 4090"),
    "code": ("gromacs", "vasp", "openfoam"), "tokens": ("1.4T", "300B", "2e12"), "params": ("70B", "8B", "800M"),
    "n": ("50000", "1000"), "cells": ("1e9", "1000000"), "query": ("KV cache", "显存"),
}
BAD_NUMBERS = (0, -1, -0.5, 2**63, 10**30, 1e308, float("nan"), float("inf"), float("-inf"))
BAD_NUMBER_TEXT = ("0", "-1", "-2.5", "nan", "inf", "-inf", "1e400", "1e308", "1e30", str(2**64), "1_000",
                   "0x10", "½", "١٢", " 7 ", "4e", "", "abc")
# characters a message, a name or a file may carry that must never drive a terminal
HOSTILE = ("\r", "\x1b[2J", "\x1b]0;title\x07", "\u202e", "\u2066", "\x00", "\x9b", "\u200f", "\x7f")
odd_text = st.one_of(junk_text, st.sampled_from([f"H100{c}fits" for c in HOSTILE]))
ERROR_WORDS = ("Traceback", "Error(", "object at 0x")


def named(name: str) -> st.SearchStrategy[str] | None:
    key = name.lstrip("-").replace("-", "_")
    return st.sampled_from(NAMED[key]) if key in NAMED else None


def number_text(integer: bool) -> st.SearchStrategy[str]:
    """A flag's number as typed: plausible ones over orders of magnitude, or text no number flag takes."""
    good = log_int(1, 1 << 20).map(str) if integer else log_float(1e-3, 1e6).map(lambda v: f"{v:g}")
    return st.one_of(good, good, st.sampled_from(BAD_NUMBER_TEXT))


def _leaves(values: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    """(field name, value) of every field in ``values``, nested objects and lists included."""
    if isinstance(values, dict):
        for k, v in values.items():
            yield str(k), v
            yield from _leaves(v, str(k))
    elif isinstance(values, list | tuple):
        for v in values:
            yield from _leaves(v, key)
    else:
        yield key, values


def names_a_field(message: str, fields: dict[str, Any]) -> bool:
    """Whether an error names one of the entry point's fields (or flags: every word of the name), or one of the
    values given, as written."""
    low = message.lower()
    for key, value in _leaves(fields):
        words = [w for w in re.split(r"[-_\s]+", key.lower()) if len(w) > 1]
        if words and all(w in low for w in words):  # 'budget_usd' in 'give the budget in USD or in CNY'
            return True
        if key and re.search(rf"(?<![\w-]){re.escape(key.lower())}(?!\w)", low):  # 'n: …', '--n'
            return True
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            continue
        pieces = re.split(r"\s*[,;+，；、]\s*", str(value)) if isinstance(value, str) else []  # '2x 4090, A100'
        if any(p.strip() and f"'{shown_name(p.strip()).lower()[:24]}" in low for p in pieces):
            return True
        for shown in {str(value).strip().lower()[:24], shown_name(str(value)).strip().lower()[:24]}:
            if shown in low if shown else "''" in low:  # an empty name is quoted as ''
                return True
    return False


def assert_error(message: Any, given_values: dict[str, Any], where: str) -> None:
    """An error as a person reads it: text (never None or empty), one line of sense, naming a field or value."""
    assert isinstance(message, str) and message.strip() and message.strip().lower() not in ("none", "null"), \
        f"{where}: error {message!r}"
    assert not any(w in message for w in ERROR_WORDS), f"{where}: {message[:300]}"
    assert names_a_field(message, given_values), f"{where}: the error names no field or value: {message[:300]}"


# ---------------------------------------------------------------------------------------------- CLI flags
SKIPPED_COMMANDS = {
    "serve": "starts a web server", "index": "builds the vector index", "search": "opens the vector index",
    "detect": "probes this machine's hardware", "chat": "interactive (its own test below)",
}
# flags whose other values would load a model, reach a network or open the vector index
PINNED_FLAGS = {"--llm": "none", "--dense": None}


@cache
def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, from the CLI's own parser (aliases included)."""
    from advisor.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p for name, p in sub.choices.items() if name not in SKIPPED_COMMANDS}


def _value_for(action: argparse.Action) -> st.SearchStrategy[str]:
    """Text for one argument, from its declared choices, type and name."""
    if action.choices is not None:
        return st.one_of(st.sampled_from([str(c) for c in action.choices]), junk_text)
    kind = action.type
    if kind is int or getattr(kind, "__name__", "") in ("_positive",):
        return number_text(integer=True)
    if kind is not None and kind is not str:  # finite_float and the flags' own parsers ('70B', '1.4T')
        return st.one_of(number_text(integer=False), st.sampled_from(["70B", "1.4T", "2B", "800M", "1e12", "7b"]))
    return st.one_of(*(s for s in (named(action.dest), named(action.option_strings[0] if action.option_strings
                                                                  else action.dest)) if s is not None), odd_text)


@st.composite
def cli_argv(draw: st.DrawFn) -> tuple[str, list[str], dict[str, Any]]:
    """A command line for one subcommand: its required arguments, some optional ones; values from the schema."""
    command = draw(st.sampled_from(sorted(subcommands())), label="command")
    argv, given_values = [command], {}
    for action in subcommands()[command]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        flag = action.option_strings[0] if action.option_strings else None
        if flag in PINNED_FLAGS:
            if PINNED_FLAGS[flag] is not None and draw(st.booleans()):
                argv += [flag, PINNED_FLAGS[flag]]  # type: ignore[list-item]
            continue
        required = action.required or (flag is None and action.nargs not in ("?", "*"))
        if not required and draw(st.integers(0, 2)) != 0:
            continue
        if action.dest == "session":
            continue  # a session file: given by the test, in a temporary folder
        if action.nargs == 0:
            argv.append(flag)  # type: ignore[arg-type]
            continue
        value = draw(_value_for(action), label=action.dest)
        if flag is None and value.startswith("-") and value != "-":
            value = " " + value  # a positional: not to be read as a flag
        argv += [flag, value] if flag else [value]
        given_values[flag or action.dest] = value
    return command, argv, given_values


@contextlib.contextmanager
def captured(stdin: str = "") -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    old_in, sys.stdin = sys.stdin, io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield out, err
    finally:
        sys.stdin = old_in


def run_cli(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """``gpu-advisor ARGV`` in this process: exit status, standard output and standard error."""
    from advisor.cli import main

    with captured(stdin) as (out, err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage errors (2) and --help (0)
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def assert_terminal_safe(text: str) -> None:
    bad = sorted({repr(c) for c in text if c in "\r\x00\x1b\x9b\x7f" or "\u202a" <= c <= "\u202e"
                  or "\u2066" <= c <= "\u2069" or c in "\u200e\u200f\u061c"})
    assert not bad, f"control characters reach the terminal: {bad}"


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """``os.environ`` with ``values`` set for the block (Hypothesis runs many examples per test function)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


# the CLI's turns: no knowledge search (the vector index would be built), no LLM
QUICK = {"ADVISOR_SEARCH_K": "0", "ADVISOR_LLM": "none"}


@examples(60)
@given(case=cli_argv(), lang=st.sampled_from([None, "en"]), text=st.one_of(st.just(""), odd_text))
def test_every_cli_command_exits_0_1_or_2_with_a_line_saying_why(case: tuple[str, list[str], dict[str, Any]],
                                                                  lang: str | None, text: str) -> None:
    """Any command line the parser's schema allows (and junk where it does not): exit status 0, 1 or 2, never a
    traceback; a failure says why on standard error, naming the flag or the value at fault."""
    command, argv, given_values = case
    if lang:
        argv = [*argv, "--lang", lang]
    with tempfile.TemporaryDirectory() as tmp, environment(**QUICK):
        if command == "ask":
            argv += ["--session", str(Path(tmp) / "plan.json")]
        code, out, err = run_cli(argv, stdin=text)
    event(f"{command}: exit {code}")
    assert code in (0, 1, 2), f"exit {code}: {err[-500:]}"
    assert "Traceback" not in out + err
    assert_terminal_safe(out + err)
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines and lines[-1].startswith("gpu-advisor"), f"no error line: {err[-300:]!r}"
        if lang == "en" and given_values:
            flags = {f: None for a in subcommands()[command]._actions for f in a.option_strings}
            assert_error(lines[-1], {**flags, **given_values, command: command}, " ".join(argv)[:200])


@examples(8)
@given(lines=st.lists(st.one_of(odd_text, st.sampled_from(["llama 3.1 70b inference on 2000 H100", "/reset",
                                                            "H100\r fits", "\u202eH100"])), max_size=3))
def test_interactive_chat_keeps_every_turn_and_never_fails(lines: list[str]) -> None:
    """``gpu-advisor chat --session F``: any lines typed, then end of input; every turn is saved to F."""
    with tempfile.TemporaryDirectory() as tmp, environment(**QUICK):
        path = Path(tmp) / "chat.json"
        code, out, err = run_cli(["chat", "--session", str(path), "--lang", "en"],
                                 stdin="".join(f"{line.replace(chr(10), ' ')}\n" for line in lines))
        assert code == 0 and "Traceback" not in out + err, err[-500:]
        assert_terminal_safe(out + err)
        said = [line for line in lines if line.strip() not in ("/quit", "/exit", "/q") and
                not line.strip().startswith("/export")]
        if said:
            kept = Session.load(path)
            assert sum(1 for t in kept.history if t.role == "user") == len(said)


def test_interactive_chat_takes_the_session_lock_per_turn_and_keeps_a_concurrent_ask(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``chat --session F`` held no lock and saved its own copy: an ``ask --session F`` turn made meanwhile was
    lost. Now each chat turn takes the lock ``ask`` takes, and continues from the file when another changed it."""
    import fcntl

    from advisor.cli import main

    path = tmp_path / "plan.json"
    lines = iter(["llama 3.1 8b inference on one RTX 4090", "ASK", "and with fp16?"])

    def typed(prompt: str = "") -> str:
        line = next(lines, None)
        if line is None:
            raise EOFError
        if line == "ASK":  # another process's turn while the chat waits for input: the lock is free
            with open(f"{path}.lock", "a+b") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fh, fcntl.LOCK_UN)
            assert main(["ask", "budget 5000 usd", "--session", str(path)]) == 0
            return typed()
        return line

    monkeypatch.setattr("builtins.input", typed)
    with environment(**QUICK), captured():
        assert main(["chat", "--session", str(path), "--lang", "en"]) == 0
    said = [t.text for t in Session.load(path).history if t.role == "user"]
    assert said == ["llama 3.1 8b inference on one RTX 4090", "budget 5000 usd", "and with fp16?"]


@pytest.mark.parametrize("command", [["ask", "hello"], ["chat"]])
def test_a_symlinked_lock_file_is_not_followed(tmp_path: Path, command: list[str]) -> None:
    """A symbolic link planted as ``F.lock`` made the CLI create (and lock) the file it points to."""
    path, elsewhere = tmp_path / "plan.json", tmp_path / "elsewhere" / "victim"
    elsewhere.parent.mkdir()
    Path(f"{path}.lock").symlink_to(elsewhere)
    with environment(**QUICK):
        code, out, err = run_cli([*command, "--session", str(path)], stdin="hello\n")
    assert code == 2 and "symbolic link" in err and "Traceback" not in out + err
    assert not elsewhere.exists() and not path.exists()


def test_carriage_returns_and_bidi_controls_never_reach_the_terminal(tmp_path: Path) -> None:
    """A carriage return lets text overwrite what a line showed ('fits\\rdoes NOT fit'); U+202E and the other
    bidirectional controls reorder it. Nothing printed keeps them: here a card's name from a GPU file."""
    from advisor.terminal import printable

    assert printable("fits\rdoes NOT\u202e fit\u2066\u200f\x85\r\n") == "fitsdoes NOT fit\r\n"
    from knowledge import load_catalog

    path = tmp_path / "gpus.toml"
    path.write_text('[[gpu]]\nname = "Zeta\\r\\u202e 3080"\nmemory_gib = 10\nbandwidth_gbs = 760\n'
                    'bf16_tflops = 59.5\ntdp_w = 320\n', encoding="utf-8")
    load_catalog.cache_clear()
    try:
        with environment(GPU_ADVISOR_GPUS=str(path)):
            code, out, err = run_cli(["gpus", "--lang", "en"])
    finally:
        load_catalog.cache_clear()
    assert code == 0 and "Zeta" in out, (out[-500:], err)
    assert_terminal_safe(out + err)


# ---------------------------------------------------------------------------------------------- API and MCP
def _hint_strategy(name: str, hint: Any, bad: bool) -> st.SearchStrategy[Any]:
    """A value for one endpoint parameter, from its annotation (and its name, for catalog names)."""
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    kind = args[0]
    if bad:
        by_kind: dict[Any, st.SearchStrategy[Any]] = {
            int: st.sampled_from([0, -1, -(2**63), 2**63, 10**30]), float: st.sampled_from(BAD_NUMBERS),
            bool: st.sampled_from([None]), str: odd_text}
        return by_kind.get(kind, odd_text)
    if kind is bool:
        return st.booleans()
    if kind is int:
        return log_int(1, 1 << 16)
    if kind is float:
        return log_float(1e-2, 1e6)
    names = named(name)
    return names if names is not None else st.sampled_from(["inference", "training", "scientific", "lora", "vllm"])


@cache
def endpoints() -> dict[str, tuple[Callable[..., dict], dict[str, Any]]]:
    """The API/MCP tool endpoints with their parameters' type hints (the knowledge search left out: it opens
    the vector index)."""
    from advisor.ui.api import TOOL_ENDPOINTS

    return {name: (fn, typing.get_type_hints(fn)) for name, fn in TOOL_ENDPOINTS.items() if name != "search"}


ENDPOINT_CHOICES = {"workload": ("inference", "training", "scientific"), "engine": ("vllm", "llamacpp", "transformers"),
                    "method": ("full", "lora", "qlora"), "chassis": ("tower", "rack", "open-frame")}


@st.composite
def endpoint_call(draw: st.DrawFn) -> tuple[str, dict[str, Any], str | None]:
    """An endpoint, keyword arguments for it (required ones always) and the one made bad, if any."""
    name = draw(st.sampled_from(sorted(endpoints())), label="endpoint")
    fn, hints = endpoints()[name]
    params = inspect.signature(fn).parameters
    bad = draw(st.one_of(st.none(), st.sampled_from(sorted(params))), label="bad parameter")
    kwargs: dict[str, Any] = {}
    for pname, param in params.items():
        if pname != bad and param.default is not inspect.Parameter.empty and not draw(st.booleans()):
            continue
        if pname in ENDPOINT_CHOICES and pname != bad:
            kwargs[pname] = draw(st.sampled_from(ENDPOINT_CHOICES[pname]))
            continue
        kwargs[pname] = draw(_hint_strategy(pname, hints.get(pname, str), pname == bad), label=pname)
    return name, kwargs, bad


@examples(60)
@given(case=endpoint_call())
def test_every_api_and_mcp_endpoint_returns_clean_numbers_or_a_named_error(case: tuple[str, dict[str, Any],
                                                                                      str | None]) -> None:
    """What ``/size``, ``/perf``, ``/check`` and ``/recommend`` (API and MCP) run: a result whose numbers are all
    finite, or ``gr.Error`` naming a parameter or value — never another exception (an OverflowError, say)."""
    import gradio as gr

    name, kwargs, _ = case
    fn, _ = endpoints()[name]
    try:
        result = fn(**kwargs)
    except gr.Error as exc:
        event(f"{name}: error")
        params = dict.fromkeys(inspect.signature(fn).parameters)
        assert_error(exc.message, {**params, **kwargs}, f"/{name}({kwargs})")
        return
    event(f"{name}: result")
    assert isinstance(result, dict)
    problems = bad_numbers(result)
    assert not problems, "\n".join(problems[:5])


def test_a_huge_problem_size_gets_a_message_naming_it() -> None:
    """``/recommend`` with problem_gb=1e308 raised a bare OverflowError (converting it to bytes)."""
    import gradio as gr

    from advisor.ui.api import recommend

    for value in (1e308, float("inf"), 1e20):
        with pytest.raises(gr.Error) as info:
            recommend("scientific", problem_gb=value)
        assert "problem_gb" in info.value.message


# ---------------------------------------------------------------------------------------------- LLM tool calls
def schema_value(prop: dict[str, Any], defs: dict[str, Any], name: str = "", depth: int = 0) -> st.SearchStrategy[Any]:
    """Values a JSON-schema property allows: its enum, catalog names for name fields, numbers across its whole
    range (with no maximum, far beyond any real input: 10**30, 1e300), objects with their required keys."""
    if "$ref" in prop:
        return schema_value(defs[prop["$ref"].rsplit("/", 1)[-1]], defs, name, depth)
    if "anyOf" in prop:
        options = [schema_value(o, defs, name, depth) for o in prop["anyOf"] if o.get("type") != "null"]
        return st.one_of(st.none(), *options) if len(options) < len(prop["anyOf"]) else st.one_of(*options)
    if "enum" in prop or "const" in prop:
        return st.sampled_from(prop.get("enum") or [prop["const"]])
    kind = prop.get("type")
    names = named(name)
    if kind == "string" and names is not None:
        return names
    if kind == "integer":
        lo = int(prop.get("minimum", prop["exclusiveMinimum"] + 1 if "exclusiveMinimum" in prop else 0))
        hi = int(prop.get("maximum", prop["exclusiveMaximum"] - 1 if "exclusiveMaximum" in prop else 10**30))
        return st.one_of(st.integers(lo, min(hi, lo + 64)), log_int(max(lo, 1), hi), st.just(hi))
    if kind == "number":
        least = float(prop.get("minimum", prop.get("exclusiveMinimum", 0.0)))
        most = float(prop.get("maximum", prop.get("exclusiveMaximum", 1e300)))
        least = max(least, 1e-6) if "exclusiveMinimum" in prop or least <= 0 else least
        edge = most * (1 - 1e-12) if "exclusiveMaximum" in prop else most
        return st.one_of(log_float(least, edge), st.just(edge)) if edge > least else st.just(least)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        if prop.get("format") == "date-time":
            return st.just("2025-01-02T03:04:05Z")
        if "pattern" in prop:
            return st.from_regex(prop["pattern"], fullmatch=True)
        return st.text(max_size=int(prop.get("maxLength", 30)))
    if kind == "array":
        if "prefixItems" in prop:
            return st.tuples(*(schema_value(p, defs, name, depth + 1) for p in prop["prefixItems"])).map(list)
        hi = min(int(prop.get("maxItems", 3)), 3)
        lo = min(int(prop.get("minItems", 0)), hi)
        return st.lists(schema_value(prop.get("items", {}), defs, name, depth + 1), min_size=lo, max_size=hi) \
            if depth < 4 else st.just([])
    if kind == "object":
        if "properties" in prop and depth < 4:
            required = set(prop.get("required", []))
            props = prop["properties"]
            return st.fixed_dictionaries(
                {k: schema_value(v, defs, k, depth + 1) for k, v in props.items() if k in required},
                optional={k: schema_value(v, defs, k, depth + 1) for k, v in props.items() if k not in required})
        extra = prop.get("additionalProperties")
        if isinstance(extra, dict) and depth < 4:
            return st.dictionaries(st.text(min_size=1, max_size=8), schema_value(extra, defs, name, depth + 1),
                                   max_size=2)
        return st.just({})
    return st.just(None)


junk_field = st.one_of(st.sampled_from([*BAD_NUMBERS, "", None, True, [1, 2], {"a": 1}, "x" * 2000]), odd_text)
SLOW_TOOLS = {"search_knowledge"}  # opens the vector index


@st.composite
def tool_call(draw: st.DrawFn) -> tuple[str, dict[str, Any], str | None]:
    """A registered tool, arguments from its input model's JSON schema, and the one made junk, if any."""
    from advisor.toolspec import TOOLS

    name = draw(st.sampled_from(sorted(set(TOOLS) - SLOW_TOOLS)), label="tool")
    schema = TOOLS[name].input_model.model_json_schema()
    props, defs = schema.get("properties", {}), schema.get("$defs", {})
    required = set(schema.get("required", []))
    bad = draw(st.one_of(st.none(), st.sampled_from(sorted(props))), label="bad field") if props else None
    out: dict[str, Any] = {}
    for field, prop in props.items():
        if field != bad and field not in required and field not in ("model", "gpu") and draw(st.integers(0, 2)):
            continue
        out[field] = draw(junk_field if field == bad else schema_value(prop, defs, field), label=field)
    return name, out, bad


@examples(80)
@given(case=tool_call())
def test_every_tool_call_returns_clean_numbers_or_an_error_naming_the_field(case: tuple[str, dict[str, Any],
                                                                                     str | None]) -> None:
    """``run_tool`` (LLM function calls, the API and MCP behind them): a result with finite numbers, or an error
    that is text naming a field or value (often one field is junk, the rest valid)."""
    from advisor.toolspec import TOOLS, run_tool

    name, arguments, _ = case
    call = run_tool(name, arguments, by="llm")
    if call.ok:
        event(f"{name}: result")
        problems = bad_numbers(call.result)
        assert not problems, "\n".join(problems[:5])
        return
    event(f"{name}: {call.error_kind}")
    assert call.error_note is not None
    fields = dict.fromkeys(TOOLS[name].input_model.model_json_schema().get("properties", {}))
    assert_error(call.error, {**fields, **arguments}, f"{name}({arguments})")


# ---------------------------------------------------------------------------------------------- session files
@cache
def base_session() -> str:
    """A real session, two answered turns deep, as JSON."""
    adv = Advisor(search_k=0)
    session = adv.new_session()
    adv.reply("llama 3.1 70b 推理 两张 4090 上下文 32k", session)
    adv.reply("budget 20000 usd", session)
    return session.to_json()


@cache
def session_schema() -> tuple[dict[str, Any], dict[str, Any]]:
    schema = Session.model_json_schema()
    return schema["properties"], schema["$defs"]


@st.composite
def edited_session(draw: st.DrawFn) -> tuple[dict[str, Any], str, bool]:
    """The base session with one field (top-level or of its profile) set from the schema, or to junk."""
    props, defs = session_schema()
    profile = defs["Profile"]["properties"]
    where = draw(st.sampled_from(["profile"] * 3 + ["session"]), label="where")
    fields = profile if where == "profile" else props
    field = draw(st.sampled_from(sorted(set(fields) - {"kind", "version"})), label="field")
    junk = draw(st.integers(0, 3)) == 0
    value = draw(junk_field if junk else schema_value(fields[field], defs, field), label="value")
    data = json.loads(base_session())
    (data["profile"] if where == "profile" else data)[field] = value
    return data, field, junk


def assert_nothing_lost(before: Session, after: Session, turns: int) -> None:
    """The earlier history is all there (plus ``turns`` new exchanges) and every slot known is still known."""
    assert len(after.history) + after.dropped_turns == len(before.history) + before.dropped_turns + 2 * turns
    kept = len(before.history) - (after.dropped_turns - before.dropped_turns)
    assert [t.text for t in after.history[:kept]] == [t.text for t in before.history[-kept:]] if kept > 0 else True
    lost = [s for s in SLOTS if before.profile.known(s) and not after.profile.known(s)]
    assert not lost, f"the turn lost {lost}"


def assert_answered(reply: Any, where: str) -> None:
    """A reply without an internal error, whose tools the planner called with arguments they accept (what a
    loaded session or a parsed message holds is always within what the tools take)."""
    assert reply.text.strip() and reply.mode != "error", (where, reply.text[:300])
    assert not any("internal error" in n for n in reply.notices), (where, reply.notices)
    refused = [f"{c.name}: {c.error}" for c in reply.tool_calls if c.error_kind == "validation"]
    assert not refused, (where, refused)


def ui_panel(session: Session, lang: str) -> None:
    """What the web UI draws for a resumed session: the profile panel, the history, the comparison table."""
    from advisor.ui import profile, render

    profile.profile_values(session.profile)
    profile.profile_markdown(session.profile, lang)
    render.history_messages(session, lang)
    render.panel_comparison(session.last_results, lang, profile.budget_currency(session.profile), session.lang)


@examples(30)
@given(case=edited_session(), message=st.one_of(st.sampled_from(["and fp16?", "那 FP16 呢", "recommend"]), odd_text))
def test_a_session_file_loads_or_is_refused_by_field_and_a_turn_on_it_loses_nothing(
        case: tuple[dict[str, Any], str, bool], message: str) -> None:
    """A session file (CLI ``--session``, API ``session=``, UI upload) edited in one field: refused with a message
    naming that field, or loaded; then a turn answers without an internal error, the UI can draw it, nothing
    in it is lost, and it saves and loads back the same."""
    from advisor.ui.api import load_session_text

    data, field, junk = case
    text = json.dumps(data, ensure_ascii=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.json"
        path.write_text(text, encoding="utf-8")
        try:
            session = Session.load(path)
        except SessionError as exc:
            event("refused")
            assert_error(str(exc), {field: None}, f"{field} in {str(data)[:200]}")
            with pytest.raises(Exception, match=re.escape(field)):
                load_session_text(text)
            return
    event("junk loaded" if junk else "loaded")
    before = session.model_copy(deep=True)
    ui_panel(session, "en")
    reply = Advisor(search_k=0).reply(message, session)
    assert_answered(reply, field)
    if not re.search(r"reset|start over|重新|重来|清空", message, re.IGNORECASE):
        assert_nothing_lost(before, session, 1)
    ui_panel(session, "zh")
    again = Session.from_json(session.to_json())
    assert again.model_dump() == session.model_dump()


def _edges(prop: dict[str, Any], defs: dict[str, Any]) -> list[Any]:
    """The extreme values a numeric schema property allows: its maximum, or far beyond any real input."""
    if "$ref" in prop:
        return _edges(defs[prop["$ref"].rsplit("/", 1)[-1]], defs)
    for option in prop.get("anyOf", []):
        if option.get("type") in ("integer", "number"):
            return _edges(option, defs)
    if prop.get("type") == "integer":
        return [int(prop.get("maximum", 10**30))]
    if prop.get("type") == "number":
        return [float(prop.get("maximum", 1e300))]
    if prop.get("type") == "object" and "additionalProperties" in prop:  # {'rtx-4090': count}
        return [{"rtx-4090": v} for v in _edges(prop["additionalProperties"], defs)]
    if prop.get("type") == "object" and "properties" in prop:  # the budget's amount
        inner = {k: _edges(v, defs) for k, v in prop["properties"].items()}
        return [{"amount": v, "currency": "USD"} for v in inner.get("amount", [])]
    return []


def profile_edges() -> list[tuple[str, Any]]:
    _, defs = session_schema()
    return [(name, v) for name, prop in defs["Profile"]["properties"].items() for v in _edges(prop, defs)]


@pytest.mark.parametrize(("field", "value"), profile_edges())
def test_every_profile_number_at_its_schema_edge_is_refused_by_name_or_answered(field: str, value: Any) -> None:
    """Each number of the profile at the most its schema allows (or 1e300 where it sets no bound): the session
    file is refused naming the field, or a turn on it answers with every tool taking what the planner gives it."""
    data = json.loads(base_session())
    data["profile"][field] = value
    try:
        session = Session.from_json(json.dumps(data))
    except SessionError as exc:
        assert field in str(exc)
        return
    ui_panel(session, "en")
    for message in ("and fp16?", "recommend"):
        assert_answered(Advisor(search_k=0).reply(message, session), f"{field}={value}")


@pytest.mark.parametrize("field, value", [("context_tokens", 10**30), ("concurrency", 10**30), ("params_b", 1e300),
                                          ("dataset_tokens", 1e300), ("power_limit_w", float("inf")),
                                          ("budget", {"amount": float("inf"), "currency": "USD"})])
def test_an_absurd_profile_number_in_a_session_file_is_refused_by_name(field: str, value: float) -> None:
    """A session whose context was 10**30 broke ``/chat`` and the UI tab; now the file is refused, naming it."""
    data = json.loads(base_session())
    data["profile"][field] = value
    with pytest.raises(SessionError, match=field):
        Session.from_json(json.dumps(data))


# ---------------------------------------------------------------------------------------------- GPU files
def toml_value(value: Any) -> str:
    """``value`` written as TOML (JSON's strings, numbers and lists are TOML's too; inf and nan as TOML spells)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


@cache
def gpu_file_schemas() -> dict[str, dict[str, Any]]:
    from knowledge.user_gpus import GPUProfile, Measured

    return {"gpu": GPUProfile.model_json_schema(), "measured": Measured.model_json_schema()}


@st.composite
def gpu_file(draw: st.DrawFn) -> tuple[str, int, str | None]:
    """A GPU file: ``[[gpu]]`` and ``[[measured]]`` tables from their schemas (fresh names), maybe one field junk.
    Returns the text, the number of [[gpu]] tables and the junk field."""
    tables, bad = [], None
    n_gpus = draw(st.integers(1, 2), label="gpus")
    for i in range(n_gpus + draw(st.integers(0, 1), label="measured")):
        key = "gpu" if i < n_gpus else "measured"
        schema = gpu_file_schemas()[key]
        entry = draw(schema_value(schema, schema.get("$defs", {})), label=key)
        if key == "gpu":
            entry["name"] = f"Zeta Card {i}" + draw(st.sampled_from(["", " Pro", "\u202e"]))
        else:
            entry.update(gpu="Zeta Card 0", model="llama-3.1-8b", precision="Q4_K_M")
            entry = {k: v for k, v in entry.items() if k != "training_mfu"} if "decode_tokens_per_s" in entry else \
                {**{k: v for k, v in entry.items() if k not in ("model", "precision")}, "training_mfu": 0.3}
        if bad is None and draw(st.integers(0, 3)) == 0:
            bad = draw(st.sampled_from(sorted(schema["properties"])), label="bad field")
            entry[bad] = draw(st.sampled_from([*BAD_NUMBERS[:-3], "", "x" * 200, [1], {"a": 1}, True]))
        body = "\n".join(f"{k} = {toml_value(v)}" for k, v in entry.items() if v is not None)
        tables.append(f"[[{key}]]\n{body}\n")
    return "\n".join(tables), n_gpus, bad


@examples(30)
@given(case=gpu_file())
def test_a_gpu_file_is_taken_whole_or_refused_in_one_line_naming_the_field(case: tuple[str, int, str | None]) -> None:
    """``$GPU_ADVISOR_GPUS``: every described card is taken (none dropped silently), or the file is refused in
    one line naming the field at fault; a card taken is sized and timed like a catalog one."""
    from advisor.toolspec import run_tool
    from knowledge import load_catalog
    from knowledge.user_gpus import load_user_gpus

    text, n_gpus, bad = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gpus.toml"
        path.write_text(text, encoding="utf-8")
        env = {"GPU_ADVISOR_GPUS": str(path)}
        gpus, _measured, problems = load_user_gpus(env)
        problem = "; ".join(problems) if isinstance(problems, list) else problems
        if problem:
            event("refused")
            assert "\n" not in problem and "Traceback" not in problem
            assert bad is None or bad in problem or "gpu" in problem, problem
            return
        event("taken")
        assert len(gpus) == n_gpus, "a described card was dropped without a word"
        load_catalog.cache_clear()
        try:
            with environment(**env):
                for tool in ("size_inference", "perf_decode"):
                    call = run_tool(tool, {"model": "llama-3.1-8b", "gpu": gpus[0].name})
                    assert call.ok or (call.error and call.error.strip()), call.error
                    assert not bad_numbers(call.result or {})
        finally:
            load_catalog.cache_clear()


# ---------------------------------------------------------------------------------------------- chat text
COUNT_WORDS = ("0", "-2", "1", "8", "1024", "1025", "2000", "99999", "10^30", "1e400")
phrase = st.one_of(
    st.sampled_from(["llama 3.1 70b", "qwen2.5 72b", "推理", "inference", "fine-tune with lora", "budget 10000 usd",
                     "预算 5 万", "context 1e30", "上下文 32k", "100 users", "fp16", "how many?", "cards", "张",
                     "重新开始"]),
    st.tuples(st.sampled_from(COUNT_WORDS), st.sampled_from([" ", "x ", " 张 ", " × "]),
              st.sampled_from(GPU_NAMES[:60])).map("".join),
    odd_text,
)
# a requirement stated with a number across orders of magnitude: each slot's words, from one up to past any limit
SLOT_PHRASES = ("context {n} tokens", "上下文 {n}", "{n} concurrent users", "{n} 并发", "budget {n} usd", "预算 {n} 元",
                "{n} GB problem in double precision", "power limit {n} W", "{n} W PSU", "train on {n} tokens",
                "finish in {n} days", "{n} epochs", "{n}B model", "{n} GPUs", "{n} nodes", "{n} GB RAM")
slot_phrase = st.tuples(st.sampled_from(SLOT_PHRASES), st.one_of(log_int(1, 10**16), st.sampled_from(
    [0, 1023, 1024, 1025, 16_777_216, 16_777_217, 20_000_000, 20_000_001, 10**15]))).map(
    lambda t: t[0].format(n=t[1]))
chat_text = st.lists(st.one_of(phrase, slot_phrase), min_size=1, max_size=4).map(" ".join)


@examples(30)
@given(first=chat_text, then=st.lists(chat_text, min_size=1, max_size=2))
def test_chat_turns_never_fail_and_never_lose_the_conversation(first: str, then: list[str]) -> None:
    """Free text, turn after turn: a reply every time (never an internal error, never an empty one), its notices
    plain text, and the conversation kept — the history grows by each exchange, known slots stay known."""
    adv = Advisor(search_k=0)
    session = adv.new_session()
    for text in [first, *then]:
        before = session.model_copy(deep=True)
        reply = adv.reply(text, session)
        assert_answered(reply, text)
        assert all(isinstance(n, str) and n.strip() and n.strip() != "None" for n in reply.notices), reply.notices
        if not re.search(r"重新开始|reset|start over", text, re.IGNORECASE):
            assert_nothing_lost(before, session, 1)


@examples(30)
@given(count=st.one_of(st.integers(-5, 0), st.integers(1025, 10**6)), gpu=st.sampled_from(GPU_NAMES[:80]),
       joint=st.sampled_from([" ", "x ", " × ", "张", " 张 "]), lang=st.sampled_from(["en", "zh"]))
def test_a_card_count_that_cannot_be_planned_is_said_back(count: int, gpu: str, joint: str, lang: str) -> None:
    """'2000 H100' was sized as one card without a word, like '0 GPUs' and '-2 cards' once were: a count outside
    1…1024 written next to a GPU is said back in a notice (the plan is never sized silently for another count)."""
    adv = Advisor(search_k=0)
    text = f"{count}{joint}{gpu} {'跑 llama 3.1 8b 推理' if lang == 'zh' else 'for llama 3.1 8b inference'}"
    reply = adv.reply(text, adv.new_session())
    said = {str(count), f"{count:,}"}
    assert any(s in n for n in reply.notices for s in said), (text, reply.notices)


def test_2000_h100_in_chat_is_said_back() -> None:
    adv = Advisor(search_k=0)
    reply = adv.reply("2000 H100 for llama 3.1 70b inference", adv.new_session())
    assert any("2,000" in n for n in reply.notices), reply.notices


# ---------------------------------------------------------------------------------------------- over HTTP
@pytest.mark.timeout(120)
def test_a_few_generated_calls_over_real_http() -> None:
    """The same properties through the running app (gradio_client): a result, or an AppError with a message."""
    pytest.importorskip("gradio_client")
    from gradio_client import Client
    from gradio_client.exceptions import AppError
    from ui_harness import running_app

    client = Client(running_app().url, verbose=False, download_files=False)
    cases: list[tuple[str, dict[str, Any], str | None]] = [
        ("/recommend", {"workload": "scientific", "problem_gb": 1e308}, "problem_gb"),
        ("/size", {"model": "llama-3.1-8b", "context": -5}, "context"),
        ("/perf", {"model": "no-such-model-x", "gpu": "RTX 4090"}, "no-such-model-x"),
        ("/size", {"model": "llama-3.1-8b", "gpu": "RTX 4090"}, None)]
    for route, kwargs, named_in_error in cases:
        try:
            result = client.predict(api_name=route, **kwargs)
        except AppError as exc:
            assert named_in_error and named_in_error in str(exc), (route, str(exc))
            continue
        assert named_in_error is None and not bad_numbers(result), (route, result)


# ---------------------------------------------------------------------------------------------- found by the properties
# Cases the properties above found, pinned so every run checks them.
def test_a_100000_b_custom_model_is_sized_not_refused_for_its_derived_layer_count() -> None:
    """params_b=100,000 (the most the schema allows) derived 31,000 layers: 'layers ≤ 10000', a field not given."""
    from advisor.toolspec import run_tool

    for tool in ("perf_prefill", "size_training"):
        call = run_tool(tool, {"params_b": 100_000, "gpu": "mi300x"})
        assert call.ok or "layers" not in (call.error or ""), call.error


def test_an_absurd_exchange_rate_is_refused_by_name_not_priced_at_infinity() -> None:
    from advisor.toolspec import run_tool

    call = run_tool("value_for_money", {"currency": "CNY", "cny_per_usd": 1e308, "options": [{"gpu": "mi300x"}]})
    assert not call.ok and "cny_per_usd" in (call.error or "")


def test_a_name_with_a_carriage_return_is_quoted_whole_in_its_error() -> None:
    """'unknown GPU '\\r'' was cut at the carriage return (errors keep their first line): 'unknown GPU ''."""
    from advisor.toolspec import run_tool

    call = run_tool("gpu_info", {"name": "H100\rX\u202e"})
    assert call.error == "unknown GPU 'H100\\rX\\u202e'" or call.error.startswith("unknown GPU 'H100\\rX\\u202e' —")


@pytest.mark.parametrize(("text", "count"), [("3 Moore Threads MTT S4000 for llama 3.1 8b", 3),
                                             ("3 Iluvatar CoreX BI-V150 for llama 3.1 8b", 3)])
def test_a_count_before_a_vendor_prefixed_name_is_read(text: str, count: int) -> None:
    from advisor.nlu import parse

    assert [g.count for g in parse(text).gpus] == [count]


@pytest.mark.parametrize(("text", "said"), [
    ("scientific computing, a 10000000 GB problem in double precision", "8,000,000"),
    ("llama 3.1 70b inference, context 18000000 tokens", "10,000,000"),
    ("build check for 4x RTX 4090 on a 999V/16A outlet", "999v-16a"),
    ("llama 3.1 8b inference, budget 10000000000 usd", "1,000,000,000"),
])
def test_a_value_beyond_what_the_tools_take_is_said_back_not_failed_on(text: str, said: str) -> None:
    """A value the parser read but no tool takes (a 10,000,000 GB problem: the tools stop at 8e15 bytes) failed
    the tool with 'invalid arguments'; now it is said back with the most allowed, and the rest is answered."""
    reply = Advisor(search_k=0).reply(text, Advisor(search_k=0).new_session())
    assert any(said in n for n in reply.notices), reply.notices
    assert_answered(reply, text)


@pytest.mark.parametrize(("field", "value"), [("gpu", "user-rtx-3080"), ("model", "no-such-model"), ("cpu", "x"),
                                              ("compare", ["rtx-4090", "zz"]), ("sci_code", "zz"), ("mains", "0")])
def test_a_session_naming_what_the_catalog_lacks_is_refused_by_field(field: str, value: Any) -> None:
    """A session saved with a GPU file's card, loaded without that file, failed every later turn (UnknownNameError
    inside the turn); an unknown scientific code likewise (StopIteration). Now the file is refused by field."""
    data = json.loads(base_session())
    data["profile"][field] = value
    with pytest.raises(SessionError, match=f"profile.{field}"):
        Session.from_json(json.dumps(data))


def test_the_size_endpoint_names_its_own_parameters_when_training() -> None:
    """``/size`` (training) passed ``context`` on as the tool's ``seq``, and its error named ``seq``."""
    import gradio as gr

    from advisor.ui.api import size

    with pytest.raises(gr.Error) as info:
        size(model="llama-3.1-8b", context=0, batch=0, workload="training")
    assert "context:" in info.value.message and "batch:" in info.value.message and "seq" not in info.value.message


@pytest.mark.parametrize("text", ["llama 3.1 70b inference, 100 MI300", "MI300 100 MI325X"])
def test_more_cards_than_one_machine_holds_are_checked_and_timed_per_node(text: str) -> None:
    """100 cards went whole into the build check (64 of a model at most in one machine) and into the decode
    estimate (64 at most in one tensor-parallel group): both refused them. They take one node's share, as the
    main sizing path does."""
    adv = Advisor(search_k=0)
    session = adv.new_session()
    adv.reply("llama 3.1 70b", session)
    assert_answered(adv.reply(text, session), text)
