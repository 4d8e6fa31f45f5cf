"""Speed and time: decode, prefill / time to first token, serving concurrency, training time, FP64 problems."""

from __future__ import annotations

from advisor.fmt import default_currency, duration, gb_fixed, gib, money_exact, money_in, num, seconds, tps
from advisor.present.section import Figure, Section, Table, notes, terms, word
from knowledge.messages import msg, render
from tools.perf import DecodeResult, PrefillResult, ServingResult
from tools.scientific import ScientificResult
from tools.training_time import TrainingTimeResult


def present_decode(r: DecodeResult, lang: str, title: str = "") -> Section:
    lo, hi = r.tokens_per_s_range
    detail = msg(lang, "present.decode.detail", low=num(lo), high=num(hi),
                 per_sequence=tps(r.per_sequence_tokens_per_s), bound=word(lang, "bound", r.bound))
    return Section(lang=lang, title=title or msg(lang, "present.decode.title"),
                   figures=[Figure(label=msg(lang, "present.decode.label"), value=tps(r.tokens_per_s), detail=detail)],
                   terms=terms(r.terms, lang), notes=notes(r.assumptions, lang), warnings=notes(r.warnings, lang))


def present_prefill(r: PrefillResult, lang: str, title: str = "", prompt_tokens: int | None = None) -> Section:
    peak = msg(lang, "present.prefill.detail", precision=r.compute_precision, tflops=num(r.peak_flops_per_s / 1e12),
               mfu=f"{r.mfu:.2g}")
    lo, hi = r.ttft_s_range
    ttft_detail = msg(lang, "present.prefill.ttft_range", low=seconds(lo), high=seconds(hi))
    if prompt_tokens:
        ttft_detail = msg(lang, "present.prefill.ttft_prompt", prompt=f"{prompt_tokens:,}", range=ttft_detail)
    figures = [Figure(label=msg(lang, "present.prefill.label"), value=tps(r.tokens_per_s), detail=peak),
               Figure(label=msg(lang, "present.prefill.ttft"), value=seconds(r.ttft_s), detail=ttft_detail)]
    return Section(lang=lang, title=title or msg(lang, "present.prefill.title"), figures=figures,
                   terms=terms(r.terms, lang), notes=notes(r.assumptions, lang), warnings=notes(r.warnings, lang))


def present_serving(r: ServingResult, lang: str, title: str = "", context: int | None = None) -> Section:
    line = msg(lang, "present.serving.capacity", tokens=f"{r.kv_capacity_tokens:,}",
               concurrency=num(r.max_concurrency), context=f"{context:,}" if context else "?")
    if r.knee_batch:
        line += msg(lang, "present.serving.knee", batch=r.knee_batch)
    table = Table(header=[msg(lang, f"present.serving.col_{c}") for c in ("batch", "total", "per_sequence", "bound")],
                  rows=[[str(p.batch), tps(p.tokens_per_s), tps(p.per_sequence_tokens_per_s),
                         word(lang, "bound", p.bound)] for p in r.points], right=[0, 1, 2])
    return Section(lang=lang, title=title or msg(lang, "present.serving.title"), lines=[line], table=table,
                   terms=terms(r.terms, lang), notes=notes(r.assumptions, lang), warnings=notes(r.warnings, lang))


def present_training_time(r: TrainingTimeResult, lang: str, model: str = "", tokens: float | None = None) -> Section:
    title = msg(lang, "present.training_time.title", model=model or "?",
                tokens=f"{tokens:.3g}" if tokens else "?", count=r.count, gpu=r.gpu, mfu=f"{r.mfu:.2f}")
    figures = [
        Figure(label=msg(lang, "present.training_time.wall"), value=f"{num(r.hours)} h",
               detail=msg(lang, "present.training_time.days_range", days=num(r.days),
                          low=num(r.hours_range[0] / 24), high=num(r.hours_range[1] / 24))),
        Figure(label=msg(lang, "present.training_time.gpu_hours"), value=f"{num(r.gpu_hours)} GPU·h"),
        Figure(label=msg(lang, "present.training_time.throughput"),
               value=f"{num(r.tokens_per_s_per_gpu)} tokens/s/GPU"),
    ]
    if r.cost_usd is not None:
        source = render(r.price_source, lang) if r.price_source is not None else ""
        cost = money_in(r.cost_usd, r.cost_cny, default_currency(lang), lang, r.cny_per_usd)
        figures.append(Figure(label=msg(lang, "present.training_time.cost"), value=cost,
                              detail=msg(lang, "present.training_time.rate",
                                         rate=money_exact(r.price_per_gpu_hour or 0, "USD"), source=source)))
    verdict = msg(lang, "present.training_time.verdict", hours=duration(r.hours, lang), gpu_hours=num(r.gpu_hours))
    return Section(lang=lang, title=title, verdict=verdict, figures=figures, terms=terms(r.terms, lang),
                   notes=notes(r.assumptions, lang), warnings=notes(r.warnings, lang))


def present_fp64(r: ScientificResult, lang: str, gpu: str = "") -> Section:
    title = msg(lang, "present.fp64.title", problem=word(lang, "problem", r.problem), count=r.gpus, gpu=gpu or "GPU")
    figures = [Figure(label=msg(lang, "present.fp64.memory"), value=gb_fixed(r.memory_bytes),
                      detail=msg(lang, "present.fp64.per_gpu", per_gpu=gib(r.per_gpu_bytes, 2),
                                 verdict=word(lang, "fit", r.fits)))]
    if r.seconds is not None:
        figures.append(Figure(label=msg(lang, "present.fp64.time"), value=seconds(r.seconds),
                              detail=word(lang, "bound_by", r.bound)))
    if r.fp64_tflops is not None:
        figures.append(Figure(label=msg(lang, "present.fp64.peak"), value=f"{num(r.fp64_tflops)} TFLOPS",
                              detail=msg(lang, "present.fp64.efficiency", efficiency=f"{r.efficiency:g}")))
    if r.ecc is not None:
        figures.append(Figure(label="ECC", value=word(lang, "yes_no", r.ecc)))
    return Section(lang=lang, title=title, figures=figures, terms=terms(r.terms, lang),
                   notes=notes(r.assumptions, lang), warnings=notes(r.warnings, lang))
