"""`gpu-advisor search` and `gpu-advisor index`: query and (re)build the knowledge base."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from advisor.commands.common import domain_errors, print_json


def register(sub: Any) -> None:
    p = sub.add_parser("search", help="search the knowledge base (guidance, GPU and model cards, rules)")
    p.add_argument("query", nargs="+", help="question or keywords, in Chinese or English")
    p.add_argument("--k", type=int, default=5, help="number of passages (default 5, at most 50)")
    p.add_argument(
        "--lang",
        choices=["zh", "en"],
        default=None,
        help="only passages in this language (default: either, preferring the query's)",
    )
    p.add_argument("--json", action="store_true", help='print {"results": [...]} as JSON')
    p.set_defaults(func=_search)

    p = sub.add_parser("index", help="build the knowledge-base index, or check that it is up to date")
    p.add_argument("--rebuild", action="store_true", help="rebuild even when the corpus is unchanged")
    p.add_argument("--json", action="store_true", help="print the build report as JSON")
    p.set_defaults(func=_index)


def _snippet(text: str, width: int = 100, lines: int = 3) -> str:
    flat = " ".join(text.split())
    return textwrap.indent("\n".join(textwrap.wrap(flat, width=width)[:lines]), "    ")


@domain_errors
def _search(args: argparse.Namespace) -> int:
    from knowledge import search

    results = search(" ".join(args.query), k=args.k, lang=args.lang)
    if args.json:
        print_json(results.to_json())
        return 0
    for note in results.notices:
        print(f"note: {note}")
    if not results:
        print(results.reason or "no results")
        return 0
    for n, p in enumerate(results, start=1):
        print(f"{n}. [{p.score:.2f}] {p.title}  ({p.id})")
        print(_snippet(p.text))
        print(f"    source: {p.source}")
    return 0


@domain_errors
def _index(args: argparse.Namespace) -> int:
    from knowledge.index import KnowledgeIndex

    idx = KnowledgeIndex()
    report = idx.open(rebuild=args.rebuild)
    if args.json:
        print_json(report)
        return 0 if report.action != "lexical-only" else 1
    what = {
        "built": "built the index",
        "rebuilt": "rebuilt the index",
        "up-to-date": "index is up to date; nothing to do",
        "lexical-only": "vector store unavailable; only the lexical index is ready",
    }[report.action]
    print(f"{what} ({report.reason})")
    print(f"  passages: {report.passages}, vectors: {report.vectors}, {report.seconds:.1f} s")
    print(f"  location: {report.location}")
    print(f"  corpus hash: {report.corpus_hash[:16]}")
    return 0 if report.action != "lexical-only" else 1
