"""Hugging Face Transformers (and anything generic): weights + the exact cache + the prefill activations,
plus the CUDA context; several GPUs split the layers (``device_map="auto"``), and weights that do not fit are
streamed from system RAM over PCIe."""

from __future__ import annotations

from tools.engines.base import InferenceEngine


class Transformers(InferenceEngine):
    name = "transformers"
    label = "transformers"
