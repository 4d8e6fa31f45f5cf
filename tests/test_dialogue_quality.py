"""Headline questions answered like a knowledgeable advisor: when the request does not fit (or finds no
configuration), the reply also shows what would work — each alternative computed by the tools, its
figures equal to a direct run of the same tool, and its verdict worded as the tool's ``fits`` says."""

from __future__ import annotations

import re

import pytest

from advisor import Advisor
from advisor.fmt import gb_short, num
from advisor.toolspec import run_tool
from knowledge.messages import render
from tools.result import Note

try:
    from fakes.script import alternatives, assert_grounded, calls, gb, one, turn
except ImportError:  # tests/ collected as a package
    from tests.fakes.script import alternatives, assert_grounded, calls, gb, one, turn


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def direct(name: str, **arguments: object) -> dict:
    """The tool run directly, with inputs written out in the test (not copied from the engine)."""
    call = run_tool(name, dict(arguments))
    assert call.ok, call.error
    return call.result


def price_cny(option: dict) -> str:
    return f"¥{option['total_price_cny']:,.0f}"


# ----------------------------------------------------------------------------- 1. budget, no precision


def test_72b_on_a_budget_without_precision_shows_what_quantising_buys(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "我想本地部署 Qwen2.5-72B 做推理，预算 10 万，买什么卡？")
    assert r.lang == "zh" and r.mode == "answer"
    # the requested (native BF16) configuration: sized and recommended, and the budget buys nothing
    size = one(r, "size_inference")
    assert "precision" not in size.arguments and size.arguments["model"] == "qwen2.5-72b"
    rec = one(r, "recommend")
    assert "precision" not in rec.arguments and rec.arguments["budget_cny"] == 100_000
    # a yuan budget in Chinese: cards sold in mainland China (said in the reply); export-controlled ones are out
    assert rec.arguments["region"] == "cn" and "按中国大陆能买到的卡推荐" in r.text
    native = direct("recommend", workload="inference", model="qwen2.5-72b", context=8192, concurrency=1,
                    budget_cny=100_000, region="cn")
    assert [o for o in native["options"] if o["total_price_usd"] is not None] == []
    assert "预算 ¥100,000 内没有能跑它的配置" in r.text.split("\n")[0]
    # 72.7 B parameters × 2 bytes ≈ 145 GB of BF16 weights (independent of the tool)
    assert gb(72.7e9 * 2) in r.text
    # the common deployment precisions, through sizing and the recommender
    sized = {c.arguments["precision"]: c for c in alternatives(r, "size_inference")}
    recs = {c.arguments["precision"]: c for c in alternatives(r, "recommend")}
    assert set(sized) == set(recs) == {"int4", "fp8", "Q4_K_M"}  # vLLM's two, and llama.cpp's for one user
    assert {p: c.arguments["engine"] for p, c in sized.items()} == {"int4": "vllm", "fp8": "vllm",
                                                                      "Q4_K_M": "llamacpp"}
    for prec in ("int4", "fp8"):
        need = direct("size_inference", model="qwen2.5-72b", precision=prec, engine="vllm", context=8192, batch=1,
                      gpus=1)
        assert gb(need["per_gpu_bytes"]) in r.text
        buy = direct("recommend", workload="inference", model="qwen2.5-72b", precision=prec, context=8192,
                     concurrency=1, budget_cny=100_000, region="cn")
        assert buy["options"], f"{prec}: the budget should buy something once quantised"
        best = buy["options"][0]
        # a grey-market board carries its mark wherever it is named (rule cn-modded)
        mark = {"cn-modded": "（灰色渠道）"}.get(best["market_rule"], "（需许可）") if best["market"] == "restricted" \
            else ""
        assert f"{best['count']}× {best['gpu']}{mark}（{price_cny(best)}" in r.text
        assert f"{best['decode_tokens_per_s']:,.1f} tokens/s" in r.text
    assert "如果量化" in r.text and r.text.index("如果量化") < r.text.index("显存构成")  # shown up front
    assert "精度" in r.question and "确认" in r.question  # then asks to confirm the precision
    assert_grounded(r, s)


def test_english_budget_question_labels_the_quantised_options(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "We want to run Qwen2.5-72B locally for inference, budget ¥100k — which GPUs?")
    assert r.lang == "en"
    assert "**If you quantise**" in r.text and "INT4 (AWQ/GPTQ, vLLM)" in r.text
    assert {c.arguments["precision"] for c in alternatives(r, "recommend")} == {"int4", "fp8", "Q4_K_M"}
    assert "Which precision should the plan use?" in r.question
    assert_grounded(r, s)


def test_no_alternatives_when_the_request_already_has_options(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "Serve Llama-3.1-70B to 20 users at 8k context — which GPUs?")
    assert one(r, "recommend").result["options"]
    assert alternatives(r, "size_inference") == [] and alternatives(r, "recommend") == []
    assert_grounded(r, s)


# ----------------------------------------------------------------------------- 2. "4bit" on two 4090s


@pytest.mark.parametrize("text,lang", [("70b 模型 4bit 跑推理 两张4090够不够", "zh"),
                                       ("70b model at 4bit for inference, are two 4090s enough?", "en")])
def test_4bit_70b_on_two_4090s_states_vllm_and_llamacpp_verdicts(adv: Advisor, text: str, lang: str) -> None:
    s = adv.new_session()
    r = turn(adv, s, text)
    assert r.lang == lang
    vllm = direct("size_inference", model="llama-3.1-70b", precision="int4", engine="vllm", gpu="rtx-4090", gpus=2,
                  context=8192, batch=1)
    llama = direct("size_inference", model="llama-3.1-70b", precision="Q4_K_M", engine="llamacpp", gpu="rtx-4090",
                   gpus=2, context=8192, batch=1)
    (gguf,) = [c for c in alternatives(r, "size_inference") if c.arguments["engine"] == "llamacpp"]
    assert gguf.arguments["precision"] == "Q4_K_M" and gguf.result["per_gpu_bytes"] == llama["per_gpu_bytes"]
    head = r.text.split("\n")[0]
    vllm_part, llama_part = head.split("GGUF")
    no, yes = ("放不下", "放得下") if lang == "zh" else ("does not fit", "fits")
    assert vllm["fits"] is False and no in vllm_part and yes not in vllm_part.replace(no, "")
    assert (yes if llama["fits"] else no) in llama_part
    for figure in (vllm["per_gpu_bytes"], vllm["reserved_bytes"], llama["per_gpu_bytes"], llama["gpu_memory_bytes"]):
        assert gb_short(figure) in head
    assert num(vllm["max_context_tokens"]) in vllm_part  # ~1.8k tokens is the vLLM ceiling at one request
    if llama["fits"]:
        assert num(llama["max_context_tokens"]) in llama_part
    # the guide's "70B at 4-bit ≈ 35 GB" is weights only: said, with the passage cited and the tool's figure
    note = next(line for line in r.text.split("\n") if "35 GB" in line)
    cited = [c for c in r.citations if f"[{c.id}]" in note]
    assert cited and "35 GB" in cited[0].text
    assert gb(vllm["weights_total_bytes"]) in note
    assert_grounded(r, s)


def test_fp16_follow_up_lists_each_alternative_with_the_tools_verdict() -> None:
    adv = Advisor(detailed=True)  # the full table; the short reply keeps the rows that work (next test)
    s = adv.new_session()
    turn(adv, s, "70b 模型 4bit 跑推理 两张4090够不够")
    r = turn(adv, s, "那 FP16 呢？")
    main = one(r, "size_inference")
    assert main.arguments["precision"] == "fp16" and main.result["fits"] is False
    alts = alternatives(r, "size_inference")
    # an FP8 KV cache is tried too, but 70B FP16 weights (70 GB per 4090) miss anyway: no row for it
    kv = [c for c in alts if c.arguments.get("kv_dtype") == "fp8"]
    assert len(kv) == 1 and kv[0].result["fits"] is False
    by_kind = {(c.arguments.get("precision"), c.arguments["engine"], c.arguments["gpus"]): c for c in alts
               if c not in kv}
    assert set(by_kind) == {("fp8", "vllm", 2), ("int4", "vllm", 2), ("Q4_K_M", "llamacpp", 2), ("fp16", "vllm", 3)}
    assert by_kind[("fp16", "vllm", 3)].arguments["parallel"] == "pp"  # 64 heads do not split three ways
    rows = [line for line in r.text.split("\n") if line.startswith("| ") and "GB |" in line]
    for (prec, engine, count), call in by_kind.items():
        ref = direct("size_inference", model="llama-3.1-70b", precision=prec, engine=engine, gpu="rtx-4090",
                     gpus=count, context=8192, batch=1, **({"parallel": "pp"} if count == 3 else {}))
        assert call.result["per_gpu_bytes"] == ref["per_gpu_bytes"]
        row = next(x for x in rows if f"| {gb_short(ref['per_gpu_bytes'])} |" in x)
        assert ("✓ 放得下" if ref["fits"] else "放不下") in row
    assert_grounded(r, s)


def test_short_reply_lists_only_the_alternatives_that_work(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "70b 模型 4bit 跑推理 两张4090够不够")
    r = turn(adv, s, "那 FP16 呢？")
    rows = [line for line in r.text.split("\n") if line.startswith("| ") and "GB |" in line]
    working = [c for c in alternatives(r, "size_inference") if c.result.get("fits") or c.result.get("offload_layers")]
    assert working and len(rows) == len(working) and not any("✗" in row for row in rows)


def test_too_big_for_one_card_reports_llamacpp_cpu_offload(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "Llama-3.1-70B in FP16 for inference on one RTX 4090?")
    assert one(r, "size_inference").result["fits"] is False
    ref = direct("size_inference", model="llama-3.1-70b", precision="Q4_K_M", engine="llamacpp", gpu="rtx-4090",
                 gpus=1, context=8192, batch=1)
    assert ref["fits"] is False and ref["offload_layers"] > 0
    row = next(line for line in r.text.split("\n") if "GGUF Q4_K_M" in line and line.startswith("|"))
    assert f"{num(ref['gpu_layers'])} stay on the GPU" in row and f"{num(ref['offload_layers'])} run" in row
    assert gb_short(ref["cpu_bytes"]) in row and "CPU offload" in row
    assert "does not fit on one GeForce RTX 4090" in r.text.split("\n")[0]
    assert_grounded(r, s)


def test_alternatives_do_not_replace_the_plan_under_discussion(adv: Advisor) -> None:
    s = adv.new_session()
    turn(adv, s, "70b 模型 4bit 跑推理 两张4090够不够")
    assert s.last_results["size_inference"].arguments["precision"] == "int4"
    assert s.last_results["alt/gguf/size_inference"].arguments["engine"] == "llamacpp"
    r = turn(adv, s, "换成 A100 呢")
    size = one(r, "size_inference")
    assert size.arguments["gpu"].startswith("a100") and size.result["fits"] is True
    # it fits: no lower precision or extra GPU is sized, only the GGUF figure a "4bit" question always gets
    assert [c.arguments["engine"] for c in alternatives(r, "size_inference")] == ["llamacpp"]
    assert all(c.arguments["gpu"] == size.arguments["gpu"] for c in alternatives(r, "size_inference"))
    assert "alt/more_gpus/size_inference" not in s.last_results  # last turn's alternatives are gone
    assert s.last_results["alt/gguf/size_inference"].arguments["gpu"] == size.arguments["gpu"]
    r = turn(adv, s, "why?")
    assert r.mode == "why" and "int4" in r.text and "Q4_K_M" not in r.text
    assert_grounded(r, s)


# ----------------------------------------------------------------------------- 3. a plain "yes"


def test_qlora_yes_asks_only_for_the_data_and_says_why(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "Can I fine-tune Llama-3-8B with QLoRA on one RTX 4090?")
    assert one(r, "size_training").result["fits"] is True and "fits on one GeForce RTX 4090" in r.text
    assert r.question.startswith("To estimate how long training takes")
    r = turn(adv, s, "about 20k samples, within 3 days")
    assert one(r, "training_time").ok
    q = r.question.lower()
    assert "budget" in q and "compare other options" in q  # optional, with its reason
    assert "cuda" not in q and "domestic" not in q
    r = turn(adv, s, "no budget limit")
    assert r.question is None or ("cuda" not in r.question.lower() and "domestic" not in r.question.lower())
    assert_grounded(r, s)


# ----------------------------------------------------------------------------- 5. languages, 6. term text


def test_chinese_reply_gives_tool_warnings_in_chinese(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "llama 3.1 8b fp16 推理，200k 上下文，一张 H100")
    warnings = one(r, "size_inference").result["warnings"]
    shown = [w for w in warnings if not w["text"].startswith("does not fit")]  # the verdict says that one
    assert shown and "工具说明" not in r.text
    _, block = r.text.split("**提醒**")
    for w in shown:
        assert render(w, "zh") in block and w["text"] not in r.text
    assert not re.search(r"[A-Za-z]+ [A-Za-z]+ [A-Za-z]+ [A-Za-z]+", block.replace("KV cache", ""))
    assert_grounded(r, s)


def test_weights_term_mentions_experts_only_for_moe_models() -> None:
    dense = direct("size_inference", model="llama-3.1-8b", context=4096)
    moe = direct("size_inference", model="mixtral-8x7b", context=4096)
    term = {r["model"]: next(t for t in r["terms"] if t["name"] == "weights") for r in (dense, moe)}
    dense_term, moe_term = term[dense["model"]]["explain"], term[moe["model"]]["explain"]
    assert "专家" not in render(dense_term, "zh") and "expert" not in dense_term["text"]
    assert "专家" in render(moe_term, "zh") and "expert" in moe_term["text"]


def test_dense_model_reply_says_nothing_about_experts(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "70b 模型 4bit 跑推理 两张4090够不够")
    assert "专家" not in r.text
    assert calls(r, "size_inference")


@pytest.mark.parametrize("text,label,wrong", [
    ("我想本地部署 Qwen2.5-72B 做推理，预算 10 万，买什么卡？", "显存构成：", "每卡构成"),
    ("serve Qwen2.5-72B for one user, budget $15k, which GPUs?", "Made of: ", "Per GPU:"),
])
def test_a_one_gpu_breakdown_is_not_called_per_gpu_beside_multi_gpu_options(text: str, label: str,
                                                                            wrong: str) -> None:
    """The breakdown of a need sized on one GPU is the whole need; the options below it use 2 or 4 cards, so
    'per GPU' would claim 145 GB of weights on each 48 GB card."""
    adv = Advisor(search_k=0)
    r = adv.reply(text, adv.new_session())
    line = next(ln for ln in r.text.splitlines() if ln.startswith(label))
    size = next(c.result for c in r.tool_calls if c.name == "size_inference" and c.arguments.get("gpus", 1) == 1)
    parts = [float(x) for x in re.findall(r"([\d.]+) GB", line)]
    assert sum(parts) == pytest.approx(size["per_gpu_bytes"] / 1e9, abs=0.05 * len(parts))  # the whole need
    assert wrong not in r.text


def test_a_licence_only_card_is_marked_where_it_is_listed() -> None:
    """knowledge/data/markets.toml: the H200 is sold in mainland China only under a case-by-case US licence
    (rule us-2026-01). Listed for a China buyer, its row says so and the rule is spelled out under the table."""
    adv = Advisor(search_k=0)
    r = adv.reply("课题组做分子动力学和有限元，需要双精度，预算 50 万", adv.new_session())
    rows = [ln for ln in r.text.splitlines() if ln.startswith("| ") and "H200" in ln]
    assert rows and all("（需许可）" in ln for ln in rows)
    assert render(Note(id="market.rule.us-2026-01"), "zh") in r.text
    free = [ln for ln in r.text.splitlines() if ln.startswith("| ") and ln[2:3].isdigit() and "H200" not in ln]
    assert free and all("需许可" not in ln for ln in free)  # a card sold freely there carries no mark
    assert "MI210" not in r.text  # 3A090.b by its own figures (TPP 2,899, density 3.67): not sold there


def test_tables_stand_apart_from_the_sentences_around_them() -> None:
    """A sentence right after a table is read as one more row (it squeezed the real columns in the web chat)."""
    from advisor.markdown import tidy

    adv = Advisor(search_k=0)
    for text in ("课题组做分子动力学和有限元，需要双精度，预算 50 万", "70b 模型 4bit 跑推理 两张4090够不够"):
        lines = adv.reply(text, adv.new_session()).text.split("\n")
        rows = [i for i, ln in enumerate(lines) if ln.startswith("|")]
        assert rows
        for i in rows:
            for j in (i - 1, i + 1):
                if 0 <= j < len(lines) and not lines[j].startswith("|"):
                    assert lines[j] == "", f"no blank line between {lines[i]!r} and {lines[j]!r}"
    # CommonMark leaves '**…：**2' literal (a closing ** after punctuation needs a space after it)
    assert tidy("**改用 LoRA 就放得下：**2 张 3090") == "**改用 LoRA 就放得下**：2 张 3090"
    assert tidy("**结论：放得下。**\n下一行") == "**结论：放得下。**\n下一行"
