"""`gpu-advisor ask` (one turn, session kept in a file) and `gpu-advisor chat` (interactive, streaming)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from advisor.commands.common import add_lang_flag, domain_errors, fail, print_json
from knowledge.messages import msg


def register(sub: Any) -> None:
    p = sub.add_parser("ask", help="ask the advisor one question (conversation kept with --session)")
    p.add_argument("message", help="your message; '-' reads it from standard input")
    p.add_argument("--session", metavar="FILE", help="load the conversation from FILE and save it back")
    p.add_argument("--json", action="store_true", help="print reply, lang, question, tool_calls, citations as JSON")
    p.add_argument("--dense", action="store_true",
                   help="use the fused vector + keyword knowledge search (≈2 s slower to start; default for one "
                        "question: keyword search, unless the vector index is new or a chroma server is set; "
                        "also ADVISOR_ASK_DENSE=1)")
    _common(p)
    p.set_defaults(func=_ask)

    c = sub.add_parser("chat", help="interactive chat in the terminal (streaming)")
    c.add_argument("--session", metavar="FILE", help="resume from FILE and save after every turn")
    _common(c)
    c.set_defaults(func=_chat)


def _common(p: argparse.ArgumentParser) -> None:
    add_lang_flag(p)
    p.add_argument("--llm", choices=["none", "llama", "openai"], default=None,
                   help="LLM backend (default: ADVISOR_LLM, else none)")
    p.add_argument("--verbose", action="store_true",
                   help="full derivation in every reply: each memory term explained (also ADVISOR_DETAILED=1)")


def _advisor(args: argparse.Namespace) -> Any:
    """The engine from the environment; a bad ``ADVISOR_*`` value is a ValueError naming the variable."""
    from advisor.engine import Advisor
    from advisor.settings import Settings

    try:
        settings = Settings()
    except ValidationError as exc:
        problems = "; ".join(f"{_env_name(e)}{_shown(e)}: {e.get('msg', 'invalid')}" for e in exc.errors()[:3])
        raise ValueError(f"invalid setting in the environment — {problems}") from None
    overrides: dict[str, Any] = {"llm": args.llm} if args.llm else {}
    if getattr(args, "verbose", False):
        overrides["detailed"] = True
    return Advisor.from_settings(settings, **overrides)


def _env_name(err: Any) -> str:
    name = "_".join(str(x) for x in err.get("loc", ())).upper() or "?"
    return name if name.startswith(("ADVISOR_", "OPENAI_")) else f"ADVISOR_{name}"


def _shown(err: Any) -> str:
    """The rejected value, short — never for a key or secret."""
    if any("key" in str(x).lower() for x in err.get("loc", ())):
        return ""
    return f"={str(err.get('input'))[:40]!r}"


def _load(path: str | None) -> Any:
    """The saved session, a new one when FILE does not exist yet; SessionError for an unusable file."""
    from advisor.session import Session

    if path and Path(path).exists():
        return Session.load(path)
    return Session()


@domain_errors
def _ask(args: argparse.Namespace) -> int:
    from advisor.session import SessionError, session_lock

    message = sys.stdin.read() if args.message == "-" else args.message
    with session_lock(args.session) if args.session else contextlib.nullcontext():
        try:
            session = _load(args.session)
        except SessionError as exc:
            return fail(str(exc))
        adv = _advisor(args)
        if not (args.dense or adv.settings.ask_dense):
            # one question per process: opening the vector store would cost more than the whole turn
            from knowledge.search import prefer_quick_start

            prefer_quick_start()
        reply = adv.reply(message, session, lang=args.lang)
        if args.json:  # the answer first: a session that cannot be saved must not cost the user the answer
            print_json(reply.to_json())
        else:
            for note in reply.notices:
                print(f"[{note}]")
            print(reply.text)
        if args.session:
            try:
                session.save(args.session)
            except OSError as exc:
                return fail(f"cannot save the session to {Path(args.session).name}: {exc.strerror or exc}")
    return 0


@domain_errors
def _chat(args: argparse.Namespace) -> int:
    from advisor.report import export_markdown
    from advisor.session import SessionError

    try:
        session = _load(args.session)
    except SessionError as exc:
        return fail(str(exc))
    adv = _advisor(args)
    out = sys.stdout
    print(f"({adv.describe()}; /export FILE, /reset, /quit)", file=out)
    if not session.history:
        print(adv.greeting(session, lang=args.lang).text, file=out)
    seen = _stamp(args.session)
    while True:
        try:
            line = input("\n> ")
        except (EOFError, KeyboardInterrupt):
            print(file=out)
            break
        cmd = line.strip()
        if cmd in ("/quit", "/exit", "/q"):
            break
        if cmd.startswith("/export"):
            target = cmd.removeprefix("/export").strip()
            report = export_markdown(session, args.lang or session.lang or "en")
            if target:
                Path(target).write_text(report, encoding="utf-8")
                print(f"(report written to {Path(target).name})", file=out)
            else:
                print(report, file=out)
            continue
        if cmd == "/reset":
            line = msg(session.lang or args.lang, "cli.start_over")
        try:
            session, seen = _locked_turn(adv, line, session, args, seen)
        except SessionError as exc:
            return fail(str(exc))
        except OSError as exc:
            return fail(f"cannot save the session to {Path(args.session).name}: {exc.strerror or exc}")
    return 0


def _stamp(path: str | None) -> tuple[int, int] | None:
    """When the session file last changed, and its size (None: no file yet)."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if st else None


def _locked_turn(adv: Any, line: str, session: Any, args: argparse.Namespace,
                 seen: tuple[int, int] | None) -> tuple[Any, tuple[int, int] | None]:
    """One turn under the session file's lock, as ``ask`` takes it: the file reloaded first when another process
    changed it since (its turns are kept, not overwritten), saved after. Returns the session and its stamp."""
    from advisor.session import Session, session_lock

    if not args.session:
        _stream_turn(adv, line, session, args)
        return session, None
    with session_lock(args.session):
        if _stamp(args.session) not in (None, seen):
            session = Session.load(args.session)
        _stream_turn(adv, line, session, args)
        session.save(args.session)
        return session, _stamp(args.session)


def _stream_turn(adv: Any, line: str, session: Any, args: argparse.Namespace) -> None:
    """Run one turn, printing its tool steps, text and notices as they come."""
    from advisor.engine import FinalReply, Notice, TextDelta, ToolFinished, ToolStarted

    out = sys.stdout
    shown = ""
    for event in adv.stream(line, session, lang=args.lang):
        if isinstance(event, ToolStarted):
            print(f"  🔧 {event.title} …", file=out, flush=True)
        elif isinstance(event, ToolFinished) and not event.ok:
            print(f"  ✗ {event.title}: {event.error}", file=out, flush=True)
        elif isinstance(event, TextDelta):
            if event.replace and shown:
                print("\n  (the draft above was replaced by the computed answer)\n", file=out)
                shown = ""
            out.write(event.text)
            out.flush()
            shown += event.text
        elif isinstance(event, Notice):
            print(f"\n  [{event.text}]", file=out)
        elif isinstance(event, FinalReply) and not shown.strip():
            print(event.reply.text, file=out)
    print(file=out)
