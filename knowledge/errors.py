"""The project's own error root: a domain error (an unknown name, an input the tools cannot plan with, a
user's file out of bounds) derives from :class:`AdvisorError`. Callers that turn errors into messages catch
this root and nothing wider, so a bug in the code surfaces as a bug."""

from __future__ import annotations


class AdvisorError(Exception):
    """Input that is understood but cannot be used as given; its message is for the user."""
