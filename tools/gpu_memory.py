"""How much of a GPU's advertised memory an inference engine actually sees.

Vendors label memory in "GB", but the chips are binary-sized: an "80 GB" H100 carries 80 GiB
of HBM, a "24 GB" RTX 4090 24 GiB of GDDR6X. The driver and firmware keep roughly 0.5 GiB,
so engines report about ``N GiB − 0.5 GiB`` as total memory (vLLM logs 39.50 GiB on an
A100-40GB and 79.22 GiB on an H100-80GB; a 24 GB card shows 23.58 GiB).

GDDR boards with ECC switched on store the check bits in-line and lose 1/16 of capacity:
datacenter GDDR parts (A10, A40, L4, L40S) ship with ECC on, which is why a 48 GB L40S shows
46,068 MiB in nvidia-smi. HBM keeps ECC in side-band bits and loses nothing.
"""

from __future__ import annotations

from knowledge.schema import GPU, Tier

GiB = 2**30
DRIVER_RESERVED_BYTES = GiB // 2


def inline_ecc_on(gpu: GPU) -> bool:
    """True for GDDR datacenter boards, which ship with in-line ECC enabled (1/16 of memory)."""
    return bool(gpu.ecc) and gpu.memory_type.upper().startswith("GDDR") and gpu.tier == Tier.datacenter


def card_visible_bytes(memory_gb: float) -> int:
    """Bytes an engine sees on a card sold as ``memory_gb`` GB ('a 32 GB GPU'): vendors' GB of GDDR/HBM are GiB,
    minus the driver reserve. No in-line ECC assumed (consumer and most workstation cards run without it)."""
    return int(memory_gb * GiB - DRIVER_RESERVED_BYTES)


def engine_visible_bytes(gpu: GPU) -> tuple[int, str]:
    """(bytes an engine reports as total, one-line explanation)."""
    if gpu.gpu_assignable_gb is not None:  # unified memory: the OS and page cache keep part of the pool
        visible = int(gpu.gpu_assignable_gb * GiB - DRIVER_RESERVED_BYTES)
        return visible, (f"{gpu.name}: {gpu.memory_gb:g} GB of unified memory shared with the CPU and OS; about "
                         f"{gpu.gpu_assignable_gb:g} GiB can be given to the GPU, minus ~0.5 GiB driver reserve = "
                         f"{visible / GiB:.2f} GiB seen by the engine")
    physical = gpu.memory_gb * GiB
    note = f"{gpu.name}: '{gpu.memory_gb:g} GB' = {gpu.memory_gb:g} GiB physical"
    if inline_ecc_on(gpu):
        physical *= 15 / 16
        note += ", ECC on (GDDR in-line ECC keeps 1/16)"
    visible = int(physical - DRIVER_RESERVED_BYTES)
    note += f", minus ~0.5 GiB driver reserve = {visible / GiB:.2f} GiB seen by the engine"
    return visible, note
