"""run_tool turns the project's own errors into messages and nothing else: a bug in a tool surfaces as a bug."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from advisor import toolspec
from advisor.toolspec import ToolSpec, run_tool
from knowledge.errors import AdvisorError
from knowledge.resolve import AmbiguousNameError, UnknownNameError
from tools.errors import ToolError


class _Args(BaseModel):
    n: int = 1


def _buggy(args: _Args) -> dict:
    return {"value": [1, 2][args.n + 5]}  # an IndexError: a bug, not a domain error


def test_every_domain_error_derives_from_the_root() -> None:
    for cls in (ToolError, UnknownNameError, AmbiguousNameError):
        assert issubclass(cls, AdvisorError)


def test_a_domain_error_is_a_message() -> None:
    call = run_tool("gpu_info", {"name": "H300"})
    assert call.error_kind == "domain" and "H300" in (call.error or "")


def test_a_bug_in_a_tool_is_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(toolspec.TOOLS, "buggy", ToolSpec("buggy", "raises IndexError", _Args, _buggy))
    with pytest.raises(IndexError):
        run_tool("buggy", {"n": 1})
