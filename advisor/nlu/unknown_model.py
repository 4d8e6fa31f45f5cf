"""A model the user names that the catalog lacks: 'run Foobar-Large on a 3090', 'Zephyr-Orion-30B 一张4090够吗'.

A name counts when it is shaped like a model id and stands where models stand: it carries a size tag
('Orion-30B', 'foo_13b'), or it is the object of a model verb ('run', 'serve', '部署', '微调') or sits beside the
word 'model' / '模型' and is written like an id (a hyphen, an underscore, a digit or an inner capital), or is
quoted there however it is written ('helix-core', “天枢”). Names the
catalogs know (GPUs, models, CPU platforms), precisions, engines and the tech words listed in
``data/not_models.toml`` never count.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources

from advisor.nlu import vocab
from knowledge import Catalog
from knowledge.resolve import UnknownNameError

_NAME = re.compile(r"(?<![A-Za-z0-9._\-])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)*(?![A-Za-z0-9_\-])")
_SIZE_SEGMENT = re.compile(r"^\d+(?:\.\d+)?[bBmM]$|^[A-Za-z]+\d+(?:\.\d+)?[bB]$")  # '30B', '1.5b', 'orion30b'
_SPACED_SIZE = re.compile(r"^\s+\d+(?:\.\d+)?\s*[bB](?![A-Za-z])")  # 'Orion 30B'
_ID_SHAPED = re.compile(r"[-_]|\d|[a-z][A-Z]")
_LEAD = r"(?:\s+(?:a|an|the|my|our|this|that|their|its)\b)?\s*"
_FAMILY_ONLY = re.compile(r"(?:llama|qwen|deepseek|mistral|mixtral|gemma|phi|glm|chatglm|yi|baichuan|internlm|kimi|"
                          r"minimax|falcon|hunyuan|ernie|nemotron|olmo)[-_ ]?(?:v?\d+(?:\.\d+)?)?", re.IGNORECASE)
_QUOTED = re.compile(r"[\"'“‘「『《]([^\"'”’」』》\n]{2,40}?)[\"'”’」』》]")  # 'helix-core', “天枢”, 《…》
MAX_NAME = 60


@cache
def _word_list(name: str) -> frozenset[str]:
    """A list of ``data/not_models.toml`` ('words', 'plain_words'), lower-case."""
    text = resources.files("advisor.nlu").joinpath("data/not_models.toml").read_text(encoding="utf-8")
    return frozenset(w.lower() for w in tomllib.loads(text)[name])


def _not_models() -> frozenset[str]:
    return _word_list("words")


def _plain_words() -> frozenset[str]:
    return _word_list("plain_words")


def _known(name: str, cat: Catalog) -> bool:
    """Whether a catalog, the precision and engine vocabulary or the tech-word list already gives ``name`` a
    meaning."""
    low = name.lower()
    if low in _not_models() or re.split(r"[-_]", low)[0] in _not_models():
        return True
    for resolver in (cat.gpu_resolver, cat.model_resolver, cat.platform_resolver):
        try:
            resolver.get(name)
            return True
        except (UnknownNameError, LookupError):
            continue
    return False


def _plain_compound(name: str) -> bool:
    """'two-card', 'llama-style', 'fine-tuning', 'Qwen3.5', 'DeepSeek': English compounds and bare family names."""
    if re.fullmatch(r"[a-z]+(?:-[a-z]+)+", name) or _FAMILY_ONLY.fullmatch(name):
        return True
    return any(part.lower() in _plain_words() for part in re.split(r"[-_]", name)[1:])


def _sized(name: str, after: str) -> bool:
    """'Orion-30B', 'foo_13b-chat', 'Orion 30B': a size tag in the name or right after it."""
    parts = re.split(r"[-_]", name)
    return ((len(parts) > 1 and any(_SIZE_SEGMENT.match(p) for p in parts[1:]))
            or (bool(_SPACED_SIZE.match(after)) and name[:1].isupper() and len(name) >= 3
            and name.lower() not in _plain_words()))


def _placed(text: str, start: int, end: int) -> bool:
    """The name stands where a model stands: after a model verb, or beside 'model' / '模型'."""
    before, after = text[max(0, start - 24):start], text[end:end + 12]
    verb = vocab.cue("slot", "model_verb")
    noun = vocab.cue("slot", "model_noun")
    if verb and re.search(f"(?:{verb.pattern}){_LEAD}$", before, re.IGNORECASE):
        return True
    return bool(noun and (re.match(rf"\s*(?:{noun.pattern})", after, re.IGNORECASE)
                          or re.search(rf"(?:{noun.pattern})\s*(?:叫|是|called|named)?\s*$", before, re.IGNORECASE)))


def unknown_model(text: str, taken: list[tuple[int, int]], cat: Catalog) -> str | None:
    """The first model name in ``text`` that no catalog knows; ``taken`` are spans already read as names. A name
    in quotes beside 'model' or a model verb counts however it is written ('helix-core', “天枢”, 'Orion-X 2')."""
    for q in _QUOTED.finditer(text):
        name = q.group(1).strip()
        if name and not any(a < q.end() and q.start() < b for a, b in taken) and not _known(name, cat) \
                and _placed(text, q.start(), q.end()):
            return name
    for m in _NAME.finditer(text):
        name, start, end = m.group(0).rstrip("."), m.start(), m.start() + len(m.group(0).rstrip("."))
        if len(name) < 3 or len(name) > MAX_NAME or any(a < end and start < b for a, b in taken):
            continue
        if _SIZE_SEGMENT.match(name) or _known(name, cat):
            continue
        if _sized(name, text[end:]):
            spaced = _SPACED_SIZE.match(text[end:])
            return name + (spaced.group(0) if spaced else "")
        if _ID_SHAPED.search(name[1:]) and not _plain_compound(name) and _placed(text, start, end):
            return name
    return None
