"""Domain errors raised by the tools: a clear message plus suggestions, never a traceback for users."""

from __future__ import annotations


class ToolError(ValueError):
    """Input that is valid in type but wrong in the domain (tp that does not divide heads, …)."""

    def __init__(self, message: str, suggestions: list[str] | None = None):
        self.suggestions = suggestions or []
        hint = f" — try: {'; '.join(self.suggestions)}" if self.suggestions else ""
        super().__init__(message + hint)


def shown(text: str, limit: int = 60) -> str:
    """User input quoted in an error message, cut to ``limit`` characters (a pasted essay is not echoed back)."""
    return repr(text if len(text) <= limit else text[:limit - 1] + "…")
