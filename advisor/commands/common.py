"""Shared CLI plumbing: JSON output, one-line errors, language choice."""

from __future__ import annotations

import argparse
import json
import locale
import math
import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

from pydantic import BaseModel, ValidationError

from knowledge import AmbiguousNameError, UnknownNameError
from knowledge.messages import render
from tools.errors import error_note

EXIT_DOMAIN_ERROR = 2
MAX_FLAG_VALUE = 1e15  # above any budget, wattage, size or rate a flag takes


def default_lang() -> str:
    """'zh' when the user's locale is Chinese, else 'en'."""
    for var in ("GPU_ADVISOR_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    loc = locale.getlocale()[0] or ""
    return "zh" if loc.lower().startswith("zh") else "en"


def finite_float(text: str) -> float:
    """argparse type for every number flag: 'inf', 'nan', overflowing values (1e400) and absurd ones (1e300,
    which overflow once converted to bytes) are refused with the flag's name."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text[:40]!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a finite number")
    if abs(value) > MAX_FLAG_VALUE:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is out of range (at most {MAX_FLAG_VALUE:.0e} in size)")
    return value


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


def validation_message(exc: ValidationError, lang: str = "en") -> str:
    """'invalid input — field: what is wrong; …' (first three problems) in ``lang``."""
    return render(error_note(exc, "error.validation.input"), lang)


def domain_errors(func: Callable[[Any], int]) -> Callable[[Any], int]:
    """Turn unknown names and invalid inputs into a one-line message (in the user's language) and exit status 2."""

    @wraps(func)
    def wrapper(args: Any) -> int:
        try:
            return func(args)
        except ValidationError as exc:
            return fail(validation_message(exc, lang_of(args)))
        except (UnknownNameError, AmbiguousNameError, ValueError) as exc:  # ToolError is a ValueError
            return fail(render(error_note(exc), lang_of(args)))

    return wrapper
