"""Checks of the guidance corpus in knowledge/corpus/{en,zh}/*.md.

The parser here is deliberately independent of the production loader: it
implements the file format from the written spec, so a loader bug and a
corpus bug cannot hide each other.

Format:
    ---
    id: slug            (ASCII; same in the en and zh file of a pair; file name = id + ".md")
    title: ...
    lang: en | zh       (= the folder)
    source: ...         (where the facts come from)
    as_of: YYYY-MM-DD
    ---
    optional lead paragraph (counted with the first section)
    ## Heading {#slug}
    paragraphs ...

Each ``## … {#slug}`` section is one retrievable chunk ``{id}/{lang}/{slug}``.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[1] / "knowledge" / "corpus"
LANGS = ("en", "zh")
REQUIRED_KEYS = ("id", "title", "lang", "source", "as_of")
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
HEADING = re.compile(r"^## (?P<title>\S.*?) \{#(?P<slug>[^}\s]+)\}\s*$")
CJK = re.compile(r"[\u3400-\u9fff]")

# Length bounds per chunk (the lead paragraph counts towards the first section).
EN_WORDS = (80, 300)
ZH_CHARS = (150, 600)  # non-whitespace characters

# Reference files a `source` line may name (in /work/shared/reference).
KNOWN_REFERENCE_FILES = {
    "hardware_rules.md",
    "sizing_formulas.md",
    "measurements.md",
    "gpu_specs_reference.csv",
    "gpu_sources.md",
    "epoch_ml_hardware.csv",
}

# The articles the corpus must contain (en + zh each).
REQUIRED_ARTICLES = {
    "vram",
    "bandwidth-hbm",
    "ecc",
    "precision",
    "interconnect",
    "software",
    "tiers",
    "training-vs-inference",
    "compat-checklist",
    "pitfalls",
    "domestic",
    "decision-path",
    "spec-sheet",
    "rent-vs-buy",
    "used-cards",
    "multi-gpu-scaling",
    "scientific",
    "power-cooling",
    "llm-serving",
    "fine-tuning",
}


@dataclass
class Section:
    slug: str
    title: str
    text: str


@dataclass
class Article:
    path: Path
    meta: dict[str, str]
    sections: list[Section] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def lang(self) -> str:
        return self.meta["lang"]

    def section(self, slug: str) -> Section:
        for s in self.sections:
            if s.slug == slug:
                return s
        raise KeyError(f"{self.path.name}: no section {slug!r}")

    @property
    def body(self) -> str:
        return "\n".join(s.text for s in self.sections)


class FormatError(ValueError):
    pass


def parse(path: Path) -> Article:
    """Parse one corpus file strictly; raise FormatError with the reason."""
    text = path.read_text(encoding="utf-8")
    if "\r" in text:
        raise FormatError(f"{path}: CR line endings")
    lines = text.split("\n")
    if not lines or lines[0] != "---":
        raise FormatError(f"{path}: must start with a '---' line")
    try:
        end = lines.index("---", 1)
    except ValueError as e:
        raise FormatError(f"{path}: front matter not closed by '---'") from e
    meta: dict[str, str] = {}
    for raw in lines[1:end]:
        if not raw.strip():
            continue
        key, sep, value = raw.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not re.fullmatch(r"[a-z_]+", key):
            raise FormatError(f"{path}: bad front-matter line {raw!r}")
        if key in meta:
            raise FormatError(f"{path}: duplicate key {key!r}")
        if not value:
            raise FormatError(f"{path}: empty value for {key!r}")
        # Keep values safe for YAML-based loaders too.
        if value[0] in "[]{}&*!|>'\"%@`#" or " #" in value or ": " in value:
            raise FormatError(f"{path}: value of {key!r} is not a plain scalar: {value!r}")
        meta[key] = value
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise FormatError(f"{path}: missing front-matter keys {missing}")
    extra = set(meta) - set(REQUIRED_KEYS)
    if extra:
        raise FormatError(f"{path}: unknown front-matter keys {sorted(extra)}")

    article = Article(path=path, meta=meta)
    lead: list[str] = []
    current: tuple[str, str, list[str]] | None = None
    for raw in lines[end + 1 :]:
        if raw.startswith("#"):
            m = HEADING.match(raw)
            if not m:
                raise FormatError(f"{path}: heading not of the form '## Title {{#slug}}': {raw!r}")
            if current:
                article.sections.append(Section(current[0], current[1], "\n".join(current[2]).strip()))
            current = (m["slug"], m["title"], [])
            continue
        if raw.startswith("```"):
            raise FormatError(f"{path}: code fences are not allowed in the corpus")
        (current[2] if current else lead).append(raw)
    if current:
        article.sections.append(Section(current[0], current[1], "\n".join(current[2]).strip()))
    if not article.sections:
        raise FormatError(f"{path}: no '## … {{#slug}}' sections")
    lead_text = "\n".join(lead).strip()
    if lead_text:
        first = article.sections[0]
        article.sections[0] = Section(first.slug, first.title, lead_text + "\n\n" + first.text)
    return article


def _files(lang: str) -> list[Path]:
    return sorted((CORPUS / lang).glob("*.md"))


ALL_FILES = [p for lang in LANGS for p in _files(lang)]


@pytest.fixture(scope="module")
def articles() -> dict[tuple[str, str], Article]:
    out: dict[tuple[str, str], Article] = {}
    for p in ALL_FILES:
        a = parse(p)
        out[(a.lang, a.id)] = a
    return out


def _art(articles: dict[tuple[str, str], Article], lang: str, aid: str) -> Article:
    assert (lang, aid) in articles, f"missing article {lang}/{aid}"
    return articles[(lang, aid)]


def words(text: str) -> int:
    return len(text.split())


def zh_chars(text: str) -> int:
    return len(re.sub(r"\s", "", text))


# ---------------------------------------------------------------- format


def test_parser_rejects_malformed(tmp_path: Path) -> None:
    good = "---\nid: x\ntitle: T\nlang: en\nsource: seed\nas_of: 2026-11-01\n---\n## A {#a}\ntext\n"
    p = tmp_path / "x.md"
    p.write_text(good, encoding="utf-8")
    art = parse(p)
    assert [s.slug for s in art.sections] == ["a"] and art.sections[0].text == "text"
    bad_cases = {
        "no front matter": "## A {#a}\ntext\n",
        "missing key": good.replace("source: seed\n", ""),
        "no slug": good.replace("## A {#a}", "## A"),
        "h3 heading": good + "### B\nmore\n",
        "unknown key": good.replace("as_of:", "tags: a\nas_of:"),
        "yaml-unsafe value": good.replace("title: T", "title: T: sub"),
    }
    for why, content in bad_cases.items():
        p.write_text(content, encoding="utf-8")
        with pytest.raises(FormatError):
            parse(p)
            pytest.fail(f"accepted a file with {why}")


def test_corpus_files_exist() -> None:
    for lang in LANGS:
        ids = {p.stem for p in _files(lang)}
        assert ids >= REQUIRED_ARTICLES, f"{lang}: missing {sorted(REQUIRED_ARTICLES - ids)}"


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_file_parses_and_front_matter_is_complete(path: Path) -> None:
    a = parse(path)
    assert SLUG.match(a.id), a.id
    assert path.stem == a.id, "file name must be the article id"
    assert a.lang == path.parent.name
    assert dt.date.fromisoformat(a.meta["as_of"]) <= dt.date(2027, 1, 1)
    assert len(a.meta["title"]) >= 4
    # every source line names the seed guide or a reference file, and only files that exist
    src = a.meta["source"]
    assert "seed" in src or "reference/" in src, src
    for name in re.findall(r"reference/([\w.]+)", src):
        assert name in KNOWN_REFERENCE_FILES, f"{path.name}: unknown reference file {name}"
    assert 3 <= len(a.sections) <= 7, f"{path.name}: {len(a.sections)} sections"
    slugs = [s.slug for s in a.sections]
    assert len(slugs) == len(set(slugs)), f"{path.name}: duplicate section slugs"
    for s in a.sections:
        assert SLUG.match(s.slug), s.slug
        assert s.text, f"{path.name}#{s.slug} is empty"
        assert "|---" not in s.text and not re.search(r"^\|", s.text, re.M), "no tables in chunks"


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_section_lengths_and_language(path: Path) -> None:
    a = parse(path)
    for s in a.sections:
        n_cjk = len(CJK.findall(s.text))
        if a.lang == "en":
            n = words(s.text)
            assert EN_WORDS[0] <= n <= EN_WORDS[1], f"{path.name}#{s.slug}: {n} words"
            assert n_cjk <= 0.05 * len(s.text), f"{path.name}#{s.slug}: too much Chinese in en"
        else:
            n = zh_chars(s.text)
            assert ZH_CHARS[0] <= n <= ZH_CHARS[1], f"{path.name}#{s.slug}: {n} chars"
            assert n_cjk >= 0.2 * n, f"{path.name}#{s.slug}: only {n_cjk}/{n} CJK characters"
            assert CJK.search(s.title), f"{path.name}#{s.slug}: zh heading should be Chinese"


def test_pairs_match(articles: dict[tuple[str, str], Article]) -> None:
    en = {aid for lang, aid in articles if lang == "en"}
    zh = {aid for lang, aid in articles if lang == "zh"}
    assert en == zh, f"unpaired: en-only {sorted(en - zh)}, zh-only {sorted(zh - en)}"
    for aid in en:
        en_slugs = [s.slug for s in articles[("en", aid)].sections]
        zh_slugs = [s.slug for s in articles[("zh", aid)].sections]
        assert en_slugs == zh_slugs, f"{aid}: section slugs differ: {en_slugs} vs {zh_slugs}"
        assert articles[("en", aid)].meta["as_of"] == articles[("zh", aid)].meta["as_of"]


def test_chunk_ids_and_titles_unique(articles: dict[tuple[str, str], Article]) -> None:
    chunk_ids = [f"{a.id}/{a.lang}/{s.slug}" for a in articles.values() for s in a.sections]
    assert len(chunk_ids) == len(set(chunk_ids))
    for lang in LANGS:
        titles = [a.meta["title"] for a in articles.values() if a.lang == lang]
        assert len(titles) == len(set(titles)), f"{lang}: duplicate article titles"


def test_zh_articles_anchor_english_terms(articles: dict[tuple[str, str], Article]) -> None:
    """zh articles give the English term in parentheses somewhere (cross-language anchors)."""
    for (lang, aid), a in articles.items():
        if lang == "zh":
            assert re.search(r"[（(][^）)]*[A-Za-z]{2,}", a.body), f"zh/{aid}: no English term anchors"


def test_en_domestic_article_names_chinese_terms(articles: dict[tuple[str, str], Article]) -> None:
    body = _art(articles, "en", "domestic").body
    for term in ("信创", "昇腾", "寒武纪", "海光", "摩尔线程", "壁仞", "天数智芯", "沐曦"):
        assert term in body, term


# ---------------------------------------------------------------- content
# Expected numbers are derived here from first principles or copied from the
# published references they come from (cited per check), never from the corpus.


def _fmt_thousands(x: float) -> str:
    return f"{x:,.0f}"


def _has_number(text: str, value: float, unit: str) -> bool:
    """True if `value` appears with `unit` (allowing '1,440' or '1440', optional space)."""
    forms = {_fmt_thousands(value), f"{value:.0f}"} if value == int(value) else {f"{value:g}"}
    return any(re.search(rf"(?<![\d.,]){re.escape(f)}\s?{re.escape(unit)}", text) for f in forms)


@pytest.mark.parametrize("lang", LANGS)
def test_vram_70b_weights(articles: dict[tuple[str, str], Article], lang: str) -> None:
    params = 70e9
    fp16_gb = params * 2 / 1e9  # 2 bytes per parameter
    int4_gb = params * 0.5 / 1e9  # 4 bits = 0.5 byte per parameter
    assert (fp16_gb, int4_gb) == (140, 35)
    a = _art(articles, lang, "vram")
    for slug in ("weights", "70b-example"):
        text = a.section(slug).text
        assert _has_number(text, fp16_gb, "GB"), f"{lang}/vram#{slug} lacks 140 GB"
        assert _has_number(text, int4_gb, "GB"), f"{lang}/vram#{slug} lacks 35 GB"


@pytest.mark.parametrize("lang", LANGS)
def test_vram_kv_cache_numbers(articles: dict[tuple[str, str], Article], lang: str) -> None:
    # Llama-3.1-8B: 32 layers, 8 KV heads, head_dim 128, bf16 -> kvplan reports 131,072 B/token
    assert 2 * 32 * 8 * 128 * 2 == 131_072
    # Llama-3-70B: 80 layers, 8 KV heads, head_dim 128, bf16
    per_token_70b = 2 * 80 * 8 * 128 * 2
    text = _art(articles, lang, "vram").section("kv-cache").text
    assert _fmt_thousands(131_072) in text
    assert _fmt_thousands(per_token_70b) in text
    assert "GQA" in text and "MLA" in text and "576" in text


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("article", "slug"), [("compat-checklist", "psu-wall"), ("power-cooling", "wall-circuit")])
def test_wall_circuit_80_percent_rule(
    articles: dict[tuple[str, str], Article], lang: str, article: str, slug: str
) -> None:
    text = _art(articles, lang, article).section(slug).text
    assert "120 V" in text and "15 A" in text and "80" in text
    assert _has_number(text, 120 * 15 * 0.8, "W"), "1,440 W continuous on 120 V/15 A"
    assert _has_number(text, 120 * 20 * 0.8, "W"), "1,920 W continuous on 120 V/20 A"
    assert _has_number(text, 220 * 10 * 0.8, "W"), "1,760 W continuous on 220 V/10 A"
    # Puget's measured 4x RTX 3090 (300 W each) wall draw
    assert _has_number(text, 1717, "W")


@pytest.mark.parametrize("lang", LANGS)
def test_psu_formula_example(articles: dict[tuple[str, str], Article], lang: str) -> None:
    # (2 x 450 W RTX 4090 + 230 W CPU + 150 W platform) x 1.25
    need = (2 * 450 + 230 + 150) * 1.25
    text = _art(articles, lang, "power-cooling").section("psu-sizing").text
    assert _has_number(text, need, "W")
    assert "1.25" in text and ("850 W" in text) and ("1,000 W" in text or "1000 W" in text)


def test_interconnect_4090_has_no_p2p_or_nvlink(articles: dict[tuple[str, str], Article]) -> None:
    en = _art(articles, "en", "interconnect").section("geforce-p2p").text
    assert re.search(r"RTX 4090 has no NVLink and no (PCIe )?P2P", en)
    zh = _art(articles, "zh", "interconnect").section("geforce-p2p").text
    assert re.search(r"RTX 4090[^。]*(没有|不支持)[^。]*NVLink[^。]*P2P", zh)
    for text in (en, zh):
        assert "112.5 GB/s" in text  # RTX 3090 2-way bridge still existed
        # no sentence claims NVLink support for the 4090 ("不支持" is the negation)
        assert not re.search(r"4090[^.。]*(\bsupports|(?<!不)支持) ?NVLink", text)


@pytest.mark.parametrize("lang", LANGS)
def test_interconnect_link_numbers(articles: dict[tuple[str, str], Article], lang: str) -> None:
    text = _art(articles, lang, "interconnect").body
    for figure in ("900 GB/s", "600 GB/s", "400 GB/s", "1,800 GB/s", "112.5 GB/s"):
        assert figure in text, figure
    # AMD MI300X: 7 Infinity Fabric links x 128 GB/s
    assert _has_number(text, 7 * 128, "GB/s")
    # 4 GPUs at x16 need 64 lanes (the seed's example)
    assert "64" in _art(articles, lang, "interconnect").section("pcie-lanes").text


@pytest.mark.parametrize("lang", LANGS)
def test_multi_gpu_measurements(articles: dict[tuple[str, str], Article], lang: str) -> None:
    # XiongjieDai GPU-Benchmarks-on-LLM-Inference, Llama-3-8B Q4_K_M, 1/2/4/8x RTX 4090
    text = _art(articles, lang, "multi-gpu-scaling").section("measured-4090").text
    for v in ("127.74", "122.56", "117.61", "116.13"):
        assert v in text
    drop = round((1 - 116.13 / 127.74) * 100)
    assert f"{drop} %" in text or f"{drop}%" in text


@pytest.mark.parametrize("lang", LANGS)
def test_llm_serving_vllm_budget(articles: dict[tuple[str, str], Article], lang: str) -> None:
    a = _art(articles, lang, "llm-serving")
    assert "0.92" in a.section("memory-reservation").text
    budget = a.section("budget-example").text
    # vLLM issue #12330: 39.50 GiB x 0.90 = 35.55; weights 14.96; activations 9.37; non-torch 0.10
    kv = round(39.50 * 0.90 - 14.96 - 9.37 - 0.10, 2)
    assert f"{kv:.2f}" in budget and "5,691" in budget
    tokens = 5691 * 16
    assert _fmt_thousands(tokens) in budget
    assert f"{tokens / 8192:.2f}" in budget


@pytest.mark.parametrize("lang", LANGS)
def test_fine_tuning_unsloth_minimums(articles: dict[tuple[str, str], Article], lang: str) -> None:
    a = _art(articles, lang, "fine-tuning")
    lora, qlora = a.section("lora").text, a.section("qlora").text
    # Unsloth requirements page: LoRA 16-bit / QLoRA 4-bit absolute minimums
    for gb in (22, 33, 76, 164):
        assert _has_number(lora, gb, "GB"), gb
    for gb in (6, 8.5, 26, 41):
        assert _has_number(qlora, gb, "GB"), gb
    full = a.section("full-fine-tuning").text
    assert "16" in full and "18" in full


@pytest.mark.parametrize("lang", LANGS)
def test_precision_architecture_gates(articles: dict[tuple[str, str], Article], lang: str) -> None:
    text = _art(articles, lang, "precision").section("per-architecture").text
    for token in ("Ampere", "Ada", "Hopper", "Blackwell", "910B", "NVFP4", "MI355X"):
        assert token in text, token
    sw = _art(articles, lang, "software").section("cuda").text
    for cc in ("7.5", "8.0", "8.9", "12.8"):
        assert cc in sw, cc


@pytest.mark.parametrize("lang", LANGS)
def test_spec_sheet_dense_vs_sparse(articles: dict[tuple[str, str], Article], lang: str) -> None:
    a = _art(articles, lang, "spec-sheet")
    ai = a.section("ai-tops").text
    # RTX 5090: 3,352 "AI TOPS" = sparse FP4; dense is half
    assert "3,352" in ai and _fmt_thousands(3352 / 2) in ai
    acc = a.section("precision-and-accumulate").text
    assert "165.2" in acc and "330.3" in acc  # RTX 4090 FP16 tensor, FP32 vs FP16 accumulate
    gib = a.section("gb-vs-gib").text
    assert f"{2**30:,}" in gib and "39.50 GiB" in gib


@pytest.mark.parametrize("lang", LANGS)
def test_scientific_matrix_memory(articles: dict[tuple[str, str], Article], lang: str) -> None:
    text = _art(articles, lang, "scientific").section("memory-for-nxn").text
    n = 100_000
    assert _has_number(text, 8 * n * n / 1e9, "GB")  # dense FP64 N x N = 8 N^2 bytes
    assert "8N²" in text or "8·N²" in text or "8 N²" in text


@pytest.mark.parametrize("lang", LANGS)
def test_used_cards_software_floor(articles: dict[tuple[str, str], Article], lang: str) -> None:
    text = _art(articles, lang, "used-cards").section("architecture-floor").text
    assert "V100" in text and "7.5" in text and "T4" in text


def test_decision_path_ends_with_the_question(articles: dict[tuple[str, str], Article]) -> None:
    en = _art(articles, "en", "decision-path").sections[-1].text.lower()
    assert all(w in en for w in ("training", "inference", "scientific"))
    zh = _art(articles, "zh", "decision-path").sections[-1].text
    assert all(w in zh for w in ("训练", "推理", "科学计算"))


def test_pitfalls_has_the_four_pitfalls(articles: dict[tuple[str, str], Article]) -> None:
    for lang in LANGS:
        assert len(_art(articles, lang, "pitfalls").sections) >= 4


# ---------------------------------------------------------------- own words

SEED_DIR = Path("/work/shared/seed")


def _cjk_only(text: str) -> str:
    return "".join(CJK.findall(text))


def test_no_sentences_copied_from_the_seed(articles: dict[tuple[str, str], Article]) -> None:
    """No run of 10 consecutive Chinese characters of the seed guide reappears in a zh article.

    Only CJK characters are compared (spaces, punctuation, Latin terms and numbers dropped),
    so shared terms such as "ECC (Error-Correcting Code)" or "FP16/BF16" do not count, while a
    copied or lightly edited Chinese sentence does.
    """
    seeds = sorted(SEED_DIR.glob("*.txt")) if SEED_DIR.is_dir() else []
    if not seeds:
        pytest.skip("seed guide not available on this machine")
    seed = _cjk_only("".join(p.read_text(encoding="utf-8") for p in seeds))
    window = 10
    grams = {seed[i : i + window] for i in range(len(seed) - window + 1)}
    copied = {}
    for (lang, aid), a in articles.items():
        if lang != "zh":
            continue
        body = _cjk_only(a.body + "".join(s.title for s in a.sections))
        hits = {body[i : i + window] for i in range(len(body) - window + 1)} & grams
        if hits:
            copied[aid] = sorted(hits)[:3]
    assert not copied, f"zh articles repeat seed text: {copied}"
