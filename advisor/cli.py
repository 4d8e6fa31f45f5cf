"""`gpu-advisor` command line: one module per subcommand, registered here."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from advisor.terminal import PrintableStream

# Each module defines `register(subparsers)` adding its subcommand(s); the parser
# it adds sets `func(args) -> int`. Keep this list in the order shown by --help.
COMMAND_MODULES = [
    "advisor.commands.catalog",
    "advisor.commands.size",
    "advisor.commands.perf",
    "advisor.commands.check",
    "advisor.commands.recommend",
    "advisor.commands.ask",
    "advisor.commands.serve",
    "advisor.commands.knowledge",
    "advisor.commands.detect",
]

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-advisor",
        description="算力GPU选购顾问 — choose compute GPUs and plan AI servers, offline.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PrintableStream(out), PrintableStream(err)  # type: ignore[assignment]
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    finally:
        sys.stdout, sys.stderr = out, err


if __name__ == "__main__":
    sys.exit(main())
