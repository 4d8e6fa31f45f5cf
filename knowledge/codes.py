"""Scientific codes and the precision their GPU builds compute in (``data/codes/scientific.toml``).

What each build computes in, in words, is the message ``catalog_text.code_note.<id>``
(:func:`knowledge.catalog_text.code_note`)."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, Field

GpuStack = Literal["cuda", "rocm", "xpu"]


class ScientificCode(BaseModel):
    id: str
    name: str
    names: list[str] = Field(min_length=1, description="how users write it, zh and en")
    fp64: bool = Field(description="whether the GPU build computes in double precision")
    fp64_kind: Literal["vector", "matrix"] | None = Field(None, description="FP64 codes: dense matrix algebra "
                                                                             "(tensor-core FP64) or vector work")
    stacks: list[GpuStack] = Field(min_length=1, description="GPU software stacks the code has builds for: cuda "
                                                             "(NVIDIA), rocm (AMD, HIP or SYCL), xpu (Intel GPUs)")
    stacks_source: str = Field(description="where the builds are documented")
    tokens_per_gb: float | None = Field(None, gt=0, description="the longest input (tokens, residues) a GB of GPU "
                                                               "memory holds, where the code documents it")
    tokens_source: str | None = None
    gpu_port: str | None = Field(None, description="the separate product or port that runs it on GPUs, when the "
                                                   "code's own releases run on CPUs only ('AceCAST' for WRF)")
    one_gpu_per_job: bool = Field(False, description="a job runs on one GPU (more GPUs run more jobs, not a larger "
                                                     "one)")
    source: str
    as_of: str

    @property
    def cuda_only(self) -> bool:
        """Whether the GPU build runs on NVIDIA GPUs only."""
        return self.stacks == ["cuda"]


@cache
def scientific_codes() -> tuple[ScientificCode, ...]:
    """Every code in the table, validated once."""
    text = resources.files("knowledge.data").joinpath("codes/scientific.toml").read_text(encoding="utf-8")
    return tuple(ScientificCode.model_validate(row) for row in tomllib.loads(text)["code"])


@cache
def _pattern() -> re.Pattern[str]:
    names = sorted({n for c in scientific_codes() for n in c.names}, key=len, reverse=True)
    # 'AlphaFold2', 'alphafold3': a version number may follow the name
    return re.compile("|".join(rf"(?<![a-z0-9]){re.escape(n)}(?![a-z])" for n in names), re.IGNORECASE)


def scientific_code(code_id: str) -> ScientificCode:
    """The code with this id (ids come from :func:`find_code`)."""
    return next(c for c in scientific_codes() if c.id == code_id)


def find_codes(text: str) -> list[ScientificCode]:
    """Every code named in ``text``, in the order named, each once ('Fluent 和 OpenFOAM')."""
    out: list[ScientificCode] = []
    for m in _pattern().finditer(text):
        code = _named(m.group(0))
        if code not in out:
            out.append(code)
    return out


def _named(said: str) -> ScientificCode:
    """The code one of whose names ``said`` is (a match of :func:`_pattern`)."""
    said = said.lower()
    return next(c for c in scientific_codes() if said in (n.lower() for n in c.names))


# a code said to be a small share of the work ('还有一点 cp2k', 'a bit of CP2K', 'CP2K occasionally')
_MINOR_BEFORE = re.compile(r"(?:一点|一点点|一些|少量|少部分|偶尔|零星|少许|a\s+(?:little|bit)(?:\s+of)?|"
                           r"occasional(?:ly)?|the\s+odd|light)\s*(?:的|跑|用)?\s*$", re.IGNORECASE)
_MINOR_AFTER = re.compile(r"^\s*(?:也?偶尔|偶尔|少量|用得少|跑得少|不多|occasionally|now and then|once in a while|"
                          r"on the side|rarely|(?:is|are) (?:rare|minor))", re.IGNORECASE)


def _minor_codes(text: str) -> set[str]:
    """The ids of codes the message calls a small share of the work."""
    return {_named(m.group(0)).id for m in _pattern().finditer(text)
            if _MINOR_BEFORE.search(text, max(0, m.start() - 16), m.start()) or _MINOR_AFTER.match(text[m.end():])}


def strictest_code(text: str) -> ScientificCode | None:
    """Of the codes named, the one that decides the card: a double-precision one before a mixed-precision one,
    the one with the fewest GPU stacks first (a machine for 'GROMACS, OpenFOAM and VASP' must run VASP's FP64
    on CUDA); among equals the first named. A code said to be a small share of the work ('GROMACS 和 AMBER 为主，
    还有一点 CP2K') decides only when nothing else is named."""
    codes = find_codes(text)
    minor = _minor_codes(text)
    main = [c for c in codes if c.id not in minor] or codes
    return min(main, key=lambda c: (not c.fp64, len(c.stacks), codes.index(c))) if main else None


def find_code(text: str) -> ScientificCode | None:
    """The first code named in ``text`` ('跑 GROMACS', 'AlphaFold 3'), or None."""
    m = _pattern().search(text)
    return _named(m.group(0)) if m else None
