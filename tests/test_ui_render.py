"""Unit tests of the web UI's pure renderers: chat steps, chart, comparison table, checklist, profile.

Expected numbers are derived here from first principles (bytes → GB = 1e9 B, GiB = 2**30 B; bar
widths proportional to bytes) or taken from hand-written inputs; where a real tool result is used,
the assertion is against that tool's own fields, never against the renderer's output.
"""

from __future__ import annotations

import math
import re

import pytest

from advisor.engine import Advisor, FinalReply, TextDelta, ToolFinished, ToolStarted
from advisor.engine import Reply as EngineReply
from advisor.present.calls import result as call_result
from advisor.session import Citation, Profile, ToolCall
from advisor.toolspec import run_tool
from advisor.ui import chart, i18n, profile, render
from tools.inference_memory import InferenceMemoryResult
from tools.recommend import Recommendation

# --------------------------------------------------------------------------- safe text

HOSTILE = '<script>alert(1)</script> <img src=x onerror="alert(2)"> & <b>bold</b>'


def test_user_html_is_escaped_everywhere() -> None:
    out = render.safe_markdown(HOSTILE)
    assert "<" not in out and ">" not in out
    assert "&lt;script&gt;" in out and "&lt;img src=x onerror=" in out
    assert "&amp;" in out  # a literal ampersand stays visible as '&'
    msg = render.user_message(HOSTILE)
    assert msg.role == "user" and "<script>" not in msg.content


def test_code_spans_and_fences_are_left_for_the_markdown_renderer() -> None:
    text = "use `a<b` then\n```\nx = 1 < 2\n```\nand <i>"
    out = render.safe_markdown(text)
    assert "`a<b`" in out and "x = 1 < 2" in out  # shown literally by Markdown already
    assert out.endswith("and &lt;i&gt;")


def test_nul_and_none_are_harmless() -> None:
    assert render.safe_markdown(None) == ""
    assert render.safe_markdown("a\x00b") == "ab"


# --------------------------------------------------------------------------- tool steps


def _size_call() -> ToolCall:
    call = run_tool("size_inference", {"model": "llama-3.1-8b", "context": 8192, "gpu": "RTX 4090"})
    assert call.ok, call.error
    return call


def test_finished_tool_step_is_collapsible_with_inputs_and_result() -> None:
    call = _size_call()
    msg = render.tool_step_message(call, "zh")
    meta = msg.metadata
    assert meta["status"] == "done"  # collapsed once finished
    assert meta["title"].startswith("🔧 显存估算")  # the registry's Chinese title
    assert "Llama-3.1-8B" in meta["title"] and "GeForce RTX 4090" in meta["title"]  # names, not ids
    assert meta["duration"] == pytest.approx(call.duration_ms / 1000, abs=1e-3)
    assert meta["id"] == call.call_id
    need_gb = call.result["per_gpu_bytes"] / 1e9
    assert f"{need_gb:,.1f} GB" in msg.content  # the summary uses decimal GB
    assert '"context": 8192' in msg.content  # inputs as JSON
    assert ("放得下" if call.result["fits"] else "放不下") in msg.content


def test_pending_and_failed_steps() -> None:
    pending = render.tool_step_message(
        {"name": "recommend", "arguments": {"workload": "inference"}}, "en", pending=True
    )
    assert pending.metadata["status"] == "pending" and pending.metadata["title"].startswith("🔧 Recommendation")
    failed = run_tool("size_inference", {"model": "<img src=x onerror=alert(1)>", "context": 4096})
    assert not failed.ok
    msg = render.tool_step_message(failed, "en")
    assert msg.metadata["title"].startswith("⚠️")
    assert "<img" not in msg.content.split("**Error**")[1]  # the echoed name is escaped
    assert "Error" in msg.content


def test_step_summaries_quote_the_tool_fields() -> None:
    dec = run_tool("perf_decode", {"model": "llama-3.1-8b", "gpu": "RTX 4090", "precision": "bf16"})
    assert dec.ok
    line = render.result_summary("perf_decode", dec.result, "en")
    assert f"{dec.result['tokens_per_s']:,.1f} tokens/s" in line
    lo, hi = dec.result["tokens_per_s_range"]
    assert f"{lo:,.1f}–{hi:,.1f}" in line
    chk = run_tool("check_build", {"gpus": [{"gpu": "RTX 4090", "count": 4}], "psu_w": 1200, "mains": "120v-15a"})
    assert chk.result is not None
    sev = [f["severity"] for f in chk.result["findings"]]
    expected = f"❌ {sev.count('error')} error · {sev.count('warning')} warning · {sev.count('info')} info"
    assert sev.count("error") >= 1 and render.result_summary("check_build", chk.result, "en") == expected


# --------------------------------------------------------------------------- citations, notices


def test_citations_nest_each_passage_under_one_sources_step() -> None:
    cites = [
        Citation(id="vram/en/kv", title="KV cache", source="guide §2", text="KV grows <linearly>"),
        Citation(id="x/y", title="Long", text="z" * 5000),
    ]
    msgs = render.citations_messages(cites, "en", parent="src-1")
    assert msgs[0].metadata["title"] == "📚 Sources (2)" and msgs[0].metadata["id"] == "src-1"
    assert [m.metadata.get("parent_id") for m in msgs[1:]] == ["src-1", "src-1"]
    assert msgs[1].metadata["title"] == "[vram/en/kv] KV cache"
    assert "&lt;linearly&gt;" in msgs[1].content and "guide §2" in msgs[1].content
    assert len(msgs[2].content) <= render.MAX_PASSAGE_CHARS + 10
    assert render.citations_messages([], "en") == []


def test_notices_message() -> None:
    assert render.notices_message([], "zh") is None
    note = render.notices_message(["LLM <down>"], "zh")
    assert note is not None and not note.metadata  # open, not a fold
    assert note.content.startswith("**ℹ️ 提示**") and "&lt;down&gt;" in note.content


# --------------------------------------------------------------------------- event folding


def test_turn_view_folds_a_real_engine_turn() -> None:
    """Answer first, then the notes, then one collapsible '🔧 N calculations' step holding every tool step."""
    adv = Advisor(search_k=0)  # no retrieval: these tests are about rendering, not the index
    session = adv.new_session()
    view = render.TurnView("en")
    events = list(adv.stream("Can I fine-tune Llama-3-8B with QLoRA on one RTX 4090?", session))
    for ev in events:
        view.apply(ev)
    final = next(ev.reply for ev in events if isinstance(ev, FinalReply))
    started = [ev.name for ev in events if isinstance(ev, ToolStarted)]
    assert started == [c.name for c in final.tool_calls]
    answer, group, *rest = view.messages
    assert not answer.metadata and answer.content == render.safe_markdown(final.text)
    n = len(final.tool_calls)
    assert group.metadata["title"] == f"🔧 {n} calculation{'s' if n != 1 else ''}"
    assert group.metadata["status"] == "done"
    steps = [m for m in rest if m.metadata.get("parent_id") == group.metadata["id"]]
    assert len(steps) == n >= 1 and all(m.metadata["status"] == "done" for m in steps)  # no spinner left
    assert not any(m.metadata.get("title", "").startswith("📚") for m in view.messages)  # sources: in the text


def test_turn_view_shows_the_answer_above_its_calculations_and_replaces_a_rebuilt_text() -> None:
    view = render.TurnView("en")
    assert [m.content for m in view.messages] == ["⏳ Working…"]  # the answer's place, held from the start
    view.apply(ToolStarted(call_id="c1", name="size_inference", title="x", arguments={"context": 1}))
    group, step = view.messages[1:3]
    assert group.metadata["status"] == "done"  # folded while it runs: a pending group would be opened
    assert step.metadata["status"] == "pending" and step.metadata["parent_id"] == group.metadata["id"]
    view.apply(ToolFinished(call_id="c1", name="size_inference", title="x", ok=False, error="bad"))
    group = view.messages[1]
    assert group.metadata["status"] == "done" and "⚠️ 1" in group.metadata["title"]
    assert view.messages[2].metadata["title"].startswith("⚠️")  # the failed step inside it
    view.apply(TextDelta(text="A 4090 runs 405B "))
    view.apply(TextDelta(text="easily"))
    assert view.messages[0].content == "A 4090 runs 405B easily"  # the answer goes above the calculations
    view.apply(TextDelta(text="", replace=True))
    view.apply(TextDelta(text="It does not fit."))
    assert view.messages[0].content == "It does not fit."
    view.apply(FinalReply(reply=EngineReply(text="It does **not** fit.", lang="en", notices=["replaced"])))
    assert view.messages[0].content == "It does **not** fit."
    assert view.messages[1].content.startswith("**ℹ️ Notes**")  # right under the answer, open
    assert len(view.messages) == 4  # answer, the notes, the group, its one step


# --------------------------------------------------------------------------- memory chart


def _typed(name: str, args: dict):
    """A real tool call's result as its output model (what the panel draws from)."""
    call = run_tool(name, args)
    assert call.ok, call.error
    return call_result(call)


def _sizing(**args: object) -> InferenceMemoryResult:
    r = _typed("size_inference", {"model": "llama-3.1-8b", "precision": "bf16", "context": 8192, **args})
    assert isinstance(r, InferenceMemoryResult)
    return r


SEGMENT_ORDER = ("weights", "kv_cache", "activations", "gradients", "optimizer", "overhead")


def test_chart_data_keeps_nonzero_segments_in_order() -> None:
    r = _sizing(gpu="RTX 4090")
    expected = [(k, getattr(r.breakdown, k)) for k in SEGMENT_ORDER if getattr(r.breakdown, k) > 0]
    assert [k for k, _ in expected] == ["weights", "kv_cache", "activations", "overhead"]  # inference: no optimizer
    assert chart.memory_chart_data(r) == expected and chart.memory_chart_data(None) == []


def test_chart_frame_in_gb_and_gib() -> None:
    r = _sizing(gpu="RTX 4090")
    frame = chart.memory_chart_frame(r, "en")
    assert list(frame["category"]) == ["Weights", "KV cache", "Activations", "Overhead", "Usable memory"]
    assert frame["GB"][0] == pytest.approx(r.breakdown.weights / 1e9)
    # 8,192 tokens × 32 layers × 2 (K, V) × 8 KV heads × 128 × 2 B = 1 GiB of KV cache (vLLM rounds to 16-token blocks)
    assert frame["GiB"][1] == pytest.approx(1.0)
    assert frame["GiB"][4] == pytest.approx(0.92 * 23.5)  # vLLM reserves 0.92 × the 23.5 GiB the engine sees


def _widths(svg: str) -> dict[str, float]:
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r'class="seg seg-(\w+)" x="[\d.]+" y="26" width="([\d.]+)"', svg)}


def test_chart_bars_are_proportional_and_limit_is_the_vllm_reservation() -> None:
    r = _sizing(gpu="RTX 4090")
    cap, reserved, need = r.gpu_memory_bytes, r.reserved_bytes, r.per_gpu_bytes
    assert cap and reserved and reserved == pytest.approx(0.92 * cap, abs=2**20)
    svg = chart.memory_chart_svg(r, "en")
    scale = max(need, cap) * 1.06
    widths = _widths(svg)
    assert set(widths) == {"weights", "kv_cache", "activations", "overhead"}
    for key, w in widths.items():
        assert w == pytest.approx(584 * getattr(r.breakdown, key) / scale, abs=0.06)
    limit = re.search(r'class="limit" x1="([\d.]+)"', svg)
    assert limit and float(limit.group(1)) == pytest.approx(8 + 584 * reserved / scale, abs=0.06)
    assert "✅ fits" in svg and f"headroom {(reserved - need) / 1e9:,.1f} GB" in svg
    assert "vLLM 0.92 ×" in svg


def test_chart_says_how_much_is_missing() -> None:
    r = _sizing(gpu="RTX 4060 Ti 16GB")  # 16 GB: the ~18 GB of an 8B model at bf16 does not fit
    assert r.fits is False
    short = r.per_gpu_bytes - (r.reserved_bytes or 0)
    svg = chart.memory_chart_svg(r.model_copy(update={"gpu": "<b>GPU</b>"}), "zh")
    assert f"缺口 {short / 1e9:,.1f} GB" in svg and "❌ 放不下" in svg
    assert "<b>GPU</b>" not in svg and "&lt;b&gt;GPU&lt;/b&gt;" in svg
    assert "<script" not in svg and "http" not in svg  # self-contained, no scripts or remote assets


def test_chart_empty_state() -> None:
    assert "mem-empty" in chart.memory_chart_svg(None, "zh")
    assert i18n.t("chart_empty", "en") in chart.memory_chart_svg(None, "en")


# --------------------------------------------------------------------------- comparison table


def test_comparison_frame_from_a_real_recommendation() -> None:
    rec = _typed("recommend", {"workload": "inference", "model": "llama-3.1-70b", "precision": "int4",
                               "context": 8192, "budget_usd": 20000})
    assert isinstance(rec, Recommendation)
    frame = render.comparison_frame(rec, "en")
    options = rec.options[:8]
    assert len(frame) == len(options) >= 1
    assert list(frame.columns) == ["Configuration", "Fits", "Per GPU need / usable (GB)", "Est. tokens/s",
                                   "Power (W)", "Price (USD)", "tokens/s per $1k"]
    first, row = options[0], frame.iloc[0]
    assert row["Configuration"] == f"{first.count}× {first.gpu}"
    assert row["Fits"] == ("✅" if first.fits else "❌")
    assert first.per_gpu_bytes is not None
    usable = first.gpu_memory_bytes  # per GPU as the engine sees it: the figure the recommender's fit weighs
    assert row["Per GPU need / usable (GB)"] == f"{round(first.per_gpu_bytes / 1e9, 1):,} / {round(usable / 1e9, 1):,}"
    assert row["Est. tokens/s"] == pytest.approx(first.decode_tokens_per_s, abs=0.05)
    assert row["Price (USD)"] == f"${first.total_price_usd:,.0f}"  # money with its symbol, in the budget's USD
    assert row["tokens/s per $1k"] == pytest.approx(first.perf_per_price, abs=0.005)


def test_comparison_frame_uses_fp64_for_scientific_work() -> None:
    rec = _typed("recommend", {"workload": "scientific", "budget_usd": 200000})
    assert isinstance(rec, Recommendation) and rec.options
    frame = render.comparison_frame(rec, "zh", currency="USD")
    assert "FP64 TFLOPS" in frame.columns and "预估 tokens/s" not in frame.columns
    first = rec.options[0]
    assert frame.iloc[0]["FP64 TFLOPS"] == pytest.approx(first.fp64_tflops, abs=0.05)
    assert frame.iloc[0]["每千美元 FP64 TFLOPS"] == pytest.approx(first.perf_per_price, abs=0.005)
    md = render.frame_markdown(frame)
    assert md.splitlines()[0].startswith("| 配置 |") and f"{first.count}× {first.gpu}" in md
    empty = render.comparison_frame(None, "en")
    assert empty.empty and render.frame_markdown(empty) == ""


def test_ruled_out_configurations_are_listed_with_their_reasons_in_the_ui_language() -> None:
    rec = _typed("recommend", {"workload": "inference", "model": "llama-3.1-70b", "precision": "fp8", "context": 8192,
                               "budget_cny": 150000})
    assert isinstance(rec, Recommendation)
    memory = next(r for r in rec.rejected if r.stage == "memory")
    for lang, title, reason in (("zh", "排除的配置", "显存不足"), ("en", "Ruled out", "does not fit")):
        notes = render.comparison_notes(rec, lang)
        assert title in notes and reason in notes and memory.gpu in notes


# --------------------------------------------------------------------------- checklist


def _finding_text(f: dict, lang: str) -> tuple[str, str]:
    """A finding's message and fix as the tool states them in ``lang``."""
    from knowledge.messages import render as say

    return say(f["message"], lang), say(f["fix"], lang) if f.get("fix") else ""


def test_checklist_from_a_real_build_check_lists_errors_first() -> None:
    call = run_tool(
        "check_build",
        {"gpus": [{"gpu": "RTX 4090", "count": 4}], "psu_w": 1200, "mains": "120v-15a", "workload": "inference"},
    )
    assert call.ok, call.error
    report = call.result
    assert report is not None
    md = render.calls_markdown([call], "zh")
    lines = [ln for ln in md.splitlines() if ln.startswith("- [")]
    severities = [("error" if "[错误]" in ln else "warning" if "[警告]" in ln else "info") for ln in lines]
    assert severities == sorted(severities, key={"error": 0, "warning": 1, "info": 2}.get)
    assert len(lines) == len(report["findings"])
    psu = next(f for f in report["findings"] if f["id"] == "power-psu-headroom")
    for lang in ("zh", "en"):
        said, fix = _finding_text(psu, lang)
        text = render.calls_markdown([call], lang)
        assert render.safe_markdown(said) in text and render.safe_markdown(fix) in text
        assert "power-psu-headroom" not in text  # findings show severity, message and fix, never a rule id
    assert not report["ok"] and "✓" not in md
    assert "1,200" in md or "1200" in md  # the totals behind the findings: the PSU named in the request


def test_checklist_empty_and_clean() -> None:
    assert render.calls_markdown([None], "en") == ""
    clean = run_tool("check_build", {"gpus": [{"gpu": "RTX 4090", "count": 1}], "workload": "inference"})
    assert clean.ok and clean.result is not None and clean.result["ok"]
    assert "✓" in render.calls_markdown([clean], "zh")


# --------------------------------------------------------------------------- profile panel


def test_profile_values_and_edits() -> None:
    prof = Profile(
        use_case="inference", model="llama-3.1-70b", precision="int4", context_tokens=8192, gpu="rtx-4090", gpu_count=2
    )
    values = profile.profile_values(prof)
    assert values == {
        "use_case": "inference",
        "model": "llama-3.1-70b",
        "params_b": None,
        "precision": "int4",
        "context_tokens": 8192,
        "concurrency": None,
        "method": None,
        "gpu": "rtx-4090",
        "gpu_count": 2,
    }
    edited = dict(values, precision="fp16", context_tokens=32768.0, concurrency=float("nan"), method="")
    assert profile.profile_changes(values, edited) == {"precision": "fp16", "context_tokens": 32768}
    assert isinstance(profile.profile_changes(values, edited)["context_tokens"], int)
    assert profile.profile_changes(values, dict(values, gpu=" ")) == {"gpu": None}
    md = profile.profile_markdown(prof, "zh")
    assert "推理服务" in md and "Llama-3.1-70B" in md and "GeForce RTX 4090" in md  # names, not ids


# --------------------------------------------------------------------------- calculators' text


def test_memory_summary_shows_terms_in_gb_with_formulas() -> None:
    args = {"model": "llama-3.1-8b", "precision": "bf16", "context": 4096, "gpu": "RTX 4090"}
    call = run_tool("size_inference", args)
    assert call.ok and call.result is not None
    weights = next(t for t in call.result["terms"] if t["name"] == "weights")
    md = render.calls_markdown([call], "en")
    assert f"| Weights | {weights['value'] / 1e9:.1f} GB |" in md  # 10 GB and above: one decimal
    assert "| 权重 |" in render.calls_markdown([call], "zh")


def test_perf_summary_quotes_decode_prefill_and_ttft() -> None:
    base = {"model": "llama-3.1-8b", "gpu": "RTX 4090", "precision": "bf16"}
    dec = run_tool("perf_decode", {**base, "context": 4096})
    pre = run_tool("perf_prefill", {**base, "prompt_tokens": 4096})
    assert dec.result is not None and pre.result is not None
    md = render.calls_markdown([dec, pre], "en")
    assert f"{dec.result['tokens_per_s']:,.1f} tokens/s" in md
    ttft = pre.result["ttft_s"]
    assert (f"{ttft * 1e3:,.1f} ms" if ttft < 1 else f"{ttft:,.2f} s") in md
    assert math.isfinite(ttft)


# --------------------------------------------------------------------------- labels


def test_every_label_exists_in_both_languages() -> None:
    cjk = re.compile(r"[\u4e00-\u9fff]")
    keys = i18n.labels()
    assert len(keys) > 100 and "send" in keys
    for key in keys:
        zh, en = i18n.t(key, "zh"), i18n.t(key, "en")
        assert zh.strip() and en.strip(), key
        assert not cjk.search(en), f"{key}: English label has Chinese text"
    chinese = sum(1 for key in keys if cjk.search(i18n.t(key, "zh")))
    assert chinese >= 0.8 * len(keys)  # the rest are shared terms such as 'FP64 TFLOPS'
    assert i18n.t("send", "zh-CN") == "发送" and i18n.t("send", "fr") == "Send"
    with pytest.raises(KeyError):
        i18n.t("no-such-label", "en")
    assert len(i18n.EXAMPLES["zh"]) >= 2 and len(i18n.EXAMPLES["en"]) >= 2
    assert all(cjk.search(x) for x in i18n.EXAMPLES["zh"])


def test_a_resumed_session_rebuilds_its_chat() -> None:
    adv = Advisor(search_k=0)  # no retrieval: these tests are about rendering, not the index
    session = adv.new_session()
    adv.greeting(session, "en")
    adv.reply("Can I fine-tune Llama-3-8B with QLoRA on one RTX 4090?", session)
    adv.reply("what about two cards?", session)
    msgs = render.history_messages(session, "en")
    users = [m for m in msgs if m.role == "user"]
    assert [m.content for m in users] == [render.safe_markdown(t.text) for t in session.history if t.role == "user"]
    groups = {m.metadata["id"] for m in msgs if str(m.metadata.get("id", "")).startswith("calcs-")}
    steps = [m for m in msgs if m.metadata.get("parent_id") in groups]
    assert len(groups) == sum(1 for t in session.history if t.tool_calls)  # one group per turn, ids unique
    assert len(steps) == sum(len(t.tool_calls) for t in session.history)
    assert msgs[0].role == "assistant" and "Hello" in msgs[0].content


# --------------------------------------------------------------------------- one language, one usable figure

_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
_ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[ ]+[A-Za-z][A-Za-z'’-]*){2,}")


def _ok(name: str, args: dict) -> dict:
    call = run_tool(name, args)
    assert call.ok and call.result is not None, call.error
    return call.result


def _strip_names(text: str) -> str:
    """Chinese output minus what stays in English on purpose: catalog names, code spans, tags, links."""
    from knowledge import load_catalog

    cat = load_catalog()
    names = {g.name for g in cat.gpus} | {m.name for m in cat.models} | {p.name for p in cat.platforms}
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, " ")
    return text


def _panel(lang: str) -> list[str]:
    """Every panel piece, rendered from real tool results."""
    vllm = _ok(
        "size_inference",
        {
            "model": "llama-3.1-8b",
            "precision": "int4",
            "context": 32768,
            "batch": 10,
            "gpu": "RTX 4090",
            "gpus": 2,
            "engine": "vllm",
        },
    )
    offload = _ok(
        "size_inference",
        {"model": "llama-3.1-70b", "precision": "Q4_K_M", "context": 8192, "gpu": "RTX 4090", "engine": "llamacpp"},
    )
    train = _ok("size_training", {"model": "llama-3.1-8b", "method": "qlora", "seq": 2048, "gpu": "RTX 4090"})
    base = {"model": "llama-3.1-8b", "gpu": "RTX 4090", "precision": "bf16"}
    dec = _ok("perf_decode", {**base, "context": 4096})
    pre = _ok("perf_prefill", {**base, "prompt_tokens": 4096})
    srv = _ok("perf_serving", {**base, "context": 4096})
    rec = _ok(
        "recommend",
        {"workload": "inference", "model": "llama-3.1-70b", "precision": "fp8", "context": 8192, "budget_cny": 150000},
    )
    chk = _ok(
        "check_build",
        {"gpus": [{"gpu": "RTX 4090", "count": 4}], "psu_w": 1200, "mains": "120v-15a", "workload": "inference"},
    )
    typed_rec = call_result(ToolCall(name="recommend", result=rec))
    assert isinstance(typed_rec, Recommendation)
    cur = render.display_currency("CNY", lang, typed_rec)
    calls = {name: ToolCall(name=name, result=r) for name, r in (("size_inference", vllm), ("size_training", train),
             ("perf_decode", dec), ("perf_prefill", pre), ("perf_serving", srv), ("check_build", chk))}
    out = [render.calls_markdown([ToolCall(name="size_inference", result=offload)], lang),
           render.calls_markdown([calls["size_inference"]], lang),
           render.calls_markdown([calls["size_training"]], lang)]
    sized = [("size_inference", vllm), ("size_inference", offload), ("size_training", train)]
    out += [chart.memory_chart_svg(chart.sizing_of(ToolCall(name=n, result=r)), lang) for n, r in sized]
    out += [
        render.result_summary(n, r, lang)
        for n, r in (
            ("size_inference", vllm),
            ("perf_decode", dec),
            ("perf_prefill", pre),
            ("perf_serving", srv),
            ("recommend", rec),
            ("check_build", chk),
        )
    ]
    out += [
        render.calls_markdown([calls["perf_decode"], calls["perf_prefill"], calls["perf_serving"]], lang),
        render.frame_markdown(render.comparison_frame(typed_rec, lang, currency=cur)),
        render.comparison_notes(typed_rec, lang, currency=cur),
        render.calls_markdown([calls["check_build"]], lang),
    ]
    assert all(out), "every piece renders something"
    return out


def test_english_panel_has_no_chinese() -> None:
    for piece in _panel("en"):
        assert not _CJK.search(piece), _CJK.search(piece)


def test_chinese_panel_has_no_english_sentences() -> None:
    """Names, units and model ids stay as they are; no run of three English words is left."""
    for piece in _panel("zh"):
        runs = _ENGLISH_RUN.findall(_strip_names(piece))
        assert runs == [], runs


def test_no_rule_ids_raw_values_or_cli_flags_in_the_panel() -> None:
    rule_ids_and_flags = ("power-multi-psu", "power-wall-circuit", "pcie-lanes", "p2p-geforce", "--cpu", "--mains")
    for lang in ("zh", "en"):
        text = "\n".join(_panel(lang))
        raw_tier = ("(consumer)",) if lang == "zh" else ()  # in English 'consumer' is the tier's own word
        for leak in (*rule_ids_and_flags, "watch:", *raw_tier, "| memory-bound"):
            assert leak not in text, (lang, leak)
    zh = "\n".join(_panel("zh"))
    for raw in ("inference", "consumer", "workstation", "memory-bound", "sxm", "passive"):  # raw enum values
        assert raw not in _strip_names(zh), raw


def test_need_usable_and_verdict_agree_for_vllm_short_by_a_little() -> None:
    """Llama-3.1-8B int4, 32k context, 10 concurrent on 2× RTX 4090: vLLM needs 26.3 GB of its 23.2 GB reservation.

    Every place that states the fit — sizing summary, chart, chart table, chat step, build check, recommender —
    quotes the reservation (0.92 × the 25.2 GB the engine sees), never the 25.2 GB, beside "does not fit"."""
    from advisor import fmt

    r = _ok(
        "size_inference",
        {
            "model": "llama-3.1-8b",
            "precision": "int4",
            "context": 32768,
            "batch": 10,
            "gpu": "RTX 4090",
            "gpus": 2,
            "engine": "vllm",
        },
    )
    need, usable, visible = r["per_gpu_bytes"], r["reserved_bytes"], r["gpu_memory_bytes"]
    assert fmt.usable_bytes(r) == usable < visible
    assert need > usable and r["fits"] is False and need - usable < 5e9  # short by a little
    assert r["headroom_bytes"] == usable - need  # the tool's own verdict weighs the same two figures
    need_s, usable_s, short_s = (f"{x / 1e9:,.1f} GB" for x in (need, usable, need - usable))
    assert (need_s, usable_s, short_s) == ("26.3 GB", "23.2 GB", "3.0 GB")
    sized = chart.sizing_of(ToolCall(name="size_inference", result=r))
    for lang, verdict, short in (("en", "does not fit", "short by"), ("zh", "放不下", "缺口")):
        summary = render.calls_markdown([ToolCall(name="size_inference", result=r)], lang)
        assert need_s in summary and usable_s in summary and f"{verdict} · {short} {short_s}" in summary
        svg = chart.memory_chart_svg(sized, lang)
        assert f"{render.t('capacity', lang)} {usable_s}" in svg and f"{short} {short_s}" in svg
        assert f"{render.t('need', lang)} {need_s}" in svg
        step = render.result_summary("size_inference", r, lang)
        assert usable_s in step and verdict in step and f"{visible / 1e9:,.1f} GB" not in step
        frame = chart.memory_chart_frame(sized, lang)
        assert frame["GB"].iloc[-1] == pytest.approx(usable / 1e9)
    limit = re.search(r'class="limit" x1="([\d.]+)"', chart.memory_chart_svg(sized, "en"))
    assert limit is not None
    limit_x = float(limit.group(1))
    assert limit_x == pytest.approx(8 + 584 * usable / (max(need, visible) * 1.06), abs=0.06)
    # the build check and the recommender quote the same usable figure for this card
    chk = _ok(
        "check_build",
        {
            "gpus": [{"gpu": "RTX 4090", "count": 2}],
            "model": "llama-3.1-8b",
            "precision": "int4",
            "context": 32768,
            "workload": "inference",
        },
    )
    fit = next(f for f in chk["findings"] if f["category"] == "memory")
    assert fit["numbers"]["gpu_memory_bytes"] == usable
    rec = _ok(
        "recommend",
        {
            "workload": "inference",
            "model": "llama-3.1-8b",
            "precision": "int4",
            "context": 32768,
            "concurrency": 10,
            "budget_usd": 100000,
        },
    )
    two = next(x for x in rec["rejected"] if x["gpu_id"] == "rtx-4090" and x["count"] == 2)
    assert two["stage"] == "memory" and f"needs {need_s} per GPU, has {usable_s} usable" in two["reason"]["text"]
    from knowledge.messages import render as say

    assert f"每卡需要 {need_s}，可用 {usable_s}" in say(two["reason"], "zh")


def test_money_in_the_sessions_currency() -> None:
    rec = _ok(
        "recommend",
        {"workload": "inference", "model": "llama-3.1-70b", "precision": "int4", "context": 8192, "budget_cny": 100000},
    )
    first = rec["options"][0]
    rec = call_result(ToolCall(name="recommend", result=rec))
    assert isinstance(rec, Recommendation)
    assert render.display_currency("CNY", "en", rec) == "CNY"  # the budget's currency wins
    assert render.display_currency(None, "zh", rec) == "CNY"  # a Chinese page without a budget: yuan
    assert render.display_currency(None, "en", rec) == "USD"
    assert render.display_currency("EUR", "zh", rec) == "EUR"
    zh = render.comparison_frame(rec, "zh", currency="CNY")
    assert list(zh.columns)[-2:] == ["价格（CNY）", "每万元 tokens/s"]
    assert zh.iloc[0]["价格（CNY）"] == f"¥{first['total_price_cny']:,.0f}"
    per_10k = first["decode_tokens_per_s"] / (first["total_price_cny"] / 10_000)
    assert zh.iloc[0]["每万元 tokens/s"] == pytest.approx(per_10k, abs=0.006)
    notes = render.comparison_notes(rec, "zh", currency="CNY")
    assert f"¥{first['total_price_cny']:,.0f}" in notes and "$" not in notes
    md = profile.profile_markdown(Profile(use_case="inference", budget={"amount": 100000, "currency": "CNY"}), "zh")
    assert "¥100,000" in md and "推理服务" in md


def test_an_argument_named_in_an_error_is_called_by_its_form_label() -> None:
    from advisor.ui.i18n import t, ui_text

    text = "invalid arguments — context_tokens: Input should be greater than or equal to 1; gpu_count: bad"
    assert ui_text(text, "en") == (f"invalid arguments — {t('context_tokens', 'en')}: Input should be greater than"
                                   f" or equal to 1; {t('gpu_count', 'en')}: bad")
    assert "context_tokens" not in ui_text(text, "en")
    assert ui_text("invalid arguments — context: x", "en") == "invalid arguments — context: x"  # no form field


def test_the_comparison_shows_the_stack_weight_when_the_ranking_uses_different_ones() -> None:
    from tools.recommend import RecommendInput, recommend

    mixed = recommend(RecommendInput(workload="training", model="llama-3-8b", method="lora", budget_usd=3000))
    assert len({o.ecosystem_factor for o in mixed.options[:8]}) > 1  # an Arc or a Radeon among CUDA cards
    frame = render.comparison_frame(mixed, "en")
    weights = frame[render.t("col_eco", "en")].tolist()
    assert weights == [round(o.ecosystem_factor, 2) for o in mixed.options[:8]]
    cuda_only = recommend(RecommendInput(workload="inference", model="llama-3.1-8b", budget_usd=5000,
                                         cuda_required=True))
    assert render.t("col_eco", "en") not in render.comparison_frame(cuda_only, "en").columns
