"""Inference memory (``size``): the per-GPU breakdown in GB and GiB, the fit and the engine's budget."""

from __future__ import annotations

from advisor.fmt import gb_fixed, gib, num
from advisor.present.section import Figure, Section, fit_line, notes, term_label, terms, word
from knowledge.messages import msg
from tools.inference_memory import InferenceMemoryResult


def present_inference(r: InferenceMemoryResult, lang: str) -> Section:
    split = "" if r.gpus == 1 else msg(lang, f"present.inference.split_{r.parallel}", gpus=r.gpus)
    title = msg(lang, "present.inference.title", model=r.model, engine=word(lang, "engine", r.engine),
                precision=r.precision, kv_dtype=r.kv_dtype, context=f"{r.context:,}", batch=r.batch, gpus=r.gpus,
                split=split)
    s = Section(lang=lang, title=title, verdict=fit_line(r, lang), notes=notes(r.assumptions, lang),
                warnings=notes(r.warnings, lang), terms=terms(r.terms, lang))
    s.figure_head, s.detail_right = [msg(lang, "present.col.per_gpu"), "GB (1e9 B)", "GiB (2^30 B)"], True
    for key in ("weights", "kv_cache", "activations", "overhead"):
        v = getattr(r.breakdown, key)
        s.figures.append(Figure(label=term_label(key, lang), value=gb_fixed(v).removesuffix(" GB"),
                                detail=gib(v, 2).removesuffix(" GiB")))
    s.figures.append(Figure(label=msg(lang, "present.inference.total"), value=gb_fixed(r.per_gpu_bytes).removesuffix(
        " GB"), detail=gib(r.per_gpu_bytes, 2).removesuffix(" GiB")))
    if r.cpu_bytes:
        s.figures.append(Figure(label=msg(lang, "present.inference.host_ram"),
                                value=gb_fixed(r.cpu_bytes).removesuffix(" GB"),
                                detail=gib(r.cpu_bytes, 2).removesuffix(" GiB")))
    if r.gpus > 1:
        s.lines.append(msg(lang, "present.inference.sum_over_gpus", gpus=r.gpus, total=gb_fixed(r.total_bytes)))
    s.lines.append(msg(lang, "present.inference.kv_per_token_split" if r.gpus > 1 else
                       "present.inference.kv_per_token", bytes=f"{r.kv_bytes_per_token:,}"))
    if r.cpu_bytes:
        s.lines.append(msg(lang, "present.inference.host_ram_meaning"))
    if r.gpu_memory_bytes is not None:
        if r.reserved_bytes is not None and (r.kv_budget_bytes or 0) > 0:  # a negative budget: the verdict says it
            s.lines.append(msg(lang, f"present.inference.{r.engine}_budget", reserved=gib(r.reserved_bytes, 2),
                               budget=gib(r.kv_budget_bytes or 0, 2), blocks=f"{r.kv_blocks or 0:,}"))
        if r.kv_capacity_tokens:
            s.lines.append(msg(lang, "present.inference.kv_capacity", tokens=f"{r.kv_capacity_tokens:,}",
                               concurrency=num(r.max_concurrency or 0), context=f"{r.context:,}",
                               longest=f"{r.max_context_tokens or 0:,}"))
        if r.offload_layers:
            s.lines.append(msg(lang, "present.inference.offload", gpu_layers=r.gpu_layers,
                               offload=r.offload_layers))
    return s
