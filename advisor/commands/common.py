"""Shared CLI plumbing: JSON output, one-line errors, language choice."""

from __future__ import annotations

import json
import locale
import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

from pydantic import BaseModel, ValidationError

from knowledge import AmbiguousNameError, UnknownNameError

EXIT_DOMAIN_ERROR = 2


def default_lang() -> str:
    """'zh' when the user's locale is Chinese, else 'en'."""
    for var in ("GPU_ADVISOR_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    loc = locale.getlocale()[0] or ""
    return "zh" if loc.lower().startswith("zh") else "en"


def add_lang_flag(parser: Any) -> None:
    parser.add_argument("--lang", choices=["zh", "en"], default=None, help="output language (default: locale)")


def lang_of(args: Any) -> str:
    return getattr(args, "lang", None) or default_lang()


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, list | tuple):
        return [to_jsonable(o) for o in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


def print_json(obj: Any) -> None:
    json.dump(to_jsonable(obj), sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def fail(message: str) -> int:
    """Print a one-line error to stderr and return the domain-error exit status."""
    sys.stderr.write(f"gpu-advisor: {message.splitlines()[0] if message else 'error'}\n")
    return EXIT_DOMAIN_ERROR


def validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(x) for x in err.get("loc", ())) or "input"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "invalid input — " + "; ".join(parts)


def domain_errors(func: Callable[[Any], int]) -> Callable[[Any], int]:
    """Turn unknown names and invalid inputs into a one-line message and exit status 2."""

    @wraps(func)
    def wrapper(args: Any) -> int:
        try:
            return func(args)
        except (UnknownNameError, AmbiguousNameError) as exc:
            return fail(str(exc))
        except ValidationError as exc:
            return fail(validation_message(exc))
        except ValueError as exc:
            return fail(str(exc))

    return wrapper
