"""Understanding one user message: what kind of answer it wants and which requirement slots it states.

``parse(text)`` returns a :class:`Parsed` record: the slots (:mod:`advisor.nlu.rules` for the
established ones, :mod:`advisor.nlu.extractors` for the table of newer named extractors, both with
their vocabulary in ``advisor/nlu/data``) and the answer kind (:mod:`advisor.nlu.kinds`: rules where
cues are exact, the shipped sentence encoder's nearest labelled examples where they are not).
"""

from advisor.nlu.rules import (
    CANONICAL,
    DAYS_PER_MONTH,
    SPECIALISED,
    FormFactorPref,
    GpuCount,
    Intent,
    Kind,
    LabeledOption,
    Lang,
    Method,
    Money,
    Parsed,
    UseCase,
    Workload,
    clean,
    detect_lang,
    has_english_words,
    parse,
)

__all__ = [
    "CANONICAL", "DAYS_PER_MONTH", "SPECIALISED", "FormFactorPref", "GpuCount", "Intent", "Kind", "LabeledOption",
    "Lang", "Method", "Money",
    "Parsed", "UseCase", "Workload", "clean", "detect_lang", "has_english_words", "parse",
]
