"""`gpu-advisor detect`: the GPUs in this machine and which common models fit on them."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from advisor.commands.common import add_lang_flag, domain_errors, lang_of, print_json
from knowledge import load_catalog
from knowledge.messages import msg
from tools.engines import ENGINE_LABEL
from tools.errors import ToolError
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory

# what people most often ask to run locally, smallest first; each at 16-bit and at 4-bit
MODELS = ("llama-3.1-8b", "qwen2.5-14b", "qwen3-30b-a3b", "qwen2.5-32b", "llama-3.1-70b")
WAYS = (("vllm", "bf16"), ("vllm", "int4"), ("llamacpp", "Q4_K_M"))
CONTEXT = 8192


def register(sub: Any) -> None:
    p = sub.add_parser("detect", help="list this machine's GPUs (nvidia-smi) and the models that fit on them")
    p.add_argument("--json", action="store_true", help="print the GPUs and the fit table as JSON (bytes)")
    add_lang_flag(p)
    p.set_defaults(func=_detect)


def fits_table(gpu: str | None, memory_bytes: int, count: int) -> list[dict[str, Any]]:
    """Each model × way: needed and usable bytes per GPU on ``count`` such cards, or why it cannot be sized."""
    rows: list[dict[str, Any]] = []
    for model in MODELS:
        for engine, precision in WAYS:
            args: dict[str, Any] = {"model": model, "engine": engine, "precision": precision, "context": CONTEXT,
                                    "gpus": count}
            args.update({"gpu": gpu} if gpu else {"gpu_memory_bytes": memory_bytes})
            try:
                r = estimate_inference_memory(InferenceMemoryInput(**args))
            except (ToolError, ValueError) as exc:
                rows.append({"model": model, "engine": engine, "precision": precision, "error": str(exc)})
                continue
            need = r.all_layers_bytes or r.per_gpu_bytes  # llama.cpp: every layer on the GPU, none in RAM
            rows.append({"model": model, "engine": engine, "precision": precision, "fits": r.fits,
                         "per_gpu_bytes": need, "usable_bytes": need + (r.headroom_bytes or 0)})
    return rows


@domain_errors
def _detect(args: argparse.Namespace) -> int:
    from advisor.detect import detect_gpus

    lang = lang_of(args)
    found = detect_gpus()
    groups = Counter((g.catalog_id, g.name, g.memory_bytes) for g in found.gpus)
    plans: list[dict[str, Any]] = [
        {"catalog_id": gid, "name": name, "memory_bytes": mem, "count": n, "fits": fits_table(gid, mem, n)}
        for (gid, name, mem), n in groups.items()]
    if args.json:
        print_json({"gpus": [vars(g) for g in found.gpus], "problem": found.problem, "plans": plans})
        return 0 if found.gpus else 1
    if not found.gpus:
        print(msg(lang, f"cli.detect.{found.problem}", detail=found.detail))
        return 1
    cat = load_catalog()
    print(msg(lang, "cli.detect.found", n=len(found.gpus)))
    for g in found.gpus:
        known = msg(lang, "cli.detect.is", gpu=cat.gpu(g.catalog_id).name) if g.catalog_id else msg(
            lang, "cli.detect.unknown")
        print(f"  {g.index}  {g.name}  {g.memory_bytes / 2**30:,.1f} GiB  {known}")
    for plan in plans:
        label = cat.gpu(plan["catalog_id"]).name if plan["catalog_id"] else plan["name"]
        print("\n" + msg(lang, "cli.detect.table", count=plan["count"], gpu=label, context=f"{CONTEXT:,}"))
        for row in plan["fits"]:
            way = f"{cat.model(row['model']).name} · {row['precision']} ({ENGINE_LABEL[row['engine']]})"
            if "error" in row:
                print(f"  –  {way}: {row['error']}")
                continue
            mark = "✅" if row["fits"] else "❌"
            print(f"  {mark} {way}: " + msg(lang, "cli.detect.need", need=f"{row['per_gpu_bytes'] / 1e9:,.1f}",
                                            usable=f"{row['usable_bytes'] / 1e9:,.1f}"))
    return 0
