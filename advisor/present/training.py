"""Training memory (``size --train``): per-GPU breakdown, host RAM, trainable parameters and the fit."""

from __future__ import annotations

from advisor.fmt import gb_fixed, gib
from advisor.present.section import Figure, Section, fit_line, notes, term_label, terms, word
from knowledge.messages import msg
from tools.training_memory import TrainingMemoryResult


def present_training(r: TrainingMemoryResult, lang: str) -> Section:
    if r.fsdp:
        shard = "FSDP"
    elif r.zero_stage:
        shard = f"ZeRO-{r.zero_stage}"
    else:
        shard = msg(lang, "present.training.no_sharding")
    tp = msg(lang, "present.training.tp", tp=r.tp) if r.tp > 1 else ""
    title = msg(lang, "present.training.title", model=r.model, method=word(lang, "method", r.method),
                regime=word(lang, "regime", r.regime), optimizer=r.optimizer, shard=shard, gpus=r.gpus, tp=tp,
                seq=f"{r.seq:,}", micro_batch=r.micro_batch, recompute=word(lang, "recompute", r.recompute))
    s = Section(lang=lang, title=title, verdict=fit_line(r, lang), terms=terms(r.terms, lang),
                notes=notes(r.assumptions, lang), warnings=notes(r.warnings, lang))
    s.figure_head, s.detail_right = [msg(lang, "present.col.per_gpu"), "GB (1e9 B)", "GiB (2^30 B)"], True
    rows = [(term_label(k, lang), getattr(r.breakdown, k))
            for k in ("weights", "gradients", "optimizer", "activations", "overhead")]
    rows += [(msg(lang, "present.inference.total"), r.per_gpu_bytes),
             (msg(lang, "present.training.host_ram"), r.cpu_bytes)]
    s.figures = [Figure(label=label, value=gb_fixed(v).removesuffix(" GB"), detail=gib(v, 2).removesuffix(" GiB"))
                 for label, v in rows]
    s.lines.append(msg(lang, "present.training.trainable", trainable=f"{r.trainable_params:,}",
                       params=f"{r.params:,}"))
    if r.max_concurrency:  # 0: not even one micro-batch fits, which the verdict already says
        s.lines.append(msg(lang, "present.training.limits", micro_batch=r.max_concurrency,
                           seq=f"{r.max_context_tokens or 0:,}"))
    return s
