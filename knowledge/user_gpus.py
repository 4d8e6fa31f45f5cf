"""GPUs the user describes by their numbers, for cards the catalog lacks (an RTX 3080, a new part).

``GPU_ADVISOR_GPUS`` names a TOML file of ``[[gpu]]`` tables::

    [[gpu]]
    name = "RTX 3080"           # how it is asked for
    memory_gib = 10
    bandwidth_gbs = 760         # GB/s (1e9 B/s)
    bf16_tflops = 59.5          # dense tensor TFLOPS (not the 2:4-sparse figure)
    fp64_tflops = 0.47          # optional
    tdp_w = 320
    pcie_gen = 4                # optional, with pcie_lanes
    pcie_lanes = 16

    [[measured]]                # optional: a decode speed you measured (one GPU, one request)
    gpu = "RTX 3080"            # a GPU above or a catalog one
    model = "llama-3.1-8b"
    precision = "Q4_K_M"
    decode_tokens_per_s = 101   # e.g. llama-bench's tg128

    [[measured]]                # optional: the MFU of your own training runs on that GPU
    gpu = "RTX 3080"
    training_mfu = 0.35

A measured speed calibrates that GPU's decode predictions for the model measured (and other builds of the same
architecture and size); other models keep the uncalibrated prediction. A measured MFU replaces the published-runs
default of its training-time estimates. Every answer says which of its figures rest on a measurement.

Each becomes a catalog GPU under the name given, whose source says it is the user's own figures (confidence
"L"), with no price:
the calculators size and time it; recommendations, which need a price, leave it out. :func:`load_user_gpus`
reports each problem as one line: a file that cannot be used at all (missing, too large, nested too deeply, not
TOML) gives nothing; an entry that cannot be used is left out and the others are taken. Names are read as
NFKC with invisible characters removed; one mixing Latin with look-alike Cyrillic or Greek letters is refused,
and :func:`skeleton` lets the catalog refuse one that mimics a catalog GPU's name ('Н100' with a Cyrillic 'Н').
"""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from knowledge.bounded import BoundsError, read
from knowledge.paths import expand_user
from knowledge.resolve import normalize
from knowledge.schema import GPU

ENV = "GPU_ADVISOR_GPUS"
M = TypeVar("M", bound=BaseModel)
MAX_FILE_BYTES = 1_000_000
MAX_ENTRIES = 100  # of each kind; a file's later tables are left out (and said to be)
TABLES = ("gpu", "measured")

# Cyrillic and Greek letters drawn like Latin ones (Unicode's confusables, the ones in product names)
_LOOKALIKE = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеіјорсхуѕһԁԛԝӀ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ",
    "ABESIJKMHOPCTXYaeijopcxyshdqwl" "ABEZHIKMNOPTYXaikvoptux",
)


def clean_name(text: str) -> str:
    """``text`` as NFKC on one line, spaces collapsed, without invisible (format) characters such as zero-width
    spaces, nor control characters."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    return "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Cc")).strip()


def skeleton(text: str) -> str:
    """``text`` with look-alike Cyrillic and Greek letters read as the Latin ones and other scripts' digits as
    ASCII digits: 'Н100' (Cyrillic 'Н') → 'H100'."""
    text = clean_name(text).translate(_LOOKALIKE)
    return "".join(str(unicodedata.decimal(c)) if not c.isascii() and c.isdecimal() else c for c in text)


def _scripts(word: str) -> set[str]:
    return {unicodedata.name(c, "?").split()[0] for c in word if c.isalpha()} & {"LATIN", "CYRILLIC", "GREEK"}


def _visible_name(text: str) -> str:
    """A name as :func:`clean_name` reads it; ValueError when nothing visible is left or when one word mixes
    Latin with Cyrillic or Greek letters (a look-alike of another name)."""
    text = clean_name(text)
    if not text:
        raise ValueError("a name with no visible characters")
    for word in re.findall(r"\w+", text):
        if len(scripts := _scripts(word)) > 1:
            raise ValueError(f"'{word}' mixes {' and '.join(sorted(s.title() for s in scripts))} letters, "
                             "which look alike")
    return text


Name = Annotated[str, AfterValidator(_visible_name)]


class Measured(BaseModel):
    """One measurement as written in the file: a decode speed (with its model and precision) or a training MFU."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    gpu: Name = Field(min_length=1, max_length=80)
    model: Name | None = Field(None, min_length=1, max_length=120)
    precision: Name | None = Field(None, min_length=1, max_length=20)
    decode_tokens_per_s: float | None = Field(None, gt=0, le=100_000)
    training_mfu: float | None = Field(None, gt=0, le=0.8, description="model FLOPs utilisation of a training run")

    @model_validator(mode="after")
    def _one_kind(self) -> Measured:
        if (self.decode_tokens_per_s is None) == (self.training_mfu is None):
            raise ValueError("give decode_tokens_per_s (with model and precision) or training_mfu")
        if self.decode_tokens_per_s is not None and not (self.model and self.precision):
            raise ValueError("a decode speed needs its model and precision")
        return self


class GPUProfile(BaseModel):
    """One GPU as its owner describes it (every figure a finite number in a plausible range)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: Name = Field(min_length=1, max_length=80, description="how it is asked for ('RTX 3080')")
    vendor: Literal["NVIDIA", "AMD", "Intel"] = "NVIDIA"
    # the least a card that runs models has: more memory than the driver's ~0.5 GiB reserve, and figures from
    # which sizes, speeds and times come out finite (a 1e-300 TFLOPS card would train for infinite hours)
    memory_gib: float = Field(ge=1, le=4096)
    bandwidth_gbs: float = Field(ge=1, le=100_000)
    bf16_tflops: float = Field(ge=0.01, le=100_000, description="dense tensor BF16/FP16 TFLOPS")
    fp64_tflops: float | None = Field(None, ge=0.001, le=100_000, description="leave out when it has none")
    tdp_w: float = Field(ge=1, le=10_000)
    pcie_gen: int | None = Field(None, ge=3, le=6)
    pcie_lanes: int | None = Field(None, ge=1, le=16)


def load_user_gpus(env: Any = None) -> tuple[list[GPU], list[Measured], list[str]]:
    """The GPUs and measurements of the file ``$GPU_ADVISOR_GPUS`` names (none when unset), and one line per
    problem: a file that cannot be used gives nothing; an entry that cannot be used is left out alone."""
    env = os.environ if env is None else env
    raw = str(env.get(ENV, "") or "").strip()
    if not raw:
        return [], [], []
    path = expand_user(raw)
    try:
        data = read(path, "toml", MAX_FILE_BYTES)
        as_of = dt.date.fromtimestamp(path.stat().st_mtime)
    except (BoundsError, OSError) as exc:
        return [], [], [f"{ENV}: {exc}; nothing taken from it"]
    problems: list[str] = []
    profiles = _entries(data, "gpu", GPUProfile, problems)
    measured = _entries(data, "measured", Measured, problems)
    others = [clean_name(str(k))[:40] for k in data if k not in TABLES]
    if others:
        problems.append(f"{', '.join(others[:5])}{' …' if len(others) > 5 else ''}: not read "
                        "(a GPU file holds [[gpu]] and [[measured]] tables)")
    gpus = _distinct([as_gpu(p, path.name, as_of) for p in profiles], problems)
    return gpus, measured, [f"{ENV}: {path.name}: {p}" for p in problems]


def _entries(data: dict[str, Any], key: str, model: type[M], problems: list[str]) -> list[M]:
    """The ``[[key]]`` tables of ``data`` validated as ``model``; each one that is not valid is left out, with a
    line in ``problems`` saying which and why."""
    tables = data.get(key, [])
    if not isinstance(tables, list):
        problems.append(f"'{key}' should hold [[{key}]] tables; not read")
        return []
    if len(tables) > MAX_ENTRIES:
        problems.append(f"{len(tables) - MAX_ENTRIES:,} [[{key}]] tables after the first {MAX_ENTRIES} left out")
    out = []
    for n, table in enumerate(tables[:MAX_ENTRIES], start=1):
        label = _label(key, n, table)
        if not isinstance(table, dict):
            problems.append(f"{label}: not a [[{key}]] table; left out")
            continue
        try:
            out.append(model.model_validate(table))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "entry"
            problems.append(f"{label}: {where}: {first.get('msg', 'invalid')}; left out")
    return out


def _label(key: str, n: int, table: Any) -> str:
    """'gpu 3 ('RTX 3080')': which table, with the name it gives."""
    name = table.get({"gpu": "name", "measured": "gpu"}[key]) if isinstance(table, dict) else None
    return f"{key} {n}" + (f" ('{clean_name(name)[:40]}')" if isinstance(name, str) else "")


def _distinct(gpus: list[GPU], problems: list[str]) -> list[GPU]:
    """``gpus`` less those whose name reads the same as an earlier one's (said in ``problems``), each with an
    id of its own ('user-gpu', 'user-gpu-2' for names with no Latin letters or digits)."""
    out: list[GPU] = []
    names: set[str] = set()
    ids: set[str] = set()
    for g in gpus:
        key = normalize(skeleton(g.name))
        if key in names:
            problems.append(f"{g.name}: described twice; the first description is used")
            continue
        names.add(key)
        gid, n = g.id, 1
        while gid in ids:
            n += 1
            gid = f"{g.id}-{n}"
        ids.add(gid)
        out.append(g if gid == g.id else g.model_copy(update={"id": gid}))
    return out


def as_gpu(p: GPUProfile, file: str, as_of: dt.date) -> GPU:
    """A catalog entry for ``p``; what the profile does not say is left unknown, never guessed."""
    slug = re.sub(r"[^a-z0-9]+", "-", p.name.lower()).strip("-") or "gpu"
    return GPU.model_validate({
        "id": f"user-{slug}",
        "name": p.name,
        "vendor": p.vendor,
        "tier": "consumer",
        "architecture": "user-described",
        "memory_gb": p.memory_gib,
        "memory_type": "unknown",
        "bandwidth_gbs": p.bandwidth_gbs,
        "ecc": None,
        "throughput": {"bf16": p.bf16_tflops, "fp16": p.bf16_tflops, "fp64": p.fp64_tflops},
        "tdp_w": p.tdp_w,
        "form_factor": "pcie",
        "cooling": "open-air",
        "display_outputs": 0,
        "pcie_gen": p.pcie_gen,
        "pcie_lanes": p.pcie_lanes,
        "interconnect": {"kind": "pcie"},
        "software": {"NVIDIA": ["CUDA"], "AMD": ["ROCm"], "Intel": ["oneAPI"]}[p.vendor],
        "aliases": [],
        "sources": [f"the user's own figures ({file})"],
        "as_of": as_of,
        "confidence": "L",
    })
