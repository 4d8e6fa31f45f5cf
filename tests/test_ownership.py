"""machine_cost: price of cards and hosts, wall power, electricity over a horizon and nodes per rack,
checked against hand arithmetic and published system power."""

from __future__ import annotations

import math

import pytest

from advisor.toolspec import run_tool
from knowledge import load_catalog
from tools.ownership import MachineCostInput, machine_cost
from tools.pricing import CNY_PER_USD, HOST_COST_USD, gpu_price


def test_electricity_is_watts_times_hours_times_days_times_tariff() -> None:
    r = machine_cost(MachineCostInput(gpu="RTX 4090", count=2, hours_per_day=10, years=3, kwh_price=0.8,
                                      currency="CNY"))
    assert r.yearly_kwh == pytest.approx(r.total_wall_w / 1000 * 10 * 365, rel=1e-3)
    assert r.yearly_energy_cost == pytest.approx(r.yearly_kwh * 0.8, rel=1e-3)
    assert r.energy_cost == pytest.approx(r.yearly_energy_cost * 3, rel=1e-3)
    # two 450 W cards in a desktop: 900 W of boards, about 1.1–1.6 kW at the wall with CPU, board and PSU losses
    assert 1100 <= r.node_wall_w <= 1600


def test_price_is_cards_at_catalog_price_plus_one_host_per_node() -> None:
    unit_usd = gpu_price(load_catalog().gpu("H100")).usd
    r = machine_cost(MachineCostInput(gpu="H100", count=8, nodes=4, currency="USD"))
    assert unit_usd is not None
    assert r.host_price == pytest.approx(HOST_COST_USD["baseboard"] * 4)
    assert r.cards_price == pytest.approx(unit_usd * 32)
    assert r.total_price == pytest.approx(r.cards_price + r.host_price)
    in_cny = machine_cost(MachineCostInput(gpu="H100", count=8, nodes=4, currency="CNY"))
    assert in_cny.host_price == pytest.approx(r.host_price * CNY_PER_USD)


@pytest.mark.parametrize(("gpu", "published_w"), [("H100 SXM", 10_200), ("A100 SXM", 6_500)])
def test_an_eight_gpu_baseboard_node_draws_what_the_dgx_datasheet_gives(gpu: str, published_w: float) -> None:
    # NVIDIA DGX H100 / DGX A100 datasheets, maximum system power: 10.2 kW and 6.5 kW (the constant's own
    # leave-one-out error is ±11 %, so each is held to 12 %)
    r = machine_cost(MachineCostInput(gpu=gpu, count=8))
    assert r.node_wall_w == pytest.approx(published_w, rel=0.12)


def test_a_15_kw_rack_holds_one_hgx_h100_node() -> None:
    r = machine_cost(MachineCostInput(gpu="H100 SXM", count=8, nodes=4, rack_kw=15))
    assert r.nodes_per_rack == 1 and r.racks == 4


def test_nodes_per_rack_is_the_floor_of_rack_power_over_node_power() -> None:
    r = machine_cost(MachineCostInput(gpu="L20", count=8, nodes=10, rack_kw=15))
    assert r.nodes_per_rack == math.floor(15_000 / r.node_wall_w)
    assert r.racks == math.ceil(10 / r.nodes_per_rack)


def test_cards_only_when_the_host_is_owned() -> None:
    r = machine_cost(MachineCostInput(gpu="RTX 3090", count=2, include_host=False, currency="USD"))
    assert r.host_price == 0 and r.total_price == r.cards_price


def test_unknown_card_is_a_clear_message_with_suggestions() -> None:
    call = run_tool("machine_cost", {"gpu": "H300", "count": 2})
    assert call.result is None and call.error is not None
    assert "H300" in call.error and "H200" in call.error


def test_rent_vs_buy_uses_the_quoted_purchase_price() -> None:
    from tools.rent import RentVsBuyInput, rent_vs_buy

    # 8 cards rented at ¥9 per GPU-hour, 10 h a day, against a ¥200,000 server, over 36 months
    r = rent_vs_buy(RentVsBuyInput(gpu="RTX 4090", count=8, hours_per_day=10, months=36, currency="CNY",
                                   rental_usd_per_gpu_hour=9 / CNY_PER_USD, purchase_price=200_000, kwh_price=1.0))
    assert r.purchase == pytest.approx(200_000)
    assert r.rent_per_month == pytest.approx(9 * 8 * 10 * 365 / 12, rel=0.01)
    assert r.project_rent == pytest.approx(r.rent_per_month * 36, rel=0.001)
    assert r.project_buy == pytest.approx(200_000 + r.energy_per_month * 36, rel=0.001)
    assert r.cheaper == "buy"


@pytest.mark.parametrize("system", ["dgx-spark", "mac-studio-m3-ultra-512gb"])
def test_a_computer_sold_whole_is_its_own_machine(system: str) -> None:
    """A DGX Spark or a Mac Studio has no host to add and no chassis to pick: its price is the machine's (none when
    the catalog has none), and its draw is its own (both under 500 W by their makers' figures: 240 W for the Spark's
    power adapter, 480 W for the Mac Studio's supply)."""
    r = machine_cost(MachineCostInput(gpu=system, count=1, currency="USD"))
    price = gpu_price(load_catalog().gpu(system)).usd
    assert r.host_price == 0
    assert r.total_price == (pytest.approx(price) if price is not None else None)
    assert 0 < r.node_wall_w <= 500
