"""Presenters: one per tool result type, each returning a small structured :class:`Section`.

A section holds what a reader needs from a result — a title, a verdict line, figures with their units,
an optional table, item lists (findings, options, rejections), the terms with their formulas, and the
tool's notes and warnings already rendered in the output language. The CLI prints ``section.text()``,
the exported report and the web panel use ``section.markdown()``. Numbers come from :mod:`advisor.fmt`,
words from the message catalogs (``present.*`` ids), so a presenter holds no prose of its own.
"""

from advisor.present.calls import present_call
from advisor.present.check import present_check
from advisor.present.inference import present_inference
from advisor.present.perf import (
    present_decode,
    present_fp64,
    present_prefill,
    present_serving,
    present_training_time,
)
from advisor.present.recommend import config_label, present_recommend
from advisor.present.section import (
    Figure,
    Item,
    ItemList,
    Section,
    Table,
    TermLine,
    combine,
    fit_line,
    fit_status,
    gpu_name,
    model_name,
    notes,
    said_model,
    term_label,
    terms,
    word,
)
from advisor.present.training import present_training

__all__ = [
    "Figure",
    "Item",
    "ItemList",
    "Section",
    "Table",
    "TermLine",
    "combine",
    "config_label",
    "fit_line",
    "fit_status",
    "gpu_name",
    "model_name",
    "notes",
    "present_call",
    "present_check",
    "present_decode",
    "present_fp64",
    "present_inference",
    "present_prefill",
    "present_recommend",
    "present_serving",
    "present_training",
    "present_training_time",
    "said_model",
    "term_label",
    "terms",
    "word",
]
