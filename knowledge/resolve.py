"""Name resolution: tolerant lookup of catalog entries with "did you mean" suggestions."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Generic, TypeVar

from knowledge.errors import AdvisorError
from knowledge.messages import has

if TYPE_CHECKING:
    from tools.result import Note  # tools.result imports knowledge.messages: imported where used

T = TypeVar("T")

# Words that carry no identity: vendor and product-line prefixes, packaging words.
_NOISE_WORDS = (
    "nvidia", "geforce", "amd", "radeon", "instinct", "intel", "huawei", "tesla", "quadro",
    "英伟达", "华为", "显卡", "加速卡", "的",
)
_SUFFIX_NOISE = re.compile(r"(instruct|chat|hf|it|base)$")


def normalize(name: str) -> str:
    """Fold case, width and punctuation: 'GeForce RTX-4090' -> 'rtx4090'."""
    text = unicodedata.normalize("NFKC", name).lower().strip()
    text = re.sub(r"[\s\-_/:()\[\]·.,，。]+", "", text)
    return text


def _strip_noise(key: str) -> str:
    for word in _NOISE_WORDS:
        if key.startswith(word) and len(key) > len(word):
            key = key[len(word):]
    return key


def variants(name: str) -> set[str]:
    """Lookup keys for a name: normalised, without vendor words, without 'instruct'-like suffixes."""
    base = normalize(name)
    out = {base, _strip_noise(base)}
    for key in list(out):
        stripped = _SUFFIX_NOISE.sub("", key)
        if stripped:
            out.add(stripped)
    # '80g' and '80gb' mean the same memory size
    for key in list(out):
        out.add(re.sub(r"(\d+)gb", r"\1g", key))
    return {k for k in out if k}


# characters that would break a message's line or reorder it on screen: written as escapes where a name is quoted
_UNSHOWABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def shown_name(name: str) -> str:
    """``name`` as an error message quotes it: at most 60 characters, control characters as escapes ('\\r')."""
    text = name if len(name) <= 60 else name[:57] + "…"
    return _UNSHOWABLE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


class UnknownNameError(AdvisorError, LookupError):
    """A name matched no entry; carries suggestions for the user (and ``note``, the message in any language)."""

    def __init__(self, kind: str, name: str, suggestions: list[str]):
        self.kind = kind
        self.name = name
        self.suggestions = suggestions
        shown = shown_name(name)
        hint = f" — did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown {kind} '{shown}'{hint}")

    @property
    def note(self) -> Note:
        """``error.unknown_name``: the kind word ('GPU', 'model') translated, names as they are."""
        from tools.result import note

        shown = shown_name(self.name)
        if not self.suggestions:
            return note("error.unknown_name_no_hint", kind=_kind_word(self.kind), name=shown)
        return note("error.unknown_name", kind=_kind_word(self.kind), name=shown,
                    suggestions=", ".join(self.suggestions))


class AmbiguousNameError(AdvisorError, LookupError):
    def __init__(self, kind: str, name: str, candidates: list[str]):
        self.kind = kind
        self.name = name
        self.candidates = candidates
        super().__init__(f"{kind} '{shown_name(name)}' is ambiguous — which one: {', '.join(candidates)}?")

    @property
    def note(self) -> Note:
        """``error.ambiguous_name`` in any language."""
        from tools.result import note

        return note("error.ambiguous_name", kind=_kind_word(self.kind), name=shown_name(self.name),
                    candidates=", ".join(self.candidates))


def _kind_word(kind: str) -> Note | str:
    """'GPU', 'model', 'CPU platform' as a note of ``error.kind.*`` (the word itself when it has no message)."""
    from tools.result import note

    key = "error.kind." + re.sub(r"[^a-z0-9]+", "_", kind.lower()).strip("_")
    return note(key) if has("en", key) else kind


_FOUND_MAX = 4096  # names remembered per resolver (the tools look the same few names up on every call)


class Resolver(Generic[T]):
    """Maps names and aliases to entries; built once per catalog."""

    def __init__(self, kind: str, entries: Iterable[T], names: Callable[[T], Iterable[str]],
                 label: Callable[[T], str], fallback: Callable[[str], str | None] | None = None):
        self.kind = kind
        self._label = label
        # a name to try when a name matches nothing: the model of a checkpoint name ('GLM-5-FP8' → 'GLM-5')
        self._fallback = fallback
        self._index: dict[str, list[T]] = {}
        self._found: dict[str, T] = {}  # names already resolved to one entry
        for entry in entries:
            keys: set[str] = set()
            for n in names(entry):
                keys |= variants(n)
            for key in keys:
                bucket = self._index.setdefault(key, [])
                if entry not in bucket:
                    bucket.append(entry)

    def keys(self) -> list[str]:
        return list(self._index)

    def collisions(self) -> dict[str, list[str]]:
        """Keys that point to more than one entry (ambiguous aliases)."""
        return {k: [self._label(e) for e in v] for k, v in self._index.items() if len(v) > 1}

    def find(self, name: str) -> T | None:
        """The entry for ``name``, or None; raises AmbiguousNameError for shared keys."""
        if not isinstance(name, str):
            return None
        found = self._found.get(name)
        if found is not None:
            return found
        if not name.strip() or len(name) > 200:
            return None
        for key in sorted(variants(name), key=len, reverse=True):
            hits = self._index.get(key)
            if hits and len(hits) == 1:
                if len(self._found) >= _FOUND_MAX:
                    self._found.clear()
                self._found[name] = hits[0]
                return hits[0]
            if hits:
                raise AmbiguousNameError(self.kind, name, [self._label(e) for e in hits])
        other = self._fallback(name) if self._fallback else None
        return self.find(other) if other and other != name else None

    def get(self, name: str) -> T:
        """The entry for ``name``; raises UnknownNameError with suggestions."""
        hit = self.find(name)
        if hit is None:
            raise UnknownNameError(self.kind, str(name), self.suggest(str(name)))
        return hit

    def suggest(self, name: str, n: int = 3) -> list[str]:
        key = _strip_noise(normalize(name[:200]))
        if not key:
            return []
        close = difflib.get_close_matches(key, self._index.keys(), n=12, cutoff=0.5)
        # prefix/containment matches catch 'h300' -> 'h200', 'h100' and 'qwen72' -> 'qwen2.572b'
        close += [k for k in self._index if k.startswith(key[:2]) and k not in close][:12]
        out: list[str] = []
        # closest first; among equals, the same leading character (the same series: 3080 → 3090 before B300)
        ranked = sorted(close, key=lambda k: (-difflib.SequenceMatcher(None, key, k).ratio(), k[:1] != key[:1]))
        for k in ranked:
            for entry in self._index[k]:
                label = self._label(entry)
                if label not in out:
                    out.append(label)
            if len(out) >= n:
                break
        return out[:n]
