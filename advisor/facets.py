"""What a quantity is *of*: the facets that grounding checks beside its value and unit.

A tool result names each figure by its field (``per_gpu_bytes``, ``weights_total_bytes``,
``per_sequence_tokens_per_s``, ``host_price_usd``); an explanation names it by the words around it
("needs … per GPU", "the KV cache takes …", "per user", "with the host"). Both are read into labels on
the same axes, so a figure can be held to the facts of its own kind:

- ``role`` (memory): ``need`` — what a configuration takes — or ``capacity`` — what a GPU has or offers;
- ``scope`` (memory): ``per_gpu`` or ``all_gpus``;
- ``part`` (memory): ``part:weights``, ``part:kv`` or ``part:activations``;
- ``rate`` (tokens/s): ``rate:per_request`` or ``rate:aggregate``;
- ``price`` (money, per currency): ``price:card:USD`` (one card), ``price:gpus:USD`` (the cards alone),
  ``price:host:USD`` or ``price:total:USD`` (with the host).

Words are read conservatively: a label is given only when the words say it plainly; no label, no extra check.
"""

from __future__ import annotations

import re
from typing import Protocol

MONEY = ("USD", "CNY")


class Located(Protocol):
    """A quantity found in a text (``grounding.Mention``)."""

    start: int
    end: int
    dim: str


# ----------------------------------------------------------------------------- from field names

_NEED_FIELDS = re.compile(r"per_gpu|total|need|weights|kv|activation|overhead|gradient|optimizer|cache|cpu_bytes|"
                          r"host_ram|model_states")
_CAPACITY_FIELDS = re.compile(r"gpu_memory|reserved|usable|visible|memory_gb|vram|capacity|memory_bytes")


def field_labels(key: str, parent: str, dim: str) -> list[str]:
    """The labels a result field's name gives its value (empty when the name says nothing)."""
    k, p = key.lower(), parent.lower()
    labels: list[str] = []
    if dim == "bytes":
        if _CAPACITY_FIELDS.search(k):
            labels.append("capacity")
        elif _NEED_FIELDS.search(k) or "breakdown" in p:
            labels.append("need")
        if "per_gpu" in k or "breakdown" in p:
            labels.append("per_gpu")
        elif "all_gpus" in k or "total" in k:  # total_bytes, weights_total_bytes, total_vram_bytes …
            labels.append("all_gpus")
        if "weights" in k:
            labels.append("part:weights")
        elif k.startswith("kv") or "kv_cache" in k:
            labels.append("part:kv")
        elif "activation" in k:
            labels.append("part:activations")
    elif dim == "tokens/s":
        if re.search(r"per_(sequence|request|user|stream)", k):
            labels.append("rate:per_request")
        elif "per_gpu" not in k:
            labels.append("rate:aggregate")
    elif dim in MONEY:  # by currency too: '¥10,800' is not the cards' '$1,500'
        if "card_price" in k:
            labels.append(f"price:card:{dim}")
        elif "host" in k:
            labels.append(f"price:host:{dim}")
        elif "total" in k:
            labels.append(f"price:total:{dim}")
        elif k.startswith("price"):
            labels.append(f"price:gpus:{dim}")
    return labels


# ----------------------------------------------------------------------------- from the words around a figure

_FILLER = re.compile(r"(?i)约|大约|大概|左右|\babout\b|\baround\b|\broughly\b|\bapproximately\b|~|≈")
_UNIT_LEAD = r"^[ \t]*(gb|gib|tb|g|tokens?/s|tok/s|t/s)?[ \t]*(\(.{0,16}\)[ \t]*)?"

_CAPACITY_BEFORE = re.compile(r"(?i)(\b(has|have|had|offers?|offering|provides?|provided|providing|comes? with|"
                               r"gives?( you)?|holds?|packs?|carries|"
                               r"equipped with|usable|available|capacity|only|within|of its|"
                               r"(can|may|could) use( up to)?|(memory|vram) (is|of)|fits? (in|into|on|within))"
                               r"( only| just| merely)?\b|"
                               r"只有|仅有|仅|可用|容量|提供|配备|自带|显存是|显存为|(卡|显存)有|显存)[\s:：,，]{0,4}$")
_NEED_BEFORE = re.compile(r"(?i)(\b(needs?|needed|requires?|required|requirement|(?<!can )(?<!may )(?<!could )uses?|"
                          r"used|takes?( up)?|took|"
                          r"occupies|occupy|consumes?|calls? for|demands?|comes? to|adds? up to|amounts? to|"
                          r"load( is| of)?|footprint( is| of)?|weighs( in at)?)"
                          r"(\s+(of|is|are|would be|will be|only|just|merely))?\b|"
                          r"需要|需|占用|占了?|要|用掉)(的)?(显存|内存)?[\s:：,，`]{0,4}$")
_NEED_AFTER = re.compile(r"(?i)^[ \t]*(gb|gib|tb|g)?[ \t]*(of (memory|vram) )?((per|for each|on each) (gpu|card) )?"
                         r"((is|are|would be|will be) )?(needed|required|necessary)\b")
_CAPACITY_AFTER = re.compile(r"(?i)^\s*(gb|gib|tb|g)?\s*(of\s+)?(memory\s+|vram\s+|显存\s*)?"
                             r"((per|on each|of each|on the|of the) (gpu|card)\s+)?((is|are)\s+)?"
                             r"(usable|available|free|left|可用|capacity\b)|"
                             r"^\s*(gb|gib|tb|g)\s*((of )?(memory|vram) )?(cards?|gpus?)\b|"
                             r"^\s*(gb|gib|tb|g)\s*(显存)?的?(卡|显卡)")
_OPEN_BEFORE = re.compile(r"[\[(（【「]\s*(约|大约|大概|about|around|roughly|approximately|~|≈)?\s*$", re.IGNORECASE)
_CLOSE_AFTER = re.compile(r"^\s*[\])）】」]")

_PER_GPU_AFTER = re.compile(_UNIT_LEAD + r"((on |for |in )?each( gpu| card)?|per gpu|per card|a gpu|/gpu|/card)\b|"
                            r"^\s*(gb|gib|tb|g)?\s*(/卡|/张)", re.IGNORECASE)
_PER_GPU_BEFORE = re.compile(r"(每卡|每张卡?|单卡|each gpu|per gpu|each card)[^，。,.;；]{0,12}$", re.IGNORECASE)
# across the GPUs, said so ('in all', 'combined', '两张卡一共'): a bare 'total' / '合计' is often one GPU's sum
_ALL_GPUS_BEFORE = re.compile(r"(?i)(\bin all\b|\baltogether\b|\bcombined\b|\btogether\b|\bbetween them\b|"
                              r"\bboth (the )?(gpus|cards)\b|\bacross (the |all |both )?(gpus|cards)\b|"
                              r"\ball (the )?(gpus|cards)\b|[两二三四八\d]\s*张卡?(一共|共|合计|加起来|总共)|所有卡)")
_ALL_GPUS_AFTER = re.compile(_UNIT_LEAD + r"(in all\b|altogether\b|combined\b|across (the |all |both )?(gpus|cards)\b|"
                             r"(for|on) (all|both) (the )?(gpus|cards)\b)", re.IGNORECASE)

_PARTS = (("part:weights", r"weights?|权重"), ("part:kv", r"kv[ -]?cache|kv|cache|缓存"),
          ("part:activations", r"activations?|激活"))
_PART_AFTER = [(label, re.compile(r"(?i)^[ \t]*(gb|gib|tb|g)?[ \t]*(of |for (the )?|的)?(" + words + r")"))
               for label, words in _PARTS]
_PART_WORD = re.compile(r"(?i)(?P<word>" + "|".join(f"(?P<p{i}>{w})" for i, (_, w) in enumerate(_PARTS)) + ")")
_SUMMED = re.compile(r"(?i)\b(total|in all|altogether|overall|together|sum)\b|合计|总共|一共|总计|加起来|共")

_PER_REQUEST = re.compile(r"(?i)(\bper (user|request|sequence|stream|conversation)\b|\beach (user|request)\b|"
                          r"\bfor (one|a single) (user|request)\b|"
                          r"每(个|位|一)?(用户|请求|并发|路)|单(个)?(用户|请求)|单路)")
_AGGREGATE = re.compile(r"(?i)(\bin total\b|\bin all\b|\baggregate\b|\bcombined\b|\boverall\b|\ball (users|requests)\b|"
                        r"\btotal throughput\b|总吞吐|总速度|合计|一共|总共|加起来|整体)")

_PRICE_GPUS = re.compile(r"(?i)(\b(gpus?|cards?) (alone|only)\b|\bgpu-only\b|\bfor the (gpus|cards)\b|"
                         r"\bthe (gpus|cards) (cost|come to|run)\b|"
                         r"仅显卡|只算显卡|显卡部分|不含主机|卡的价格|显卡(共|要|花|费用|价格))")
_PRICE_TOTAL = re.compile(r"(?i)(\bwith the host\b|\bincluding the host\b|\bhost included\b|\ball-in\b|"
                          r"\bwhole (machine|system|build|server)\b|\bin total\b|\btotal (cost|price)\b|"
                          r"整机|含主机|总价|总共|合计|一共|总计)")
_PRICE_CARD = re.compile(r"(?i)(\b(a|one|each|per|a second|another|an extra|every) (gpu|card)\b|"
                         r"\b(gpu|card) (each|apiece)\b|每张|一张|单张|单卡|再加一张|每卡)")
# the host's own price: named just before the figure ('the host adds $2,500', '含主机约 ¥50,400', '其中主机 ¥18,000')
# or just after it ('$2,500 for the host'); '¥231,840（含主机）' is a total
_PRICE_HOST_BEFORE = re.compile(r"(?i)(\bhost( computer| server| machine)?( (costs?|adds?|is|price|cost))?|"
                                r"主机(价格|费用|成本|部分)?(要|需|是|为)?)[\s:：]*(约|大约|about|around|roughly|~|≈)?\s*$")
_PRICE_HOST_AFTER = re.compile(r"(?i)^[ \t]*(for the host|of (it )?(for )?the host|给主机|用于主机)")


_CLAUSE_END = r"[，。,;；:：\n!?！？|]"  # '|': a table cell


def _clause_before(text: str, m: Located, width: int, previous_end: int = 0) -> str:
    """Up to ``width`` characters before ``m`` in its own clause (and after the figure before it)."""
    return re.split(_CLAUSE_END, text[max(0, previous_end, m.start - width):m.start])[-1]


def _role(text: str, m: Located, previous_end: int) -> str | None:
    before, after = _FILLER.sub(" ", text[previous_end:m.start]), text[m.end:m.end + 40]
    if _NEED_BEFORE.search(before):
        return "need"
    if _CAPACITY_BEFORE.search(before):
        return "capacity"
    if _NEED_AFTER.match(after):
        return "need"
    if _CAPACITY_AFTER.match(after):
        return "capacity"
    return None


def _unbracketed(text: str, m: Located) -> str:
    """``text`` with the brackets right around ``m`` blanked ('needs [77 GB]', '（24 GB）'), so the words outside
    them are read as the figure's own; the same length, so offsets hold."""
    head, tail = text[:m.start], text[m.end:]
    opening, closing = _OPEN_BEFORE.search(head), _CLOSE_AFTER.match(tail)
    if opening:
        head = head[:opening.start()] + " " + head[opening.start() + 1:]
    if closing:
        tail = " " * closing.end() + tail[closing.end():]
    return head + text[m.start:m.end] + tail


def _scope(text: str, m: Located, previous_end: int) -> str | None:
    before, after = text[previous_end:m.start], text[m.end:m.end + 24]
    if _PER_GPU_AFTER.match(after) or _PER_GPU_BEFORE.search(before):
        return "per_gpu"
    if _ALL_GPUS_BEFORE.search(_clause_before(text, m, 16)) or _ALL_GPUS_AFTER.match(after):
        return "all_gpus"
    return None


def _part(text: str, m: Located, previous_end: int) -> str | None:
    after = text[m.end:m.end + 24]
    for label, pattern in _PART_AFTER:
        if pattern.match(after):
            return label
    clause = _clause_before(text, m, 40, previous_end)  # 'Weights 16.1 GB + KV cache 10.7 GB': the nearest
    words = list(_PART_WORD.finditer(clause))
    if not words or _SUMMED.search(clause[words[-1].end():]):
        return None  # no part named, or 'the cache brings the total to …'
    last = words[-1]
    if re.search(r"(?i)(\bof|的)\s*$", clause[:last.start()]):
        return None  # '39.8 GB of weights and 24.3 GB per GPU': the word is the figure before's
    return next(label for i, (label, _) in enumerate(_PARTS) if last.group(f"p{i}"))


def _near(text: str, m: Located, width: int, previous_end: int) -> str:
    """The words within ``width`` characters on both sides of ``m``, in its own clause (after the figure before)."""
    after = re.split(_CLAUSE_END, text[m.end:m.end + width])[0]
    return _clause_before(text, m, width, previous_end) + " " + after


def _rate(text: str, m: Located, previous_end: int) -> str | None:
    near = _near(text, m, 32, previous_end)
    per_request, aggregate = _PER_REQUEST.search(near), _AGGREGATE.search(near)
    if per_request and not aggregate:
        return "rate:per_request"
    if aggregate and not per_request:
        return "rate:aggregate"
    return None


def _price(text: str, m: Located, previous_end: int) -> str | None:
    if _PRICE_HOST_BEFORE.search(_clause_before(text, m, 32, previous_end)) \
            or _PRICE_HOST_AFTER.match(text[m.end:m.end + 24]):
        return f"price:host:{m.dim}"
    near = _near(text, m, 32, previous_end)
    found = [label for label, pattern in (("price:gpus", _PRICE_GPUS), ("price:total", _PRICE_TOTAL))
             if pattern.search(near)]
    if _PRICE_CARD.search(_near(text, m, 32, 0)):  # '再加一张 3090 要 $1,500': the count is part of the words
        found.append("price:card")
    if "price:total" in found:
        found = ["price:total"]  # 'the GPUs and the host come to … in total'
    return f"{found[0]}:{m.dim}" if len(found) == 1 else None


def text_labels(text: str, m: Located, previous_end: int) -> dict[str, str]:
    """The labels, by axis, that the words next to a quantity give it; ``previous_end``: where the quantity
    before it ends (so one figure's words are not read as the next one's)."""
    labels: dict[str, str | None] = {}
    text = _unbracketed(text, m)
    if m.dim == "bytes":
        labels = {"role": _role(text, m, previous_end), "scope": _scope(text, m, previous_end),
                  "part": _part(text, m, previous_end)}
    elif m.dim == "tokens/s":
        labels = {"rate": _rate(text, m, previous_end)}
    elif m.dim in MONEY:
        labels = {"price": _price(text, m, previous_end)}
    return {axis: label for axis, label in labels.items() if label is not None}
