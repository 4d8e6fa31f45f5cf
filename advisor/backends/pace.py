"""How long a model may take for one reply, from how fast it answered the first time.

A fixed limit is either too short for a slow laptop or far too long for a fast server that has stalled.
So the first reply that streams enough text is timed once — prompt characters per second until its first
piece (prefill) and pieces per second after (decode; a streamed piece is about one token) — and every
later call gets a margin over what that speed predicts, never more than the configured limit.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

MARGIN = 3.0  # a reply may take this many times what the measured speed predicts
MIN_PIECES = 8  # fewer streamed pieces than this measure nothing


class Pace(BaseModel):
    """The speed measured on this backend's first long-enough reply (None until then)."""

    prompt_chars_per_s: float | None = Field(None, gt=0)
    pieces_per_s: float | None = Field(None, gt=0)

    @property
    def measured(self) -> bool:
        return self.prompt_chars_per_s is not None and self.pieces_per_s is not None

    def record(self, prompt_chars: int, first_piece_s: float, pieces: int, total_s: float) -> None:
        """Time one reply: ``first_piece_s`` from sending to its first piece, ``total_s`` to its end. Only the
        first reply with at least ``MIN_PIECES`` pieces counts; later ones change nothing."""
        decode_s = total_s - first_piece_s
        if self.measured or pieces < MIN_PIECES or first_piece_s <= 0 or decode_s <= 0:
            return
        self.prompt_chars_per_s = max(prompt_chars, 1) / first_piece_s
        self.pieces_per_s = (pieces - 1) / decode_s

    def budget_s(self, prompt_chars: int, max_pieces: int, limit_s: float, floor_s: float) -> float:
        """Seconds one call may take: ``MARGIN`` × the measured prefill and a full ``max_pieces`` reply, at least
        ``floor_s`` and at most ``limit_s``; ``limit_s`` until a speed is measured."""
        if not self.measured:
            return limit_s
        assert self.prompt_chars_per_s is not None and self.pieces_per_s is not None
        predicted = prompt_chars / self.prompt_chars_per_s + max_pieces / self.pieces_per_s
        return min(limit_s, max(floor_s, MARGIN * predicted))
