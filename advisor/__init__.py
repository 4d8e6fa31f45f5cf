"""GPU Advisor: conversation, LLM backends, web UI and CLI.

``from advisor import Advisor`` — the conversation engine (imported lazily, so CLI commands that
do not chat stay fast to start).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Advisor", "Reply", "Session", "Settings"]


def __getattr__(name: str) -> Any:
    if name in ("Advisor", "Reply"):
        from advisor import engine

        return getattr(engine, name)
    if name == "Session":
        from advisor.session import Session

        return Session
    if name == "Settings":
        from advisor.settings import Settings

        return Settings
    raise AttributeError(f"module 'advisor' has no attribute {name!r}")
