"""CPU platform catalog: lane and memory-channel figures against the cited vendor numbers."""

from __future__ import annotations

import pytest

from knowledge import UnknownNameError, load_catalog
from knowledge.catalog_text import platform_notes
from knowledge.resolve import variants
from knowledge.schema import Platform

CATALOG = load_catalog()
PLATFORMS = CATALOG.platforms


@pytest.mark.parametrize(
    ("query", "lanes", "gen", "channels", "sockets"),
    [
        # ark.intel.com i9-14900K / 13900K: 20 lanes "Up to 1x16+4, 2x8+4", PCIe 5.0 and 4.0, 2 channels
        ("14900K", 20, 5, 2, 1),
        # ark.intel.com Core Ultra 9 285K: 24 lanes (20 Gen5 + 4 Gen4), 2 channels DDR5-6400
        ("285K", 24, 5, 2, 1),
        # amd.com Ryzen 9 7950X / 9950X: 28 Gen5 lanes on the I/O die, 24 usable + 4 to the chipset
        ("7950X", 24, 5, 2, 1),
        ("9950X", 24, 5, 2, 1),
        # amd.com TR 7000 on TRX50: 48 Gen5 + 32 Gen4 CPU lanes, quad-channel DDR5
        ("7980X", 80, 5, 4, 1),
        # amd.com TR PRO 7995WX / 9995WX on WRX90: 128 PCIe 5.0 lanes, 8 channels
        ("TR PRO 7995WX", 128, 5, 8, 1),
        ("9995WX", 128, 5, 8, 1),
        # ark.intel.com w7-2495X: 64 lanes, 4 channels; w9-3495X: 112 lanes, 8 channels
        ("w7-2495X", 64, 5, 4, 1),
        ("w9-3495X", 112, 5, 8, 1),
        # amd.com EPYC 9654: "PCIe 5.0 x128", 12 channels DDR5-4800
        ("EPYC 9654", 128, 5, 12, 1),
        ("EPYC 9965", 128, 5, 12, 1),
        # 2P SP5: 128 lanes with four xGMI links, 160 with three (the GPU-server layout assumed)
        ("dual EPYC 9654", 160, 5, 12, 2),
        # ark.intel.com Xeon Platinum 8480+ / 8490H: 80 PCIe 5.0 lanes per socket, 8 channels
        ("8490H", 160, 5, 8, 2),
        ("8592+", 160, 5, 8, 2),
        # Xeon 6900P: 96 lanes per socket, 12 channels; 6700P: 88 per socket, 8 channels
        ("6980P", 192, 5, 12, 2),
        ("6787P", 176, 5, 8, 2),
        # Ampere Altra: 128 PCIe 4.0 lanes, 8 channels DDR4-3200
        ("Altra Max", 128, 4, 8, 1),
        # Hi1620 / Kunpeng 920: 40 PCIe 4.0 lanes and 8 DDR4 channels per socket; 2-socket TaiShan 200
        ("鲲鹏920", 80, 4, 8, 2),
        # Hygon C86-7490: 12-channel DDR5-4800 on an SP5-type package
        ("海光7490", 128, 5, 12, 1),
        # Phytium S2500: 8-channel DDR4-3200, PCIe 3.0
        ("飞腾S2500", 68, 3, 8, 2),
    ],
)
def test_lanes_and_channels(query: str, lanes: int, gen: int, channels: int, sockets: int) -> None:
    p = CATALOG.platform(query)
    assert (p.cpu_pcie_lanes, p.pcie_gen, p.memory_channels, p.sockets) == (lanes, gen, channels, sockets)


@pytest.mark.parametrize(
    ("query", "cores", "power_w"),
    [
        ("14900K", 24, 253),  # ark: 8P + 16E, maximum turbo power 253 W
        ("285K", 24, 250),  # ark: 8P + 16E, maximum turbo power 250 W
        ("9950X", 16, 230),  # amd.com: 170 W TDP -> 230 W PPT
        ("EPYC 9654", 128, 360),  # 9654 96 cores / 9754 128 cores at 360 W default TDP
        ("8490H", 60, 350),  # ark: 60 cores, 350 W
        ("w9-3595X", 60, 385),
        ("鲲鹏920", 64, 180),  # wikichip 920-6426: 64 cores, 180 W
    ],
)
def test_cores_and_power(query: str, cores: int, power_w: float) -> None:
    p = CATALOG.platform(query)
    assert (p.max_cores, p.typical_cpu_power_w) == (cores, power_w)


def test_catalog_has_required_platforms() -> None:
    assert len(PLATFORMS) >= 12
    for name in ["14900K", "285K", "7950X", "9950X", "TRX50", "WRX90", "Xeon W-2500", "Xeon W-3500",
                 "EPYC 9004", "EPYC 9005", "Sapphire Rapids", "Emerald Rapids", "Xeon 6900P", "Xeon 6700P",
                 "Ampere Altra", "海光7490", "鲲鹏920", "Phytium S2500"]:
        assert CATALOG.platform(name) is not None


def test_desktop_platforms_cannot_feed_two_gpus_at_x16() -> None:
    # hardware_rules.md: desktop CPUs have ~16-24 GPU lanes, so two GPUs run x8/x8.
    desktops = [p for p in PLATFORMS if p.segment == "desktop"]
    assert len(desktops) >= 4
    for p in desktops:
        assert p.cpu_pcie_lanes <= 24 and p.gpu_slot_lanes == 16 and p.memory_channels == 2, p.id


def test_four_gpus_at_x16_need_workstation_or_server() -> None:
    # hardware_rules.md: 4 GPUs at x16 need Threadripper PRO, Xeon W or EPYC/Xeon SP.
    for p in PLATFORMS:
        if p.gpu_slot_lanes >= 64:
            assert p.segment in {"hedt", "workstation", "server"}, p.id
    for name in ["TR PRO 7995WX", "w9-3595X", "EPYC 9654", "8490H"]:
        assert CATALOG.platform(name).gpu_slot_lanes >= 64


def test_two_socket_entries_at_least_double_a_socket() -> None:
    one, two = CATALOG.platform("EPYC 9654"), CATALOG.platform("dual EPYC 9654")
    assert two.sockets == 2 and one.sockets == 1
    assert two.cpu_pcie_lanes >= one.cpu_pcie_lanes and two.max_memory_gb == 2 * one.max_memory_gb
    for p in PLATFORMS:
        if p.sockets == 2 and p.vendor == "Intel":
            # Intel sockets are joined by UPI: every per-socket lane stays usable.
            assert p.cpu_pcie_lanes % 2 == 0 and p.cpu_pcie_lanes // 2 in {80, 88, 96}, p.id


@pytest.mark.parametrize("platform", PLATFORMS, ids=lambda p: p.id)
def test_platform_resolves_by_id_name_and_aliases(platform: Platform) -> None:
    assert platform.aliases
    for key in (platform.id, platform.name, *platform.aliases):
        assert CATALOG.platform(key).id == platform.id, key


def test_platform_aliases_unique() -> None:
    assert CATALOG.platform_resolver.collisions() == {}
    owner: dict[str, str] = {}
    for p in PLATFORMS:
        for key in {k for n in (p.id, p.name, *p.aliases) for k in variants(n)}:
            assert owner.setdefault(key, p.id) == p.id, f"{key!r}: {owner[key]} and {p.id}"


@pytest.mark.parametrize("platform", PLATFORMS, ids=lambda p: p.id)
def test_platform_provenance(platform: Platform) -> None:
    notes = platform_notes(platform.id, "en")
    assert platform.sources and notes
    assert all(s.startswith(("https://", "http://")) for s in platform.sources), platform.sources
    assert platform.domestic == (platform.vendor in {"Huawei", "Hygon", "Phytium"})
    if platform.confidence == "L":
        assert "source" in notes.lower() or "report" in notes.lower()
    # DDR generation in the memory type matches the PCIe generation era
    if platform.pcie_gen >= 5:
        assert "DDR5" in platform.memory_type, platform.id


def test_unknown_platform_suggests() -> None:
    with pytest.raises(UnknownNameError) as err:
        CATALOG.platform("EPYC 9645")
    assert "did you mean" in str(err.value) and err.value.suggestions
