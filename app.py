"""Start the GPU Advisor web UI: `python app.py [--host H] [--port P]` (127.0.0.1:7860 by default)."""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from advisor.serve import main

if __name__ == "__main__":
    raise SystemExit(main())
