"""Whether a model request fits the backend's context window, and how many reply tokens it leaves.

A llama.cpp server started at a 2,048-token context cannot hold a tool path's results (thousands of tokens);
sent anyway, the request streams nothing useful and costs the turn its time. So every request is measured before it
is sent, the reply limit is cut to the room left, and a prompt that leaves no room for two sentences is not sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.backends import Backend

MIN_REPLY_TOKENS = 120  # two sentences of explanation, either language
SAFETY_TOKENS = 16  # the estimate's slack beyond the template markers already counted


class ContextTooSmall(Exception):
    """The smallest prompt this turn can send leaves no room for a reply in the backend's context."""

    def __init__(self, prompt_tokens: int, window: int):
        self.prompt_tokens = prompt_tokens
        self.window = window
        super().__init__(f"prompt of {prompt_tokens} tokens, context of {window}")

    @property
    def need(self) -> int:
        """Tokens the smallest useful request holds: the prompt and a two-sentence reply."""
        return self.prompt_tokens + MIN_REPLY_TOKENS


@dataclass(frozen=True)
class Room:
    """A request measured against the window: the prompt's tokens and the reply tokens left (None: no limit)."""

    prompt_tokens: int
    window: int | None
    reply_tokens: int | None

    @property
    def fits(self) -> bool:
        return self.reply_tokens is None or self.reply_tokens >= MIN_REPLY_TOKENS


def measure(backend: Backend, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
            max_tokens: int) -> Room:
    """``messages`` (and tool schemas) against ``backend``'s window; the reply limit is ``max_tokens`` or what is
    left, the smaller."""
    window = backend.context_window()
    need = backend.count_tokens(messages, tools)
    if window is None:
        return Room(need, None, None)
    return Room(need, window, min(max_tokens, window - need - SAFETY_TOKENS))


def require(room: Room) -> int | None:
    """The reply limit to send, or ``ContextTooSmall`` when the prompt leaves no room."""
    if not room.fits:
        assert room.window is not None
        raise ContextTooSmall(room.prompt_tokens, room.window)
    return room.reply_tokens
