"""`gpu-advisor serve`: start the web UI."""

from __future__ import annotations

import argparse
from typing import Any

from advisor.serve import add_serve_arguments, serve


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="start the web UI (127.0.0.1:7860 by default)")
    add_serve_arguments(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return serve(args.host, args.port, args.auth)
