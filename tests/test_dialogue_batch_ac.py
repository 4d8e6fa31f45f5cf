"""The classes blind batch ac found (bench/blind/batch-ac), each fixed by mechanism: a question asked after a
statement, a card added by its ordinal, a card that joins an open comparison, an amperage never read inside a
product name, the money of the writer everywhere in a reply, and a KV cache in FP8 for many users."""

from __future__ import annotations

import pytest
from fakes.script import ok_calls, talk

from advisor.engine import Advisor
from advisor.nlu import parse
from advisor.nlu.kinds import is_question
from advisor.nlu.rules import asks_in


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize("text", [
    "my psu is 850W and the mobo has one x16 slot and one x4 (chipset) slot. will that work for two of them",
    "I have a 1000W PSU, and will it hold both cards",
])
def test_a_question_inverted_after_a_statement_is_a_question(text: str) -> None:
    assert is_question(text)


def test_a_statement_with_will_inside_is_not_a_question() -> None:
    assert not is_question("we will buy two cards next month and the budget is fixed")


def test_the_psu_question_after_a_comparison_checks_the_build(adv: Advisor) -> None:
    """2 × 350 W of RTX 3090 alone is 700 W; with the CPU and platform it is past an 850 W supply."""
    _, (_, r) = talk(adv, "got ~$1800. llama 3.3 70b locally for coding. used 3090s or a single 5090?? which one",
                     "my psu is 850W and the mobo has one x16 slot and one x4 (chipset) slot. will that work for two "
                     "of them")
    assert r.mode == "build"
    (check,) = ok_calls(r, "check_build")
    assert check.arguments["gpus"] == [{"gpu": "rtx-3090", "count": 2}] and check.arguments["psu_w"] == 850
    assert "850 W" in r.text.splitlines()[0]


def test_a_third_card_by_its_ordinal_makes_three(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "I run llama 3.3 70b q4 on 2x 3090.",
                     "what if i add a third 3090 later, could i run something bigger or just more context")
    assert {c.arguments["gpus"] for c in ok_calls(r, "size_inference") if c.arguments.get("gpu") == "rtx-3090"} \
        >= {3}


def test_a_card_asked_about_instead_joins_the_open_comparison(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "For VASP and CP2K (heavy FP64): RTX 5090s or H100 or H200? Budget about $250k.",
                     "What about AMD MI300A or MI210 instead? Heard they're much better at FP64 per dollar")
    assert r.mode == "compare"
    first = r.text.splitlines()[0]
    assert "Instinct MI210" in first and "H100 SXM 80GB" in first
    # H100 and H200 both run VASP's CUDA build: the verdict names the fastest of them, not 'only' one
    assert "Of those that run VASP's GPU build, H200 SXM 141GB is fastest" in r.text
    assert "only H200" not in r.text


@pytest.mark.parametrize("text, topic", [
    ("What about AMD MI300A or MI210 instead?", None),
    ("will 4x 4090 trip a 15A circuit?", "wall"),
    ("家里插座16A够吗", "wall"),
])
def test_an_amperage_is_never_read_inside_a_product_name(text: str, topic: str | None) -> None:
    assert parse(text).build_topic == topic


@pytest.mark.parametrize("text", ["what would the box look like and how much up front", "整机前期投入多少钱"])
def test_an_up_front_cost_asks_the_whole_build(text: str) -> None:
    assert "build_cost" in asks_in(text)


def test_an_english_buyer_of_domestic_cards_sees_one_currency(adv: Advisor) -> None:
    _, (r,) = talk(adv, "Tender for a state-owned enterprise, domestic accelerators only (no NVIDIA). Serve "
                        "Qwen2.5-72B for ~100 internal users. Which cards qualify and how many?")
    head = "\n".join(r.text.splitlines()[:12])
    assert "$" in head and "¥" not in head


def test_many_users_on_a_budget_get_the_fp8_kv_cache_route(adv: Advisor) -> None:
    """50 users × 8,192 tokens of Qwen3-32B KV (64 layers × 8 heads × 128 × 2 × 2 B = 262 kB a token) is 107 GB at
    16 bits and half that in FP8; the FP8-cache route is sized and recommended beside INT4."""
    _, (r,) = talk(adv, "我们是30人的小公司，内部知识库，用qwen3-32b，高峰期同时50个人问，预算10万以内，买什么卡？")
    routes = {c.arguments.get("kv_dtype") for c in r.tool_calls if c.name in ("recommend", "size_inference")
              and c.arguments.get("precision") == "int4"}
    assert "fp8" in routes
    assert "INT4 权重 + FP8 KV 缓存" in r.text


def test_an_sxm_server_is_a_node_of_eight(adv: Advisor) -> None:
    """An H100 SXM server is an HGX board of 8 (DGX H100: 10.2 kW); none fits an 8 kW rack."""
    _, (r,) = talk(adv, "Our server room gives us 2 racks at 8kW each. We are looking at H100 SXM servers. How many "
                        "of the H100 nodes fit?")
    (cost,) = ok_calls(r, "machine_cost")
    assert cost.arguments["count"] == 8 and cost.result["nodes_per_rack"] == 0
    assert "8 kW" in r.text.splitlines()[0]


def test_the_systems_said_in_the_plural_keep_their_count_and_their_makers_power(adv: Advisor) -> None:
    """4 × DGX B200 at its stated 14.3 kW: 57.2 kW; × 3,412 BTU/hr per kW ÷ 12,000 = 16.3 tons of cooling."""
    _, (_, _, r) = talk(adv, "We're getting 4x DGX B200 next quarter. What's the power draw per box and total?",
                        "What if we went with GB200 NVL72 instead, same rack?",
                        "ok sticking with the DGX B200s, how many tons of cooling is that and what's the yearly "
                        "power bill at $0.11/kWh if they run at ~70% load")
    costs = ok_calls(r, "machine_cost")
    assert costs and all(c.arguments["nodes"] == 4 and c.arguments["node_power_w"] == 14_300 for c in costs)
    assert "57.2 kW" in r.text and "16.3 tons" in r.text


def test_the_other_memory_version_of_the_card_under_discussion(adv: Advisor) -> None:
    _, (_, r) = talk(adv, "Thinking about a Mac Studio M3 Ultra 512GB to run DeepSeek R1 671B at home. Realistic?",
                     "what about the 256GB version instead, could I go with something like qwen3 235b")
    assert "Mac Studio M3 Ultra 256GB" in r.text.splitlines()[0]


@pytest.mark.parametrize("text, kind", [
    ("how long would it take to process a 50 page PDF (~30k tokens) as a prompt on that 256gb machine", None),
    ("export this plan as a pdf", "export"),
])
def test_a_pdf_read_as_a_prompt_is_no_export(text: str, kind: str | None) -> None:
    p = parse(text)
    assert (p.kind == "export") == (kind == "export")
    if kind is None:  # the ~30k tokens the buyer says outweigh 50 pages × 650 = 32,500 estimated
        assert "ttft" in p.asks and p.prompt_tokens == 30_000
