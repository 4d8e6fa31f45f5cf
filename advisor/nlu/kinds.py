"""Which kind of answer a message asks for.

Rules decide where the cues are exact (a reset, a correction, two GPUs side by side, a model next to
"how much memory"); the cue vocabulary is data (``data/cues.toml``). A message that no rule claims is
given the kind of its nearest labelled example utterances (``data/kind_examples.toml``) in the
multilingual sentence encoder that the knowledge base already ships, so phrasings no cue foresaw
still reach an answer. The encoder is loaded only when a message needs it.
"""

from __future__ import annotations

import logging
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from typing import Any

from advisor import ascii_re as re
from advisor.nlu import vocab

log = logging.getLogger(__name__)


class Kind(StrEnum):
    """The answer a message wants; one per message."""

    spec = "spec"
    concept = "concept"
    size_inference = "size_inference"
    size_training = "size_training"
    speed = "speed"
    build = "build"
    compare = "compare"
    recommend = "recommend"
    rent_vs_buy = "rent_vs_buy"
    why = "why"
    whatif = "whatif"
    correct = "correct"
    export = "export"
    reset = "reset"
    inform = "inform"
    chitchat = "chitchat"


@dataclass(frozen=True)
class Features:
    """What the slot extractors found, as far as the kind depends on it."""

    gpus: int = 0
    models: int = 0
    sized: bool = False  # a model or a bare parameter count
    budget: bool = False
    slots: int = 0  # requirement slots stated
    training_words: bool = False
    compare_words: bool = False
    catalog_filter: bool = False  # "which GPUs support FP8"
    hardware: bool = False  # a PSU rating or a CPU named: a build question
    short_answer: bool = False  # "yes", "没有", "不知道": a reply to the advisor's question
    attribute: bool = False  # a catalog fact is asked for (memory, bandwidth, price, NVLink …)
    counted: bool = False  # a card count was written ("three L40S"): a plan, not a lookup
    deadline: bool = False
    question: bool = True
    requirements: int = 0  # use case, FP64, problem size, budget …: a plan is being described, not a card
    platform_only: bool = False  # a CPU platform named and no GPU: "how many lanes does a 9950X give?"
    need: bool = False  # a use, model or domestic requirement is stated
    context: bool = True  # an earlier answer exists that a what-if or correction can refer to
    rental: bool = False  # a rental provider or an hourly rate named, or where to rent asked
    reruns: bool = False  # after an answer, a what-if with a precision to run at ('what about FP8 on the L40S?')


_MODEL_ATTRIBUTE = re.compile(
    r"参数量|多少参数|几个参数|层数|多少层|几层|(压缩|隐|latent|kv).{0,4}维度|kv_lora_rank|上下文长度|最大上下文|最长上下文|上下文(最长|最大)|支持多长|架构|是\s*moe|专家|激活参数|"
    r"总参数|激活多少|激活几个|多少个\s*expert|(注意力|attention).{0,6}(结构|机制)|最长.{0,8}上下文|多模态|"
    r"\b(head_dim|kv heads|number of (kv )?heads|how many experts|multimodal|context limit)\b|"
    r"\b(how many (params|parameters|layers|experts)|parameter count|context (length|window)|max(imum)? context|"
    r"architecture|is it (a )?moe|active param\w*|param count|total params?)\b", re.IGNORECASE)
_ALTERNATIVES = re.compile(r"\bor\b|还是|或者|或是|\b(better|worse|faster|slower|cheaper) than\b", re.IGNORECASE)
_WHAT_IS = re.compile(r"什么是|是什么|什么叫|是啥|啥是|\bwhat(\x27s| is| are| does)\b|\bexplain\b|\bhow does\b",
                      re.IGNORECASE)
_VRAM_WORD = re.compile(r"显存|vram|gpu memory", re.IGNORECASE)
_RENT_OUT = re.compile(r"租给|出租|rent(ing)? (it |them )?out|lease (it |them )?out", re.IGNORECASE)
_WHICH_ONE = re.compile(r"哪个|哪一?款|哪张|\bwhich\b", re.IGNORECASE)
_CONCEPT_OPENING = re.compile(r"^\W*(explain|eli5|what(\x27s| is| are) (a |an |the )?[a-z][\w -]{1,30}\?|什么是|啥是|"
                              r"\S{1,16}?(是啥|是什么|啥意思|什么意思)[，,?？\s])", re.IGNORECASE)
_BUILD_PART = re.compile(r"主板|电源|机箱|散热器|风扇|内存条|处理器|\bcpu\b|motherboard|\bmobo\b|\bpsu\b|"
                         r"power supply|\bchassis\b|\bcase\b|cooler|\bram\b", re.IGNORECASE)
_RESPECTIVELY = re.compile(r"分别|各自|respectively|each of", re.IGNORECASE)
_SHORT_WORDS = 14
_SHORT_CHARS = 30
# an imperative asks too: 'check my build: 4x 4090, 1600W PSU' has no question word or mark
_CHECK_ASK = re.compile(r"\b(check|verify|sanity[- ]check|review|validate)\b.{0,24}"
                        r"\b(build|rig|setup|config\w*|machine|system|box|server|workstation|parts)\b"
                        r"|检查.{0,8}(兼容|配置|整机|装机)|帮我(看看|查查|检查)", re.I)


def _short(text: str) -> bool:
    cjk = len(re.findall(r"[\u3400-\u9fff]", text))
    return (len(text.split()) <= _SHORT_WORDS and cjk == 0) or (cjk > 0 and len(text) <= _SHORT_CHARS)


def _hit(name: str, text: str) -> bool:
    return vocab.matches("kind", name, text) is not None


class _Message:
    """The text being classified, each cue of the ``[kind]`` vocabulary looked up in it at most once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._hits: dict[str, bool] = {}

    def hit(self, name: str) -> bool:
        """Whether the cue ``[kind.<name>]`` occurs in the text."""
        if name not in self._hits:
            self._hits[name] = _hit(name, self.text)
        return self._hits[name]


def _names_alternatives(m: _Message, f: Features) -> bool:
    """Comparison words or an 'A or B' / 'better than' between the things named."""
    return f.compare_words or _ALTERNATIVES.search(m.text) is not None


# ----------------------------------------------------------------------------- the rules: one predicate each
#
# Each predicate recognises one kind of message from the text and the extracted features. They are tried in the
# order of RULES and the first that holds decides, so a predicate may rely on every earlier one having failed.


def _replies_or_informs(m: _Message, f: Features) -> bool:
    """A short reply to the advisor's question, or an inform cue in a message that asks nothing."""
    return f.short_answer or (m.hit("inform") and not f.question)


def _resets(m: _Message, f: Features) -> bool:
    """A request to start over."""
    return m.hit("reset")


def _chats(m: _Message, f: Features) -> bool:
    """Greetings, thanks and small talk."""
    return m.hit("chitchat")


def _asks_export(m: _Message, f: Features) -> bool:
    """A request to export the conversation or its answer, with no GPU named."""
    return m.hit("export") and f.gpus == 0


def _corrects_earlier_answer(m: _Message, f: Features) -> bool:
    """A correction of something the user said before, when there is an earlier answer to correct."""
    return m.hit("correct") and f.context


def _asks_why(m: _Message, f: Features) -> bool:
    """A 'why' question that is not about a named model on named cards."""
    return m.hit("why") and not (f.sized and f.gpus)


def _picks_card_to_rent_out(m: _Message, f: Features) -> bool:
    """'Which of these cards should I rent out': a choice between cards, not rent versus buy."""
    return f.gpus >= 2 and _WHICH_ONE.search(m.text) is not None and _RENT_OUT.search(m.text) is not None


def _weighs_rent_vs_buy(m: _Message, f: Features) -> bool:
    """Renting against buying, unless it picks which of several cards to rent out."""
    return (m.hit("rent_vs_buy") or f.rental) and not _picks_card_to_rent_out(m, f)


def _opens_with_concept(m: _Message, f: Features) -> bool:
    """An idea asked about at the very start, with no purchase, card comparison or card lookup around it."""
    if not (_CONCEPT_OPENING.search(m.text) and m.hit("concept")):
        return False
    about_cards = f.gpus >= 2 or bool(f.gpus and (f.attribute or m.hit("fit")))
    return not (f.budget or m.hit("recommend") or about_cards)


def _asks_about_idea(m: _Message, f: Features) -> bool:
    """A question about an idea that names no card, model or requirement."""
    return m.hit("concept") and not f.slots and not f.gpus and not f.sized and f.question


def _picks_a_part(m: _Message, f: Features) -> bool:
    """A recommendation for a machine part (board, PSU, case …), with no model or budget to size."""
    return m.hit("recommend") and _BUILD_PART.search(m.text) is not None and not (f.sized or f.budget)


def _short_whatif(m: _Message, f: Features) -> bool:
    """A short variation on an earlier answer ('那 FP16 呢'), not a request for a recommendation."""
    return m.hit("whatif") and _short(m.text) and not m.hit("recommend") and f.context


def _asks_platform_fact(m: _Message, f: Features) -> bool:
    """A fact about a CPU platform (no GPU named), not a purchase nor a build question ('电源 850W，CPU 13700K，能不能
    凑合' checks the machine)."""
    return f.platform_only and f.attribute and f.question and not (m.hit("recommend") or f.budget
                                                                   or _PSU_SAID.search(m.text))


_PSU_SAID = re.compile(r"(?<![\d.])\d{3,4}\s*w\b|电源|\bpsu\b|power supply", re.IGNORECASE)


def _asks_about_build_with_cards(m: _Message, f: Features) -> bool:
    """Cards named with build cues or other hardware (PSU, CPU), asked about or handed over for a check."""
    if not f.gpus or f.sized or not (m.hit("build") or f.hardware):
        return False
    return f.question or _CHECK_ASK.search(m.text) is not None


def _fit_is_not_the_point(m: _Message, f: Features) -> bool:
    """A fit cue inside a purchase, deadline, speed, hardware or card-comparison question."""
    if m.hit("which_to_buy") or f.budget or f.deadline or m.hit("speed"):
        return True
    if f.hardware and not _VRAM_WORD.search(m.text):
        return True
    return f.gpus >= 2 and _names_alternatives(m, f)


def _asks_if_model_fits(m: _Message, f: Features) -> bool:
    """Whether a model (or parameter count) fits: 'can it run', with a named model."""
    return f.sized and f.question and m.hit("fit") and not _fit_is_not_the_point(m, f)


def _size_kind(f: Features) -> Kind:
    """Training memory when training is mentioned, inference memory otherwise."""
    return Kind.size_training if f.training_words else Kind.size_inference


def _asks_recommendation(m: _Message, f: Features) -> bool:
    """A recommendation cue."""
    return m.hit("recommend")


def _compare_or_recommend(f: Features) -> Kind:
    """A recommendation between two or more named cards compares them; with a budget, or fewer cards, it picks."""
    return Kind.compare if f.gpus >= 2 and not f.budget else Kind.recommend


def _filters_catalog(m: _Message, f: Features) -> bool:
    """A catalog filter: 'which GPUs support FP8'."""
    return f.catalog_filter


def _asks_model_fact(m: _Message, f: Features) -> bool:
    """A fact about a named model (parameters, layers, context length, MoE …), no card named."""
    return bool(f.models) and not f.gpus and _MODEL_ATTRIBUTE.search(m.text) is not None


def _sets_cards_side_by_side(m: _Message, f: Features) -> bool:
    """Two or more cards with comparison words or alternatives between them, no other hardware."""
    return f.gpus >= 2 and _names_alternatives(m, f) and not f.hardware


def _asks_what_idea_is(m: _Message, f: Features) -> bool:
    """'What is …' about an idea, at most two cards around it and no model or attribute."""
    return (m.hit("concept") and not f.sized and not f.attribute and f.gpus <= 2
            and _WHAT_IS.search(m.text) is not None)


def _asks_about_several_cards(m: _Message, f: Features) -> bool:
    """A question naming two or more cards together (not 'each of them'), with no model or other hardware."""
    return (f.gpus >= 2 and not f.sized and not _RESPECTIVELY.search(m.text) and not f.hardware
            and f.question)


def _asks_card_fact(m: _Message, f: Features) -> bool:
    """A catalog fact about a card, with no model, card count, hardware or requirements: a lookup; after an
    answer, 'what about FP8 on the L40S, does that change the count?' changes the plan instead."""
    return bool(f.gpus) and f.attribute and not (f.sized or f.counted or f.hardware or f.requirements or f.reruns)


def _mentions_idea(m: _Message, f: Features) -> bool:
    """A concept cue, unless a model on named cards is being sized."""
    return m.hit("concept") and not (f.sized and f.gpus)


def _asks_speed(m: _Message, f: Features) -> bool:
    """A speed cue about a model, cards or training."""
    return m.hit("speed") and bool(f.sized or f.gpus or f.training_words)


def _asks_training_time(m: _Message, f: Features) -> bool:
    """Training against a deadline: how long it takes."""
    return f.deadline and f.training_words


def _asks_about_build(m: _Message, f: Features) -> bool:
    """A question about hardware or build cues, with no model to size."""
    return (f.hardware or (m.hit("build") and not f.sized)) and f.question


def _compares_named_things(m: _Message, f: Features) -> bool:
    """Comparison words with a card, or with two models."""
    return f.compare_words and bool(f.gpus or f.models >= 2)


def _budget_for_a_need(m: _Message, f: Features) -> bool:
    """A budget and a stated use, model or requirement, no card yet."""
    return f.budget and f.need and not f.gpus


def _states_without_asking(m: _Message, f: Features) -> bool:
    """Requirements (or an inform cue) stated, nothing asked."""
    return not f.question and bool(f.slots or m.hit("inform"))


def _budget_without_card(m: _Message, f: Features) -> bool:
    """A budget and no card: what to buy."""
    return f.budget and not f.gpus


def _sizes_training(m: _Message, f: Features) -> bool:
    """Training words with a model or cards: training memory."""
    return f.training_words and bool(f.sized or f.gpus)


def _sizes_inference(m: _Message, f: Features) -> bool:
    """A model or parameter count, or cards with an inference-sizing cue."""
    return f.sized or (bool(f.gpus) and m.hit("size_inference"))


_HOW_TO = re.compile(r"(怎么|如何|咋)(验|测|检查|判断|看出|辨别|鉴别|分辨|挑|装|接|设置|配置|调|优化|维护|散热|避坑)|"
                     r"要测(哪些|什么|啥)|注意(哪些|什么|啥)|\bhow (do|can|should|would) (i|we|you) (test|check|tell|"
                     r"spot|verify|inspect|set up|configure|tune|install|cool|maintain)\b|\bhow to (test|check|tell|"
                     r"spot|verify|inspect|set up|configure|tune|install)\b|"
                     r"\bwhat should (i|we) (check|test|look for)\b", re.IGNORECASE)


def _asks_how_to(m: _Message, f: Features) -> bool:
    """'怎么验卡？', 'how do I test a used card?': a procedure the guide explains, when nothing is sized."""
    return not f.sized and not f.budget and f.requirements == 0 and _HOW_TO.search(m.text) is not None


def _asks_spec(m: _Message, f: Features) -> bool:
    """A model or card with a spec cue, or asked an attribute of without requirements."""
    if not (f.models or f.gpus):
        return False
    return m.hit("spec") or (f.question and f.attribute and not f.requirements and not f.reruns)


def _states_slots(m: _Message, f: Features) -> bool:
    """Requirement slots stated and nothing else claimed the message."""
    return bool(f.slots)


@dataclass(frozen=True)
class Rule:
    """One row of :data:`RULES`: when ``when(message, features)`` holds, the message gets ``kind`` (or, for the
    rows whose kind depends on the features, what ``kind(features)`` returns)."""

    kind: Kind | Callable[[Features], Kind]
    when: Callable[[_Message, Features], bool]

    def decide(self, f: Features) -> Kind:
        """The kind this rule gives a message it claims."""
        return self.kind if isinstance(self.kind, Kind) else self.kind(f)


# first match wins: the order is part of the rules
RULES: tuple[Rule, ...] = (
    Rule(Kind.inform, _replies_or_informs),
    Rule(Kind.reset, _resets),
    Rule(Kind.chitchat, _chats),
    Rule(Kind.export, _asks_export),
    Rule(Kind.correct, _corrects_earlier_answer),
    Rule(Kind.why, _asks_why),
    Rule(Kind.rent_vs_buy, _weighs_rent_vs_buy),
    # 'MoE是啥，为什么 671b 跑得比 70b 快', 'explain ZeRO … for 2x 3090': the idea comes first
    Rule(Kind.concept, _opens_with_concept),
    # '那量化 KV cache 有用吗' asks about an idea, it changes nothing
    Rule(Kind.concept, _asks_about_idea),
    # '主板推荐啥' picks a part for the machine under discussion
    Rule(Kind.build, _picks_a_part),
    Rule(Kind.whatif, _short_whatif),
    Rule(Kind.spec, _asks_platform_fact),
    Rule(Kind.build, _asks_about_build_with_cards),
    Rule(_size_kind, _asks_if_model_fits),  # 'can it run', named model
    Rule(_compare_or_recommend, _asks_recommendation),
    Rule(Kind.spec, _filters_catalog),
    Rule(Kind.spec, _asks_model_fact),
    Rule(Kind.compare, _sets_cards_side_by_side),
    Rule(Kind.concept, _asks_what_idea_is),
    Rule(Kind.compare, _asks_about_several_cards),
    Rule(Kind.spec, _asks_card_fact),
    Rule(Kind.concept, _mentions_idea),
    Rule(Kind.speed, _asks_speed),
    Rule(Kind.speed, _asks_training_time),
    Rule(Kind.build, _asks_about_build),
    Rule(Kind.compare, _compares_named_things),
    Rule(Kind.recommend, _budget_for_a_need),
    Rule(Kind.inform, _states_without_asking),
    Rule(Kind.recommend, _budget_without_card),
    Rule(Kind.size_training, _sizes_training),
    Rule(Kind.size_inference, _sizes_inference),
    Rule(Kind.concept, _asks_how_to),
    Rule(Kind.spec, _asks_spec),
    Rule(Kind.inform, _states_slots),
)


def by_rules(text: str, f: Features) -> Kind | None:
    """The kind the cues and slots decide; None when no rule claims the message. The rules are
    :data:`RULES`, tried in order; the first that holds decides."""
    message = _Message(text)
    for rule in RULES:
        if rule.when(message, f):
            return rule.decide(f)
    return None


_QUESTION = re.compile(
    r"[?？]|吗|呢|么|吧\s*$|多少|几|怎么|如何|哪|是否|能否|能不能|可不可以|行不行|够不够|够吗|够用|会不会|有没有|"
    r"是不是|什么|啥|谁|不\S{0,2}\s*$|靠谱|值不值|划算|推荐|建议|给个|帮我|(?<![要需追请])求|多大|多久|多长|多快|估|算一下|算算|选|差多少|"
    r"跑得|跑的|吃得消|起来|能跑|行吗|可以吗|够|给我|想问|请问|嘛|来着|有人知道|有货|能行|顶得住|塞下|咋|测算|请说明|请给出|"
    r"请评估|请核算|请简述|请阐述|请列出|简述|阐述|试试|看看|再算|咋回事|点解|有咩|会怎样|还是|(\S)不\1|"
    r"^\s*(what|how|which|can|could|will|would|should|is|are|does|do|any|where|why|who|when)\b|"
    r"(?:[.,;:!)]\s*|\b(?:and|but|so|then)\s+)(?:will|would|can|could|does|do|is|are|should)\s+(?:that|this|it|they|"
    r"these|those|i|we|you|my|our|the|both)\b|"  # an inverted question after a statement: '…x4 slot. will that work'

    r"\bcan (it|i|we|they|this|my|you)\b|\bany idea\b|"
    r"\b(enough|recommend|suggest|need|needed|help|compare|vs|fit|run|or|ballpark|options|what|whats|how|which|"
    r"wattage|estimate|memory for|vram for|total vram|wondering|whether|ok\??\s*$|rough idea|shortlist|advise|"
    r"tl;?dr|kindly|shall (specify|state|support|provide)|must state|state the|list (every|all)|am i cooked|"
    r"is it (actually|really) true|run the numbers)\b|\bgo\s*$|\bpls\b|"
    r"\bplease (advise|recommend|suggest|help|tell|list|estimate|check|confirm|compare|explain|calculate|size|quote|"
    r"send|share|give|provide|spec)\b|\b(advise|recommend|suggest|help|tell me|list|estimate|check|confirm|compare|"
    r"explain|calculate),? please\b|^\s*please\b",
    re.IGNORECASE)
_TRAILING_SYMBOLS = re.compile(r"[^\w?？]+$")
_TERSE = re.compile(r"^[\w .+\-/]+$")
_LOOKUP_NOUNS = re.compile(r"(?<![a-z])(vram|gb|tflops|bandwidth|tdp|price|specs?|fp64|fp32|fp16|bf16|fp8|int8|airflow|"
                           r"psu|power|tokens?/s|tok/s|context)\b|显存|带宽|价格|功耗|算力|规格", re.IGNORECASE)


def is_question(text: str) -> bool:
    """Whether the message asks something (or asks for something), rather than only states requirements. A
    search-engine style query ('mi250x fp64 tflops', '70b q4 vram 2x3090') counts as one."""
    bare = _TRAILING_SYMBOLS.sub("", text)  # '能塞下不 🙏' ends in 不 once the emoji is gone
    if _QUESTION.search(bare):
        return True
    return len(bare.split()) <= 6 and bool(_TERSE.match(bare)) and bool(_LOOKUP_NOUNS.search(bare))


# ----------------------------------------------------------------------------- nearest examples


class _Examples:
    """Labelled example utterances embedded once (lazily); nearest-neighbour vote by cosine similarity."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._matrix: Any = None
        self._labels: list[Kind] = []
        self.failed = False

    def _load(self) -> None:
        from knowledge.embedding import embed  # the encoder the knowledge base ships; loaded on first use

        raw = resources.files("advisor.nlu").joinpath("data/kind_examples.toml").read_text(encoding="utf-8")
        table = tomllib.loads(raw)
        texts: list[str] = []
        for kind, langs in table.items():
            for lines in langs.values():
                texts += lines
                self._labels += [Kind(kind)] * len(lines)
        self._matrix = embed(texts)

    def nearest(self, text: str, k: int = 5) -> tuple[Kind, float] | None:
        """The majority kind among the ``k`` most similar examples, with the best similarity."""
        if self.failed:
            return None
        with self._lock:
            if self._matrix is None:
                try:
                    self._load()
                except Exception:  # no encoder: the rules alone decide
                    log.warning("intent examples unavailable", exc_info=True)
                    self.failed = True
                    return None
        from knowledge.embedding import embed

        sims = self._matrix @ embed([text])[0]
        top = sims.argsort()[::-1][:k]
        votes: dict[Kind, float] = {}
        for i in top:
            votes[self._labels[i]] = votes.get(self._labels[i], 0.0) + float(sims[i])
        best = max(votes, key=lambda kind: votes[kind])
        return best, float(max(sims[i] for i in top if self._labels[i] == best))


EXAMPLES = _Examples()
MIN_SIMILARITY = 0.35


def classify(text: str, features: Features, use_examples: bool = True) -> tuple[Kind, str]:
    """(kind, how it was decided: 'rules', 'examples' or 'default')."""
    kind = by_rules(text, features)
    if kind is not None:
        return kind, "rules"
    if use_examples and text.strip():
        near = EXAMPLES.nearest(text)
        if near and near[1] >= MIN_SIMILARITY:
            return near[0], "examples"
    return Kind.chitchat if not features.slots else Kind.inform, "default"
