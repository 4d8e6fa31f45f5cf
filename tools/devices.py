"""Packages that software splits: a dual-die Ascend 910C shows as two 64 GB NPUs (an Atlas 800 A3 runs as
16 × 64 GB with tensor parallel 16), an MI250X as two 64 GB GCDs, an Atlas 300I Duo as two 48 GB 310P chips.
Memory is sized per device, so a shard between one device's memory and the package's does not fit."""

from __future__ import annotations

from knowledge.schema import GPU


def device_view(gpu: GPU) -> GPU:
    """One of the devices a package of ``gpu.devices`` shows: its share of memory, bandwidth, compute and power."""
    d = gpu.devices
    if d == 1:
        return gpu
    share = {k: v / d for k, v in gpu.throughput.model_dump(exclude_none=True).items()}
    sparse = ({k: v / d for k, v in gpu.sparse_throughput.model_dump(exclude_none=True).items()}
              if gpu.sparse_throughput else None)
    return gpu.model_copy(update={
        "memory_gb": gpu.memory_gb / d,
        "bandwidth_gbs": gpu.bandwidth_gbs / d, "tdp_w": gpu.tdp_w / d, "devices": 1,
        "throughput": type(gpu.throughput).model_validate(share),
        "sparse_throughput": type(gpu.throughput).model_validate(sparse) if sparse else None})
