"""knowledge.lexical: tokens that keep names and numbers, Chinese segmentation, BM25, typos, names."""

from __future__ import annotations

import pytest

from knowledge.lexical import LexicalIndex, NameMatcher, name_key, tokenize


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("Is the L40S passive?", "l40s"),
        ("昇腾910B的算力", "910b"),
        ("NVLink 900GB/s", "900gb/s"),
        ("NVLink at 900 GB/s", "900gb/s"),  # number + unit joined
        ("GeForce RTX 4090", "rtx4090"),  # name + model number joined
        ("rtx4090", "rtx"),  # and split the other way
        ("H100-SXM", "h100"),
        ("12V-2x6 connector", "12v-2x6"),
        ("3,350 GB/s", "3350"),  # thousands separator dropped
        ("ＲＴＸ　４０９０", "4090"),  # full-width folded (NFKC)
        ("four GPUs", "gpu"),  # plural folded
    ],
)
def test_tokens_keep_names_and_numbers(text: str, token: str) -> None:
    assert token in tokenize(text)


def test_chinese_is_segmented_into_words_without_stopwords() -> None:
    tokens = tokenize("H20的显存带宽是多少")
    assert "h20" in tokens and "显存" in tokens and "带宽" in tokens
    assert "的" not in tokens and "是" not in tokens
    assert "摩尔线程" in tokenize("摩尔线程的软件栈")  # domain word kept whole


def test_stopwords_and_single_letters_are_dropped() -> None:
    assert tokenize("what is the MI325X's bandwidth") == ["mi325x", "bandwidth"]
    assert tokenize("   ") == []


DOCS = [
    ("l40s", "NVIDIA L40S", "48 GB GDDR6, 864 GB/s, passive datacenter card for inference."),
    ("l40", "NVIDIA L40", "48 GB GDDR6, 864 GB/s, the graphics sibling of the L40S."),
    ("l4", "NVIDIA L4", "24 GB GDDR6, 300 GB/s, low-profile 72 W inference card."),
    ("ascend", "昇腾 910B", "华为昇腾 910B，64 GB HBM2e，显存带宽 1600 GB/s，使用 CANN 软件栈。"),
    ("nvlink", "NVLink", "NVLink 4 gives each H100 SXM 900 GB/s of bidirectional bandwidth."),
    ("psu", "Power supply sizing", "Size the power supply with 25 % headroom over the total draw."),
]


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    return LexicalIndex(DOCS)


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("L40S", "l40s"),
        ("L4 inference card", "l4"),
        ("910B 带宽", "ascend"),
        ("900GB/s", "nvlink"),
        ("900 GB/s link", "nvlink"),
        ("power supply", "psu"),
    ],
)
def test_exact_name_or_number_ranks_its_document_first(index: LexicalIndex, query: str, first: str) -> None:
    assert index.search(query)[0][0] == first


def test_misspelt_words_are_corrected_to_the_vocabulary(index: LexicalIndex) -> None:
    assert index.correct("bandwith") == "bandwidth"  # deletion
    assert index.correct("suply") == "supply"  # deletion
    assert index.correct("headroon") == "headroom"  # substitution
    assert index.correct("pwoer") == "power"  # transposition
    assert index.correct("zzzzzz") is None
    assert index.search("powr suply")[0][0] == "psu"


def test_allowed_restricts_and_unknown_words_return_nothing(index: LexicalIndex) -> None:
    assert [d for d, _ in index.search("GDDR6", allowed=["l4"])] == ["l4"]
    assert index.search("qqqq xxxx") == []


def test_name_matcher_finds_names_at_token_boundaries() -> None:
    matcher = NameMatcher(
        {
            "h20": ["h20", "H20 96GB", "英伟达H20"],
            "h200": ["h200-sxm", "H200"],
            "llama": ["Llama-3.1-8B", "llama3.1:8b"],
        }
    )
    assert [d for d, _ in matcher.match("H20 显存多大")] == ["h20"]
    assert [d for d, _ in matcher.match("英伟达H20显存")] == ["h20"]
    assert [d for d, _ in matcher.match("what is the H200 bandwidth")] == ["h200"]
    assert [d for d, _ in matcher.match("Llama 3.1 8B on a 4090")] == ["llama"]
    assert matcher.match("nothing named here") == []
    assert name_key("GeForce RTX-4090") == "geforcertx4090"
