"""Web server start-up: host/port/auth handling shared by `app.py` and `gpu-advisor serve`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7860


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", DEFAULT_HOST))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", DEFAULT_PORT)))


def build_app():
    """The Gradio app (imported lazily: gradio is slow to import)."""
    import gradio as gr

    from knowledge import load_catalog

    catalog = load_catalog()
    rows = [[g.name, g.vendor, g.tier.value, g.memory_gb, g.bandwidth_gbs, g.throughput.bf16 or g.throughput.fp16,
             g.throughput.fp64, g.tdp_w] for g in catalog.gpus]
    with gr.Blocks(title="GPU Advisor · 算力GPU选购顾问") as demo:
        gr.Markdown("# GPU Advisor · 算力GPU选购顾问")
        gr.Dataframe(
            headers=["GPU", "Vendor", "Tier", "Memory GB", "GB/s", "BF16/FP16 TFLOPS (dense)", "FP64 TFLOPS", "W"],
            value=rows,
        )
    return demo


def serve(host: str, port: int) -> int:
    demo = build_app()
    if host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(f"warning: serving on {host} — reachable from other machines\n")
    demo.launch(server_name=host, server_port=port, share=False)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="app.py", description="Start the GPU Advisor web UI.")
    add_serve_arguments(parser)
    args = parser.parse_args(argv)
    return serve(args.host, args.port)
