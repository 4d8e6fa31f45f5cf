"""Whether a card can be bought where the buyer is, said from the market table (knowledge.markets): the status,
the rule behind it and, for a status computed from the export tests, the card's own figures that meet them."""

from __future__ import annotations

from knowledge import load_catalog
from knowledge.markets import OPERAND_BITS, Availability, Region, availability, markets_as_of
from knowledge.messages import msg


def export_figures(where: Availability, lang: str) -> str:
    """The card's own figures that meet the export test behind a computed 'no' (TPP, density, clause)."""
    fig = where.figures
    if where.clause is None or fig is None or fig.precision is None:
        return ""
    density = msg(lang, "spec.china_density", density=f"{fig.density:g}", die=f"{fig.die_mm2:g}") \
        if fig.density is not None and fig.die_mm2 is not None else ""
    return msg(lang, "spec.china_figures", tpp=f"{fig.tpp:,.0f}", precision=fig.precision.upper(),
               bits=OPERAND_BITS[fig.precision], density=density, clause=where.clause, test=_test(where, lang))


def _test(where: Availability, lang: str) -> str:
    """The export test the figures meet, in words with its thresholds."""
    c = where.control
    if c is None:
        return ""
    tpp_min = f"{c.tpp_min:,.0f}"
    if c.interconnect_min_gbs is not None:
        return msg(lang, "spec.china_test_link", tpp_min=tpp_min, link=f"{c.interconnect_min_gbs:g}")
    if c.density_min is not None:
        return msg(lang, "spec.china_test_density", tpp_min=tpp_min, density_min=f"{c.density_min:g}")
    return msg(lang, "spec.china_test_tpp", tpp_min=tpp_min)


def market_verdict(where: Availability, name: str, region: Region, lang: str) -> str:
    """One line from a card's market status (as ``gpu_info`` returns it): '**L4 24GB cannot be bought new in
    mainland China**: <rule> … By its own figures: TPP …'."""
    rule = msg(lang, f"market.rule.{where.rule.id}") if where.rule else ""
    line = msg(lang, f"asks.market_{where.status}", gpu=name, region=msg(lang, f"market.region.{region}"), rule=rule,
               as_of=markets_as_of().isoformat(), figures=export_figures(where, lang))
    return line + china_version(where, lang) if region == "cn" else line


def china_version(where: Availability, lang: str) -> str:
    """' Its China version, RTX 5090 D v2, is sold there.' for a card not sold in China whose China variant is;
    '' otherwise."""
    if where.status != "unavailable":
        return ""
    sold = [g.name for g in load_catalog().gpus if g.china_version_of == where.gpu_id
            and availability(g.id, "cn").status == "available"]
    return msg(lang, "asks.market_china_version", variant=sold[0]) if sold else ""
